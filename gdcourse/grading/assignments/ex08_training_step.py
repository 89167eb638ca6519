"""ex08, a training step in PyTorch: the course's reference, the probes, the case builders and the visible cases.

ex08's functions take objects (a model, an optimizer, a scheduler, a loader), which cannot cross
the sandbox wall. So every case hands the student's function to a probe here with the data to
build those objects from (a seed and a layer list for the model, an optimizer and scheduler spec,
the batches); the probe calls the function and reports what it left behind: the returned values,
the parameters (and batch-norm buffers), the learning rate at every optimizer step and after the
call, the model's mode at every forward pass. The check runs the *same probe* with the course's
reference on the trusted side (the same model from the same seed) and compares the two reports.

What is compared, and with which tolerance (stated in the exercise):

- losses and parameters: relative error ``TOL[dtype]`` (float64: ``1e-9`` on the loss, ``1e-8`` on
  the weights; float32: ``1e-5`` on both), with an absolute floor for values near zero; so any
  order of the float operations passes (a hand-written clip or ``set_to_none`` as well);
- learning rates (set by torch's own schedulers): ``1e-12`` relative; the number of optimizer steps
  and the modes are exact (they are the contract: one step per call, one per batch);
- ``evaluate``: the loss over all samples within ``TOL[dtype]["loss"]``, the accuracy within ``1e-6`` (absolute),
  batch-norm buffers within ``1e-6``, and no tensor saved for backward.

A model is given by ``layers``, a list of ``(kind, *sizes)``: ``("linear", n_in, n_out)``,
``("tanh",)``, ``("relu",)``, ``("dropout", p)``, ``("batchnorm", n)``; it is built under
``torch.manual_seed(seed)`` in float32 and then cast to ``dtype`` (as ``.double()`` does).
Batches are lists of ``(X, y)`` arrays: integer ``y`` becomes a ``long`` tensor (class labels),
anything else the model's dtype. Probes seed torch's generator explicitly (dropout masks) inside
``torch.random.fork_rng``, so they leave the global state as they found it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from gdcourse.grading.cases import Case, Fail, close, kind, probe, require
from gdcourse.grading.wire import Tensor
from gdcourse.models import sequential
from gdcourse.runtime import torch_threads

TOL = {"float64": {"loss": 1e-9, "rtol": 1e-8, "atol": 1e-10},
       "float32": {"loss": 1e-5, "rtol": 1e-5, "atol": 1e-6}}
LR_RTOL = 1e-12
ACC_ATOL = 1e-6  # an accuracy computed as a float32 mean is exact to about 1e-8


# --- the reference ----------------------------------------------------------------------

def train_step(model, X, y, loss_fn, optimizer, max_norm=None):
    optimizer.zero_grad()
    loss = loss_fn(model(X), y)
    loss.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()


def train_epoch(model, loader, loss_fn, optimizer, scheduler=None, max_norm=None, scheduler_per="epoch"):
    model.train()
    losses = []
    for X, y in loader:
        losses.append(train_step(model, X, y, loss_fn, optimizer, max_norm))
        if scheduler is not None and scheduler_per == "batch":
            scheduler.step()
    if scheduler is not None and scheduler_per == "epoch":
        scheduler.step()
    return float(np.mean(losses))


def evaluate(model, loader, loss_fn):
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for X, y in loader:
            out = model(X)
            total_loss += loss_fn(out, y).item() * len(y)
            correct += (out.argmax(dim=1) == y).sum().item()
            count += len(y)
    model.train(was_training)
    return total_loss / count, correct / count


def accumulation_step(model, micro_batches, loss_fn, optimizer):
    optimizer.zero_grad()
    k = len(micro_batches)
    total = 0.0
    for X, y in micro_batches:
        loss = loss_fn(model(X), y) / k
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


REFERENCE = {"train_step": train_step, "train_epoch": train_epoch, "evaluate": evaluate,
             "accumulation_step": accumulation_step}


# --- building (the probes and the checks make the same objects from the same data) --------

def build_model(layers, seed: int, dtype: str = "float64") -> nn.Sequential:
    """The model of ``layers`` as ``torch.manual_seed(seed)`` makes it (torch's global generator is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = sequential(layers)
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




# --- probes (run in the sandbox with the student's function, on the trusted side with the reference) --

@torch_threads(1)
def step(fn, seed, layers, dtype, optimizer, loss, batches, max_norm=None, stale=None):
    """``train_step`` on each batch in turn (``stale``: fill the gradients with this value, or with
    ``stale[i]`` before call ``i``, first; None: leave them). Reports each returned value, the
    parameters and the number of optimizer steps after each call, and the mode at each forward pass."""
    model = build_model(layers, seed, dtype)
    opt = make_optimizer(model.parameters(), optimizer)
    loss_fn = make_loss(loss)
    modes, lrs = _watch_modes(model), _watch_steps(opt)
    returned, params, steps = [], [], []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 1)
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


