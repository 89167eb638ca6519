import math

import numpy as np
import torch
from torch import nn

from gdcourse.models import mlp
from gdcourse.monitor import GradNormTracker, first_nonfinite, lr_range_test


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
