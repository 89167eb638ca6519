"""Where the code runs: seeding, device choice, Colab and CI detection.

Device choice never hard-codes ``"cuda"``: on a CPU, ``torch.autocast`` and
``GradScaler`` silently disable themselves for a CUDA device type, so a
notebook that says "cuda" on a laptop teaches nothing and warns nothing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import sys

import numpy as np

DEVICE_ENV = "GDCOURSE_DEVICE"


def in_colab() -> bool:
    """True inside a Google Colab kernel."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def in_ci() -> bool:
    """True under a CI runner (GitHub Actions and most others set ``CI``)."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy's legacy global RNG and (if imported) torch.

    Returns a fresh ``np.random.Generator`` for code that prefers explicit
    generators. torch is seeded only if the caller already imported it, so a
    NumPy-only chapter does not pay torch's import time.
    """
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    return np.random.default_rng(seed)


@contextlib.contextmanager
def torch_threads(n: int):
    """torch on ``n`` threads inside the block (or the decorated function), as it was after: on tiny
    tensors more threads only contend (a grading probe ran 10x slower on two)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def pick_device(requested: str | None = None) -> str:
    """Choose the torch device to run on and return its name.

    Order: an explicit ``requested`` device (a notebook parameter), then the
    ``GDCOURSE_DEVICE`` environment variable, then the best one present:
    ``"cuda"`` if torch sees a GPU, ``"mps"`` on Apple silicon, else ``"cpu"``.
    A requested accelerator that is absent is an error, not a silent fallback.
    """
    choice = requested or os.environ.get(DEVICE_ENV) or None
    if importlib.util.find_spec("torch") is None:
        if choice not in (None, "cpu"):
            raise RuntimeError(f"device {choice!r} requested but torch is not installed")
        return "cpu"
    import torch

    available = {"cpu": True, "cuda": torch.cuda.is_available(),
                 "mps": hasattr(torch.backends, "mps") and torch.backends.mps.is_available()}
    if choice is None:
        return next(d for d in ("cuda", "mps", "cpu") if available[d])
    kind = choice.split(":")[0]
    if kind not in available:
        raise ValueError(f"unknown device {choice!r}; expected cpu, cuda[:N] or mps")
    if not available[kind]:
        raise RuntimeError(f"device {choice!r} requested but not available on this machine")
    return choice


COLAB_GPU_HINT = ("No GPU in this Colab runtime, so everything runs on the CPU (fine for this course). "
                  "To run the sections marked GPU: Runtime > Change runtime type > a GPU, then Runtime > Run all.")


def runtime_report() -> str:
    """What the setup cell prints: where this runs and which gdcourse; on Colab, the device too,
    and without a GPU, how to get one. Elsewhere torch is not imported for it: a NumPy
    chapter does not pay torch's import time."""
    from gdcourse import __version__

    where = "Colab" if in_colab() else ("CI" if in_ci() else "local")
    line = f"{where} · Python {sys.version.split()[0]} · NumPy {np.__version__} · gdcourse {__version__}"
    if not in_colab():
        return line
    device = pick_device()
    return f"{line} · device {device}" + ("" if device != "cpu" else "\n" + COLAB_GPU_HINT)
