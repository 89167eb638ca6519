"""Hidden cases of ex03: read by the judge only, never copied into the sandbox or the release.

Shapes (one weight, a matrix, a vector), momentum 0 to 0.99, both Nesterov settings and the
default, first steps (``v=None``) and later ones, ``lr = 0``, gradients from 1e-6 to 1e6,
inputs unchanged and new arrays (the first step's buffer is not ``g`` itself); paths of many
steps under schedules that start at ``lr = 0`` (warm-up) or end at it; the heavy-ball form
under a schedule (where it parts from PyTorch's); ``minimize`` with a schedule given as an
array, one step, no steps, and from a ``w0`` it must not modify. The builders and their checks
are public, in :mod:`gdcourse.grading.assignments.ex03_momentum`.
"""

import numpy as np

from gdcourse.grading.assignments.ex03_momentum import (
    heavy_ball_case, heavy_ball_path_case, minimize_case, step_case, step_path_case)

REFERENCES = ("gdcourse.optim.SGD",)
FORBIDDEN = ("torch.optim",)


def _spd(rng, d):
    Q = rng.standard_normal((d, d))
    return Q @ Q.T / d + np.eye(d)


def cases(rng):
    # --- momentum_step: one step from a given state
    for shape in ((1,), (3, 2), (5,)):
        for nesterov in (None, False, True):
            mu = float(rng.choice([0.5, 0.9, 0.99]))
            w, g = rng.standard_normal(shape), rng.standard_normal(shape)
            v = rng.standard_normal(shape)
            what = {None: "default nesterov", False: "plain", True: "Nesterov"}[nesterov]
            yield step_case(w, g, None, float(rng.uniform(0.01, 0.5)), mu, nesterov,
                            f"first step (v=None), shape {shape}, {what}: new arrays, inputs unchanged")
            yield step_case(w, g, v, float(rng.uniform(0.01, 0.5)), mu, nesterov,
                            f"a later step, shape {shape}, {what}: new arrays, inputs unchanged")
    w, g, v = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
    yield step_case(w, g, v, 0.1, 0.0, False, "momentum = 0: plain SGD")
    yield step_case(w, g, v, 0.0, 0.9, True, "lr = 0: w stays, the buffer still updates")
    for scale in (1e-6, 1e6):
        yield step_case(w, scale * g, scale * v, 0.05, 0.9, True, f"gradients of order {scale:g}")
    # --- momentum_step: paths under schedules, fed its own output
    for nesterov in (False, True):
        for mu in (0.5, 0.99):
            shape = (3,) if mu == 0.5 else (2, 2)
            grads = [rng.standard_normal(shape) * 10 ** rng.uniform(-2, 2) for _ in range(25)]
            yield step_path_case(rng.standard_normal(shape), grads, list(np.linspace(0.2, 0.01, 25)), mu, nesterov,
                                 f"25 steps, a decaying schedule, momentum {mu:g}, nesterov={nesterov}")
    grads = [rng.standard_normal(3) for _ in range(12)]
    yield step_path_case(rng.standard_normal(3), grads, list(np.linspace(0.0, 0.3, 12)), 0.9, True,
                         "a warm-up schedule whose first lr is 0: the buffer starts at the first gradient")
    yield step_path_case(rng.standard_normal(3), grads, [0.1] * 6 + [0.01] * 5 + [0.0], 0.9, False,
                         "a step decay whose last lr is 0")

    # --- heavy_ball_step
    for shape in ((1,), (2, 3)):
        for mu in (0.0, 0.8):
            w, g, v = rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(shape)
            yield heavy_ball_case(w, g, np.zeros(shape), 0.05, mu, f"first step from v = 0, shape {shape}, momentum {mu:g}")
            yield heavy_ball_case(w, g, v, float(rng.uniform(0.01, 0.5)), mu,
                                  f"a later step, shape {shape}, momentum {mu:g}: new arrays, inputs unchanged")
    yield heavy_ball_case(w, g, v, 0.0, 0.9, "lr = 0: the velocity only decays")
    yield heavy_ball_case(w, 1e6 * g, 1e4 * v, 1e-3, 0.9, "large gradients and velocities")
    grads = [rng.standard_normal(4) for _ in range(20)]
    w0 = rng.standard_normal(4)
    yield heavy_ball_path_case(w0, grads, [0.05] * 20, 0.8, "20 steps with a constant lr")
    yield heavy_ball_path_case(w0, grads, [0.2] * 10 + [0.02] * 10, 0.8,
                               "20 steps with a learning-rate drop (the velocity keeps the old, larger steps)")

    # --- minimize
    for d in (1, 4):
        A, c = _spd(rng, d), rng.standard_normal(d)
        lr_max = 1 / np.linalg.eigvalsh(A).max()
        w0 = rng.standard_normal(d)
        for nesterov in (False, True):
            lrs = list(0.5 * lr_max * np.linspace(1, 0.1, 30))
            yield minimize_case(A, c, w0, lrs, 0.8, nesterov,
                                f"30 steps of a decaying schedule, {d} weight(s), nesterov={nesterov}: w0 unchanged")
    A, c = _spd(rng, 3), rng.standard_normal(3)
    w0 = rng.standard_normal(3)
    lr = 0.3 / np.linalg.eigvalsh(A).max()
    yield minimize_case(A, c, w0, np.array([lr] * 8 + [lr / 10] * 8), 0.9, None,
                        "the schedule given as a NumPy array, nesterov left at its default")
    yield minimize_case(A, c, w0, [lr], 0.9, True, "one step: the first step is also the last")
    yield minimize_case(A, c, w0, [], 0.9, False, "no learning rates: no steps, an empty path")
    yield minimize_case(A, c, w0, [0.0, lr, lr, lr], 0.9, False, "a first step with lr = 0")
    yield minimize_case(A, c, w0, [2.5 / np.linalg.eigvalsh(A).max() * 4] * 15, 0.5, False,
                        "a learning rate far too large: the iterates grow, nothing stops them")
