import math

import numpy as np
import pytest
import torch
from torch import nn

from gdcourse.models import mlp
from gdcourse.monitor import (ActivationStats, GradNormTracker, dead_units, first_nonfinite, grad_norm,
                              lr_range_test, update_ratios)


def test_grad_norm_tracker_matches_torch_and_flags_frozen_and_nan():
    torch.manual_seed(0)
    model = mlp(4, 6, 2)
    model[0].bias.requires_grad_(False)
    extra = nn.Parameter(torch.zeros(3))  # noqa: F841 (not part of the model)
    tracker = GradNormTracker(model)
    nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,))).backward()
    expected = float(torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1e9))
    assert math.isclose(tracker.record(), expected, rel_tol=1e-6)
    assert "0.bias" not in tracker.per_parameter and tracker.never_got_gradients() == []
    model[2].weight.grad = None
    tracker.record()
    model[2].weight.grad = torch.full_like(model[2].weight, float("inf"))
    tracker.record()
    assert tracker.first_nonfinite_step() == 2 and math.isnan(tracker.per_parameter["2.weight"][1])


def test_first_nonfinite_names_the_module():
    torch.manual_seed(0)
    model = mlp(4, 6, 2)
    x = torch.randn(3, 4)
    assert first_nonfinite(model, x) is None
    with torch.no_grad():
        model[2].weight[0, 0] = float("nan")
    assert first_nonfinite(model, x) == "2"
    assert first_nonfinite(model, torch.full((3, 4), float("inf"))) == "<input>"


def test_lr_range_test_leaves_the_model_alone_and_finds_the_edge():
    torch.manual_seed(0)
    X = torch.randn(256, 5)
    y = X @ torch.randn(5, 1)
    model = nn.Linear(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.123)
    before = [p.clone() for p in model.parameters()]
    batches = [(X[i:i + 64], y[i:i + 64]) for i in range(0, 256, 64)]
    result = lr_range_test(model, opt, lambda m, b: nn.functional.mse_loss(m(b[0]), b[1]), batches,
                           lr_min=1e-4, lr_max=100.0, steps=120)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert opt.param_groups[0]["lr"] == 0.123
    assert len(result.lrs) < 120  # stopped early: the loss blew up past the stable rate
    # the stable bound of this least-squares problem is 2/λmax of 2XᵀX/n (about 1 here)
    lam = float(torch.linalg.eigvalsh(2 * X.T @ X / 256)[-1])
    bound = 2 / lam
    assert result.lrs[-1] > bound  # it only blew up past the stable rate
    below = result.losses[result.lrs < bound]
    assert below.min() < 0.01 * below[0]  # and the loss fell while the rate was useful
    assert np.all(np.diff(result.lrs) > 0)


def test_the_torch_and_numpy_range_tests_are_one_test():
    """The same problem through gdcourse.monitor (torch) and gdcourse.diagnostics (NumPy): the same
    sweep, the same losses, the same stop, with the same defaults (one signature, in diagnostics)."""
    from gdcourse import optim
    from gdcourse.diagnostics import lr_range_test as numpy_range_test

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(64, 3)), rng.normal(size=(64, 1))
    model = nn.Linear(3, 1, dtype=torch.float64)
    w0, b0 = model.weight.detach().numpy().T.copy(), model.bias.detach().numpy().copy()

    def loss_and_grads(params):
        w, b = params
        r = X @ w + b - y
        return float(np.mean(r ** 2)), [2 * X.T @ r / len(X), 2 * r.mean(axis=0)]

    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    ours = lr_range_test(model, torch.optim.SGD(model.parameters()), lambda m, b: nn.functional.mse_loss(m(b[0]), b[1]),
                         [(Xt, yt)], lr_max=1e3, steps=80)
    theirs = numpy_range_test(loss_and_grads, [w0, b0], optim.SGD(), lr_max=1e3, steps=80)
    assert 10 < len(ours.lrs) < 80  # it stopped early, where the rate passed the stable bound
    np.testing.assert_allclose(ours.lrs, theirs.lrs, rtol=1e-12)
    np.testing.assert_allclose(ours.losses, theirs.losses, rtol=1e-9)
    np.testing.assert_allclose(ours.smoothed, theirs.smoothed, rtol=1e-9)


def test_grad_norm_matches_clip_grad_norm():
    model = mlp(5, [7, 3], 2)
    model(torch.randn(4, 5)).square().sum().backward()
    expected = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    assert grad_norm(model.parameters()) == pytest.approx(float(expected), rel=1e-6)
    assert grad_norm(torch.nn.Linear(2, 2).parameters()) == 0.0