@torch_threads(1)
def epoch(fn, seed, layers, dtype, optimizer, loss, batches, epochs=1, scheduler=None, max_norm=None,
          scheduler_per=None, dataloader=None, mode="train"):
    """``train_epoch`` ``epochs`` times on one loader (a list of the batches, or with ``dataloader`` a
    DataLoader of that batch size over them), the model handed over in ``mode``, torch's generator
    seeded (dropout masks). The scheduler is passed positionally; ``max_norm`` and ``scheduler_per``
    by keyword, and only when given. Reports, per epoch: the returned value, the parameters and
    buffers, the learning rate, ``model.training``, the modes at its forward passes and the learning
    rate at each of its optimizer steps."""
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
    report = {k: [] for k in ("returned", "params", "buffers", "lr", "training", "modes", "step_lrs")}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 1)
        for _ in range(int(epochs)):
            modes.clear()
            lrs.clear()
            report["returned"].append(fn(*args, **kwargs))
            report["params"].append(snapshot(model))
            report["buffers"].append([b.detach().clone() for b in model.buffers() if b.is_floating_point()])
            report["lr"].append(float(opt.param_groups[0]["lr"]))
            report["training"].append(model.training)
            report["modes"].append(list(modes))
            report["step_lrs"].append(list(lrs))
    return report


@torch_threads(1)
def evaluation(fn, seed, layers, dtype, loss, batches, mode="train", dataloader=None, warmup=(), repeat=1):
    """``evaluate`` ``repeat`` times on one loader, the model handed over in ``mode`` (after forward passes
    in training mode on each array of ``warmup``, under no_grad, which give batch norm running
    statistics). Reports the returned values, ``model.training`` after, the parameters and buffers
    after, the modes at its forward passes and how many tensors autograd saved for backward during it."""
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
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 1)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            for _ in range(int(repeat)):
                returned.append(fn(model, loader, loss_fn))
    return {"returned": returned, "training": model.training, "params": snapshot(model),
            "buffers": [b.detach().clone() for b in model.buffers() if b.is_floating_point()],
            "modes": modes, "saved": saved[0]}


@torch_threads(1)
def accumulation(fn, seed, layers, dtype, optimizer, loss, calls, stale=None):
    """``accumulation_step`` once per entry of ``calls`` (each a list of ``(X, y)`` micro-batches), the
    gradients filled with ``stale`` first when given. Reports each returned value, and the parameters
    and the number of optimizer steps after each call."""
    model = build_model(layers, seed, dtype)
    opt = make_optimizer(model.parameters(), optimizer)
    loss_fn = make_loss(loss)
    lrs = _watch_steps(opt)
    returned, params, steps = [], [], []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 1)
        for i, micro in enumerate(calls):
            if _stale(stale, i) is not None:
                fill_grads(model, _stale(stale, i))
            returned.append(fn(model, make_batches(micro, dtype), loss_fn, opt))
            params.append(snapshot(model))
            steps.append(len(lrs))
    return {"returned": returned, "params": params, "steps": steps}


# --- checks ------------------------------------------------------------------------------

