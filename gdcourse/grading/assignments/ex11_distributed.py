"""ex11, distributed pieces: the course's reference, the probes, the case builders and the visible cases.

- ``shard_indices`` is a plain function of numbers: a probe calls it for every rank of one
  configuration (twice, the second time in reverse rank order) and reports the shards, and
  whether torch's and NumPy's global random states were left as they were. The shards must
  be **exactly** what ``DistributedSampler`` yields (the statement fixes every step), as lists
  of Python ints, the same on the second call.
- ``average_gradients`` and ``accumulate_gradients`` run in a real process group: the probes
  start ``world_size`` processes (gloo on the loopback interface), each builds the same model
  from a seed and its own part of the data, calls the function, and reports what it left in
  every ``.grad`` (and, for ``accumulate_gradients``, what it returned and how many times DDP
  all-reduced). The trusted side recomputes the expected gradients itself in float64: the mean
  of the ranks' gradients, and the gradient of the mean loss over the concatenation of every
  rank's micro-batches. Gradients and losses are compared within ``RTOL`` (plus ``ATOL``), as the
  statement says; the number of all-reduces (one per call, the contract of the exercise) exactly.

The processes are *forked* from the process that runs the cases (the sandbox's harness, or
the student's kernel in the self-check), so the student's function travels as it is, with
no pickling, and a launch costs a tenth of a second instead of a fresh interpreter per rank.
Each child uses one thread, its own gloo group over a file store in a fresh folder, reports
its result through a pipe and ends with ``os._exit``; the parent stops every child when one
fails or the deadline passes. Where fork is not the platform's (macOS, Windows), the self-check
falls back on :func:`gdcourse.distributed.launch` (spawned processes, seconds per launch).
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from datetime import timedelta

import numpy as np
import torch

from gdcourse.grading.cases import Case, Fail, as_array, close, diagnose, kind, probe, require, resembles
from gdcourse.grading.wire import Tensor

RTOL, ATOL = 1e-4, 1e-6  # stated in the exercise: gradients and losses
LAUNCH_SECONDS = 20.0  # one launch of forked ranks, start to results (a launch takes well under a second)
SPAWN_SECONDS = 180.0  # the same where ranks are spawned (each imports torch)


# --- the reference ----------------------------------------------------------------------

def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        indices = torch.randperm(n, generator=g).tolist()
    else:
        indices = list(range(n))
    per_rank = n // world_size if drop_last else math.ceil(n / world_size)
    total = per_rank * world_size
    while len(indices) < total:
        indices += indices[:total - len(indices)]
    return indices[:total][rank::world_size]


def average_gradients(model):
    import torch.distributed as dist
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world_size


def accumulate_gradients(ddp_model, micro_batches, loss_fn):
    import contextlib
    k = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        with contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync():
            loss = loss_fn(ddp_model(x), y) / k
            loss.backward()
        total += loss.item()
    return total


REFERENCE = {"shard_indices": shard_indices, "average_gradients": average_gradients,
             "accumulate_gradients": accumulate_gradients}


# --- building (shared by the probes and the trusted side) -------------------------------

def build_model(sizes, seed: int, dtype=torch.float32) -> torch.nn.Sequential:
    """Linear layers of ``sizes`` with tanh between them, as ``torch.manual_seed(seed)`` makes them
    in float32 (torch's global generator is left as it was), then cast to ``dtype``."""
    layers = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            if i:
                layers.append(torch.nn.Tanh())
            layers.append(torch.nn.Linear(int(a), int(b)))
    return torch.nn.Sequential(*layers).to(dtype)


def loss_function(name: str):
    return {"mse": torch.nn.functional.mse_loss, "ce": torch.nn.functional.cross_entropy}[name]


def as_tensors(X, y, dtype=torch.float32):
    """Inputs and targets: integer targets are class labels (long), others the model's dtype."""
    X = torch.as_tensor(np.asarray(X), dtype=dtype)
    y = np.asarray(y)
    y = torch.as_tensor(y, dtype=torch.long) if y.dtype.kind in "iub" else torch.as_tensor(y, dtype=dtype)
    return X, y


def rank_rows(rows: int, rank: int, world_size: int) -> slice:
    """Rank ``rank``'s part of ``rows`` rows: the ``rank``-th of ``world_size`` equal blocks."""
    per = rows // world_size
    return slice(rank * per, (rank + 1) * per)


def data(rng, rows: int, d_in: int, d_out: int, classes: bool):
    """Inputs (float32 values) and targets: class labels, or float32 values."""
    X = rng.standard_normal((rows, d_in)).astype(np.float32)
    y = rng.integers(0, d_out, rows) if classes else rng.standard_normal((rows, d_out)).astype(np.float32)
    return X, y


# --- running ranks ----------------------------------------------------------------------

class RankFailed(RuntimeError):
    """A rank's function raised: its type name and message, with the rank."""


def run_ranks(worker, world_size: int, args: tuple = (), timeout: float = LAUNCH_SECONDS) -> list:
    """``worker(rank, world_size, *args)`` in ``world_size`` processes joined in one gloo process
    group (the default group, as ``torchrun`` plus ``init_process_group`` make it); the results,
    by rank. A rank that raises stops them all and raises :class:`RankFailed` here."""
    if "fork" not in _start_methods() or not sys.platform.startswith("linux"):
        from gdcourse.distributed import launch
        return launch(worker, world_size, args, timeout=max(timeout, SPAWN_SECONDS))
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("fork")
    folder = tempfile.mkdtemp(prefix="gdcourse-ex11-")
    processes, pipes, results = [], {}, {}
    try:
        for rank in range(world_size):
            receive, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_rank_main, args=(worker, rank, world_size, folder, args, send), daemon=True)
            p.start()
            send.close()
            processes.append(p)
            pipes[receive] = rank
        deadline = time.monotonic() + timeout
        while pipes:
            ready = wait(list(pipes), timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"the ranks did not finish within {timeout:g} s (a collective that "
                                   f"some ranks never called?)")
            for conn in ready:
                rank = pipes.pop(conn)
                try:
                    status, payload = conn.recv()
                except EOFError:
                    raise RankFailed(f"rank {rank} died without a result") from None
                if status != "ok":
                    raise _rank_error(rank, *payload)
                results[rank] = payload
    finally:
        for p in processes:
            if p.is_alive():
                p.kill()
        for p in processes:
            p.join()
        for conn in pipes:
            conn.close()
        shutil.rmtree(folder, ignore_errors=True)
    return [results[rank] for rank in range(world_size)]


