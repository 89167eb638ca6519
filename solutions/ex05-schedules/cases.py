"""Hidden cases of ex05: read by the judge only, never copied into the sandbox or the release.

Drawn from the run's fresh ``rng``: schedules at their first and last steps (``t = 0``,
``t = warmup_steps``, ``t = total_steps`` and far beyond), with ``warmup_steps`` 0, 1 and
``total_steps - 1``, ``min_lr > 0``; range tests that blow up, never blow up, end in a NaN or an
inf loss (at the very first step too), or run 2 steps, with ``w0`` checked after every run;
suggestions from curves that end in NaN or inf, are flat (ties) or noisy, given as lists.
The builders and their checks are public, in :mod:`gdcourse.grading.assignments.ex05_schedules`.
"""

import numpy as np

from gdcourse.grading.assignments.ex05_schedules import (
    cosine_warmup_case, lr_range_test, make_loss, quadratic, range_test_case, suggest_case, warmup_cosine_case)

REFERENCES = ("gdcourse.schedules.WarmupCosine", "gdcourse.schedules.CosineWarmup", "gdcourse.schedules.Cosine",
              "gdcourse.diagnostics.lr_range_test", "gdcourse.diagnostics.RangeTest")
FORBIDDEN = ("transformers", "torch.optim")


def _peak(rng):
    return float(10.0 ** rng.uniform(-4, 0))


