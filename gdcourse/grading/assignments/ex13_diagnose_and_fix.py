"""ex13, diagnose and fix four broken runs: the course's reference, the probe, the case builders and the visible cases.

What is compared, as the exercise's statement says:

- ``cause_a`` .. ``cause_d`` (values): the visible case asks for one key of ``CAUSES`` (a str), the
  hidden case for the right one.
- ``fixed_run_a``: trained on house prices (100 to 400 houses, seeds drawn by the judge), the run logs
  ``steps`` finite losses and gradient norms, and ``predict`` on held-out houses gives dollars: the mean
  prediction within three quarters of the prices' spread of the mean price, the RMSE below that
  (``A_LIMIT``: every sound rescaling passes with a margin, min-max scaling at 0.43 in 400 draws, while the
  "fixes" that do not fix score 2.5 or more, or diverge); two calls with the same arguments give the same run (``SAME_RTOL``).
- ``fixed_run_b``: the logged gradient norms match a correct run's (relative ``B_RTOL``, plus
  ``B_ATOL``), and so do the logits of the trained model (``B_RTOL`` + ``B_ATOL``); the visible case
  also asks for a training cross-entropy below ``B_CE``.
- ``fixed_run_c``: the rate at every ``optimizer.step()`` (a global step hook reads it): the first
  step of epoch e uses exactly ``0.1 * 0.8**e`` (relative ``C_RTOL``), every other step of that epoch a
  rate between 0.8 times that and that; the training cross-entropy is below ``C_CE`` after 5 or more
  epochs; two calls give the same run.
- ``fixed_run_d``: every logged loss of the first epoch matches a correct run's (relative ``D_RTOL`` plus
  ``D_ATOL``), where every mistake in the loss shows from the first step. Training at a sharp temperature
  is chaotic: two correct implementations (or one on one thread and on two) drift apart batch by batch,
  by a few per cent per logged loss after five epochs. So later epochs are compared by their mean loss
  (relative ``D_EPOCH_RTOL``; correct variants over 150 draws stayed within a tenth of it), and the
  trained logits by their scale (the largest |logit| within a factor ``D_SCALE``, which a predict without
  the temperature misses by 20 or more) and their classes (the same argmax on ``D_AGREE`` of the inputs).
  The visible case also asks for a training cross-entropy below ``D_CE``. Hidden cases go down to
  temperature 1/1000, where logits reach thousands and a literal softmax overflows or underflows from the
  first step.

A correct run is the course's (``REFERENCE``), trained on the trusted side from the same data and seed.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch.optim.optimizer import register_optimizer_step_pre_hook

from gdcourse.data import load_digits_split, make_linear_data
from gdcourse.grading.cases import Case, close, diagnose, kind, probe, require, value
from gdcourse.models import mlp
from gdcourse.monitor import GradNormTracker
from gdcourse.runtime import torch_threads

A_LIMIT = 0.75  # RMSE and mean gap on held-out houses, in units of the prices' spread
SAME_RTOL = 1e-6  # two calls with the same seed
B_RTOL, B_ATOL = 1e-4, 1e-6  # gradient norms; the trained logits use B_RTOL and 1e-4
B_CE = 0.5
C_RTOL = 1e-9
C_CE = 1.0
D_RTOL, D_ATOL = 1e-2, 1e-4
D_EPOCH_RTOL = 5e-2  # each later epoch's mean loss
D_SCALE, D_AGREE = 1.25, 0.8  # the trained logits: their largest |logit|, the classes they predict
D_CE = 0.3

CAUSES = ("lr_too_high", "unscaled_targets", "unnormalised_inputs", "gradients_accumulate",
          "scheduler_per_batch", "naive_softmax", "dead_relus", "frozen_parameters")
RIGHT = {"cause_a": "unscaled_targets", "cause_b": "gradients_accumulate", "cause_c": "scheduler_per_batch",
         "cause_d": "naive_softmax"}
RUN = {"cause_a": "A", "cause_b": "B", "cause_c": "C", "cause_d": "D"}


# --- the notebook's data and logging (the same code as its setup cell) -------------------

def house_prices(n_samples=200, seed=0):
    """Sale prices in dollars of houses described by 5 standardised features:
    (X_train, y_train, X_val, y_val) as float32 tensors, n_samples of each."""
    p = make_linear_data(2 * n_samples, 5, noise=0.3, seed=seed)
    X = torch.tensor(p.X, dtype=torch.float32)
    y = torch.tensor(300_000 + 20_000 * p.y, dtype=torch.float32)
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]


def digits(n_samples=400, seed=0):
    """A subset of the 8x8 digits (64 standardised pixels, 10 classes), a quarter held out:
    (X_train, y_train, X_val, y_val) as tensors."""
    s = load_digits_split(0.25, n_samples=n_samples, seed=seed)
    return tuple(torch.as_tensor(a) for a in (s.X_train, s.y_train, s.X_val, s.y_val))


def batches(n, batch_size):
    return [slice(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]


def new_history():
    return {"loss": [], "grad_norm": [], "lr": []}


def record(history, loss, tracker, optimizer):
    history["loss"].append(loss.item())
    history["grad_norm"].append(tracker.record())
    history["lr"].append(optimizer.param_groups[0]["lr"])


# --- the reference ----------------------------------------------------------------------

def fixed_run_a(X, y, steps=100, seed=0):
    torch.manual_seed(seed)
    mean, std = y.mean(), y.std()
    target = (y - mean) / std
    model = mlp(X.shape[1], 32, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    tracker, history = GradNormTracker(model), new_history()
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X).squeeze(1), target)
        loss.backward()
        record(history, loss, tracker, optimizer)
        optimizer.step()
    history["predict"] = lambda X_new: (model(X_new).squeeze(1) * std + mean).detach()
    return history


def _digits_run(X, y, epochs, batch_size, seed, lr, temperature=1.0, decay=None):
    """Runs B-D fixed: SGD with momentum on digits, one step per batch, the loss on logits / temperature,
    the rate times ``decay`` after each epoch when given."""
    torch.manual_seed(seed)
    model = mlp(X.shape[1], 32, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scheduler = None if decay is None else torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=decay)
    tracker, history = GradNormTracker(model), new_history()
    for epoch in range(epochs):
        for b in batches(len(X), batch_size):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(X[b]) / temperature, y[b])
            loss.backward()
            record(history, loss, tracker, optimizer)
            optimizer.step()
        if scheduler is not None:
            scheduler.step()
    history["predict"] = lambda X_new: (model(X_new) / temperature).detach()
    return history


def fixed_run_b(X, y, epochs=5, batch_size=32, seed=0):
    return _digits_run(X, y, epochs, batch_size, seed, lr=0.05)  # zero_grad before every backward


def fixed_run_c(X, y, epochs=6, batch_size=32, seed=0):
    return _digits_run(X, y, epochs, batch_size, seed, lr=0.1, decay=0.8)  # the scheduler once per epoch


def fixed_run_d(X, y, epochs=5, batch_size=32, seed=0, temperature=1 / 30):
    return _digits_run(X, y, epochs, batch_size, seed, lr=0.003, temperature=temperature)  # a stable loss


REFERENCE = {**RIGHT, "fixed_run_a": fixed_run_a, "fixed_run_b": fixed_run_b, "fixed_run_c": fixed_run_c,
             "fixed_run_d": fixed_run_d}


# --- the probe (runs in the sandbox, and on the trusted side for the correct runs) ---------

def data(run: str, n: int, seed: int):
    """The data set a case trains on: house prices for run A, digits for the others."""
    return house_prices(int(n), seed=int(seed)) if run == "a" else digits(int(n), seed=int(seed))


def _floats(values):
    """A logged list as plain floats (a list or tuple of numbers or 0-d tensors; an array or 1-d tensor too)."""
    if torch.is_tensor(values):
        values = values.detach().reshape(-1).tolist()
    elif isinstance(values, np.ndarray):
        values = values.reshape(-1).tolist()
    if not isinstance(values, (list, tuple)):
        return None
    return [float(v) for v in values]


def _predictions(predict, X):
    with torch.no_grad():
        out = predict(X)
    return torch.as_tensor(out).detach().to(torch.float64).cpu().numpy()


def _report(history, rates, run, X, X_val) -> dict:
    if not isinstance(history, dict):
        return {"returned": kind(history)}
    report = {"returned": "dict", "keys": sorted(str(k) for k in history), "rates": rates}
    for key in ("loss", "grad_norm", "lr"):
        report[key] = _floats(history.get(key))
    predict = history.get("predict")
    if callable(predict):
        report["predict"] = (_predictions(predict, X_val).reshape(-1) if run == "a" else _predictions(predict, X))
    return report


@torch_threads(1)  # as in the sandbox: the student's run and the course's sum in the same order
def training(fn, run, n, seed, options, repeat=1):
    """Train ``fn`` (a ``fixed_run_*``) on ``data(run, n, seed)`` with the keyword arguments ``options``,
    ``repeat`` times, torch's global generator set differently before each call (and left as it was).
    Reports, per call: the history's keys, its ``loss``, ``grad_norm`` and ``lr`` lists, the rate of
    the first parameter group at every ``optimizer.step()`` of the call (``rates``), and what
    ``predict`` gives on the held-out inputs (run A, flattened) or on the training inputs (B, C, D)."""
    X, y, X_val, _ = data(run, n, seed)
    reports = []
    with torch.random.fork_rng(devices=[]):
        for i in range(int(repeat)):
            torch.manual_seed(7919 * (i + 1))
            rates = []
            handle = register_optimizer_step_pre_hook(
                lambda opt, args, kwargs: rates.append(float(opt.param_groups[0]["lr"])))
            try:
                history = fn(X, y, **dict(options))
            finally:
                handle.remove()
            reports.append(_report(history, rates, run, X, X_val))
    return reports


@functools.lru_cache(maxsize=64)
def _correct(run: str, n: int, seed: int, options: tuple) -> dict:
    """The course's run on the same data and seed (trusted side)."""
    return training(REFERENCE[f"fixed_run_{run}"], run, n, seed, dict(options))[0]


