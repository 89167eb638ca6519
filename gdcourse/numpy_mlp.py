"""A small multilayer perceptron in NumPy, with its backpropagation written out: the network the
NumPy chapters train before PyTorch does the bookkeeping (chapter 7's ReLU network under warm-up,
chapter 8's tanh network under clipping).

Parameters are a list ``[W1, b1, W2, b2, ...]`` (``W`` of shape ``(fan_in, fan_out)``), so any
:mod:`gdcourse.optim` optimizer steps them in place. The output layer is linear and the loss is
the mean squared error against a 1-D target.
"""

from __future__ import annotations

import numpy as np

ACTIVATIONS = ("relu", "tanh")


def _check(activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")


def init(sizes, rng: np.random.Generator, activation: str = "relu") -> list[np.ndarray]:
    """Weights drawn with variance gain / fan_in (He's gain 2 before a ReLU, 1 before tanh and for the
    linear output layer), zero biases."""
    _check(activation)
    params = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        gain = 2.0 if activation == "relu" and i < len(sizes) - 2 else 1.0
        params += [rng.standard_normal((fan_in, fan_out)) * np.sqrt(gain / fan_in), np.zeros(fan_out)]
    return params


def _layers(params, X, activation):
    """The output, each layer's input (X first) and each layer's pre-activation."""
    acts, pre = [X], []
    n = len(params) // 2
    for i in range(n):
        z = acts[-1] @ params[2 * i] + params[2 * i + 1]
        pre.append(z)
        if i < n - 1:
            acts.append(np.maximum(z, 0) if activation == "relu" else np.tanh(z))
    return z[:, 0], acts, pre


def forward(params, X, activation: str = "relu") -> np.ndarray:
    """The network's output for each row of ``X`` (1-D)."""
    _check(activation)
    return _layers(params, X, activation)[0]


def loss_and_grads(params, X, y, activation: str = "relu") -> tuple[float, list[np.ndarray]]:
    """The mean squared error of the output against ``y`` and its gradient for every parameter."""
    _check(activation)
    out, acts, pre = _layers(params, X, activation)
    r = out - y
    g = (2 / len(y)) * r[:, None]
    grads = [None] * len(params)
    for i in reversed(range(len(params) // 2)):
        grads[2 * i], grads[2 * i + 1] = acts[i].T @ g, g.sum(axis=0)
        if i > 0:
            slope = (pre[i - 1] > 0) if activation == "relu" else 1 - acts[i] ** 2
            g = (g @ params[2 * i].T) * slope
    return float(np.mean(r ** 2)), grads
