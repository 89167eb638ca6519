"""Schedules match torch's schedulers / transformers' warm-ups."""

import numpy as np
import pytest
import torch
from torch.optim import lr_scheduler

from gdcourse import schedules

STEPS = 60


def _torch_lrs(make_scheduler, lr, steps=STEPS):
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
    sched = make_scheduler(opt)
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return np.array(lrs)


def _ours(schedule, steps=STEPS):
    return np.array([schedule(t) for t in range(steps)])


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)


def test_step_decay_matches_steplr():
    _close(_ours(schedules.StepDecay(0.1, step_size=7, gamma=0.5)), _torch_lrs(lambda o: lr_scheduler.StepLR(o, 7, 0.5), 0.1))


def test_exponential_matches_exponentiallr():
    _close(_ours(schedules.Exponential(0.1, 0.95)), _torch_lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.95), 0.1))


def test_cosine_matches_cosineannealinglr_over_its_half_period():
    ours = _ours(schedules.Cosine(0.1, total_steps=STEPS - 1, min_lr=0.001))
    _close(ours, _torch_lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=STEPS - 1, eta_min=0.001), 0.1))
    assert ours[-1] == pytest.approx(0.001)


def test_warmups_match_transformers():
    from transformers import (get_cosine_schedule_with_warmup, get_cosine_with_min_lr_schedule_with_warmup,
                              get_linear_schedule_with_warmup)

    _close(_ours(schedules.WarmupCosine(0.1, warmup_steps=10, total_steps=STEPS)),
           _torch_lrs(lambda o: get_cosine_schedule_with_warmup(o, 10, STEPS), 0.1))
    _close(_ours(schedules.WarmupLinear(0.1, warmup_steps=10, total_steps=STEPS)),
           _torch_lrs(lambda o: get_linear_schedule_with_warmup(o, 10, STEPS), 0.1))
    _close(_ours(schedules.WarmupCosine(0.1, warmup_steps=10, total_steps=STEPS, min_lr=0.01)),
           _torch_lrs(lambda o: get_cosine_with_min_lr_schedule_with_warmup(o, 10, STEPS, min_lr_rate=0.1), 0.1))


def test_cosine_warmup_is_smooth_and_reaches_the_peak_without_a_jump():
    s = schedules.CosineWarmup(0.1, warmup_steps=20, after=schedules.Cosine(0.1, total_steps=40))
    lrs = _ours(s)
    assert lrs[0] == 0.0 and lrs[20] == pytest.approx(0.1)
    assert np.all(np.diff(lrs[:21]) > 0) and np.all(np.diff(lrs[20:]) <= 0)
    # slope is zero at both ends of the warm-up: the first and last increments are the smallest
    increments = np.diff(lrs[:21])
    assert increments[0] < increments[10] and increments[-1] < increments[10]


@pytest.mark.parametrize("bad", [
    lambda: schedules.StepDecay(0.1, step_size=0),
    lambda: schedules.Cosine(0.1, total_steps=0),
    lambda: schedules.WarmupCosine(0.1, warmup_steps=50, total_steps=50),
    lambda: schedules.CosineWarmup(0.1, warmup_steps=2.5),
])
def test_bad_schedule_arguments_get_clear_errors(bad):
    with pytest.raises(ValueError):
        bad()
