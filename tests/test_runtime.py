import random
import sys

import numpy as np
import pytest

from gdcourse import runtime


def test_seed_everything_makes_runs_repeat():
    g1 = runtime.seed_everything(3)
    a = (random.random(), np.random.rand(), g1.standard_normal())
    g2 = runtime.seed_everything(3)
    assert a == (random.random(), np.random.rand(), g2.standard_normal())
    runtime.seed_everything(4)
    assert random.random() != a[0]


def test_seed_everything_seeds_torch_only_when_imported():
    import torch

    assert "torch" in sys.modules
    runtime.seed_everything(5)
    x = torch.rand(3)
    runtime.seed_everything(5)
    assert torch.equal(x, torch.rand(3))


@pytest.mark.parametrize("bad", [-1, 1.5, "7"])
def test_seed_everything_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="seed"):
        runtime.seed_everything(bad)


def test_pick_device_never_invents_an_accelerator(monkeypatch):
    import torch

    monkeypatch.delenv(runtime.DEVICE_ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert runtime.pick_device() == "cpu"
    with pytest.raises(RuntimeError, match="not available"):
        runtime.pick_device("cuda")


def test_pick_device_prefers_cuda_when_present(monkeypatch):
    import torch

    monkeypatch.delenv(runtime.DEVICE_ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert runtime.pick_device() == "cuda"
    assert runtime.pick_device("cpu") == "cpu"  # an explicit request wins


def test_pick_device_reads_the_environment(monkeypatch):
    monkeypatch.setenv(runtime.DEVICE_ENV, "cpu")
    assert runtime.pick_device() == "cpu"
    monkeypatch.setenv(runtime.DEVICE_ENV, "tpu")
    with pytest.raises(ValueError, match="unknown device"):
        runtime.pick_device()


def test_colab_and_ci_detection(monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert not runtime.in_colab()
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20261101")
    assert runtime.in_colab()
    for value, expected in [("true", True), ("1", True), ("", False), ("false", False)]:
        monkeypatch.setenv("CI", value)
        assert runtime.in_ci() is expected


def test_torch_threads_sets_the_count_inside_and_restores_it_after():
    import torch

    before = torch.get_num_threads()
    with runtime.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before

    @runtime.torch_threads(1)
    def inside():
        return torch.get_num_threads()

    assert inside() == 1 and torch.get_num_threads() == before
