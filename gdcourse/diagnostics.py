"""Reading a training run: checks on loss histories."""

from __future__ import annotations

import numpy as np


def is_decreasing(losses, rtol: float = 1e-12) -> bool:
    """True if the loss never rises by more than ``rtol`` of its value (rounding)."""
    losses = np.asarray(losses, dtype=float)
    if losses.size < 2:
        return True
    return bool(np.all(np.isfinite(losses)) and np.all(np.diff(losses) <= rtol * np.abs(losses[:-1])))


def first_below(losses, threshold: float) -> int | None:
    """The first index where the loss is at or below ``threshold`` (None if never)."""
    hits = np.flatnonzero(np.asarray(losses, dtype=float) <= threshold)
    return int(hits[0]) if hits.size else None
