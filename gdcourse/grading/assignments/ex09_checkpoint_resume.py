"""ex09, early stopping, atomic checkpoints and exact resume: the course's reference, the probes,
the case builders and the visible cases.

What is compared, as the exercise's statement says:

- ``should_stop``: True or False, exactly. The histories of the hidden cases are multiples of
  1/64 (and ``min_delta`` too), so ``value < best - min_delta`` and ``value + min_delta < best``
  agree, ties included; NaN and +-inf follow the comparisons as written (a NaN is never an
  improvement, and nothing improves on a NaN best). ``history`` must not be modified.
- ``atomic_save``: nothing comes out of the sandbox as a file. The probe (:func:`save`) works in
  a fresh temporary folder and reports the bytes of the file at ``path`` (``np.uint8``), the
  folder's listing and what it saw *during* the save (from inside ``torch.save``, while the state
  was being pickled); the check here parses those bytes with ``torch.load(BytesIO,
  weights_only=True)`` only, and compares the state exactly (dtypes and values).
- ``make_checkpoint`` / ``resume``: one answer cell and one test, and the dictionary's layout is
  the student's choice, so the two are graded together: cases are about ``resume`` and the probe
  (:func:`round_trip`) takes the student's ``make_checkpoint`` from the same namespace
  (``make_checkpoint`` is therefore not in ``REFERENCE``: a stand-in would break the pair). The
  probe trains a float64 model, checkpoints it with ``torch.save(make_checkpoint(...))``, resumes
  into objects built from other seeds in a "new process", and continues; the check recomputes the
  uninterrupted run here and compares, to ``RTOL``/``ATOL``: the epoch returned, the model's state
  (parameters and buffers), the optimizer's state and learning rates, the scheduler's
  ``last_epoch`` and ``get_last_lr()`` right after ``resume``, the next draws of torch's and NumPy's
  global generators (exactly), and the model at the end of the run. Both runs use one thread, so a
  complete checkpoint gives the same numbers; a float32 copy of a weight (about 1e-8 off), a missing
  buffer, a step count or a generator off by one draw differ by more than the tolerance.
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import io
import math
import os
import random
import shutil
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from gdcourse.grading.cases import Case, Fail, as_array, call, close, kind, probe, require, unchanged
from gdcourse.grading.wire import Tensor
from gdcourse.models import sequential
from gdcourse.train import save_checkpoint

RTOL, ATOL = 1e-9, 1e-12  # resume: float64 runs in two processes (stated in the exercise)
STOP_STEP = 1 / 64  # the grid of the hidden histories: sums and differences on it are exact


# --- the reference ----------------------------------------------------------------------

def should_stop(history, patience, min_delta=0.0, mode="min"):
    best, bad = None, 0
    for value in history:
        if best is None:
            best, bad = value, 0
        elif (value < best - min_delta) if mode == "min" else (value > best + min_delta):
            best, bad = value, 0
        else:
            bad += 1
    return best is not None and bad >= patience


def atomic_save(state, path):
    save_checkpoint(path, state)  # the course's: a temporary file in the same folder, fsync, os.replace


def make_checkpoint(model, optimizer, scheduler, epoch):
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state(),
            "numpy_rng": np.random.get_state(), "python_rng": random.getstate(), "epoch": epoch}


def resume(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=False)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["torch_rng"])
    np.random.set_state(ckpt["numpy_rng"])
    random.setstate(ckpt["python_rng"])
    return ckpt["epoch"]


# make_checkpoint is graded with resume, as a pair (see the module's docstring): never stood in.
REFERENCE = {"should_stop": should_stop, "atomic_save": atomic_save, "resume": resume}
PAIRED = {"resume": ("make_checkpoint", make_checkpoint)}


# --- should_stop ------------------------------------------------------------------------

def _as_bool(value, what="should_stop"):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if type(value) is int and value in (0, 1) or isinstance(value, np.integer) and int(value) in (0, 1):
        return bool(value)
    raise Fail(f"{what} should return True or False, got {kind(value)}",
               summary=f"{what} should return True or False")


def stop_case(history, patience, name, hint, min_delta=None, mode=None, visible=False):
    """``should_stop(history, patience[, min_delta=][, mode=])`` is the rule's answer; ``hint`` says
    what a wrong answer here means (it names a property, never the inputs)."""
    history = [float(v) for v in history]
    kwargs = {}
    if min_delta is not None:
        kwargs["min_delta"] = float(min_delta)
    if mode is not None:
        kwargs["mode"] = mode
    want = should_stop(history, patience, **kwargs)

    def check(r):
        got = _as_bool(r.value)
        if got != want:
            raise Fail(f"expected {want}, got {got}: {hint}", summary=hint)
        if history:
            unchanged(r, 0, history, "history")
    return Case("test_should_stop", name, call("should_stop", history, int(patience), **kwargs), check, visible)


# --- atomic_save ------------------------------------------------------------------------

class Unpicklable:
    """Stands for anything torch.save cannot write (an open file, a lambda): pickling it raises."""

    def __reduce__(self):
        raise RuntimeError("cannot pickle this")


class Interrupt:
    """Ctrl-C in the middle of a save: pickling it raises KeyboardInterrupt."""

    def __reduce__(self):
        raise KeyboardInterrupt


def _read(path):
    try:
        with open(path, "rb") as f:
            return np.frombuffer(f.read(), dtype=np.uint8).copy()
    except OSError:
        return None


class Spy:
    """While torch.save pickles it (mid-save), records the bytes at ``path`` and the folders' listings;
    it is written as an empty dict."""

    def __init__(self, path, folders, seen):
        self.path, self.folders, self.seen = path, folders, seen

    def __reduce__(self):
        self.seen.append({"path": _read(self.path),
                          "listings": [sorted(os.listdir(f)) for f in self.folders]})
        return (collections.OrderedDict, ())


def as_state(data) -> dict:
    """A checkpoint state from data: NumPy arrays become tensors (same dtype), the rest stays."""
    return {k: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v for k, v in data.items()}


def _other_device_folder():
    """A writable folder on another file system than the system's temporary folder, or None."""
    here = os.stat(tempfile.gettempdir()).st_dev
    for candidate in ("/dev/shm",):
        try:
            if os.path.isdir(candidate) and os.access(candidate, os.W_OK) and os.stat(candidate).st_dev != here:
                return candidate
        except OSError:
            continue
    return None


