"""Hidden cases of ex15: read by the judge only, never copied into the sandbox or the release.

``sample_space``: spaces of one to four axes, log ranges from two to twelve decades, linear ones with
negative bounds, n from 1 to 100, seeds drawn afresh; unknown scales; the spread of 64 and 128 points in
two and three dimensions, over eight seeds. ``compare``: 20 to 40 seeds a side, spreads up to twice
apart, scales from 1e-3 to 10, confidence 0.5 to 0.95 for the interval; decisions with 8 to 30 seeds, the
difference three or two and a half half-widths away from 0 or well inside the interval, confidence up
to 0.99; fewer than two scores. ``best_under_budget``: random curves of different lengths, costs and
budgets exact in binary (so "exactly on the budget" is exact), the best checkpoint in a trial the
budget cuts, exactly on the budget, or just beyond it, ties; NaN anywhere, budgets below one epoch,
no finite checkpoint. The builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex15_tuning`.
"""

import numpy as np

from gdcourse.grading.assignments.ex15_tuning import (
    DISC_SEEDS, budget_case, budget_error_case, decision_case, interval_case, sample_case, scale_error_case,
    shifted, spread_case, too_few_case)

# a course module that would do the exercise's work (none yet; should one appear, it is off limits)
REFERENCES = ("gdcourse.tuning",)

COSTS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def _seed(rng) -> int:
    return int(rng.integers(0, 2**31))


def _log_axis(rng, decades_lo=2, decades_hi=6):
    lo = float(10.0 ** rng.integers(-10, -1))
    return ("log", lo, float(lo * 10.0 ** rng.integers(decades_lo, decades_hi + 1)))


def _curves(rng, trials, lengths=(1, 10)):
    """Validation curves: a fall, then noise and drift upwards (some trials only one epoch long)."""
    out = []
    for _ in range(trials):
        n = int(rng.integers(lengths[0], lengths[1] + 1))
        t = np.arange(n)
        floor = rng.uniform(0.05, 0.5)
        curve = floor + rng.uniform(0.2, 1.0) * np.exp(-t / rng.uniform(0.5, 3)) + rng.uniform(0, 0.02) * t \
            + 0.01 * rng.standard_normal(n)
        out.append(np.round(curve, 6))
    return out