def _schedules(rng):
    peak, w = _peak(rng), int(rng.integers(2, 20))
    total = w + int(rng.integers(5, 80))
    yield warmup_cosine_case(list(range(total + 6)) + [10 * total], peak, w, total,
                             name="warmup_cosine at every step: 0 at t = 0, peak_lr at t = warmup_steps, "
                                  "0 (the default min_lr) from t = total_steps on")
    peak, w = _peak(rng), int(rng.integers(2, 20))
    total = w + int(rng.integers(5, 80))
    floor = peak * float(rng.uniform(0.01, 0.5))
    yield warmup_cosine_case(range(total + 4), peak, w, total, floor,
                             name="warmup_cosine with min_lr > 0: the warm-up from 0, the cosine down to min_lr")
    peak, total = _peak(rng), int(rng.integers(3, 60))
    yield warmup_cosine_case([0, 1, 2, total // 2, total - 1, total, total + 1, 5 * total], peak, 0, total,
                             peak * 0.1 if rng.uniform() < 0.5 else None,
                             name="warmup_cosine with warmup_steps = 0: no warm-up, peak_lr at t = 0")
    total = int(rng.integers(3, 40))
    yield warmup_cosine_case(range(total + 3), _peak(rng), 1, total,
                             name="warmup_cosine with warmup_steps = 1: 0 at t = 0, peak_lr at t = 1")
    total = int(rng.integers(3, 40))
    peak = _peak(rng)
    yield warmup_cosine_case([0, 1, total - 2, total - 1, total, total + 1, 3 * total], peak, total - 1, total,
                             peak * float(rng.uniform(0.01, 0.5)),
                             name="warmup_cosine with warmup_steps = total_steps - 1: peak_lr, then min_lr")
    peak, w = _peak(rng), int(rng.integers(100, 3000))
    total = w + int(rng.integers(1000, 100_000))
    yield warmup_cosine_case([0, 1, w // 2, w - 1, w, w + 1, (w + total) // 2, total - 1, total, total + 1,
                              2 * total, 10**7], peak, w, total, peak * 1e-3,
                             name="warmup_cosine of a long run, and long after its end")

    peak, w = _peak(rng), int(rng.integers(2, 50))
    yield cosine_warmup_case(range(w + 6), peak, w,
                             name="cosine_warmup at every step: 0 at t = 0, peak_lr from t = warmup_steps on")
    yield cosine_warmup_case([0, 1, 2, 7], _peak(rng), 1, name="cosine_warmup with warmup_steps = 1")
    yield cosine_warmup_case([0, 1, 5], _peak(rng), 0,
                             name="cosine_warmup with warmup_steps = 0: peak_lr from t = 0")
    peak, w = _peak(rng), int(rng.integers(500, 5000))
    yield cosine_warmup_case([0, 1, w // 4, w // 2, w - 1, w, w + 1, 10 * w, 10**7], peak, w,
                             name="cosine_warmup of a long warm-up, and long after it")


def _ends(problem, w0, lr_min, lr_max, steps):
    """(recorded steps, last loss) of the reference run."""
    lrs, losses = lr_range_test(make_loss(problem), np.array(w0, float), lr_min, lr_max, steps)
    return len(lrs), losses[-1]


def _range_tests(rng):
    for d, steps in ((1, int(rng.integers(20, 60))), (3, int(rng.integers(40, 120))), (6, int(rng.integers(100, 250)))):
        a = 10.0 ** rng.uniform(-1, 1, d)
        yield range_test_case(quadratic(a), rng.standard_normal(d) * 3, 1e-4, 100.0, steps,
                              name=f"lr_range_test on a quadratic in {d} dimension(s): it stops once the loss "
                                   "exceeds 4 times the lowest recorded, which is recorded too")
    a = 10.0 ** rng.uniform(-1, 1, 3)
    yield range_test_case(quadratic(a), rng.standard_normal(3), 1e-5, 0.5 / a.max(), int(rng.integers(10, 40)),
                          name="lr_range_test that never blows up: every step recorded, the last rate is lr_max")
    a = 10.0 ** rng.uniform(-1, 0, 2)
    yield range_test_case(quadratic(a), rng.standard_normal(2), 1e-4, 0.1, 2,
                          name="lr_range_test with steps = 2: the rates lr_min and lr_max")
    a = 10.0 ** rng.uniform(0, 1, 2)
    yield range_test_case(quadratic(a), rng.standard_normal(2) + 3, 4.0 / a.min(), 100.0 / a.min(), 10,
                          name="lr_range_test that blows up at the first update: two entries")
    for bad in ("nan", "inf"):
        for _ in range(50):  # a draw whose run ends in the bad loss, not in the 4x rule first
            a = 10.0 ** rng.uniform(-0.5, 0.5, 3)
            c = np.array([-float(rng.uniform(0.5, 2.0)), *rng.uniform(0.5, 2.0, 2)])
            w0 = c + np.array([float(rng.uniform(1.5, 4.0)), *rng.uniform(-0.5, 0.5, 2)])
            problem, steps = quadratic(a, c, floor=0.0, bad=bad), int(rng.integers(30, 80))
            n, last = _ends(problem, w0, 1e-3, 10.0, steps)
            if n > 2 and not np.isfinite(last):
                break
        yield range_test_case(problem, w0, 1e-3, 10.0, steps,
                              name=f"lr_range_test when the loss becomes {bad}: it records it, then stops")
    a = 10.0 ** rng.uniform(-1, 1, 2)
    yield range_test_case(quadratic(a, floor=0.0, bad=str(rng.choice(["nan", "inf"]))),
                          -np.abs(rng.standard_normal(2)) - 0.1, 1e-4, 1.0, 20,
                          name="lr_range_test when the loss at w0 is already NaN or inf: one entry")


def _suggestions(rng):
    def curve(n):
        """A range test's curve: flat, a fall, a minimum, a blow-up."""
        lrs = np.geomspace(10.0 ** rng.uniform(-7, -4), 10.0 ** rng.uniform(-1, 1), n)
        x = np.linspace(-1, 1, n)
        losses = 2 + 1.5 * np.tanh(-4 * x) + 3 * np.maximum(x - 0.5, 0) ** 2 * 40
        return lrs, losses * (1 + 0.02 * rng.standard_normal(n))

    lrs, losses = curve(int(rng.integers(20, 60)))
    yield suggest_case(lrs, losses, name="suggest_lr on a noisy curve: a tenth of the rate at the lowest raw loss")
    for bad in (np.nan, np.inf):
        lrs, losses = curve(int(rng.integers(20, 60)))
        losses[-1] = bad
        yield suggest_case(lrs, losses, name=f"suggest_lr ignores a final {bad} loss")
    lrs, losses = curve(int(rng.integers(20, 60)))
    losses[rng.integers(0, len(losses) - 1, 2)] = np.nan
    losses[-1] = np.inf
    yield suggest_case(lrs, losses, name="suggest_lr ignores NaN and inf anywhere in the losses")
    n = int(rng.integers(3, 12))
    yield suggest_case(np.geomspace(1e-5, 1.0, n), np.full(n, float(rng.uniform(0.5, 3))),
                       name="suggest_lr on a flat curve: equal losses, the first rate")
    lrs, losses = curve(int(rng.integers(20, 60)))
    i, j = sorted(rng.choice(len(lrs) - 1, 2, replace=False))
    losses[i] = losses[j] = losses.min() - 0.5
    yield suggest_case(lrs, losses, name="suggest_lr with two equal lowest losses: the first")
    lrs, losses = curve(int(rng.integers(5, 15)))
    yield suggest_case([float(x) for x in lrs], [float(x) for x in losses], name="suggest_lr given lists")
    yield suggest_case(np.array([10.0 ** rng.uniform(-5, 0)]), np.array([float(rng.uniform(0.1, 5))]),
                       name="suggest_lr of one recorded step")


def cases(rng):
    yield from _schedules(rng)
    yield from _range_tests(rng)
    yield from _suggestions(rng)
