"""Guard rails for a PyTorch training loop: early stopping, checkpoints that
cannot be left half-written, and everything needed to resume a run exactly.

Resuming *bit-exactly* needs more than the weights: the optimizer's state
(Adam's moments, step counts), the scheduler's position, and every random
number generator the loop draws from (data shuffling, dropout). ``capture``
and ``restore`` handle all of them together.
"""

from __future__ import annotations

import math
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import torch


class EarlyStopping:
    """Stop when a monitored value has not improved for ``patience`` checks.

    An improvement must beat the best value so far by more than ``min_delta``
    (``mode="min"`` for a loss, ``"max"`` for an accuracy). ``step`` returns
    True when training should stop; ``improved`` says whether the last value
    was a new best (the moment to save a best checkpoint).
    """

    def __init__(self, patience: int = 5, min_delta: float = 0.0, mode: str = "min"):
        if patience < 1:
            raise ValueError(f"patience must be >= 1, got {patience}")
        if min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got {min_delta}")
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self.patience, self.min_delta, self.mode = patience, min_delta, mode
        self.best: float | None = None
        self.best_step: int | None = None
        self.bad_steps = 0
        self.steps = 0
        self.improved = False

    def step(self, value: float) -> bool:
        value = float(value)
        if math.isnan(value):  # a diverged run never improves
            self.improved = False
        elif self.best is None:
            self.improved = True
        elif self.mode == "min":
            self.improved = value < self.best - self.min_delta
        else:
            self.improved = value > self.best + self.min_delta
        if self.improved:
            self.best, self.best_step, self.bad_steps = value, self.steps, 0
        else:
            self.bad_steps += 1
        self.steps += 1
        return self.bad_steps >= self.patience

    def state_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("patience", "min_delta", "mode", "best", "best_step",
                                              "bad_steps", "steps", "improved")}

    def load_state_dict(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)


def save_checkpoint(path: str | os.PathLike, state: dict) -> Path:
    """``torch.save`` that never leaves a truncated file at ``path``.

    The state is written to a temporary file in the same folder, flushed to
    disk, then renamed over ``path``: a rename within one file system is
    atomic, so a crash leaves either the old checkpoint or the new one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path: str | os.PathLike, map_location="cpu") -> dict:
    """Load a checkpoint written by :func:`save_checkpoint` (tensors and plain Python only)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return torch.load(path, map_location=map_location, weights_only=True)


def rng_state() -> dict:
    """Python's, NumPy's global and torch's (CPU and, if present, CUDA) generator states."""
    np_state = np.random.get_state()
    state = {
        "python": random.getstate(),
        "numpy": {"key": torch.from_numpy(np_state[1].astype(np.int64)), "pos": int(np_state[2]),
                  "has_gauss": int(np_state[3]), "cached_gaussian": float(np_state[4])},
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore generator states saved by :func:`rng_state`."""
    random.setstate(_as_tuple(state["python"]))
    n = state["numpy"]
    np.random.set_state(("MT19937", n["key"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                         n["cached_gaussian"]))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _as_tuple(x):  # torch.load gives lists back where random.getstate had tuples
    return tuple(_as_tuple(v) for v in x) if isinstance(x, (list, tuple)) else x


def capture(model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler=None, **extra) -> dict:
    """Everything needed to continue a run exactly: weights, optimizer, scheduler, RNGs, and ``extra``
    (epoch counters, early-stopping state, loss history...)."""
    return {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "rng": rng_state(),
        "extra": extra,
    }


def restore(checkpoint: dict, model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler=None) -> dict:
    """Load a :func:`capture` dict into live objects and the RNGs; return its ``extra``."""
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if (scheduler is None) != (checkpoint["scheduler"] is None):
        raise ValueError("the checkpoint and the caller disagree about whether there is a scheduler")
    if scheduler is not None:
        scheduler.load_state_dict(checkpoint["scheduler"])
    set_rng_state(checkpoint["rng"])
    return checkpoint["extra"]
