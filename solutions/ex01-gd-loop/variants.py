"""Implementations of ex01 that a student might hand in (the contract is in gdcourse.grading.variants)."""

WRONG = {
    "predict_forgets_bias": ("test_predict", {"predict": "def predict(X, w, b):\n    return X @ w\n"}),
    "loss_sums_instead_of_mean": ("test_mse_loss", {"mse_loss": "def mse_loss(X, y, w, b):\n    return float(np.sum((X @ w + b - y) ** 2))\n"}),
    "gradient_missing_factor_two": ("test_gradients", {"gradients": (
        "def gradients(X, y, w, b):\n"
        "    r = X @ w + b - y\n"
        "    return X.T @ r / len(y), float(np.mean(r))\n")}),
    "gradient_residual_sign_flipped": ("test_gradients", {"gradients": (
        "def gradients(X, y, w, b):\n"
        "    r = y - (X @ w + b)\n"
        "    return 2 * X.T @ r / len(y), 2 * float(np.mean(r))\n")}),
    "gradient_divides_by_features": ("test_gradients", {"gradients": (
        "def gradients(X, y, w, b):\n"
        "    r = X @ w + b - y\n"
        "    return 2 * X.T @ r / X.shape[1], 2 * float(np.sum(r)) / X.shape[1]\n")}),
    "step_climbs_the_gradient": ("test_gd_step", {"gd_step": "def gd_step(w, b, dw, db, lr):\n    return w + lr * dw, b + lr * db\n"}),
    "step_modifies_inputs_in_place": ("test_gd_step", {"gd_step": "def gd_step(w, b, dw, db, lr):\n    w -= lr * dw\n    return w, b - lr * db\n"}),
    "fit_records_loss_after_the_step": ("test_fit", {"fit": (
        "def fit(X, y, lr, epochs):\n"
        "    w, b, history = np.zeros(X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs):\n"
        "        dw, db = gradients(X, y, w, b)\n"
        "        w, b = gd_step(w, b, dw, db, lr)\n"
        "        history.append(mse_loss(X, y, w, b))\n"
        "    return w, b, history\n")}),
    "fit_one_step_short": ("test_fit", {"fit": (
        "def fit(X, y, lr, epochs):\n"
        "    w, b, history = np.zeros(X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs - 1):\n"
        "        history.append(mse_loss(X, y, w, b))\n"
        "        dw, db = gradients(X, y, w, b)\n"
        "        w, b = gd_step(w, b, dw, db, lr)\n"
        "    return w, b, history\n")}),
    "fit_random_start": ("test_fit", {"fit": (
        "def fit(X, y, lr, epochs):\n"
        "    w, b, history = np.random.default_rng(0).normal(size=X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs):\n"
        "        history.append(mse_loss(X, y, w, b))\n"
        "        dw, db = gradients(X, y, w, b)\n"
        "        w, b = gd_step(w, b, dw, db, lr)\n"
        "    return w, b, history\n")}),
    "fit_stops_when_the_loss_rises": ("test_fit", {"fit": (
        "def fit(X, y, lr, epochs):\n"
        "    w, b, history = np.zeros(X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs):\n"
        "        loss = mse_loss(X, y, w, b)\n"
        "        if history and loss > history[-1]:\n"
        "            break  # a guard the task did not ask for\n"
        "        history.append(loss)\n"
        "        dw, db = gradients(X, y, w, b)\n"
        "        w, b = gd_step(w, b, dw, db, lr)\n"
        "    return w, b, history\n")}),
    "step_moves_b_by_the_mean_of_dw": ("test_gd_step", {"gd_step": (
        "def gd_step(w, b, dw, db, lr):\n    return w - lr * dw, b - lr * np.mean(dw)\n")}),
}