def _rank_error(rank: int, name: str, message: str) -> Exception:
    """The exception a rank raised, rebuilt here by its type name where that is a built-in one."""
    import builtins
    cls = getattr(builtins, str(name), None)
    text = f"on rank {rank}" + (f": {message}" if message else "")
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(text)
        except Exception:
            pass
    return RankFailed(f"{name} {text}")


def _start_methods() -> list:
    import multiprocessing
    return multiprocessing.get_all_start_methods()


def _rank_main(worker, rank, world_size, folder, args, conn) -> None:
    """One forked rank: its own group, the worker, the result (or the error) down the pipe."""
    import torch.distributed as dist
    try:
        torch.set_num_threads(1)
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                          LOCAL_WORLD_SIZE=str(world_size), GLOO_SOCKET_IFNAME="lo")
        if dist.is_initialized():
            raise RuntimeError("a process group is already initialised in this process: restart the kernel")
        store = dist.FileStore(os.path.join(folder, "store"), world_size)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=LAUNCH_SECONDS))
        try:
            out = ("ok", worker(rank, world_size, *args))
        finally:
            dist.destroy_process_group()
    except BaseException as exc:  # the student's function raised: that is this rank's result
        out = ("error", (type(exc).__name__, str(exc)[:500]))
    try:
        conn.send(out)
    except Exception as exc:  # a result that cannot be pickled
        conn.send(("error", ("RuntimeError", f"the result could not be sent ({type(exc).__name__})")))
    conn.close()


