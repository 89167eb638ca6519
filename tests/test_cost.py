import dataclasses

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


# --- ZeRO: bytes held per rank ------------------------------------------------

def test_zero_reproduces_the_papers_worked_example():
    # Rajbhandari et al. (2020), Figure 1: 7.5B parameters, mixed-precision Adam (K = 12), Nd = 64
    n = 7_500_000_000
    gb = [memory_footprint(n, "adam", param_bytes=2, master_weights=True, zero_stage=s, world_size=64).total / 1e9
          for s in (0, 1, 2, 3)]
    assert [round(g, 1) for g in gb] == [120.0, 31.4, 16.6, 1.9]
    # the closed forms: (2 + 2 + K) psi, 4 psi + K psi / Nd, 2 psi + (2 + K) psi / Nd, (4 + K) psi / Nd
    assert gb[1] == pytest.approx((4 + 12 / 64) * 7.5)
    assert gb[2] == pytest.approx((2 + 14 / 64) * 7.5)
    assert gb[3] == pytest.approx(16 / 64 * 7.5)


def test_zero_shards_exactly_what_each_stage_says():
    n, w = 1000, 4
    base = memory_footprint(n, "adam", param_bytes=2, master_weights=True)
    s1, s2, s3 = (memory_footprint(n, "adam", param_bytes=2, master_weights=True, zero_stage=s, world_size=w)
                  for s in (1, 2, 3))
    assert (s1.params, s1.grads, s1.optimizer_state, s1.master_weights) == (2000, 2000, 2000, 1000)
    assert (s2.params, s2.grads) == (2000, 500) and s2.optimizer_state == s1.optimizer_state
    assert (s3.params, s3.grads, s3.optimizer_state, s3.master_weights) == (500, 500, 2000, 1000)
    assert base.total == 16 * n and s3.total * w == base.total
    assert (s3.zero_stage, s3.world_size, base.zero_stage, base.world_size) == (3, 4, 0, 1)


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 1001, 123_457])
def test_zero_invariants(optimizer, n):
    kw = dict(param_bytes=2, master_weights=True)
    plain = memory_footprint(n, optimizer, **kw)
    for w in (1, 2, 3, 8):
        totals = [memory_footprint(n, optimizer, zero_stage=s, world_size=w, **kw).total for s in (0, 1, 2, 3)]
        assert totals[0] == plain.total                      # stage 0 ignores the world size
        assert totals == sorted(totals, reverse=True)        # each stage holds no more than the one before
        if w == 1:
            assert set(totals) == {plain.total}              # one rank: sharding changes nothing
        # ceil division: the ranks together hold the model plus at most w - 1 padding elements per tensor
        assert plain.total <= totals[3] * w <= plain.total + (w - 1) * plain.bytes_per_param + 1e-9 * n
    for s in (0, 1, 2, 3):  # world_size 1 is plain data parallelism at any stage
        assert memory_footprint(n, optimizer, zero_stage=s, **kw) == dataclasses.replace(plain, zero_stage=s)


def test_zero_shard_is_ceil_division_and_bad_arguments_raise():
    from gdcourse.cost import shard
    assert [shard(n, 4) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]
    assert memory_footprint(10, "sgd", zero_stage=3, world_size=4).params == 3 * 4
    for bad in (dict(zero_stage=4), dict(zero_stage=-1), dict(zero_stage=1.5), dict(world_size=0),
                dict(zero_stage=2, world_size=-2)):
        with pytest.raises(ValueError):
            memory_footprint(10, "adam", **bad)
    rows = footprint_table(2 ** 20, zero_stage=3, world_size=4)
    assert [r["total_MiB"] for r in rows] == [2, 3, 4]


# torch.distributed.optim scripts its functional optimizers with torch.jit on import (torch's warning, not ours)
@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_zero_stage_1_matches_zero_redundancy_optimizer_state_on_one_process(tmp_path):
    # world_size 1: ZeroRedundancyOptimizer holds the whole Adam state, as memory_footprint says
    # (chapter 13 measures two ranks); a file store needs no port, so parallel test workers cannot collide
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        model = torch.nn.Linear(64, 32)
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=1e-3)
        model(torch.randn(4, 64)).sum().backward()
        opt.step()
        n = sum(p.numel() for p in model.parameters())
        held = measured_state_bytes(opt.optim)
        assert held == pytest.approx(memory_footprint(n, "adam", zero_stage=1, world_size=1).optimizer_state, abs=64)
    finally:
        dist.destroy_process_group()


def test_local_bytes_counts_a_dtensor_by_its_local_shard(tmp_path):
    # FSDP2 keeps DTensors, whose numel() is the global size; one rank holds only its shard.
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    from gdcourse.cost import local_bytes
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        d = distribute_tensor(torch.zeros(6, 5), init_device_mesh("cpu", (1,)), [Shard(0)])
        assert local_bytes(d) == 6 * 5 * 4 == local_bytes(torch.zeros(6, 5))
        # a DTensor built from a local shard of 2 rows that stands for 6 (as on one of 3 ranks)
        from torch.distributed.tensor import DTensor
        part = DTensor.from_local(torch.zeros(2, 5), d.device_mesh, [Shard(0)], shape=(6, 5), stride=(5, 1))
        assert part.numel() == 30 and local_bytes(part) == 2 * 5 * 4
    finally:
        dist.destroy_process_group()
    assert local_bytes(torch.zeros(3, dtype=torch.float16)) == 6
