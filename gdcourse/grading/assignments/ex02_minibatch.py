"""ex02, mini-batches: the course's reference, the probes, the case builders and the visible cases.

- ``minibatch_indices`` takes a ``np.random.Generator``, which is not data: its probes make the
  generator from a seed in the sandbox (:func:`epochs_probe`, :func:`splits_probe`). Any correct
  way of shuffling passes, so it is checked by properties, never against fixed batches: the
  sizes of the batches, every index at most once (exactly once without ``drop_last``), integer
  arrays, the same batches from the same generator state whatever NumPy's *global* random
  state is, other batches from the next call on the same generator, and, over thousands of
  epochs, that every split of ``range(n)`` into batches of those sizes is equally likely
  (a frequency test with a 6-sigma band: a correct answer fails it with odds below 1e-6).
- ``sgd_updates`` and ``train`` are compared with the reference with a relative tolerance of
  ``RTOL`` (plus ``ATOL`` times the size of the values, for values near zero), as the
  statement says: any order of the float operations passes. ``train``'s cases run with the
  course's ``minibatch_indices`` and ``sgd_updates`` (stand-ins), and the statement fixes how
  ``train`` uses them (one generator made once, ``minibatch_indices(len(y), batch_size, rng)``
  every epoch, the whole-data loss after each epoch), so its iterates are the reference's.
"""

from __future__ import annotations

import math
from collections import Counter
from contextlib import contextmanager

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, close, diagnose, number, probe, require, resembles, \
    unchanged

RTOL, ATOL = 1e-9, 1e-12  # stated in the exercise


# --- the reference ----------------------------------------------------------------------

def minibatch_indices(n, batch_size, rng, drop_last=False):
    order = rng.permutation(n)
    stop = n - n % batch_size if drop_last else n
    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]


def sgd_updates(X, y, w, b, lr, batches):
    losses = []
    for idx in batches:
        Xb, yb = X[idx], y[idx]
        r = Xb @ w + b - yb
        losses.append(float(np.mean(r ** 2)))
        w = w - lr * 2.0 / len(idx) * (Xb.T @ r)
        b = b - lr * 2.0 / len(idx) * float(np.sum(r))
    return w, b, losses


def train(X, y, lr, batch_size, epochs, seed=0):
    rng = np.random.default_rng(seed)
    w, b = np.zeros(X.shape[1]), 0.0
    epoch_losses = []
    for _ in range(epochs):
        w, b, _ = sgd_updates(X, y, w, b, lr, minibatch_indices(len(y), batch_size, rng))
        epoch_losses.append(float(np.mean((X @ w + b - y) ** 2)))
    return w, b, epoch_losses


REFERENCE = {"minibatch_indices": minibatch_indices, "sgd_updates": sgd_updates, "train": train}


# --- probes (run in the sandbox, and in the student's kernel for the self-check) ----------

@contextmanager
def _global_numpy_seed(seed):
    """NumPy's global generator seeded with ``seed`` (None: left as it is), and put back afterwards."""
    state = np.random.get_state()
    try:
        if seed is not None:
            np.random.seed(int(seed))
        yield
    finally:
        np.random.set_state(state)


def _batches(fn, n, batch_size, rng, drop_last):
    if drop_last is None:  # the default, as train calls it
        return fn(int(n), int(batch_size), rng)
    return fn(int(n), int(batch_size), rng, drop_last=bool(drop_last))


def _epoch_report(batches) -> dict:
    """One call's batches, compactly: ``{"order": all indices, batch after batch, "sizes": [len of each]}``
    (one array crosses the wire, not one per batch), or ``{"wrong": "list" | "batch"}`` (not a list;
    a batch that is not a 1-D integer array)."""
    if not isinstance(batches, (list, tuple)):
        return {"wrong": "list"}
    arrays = []
    for batch in batches:
        a = np.asarray(batch) if isinstance(batch, (np.ndarray, list, tuple)) else None
        if a is None or a.ndim != 1 or not (a.dtype.kind in "iu" or (a.size == 0 and a.dtype.kind == "f")):
            return {"wrong": "batch"}
        arrays.append(a.astype(np.int64))
    return {"order": np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64),
            "sizes": [int(len(a)) for a in arrays]}


