"""Hidden cases of ex01: read by the judge only, never copied into the sandbox or the release.

Other shapes (one sample, one feature), scales and learning rates, drawn from the run's
fresh ``rng``; the builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex01_gd_loop`.
"""

import numpy as np

from gdcourse.grading.assignments.ex01_gd_loop import (
    fit_case, gradient_case, loss_case, predict_case, step_case)

SHAPES = [(1, 1), (1, 4), (7, 1), (40, 6)]


def cases(rng):
    for n, d in SHAPES:
        X, w, b = rng.standard_normal((n, d)), rng.standard_normal(d), float(rng.standard_normal())
        y = 3 * rng.standard_normal(n)
        yield predict_case(X, w, b, f"predict with {n} sample(s) and {d} feature(s), inputs unchanged")
        yield loss_case(X, y, w, b, f"mse_loss with {n} sample(s) and {d} feature(s)")
        yield gradient_case(X, y, w, b, f"gradients with {n} sample(s) and {d} feature(s)")
    scale = 10.0 ** rng.uniform(3, 5)  # large values
    X, y = scale * rng.standard_normal((5, 2)), scale * rng.standard_normal(5)
    yield loss_case(X, y, rng.standard_normal(2), scale, "mse_loss on values of order 1e3 to 1e5")
    yield gradient_case(X, y, rng.standard_normal(2), scale, "gradients on values of order 1e3 to 1e5")
    for d in (1, 6):
        w, dw = rng.standard_normal(d), rng.standard_normal(d)
        for lr in (0.0, 1e-3, 0.7):
            yield step_case(w, -1.5, dw, 0.25, lr, f"gd_step with {d} weight(s), lr = {lr:g}: new arrays, inputs unchanged")
    for n, d, lr, epochs in ((1, 1, 0.2, 25), (1, 4, 0.05, 10), (30, 1, 0.3, 40), (100, 8, 0.05, 60)):
        X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
        yield fit_case(X, y, lr, epochs, f"fit from zero, {n} sample(s), {d} feature(s), {epochs} epochs")
    X, y = rng.standard_normal((6, 2)), rng.standard_normal(6)
    yield fit_case(X, y, 0.1, 0, "fit with 0 epochs: the zero model and an empty history")
    # above the stability bound the loss grows; below it, it converges: fit follows the rule
    X = rng.standard_normal((50, 2))
    y = X @ np.array([1.0, 1.0])
    A = np.column_stack([X, np.ones(50)])
    lam_max = np.linalg.eigvalsh(2 / 50 * A.T @ A).max()
    yield fit_case(X, y, 2.2 / lam_max, 30, "fit diverges just above 2 / lambda_max (no clipping, no early stop)")
    yield fit_case(X, y, 1.8 / lam_max, 200, "fit converges just below 2 / lambda_max")