def cases(rng):
    # --- sample_space: form, bounds, seeds -----------------------------------------------------------
    spaces = [
        {"lr": _log_axis(rng, 2, 12)},
        {"lr": _log_axis(rng), "momentum": ("linear", 0.8, 0.99), "wd": _log_axis(rng), "shift": ("linear", -3.0, -1.0)},
        {"eps": ("log", 1e-10, 1e-6), "beta": ("linear", 0.0, 1.0)},
        {"warmup": ("linear", 10.0, 1000.0), "lr": ("log", 1.0, 1e6), "b2": ("log", 1e-4, 1e-1)},
    ]
    for space, n in zip(spaces, rng.permutation([1, 2, 7, 33, 100])[:4]):
        s, t = _seed(rng), _seed(rng)
        yield sample_case(space, int(n), (s, s, t), name=f"{len(space)} axis(es), {int(n)} trial(s): bounds, the "
                                                         "same seed twice, another seed")
    for scale in rng.choice(["log10", "uniform", "LOG", "logarithmic"], size=2, replace=False):
        yield scale_error_case({"lr": ("log", 1e-4, 1.0), "x": (str(scale), 1.0, 2.0)},
                               name="an unknown scale raises ValueError")

    # --- sample_space: the spread -----------------------------------------------------------------------
    seeds = lambda: tuple(_seed(rng) for _ in range(DISC_SEEDS))
    yield spread_case({"lr": _log_axis(rng, 3, 6), "momentum": ("linear", 0.5, 0.99)}, 64, seeds(),
                      name="two axes, 64 trials: marginals and discrepancy")
    yield spread_case({"width": ("linear", 0.1, 10.0), "lr": _log_axis(rng, 3, 6)}, 128, seeds(),
                      name="two axes, 128 trials, a wide linear axis: marginals and discrepancy")
    yield spread_case({"lr": _log_axis(rng, 3, 8), "eps": _log_axis(rng, 3, 8), "dropout": ("linear", 0.0, 0.6)},
                      64, seeds(), name="three axes, 64 trials: marginals and discrepancy")
    yield spread_case({"a": ("linear", -1.0, 1.0), "b": ("linear", 2.0, 50.0), "c": _log_axis(rng, 4, 8)},
                      128, seeds(), name="three axes, 128 trials: marginals and discrepancy")

    # --- compare: the interval ------------------------------------------------------------------------------
    for confidence in (0.95, 0.9, 0.5, float(rng.choice([0.8, 0.95]))):
        na, nb = (int(x) for x in rng.integers(20, 41, size=2))
        scale = float(10.0 ** rng.uniform(-3, 1))
        sa = scale * 10.0 ** rng.uniform(-1.5, -0.5)
        sb = sa * 10.0 ** rng.uniform(-0.3, 0.3)
        a = scale + sa * rng.standard_normal(na)
        b = scale * (1 + rng.uniform(-0.2, 0.2)) + sb * rng.standard_normal(nb)
        yield interval_case(a, b, confidence, name=f"{na} and {nb} seeds, a {confidence:.0%} interval")
    # spreads twice apart, the wider one with fewer seeds (no equal-variance assumption)
    scale = float(10.0 ** rng.uniform(-2, 0))
    a, b = scale + 0.1 * scale * rng.standard_normal(20), scale + 0.05 * scale * rng.standard_normal(40)
    yield interval_case(a, b, 0.95, name="20 seeds twice as spread as 40 others")
    a, b = scale + 0.05 * scale * rng.standard_normal(36), 1.1 * scale + 0.1 * scale * rng.standard_normal(20)
    yield interval_case(a, b, 0.9, name="the same the other way round: the wider spread in b")

    # --- compare: the decision ---------------------------------------------------------------------------------
    for multiple in rng.permutation([-3.0, -2.5, 2.5, 3.0, 0.0, 0.25, -0.25]):
        na, nb = (int(x) for x in rng.integers(8, 31, size=2))
        confidence = float(rng.choice([0.9, 0.95, 0.99]))
        scale = float(10.0 ** rng.uniform(-3, 1))
        a = scale + 0.05 * scale * rng.standard_normal(na)
        b = shifted(a, scale + 0.05 * scale * rng.uniform(0.5, 2) * rng.standard_normal(nb), float(multiple), confidence)
        want = "'b'" if multiple < 0 and abs(multiple) > 1 else "'a'" if multiple > 1 else "'tie'"
        yield decision_case(a, b, confidence, name=f"{na} and {nb} seeds, {confidence:.0%}: {want}")
    yield too_few_case(0.1 + 0.01 * rng.standard_normal(5), [0.1], name="one score for b: ValueError")

    # --- best_under_budget ----------------------------------------------------------------------------------
    for _ in range(4):
        curves = _curves(rng, int(rng.integers(3, 9)))
        cost = float(rng.choice(COSTS))
        total = sum(len(c) for c in curves)
        k = int(rng.integers(1, total + 1))
        budget = cost * k + float(rng.choice([0.0, 0.25, 0.5])) * cost
        yield budget_case(curves, cost, budget, name="random curves, a budget that buys some of the epochs")
    cost = float(rng.choice(COSTS))
    # the best checkpoint within the budget is in the trial the budget cuts short
    first = _curves(rng, 2, (3, 6))
    cut = np.array([0.9, 0.5, 0.01, 0.001])
    yield budget_case(first + [cut, np.array([0.0001])], cost, cost * (sum(map(len, first)) + 3),
                      name="the best checkpoint is in the trial the budget cuts short")
    # exactly on the budget: the last epoch paid for is the best one; the next one would be better still
    curves = _curves(rng, 3, (2, 5)) + [np.array([0.9, 0.6, 0.02, 0.001])]
    spent = sum(len(c) for c in curves[:3]) + 3
    yield budget_case(curves, cost, cost * spent, name="the best checkpoint costs exactly the whole budget")
    yield budget_case(curves, cost, cost * (spent - 0.5), name="half an epoch short of the best checkpoint: not paid for")
    # the best checkpoint is early in its trial: the last epochs are worse
    curves = [np.array([0.8, 0.3, 0.4, 0.5, 0.6]), np.array([0.7, 0.35, 0.45])] + _curves(rng, 2, (1, 4))
    yield budget_case([c + 0.5 if i >= 2 else c for i, c in enumerate(curves)], cost, cost * 100,
                      name="a budget that buys everything; the best checkpoint early in its trial")
    # ties between trials and within one
    v = round(float(rng.uniform(0.1, 0.5)), 3)
    yield budget_case([np.array([v + 0.1, v, v + 0.05]), np.array([v + 0.2, v]), np.array([v, v])], cost, cost * 7,
                      name="three checkpoints tie: the one trained first")
    yield budget_case([np.array([v + 0.1, v + 0.2]), np.array([v, v + 0.01, v]), np.array([v])], 1.0, 6.0,
                      name="ties within a trial and across trials")

    # --- best_under_budget: NaN and what raises ------------------------------------------------------------------
    nan = np.nan
    yield budget_case([np.array([nan, nan]), np.array([0.5, 0.3, 0.4])], cost, cost * 5,
                      test="test_best_under_budget_edge", name="the first trial diverged at once (NaN): skipped")
    base = _curves(rng, 3, (3, 6))
    with_nan = [c.copy() for c in base]
    with_nan[1][1:] = nan
    with_nan[2][0] = nan
    yield budget_case(with_nan, cost, cost * sum(map(len, base)), test="test_best_under_budget_edge",
                      name="NaN after a few epochs, and at the start of another trial")
    yield budget_case([np.array([0.6, np.inf, nan]), np.array([np.inf, 0.7])], 1.0, 5.0,
                      test="test_best_under_budget_edge", name="inf is a (bad) score, NaN is skipped")
    yield budget_error_case(base, cost, 0.5 * cost, "half an epoch's budget", name="a budget below one epoch: ValueError")
    yield budget_error_case(base, cost, 0.0, "a budget of 0", name="a budget of 0: ValueError")
    yield budget_error_case([np.array([nan, nan, nan, 0.1])], cost, cost * 3, "only NaN checkpoints within the budget",
                            name="no finite checkpoint within the budget: ValueError")
