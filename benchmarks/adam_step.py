"""Benchmark (not a test): one Adam step on 1M and 10M float32 parameters.

The NumPy reference (gdcourse.optim.Adam, in-place with one scratch buffer per
parameter) against torch.optim.Adam with its for-loop, foreach and fused
implementations, in one run on this machine, as ratios to torch foreach.

    .venv/bin/python benchmarks/adam_step.py [--sizes 1e6 1e7] [--tensors 8] [--repeats 7]

Parameters are split into --tensors arrays of equal size (a model has many
tensors; foreach and fused batch over them). Times are the median of
--repeats steps after two warm-up steps.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from gdcourse.optim import Adam


def median_seconds(step, repeats: int) -> float:
    for _ in range(2):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_reference(n: int, tensors: int, repeats: int) -> float:
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(n // tensors, dtype=np.float32) for _ in range(tensors)]
    grads = [rng.standard_normal(n // tensors, dtype=np.float32) for _ in range(tensors)]
    opt = Adam(lr=1e-3)
    state = opt.init(params)
    return median_seconds(lambda: opt.step(params, grads, state), repeats)


def torch_adam(n: int, tensors: int, repeats: int, **impl) -> float:
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(n // tensors, generator=gen, requires_grad=True) for _ in range(tensors)]
    for p in params:
        p.grad = torch.randn(n // tensors, generator=gen)
    opt = torch.optim.Adam(params, lr=1e-3, **impl)
    return median_seconds(opt.step, repeats)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--tensors", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; NumPy {np.__version__}; float32; "
          f"{args.tensors} tensors; median of {args.repeats} steps")
    print(f"{'parameters':>11}  {'implementation':16} {'ms/step':>9}  {'vs foreach':>10}")
    for size in args.sizes:
        n = int(size)
        timings = {
            "numpy reference": numpy_reference(n, args.tensors, args.repeats),
            "torch for-loop": torch_adam(n, args.tensors, args.repeats, foreach=False),
            "torch foreach": torch_adam(n, args.tensors, args.repeats, foreach=True),
            "torch fused": torch_adam(n, args.tensors, args.repeats, fused=True),
        }
        base = timings["torch foreach"]
        for name, seconds in timings.items():
            print(f"{n:>11,}  {name:16} {1000 * seconds:9.2f}  {seconds / base:9.2f}x")


if __name__ == "__main__":
    main()
