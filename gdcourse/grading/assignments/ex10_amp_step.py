"""ex10, an AMP training step: the course's reference, the probes, the case builders and the visible cases.

``amp_train_step`` takes objects (a model, an optimizer, a ``torch.amp.GradScaler``), so its cases
hand it to the probe :func:`amp` with the data to build them from (a seed and the layer sizes of
a small MLP, an optimizer spec, the scaler's settings, one batch per call, the inf/NaN gradients
to inject and the stale gradients to leave before each call). The probe reports, per call, the
returned value, the weights, the scaler's scale and growth tracker, the number of optimizer
steps taken and the dtype of the first layer's output at each forward pass. The check runs the
same probe with the course's reference on the trusted side and compares the two reports.

What is compared, and with which tolerance (stated in the exercise):

- ``autocast_dtype``: exactly the torch dtype (``torch.bfloat16`` for ``"cpu"``, ``torch.float16``
  for ``"cuda"``); ``step_was_skipped``: exactly the Python bool;
- ``amp_train_step``: the dtype at every forward pass, ``stepped``, the scale and the growth
  tracker after each call and the number of optimizer steps exactly; a skipped step leaves the
  weights exactly unchanged; the loss within a relative error of ``LOSS_RTOL`` and the update
  (the change of the weights in one call) within a relative error (in norm) of ``UPDATE_RTOL``,
  for a forward pass in 16 bits (``1e-3`` and ``1e-2``) or in float32 (``1e-5`` and ``1e-4``), so
  any order of the float operations passes (a clip by hand, or against the scaled threshold).

All tensors live on the CPU. ``device_type="cuda"`` is graded too: ``torch.autocast("cuda")`` leaves
CPU tensors in float32 (with or without a GPU), so a step that autocasts on the tensors' device,
or always on ``"cpu"``, runs its forward pass in 16 bits where the course's runs it in float32.
Warnings (autocast disabling itself without CUDA) are silenced in the probes and never decide.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from torch import nn

from gdcourse.grading.cases import Case, Fail, call, kind, probe, require
from gdcourse.grading.wire import Tensor
from gdcourse.runtime import torch_threads

LOSS_RTOL = {"16": 1e-3, "32": 1e-5}
UPDATE_RTOL = {"16": 1e-2, "32": 1e-4}


# --- the reference ----------------------------------------------------------------------

def autocast_dtype(device_type):
    return torch.bfloat16 if device_type == "cpu" else torch.float16


def step_was_skipped(scale_before, scale_after):
    return bool(scale_after < scale_before)


def amp_train_step(model, X, y, loss_fn, optimizer, scaler, device_type="cpu", dtype=torch.bfloat16,
                   max_norm=None):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(X), y)
    scaler.scale(loss).backward()
    if max_norm is not None:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scale_before = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    return loss.item(), not step_was_skipped(scale_before, scaler.get_scale())


REFERENCE = {"autocast_dtype": autocast_dtype, "step_was_skipped": step_was_skipped,
             "amp_train_step": amp_train_step}


# --- building (the probes and the checks make the same objects from the same data) --------

def build_model(seed: int, sizes=(6, 8, 3)) -> nn.Sequential:
    """The notebook's ``tiny_model(seed, sizes)``, torch's global generator left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return nn.Sequential(nn.Linear(int(sizes[0]), int(sizes[1])), nn.ReLU(),
                             nn.Linear(int(sizes[1]), int(sizes[2])))


def make_optimizer(parameters, spec: dict):
    kwargs = {k: v for k, v in spec.items() if k != "name"}
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[spec["name"]]
    return cls(parameters, **kwargs)


def make_scaler(spec: dict):
    return torch.amp.GradScaler("cpu", **spec)


def flat(model) -> torch.Tensor:
    return torch.cat([p.detach().flatten().float() for p in model.parameters()])


def batch(X, y):
    return torch.tensor(np.asarray(X), dtype=torch.float32), torch.tensor(np.asarray(y), dtype=torch.long)


def true_gradient(seed, sizes, X, y, dtype="bfloat16", device_type="cpu") -> np.ndarray:
    """The flat gradient of one plain backward pass under autocast, no scaler (the notebook's autocast_grads)."""
    model = build_model(seed, sizes)
    Xt, yt = batch(X, y)
    with warnings.catch_warnings(), torch_threads(1):
        warnings.simplefilter("ignore")
        with torch.autocast(device_type=device_type, dtype=getattr(torch, dtype)):
            loss = nn.functional.cross_entropy(model(Xt), yt)
    loss.backward()
    return torch.cat([p.grad.flatten().float() for p in model.parameters()]).numpy()


