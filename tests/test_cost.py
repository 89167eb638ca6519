import pytest
import torch

from gdcourse.cost import (bytes_per_parameter, footprint_table, measured_state_bytes, memory_footprint,
                                state_tensors)


def test_traffic_per_parameter():
    assert bytes_per_parameter("sgd") == {"read": 8, "written": 4, "total": 12}
    assert bytes_per_parameter("momentum") == {"read": 12, "written": 8, "total": 20}
    assert bytes_per_parameter("Adam") == {"read": 16, "written": 12, "total": 28}
    assert bytes_per_parameter("adam", dtype_bytes=2)["total"] == 14
    with pytest.raises(ValueError):
        bytes_per_parameter("lion")


def test_footprint_and_the_mixed_precision_16_bytes():
    assert [state_tensors(o) for o in ("sgd", "momentum", "adam")] == [0, 1, 2]
    fp = memory_footprint(1_000_000, "adam")
    assert (fp.params, fp.grads, fp.optimizer_state, fp.total) == (4e6, 4e6, 8e6, 16e6)
    mixed = memory_footprint(10, "adam", param_bytes=2, master_weights=True)
    assert mixed.bytes_per_param == 16 and mixed.master_weights == 40
    assert memory_footprint(0, "sgd").bytes_per_param == 0.0
    with pytest.raises(ValueError):
        memory_footprint(-1, "sgd")
    rows = footprint_table(2 ** 20)
    assert [r["optimizer"] for r in rows] == ["sgd", "momentum", "adam"]
    assert [r["total_MiB"] for r in rows] == [8, 12, 16]


@pytest.mark.parametrize("name,make", [
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.1)),
    ("momentum", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("adam", lambda p: torch.optim.Adam(p)),
])
def test_the_table_agrees_with_torch_optimizers(name, make):
    model = torch.nn.Linear(300, 200)
    opt = make(model.parameters())
    model(torch.randn(4, 300)).sum().backward()
    opt.step()
    n = sum(p.numel() for p in model.parameters())
    # torch's Adam also keeps one scalar step counter per tensor
    assert measured_state_bytes(opt) == pytest.approx(memory_footprint(n, name).optimizer_state, abs=64)


def test_saved_tensors_counts_activations_until_backward_frees_them():
    from gdcourse.cost import SavedTensors
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(100, 200), torch.nn.ReLU(), torch.nn.Linear(200, 10))
    x = torch.randn(64, 100)
    probe = SavedTensors(exclude=[*model.parameters(), x])
    with probe:
        loss = model(x).sum()
    held = probe.live_bytes()
    # ReLU keeps its 64x200 output, which the second Linear also saves as its input (same storage, counted once);
    # the first Linear saves x and its weight, both excluded.
    assert held == 64 * 200 * 4
    loss.backward()
    assert probe.live_bytes() == 0 and probe.peak == held
    with torch.no_grad(), SavedTensors() as nothing:
        model(x)
    assert nothing.peak == 0


def test_interleaved_timings_rank_a_slow_function_slower():
    import time
    from gdcourse.timing import interleaved_timings
    t = interleaved_timings({"fast": lambda: None, "slow": lambda: time.sleep(0.002)}, repeats=5)
    assert t["slow"] > 0.0015 > t["fast"]
    with pytest.raises(ValueError):
        interleaved_timings({}, repeats=0)
