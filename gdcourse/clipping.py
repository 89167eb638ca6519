"""Gradient clipping on lists of NumPy arrays, as ``torch.nn.utils`` does it.

Functions return new arrays (the inputs are not modified) and, for norm
clipping, the norm(s) measured *before* clipping, which is what you log:
``(clipped, norm)`` as ``clip_grad_norm_`` returns its norm; value clipping
measures nothing and returns the clipped list, as ``clip_grad_value_``.
"""

from __future__ import annotations

import numpy as np

# torch adds this to the norm before dividing, so a zero gradient never divides by zero
NORM_EPS = 1e-6


def global_norm(grads) -> float:
    """The L2 norm of all gradients taken together, as one long vector."""
    return float(np.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads)))


def clip_by_global_norm(grads, max_norm: float):
    """Scale *all* gradients by one factor so that their global norm is at most
    ``max_norm``; the direction of the full gradient is kept. As
    ``torch.nn.utils.clip_grad_norm_``: factor ``min(1, max_norm / (norm + 1e-6))``.
    Returns ``(clipped, norm_before)``."""
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    norm = global_norm(grads)
    return [g * _factor(max_norm, norm) for g in grads], norm


def clip_per_tensor(grads, max_norm: float):
    """Clip each gradient array to norm ``max_norm`` on its own (this changes the
    direction of the full gradient). Returns ``(clipped, norms_before)``."""
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    norms = [global_norm([g]) for g in grads]
    return [g * _factor(max_norm, n) for g, n in zip(grads, norms)], norms


def clip_per_group(grads, groups, max_norm: float):
    """Clip each group of gradients (``groups``: lists of indices into ``grads``, e.g. one layer's weight
    and bias) to global norm ``max_norm`` on its own: per-module clipping, between global and per-tensor.
    Arrays in no group are returned unchanged. Returns ``(clipped, norms_before)``, a norm per group.
    Used in chapter 8."""
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    out, norms = list(grads), []
    for group in groups:
        clipped, norm = clip_by_global_norm([grads[i] for i in group], max_norm)
        norms.append(norm)
        for i, g in zip(group, clipped):
            out[i] = g
    return out, norms


def _factor(max_norm: float, norm: float) -> float:
    """``min(1, max_norm / (norm + 1e-6))`` with NaN kept, as torch does: a NaN
    gradient makes every clipped entry NaN, so the failure is visible rather than
    silently passed on (Python's ``min(1.0, nan)`` would return 1.0)."""
    return float(np.minimum(1.0, max_norm / (norm + NORM_EPS)))


def clip_by_value(grads, clip_value: float):
    """Clamp every component to ``[-clip_value, clip_value]``, as
    ``torch.nn.utils.clip_grad_value_`` (this changes the direction too)."""
    if clip_value <= 0:
        raise ValueError(f"clip_value must be positive, got {clip_value}")
    return [np.clip(g, -clip_value, clip_value) for g in grads]


def angle_degrees(a, b) -> float:
    """The angle between two gradients (lists of arrays) seen as single vectors."""
    va = np.concatenate([np.ravel(x) for x in a])
    vb = np.concatenate([np.ravel(x) for x in b])
    cos = float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
