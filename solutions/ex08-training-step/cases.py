"""Hidden cases of ex08: read by the judge only, never copied into the sandbox or the release.

Fresh data and seeds from the run's ``rng``; the probes, the reference and the checks are public,
in :mod:`gdcourse.grading.assignments.ex08_training_step`. The regimes: stale gradients before a
step, Adam and momentum (one optimizer step per call), clipping on the global norm and no
clipping without ``max_norm``, float32 and float64; epochs of one batch and epochs whose last
batch is smaller, a DataLoader and a list, several epochs, the scheduler per epoch and per batch
(first and last batch), models handed over in evaluation mode with dropout and batch norm;
evaluation on unequal batches (a batch of one sample) and batch norm; accumulation with one
micro-batch, many small ones, Adam and stale gradients.
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.assignments.ex08_training_step import (
    BN_NET, DROPOUT, EVAL_NET, accumulation_case, epoch_case, evaluate_case, step_case)

REFERENCES = ()  # the course library has no training step of its own

MLP = [("linear", 4, 8), ("tanh",), ("linear", 8, 3)]
SMALL = [("linear", 5, 7), ("relu",), ("linear", 7, 2)]


def _seed(rng) -> int:
    return int(rng.integers(2**31 - 1))


def _hidden_train_step(rng):
    def regression(n, scale):
        return (rng.standard_normal((n, 5)), scale * rng.standard_normal((n, 2)))

    yield step_case("Adam over several calls: one optimizer step per call, a large gradient left unclipped "
                    "without max_norm", _seed(rng), SMALL, "float64",
                    {"name": "adam", "lr": float(rng.uniform(0.005, 0.02))}, "mse",
                    [regression(10, 50) for _ in range(3)])
    yield step_case("SGD with momentum, the global norm clipped, stale gradients before every call", _seed(rng),
                    SMALL, "float64", {"name": "sgd", "lr": float(rng.uniform(0.02, 0.08)), "momentum": 0.9},
                    "mse", [regression(6, 100) for _ in range(3)], max_norm=float(rng.uniform(0.3, 0.8)),
                    stale=[float(s) for s in 5 * rng.standard_normal(3)])
    n = int(rng.integers(6, 12))
    yield step_case("a small gradient is not clipped (float32 classifier)", _seed(rng), SMALL, "float32",
                    {"name": "sgd", "lr": 0.1}, "ce",
                    [(rng.standard_normal((n, 5)).astype(np.float32), rng.integers(0, 2, n))], max_norm=1e3)
    n = int(rng.integers(8, 20))
    yield step_case("stale gradients on entry do not enter the step; the loss before the step as a float",
                    _seed(rng), MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.05, 0.5))}, "ce",
                    [(rng.standard_normal((n, 4)), rng.integers(0, 3, n)) for _ in range(2)],
                    stale=[float(s) for s in 50 * rng.standard_normal(2)])
    yield step_case("a large gradient is clipped on the norm of all parameters together", _seed(rng),
                    [("linear", 5, 4), ("tanh",), ("linear", 4, 2)], "float64",
                    {"name": "sgd", "lr": float(rng.uniform(0.005, 0.05))}, "mse",
                    [regression(8, 1e3) for _ in range(2)], max_norm=float(rng.uniform(0.5, 2.0)))
    yield step_case("a batch of one sample, stale gradients on entry", _seed(rng), SMALL, "float64",
                    {"name": "sgd", "lr": float(rng.uniform(0.05, 0.3))}, "mse", [regression(1, 3)],
                    stale=float(rng.uniform(1, 10)))


def _hidden_train_epoch(rng):
    n = 10 * int(rng.integers(2, 5))
    Xr, yr = rng.standard_normal((n, 3)), 1e4 * rng.standard_normal((n, 2))
    yield epoch_case("max_norm reaches every step of the epoch", _seed(rng), [("linear", 3, 2)], "float64",
                     {"name": "sgd", "lr": 0.01}, "mse", [(Xr[i:i + 10], yr[i:i + 10]) for i in range(0, n, 10)],
                     max_norm=float(rng.uniform(0.2, 1.0)))

    size = int(rng.integers(3, 7))
    Xd, yd = rng.standard_normal((4 * size, 4)), rng.integers(0, 3, 4 * size)
    yield epoch_case("a DataLoader over several epochs, the scheduler stepped once per epoch", _seed(rng),
                     [("linear", 4, 6), ("relu",), ("linear", 6, 3)], "float64", {"name": "sgd", "lr": 0.2}, "ce",
                     [(Xd, yd)], epochs=3, scheduler={"name": "step", "step_size": 2, "gamma": 0.1},
                     dataloader=size)

    Xb, yb = rng.standard_normal((24, 4)), rng.integers(0, 3, 24)
    yield epoch_case("the scheduler stepped after every optimizer step, with momentum, over two epochs",
                     _seed(rng), MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.1, 0.3)), "momentum": 0.9},
                     "ce", [(Xb[i:i + 6], yb[i:i + 6]) for i in range(0, 24, 6)], epochs=2,
                     scheduler={"name": "exponential", "gamma": float(rng.uniform(0.5, 0.9))}, scheduler_per="batch")

    # one batch per epoch: the per-epoch and the per-batch schedule both step once per call
    n = int(rng.integers(5, 12))
    X1, y1 = rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    for per in ("epoch", "batch"):
        yield epoch_case(f"epochs of one batch, scheduler_per={per!r}: one scheduler step per call", _seed(rng),
                         MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.1, 0.5))}, "ce", [(X1, y1)],
                         epochs=3, scheduler={"name": "exponential", "gamma": float(rng.uniform(0.3, 0.8))},
                         scheduler_per=per)

    # a last batch smaller than the others: the plain mean of the batch losses
    size = int(rng.integers(6, 10))
    n = 3 * size + int(rng.integers(2, size))
    Xl, yl = rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    yield epoch_case("a DataLoader whose last batch is smaller: the plain mean of the batch losses", _seed(rng),
                     MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.05, 0.3))}, "ce", [(Xl, yl)],
                     dataloader=size)

    # the model arrives in evaluation mode
    X = rng.standard_normal((24, 4)).astype(np.float32)
    yield epoch_case("a dropout model handed over in evaluation mode: every batch in training mode", _seed(rng),
                     DROPOUT, "float32", {"name": "sgd", "lr": 0.1}, "ce",
                     [(X[i:i + 8], rng.integers(0, 3, 8)) for i in range(0, 24, 8)], mode="eval")
    size = int(rng.integers(6, 9))
    n = 3 * size + int(rng.integers(2, size))  # batch norm in training mode needs two samples in every batch
    Xn = 2 + 3 * rng.standard_normal((n, 4))
    yield epoch_case("a batch norm model handed over in evaluation mode: batch statistics, running statistics "
                     "updated", _seed(rng), BN_NET, "float64", {"name": "sgd", "lr": float(rng.uniform(0.05, 0.2))},
                     "ce", [(Xn, rng.integers(0, 3, n))], epochs=2, dataloader=size, mode="eval")

    Xs, ys = rng.standard_normal((16, 4)), rng.integers(0, 3, 16)
    yield epoch_case("no scheduler, scheduler_per='batch' given anyway", _seed(rng), MLP, "float64",
                     {"name": "sgd", "lr": 0.1}, "ce", [(Xs[:8], ys[:8]), (Xs[8:], ys[8:])], scheduler_per="batch")


def _hidden_evaluate(rng):
    n = int(rng.integers(30, 50))
    X, y = rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    cuts = np.sort(rng.choice(np.arange(2, n - 2), size=2, replace=False))
    while len({cuts[0], cuts[1] - cuts[0], n - cuts[1]}) < 3:
        cuts = np.sort(rng.choice(np.arange(2, n - 2), size=2, replace=False))
    uneven = [(X[a:b], y[a:b]) for a, b in zip([0, *cuts], [*cuts, n])]
    yield evaluate_case("unequal batches: the mean over samples; a model in evaluation mode stays in it",
                        _seed(rng), EVAL_NET, "float64", uneven, mode="eval")

    warmup = [rng.standard_normal((16, 4)).astype(np.float32) for _ in range(3)]
    n = int(rng.integers(21, 30))
    Xb = (3 + 2 * rng.standard_normal((n, 4))).astype(np.float32)
    yield evaluate_case("batch norm: running statistics untouched, a DataLoader, training mode put back",
                        _seed(rng), BN_NET, "float32", [(Xb, rng.integers(0, 3, n))], dataloader=10, warmup=warmup)

    n = int(rng.integers(20, 40))
    X, y = rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    yield evaluate_case("no autograd graph and evaluation mode at every forward pass, from training mode",
                        _seed(rng), EVAL_NET, "float64", [(X[i:i + 8], y[i:i + 8]) for i in range(0, n, 8)])

    size = int(rng.integers(5, 9))
    n = 2 * size + 1
    X, y = 2 * rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    yield evaluate_case("a last batch of one sample weighs one sample", _seed(rng), EVAL_NET, "float64",
                        [(X, y)], dataloader=size, repeat=2)


def _hidden_accumulation(rng):
    layers = [("linear", 3, 5), ("relu",), ("linear", 5, 2)]
    adam32 = {"loss": 1e-5, "rtol": 1e-4, "atol": 1e-6}
    for name, k, size, dtype in (("Adam, two calls: one optimizer step per call, the mean loss", 2, 5, "float64"),
                                 ("Adam with many small micro-batches: one step per call", 5, 3, "float64"),
                                 ("Adam in float32: one step per call, the mean loss", 3, 8, "float32")):
        micro = [(rng.standard_normal((size, 3)).astype(dtype), rng.standard_normal((size, 2)).astype(dtype))
                 for _ in range(k)]
        yield accumulation_case(name, _seed(rng), layers, dtype, {"name": "adam", "lr": 0.01}, "mse", [micro, micro],
                                tol=adam32 if dtype == "float32" else None)
    k, size = int(rng.integers(2, 5)), int(rng.integers(3, 7))
    calls = [[(rng.standard_normal((size, 4)), rng.integers(0, 3, size)) for _ in range(k)] for _ in range(2)]
    yield accumulation_case("stale gradients on entry, SGD with momentum, each micro-batch loss scaled",
                            _seed(rng), MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.1, 0.5)),
                                                         "momentum": 0.9}, "ce", calls,
                            stale=[float(s) for s in 3 * rng.standard_normal(2)])
    size = int(rng.integers(4, 9))
    yield accumulation_case("a single micro-batch: one ordinary step", _seed(rng), MLP, "float64",
                            {"name": "sgd", "lr": float(rng.uniform(0.1, 0.5))}, "ce",
                            [[(rng.standard_normal((size, 4)), rng.integers(0, 3, size))]], stale=1.0)


def cases(rng):
    yield from _hidden_train_step(rng)
    yield from _hidden_train_epoch(rng)
    yield from _hidden_evaluate(rng)
    yield from _hidden_accumulation(rng)
