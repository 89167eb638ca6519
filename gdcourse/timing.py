"""Timing that a busy machine cannot skew: candidates timed in turn, in a fresh random order
each round, so that load, frequency scaling and cache effects hit all of them alike.

Used in chapter 15 (ONNX Runtime against eager PyTorch, quartiles) and chapter 18 (the cost of a step, medians).
"""

from __future__ import annotations

import random
import statistics
import time


def interleaved_samples(fns: dict, *, repeats: int = 20, warmup: int = 2, seed: int = 0) -> dict[str, list[float]]:
    """Seconds of each call of each function, ``repeats`` calls each, measured in a shuffled interleaved order."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    rng = random.Random(seed)
    times = {name: [] for name in fns}
    for _ in range(repeats):
        order = list(fns)
        rng.shuffle(order)
        for name in order:
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return times


def interleaved_timings(fns: dict, *, repeats: int = 20, warmup: int = 2, seed: int = 0) -> dict[str, float]:
    """Median seconds per call of each function (:func:`interleaved_samples`); the median ignores the odd slow call."""
    return {name: statistics.median(t) for name, t in
            interleaved_samples(fns, repeats=repeats, warmup=warmup, seed=seed).items()}