def epochs_probe(minibatch_indices, n, batch_size, runs, drop_last=None):
    """``runs`` is a list of ``(seed, global_seed, epochs)``: for each, a fresh
    ``rng = np.random.default_rng(seed)``, NumPy's global generator seeded with ``global_seed``
    (None: untouched; restored afterwards in any case), and ``epochs`` calls of the function with
    that one ``rng``. Reports, for each run, the list of each call's :func:`_epoch_report`."""
    out = []
    for seed, global_seed, epochs in runs:
        with _global_numpy_seed(global_seed):
            rng = np.random.default_rng(int(seed))
            out.append([_epoch_report(_batches(minibatch_indices, n, batch_size, rng, drop_last))
                        for _ in range(int(epochs))])
    return out


def splits_probe(minibatch_indices, n, batch_size, seed, epochs, drop_last=None):
    """``epochs`` calls with one ``rng = np.random.default_rng(seed)``; reports an integer array of
    shape ``(epochs, n)``: entry ``[e, i]`` is the number of the batch that holds index ``i`` in
    epoch ``e`` (-1: in no batch). Compact, so that thousands of epochs cross as one array."""
    rng = np.random.default_rng(int(seed))
    labels = np.full((int(epochs), int(n)), -1, dtype=np.int64)
    for e in range(int(epochs)):
        for k, batch in enumerate(_batches(minibatch_indices, n, batch_size, rng, drop_last)):
            labels[e, np.asarray(batch)] = k
    return labels


# --- checks -----------------------------------------------------------------------------

def _items(value, n, what):
    require(isinstance(value, (tuple, list)) and len(value) == n, f"{what} should return a tuple of {n}")
    return value


def _sizes(n, batch_size, drop_last):
    full, rest = divmod(n, batch_size)
    return [batch_size] * full + ([rest] if rest and not drop_last else [])


def _epoch(report, n, batch_size, drop_last) -> list:
    """One epoch's batches (as :func:`_epoch_report` gives them) are well formed: a list of 1-D integer
    arrays of the right sizes, every index of range(n) at most once (exactly once without drop_last).
    Returns them as arrays."""
    require(isinstance(report, dict), "the probe reported no batches")
    if "wrong" in report:
        require(report["wrong"] != "list", "minibatch_indices should return a list of index arrays")
        require(False, "each batch should be a 1-D array of integer indices (X[batch] must select rows)")
    order, sizes = np.asarray(report.get("order")), report.get("sizes")
    require(order.ndim == 1 and order.dtype.kind in "iu" and isinstance(sizes, list)
            and all(type(k) is int and k >= 0 for k in sizes) and sum(sizes) == len(order),
            "the probe reported no batches")
    arrays = np.split(order.astype(np.int64), np.cumsum(sizes)[:-1]) if sizes else []
    want = _sizes(n, batch_size, drop_last)
    if sizes != want:
        hints = {True: "with drop_last=True the final, smaller batch is left out",
                 False: "with drop_last=False the final, smaller batch is kept"}
        hint = hints[drop_last] if n % batch_size and len(sizes) != len(want) else \
            "cut the shuffled indices into consecutive pieces of batch_size (the last one may be smaller)"
        raise Fail(f"{n} indices in batches of {batch_size} (drop_last={drop_last}) should give sizes {want}, "
                   f"got {sizes}\n{hint}", summary=f"the batch sizes are wrong: {hint}")
    together = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    require(together.size == 0 or (together.min() >= 0 and together.max() < n), "the indices should lie in range(n)")
    require(len(np.unique(together)) == len(together),
            "an index appears twice in one epoch: shuffle (a permutation), do not sample with replacement")
    return arrays


def _same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def batches_case(n, batch_size, seed, name, drop_last=None, visible=False):
    """One epoch from a fresh generator: well formed; and the same generator state gives the same batches,
    whatever NumPy's global random state is."""
    runs = [(seed, 1, 1), (seed, 2, 1), (seed, None, 1)]

    def check(r):
        require(isinstance(r.value, list) and len(r.value) == 3, "the probe reported no batches")
        epochs = [_epoch(run[0], n, batch_size, bool(drop_last)) for run in r.value]
        require(_same(epochs[0], epochs[1]) and _same(epochs[0], epochs[2]),
                "the batches depend on NumPy's global random state (or are not reproducible): "
                "draw every random number from the rng you are given, not np.random")
    return Case("test_minibatch_indices", name,
                probe("minibatch_indices", "epochs_probe", n, batch_size, runs, drop_last=drop_last), check, visible)


