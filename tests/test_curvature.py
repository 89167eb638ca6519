import math

import pytest
import torch
from torch import nn

from gdcourse.curvature import (functional_loss, gradient_noise_scale, hessian_matrix, hvp, per_example_grads,
                                sharpness, top_eigenvalue)
from gdcourse.models import mlp


def _setup(seed=0, n=24):
    torch.manual_seed(seed)
    model = mlp(3, 5, 2).double().eval()
    X = torch.randn(n, 3, dtype=torch.float64)
    y = torch.randint(0, 2, (n,))
    return model, X, y


def _flat(tree):
    return torch.cat([t.reshape(-1) for t in tree.values()])


def test_quadratic_hessian_is_exact():
    # f(w) = 1/2 w^T A w has Hessian A; its top eigenvalue sets the stable step 2/λmax.
    A = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    f = lambda p: 0.5 * p["w"] @ A @ p["w"]
    params = {"w": torch.tensor([0.3, -0.7], dtype=torch.float64)}
    assert torch.allclose(hessian_matrix(f, params), A)
    lam = float(torch.linalg.eigvalsh(A)[-1])
    assert top_eigenvalue(f, params, tol=1e-12, iters=500) == pytest.approx(lam, rel=1e-8)


def test_network_hessian_is_symmetric_and_matches_hvp_and_autograd():
    model, X, y = _setup()
    f, params = functional_loss(model, nn.functional.cross_entropy, X, y)
    H = hessian_matrix(f, params)
    assert H.shape == (sum(p.numel() for p in model.parameters()),) * 2
    assert torch.allclose(H, H.T, atol=1e-12)
    v = {k: torch.randn_like(t) for k, t in params.items()}
    assert torch.allclose(_flat(hvp(f, params, v)), H @ _flat(v), atol=1e-10)
    # one row against torch.autograd's double backward on the model itself
    loss = nn.functional.cross_entropy(model(X), y)
    g = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)
    row0 = torch.autograd.grad(g[0].reshape(-1)[0], list(model.parameters()))
    assert torch.allclose(torch.cat([r.reshape(-1) for r in row0]), H[0], atol=1e-10)


def test_power_iteration_finds_the_largest_magnitude_eigenvalue():
    model, X, y = _setup(seed=1)
    f, params = functional_loss(model, nn.functional.cross_entropy, X, y)
    eig = torch.linalg.eigvalsh(hessian_matrix(f, params))
    largest = float(eig[eig.abs().argmax()])
    assert top_eigenvalue(f, params, iters=2000, tol=1e-10) == pytest.approx(largest, rel=1e-4)


def test_sharpness_of_a_quadratic_minimum_follows_its_curvature():
    # At the minimum c of 1/2 (w-c)ᵀA(w-c), a random step of length r|c| raises the loss by
    # 1/2 r²|c|² dᵀAd, whose average over random unit directions d is 1/2 r²|c|² tr(A)/n.
    c = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    A = torch.diag(torch.tensor([4.0, 1.0, 0.25], dtype=torch.float64))
    f = lambda p: 0.5 * (p["w"] - c) @ A @ (p["w"] - c)
    params = {"w": c.clone()}
    expected = 0.5 * 0.1 ** 2 * float(c @ c) * float(A.trace()) / 3
    assert sharpness(f, params, radius=0.1, samples=4000) == pytest.approx(expected, rel=0.05)
    assert sharpness(f, params, radius=0.2, samples=4000) == pytest.approx(4 * expected, rel=0.05)
    sharper = lambda p: 10 * f(p)
    assert sharpness(sharper, params, radius=0.1) > 5 * sharpness(f, params, radius=0.1)
    with pytest.raises(ValueError):
        sharpness(f, params, radius=0)


def test_per_example_grads_match_one_backward_per_example():
    model, X, y = _setup(seed=3, n=6)
    G = per_example_grads(model, nn.functional.cross_entropy, X, y)
    for i in range(len(X)):
        model.zero_grad()
        nn.functional.cross_entropy(model(X[i:i + 1]), y[i:i + 1]).backward()
        assert torch.allclose(G[i], torch.cat([p.grad.reshape(-1) for p in model.parameters()]))


def test_gradient_noise_scale_matches_its_definition():
    gen = torch.Generator().manual_seed(0)
    mean = torch.tensor([1.0, 2.0, 0.0], dtype=torch.float64)
    sigma = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64)
    G = mean + sigma * torch.randn(200_000, 3, generator=gen, dtype=torch.float64)
    # B = tr(Σ) / |G|² = (9 + 1 + 4) / (1 + 4)
    assert gradient_noise_scale(G) == pytest.approx(14 / 5, rel=0.02)
    assert gradient_noise_scale(torch.randn(50, 3, generator=gen) * 0) == math.inf  # no signal
    with pytest.raises(ValueError):
        gradient_noise_scale(G[:1])