# --- probes ------------------------------------------------------------------------------

def shards(fn, n, world_size, epoch, seed=0, shuffle=True, drop_last=False, defaults=False):
    """``fn`` for every rank of one configuration, then again in reverse rank order; and whether torch's
    and NumPy's global random states were left as they were (both are restored afterwards).
    ``defaults``: call ``fn(n, rank, world_size, epoch)``, leaving seed, shuffle and drop_last to the defaults."""
    def one(rank):
        if defaults:
            return fn(n, rank, world_size, epoch)
        return fn(n, rank, world_size, epoch, seed=seed, shuffle=shuffle, drop_last=drop_last)

    numpy_state = np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(20_251_111)
            np.random.seed(11_111)
            torch_before, numpy_before = torch.get_rng_state(), np.random.get_state()[1].copy()
            first = [one(rank) for rank in range(world_size)]
            again = [one(rank) for rank in reversed(range(world_size))][::-1]
            kept = bool(torch.equal(torch_before, torch.get_rng_state())
                        and np.array_equal(numpy_before, np.random.get_state()[1]))
    finally:
        np.random.set_state(numpy_state)
    return {"shards": first, "again": again, "rng_kept": kept}


def _grads(model) -> list:
    return [None if p.grad is None else p.grad.detach().numpy().copy() for p in model.parameters()]


def _average_rank(rank, world_size, fn, sizes, seed, grads, batch, frozen):
    model = build_model(sizes, seed)
    for i in frozen:
        list(model.parameters())[i].requires_grad_(False)
    if batch is not None:  # a backward on this rank's part of the batch
        X, y, loss = batch
        X, y = as_tensors(X, y)
        rows = rank_rows(len(X), rank, world_size)
        loss_function(loss)(model(X[rows]), y[rows]).backward()
    else:  # the gradients given for this rank, as other code left them
        for p, g in zip(model.parameters(), grads[rank]):
            p.grad = None if g is None else torch.tensor(np.asarray(g), dtype=p.dtype)
    weights = [p.detach().clone() for p in model.parameters()]
    fn(model)
    return {"grads": _grads(model),
            "weights_kept": all(torch.equal(w, p.detach()) for w, p in zip(weights, model.parameters()))}


def averaged(fn, world_size, sizes, seed, grads=None, batch=None, frozen=()):
    """``fn(model)`` on every rank of a ``world_size`` group: the model of ``sizes`` built from ``seed``
    (parameters ``frozen`` by index: ``requires_grad`` off, ``.grad`` None), its ``.grad`` either
    ``grads[rank]`` (a list by parameter, None for none) or left by a backward of ``batch`` =
    ``(X, y, loss)`` on the rank's block of rows. Reports every rank's gradients after the call and
    whether its weights were left as they were."""
    return run_ranks(_average_rank, int(world_size), (fn, sizes, seed, grads, batch, tuple(frozen)))


