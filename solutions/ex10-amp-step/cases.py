"""Hidden cases of ex10: read by the judge only, never copied into the sandbox or the release.

Fresh seeds, data and settings from the run's ``rng``; the probes, the reference and the checks
are public, in :mod:`gdcourse.grading.assignments.ex10_amp_step`. The regimes: ``device_type="cuda"``
on CPU tensors (autocast("cuda") leaves them in float32: the device_type argument must be honoured),
the default arguments, float16 and bfloat16, Adam, AdamW and SGD with momentum over several steps
(the scale growing), stale and NaN gradients left before a call, inf and NaN gradients and NaN data
(the step skipped, the scale halved, the growth tracker reset, Adam's step count unchanged, a NaN loss
returned as it is), runs of skipped steps, clipping at many thresholds and in float32, a scaler with
other growth and backoff factors, and tiny and huge scales for ``step_was_skipped``.
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.assignments.ex10_amp_step import (
    amp_case, autocast_dtype_case, scaler_case, skipped_case, true_gradient)

REFERENCES = ()  # the course library has no AMP step of its own

BASIC, SKIP, CLIP = "test_amp_step_basic", "test_amp_step_skip", "test_amp_step_clip"


def _seed(rng) -> int:
    return int(rng.integers(2**31 - 1))


def _data(rng, n, n_in, n_out, scale=1.0):
    return (scale * rng.standard_normal((n, n_in))).astype(np.float32), rng.integers(0, n_out, n)


def _autocast_dtype(rng):
    yield autocast_dtype_case(["cuda", "cpu", "cuda"], "a torch.dtype for each device type, in any order")
    yield autocast_dtype_case(["cpu"], "bfloat16 for 'cpu', whatever machine grades it")
    yield autocast_dtype_case(["cuda"], "float16 for 'cuda', whatever machine grades it")


def _step_was_skipped(rng):
    for before, after, name in ((1.0, 0.5, "a halved scale of 1: skipped"),
                                (2.0 ** -14, 2.0 ** -15, "a tiny scale halved: skipped"),
                                (2.0 ** 20, 2.0 ** 21, "a large scale doubled: taken"),
                                (1.0, 1.0, "a scale of 1 unchanged: taken"),
                                (1024.0, 256.0, "a scale quartered (backoff_factor=0.25): skipped"),
                                (1024.0, 1536.0, "a scale grown by 1.5 (growth_factor=1.5): taken")):
        yield skipped_case(before, after, name)
    steps = 12
    inject = sorted(int(t) for t in rng.choice(steps, size=4, replace=False))
    yield scaler_case(_seed(rng), steps, inject, {"init_scale": 2.0 ** 8, "growth_interval": 2},
                      "a real GradScaler growing every two good steps, with inf gradients at some steps")
    inject = sorted(int(t) for t in rng.choice(10, size=3, replace=False))
    yield scaler_case(_seed(rng), 10, inject, {"init_scale": 2.0 ** 12, "growth_interval": 1, "growth_factor": 1.5,
                                               "backoff_factor": 0.25},
                      "a real GradScaler with growth_factor=1.5 and backoff_factor=0.25")


def _basic(rng):
    sgd = {"name": "sgd", "lr": float(rng.uniform(0.05, 0.2))}
    X, y = _data(rng, 16, 6, 3)
    yield amp_case(BASIC, "device_type='cuda' on CPU tensors: autocast('cuda') leaves them in float32, the step "
                          "in float32", _seed(rng), (6, 8, 3), sgd, {"init_scale": 2.0 ** 10, "growth_interval": 1},
                   [(X, y), (X, y)], device_type="cuda", dtype="float16")
    yield amp_case(BASIC, "device_type='cuda' with bfloat16 on CPU tensors: float32, the scale grown", _seed(rng),
                   (6, 8, 3), sgd, {"init_scale": 2.0 ** 4, "growth_interval": 1}, [(X, y)], device_type="cuda",
                   dtype="bfloat16")
    yield amp_case(BASIC, "the default arguments: CPU autocast in bfloat16", _seed(rng), (6, 8, 3), sgd,
                   {"init_scale": 2.0 ** 10}, [(X, y)], device_type=None, dtype=None)
    for (n_in, hidden, n_out), dtype, opt in (((10, 16, 4), "float16", {"name": "adam", "lr": 0.01}),
                                              ((4, 32, 5), "bfloat16", {"name": "adamw", "lr": 0.01}),
                                              ((12, 8, 2), "float16", {"name": "sgd", "lr": 0.05, "momentum": 0.9})):
        X, y = _data(rng, 24, n_in, n_out)
        yield amp_case(BASIC, f"{opt['name']} in {dtype} over four steps: the loss, the weights and the scale "
                              "growing every two steps", _seed(rng), (n_in, hidden, n_out), opt,
                       {"init_scale": 2.0 ** 12, "growth_interval": 2}, [(X, y)] * 4, dtype=dtype)
    X, y = _data(rng, 12, 6, 3)
    yield amp_case(BASIC, "stale gradients on entry are cleared", _seed(rng), (6, 8, 3), sgd, {"init_scale": 2.0},
                   [(X, y), (X, y)], dtype="float16", stale=[float(s) for s in 5 + 5 * rng.random(2)])
    yield amp_case(BASIC, "NaN gradients left on entry (after a skipped step) are cleared: the step is taken",
                   _seed(rng), (6, 8, 3), sgd, {"init_scale": 2.0 ** 10}, [(X, y)], stale=[float("nan")])
    yield amp_case(BASIC, "a batch of one sample", _seed(rng), (6, 8, 3), sgd, {"init_scale": 2.0 ** 10},
                   [_data(rng, 1, 6, 3)], dtype="float16")


def _skip(rng):
    adam = {"name": "adam", "lr": 0.01}
    for dtype in ("float16", "bfloat16"):
        X, y = _data(rng, 10, 5, 3)
        X[int(rng.integers(10)), int(rng.integers(5))] = np.nan
        yield amp_case(SKIP, f"NaN in the data ({dtype}): the loss NaN, the step skipped, Adam untouched, the scale "
                             "halved", _seed(rng), (5, 7, 3), adam, {"init_scale": 2.0 ** 10}, [(X, y)], dtype=dtype)
    X, y = _data(rng, 10, 5, 3)
    yield amp_case(SKIP, "three overflowing steps in a row, then a clean one: the scale halved three times",
                   _seed(rng), (5, 7, 3), adam, {"init_scale": 2.0 ** 10}, [(X, y)] * 4, dtype="float16",
                   max_norm=0.5, inject=[(1, "inf")] * 3 + [None])
    X, y = _data(rng, 16, 6, 3)
    yield amp_case(SKIP, "a NaN gradient with device_type='cuda' (float32): skipped", _seed(rng), (6, 8, 3),
                   {"name": "sgd", "lr": 0.1}, {"init_scale": 2.0 ** 10}, [(X, y), (X, y)], device_type="cuda",
                   dtype="float16", max_norm=1.0, inject=[(0, "nan"), None])
    yield amp_case(SKIP, "an inf gradient without max_norm: skipped, the scale halved", _seed(rng), (6, 8, 3),
                   {"name": "sgd", "lr": 0.1, "momentum": 0.9}, {"init_scale": 2.0 ** 10}, [(X, y)] * 2,
                   dtype="float16", inject=[(3, "inf"), None])
    yield amp_case(SKIP, "growth, then an overflow: the growth tracker reset and the scale halved", _seed(rng),
                   (6, 8, 3), {"name": "sgd", "lr": 0.05}, {"init_scale": 2.0 ** 8, "growth_interval": 2},
                   [(X, y)] * 5, inject=[None, None, None, (2, "inf"), None])
    yield amp_case(SKIP, "a scaler with backoff_factor=0.25: the scale quartered, the step skipped", _seed(rng),
                   (6, 8, 3), {"name": "sgd", "lr": 0.05}, {"init_scale": 2.0 ** 10, "backoff_factor": 0.25},
                   [(X, y)] * 2, dtype="float16", inject=[(1, "inf"), None])


def _clip(rng):
    for dtype, factors in (("float16", (0.1, 0.5, 2.0)), ("bfloat16", (0.01, 100.0))):
        seed = _seed(rng)
        X, y = _data(rng, 20, 6, 3, scale=5.0)
        G = float(np.linalg.norm(true_gradient(seed, (6, 8, 3), X, y, dtype)))
        for f in factors:
            yield amp_case(CLIP, f"max_norm at {f:g} x the gradient norm ({dtype})", seed, (6, 8, 3),
                           {"name": "sgd", "lr": 0.05}, {"init_scale": 2.0 ** 12}, [(X, y)], dtype=dtype,
                           max_norm=f * G)
        yield amp_case(CLIP, f"max_norm=None: no clipping ({dtype})", seed, (6, 8, 3), {"name": "sgd", "lr": 0.05},
                       {"init_scale": 2.0 ** 12}, [(X, y)], dtype=dtype)
    seed = _seed(rng)
    X, y = _data(rng, 20, 6, 3, scale=5.0)
    G = float(np.linalg.norm(true_gradient(seed, (6, 8, 3), X, y, "float16", "cuda")))
    yield amp_case(CLIP, "clipping with device_type='cuda' (float32)", seed, (6, 8, 3), {"name": "sgd", "lr": 0.05},
                   {"init_scale": 2.0 ** 12}, [(X, y)], device_type="cuda", dtype="float16", max_norm=0.3 * G)
    yield amp_case(CLIP, "a huge scale (2**24): clipping in the units of the true gradient", seed, (6, 8, 3),
                   {"name": "sgd", "lr": 0.05}, {"init_scale": 2.0 ** 24}, [(X, y)], dtype="bfloat16",
                   max_norm=0.3 * float(np.linalg.norm(true_gradient(seed, (6, 8, 3), X, y))))
    yield amp_case(CLIP, "clipping over three SGD-momentum steps", seed, (6, 8, 3),
                   {"name": "sgd", "lr": 0.05, "momentum": 0.9}, {"init_scale": 2.0 ** 10, "growth_interval": 1},
                   [(X, y)] * 3, dtype="float16", max_norm=0.2 * G)


def cases(rng):
    yield from _autocast_dtype(rng)
    yield from _step_was_skipped(rng)
    yield from _basic(rng)
    yield from _skip(rng)
    yield from _clip(rng)
