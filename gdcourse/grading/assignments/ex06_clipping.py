"""ex06, gradient clipping: the course's reference, the probe, the case builders and the visible cases.

Every case is one call of ``global_norm``, ``clip_by_global_norm`` or ``clip_by_value`` on a list
of NumPy gradient arrays, through :func:`observe`, which also reports the list as it is after
the call and whether a returned array shares memory with a given one. Compared, as the
exercise's statement says:

- norms (``global_norm``, the norm ``clip_by_global_norm`` returns) within a relative ``RTOL =
  1e-12`` of the norm computed in float64, whatever the gradients' dtype (inf and NaN as they are);
- clipped arrays element-wise within a relative ``RTOL`` of the float64 result (``RTOL32 = 1e-6``
  where the given array is float32, so a float32 or a float64 answer passes), NaN where it is
  NaN; shapes as given, one array per given array;
- the list and its arrays unchanged after the call, and no returned array sharing memory with a
  given one (new arrays, even where nothing is clipped).

The expected answers are torch's rules written out in float64: ``clip_grad_norm_``'s factor
``min(1, max_norm / (norm + 1e-6))`` applied as it is (a NaN norm gives a NaN factor, an infinite
norm a zero factor; a norm equal to ``max_norm`` still scales by ``max_norm / (max_norm + 1e-6)``),
and ``clip_grad_value_``'s clamp (NaN stays NaN, infinities become the bounds).
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.cases import (Case, Fail, as_array, close, diagnose, number, probe, require, resembles)

RTOL = 1e-12  # norms, and clipped float64 arrays (stated in the exercise)
RTOL32 = 1e-6  # clipped float32 arrays, answered in float32 or float64 (stated in the exercise)
NORM_EPS = 1e-6  # torch's clip_grad_norm_ adds it to the norm


# --- the reference ----------------------------------------------------------------------

def global_norm(grads):
    return float(np.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads)))


def clip_by_global_norm(grads, max_norm):
    norm = global_norm(grads)
    factor = float(np.minimum(1.0, max_norm / (norm + NORM_EPS)))  # NaN stays NaN, as in torch
    return [g * factor for g in grads], norm


def clip_by_value(grads, clip_value):
    return [np.clip(g, -clip_value, clip_value) for g in grads]


REFERENCE = {"global_norm": global_norm, "clip_by_global_norm": clip_by_global_norm, "clip_by_value": clip_by_value}


# --- the probe (runs in the sandbox and in the self-check) ---------------------------------

def _arrays(value, depth=0):
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)) and depth < 2:
        return [a for v in value for a in _arrays(v, depth + 1)]
    return []


def observe(fn, grads, *args):
    """``fn(grads, *args)``: what it returned, the list as it is after the call, and whether a
    returned array shares memory with one of the given arrays."""
    given = [g for g in grads if isinstance(g, np.ndarray)]
    result = fn(grads, *args)
    shares = any(np.shares_memory(a, g) for a in _arrays(result) for g in given)
    return {"result": result, "after": grads, "shares": bool(shares)}


# --- checks -------------------------------------------------------------------------------

def _with_nonfinite():
    return np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore")


def _inputs_kept(r, grads, fn):
    """The list passed in holds the same arrays, unmodified, and nothing returned shares memory with them."""
    report = r.value
    message = f"{fn} modified the gradients passed in: leave the list and its arrays as they are"
    after = report.get("after") if isinstance(report, dict) else None
    require(isinstance(after, list) and len(after) == len(grads), message)
    for a, g in zip(after, grads):
        try:
            same = np.array_equal(as_array(a), np.asarray(g, float), equal_nan=True) and np.shape(a) == g.shape
        except Fail:
            same = False
        require(same, message)
    require(report.get("shares") is False,
            f"{fn} returned an array that shares memory with a given one: return new arrays "
            f"(np.copy, or g * factor), even where nothing is clipped")


def _result(r, fn):
    require(isinstance(r.value, dict) and "result" in r.value, f"{fn} returned nothing to check")
    return r.value["result"]


def _clipped(value, grads, fn):
    """The returned arrays: a list (or tuple) of one array per given array, shaped like it."""
    require(isinstance(value, (list, tuple)) and len(value) == len(grads),
            f"{fn} should return a list of {len(grads)} array(s), one per gradient array" if len(grads) > 1
            else f"{fn} should return a list of arrays, one per gradient array")
    out = []
    for i, (a, g) in enumerate(zip(value, grads)):
        arr = as_array(a, f"clipped array {i}")
        require(arr.shape == g.shape, f"clipped array {i} should keep the shape of gradient {i}, {g.shape}")
        out.append(arr)
    return out


def _rtol(g):
    return RTOL32 if g.dtype == np.float32 else RTOL


def _close_all(got, want, grads, what):
    for i, (a, w, g) in enumerate(zip(got, want, grads)):
        close(a, w, rtol=_rtol(g), atol=0.0, what=f"{what} {i}" if len(grads) > 1 else what)


def _resembles_all(got, want, grads):
    """``got`` is ``want`` within the tolerance the check uses: a known mistake's answer, matched as the check would."""
    try:
        return len(got) == len(want) and all(resembles(a, w, rtol=_rtol(g), atol=0) for a, w, g in zip(got, want, grads))
    except (TypeError, ValueError):
        return False


