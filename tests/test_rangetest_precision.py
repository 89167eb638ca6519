import numpy as np
import pytest
import torch

from gdcourse import optim
from gdcourse.diagnostics import lr_range_test
from gdcourse.linear import stable_lr
from gdcourse.precision import cross_entropy_from_logits, format_table, logsumexp, softmax, to_bfloat16


def _least_squares(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((200, 3)) * [1.0, 2.0, 0.5]
    y = X @ [1.0, -1.0, 2.0] + 0.1 * rng.standard_normal(200)

    def loss_and_grads(params):
        w, b = params
        r = X @ w + b[0] - y
        return np.mean(r**2), [2 / len(y) * X.T @ r, np.array([2 / len(y) * r.sum()])]

    return X, loss_and_grads


def test_range_test_blows_up_just_past_the_stability_bound():
    X, f = _least_squares()
    bound = stable_lr(X)
    rt = lr_range_test(f, [np.zeros(3), np.zeros(1)], optim.SGD(), lr_min=1e-4, lr_max=100.0, steps=200)
    assert len(rt.lrs) < 200, "the run must stop early once the loss blows up"
    # the sweep keeps raising the rate while the blow-up builds, so it stops a few times past the bound
    assert bound < rt.lrs[-1] < 10 * bound, (bound, rt.lrs[-1])
    # the smoothed minimum lags the blow-up (the moving average spans ~50 steps), so it sits past
    # the bound; the usual reading (a tenth of it, or the steepest descent) lands below it
    assert rt.suggestion == pytest.approx(rt.lr_at_minimum / 10) and rt.suggestion < bound
    assert 1e-4 <= rt.lr_steepest < bound


def test_range_test_leaves_params_alone_and_checks_arguments():
    _, f = _least_squares()
    params = [np.zeros(3), np.zeros(1)]
    lr_range_test(f, params, optim.SGD(), steps=10)
    assert all(np.array_equal(p, np.zeros_like(p)) for p in params)
    with pytest.raises(ValueError):
        lr_range_test(f, params, optim.SGD(), lr_min=1.0, lr_max=0.1)


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
