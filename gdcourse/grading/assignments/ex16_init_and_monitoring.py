"""ex16, initialisation and monitoring: the course's reference, the probes, the case builders and the visible cases.

What is compared, as the exercise's statement says:

- ``init_fan_in``: statistics of the weights it leaves, each with a tolerance from the layer's size
  ``n`` (the number of its weights), ``Z = 6`` standard errors of that statistic for a correct
  initialisation, so that a correct one fails a check of the scale on a given layer with a probability of
  about 2e-9, and the kurtosis check, whose distribution is skewed to the right, with at most about 3e-7
  (at ``n = KURTOSIS_MIN``; the Anscombe-Glynne approximation, checked by simulation):
  the root mean square ``sqrt(mean(w^2))`` within a relative ``Z / sqrt(2 n)`` of the scheme's
  standard deviation ``sigma`` (``test_init_scale``), the mean within ``Z sigma / sqrt(n)`` (same
  cell); on layers of at least ``KURTOSIS_MIN`` weights, the excess kurtosis
  ``mean(w^4) / mean(w^2)^2 - 3`` within ``Z sqrt(24 / n)`` of 0, and every bias exactly 0
  (``test_init_distribution``); the model returned, and every parameter the same object as before,
  a leaf that requires gradients, of the dtype it had; an unknown scheme raises ``ValueError``
  (``test_init_in_place``).
- ``expected_initial_loss``: a number within a relative ``LOSS_RTOL`` of ``ln C`` (classification)
  or of the mean over outputs of the targets' population variance (ddof = 0; regression).
- ``update_to_weight_ratio``: the dict's keys exactly the names of the parameters with ``ndim >= 2``,
  each value within a relative ``RATIO_RTOL`` of ``||w_after - w_before|| / ||w_before||``
  (``test_update_ratio``); the model's parameters after the call those of one correct step, within
  ``PARAM_RTOL`` (float64 models; the same operations give the same bits), and exactly one
  ``optimizer.step()`` (``test_update_ratio_step``).

Models, optimizers and losses cannot cross the sandbox wall: cases name them by data
(:func:`build_model`, :func:`problem`), and both sides build the same objects from it.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import torch
from torch import nn

from gdcourse.grading.cases import Case, Fail, call, diagnose, kind, number, probe, require
from gdcourse.grading.wire import Tensor
from gdcourse.runtime import torch_threads

Z = 6.0  # standard errors a statistic of a correct initialisation may stray
KURTOSIS_MIN = 4096  # layers this large or larger have their kurtosis checked
LOSS_RTOL = 1e-6
RATIO_RTOL = 1e-6
PARAM_RTOL, PARAM_ATOL = 1e-9, 1e-12
SCHEMES = ("lecun", "xavier", "he")


# --- the reference ----------------------------------------------------------------------------

def _std(scheme, fan_in, fan_out):
    return {"lecun": 1.0 / math.sqrt(fan_in), "he": math.sqrt(2.0 / fan_in),
            "xavier": math.sqrt(2.0 / (fan_in + fan_out))}[scheme]


def init_fan_in(model, scheme):
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {SCHEMES}")
    with torch.no_grad():
        for layer in model.modules():
            if isinstance(layer, nn.Linear):
                fan_out, fan_in = layer.weight.shape
                layer.weight.normal_(0.0, _std(scheme, fan_in, fan_out))
                if layer.bias is not None:
                    layer.bias.zero_()
    return model


def expected_initial_loss(task, y=None, n_classes=None):
    if task == "classification":
        return math.log(n_classes)
    if task == "regression":
        y = np.asarray(y, dtype=np.float64)
        return float(np.mean(np.var(y, axis=0)))
    raise ValueError(f"unknown task {task!r}")


def update_to_weight_ratio(model, loss_fn, optimizer):
    weights = {name: p for name, p in model.named_parameters() if p.ndim >= 2}
    before = {name: p.detach().clone() for name, p in weights.items()}
    optimizer.zero_grad()
    loss_fn().backward()
    optimizer.step()
    return {name: float((p.detach() - before[name]).norm() / before[name].norm()) for name, p in weights.items()}


REFERENCE = {"init_fan_in": init_fan_in, "expected_initial_loss": expected_initial_loss,
             "update_to_weight_ratio": update_to_weight_ratio}


# --- models and problems from data (both sides) ------------------------------------------------

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "sigmoid": nn.Sigmoid, "identity": nn.Identity}


def build_model(layers, seed: int = 0, dtype: str = "float32") -> nn.Sequential:
    """The model of ``layers``: ``("linear", n_in, n_out)`` (``("linear", n_in, n_out, False)``: no bias),
    ``("layernorm", n)`` or an activation of ``ACTIVATIONS`` by name, built under
    ``torch.manual_seed(seed)`` (torch's global generator is left as it was) and cast to ``dtype``."""
    modules = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        for kind_, *sizes in layers:
            if kind_ == "linear":
                modules.append(nn.Linear(int(sizes[0]), int(sizes[1]), bias=bool(sizes[2]) if len(sizes) > 2 else True))
            elif kind_ == "layernorm":
                modules.append(nn.LayerNorm(int(sizes[0])))
            else:
                modules.append(ACTIVATIONS[kind_]())
    return nn.Sequential(*modules).to(getattr(torch, dtype))


def linears(layers) -> list[tuple[int, int, int, bool]]:
    """``(index in the model, fan_in, fan_out, has a bias)`` of every linear layer of ``layers``."""
    return [(i, int(s[0]), int(s[1]), bool(s[2]) if len(s) > 2 else True)
            for i, (k, *s) in enumerate(layers) if k == "linear"]


def make_optimizer(parameters, spec: dict) -> torch.optim.Optimizer:
    """``{"name": "sgd" | "adam" | "adamw" | "rmsprop", **keyword arguments}`` as a torch optimizer."""
    kwargs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in spec.items() if k != "name"}
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
           "rmsprop": torch.optim.RMSprop}[spec["name"]]
    return cls(parameters, **kwargs)