def _norm64(grads):
    with _with_nonfinite():
        return float(np.sqrt(sum(np.sum(np.square(np.asarray(g, np.float64))) for g in grads)))


def _norm_in_dtype(grads):
    """What squaring in the gradients' own dtype gives (float32 overflows and underflows)."""
    with _with_nonfinite():
        return float(np.sqrt(sum(np.sum(np.square(g)) for g in grads)))


def _factor(max_norm, norm):
    with _with_nonfinite():
        return float(np.minimum(1.0, max_norm / (norm + NORM_EPS)))


def _scaled(grads, factor):
    with _with_nonfinite():
        return [np.asarray(g, np.float64) * factor for g in grads]


FLOAT64_HINT = ("compute the norm in float64: convert each array with g.astype(np.float64) before squaring "
                "(float32 squares overflow above about 1.8e19 and underflow below about 1e-23)")


def norm_hints(got, grads):
    """(matches, hint) pairs for a wrong norm: what known mistakes give for these gradients."""
    with _with_nonfinite():
        norms = [_norm64([g]) for g in grads]
        wrong = [(_norm_in_dtype(grads), FLOAT64_HINT),
                 (sum(norms), "square and sum over ALL arrays, then take one square root "
                              "(not the sum of the arrays' own norms)"),
                 (_norm64(grads) ** 2, "take the square root of the sum of squares"),
                 (max(norms), "the norm is over all arrays together, not the largest array's norm"),
                 (norms[0], "include every array of the list, not just the first"),
                 (float(np.sqrt(np.mean(np.concatenate([np.ravel(np.asarray(g, np.float64)) for g in grads]) ** 2))),
                  "the L2 norm sums the squares; it does not average them")]
    right = _norm64(grads)
    return [(lambda w=w: resembles(got, w, rtol=RTOL, atol=0), hint) for w, hint in wrong
            if not resembles(w, right, rtol=RTOL, atol=0)]


def norm_case(grads, name, visible=False):
    grads = [np.asarray(g) for g in grads]

    def check(r):
        got = _result(r, "global_norm")
        require(np.ndim(got) == 0 or np.size(got) == 1, "global_norm should return one number")
        value = number(got, "global_norm")
        diagnose(lambda: close(value, _norm64(grads), rtol=RTOL, atol=0.0, what="global_norm"),
                 norm_hints(value, grads))
        _inputs_kept(r, grads, "global_norm")
    return Case("test_global_norm", name, probe("global_norm", "observe", grads), check, visible)