def shuffled_case(n, batch_size, seeds, name, visible=False):
    """Different generators give different orders, and the order is not range(n)'s (n large: a correct
    shuffle gives the identity or repeats another seed's order with odds like 1/n!)."""
    runs = [(s, None, 1) for s in seeds]

    def check(r):
        require(isinstance(r.value, list) and len(r.value) == len(seeds), "the probe reported no batches")
        orders = [np.concatenate(_epoch(run[0], n, batch_size, False)) for run in r.value]
        require(not any(np.array_equal(o, np.arange(n)) for o in orders),
                "the indices come in their original order: shuffle them with rng")
        require(len({o.tobytes() for o in orders}) == len(orders),
                "two different generators gave the same batches: shuffle with the rng you are given")
    return Case("test_minibatch_indices", name, probe("minibatch_indices", "epochs_probe", n, batch_size, runs),
                check, visible)


def epochs_differ_case(n, batch_size, seed, epochs, name, drop_last=None, visible=False):
    """Successive calls with one generator: every epoch well formed and each one different (the
    generator advances); with drop_last, every index is left out in some epochs, not always the same ones."""
    def check(r):
        require(isinstance(r.value, list) and len(r.value) == 1, "the probe reported no batches")
        got = [_epoch(batches, n, batch_size, bool(drop_last)) for batches in r.value[0]]
        require(len(got) == epochs, "the probe reported no batches")
        orders = {np.concatenate(e).tobytes() if e else b"" for e in got}
        require(len(orders) == epochs, "two epochs drawn from one generator gave the same batches: "
                                       "shuffle with rng on every call (do not reseed, do not cache an order)")
        if drop_last:
            kept = set(np.concatenate([np.concatenate(e) for e in got if e]).tolist())
            require(kept == set(range(n)), "drop_last always leaves out the same indices: "
                                           "shuffle all n indices first, then drop the final partial batch")
    return Case("test_minibatch_indices", name,
                probe("minibatch_indices", "epochs_probe", n, batch_size, [(seed, None, epochs)], drop_last=drop_last),
                check, visible)


def uniform_case(n, batch_size, seed, epochs, name, drop_last=None, visible=False):
    """Over ``epochs`` calls with one generator, every split of range(n) into batches of the stated sizes
    (which indices go to batch 0, 1, ..., and which are dropped) comes up equally often, within 6 sigma."""
    sizes = _sizes(n, batch_size, bool(drop_last))
    left = n - sum(sizes)
    outcomes = math.factorial(n) // (math.prod(math.factorial(s) for s in sizes) * math.factorial(left))

    def check(r):
        labels = np.asarray(r.value)
        require(labels.shape == (epochs, n) and labels.dtype.kind in "iu", "the probe reported no batches")
        counts = Counter(map(bytes, labels.astype(np.int8)))
        def batch_sizes(key):
            labels_of_epoch = np.frombuffer(key, dtype=np.int8).astype(np.int64)
            return sorted(np.bincount(labels_of_epoch + 1, minlength=len(sizes) + 1)[1:].tolist())

        valid = all(batch_sizes(k) == sorted(sizes) for k in counts)
        require(valid, "the batches have the wrong sizes in some epochs")
        p = 1 / outcomes
        mean, sigma = epochs * p, math.sqrt(epochs * p * (1 - p))
        worst = max([abs(c - mean) for c in counts.values()] + [mean if len(counts) < outcomes else 0.0])
        require(worst <= 6 * sigma,
                "the batches are not a uniform shuffle: some ways of splitting the indices into batches come up "
                "far more often than others (use rng.permutation(n), or rng.shuffle of all n indices, then cut)")
    return Case("test_minibatch_indices", name,
                probe("minibatch_indices", "splits_probe", n, batch_size, seed, epochs, drop_last=drop_last),
                check, visible)


def _batches_kept(r, batches) -> None:
    after = r.args_after[5] if len(r.args_after) > 5 else None
    same = isinstance(after, (list, tuple)) and len(after) == len(batches) and all(
        isinstance(a, np.ndarray) and np.array_equal(a, b) for a, b in zip(after, batches))
    require(same, "the batches were modified: leave the index arrays you are given as they are")


