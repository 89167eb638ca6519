"""The curvature of a network's loss, with torch.func: Hessian-vector products,
the full Hessian of a small model, its largest eigenvalue, sharpness, and the
gradient noise scale computed from per-example gradients.

Everything works on a *functional* loss ``f(params) -> scalar`` where
``params`` is a dict of tensors (``dict(model.named_parameters())``).
:func:`functional_loss` builds one from a model, a loss function and a batch.
"""

from __future__ import annotations

import math

import torch
from torch.func import functional_call, grad, jacrev, vmap


def functional_loss(model: torch.nn.Module, loss_fn, X: torch.Tensor, y: torch.Tensor):
    """``(f, params)``: the loss on ``(X, y)`` as a function of a parameter dict, and the model's parameters.

    Buffers (batch-norm statistics) are held fixed at their current values, and
    the model is evaluated in whatever mode it is in: put it in ``eval()`` for
    a deterministic surface (dropout would make every call a different function).
    """
    buffers = dict(model.named_buffers())
    params = {k: p.detach() for k, p in model.named_parameters() if p.requires_grad}

    def f(p):
        return loss_fn(functional_call(model, (p, buffers), (X,)), y)

    return f, params


def _flat(tree: dict) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tree.values()])


def _unflat(vector: torch.Tensor, like: dict) -> dict:
    out, i = {}, 0
    for k, t in like.items():
        out[k] = vector[i:i + t.numel()].view_as(t)
        i += t.numel()
    return out


# Reverse-over-reverse throughout: torch's forward-mode AD (jvp, hessian) scripts
# its decompositions on first use and warns that torch.jit.script is deprecated.

def hvp(f, params: dict, v: dict) -> dict:
    """The Hessian of ``f`` at ``params`` times the direction ``v``, without building the Hessian:
    the gradient of ⟨∇f(params), v⟩."""
    return grad(lambda p: sum((g * v[k]).sum() for k, g in grad(f)(p).items()))(params)


def hessian_matrix(f, params: dict) -> torch.Tensor:
    """The full (P × P) Hessian over all parameters, flattened in dict order. Only for small models:
    it costs P Hessian-vector products and P² numbers of memory."""
    flat = _flat(params)
    return jacrev(jacrev(lambda w: f(_unflat(w, params))))(flat)


def top_eigenvalue(f, params: dict, *, iters: int = 100, tol: float = 1e-6, seed: int = 0) -> float:
    """The Hessian eigenvalue of largest magnitude, by power iteration on Hessian-vector products.

    Near a minimum this is λmax, the curvature that sets gradient descent's
    stable step 2/λmax. Stops when successive estimates agree to ``tol``
    (relative) or after ``iters`` products.
    """
    g = torch.Generator().manual_seed(seed)
    flat = _flat(params)
    v = torch.randn(flat.shape, generator=g, dtype=flat.dtype).to(flat.device)
    v = v / v.norm()
    estimate = 0.0
    for _ in range(iters):
        hv = _flat(hvp(f, params, _unflat(v, params)))
        new = float(v @ hv)  # Rayleigh quotient of the current unit vector
        norm = hv.norm()
        if norm == 0:
            return 0.0
        v = hv / norm
        if abs(new - estimate) <= tol * max(abs(new), 1e-30):
            return new
        estimate = new
    return estimate


def sharpness(f, params: dict, *, radius: float = 1e-2, samples: int = 20, seed: int = 0) -> float:
    """Average loss increase when every parameter tensor is moved in a random direction
    of norm ``radius`` × its own norm (a filter-normalised random probe, so layers of
    different scale are perturbed comparably). Larger means a sharper minimum."""
    if radius <= 0 or samples < 1:
        raise ValueError("radius must be positive and samples at least 1")
    g = torch.Generator().manual_seed(seed)
    base = f(params).item()
    increases = []
    for _ in range(samples):
        moved = {}
        for k, p in params.items():
            d = torch.randn(p.shape, generator=g, dtype=p.dtype).to(p.device)
            moved[k] = p + radius * p.norm() * d / d.norm()
        increases.append(f(moved).item() - base)
    return sum(increases) / samples


def per_example_grads(model: torch.nn.Module, loss_fn, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """An (N × P) matrix: row i is the gradient of the loss on example i alone (vmap over the batch).

    ``loss_fn`` must average (or sum) over its batch, as nn.functional losses do;
    it is called on batches of one example.
    """
    buffers = dict(model.named_buffers())
    params = {k: p.detach() for k, p in model.named_parameters() if p.requires_grad}

    def one(p, x, t):
        out = functional_call(model, (p, buffers), (x.unsqueeze(0),))
        return loss_fn(out, t.unsqueeze(0))

    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, X, y)
    return torch.cat([g.reshape(X.shape[0], -1) for g in grads.values()], dim=1)


def gradient_noise_scale(example_grads: torch.Tensor) -> float:
    """The "simple" gradient noise scale B = tr(Σ) / |G|² (McCandlish et al., 2018).

    ``example_grads`` is (N × P), one per-example gradient per row. Σ is their
    covariance (unbiased) and G their mean. |G|² is corrected for the noise in
    the mean itself (|mean|² overestimates |G|² by tr(Σ)/N). Roughly: batches much
    smaller than B waste steps on noise; batches much larger than B waste examples.
    Returns inf when the corrected |G|² is not positive (the gradient is all noise).
    """
    n = example_grads.shape[0]
    if n < 2:
        raise ValueError("need at least two per-example gradients to estimate their variance")
    g = example_grads.double()
    mean = g.mean(0)
    trace_cov = float(g.var(0, correction=1).sum())
    g2 = float(mean @ mean) - trace_cov / n
    return math.inf if g2 <= 0 else trace_cov / g2