# --- checks ----------------------------------------------------------------------------------

def cause_case(name: str, right: bool, visible=False):
    def check(r):
        got = r.value
        require(type(got) is str and got in CAUSES,
                f"{name} must be one key of CAUSES (a str), got {kind(got) if type(got) is not str else repr(got)[:40]}; "
                f"the keys are {sorted(CAUSES)}")
        if right:
            require(got == RIGHT[name], f"{name} does not name what breaks run {RUN[name]}")
    what = f"{name} names what breaks run {RUN[name]}" if right else f"{name} is one key of CAUSES"
    # the format check is shown to the student but worth nothing: only the right cause earns the point
    return Case(f"test_{name}", what, value(name), check, visible, weight=1.0 if right else 0.0)


def _one(r, repeat=1):
    require(isinstance(r.value, list) and len(r.value) == repeat, "the probe reported no run")
    for report in r.value:
        require(isinstance(report, dict) and report.get("returned") == "dict",
                f"the run must return its history, a dict (loss, grad_norm, lr, predict), "
                f"not {report.get('returned') if isinstance(report, dict) else 'that'}")
        keys = set(report.get("keys") or ())
        require({"loss", "grad_norm", "lr", "predict"} <= keys,
                f"the history needs the keys loss, grad_norm, lr and predict, as the broken run's; got {sorted(keys)}")
        require(report.get("loss") is not None and report.get("grad_norm") is not None and report.get("lr") is not None,
                "loss, grad_norm and lr must be lists with one number per step")
        require(report.get("predict") is not None, "history['predict'] must be a function of new inputs")
    return r.value[0]


