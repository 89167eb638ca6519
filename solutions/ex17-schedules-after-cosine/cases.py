"""Hidden cases of ex17: read by the judge only, never copied into the sandbox or the release.

Drawn from the run's fresh ``rng``: WSD at its first steps, the end of the warm-up, the first and
last steps of the cooldown and far beyond, with ``warmup_steps`` 0 and 1, a one-step cooldown, a
cooldown that fills the run after the warm-up, ``decay_fraction * total_steps`` away from an integer
(but never within 0.05 of a half) and ``min_lr > 0``; Schedule-Free AdamW for 50 to 200 steps on
fixed random gradient sequences of scale 1e-4 to 10 and on noisy quadratics, with warm-ups of 0 to 50
steps, every hyperparameter set, and rates that fall or rise from step to step; the EMA over 10 to
300 steps with decays from 0 to 0.9999. The builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex17_schedules_after_cosine`.
"""

import numpy as np

from gdcourse.grading.assignments.ex17_schedules_after_cosine import ema_case, sf_case, sf_problem, wsd_case

REFERENCES = ("gdcourse.schedules.WSD", "gdcourse.optim.ScheduleFreeAdamW", "gdcourse.optim.WeightEMA")
FORBIDDEN = ("torch", "schedulefree", "transformers")


def _fraction(rng, total, low=0.05, high=0.5):
    """A decay fraction whose decay_fraction * total_steps is at least 1 and not within 0.05 of a half."""
    for _ in range(1000):
        f = float(rng.uniform(low, high))
        n = f * total
        if n >= 1 and abs(n - np.floor(n) - 0.5) > 0.05:
            return f
    return 1.0 / total


def _steps(warmup, total, start):
    ts = set(range(0, min(total, 12))) | {warmup - 1, warmup, warmup + 1, start - 1, start, start + 1,
                                          total - 1, total, total + 1, 3 * total}
    ts |= set(range(start, total + 2))
    return sorted(t for t in ts if t >= 0)


def _schedules(rng):
    for warmup, label in ((int(rng.integers(2, 30)), "a warm-up"), (0, "no warm-up"), (1, "a one-step warm-up")):
        total = warmup + int(rng.integers(20, 400))
        f = _fraction(rng, total)
        start = total - max(1, round(f * total))
        peak = float(10.0 ** rng.uniform(-5, 0))
        floor = None if warmup == 0 else float(peak * rng.uniform(0.0, 0.2))
        yield wsd_case(_steps(warmup, total, start), peak, warmup, total, decay_fraction=f, min_lr=floor,
                       name=f"wsd_lr with {label}, a cooldown over the last fraction (rounded to the nearest "
                            "step), at the phases' first and last steps and far beyond")
    peak, warmup = float(10.0 ** rng.uniform(-4, 0)), int(rng.integers(2, 20))
    total = warmup + int(rng.integers(50, 300))
    yield wsd_case(_steps(warmup, total, total - round(0.2 * total)), peak, warmup, total,
                   name="wsd_lr with the default 20 % cooldown to 0")
    total = int(rng.integers(30, 200))
    yield wsd_case(_steps(3, total, total - 1), 0.1, 3, total, decay_fraction=1.0 / total, min_lr=0.01,
                   name="wsd_lr with a one-step cooldown (min_lr at total_steps)")
    warmup = int(rng.integers(1, 10))
    total = warmup + int(rng.integers(10, 60))
    yield wsd_case(_steps(warmup, total, warmup), 0.5, warmup, total, decay_fraction=(total - warmup) / total,
                   min_lr=0.05, name="wsd_lr whose cooldown starts right after the warm-up (no stable phase)")


