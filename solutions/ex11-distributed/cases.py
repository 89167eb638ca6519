"""Hidden cases of ex11: read by the judge only, never copied into the sandbox or the release.

``shard_indices`` on world sizes 1, 3, 4, 5 and 8, item counts that are not multiples of the world
size, smaller than it (padding that repeats the list more than once, or, with drop_last, empty
shards), zero items, a large data set, drop_last, no shuffle, the defaults, seeds and epochs drawn
from the run's ``rng`` (and two epochs of one seed), the global random state left alone.
``average_gradients`` and ``accumulate_gradients`` in process groups of 1 and 3 ranks (the visible
cases have 2): gradients left by other code at another scale, frozen parameters, classification and
regression, one micro-batch, micro-batches of one example, gradients already in ``.grad`` before
the call (each launch costs a fraction of a second, so there are few of them). The builders and their checks are public, in
:mod:`gdcourse.grading.assignments.ex11_distributed`.
"""

from gdcourse.grading.assignments.ex11_distributed import (
    accumulate_case, average_case, data, random_grads, shard_case, stale_grads)

# The exercise asks for the indices computed by hand.
FORBIDDEN = ("torch.utils.data.distributed", "torch.utils.data.DistributedSampler")


def cases(rng):
    yield from _shards(rng)
    yield from _averages(rng)
    yield from _accumulations(rng)


def _draw(rng):
    return int(rng.integers(1, 60)), int(rng.integers(1, 1000))  # epoch, seed


def _shards(rng):
    for world_size in (1, 3, 4, 5, 8):
        epoch, seed = _draw(rng)
        n = world_size * int(rng.integers(2, 6)) + (int(rng.integers(1, world_size)) if world_size > 1 else 0)
        yield shard_case(n, world_size, epoch, f"{world_size} rank(s), n not a multiple of the world size: "
                         f"padded from the start, strided", seed=seed)
    for world_size in (3, 5, 8):
        epoch, seed = _draw(rng)
        n = world_size * int(rng.integers(2, 6)) + int(rng.integers(1, world_size))
        yield shard_case(n, world_size, epoch, f"{world_size} ranks with drop_last: the list is cut, nothing padded",
                         seed=seed, drop_last=True)
    epoch, seed = _draw(rng)
    yield shard_case(2, 5, epoch, "fewer items than ranks: the list repeated more than once", seed=seed)
    yield shard_case(1, 8, epoch, "one item on 8 ranks: every rank gets it", seed=seed)
    yield shard_case(3, 5, epoch, "fewer items than ranks with drop_last: every shard is empty", seed=seed,
                     drop_last=True)
    yield shard_case(0, 3, epoch, "no items: every shard is empty", seed=seed)
    yield shard_case(int(rng.integers(20, 40)), 4, 0, "no shuffle, 4 ranks: list(range(n)), padded", shuffle=False)
    yield shard_case(int(rng.integers(20, 40)), 4, 0, "no shuffle, drop_last, 4 ranks", shuffle=False, drop_last=True)
    epoch, seed = _draw(rng)
    n = int(rng.integers(900, 1100))
    yield shard_case(n, 8, epoch, "about 1000 items on 8 ranks", seed=seed)
    epoch, seed = _draw(rng)
    yield shard_case(23, 4, epoch, "a seed and an epoch: the shuffle follows seed + epoch", seed=seed)
    yield shard_case(23, 4, epoch + 1, "the same seed, the next epoch: another shuffle", seed=seed)
    yield shard_case(17, 3, epoch, "the defaults: seed 0, shuffled, padded", defaults=True)
    yield shard_case(31, 5, epoch, "torch's and NumPy's global random state left alone", seed=seed, rng=True)
    yield shard_case(12, 3, epoch, "the global random state left alone, no shuffle", shuffle=False, rng=True)


def _averages(rng):
    yield average_case(1, (4, 6, 2), int(rng.integers(100)),
                       "one rank: every gradient stays as it was (the average of one)",
                       grads=random_grads(rng, (4, 6, 2), 1))
    seed = int(rng.integers(100))
    X, y = data(rng, 12, 6, 3, classes=True)
    yield average_case(3, (6, 5, 3), seed, "3 ranks, each with a third of a batch, a frozen first weight: "
                       "the full-batch gradient", batch=(X, y, "ce"), frozen=(0,))
    yield average_case(3, (3, 7, 4, 2), int(rng.integers(100)),
                       "3 ranks, gradients of another scale left by other code, the last layer frozen: their mean",
                       grads=random_grads(rng, (3, 7, 4, 2), 3, frozen=(4, 5), scale=float(10 ** rng.uniform(-2, 2))),
                       frozen=(4, 5))


def _accumulations(rng):
    X, y = data(rng, 1 * 3 * 2, 4, 3, classes=True)
    yield accumulate_case(1, (4, 5, 3), int(rng.integers(100)), X, y, "ce", 3,
                          "one rank, 3 micro-batches, gradients already in .grad: one all-reduce, the new "
                          "gradient added, the mean loss", stale=stale_grads(rng, (4, 5, 3)))
    X, y = data(rng, 3 * 1 * 4, 5, 2, classes=False)
    yield accumulate_case(3, (5, 6, 2), int(rng.integers(100)), X, y, "mse", 1,
                          "3 ranks, a single micro-batch: its backward all-reduces")
    X, y = data(rng, 3 * 4 * 1, 4, 3, classes=True)
    yield accumulate_case(3, (4, 8, 5, 3), int(rng.integers(100)), X, y, "ce", 4,
                          "3 ranks, 4 micro-batches of one example: the gradient of the whole batch")
    X, y = data(rng, 3 * 2 * 3, 3, 2, classes=False)
    yield accumulate_case(3, (3, 6, 2), int(rng.integers(100)), X, y, "mse", 2,
                          "3 ranks, gradients already in .grad: the new gradient is added to them",
                          stale=stale_grads(rng, (3, 6, 2)))