def _steps(report, steps, visible):
    for key in ("loss", "grad_norm", "lr"):
        require(len(report[key]) == steps,
                f"history['{key}'] needs one entry per optimizer step: {steps} here, got {len(report[key])}" if visible
                else f"history['{key}'] does not hold one entry per optimizer step")


def _finite(values) -> bool:
    return all(math.isfinite(v) for v in values)


def _first_nonfinite(values):
    return next((i for i, v in enumerate(values) if not math.isfinite(v)), None)


def _ce(logits, y) -> float:
    logits = torch.as_tensor(np.asarray(logits, dtype=float))
    if logits.shape != (len(y), 10) or not torch.isfinite(logits).all():
        return math.nan
    return float(F.cross_entropy(logits, torch.as_tensor(y)))


def _same(reports):
    """Two calls with the same arguments (torch's global generator set differently before each) ran the same."""
    first, again = reports
    message = ("two calls with the same seed give different runs: seed torch with torch.manual_seed(seed) "
               "first, as the broken run does")
    for key in ("loss", "grad_norm"):
        require(len(first[key]) == len(again[key]) and np.allclose(again[key], first[key], rtol=SAME_RTOL, atol=1e-12,
                                                                   equal_nan=True), message)
    require(np.shape(again["predict"]) == np.shape(first["predict"])
            and np.allclose(again["predict"], first["predict"], rtol=SAME_RTOL, atol=1e-9, equal_nan=True), message)


