"""Hidden cases of ex07: read by the judge only, never copied into the sandbox or the release.

Drawn from the run's fresh ``rng``: logits of other shapes (1-D, 2-D, 3-D) and scales, from
temperatures that make them nearly equal (1e-8) to ones that make them far apart (1e4 to 1e6);
rows on very different levels (one shift for the whole batch fails there); masked (-inf) classes
and fully masked rows; a single class; true classes far below the others; and for the float16
second moment, gradients whose squares underflow, are subnormal, or overflow, one gradient,
2-D gradients, other ``beta2``. Every case also checks that the inputs are unchanged. The builders
and their checks are public, in :mod:`gdcourse.grading.assignments.ex07_stable_softmax`.
"""

import numpy as np

from gdcourse.grading.assignments.ex07_stable_softmax import ce_case, fp16_case, lse_case, softmax_case

REFERENCES = ("gdcourse.precision.logsumexp", "gdcourse.precision.softmax",
              "gdcourse.precision.cross_entropy_from_logits")
FORBIDDEN = ("scipy.special", "torch")  # the statement asks for NumPy only


def _levels(rng, n, k):
    """n rows of k logits, each row around its own level, levels from -1e4 to 1e4 (at least 1000 apart)."""
    levels = rng.permutation(np.array([0.0, 1000.0, -1000.0, 3000.0, -1e4, 1e4, 2000.0, -3000.0]))[:n]
    return levels[:, None] + rng.standard_normal((n, k)) * rng.uniform(0.1, 5.0)


def _masked(rng, n, k):
    """n rows of k logits with some classes masked (-inf), at least one finite logit per row."""
    z = rng.standard_normal((n, k)) * rng.uniform(1, 50)
    for row in z:
        row[rng.permutation(k)[:int(rng.integers(1, k))]] = -np.inf
    return z


def cases(rng):
    # --- logsumexp: shapes and scales, then the extremes
    for shape in [(1,), (5,), (3, 4), (2, 3, 6)]:
        for scale in (1.0, 1e4):
            yield lse_case(rng.standard_normal(shape) * scale,
                           f"logsumexp of shape {shape}, logits of scale {scale:g}: one value per row, inputs unchanged")
    yield lse_case(rng.standard_normal((4, 7)) * 10.0 ** rng.uniform(5, 6),
                   "logsumexp at a tiny temperature (logits of scale 1e5 to 1e6): the largest logit")
    yield lse_case(rng.standard_normal((3, 5)) * 1e-8, "logsumexp at a huge temperature (logits of scale 1e-8)")
    yield lse_case(_levels(rng, 4, int(rng.integers(2, 7))), "logsumexp of rows on very different levels")
    yield lse_case(_masked(rng, 3, 5), "logsumexp ignores masked (-inf) logits")
    yield lse_case(np.array([[-np.inf, -np.inf], [-np.inf, float(rng.uniform(-5, 5))]]),
                   "logsumexp of a row of only -inf logits is -inf")
    yield lse_case(rng.standard_normal((4, 1)) * 100, "logsumexp of a single class is that logit")

    # --- softmax
    for shape in [(4,), (3, 5), (2, 2, 7)]:
        yield softmax_case(rng.standard_normal(shape) * 300,
                           f"softmax of shape {shape}, large logits: a new array, inputs unchanged")
    yield softmax_case(_levels(rng, 5, int(rng.integers(2, 7))), "softmax of rows on very different levels")
    yield softmax_case(_masked(rng, 3, 4), "softmax gives masked (-inf) logits probability 0")
    yield softmax_case(rng.standard_normal((3, 6)) * 10.0 ** rng.uniform(4, 6),
                       "softmax at a tiny temperature (logits of scale 1e4 to 1e6): nearly one-hot")
    yield softmax_case(rng.standard_normal((2, 5)) * 1e-8, "softmax at a huge temperature: nearly uniform")
    yield softmax_case(rng.standard_normal(1) * 1e3, "softmax of a single logit is [1]")

    # --- cross-entropy
    for n, k, scale in [(1, 2, 1.0), (8, 5, 10.0), (16, 10, 1e3)]:
        yield ce_case(rng.standard_normal((n, k)) * scale, rng.integers(0, k, n),
                      f"cross_entropy of {n} sample(s), {k} classes, logits of scale {scale:g}: the mean")
    n, k = 6, 4
    logits, labels = rng.standard_normal((n, k)), rng.integers(0, k, n)
    far = rng.permutation(n)[:3]
    logits[far, labels[far]] -= rng.uniform(1000, 5000, 3)
    yield ce_case(logits, labels, "cross_entropy when true classes are far below the others (finite, no log 0)")
    yield ce_case(_levels(rng, 6, 3), rng.integers(0, 3, 6), "cross_entropy of rows on very different levels")
    logits, labels = _masked(rng, 5, 6), np.zeros(5, dtype=np.int64)
    for i, row in enumerate(logits):
        labels[i] = rng.choice(np.flatnonzero(np.isfinite(row)))
    yield ce_case(logits, labels, "cross_entropy with masked (-inf) classes other than the label")
    yield ce_case(rng.standard_normal((5, 3)) * 10.0 ** rng.uniform(4, 6), rng.integers(0, 3, 5),
                  "cross_entropy at a tiny temperature (logits of scale 1e4 to 1e6)")
    yield ce_case(rng.standard_normal((3, 1)), np.zeros(3, dtype=np.int64), "cross_entropy of a single class is 0")

    # --- the float16 second moment
    for beta2 in (0.999, 0.99):
        gs = [rng.standard_normal(6) * 10.0 ** rng.uniform(-5, 1, 6) for _ in range(20)]
        yield fp16_case(gs, beta2, f"fp16_second_moment with beta2 = {beta2:g}, gradients from 1e-5 to 10")
    gs = [rng.standard_normal((2, 3)) for _ in range(int(rng.integers(5, 15)))]
    yield fp16_case(gs, None, "fp16_second_moment of 2-d gradients, default beta2")
    yield fp16_case([rng.standard_normal(4)], float(rng.choice([0.9, 0.99, 0.999])),
                    "fp16_second_moment after one gradient")
    mags = np.array([1e-6, 1e-4, 3e-3, 1e-2, 1.0, 30.0, 300.0, 1e3])  # g^2 underflows ... g^2 overflows (> 65504)
    gs = [rng.permutation(mags) * rng.choice([-1.0, 1.0], 8) * rng.uniform(0.8, 1.2, 8) for _ in range(10)]
    yield fp16_case(gs, 0.999, "fp16_second_moment: tiny squares underflow to 0 and huge ones overflow, as in float16")
    gs = [rng.uniform(3e-3, 3e-2, 5) * rng.choice([-1.0, 1.0], 5) for _ in range(int(rng.integers(10, 30)))]
    yield fp16_case(gs, 0.9999, "fp16_second_moment with beta2 = 0.9999: (1 - beta2) g^2 in float16's subnormals")