def _report(r, *keys, count=None):
    v = r.value
    require(isinstance(v, dict) and all(k in v for k in keys), "the probe's report is incomplete")
    if count is not None:
        require(isinstance(v["returned"], list) and len(v["returned"]) == count, "the probe's report is incomplete")
    return v


def _float(x, what, hint=""):
    if not (isinstance(x, float) and not isinstance(x, bool)):
        extra = hint or (": return loss.item(), not the tensor (it keeps its graph alive)"
                         if isinstance(x, Tensor) else "")
        raise Fail(f"{what} should be a Python float, got {kind(x)}{extra}",
                   summary=f"{what} should be a Python float, got {kind(x)}")
    return float(x)


def _loss(got, want, dtype, what, message=None, summary=None):
    value = _float(got, what)
    if not abs(value - want) <= TOL[dtype]["loss"] * max(1.0, abs(want)):
        raise Fail(message.format(want=want, got=value) if message else f"{what}: expected {want:.8g}, got {value:.8g}",
                   summary=summary or f"{what} is wrong (beyond a relative error of {TOL[dtype]['loss']:g})")


def _array(t):
    return t.array if isinstance(t, Tensor) else np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t,
                                                           dtype=float)


def _params(got, want, dtype, hint, rtol=None, atol=None, what="parameter"):
    """The reported parameters (a list of tensors) against the reference's ``want`` (a list of tensors)."""
    require(isinstance(got, list) and len(got) == len(want), "the probe's report is incomplete")
    tol = TOL[dtype]
    for i, (g, w) in enumerate(zip(got, want)):
        try:
            close(g, _array(w), rtol=tol["rtol"] if rtol is None else rtol, atol=tol["atol"] if atol is None else atol,
                  what=f"{what} {i}")
        except Fail as exc:
            raise Fail(f"{hint} ({exc})", summary=hint) from None


def _steps(got, want, what="one optimizer step per call"):
    got, want = list(got) if isinstance(got, list) else got, list(want)
    if got != want:
        raise Fail(f"{what}: expected {want} optimizer steps in all, counted {got}", summary=what)


def _lr_close(got, want, what, summary):
    if not (isinstance(got, float) and abs(got - want) <= LR_RTOL * max(1.0, abs(want))):
        raise Fail(f"{what}: expected lr {want:g}, got {got}", summary=summary)


# --- train_step ---------------------------------------------------------------------------

STEP_HINT = "the weights differ from what a correct step leaves"
STALE_HINT = ("the gradients held stale values on entry and your step used them: clear them at the START of "
              "train_step, before backward")


def step_case(name, seed, layers, dtype, optimizer, loss, batches, *, max_norm=None, stale=None, visible=False,
              hints=None, loss_message=None, extra=None):
    """``hints[i]``: the message when the parameters after call ``i`` differ; ``extra(v)``: further checks first."""
    args = (seed, layers, dtype, optimizer, loss, batches)
    kwargs = dict(max_norm=max_norm, stale=stale)

    def check(r):
        v = _report(r, "returned", "params", "steps", count=len(batches))
        if extra is not None:
            extra(v)
        want = step(train_step, *args, **kwargs)
        require(isinstance(v["params"], list) and len(v["params"]) == len(batches), "the probe's report is incomplete")
        for i, (got, loss_want, params, state) in enumerate(zip(v["returned"], want["returned"], v["params"],
                                                               want["params"])):
            _loss(got, loss_want, dtype, "the loss train_step returned", loss_message,
                  summary="the returned loss is not the batch's loss computed before the step")
            default = (STALE_HINT if stale is not None and _stale(stale, i) is not None
                       else f"after call {i + 1}, {STEP_HINT}" if visible else STEP_HINT)
            _params(params, state, dtype, (hints or {}).get(i, default))
        _steps(v["steps"], want["steps"], "one optimizer step per call of train_step")
    return Case("test_train_step", name, probe("train_step", "step", *args, **kwargs), check, visible)


