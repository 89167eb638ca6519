"""Hidden cases of ex02: read by the judge only, never copied into the sandbox or the release.

Sizes at the edges (one sample, ``n < batch_size``, ``batch_size == n``, ``batch_size == 1``,
a divisor and a non-divisor), ``drop_last`` both ways, reproducibility whatever NumPy's global
random state, successive epochs from one generator, uniform shuffles (with and without
``drop_last``); updates over batches of different sizes, single rows, repeated indices, an
empty list of batches and a diverging learning rate; training runs with random seeds, full
batches, batches larger than the data, one epoch and zero epochs. The builders and their
checks are public, in :mod:`gdcourse.grading.assignments.ex02_minibatch`.
"""

import numpy as np

from gdcourse.grading.assignments.ex02_minibatch import (
    batches_case, epochs_differ_case, shuffled_case, train_case, uniform_case, updates_case)


def _seed(rng) -> int:
    return int(rng.integers(1, 2**31))


def cases(rng):
    # --- minibatch_indices
    for n, bs in ((1, 1), (1, 5), (4, 7), (7, 7), (7, 3), (64, 8), (100, 33), (9, 1)):
        for drop in (False, True):
            yield batches_case(n, bs, _seed(rng), f"n = {n}, batch_size = {bs}, drop_last={drop}: batch sizes, "
                                                  f"every index once, reproducible", drop_last=drop)
    yield batches_case(37, 5, _seed(rng), "the default drop_last is False")
    yield shuffled_case(500, 7, [_seed(rng) for _ in range(3)], "shuffled, and different generators differ")
    yield epochs_differ_case(200, 10, _seed(rng), 5, "successive epochs from one generator differ")
    yield epochs_differ_case(20, 6, _seed(rng), 30, "drop_last leaves out different indices in different epochs",
                             drop_last=True)
    yield uniform_case(5, 2, _seed(rng), 3000, "a uniform shuffle: every split into batches equally likely")
    yield uniform_case(5, 2, _seed(rng), 3000, "a uniform shuffle with drop_last", drop_last=True)
    yield uniform_case(4, 3, _seed(rng), 2000, "a uniform shuffle with a partial last batch")

    # --- sgd_updates
    for n, d, sizes in ((1, 1, [1, 1, 1]), (9, 1, [4, 4, 1]), (30, 5, [7, 7, 7, 7, 2]), (64, 3, [64, 64])):
        X, y = rng.standard_normal((n, d)), 3 * rng.standard_normal(n)
        w, b = rng.standard_normal(d), float(rng.standard_normal())
        batches = [rng.permutation(n)[:m] for m in sizes]
        yield updates_case(X, y, w, b, float(rng.uniform(0.01, 0.2)), batches,
                           f"updates with {n} sample(s), {d} feature(s), batches of {sorted(set(sizes))} rows")
    X, y = rng.standard_normal((12, 3)), rng.standard_normal(12)
    w = rng.standard_normal(3)
    yield updates_case(X, y, w, 0.4, 0.1, [], "an empty list of batches: w and b as given, no losses")
    yield updates_case(X, y, w, 0.4, 0.1, [[i] for i in rng.permutation(12)], "batches of one row each")
    yield updates_case(X, y, w, 0.4, 0.1, [[2, 2, 5], [0, 0, 0, 1]],
                       "an index repeated in a batch counts as often as it appears")
    yield updates_case(X, y, w, -0.3, 0.0, [[1, 2], [3]], "lr = 0: nothing moves, losses still recorded")
    scale = 10.0 ** rng.uniform(2, 4)
    yield updates_case(scale * X, scale * y, w, scale, 0.05 / scale ** 2, [[0, 1, 2], [3, 4]],
                       "features and targets of order 1e2 to 1e4")
    yield updates_case(X, y, w, 0.4, 3.0, [rng.permutation(12)[:4] for _ in range(12)],
                       "a learning rate far too large: the losses grow, nothing stops them")

    # --- train
    for n, d, lr, bs, epochs in ((1, 1, 0.1, 1, 8), (7, 2, 0.05, 3, 6), (50, 3, 0.05, 8, 10), (64, 4, 0.1, 64, 12),
                                 (10, 2, 0.1, 32, 5), (101, 2, 0.02, 25, 4)):
        X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
        what = ("batch_size = n (full batch)" if bs == n else "batch_size > n" if bs > n else
                "a partial last batch" if n % bs else "batch_size divides n")
        yield train_case(X, y, lr, bs, epochs, _seed(rng), f"train with {n} sample(s), {what}, {epochs} epochs")
    X = rng.standard_normal((40, 3))
    y = X @ rng.standard_normal(3) + 0.5
    seed = _seed(rng)
    yield train_case(X, y, 0.05, 6, 1, seed, "one epoch: the first batches of a fresh generator")
    yield train_case(X, y, 0.05, 6, 7, seed, "seven epochs: fresh batches every epoch from the one generator")
    yield train_case(X, y, 0.05, 6, 0, seed, "zero epochs: the zero model and no losses")
    yield train_case(X, y, 0.9, 4, 3, _seed(rng), "a learning rate far too large: the loss grows, nothing stops it")