def _counting_hook(calls, bucket):
    """DDP's default all-reduce, counted: one call per bucket per synchronised backward."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    calls.append(bucket.index())
    return allreduce_hook(None, bucket)


def _reported(value):
    """A returned value as plain data: a float as it is, anything else by its kind."""
    if isinstance(value, float):
        return float(value)
    if isinstance(value, torch.Tensor):
        return {"kind": f"a {str(value.dtype).replace('torch.', '')} tensor",
                "value": float(value.detach().reshape(-1)[0]) if value.numel() == 1 else None}
    return {"kind": "None" if value is None else f"a {type(value).__name__}",
            "value": value if isinstance(value, int) and not isinstance(value, bool) else None}


def _accumulate_rank(rank, world_size, fn, sizes, seed, X, y, loss, k, stale):
    from torch.nn.parallel import DistributedDataParallel as DDP
    ddp = DDP(build_model(sizes, seed))
    calls = []
    ddp.register_comm_hook(calls, _counting_hook)
    ddp.zero_grad(set_to_none=True)
    if stale is not None:  # gradients already there, the same on every rank
        for p, g in zip(ddp.parameters(), stale):
            p.grad = torch.tensor(np.asarray(g), dtype=p.dtype)
    X, y = as_tensors(X, y)
    rows = rank_rows(len(X), rank, world_size)
    micro = list(zip(X[rows].chunk(int(k)), y[rows].chunk(int(k))))
    weights = [p.detach().clone() for p in ddp.parameters()]
    returned = fn(ddp, micro, loss_function(loss))
    return {"grads": _grads(ddp.module), "all_reduces": sum(1 for b in calls if b == 0),
            "returned": _reported(returned),
            "weights_kept": all(torch.equal(w, p.detach()) for w, p in zip(weights, ddp.parameters()))}


def accumulated(fn, world_size, sizes, seed, X, y, loss, k, stale=None):
    """``fn(ddp_model, micro_batches, loss_fn)`` on every rank of a ``world_size`` group: the model of
    ``sizes`` from ``seed`` wrapped in DDP (a counting communication hook registered), gradients None
    or ``stale`` (by parameter, the same on every rank); rank r's block of the rows of ``X, y`` cut in
    ``k`` micro-batches of equal size. Reports every rank's gradients, its number of all-reduces, what
    it returned and whether its weights were left as they were."""
    import torch._dynamo  # noqa: F401  DDP imports it on construction (seconds): once here, not in every rank
    return run_ranks(_accumulate_rank, int(world_size), (fn, sizes, seed, X, y, loss, int(k), stale))


# --- checks: shard_indices ------------------------------------------------------------------

def sampler_shards(n, world_size, epoch, seed=0, shuffle=True, drop_last=False) -> list:
    """What ``DistributedSampler`` yields on every rank after ``set_epoch(epoch)``: the truth."""
    from torch.utils.data.distributed import DistributedSampler
    out = []
    for rank in range(world_size):
        s = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=shuffle, seed=seed,
                               drop_last=drop_last)
        s.set_epoch(epoch)
        out.append([int(i) for i in s])
    return out


def _arranged(order, n, world_size, drop_last) -> list:
    """``order`` padded (by repeating it from its beginning) or cut to the size DistributedSampler uses."""
    per = n // world_size if drop_last else math.ceil(n / world_size)
    total, out = per * world_size, list(order)
    while out and len(out) < total:
        out += out[:total - len(out)]
    return out[:total]


def _mistakes(n, world_size, epoch, seed, shuffle, drop_last):
    """(shards a known mistake gives, hint), for naming a wrong answer."""
    def order(s=seed + epoch, shuffled=shuffle):
        return torch.randperm(n, generator=torch.Generator().manual_seed(s)).tolist() if shuffled else list(range(n))

    def strided(o):
        return [list(o[r::world_size]) for r in range(world_size)]

    base = order()
    right = _arranged(base, n, world_size, drop_last)
    per, total = len(right) // world_size, len(right)
    pad = max(0, total - n)
    out = [
        (strided(base[:total] if drop_last else base),
         "pad the list to ceil(n / N) * N indices by repeating it from its beginning, so that every rank gets as many"),
        ([right[r * per:(r + 1) * per] for r in range(world_size)],
         "rank r takes positions r, r + N, r + 2N, ... of the padded list (strided), not a contiguous block"),
        (strided(_arranged(order(s=seed), n, world_size, drop_last)),
         "the order must change with the epoch: seed the generator with seed + epoch"),
        (strided(_arranged(order(s=epoch), n, world_size, drop_last)),
         "the seed is ignored: seed the generator with seed + epoch"),
        (strided(_arranged(order(shuffled=not shuffle), n, world_size, drop_last)),
         "with shuffle=True the order is torch.randperm(n, generator=g); with shuffle=False it is list(range(n))"),
        (strided(_arranged(base, n, world_size, not drop_last)),
         "with drop_last=True each rank gets floor(n / N) indices (the list is cut), without it ceil(n / N) "
         "(the list is padded)"),
    ]
    if pad and n:
        out += [(strided((base + base[:pad])[:total]), "when n is small, repeat the list as often as needed"),
                (strided((base + base[-1:] * pad)[:total]),
                 "pad by repeating the list from its beginning, not its last index")]
        if pad <= n:
            out.append((strided(base + base[n - pad:]), "pad by repeating the list from its beginning, not its end"))
    if shuffle:
        for permutation in (np.random.default_rng(seed + epoch).permutation(n),
                            np.random.RandomState(seed + epoch).permutation(n)):
            out.append((strided(_arranged([int(i) for i in permutation], n, world_size, drop_last)),
                        "permute with torch.randperm(n, generator=g), g a torch.Generator seeded with seed + epoch"))
    return out


def _shard_lists(value, world_size, what="shard_indices"):
    """The shards as lists of Python ints, one per rank; :class:`Fail` naming the form otherwise."""
    require(isinstance(value, list) and len(value) == world_size, "the probe's report has the wrong form")
    for s in value:
        require(isinstance(s, list), f"{what} should return a list of Python ints, got {kind(s)}")
        bad = next((i for i in s if type(i) is not int), None)
        require(bad is None, f"{what} should return a list of Python ints (use .tolist()), got a list of "
                             f"{type(bad).__name__ if not isinstance(bad, Tensor) else 'tensors'}")
    return value


def shard_case(n, world_size, epoch, name, *, seed=0, shuffle=True, drop_last=False, defaults=False,
               rng=False, visible=False):
    """All ranks of one configuration: exactly DistributedSampler's shards, the same on a second call;
    ``rng``: also torch's and NumPy's global random states left alone."""
    def check(r):
        require(isinstance(r.value, dict), "the probe's report has the wrong form")
        got = _shard_lists(r.value.get("shards"), world_size)
        want = sampler_shards(n, world_size, epoch, seed, shuffle, drop_last)
        if got != want:
            lengths, want_lengths = [len(s) for s in got], [len(s) for s in want]
            hint = next((h for wrong, h in _mistakes(n, world_size, epoch, seed, shuffle, drop_last)
                         if wrong != want and got == wrong), None)
            if hint is None and lengths != want_lengths:
                hint = (f"each rank gets {want_lengths[0]} indices here "
                        + ("(floor(n / N) with drop_last=True)" if drop_last else "(ceil(n / N), padded)"))
            hint = hint or "the shards differ from DistributedSampler's"
            shown = "" if n > 12 else f": expected {want}, got {got}"
            raise Fail(f"{n} items on {world_size} rank(s), epoch {epoch}, seed {seed}, shuffle={shuffle}, "
                       f"drop_last={drop_last}{shown}\n{hint}", summary=hint)
        again = _shard_lists(r.value.get("again"), world_size)
        require(again == got, "a second call with the same arguments gave other shards: shard_indices must "
                              "depend on its arguments only")
        if rng:
            require(r.value.get("rng_kept") is True,
                    "shard_indices changed torch's (or NumPy's) global random state: draw from your own "
                    "torch.Generator, never torch.manual_seed")
    args = (n, world_size, epoch) + (() if defaults else (seed, shuffle, drop_last))
    return Case("test_shard_indices", name, probe("shard_indices", "shards", *args, defaults=defaults), check, visible)


# --- checks: average_gradients ----------------------------------------------------------------

def _param_grads(model) -> list:
    return [None if p.grad is None else p.grad.detach().numpy().copy() for p in model.parameters()]


def local_gradients(sizes, seed, X, y, loss, world_size, frozen=()) -> list:
    """Each rank's gradient of the loss on its block of rows, in float64, by rank then parameter."""
    out = []
    for rank in range(world_size):
        model = build_model(sizes, seed, torch.float64)
        for i in frozen:
            list(model.parameters())[i].requires_grad_(False)
        Xt, yt = as_tensors(X, y, torch.float64)
        rows = rank_rows(len(Xt), rank, world_size)
        loss_function(loss)(model(Xt[rows]), yt[rows]).backward()
        out.append(_param_grads(model))
    return out


