"""Trusted cases of ex07: read by the judge only, never copied into the sandbox.

Visible cases repeat the notebook's visible tests; hidden ones draw logits of
other shapes and scales from the run's fresh ``rng``, plus the regimes the
exercise is about: logits of +-1000 and beyond, rows on very different levels
(one shift for the whole batch fails there), masked (-inf) classes, a true class
far below the others, and float16 underflow and overflow of Adam's second moment.

Expected values: PyTorch in float64 (``torch.logsumexp``, ``torch.softmax``,
``torch.nn.functional.cross_entropy``), and for ``fp16_second_moment`` the
statement's own float16 recipe, here. Tolerances are relative to the size of
the logits a value is computed from (a result near 0 is a difference of large
numbers), so that a correct answer that orders its operations otherwise passes.
"""

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, close, kind, number, require

REFERENCES = ("gdcourse.precision.logsumexp", "gdcourse.precision.softmax",
              "gdcourse.precision.cross_entropy_from_logits")

RTOL_LSE = 1e-12  # logsumexp, relative to the largest |logit| of the row
RTOL_P = 1e-10  # softmax probabilities, relative (and 1e-300 absolute, for underflowed ones)
RTOL_CE = 1e-10  # cross-entropy, relative to the loss and to the largest |logit|


def _torch():
    import torch
    return torch


def _lse_ref(z):
    torch = _torch()
    return torch.logsumexp(torch.tensor(z, dtype=torch.float64), dim=-1).numpy()


def _softmax_ref(z):
    torch = _torch()
    return torch.softmax(torch.tensor(z, dtype=torch.float64), dim=-1).numpy()


def _ce_ref(logits, labels):
    torch = _torch()
    return torch.nn.functional.cross_entropy(torch.tensor(logits, dtype=torch.float64),
                                             torch.tensor(labels, dtype=torch.int64)).item()


def _row_scale(z):
    """Per row (last axis): the largest finite |logit|, at least 1."""
    finite = np.where(np.isfinite(z), np.abs(z), 0.0)
    return np.maximum(np.max(finite, axis=-1), 1.0)


def _near(got, want, scale, rtol, what, hint=""):
    """``got`` matches ``want`` element-wise within ``rtol * scale``; an infinite ``want`` must be matched exactly."""
    a = as_array(got, what)
    want = np.asarray(want, dtype=float)
    if a.shape != want.shape:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape}" + (f". {hint}" if hint else ""))
    with np.errstate(invalid="ignore", over="ignore"):
        exact = ~np.isfinite(want)
        ok = np.where(exact, (a == want) | (np.isnan(a) & np.isnan(want)),
                      np.isfinite(a) & (np.abs(a - want) <= rtol * scale))
    if not ok.all():
        shown = (f"expected {np.array2string(want, precision=12)}, got {np.array2string(a, precision=12)}"
                 if a.size <= 6 else f"{int((~ok).sum())} of {a.size} entries differ beyond rtol={rtol:g}")
        raise Fail(f"{what}: {shown}" + (f". {hint}" if hint else ""))


# --- logsumexp ------------------------------------------------------------------------

def lse_case(z, name, visible=False, check_extra=None, hint=""):
    z = np.asarray(z, dtype=float)

    def check(r):
        if check_extra:
            check_extra(r.value)
        _near(r.value, _lse_ref(z), _row_scale(z), RTOL_LSE, "logsumexp(z)",
              hint or "one value per row: reduce over the last axis, shifted by each row's maximum")
    return Case("test_logsumexp", name, call("logsumexp", z), check, visible)


def _finite_1000(value):
    got = as_array(value, "logsumexp([1000, 1000])")
    require(np.all(np.isfinite(got)), f"logsumexp([1000, 1000]) must be finite (1000 + log 2), got {got}: "
                                      "exp(1000) overflows, so shift by the maximum first")


def _not_minus_inf(value):
    got = as_array(value, "logsumexp([-1000, -1000])")
    require(np.all(np.isfinite(got)), f"very negative logits must not give -inf (expected -1000 + log 2), got {got}: "
                                      "shift by the maximum, and add it back")


# --- softmax ----------------------------------------------------------------------------