def save(fn, state, previous=None, fault=None, spy=False, reader=False, neighbour=None,
         foreign_tmp=False, filename="ck.pt"):
    """``fn(state, path)`` in a fresh folder: ``previous`` (a state) saved at ``path`` first, or no file;
    ``fault`` ("error" or "interrupt") an entry that torch.save cannot write; ``spy`` an entry that looks
    at ``path`` and the folders mid-save; ``reader`` a file object opened on the previous file before
    the call and read after it; ``neighbour`` a state saved next to ``path`` as ``best.pt``;
    ``foreign_tmp`` the system's temporary folder moved to another folder (on another file system
    where there is one) during the call.

    Reports what was raised (type name, or None), the bytes at ``path`` and the neighbour's after,
    the folder's listing, what the spy saw, what the reader read, and the foreign folder's listing."""
    other = _other_device_folder() if foreign_tmp else None
    folder = tempfile.mkdtemp(prefix="ex09-", dir=other)
    elsewhere = tempfile.mkdtemp(prefix="ex09-tmp-") if foreign_tmp else None
    path = os.path.join(folder, filename)
    handle, saved_tempdir = None, tempfile.tempdir
    try:
        if previous is not None:
            torch.save(as_state(previous), path)
        if neighbour is not None:
            torch.save(as_state(neighbour), os.path.join(folder, "best.pt"))
        if reader and previous is not None and os.name != "nt":  # Windows cannot replace an open file
            handle = open(path, "rb")
        seen = []
        full = as_state(state)
        if spy:
            full["spy"] = Spy(path, [folder] + ([elsewhere] if elsewhere else []), seen)
        if fault == "error":
            full["bad"] = Unpicklable()
        elif fault == "interrupt":
            full["bad"] = Interrupt()
        raised = message = None
        if elsewhere:
            tempfile.tempdir = elsewhere
        try:
            fn(full, path)
        except BaseException as exc:  # KeyboardInterrupt included: it is what the case asks for
            raised, message = type(exc).__name__, str(exc)[:300]
        finally:
            tempfile.tempdir = saved_tempdir
        return {"raised": raised, "message": message, "bytes": _read(path), "listing": sorted(os.listdir(folder)),
                "neighbour": _read(os.path.join(folder, "best.pt")) if neighbour is not None else None,
                "during": seen, "read": (np.frombuffer(handle.read(), dtype=np.uint8).copy()
                                         if handle is not None else None),
                "elsewhere": sorted(os.listdir(elsewhere)) if elsewhere else [],
                "cross_device": other is not None}
    finally:
        tempfile.tempdir = saved_tempdir
        if handle is not None:
            handle.close()
        shutil.rmtree(folder, ignore_errors=True)
        if elsewhere:
            shutil.rmtree(elsewhere, ignore_errors=True)