def _visible_train_step():
    mlp = [("linear", 4, 8), ("tanh",), ("linear", 8, 3)]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        sequential(mlp)
        Xa, ya = torch.randn(16, 4), torch.randint(0, 3, (16,))
        Xb, yb = torch.randn(16, 4), torch.randint(0, 3, (16,))
        torch.manual_seed(1)
        sequential([("linear", 3, 1)])
        Xc, yc = torch.randn(8, 3), 1e4 * torch.randn(8, 1)
    a, b, c = (Xa.numpy(), ya.numpy()), (Xb.numpy(), yb.numpy()), (Xc.numpy(), yc.numpy())
    sgd = {"name": "sgd", "lr": 0.1}

    def returns_a_float(v):
        _float(v["returned"][0], "train_step's result", " (loss.item()): a tensor keeps its graph alive")

    yield step_case("one step: the loss before the step, as a Python float", 0, mlp, "float32", sgd,
                    "ce", [a], visible=True, extra=returns_a_float,
                    loss_message="return the loss computed BEFORE the step: expected {want:.6f}, got {got:.6f}")
    two = ("after two steps your weights differ from plain SGD's: clear the gradients (optimizer.zero_grad()) "
           "before loss.backward(), or the second step adds the first gradient again")
    yield step_case("two steps equal two plain SGD steps", 0, mlp, "float32", sgd, "ce",
                    [a, b], visible=True, hints={0: "after one step, " + STEP_HINT, 1: two})
    yield step_case("stale gradients on entry are cleared", 0, mlp, "float32", sgd, "ce",
                    [a, b, a], stale=[None, None, 100.0], visible=True,
                    hints={0: "after one step, " + STEP_HINT, 1: two, 2: STALE_HINT})

    layers, clip_sgd = [("linear", 3, 1)], {"name": "sgd", "lr": 0.01}

    def clipped(v):
        before = [p.detach().numpy() for p in build_model(layers, 1, "float32").parameters()]
        require(isinstance(v["params"][0], list) and len(v["params"][0]) == len(before),
                "the probe's report is incomplete")
        after = [_array(p) for p in v["params"][0]]
        moved = float(np.sqrt(sum(((q - p) ** 2).sum() for p, q in zip(before, after))))
        require(moved <= 0.01 * (1 + 1e-4),
                f"with max_norm=1 and lr=0.01 one SGD step may move the weights by at most 0.01, yours moved "
                f"{moved:.4g}: clip the global norm (clip_grad_norm_) AFTER loss.backward() (before it there is "
                f"nothing to clip) and BEFORE optimizer.step()")
        require(moved > 0.0099, f"the clipped step should be lr * max_norm = 0.01 long (the gradient norm is far "
                                f"above 1), yours is {moved:.4g}")

    yield step_case("a large gradient clipped to max_norm", 1, layers, "float32", clip_sgd,
                    "mse", [c], max_norm=1.0, visible=True, extra=clipped,
                    hints={0: "the clipped step differs from clip_grad_norm_ on the global norm, after backward "
                              "and before step"})


# --- train_epoch --------------------------------------------------------------------------

def _schedule_hint(scheduler_per):
    if scheduler_per == "batch":
        return ("with scheduler_per='batch', call scheduler.step() once after every batch's optimizer step "
                "(the first batch uses the learning rate train_epoch was called with)")
    return ("with scheduler_per='epoch' (the default), call scheduler.step() exactly once per call of "
            "train_epoch, after the last batch: every batch of the epoch uses the same learning rate")


