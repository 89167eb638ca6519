"""Watching a PyTorch run: the gradient norm, per step and per layer, the first
module whose output stops being finite, and the learning-rate range test for
a model and a torch optimizer."""

from __future__ import annotations

import copy
import math

import torch

from gdcourse.diagnostics import RangeTest, range_test


@torch.no_grad()
def _norms(parameters) -> list[float]:
    """Each parameter's gradient norm, in float64 (NaN where there is no gradient)."""
    return [math.nan if p.grad is None else float(torch.linalg.vector_norm(p.grad.detach(), dtype=torch.float64))
            for p in parameters]


def _global(norms) -> float:
    return math.sqrt(sum(n * n for n in norms if not math.isnan(n)))


def grad_norm(parameters) -> float:
    """The global L2 norm of the gradients, the one ``clip_grad_norm_`` clips (parameters without a
    gradient are skipped). The NumPy counterpart is :func:`gdcourse.clipping.global_norm`."""
    return _global(_norms(parameters))


class GradNormTracker:
    """Call :meth:`record` after ``backward()`` (before clipping or ``step``) to log
    the global gradient norm and each parameter's norm. Parameters without a
    gradient (frozen or unused) are recorded as NaN, so they stand out."""

    def __init__(self, model: torch.nn.Module):
        self.names = [n for n, p in model.named_parameters() if p.requires_grad]
        self._params = [p for p in model.parameters() if p.requires_grad]
        self.global_norms: list[float] = []
        self.per_parameter: dict[str, list[float]] = {n: [] for n in self.names}

    def record(self) -> float:
        norms = _norms(self._params)
        for name, norm in zip(self.names, norms):
            self.per_parameter[name].append(norm)
        total = _global(norms)
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


def lr_range_test(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loss_on_batch, batches,
                  **sweep) -> RangeTest:
    """:func:`~gdcourse.diagnostics.range_test` on copies of ``model`` and ``optimizer`` (the originals
    are untouched); keyword arguments and defaults as there.

    ``loss_on_batch(model, batch) -> loss tensor``; ``batches`` is an iterable
    that is cycled, one batch per step.
    """
    model, optimizer = copy.deepcopy((model, optimizer))  # one memo: the copied optimizer holds the copied parameters
    model.train()
    source = iter(batches)

    def trial(lr):
        nonlocal source
        try:
            batch = next(source)
        except StopIteration:
            source = iter(batches)
            batch = next(source)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        loss = loss_on_batch(model, batch)
        loss.backward()
        optimizer.step()
        return loss.item()

    return range_test(trial, **sweep)