def _hook(model, where: int, what: str):
    """A backward hook that makes the gradient of parameter ``where`` inf or NaN (an overflow)."""
    p = list(model.parameters())[int(where)]
    if what == "inf":
        return p.register_hook(lambda g: g * math.inf)
    return p.register_hook(lambda g: g + math.nan)




# --- probes (run in the sandbox with the student's function, on the trusted side with the reference) --

@torch_threads(1)
def dtypes(fn, device_types):
    """``autocast_dtype`` on each device type: the dtype's name, or what came back if it is not a torch.dtype."""
    out = []
    for device_type in device_types:
        got = fn(device_type)
        out.append(str(got).removeprefix("torch.") if isinstance(got, torch.dtype)
                   else {"not a dtype": kind(got)})
    return out


@torch_threads(1)
def scaler_run(fn, seed, steps, inject, scaler):
    """A real GradScaler over ``steps`` SGD steps with an inf gradient injected at the steps in ``inject``;
    ``fn(scale_before, scale_after)`` after each ``update()``. Reports what fn returned each time."""
    model = build_model(seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sc = make_scaler(scaler)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 1)
        X, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    returned = []
    for t in range(int(steps)):
        h = _hook(model, 1, "inf") if t in inject else None
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(X), y)
        sc.scale(loss).backward()
        before = sc.get_scale()
        sc.step(opt)
        sc.update()
        if h is not None:
            h.remove()
        returned.append(fn(before, sc.get_scale()))
    return returned


@torch_threads(1)
def amp(fn, seed, sizes, optimizer, scaler, batches, device_type=None, dtype=None, max_norm=None, inject=None,
        stale=None):
    """``amp_train_step`` once per batch of ``batches`` on one model, optimizer and scaler. ``device_type``,
    ``dtype`` (a name) and ``max_norm`` are passed by keyword when given. ``inject[i]``: ``(parameter
    index, "inf" | "nan")``, a backward hook that poisons that gradient during call ``i``; ``stale[i]``:
    every ``.grad`` set to this value before call ``i``. Reports per call: the returned value, the
    flat weights, the scale and growth tracker, the optimizer steps so far, and the dtype of the first
    layer's output at each forward pass; ``start``: the weights before the first call."""
    model = build_model(seed, sizes)
    opt = make_optimizer(model.parameters(), optimizer)
    sc = make_scaler(scaler)
    loss_fn = nn.CrossEntropyLoss()
    seen, steps = [], [0]
    model[0].register_forward_hook(lambda module, inputs, output: seen.append(str(output.dtype).removeprefix("torch.")))
    opt.register_step_pre_hook(lambda *_: steps.__setitem__(0, steps[0] + 1))
    kwargs = {}
    if device_type is not None:
        kwargs["device_type"] = device_type
    if dtype is not None:
        kwargs["dtype"] = getattr(torch, dtype)
    if max_norm is not None:
        kwargs["max_norm"] = max_norm
    report = {"start": flat(model), "returned": [], "params": [], "scale": [], "tracker": [], "steps": [],
              "dtypes": []}
    with warnings.catch_warnings(), torch.random.fork_rng(devices=[]):
        warnings.simplefilter("ignore")
        torch.manual_seed(int(seed) + 1)
        for i, (X, y) in enumerate(batches):
            if stale is not None and stale[i] is not None:
                for p in model.parameters():
                    p.grad = torch.full_like(p, float(stale[i]))
            hook = _hook(model, *inject[i]) if inject is not None and inject[i] is not None else None
            seen.clear()
            Xt, yt = batch(X, y)
            try:
                report["returned"].append(fn(model, Xt, yt, loss_fn, opt, sc, **kwargs))
            finally:
                if hook is not None:
                    hook.remove()
            report["params"].append(flat(model))
            report["scale"].append(float(sc.get_scale()))
            report["tracker"].append(int(sc.state_dict().get("_growth_tracker", 0)))
            report["steps"].append(steps[0])
            report["dtypes"].append(list(seen))
    return report