def _sf(rng):
    for scale in (1e-4, 1.0, 10.0):
        d, n = int(rng.integers(1, 9)), int(rng.integers(50, 201))
        yield sf_case(rng.standard_normal(d), sf_problem(scale * rng.standard_normal((n, d))),
                      [float(10.0 ** rng.uniform(-3, -1))] * n,
                      name=f"sf_adamw_step, {n} steps on a random gradient sequence of scale {scale:g}, the defaults")
    d, n = int(rng.integers(2, 9)), int(rng.integers(100, 201))
    yield sf_case(rng.standard_normal(d), sf_problem(rng.standard_normal((n, d))), [0.01] * n,
                  dict(warmup_steps=int(rng.integers(10, 51)), weight_decay=float(rng.uniform(0.01, 0.5))),
                  name="sf_adamw_step with a warm-up and weight decay (the weights of the average follow lr_max)")
    d, n = int(rng.integers(2, 9)), int(rng.integers(80, 201))
    yield sf_case(rng.standard_normal(d), sf_problem(0.3 * rng.standard_normal((n, d))),
                  [0.02] * n, dict(betas=(float(rng.uniform(0.5, 0.95)), float(rng.uniform(0.9, 0.9999))),
                                   eps=float(10.0 ** rng.uniform(-8, -3)), warmup_steps=int(rng.integers(0, 20)),
                                   r=float(rng.uniform(0.5, 2.0)), weight_lr_power=float(rng.uniform(0.0, 3.0)),
                                   weight_decay=float(rng.uniform(0.0, 0.1))),
                  name="sf_adamw_step with betas, eps, r and weight_lr_power set")
    d, n = int(rng.integers(2, 9)), int(rng.integers(60, 150))
    lrs = list(np.geomspace(0.05, 0.001, n) * np.exp(0.3 * rng.standard_normal(n)))
    yield sf_case(rng.standard_normal(d), sf_problem(rng.standard_normal((n, d))), lrs, dict(warmup_steps=5),
                  name="sf_adamw_step with a rate that changes every step (lr_max is the largest warmed-up rate)")
    for label, kw in (("the defaults", {}),
                      ("a warm-up and weight decay", dict(warmup_steps=int(rng.integers(5, 40)),
                                                          weight_decay=float(rng.uniform(0.01, 0.2)))),
                      ("betas set and r = 1", dict(betas=(float(rng.uniform(0.5, 0.95)), 0.99), r=1.0))):
        d, n = int(rng.integers(1, 9)), int(rng.integers(100, 201))
        a = 10.0 ** rng.uniform(-1, 1.5, d)
        yield sf_case(rng.standard_normal(d) * 2, sf_problem(float(10.0 ** rng.uniform(-3, 0)) *
                                                             rng.standard_normal((n, d)), a=a, c=rng.standard_normal(d)),
                      [float(10.0 ** rng.uniform(-2.5, -1))] * n, kw, test="test_sf_quadratic",
                      name=f"sf_adamw_step, {n} steps on a noisy quadratic, {label}")
    # started far from the minimum, which the run never reaches (Adam's steps of about lr at the minimum
    # would turn last-digit differences into different oscillations)
    d, n = int(rng.integers(2, 9)), int(rng.integers(50, 101))
    c = rng.standard_normal(d)
    yield sf_case(c + 3 + np.abs(rng.standard_normal(d)), sf_problem(np.zeros((n, d)), a=10.0 ** rng.uniform(0, 1, d),
                                                                     c=c),
                  list(np.linspace(0.001, 0.02, n)), dict(weight_decay=0.05), test="test_sf_quadratic",
                  name="sf_adamw_step on a quadratic with a rising rate and weight decay")


def _ema(rng):
    for decay, n in ((0.9, int(rng.integers(10, 60))), (0.999, int(rng.integers(100, 301))),
                     (float(rng.uniform(0.5, 0.99)), int(rng.integers(10, 100))), (0.0, 10), (0.9999, 50)):
        d = int(rng.integers(1, 51))
        yield ema_case(rng.standard_normal(d), 0.1 * rng.standard_normal((n, d)), decay,
                       name=f"ema_update with decay {decay:g} over {n} steps, the weights changed in place")
    d = int(rng.integers(1, 20))
    yield ema_case(rng.standard_normal(d) * 100, rng.standard_normal((30, d)), 0.95,
                   name="ema_update of large weights")


def cases(rng):
    yield from _schedules(rng)
    yield from _sf(rng)
    yield from _ema(rng)