CORRECT = {
    "plain_python_loops": {
        "predict": (
            "def predict(X, w, b):\n"
            "    out = np.empty(len(X))\n"
            "    for i, row in enumerate(X):\n"
            "        out[i] = sum(x * wj for x, wj in zip(row, w)) + b\n"
            "    return out\n"),
        "mse_loss": (
            "def mse_loss(X, y, w, b):\n"
            "    total = 0.0\n"
            "    for i in range(len(y)):\n"
            "        total += (predict(X[i:i + 1], w, b)[0] - y[i]) ** 2\n"
            "    return total / len(y)\n"),
        "gradients": (
            "def gradients(X, y, w, b):\n"
            "    n, d = X.shape\n"
            "    dw, db = [0.0] * d, 0.0\n"
            "    for i in range(n):\n"
            "        r = sum(X[i, j] * w[j] for j in range(d)) + b - y[i]\n"
            "        for j in range(d):\n"
            "            dw[j] += 2 * r * X[i, j] / n\n"
            "        db += 2 * r / n\n"
            "    return np.array(dw), db\n"),
        "gd_step": (
            "def gd_step(w, b, dw, db, lr):\n"
            "    new_w = w.copy()\n"
            "    for j in range(len(new_w)):\n"
            "        new_w[j] -= lr * dw[j]\n"
            "    return new_w, b - lr * db\n"),
        "fit": (
            "def fit(X, y, lr, epochs):\n"
            "    w, b = np.zeros(X.shape[1]), 0.0\n"
            "    history = np.zeros(epochs)\n"
            "    t = 0\n"
            "    while t < epochs:\n"
            "        history[t] = mse_loss(X, y, w, b)\n"
            "        w, b = gd_step(w, b, *gradients(X, y, w, b), lr)\n"
            "        t += 1\n"
            "    return w, b, history\n"),
        "why_diverge": "Each step multiplies the error along an eigenvector of the Hessian by 1 - lr*lambda; above 2/lambda_max that factor is below -1, so the error flips sign and grows.",
    },
    "other_formulas": {
        "predict": "def predict(X, w, b):\n    return np.einsum('nd,d->n', X, w) + b\n",
        "mse_loss": (
            "def mse_loss(X, y, w, b):\n"
            "    r = np.dot(X, w) + b - y\n"
            "    return r @ r / r.size\n"),
        "gradients": (
            "def gradients(X, y, w, b):\n"
            "    n = len(y)\n"
            "    # expanded: 2/n (X^T X w + b X^T 1 - X^T y)\n"
            "    dw = 2.0 * (X.T @ (X @ w) + b * X.sum(axis=0) - X.T @ y) / n\n"
            "    db = 2.0 * (np.mean(X @ w) + b - np.mean(y))\n"
            "    return dw, db\n"),
        "gd_step": "def gd_step(w, b, dw, db, lr):\n    return np.subtract(w, np.multiply(lr, dw)), b - lr * db\n",
        "fit": (
            "def fit(X, y, lr, epochs):\n"
            "    theta = np.zeros(X.shape[1] + 1)  # w and b stacked\n"
            "    A = np.hstack([X, np.ones((len(X), 1))])\n"
            "    history = []\n"
            "    for _ in range(epochs):\n"
            "        r = A @ theta - y\n"
            "        history.append(np.mean(r ** 2))\n"
            "        theta = theta - lr * 2 / len(y) * A.T @ r\n"
            "    return theta[:-1], theta[-1], history\n"),
        "why_diverge": "Quadratic loss: the update is linear, error -> (I - lr H) error. Components along large-curvature directions blow up once lr > 2/lambda_max.",
    },
    "copies_and_lists": {
        "predict": "def predict(X, w, b):\n    return X.dot(w) + b\n",
        "mse_loss": "def mse_loss(X, y, w, b):\n    return np.average(np.square(y - predict(X, w, b)))\n",
        "gradients": (
            "def gradients(X, y, w, b):\n"
            "    r = predict(X, w, b) - y\n"
            "    return 2 * np.mean(r[:, None] * X, axis=0), 2 * np.mean(r)\n"),
        "gd_step": (
            "def gd_step(w, b, dw, db, lr):\n"
            "    w = np.array(w, dtype=float)  # a copy, then in place on the copy\n"
            "    w -= lr * np.asarray(dw)\n"
            "    return w, b - lr * db\n"),
        "fit": (
            "def fit(X, y, lr, epochs):\n"
            "    w, b = np.zeros(X.shape[1]), 0.0\n"
            "    history = []\n"
            "    for epoch in range(epochs):\n"
            "        dw, db = gradients(X, y, w, b)\n"
            "        history.append(mse_loss(X, y, w, b))\n"
            "        w, b = gd_step(w, b, dw, db, lr)\n"
            "    return list(w), b, history\n"),
    },
}