def _mean(per_rank) -> list:
    return [None if per_rank[0][i] is None else np.mean([np.asarray(g[i], float) for g in per_rank], axis=0)
            for i in range(len(per_rank[0]))]


def _rank_reports(value, world_size):
    require(isinstance(value, list) and len(value) == world_size and all(isinstance(v, dict) for v in value),
            "the probe's report has the wrong form")
    return value


def _grads_of(report, count, what):
    grads = report.get("grads")
    require(isinstance(grads, list) and len(grads) == count, f"{what}: the model's parameters changed")
    return grads


def average_case(world_size, sizes, seed, name, *, grads=None, batch=None, frozen=(), visible=False):
    """``average_gradients`` on every rank: every ``.grad`` holds the mean of the ranks' gradients
    (frozen parameters keep ``.grad`` None), the weights are untouched."""
    if grads is None:
        X, y, loss = batch
        per_rank = local_gradients(sizes, seed, X, y, loss, world_size, frozen)
    else:
        per_rank = grads
    want = _mean(per_rank)

    def check(r):
        reports = _rank_reports(r.value, world_size)
        for rank, report in enumerate(reports):
            got = _grads_of(report, len(want), "average_gradients")
            for i, (g, w) in enumerate(zip(got, want)):
                what = f"rank {rank}'s gradient of parameter {i}"
                if w is None:
                    require(g is None, "a parameter whose .grad is None (a frozen one) must keep .grad None")
                    continue
                require(g is not None, "a parameter's .grad was set to None: average it in place")
                total = np.sum([np.asarray(p[i], float) for p in per_rank], axis=0)
                mine = np.asarray(per_rank[rank][i], float)
                diagnose(lambda: close(g, w, rtol=RTOL, atol=ATOL, what=what),
                         [(lambda: world_size > 1 and resembles(g, total, rtol=1e-4, atol=1e-6),
                           "that is the sum over the ranks: divide it by dist.get_world_size()"),
                          (lambda: world_size != 2 and resembles(g, total / 2, rtol=1e-4, atol=1e-6),
                           "that is the sum divided by 2: divide by dist.get_world_size(), not a fixed number"),
                          (lambda: resembles(g, mine, rtol=1e-4, atol=1e-6),
                           "the ranks' gradients were not averaged: all_reduce every parameter's .grad itself, "
                           "in place"),
                          (lambda: resembles(g, w / world_size, rtol=1e-4, atol=1e-6),
                           "the average is divided by the world size twice")])
            require(report.get("weights_kept") is True, "average_gradients changed the weights: only the "
                                                         "gradients are averaged")
    data = {"grads": grads, "batch": batch, "frozen": list(frozen)}
    return Case("test_average_gradients", name,
                probe("average_gradients", "averaged", world_size, sizes, seed, **data), check, visible)


