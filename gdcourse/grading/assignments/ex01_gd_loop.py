"""ex01, the gradient-descent loop: the course's reference, the case builders and the visible cases.

Every value is compared with a relative tolerance of ``RTOL`` (plus ``ATOL`` for values near
zero), as the exercise's statement says: any order of the float operations passes.
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.cases import Case, call, close, diagnose, number, require, resembles, unchanged

RTOL, ATOL = 1e-9, 1e-12  # stated in the exercise


# --- the reference ----------------------------------------------------------------------

def predict(X, w, b):
    return X @ w + b


def mse_loss(X, y, w, b):
    return float(np.mean((X @ w + b - y) ** 2))


def gradients(X, y, w, b):
    r = X @ w + b - y
    return 2 / len(y) * X.T @ r, float(2 / len(y) * r.sum())


def gd_step(w, b, dw, db, lr):
    return w - lr * dw, b - lr * db


def fit(X, y, lr, epochs):
    w, b, history = np.zeros(X.shape[1]), 0.0, []
    for _ in range(epochs):
        history.append(mse_loss(X, y, w, b))
        dw, db = gradients(X, y, w, b)
        w, b = gd_step(w, b, dw, db, lr)
    return w, b, np.array(history)


REFERENCE = {"predict": predict, "mse_loss": mse_loss, "gradients": gradients, "gd_step": gd_step, "fit": fit}


# --- checks -----------------------------------------------------------------------------

def _numeric(X, y, w, b, h=1e-6):
    """Central differences of the loss: the gradient without any formula for it."""
    dw = np.array([(mse_loss(X, y, w + h * e, b) - mse_loss(X, y, w - h * e, b)) / (2 * h) for e in np.eye(len(w))])
    return dw, (mse_loss(X, y, w, b + h) - mse_loss(X, y, w, b - h)) / (2 * h)


def _items(value, n, what):
    require(isinstance(value, (tuple, list)) and len(value) == n, f"{what} should return a tuple of {n}")
    return value


def _inputs_kept(r, originals: dict) -> None:
    for index, (value, what) in originals.items():
        unchanged(r, index, value, what)


def predict_case(X, w, b, name, visible=False):
    def check(r):
        diagnose(lambda: close(r.value, predict(X, w, b), rtol=RTOL, atol=ATOL, what="predict(X, w, b)"),
                [(lambda: resembles(r.value, X @ w), "the bias b is missing: add it to every prediction")])
        _inputs_kept(r, {0: (X, "X"), 1: (w, "w")})
    return Case("test_predict", name, call("predict", X, w, b), check, visible)


def loss_case(X, y, w, b, name, visible=False):
    def check(r):
        require(np.ndim(r.value) == 0 or np.size(r.value) == 1, "mse_loss should return one number, not an array")
        want = mse_loss(X, y, w, b)
        residual = X @ w + b - y
        diagnose(lambda: close(number(r.value, "mse_loss"), want, rtol=RTOL, atol=ATOL, what="mse_loss"),
                [(lambda: resembles(r.value, np.sum(residual ** 2)), "that is the sum of squares: take the mean"),
                 (lambda: resembles(r.value, np.mean(residual ** 2) / 2), "that is half the mean of squares"),
                 (lambda: resembles(r.value, np.sqrt(np.mean(residual ** 2))), "that is the root of the mean")])
        _inputs_kept(r, {0: (X, "X"), 1: (y, "y"), 2: (w, "w")})
    return Case("test_mse_loss", name, call("mse_loss", X, y, w, b), check, visible)


def gradient_case(X, y, w, b, name, visible=False):
    def check(r):
        dw, db = _items(r.value, 2, "gradients")
        want_dw, want_db = gradients(X, y, w, b)
        num_dw, _ = _numeric(X, y, w, b)
        diagnose(lambda: close(dw, want_dw, rtol=RTOL, atol=ATOL, what="dL/dw"),
                [(lambda: resembles(dw, -want_dw), "dL/dw points the wrong way: the residual is y_hat - y, not y - y_hat"),
                 (lambda: resembles(dw, want_dw / 2), "dL/dw is half the gradient: the derivative of r**2 is 2 r"),
                 (lambda: resembles(dw, want_dw * len(y)), "dL/dw is n times too large: average over the samples"),
                 (lambda: resembles(dw, want_dw / len(y)), "dL/dw is divided by n twice")])
        diagnose(lambda: close(number(db, "dL/db"), want_db, rtol=RTOL, atol=ATOL, what="dL/db"),
                [(lambda: resembles(db, -want_db), "dL/db points the wrong way: the residual is y_hat - y")])
        close(dw, num_dw, rtol=1e-5, atol=1e-7, what="dL/dw against finite differences")
        _inputs_kept(r, {0: (X, "X"), 1: (y, "y"), 2: (w, "w")})
    return Case("test_gradients", name, call("gradients", X, y, w, b), check, visible)


def step_case(w, b, dw, db, lr, name, visible=False):
    def check(r):
        new_w, new_b = _items(r.value, 2, "gd_step")
        want_w, want_b = gd_step(w, b, dw, db, lr)
        diagnose(lambda: close(new_w, want_w, rtol=RTOL, atol=ATOL, what="the new w"),
                [(lambda: resembles(new_w, w + lr * dw), "the step goes up the gradient: subtract lr * dw")])
        close(number(new_b, "the new b"), want_b, rtol=RTOL, atol=ATOL, what="the new b")
        _inputs_kept(r, {0: (w, "w"), 2: (dw, "dw")})
        require(0 not in r.shares_input, "the new w shares memory with an input array: return a new array")
    return Case("test_gd_step", name, call("gd_step", w, b, dw, db, lr), check, visible)


def fit_case(X, y, lr, epochs, name, visible=False):
    def check(r):
        w, b, history = _items(r.value, 3, "fit")
        rw, rb, rh = fit(X, y, lr, epochs)
        h = np.asarray(history, dtype=float) if isinstance(history, (list, tuple, np.ndarray)) else history
        require(np.shape(h) == (epochs,), f"history needs one loss per epoch: {epochs} entries")
        diagnose(lambda: close(h, rh, rtol=RTOL, atol=ATOL * max(1.0, np.max(np.abs(rh), initial=0)),
                              what="history (the loss before each step)"),
                [(lambda: resembles(h[1:], rh[1:]) and not resembles(h[:1], rh[:1]),
                  "history[0] must be the loss of the starting point w = 0, b = 0"),
                 (lambda: resembles(h[:-1], rh[1:]), "record the loss before each step, not after it")])
        close(w, rw, rtol=RTOL, atol=ATOL, what="the final w")
        close(number(b, "the final b"), rb, rtol=RTOL, atol=ATOL, what="the final b")
        _inputs_kept(r, {0: (X, "X"), 1: (y, "y")})
    return Case("test_fit", name, call("fit", X, y, lr, epochs), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    yield predict_case(X, np.array([0.5, -1.0]), 2.0, "three rows, two features, b = 2", visible=True)
    yield predict_case(X, np.array([0.5, -1.0]), 0.0, "the same with b = 0 (then it is X @ w)", visible=True)
    X, y = np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([1.0, 2.0, 3.0, 4.0])
    for w, b, what in ((1.0, 0.0, "a perfect fit: loss 0"), (1.0, 1.0, "every residual 1: loss 1"),
                       (0.0, 0.0, "w = 0, b = 0: loss (1 + 4 + 9 + 16) / 4 = 7.5")):
        yield loss_case(X, y, np.array([w]), b, what, visible=True)
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
    yield gradient_case(X, y, rng.standard_normal(3), 0.5, "20 samples, 3 features", visible=True)
    yield step_case(np.array([1.0, -2.0]), 3.0, np.array([0.5, -4.0]), 2.0, 0.1,
                    "w - lr * dw and b - lr * db, inputs unchanged", visible=True)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 3))
    y = X @ np.array([2.0, -1.0, 0.5]) + 3.0 + 0.01 * rng.standard_normal(200)
    yield fit_case(X, y, 0.1, 300, "300 epochs on 200 samples", visible=True)
    yield fit_case(X, y, 0.1, 1, "one epoch: exactly one step from zero", visible=True)