def _load(data, what):
    """A reported file's bytes parsed safely here (tensors and plain Python only), or :class:`Fail`."""
    if data is None:
        raise Fail(f"there is no file at path after {what}", summary=f"no file at path after {what}")
    raw = as_array(data, "the file's bytes").astype(np.uint8).tobytes()
    try:
        return torch.load(io.BytesIO(raw), weights_only=True)
    except Exception as exc:
        raise Fail(f"the file at path after {what} does not load ({type(exc).__name__}): it is torn or not a "
                   f"torch.save file", summary=f"the file at path after {what} does not load (torn)") from None


def _same(a, b) -> bool:
    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(b, dict):
        return isinstance(a, dict) and set(a) == set(b) and all(_same(a[k], b[k]) for k in b)
    if isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _expect_state(data, want, what, summary):
    try:
        got = _load(data, what)
    except Fail as exc:
        raise Fail(f"{exc}: {summary}", summary=summary) from None
    if not _same(got, want):
        shown = sorted(got) if isinstance(got, dict) else kind(got)
        raise Fail(f"{summary} (found {shown}, expected {sorted(want)})", summary=summary)


def save_case(state, name, previous=None, fault=None, spy=False, reader=False, neighbour=None,
              foreign_tmp=False, visible=False):
    """One call of ``atomic_save``: what it must raise, what ``path`` holds after (and during, with a
    spy), what the folder holds, what an earlier reader reads."""
    kwargs = {k: v for k, v in dict(previous=previous, fault=fault, spy=spy, reader=reader, neighbour=neighbour,
                                      foreign_tmp=foreign_tmp).items() if v not in (None, False)}
    new = {**as_state(state), **({"spy": collections.OrderedDict()} if spy else {})}
    old = as_state(previous) if previous is not None else None

    def check(r):
        v = r.value
        require(isinstance(v, dict) and "raised" in v, "the probe reported nothing")
        raised = v["raised"]
        if fault is None:
            if raised is not None:
                across = foreign_tmp and v.get("cross_device") and raised == "OSError"
                hint = ("; os.replace cannot move a file across file systems: make the temporary file in "
                        "the folder of path" if across else "")
                raise Fail(f"atomic_save raised {raised}: {v.get('message')}{hint}",
                           summary=f"atomic_save raised {raised}" + (
                               " (the temporary file is not in the folder of path)" if across else ""))
        elif fault == "interrupt":
            require(raised == "KeyboardInterrupt",
                    "KeyboardInterrupt (Ctrl-C) during torch.save must propagate out of atomic_save")
        else:
            require(raised is not None, "when torch.save fails, atomic_save must let the exception propagate "
                                        "(a silent failure to save is worse)")
            require(raised == "RuntimeError" and "cannot pickle this" in (v.get("message") or ""),
                    f"atomic_save raised {raised}, not the RuntimeError that torch.save raised: re-raise the "
                    f"exception itself" if raised != "NotImplementedError" else "atomic_save is not written yet "
                    "(it raised NotImplementedError, not the error of torch.save)")
        for seen in v["during"]:
            if old is None:
                require(seen["path"] is None, "while the state was being written, a file was already at path: "
                                              "a crash then would leave a torn checkpoint there")
            else:
                _expect_state(seen["path"], old, "the start of the save",
                              "while the new state was being written, path did not hold the previous checkpoint: "
                              "never write to path directly; write a temporary file and os.replace it")
        if fault is None:
            _expect_state(v["bytes"], new, "the save", "the file at path is not the state that was saved")
        elif old is not None:
            _expect_state(v["bytes"], old, "a failed save",
                          "a failed save destroyed or changed the previous checkpoint: write a temporary file "
                          "and os.replace it only once it is complete")
        else:
            require(v["bytes"] is None, "a failed save left a file at path")
        expected = sorted((["ck.pt"] if fault is None or old is not None else []) + (["best.pt"] if neighbour else []))
        if v["listing"] != expected:
            extra = sorted(set(v["listing"]) - set(expected))
            raise Fail(f"the folder holds {v['listing']}, expected {expected}: "
                       + ("remove the temporary file, also when the save fails (clean up on BaseException, "
                          "not only Exception)" if extra else "files went missing"),
                       summary="files were left in the folder (a temporary file not removed)" if extra
                       else "files went missing from the folder")
        if neighbour is not None:
            _expect_state(v["neighbour"], as_state(neighbour), "the save",
                          "another file in the folder (best.pt) was changed")
        if reader and v["read"] is not None:
            _expect_state(v["read"], old, "the save",
                          "a program that had opened the previous checkpoint before the save no longer reads it "
                          "whole: the file was rewritten in place instead of replaced (os.replace)")
        if foreign_tmp:
            require(v["elsewhere"] == [] and all(s["listings"][-1] == [] for s in v["during"]),
                    "the temporary file was made in the system's temporary folder: make it in the folder of "
                    "path (os.replace is atomic only within one file system)")
    return Case("test_atomic_save", name, probe("atomic_save", "save", state, **kwargs), check, visible)


