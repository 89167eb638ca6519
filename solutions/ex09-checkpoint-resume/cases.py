"""Hidden cases of ex09: read by the judge only, never copied into the sandbox or the release.

Fresh histories, states, data and seeds from the run's ``rng``; the probes, the reference and the
checks are public, in :mod:`gdcourse.grading.assignments.ex09_checkpoint_resume`. The regimes:

- ``should_stop``: random walks on a grid of 1/64 (exact ties with ``best - min_delta``), both
  modes, ``min_delta`` 0 and not, patience 0, 1 and more, histories shorter than the patience,
  empty and single-value histories, NaN after the best and as the first value, +-inf, a best that
  must not follow gains of ``min_delta`` or less, the default ``mode`` and ``min_delta``;
- ``atomic_save``: a new file, a file saved over, a failure (an error, Ctrl-C) with and without a
  previous file, the file at ``path`` while the state is being written, a reader that opened the
  old file before the save, the system's temporary folder on another file system, another file
  in the folder;
- ``make_checkpoint``/``resume``: SGD with (Nesterov) momentum, Adam, AdamW and RMSprop, two
  parameter groups, schedulers stepped per epoch, per batch (OneCycleLR) and on a metric
  (ReduceLROnPlateau), batch norm's running statistics, NumPy's cached Gaussian, checkpoints at
  epoch 0 and after the last epoch, objects already trained before ``resume`` (stale state).
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.assignments.ex09_checkpoint_resume import (
    STOP_STEP, classification, resume_case, save_case, stop_case)

# the file operations the statement asks for are not "system access" worth a review
ALLOWED = ("os.replace", "os.rename", "os.fsync", "os.fdopen", "os.close", "os.remove", "os.unlink", "os.listdir",
           "os.path", "shutil.move")
REFERENCES = ("gdcourse.train",)  # EarlyStopping, save_checkpoint, capture/restore do the exercise's work

NAN, INF = float("nan"), float("inf")


def _seed(rng) -> int:
    return int(rng.integers(2**31 - 1))


def _walk(rng, n, mode):
    """A noisy descent (an ascent for "max") on the grid of 1/64: plateaus and exact ties happen."""
    steps = rng.integers(-4, 3, n)
    walk = 64 + np.cumsum(steps) if mode == "min" else 10 - np.cumsum(steps)
    return [float(v) * STOP_STEP for v in walk]


def _hidden_should_stop(rng):
    rule = "the count of epochs without improvement is wrong"
    for i in range(10):
        mode = ("min", "max")[i % 2]
        n = int(rng.integers(3, 16))
        history = _walk(rng, n, mode)
        patience = int(rng.integers(1, 5))
        min_delta = float(rng.choice([0, 1, 2, 5])) * STOP_STEP
        yield stop_case(history, patience, f"a random {('loss', 'accuracy')[i % 2]} history (mode={mode!r}), "
                        f"with and without min_delta, ties included", rule, min_delta=min_delta, mode=mode)
    best = float(rng.integers(40, 80)) * STOP_STEP
    d = float(rng.integers(1, 6)) * STOP_STEP
    yield stop_case([best, best - d], 1, "a loss that beats the best by exactly min_delta is no improvement",
                    "a gain of exactly min_delta counted as an improvement (it must be more than min_delta)",
                    min_delta=d)
    yield stop_case([best, best - d - STOP_STEP], 1, "a loss that beats the best by more than min_delta resets",
                    "a gain of more than min_delta is an improvement", min_delta=d)
    yield stop_case([best, best + d], 1, "mode='max': a gain of exactly min_delta is no improvement",
                    "a gain of exactly min_delta counted as an improvement in mode='max'", min_delta=d, mode="max")
    yield stop_case([best, best - d / 2, best - d, best - 3 * d / 2], 3,
                    "small gains, each within min_delta of the last, do not move the best",
                    "the best moved on a gain of min_delta or less", min_delta=d)
    yield stop_case([best, best - d / 2, best - d, best - 3 * d / 2], 2, "the best stays until a real improvement",
                    "the best moved on a gain of min_delta or less", min_delta=d)
    yield stop_case([best, best, best], 2, "equal values are not improvements (min_delta = 0)",
                    "an equal value counted as an improvement")
    yield stop_case([best, best + 1.0, best + 2.0], 2, "the default mode is 'min': growing losses stop",
                    "the default mode must be 'min'")
    yield stop_case([best, best + 1.0, best + 2.0], 2, "mode='max': growing accuracies go on",
                    "mode='max' must look for larger values", mode="max")
    h = _walk(rng, 6, "min")
    yield stop_case(h, 0, "patience 0: stop at once on any history", "with patience 0, any non-empty history stops")
    yield stop_case([], 0, "patience 0: an empty history still never stops", "an empty history never stops")
    yield stop_case([], 3, "an empty history never stops", "an empty history never stops")
    yield stop_case([best], 0, "one value, patience 0: stop", "with patience 0, any non-empty history stops")
    yield stop_case(h[:2], 4, "a history shorter than the patience: go on",
                    "a history shorter than the patience cannot have patience epochs without improvement")
    yield stop_case([best, best + 1.0], 1, "patience 1: one epoch without improvement stops",
                    "with patience 1, one epoch without improvement stops")
    yield stop_case([best + 1.0, best], 1, "patience 1: an improvement at the last value goes on",
                    "an improvement at the last value resets the count")
    yield stop_case([best, best - 1.0, NAN, NAN, NAN], 3, "a run whose loss became NaN stops",
                    "does not stop when the loss becomes NaN (a NaN is never an improvement)")
    yield stop_case([best, NAN, best - 1.0], 2, "a NaN between two losses counts once, the next loss still improves",
                    "a NaN is never an improvement and never becomes the best")
    yield stop_case([best, NAN, best - 1.0, NAN], 2, "a NaN after an improvement counts one epoch",
                    "a NaN is never an improvement and never becomes the best")
    yield stop_case([NAN, best, best - 1.0], 2, "a NaN first value is the best, and nothing improves on it",
                    "the first value is the best so far even when it is NaN, and nothing improves on a NaN")
    yield stop_case([best, best + 0.5, NAN], 2, "mode='max': a NaN accuracy is no improvement",
                    "a NaN is never an improvement", mode="max")
    yield stop_case([best, INF, INF], 2, "an infinite loss is no improvement", "an infinite loss is no improvement")
    yield stop_case([INF, best, best + 1.0], 2, "after an infinite first loss, a finite loss improves",
                    "a finite loss improves on an infinite best")
    yield stop_case([best, -INF, best - 1.0], 1, "a loss of -inf becomes the best, and nothing beats it",
                    "infinities compare as numbers", mode="min")
    yield stop_case([best, INF, best + 1.0], 1, "mode='max': an accuracy of +inf becomes the best, nothing beats it",
                    "infinities compare as numbers", min_delta=d, mode="max")


def _state(rng, epoch):
    n = int(rng.integers(1, 40))
    return {"epoch": int(epoch), "step": int(rng.integers(0, 10**6)), "lr": float(rng.uniform(1e-4, 1e-1)),
            "w": rng.standard_normal((n, 3)).astype(np.float32), "b": rng.standard_normal(n),
            "ids": rng.integers(-10**9, 10**9, int(rng.integers(1, 6)))}


def _hidden_atomic_save(rng):
    yield save_case(_state(rng, 1), "a new checkpoint: loads back exactly, nothing else in the folder")
    yield save_case(_state(rng, 8), "over a previous checkpoint: replaced, nothing else in the folder",
                    previous=_state(rng, 7))
    yield save_case(_state(rng, 4), "another file in the folder is left alone", previous=_state(rng, 3),
                    neighbour=_state(rng, 2))
    yield save_case(_state(rng, 11), "while the state is being written, path still holds the previous checkpoint",
                    previous=_state(rng, 10), spy=True)
    yield save_case(_state(rng, 1), "while the first checkpoint is being written, no torn file is at path",
                    spy=True)
    yield save_case(_state(rng, 6), "a program that opened the previous checkpoint still reads it whole (replaced, "
                    "not rewritten)", previous=_state(rng, 5), reader=True)
    yield save_case(_state(rng, 3), "a failing state: the error propagates, the previous checkpoint is intact, "
                    "no temporary file", previous=_state(rng, 2), fault="error")
    yield save_case(_state(rng, 1), "a failing first save: the error propagates, the folder stays empty",
                    fault="error")
    yield save_case(_state(rng, 13), "Ctrl-C during the save: KeyboardInterrupt propagates, the previous "
                    "checkpoint is intact, no temporary file", previous=_state(rng, 12), fault="interrupt")
    yield save_case(_state(rng, 5), "the temporary file is made in the folder of path (the system's temporary "
                    "folder is elsewhere, on another file system)", previous=_state(rng, 4), spy=True,
                    foreign_tmp=True)


def _run(rng, layers, optimizer, scheduler, n, batch, noise="normal", epochs=4, d=5, classes=3):
    X, y = classification(rng, n, d, classes)
    return {"X": X, "y": y, "layers": layers, "optimizer": optimizer, "scheduler": scheduler,
            "batch": batch, "noise": noise, "epochs": epochs}


def _hidden_resume(rng):
    mlp = [("linear", 5, 10), ("tanh",), ("dropout", 0.2), ("linear", 10, 3)]
    bn = [("linear", 5, 8), ("batchnorm", 8), ("relu",), ("dropout", 0.2), ("linear", 8, 3)]
    seed = lambda: _seed(rng)  # noqa: E731
    lr = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731

    onecycle = _run(rng, bn, {"name": "sgd", "lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3},
                    {"name": "onecycle", "max_lr": lr(0.05, 0.2)}, 42, 8, noise="uniform")
    for stop_at in (1, 3):
        yield resume_case(onecycle, seed(), seed(), stop_at, seed(),
                          f"SGD with Nesterov momentum, OneCycleLR stepped every batch, batch norm: stopped after "
                          f"{stop_at} of 4 epochs")
    yield resume_case(_run(rng, mlp, {"name": "adam", "lr": lr(0.005, 0.02)}, {"name": "exponential", "gamma": 0.8},
                           35, 7), seed(), seed(), 3, seed(),
                      "Adam and an exponential schedule, an odd number of normal draws: NumPy's cached Gaussian")
    yield resume_case(_run(rng, mlp, {"name": "adamw", "lr": lr(0.005, 0.02), "weight_decay": 0.05, "groups": True},
                           {"name": "step", "step_size": 2, "gamma": 0.5}, 30, 6, epochs=5), seed(), seed(), 3,
                      seed(), "AdamW with two parameter groups (no weight decay on biases), StepLR")
    yield resume_case(_run(rng, bn, {"name": "rmsprop", "lr": lr(0.002, 0.01), "momentum": 0.5},
                           {"name": "plateau", "factor": 0.5, "patience": 0, "threshold": 0.5}, 36, 9),
                      seed(), seed(), 2, seed(), "RMSprop and ReduceLROnPlateau (a scheduler with state of its own)")
    spec = _run(rng, mlp, {"name": "sgd", "lr": lr(0.05, 0.2), "momentum": 0.9}, {"name": "cosine"}, 40, 8)
    yield resume_case(spec, seed(), seed(), 0, seed(), "a checkpoint before the first epoch (no optimizer state "
                      "yet), resumed and trained to the end")
    yield resume_case(spec, seed(), seed(), 4, seed(), "a checkpoint after the last epoch: resume restores the end "
                      "of the run")
    yield resume_case(_run(rng, bn, {"name": "adamw", "lr": lr(0.005, 0.02)}, {"name": "cosine"}, 34, 8),
                      seed(), seed(), 2, seed(), "resumed into objects that have trained already (stale optimizer "
                      "and scheduler state)", used=1)


def cases(rng):
    yield from _hidden_should_stop(rng)
    yield from _hidden_atomic_save(rng)
    yield from _hidden_resume(rng)
