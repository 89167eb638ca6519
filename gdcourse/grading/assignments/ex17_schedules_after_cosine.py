"""ex17, schedules after cosine: the course's reference, the probes, the case builders and the visible cases.

The reference is the library's (:class:`gdcourse.schedules.WSD`, :class:`gdcourse.optim.ScheduleFreeAdamW`,
:class:`gdcourse.optim.WeightEMA`), behind thin adapters to the exercise's pure-function shape. What is
compared, as the exercise's statement says:

- ``wsd_lr``: the rate at every step of a list of steps (``t = 0``, the end of the warm-up, the
  first step of the cooldown, ``total_steps`` and far beyond), each within ``RTOL`` plus
  ``ATOL_LR * peak_lr`` absolute;
- ``sf_adamw_step``: run by :func:`sf_probe` for many steps (50 to 200) from the state the statement
  fixes, each step handed the state the student's previous step returned; after *every* step the
  state's ``z``, ``x`` and ``v`` within ``RTOL_SF`` plus ``ATOL_SF`` times the largest entry that
  array reaches over the run (``v`` can be of order 1e-12 when gradients are small), ``weight_sum``
  and ``lr_max`` within ``RTOL_SF``, ``t`` exactly, and the point where ``grad_fn`` was called (once
  per step) like ``z``. Gradients are a fixed random sequence (the point is recorded, not used) or
  a noisy quadratic's, taken at the point asked for;
- ``ema_update``: run by :func:`ema_probe` over a sequence of weights that a training loop changes
  *in place* between calls, each call handed the average the previous one returned: every average
  within ``RTOL_EMA`` (plus ``ATOL_EMA`` times the weights' scale), and ``w`` unchanged by every call.

Any order of the float operations passes: over 200 steps, rewritten Schedule-Free steps (``c`` from a
ratio or a recursion, ``x`` as ``x + c (z - x)``, the bias correction moved onto ``lr``) differ from the
library's by up to ~1e-12 relative (measured over 200 draws), far below ``RTOL_SF``.
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, close, diagnose, number, probe, require, resembles
from gdcourse.optim import ScheduleFreeAdamW, WeightEMA
from gdcourse.schedules import WSD

RTOL = 1e-9  # the schedule's rates, stated in the exercise
ATOL_LR = 1e-12  # times peak_lr, for rates near 0 and near min_lr
RTOL_SF = 1e-8  # every Schedule-Free state after every step, stated in the exercise
ATOL_SF = 1e-10  # times the largest entry of that array over the run
RTOL_EMA = 1e-9  # the averages, stated in the exercise
ATOL_EMA = 1e-12  # times the weights' largest entry

SF_DEFAULTS = dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, warmup_steps=0, r=0.0, weight_lr_power=2.0)


# --- the reference: the library's, in the exercise's shape ------------------------------------

def wsd_lr(t, peak_lr, warmup_steps, total_steps, decay_fraction=0.2, min_lr=0.0):
    return WSD(peak_lr, warmup_steps, total_steps, decay_fraction=decay_fraction, min_lr=min_lr, shape="linear")(t)


def sf_init(w):
    """The state before the first step, as the statement fixes it."""
    w = np.array(w, dtype=float)
    return {"t": 0, "z": w.copy(), "x": w.copy(), "v": np.zeros_like(w), "weight_sum": 0.0, "lr_max": 0.0}


def sf_adamw_step(state, grad_fn, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, warmup_steps=0, r=0.0,
                  weight_lr_power=2.0):
    opt = ScheduleFreeAdamW(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                            warmup_steps=warmup_steps, r=r, weight_lr_power=weight_lr_power)
    z, x = np.array(state["z"], dtype=float), np.array(state["x"], dtype=float)
    lib = {"t": int(state["t"]), "z": [z], "x": [x], "v": [np.array(state["v"], dtype=float)],
           "weight_sum": float(state["weight_sum"]), "lr_max": float(state["lr_max"]), "train_mode": True}
    params = [betas[0] * x + (1 - betas[0]) * z]        # the library keeps y in params while training
    g = np.asarray(grad_fn(params[0].copy()), dtype=float)
    opt.step(params, [g], lib)
    return {"t": lib["t"], "z": lib["z"][0], "x": lib["x"][0], "v": lib["v"][0],
            "weight_sum": lib["weight_sum"], "lr_max": lib["lr_max"]}


def ema_update(average, w, decay, n_averaged):
    ema = WeightEMA(decay)
    w = np.asarray(w, dtype=float)
    state = {"n_averaged": int(n_averaged), "average": [np.array(average, dtype=float)]}
    ema.update([w], state)
    return state["average"][0]


REFERENCE = {"wsd_lr": wsd_lr, "sf_adamw_step": sf_adamw_step, "ema_update": ema_update}


# --- probes (they run in the sandbox, and in the self-check) -----------------------------

def schedule_probe(fn, ts, *args, **kwargs):
    """``[fn(t, *args, **kwargs) for t in ts]``, as the function returned them."""
    return [fn(int(t), *args, **kwargs) for t in ts]


def make_gradient(problem: dict):
    """``gradient(k, y)`` of ``problem`` at step ``k``: ``"grads"`` alone is a fixed sequence (``y``
    is ignored); with ``"a"`` and ``"c"`` it is the quadratic's ``a * (y - c)`` plus ``grads[k]``
    (noise, or zeros)."""
    grads = np.array(problem["grads"], dtype=float)
    if "a" not in problem:
        return lambda k, y: grads[k].copy()
    a, c = np.array(problem["a"], dtype=float), np.array(problem["c"], dtype=float)
    return lambda k, y: a * (np.asarray(y, dtype=float) - c) + grads[k]


def sf_run(step, w0, problem, lrs, kwargs):
    """Every state ``step`` returns over ``len(lrs)`` steps from :func:`sf_init` (each handed the
    previous one's state), with the points ``grad_fn`` was called at: a list of dicts of data."""
    gradient = make_gradient(problem)
    state = sf_init(w0)
    trajectory = []
    for k, lr in enumerate(lrs):
        points = []

        def grad_fn(y, k=k, points=points):
            y = np.array(y, dtype=float)
            points.append(y.copy())
            return gradient(k, y)
        state = step(state, grad_fn, float(lr), **kwargs)
        trajectory.append({"t": state["t"], "z": np.array(state["z"], dtype=float),
                           "x": np.array(state["x"], dtype=float), "v": np.array(state["v"], dtype=float),
                           "weight_sum": float(state["weight_sum"]), "lr_max": float(state["lr_max"]),
                           "points": points})
    return trajectory


def sf_probe(fn, w0, problem, lrs, kwargs):
    """Run the student's ``sf_adamw_step`` as :func:`sf_run` does; report the trajectory packed into
    one array per key (steps first), as :func:`unpack` reads it (a few arrays cross the wall faster
    than thousands)."""
    with np.errstate(all="ignore"):
        run = sf_run(fn, w0, problem, lrs, kwargs)
    nan = np.full(len(w0), np.nan)
    return {"t": [s["t"] for s in run], "n_points": [len(s["points"]) for s in run],
            "points": np.array([s["points"][0] if s["points"] else nan for s in run], dtype=float),
            **{key: np.array([s[key] for s in run], dtype=float) for key in ("z", "x", "v", "weight_sum", "lr_max")}}


def unpack(report) -> list:
    """The list of per-step states :func:`sf_run` gives, from what :func:`sf_probe` reported."""
    require(isinstance(report, dict) and "n_points" in report, "sf_adamw_step did not run")
    n = len(report["t"])
    z, x, v, points = (as_array(report[key], key) for key in ("z", "x", "v", "points"))
    ws, lm = as_array(report["weight_sum"], "weight_sum"), as_array(report["lr_max"], "lr_max")
    return [{"t": report["t"][k], "z": z[k], "x": x[k], "v": v[k], "weight_sum": ws[k], "lr_max": lm[k],
             "points": [points[k]] * int(report["n_points"][k])} for k in range(n)]


def ema_run(update, w0, deltas, decay):
    """Call ``update(average, w, decay, n)`` for ``n = 0, 1, ...``, each handed the average the
    previous call returned (a zero array first); between calls the weights change *in place*,
    ``w -= delta``, as a training loop's step does. Reports a copy of every average and whether each
    call left ``w`` as it was."""
    w = np.array(w0, dtype=float)
    average = np.zeros_like(w)
    averages, kept = [], []
    for n, delta in enumerate(np.array(deltas, dtype=float)):
        before = w.copy()
        average = update(average, w, decay, n)
        averages.append(np.array(average, dtype=float))
        kept.append(bool(np.array_equal(w, before)))
        w -= delta
    return {"averages": averages, "w_kept": kept}


def ema_probe(fn, w0, deltas, decay):
    with np.errstate(all="ignore"):
        return ema_run(fn, w0, deltas, decay)


# --- checks -------------------------------------------------------------------------------

def wsd_case(ts, peak_lr, warmup_steps, total_steps, decay_fraction=None, min_lr=None, name="", visible=False):
    """The rates ``wsd_lr(t, ...)`` for every ``t`` in ``ts`` (None: the argument left at its default)."""
    ts = [int(t) for t in ts]
    kwargs = {}
    if decay_fraction is not None:
        kwargs["decay_fraction"] = decay_fraction
    if min_lr is not None:
        kwargs["min_lr"] = min_lr
    frac, floor = kwargs.get("decay_fraction", 0.2), kwargs.get("min_lr", 0.0)
    n_decay = max(1, round(frac * total_steps))
    start = total_steps - n_decay
    t = np.array(ts, dtype=float)

    def rule(warm=None, begin=start, length=n_decay, end=floor, cap=True, shift=0):
        w = max(warmup_steps, 1)
        warm = peak_lr * t / w if warm is None else warm
        with np.errstate(all="ignore"):
            p = (t - begin + shift) / length
            p = np.minimum(p, 1.0) if cap else p
            decay = end + (peak_lr - end) * (1 - p)
        return np.where(t < warmup_steps, warm, np.where(t < begin, peak_lr, decay))

    def check(r):
        require(isinstance(r.value, (list, tuple)) and len(r.value) == len(ts), "wsd_lr should give one rate per step")
        got = as_array(r.value, "wsd_lr")
        want = np.array([wsd_lr(s, peak_lr, warmup_steps, total_steps, **kwargs) for s in ts])
        w = max(warmup_steps, 1)
        truncated = int(frac * total_steps)
        hints = [
            (lambda: resembles(got, rule(warm=peak_lr * (t + 1) / w)),
             "the warm-up counts from 0: the rate at t = 0 is 0, peak_lr * t / warmup_steps"),
            (lambda: resembles(got, rule(warm=floor + (peak_lr - floor) * t / w)),
             "the warm-up starts at 0, not at min_lr"),
            (lambda: resembles(got, rule(end=0.0)), "the cooldown ends at min_lr, not at 0"),
            (lambda: resembles(got, rule(cap=False)), "past total_steps the rate stays at min_lr"),
            (lambda: resembles(got, rule(shift=1)),
             "the cooldown's first step (t = total_steps - decay_steps) still has the rate peak_lr: "
             "progress = (t - decay_start) / decay_steps"),
            (lambda: resembles(got, rule(begin=n_decay)),
             "the cooldown is the *last* decay_steps steps: it starts at total_steps - decay_steps"),
            (lambda: truncated != n_decay and resembles(got, rule(begin=total_steps - max(1, truncated),
                                                                  length=max(1, truncated))),
             "decay_steps rounds decay_fraction * total_steps to the nearest integer (int() truncates)"),
        ]
        where = [("the warm-up (t < warmup_steps)", t < warmup_steps),
                 ("the stable phase", (t >= warmup_steps) & (t < start)),
                 ("the cooldown (decay_start <= t <= total_steps)", (t >= start) & (t <= total_steps)),
                 ("past total_steps", t > total_steps)]
        for part, mask in where:
            if mask.any():
                diagnose(lambda: close(got[mask], want[mask], rtol=RTOL, atol=ATOL_LR * peak_lr,
                                       what=f"wsd_lr in {part}"), hints)
    return Case("test_wsd", name,
                probe("wsd_lr", "schedule_probe", ts, peak_lr, warmup_steps, total_steps, **kwargs), check, visible)


def _sf_hints(got_first, w0, problem, lrs, kw):
    """(matches, hint) pairs: a known mistake's first recorded state resembles the student's."""
    def variant(**change):
        return lambda: _resembles_state(got_first, _first_state_of_mistake(w0, problem, lrs, kw, **change))
    return [
        (variant(point="z"), "the gradient is taken at y = beta1 * x + (1 - beta1) * z, not at z"),
        (variant(point="x"), "the gradient is taken at y = beta1 * x + (1 - beta1) * z, not at x"),
        (variant(point="swapped"), "y = beta1 * x + (1 - beta1) * z: beta1 weighs x, the average"),
        (variant(bias=False), "v is bias-corrected: divide it by 1 - beta2 ** (t + 1) inside the square root"),
        (variant(uniform=True),
         "the average's weight is c = w_t / (w_0 + ... + w_t) with w_t = (t + 1) ** r * lr_max ** weight_lr_power, "
         "not 1 / (t + 1): steps taken at a small (warm-up) rate count less"),
        (variant(old_z=True), "x averages the *new* z: update z first, then x = (1 - c) x + c z"),
        (variant(decay_at="z"), "weight decay is lr * weight_decay * y (the point the gradient saw), not at z"),
        (variant(decay_at="x"), "weight decay is lr * weight_decay * y (the point the gradient saw), not at x"),
        (variant(current_lr=True), "the weight uses lr_max, the largest rate so far, not this step's rate"),
    ]


def _mistake_step(state, grad_fn, lr, betas, eps, weight_decay, warmup_steps, r, weight_lr_power, *,
                  point="y", bias=True, uniform=False, old_z=False, decay_at="y", current_lr=False):
    """One Schedule-Free AdamW step written out, with a known mistake switched on (diagnosis only)."""
    b1, b2 = betas
    k = state["t"]
    z, x, v = state["z"], state["x"], state["v"]
    lr = lr * (min(1.0, (k + 1) / warmup_steps) if warmup_steps else 1.0)
    y = {"y": b1 * x + (1 - b1) * z, "z": z, "x": x, "swapped": b1 * z + (1 - b1) * x}[point]
    g = grad_fn(y)
    lr_max = max(state["lr_max"], lr)
    weight = 1.0 if uniform else (k + 1) ** r * (lr if current_lr else lr_max) ** weight_lr_power
    weight_sum = state["weight_sum"] + weight
    c = weight / weight_sum
    v = b2 * v + (1 - b2) * g * g
    v_hat = v / (1 - b2 ** (k + 1)) if bias else v
    at = {"y": y, "z": z, "x": x}[decay_at]
    z_new = z - lr * weight_decay * at - lr * g / (np.sqrt(v_hat) + eps)
    x = (1 - c) * x + c * (z if old_z else z_new)
    return {"t": k + 1, "z": z_new, "x": x, "v": v, "weight_sum": weight_sum, "lr_max": lr_max}


def _first_state_of_mistake(w0, problem, lrs, kw, **change):
    """The trajectory of the mistake, up to the first step the check found wrong (diagnosis only)."""
    full = {**SF_DEFAULTS, **kw}
    with np.errstate(all="ignore"):
        return sf_run(lambda s, f, lr, **k: _mistake_step(s, f, lr, **k, **change), w0, problem, lrs, full)


def _resembles_state(got, want):
    return len(got) == len(want) and all(
        resembles(g[key], w[key], rtol=1e-6, atol=1e-12) for g, w in zip(got, want) for key in ("z", "x", "v")) and all(
        len(g["points"]) == 1 and resembles(g["points"][0], w["points"][0], rtol=1e-6, atol=1e-12)
        for g, w in zip(got, want))


def sf_case(w0, problem, lrs, kwargs=None, name="", visible=False, test="test_sf_random"):
    """``len(lrs)`` steps of ``sf_adamw_step(state, grad_fn, lrs[k], **kwargs)`` from :func:`sf_init` (``w0``)."""
    w0 = np.array(w0, dtype=float).ravel()
    lrs = np.array(lrs, dtype=float).ravel()          # arrays cross the wall as one item, lists as many
    kwargs = dict(kwargs or {})

    def check(r):
        got = unpack(r.value)
        require(len(got) == len(lrs), "sf_adamw_step did not run every step")
        want = sf_run(sf_adamw_step, w0, problem, lrs, kwargs)
        scale = {key: max(1e-300, max(float(np.max(np.abs(s[key]))) for s in want)) for key in ("z", "x", "v")}
        for k, (g, w) in enumerate(zip(got, want)):
            require(isinstance(g, dict), "sf_adamw_step should return the state, a dict")
            step = f"step {k} (t = {k} -> {k + 1})"
            require(len(g["points"]) == 1, f"grad_fn should be called exactly once per step (at y); "
                                           f"it was called {len(g['points'])} time(s) at {step}")
            n = number(g["t"], "the state's t")
            require(n == k + 1, f"the state's t should count the steps taken: {k + 1} after {step}, got {n:g}")
            hints = _sf_hints(got[:k + 1], w0, problem, lrs[:k + 1], kwargs)
            diagnose(lambda: close(g["points"][0], w["points"][0], rtol=RTOL_SF, atol=ATOL_SF * scale["z"],
                                   what=f"the point grad_fn was called at, at {step}"), hints)
            for key in ("z", "v", "x"):
                diagnose(lambda: close(g[key], w[key], rtol=RTOL_SF, atol=ATOL_SF * scale[key],
                                       what=f"the state's {key} after {step}"), hints)
            for key in ("lr_max", "weight_sum"):
                diagnose(lambda: close(number(g[key], key), w[key], rtol=RTOL_SF,
                                       what=f"the state's {key} after {step}"), hints)
    return Case(test, name, probe("sf_adamw_step", "sf_probe", w0, problem, lrs, kwargs), check, visible)


def sf_problem(grads, a=None, c=None) -> dict:
    """A gradient problem for :func:`make_gradient`, as data (float arrays)."""
    grads = np.array(grads, dtype=float)
    problem = {"grads": grads.reshape(len(grads), -1)}
    if a is not None:
        problem.update(a=np.array(a, dtype=float).ravel(), c=np.array(c, dtype=float).ravel())
    return problem


def ema_case(w0, deltas, decay, name="", visible=False):
    w0 = np.array(w0, dtype=float).ravel()
    deltas = np.array(deltas, dtype=float).reshape(len(deltas), -1)

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "averages" in report, "ema_update did not run")
        got, kept = report["averages"], report["w_kept"]
        require(len(got) == len(deltas), "ema_update did not run every step")
        want = ema_run(ema_update, w0, deltas, decay)["averages"]
        scale = max(1.0, float(np.max(np.abs(want))))
        ws = w0 - np.concatenate([np.zeros((1, len(w0))), np.cumsum(deltas, axis=0)])[:len(deltas)]
        for n, (g, w) in enumerate(zip(got, want)):
            require(kept[n], f"ema_update modified w (call n_averaged = {n}): the weights are the model's, "
                             "only the average may change")
            hints = [
                (lambda: n == 1 and resembles(g, ws[1]),
                 "n_averaged counts the updates already folded in: copy only when it is 0"),
                (lambda: resembles(g, ws[n]),
                 "the average follows the weights themselves: at n_averaged = 0 return a *copy* of w (returning "
                 "w itself makes the average the same array as the weights, which the training step then changes)"),
                (lambda: n == 0 and resembles(g, (1 - decay) * ws[0]),
                 "the first update (n_averaged = 0) copies w: the average does not start from zeros"),
                (lambda: n > 0 and resembles(g, (1 - decay) * as_array(got[n - 1]) + decay * ws[n]),
                 "decay weighs the old average: average = decay * average + (1 - decay) * w"),
                (lambda: n > 0 and resembles(g * (1 - decay ** (n + 1)),
                                             decay * as_array(got[n - 1]) + (1 - decay) * ws[n]),
                 "no bias correction: the first update copies w, so the average is never biased towards 0"),
            ]
            diagnose(lambda: close(g, w, rtol=RTOL_EMA, atol=ATOL_EMA * scale,
                                   what=f"the average returned at n_averaged = {n}"), hints)
    return Case("test_ema", name, probe("ema_update", "ema_probe", w0, deltas, decay), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield wsd_case(range(60), 0.1, 10, 50, name="peak 0.1, 10 warm-up steps, 50 in all, the default 20 % cooldown: "
                   "t = 0 to 59 (0 at t = 0, 0.1 from t = 10 to 40, 0 from t = 50 on)", visible=True)
    yield wsd_case(range(0, 36), 1.0, 4, 30, decay_fraction=0.3, min_lr=0.05,
                   name="min_lr = 0.05 and a 30 % cooldown (9 steps, from t = 21)", visible=True)
    yield wsd_case(list(range(0, 10)) + [100], 2.0, 0, 9, decay_fraction=0.3,
                   name="no warm-up, 9 steps, decay_fraction 0.3 (round(2.7) = 3 cooldown steps, from t = 6)",
                   visible=True)
    rng = np.random.default_rng(17)
    yield sf_case(rng.standard_normal(3), sf_problem(rng.standard_normal((60, 3))), [0.01] * 60,
                  name="60 steps on a fixed random gradient sequence, lr 0.01, the defaults", visible=True)
    yield sf_case(rng.standard_normal(4), sf_problem(0.1 * rng.standard_normal((80, 4))), [0.05] * 80,
                  dict(betas=(0.8, 0.99), warmup_steps=10, weight_decay=0.1),
                  name="80 steps: 10 warm-up steps, betas (0.8, 0.99), weight decay 0.1", visible=True)
    yield sf_case(np.ones(2), sf_problem(np.zeros((100, 2)), a=[1.0, 10.0], c=[0.5, -0.3]), [0.02] * 100,
                  dict(warmup_steps=20), test="test_sf_quadratic",
                  name="100 steps on the quadratic 0.5 * (w0 - 0.5)^2 + 5 * (w1 + 0.3)^2, 20 warm-up steps",
                  visible=True)
    yield sf_case(rng.standard_normal(3), sf_problem(0.01 * rng.standard_normal((60, 3)), a=[1.0, 2.0, 4.0],
                                                      c=[0.0, 1.0, -1.0]),
                  list(np.linspace(0.05, 0.005, 60)), dict(weight_decay=0.05), test="test_sf_quadratic",
                  name="60 steps on a noisy quadratic with a falling lr (lr_max stays at the first one)", visible=True)
    yield ema_case(np.array([1.0, -2.0, 0.5]), [[0.1, -0.2, 0.05]] * 12, 0.9,
                   name="decay 0.9, 12 updates, the weights changed in place between them", visible=True)
