"""Trusted cases of ex01: read by the judge only, never copied into the sandbox.

Visible cases repeat the notebook's visible tests; hidden ones draw other
shapes (one sample, one feature) from the run's fresh ``rng``. Every
expected value is computed here, from the inputs this file chose.
"""

import numpy as np

from gdcourse.grading.cases import Case, call, close, number, require, unchanged

SHAPES = [(1, 1), (1, 4), (7, 1), (40, 6)]


def _fit(X, y, lr, epochs):
    w, b, history = np.zeros(X.shape[1]), 0.0, []
    for _ in range(epochs):
        r = X @ w + b - y
        history.append(np.mean(r ** 2))
        w, b = w - lr * 2 / len(y) * X.T @ r, b - lr * 2 / len(y) * r.sum()
    return w, b, np.array(history)


def _numeric(X, y, w, b, h=1e-6):
    loss = lambda w_, b_: np.mean((X @ w_ + b_ - y) ** 2)
    dw = np.array([(loss(w + h * e, b) - loss(w - h * e, b)) / (2 * h) for e in np.eye(len(w))])
    return dw, (loss(w, b + h) - loss(w, b - h)) / (2 * h)


def _pair(value, what):
    require(isinstance(value, (tuple, list)) and len(value) == 2, f"{what} should return a pair")
    return value


def _triple(value):
    require(isinstance(value, (tuple, list)) and len(value) == 3, "fit should return (w, b, history)")
    return value


def predict_case(X, w, b, name, visible=False):
    def check(r):
        close(r.value, X @ w + b, rtol=1e-10, atol=1e-12, what="predict(X, w, b)")
    return Case("test_predict", name, call("predict", X, w, b), check, visible)


def loss_case(X, y, w, b, name, visible=False):
    def check(r):
        require(np.ndim(r.value) == 0 or np.size(r.value) == 1, "mse_loss should return one number")
        close(number(r.value), np.mean((X @ w + b - y) ** 2), rtol=1e-10, what="mse_loss")
    return Case("test_mse_loss", name, call("mse_loss", X, y, w, b), check, visible)


def gradient_case(X, y, w, b, name, visible=False):
    def check(r):
        dw, db = _pair(r.value, "gradients")
        res = X @ w + b - y
        close(dw, 2 / len(y) * X.T @ res, rtol=1e-9, atol=1e-12, what="dL/dw")
        close(number(db, "dL/db"), 2 / len(y) * res.sum(), rtol=1e-9, atol=1e-12, what="dL/db")
        num_dw, num_db = _numeric(X, y, w, b)
        close(dw, num_dw, rtol=1e-5, atol=1e-7, what="dL/dw against finite differences")
    return Case("test_gradients", name, call("gradients", X, y, w, b), check, visible)


def step_case(w, b, dw, db, lr, name, visible=False):
    def check(r):
        new_w, new_b = _pair(r.value, "gd_step")
        close(new_w, w - lr * dw, rtol=1e-12, atol=1e-15, what="the new w")
        close(number(new_b, "the new b"), b - lr * db, rtol=1e-12, atol=1e-15, what="the new b")
        unchanged(r, 0, w, "w")
        unchanged(r, 2, dw, "dw")
        require(0 not in r.shares_input, "the new w shares memory with an input: return a new array")
    return Case("test_gd_step", name, call("gd_step", w, b, dw, db, lr), check, visible)


def fit_case(X, y, lr, epochs, name, visible=False):
    def check(r):
        w, b, history = _triple(r.value)
        rw, rb, rh = _fit(X, y, lr, epochs)
        close(history, rh, rtol=1e-9, atol=1e-12 * np.max(rh), what="history (the loss before each step)")
        close(w, rw, rtol=1e-9, atol=1e-12, what="the final w")
        close(number(b, "the final b"), rb, rtol=1e-9, atol=1e-12, what="the final b")
    return Case("test_fit", name, call("fit", X, y, lr, epochs), check, visible)


def cases(rng):
    # the visible tests' examples
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    yield predict_case(X, np.array([0.5, -1.0]), 2.0, "the visible example", visible=True)
    yield predict_case(X, np.array([0.5, -1.0]), 0.0, "the visible example with b = 0", visible=True)
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    for w, b in ((1.0, 0.0), (1.0, 1.0), (0.0, 0.0)):
        yield loss_case(X, y, np.array([w]), b, f"the visible example with w = {w:g}, b = {b:g}", visible=True)
    vis = np.random.default_rng(0)
    X, y = vis.standard_normal((20, 3)), vis.standard_normal(20)
    yield gradient_case(X, y, vis.standard_normal(3), 0.5, "the visible example", visible=True)
    yield step_case(np.array([1.0, -2.0]), 3.0, np.array([0.5, -4.0]), 2.0, 0.1, "the visible example", visible=True)
    vis = np.random.default_rng(1)
    X = vis.standard_normal((200, 3))
    y = X @ np.array([2.0, -1.0, 0.5]) + 3.0 + 0.01 * vis.standard_normal(200)
    yield fit_case(X, y, 0.1, 300, "the visible example (300 epochs)", visible=True)
    yield fit_case(X, y, 0.1, 1, "the visible example, one epoch", visible=True)

    # hidden: other shapes, scales and learning rates, fresh every run
    for n, d in SHAPES:
        X, w, b = rng.standard_normal((n, d)), rng.standard_normal(d), float(rng.standard_normal())
        y = 3 * rng.standard_normal(n)
        yield predict_case(X, w, b, f"predict with {n} sample(s) and {d} feature(s)")
        yield loss_case(X, y, w, b, f"mse_loss with {n} sample(s) and {d} feature(s)")
        yield gradient_case(X, y, w, b, f"gradients with {n} sample(s) and {d} feature(s)")
    for d in (1, 6):
        w, dw = rng.standard_normal(d), rng.standard_normal(d)
        for lr in (0.0, 1e-3, 0.7):
            yield step_case(w, -1.5, dw, 0.25, lr, f"gd_step with {d} weight(s), lr = {lr:g}, inputs unchanged")
    for n, d, lr, epochs in ((1, 1, 0.2, 25), (1, 4, 0.05, 10), (30, 1, 0.3, 40), (100, 8, 0.05, 60)):
        X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
        yield fit_case(X, y, lr, epochs, f"fit from zero, {n} sample(s), {d} feature(s), {epochs} epochs")
    # above the stability bound the loss grows; below it, it converges: fit follows the rule
    X = rng.standard_normal((50, 2))
    y = X @ np.array([1.0, 1.0])
    A = np.column_stack([X, np.ones(50)])
    lam_max = np.linalg.eigvalsh(2 / 50 * A.T @ A).max()
    yield fit_case(X, y, 2.2 / lam_max, 30, "fit diverges just above 2 / lambda_max (no clipping, no early stop)")
    yield fit_case(X, y, 1.8 / lam_max, 200, "fit converges just below 2 / lambda_max")
