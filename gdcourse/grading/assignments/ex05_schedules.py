"""ex05, schedules and the learning-rate range test: the course's reference, probes, case builders, visible cases.

What is compared, as the exercise's statement says:

- ``warmup_cosine`` and ``cosine_warmup``: the rate at every step of a list of steps (``t = 0``,
  ``t = warmup_steps``, ``t = total_steps`` and far beyond included), each within a relative
  tolerance of ``RTOL`` plus ``ATOL_LR * peak_lr`` absolute (a rate near 0, or near ``min_lr``
  at the end of the cosine, is a difference of two numbers of order ``peak_lr``);
- ``lr_range_test``: handed a ``loss_and_grad`` built from data (:func:`make_loss`: a separable
  quadratic, optionally undefined, NaN or inf, outside a domain); the number of recorded steps
  exactly, the rates within ``RTOL`` and the losses within ``LOSS_RTOL`` (NaN must be NaN, inf
  must be inf), and ``w0`` as it was;
- ``suggest_lr``: within ``RTOL``; the inputs as they were.

Any order of the float operations passes. Rates computed another way (``np.geomspace``, a
running product, ``exp`` of a ``linspace``) differ from the formula's in their last digits
(up to ~2e-14 seen), and a run carries that into its losses (up to ~3e-10 seen over 400 draws):
hence ``LOSS_RTOL``. The quadratics are separable (no rotation), so rounding is never amplified
into another run: the number of recorded steps is compared exactly.
"""

from __future__ import annotations

import math

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, close, diagnose, number, probe, require, resembles, \
    unchanged

RTOL = 1e-9  # stated in the exercise
LOSS_RTOL = 1e-6  # the range test's losses, stated in the exercise
ATOL_LR = 1e-12  # times peak_lr, for the schedules' rates near 0 and near min_lr


# --- the reference ----------------------------------------------------------------------

def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):
    if t < warmup_steps:
        return peak_lr * t / warmup_steps
    progress = min(1.0, (t - warmup_steps) / (total_steps - warmup_steps))
    return min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))


def cosine_warmup(t, peak_lr, warmup_steps):
    if t >= warmup_steps:
        return peak_lr
    return peak_lr * 0.5 * (1 - math.cos(math.pi * t / warmup_steps))


def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):
    w = np.array(w0, dtype=float)
    lrs, losses = [], []
    for i in range(steps):
        lr = lr_min * (lr_max / lr_min) ** (i / (steps - 1))
        loss, grad = loss_and_grad(w)
        lrs.append(lr)
        losses.append(loss)
        if not np.isfinite(loss) or loss > 4 * min(losses):
            break
        w = w - lr * grad
    return np.array(lrs), np.array(losses)


def suggest_lr(lrs, losses):
    losses = np.asarray(losses, dtype=float)
    i = int(np.argmin(np.where(np.isfinite(losses), losses, np.inf)))
    return float(np.asarray(lrs, dtype=float)[i] / 10)


REFERENCE = {"warmup_cosine": warmup_cosine, "cosine_warmup": cosine_warmup,
             "lr_range_test": lr_range_test, "suggest_lr": suggest_lr}


# --- probes (they run in the sandbox, and in the self-check) -----------------------------

def schedule_probe(fn, ts, *args, **kwargs):
    """``[fn(t, *args, **kwargs) for t in ts]``, as the function returned them."""
    return [fn(int(t), *args, **kwargs) for t in ts]


def make_loss(problem: dict):
    """``loss_and_grad(w) -> (loss, grad)`` of ``problem`` (the loss a ``np.float64``): ``0.5 * sum(a * (w - c) ** 2)`` and its
    gradient ``a * (w - c)``; with ``"floor"``, the loss is ``"bad"`` (``"nan"`` or ``"inf"``, the
    gradient too) wherever some ``w_j <= floor``: a loss undefined outside its domain (a log of a
    negative number) or overflowing there."""
    a, c = np.array(problem["a"], dtype=float), np.array(problem["c"], dtype=float)
    floor = problem.get("floor")
    bad = {"nan": np.nan, "inf": np.inf}[problem.get("bad", "nan")]

    def loss_and_grad(w):
        w = np.asarray(w, dtype=float)
        d = w - c
        if floor is not None and not np.all(w > floor):
            return np.float64(bad), np.full(d.shape, bad)
        return np.float64(0.5 * np.sum(a * d * d)), a * d  # a float that also has .item()
    return loss_and_grad