# --- make_checkpoint / resume -------------------------------------------------------------
#
# A run is given by ``spec``, a dict of data:
#   X (n, d) floats, y (n,) class labels, layers [(kind, *sizes)], optimizer {"name", "groups", **kwargs},
#   scheduler {"name", **kwargs}, batch (batch size), noise ("normal" | "uniform"), epochs.
# The model is built under torch.manual_seed(seed) and cast to float64. One epoch: model.train(), the
# order from torch.randperm (torch's global generator), for each batch noise from NumPy's global
# generator added to the inputs, dropout from torch's generator, one optimizer step; the scheduler
# steps after every batch ("onecycle"), after every epoch, or on the epoch's mean loss ("plateau").

def steps_per_epoch(spec) -> int:
    return math.ceil(len(spec["y"]) / int(spec["batch"]))


def make_optimizer(model, spec):
    kwargs = {k: v for k, v in spec.items() if k not in ("name", "groups")}
    if spec.get("groups"):  # weights and biases apart, no weight decay on biases
        params = [{"params": [p for p in model.parameters() if p.ndim > 1]},
                  {"params": [p for p in model.parameters() if p.ndim <= 1], "weight_decay": 0.0}]
    else:
        params = model.parameters()
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
           "rmsprop": torch.optim.RMSprop}[spec["name"]]
    return cls(params, **kwargs)


