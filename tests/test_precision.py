"""gdcourse.precision: number formats, bfloat16 rounding and the stable softmax family, against torch."""

import numpy as np
import pytest
import torch

from gdcourse.precision import cross_entropy_from_logits, format_table, logsumexp, softmax, to_bfloat16


def test_format_table_matches_torch_finfo():
    rows = {r["format"]: r for r in format_table()}
    for name, tdtype in [("float16", torch.float16), ("bfloat16", torch.bfloat16), ("float32", torch.float32)]:
        fi = torch.finfo(tdtype)
        assert rows[name]["eps"] == fi.eps and rows[name]["max"] == fi.max and rows[name]["smallest_normal"] == fi.tiny
    assert rows["float16"]["smallest_subnormal"] == 2.0**-24


def test_to_bfloat16_matches_torch_rounding():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(10_000).astype(np.float32) * 10.0 ** rng.integers(-30, 30, 10_000),
                        np.array([0.0, -0.0, 1.0, 1 + 2**-8, 1 + 3 * 2**-8, np.inf, -np.inf, 3.4e38], dtype=np.float32)])
    ours = to_bfloat16(x)
    theirs = torch.tensor(x).to(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(ours, theirs)
    assert np.isnan(to_bfloat16(np.float32(np.nan)))


def test_stable_softmax_logsumexp_and_cross_entropy_match_torch():
    rng = np.random.default_rng(1)
    z = rng.standard_normal((5, 7)) * 1000  # exp overflows float64 (above ~709) for the naive formulas
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)))
    t = torch.tensor(z)
    np.testing.assert_allclose(softmax(z), torch.softmax(t, dim=1).numpy(), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(logsumexp(z), torch.logsumexp(t, dim=1).numpy(), rtol=1e-12)
    labels = rng.integers(0, 7, 5)
    want = torch.nn.functional.cross_entropy(t, torch.tensor(labels)).item()
    assert cross_entropy_from_logits(z, labels) == pytest.approx(want, rel=1e-12)
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