def problem(spec: dict):
    """``(model, optimizer, loss_fn)`` of ``spec``: ``{"layers", "seed", "n", "loss": "mse" | "ce",
    "optimizer": {...}, "warm": steps, "stale": scale or None}``. The float64 model takes ``warm``
    optimizer steps on another batch first (so momentum and Adam hold state); then its gradients
    are None, or (``stale``) hold random values of that scale, as a loop that forgot to clear them
    leaves them. ``loss_fn()`` is the loss on the case's batch."""
    seed = int(spec["seed"])
    model = build_model(spec["layers"], seed, "float64")
    lin = linears(spec["layers"])
    d_in, d_out = lin[0][1], lin[-1][2]
    g = torch.Generator().manual_seed(seed + 1)
    n = int(spec["n"])
    X, Xw = (torch.randn(n, d_in, generator=g, dtype=torch.float64) for _ in range(2))
    if spec["loss"] == "ce":
        y, yw = (torch.randint(0, d_out, (n,), generator=g) for _ in range(2))
        criterion = nn.functional.cross_entropy
    else:
        y, yw = (torch.randn(n, d_out, generator=g, dtype=torch.float64) for _ in range(2))
        criterion = nn.functional.mse_loss
    optimizer = make_optimizer(model.parameters(), spec["optimizer"])
    for _ in range(int(spec.get("warm", 0))):
        optimizer.zero_grad()
        criterion(model(Xw), yw).backward()
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if spec.get("stale"):
        for p in model.parameters():
            p.grad = float(spec["stale"]) * torch.randn(p.shape, generator=g, dtype=torch.float64)

    def loss_fn():
        return criterion(model(X), y)

    return model, optimizer, loss_fn


# --- probes (run in the sandbox) ------------------------------------------------------------------

def moments(weight: torch.Tensor) -> dict:
    """What the checks need of a weight, in float64: its shape and the sums of its entries, their squares
    and their fourth powers (a model's weights are megabytes; many draws of the cases run in one sandbox)."""
    w = weight.detach().to(torch.float64).reshape(-1)
    return {"shape": list(weight.shape), "n": int(w.numel()), "sum": float(w.sum()), "sum2": float((w * w).sum()),
            "sum4": float((w ** 4).sum())}