def range_test_probe(fn, problem, w0, lr_min, lr_max, steps):
    """Run ``fn(loss_and_grad, w0, lr_min, lr_max, steps)`` on the loss of ``problem``; report what
    it returned and ``w0`` after the call."""
    w0 = np.array(w0, dtype=float)
    with np.errstate(all="ignore"):
        result = fn(make_loss(problem), w0, lr_min, lr_max, steps)
    return {"result": result, "w0_after": w0}


# --- checks -------------------------------------------------------------------------------

def _rates(value, n, what):
    require(isinstance(value, (list, tuple)) and len(value) == n, f"{what} should give one rate per step")
    return as_array(value, what)


def warmup_cosine_case(ts, peak_lr, warmup_steps, total_steps, min_lr=None, name="", visible=False):
    """The rates ``warmup_cosine(t, ...)`` for every ``t`` in ``ts`` (``min_lr`` None: left at its default)."""
    ts = [int(t) for t in ts]
    args = (peak_lr, warmup_steps, total_steps) + (() if min_lr is None else (min_lr,))
    floor = 0.0 if min_lr is None else min_lr
    t = np.array(ts)

    def rule(warm, decay, cap=True):
        with np.errstate(all="ignore"):
            progress = (t - warmup_steps) / (total_steps - warmup_steps)
            progress = np.minimum(progress, 1.0) if cap else progress
            return np.where(t < warmup_steps, warm, decay(progress))

    def check(r):
        got = _rates(r.value, len(ts), "warmup_cosine")
        want = np.array([warmup_cosine(s, *args) for s in ts])
        cosine = lambda lo, hi: (lambda p: lo + (hi - lo) * 0.5 * (1 + np.cos(np.pi * p)))
        w = max(warmup_steps, 1)
        hints = [
            (lambda: resembles(got, rule(peak_lr * (t + 1) / w, cosine(floor, peak_lr))),
             "the warm-up counts from 1: t = 0 is the first update, and its rate is peak_lr * 0 / warmup_steps = 0"),
            (lambda: resembles(got, rule(floor + (peak_lr - floor) * t / w, cosine(floor, peak_lr))),
             "the warm-up starts at 0, not at min_lr: peak_lr * t / warmup_steps"),
            (lambda: resembles(got, rule(peak_lr * t / w, lambda p: cosine(floor, peak_lr)(
                np.minimum(1.0, t / total_steps)))),
             "the cosine's progress counts from the end of the warm-up: (t - warmup_steps) / (total_steps - warmup_steps)"),
            (lambda: resembles(got, rule(peak_lr * t / w, cosine(0.0, peak_lr))),
             "the cosine ends at min_lr: min_lr + (peak_lr - min_lr) * (1 + cos(pi * progress)) / 2"),
            (lambda: resembles(got, rule(peak_lr * t / w, cosine(floor, peak_lr), cap=False)),
             "past total_steps the rate stays at min_lr: cap the progress at 1"),
        ]
        where = [("the warm-up (t < warmup_steps)", t < warmup_steps),
                 ("the cosine (warmup_steps <= t <= total_steps)", (t >= warmup_steps) & (t <= total_steps)),
                 ("past total_steps", t > total_steps)]
        for part, mask in where:
            if mask.any():
                diagnose(lambda: close(got[mask], want[mask], rtol=RTOL, atol=ATOL_LR * peak_lr,
                                       what=f"warmup_cosine in {part}"), hints)
    return Case("test_warmup_cosine", name, probe("warmup_cosine", "schedule_probe", ts, *args), check, visible)