def random_grads(rng, sizes, world_size, frozen=(), scale=1.0) -> list:
    """Gradients as other code may have left them, different on every rank: by rank, then parameter."""
    shapes = [tuple(p.shape) for p in build_model(sizes, 0).parameters()]
    return [[None if i in frozen else (scale * rng.standard_normal(s)).astype(np.float32)
             for i, s in enumerate(shapes)] for _ in range(world_size)]


# --- checks: accumulate_gradients --------------------------------------------------------------

def micro_gradients(sizes, seed, X, y, loss, world_size, k):
    """Float64 gradients and losses of every micro-batch at the starting weights: ``grads[rank][j]``
    (a list by parameter) and ``losses[rank][j]``."""
    grads, losses = [], []
    model = build_model(sizes, seed, torch.float64)
    Xt, yt = as_tensors(X, y, torch.float64)
    for rank in range(world_size):
        rows = rank_rows(len(Xt), rank, world_size)
        g_rank, l_rank = [], []
        for xb, yb in zip(Xt[rows].chunk(k), yt[rows].chunk(k)):
            model.zero_grad(set_to_none=True)
            value = loss_function(loss)(model(xb), yb)
            value.backward()
            g_rank.append(_param_grads(model))
            l_rank.append(float(value.detach()))
        grads.append(g_rank)
        losses.append(l_rank)
    return grads, losses