@torch_threads(1)
def initialise(fn, layers, scheme, seed, dtype="float32", expect_error=False):
    """``fn(build_model(layers, seed, dtype), scheme)``, torch's generator seeded with ``seed + 1``: the
    :func:`moments` of every linear layer's weight and its bias after it, and whether the model, its parameters, their
    dtypes, leaf status and ``requires_grad`` are as they were. ``expect_error``: report an exception
    (its type, and whether a ValueError) instead of raising it."""
    model = build_model(layers, seed, dtype)
    before = list(model.named_parameters())
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 1)
        try:
            out = fn(model, scheme)
        except Exception as exc:
            if not expect_error:
                raise
            return {"raised": type(exc).__name__, "message": str(exc)[:300], "value_error": isinstance(exc, ValueError)}
    after = list(model.named_parameters())
    layers_now = [model[i] if i < len(model) else None for i, *_ in linears(layers)]
    return {
        "returned_model": out is model,
        "names": [n for n, _ in after] == [n for n, _ in before],
        "same_params": len(after) == len(before) and all(p is q for (_, p), (_, q) in zip(after, before)),
        "dtypes": [str(p.dtype).removeprefix("torch.") for _, p in after],
        "leaf": [bool(p.is_leaf) for _, p in after],
        "requires_grad": [bool(p.requires_grad) for _, p in after],
        "weights": [moments(m.weight) if isinstance(m, nn.Linear) else None for m in layers_now],
        "biases": [m.bias.detach().clone() if isinstance(m, nn.Linear) and m.bias is not None else None
                   for m in layers_now],
    }