def softmax_case(z, name, visible=False, check_extra=None):
    z = np.asarray(z, dtype=float)

    def check(r):
        if check_extra:
            check_extra(r.value)
        want = _softmax_ref(z)
        a = as_array(r.value, "softmax(z)")
        require(np.all(np.isfinite(a)), "softmax of large logits must not contain nan/inf"
                + (f", got {a}" if a.size <= 6 else "") + ": subtract the maximum before exp")
        close(a, want, rtol=RTOL_P, atol=1e-300, what="softmax(z)")
    return Case("test_softmax", name, call("softmax", z), check, visible)


def _rows_sum_to_one(value):
    P = as_array(value, "softmax(Z)")
    require(P.shape == (2, 3) and np.allclose(P.sum(axis=-1), 1.0), "each row (last axis) must sum to 1")
    require(np.allclose(P[1], 1 / 3), "equal logits give equal probabilities")


# --- cross-entropy --------------------------------------------------------------------------

def ce_case(logits, labels, name, visible=False, hint=""):
    logits = np.asarray(logits, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)

    def check(r):
        require(np.ndim(r.value) == 0 or np.size(r.value) == 1, "cross_entropy should return one number (the mean)")
        got = number(r.value, "cross_entropy")
        want = _ce_ref(logits, labels)
        require(np.isfinite(got), f"the loss is {want:.6f}, finite, got {got}"
                + (f". {hint}" if hint else ". Use logsumexp(z) - z[label], never log(softmax(z))."))
        scale = max(abs(want), float(np.max(_row_scale(logits))))
        if not abs(got - want) <= RTOL_CE * scale:
            raise Fail(f"expected {want:.6f} (torch), got {got}" + (f". {hint}" if hint else ""))
    return Case("test_cross_entropy", name, call("cross_entropy", logits, labels), check, visible)


# --- float16 second moment ----------------------------------------------------------------------

def _fp16_ref(grads, beta2):
    b2, om = np.float16(beta2), np.float16(1 - beta2)
    v = np.zeros(np.shape(grads[0]), dtype=np.float16)
    with np.errstate(over="ignore", under="ignore"):  # float16 overflow to inf is part of the answer
        for g in grads:
            g16 = np.asarray(g).astype(np.float16)
            v = b2 * v + om * (g16 * g16)
    return v


def fp16_case(grads, beta2, name, visible=False, check_extra=None):
    grads = [np.asarray(g, dtype=float) for g in grads]
    args = (grads,) if beta2 is None else (grads, beta2)

    def check(r):
        v = r.value
        require(isinstance(v, np.ndarray) and v.dtype == np.float16,
                f"return a float16 NumPy array, got {v.dtype if isinstance(v, np.ndarray) else kind(v)}")
        want = _fp16_ref(grads, 0.999 if beta2 is None else beta2)
        require(v.shape == want.shape, f"v should have the shape of a gradient, {want.shape}, got {v.shape}")
        if check_extra:
            check_extra(v)
        if not np.array_equal(v, want, equal_nan=True):
            shown = (f"expected {want}, got {v}" if v.size <= 6
                     else f"{int((v != want).sum())} of {v.size} entries differ")
            raise Fail(f"v is not what float16 arithmetic gives ({shown}): cast every gradient and both "
                       "coefficients (beta2 and 1 - beta2) to float16, and do every operation of "
                       "v = beta2 * v + (1 - beta2) * g * g in float16")
    return Case("test_fp16_second_moment", name, call("fp16_second_moment", *args), check, visible)


def _visible_fp16(v):
    require(v[0] == 0, "(1e-4)^2 = 1e-8 is below float16's smallest subnormal (~6e-8): it underflows to 0, "
                       f"so v stays 0; got {v[0]}")
    require(v[1] > 0, "for g = 1 the second moment is positive")


def _levels(rng, n, k):
    """n rows of k logits, each row around its own level, levels from -1e4 to 1e4 (at least 1000 apart)."""
    levels = rng.permutation(np.array([0.0, 1000.0, -1000.0, 3000.0, -1e4, 1e4, 2000.0, -3000.0]))[:n]
    return levels[:, None] + rng.standard_normal((n, k)) * rng.uniform(0.1, 5.0)


