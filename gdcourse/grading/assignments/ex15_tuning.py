"""ex15, tuning: the course's reference, the probes, the case builders and the visible cases.

What is compared, as the exercise's statement says:

- ``sample_space``: a dict with one 1-D array of ``n`` floats per name of the space, every value within
  its bounds; the same seed gives the same points, another seed other points; a scale other than
  ``"log"`` and ``"linear"`` raises ``ValueError``. The spread, on the points mapped back to the unit
  cube (``log`` axes through the logarithm): the Kolmogorov-Smirnov distance of every axis from the
  uniform below ``KS_MAX``, and the centred L2 discrepancy (``scipy.stats.qmc.discrepancy``), divided by
  what ``n`` i.i.d. uniform points have on average, ``((5/4)^d - (13/12)^d) / n``, below ``DISC_MAX`` on
  average over ``DISC_SEEDS`` seeds.
- ``compare``: ``diff = mean(b) - mean(a)`` within ``RTOL``; ``low`` and ``high`` each within
  ``WIDTH_TOL`` times the half-width of Welch's t interval of Welch's endpoints; ``decision`` exactly,
  on cases where every interval so close to Welch's decides alike; fewer than two scores raise
  ``ValueError``.
- ``best_under_budget``: ``(trial, epoch, value)`` exactly (the rule of the statement, ties to the
  checkpoint trained first); a budget below one epoch, or no finite checkpoint within it, raises
  ``ValueError``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from scipy.stats import qmc

from gdcourse.grading.cases import Case, Fail, as_array, call, close, diagnose, kind, number, probe, require

RTOL = 1e-9            # diff, and the value of the chosen checkpoint
KS_MAX = 0.2           # Kolmogorov-Smirnov distance of each axis from the uniform, n >= 64
DISC_MAX = 0.4         # mean over the seeds of discrepancy / (i.i.d. expectation)
DISC_SEEDS = 8         # seeds a spread case draws
WIDTH_TOL = 0.3        # |endpoint - Welch's| <= WIDTH_TOL * Welch's half-width
SCALES = ("log", "linear")


# --- the reference ----------------------------------------------------------------------

def sample_space(space, n, seed):
    for name, (scale, low, high) in space.items():
        if scale not in SCALES:
            raise ValueError(f"{name}: unknown scale {scale!r}; expected 'log' or 'linear'")
    u = qmc.Halton(len(space), scramble=True, seed=seed).random(n)
    out = {}
    for j, (name, (scale, low, high)) in enumerate(space.items()):
        if scale == "log":
            out[name] = np.exp(np.log(low) + u[:, j] * (np.log(high) - np.log(low)))
        else:
            out[name] = low + u[:, j] * (high - low)
    return out


def welch(a, b, confidence):
    """(diff, low, high): Welch's t interval of mean(b) - mean(a)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    diff = b.mean() - a.mean()
    half = stats.t.ppf((1 + confidence) / 2, df) * math.sqrt(va + vb)
    return float(diff), float(diff - half), float(diff + half)


def compare(a, b, confidence=0.95):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        raise ValueError("each configuration needs at least two scores")
    diff, low, high = welch(a, b, confidence)
    decision = "b" if high < 0 else "a" if low > 0 else "tie"
    return {"diff": diff, "low": low, "high": high, "decision": decision}


def best_under_budget(curves, cost_per_epoch, budget):
    if budget < cost_per_epoch:
        raise ValueError("the budget does not pay for one epoch")
    spent, best = 0.0, None
    for trial, curve in enumerate(curves):
        for epoch, value in enumerate(curve):
            if spent + cost_per_epoch > budget:
                break
            spent += cost_per_epoch
            if not math.isnan(value) and (best is None or value < best[2]):
                best = (trial, epoch, float(value))
    if best is None:
        raise ValueError("no finite checkpoint within the budget")
    return best


REFERENCE = {"sample_space": sample_space, "compare": compare, "best_under_budget": best_under_budget}


