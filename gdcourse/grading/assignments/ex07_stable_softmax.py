"""ex07, stable softmax and Adam's second moment in float16: the course's reference, the case
builders and the visible cases.

What is compared, as the exercise's statement says (``s`` is the scale of the logits a value is
computed from: the largest finite ``|logit|`` of the row, of the whole batch for
``cross_entropy``, and at least 1; a result of order 1 is a difference of numbers of order ``s``,
so its rounding is of order ``s`` times float64's precision):

- ``logsumexp(z)``: shape ``z.shape[:-1]``, each value within ``TOL * s`` of the answer; an answer
  of ``-inf`` (a row of only ``-inf`` logits) must be ``-inf``;
- ``softmax(z)``: shape ``z.shape``, each probability ``p`` within ``TOL * s * p + 1e-300`` (so a
  masked class's 0 must be 0); a new array;
- ``cross_entropy(logits, labels)``: one number within ``TOL * s``;
- ``fp16_second_moment(grads, beta2)``: a float16 array equal, bit for bit, to the statement's
  expression ``v = b2 * v + c * (g * g)`` with ``b2 = np.float16(beta2)``,
  ``c = np.float16(1 - beta2)``, ``v`` starting at float16 zeros and every gradient cast to
  float16: the statement shows the expression, so the order of its roundings is fixed.

No function may modify its inputs. Expected values come from the references below in float64
(they match ``torch.logsumexp``, ``torch.softmax`` and ``torch.nn.functional.cross_entropy`` in
float64 on every case, to well within the tolerance).
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, diagnose, kind, number, require, unchanged

TOL = 1e-12  # times the scale s of the logits; stated in the exercise


# --- the reference ----------------------------------------------------------------------

def logsumexp(z):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(z - m), axis=-1)) + m[..., 0]


def softmax(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def cross_entropy(logits, labels):
    logits = np.asarray(logits, dtype=float)
    picked = logits[np.arange(len(labels)), labels]
    return float(np.mean(logsumexp(logits) - picked))


def fp16_second_moment(grads, beta2=0.999):
    b2, c = np.float16(beta2), np.float16(1 - beta2)
    v = np.zeros(np.shape(grads[0]), dtype=np.float16)
    with np.errstate(over="ignore", under="ignore"):  # float16 overflow to inf is part of the answer
        for g in grads:
            g16 = np.asarray(g).astype(np.float16)
            v = b2 * v + c * (g16 * g16)
    return v


REFERENCE = {"logsumexp": logsumexp, "softmax": softmax, "cross_entropy": cross_entropy,
             "fp16_second_moment": fp16_second_moment}


# --- checks -----------------------------------------------------------------------------

def row_scale(z):
    """Per row (last axis): the largest finite |logit|, at least 1."""
    z = np.asarray(z, dtype=float)
    finite = np.where(np.isfinite(z), np.abs(z), 0.0)
    return np.maximum(np.max(finite, axis=-1), 1.0)


def _matches(got, want, err_scale):
    """Element-wise: within ``err_scale`` of ``want``; where ``want`` is not finite, equal to it."""
    a, want = as_array(got), np.asarray(want, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(want), np.isfinite(a) & (np.abs(a - want) <= err_scale),
                        (a == want) | (np.isnan(a) & np.isnan(want)))


def _near(got, want, err_scale, what, tol_text):
    a, want = as_array(got, what), np.asarray(want, dtype=float)
    if a.shape != want.shape:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape}",
                   summary=f"{what} has the wrong shape (expected the input's shape without its last axis)"
                   if what.startswith("logsumexp") else f"{what} has the wrong shape")
    ok = _matches(a, want, err_scale)
    if not ok.all():
        shown = (f"expected {np.array2string(want, precision=12)}, got {np.array2string(a, precision=12)}"
                 if a.size <= 6 else f"{int((~ok).sum())} of {a.size} entries differ beyond {tol_text}")
        raise Fail(f"{what}: {shown}", summary=f"{what} is wrong (beyond {tol_text})")


def _looks(got, want, scale=1.0):
    """``got`` is, loosely, ``want`` (for matching a known mistake); False on any other shape."""
    try:
        a = as_array(got)
    except Fail:
        return False
    want = np.asarray(want, dtype=float)
    return a.shape == want.shape and bool(_matches(a, want, 1e-9 * np.maximum(scale, np.abs(want))).all())


# --- logsumexp ------------------------------------------------------------------------

def lse_case(z, name, visible=False):
    z = np.asarray(z, dtype=float)

    def check(r):
        want, s = logsumexp(z), row_scale(z)
        got = r.value
        with np.errstate(all="ignore"):
            top = np.max(z, axis=-1)
            naive = np.log(np.sum(np.exp(z), axis=-1))
            top_all = np.max(z)
            one_shift = np.log(np.sum(np.exp(z - top_all), axis=-1)) + top_all
        diagnose(lambda: _near(got, want, TOL * s, "logsumexp(z)", f"{TOL:g} × the row's largest |logit|"), [
            (lambda: np.ndim(z) > 1 and _looks(got, one_shift, s) and not _looks(got, naive, s),
             "one shift for the whole batch fails for rows on very different levels: shift each row by its own "
             "maximum (max over the last axis, keepdims=True)"),
            (lambda: np.any(np.isinf(as_array(got)) & np.isfinite(want)) and _looks(got, naive, s),
             "exp of a large logit overflows (or of a very negative one underflows): shift each row by its "
             "maximum before exp, then add the maximum back"),
            (lambda: _looks(got, want - np.where(np.isfinite(top), top, 0.0), s),
             "the shift is not added back: logsumexp(z) = m + log(sum(exp(z - m)))"),
            (lambda: as_array(got).shape == want.shape + (1,),
             "one value per row: the result has the input's shape without its last axis (no keepdims)"),
            (lambda: np.any(np.isnan(as_array(got)) & np.isneginf(want)),
             "a row of only -inf logits has logsumexp -inf (log 0), not nan: -inf - (-inf) is nan, so do not "
             "shift such a row by its maximum"),
            (lambda: np.ndim(z) > 1 and not as_array(got).shape == want.shape,
             "reduce over the LAST axis: one value per row"),
        ])
        unchanged(r, 0, z, "z")
    return Case("test_logsumexp", name, call("logsumexp", z), check, visible)


# --- softmax ----------------------------------------------------------------------------

def softmax_case(z, name, visible=False):
    z = np.asarray(z, dtype=float)

    def check(r):
        want = softmax(z)
        s = row_scale(z)[..., None]
        a = as_array(r.value, "softmax(z)")
        require(a.shape == want.shape, f"softmax(z) should have the shape of z, {want.shape}, got {a.shape}")
        require(np.all(np.isfinite(a)), "softmax of large logits must not contain nan or inf"
                + (f" (got {a})" if a.size <= 6 else "") + ": subtract each row's maximum before exp")
        with np.errstate(all="ignore"):
            e0 = np.exp(z - np.max(z, axis=0, keepdims=True))
            axis0 = e0 / np.sum(e0, axis=0, keepdims=True)
        diagnose(lambda: _near(a, want, TOL * s * want + 1e-300, "softmax(z)",
                               f"a relative {TOL:g} × the row's largest |logit|"), [
            (lambda: np.ndim(z) > 1 and _looks(a, axis0), "softmax runs over the LAST axis: each row sums to 1"),
            (lambda: not np.allclose(a.sum(axis=-1), 1.0), "each row (last axis) must sum to 1"),
        ])
        unchanged(r, 0, z, "z")
        require(0 not in r.shares_input, "softmax returned the array it was given: return a new array")
    return Case("test_softmax", name, call("softmax", z), check, visible)


# --- cross-entropy --------------------------------------------------------------------------

def ce_case(logits, labels, name, visible=False):
    logits = np.asarray(logits, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)

    def check(r):
        require(np.ndim(r.value) == 0 or np.size(r.value) == 1, "cross_entropy should return one number (the mean)")
        got = number(r.value, "cross_entropy")
        want = cross_entropy(logits, labels)
        s = float(np.max(row_scale(logits)))
        if np.isnan(got) and np.isneginf(logits).any():
            require(False, "the loss is nan: a masked (-inf) logit times 0 is nan; pick the label's logit, "
                           "logits[np.arange(n), labels], instead of multiplying by a one-hot mask")
        require(np.isfinite(got), f"the loss is finite ({want:.6f}), got {got}: use logsumexp(z) - z[label], "
                                  "never log(softmax(z)) (a probability that underflows to 0 has log -inf)")
        terms = logsumexp(logits) - logits[np.arange(len(labels)), labels]
        hints = [(lambda: abs(got - terms.sum()) <= 1e-9 * s * len(labels) and len(labels) > 1,
                  "that is the sum over the batch: return the mean"),
                 (lambda: abs(got - np.mean(logsumexp(logits)[:, None] - logits[:, labels])) <= 1e-9 * s
                  and len(labels) > 1,
                  "pick one logit per row, logits[np.arange(n), labels]: logits[:, labels] is an n × n matrix"),
                 (lambda: abs(got + want) <= 1e-9 * s, "the sign: the loss is logsumexp(z) - z[label], >= 0")]

        def close_enough():
            if not abs(got - want) <= TOL * s:
                raise Fail(f"cross_entropy: expected {want!r}, got {got!r}",
                           summary=f"cross_entropy is wrong (beyond {TOL:g} × the largest |logit|)")
        diagnose(close_enough, hints)
        unchanged(r, 0, logits, "logits")
        unchanged(r, 1, labels, "labels")
    return Case("test_cross_entropy", name, call("cross_entropy", logits, labels), check, visible)


# --- float16 second moment ----------------------------------------------------------------------

def _second_moment(grads, beta2, *, c=None, step=None, dtype=np.float16, first=False):
    """A variant of the recipe, for naming a mistake: another ``c``, another update, another dtype, or
    (``first``) ``v`` started at the first gradient squared instead of zeros."""
    b2 = dtype(beta2)
    c = dtype(1 - beta2) if c is None else c
    v = np.zeros(np.shape(grads[0]), dtype=dtype)
    with np.errstate(all="ignore"):
        for i, g in enumerate(grads):
            g = np.asarray(g).astype(dtype)
            if first and i == 0:
                v = g * g
            else:
                v = step(v, g, b2, c) if step else b2 * v + c * (g * g)
    return v


def fp16_case(grads, beta2, name, visible=False):
    """``beta2`` None: the call leaves it at its default (0.999)."""
    grads = [np.asarray(g, dtype=float) for g in grads]
    args = (grads,) if beta2 is None else (grads, beta2)
    b = 0.999 if beta2 is None else beta2

    def check(r):
        v = r.value
        require(isinstance(v, np.ndarray) and v.dtype == np.float16,
                f"return a float16 NumPy array, got {v.dtype if isinstance(v, np.ndarray) else kind(v)}: "
                "cast each gradient and both coefficients to np.float16")
        want = fp16_second_moment(grads, b)
        require(v.shape == want.shape, f"v should have the shape of a gradient, {want.shape}, got {v.shape}")
        same = lambda w: np.array_equal(v, w, equal_nan=True)

        def exact():
            if not same(want):
                shown = (f"expected {want}, got {v}" if v.size <= 6
                         else f"{int((v != want).sum())} of {v.size} entries differ")
                raise Fail(f"v is not what the statement's float16 expression gives ({shown})",
                           summary="v is not what the statement's float16 expression gives")
        in_float64 = lambda: same(_second_moment(grads, b, dtype=np.float64).astype(np.float16))
        scaled_first = lambda: same(_second_moment(grads, b, step=lambda v, g, b2, c: b2 * v + c * g * g))
        diagnose(exact, [
            (lambda: in_float64() and scaled_first(),
             "v stays finite where g * g overflows float16: do every operation in float16 (not in float64, "
             "then cast), and square first, c * (g * g), as the statement writes it"),
            (in_float64, "v was computed in float64 and rounded to float16 at the end: do every operation in float16"),
            (scaled_first,
             "c * g * g is (c * g) * g: square first, c * (g * g), as the statement writes it (in float16 the "
             "order decides what overflows and what underflows)"),
            (lambda: same(_second_moment(grads, b, c=np.float16(1) - np.float16(b))),
             "c is np.float16(1 - beta2): compute 1 - beta2 in float64 and round it to float16 once"),
            (lambda: same(_second_moment(grads, b, first=True)),
             "v starts at float16 zeros, and every gradient, the first included, is one update"),
        ])
        unchanged(r, 0, grads, "grads")
    return Case("test_fp16_second_moment", name, call("fp16_second_moment", *args), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield lse_case([1000.0, 1000.0], "[1000, 1000] gives 1000 + log 2 (exp(1000) overflows)", visible=True)
    yield lse_case([-1000.0, -1000.0], "[-1000, -1000] gives -1000 + log 2, not -inf", visible=True)
    yield lse_case([[0.0, 1.0, 2.0], [500.0, -500.0, 0.0]], "two rows: one value per row (the last axis)",
                   visible=True)
    yield lse_case([[0.0, 1.0, 2.0], [-1000.0, -999.0, -1001.0], [-np.inf, 3.0, -np.inf], [-np.inf, -np.inf, -np.inf]],
                   "rows on very different levels and masked (-inf) logits; a row of only -inf gives -inf",
                   visible=True)
    yield softmax_case([1000.0, 0.0, -1000.0], "[1000, 0, -1000] gives [1, 0, 0]", visible=True)
    yield softmax_case([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], "two rows, each sums to 1; equal logits give 1/3 each",
                       visible=True)
    yield softmax_case([[-np.inf, 0.0, 0.0], [2000.0, 0.0, 1999.0]],
                       "a masked (-inf) logit has probability 0; a row of large logits", visible=True)
    yield ce_case([[2.0, 1.0, 0.1], [0.5, 2.5, 0.0]], [0, 1], "two samples, three classes (as torch gives)",
                  visible=True)
    yield ce_case([[0.0, 2000.0]], [0], "the true class 2000 below the other: the loss is 2000, finite",
                  visible=True)
    yield fp16_case([np.array([1e-4, 1.0])] * 5, None,
                    "g = 1e-4 underflows ((1e-4)^2 is below float16's smallest subnormal, ~6e-8), g = 1 does not",
                    visible=True)
    yield fp16_case([np.array([300.0, 0.5])] * 2, 0.99,
                    "g = 300: g * g = 90000 overflows float16 (largest 65504), so v is inf", visible=True)