def cases(rng):
    # --- the visible tests' examples
    yield lse_case([1000.0, 1000.0], "the visible example [1000, 1000]", visible=True,
                   check_extra=_finite_1000, hint="shift by the maximum, then add it back")
    yield lse_case([-1000.0, -1000.0], "the visible example [-1000, -1000]", visible=True,
                   check_extra=_not_minus_inf, hint="shift by the maximum, then add it back")
    yield lse_case([[0.0, 1.0, 2.0], [500.0, -500.0, 0.0]], "the visible example, two rows", visible=True,
                   hint="reduce over the LAST axis: one value per row")
    yield softmax_case([1000.0, 0.0, -1000.0], "the visible example [1000, 0, -1000]", visible=True)
    yield softmax_case([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], "the visible example, two rows", visible=True,
                       check_extra=_rows_sum_to_one)
    yield ce_case([[2.0, 1.0, 0.1], [0.5, 2.5, 0.0]], [0, 1], "the visible example", visible=True)
    yield ce_case([[0.0, 2000.0]], [0], "the visible example: the true class 2000 below the other", visible=True,
                  hint="Use logsumexp(z) - z[label], never log(softmax(z)).")
    yield fp16_case([np.array([1e-4, 1.0])] * 5, None, "the visible example", visible=True,
                    check_extra=_visible_fp16)

    # --- hidden: logsumexp over shapes and scales, then the extremes
    for shape in [(1,), (5,), (3, 4), (2, 3, 6)]:
        for scale in (1.0, 100.0, 1e4):
            yield lse_case(rng.standard_normal(shape) * scale,
                           f"logsumexp of shape {shape}, logits of scale {scale:g}: one value per row")
    yield lse_case(_levels(rng, 4, int(rng.integers(2, 7))), "logsumexp of rows on very different levels")
    z = rng.standard_normal((3, 5))
    z[0, rng.integers(0, 5)] = z[1, :2] = z[2, rng.integers(0, 5)] = -np.inf
    yield lse_case(z, "logsumexp ignores masked (-inf) logits")
    yield lse_case(np.array([[-np.inf, -np.inf], [-np.inf, float(rng.uniform(-5, 5))]]),
                   "logsumexp of a row of only -inf logits is -inf")

    # --- hidden: softmax
    for shape in [(4,), (3, 5), (2, 2, 7)]:
        yield softmax_case(rng.standard_normal(shape) * 300, f"softmax of shape {shape}, large logits")
    yield softmax_case(_levels(rng, 5, int(rng.integers(2, 7))), "softmax of rows on very different levels")
    z = np.zeros((2, 3))
    z[0, int(rng.integers(0, 3))] = -np.inf
    z[1] = rng.standard_normal(3)
    z[1, int(rng.integers(0, 3))] = -np.inf
    yield softmax_case(z, "softmax gives masked (-inf) logits probability 0")

    # --- hidden: cross-entropy
    for n, k, scale in [(1, 2, 1.0), (8, 5, 10.0), (16, 10, 1e3)]:
        yield ce_case(rng.standard_normal((n, k)) * scale, rng.integers(0, k, n),
                      f"cross_entropy of {n} sample(s), {k} classes, logits of scale {scale:g}")
    n, k = 6, 4
    logits, labels = rng.standard_normal((n, k)), rng.integers(0, k, n)
    far = rng.permutation(n)[:3]
    logits[far, labels[far]] -= rng.uniform(1000, 5000, 3)
    yield ce_case(logits, labels, "cross_entropy when true classes are far below the others (finite, no log 0)")
    yield ce_case(_levels(rng, 6, 3), rng.integers(0, 3, 6), "cross_entropy of rows on very different levels")

    # --- hidden: the float16 second moment
    for beta2 in (0.999, 0.99):
        gs = [rng.standard_normal(6) * 10.0 ** rng.uniform(-5, 1, 6) for _ in range(20)]
        yield fp16_case(gs, beta2, f"fp16_second_moment with beta2 = {beta2:g}, gradients from 1e-5 to 10")
    gs = [rng.standard_normal((2, 3)) for _ in range(int(rng.integers(5, 15)))]
    yield fp16_case(gs, None, "fp16_second_moment of 2-d gradients, default beta2")
    yield fp16_case([rng.standard_normal(4)], float(rng.choice([0.9, 0.99, 0.999])),
                    "fp16_second_moment after one gradient")
    mags = np.array([1e-6, 1e-4, 3e-3, 1.0, 30.0, 300.0, 1e3])  # g^2 underflows ... g^2 overflows (> 65504)
    gs = [rng.permutation(mags) * rng.choice([-1.0, 1.0], 7) * rng.uniform(0.8, 1.2, 7) for _ in range(10)]
    yield fp16_case(gs, 0.999, "fp16_second_moment: tiny gradients underflow to 0 and huge ones overflow, "
                               "as in float16")
