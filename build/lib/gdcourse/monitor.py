"""Watching a PyTorch run: gradient norms per step and per layer, the first
module whose output stops being finite, and the learning-rate range test for
a model and a torch optimizer."""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from gdcourse.diagnostics import RangeTest


class GradNormTracker:
    """Call :meth:`record` after ``backward()`` (before clipping or ``step``) to log
    the global gradient norm and each parameter's norm. Parameters without a
    gradient (frozen or unused) are recorded as NaN, so they stand out."""

    def __init__(self, model: torch.nn.Module):
        self.names = [n for n, p in model.named_parameters() if p.requires_grad]
        self._params = [p for p in model.parameters() if p.requires_grad]
        self.global_norms: list[float] = []
        self.per_parameter: dict[str, list[float]] = {n: [] for n in self.names}

    @torch.no_grad()
    def record(self) -> float:
        squares = 0.0
        for name, p in zip(self.names, self._params):
            norm = math.nan if p.grad is None else float(p.grad.detach().float().norm())
            self.per_parameter[name].append(norm)
            if p.grad is not None:
                squares += norm ** 2
        total = math.sqrt(squares)
        self.global_norms.append(total)
        return total

    def never_got_gradients(self) -> list[str]:
        """Names of trainable parameters that never received a gradient."""
        return [n for n, v in self.per_parameter.items() if v and all(math.isnan(x) for x in v)]

    def first_nonfinite_step(self) -> int | None:
        """The first recorded step whose global norm is inf or NaN."""
        for step, norm in enumerate(self.global_norms):
            if not math.isfinite(norm):
                return step
        return None


def _finite(x) -> bool:
    if torch.is_tensor(x):
        return not x.is_floating_point() or bool(torch.isfinite(x).all())
    if isinstance(x, (tuple, list)):
        return all(_finite(t) for t in x)
    if isinstance(x, dict):
        return all(_finite(t) for t in x.values())
    return True


@torch.no_grad()
def first_nonfinite(model: torch.nn.Module, *inputs) -> str | None:
    """Run ``model(*inputs)`` and return the name of the first module (in execution
    order) whose output contains inf or NaN while its inputs were finite; ``None``
    if everything stayed finite. ``"<input>"`` means the data itself was not finite.

    Cheaper and more direct than ``torch.autograd.detect_anomaly`` for the forward
    pass; anomaly mode is the tool for a NaN that first appears in ``backward``.
    """
    if not _finite(inputs):
        return "<input>"
    culprit: list[str] = []

    def hook(name):
        def check(module, args, output):
            if not culprit and _finite(args) and not _finite(output):
                culprit.append(name)
        return check

    handles = [m.register_forward_hook(hook(n or type(m).__name__)) for n, m in model.named_modules()]
    try:
        model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return culprit[0] if culprit else None


def lr_range_test(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loss_on_batch, batches, *,
                  lr_min: float = 1e-6, lr_max: float = 10.0, steps: int = 100, smoothing: float = 0.9,
                  stop_factor: float = 4.0) -> RangeTest:
    """The learning-rate range test on copies of ``model`` and ``optimizer`` (the originals are untouched).

    ``loss_on_batch(model, batch) -> loss tensor``; ``batches`` is an iterable
    that is cycled. The rate grows geometrically from ``lr_min`` to ``lr_max``
    over ``steps`` updates; the run stops once the smoothed loss exceeds
    ``stop_factor`` × its best or stops being finite. Returns the same
    :class:`~gdcourse.diagnostics.RangeTest` as the NumPy version.
    """
    if not 0 < lr_min < lr_max:
        raise ValueError(f"need 0 < lr_min < lr_max, got {lr_min}, {lr_max}")
    if steps < 2:
        raise ValueError("steps must be at least 2")
    model, optimizer = copy.deepcopy((model, optimizer))  # one memo: the copied optimizer holds the copied parameters
    model.train()
    schedule = lr_min * (lr_max / lr_min) ** (np.arange(steps) / (steps - 1))
    lrs, losses, smoothed = [], [], []
    avg, best = 0.0, math.inf
    source = iter(batches)
    for t, lr in enumerate(schedule):
        try:
            batch = next(source)
        except StopIteration:
            source = iter(batches)
            batch = next(source)
        for group in optimizer.param_groups:
            group["lr"] = float(lr)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_on_batch(model, batch)
        value = loss.item()
        if not math.isfinite(value):
            break
        avg = smoothing * avg + (1 - smoothing) * value
        corrected = avg / (1 - smoothing ** (t + 1))
        lrs.append(float(lr)), losses.append(value), smoothed.append(corrected)
        if corrected > stop_factor * best:
            break
        best = min(best, corrected)
        loss.backward()
        optimizer.step()
    return RangeTest(np.array(lrs), np.array(losses), np.array(smoothed))
