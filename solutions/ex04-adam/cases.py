"""Hidden cases of ex04: read by the judge only, never copied into the sandbox or the release.

One step at a time from states drawn from the run's fresh ``rng``: the first step (``t = 0``,
zero moments), random later steps (``t`` from 1 to 60, and late in a run where the bias
corrections are near 1), gradients of scale 1e-9 to 1e3 (where eps does and does not matter),
1-d and 2-d weights, the default settings and set ones, zero gradients; every case also checks
that ``w``, ``g`` and the state passed in are left as they were. The builders and their checks
are public, in :mod:`gdcourse.grading.assignments.ex04_adam`.
"""

import numpy as np

from gdcourse.grading.assignments.ex04_adam import init_case, random_state, step_case

REFERENCES = ("gdcourse.optim.Adam", "gdcourse.optim.AdamW")
FORBIDDEN = ("torch.optim",)

ADAM_SETTINGS = [("the default betas and eps", dict(lr=0.01)),
                 ("betas, eps and L2 decay set", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1))]
ADAMW_SETTINGS = [("the default decay 0.01", dict(lr=0.01)),
                  ("betas, eps and decay set", dict(lr=0.003, betas=(0.5, 0.9), eps=1e-5, weight_decay=0.3))]


def cases(rng):
    yield init_case(rng.standard_normal((3, 4)), "init_state for a 2-d w: zero moments of w's shape")
    yield init_case(rng.standard_normal(1), "init_state for a single weight")

    # adam_step: later steps, every shape, gradient scales where eps does and does not matter
    for i, (shape, scale) in enumerate([((1,), 1e-9), ((3, 4), 1e-3), ((7,), 1.0), ((1,), 1e3),
                                        ((7,), 1e-9), ((1,), 1e-3), ((3, 4), 1.0), ((7,), 1e3)]):
        label, kw = ADAM_SETTINGS[i % 2]
        m, v = random_state(rng, shape, scale)
        yield step_case("adam", rng.standard_normal(shape), scale * rng.standard_normal(shape),
                        int(rng.integers(1, 60)), m, v, kw,
                        f"adam_step at a later step, gradients of scale {scale:g}, {label}")
    for scale, (label, kw) in zip((1e-9, 1e-3, 1.0, 1e3), ADAM_SETTINGS * 2):
        shape = (int(rng.integers(1, 8)),)
        z = np.zeros(shape)
        yield step_case("adam", rng.standard_normal(shape), scale * rng.standard_normal(shape), 0, z, z, kw,
                        f"adam_step's first step (t = 0 -> 1), gradients of scale {scale:g}, {label}")
    m, v = random_state(rng, (6,), 1.0)
    yield step_case("adam", rng.standard_normal(6), rng.standard_normal(6), int(rng.integers(2000, 20000)), m, v,
                    ADAM_SETTINGS[1][1], "adam_step late in a run (bias corrections near 1)")
    m, v = random_state(rng, (2, 3), 1.0)
    yield step_case("adam", rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), 1, m, v,
                    dict(lr=0.1, weight_decay=0.5), "adam_step at the second step, strong L2 decay")
    z = np.zeros(4)
    yield step_case("adam", rng.standard_normal(4), z, int(rng.integers(1, 30)), z, z, dict(lr=0.1),
                    "adam_step with zero gradients and zero moments leaves w where it is")

    # adamw_step likewise
    for i, (shape, scale) in enumerate([((1,), 1e-6), ((2, 3), 1.0), ((5,), 1e2), ((2, 3), 1e-6), ((1,), 1.0),
                                        ((5,), 1e2)]):
        label, kw = ADAMW_SETTINGS[i % 2]
        m, v = random_state(rng, shape, scale)
        yield step_case("adamw", rng.standard_normal(shape), scale * rng.standard_normal(shape),
                        int(rng.integers(1, 60)), m, v, kw,
                        f"adamw_step at a later step, gradients of scale {scale:g}, {label}")
    for scale, (label, kw) in zip((1e-6, 1.0, 1e2), ADAMW_SETTINGS * 2):
        shape = (int(rng.integers(1, 8)),)
        z = np.zeros(shape)
        yield step_case("adamw", rng.standard_normal(shape), scale * rng.standard_normal(shape), 0, z, z, kw,
                        f"adamw_step's first step (t = 0 -> 1), gradients of scale {scale:g}, {label}")
    m, v = random_state(rng, (3,), 1.0)
    yield step_case("adamw", rng.standard_normal(3), rng.standard_normal(3), int(rng.integers(2000, 20000)), m, v,
                    dict(lr=0.1, betas=(0.8, 0.99), weight_decay=0.5),
                    "adamw_step late in a run, strong decay (decay before the update)")
    shape, z = (5,), np.zeros(5)
    yield step_case("adamw", rng.standard_normal(shape), z, int(rng.integers(1, 30)), z, z, ADAMW_SETTINGS[1][1],
                    "adamw_step with zero gradients and zero moments only decays the weights")
