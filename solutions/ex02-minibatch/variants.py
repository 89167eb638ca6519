"""Implementations of ex02 a student might hand in (the contract is in gdcourse.grading.variants).

Each WRONG one is the right answer with one mistake (``edited``), in the one answer cell it breaks."""

from gdcourse.grading.variants import edited

_ITER_OK = (
    "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
    "    order = rng.permutation(n)\n"
    "    stop = n - n % batch_size if drop_last else n\n"
    "    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n")

_UPD_OK = (
    "def sgd_updates(X, y, w, b, lr, batches):\n"
    "    losses = []\n"
    "    for idx in batches:\n"
    "        Xb, yb = X[idx], y[idx]\n"
    "        r = Xb @ w + b - yb\n"
    "        losses.append(float(np.mean(r ** 2)))\n"
    "        w = w - lr * 2.0 / len(idx) * (Xb.T @ r)\n"
    "        b = b - lr * 2.0 / len(idx) * float(np.sum(r))\n"
    "    return w, b, losses\n")

_TRAIN_OK = (
    "def train(X, y, lr, batch_size, epochs, seed=0):\n"
    "    rng = np.random.default_rng(seed)\n"
    "    w, b = np.zeros(X.shape[1]), 0.0\n"
    "    epoch_losses = []\n"
    "    for _ in range(epochs):\n"
    "        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, rng))\n"
    "        epoch_losses.append(float(np.mean((X @ w + b - y) ** 2)))\n"
    "    return w, b, epoch_losses\n")

_LOOP = "    for _ in range(epochs):\n"
_STEP = "        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, rng))\n"


def _iterator(*edits):
    return {"minibatch_indices": edited(_ITER_OK, *edits)}


def _updates(*edits):
    return {"sgd_updates": edited(_UPD_OK, *edits)}


def _train(*edits):
    return {"train": edited(_TRAIN_OK, *edits)}


