"""Small PyTorch models the chapters train: big enough to behave like real
networks (hidden layers, dropout, batch norm), small enough for a 2-core CPU."""

from __future__ import annotations

import torch
from torch import nn


def mlp(in_features: int, hidden: int | list[int] | tuple[int, ...], out_features: int, *,
        dropout: float = 0.0, batch_norm: bool = False) -> nn.Sequential:
    """A multi-layer perceptron: [Linear -> (BatchNorm) -> ReLU -> (Dropout)] per hidden layer, then Linear.

    ``dropout`` and ``batch_norm`` make ``train()`` and ``eval()`` behave
    differently, which is what chapters about evaluation need to show.
    """
    sizes = [hidden] if isinstance(hidden, int) else list(hidden)
    if in_features < 1 or out_features < 1 or any(h < 1 for h in sizes):
        raise ValueError(f"layer sizes must be positive, got {in_features}, {sizes}, {out_features}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")
    layers: list[nn.Module] = []
    width = in_features
    for h in sizes:
        layers.append(nn.Linear(width, h))
        if batch_norm:
            layers.append(nn.BatchNorm1d(h))
        layers.append(nn.ReLU())
        if dropout:
            layers.append(nn.Dropout(dropout))
        width = h
    layers.append(nn.Linear(width, out_features))
    return nn.Sequential(*layers)


LAYERS = {"linear": nn.Linear, "tanh": nn.Tanh, "relu": nn.ReLU, "dropout": nn.Dropout, "batchnorm": nn.BatchNorm1d}


def sequential(layers) -> nn.Sequential:
    """A model from plain data, ``[("linear", 4, 8), ("tanh",), ("dropout", 0.5), ("batchnorm", 8), ...]``
    (what a grader can send across a process boundary), initialised from torch's generator as it stands."""
    modules = []
    for name, *sizes in layers:
        if name not in LAYERS:
            raise ValueError(f"unknown layer kind {name!r}")
        args = [float(s) for s in sizes] if name == "dropout" else [int(s) for s in sizes]
        modules.append(LAYERS[name](*args))
    return nn.Sequential(*modules)


def count_parameters(model: nn.Module, *, trainable_only: bool = False) -> int:
    """Number of scalar parameters (shared tensors counted once)."""
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


def tensors(*arrays, device: str | torch.device = "cpu") -> tuple[torch.Tensor, ...]:
    """NumPy arrays -> torch tensors on ``device`` (float arrays keep their dtype)."""
    return tuple(torch.as_tensor(a, device=device) for a in arrays)
