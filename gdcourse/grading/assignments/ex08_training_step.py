"""Probes of ex08 (a training step): they run in the sandbox, build the objects the student's
functions take (a model, an optimizer, a scheduler, a loader) from plain data, call the
function, and report what it left behind as data.

Public, and imported by the trusted side too: the builders here (:func:`build_model`,
:func:`make_optimizer`, ...) are how both sides make the *same* objects from the same
data, so the trusted side can rebuild a twin and compute the expected answer itself.
Nothing here knows what a correct function returns: there is no reference step and no
expected value, only construction and observation.

A model is given by ``layers``, a list of ``(kind, *sizes)``: ``("linear", n_in, n_out)``,
``("tanh",)``, ``("relu",)``, ``("dropout", p)``, ``("batchnorm", n)``; it is built under
``torch.manual_seed(seed)`` in float32 and then cast to ``dtype`` (as ``.double()`` does).
Batches are lists of ``(X, y)`` arrays: integer ``y`` becomes a ``long`` tensor (class labels),
anything else the model's dtype.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


# --- building (shared with the trusted side) -------------------------------------------

def make_layers(layers) -> nn.Sequential:
    """The modules of ``layers``, initialised from torch's global generator as it stands."""
    modules = []
    for spec in layers:
        kind, *sizes = spec
        if kind == "linear":
            modules.append(nn.Linear(int(sizes[0]), int(sizes[1])))
        elif kind == "tanh":
            modules.append(nn.Tanh())
        elif kind == "relu":
            modules.append(nn.ReLU())
        elif kind == "dropout":
            modules.append(nn.Dropout(float(sizes[0])))
        elif kind == "batchnorm":
            modules.append(nn.BatchNorm1d(int(sizes[0])))
        else:
            raise ValueError(f"unknown layer kind {kind!r}")
    return nn.Sequential(*modules)