WRONG = {
    # minibatch_indices
    "iterator_never_shuffles": ("test_minibatch_indices", _iterator(
        ("rng.permutation(n)", "np.arange(n)"))),
    "iterator_uses_global_random_state": ("test_minibatch_indices", _iterator(
        ("rng.permutation(n)", "np.random.permutation(n)"))),
    "iterator_makes_its_own_generator": ("test_minibatch_indices", _iterator(
        ("rng.permutation(n)", "np.random.default_rng(0).permutation(n)"))),
    "iterator_samples_with_replacement": ("test_minibatch_indices", _iterator(
        ("rng.permutation(n)", "rng.integers(0, n, size=n)"))),
    "iterator_always_drops_the_last_batch": ("test_minibatch_indices", _iterator(
        ("stop = n - n % batch_size if drop_last else n", "stop = n - n % batch_size"))),
    "iterator_ignores_drop_last": ("test_minibatch_indices", _iterator(
        ("stop = n - n % batch_size if drop_last else n", "stop = n"))),
    "iterator_drops_the_same_indices_every_epoch": ("test_minibatch_indices", _iterator(
        ("order = rng.permutation(n)\n    stop = n - n % batch_size if drop_last else n\n",
         "stop = n - n % batch_size if drop_last else n\n    order = rng.permutation(stop)\n"))),
    "iterator_rotates_instead_of_shuffling": ("test_minibatch_indices", _iterator(
        ("rng.permutation(n)", "np.roll(np.arange(n), rng.integers(n))"))),
    "iterator_shuffles_the_batches_not_the_indices": ("test_minibatch_indices", _iterator(
        ("    order = rng.permutation(n)\n", "    order = np.arange(n)\n"),
        ("    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n",
         "    batches = [order[i:i + batch_size] for i in range(0, stop, batch_size)]\n"
         "    return [batches[k] for k in rng.permutation(len(batches))]\n"))),
    # sgd_updates
    "updates_average_over_all_samples": ("test_sgd_updates", _updates(
        ("w = w - lr * 2.0 / len(idx)", "w = w - lr * 2.0 / len(y)"),
        ("b = b - lr * 2.0 / len(idx)", "b = b - lr * 2.0 / len(y)"))),
    "updates_divide_by_the_first_batch_size": ("test_sgd_updates", _updates(
        ("    losses = []\n", "    losses = []\n    m = len(batches[0]) if len(batches) else 1\n"),
        ("w = w - lr * 2.0 / len(idx)", "w = w - lr * 2.0 / m"),
        ("b = b - lr * 2.0 / len(idx)", "b = b - lr * 2.0 / m"))),
    "updates_log_loss_after_the_step": ("test_sgd_updates", _updates(
        ("        losses.append(float(np.mean(r ** 2)))\n", ""),
        ("    return w, b, losses\n",
         "        losses.append(float(np.mean((Xb @ w + b - yb) ** 2)))\n    return w, b, losses\n"))),
    "updates_use_the_whole_data_set": ("test_sgd_updates", _updates(
        ("Xb, yb = X[idx], y[idx]", "Xb, yb = X, y"),
        ("losses.append(float(np.mean(r ** 2)))", "losses.append(float(np.mean(r[idx] ** 2)))"))),
    "updates_modify_w_in_place": ("test_sgd_updates", _updates(
        ("        w = w - lr * 2.0 / len(idx) * (Xb.T @ r)\n", "        w -= lr * 2.0 / len(idx) * (Xb.T @ r)\n"))),
    "updates_use_unique_rows_of_a_batch": ("test_sgd_updates", _updates(
        ("Xb, yb = X[idx], y[idx]", "mask = np.isin(np.arange(len(y)), idx)\n        Xb, yb = X[mask], y[mask]"),
        ("2.0 / len(idx) * (Xb.T @ r)", "2.0 / len(yb) * (Xb.T @ r)"),
        ("2.0 / len(idx) * float", "2.0 / len(yb) * float"))),
    # train
    "train_shuffles_only_once": ("test_train", _train(
        (_LOOP + _STEP, "    batches = minibatch_indices(len(y), batch_size, rng)\n" + _LOOP
         + "        w, b, _ = sgd_updates(X, y, w, b, lr, batches)\n"))),
    "train_reseeds_every_epoch": ("test_train", _train(
        ("    rng = np.random.default_rng(seed)\n", ""),
        (_LOOP, _LOOP + "        rng = np.random.default_rng(seed)\n"))),
    "train_ignores_the_seed": ("test_train", _train(
        ("np.random.default_rng(seed)", "np.random.default_rng(0)"))),
    "train_records_loss_before_the_epoch": ("test_train", _train(
        (_STEP + "        epoch_losses.append(float(np.mean((X @ w + b - y) ** 2)))\n",
         "        epoch_losses.append(float(np.mean((X @ w + b - y) ** 2)))\n" + _STEP))),
    "train_drops_the_partial_batch": ("test_train", _train(
        ("minibatch_indices(len(y), batch_size, rng)", "minibatch_indices(len(y), batch_size, rng, drop_last=True)"))),
    "train_starts_from_random_weights": ("test_train", _train(
        ("w, b = np.zeros(X.shape[1]), 0.0", "w, b = np.full(X.shape[1], 0.01), 0.0"))),
    "train_records_the_last_batch_loss": ("test_train", _train(
        ("w, b, _ = sgd_updates(", "w, b, batch_losses = sgd_updates("),
        ("epoch_losses.append(float(np.mean((X @ w + b - y) ** 2)))", "epoch_losses.append(batch_losses[-1])"))),
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
    "argsort_sorted_batches_one_batch_at_a_time": {
        # a random permutation by sorting random keys; each batch sorted (the order inside a
        # batch does not matter); updates on a copy, in place, row by row; train feeds one batch per call
        "minibatch_indices": (
            "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
            "    order = np.argsort(rng.random(n), kind='stable')\n"
            "    batches = []\n"
            "    for start in range(0, n, batch_size):\n"
            "        piece = order[start:start + batch_size]\n"
            "        if drop_last and len(piece) < batch_size:\n"
            "            break\n"
            "        batches.append(np.sort(piece))\n"
            "    return batches\n"),
        "sgd_updates": (
            "def sgd_updates(X, y, w, b, lr, batches):\n"
            "    w = w.copy()\n"
            "    losses = []\n"
            "    for idx in batches:\n"
            "        gw, gb, total = np.zeros_like(w), 0.0, 0.0\n"
            "        for i in idx:\n"
            "            r = X[i] @ w + b - y[i]\n"
            "            total += r * r\n"
            "            gw += 2 * r * X[i]\n"
            "            gb += 2 * r\n"
            "        losses.append(total / len(idx))\n"
            "        w -= lr * gw / len(idx)\n"
            "        b -= lr * gb / len(idx)\n"
            "    return w, b, losses\n"),
        "train": (
            "def train(X, y, lr, batch_size, epochs, seed=0):\n"
            "    rng = np.random.default_rng(seed)\n"
            "    n, d = X.shape\n"
            "    w, b, history = np.zeros(d), 0.0, []\n"
            "    for epoch in range(epochs):\n"
            "        for batch in minibatch_indices(n, batch_size, rng):\n"
            "            w, b, _ = sgd_updates(X, y, w, b, lr, [batch])\n"
            "        r = y - X @ w - b\n"
            "        history.append(r @ r / n)\n"
            "    return w, b, history\n"),
    },
    "fisher_yates_by_hand": {
        "minibatch_indices": (
            "def minibatch_indices(n, batch_size, rng, drop_last=False):\n"
            "    idx = list(range(n))\n"
            "    for i in range(n - 1, 0, -1):\n"
            "        j = int(rng.integers(0, i + 1))\n"
            "        idx[i], idx[j] = idx[j], idx[i]\n"
            "    idx = np.array(idx, dtype=np.int64)\n"
            "    count = n // batch_size if drop_last else -(-n // batch_size)\n"
            "    return [idx[k * batch_size:(k + 1) * batch_size] for k in range(count)]\n"),
        "train": (
            "def train(X, y, lr, batch_size, epochs, seed=0):\n"
            "    w = np.zeros(X.shape[1])\n"
            "    b = 0.0\n"
            "    rng = np.random.default_rng(seed=seed)\n"
            "    out = []\n"
            "    epoch = 0\n"
            "    while epoch < epochs:\n"
            "        batches = minibatch_indices(X.shape[0], batch_size, rng, False)\n"
            "        w, b, _ = sgd_updates(X, y, w, b, lr, batches)\n"
            "        out.append(np.mean((predict(X, w, b) - y) ** 2))\n"
            "        epoch += 1\n"
            "    return w, b, np.array(out)\n"
            "\n"
            "def predict(X, w, b):\n"
            "    return X @ w + b\n"),
    },
}