def epoch_case(name, seed, layers, dtype, optimizer, loss, batches, *, epochs=1, scheduler=None, max_norm=None,
               scheduler_per=None, dataloader=None, mode="train", visible=False, first=None, hint=None):
    """``first(v)``: checks before the comparison with the reference (whose messages are generic)."""
    args = (seed, layers, dtype, optimizer, loss, batches)
    kwargs = dict(epochs=epochs, scheduler=scheduler, max_norm=max_norm, scheduler_per=scheduler_per,
                  dataloader=dataloader, mode=mode)

    def check(r):
        v = _report(r, "returned", "params", "buffers", "lr", "training", "modes", "step_lrs", count=epochs)
        if first is not None:
            first(v)
        want = epoch(train_epoch, *args, **kwargs)
        for e in range(epochs):
            what = f"epoch {e + 1}"
            modes = v["modes"][e]
            require(isinstance(modes, list) and len(modes) > 0, "train_epoch ran no forward pass")
            require(all(m == "train" for m in modes),
                    "every forward pass of train_epoch must run in training mode: call model.train() before the "
                    "first batch (the model may arrive in evaluation mode)")
            require(v["training"][e] is True, "train_epoch must leave the model in training mode")
            steps, lrs = v["step_lrs"][e], want["step_lrs"][e]
            if not (isinstance(steps, list) and len(steps) == len(lrs)):
                raise Fail(f"{what}: expected {len(lrs)} optimizer steps (one per batch), counted "
                           f"{len(steps) if isinstance(steps, list) else steps}",
                           summary="one optimizer step per batch of the loader")
            sched_hint = _schedule_hint(scheduler_per)
            for i, (g, w) in enumerate(zip(steps, lrs)):
                _lr_close(g, w, f"{what}, batch {i + 1}: the optimizer step", sched_hint)
            _lr_close(v["lr"][e], want["lr"][e], f"the learning rate after {what}", sched_hint)
            _params(v["params"][e], want["params"][e], dtype,
                    hint or (f"the weights after {what} differ from a correct train_epoch's" if visible else
                             "the weights differ from a correct train_epoch's"))
            _loss(v["returned"][e], want["returned"][e], dtype, f"the mean batch loss train_epoch returned ({what})",
                  summary="the returned value is not the plain mean of the batch losses (each batch counts once)")
            _params(v["buffers"][e], want["buffers"][e], dtype,
                    "the batch norm running statistics differ: the batches must run in training mode",
                    what="buffer")
    return Case("test_train_epoch", name, probe("train_epoch", "epoch", *args, **kwargs), check, visible)


DROPOUT = [("linear", 4, 8), ("relu",), ("dropout", 0.5), ("linear", 8, 3)]