def make_scheduler(optimizer, spec, run):
    kwargs = {k: v for k, v in spec.items() if k != "name"}
    name, lr_scheduler = spec["name"], torch.optim.lr_scheduler
    if name == "cosine":
        return lr_scheduler.CosineAnnealingLR(optimizer, T_max=int(run["epochs"]), **kwargs)
    if name == "step":
        return lr_scheduler.StepLR(optimizer, **kwargs)
    if name == "exponential":
        return lr_scheduler.ExponentialLR(optimizer, **kwargs)
    if name == "onecycle":
        return lr_scheduler.OneCycleLR(optimizer, total_steps=int(run["epochs"]) * steps_per_epoch(run), **kwargs)
    if name == "plateau":
        return lr_scheduler.ReduceLROnPlateau(optimizer, **kwargs)
    raise ValueError(f"unknown scheduler {name!r}")


def build(spec, seed):
    """Model, optimizer and scheduler of ``spec``; the model from ``torch.manual_seed(seed)`` (the
    generator is left where the initialisation leaves it, as in a training script)."""
    torch.manual_seed(int(seed))
    model = sequential(spec["layers"]).double()
    optimizer = make_optimizer(model, spec["optimizer"])
    return model, optimizer, make_scheduler(optimizer, spec["scheduler"], spec)


def run_epoch(model, optimizer, scheduler, spec) -> None:
    X = torch.as_tensor(np.asarray(spec["X"], dtype=np.float64))
    y = torch.as_tensor(np.asarray(spec["y"], dtype=np.int64))
    batch, name = int(spec["batch"]), spec["scheduler"]["name"]
    model.train()
    order = torch.randperm(len(y))
    losses = []
    for i in range(0, len(y), batch):
        idx = order[i:i + batch]
        if spec["noise"] == "normal":
            noise = 0.1 * np.random.standard_normal((len(idx), X.shape[1]))
        else:
            noise = np.random.uniform(-0.2, 0.2, (len(idx), X.shape[1]))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X[idx] + torch.from_numpy(noise)), y[idx])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if name == "onecycle":
            scheduler.step()
    if name == "plateau":
        scheduler.step(sum(losses) / len(losses))
    elif name != "onecycle":
        scheduler.step()


@contextlib.contextmanager
def kept_generators():
    """torch's, NumPy's and Python's global generators are as they were when the block ends; inside,
    torch runs on one thread, so that both sides of the sandbox wall sum in the same order."""
    np_state, py_state, threads = np.random.get_state(), random.getstate(), torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
        with torch.random.fork_rng(devices=cuda):  # a resume may set the GPUs' generators too
            yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
        torch.set_num_threads(threads)


def _state(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def observe(model, optimizer, scheduler) -> dict:
    """What must be as in the uninterrupted run at a checkpoint: the model's state, the optimizer's
    state and learning rates, the scheduler's position, and the next draws of the generators (drawn,
    then the generators put back, so the run goes on as if nothing was drawn)."""
    opt = optimizer.state_dict()
    state = {int(i): {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v) for k, v in s.items()}
             for i, s in opt["state"].items()}
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()
    draws = {"torch": torch.rand(6, dtype=torch.float64), "uniform": np.random.random(4),
             "normal": np.random.standard_normal(3)}
    torch.set_rng_state(torch_state)
    np.random.set_state(np_state)
    return {"state": _state(model), "optimizer": state, "lr": [float(g["lr"]) for g in optimizer.param_groups],
            "last_epoch": int(scheduler.last_epoch), "last_lr": [float(x) for x in scheduler.get_last_lr()],
            "draws": draws}


def uninterrupted(spec, seed, np_seed, stop_at) -> tuple[dict, dict]:
    """(what the run holds after ``stop_at`` epochs, the model's state at the end), on this side."""
    with kept_generators():
        np.random.seed(int(np_seed))
        model, optimizer, scheduler = build(spec, seed)
        for _ in range(int(stop_at)):
            run_epoch(model, optimizer, scheduler, spec)
        at = observe(model, optimizer, scheduler)
        for _ in range(int(stop_at), int(spec["epochs"])):
            run_epoch(model, optimizer, scheduler, spec)
        return at, _state(model)