# --- checks ------------------------------------------------------------------------------

def _flat(x) -> np.ndarray:
    if isinstance(x, Tensor):
        return np.asarray(x.array, dtype=np.float64)
    if isinstance(x, torch.Tensor):
        return x.detach().double().numpy()
    return np.asarray(x, dtype=np.float64)


def _rel(a, b) -> float:
    """Relative error in norm, as the notebook's rel_err: |a - b| / |b|."""
    nb = float(np.linalg.norm(b))
    return float(np.linalg.norm(a - b)) / nb if nb > 0 else float(np.linalg.norm(a))


def autocast_dtype_case(device_types, name, visible=False):
    def check(r):
        want = dtypes(autocast_dtype, device_types)
        require(isinstance(r.value, list) and len(r.value) == len(want), "the probe's report is incomplete")
        for device_type, got, w in zip(device_types, r.value, want):
            if isinstance(got, dict):
                message = f"autocast_dtype must return a torch.dtype (such as torch.{w}), not {got.get('not a dtype')}"
                raise Fail(message, summary="autocast_dtype must return a torch.dtype, not its name or another value")
            if got != w:
                raise Fail(f"autocast_dtype({device_type!r}) should be torch.{w}, got torch.{got}",
                           summary=f"autocast_dtype({device_type!r}) is the wrong dtype: bfloat16 for 'cpu', "
                                   f"float16 for 'cuda', whatever machine runs the code")
    return Case("test_autocast_dtype", name, probe("autocast_dtype", "dtypes", list(device_types)), check, visible)


def skipped_case(before, after, name, visible=False, hint=None):
    def check(r):
        want = step_was_skipped(before, after)
        require(type(r.value) is bool, f"step_was_skipped must return a Python bool, got {kind(r.value)}")
        if r.value != want:
            message = hint or ("a step is skipped exactly when update() lowered the scale" if want else
                               "the scale did not go down, so the step was taken")
            raise Fail(f"step_was_skipped({before!r}, {after!r}) should be {want}: {message}", summary=message)
    return Case("test_step_was_skipped", name, call("step_was_skipped", before, after), check, visible)


def scaler_case(seed, steps, inject, scaler, name, visible=False):
    args = (seed, steps, sorted(int(t) for t in inject), scaler)

    def check(r):
        want = scaler_run(step_was_skipped, *args)
        require(isinstance(r.value, list) and len(r.value) == len(want), "the probe's report is incomplete")
        require(all(type(g) is bool for g in r.value), "step_was_skipped must return a Python bool")
        wrong = [t for t, (g, w) in enumerate(zip(r.value, want)) if g != w]
        if wrong:
            missed = any(want[t] for t in wrong)
            message = ("a step the scaler skipped was reported as taken" if missed else
                       "a step the scaler took (the scale unchanged, or grown after good steps) was reported as skipped")
            raise Fail(f"{message} (steps {wrong})", summary=message)
    return Case("test_step_was_skipped", name, probe("step_was_skipped", "scaler_run", *args), check, visible)


def _bits(dtype, device_type):
    """Whether the course's forward pass runs in 16 bits: CPU autocast does; autocast("cuda") on CPU tensors not."""
    return "32" if device_type not in (None, "cpu") else "16"