# --- probes (run in the sandbox) ------------------------------------------------------------

def sampled(fn, space, n, seeds):
    """``fn(space, n, seed)`` for each seed of ``seeds``, in order (a seed may repeat)."""
    return [fn(dict(space), int(n), int(s)) for s in seeds]


def attempt(fn, *args):
    """``fn(*args)``: what it returned, or that it raised (and whether a ValueError)."""
    try:
        out = fn(*args)
    except Exception as exc:  # the case says whether raising is right
        return {"raised": type(exc).__name__, "message": str(exc)[:300], "value_error": isinstance(exc, ValueError)}
    return {"returned": out}


# --- checks -------------------------------------------------------------------------------------

def _columns(out, space, n, what="sample_space"):
    """The sample as ``{name: float array of n}``, its form checked."""
    require(isinstance(out, dict), f"{what} should return a dict (one array per name), got {kind(out)}")
    require(set(out) == set(space), f"{what} should return one entry per name of the space {sorted(space)}; "
                                    f"got {sorted(map(str, out))}")
    cols = {}
    for name in space:
        x = as_array(out[name], f"the values of {name!r}")
        require(x.shape == (n,), f"the values of {name!r} should be a 1-D array of n = {n}, got shape {x.shape}")
        require(bool(np.all(np.isfinite(x))), f"the values of {name!r} should be finite numbers")
        cols[name] = x
    return cols


def _in_bounds(cols, space):
    for name, (scale, low, high) in space.items():
        x = cols[name]
        slack = 1e-12 * max(abs(low), abs(high))
        if x.min() >= low - slack and x.max() <= high + slack:
            continue

        def outside(name=name, scale=scale, low=low, high=high, x=x):
            raise Fail(f"{name!r} ({scale}, {low:g} to {high:g}): values from {x.min():.6g} to {x.max():.6g} "
                       "leave the bounds", summary=f"values of {name!r} leave their bounds")
        mixed_bases = lambda: (scale == "log" and x.min() > 0 and np.log10(x).min() >= math.log(low) - 1e-9
                               and np.log10(x).max() <= math.log(high) + 1e-9)
        diagnose(outside, [
            (mixed_bases, "the exponent was drawn in natural logarithms and 10 raised to it (or the other way round): "
                          "use one base throughout"),
            (lambda: x.max() > high + slack, "a value above the upper bound: map u in [0, 1) onto the interval, "
                                             "low + u * (high - low), or the same on the logarithms"),
            (lambda: True, "a value below the lower bound")])


def unit(cols, space):
    """The sample mapped back to the unit cube, one column per name (log axes through the logarithm)."""
    u = []
    for name, (scale, low, high) in space.items():
        x = cols[name]
        if scale == "log":
            u.append((np.log(x) - math.log(low)) / (math.log(high) - math.log(low)))
        else:
            u.append((x - low) / (high - low))
    return np.clip(np.column_stack(u), 0.0, 1.0)


def iid_discrepancy(d, n):
    """The expected centred L2 discrepancy (squared, as scipy reports it) of n i.i.d. uniform points in d dimensions."""
    return ((5 / 4) ** d - (13 / 12) ** d) / n


def _sampled_columns(r, space, n, seeds):
    """The probe's samples, one per seed, as checked columns within the space's bounds."""
    outs = r.value
    require(isinstance(outs, list) and len(outs) == len(seeds), "the probe reported nothing")
    cols = [_columns(out, space, n) for out in outs]
    for c in cols:
        _in_bounds(c, space)
    return cols