@torch_threads(1)
def update(fn, spec):
    """``fn(model, loss_fn, optimizer)`` on ``problem(spec)``: what it returned, every parameter after
    it, and how many times ``optimizer.step()`` ran."""
    model, optimizer, loss_fn = problem(spec)
    steps = [0]
    optimizer.register_step_pre_hook(lambda *args: steps.__setitem__(0, steps[0] + 1))
    out = fn(model, loss_fn, optimizer)
    return {"returned": out, "params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "steps": steps[0]}


# --- init_fan_in: checks ---------------------------------------------------------------------------

def _report(r, *keys):
    v = r.value
    require(isinstance(v, dict), "the probe reported nothing")
    if "raised" in v:
        message = v.get("message")
        raise Fail(f"init_fan_in raised {v['raised']}" + (f": {message}" if isinstance(message, str) and message else ""),
                   summary=f"init_fan_in raised {v['raised']}")
    require(all(k in v for k in keys), "the probe's report is incomplete")
    return v


def _values(t, what) -> np.ndarray:
    if not isinstance(t, Tensor):
        raise Fail(f"{what} is not a tensor", summary=f"{what} is not a tensor")
    return np.asarray(t.array, dtype=np.float64).ravel()


def _moments(m, fan_in, fan_out, what) -> tuple[int, float, float, float]:
    """(n, mean, mean of squares, mean of fourth powers) of a reported weight of shape (fan_out, fan_in)."""
    ok = isinstance(m, dict) and m.get("shape") == [fan_out, fan_in] and m.get("n") == fan_in * fan_out and all(
        isinstance(m.get(k), float) for k in ("sum", "sum2", "sum4"))
    require(ok, f"the weight of {what} should keep its shape ({fan_out}, {fan_in})")
    n = fan_in * fan_out
    return n, m["sum"] / n, m["sum2"] / n, m["sum4"] / n


def _layer(i, fan_in, fan_out):
    return f"layer {i} (nn.Linear({fan_in}, {fan_out}))"


def scale_case(layers, scheme, seed=0, name="", visible=False):
    """Each linear layer's RMS within a relative Z / sqrt(2n) of the scheme's sigma, its mean within Z sigma / sqrt(n)."""
    def check(r):
        v = _report(r, "weights")
        require(isinstance(v["weights"], list) and len(v["weights"]) == len(linears(layers)),
                "the probe's report is incomplete")
        for (i, fan_in, fan_out, _), t in zip(linears(layers), v["weights"]):
            n, mean, m2, _ = _moments(t, fan_in, fan_out, _layer(i, fan_in, fan_out))
            sigma = _std(scheme, fan_in, fan_out)
            rms = math.sqrt(m2) if m2 >= 0 else math.nan
            tol = Z / math.sqrt(2 * n)
            where = _layer(i, fan_in, fan_out)

            def right():
                if not (math.isfinite(rms) and abs(rms / sigma - 1) <= tol):
                    raise Fail(f"{where}, scheme {scheme!r}: the weights' standard deviation (root mean square) is "
                               f"{rms:.5g}, expected {sigma:.5g} (allowed: a relative {tol:.2%})" if visible else
                               f"the weights' standard deviation is not the {scheme!r} scheme's",
                               summary=f"the weights' standard deviation is not the {scheme!r} scheme's")

            near = lambda s: math.isfinite(rms) and abs(rms / s - 1) <= tol
            xavier = _std("xavier", fan_in, fan_out)
            diagnose(right, [
                (lambda: near(1 / math.sqrt(3 * fan_in)),
                 "this layer keeps nn.Linear's default initialisation: initialise every nn.Linear of the model"),
                (lambda: near(sigma ** 2) and abs(sigma - 1) > 0.1,
                 "that is the variance: the standard deviation is its square root"),
                (lambda: scheme != "xavier" and near(_std(scheme, fan_out, fan_in)),
                 "that is the scale for fan_out: fan_in is the number of inputs, weight.shape[1] "
                 "(nn.Linear stores its weight as (out_features, in_features))"),
                (lambda: scheme == "xavier" and near(math.sqrt(2) * xavier),
                 "Xavier's scale has no ReLU gain: sqrt(2 / (fan_in + fan_out))"),
                (lambda: scheme == "xavier" and fan_in != fan_out and near(1 / math.sqrt(fan_in)),
                 "that is LeCun's scale, from fan_in alone: Xavier's averages the two fans, "
                 "sqrt(2 / (fan_in + fan_out))"),
                (lambda: scheme == "xavier" and near(xavier / math.sqrt(2)),
                 "Xavier's variance is 2 / (fan_in + fan_out), the average of 1/fan_in and 1/fan_out"),
                (lambda: scheme == "he" and near(2 / math.sqrt(fan_in)),
                 "He's gain is sqrt(2) on the standard deviation (2 on the variance)"),
                (lambda: scheme == "he" and near(1 / math.sqrt(fan_in)), "He's scale has the gain sqrt(2): sqrt(2 / fan_in)"),
                (lambda: scheme == "lecun" and near(math.sqrt(2 / fan_in)), "LeCun's scale has no gain: 1 / sqrt(fan_in)"),
            ])
            limit = Z * sigma / math.sqrt(n)
            require(abs(mean) <= limit, f"{where}: the weights' mean is {mean:.3g}, not 0 (allowed: {limit:.2g})"
                    if visible else "the weights' mean is not 0")
    return Case("test_init_scale", name, probe("init_fan_in", "initialise", layers, scheme, seed), check, visible)


def distribution_case(layers, scheme, seed=0, name="", visible=False):
    """Normal, not uniform: the excess kurtosis of every layer of KURTOSIS_MIN weights or more; biases exactly zero."""
    assert any(fan_in * fan_out >= KURTOSIS_MIN for _, fan_in, fan_out, _ in linears(layers))

    def check(r):
        v = _report(r, "weights", "biases")
        require(isinstance(v["weights"], list) and isinstance(v["biases"], list)
                and len(v["weights"]) == len(v["biases"]) == len(linears(layers)), "the probe's report is incomplete")
        for (i, fan_in, fan_out, has_bias), t, b in zip(linears(layers), v["weights"], v["biases"]):
            where = _layer(i, fan_in, fan_out)
            n, _, m2, m4 = _moments(t, fan_in, fan_out, where)
            if n >= KURTOSIS_MIN:
                excess = m4 / m2 ** 2 - 3 if m2 > 0 else math.nan
                tol = Z * math.sqrt(24 / n)
                if not (math.isfinite(excess) and abs(excess) <= tol):
                    shape = ("flatter than a normal distribution's (a uniform one has -1.2, a truncated normal "
                             "less than 0)" if excess < 0 else "heavier-tailed than a normal distribution's")
                    message = (f"{where}: the weights' excess kurtosis is {excess:.3g}, {shape}; draw them from a "
                               f"normal distribution (allowed: |kurtosis - 3| <= {tol:.2g})")
                    raise Fail(message if visible else "the weights are not normally distributed",
                               summary=f"the weights are not normally distributed: their kurtosis is {shape}")
            if has_bias:
                bias = _values(b, f"the bias of {where}") if b is not None else None
                require(bias is not None, f"{where} lost its bias")
                require(bool(np.all(bias == 0)), f"{where}: the biases should be exactly 0 (got values up to "
                                                 f"{np.abs(bias).max():.3g})" if visible else "the biases are not all 0")
    return Case("test_init_distribution", name, probe("init_fan_in", "initialise", layers, scheme, seed), check,
                visible)


def in_place_case(layers, scheme, seed=0, dtype="float32", name="", visible=False):
    """The model returned; the same parameter objects, leaves requiring gradients, dtypes kept."""
    def check(r):
        v = _report(r, "returned_model", "names", "same_params", "dtypes", "leaf", "requires_grad")
        require(v["returned_model"] is True, "return the model you were given (the same object)")
        require(v["names"] is True and v["same_params"] is True,
                "initialise the parameters in place (weight.normal_, nn.init.*_, copy_ under torch.no_grad()): an "
                "optimizer built before holds the old nn.Parameter objects, and would never see new ones")
        want = [dtype] * len(v["dtypes"])
        require(v["dtypes"] == want, f"the parameters should stay {dtype}, got {sorted(set(map(str, v['dtypes'])))}: "
                                     f"draw in the weight's own dtype (normal_ in place does)")
        require(all(x is True for x in v["leaf"]), "a parameter has an autograd history: initialise under torch.no_grad()")
        require(all(x is True for x in v["requires_grad"]),
                "a parameter no longer requires gradients: training would never update it")
    return Case("test_init_in_place", name, probe("init_fan_in", "initialise", layers, scheme, seed, dtype), check,
                visible)


def unknown_scheme_case(scheme, name="", visible=False):
    layers = [("linear", 6, 4)]

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "raised" in report,
                f"scheme={scheme!r} must raise ValueError; your function returned")
        require(report.get("value_error") is True, f"scheme={scheme!r} must raise ValueError, not {report.get('raised')}")
    return Case("test_init_in_place", name,
                probe("init_fan_in", "initialise", layers, scheme, 0, "float32", True), check, visible)