def amp_case(test, name, seed, sizes, optimizer, scaler, batches, *, device_type="cpu", dtype="bfloat16",
             max_norm=None, inject=None, stale=None, visible=False, hints=None):
    """``hints``: a dict of messages for a visible case ("update": when the update differs)."""
    args = (seed, sizes, optimizer, scaler, batches)
    kwargs = dict(device_type=device_type, dtype=dtype, max_norm=max_norm, inject=inject, stale=stale)
    bits = _bits(dtype, device_type)
    hints = hints or {}

    def check(r):
        v = r.value
        keys = ("start", "returned", "params", "scale", "tracker", "steps", "dtypes")
        require(isinstance(v, dict) and all(k in v for k in keys) and all(
            isinstance(v[k], list) and len(v[k]) == len(batches) for k in keys[1:]), "the probe's report is incomplete")
        want = amp(amp_train_step, *args, **kwargs)
        before_got, before_want = _flat(v["start"]), _flat(want["start"])
        scale = float(scaler.get("init_scale", 2.0 ** 16))
        for i in range(len(batches)):
            at = f"call {i + 1}: " if len(batches) > 1 else ""
            got = v["returned"][i]
            require(isinstance(got, tuple) and len(got) == 2, "amp_train_step must return a tuple (loss, stepped)")
            loss, stepped = got
            w_loss, w_stepped = want["returned"][i]
            # the forward pass: under autocast on the device_type given, in the dtype given
            seen, expected = v["dtypes"][i], want["dtypes"][i]
            if not (isinstance(seen, list) and seen and all(d == expected[0] for d in seen)):
                detail = (f"{at}the first Linear returned {', '.join(map(str, seen)) or 'nothing'}, "
                          f"expected {expected[0] if expected else '?'}")
                if device_type not in (None, "cpu"):
                    summary = ("run the forward pass under torch.autocast(device_type=device_type, dtype=dtype) with "
                               "the device_type argument, not the tensors' device: autocast('cuda') leaves CPU "
                               "tensors in float32")
                else:
                    summary = "run the forward pass and the loss under torch.autocast(device_type=device_type, dtype=dtype)"
                raise Fail(f"{summary}: {detail}", summary=summary)
            # stepped
            require(type(stepped) is bool, f"stepped must be a Python bool, got {kind(stepped)}")
            if stepped != w_stepped:
                message = ("the scaler skipped the step (a gradient was inf or NaN), so stepped must be False"
                           if not w_stepped else "the step was taken (no inf or NaN gradient), so stepped must be True")
                raise Fail(at + message, summary=message)
            # the loss itself, as a Python float
            if not (isinstance(loss, float) and not isinstance(loss, bool)):
                message = f"the loss must be a Python float (loss.item()), got {kind(loss)}"
                raise Fail(at + message, summary=message)
            if math.isnan(w_loss):
                require(math.isnan(loss), "the batch's loss is NaN: return it as it is")
            elif not abs(loss - w_loss) <= LOSS_RTOL[bits] * abs(w_loss):
                near_scaled = abs(loss - w_loss * v["scale"][i]) < 1e-2 * abs(w_loss * v["scale"][i]) or \
                    abs(loss - w_loss * scale) < 1e-2 * abs(w_loss * scale)
                message = ("return the loss itself, not the scaled loss" if near_scaled else
                           f"the loss is not the batch's loss under autocast (beyond a relative error of "
                           f"{LOSS_RTOL[bits]:g}): compute the forward pass and loss_fn inside the autocast block "
                           f"(autocast runs the loss in float32), and return loss.item()")
                raise Fail(f"{at}{message}: expected {w_loss:.6g}, got {loss:.6g}", summary=message)
            # the update
            after_got, after_want = _flat(v["params"][i]), _flat(want["params"][i])
            require(after_got.shape == after_want.shape, "the probe's report is incomplete")
            d_got, d_want = after_got - before_got, after_want - before_want
            if not w_stepped:
                if not np.array_equal(after_got, before_got):
                    message = ("the weights changed although a gradient was inf or NaN: let scaler.step(optimizer) "
                               "take the step (it skips it), never call optimizer.step() yourself")
                    raise Fail(at + message, summary=message)
            else:
                err = _rel(d_got, d_want)
                if not err <= UPDATE_RTOL[bits]:
                    ratio = float(np.linalg.norm(d_got) / max(np.linalg.norm(d_want), 1e-30))
                    s = v["scale"][i - 1] if i > 0 else scale
                    if not np.all(np.isfinite(d_got)):
                        message = ("the weights are not finite: let scaler.step(optimizer) unscale the gradients and "
                                   "take the step, never optimizer.step() yourself")
                    elif s > 4 and 0.5 / s < ratio < 2 / s:
                        message = ("the update is about 1/scale of the right one: backpropagate "
                                   "scaler.scale(loss), and clip only after scaler.unscale_(optimizer)")
                    elif s > 4 and 0.5 * s < ratio < 2 * s:
                        message = ("the update is about scale times too large: let scaler.step(optimizer) unscale "
                                   "the gradients and take the step")
                    elif max_norm is not None:
                        message = ("the clipped update differs: clip the true gradients: scaler.unscale_(optimizer) "
                                   "first, then clip_grad_norm_(model.parameters(), max_norm), then "
                                   "scaler.step(optimizer)")
                    elif stale is not None and stale[i] is not None:
                        message = ("the gradients held stale values on entry and your step used them: clear them at "
                                   "the start of amp_train_step")
                    else:
                        message = ("the update differs from one step on this batch's gradient: clear the gradients "
                                   "at the start, backpropagate the scaled loss, then scaler.step and scaler.update")
                    raise Fail(f"{at}{hints.get('update', message)} (the update is off by {err:.1%})", summary=message)
            before_got, before_want = after_got, after_want
            # the scaler's state, and the optimizer steps
            if v["scale"][i] != want["scale"][i] or v["tracker"][i] != want["tracker"][i]:
                message = ("the scaler's state after the call is wrong: call scaler.update() exactly once per call, "
                           "after scaler.step(optimizer)")
                raise Fail(f"{at}{message} (scale {v['scale'][i]:g}, expected {want['scale'][i]:g})", summary=message)
            if v["steps"][i] != want["steps"][i]:
                message = "one optimizer step per call, none when the scaler skips it (scaler.step(optimizer))"
                raise Fail(f"{at}{message}: {v['steps'][i]} optimizer steps so far, expected {want['steps'][i]}",
                           summary=message)
    return Case(test, name, probe("amp_train_step", "amp", *args, **kwargs), check, visible)