def accumulate_case(world_size, sizes, seed, X, y, loss, k, name, *, stale=None, visible=False):
    """``accumulate_gradients`` on every rank: one all-reduce; every ``.grad`` holds what was there plus
    the gradient of the mean loss over all ranks' micro-batches; it returns the mean of the rank's own
    micro-batch losses as a Python float; the weights are untouched."""
    grads, losses = micro_gradients(sizes, seed, X, y, loss, world_size, k)
    count = len(grads[0][0])
    before = [np.zeros_like(g) for g in grads[0][0]] if stale is None else [np.asarray(s, float) for s in stale]
    full = [np.mean([g[i] for rank in grads for g in rank], axis=0) for i in range(count)]
    local = [[np.mean([g[i] for g in grads[r]], axis=0) for i in range(count)] for r in range(world_size)]
    last = [np.mean([grads[r][-1][i] for r in range(world_size)], axis=0) for i in range(count)]
    want = [b + f for b, f in zip(before, full)]
    # DDP all-reducing the first micro-batch's backward instead of the last one's
    first = [[b + np.mean([grads[q][0][i] for q in range(world_size)], axis=0) / k
              + np.sum([g[i] for g in grads[r][1:]], axis=0) / k for i, b in enumerate(before)]
             for r in range(world_size)]

    def check(r):
        reports = _rank_reports(r.value, world_size)
        for rank, report in enumerate(reports):
            n = report.get("all_reduces")
            require(n != 0, "DDP never all-reduced: the last micro-batch's forward and backward must run "
                            "outside no_sync, through ddp_model (not ddp_model.module)")
            require(not (k > 1 and n == k), f"DDP all-reduced once per micro-batch ({k} times): run every "
                                            f"micro-batch but the last inside `with ddp_model.no_sync():`")
            require(n == 1, "DDP must all-reduce exactly once per call (the last micro-batch's backward)")
        for rank, report in enumerate(reports):
            got = _grads_of(report, count, "accumulate_gradients")
            for i in range(count):
                g = got[i]
                require(g is not None, "a parameter's .grad is None after the call")
                what = f"rank {rank}'s accumulated gradient of parameter {i}"
                diagnose(lambda: close(g, want[i], rtol=RTOL, atol=ATOL, what=what),
                         [(lambda: k > 1 and resembles(g, before[i] + k * full[i], rtol=1e-3, atol=1e-5),
                           f"the gradient is {k} times too large: divide each micro-batch loss by "
                           f"len(micro_batches)"),
                          (lambda: k > 1 and resembles(g, last[i] / k, rtol=1e-3, atol=1e-5),
                           "only the last micro-batch's gradient is left: never zero the gradients inside "
                           "the function"),
                          (lambda: stale is not None and resembles(g, full[i], rtol=1e-3, atol=1e-5),
                           "the gradient that was already in .grad is gone: add to it (as backward does), "
                           "never zero or replace .grad"),
                          (lambda: stale is not None and k > 1 and resembles(g, before[i] / k + full[i],
                                                                             rtol=1e-3, atol=1e-5),
                           "dividing .grad by k at the end also divides the gradient that was already there: "
                           "divide each micro-batch loss instead"),
                          (lambda: world_size > 1 and k > 1 and resembles(g, first[rank][i], rtol=1e-3, atol=1e-5),
                           "only the first micro-batch's gradient was averaged over the ranks: it is the LAST "
                           "backward that must run outside no_sync"),
                          (lambda: world_size > 1 and resembles(g, before[i] + local[rank][i], rtol=1e-3,
                                                                atol=1e-5),
                           "each rank kept its own gradient: the last backward must run outside no_sync so "
                           "that DDP averages the gradients over the ranks")])
        for rank, report in enumerate(reports):
            returned, mean = report.get("returned"), float(np.mean(losses[rank]))
            if isinstance(returned, dict):
                raise Fail(f"accumulate_gradients should return the mean loss as a Python float (loss.item()), "
                           f"got {returned.get('kind')}",
                           summary="accumulate_gradients should return a Python float (loss.item())")
            require(isinstance(returned, float), "accumulate_gradients should return a Python float")
            diagnose(lambda: close(returned, mean, rtol=RTOL, atol=ATOL, what="the returned mean loss"),
                     [(lambda: k > 1 and resembles(returned, mean * k, rtol=1e-3),
                       "that is the sum of the micro-batch losses: return their mean"),
                      (lambda: k > 1 and resembles(returned, mean / k, rtol=1e-3),
                       "the mean loss is divided by k twice"),
                      (lambda: k > 1 and resembles(returned, losses[rank][-1], rtol=1e-3),
                       "that is the last micro-batch's loss: return the mean over the micro-batches"),
                      (lambda: world_size > 1 and resembles(returned, float(np.mean(losses)), rtol=1e-3),
                       "return the mean of this rank's own micro-batch losses (no all-reduce of the loss)")])
            require(report.get("weights_kept") is True, "accumulate_gradients changed the weights: it only "
                                                         "accumulates gradients (the caller steps)")
    stale_data = None if stale is None else [np.asarray(s, np.float32) for s in stale]
    return Case("test_accumulate_gradients", name,
                probe("accumulate_gradients", "accumulated", world_size, sizes, seed, X, y, loss, k,
                      stale=stale_data), check, visible)