def _visible_train_epoch():
    mlp = [("linear", 4, 8), ("tanh",), ("linear", 8, 3)]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(2)
        Xd, yd = torch.randn(32, 4), torch.randint(0, 3, (32,))
    X, y = Xd.numpy(), yd.numpy()
    loader = [(X[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)]

    def train_mode(v):
        modes = v["modes"][0]
        require(isinstance(modes, list) and modes and all(m == "train" for m in modes) and v["training"][0] is True,
                "train_epoch must switch the model to training mode (model.train()) before the first batch and "
                "leave it there: it arrived in eval mode, with dropout off")
        _float(v["returned"][0], "train_epoch's result")

    yield epoch_case("a dropout model handed over in evaluation mode: training mode from the first batch", 2,
                     DROPOUT, "float32", {"name": "sgd", "lr": 0.1}, "ce", loader, mode="eval", visible=True,
                     first=train_mode)

    sgd, halve = {"name": "sgd", "lr": 0.1}, {"name": "step", "step_size": 1, "gamma": 0.5}

    def per_epoch(v):
        lr_now = v["lr"][0]
        hint = (" (that is 0.1 * 0.5**4: you stepped it after every batch)"
                if isinstance(lr_now, float) and abs(lr_now - 0.1 * 0.5 ** 4) < 1e-12 else "")
        require(isinstance(lr_now, float) and abs(lr_now - 0.05) < 1e-12,
                f"scheduler_per='epoch': step the scheduler once, after the last batch; expected lr 0.05, "
                f"got {lr_now:g}{hint}")
        want = epoch(train_epoch, 3, mlp, "float32", sgd, "ce", loader, scheduler=halve)["returned"][0]
        got = v["returned"][0]
        require(isinstance(got, float) and abs(got - want) < 1e-6,
                f"return the mean of the batch losses: expected {want:.6f}, got {got}")

    yield epoch_case("the scheduler once per epoch (the default)", 3, mlp, "float32", sgd,
                     "ce", loader, scheduler=halve, visible=True, first=per_epoch,
                     hint="the weights after one epoch differ from four SGD steps at lr 0.1")

    def per_batch(v):
        require(isinstance(v["lr"][0], float) and abs(v["lr"][0] - 0.1 * 0.5 ** 4) < 1e-12,
                "scheduler_per='batch': step the scheduler after every batch")
        require(isinstance(v["step_lrs"][0], list) and len(v["step_lrs"][0]) == 4
                and isinstance(v["step_lrs"][0][0], float) and abs(v["step_lrs"][0][0] - 0.1) < 1e-12,
                "per batch, the first batch must use lr 0.1: call scheduler.step() after optimizer.step(), "
                "not before")

    yield epoch_case("the scheduler after every batch", 3, mlp, "float32", sgd, "ce", loader,
                     scheduler=halve, scheduler_per="batch", visible=True, first=per_batch,
                     hint="per batch, the batches must use lr 0.1, 0.05, 0.025, 0.0125: call scheduler.step() "
                          "after optimizer.step(), not before")

    def a_float(v):
        _float(v["returned"][0], "train_epoch's result (the mean of the batch losses)")

    yield epoch_case("no scheduler at all", 3, mlp, "float32", sgd, "ce", loader,
                     visible=True, first=a_float)


# --- evaluate -----------------------------------------------------------------------------

def evaluate_case(name, seed, layers, dtype, batches, *, mode="train", dataloader=None, warmup=(), repeat=1,
                  visible=False, first=None):
    tol = TOL[dtype]["loss"]
    args = (seed, layers, dtype, "ce", batches)
    kwargs = dict(mode=mode, dataloader=dataloader, warmup=list(warmup), repeat=repeat)

    def check(r):
        v = _report(r, "returned", "training", "buffers", "modes", "saved", count=repeat)
        if first is not None:
            first(v)
        want = evaluation(evaluate, *args, **kwargs)
        want_loss, want_acc = want["returned"][0]
        got = v["returned"][0]
        require(isinstance(got, tuple) and len(got) == 2, "return a tuple (loss, accuracy)")
        loss, acc = got
        require(isinstance(loss, float) and isinstance(acc, float) and not isinstance(acc, bool),
                f"return two Python floats, got {kind(loss)} and {kind(acc)}")
        if not abs(loss - want_loss) <= tol * max(1.0, abs(want_loss)):
            raise Fail(f"expected the loss in evaluation mode, {want_loss:.6f}, got {loss:.6f}: call model.eval() "
                       "first (dropout must be off), and weight each batch's mean loss by its size",
                       summary="the loss is not the mean over all samples in evaluation mode (model.eval(), each "
                               "batch's mean loss weighted by its size)")
        if not abs(acc - want_acc) <= ACC_ATOL:
            raise Fail(f"expected accuracy {want_acc:.4f}, got {acc}",
                       summary="the accuracy is not the fraction of all samples whose largest output is the label")
        require(all(g == got for g in v["returned"]), "two evaluations of the same model must agree: is dropout "
                                                      "still on?")
        modes = v["modes"]
        require(isinstance(modes, list) and modes and all(m == "eval" for m in modes),
                "every forward pass of evaluate must run in evaluation mode (model.eval())")
        require(v["training"] is (mode == "train"),
                f"the model was in {'training' if mode == 'train' else 'evaluation'} mode before evaluate: "
                f"put it back in that mode before returning")
        require(v["saved"] == 0, f"evaluate recorded an autograd graph ({v['saved']} tensors saved for a backward "
                                 "pass that never comes): wrap it in torch.no_grad()"
                if visible else "evaluate recorded an autograd graph: wrap it in torch.no_grad()")
        require(isinstance(v["buffers"], list) and len(v["buffers"]) == len(want["buffers"]),
                "the probe's report is incomplete")
        for g, w in zip(v["buffers"], want["buffers"]):
            try:
                close(g, _array(w), rtol=1e-6, atol=1e-7, what="a buffer")
            except Fail:
                message = ("evaluate changed the batch norm running statistics: in evaluation mode they stay "
                           "as they are")
                raise Fail(message, summary=message) from None
    return Case("test_evaluate", name, probe("evaluate", "evaluation", *args, **kwargs), check, visible)


EVAL_NET = [("linear", 4, 16), ("relu",), ("dropout", 0.5), ("linear", 16, 3)]
BN_NET = [("linear", 4, 8), ("batchnorm", 8), ("relu",), ("linear", 8, 3)]


def _visible_evaluate():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(4)
        sequential(EVAL_NET)
        Xe, ye = torch.randn(40, 4), torch.randint(0, 3, (40,))
    X, y = Xe.numpy(), ye.numpy()
    loader = [(X[i:i + 10], y[i:i + 10]) for i in range(0, 40, 10)]

    yield evaluate_case("(loss, accuracy) in evaluation mode, the training mode put back", 4, EVAL_NET,
                        "float32", loader, repeat=2, visible=True)

    def no_graph(v):
        require(v["saved"] == 0, f"evaluate recorded an autograd graph ({v['saved']} tensors saved for a backward "
                                 "pass that never comes): wrap it in torch.no_grad()")

    yield evaluate_case("no autograd graph", 4, EVAL_NET, "float32", loader, visible=True, first=no_graph)


# --- accumulation_step --------------------------------------------------------------------

ACC_HINT = ("the weights differ from ONE step on all the micro-batches at once: zero_grad once before the first "
            "micro-batch (not in each), divide each micro-batch loss by the number of micro-batches, and step "
            "once at the end")


def accumulation_case(name, seed, layers, dtype, optimizer, loss, calls, *, stale=None, visible=False,
                      tol=None, hint=None):
    t = TOL[dtype] if tol is None else tol
    args = (seed, layers, dtype, optimizer, loss, calls)

    def check(r):
        v = _report(r, "returned", "params", "steps", count=len(calls))
        want = accumulation(accumulation_step, *args, stale=stale)
        n = sum(len(m[1]) for m in calls[0])
        for i, (got, mean) in enumerate(zip(v["returned"], want["returned"])):
            value = _float(got, "accumulation_step's result (the mean loss)")
            if not abs(value - mean) <= t["loss"] * max(1.0, abs(mean)):
                raise Fail(f"return the mean loss over all {n} samples, {mean:.6f}; got {value:.6f}",
                           summary="the returned value is not the mean loss over all the samples")
            _steps(v["steps"][:i + 1], want["steps"][:i + 1], "one optimizer step per call of accumulation_step")
            _params(v["params"][i], want["params"][i], dtype, hint or ACC_HINT, rtol=t["rtol"], atol=t["atol"])
    return Case("test_accumulation_step", name, probe("accumulation_step", "accumulation", *args, stale=stale),
                check, visible)


def _visible_accumulation():
    mlp = [("linear", 4, 8), ("tanh",), ("linear", 8, 3)]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        sequential(mlp)
        Xm, ym = torch.randn(24, 4, dtype=torch.float64), torch.randint(0, 3, (24,))
    X, y = Xm.numpy(), ym.numpy()
    micro = [(X[i:i + 6], y[i:i + 6]) for i in range(0, 24, 6)]
    yield accumulation_case(
        "one SGD step on all 24 samples, stale gradients on entry", 5, mlp, "float64",
        {"name": "sgd", "lr": 0.5}, "ce", [micro], stale=1.0, visible=True,
        hint="the result must equal ONE SGD step on all 24 samples at once: zero_grad once before the first "
             "micro-batch (not in each), divide each micro-batch loss by the number of micro-batches, and step "
             "once at the end")


def visible():
    yield from _visible_train_step()
    yield from _visible_train_epoch()
    yield from _visible_evaluate()
    yield from _visible_accumulation()
