"""Reading a training run: checks on loss histories."""

from __future__ import annotations

from dataclasses import dataclass

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


# --- the learning-rate range test ---------------------------------------------
# Sweep the learning rate up exponentially during a short run and watch the
# (smoothed) loss: it falls while the rate is useful and blows up once the rate
# passes what the curvature allows.


@dataclass(frozen=True)
class RangeTest:
    lrs: np.ndarray        # the learning rate used at each recorded step
    losses: np.ndarray     # the raw loss before that step
    smoothed: np.ndarray   # bias-corrected exponential moving average of the losses

    @property
    def lr_at_minimum(self) -> float:
        """The rate where the smoothed loss is lowest (already near the edge of stability)."""
        return float(self.lrs[int(np.argmin(self.smoothed))])

    @property
    def lr_steepest(self) -> float:
        """The rate where the smoothed loss falls fastest per decade of learning rate."""
        slope = np.gradient(self.smoothed, np.log10(self.lrs))
        return float(self.lrs[int(np.argmin(slope))])

    @property
    def suggestion(self) -> float:
        """A common, conservative pick: a tenth of the rate at the minimum."""
        return self.lr_at_minimum / 10


def range_test(trial, *, lr_min: float = 1e-7, lr_max: float = 10.0, steps: int = 100,
               smoothing: float = 0.98, stop_factor: float = 4.0) -> RangeTest:
    """The learning-rate range test, whatever runs the steps (the defaults are fastai's).

    ``trial(lr)`` returns the loss of the current weights, then takes one step at
    rate ``lr``. The rate grows geometrically from ``lr_min`` to ``lr_max`` over
    ``steps`` trials; the sweep stops once the smoothed loss exceeds
    ``stop_factor`` times its best value or the loss stops being finite. Used
    through :func:`lr_range_test` (NumPy, chapter 7) and
    :func:`gdcourse.monitor.lr_range_test` (PyTorch, chapter 16).
    """
    if not 0 < lr_min < lr_max:
        raise ValueError(f"need 0 < lr_min < lr_max, got {lr_min}, {lr_max}")
    if steps < 2:
        raise ValueError("steps must be at least 2")
    schedule = lr_min * (lr_max / lr_min) ** (np.arange(steps) / (steps - 1))
    lrs, losses, smoothed = [], [], []
    avg, best = 0.0, np.inf
    for t, lr in enumerate(schedule):
        loss = float(trial(float(lr)))
        if not np.isfinite(loss):
            break
        avg = smoothing * avg + (1 - smoothing) * loss
        value = avg / (1 - smoothing ** (t + 1))
        lrs.append(float(lr)), losses.append(loss), smoothed.append(value)
        if value > stop_factor * best:
            break
        best = min(best, value)
    return RangeTest(np.array(lrs), np.array(losses), np.array(smoothed))


def lr_range_test(loss_and_grads, params, optimizer, **sweep) -> RangeTest:
    """:func:`range_test` on NumPy parameters (keyword arguments as there).

    ``loss_and_grads(params) -> (loss, grads)`` evaluates one (mini-)batch;
    ``optimizer`` follows the :mod:`gdcourse.optim` contract. ``params`` are
    copied, never modified.
    """
    params = [np.array(p, dtype=float) for p in params]
    state = optimizer.init(params)

    def trial(lr):
        nonlocal state
        loss, grads = loss_and_grads(params)
        with np.errstate(over="ignore", invalid="ignore"):  # the step after the last loss may overflow
            optimizer.step(params, grads, state, lr=lr)
        return loss

    return range_test(trial, **sweep)