# --- expected_initial_loss: checks --------------------------------------------------------------------

def _loss_value(r):
    got = r.value
    require(not isinstance(got, (bool, str, dict, list, tuple)) and got is not None,
            f"return one number, got {kind(got)}")
    return number(got, "expected_initial_loss")


def classification_case(n_classes, y=None, name="", visible=False):
    want = math.log(n_classes)
    args = {"n_classes": n_classes} if y is None else {"y": np.asarray(y), "n_classes": n_classes}

    def check(r):
        got = _loss_value(r)

        def right():
            if not (math.isfinite(got) and abs(got - want) <= LOSS_RTOL * abs(want) + 1e-12):
                raise Fail(f"{n_classes} classes: expected ln {n_classes} = {want:.6g}, got {got:.6g}" if visible
                           else "not the loss of uniform predictions over the classes",
                           summary="not the loss of uniform predictions over the classes")
        present = len(np.unique(y)) if y is not None else n_classes
        diagnose(right, [
            (lambda: abs(got - math.log10(n_classes)) <= 1e-9 * max(1, want),
             "that is log10: cross-entropy uses the natural logarithm"),
            (lambda: abs(got - math.log2(n_classes)) <= 1e-9 * max(1, want),
             "that is log2: PyTorch's cross-entropy uses the natural logarithm"),
            (lambda: n_classes > 1 and abs(got - math.log(n_classes - 1)) <= 1e-9 * want,
             "uniform predictions give every one of the C classes probability 1/C: the loss is ln C"),
            (lambda: present != n_classes and abs(got - math.log(present)) <= 1e-9 * max(1, want),
             "a batch need not hold every class: C is n_classes, the width of the model's output"),
        ])
    return Case("test_initial_loss_classification", name, call("expected_initial_loss", "classification", **args),
                check, visible)


