"""Hidden cases of ex06: read by the judge only, never copied into the sandbox or the release.

Gradient lists drawn from the run's fresh ``rng``: one to three arrays of 1 to 3 dimensions,
scales from 1e-3 to 1e3; a single array; all zeros; a norm below, exactly at and just above
``max_norm``; one array far larger than the others (global vs per-tensor clipping); infinite and
NaN components; float32 gradients of order 1e25 and 1e-25 (whose squares overflow or underflow in
float32); float64 ones of order 1e100 and 1e-100. Every case also checks that the list and its
arrays are unchanged and that the returned arrays are new. The builders and their checks are
public, in :mod:`gdcourse.grading.assignments.ex06_clipping`.
"""

import numpy as np

from gdcourse.grading.assignments.ex06_clipping import clip_norm_case, clip_value_case, norm_case

REFERENCES = ("gdcourse.clipping.global_norm", "gdcourse.clipping.clip_by_global_norm",
              "gdcourse.clipping.clip_by_value", "gdcourse.clipping.clip_per_tensor")

SHAPES = [[(1,)], [(3,), (2, 2)], [(5, 4), (1,), (2, 3, 2)]]


def _grads(rng, shapes, scale=None, dtype=np.float64):
    s = 10.0 ** rng.uniform(-3, 3) if scale is None else scale
    return [(s * rng.standard_normal(shape)).astype(dtype) for shape in shapes]


def _with(rng, value, shapes=((4,), (2, 3))):
    """Gradients with one component set to ``value`` (inf, -inf or NaN)."""
    grads = _grads(rng, shapes, scale=1.0)
    grads[int(rng.integers(len(grads)))].flat[0] = value
    return grads


def cases(rng):
    # --- global_norm
    for shapes in SHAPES:
        yield norm_case(_grads(rng, shapes), f"global_norm of {len(shapes)} array(s) of any scale")
    yield norm_case([rng.standard_normal((4, 3))], "global_norm of a single 2-d array")
    yield norm_case([np.zeros((2, 2)), np.zeros(5)], "global_norm of all-zero gradients is 0")
    yield norm_case(_grads(rng, [(3,), (2, 2)], 1e25, np.float32),
                    "global_norm of float32 gradients of order 1e25 (computed in float64, no overflow)")
    yield norm_case(_grads(rng, [(3,), (2, 2)], 1e-25, np.float32),
                    "global_norm of float32 gradients of order 1e-25 (computed in float64, no underflow)")
    yield norm_case(_grads(rng, [(3,)], 1.0, np.float32) + _grads(rng, [(2, 2)], 1.0),
                    "global_norm of float32 and float64 arrays together, in float64")
    yield norm_case(_grads(rng, [(3,)], 1e100) + _grads(rng, [(4,)], 1e-100),
                    "global_norm of float64 gradients of order 1e100 and 1e-100")
    yield norm_case(_with(rng, np.inf), "global_norm of a gradient with an infinite component is inf")
    yield norm_case(_with(rng, np.nan), "global_norm of a gradient with a NaN component is NaN")

    # --- clip_by_global_norm
    for shapes, max_norm in zip(SHAPES * 2, (1e-3, 0.5, 1.0, 1e4, 2.0, 0.1)):
        yield clip_norm_case(_grads(rng, shapes), max_norm,
                             f"clip_by_global_norm of {len(shapes)} array(s), max_norm = {max_norm:g}")
    g = _grads(rng, [(3,), (2, 2)], 1.0)
    norm = float(np.sqrt(sum(np.sum(x ** 2) for x in g)))
    yield clip_norm_case(g, 3 * norm, "clip_by_global_norm below max_norm: values unchanged, new arrays")
    yield clip_norm_case(g, norm, "clip_by_global_norm with the norm exactly at max_norm: scaled by "
                                  "max_norm / (max_norm + 1e-6)")
    yield clip_norm_case(g, norm + 2e-6, "clip_by_global_norm with the norm 2e-6 below max_norm: unchanged")
    yield clip_norm_case(g, norm * (1 - 1e-3), "clip_by_global_norm with the norm just above max_norm")
    yield clip_norm_case([rng.standard_normal((2, 3))], 0.5, "clip_by_global_norm of a single array")
    yield clip_norm_case([np.zeros(3), np.zeros((2, 2))], 1.0,
                         "clip_by_global_norm of all-zero gradients: zeros and norm 0, no division by zero")
    yield clip_norm_case([0.01 * rng.standard_normal(4), 100 * rng.standard_normal((3, 2))], 1.0,
                         "clip_by_global_norm scales a small array by the global factor too (not per tensor)")
    yield clip_norm_case(_with(rng, np.inf), 1.0,
                         "clip_by_global_norm with an infinite component: norm inf, factor 0 (as torch)")
    yield clip_norm_case(_with(rng, -np.inf), 5.0,
                         "clip_by_global_norm with a -inf component: norm inf, factor 0 (as torch)")
    yield clip_norm_case(_with(rng, np.nan), 1.0,
                         "clip_by_global_norm with a NaN component: norm NaN, every entry NaN (as torch)")
    yield clip_norm_case(_grads(rng, [(3,), (2, 2)], 1e25, np.float32), 1.0,
                         "clip_by_global_norm of float32 gradients of order 1e25 (norm in float64)")
    yield clip_norm_case(_grads(rng, [(3,), (2, 2)], 1e-25, np.float32), 1.0,
                         "clip_by_global_norm of float32 gradients of order 1e-25: unchanged, their norm in float64")

    # --- clip_by_value
    for shapes, cv in zip(SHAPES + SHAPES[1:], (1e-3, 0.7, 100.0, 2.0, 0.05)):
        yield clip_value_case(_grads(rng, shapes, 3.0), cv,
                              f"clip_by_value of {len(shapes)} array(s), clip_value = {cv:g}")
    yield clip_value_case([rng.standard_normal((3, 3))], 0.5, "clip_by_value of a single 2-d array")
    yield clip_value_case(_grads(rng, [(4,), (2, 2)], 0.1), 1.0,
                          "clip_by_value with nothing to clip: values unchanged, new arrays")
    g = _with(rng, np.nan, shapes=((6,),))
    g[0][1], g[0][2] = np.inf, -np.inf
    yield clip_value_case(g, 0.5, "clip_by_value: NaN stays NaN, +-inf become +-clip_value (as torch.clamp)")
    yield clip_value_case(_grads(rng, [(5,), (2, 3)], 2.0, np.float32), 0.7, "clip_by_value of float32 gradients")
