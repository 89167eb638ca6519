"""Two real gloo processes on this CPU."""

import atexit
import os
import time

import pytest
import torch
import torch.distributed as dist

from gdcourse.distributed import RankFailed, Ranks, launch, torchrun_command
from gdcourse.models import mlp


def _ddp_gradients(rank, world_size, seed):
    """Each rank sees its own half of a batch; after backward DDP has averaged the gradients."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(seed)
    model = DDP(mlp(4, 8, 1))
    X = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
    y = X.sum(dim=1, keepdim=True)
    part = slice(rank * 4, rank * 4 + 4)
    torch.nn.functional.mse_loss(model(X[part]), y[part]).backward()
    return [p.grad.clone() for p in model.parameters()]


def test_ddp_gradients_are_identical_and_equal_the_full_batch_gradient():
    per_rank = launch(_ddp_gradients, 2, (0,))
    torch.manual_seed(0)
    single = mlp(4, 8, 1)
    X = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
    torch.nn.functional.mse_loss(single(X), X.sum(dim=1, keepdim=True)).backward()
    for g0, g1, g in zip(*per_rank, [p.grad for p in single.parameters()]):
        assert torch.equal(g0, g1)
        torch.testing.assert_close(g0, g, rtol=1e-5, atol=1e-7)


def test_functions_defined_in_a_notebook_travel_as_worker_and_as_argument():
    def scale(x):  # local: plain pickle could send neither this nor the worker below
        return 10 * x

    def worker(rank, world_size, f):
        return f(rank)

    assert launch(worker, 2, (scale,)) == [0, 10]


def test_a_worker_defined_in_main_works_and_errors_carry_the_rank_traceback():
    def worker(rank, world_size):  # a local function: plain pickle could not send it
        t = torch.tensor([rank + 1.0])
        dist.all_reduce(t)
        if rank == 1:
            raise ValueError(f"rank {rank} saw {t.item()}")
        return t.item()

    with pytest.raises(Exception, match="rank 1 saw 3.0"):
        launch(worker, 2)


def _fail_and_linger(rank, world_size):
    if rank == 1:
        atexit.register(time.sleep, 3)  # alive after its error, so rank 0's failure is seen first
        raise ValueError("rank 1 gave up")
    dist.barrier()  # fails when rank 1 leaves the group: "Connection closed by peer"


def test_the_rank_that_failed_first_is_reported_not_the_peer_it_took_down():
    with pytest.raises(RankFailed, match="rank 1 gave up") as failed:
        launch(_fail_and_linger, 2)
    assert failed.value.rank == 1


def _hang(rank, world_size):
    if rank == 0:
        dist.barrier()  # rank 1 never arrives
    else:
        time.sleep(120)  # alive but absent: had it exited, gloo would fail rank 0 instead of hanging


def test_a_hung_collective_times_out():
    with pytest.raises(TimeoutError):
        launch(_hang, 2, timeout=8)


def test_torchrun_command():
    assert torchrun_command("train.py", 2, "--epochs", "3") == \
        "torchrun --standalone --nproc-per-node=2 train.py --epochs 3"


def test_ranks_stay_up_between_runs_and_keep_their_process_group():
    def first(rank, world_size):  # a local function: it travels by value, as a notebook's would
        return os.getpid()

    def summed(rank, world_size, x):
        t = torch.tensor([float(rank + x)])
        dist.all_reduce(t)
        return t.item(), os.getpid()

    ranks = Ranks(2, on_start=lambda: dist.get_world_size())
    try:
        assert [r["value"] for r in ranks.ready] == [2, 2]  # on_start ran inside the group
        pids = ranks.run(first)
        assert len(set(pids)) == 2 and os.getpid() not in pids
        assert ranks.run(summed, 10) == [(21.0, pids[0]), (21.0, pids[1])]  # the same processes, the same group
        ranks.run(summed, 0)
    finally:
        phases = ranks.close()
    assert list(phases) == ["start-up", "on start", "first", "summed", "shutdown"]
    assert all(v >= 0 for v in phases.values())
    assert ranks.close() is phases
    with pytest.raises(RuntimeError, match="closed"):
        ranks.run(first)


def test_a_failing_rank_ends_the_group_and_the_caller_hears_it():
    def fails(rank, world_size):
        if rank == 1:
            raise ValueError("rank 1 gave up")
        dist.barrier()  # rank 0 waits; the failure of rank 1 must still end the group

    ranks = Ranks(2)
    with pytest.raises(RuntimeError, match="rank 1 gave up"):
        ranks.run(fails)
    with pytest.raises(RuntimeError):
        ranks.close()