def fix_a_case(n, seed, steps=100, name="", visible=False, repeat=1):
    options = (("steps", steps), ("seed", seed))

    def check(r):
        report = _one(r, repeat)
        _steps(report, steps, visible)
        require(_finite(report["loss"]) and _finite(report["grad_norm"]),
                "the loss or the gradient norm is not finite: the run still diverges")
        _, _, _, y_val = data("a", n, seed)
        y_val = y_val.double().numpy()
        pred = np.asarray(report["predict"], dtype=float)
        require(pred.size == y_val.size, f"predict must return one price per house: {pred.size} values "
                                          f"for {y_val.size} houses")
        require(np.isfinite(pred).all(), "predict returns values that are not finite")
        spread = float(np.std(y_val, ddof=1))
        gap = abs(float(pred.mean()) - float(y_val.mean()))
        if visible:
            require(gap < A_LIMIT * spread,
                    f"on held-out houses your predictions average {pred.mean():,.0f} dollars, the prices "
                    f"{y_val.mean():,.0f}: either the model has not learned the prices, or predict does not undo "
                    f"a rescaling of the targets")
        else:
            require(gap < A_LIMIT * spread, "predictions on held-out houses are not prices in dollars, or the "
                                            "model has not learned them (mean off by three quarters of the prices' spread or more)")
        err = float(np.sqrt(np.mean((pred - y_val) ** 2)) / spread)
        require(err < A_LIMIT, (f"validation RMSE is {err:.2f} times the spread of the prices; a fixed run reaches "
                                f"well below {A_LIMIT} in {steps} steps, and predicting the mean price scores 1.0")
                if visible else f"validation RMSE is not below {A_LIMIT} times the spread of the prices")
        if repeat > 1:
            _same(r.value)
    return Case("test_fix_a", name, probe("fixed_run_a", "training", "a", n, seed, dict(options), repeat), check, visible)