def sample_case(space, n, seeds=(3, 3, 4), name="", visible=False):
    """Form, count and bounds for every seed; ``seeds[0] == seeds[1]`` must agree exactly, ``seeds[2]`` must differ."""
    seeds = tuple(int(s) for s in seeds)

    def check(r):
        cols = _sampled_columns(r, space, n, seeds)
        if len(seeds) >= 2 and seeds[0] == seeds[1]:
            same = all(np.array_equal(cols[0][k], cols[1][k]) for k in space)
            require(same, f"two calls with seed {seeds[0]} gave different points: the seed alone must decide them "
                          "(no global random state, no clock)" if visible else
                    "the same seed gave different points: the seed alone must decide them")
        if len(seeds) >= 3 and seeds[2] != seeds[0] and n > 1:
            differ = any(not np.array_equal(cols[0][k], cols[2][k]) for k in space)
            require(differ, f"seeds {seeds[0]} and {seeds[2]} gave the same points: scramble (or shift) the sequence "
                            "with the seed, so that two studies are independent" if visible else
                    "two different seeds gave the same points: scramble (or shift) the sequence with the seed")
    return Case("test_sample_space", name, probe("sample_space", "sampled", space, n, seeds), check, visible)


def scale_error_case(space, name="", visible=False):
    bad = next(k for k, v in space.items() if v[0] not in SCALES)

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "raised" in report,
                f"the scale {space[bad][0]!r} of {bad!r} must raise ValueError; sample_space returned a sample")
        require(report.get("value_error") is True,
                f"the scale {space[bad][0]!r} must raise ValueError, not {report.get('raised')}")
    return Case("test_sample_space", name, probe("sample_space", "attempt", space, 16, 0), check, visible)


def spread_case(space, n, seeds, name="", visible=False):
    """Marginals (KS, on the first seed's points) and discrepancy (mean over the seeds) in the unit cube."""
    seeds = tuple(int(s) for s in seeds)

    def check(r):
        cols = _sampled_columns(r, space, n, seeds)
        u = unit(cols[0], space)
        for j, (axis, (scale, low, high)) in enumerate(space.items()):
            ks = float(stats.kstest(u[:, j], "uniform").statistic)
            if not ks < KS_MAX:
                other = (np.log(np.maximum(cols[0][axis], 1e-300)) - math.log(low)) / (math.log(high) - math.log(low)) \
                    if scale == "linear" and low > 0 else (cols[0][axis] - low) / (high - low)
                swapped = scale == "log" or low > 0
                if swapped and float(stats.kstest(np.clip(other, 0, 1), "uniform").statistic) < KS_MAX:
                    hint = ("uniform on the linear scale, not on the log scale: draw the exponent uniformly, "
                            "low * (high / low) ** u" if scale == "log" else
                            "log-uniform on a 'linear' axis: a linear axis is uniform between its bounds")
                else:
                    hint = f"the values are not {'log-' if scale == 'log' else ''}uniform between the bounds"
                message = (f"{axis!r} ({scale}): Kolmogorov-Smirnov distance {ks:.3f} from the uniform "
                           f"(at most {KS_MAX:g}); {hint}")
                raise Fail(message if visible else f"{axis!r}: {hint}", summary=f"a {scale} axis: {hint}")
        d = len(space)
        ratios = [float(qmc.discrepancy(unit(c, space))) / iid_discrepancy(d, n) for c in cols]
        mean = float(np.mean(ratios))
        if not mean < DISC_MAX:
            units = [unit(c, space) for c in cols]
            repeated = any(np.allclose(uu[:, i], uu[:, j]) for uu in units for i in range(d) for j in range(i))
            hint = ("two axes follow the same sequence (the points lie on a diagonal): draw all the axes from ONE "
                    "d-dimensional sequence" if repeated else
                    "the points are no more even than i.i.d. random ones: draw them from a quasi-random sequence "
                    "(scipy.stats.qmc.Sobol or Halton, scrambled)")
            message = (f"discrepancy {mean:.2f} times that of i.i.d. random points on average over {len(seeds)} seeds "
                       f"(at most {DISC_MAX:g}); {hint}")
            raise Fail(message if visible else hint, summary=hint)
    return Case("test_sample_space_spread", name, probe("sample_space", "sampled", space, n, seeds), check, visible)