def clip_norm_case(grads, max_norm, name, visible=False):
    grads = [np.asarray(g) for g in grads]

    def check(r):
        got = _result(r, "clip_by_global_norm")
        require(isinstance(got, (tuple, list)) and len(got) == 2,
                "clip_by_global_norm should return (clipped, norm_before)")
        clipped = _clipped(got[0], grads, "clip_by_global_norm")
        norm = _norm64(grads)
        factor = _factor(max_norm, norm)
        want = _scaled(grads, factor)
        with _with_nonfinite():
            per_tensor = _scaled_each(grads, max_norm)
            always = _scaled(grads, max_norm / (norm + NORM_EPS))
            no_eps = _scaled(grads, float(np.minimum(1.0, max_norm / norm)) if norm else 1.0)
            python_min = _scaled(grads, min(1.0, max_norm / (norm + NORM_EPS)))
            threshold = [np.asarray(g, np.float64) for g in grads] if norm <= max_norm else want
            in_dtype = _scaled(grads, _factor(max_norm, _norm_in_dtype(grads)))
        hints = [(threshold, "a norm equal to max_norm is still scaled by max_norm / (max_norm + 1e-6): "
                             "apply the factor as written, without a separate comparison"),
                 (in_dtype, FLOAT64_HINT),
                 (per_tensor, "scale every array by the SAME factor, from the global norm of all arrays together "
                              "(clipping each array to its own norm changes the direction)"),
                 (always, "scale only when the norm is above max_norm: the factor is min(1, max_norm / (norm + 1e-6))"),
                 (no_eps, "add 1e-6 to the norm before dividing: max_norm / (norm + 1e-6)"),
                 (python_min, "a NaN norm must make the factor NaN, as torch does (Python's min(1.0, nan) "
                              "returns 1.0; np.minimum keeps the NaN)")]
        diagnose(lambda: _close_all(clipped, want, grads, "clipped array"),
                 [(lambda h=h: _resembles_all(clipped, h, grads), hint) for h, hint in hints
                  if not _resembles_all(h, want, grads)])
        value = number(got[1], "the norm returned")
        clipped_norm = _norm64(want)
        diagnose(lambda: close(value, norm, rtol=RTOL, atol=0.0, what="the norm returned"),
                 [(lambda: not resembles(clipped_norm, norm, rtol=RTOL, atol=0)
                   and resembles(value, clipped_norm, rtol=RTOL, atol=0),
                   "return the global norm measured BEFORE clipping (the one you log)")]
                 + norm_hints(value, grads))
        _inputs_kept(r, grads, "clip_by_global_norm")
    return Case("test_clip_by_global_norm", name, probe("clip_by_global_norm", "observe", grads, max_norm),
                check, visible)


def _scaled_each(grads, max_norm):
    return [np.asarray(g, np.float64) * _factor(max_norm, _norm64([g])) for g in grads]


def clip_value_case(grads, clip_value, name, visible=False):
    grads = [np.asarray(g) for g in grads]

    def check(r):
        clipped = _clipped(_result(r, "clip_by_value"), grads, "clip_by_value")
        g64 = [np.asarray(g, np.float64) for g in grads]
        want = [np.clip(g, -clip_value, clip_value) for g in g64]
        with _with_nonfinite():
            top = max(float(np.nanmax(np.abs(g), initial=0.0)) for g in g64)
            hints = [([np.minimum(g, clip_value) for g in g64],
                      "clamp both sides: components below -clip_value become -clip_value"),
                     ([g * min(1.0, clip_value / top) if top else g for g in g64],
                      "clip_by_value clamps each component on its own; it does not rescale the arrays"),
                     ([np.clip(g, 0, clip_value) for g in g64], "the range is [-clip_value, clip_value], not [0, clip_value]"),
                     ([np.clip(np.abs(g), -clip_value, clip_value) for g in g64], "keep the components' signs"),
                     ([np.where(np.isnan(g), clip_value, np.clip(g, -clip_value, clip_value)) for g in g64],
                      "a NaN component stays NaN, as torch.clamp leaves it (Python's min and max do not)")]
        diagnose(lambda: _close_all(clipped, want, grads, "clipped array"),
                 [(lambda h=h: _resembles_all(clipped, h, grads), hint) for h, hint in hints
                  if not _resembles_all(h, want, grads)])
        _inputs_kept(r, grads, "clip_by_value")
    return Case("test_clip_by_value", name, probe("clip_by_value", "observe", grads, clip_value), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield norm_case([np.array([3.0]), np.array([[4.0, 0.0], [0.0, 0.0]])],
                    "sqrt(3**2 + 4**2) = 5 across two arrays", visible=True)
    yield norm_case([np.zeros(3)], "an all-zero gradient has norm 0", visible=True)
    g = [np.array([3.0, 0.0]), np.array([[0.0], [4.0]])]
    yield clip_norm_case(g, 1.0, "norm 5, max_norm 1: both arrays scaled by 1 / (5 + 1e-6), norm 5 returned",
                         visible=True)
    yield clip_norm_case(g, 10.0, "norm 5, max_norm 10: nothing changes, new arrays returned", visible=True)
    rng = np.random.default_rng(0)
    yield clip_norm_case([rng.standard_normal(3), 10 * rng.standard_normal((2, 2))], 0.5,
                         "two arrays of different scales, max_norm 0.5, as torch.nn.utils.clip_grad_norm_",
                         visible=True)
    yield clip_value_case([np.array([2.5, -3.0, 0.5]), np.array([[-0.2]])], 1.0,
                          "each component clamped to [-1, 1] on its own", visible=True)
