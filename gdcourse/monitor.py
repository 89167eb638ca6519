"""Watching a PyTorch run: the gradient norm, per step and per layer, and its
percentiles; the size of each step against the weights it moves; activation
statistics per batch, and dead units over a whole data set; the first module
whose output stops being finite; and the learning-rate range test for a model
and a torch optimizer.

Each tool attaches to any loop without changing it: a tracker you call, a
context manager around ``optimizer.step()``, or forward hooks you remove."""

from __future__ import annotations

import contextlib
import copy
import math

import numpy as np
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

    def percentile(self, q: float) -> float:
        """The q-th percentile (0-100) of the finite global norms recorded so far: the Tuning Playbook
        sets a clipping threshold from the 90th."""
        finite = [n for n in self.global_norms if math.isfinite(n)]
        if not finite:
            raise ValueError("no finite gradient norm recorded yet")
        return float(np.percentile(finite, q))

    def first_nonfinite_step(self) -> int | None:
        """The first recorded step whose global norm is inf or NaN."""
        for step, norm in enumerate(self.global_norms):
            if not math.isfinite(norm):
                return step
        return None


@contextlib.contextmanager
def update_ratios(model: torch.nn.Module):
    """Wrap one ``optimizer.step()``: the yielded dict is filled, on exit, with each trainable
    parameter's ``||w_after - w_before|| / ||w_before||``, the update-to-weight ratio CS231n watches.
    A parameter whose norm was zero gets ``inf`` if it moved and ``0.0`` if it did not."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    with torch.no_grad():
        before = [p.detach().to(torch.float64, copy=True) for _, p in named]
    ratios: dict[str, float] = {}
    yield ratios
    with torch.no_grad():
        for (name, p), old in zip(named, before):
            step = float(torch.linalg.vector_norm(p.detach().to(torch.float64) - old))
            size = float(torch.linalg.vector_norm(old))
            ratios[name] = step / size if size > 0 else (math.inf if step > 0 else 0.0)


class ActivationStats:
    """Forward hooks on every module of the given types (default: ``nn.ReLU``) that record, per call,
    the output's mean and standard deviation and its dead fraction: the share of units (features along
    the last dimension) that are zero or negative for every example of the batch. Use as a context
    manager, or call :meth:`remove`; ``records[name]`` is a list of dicts, one per forward call."""

    def __init__(self, model: torch.nn.Module, types: tuple[type, ...] = (torch.nn.ReLU,)):
        self.records: dict[str, list[dict[str, float]]] = {}
        self._handles = []
        for name, module in model.named_modules():
            if isinstance(module, types):
                self.records[name] = []
                self._handles.append(module.register_forward_hook(self._hook(name)))
        if not self._handles:
            raise ValueError(f"the model has no module of type {[t.__name__ for t in types]}")

    def _hook(self, name):
        @torch.no_grad()
        def record(module, args, output):
            out = output.detach().to(torch.float64)
            units = out.reshape(-1, out.shape[-1]) if out.dim() > 1 else out.reshape(-1, 1)
            self.records[name].append({"mean": float(out.mean()), "std": float(out.std(correction=0)),
                                       "dead": float((units <= 0).all(dim=0).double().mean())})
        return record

    def last(self, field: str) -> dict[str, float]:
        """``field`` ("mean", "std" or "dead") of the latest call, per module."""
        return {name: rows[-1][field] for name, rows in self.records.items() if rows}

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


@torch.no_grad()
def dead_units(model: torch.nn.Module, inputs, types: tuple[type, ...] = (torch.nn.ReLU,)) -> dict[str, float]:
    """The dead fraction of every module of the given types (default ``nn.ReLU``) over a whole data set:
    the share of its units (features along the last dimension, as in :class:`ActivationStats`) that are
    zero or negative (or NaN) for every example of ``inputs``. A unit dead on one batch may be alive on
    the next; this asks whether any example at all reaches it. ``inputs`` is one tensor (one forward
    pass) or an iterable of input tensors, one pass each (a unit active in any of them is alive). The
    model runs in eval mode, without gradients, and is left in the mode it had; the hooks are removed."""
    alive: dict[str, torch.Tensor] = {}

    def hook(name):
        def record(module, args, output):
            out = output.detach()
            units = out.reshape(-1, out.shape[-1]) if out.dim() > 1 else out.reshape(-1, 1)
            seen = (units > 0).any(dim=0)
            alive[name] = alive[name] | seen if name in alive else seen
        return record

    handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if isinstance(m, types)]
    if not handles:
        raise ValueError(f"the model has no module of type {[t.__name__ for t in types]}")
    was_training = model.training
    model.eval()
    try:
        for x in ([inputs] if torch.is_tensor(inputs) else inputs):
            model(x)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return {name: 1.0 - float(seen.double().mean()) for name, seen in alive.items()}


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