def regression_case(y, name="", visible=False):
    y = np.asarray(y, dtype=np.float64)
    want = float(np.mean(np.var(y, axis=0)))

    def check(r):
        got = _loss_value(r)

        def right():
            if not (math.isfinite(got) and abs(got - want) <= LOSS_RTOL * abs(want)):
                raise Fail(f"expected {want:.8g}, got {got:.8g}" if visible
                           else "not the mean squared error of predicting the targets' mean",
                           summary="not the mean squared error of predicting the targets' mean")
        near = lambda x: abs(got - x) <= 1e-6 * abs(x)
        diagnose(right, [
            (lambda: near(float(np.mean(np.var(y, axis=0, ddof=1)))),
             "that is the sample variance (ddof=1); the mean squared error of predicting the mean divides by n (ddof=0)"),
            (lambda: near(float(np.mean(y ** 2))),
             "that is the mean of y squared, the loss of predicting 0: a well-initialised model predicts the mean"),
            (lambda: near(float(np.mean(np.std(y, axis=0)))) or near(float(np.std(y))),
             "that is a standard deviation; the mean squared error is a variance"),
            (lambda: y.ndim == 2 and y.shape[1] > 1 and near(float(np.var(y))),
             "each output predicts its own column's mean: average the columns' variances, not the variance of all "
             "entries around one mean"),
            (lambda: y.ndim == 2 and near(float(np.mean(np.var(y, axis=1)))),
             "the variance runs over the samples (axis 0), one per output"),
        ])
    return Case("test_initial_loss_regression", name, call("expected_initial_loss", "regression", y), check, visible)


# --- update_to_weight_ratio: checks ------------------------------------------------------------------

def _key(spec) -> str:
    return json.dumps(spec, sort_keys=True)


def _norm(t) -> float:
    return float(torch.linalg.vector_norm(t))


@functools.lru_cache(maxsize=64)
def _trusted(spec_key: str) -> dict:
    """What the trusted side knows of ``spec``: the weights' names, the weights before the step, the
    parameters after one correct step, the ratios, and what known mistakes report."""
    spec = json.loads(spec_key)
    model, _, _ = problem(spec)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    names = [n for n, p in model.named_parameters() if p.ndim >= 2]
    ref = update(update_to_weight_ratio, spec)
    after = ref["params"]
    # the step taken without clearing the stale gradients first
    model, optimizer, loss_fn = problem(spec)
    loss_fn().backward()
    optimizer.step()
    unzeroed = {n: p.detach().clone() for n, p in model.named_parameters()}
    # the fresh gradient
    model, optimizer, loss_fn = problem(spec)
    optimizer.zero_grad()
    loss_fn().backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    lr = float(spec["optimizer"]["lr"])
    delta = {n: _norm(after[n] - before[n]) for n in names}
    return {
        "names": names, "all_names": list(before), "before": before, "after": after, "unzeroed": unzeroed,
        "ratio": ref["returned"],
        "mistakes": {
            "to_after": {n: delta[n] / _norm(after[n]) for n in names},
            "squared": {n: (delta[n] / _norm(before[n])) ** 2 for n in names},
            "lr_grad": {n: lr * _norm(grads[n]) / _norm(before[n]) for n in names},
            "unzeroed": {n: _norm(unzeroed[n] - before[n]) / _norm(before[n]) for n in names},
            "zero": {n: 0.0 for n in names},
        },
    }