def _updates_variant(X, y, w, b, lr, batches, *, per="batch", loss_after=False, whole=False):
    """What a known mistake gives: dividing by n, recording the loss after the step, the whole data's gradient."""
    losses = []
    for idx in batches:
        rows = slice(None) if whole else idx
        r = X[rows] @ w + b - y[rows]
        m = len(y) if per == "all" else (len(batches[0]) if per == "first" else len(r))
        if not loss_after:
            losses.append(np.mean((X[idx] @ w + b - y[idx]) ** 2))
        w, b = w - lr * 2 / m * (X[rows].T @ r), b - lr * 2 / m * r.sum()
        if loss_after:
            losses.append(np.mean((X[idx] @ w + b - y[idx]) ** 2))
    return w, b, np.array(losses)


def updates_case(X, y, w, b, lr, batches, name, visible=False):
    batches = [np.asarray(i, dtype=np.int64) for i in batches]

    def check(r):
        new_w, new_b, losses = _items(r.value, 3, "sgd_updates")
        rw, rb, rl = sgd_updates(X, y, w, b, lr, batches)
        rl = np.asarray(rl, dtype=float)
        got_l = as_array(losses, "losses")
        require(got_l.shape == (len(batches),), f"losses needs one entry per batch: {len(batches)} entries")
        scale = ATOL * max(1.0, np.max(np.abs(rl), initial=0.0))
        hints = [(lambda: resembles(new_w, _updates_variant(X, y, w, b, lr, batches, per="all")[0]),
                  "the gradient is averaged over all n samples: divide by the size of the batch, len(batch)"),
                 (lambda: resembles(new_w, _updates_variant(X, y, w, b, lr, batches, per="first")[0]),
                  "every batch is divided by the first batch's size: use each batch's own size"),
                 (lambda: resembles(new_w, _updates_variant(X, y, w, b, lr, batches, whole=True)[0]),
                  "the step uses the gradient of the whole data set: use the batch's rows X[batch], y[batch]")]
        diagnose(lambda: close(got_l, rl, rtol=RTOL, atol=scale, what="losses (each batch's loss before its step)"),
                 [(lambda: resembles(got_l, _updates_variant(X, y, w, b, lr, batches, loss_after=True)[2]),
                   "losses[k] must be batch k's loss before update k, not after it")] + hints)
        diagnose(lambda: close(new_w, rw, rtol=RTOL, atol=ATOL * max(1.0, np.max(np.abs(rw), initial=0.0)),
                               what="the new w"), hints)
        close(number(new_b, "the new b"), rb, rtol=RTOL, atol=ATOL * max(1.0, abs(rb)), what="the new b")
        unchanged(r, 0, X, "X")
        unchanged(r, 1, y, "y")
        unchanged(r, 2, w, "w")
        _batches_kept(r, batches)
        if batches:
            require(0 not in r.shares_input, "the new w shares memory with the w passed in: return a new array")
    return Case("test_sgd_updates", name, call("sgd_updates", X, y, w, b, lr, batches), check, visible)


def _train_variant(X, y, lr, batch_size, epochs, seed, *, drop_last=False, reuse=False, reseed=False,
                   before=False):
    """What a known mistake of train gives."""
    rng = np.random.default_rng(seed)
    w, b, out = np.zeros(X.shape[1]), 0.0, []
    batches = minibatch_indices(len(y), batch_size, rng, drop_last)
    for e in range(epochs):
        if reseed:
            batches = minibatch_indices(len(y), batch_size, np.random.default_rng(seed), drop_last)
        elif e and not reuse:
            batches = minibatch_indices(len(y), batch_size, rng, drop_last)
        if before:
            out.append(np.mean((X @ w + b - y) ** 2))
        w, b, _ = sgd_updates(X, y, w, b, lr, batches)
        if not before:
            out.append(np.mean((X @ w + b - y) ** 2))
    return w, b, np.array(out)


