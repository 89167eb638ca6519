"""gdcourse.linear: the Hessian, the stability bound and least squares."""

import numpy as np
import pytest

from gdcourse.linear import hessian, least_squares, stable_lr


def test_hessian_matches_finite_differences_of_the_gradient():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 3)), rng.standard_normal(30)

    def grad(theta):
        r = X @ theta[:-1] + theta[-1] - y
        return np.append(2 / len(y) * X.T @ r, 2 / len(y) * r.sum())

    theta, h = rng.standard_normal(4), 1e-6
    numeric = np.column_stack([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(hessian(X), numeric, rtol=1e-6, atol=1e-8)


def test_stable_lr_is_sharp():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((50, 2)) * [1.0, 3.0], rng.standard_normal(50)
    lr_max = stable_lr(X)

    def final_loss(lr, steps=400):
        w, b = np.zeros(2), 0.0
        for _ in range(steps):
            r = X @ w + b - y
            w, b = w - lr * 2 / 50 * X.T @ r, b - lr * 2 / 50 * r.sum()
        return np.mean((X @ w + b - y) ** 2)

    _, _, loss_star = least_squares(X, y)
    assert final_loss(0.98 * lr_max) < loss_star * (1 + 1e-6)
    assert final_loss(1.02 * lr_max) > 1e3


def test_least_squares_recovers_exact_weights():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3))
    w, b, loss = least_squares(X, X @ [1.0, -2.0, 0.5] + 4.0)
    np.testing.assert_allclose(w, [1.0, -2.0, 0.5])
    assert b == pytest.approx(4.0)
    assert loss < 1e-20
    with pytest.raises(ValueError, match="2-D"):
        hessian(np.ones(5))
