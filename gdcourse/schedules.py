"""Learning-rate schedules as plain functions of the step: ``lr = schedule(t)``.

Each schedule is a small frozen dataclass with a ``__call__``, so it has a
readable repr in plots and can be passed to ``optimizer.step(..., lr=...)``.
Steps count from 0 (the learning rate of the first update). The tests match
each one against its PyTorch scheduler (or transformers' warm-up schedules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _check_steps(**steps):
    for name, value in steps.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Constant:
    lr: float

    def __call__(self, t: int) -> float:
        return self.lr


@dataclass(frozen=True)
class StepDecay:
    """``lr * gamma ** (t // step_size)``, as ``torch.optim.lr_scheduler.StepLR``."""

    lr: float
    step_size: int
    gamma: float = 0.1

    def __post_init__(self):
        _check_steps(step_size=self.step_size)

    def __call__(self, t: int) -> float:
        return self.lr * self.gamma ** (t // self.step_size)


@dataclass(frozen=True)
class Exponential:
    """``lr * gamma ** t``, as ``ExponentialLR``."""

    lr: float
    gamma: float

    def __call__(self, t: int) -> float:
        return self.lr * self.gamma**t


@dataclass(frozen=True)
class Cosine:
    """Half a cosine from ``lr`` at step 0 to ``min_lr`` at ``total_steps``, then flat,
    as ``CosineAnnealingLR(T_max=total_steps, eta_min=min_lr)`` over its first half-period."""

    lr: float
    total_steps: int
    min_lr: float = 0.0

    def __post_init__(self):
        _check_steps(total_steps=self.total_steps)

    def __call__(self, t: int) -> float:
        progress = min(t, self.total_steps) / self.total_steps
        return self.min_lr + (self.lr - self.min_lr) * 0.5 * (1 + math.cos(math.pi * progress))


@dataclass(frozen=True)
class WarmupCosine:
    """Linear warm-up from 0 over ``warmup_steps``, then a cosine to ``min_lr`` at
    ``total_steps``, as transformers' ``get_cosine_schedule_with_warmup``."""

    lr: float
    warmup_steps: int
    total_steps: int
    min_lr: float = 0.0

    def __post_init__(self):
        _check_steps(warmup_steps=self.warmup_steps, total_steps=self.total_steps)
        if self.warmup_steps >= self.total_steps:
            raise ValueError("warmup_steps must be smaller than total_steps")

    def __call__(self, t: int) -> float:
        if t < self.warmup_steps:
            return self.lr * t / self.warmup_steps
        decay = Cosine(self.lr, self.total_steps - self.warmup_steps, self.min_lr)
        return decay(t - self.warmup_steps)


@dataclass(frozen=True)
class WarmupLinear:
    """Linear warm-up from 0, then linear decay to 0 at ``total_steps``, as
    transformers' ``get_linear_schedule_with_warmup``."""

    lr: float
    warmup_steps: int
    total_steps: int

    def __post_init__(self):
        _check_steps(warmup_steps=self.warmup_steps, total_steps=self.total_steps)
        if self.warmup_steps >= self.total_steps:
            raise ValueError("warmup_steps must be smaller than total_steps")

    def __call__(self, t: int) -> float:
        if t < self.warmup_steps:
            return self.lr * t / self.warmup_steps
        return self.lr * max(0.0, (self.total_steps - t) / (self.total_steps - self.warmup_steps))


@dataclass(frozen=True)
class CosineWarmup:
    """A cosine-*shaped* warm-up: ``lr * (1 - cos(pi t / warmup_steps)) / 2`` rising
    from 0 to ``lr`` with zero slope at both ends, then ``after`` (default: constant).

    It starts at exactly 0 and reaches exactly ``lr`` at ``warmup_steps``, where
    it hands over to ``after(t - warmup_steps)`` without a jump."""

    lr: float
    warmup_steps: int
    after: object = None

    def __post_init__(self):
        _check_steps(warmup_steps=self.warmup_steps)

    def __call__(self, t: int) -> float:
        if t < self.warmup_steps:
            return self.lr * 0.5 * (1 - math.cos(math.pi * t / self.warmup_steps))
        return self.lr if self.after is None else self.after(t - self.warmup_steps)


@dataclass(frozen=True)
class WSD:
    """Warm-up, stable, decay (Hu et al. 2024; Hägele et al. 2024), as transformers'
    ``get_wsd_schedule`` with ``num_decay_steps = round(decay_fraction * total_steps)``.

    Linear warm-up from 0 over ``warmup_steps`` (as :class:`WarmupCosine`), then ``lr`` held
    constant, then a cooldown over the last ``decay_fraction`` of the run to ``min_lr`` at
    ``total_steps`` (flat after). ``shape`` is the cooldown's: ``"linear"``, ``"1-sqrt"``
    (``lr (1 - sqrt(progress))``, Hägele et al.'s best; ``"sqrt"`` is accepted for it) or
    ``"cosine"``. Every WSD with the same ``lr`` and warm-up is the same function until its
    cooldown starts, so one constant-rate run can be branched into cooldowns of any length:
    the run length need not be known in advance. (transformers warms up from
    ``min_lr``, not from 0; the two agree when ``min_lr = 0``.)
    """

    lr: float
    warmup_steps: int
    total_steps: int
    decay_fraction: float = 0.2
    min_lr: float = 0.0
    shape: str = "linear"

    def __post_init__(self):
        _check_steps(total_steps=self.total_steps)
        if not isinstance(self.warmup_steps, int) or self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be a non-negative integer, got {self.warmup_steps!r}")
        if self.shape not in ("linear", "1-sqrt", "sqrt", "cosine"):
            raise ValueError(f"shape must be 'linear', '1-sqrt' (or 'sqrt') or 'cosine', got {self.shape!r}")
        if not 0 < self.decay_fraction <= 1:
            raise ValueError(f"decay_fraction must be in (0, 1], got {self.decay_fraction!r}")
        if self.warmup_steps + self.decay_steps > self.total_steps:
            raise ValueError("warm-up and cooldown together are longer than total_steps")

    @property
    def decay_steps(self) -> int:
        return max(1, round(self.decay_fraction * self.total_steps))

    @property
    def decay_start(self) -> int:
        """The first step of the cooldown; before it the schedule is warm-up then constant."""
        return self.total_steps - self.decay_steps

    def __call__(self, t: int) -> float:
        if t < self.warmup_steps:
            return self.lr * t / self.warmup_steps
        if t < self.decay_start:
            return self.lr
        progress = min(1.0, (t - self.decay_start) / self.decay_steps)
        if self.shape == "linear":
            factor = 1.0 - progress
        elif self.shape == "cosine":
            factor = 0.5 * (1.0 + math.cos(math.pi * progress))
        else:                                          # 1-sqrt: drops fast, then flattens
            factor = 1.0 - math.sqrt(progress)
        return self.min_lr + (self.lr - self.min_lr) * factor
