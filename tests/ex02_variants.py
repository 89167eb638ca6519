"""Implementations of ex02 a student might hand in (see ex01_variants for the contract)."""

_ITER_OK = (
    "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
    "    order = rng.permutation(n)\n"
    "    stop = n - n % batch_size if drop_last else n\n"
    "    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n")

WRONG = {
    "iterator_never_shuffles": ("test_minibatch_indices", {"minibatch_indices": (
        "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
        "    order = np.arange(n)\n"
        "    stop = n - n % batch_size if drop_last else n\n"
        "    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n")}),
    "iterator_uses_global_random_state": ("test_minibatch_indices", {"minibatch_indices": (
        "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
        "    order = np.random.permutation(n)\n"
        "    stop = n - n % batch_size if drop_last else n\n"
        "    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n")}),
    "iterator_samples_with_replacement": ("test_minibatch_indices", {"minibatch_indices": (
        "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
        "    order = rng.integers(0, n, size=n)\n"
        "    stop = n - n % batch_size if drop_last else n\n"
        "    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n")}),
    "iterator_always_drops_the_last_batch": ("test_minibatch_indices", {"minibatch_indices": (
        "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
        "    order = rng.permutation(n)\n"
        "    return [order[i:i + batch_size] for i in range(0, n - batch_size + 1, batch_size)]\n")}),
    "updates_average_over_all_samples": ("test_sgd_updates", {"sgd_updates": (
        "def sgd_updates(X, y, w, b, lr, batches):\n"
        "    losses = []\n"
        "    for idx in batches:\n"
        "        r = X[idx] @ w + b - y[idx]\n"
        "        losses.append(float(np.mean(r ** 2)))\n"
        "        w = w - lr * 2.0 / len(y) * (X[idx].T @ r)\n"
        "        b = b - lr * 2.0 / len(y) * float(np.sum(r))\n"
        "    return w, b, losses\n")}),
    "updates_log_loss_after_the_step": ("test_sgd_updates", {"sgd_updates": (
        "def sgd_updates(X, y, w, b, lr, batches):\n"
        "    losses = []\n"
        "    for idx in batches:\n"
        "        r = X[idx] @ w + b - y[idx]\n"
        "        w = w - lr * 2.0 / len(idx) * (X[idx].T @ r)\n"
        "        b = b - lr * 2.0 / len(idx) * float(np.sum(r))\n"
        "        losses.append(float(np.mean((X[idx] @ w + b - y[idx]) ** 2)))\n"
        "    return w, b, losses\n")}),
    "updates_use_the_whole_data_set": ("test_sgd_updates", {"sgd_updates": (
        "def sgd_updates(X, y, w, b, lr, batches):\n"
        "    losses = []\n"
        "    for idx in batches:\n"
        "        r = X @ w + b - y\n"
        "        losses.append(float(np.mean(r[idx] ** 2)))\n"
        "        w = w - lr * 2.0 / len(y) * (X.T @ r)\n"
        "        b = b - lr * 2.0 / len(y) * float(np.sum(r))\n"
        "    return w, b, losses\n")}),
    "updates_modify_w_in_place": ("test_sgd_updates", {"sgd_updates": (
        "def sgd_updates(X, y, w, b, lr, batches):\n"
        "    losses = []\n"
        "    for idx in batches:\n"
        "        r = X[idx] @ w + b - y[idx]\n"
        "        losses.append(float(np.mean(r ** 2)))\n"
        "        w -= lr * 2.0 / len(idx) * (X[idx].T @ r)\n"
        "        b = b - lr * 2.0 / len(idx) * float(np.sum(r))\n"
        "    return w, b, losses\n")}),
    "train_shuffles_only_once": ("test_train", {"train": (
        "def train(X, y, lr, batch_size, epochs, seed=0):\n"
        "    rng = np.random.default_rng(seed)\n"
        "    w, b, out = np.zeros(X.shape[1]), 0.0, []\n"
        "    batches = minibatch_indices(len(y), batch_size, rng)\n"
        "    for _ in range(epochs):\n"
        "        w, b, _ = sgd_updates(X, y, w, b, lr, batches)\n"
        "        out.append(float(np.mean((X @ w + b - y) ** 2)))\n"
        "    return w, b, out\n")}),
    "train_ignores_the_seed": ("test_train", {"train": (
        "def train(X, y, lr, batch_size, epochs, seed=0):\n"
        "    rng = np.random.default_rng(0)\n"
        "    w, b, out = np.zeros(X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs):\n"
        "        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, rng))\n"
        "        out.append(float(np.mean((X @ w + b - y) ** 2)))\n"
        "    return w, b, out\n")}),
    "train_records_loss_before_the_epoch": ("test_train", {"train": (
        "def train(X, y, lr, batch_size, epochs, seed=0):\n"
        "    rng = np.random.default_rng(seed)\n"
        "    w, b, out = np.zeros(X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs):\n"
        "        out.append(float(np.mean((X @ w + b - y) ** 2)))\n"
        "        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, rng))\n"
        "    return w, b, out\n")}),
    "train_drops_the_partial_batch": ("test_train", {"train": (
        "def train(X, y, lr, batch_size, epochs, seed=0):\n"
        "    rng = np.random.default_rng(seed)\n"
        "    w, b, out = np.zeros(X.shape[1]), 0.0, []\n"
        "    for _ in range(epochs):\n"
        "        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, rng, drop_last=True))\n"
        "        out.append(float(np.mean((X @ w + b - y) ** 2)))\n"
        "    return w, b, out\n")}),
}

