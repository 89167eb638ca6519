"""Hidden cases of ex12: read by the judge only, never copied into the sandbox or the release.

Exports cost seconds, so there is one hidden export (plus the visible one), which reaches every regime at
once: another architecture (two hidden layers, heavy dropout), the smallest example allowed (2 rows), the
path as a ``str`` inside a nested folder whose name has a space, batches of 1 up to 300 rows.
``onnx_predict`` and ``parity_check`` get files built by hand (milliseconds): deeper networks, a batch of one row, float64, float16 and Fortran-ordered inputs; parity
on the ``atol`` boundary both ways (explicit and default), another model's file, a single row (where a
forward pass in training mode fails), a model handed over already in eval mode. The builders and their
checks are public, in :mod:`gdcourse.grading.assignments.ex12_onnx_export`.
"""

import numpy as np

from gdcourse.grading.assignments.ex12_onnx_export import export_case, model_of, parity_case, predict_case, spec

REFERENCES = ()  # the course library has no ONNX export of its own


def _seed(rng) -> int:
    return int(rng.integers(2**31 - 1))


def cases(rng):
    # export_onnx: one export (seconds), every regime at once
    d, k = int(rng.integers(10, 31)), int(rng.integers(2, 6))
    X = rng.standard_normal((300, d)).astype(np.float32)
    yield export_case(spec(_seed(rng), d, [16, int(rng.integers(4, 12))], k, float(rng.uniform(0.5, 0.9))), X[:2], X,
                      (1, 2, 7, 33, 300),
                      "two hidden layers, an example of 2 rows, path a str in another folder: one self-contained "
                      "file, the eval-mode function, batches of 1 to 300 rows, optimizations off and on",
                      filename="classifier.onnx", subfolder="deploy dir/v1", as_str=True)

    # onnx_predict: files built by hand
    d, h, k = int(rng.integers(2, 9)), int(rng.integers(3, 10)), int(rng.integers(1, 5))
    layers = [(rng.standard_normal((h, d)), rng.standard_normal(h)), (rng.standard_normal((k, h)), rng.standard_normal(k))]
    yield predict_case(layers, rng.standard_normal((1, d)), "a batch of one row stays 2-d: shape (1, k)")
    yield predict_case(layers, rng.standard_normal((37, d)), "two layers, X float64, path a str",
                       as_str=True, subfolder="a folder/with spaces")
    yield predict_case(layers, rng.standard_normal((9, d)).astype(np.float16), "X float16: float32 logits")
    yield predict_case(layers, rng.standard_normal((12, d)).astype(np.float32), "X float32 in Fortran order, unchanged",
                       order="F")
    k1 = int(rng.integers(2, 6))
    yield predict_case([(rng.standard_normal((k1, d)), rng.standard_normal(k1))], 30 * rng.standard_normal((20, d)),
                       "one layer, large values: float32 logits, X unchanged")

    # parity_check: files built by hand from the model's eval-mode function
    d, h, k = int(rng.integers(3, 9)), int(rng.integers(4, 9)), int(rng.integers(3, 6))
    X = rng.standard_normal((40, d))  # float64
    for factor, what in ((1.05, "ok True"), (0.95, "ok False")):
        base = spec(_seed(rng), d, [h], k, 0.3)
        shift = np.zeros(k)
        shift[int(rng.integers(k))] = s = float(rng.uniform(2e-3, 5e-3))
        yield parity_case(model_of(base), {**base, "shift": list(shift)}, X,
                          f"one logit shifted, atol just above / below the difference: {what}", atol=factor * s)
    for s, what in ((5e-5, "ok True"), (2e-4, "ok False")):
        base = spec(_seed(rng), d, [h], k, 0.3)
        shift = np.zeros(k)
        shift[int(rng.integers(k))] = s
        yield parity_case(model_of(base), {**base, "shift": list(shift)}, X,
                          f"atol left at its default 1e-4, a shift of {s:g}: {what}")
    base = spec(_seed(rng), d, [h], k, 0.5)
    yield parity_case(model_of(base), spec(_seed(rng), d, [h], k, 0.5), X,
                      "a file of another model (other weights): the difference, ok False, the agreement")
    base = spec(_seed(rng), d, [h, h], k, 0.5)
    yield parity_case(model_of(base), base, X[:1], "a single row, model handed over in training mode", as_str=True)
    base = spec(_seed(rng), d, [h, 5], k, 0.2)
    shift = np.zeros(k)
    shift[int(rng.integers(k))] = 1.0
    yield parity_case(model_of(base), {**base, "shift": list(shift)}, X.astype(np.float32),
                      "a model already in eval mode, one logit shifted by 1: some predictions flip", mode="eval")
