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


@pytest.mark.parametrize("shape", ["linear", "1-sqrt", "cosine"])
@pytest.mark.parametrize("decay_fraction", [0.1, 0.2, 0.35])
def test_wsd_matches_transformers_get_wsd_schedule_at_every_step(shape, decay_fraction):
    from transformers import get_wsd_schedule

    total = STEPS - 5                                  # run past the end: both stay at min_lr
    ours = schedules.WSD(0.1, warmup_steps=8, total_steps=total, decay_fraction=decay_fraction, shape=shape)
    decay_steps = round(decay_fraction * total)
    _close(_ours(ours), _torch_lrs(lambda o: get_wsd_schedule(o, 8, decay_steps, num_training_steps=total,
                                                              decay_type=shape), 0.1))
    assert ours.decay_steps == decay_steps and ours(total) == 0.0


def test_wsd_with_a_floor_matches_transformers_after_the_warmup_and_warms_up_from_zero():
    from transformers import get_wsd_schedule

    ours = _ours(schedules.WSD(0.1, warmup_steps=8, total_steps=50, min_lr=0.01, shape="sqrt"))
    theirs = _torch_lrs(lambda o: get_wsd_schedule(o, 8, 10, num_training_steps=50, decay_type="1-sqrt",
                                                   min_lr_ratio=0.1), 0.1)
    _close(ours[8:], theirs[8:])                       # transformers warms up from min_lr, we from 0
    assert ours[0] == 0.0 and ours[49] > 0.01 and ours[50:] == pytest.approx(0.01)


def test_wsd_runs_of_any_length_share_everything_before_their_cooldown():
    long = schedules.WSD(0.1, warmup_steps=5, total_steps=200)
    for total in (40, 80, 120):
        short = schedules.WSD(0.1, warmup_steps=5, total_steps=total)
        np.testing.assert_array_equal(_ours(short, short.decay_start), _ours(long, short.decay_start))
        assert short(short.decay_start - 1) == 0.1 and short(short.decay_start + 1) < 0.1
    # a cosine of a different length differs almost at once: it must know the length in advance
    assert schedules.WarmupCosine(0.1, 5, 40)(10) != schedules.WarmupCosine(0.1, 5, 200)(10)


@pytest.mark.parametrize("bad", [
    lambda: schedules.WSD(0.1, warmup_steps=10, total_steps=10),
    lambda: schedules.WSD(0.1, warmup_steps=0, total_steps=10, decay_fraction=0.0),
    lambda: schedules.WSD(0.1, warmup_steps=0, total_steps=10, shape="exp"),
    lambda: schedules.WSD(0.1, warmup_steps=-1, total_steps=10),
])
def test_bad_wsd_arguments_get_clear_errors(bad):
    with pytest.raises(ValueError):
        bad()
