import os

import numpy as np
import pytest
import torch

from gdcourse.data import load_digits_split
from gdcourse.models import count_parameters, mlp
from gdcourse.train import (EarlyStopping, capture, load_checkpoint, restore, rng_state,
                            save_checkpoint, set_rng_state)


def test_early_stopping_counts_checks_without_a_real_improvement():
    stop = EarlyStopping(patience=2, min_delta=0.1)
    assert [stop.step(v) for v in [1.0, 0.95, 0.5, 0.45, 0.41]] == [False, False, False, False, True]
    assert stop.best == 0.5 and stop.best_step == 2 and not stop.improved


def test_early_stopping_max_mode_and_nan():
    stop = EarlyStopping(patience=1, mode="max")
    assert not stop.step(0.5) and stop.improved
    assert not stop.step(0.7) and stop.improved
    assert stop.step(float("nan")) and stop.best == 0.7


@pytest.mark.parametrize("kwargs", [dict(patience=0), dict(min_delta=-1.0), dict(mode="up")])
def test_early_stopping_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        EarlyStopping(**kwargs)


def test_checkpoint_round_trip_and_no_temp_files(tmp_path):
    path = tmp_path / "ckpt" / "best.pt"
    save_checkpoint(path, {"w": torch.arange(3.0), "epoch": 4, "stop": EarlyStopping(3).state_dict()})
    save_checkpoint(path, {"w": torch.arange(4.0), "epoch": 5, "stop": EarlyStopping(3).state_dict()})
    loaded = load_checkpoint(path)
    assert loaded["epoch"] == 5 and torch.equal(loaded["w"], torch.arange(4.0))
    assert os.listdir(path.parent) == ["best.pt"]


def test_a_crash_while_saving_keeps_the_previous_checkpoint(tmp_path):
    path = tmp_path / "best.pt"
    save_checkpoint(path, {"epoch": 1})

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        save_checkpoint(path, {"epoch": 2, "bad": Unpicklable()})
    assert load_checkpoint(path)["epoch"] == 1
    assert os.listdir(tmp_path) == ["best.pt"]


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_checkpoint(tmp_path / "nope.pt")


def test_rng_state_round_trip():
    import random
    state = rng_state()
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    set_rng_state(state)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == a


def _run(epochs, *, model, opt, sched, data, start=0, stop_after=None):
    """Shuffled mini-batches and dropout: every RNG matters for an exact resume."""
    X, y = torch.from_numpy(data.X_train), torch.from_numpy(data.y_train)
    for epoch in range(start, epochs):
        if stop_after is not None and epoch == stop_after:
            return epoch
        order = torch.randperm(len(y))
        model.train()
        for i in range(0, len(y), 32):
            idx = order[i:i + 32]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
            opt.step()
        sched.step()
    return epochs


def _fresh(seed=0):
    torch.manual_seed(seed)
    model = mlp(64, 32, 10, dropout=0.3)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


def test_stop_and_resume_gives_the_same_weights_bit_for_bit(tmp_path):
    data = load_digits_split(n_samples=300, seed=1)
    model, opt, sched = _fresh()
    _run(5, model=model, opt=opt, sched=sched, data=data)
    uninterrupted = [p.detach().clone() for p in model.parameters()]

    model, opt, sched = _fresh()
    stopped_at = _run(5, model=model, opt=opt, sched=sched, data=data, stop_after=3)
    save_checkpoint(tmp_path / "last.pt", capture(model, opt, sched, epoch=stopped_at))
    torch.manual_seed(123)  # the process that resumes starts from another RNG state
    model, opt, sched = _fresh(seed=99)
    extra = restore(load_checkpoint(tmp_path / "last.pt"), model, opt, sched)
    _run(5, model=model, opt=opt, sched=sched, data=data, start=extra["epoch"])
    assert all(torch.equal(a, b) for a, b in zip(uninterrupted, model.parameters()))

    # and without the RNG states the resumed run differs: the test can fail
    model, opt, sched = _fresh()
    _run(5, model=model, opt=opt, sched=sched, data=data, stop_after=3)
    state = capture(model, opt, sched, epoch=3)
    model, opt, sched = _fresh(seed=99)
    restore(state, model, opt, sched)
    torch.manual_seed(5)
    _run(5, model=model, opt=opt, sched=sched, data=data, start=3)
    assert not all(torch.equal(a, b) for a, b in zip(uninterrupted, model.parameters()))


def test_restore_refuses_a_scheduler_mismatch():
    model, opt, sched = _fresh()
    with pytest.raises(ValueError, match="scheduler"):
        restore(capture(model, opt), model, opt, sched)


def test_digits_split_is_standardised_on_train_only():
    s = load_digits_split(0.25, seed=3)
    assert s.X_train.dtype == np.float32 and s.y_train.dtype == np.int64 and s.n_classes == 10
    assert len(s.y_train) + len(s.y_val) == 1797 and len(s.y_val) == round(0.25 * 1797)
    assert np.allclose(s.X_train.mean(axis=0), 0, atol=1e-5)
    assert not np.allclose(s.X_val.mean(axis=0), 0, atol=1e-3)  # validation statistics did not leak in
    small = load_digits_split(n_samples=100, seed=3)
    assert small.X_train.shape == (75, 64)
    with pytest.raises(ValueError):
        load_digits_split(1.0)
    with pytest.raises(ValueError):
        load_digits_split(n_samples=1)


def test_mlp_layers_and_parameter_count():
    m = mlp(64, [32, 16], 10, dropout=0.2, batch_norm=True)
    expected = (64 * 32 + 32) + 2 * 32 + (32 * 16 + 16) + 2 * 16 + (16 * 10 + 10)
    assert count_parameters(m) == expected
    m[0].weight.requires_grad_(False)
    assert count_parameters(m, trainable_only=True) == expected - 64 * 32
    assert sum(isinstance(l, torch.nn.Dropout) for l in m) == 2
    with pytest.raises(ValueError):
        mlp(0, 3, 2)


def test_a_model_from_plain_data_has_the_layers_it_names():
    import torch
    from torch import nn

    from gdcourse.models import sequential

    torch.manual_seed(0)
    model = sequential([("linear", 4, 8), ("relu",), ("dropout", 0.5), ("batchnorm", 8), ("tanh",), ("linear", 8, 3)])
    assert [type(m) for m in model] == [nn.Linear, nn.ReLU, nn.Dropout, nn.BatchNorm1d, nn.Tanh, nn.Linear]
    assert model[0].in_features == 4 and model[5].out_features == 3 and model[2].p == 0.5
    torch.manual_seed(0)
    same = sequential([("linear", 4, 8)])
    assert torch.equal(same[0].weight, model[0].weight)  # initialised from torch's generator as it stands
    with pytest.raises(ValueError, match="conv"):
        sequential([("conv", 3, 3)])
