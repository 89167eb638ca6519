"""Clipping matches torch.nn.utils."""

import numpy as np
import pytest
import torch

from gdcourse import clipping


def _grads(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) * 10.0 ** rng.uniform(-2, 2) for s in [(3,), (4, 5), (2, 2, 2)]]


def _torch_grads(grads):
    params = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g, dtype=torch.float64)
    return params


@pytest.mark.parametrize("max_norm", [0.1, 1.0, 1e6])
def test_clip_by_global_norm_matches_torch(max_norm):
    grads = _grads(0)
    params = _torch_grads(grads)
    torch_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
    ours, norm = clipping.clip_by_global_norm(grads, max_norm)
    assert norm == pytest.approx(float(torch_norm), rel=1e-12)
    for a, p in zip(ours, params):
        np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-12)
    assert clipping.global_norm(ours) <= max_norm * (1 + 1e-9) or max_norm > norm
    assert clipping.angle_degrees(ours, grads) < 1e-5  # direction kept


def test_clip_by_value_matches_torch_and_bends_the_direction():
    grads = _grads(1)
    params = _torch_grads(grads)
    torch.nn.utils.clip_grad_value_(params, 0.5)
    ours = clipping.clip_by_value(grads, 0.5)
    for a, p in zip(ours, params):
        np.testing.assert_array_equal(a, p.grad.numpy())
    assert clipping.angle_degrees(ours, grads) > 1.0


def test_per_tensor_clipping_is_torch_clip_per_parameter():
    grads = _grads(2)
    ours, norms = clipping.clip_per_tensor(grads, 1.0)
    for g, a, n in zip(grads, ours, norms):
        p = _torch_grads([g])
        torch.nn.utils.clip_grad_norm_(p, 1.0)
        np.testing.assert_allclose(a, p[0].grad.numpy(), rtol=1e-12)
        assert n == pytest.approx(np.linalg.norm(g))


def test_zero_gradients_neither_divide_by_zero_nor_change():
    zeros = [np.zeros(3), np.zeros((2, 2))]
    ours, norm = clipping.clip_by_global_norm(zeros, 1.0)
    assert norm == 0.0 and all(np.array_equal(a, z) for a, z in zip(ours, zeros))


def test_inputs_are_not_modified():
    grads = _grads(3)
    keep = [g.copy() for g in grads]
    clipping.clip_by_global_norm(grads, 0.01)
    clipping.clip_by_value(grads, 0.01)
    assert all(np.array_equal(a, b) for a, b in zip(grads, keep))


def test_non_finite_gradients_behave_as_in_torch():
    for bad in (np.nan, np.inf):
        grads = [np.array([1.0, bad]), np.array([2.0, 3.0])]
        params = _torch_grads(grads)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        with np.errstate(invalid="ignore"):  # inf * 0 is NaN, in torch too
            ours, norm = clipping.clip_by_global_norm(grads, 1.0)
        assert not np.isfinite(norm)
        for a, p in zip(ours, params):
            np.testing.assert_array_equal(a, p.grad.numpy())  # NaN where torch has NaN, 0 where it has 0


def test_per_group_clipping_clips_each_module_on_its_own():
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=(3, 4)) * 10, rng.normal(size=4) * 10, rng.normal(size=(4, 2)) * 0.01, rng.normal(size=2)]
    groups = [[0, 1], [2, 3]]
    ours, norms = clipping.clip_per_group(grads, groups, 1.0)
    for group, norm in zip(groups, norms):
        want, want_norm = clipping.clip_by_global_norm([grads[i] for i in group], 1.0)
        assert norm == want_norm
        for i, w in zip(group, want):
            np.testing.assert_array_equal(ours[i], w)
    assert clipping.global_norm(ours[:2]) == pytest.approx(1.0, rel=1e-5)  # the large layer was scaled down
    assert norms[0] > 1 > norms[1]
    np.testing.assert_array_equal(ours[2], grads[2])  # the small module is left alone: its norm is below 1
    assert clipping.clip_per_group(grads, [[0]], 1.0)[0][1] is grads[1]  # arrays in no group are passed through
