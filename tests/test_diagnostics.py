"""gdcourse.diagnostics: loss-curve checks and the learning-rate range test."""

import numpy as np
import pytest

from gdcourse import optim
from gdcourse.diagnostics import first_below, is_decreasing, lr_range_test
from gdcourse.linear import stable_lr


def test_is_decreasing_and_first_below():
    assert is_decreasing([3.0, 2.0, 2.0, 1.0])
    assert not is_decreasing([3.0, 2.0, 2.5])
    assert not is_decreasing([3.0, np.nan])
    assert is_decreasing([1.0])
    assert first_below([5.0, 3.0, 1.0, 0.5], 1.0) == 2
    assert first_below([5.0, 3.0], 1.0) is None


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
