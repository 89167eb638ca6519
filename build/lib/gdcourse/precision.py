"""Floating point for optimizers: format facts, bfloat16 rounding in NumPy,
and numerically stable softmax / log-sum-exp / cross-entropy.

NumPy has float16 but no bfloat16; :func:`to_bfloat16` rounds float32 values
to the nearest bfloat16 (round half to even), returning them as float32, so a
chapter can simulate bf16 arithmetic step by step.
"""

from __future__ import annotations

import numpy as np


def format_table(dtypes=("float16", "bfloat16", "float32", "float64")) -> list[dict]:
    """One row per format: bits, mantissa bits, machine epsilon, largest finite,
    smallest normal, smallest subnormal, and decimal digits."""
    rows = []
    for name in dtypes:
        if name == "bfloat16":
            # 8 exponent bits like float32, 7 stored mantissa bits
            row = dict(bits=16, mantissa_bits=7, eps=2.0**-7, max=float(np.float32(3.3895313892515355e38)),
                       smallest_normal=2.0**-126, smallest_subnormal=2.0**-133, decimal_digits=2)
        else:
            fi = np.finfo(name)
            row = dict(bits=fi.bits, mantissa_bits=fi.nmant, eps=float(fi.eps), max=float(fi.max),
                       smallest_normal=float(fi.smallest_normal), smallest_subnormal=float(fi.smallest_subnormal),
                       decimal_digits=fi.precision)
        rows.append({"format": name, **row})
    return rows


def to_bfloat16(x) -> np.ndarray:
    """Round to the nearest bfloat16 (ties to even); the result is float32."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounding = 0x7FFF + ((bits >> 16) & 1)            # round half to even on the dropped 16 bits
    rounded = ((bits + rounding) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)  # keep NaN a NaN


def logsumexp(z, axis=-1) -> np.ndarray:
    """``log(sum(exp(z)))`` without overflow: shift by the maximum first."""
    z = np.asarray(z)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):  # all -inf: log(0) = -inf is the right answer
        out = np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis)


def softmax(z, axis=-1) -> np.ndarray:
    """Softmax that neither overflows nor divides 0 by 0 for large logits."""
    z = np.asarray(z)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_from_logits(logits, labels) -> float:
    """Mean cross-entropy of integer ``labels`` under ``softmax(logits)``, computed as
    ``logsumexp(z) - z[label]`` so that no probability is ever formed (no log 0)."""
    logits = np.asarray(logits)
    labels = np.asarray(labels)
    picked = np.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return float(np.mean(logsumexp(logits, axis=1) - picked))