def _partner(fn, name):
    """The student's ``name`` from the namespace that defines ``fn`` (the notebook's)."""
    try:
        namespace = inspect.unwrap(fn).__globals__
    except (AttributeError, ValueError):
        namespace = {}
    partner = namespace.get(name)
    if not callable(partner):
        raise NameError(f"{name} is not defined: its cell did not run, or defines another name", name=name)
    return partner


def round_trip(fn, spec, seed, np_seed, stop_at, restart_seed, used=0):
    """The student's ``make_checkpoint`` after ``stop_at`` epochs, written with ``torch.save`` at once;
    the first process goes on (draws, one more epoch); a new one seeds its generators with
    ``restart_seed``, builds fresh objects (trained ``used`` epochs first: stale state), calls
    ``fn`` (``resume``) on the file and trains to the end. Reports what ``resume`` returned, what the
    objects and generators hold right after it (:func:`observe`), and the model at the end."""
    make = _partner(fn, PAIRED["resume"][0])
    folder = tempfile.mkdtemp(prefix="ex09-")
    path = os.path.join(folder, "last.pt")
    try:
        with kept_generators():
            np.random.seed(int(np_seed))
            model, optimizer, scheduler = build(spec, seed)
            for _ in range(int(stop_at)):
                run_epoch(model, optimizer, scheduler, spec)
            torch.save(make(model, optimizer, scheduler, int(stop_at)), path)
            torch.rand(7)  # the first process goes on until it is stopped
            np.random.standard_normal(5)
            if int(stop_at) < int(spec["epochs"]):
                run_epoch(model, optimizer, scheduler, spec)

            torch.manual_seed(int(restart_seed))  # a new process: its own seeds, its own objects
            np.random.seed(int(restart_seed) % 2**32)
            random.seed(int(restart_seed))
            model, optimizer, scheduler = build(spec, int(restart_seed) + 1)
            for _ in range(int(used)):
                run_epoch(model, optimizer, scheduler, spec)
            returned = fn(path, model, optimizer, scheduler)
            after = observe(model, optimizer, scheduler)
            for _ in range(int(stop_at), int(spec["epochs"])):
                run_epoch(model, optimizer, scheduler, spec)
            return {"returned": returned, "after": after, "final": _state(model)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _array(x):
    return x.array if isinstance(x, Tensor) else np.asarray(x)


def _close_state(got, want: dict, what: str, summary: str) -> None:
    require(isinstance(got, dict) and set(got) == set(want),
            f"{what}: the model's state_dict has other entries than the model's")
    bad = [k for k in want if not (np.shape(_array(got[k])) == tuple(want[k].shape) and np.allclose(
        np.asarray(_array(got[k]), float), want[k].double().numpy(), rtol=RTOL, atol=ATOL))]
    if bad:
        raise Fail(f"{summary} (entries {', '.join(bad[:4])}{'...' if len(bad) > 4 else ''} differ)", summary=summary)


def _int_value(x):
    if isinstance(x, Tensor) and x.array.size == 1 and x.array.dtype.kind in "iu":
        return int(x.array.reshape(()))
    if type(x) is int or isinstance(x, np.integer):
        return int(x)
    return None


def resume_case(spec, seed, np_seed, stop_at, restart_seed, name, used=0, visible=False):
    """One interrupted run against the uninterrupted one (see :func:`round_trip`)."""
    def check(r):
        v = r.value
        require(isinstance(v, dict) and {"returned", "after", "final"} <= set(v), "the probe reported nothing")
        at, final = uninterrupted(spec, seed, np_seed, stop_at)
        got = _int_value(v["returned"])
        if got != stop_at:
            raise Fail(f"resume must return the epoch that was passed to make_checkpoint ({stop_at}), as an int; "
                       f"got {kind(v['returned'])} {v['returned']!r}"[:300],
                       summary="resume does not return the epoch that was passed to make_checkpoint, as an int")
        after = v["after"]
        buffers = {k for k, _ in sequential(spec["layers"]).named_buffers()}
        params = set(at["state"]) - buffers
        state = after["state"] if isinstance(after.get("state"), dict) else {}
        params_ok = set(state) == set(at["state"]) and all(np.allclose(
            np.asarray(_array(state[k]), float), at["state"][k].double().numpy(), rtol=RTOL, atol=ATOL)
            for k in params if np.shape(_array(state[k])) == tuple(at["state"][k].shape))
        if params_ok:
            _close_state(state, at["state"], "after resume",
                         "BatchNorm's running statistics (buffers) were not restored: save and load "
                         "model.state_dict(), which holds them (model.parameters() does not)")
        elif set(state) == set(at["state"]) and all(np.array_equal(
                np.asarray(_array(state[k]), float), at["state"][k].float().double().numpy()) for k in params):
            raise Fail("the weights came back rounded to float32: save model.state_dict() as it is (float64 here)",
                       summary="the weights came back rounded to float32: save model.state_dict() as it is")
        else:
            _close_state(state, at["state"], "after resume",
                         "the model's weights were not restored: save model.state_dict() and load it with "
                         "model.load_state_dict")
        opt = after["optimizer"]
        require(not at["optimizer"] or opt,
                "the optimizer has no state after resume: save and load optimizer.state_dict() "
                "(momentum buffers, Adam's moments and step counts)")
        same_opt = isinstance(opt, dict) and set(opt) == set(at["optimizer"]) and all(
            isinstance(opt[i], dict) and set(opt[i]) == set(s) and all(
                (s[k] is None and opt[i][k] is None) if s[k] is None else
                np.allclose(np.asarray(_array(opt[i][k]), float),
                            np.asarray(s[k].double().numpy() if isinstance(s[k], torch.Tensor) else s[k], float),
                            rtol=RTOL, atol=ATOL)
                for k in s) for i, s in at["optimizer"].items())
        require(same_opt, "the optimizer's state after resume is not the one at the checkpoint: save and load "
                          "optimizer.state_dict()")
        close(after["lr"], at["lr"], rtol=RTOL, what="the optimizer's learning rates after resume")
        if after["last_epoch"] != at["last_epoch"]:
            raise Fail(f"the scheduler was not restored (last_epoch {after['last_epoch']}, expected "
                       f"{at['last_epoch']}): save and load scheduler.state_dict()",
                       summary="the scheduler was not restored: save and load scheduler.state_dict()")
        close(after["last_lr"], at["last_lr"], rtol=RTOL,
              what="the scheduler's get_last_lr() after resume (save and load scheduler.state_dict())")
        draws = after["draws"]
        require(np.array_equal(_array(draws["torch"]), at["draws"]["torch"].numpy()),
                "torch's generator was not restored: save torch.get_rng_state() and restore it with "
                "torch.set_rng_state (seeding again is not restoring)")
        require(np.array_equal(_array(draws["uniform"]), at["draws"]["uniform"]),
                "NumPy's generator was not restored: save np.random.get_state() and restore it with "
                "np.random.set_state (seeding again is not restoring)")
        require(np.array_equal(_array(draws["normal"]), at["draws"]["normal"]),
                "NumPy's generator was restored without its cached Gaussian: np.random.get_state() has five "
                "parts (the last two: has_gauss and the cached value); restore all of them")
        _close_state(v["final"], final, "at the end",
                     "the resumed run differs from the uninterrupted one at the end: something that affects "
                     "later epochs was not saved or restored")
    args = (spec, int(seed), int(np_seed), int(stop_at), int(restart_seed))
    return Case("test_resume", name, probe("resume", "round_trip", *args, used=int(used)), check, visible)


def classification(rng, n, d, classes):
    """Blobs around one centre per class: learnable in a few epochs."""
    centres = 2.0 * rng.standard_normal((classes, d))
    y = rng.integers(0, classes, n)
    return centres[y] + rng.standard_normal((n, d)), y


# --- the visible cases --------------------------------------------------------------------

MLP = [("linear", 5, 12), ("tanh",), ("dropout", 0.25), ("linear", 12, 3)]


def visible():
    for history, patience, kwargs, name, hint in (
        ([1.0, 0.9, 0.95], 2, {}, "best 0.9, then one epoch without improvement, patience 2: go on",
         "after the best value comes only ONE epoch without improvement; with patience 2 do not stop yet"),
        ([1.0, 0.9, 0.95, 0.96], 2, {}, "best 0.9, then two epochs without improvement, patience 2: stop",
         "after the best value come TWO epochs without improvement: with patience 2, stop now "
         "(count >= patience, not > patience)"),
        ([1.0, 1.0], 1, {}, "an equal value is not an improvement", "an equal value is not an improvement"),
        ([], 1, {}, "an empty history never stops", "an empty history never stops"),
        ([3.0], 1, {}, "one value: the best so far, nothing to stop yet",
         "the first value is the best so far: nothing to stop yet"),
        ([1.0, 0.75], 1, {"min_delta": 0.25}, "a gain of exactly min_delta is not an improvement",
         "0.75 beats 1.0 by exactly min_delta = 0.25: that is NOT an improvement (value < best - min_delta, strict)"),
        ([1.0, 0.95, 0.92], 2, {"min_delta": 0.1}, "gains smaller than min_delta do not count",
         "0.95 and 0.92 improve on 1.0 by less than min_delta = 0.1: they are NOT improvements"),
        ([1.0, 0.95, 0.85], 2, {"min_delta": 0.1}, "a gain larger than min_delta resets the count",
         "0.85 < 1.0 - 0.1 is an improvement and resets the count"),
        ([1.0, 0.95, 0.9, 0.85], 3, {"min_delta": 0.1}, "a small gain does not become the new best",
         "a value better by min_delta or less must not become the new best: 0.85 beats the best (1.0) by more "
         "than 0.1, so it is an improvement"),
        ([0.5, 0.7, 0.69], 1, {"mode": "max"}, "mode='max': a lower accuracy is no improvement",
         "mode='max' (an accuracy): 0.69 is worse than 0.7"),
        ([0.5, 0.7, 0.71], 1, {"mode": "max"}, "mode='max': a higher accuracy is an improvement",
         "mode='max': 0.71 is an improvement on 0.7"),
        ([1.0, 0.5, float("nan"), float("nan")], 2, {}, "two NaN losses after the best, patience 2: stop",
         "a NaN is never an improvement: each NaN adds one to the count"),
    ):
        yield stop_case(history, patience, name, hint, visible=True, **kwargs)

    state = {"epoch": 1, "w": np.arange(3.0, dtype=np.float32)}
    yield save_case(state, "a new file at path: it loads back as the state, nothing else in the folder",
                    visible=True)
    yield save_case({"epoch": 2, "w": np.arange(4.0, dtype=np.float32)},
                    "saving over a checkpoint: the new state replaces it, nothing else in the folder",
                    previous=state, visible=True)
    yield save_case({"epoch": 3, "w": np.arange(5.0, dtype=np.float32)},
                    "a state torch.save cannot write: the error propagates, the previous file still loads, "
                    "no temporary file is left", previous=state, fault="error", visible=True)

    rng = np.random.default_rng(9)
    X, y = classification(rng, 45, 5, 3)  # 45 samples, 5 features, 3 epochs: an odd number of normal draws
    spec = {"X": X, "y": y, "layers": MLP, "optimizer": {"name": "adamw", "lr": 1e-2},
            "scheduler": {"name": "cosine"}, "batch": 9, "noise": "normal", "epochs": 5}
    yield resume_case(spec, 0, 0, 3, 123, "AdamW and a cosine schedule, dropout, torch shuffles, NumPy noise: "
                      "stopped after 3 of 5 epochs, resumed into fresh objects", visible=True)