def build_model(layers, seed: int, dtype: str = "float64") -> nn.Sequential:
    """The model of ``layers`` as ``torch.manual_seed(seed)`` makes it (torch's global generator is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = make_layers(layers)
    return model.to(getattr(torch, dtype))


def as_tensor(a, dtype: str) -> torch.Tensor:
    a = np.array(a)
    if a.dtype.kind in "iub":
        return torch.tensor(a, dtype=torch.long)
    return torch.tensor(a, dtype=getattr(torch, dtype))


def make_batches(pairs, dtype: str) -> list:
    return [(as_tensor(X, dtype), as_tensor(y, dtype)) for X, y in pairs]


def make_loader(pairs, dtype: str, dataloader=None):
    """A list of ``(X, y)`` tensor pairs, or (``dataloader`` a batch size) a DataLoader over their concatenation."""
    batches = make_batches(pairs, dtype)
    if dataloader is None:
        return batches
    dataset = torch.utils.data.TensorDataset(torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches]))
    return torch.utils.data.DataLoader(dataset, batch_size=int(dataloader), shuffle=False)


def make_optimizer(parameters, spec: dict) -> torch.optim.Optimizer:
    """``{"name": "sgd" | "adam", **keyword arguments}`` as a torch optimizer."""
    kwargs = {k: v for k, v in spec.items() if k != "name"}
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[spec["name"]]
    return cls(parameters, **kwargs)


def make_scheduler(optimizer, spec: dict | None):
    """``{"name": "step" | "exponential", **keyword arguments}`` as a torch scheduler (None: none)."""
    if spec is None:
        return None
    kwargs = {k: v for k, v in spec.items() if k != "name"}
    cls = {"step": torch.optim.lr_scheduler.StepLR, "exponential": torch.optim.lr_scheduler.ExponentialLR}[spec["name"]]
    return cls(optimizer, **kwargs)


def make_loss(name: str):
    return {"ce": nn.CrossEntropyLoss, "mse": nn.MSELoss}[name]()


def fill_grads(model, value: float) -> None:
    """Stale gradients, as other code might leave them: every ``.grad`` set to ``value``."""
    for p in model.parameters():
        p.grad = torch.full_like(p, float(value))


def snapshot(model) -> list:
    return [p.detach().clone() for p in model.parameters()]


# --- observing ----------------------------------------------------------------------

def _function(ns: dict, name: str):
    fn = ns.get(name)
    if not callable(fn):
        raise NameError(f"{name} is not defined: its cell did not run, or defines another name")
    return fn


def _watch_modes(model) -> list:
    """The mode of the whole model ("train", "eval" or "mixed") at every forward pass from now on."""
    seen = []

    def hook(module, inputs):
        flags = {m.training for m in module.modules()}
        seen.append("train" if flags == {True} else "eval" if flags == {False} else "mixed")

    model.register_forward_pre_hook(hook)
    return seen


def _watch_steps(optimizer) -> list:
    """The learning rate of the first parameter group at every optimizer step from now on."""
    lrs = []
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: lrs.append(float(opt.param_groups[0]["lr"])))
    return lrs


def _stale(stale, i):
    return stale[i] if isinstance(stale, (list, tuple)) else stale


# --- probes ------------------------------------------------------------------------------

def step(ns, seed, layers, dtype, optimizer, loss, batches, max_norm=None, stale=None):
    """``train_step`` on each batch in turn (``stale``: fill the gradients with this value, or with
    ``stale[i]`` before call ``i``, first; None: leave them). Reports each returned value, the
    parameters and the number of optimizer steps after each call, and the mode at each forward pass."""
    fn = _function(ns, "train_step")
    model = build_model(layers, seed, dtype)
    opt = make_optimizer(model.parameters(), optimizer)
    loss_fn = make_loss(loss)
    modes, lrs = _watch_modes(model), _watch_steps(opt)
    returned, params, steps = [], [], []
    for i, (X, y) in enumerate(make_batches(batches, dtype)):
        if _stale(stale, i) is not None:
            fill_grads(model, _stale(stale, i))
        if max_norm is None:
            out = fn(model, X, y, loss_fn, opt)
        else:
            out = fn(model, X, y, loss_fn, opt, max_norm=max_norm)
        returned.append(out)
        params.append(snapshot(model))
        steps.append(len(lrs))
    return {"returned": returned, "params": params, "steps": steps, "modes": modes}


def epoch(ns, seed, layers, dtype, optimizer, loss, batches, epochs=1, scheduler=None, max_norm=None,
          scheduler_per=None, dataloader=None, mode="train"):
    """``train_epoch`` ``epochs`` times on one loader (a list of the batches, or with ``dataloader`` a
    DataLoader of that batch size over them), the model handed over in ``mode``. The scheduler is
    passed positionally; ``max_norm`` and ``scheduler_per`` by keyword, and only when given.
    Reports, per epoch: the returned value, the parameters, the learning rate, ``model.training``,
    the modes at its forward passes and the learning rate at each of its optimizer steps."""
    fn = _function(ns, "train_epoch")
    model = build_model(layers, seed, dtype)
    model.train(mode == "train")
    opt = make_optimizer(model.parameters(), optimizer)
    sched = make_scheduler(opt, scheduler)
    loss_fn = make_loss(loss)
    loader = make_loader(batches, dtype, dataloader)
    modes, lrs = _watch_modes(model), _watch_steps(opt)
    args = (model, loader, loss_fn, opt) + ((sched,) if sched is not None else ())
    kwargs = {}
    if max_norm is not None:
        kwargs["max_norm"] = max_norm
    if scheduler_per is not None:
        kwargs["scheduler_per"] = scheduler_per
    report = {k: [] for k in ("returned", "params", "lr", "training", "modes", "step_lrs")}
    for _ in range(int(epochs)):
        modes.clear()
        lrs.clear()
        report["returned"].append(fn(*args, **kwargs))
        report["params"].append(snapshot(model))
        report["lr"].append(float(opt.param_groups[0]["lr"]))
        report["training"].append(model.training)
        report["modes"].append(list(modes))
        report["step_lrs"].append(list(lrs))
    return report


def evaluation(ns, seed, layers, dtype, loss, batches, mode="train", dataloader=None, warmup=(), repeat=1):
    """``evaluate`` ``repeat`` times on one loader, the model handed over in ``mode`` (after forward passes
    in training mode on each array of ``warmup``, under no_grad, which give batch norm running
    statistics). Reports the returned values, ``model.training`` after, the parameters and buffers
    after, the modes at its forward passes and how many tensors autograd saved for backward during it."""
    fn = _function(ns, "evaluate")
    model = build_model(layers, seed, dtype)
    model.train()
    with torch.no_grad():
        for W in warmup:
            model(as_tensor(W, dtype))
    model.train(mode == "train")
    loss_fn = make_loss(loss)
    loader = make_loader(batches, dtype, dataloader)
    modes = _watch_modes(model)
    saved = [0]

    def pack(t):
        saved[0] += 1
        return t

    returned = []
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        for _ in range(int(repeat)):
            returned.append(fn(model, loader, loss_fn))
    return {"returned": returned, "training": model.training, "params": snapshot(model),
            "buffers": [b.detach().clone() for b in model.buffers()], "modes": modes, "saved": saved[0]}


def accumulation(ns, seed, layers, dtype, optimizer, loss, calls, stale=None):
    """``accumulation_step`` once per entry of ``calls`` (each a list of ``(X, y)`` micro-batches), the
    gradients filled with ``stale`` first when given. Reports each returned value, and the parameters
    and the number of optimizer steps after each call."""
    fn = _function(ns, "accumulation_step")
    model = build_model(layers, seed, dtype)
    opt = make_optimizer(model.parameters(), optimizer)
    loss_fn = make_loss(loss)
    lrs = _watch_steps(opt)
    returned, params, steps = [], [], []
    for i, micro in enumerate(calls):
        if _stale(stale, i) is not None:
            fill_grads(model, _stale(stale, i))
        returned.append(fn(model, make_batches(micro, dtype), loss_fn, opt))
        params.append(snapshot(model))
        steps.append(len(lrs))
    return {"returned": returned, "params": params, "steps": steps}
