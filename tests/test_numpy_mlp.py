"""gdcourse.numpy_mlp: the NumPy network and its hand-written backpropagation, against torch's autograd."""

import numpy as np
import pytest
import torch

from gdcourse import numpy_mlp


@pytest.mark.parametrize("activation", numpy_mlp.ACTIVATIONS)
def test_loss_and_gradients_match_autograd(activation):
    rng = np.random.default_rng(0)
    params = numpy_mlp.init([3, 7, 5, 1], rng, activation)
    for p in params[1::2]:  # non-zero biases, so that their gradients are tested too
        p += rng.normal(size=p.shape)
    X, y = rng.normal(size=(16, 3)), rng.normal(size=16)
    loss, grads = numpy_mlp.loss_and_grads(params, X, y, activation)

    ts = [torch.tensor(p, requires_grad=True) for p in params]
    h = torch.tensor(X)
    for i in range(0, len(ts), 2):
        h = h @ ts[i] + ts[i + 1]
        if i < len(ts) - 2:
            h = torch.relu(h) if activation == "relu" else torch.tanh(h)
    want = torch.mean((h[:, 0] - torch.tensor(y)) ** 2)
    want.backward()
    assert loss == pytest.approx(want.item(), rel=1e-12)
    for g, t in zip(grads, ts):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(numpy_mlp.forward(params, X, activation), h[:, 0].detach().numpy(), rtol=1e-12)


def test_init_scales_by_fan_in_with_he_gain_before_a_relu():
    sizes = [400, 300, 1]
    relu = numpy_mlp.init(sizes, np.random.default_rng(1), "relu")
    tanh = numpy_mlp.init(sizes, np.random.default_rng(1), "tanh")
    assert relu[0].std() == pytest.approx(np.sqrt(2 / 400), rel=0.02)
    assert tanh[0].std() == pytest.approx(np.sqrt(1 / 400), rel=0.02)
    assert relu[2].std() == pytest.approx(np.sqrt(1 / 300), rel=0.1)  # the linear output layer: gain 1
    assert all(not b.any() for b in relu[1::2])
    with pytest.raises(ValueError, match="activation"):
        numpy_mlp.init(sizes, np.random.default_rng(0), "sigmoid")