def cosine_warmup_case(ts, peak_lr, warmup_steps, name="", visible=False):
    ts = [int(t) for t in ts]
    t = np.array(ts, dtype=float)

    def check(r):
        got = _rates(r.value, len(ts), "cosine_warmup")
        want = np.array([cosine_warmup(s, peak_lr, warmup_steps) for s in ts])
        w = max(warmup_steps, 1)
        x = np.minimum(t / w, 1.0)
        hints = [
            (lambda: resembles(got, np.where(t < warmup_steps, peak_lr * 0.5 * (1 + np.cos(np.pi * x)), peak_lr)),
             "that is a cosine *decay* (1 + cos): a warm-up starts at 0, peak_lr * (1 - cos(pi t / warmup_steps)) / 2"),
            (lambda: resembles(got, peak_lr * np.sin(0.5 * np.pi * x)),
             "that is a quarter sine (not flat at the start): use peak_lr * (1 - cos(pi t / warmup_steps)) / 2"),
            (lambda: resembles(got, peak_lr * 0.5 * (1 - np.cos(np.pi * t / w))),
             "from t = warmup_steps on the rate stays at peak_lr"),
        ]
        for part, mask in (("the warm-up (t < warmup_steps)", t < warmup_steps),
                           ("t >= warmup_steps", t >= warmup_steps)):
            if mask.any():
                diagnose(lambda: close(got[mask], want[mask], rtol=RTOL, atol=ATOL_LR * peak_lr,
                                       what=f"cosine_warmup in {part}"), hints)
    return Case("test_cosine_warmup", name, probe("cosine_warmup", "schedule_probe", ts, peak_lr, warmup_steps),
                check, visible)


def quadratic(a, c=None, floor=None, bad="nan") -> dict:
    """A problem for :func:`make_loss`, as data."""
    a = [float(x) for x in np.ravel(a)]
    problem = {"a": a, "c": [0.0] * len(a) if c is None else [float(x) for x in np.ravel(c)]}
    if floor is not None:
        problem.update(floor=float(floor), bad=bad)
    return problem


def range_test_case(problem, w0, lr_min, lr_max, steps, name="", visible=False):
    w0 = np.array(w0, dtype=float)

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "result" in report, "lr_range_test did not run")
        result = report["result"]
        require(isinstance(result, (tuple, list)) and len(result) == 2, "lr_range_test should return (lrs, losses)")
        lrs, losses = as_array(result[0], "lrs"), as_array(result[1], "losses")
        require(lrs.ndim == 1 and losses.ndim == 1 and len(lrs) == len(losses),
                "lrs and losses should be 1-D arrays of the same length, one entry per recorded step")
        want_lrs, want_losses = lr_range_test(make_loss(problem), w0, lr_min, lr_max, steps)
        n, m = len(lrs), len(want_lrs)
        k = min(n, m)
        i = np.arange(steps)
        diagnose(lambda: close(lrs[:k], want_lrs[:k], rtol=RTOL, what="the rates lrs"),
                 [(lambda: resembles(lrs[:k], np.linspace(lr_min, lr_max, steps)[:k]),
                   "the rates are spaced linearly: they grow geometrically, lr_min * (lr_max / lr_min) ** (i / (steps - 1))"),
                  (lambda: resembles(lrs[:k], (lr_min * (lr_max / lr_min) ** (i / steps))[:k]),
                   "the last rate is lr_max: the exponent is i / (steps - 1)"),
                  (lambda: resembles(lrs[:k], (lr_min * (lr_max / lr_min) ** ((i + 1) / (steps - 1)))[:k]),
                   "the first rate is lr_min: step i = 0 has the exponent 0")])
        bad_end = m > 0 and not np.isfinite(want_losses[-1])
        if n != m:
            if n == m - 1:
                hint = "the loss that triggers the stop is recorded too: record the rate and the loss, then stop"
            elif n > m and bad_end:
                hint = "the run does not stop when the loss becomes NaN or inf"
            elif n > m:
                hint = "the run does not stop when the loss exceeds 4 times the lowest loss recorded so far"
            else:
                hint = "the run stops too early: stop only on a non-finite loss or one above 4 times the lowest so far"
            raise Fail(f"{n} step(s) recorded, expected {m}: {hint}", summary=hint)
        diagnose(lambda: close(losses, want_losses, rtol=LOSS_RTOL, what="the losses"),
                 [(lambda: resembles(losses[:-1], want_losses[1:]),
                   "losses[i] is the loss at the point where step i starts, before its update"),
                  (lambda: bad_end and np.isfinite(losses[-1]),
                   "the last entry is the loss that stopped the run: record a NaN or inf loss as it is")])
        after = report.get("w0_after")
        same = isinstance(after, np.ndarray) and after.shape == w0.shape and np.array_equal(after, w0)
        require(same, "w0 was modified: start from a copy of w0 and build new arrays")
    return Case("test_lr_range_test", name,
                probe("lr_range_test", "range_test_probe", problem, w0, lr_min, lr_max, steps), check, visible)