RATIO_HINTS = {
    "to_after": "divide by the norm of the weights BEFORE the step (keep a copy), not after",
    "squared": "those are squared norms: take the square roots (torch.linalg.vector_norm, or .norm())",
    "lr_grad": "that is lr * ||grad|| / ||w||, which is the update only for plain SGD: measure the change the step "
               "really made, w_after - w_before (momentum and Adam move the weights by something else)",
    "unzeroed": "the gradients held stale values on entry: clear them (optimizer.zero_grad()) before backward",
    "zero": "the weights did not change between your two measurements: take the step between them, and copy the "
            "weights before it (.detach().clone(); a reference to the parameter changes with it)",
}


def _ratios_match(got: dict, want: dict, names) -> bool:
    try:
        return all(abs(number(got[n]) - want[n]) <= RATIO_RTOL * abs(want[n]) + 1e-15 for n in names)
    except (Fail, KeyError, TypeError, ValueError):
        return False


def ratio_case(spec, name="", visible=False):
    def check(r):
        report = r.value
        require(isinstance(report, dict) and "returned" in report, "the probe reported nothing")
        got = report["returned"]
        t = _trusted(_key(spec))
        names = t["names"]
        require(isinstance(got, dict), f"return a dict of parameter name -> ratio, got {kind(got)}")
        keys = set(map(str, got))
        if keys != set(names):
            extra, missing = sorted(keys - set(names)), sorted(set(names) - keys)
            if any(k in t["all_names"] for k in extra):
                hint = ("only the parameters with two or more dimensions (p.ndim >= 2): not the biases, nor a "
                        "LayerNorm's 1-D weight, whatever its name")
            elif missing and not extra:
                hint = "one entry for every parameter with p.ndim >= 2, under its name in model.named_parameters()"
            else:
                hint = "key the dict by the names model.named_parameters() gives (such as '0.weight')"
            raise Fail(f"the keys should be {names}, got {sorted(keys)}: {hint}" if visible else hint, summary=hint)
        values = {}
        for n in names:
            values[n] = number(got[n], f"the ratio of {n!r}")
        want = t["ratio"]

        def right():
            for n in names:
                if not (math.isfinite(values[n]) and abs(values[n] - want[n]) <= RATIO_RTOL * abs(want[n])):
                    raise Fail(f"{n}: expected ||w_after - w_before|| / ||w_before|| = {want[n]:.8g}, got {values[n]:.8g}"
                               if visible else "a ratio is not ||w_after - w_before|| / ||w_before|| of one step",
                               summary="a ratio is not ||w_after - w_before|| / ||w_before|| of one step")
        stale = bool(spec.get("stale"))
        diagnose(right, [(lambda m=m: (m != "unzeroed" or stale) and _ratios_match(got, t["mistakes"][m], names),
                          RATIO_HINTS[m]) for m in ("zero", "unzeroed", "lr_grad", "squared", "to_after")])
    return Case("test_update_ratio", name, probe("update_to_weight_ratio", "update", spec), check, visible)


def step_case(spec, name="", visible=False):
    def check(r):
        report = r.value
        require(isinstance(report, dict) and "params" in report and "steps" in report, "the probe reported nothing")
        t = _trusted(_key(spec))
        steps = report["steps"]
        require(steps == 1, f"call optimizer.step() exactly once, not {steps} times" if isinstance(steps, int)
                else "call optimizer.step() exactly once")
        params = report["params"]
        require(isinstance(params, dict) and set(map(str, params)) == set(t["all_names"]), "the probe's report is incomplete")

        def same(target):
            try:
                return all(np.allclose(_values(params[n], n), target[n].numpy().ravel(), rtol=PARAM_RTOL,
                                       atol=PARAM_ATOL) for n in target)
            except Fail:
                return False

        if same(t["after"]):
            return
        if spec.get("stale") and same(t["unzeroed"]):
            hint = "the step used the stale gradients the model held on entry: clear them before backward"
        elif same(t["before"]):
            hint = "the parameters did not move: zero the gradients, backward, then optimizer.step()"
        else:
            hint = "the parameters are not those of one step on loss_fn()'s gradient"
        raise Fail(hint, summary=hint)
    return Case("test_update_ratio_step", name, probe("update_to_weight_ratio", "update", spec), check, visible)