def batch_data(seed, n, n_in, n_out, scale=1.0):
    """``n`` samples drawn as the notebook draws them: ``torch.manual_seed(seed)``, then randn and randint."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        X, y = scale * torch.randn(n, n_in), torch.randint(0, n_out, (n,))
    return X.numpy(), y.numpy()


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield autocast_dtype_case(["cpu"], "bfloat16 for 'cpu'", visible=True)
    yield autocast_dtype_case(["cuda"], "float16 for 'cuda'", visible=True)

    yield skipped_case(65536.0, 32768.0, "a halved scale: skipped", visible=True,
                       hint="a halved scale means the step was skipped")
    yield skipped_case(65536.0, 65536.0, "an unchanged scale: taken", visible=True,
                       hint="an unchanged scale means the step was taken")
    yield skipped_case(65536.0, 131072.0, "a doubled scale: taken (growth after good steps)", visible=True,
                       hint="a doubled scale is growth after good steps, not a skip")

    basic = "test_amp_step_basic"
    X, y = batch_data(1, 16, 6, 3)
    sgd = {"name": "sgd", "lr": 0.1}
    for dtype in ("bfloat16", "float16"):
        yield amp_case(basic, f"one step in {dtype} on the CPU: autocast, the loss, -lr * gradient, the scale grown",
                       0, (6, 8, 3), sgd, {"init_scale": 2.0 ** 10, "growth_interval": 1}, [(X, y)], dtype=dtype,
                       visible=True)
    # a small scale: the scaler divides stale gradients by the scale again, which would hide them at 2 ** 10
    yield amp_case(basic, "two steps in a row: the second update uses the second gradient only", 0, (6, 8, 3), sgd,
                   {"init_scale": 2.0}, [(X, y), (X, y)], visible=True, hints={
                       "update": "the update is wrong: gradients of the first step were added in. Clear them at the "
                                 "start of every step (optimizer.zero_grad())"})

    X, y = batch_data(2, 16, 6, 3)
    yield amp_case("test_amp_step_skip", "an inf gradient: the step skipped, the scale halved; the next step taken",
                   2, (6, 8, 3), sgd, {"init_scale": 2.0 ** 10}, [(X, y), (X, y)], max_norm=1.0,
                   inject=[(2, "inf"), None], visible=True)

    X, y = batch_data(3, 32, 6, 3, scale=3.0)
    G = float(np.linalg.norm(true_gradient(4, (6, 8, 3), X, y)))
    for factor, what in ((0.25, "a quarter of the gradient norm: the update shrinks 4 times"),
                         (4.0, "four times the gradient norm: no clipping")):
        yield amp_case("test_amp_step_clip", f"max_norm {what}", 4, (6, 8, 3), sgd, {"init_scale": 2.0 ** 10},
                       [(X, y)], max_norm=factor * G, visible=True, hints={
                           "update": f"with max_norm = {factor:g} x the true gradient norm the update must be "
                                     f"{min(1.0, factor):g} x (-lr * g). Clip the true gradients: "
                                     "scaler.unscale_(optimizer) first, then clip_grad_norm_, then scaler.step(optimizer)"})