def train_case(X, y, lr, batch_size, epochs, seed, name, visible=False):
    def check(r):
        w, b, history = _items(r.value, 3, "train")
        rw, rb, rh = train(X, y, lr, batch_size, epochs, seed)
        rh = np.asarray(rh, dtype=float)
        h = as_array(history, "epoch_losses")
        require(h.shape == (epochs,), f"epoch_losses needs one loss per epoch: {epochs} entries")

        def variant(**kw):
            return _train_variant(X, y, lr, batch_size, epochs, seed, **kw)

        def exact(a, b):  # as close as the grade asks, not just loosely
            return resembles(a, b, rtol=RTOL, atol=ATOL * max(1.0, np.max(np.abs(b), initial=0.0)))

        def w_is(other):
            return not exact(w, rw) and resembles(w, other)

        hints = [(lambda: w_is(variant(reuse=True)[0]) or w_is(variant(reseed=True)[0]),
                  "every epoch uses the same batches: make rng once, before the loop, and call "
                  "minibatch_indices(len(y), batch_size, rng) again in every epoch"),
                 (lambda: w_is(variant(drop_last=True)[0]),
                  "the final, smaller batch was left out: train uses drop_last=False"),
                 (lambda: w_is(_train_variant(X, y, lr, batch_size, epochs, 0)[0]),
                  "the seed is ignored: make the generator with np.random.default_rng(seed)")]
        diagnose(lambda: close(h, rh, rtol=RTOL, atol=ATOL * max(1.0, np.max(np.abs(rh), initial=0.0)),
                               what="epoch_losses (the whole-data loss after each epoch)"),
                 [(lambda: resembles(h, variant(before=True)[2]),
                   "record the whole-data loss after each epoch, not before it")] + hints
                 + [(lambda: epochs > 1 and exact(h[-1:], rh[-1:]) and not exact(h[:1], rh[:1]),
                     "the first epochs differ, the last ones agree: start from w = 0, b = 0"),
                    (lambda: exact(w, rw) and epochs > 0 and exact(number(b), rb),
                     "the weights are right but the losses are not: after each epoch record the mean squared "
                     "error over the whole data set (all n rows) at the epoch's final w and b"),
                    (lambda: epochs > 0 and not resembles(h[:1], rh[:1]),
                     "the first epoch already differs: start from w = 0, b = 0, and draw the first batches "
                     "from np.random.default_rng(seed)")])
        diagnose(lambda: close(w, rw, rtol=RTOL, atol=ATOL * max(1.0, np.max(np.abs(rw), initial=0.0)),
                               what="the final w"), hints)
        close(number(b, "the final b"), rb, rtol=RTOL, atol=ATOL * max(1.0, abs(rb)), what="the final b")
        unchanged(r, 0, X, "X")
        unchanged(r, 1, y, "y")
    return Case("test_train", name, call("train", X, y, lr, batch_size, epochs, seed=seed), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield batches_case(10, 4, 0, "10 indices in batches of 4: sizes [4, 4, 2], every index once, "
                                 "the same generator state gives the same batches", visible=True)
    yield batches_case(10, 4, 0, "drop_last=True: sizes [4, 4]", drop_last=True, visible=True)
    yield shuffled_case(1000, 100, [1, 2], "1000 indices: shuffled, and another seed shuffles differently",
                        visible=True)
    yield epochs_differ_case(20, 6, 3, 2, "two calls with one generator give two different epochs", visible=True)
    yield epochs_differ_case(20, 6, 4, 30, "drop_last=True: the indices left out change from epoch to epoch",
                             drop_last=True, visible=True)
    yield uniform_case(5, 2, 5, 3000, "3000 epochs of 5 indices in batches of 2: each of the 30 ways to split "
                                      "them into batches comes up about 100 times", visible=True)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, -1.0]])
    y = np.array([1.0, 2.0, 3.0, 0.0])
    yield updates_case(X, y, np.zeros(2), 0.0, 0.1, [[0, 1]],
                       "one batch, rows 0 and 1: loss mean([1, 4]) = 2.5, then w = [0.1, 0.2], b = 0.3",
                       visible=True)
    yield updates_case(X, y, np.zeros(2), 0.0, 0.1, [[0, 1], [2, 3]],
                       "two batches: the second loss is measured after the first update", visible=True)
    yield updates_case(X, y, np.array([0.5, -0.5]), 0.25, 0.1, [[3, 0, 2], [1]],
                       "batches of 3 and 1 rows: each averaged over its own size, inputs unchanged", visible=True)
    yield updates_case(X, y, np.array([0.5, -0.5]), 0.25, 0.1, [[3, 3, 1]],
                       "an index twice in a batch counts twice (X[batch] repeats the row)", visible=True)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 1.0 + 0.1 * rng.standard_normal(300)
    yield train_case(X, y, 0.05, 30, 20, 0, "300 samples, batches of 30, 20 epochs, seed 0", visible=True)
    yield train_case(X[:290], y[:290], 0.05, 40, 3, 7,
                     "290 samples in batches of 40, seed 7: the last batch of 10 is used", visible=True)