def stale_grads(rng, sizes, scale=0.5) -> list:
    """Gradients already in ``.grad`` before a call, the same on every rank: a list by parameter."""
    return [(scale * rng.standard_normal(tuple(p.shape))).astype(np.float32)
            for p in build_model(sizes, 0).parameters()]


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield shard_case(10, 3, 0, "10 items on 3 ranks, no shuffle: padded to 12, strided", shuffle=False,
                     visible=True)
    yield shard_case(10, 3, 0, "10 items on 3 ranks, no shuffle, drop_last: cut to 9", shuffle=False,
                     drop_last=True, visible=True)
    yield shard_case(10, 2, 0, "10 items on 2 ranks, shuffled, epoch 0", visible=True)
    yield shard_case(10, 2, 3, "10 items on 2 ranks, shuffled, epoch 3: another order", visible=True)
    yield shard_case(7, 4, 2, "7 items on 4 ranks, shuffled, seed 5, epoch 2", seed=5, visible=True)
    yield shard_case(9, 2, 1, "the defaults (seed 0, shuffled, padded); the global random state left alone",
                     defaults=True, rng=True, visible=True)

    rng = np.random.default_rng(11)
    X, y = data(rng, 8, 4, 1, classes=False)
    yield average_case(2, (4, 8, 1), 0, "2 ranks, each with half a batch: the full-batch gradient",
                       batch=(X, y, "mse"), visible=True)
    yield average_case(2, (6, 5, 3), 1, "2 ranks, gradients left by other code, a frozen parameter (.grad None)",
                       grads=random_grads(rng, (6, 5, 3), 2, frozen=(0,)), frozen=(0,), visible=True)

    X, y = data(rng, 2 * 4 * 4, 4, 1, classes=False)
    yield accumulate_case(2, (4, 8, 1), 0, X, y, "mse", 4,
                          "2 ranks, 4 micro-batches of 4: one all-reduce, the full-batch gradient, the mean loss",
                          visible=True)
    X, y = data(rng, 2 * 2 * 3, 5, 3, classes=True)
    yield accumulate_case(2, (5, 6, 3), 2, X, y, "ce", 2,
                          "2 ranks, 2 micro-batches, gradients already in .grad: the new gradient is added",
                          stale=stale_grads(rng, (5, 6, 3)), visible=True)