def suggest_case(lrs, losses, name="", visible=False):
    def check(r):
        L = np.asarray(losses, dtype=float)
        R = np.asarray(lrs, dtype=float)
        want = suggest_lr(lrs, losses)
        got = r.value
        require(np.ndim(got) == 0 or np.size(got) == 1, "suggest_lr should return one number")
        finite = np.where(np.isfinite(L), L, np.inf)
        last = len(L) - 1 - int(np.argmin(finite[::-1]))
        diagnose(lambda: close(number(got, "suggest_lr"), want, rtol=RTOL, what="suggest_lr"),
                 [(lambda: resembles(got, R[int(np.argmin(L))] / 10) and not np.isfinite(L[int(np.argmin(L))]),
                   "a NaN was taken for the lowest loss (np.argmin returns the position of a NaN): ignore NaN and inf"),
                  (lambda: resembles(got, want * 10), "that is the rate at the lowest loss itself: take a tenth of it"),
                  (lambda: resembles(got, R[last] / 10),
                   "on equal lowest losses take the first one (the smallest index)")])
        unchanged(r, 0, lrs, "lrs")
        unchanged(r, 1, losses, "losses")
    return Case("test_suggest_lr", name, call("suggest_lr", lrs, losses), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield warmup_cosine_case(range(60), 0.1, 10, 50, name="peak 0.1, 10 warm-up steps, 50 in all: t = 0 to 59 "
                             "(0 at t = 0, the peak at t = 10, 0 from t = 50 on)", visible=True)
    yield warmup_cosine_case(range(0, 32, 1), 1.0, 4, 24, 0.05,
                             name="min_lr = 0.05: the warm-up from 0, the cosine down to 0.05 and flat after",
                             visible=True)
    yield cosine_warmup_case(range(30), 2.0, 20, name="peak 2, 20 warm-up steps: 0 at t = 0, 1 at t = 10, "
                             "2 from t = 20 on", visible=True)
    yield range_test_case(quadratic([1.0, 4.0]), [1.0, 1.0], 1e-3, 10.0, 60,
                          name="curvatures 1 and 4 (stable below lr = 0.5), 60 steps from 1e-3 to 10: "
                               "it stops once the loss exceeds 4 times the lowest", visible=True)
    yield range_test_case(quadratic([1.0, 4.0], c=[-1.0, 0.5], floor=0.0), [2.0, 2.0], 1e-2, 1.0, 40,
                          name="a loss that is NaN where some w_j <= 0: the NaN is recorded, then it stops",
                          visible=True)
    yield suggest_case(np.array([0.01, 0.1, 1.0, 10.0]), np.array([5.0, 2.0, 1.0, 40.0]),
                       name="the lowest loss is at lr = 1.0, so the suggestion is 0.1", visible=True)
    yield suggest_case(np.array([0.01, 0.1, 1.0, 10.0, 100.0]), np.array([5.0, 2.0, 1.0, 3.0, np.nan]),
                       name="a range test that ended in NaN: the NaN is ignored, the suggestion is 0.1", visible=True)