def test_update_ratios_are_the_step_over_the_weight_per_parameter():
    torch.manual_seed(0)
    model = mlp(4, 6, 2)
    model[0].bias.requires_grad_(False)
    with torch.no_grad():
        model[2].bias.zero_()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    nn.functional.cross_entropy(model(torch.randn(16, 4)), torch.randint(0, 2, (16,))).backward()
    with update_ratios(model) as ratios:
        opt.step()
    assert set(ratios) == {"0.weight", "2.weight", "2.bias"}  # the frozen bias is not a trainable weight
    for name in ("0.weight", "2.weight"):
        p = dict(model.named_parameters())[name].detach()
        expected = float((p - before[name]).norm() / before[name].norm())
        assert 0 < ratios[name] and math.isclose(ratios[name], expected, rel_tol=1e-6)
    assert ratios["2.bias"] == math.inf  # a zero bias that moved: no finite ratio
    with update_ratios(model) as still:
        pass  # no step: nothing moved
    assert all(v == 0.0 for v in still.values())


def test_activation_stats_find_dead_units_and_unhook():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), nn.ReLU())
    with torch.no_grad():
        model[0].weight.zero_()
        model[0].weight[0, 0] = 1.0  # unit 0 is active for some examples only: alive, not dead
        model[0].bias.copy_(torch.tensor([0.0, -1.0, 2.0, -3.0]))  # units 1 and 3 are always dead
    x = torch.randn(32, 3)
    with ActivationStats(model) as stats, torch.no_grad():
        out = model[1](model[0](x)).double()
        model(x)
    assert set(stats.records) == {"1", "3"} and len(stats.records["1"]) == 2
    first = stats.records["1"][0]
    assert first["dead"] == 0.5
    assert math.isclose(first["mean"], float(out.mean()), rel_tol=1e-9)
    assert math.isclose(first["std"], float(out.std(correction=0)), rel_tol=1e-9)
    assert set(stats.last("dead")) == {"1", "3"}
    model(x)
    assert len(stats.records["1"]) == 2, "the hooks were removed on exit"
    with pytest.raises(ValueError, match="no module of type"):
        ActivationStats(nn.Linear(2, 2))


def test_grad_norm_percentile_skips_non_finite_norms():
    tracker = GradNormTracker(nn.Linear(1, 1))
    with pytest.raises(ValueError, match="no finite"):
        tracker.percentile(90)
    tracker.global_norms = [1.0, 2.0, 3.0, 4.0, math.inf, math.nan, 5.0]
    assert tracker.percentile(50) == 3.0
    assert math.isclose(tracker.percentile(90), float(np.percentile([1, 2, 3, 4, 5], 90)))


def test_dead_units_count_a_unit_dead_only_if_no_example_reaches_it():
    model = nn.Sequential(nn.Linear(2, 4), nn.Dropout(1.0), nn.ReLU(), nn.Linear(4, 3), nn.ReLU())  # Dropout(1): all
    # zeros in training mode, so only a measurement in eval mode sees the units
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]))
        model[0].bias.copy_(torch.tensor([0.0, 0.0, -1.0, 0.0]))  # unit 2 negative, unit 3 exactly zero
        model[3].weight.fill_(1.0)
        model[3].bias.copy_(torch.tensor([0.0, -100.0, float("nan")]))  # 4.1 never positive, 4.2 NaN
    pos, neg = torch.tensor([[1.0, 5.0], [2.0, -1.0]]), torch.tensor([[-1.0, 0.0], [-3.0, 2.0]])
    # unit 0 fires on `pos` only and unit 1 on `neg` only: dead on one batch, alive on the data set
    with ActivationStats(model) as stats, torch.no_grad():
        model.eval(), model(pos), model(neg)
    assert [r["dead"] for r in stats.records["2"]] == [0.75, 0.75]
    model.train()
    assert dead_units(model, [pos, neg]) == pytest.approx({"2": 0.5, "4": 2 / 3})
    assert dead_units(model, torch.cat([pos, neg])) == pytest.approx({"2": 0.5, "4": 2 / 3})  # one tensor, one pass
    assert dead_units(model, pos) == pytest.approx({"2": 0.75, "4": 2 / 3})
    assert model.training and all(not m._forward_hooks for m in model.modules()), "mode restored, hooks removed"
    assert dead_units(model, pos, types=(nn.Linear,)) == pytest.approx({"0": 0.75, "3": 2 / 3})
    with pytest.raises(ValueError, match="no module of type"):
        dead_units(nn.Linear(2, 2), pos)