CORRECT = {
    "split_and_generators": {
        "minibatch_indices": (
            "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
            "    idx = np.arange(n)\n"
            "    rng.shuffle(idx)\n"
            "    batches = np.array_split(idx, range(batch_size, n, batch_size))\n"
            "    if drop_last and batches and len(batches[-1]) < batch_size:\n"
            "        batches = batches[:-1]\n"
            "    return [b for b in batches if len(b)]\n"),
        "sgd_updates": (
            "def sgd_updates(X, y, w, b, lr, batches):\n"
            "    w = np.array(w, dtype=float)\n"
            "    losses = np.zeros(0)\n"
            "    for idx in batches:\n"
            "        A = np.hstack([X[idx], np.ones((len(idx), 1))])\n"
            "        theta = np.append(w, b)\n"
            "        r = A @ theta - y[idx]\n"
            "        losses = np.append(losses, r @ r / len(r))\n"
            "        theta = theta - lr * (2 / len(r)) * A.T @ r\n"
            "        w, b = theta[:-1], theta[-1]\n"
            "    return w, b, losses\n"),
        "train": (
            "def train(X, y, lr, batch_size, epochs, seed=0):\n"
            "    gen = np.random.default_rng(seed)\n"
            "    w, b = np.zeros(X.shape[1]), 0.0\n"
            "    history = np.empty(epochs)\n"
            "    for e in range(epochs):\n"
            "        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, gen, drop_last=False))\n"
            "        history[e] = mse(X, y, w, b)\n"
            "    return w, b, history\n"
            "\n"
            "def mse(X, y, w, b):\n"
            "    return np.mean(np.square(X.dot(w) + b - y))\n"),
        "why_floor": "The mini-batch gradient is noisy even at the optimum; the noise variance scales like 1/b, and each step of size lr turns it into a jitter, so the loss settles at a floor that grows with lr and falls with b. Decay lr or grow b to reach L*.",
    },
    "choice_without_replacement": {
        "minibatch_indices": (
            "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
            "    perm = rng.choice(n, size=n, replace=False)\n"
            "    out = []\n"
            "    start = 0\n"
            "    while start < n:\n"
            "        chunk = perm[start:start + batch_size]\n"
            "        if len(chunk) == batch_size or not drop_last:\n"
            "            out.append(chunk)\n"
            "        start += batch_size\n"
            "    return out\n"),
        "sgd_updates": (
            "def sgd_updates(X, y, w, b, lr, batches):\n"
            "    losses = []\n"
            "    for idx in batches:\n"
            "        m = len(idx)\n"
            "        err = np.einsum('ij,j->i', X[idx], w) + b - y[idx]\n"
            "        losses.append(np.dot(err, err) / m)\n"
            "        w = w - (2 * lr / m) * np.einsum('ij,i->j', X[idx], err)\n"
            "        b = b - (2 * lr / m) * err.sum()\n"
            "    return w, b, losses\n"),
    },
}