def fix_b_case(n, seed, epochs=5, batch_size=32, name="", visible=False):
    options = (("epochs", epochs), ("batch_size", batch_size), ("seed", seed))

    def check(r):
        report = _one(r)
        per_epoch = len(batches(len(data("b", n, seed)[0]), batch_size))
        _steps(report, epochs * per_epoch, visible)
        require(_finite(report["loss"]), "the loss is not finite")
        norms = report["grad_norm"]
        require(min(norms) > 0, "a logged gradient norm is 0: the gradients were cleared between backward() and "
                                "the step, so that step did nothing. Clear them before backward()")
        want = _correct("b", n, seed, options)
        k = min(10, len(norms) // 2)
        grows = k > 0 and max(norms[-k:]) > 2 * max(norms[:k]) and not max(want["grad_norm"][-k:]) > 2 * max(want["grad_norm"][:k])
        diagnose(lambda: close(norms, want["grad_norm"], rtol=B_RTOL, atol=B_ATOL,
                               what="the logged gradient norms"),
                 [(lambda: grows, "the gradient norm grows during training: is the gradient of each batch computed "
                                  "on its own (cleared before every backward pass)?"),
                  (lambda: True, "the gradients used differ from a run that clears .grad before every backward pass "
                                 "(same model, optimizer, seed and batches)")])
        close(report["predict"], want["predict"], rtol=B_RTOL, atol=1e-4, what="the trained model's logits")
        if visible:
            _, y, _, _ = data("b", n, seed)
            ce = _ce(report["predict"], y)
            require(ce < B_CE, f"training cross-entropy after {epochs} epochs is {ce:.3g}; a fixed run gets well "
                               f"below {B_CE} (guessing scores ln 10 = 2.3)")
    return Case("test_fix_b", name, probe("fixed_run_b", "training", "b", n, seed, dict(options)), check, visible)


def fix_c_case(n, seed, epochs=6, batch_size=32, name="", visible=False, repeat=1):
    options = (("epochs", epochs), ("batch_size", batch_size), ("seed", seed))

    def check(r):
        report = _one(r, repeat)
        _, y, _, _ = data("c", n, seed)
        per_epoch = len(batches(len(y), batch_size))
        used = report["rates"]
        require(len(used) == epochs * per_epoch,
                f"{epochs} epochs of {per_epoch} batches take {epochs * per_epoch} optimizer steps, yours took {len(used)}"
                if visible else "the run does not take one optimizer step per batch")
        for epoch in range(epochs):
            first, rest = used[epoch * per_epoch], used[epoch * per_epoch:(epoch + 1) * per_epoch]
            planned = 0.1 * 0.8 ** epoch
            require(abs(first - planned) <= C_RTOL * planned,
                    f"the first step of epoch {epoch} used lr {first:.4g}, the plan says 0.1 * 0.8**{epoch} = {planned:.4g}"
                    if visible else "the rate at the first step of an epoch is not 0.1 * 0.8**epoch")
            low = min(rest)
            require(all(0.8 * planned * (1 - C_RTOL) <= lr <= planned * (1 + C_RTOL) for lr in rest),
                    f"during epoch {epoch} the rate left [{0.8 * planned:.4g}, {planned:.4g}]: min {low:.4g}"
                    if visible else "during an epoch the rate leaves [0.8, 1] times the epoch's planned rate")
        if epochs >= 5:
            ce = _ce(report["predict"], y)
            require(ce < C_CE, f"training cross-entropy after {epochs} epochs is {ce:.3g}; with the planned rates it gets "
                               f"well below {C_CE} (guessing scores ln 10 = 2.3)"
                    if visible else f"the training cross-entropy is not below {C_CE} with the planned rates")
        if repeat > 1:
            _same(r.value)
    return Case("test_fix_c", name, probe("fixed_run_c", "training", "c", n, seed, dict(options), repeat), check, visible)


def fix_d_case(n, seed, epochs=5, batch_size=32, temperature=None, name="", visible=False):
    """``temperature`` None: the run's default (1/30) is used, the argument left out of the call."""
    options = (("epochs", epochs), ("batch_size", batch_size), ("seed", seed))
    if temperature is not None:
        options += (("temperature", temperature),)

    def check(r):
        report = _one(r)
        _, y, _, _ = data("d", n, seed)
        _steps(report, epochs * len(batches(len(y), batch_size)), visible)
        losses = report["loss"]
        bad = _first_nonfinite(losses)
        require(bad is None, f"the loss became {losses[bad] if bad is not None else ''} at step {bad}" if visible
                else "the loss becomes inf or nan")
        require(_finite(report["grad_norm"]), "a gradient norm is not finite")
        want = _correct("d", n, seed, options)
        first = len(batches(len(y), batch_size))
        close(losses[:first], want["loss"][:first], rtol=D_RTOL, atol=D_ATOL,
              what="the logged losses of the first epoch (the mean cross-entropy of each batch at this temperature)")
        per_epoch = lambda values: np.asarray(values[:epochs * first], dtype=float).reshape(epochs, first).mean(axis=1)
        close(per_epoch(losses), per_epoch(want["loss"]), rtol=D_EPOCH_RTOL,
              what="the mean logged loss of each epoch (the mean cross-entropy of each batch at this temperature)")
        got, logits = np.asarray(report["predict"], dtype=float), np.asarray(want["predict"], dtype=float)
        require(got.shape == logits.shape, "predict must give the 10 divided logits of each input")
        require(np.isfinite(got).all(), "predict gives logits that are not finite")
        top, want_top = np.abs(got).max(), np.abs(logits).max()
        require(want_top / D_SCALE <= top <= want_top * D_SCALE,
                f"the trained logits' largest |logit| is {top:.4g}, a correct run's {want_top:.4g}: predict gives "
                "model(X) / temperature" if visible else "the trained logits are not at a correct run's scale "
                                                          "(predict gives model(X) / temperature)")
        agree = float(np.mean(got.argmax(axis=1) == logits.argmax(axis=1)))
        require(agree >= D_AGREE, f"the trained model predicts a correct run's class on {agree:.0%} of the inputs "
                                  f"(at least {D_AGREE:.0%} expected)")
        if visible:
            ce = _ce(got, y)
            require(ce < D_CE, f"training cross-entropy after {epochs} epochs is {ce:.3g}; a fixed run gets well below {D_CE}")
    return Case("test_fix_d", name, probe("fixed_run_d", "training", "d", n, seed, dict(options)), check, visible)


# --- the visible cases -----------------------------------------------------------------------

def visible():
    for name in RIGHT:
        yield cause_case(name, right=False, visible=True)
    yield fix_a_case(200, 0, name="200 houses, seed 0, 100 steps", visible=True)
    yield fix_b_case(400, 0, name="digits(400, seed=0), 5 epochs of batches of 32", visible=True)
    yield fix_c_case(400, 0, name="digits(400, seed=0), 6 epochs of batches of 32: the rate at every step", visible=True)
    yield fix_d_case(400, 0, name="digits(400, seed=0), 5 epochs, the default temperature 1/30", visible=True)