def _result(value):
    require(isinstance(value, dict) and {"diff", "low", "high", "decision"} <= set(value),
            f"compare should return a dict with the keys 'diff', 'low', 'high' and 'decision'; got "
            f"{kind(value) if not isinstance(value, dict) else sorted(map(str, value))}")
    return value


def interval_case(a, b, confidence, name="", visible=False):
    a, b = np.asarray(a, float), np.asarray(b, float)

    def check(r):
        got = _result(r.value)
        diff, low, high = welch(a, b, confidence)
        half = high - diff
        scale = max(abs(a).max(), abs(b).max())
        d = number(got["diff"], "diff")
        diagnose(lambda: close(d, diff, rtol=RTOL, atol=1e-12 * scale, what="diff"),
                 [(lambda: abs(d + diff) <= 1e-9 * scale, "diff is mean(a) - mean(b); the task asks for mean(b) - mean(a)")])
        lo, hi = number(got["low"], "low"), number(got["high"], "high")
        require(lo <= hi, f"low ({lo:.6g}) is above high ({hi:.6g})")
        if not (abs(lo - low) <= WIDTH_TOL * half and abs(hi - high) <= WIDTH_TOL * half):
            ratio = (hi - lo) / (high - low)
            if ratio > 1 + WIDTH_TOL:
                hint = ("the interval is much too wide: the standard error of a mean is s / sqrt(n), "
                        "and of the difference sqrt(s_a^2 / n_a + s_b^2 / n_b)")
            elif ratio < 1 - WIDTH_TOL:
                hint = (f"the interval is much too narrow for a {confidence:.0%} interval: a two-sided interval uses "
                        f"the {(1 + confidence) / 2:g} quantile (or the {(1 - confidence) / 2:g} and "
                        f"{(1 + confidence) / 2:g} percentiles)")
            else:
                hint = "the interval is not centred on the difference of the means"
            message = (f"{confidence:.0%} interval: expected about [{low:.6g}, {high:.6g}] (Welch's t; each end within "
                       f"{WIDTH_TOL:g} of its half-width {half:.3g}), got [{lo:.6g}, {hi:.6g}]. {hint}")
            raise Fail(message if visible else hint, summary=hint)
    return Case("test_compare", name, call("compare", a, b, confidence), check, visible)


def decision_case(a, b, confidence, name="", visible=False):
    a, b = np.asarray(a, float), np.asarray(b, float)
    diff, low, high = welch(a, b, confidence)
    want = "b" if high < 0 else "a" if low > 0 else "tie"
    half = high - diff
    if not (abs(diff) >= 2 * half or abs(diff) <= (1 - 2 * WIDTH_TOL) * half):
        raise ValueError(f"an ambiguous decision case: diff {diff:.3g}, half-width {half:.3g}")

    def check(r):
        got = _result(r.value)
        decision = got["decision"]
        require(isinstance(decision, str), f"decision should be the string 'a', 'b' or 'tie', got {kind(decision)}")
        if decision != want:
            if want == "tie":
                hint = ("the interval covers 0, so the scores cannot tell the two apart: the decision is 'tie' "
                        "(the sign of the difference alone decides nothing)")
            elif decision in ("a", "b"):
                hint = ("the wrong configuration: lower scores are better, and diff = mean(b) - mean(a); "
                        "an interval below 0 means b is better")
            else:
                hint = "the interval lies on one side of 0: one configuration is better, 'a' or 'b'"
            fact = f"mean(a) = {a.mean():.6g}, mean(b) = {b.mean():.6g}, Welch's {confidence:.0%} interval [{low:.4g}, {high:.4g}]"
            raise Fail(f"{fact}: expected {want!r}, got {decision!r}. {hint}" if visible else hint, summary=hint)
    return Case("test_compare_decision", name, call("compare", a, b, confidence), check, visible)


