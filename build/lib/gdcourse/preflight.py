"""The pre-flight checklist, executable: cheap checks to run on a model, a data
loader and an optimizer before spending hours on a training run.

    report = preflight(model, loader, optimizer, nn.functional.cross_entropy, scheduler=sched)

Everything runs on copies: the caller's model, optimizer, scheduler and
random-number streams are left exactly as they were.
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, field

import torch

from gdcourse.train import rng_state, set_rng_state


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)

    def failed(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def __getitem__(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def __str__(self) -> str:
        width = max(len(c.name) for c in self.checks)
        lines = [f"{'PASS' if c.passed else 'FAIL'}  {c.name:<{width}}  {c.detail}" for c in self.checks]
        verdict = "all checks passed" if self.ok else f"{len(self.failed())} of {len(self.checks)} checks failed"
        return "\n".join(lines + [verdict])


CHECKS = ("inputs normalised", "targets on a sane scale", "trainable parameters", "optimizer covers them",
          "finite loss on one batch", "every trainable parameter gets a gradient", "learning rate in effect",
          "overfits one batch")


def _first_batch(loader):
    batch = next(iter(loader))
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise TypeError("preflight expects the loader to yield (inputs, targets) pairs")
    return batch


def _scale_check(name, t, max_mean, std_range):
    features = t.detach().double().reshape(t.shape[0], -1)
    means = features.mean(0)
    stds = features.std(0, correction=0)
    worst_mean = float(means.abs().max())
    typical_std = float(stds[stds > 0].median()) if bool((stds > 0).any()) else 0.0
    passed = worst_mean <= max_mean and std_range[0] <= typical_std <= std_range[1]
    return Check(name, passed, f"largest |mean| {worst_mean:.3g}, median std {typical_std:.3g} "
                               f"(want |mean| <= {max_mean:g}, std in [{std_range[0]:g}, {std_range[1]:g}])")


def _lr_used(optimizer, scheduler, steps, every):
    """The learning rate of group 0 that each of the first ``steps`` updates would use,
    with the scheduler stepped after every ``every`` updates."""
    optimizer, scheduler = copy.deepcopy((optimizer, scheduler))
    lrs = []
    for update in range(1, steps + 1):
        lrs.append(float(optimizer.param_groups[0]["lr"]))
        optimizer.zero_grad(set_to_none=True)
        optimizer.step()  # no gradients: nothing moves, but the scheduler sees a step was taken
        if scheduler is not None and update % every == 0:
            scheduler.step()
    return lrs


def _loss(model, loss_fn, X, y):
    return loss_fn(model(X), y)


def preflight(model: torch.nn.Module, loader, optimizer: torch.optim.Optimizer, loss_fn, *, scheduler=None,
              frozen: tuple[str, ...] = (), warmup_steps: int | None = None, lr_steps: int = 20,
              scheduler_every: int = 1,
              overfit_steps: int = 100, overfit_ratio: float = 0.1, max_input_mean: float = 3.0,
              input_std: tuple[float, float] = (0.2, 5.0), verbose: bool = True) -> Report:
    """Run the checklist and return a :class:`Report` (printed unless ``verbose=False``).

    ``frozen`` names parameter prefixes that must not train (e.g. ``("0.",)`` for a
    frozen first layer). ``warmup_steps``, when given, is checked against the
    learning rates the scheduler really produces; ``scheduler_every`` says how many
    updates pass between two ``scheduler.step()`` calls in your loop (1 when it
    steps per batch, ``len(loader)`` when it steps per epoch). The one-batch overfit trains a
    copy for ``overfit_steps`` updates at the optimizer's base rate and passes if
    the loss falls below ``overfit_ratio`` × its starting value.
    """
    if scheduler_every < 1:
        raise ValueError(f"scheduler_every must be at least 1, got {scheduler_every}")
    saved_rng = rng_state()
    report = Report()
    add = report.checks.append
    try:
        X, y = _first_batch(loader)
        add(_scale_check("inputs normalised", X, max_input_mean, input_std) if X.is_floating_point()
            else Check("inputs normalised", True, f"integer inputs ({X.dtype}), not checked"))
        add(_scale_check("targets on a sane scale", y, 10.0, (0.0, 10.0)) if y.is_floating_point()
            else Check("targets on a sane scale", True, f"class labels ({y.dtype}), {int(y.unique().numel())} distinct in the batch"))

        named = dict(model.named_parameters())
        trainable = {n for n, p in named.items() if p.requires_grad}
        total = sum(p.numel() for p in named.values())
        n_train = sum(named[n].numel() for n in trainable)
        should_freeze = {n for n in named if any(n.startswith(pre) for pre in frozen)}
        still_trainable = sorted(should_freeze & trainable)
        detail = f"{n_train:,} trainable of {total:,}"
        if still_trainable:
            detail += f"; meant to be frozen but trainable: {', '.join(still_trainable)}"
        add(Check("trainable parameters", n_train > 0 and not still_trainable, detail))

        in_optimizer = {id(p) for g in optimizer.param_groups for p in g["params"]}
        missing = sorted(n for n in trainable if id(named[n]) not in in_optimizer)
        add(Check("optimizer covers them", not missing,
                  "every trainable parameter is in the optimizer" if not missing
                  else f"trainable but not in the optimizer (never updated): {', '.join(missing)}"))

        work, work_opt = copy.deepcopy((model, optimizer))
        work.train()
        work_opt.zero_grad(set_to_none=True)
        loss = _loss(work, loss_fn, X, y)
        value = loss.item()
        detail = f"loss {value:.4g}"
        if not y.is_floating_point() and loss.dim() == 0:
            with torch.no_grad():
                classes = work(X).shape[-1]
            detail += f" (a uniform guess over {classes} classes scores ln {classes} = {math.log(classes):.4g})"
        add(Check("finite loss on one batch", math.isfinite(value), detail))

        if math.isfinite(value):
            loss.backward()
            got = {n for n, p in work.named_parameters() if p.grad is not None}
            unused = sorted(trainable - got)  # e.g. a layer run under no_grad, or never called
            add(Check("every trainable parameter gets a gradient", not unused,
                      f"no gradient reaches: {', '.join(unused)}" if unused
                      else f"all {len(got)} trainable tensors got gradients"))

        steps = max(lr_steps, (warmup_steps or 0) + 2)
        with warnings.catch_warnings():
            # the copies step with no gradients, which some schedulers comment on
            warnings.simplefilter("ignore", UserWarning)
            lrs = _lr_used(optimizer, scheduler, steps, scheduler_every)
        ok = all(math.isfinite(v) and v >= 0 for v in lrs) and max(lrs) > 0
        detail = f"first updates use lr {lrs[0]:.3g}, {lrs[1]:.3g}, ... ; peak {max(lrs):.3g} at update {lrs.index(max(lrs))}"
        if warmup_steps:
            peak = lrs[warmup_steps]
            rising = all(a <= b for a, b in zip(lrs[:warmup_steps], lrs[1:warmup_steps + 1])) and lrs[0] < peak
            capped = max(lrs) <= peak * (1 + 1e-9)  # a warmup that keeps climbing past its end is a bug too
            ok = ok and rising and capped
            detail += f"; after {warmup_steps} warmup updates lr is {peak:.3g}"
            detail += "" if rising else " (warmup not in effect)"
            detail += "" if capped else " (and it keeps rising after the warmup)"
        if lrs[0] == 0:
            detail += "; the first update uses lr 0 and does nothing"
        after_peak = lrs[lrs.index(max(lrs)):]
        if min(after_peak) < max(lrs) / 10:  # no sane schedule loses 90% within the first few updates
            ok = False
            detail += (f"; it falls to {min(after_peak):.3g} within {steps} updates"
                       " (a scheduler stepped per batch instead of per epoch?)")
        add(Check("learning rate in effect", ok, detail))

        if math.isfinite(value):
            work, work_opt = copy.deepcopy((model, optimizer))
            for group in work_opt.param_groups:
                group["lr"] = group.get("initial_lr", group["lr"])  # schedulers keep the base rate here
            work.eval()
            with torch.no_grad():
                start = float(_loss(work, loss_fn, X, y))
            work.train()
            for _ in range(overfit_steps):
                work_opt.zero_grad(set_to_none=True)
                _loss(work, loss_fn, X, y).backward()
                work_opt.step()
            work.eval()
            with torch.no_grad():
                end = float(_loss(work, loss_fn, X, y))
            passed = math.isfinite(end) and end <= overfit_ratio * start
            add(Check("overfits one batch", passed,
                      f"loss {start:.4g} -> {end:.4g} in {overfit_steps} updates (want <= {overfit_ratio:g}x)"))
        else:
            add(Check("overfits one batch", False, "skipped: the loss is not finite"))
    finally:
        set_rng_state(saved_rng)
    if verbose:
        print(report)
    return report