# --- the visible cases -----------------------------------------------------------------------------

DEEP = [("linear", 512, 192), ("relu",), ("linear", 192, 160), ("relu",), ("linear", 160, 48)]
NO_BIAS = [("linear", 300, 200, False), ("tanh",), ("linear", 200, 100), ("tanh",), ("linear", 100, 10)]


def _visible_ratio_specs():
    base = {"layers": [("linear", 20, 32), ("relu",), ("linear", 32, 16), ("tanh",), ("linear", 16, 4)],
            "seed": 0, "n": 64, "loss": "mse", "warm": 0, "stale": None}
    norm = {**base, "layers": [("linear", 20, 32), ("layernorm", 32), ("relu",), ("linear", 32, 4)], "loss": "ce"}
    return [
        ("plain SGD, one step from a fresh optimizer", {**base, "optimizer": {"name": "sgd", "lr": 0.1}}),
        ("SGD with momentum 0.9 after 3 warm-up steps: the update is not lr * grad",
         {**base, "warm": 3, "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9}}),
        ("Adam after 2 warm-up steps", {**base, "warm": 2, "optimizer": {"name": "adam", "lr": 1e-3}}),
        ("stale gradients on entry (a loop that never cleared them)",
         {**base, "stale": 5.0, "optimizer": {"name": "sgd", "lr": 0.1}}),
        ("a large learning rate: one step changes the weights by a large fraction",
         {**base, "warm": 1, "optimizer": {"name": "adam", "lr": 0.05}}),
        ("a LayerNorm (its weight is 1-D, not a matrix), cross-entropy, AdamW",
         {**norm, "warm": 2, "optimizer": {"name": "adamw", "lr": 0.01, "weight_decay": 0.1}}),
    ]


def visible():
    for scheme in SCHEMES:
        yield scale_case(DEEP, scheme, seed=0, name=f"{scheme}: a 512-192-160-48 ReLU MLP, every layer's scale",
                         visible=True)
    yield distribution_case(DEEP, "he", seed=1, name="he: normal weights (kurtosis), zero biases", visible=True)
    yield distribution_case(NO_BIAS, "xavier", seed=2, name="xavier: a first layer without a bias (bias=False)",
                            visible=True)
    yield in_place_case(DEEP, "lecun", seed=3, name="the model returned, its parameters initialised in place",
                        visible=True)
    yield in_place_case([("linear", 64, 32), ("tanh",), ("linear", 32, 8)], "xavier", seed=4, dtype="float64",
                        name="a float64 model stays float64", visible=True)
    yield unknown_scheme_case("kaiming", name="an unknown scheme ('kaiming') raises ValueError", visible=True)

    yield classification_case(10, name="10 classes: ln 10", visible=True)
    yield classification_case(2, name="2 classes", visible=True)
    yield classification_case(1000, name="1000 classes (ImageNet)", visible=True)
    yield classification_case(10, y=np.array([0, 3, 1, 1, 2, 0, 3, 2]),
                              name="10 classes, a batch y holding only 4 of them", visible=True)
    yield regression_case(np.array([4.0, 7.5, 5.0, 6.5, 3.0, 8.0, 5.5, 4.5]),
                          name="8 targets around 5.5: the MSE of predicting their mean", visible=True)
    yield regression_case(np.array([[1.0, 100.0, -3.0], [2.0, 104.0, -3.5], [0.5, 98.0, -2.0],
                                    [1.5, 101.0, -2.5], [3.0, 97.0, -4.0], [1.0, 102.0, -3.0]]),
                          name="3 outputs with their own means: one variance per output, averaged", visible=True)
    rng = np.random.default_rng(0)
    yield regression_case(20.0 + 3.0 * rng.standard_normal(1000), name="1000 targets, mean 20, std 3", visible=True)

    for name, spec in _visible_ratio_specs():
        yield ratio_case(spec, name=name, visible=True)
    for name, spec in _visible_ratio_specs()[1:4]:
        yield step_case(spec, name=name, visible=True)