def too_few_case(a, b, name="", visible=False):
    a, b = np.asarray(a, float), np.asarray(b, float)

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "raised" in report,
                f"{len(a)} and {len(b)} scores: fewer than two scores must raise ValueError (no spread to estimate); "
                "compare returned a result")
        require(report.get("value_error") is True, f"fewer than two scores must raise ValueError, not {report.get('raised')}")
    return Case("test_compare_decision", name, probe("compare", "attempt", a, b, 0.95), check, visible)


def _best_of(curves, where):
    """(trial, epoch) of the lowest non-NaN value among the checkpoints ``where``, the first of ties; None if none."""
    best = None
    for i, e in where:
        v = curves[i][e]
        if not math.isnan(v) and (best is None or v < curves[best[0]][best[1]]):
            best = (i, e)
    return best


def _integer(x, what):
    v = number(x, what)
    require(float(v).is_integer(), f"{what} should be a whole number (an index), got {v!r}")
    return int(v)


def budget_case(curves, cost, budget, test="test_best_under_budget", name="", visible=False):
    curves = [np.asarray(c, float) for c in curves]

    def check(r):
        got = r.value
        require(isinstance(got, (tuple, list)) and len(got) == 3,
                f"best_under_budget should return a tuple (trial, epoch, value), got {kind(got)}")
        trial, epoch = _integer(got[0], "trial"), _integer(got[1], "epoch")
        value = number(got[2], "value")
        want = best_under_budget(curves, cost, budget)
        if (trial, epoch) != want[:2]:
            k = int(budget // cost)
            flat = [(i, e) for i, c in enumerate(curves) for e in range(len(c))]
            reach = flat[:k]
            last = {}
            for i, e in reach:
                last[i] = e
            hints = [
                (lambda: (trial, epoch) in flat and flat.index((trial, epoch)) >= k,
                 f"that checkpoint is beyond the budget: {budget:g} pays for {k} epoch(s) at {cost:g} each, in the "
                 "order the trials run (an epoch that would take the spending above the budget is not trained)"),
                (lambda: (trial, epoch) in reach and math.isnan(curves[trial][epoch]),
                 "that checkpoint's value is NaN (a diverged run): skip NaN values"),
                (lambda: (trial, epoch) in reach and curves[trial][epoch] == want[2],
                 "a tie: of equal values, return the checkpoint trained first (the lowest trial, then the lowest epoch)"),
                (lambda: k > 1 and _best_of(curves, reach[:k - 1]) == (trial, epoch),
                 "one epoch short: the epoch that brings the spending exactly to the budget is trained too"),
                (lambda: last.get(trial) == epoch and curves[trial][epoch] > want[2],
                 "that is a trial's last trained epoch; the best checkpoint can be any epoch (retrospective selection)"),
                (lambda: (trial, epoch) in reach,
                 "not the best checkpoint within the budget: a trial cut short by the budget still counts, with "
                 "its epochs that were paid for"),
            ]

            def same():
                message = (f"expected trial {want[0]}, epoch {want[1]} (value {want[2]:.6g}), got trial {trial}, epoch {epoch}"
                           if visible else "not the checkpoint the rule chooses")
                raise Fail(message, summary="not the checkpoint the rule chooses")
            diagnose(same, hints)
        close(value, want[2], rtol=RTOL, what="value (the chosen checkpoint's score)")
    return Case(test, name, call("best_under_budget", curves, cost, budget), check, visible)


def budget_error_case(curves, cost, budget, why, name="", visible=False):
    curves = [np.asarray(c, float) for c in curves]

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "raised" in report,
                f"{why}: best_under_budget must raise ValueError, but it returned {report.get('returned')!r:.80}"
                if visible else f"{why}: it must raise ValueError")
        require(report.get("value_error") is True, f"{why}: it must raise ValueError, not {report.get('raised')}")
    return Case("test_best_under_budget_edge", name, probe("best_under_budget", "attempt", curves, cost, budget),
                check, visible)


# --- data for the cases ---------------------------------------------------------------------------

def welch_half(a, b, confidence):
    diff, low, high = welch(a, b, confidence)
    return high - diff


def shifted(a, b, multiple, confidence):
    """``b`` shifted so that mean(b) - mean(a) is ``multiple`` times Welch's half-width (which a shift keeps)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    half = welch_half(a, b, confidence)
    return b - (b.mean() - a.mean()) + multiple * half


# --- the visible cases -----------------------------------------------------------------------------

EXAMPLE = {"lr": ("log", 1e-4, 1e-1), "momentum": ("linear", 0.8, 0.99)}
EXAMPLE_CURVES = [[0.9, 0.5, 0.4], [0.8, 0.3, 0.35], [0.2]]


def visible():
    yield sample_case(EXAMPLE, 10, (0, 0, 1), name="the example space, 10 trials: bounds, and seeds 0, 0 and 1",
                      visible=True)
    yield sample_case({"lr": ("log", 1e-5, 1.0)}, 1, (7, 7, 8), name="one axis, one trial", visible=True)
    yield scale_error_case({"lr": ("log", 1e-4, 1e-1), "width": ("integer", 16, 512)},
                           name="an unknown scale ('integer') raises ValueError", visible=True)
    yield spread_case(EXAMPLE, 64, range(DISC_SEEDS), name="the example space, 64 trials: log-uniform lr, uniform "
                      "momentum, and more even than random points", visible=True)
    yield spread_case({"lr": ("log", 1e-5, 1.0), "wd": ("log", 1e-6, 1e-2), "dropout": ("linear", 0.0, 0.5)}, 128,
                      range(100, 100 + DISC_SEEDS), name="three axes, 128 trials", visible=True)
    rng = np.random.default_rng(15)
    a, b = 0.05 + 0.004 * rng.standard_normal(20), 0.047 + 0.006 * rng.standard_normal(24)
    yield interval_case(a, b, 0.95, name="20 and 24 seeds: the 95 % interval of mean(b) - mean(a)", visible=True)
    yield interval_case(a, b, 0.5, name="the same scores, a 50 % interval", visible=True)
    a, b = 0.06 + 0.008 * rng.standard_normal(20), 0.05 + 0.004 * rng.standard_normal(40)
    yield interval_case(a, b, 0.95, name="20 seeds twice as spread as 40 others: no equal-variance assumption",
                        visible=True)
    a = 0.05 + 0.004 * rng.standard_normal(10)
    b = 0.05 + 0.004 * rng.standard_normal(10)
    yield decision_case(a, shifted(a, b, -3.0, 0.95), 0.95, name="b lower by three half-widths: 'b'", visible=True)
    yield decision_case(a, shifted(a, b, 3.0, 0.95), 0.95, name="b higher by three half-widths: 'a'", visible=True)
    yield decision_case(a, shifted(a, b, 0.2, 0.95), 0.95, name="a difference well inside the interval: 'tie'",
                        visible=True)
    yield too_few_case([0.05], [0.04, 0.045, 0.05], name="one score for a: ValueError", visible=True)
    yield budget_case(EXAMPLE_CURVES, 2.0, 10.0, name="the example, budget 10: five epochs, trial 1 cut after "
                      "two, its epoch 1 is best", visible=True)
    yield budget_case(EXAMPLE_CURVES, 2.0, 20.0, name="the example, budget 20: every epoch, trial 2 wins",
                      visible=True)
    yield budget_case(EXAMPLE_CURVES, 2.0, 5.0, name="the example, budget 5: two epochs (the third would cost 6)",
                      visible=True)
    yield budget_case([[0.5, 0.4, 0.4], [0.4, 0.6]], 1.0, 5.0, name="ties: the checkpoint trained first",
                      visible=True)
    yield budget_case([[0.7, np.nan, np.nan], [0.6, 0.5]], 1.0, 5.0, test="test_best_under_budget_edge",
                      name="a run that diverged (NaN): skipped", visible=True)
    yield budget_error_case(EXAMPLE_CURVES, 2.0, 1.5, "a budget of 1.5 at 2 an epoch", visible=True,
                            name="a budget below one epoch: ValueError")
