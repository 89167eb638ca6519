"""The untrusted side of the judge: runs inside the sandbox, one process per student.

    python -m gdcourse.grading.harness JOB OUT_FD

``JOB`` (a :mod:`~gdcourse.grading.wire` message the judge wrote, read-only
here) holds the notebook's code cells, in order, and the calls to make.
The harness runs every cell in an IPython shell (as a kernel would, magics
included), then makes each call: a graded function of the student's on
inputs the judge chose, or handed to a probe of the assignment's public
module (:mod:`gdcourse.grading.assignments`) that builds objects (a model,
an optimizer) from those inputs and reports what the function left behind;
meanwhile the assignment's other graded functions are the course's
reference (:func:`stand_ins`). Each result
goes to ``OUT_FD`` as a frame the moment it is known: a JSON header line,
then a wire message.

Nothing here is trusted. The student's code runs in this process and may
rewrite any of it; it can only change what this student's frames say, and
the judge scores those frames by recomputing the answers itself.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import signal
import sys
import time
from pathlib import Path

from gdcourse.grading import wire

MAX_CELL_OUTPUT = 20_000  # characters of printed output kept per cell


class _Capped(io.StringIO):
    def write(self, s):
        room = MAX_CELL_OUTPUT - self.tell()
        if room > 0:
            super().write(s[:room])
        return len(s)


def _alarm(seconds: float):
    def expire(*_):
        raise TimeoutError(f"stopped after {seconds:g} s")
    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _disarm():
    signal.setitimer(signal.ITIMER_REAL, 0)


def _materialize(value):
    """Inputs as the student's function expects them: wire tensors become torch tensors again."""
    if isinstance(value, wire.Tensor):
        import torch
        return torch.tensor(value.array, dtype=getattr(torch, value.dtype)).requires_grad_(value.requires_grad)
    if isinstance(value, tuple):
        return tuple(_materialize(v) for v in value)
    if isinstance(value, list):
        return [_materialize(v) for v in value]
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    return value


@contextlib.contextmanager
def stand_ins(ns: dict, reference: dict, keep: str):
    """Every graded function but ``keep`` is the course's reference while the block runs, so a case of
    one function never depends on the student's other functions being right."""
    missing = object()
    saved = {name: ns.get(name, missing) for name in reference if name != keep}
    ns.update({name: reference[name] for name in saved})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                ns.pop(name, None)
            else:
                ns[name] = value


def make_call(ns: dict, call: dict, module) -> dict:
    """One case's call: the student's ``call["fn"]`` on the arguments, or handed to the public module's
    probe ``call["probe"]``, with the other graded functions stood in for. Returns the frame's value:
    ``{"value": ...}`` (a plain call also ``args_after`` and ``shares_input``)."""
    if call["args"] is None:  # a graded value, not a function
        if call["fn"] not in ns:
            raise NameError(f"{call['fn']} is not defined: its cell did not run, or defines another name")
        return {"value": ns[call["fn"]]}
    fn = ns.get(call["fn"])
    if not callable(fn):
        raise NameError(f"{call['fn']} is not defined: its cell did not run, or defines another name")
    args, kwargs = _materialize(call["args"]), _materialize(call["kwargs"])
    with stand_ins(ns, module.REFERENCE, call["fn"]):
        if call["probe"]:
            return {"value": getattr(module, call["probe"])(fn, *args, **kwargs)}
        return generic_call(fn, args, kwargs)


def generic_call(fn, args: list, kwargs: dict) -> dict:
    """``fn(*args, **kwargs)``: what it returned, the arguments as they are after it, and which
    returned arrays share memory with an argument."""
    import numpy as np
    result = fn(*args, **kwargs)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    returned = result if isinstance(result, tuple) else (result,)
    shares = [i for i, r in enumerate(returned) if isinstance(r, np.ndarray)
              and any(np.shares_memory(r, a) for a in arrays)]
    return {"value": result, "args_after": list(args), "shares_input": shares}


def run(job_path: Path, out) -> None:
    job = wire.unpack(job_path.read_bytes())

    def frame(kind: str, ident: str, value) -> None:
        try:
            data = wire.pack(value)
        except Exception:  # a value we cannot encode is reported, not fatal
            data = wire.pack({"error": RuntimeError("the result could not be encoded as data")})
        out.write((json.dumps({"kind": kind, "id": ident, "size": len(data)}) + "\n").encode())
        out.write(data)
        out.flush()

    module = importlib.import_module(f"gdcourse.grading.assignments.{job['module']}")
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance(history_length=0, cache_size=0)
    shell.history_manager.enabled = False
    for cell in job["cells"]:
        buffer = _Capped()
        error = None
        started = time.perf_counter()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            _alarm(job["cell_seconds"])
            try:
                result = shell.run_cell(cell["source"], store_history=False)
                error = result.error_before_exec or result.error_in_exec
            except BaseException as exc:  # a cell that raises past IPython (SystemExit, KeyboardInterrupt)
                error = exc
            finally:
                _disarm()
        frame("cell", cell["id"], {"error": error, "output": buffer.getvalue(),
                                   "seconds": time.perf_counter() - started})

    ns = shell.user_ns
    for call in job["calls"]:
        started = time.perf_counter()
        _alarm(job["call_seconds"])
        try:
            value = make_call(ns, call, module)
            value["seconds"] = time.perf_counter() - started
        except BaseException as exc:
            value = {"error": exc}
        finally:
            _disarm()
        frame("call", call["id"], value)
    out.write(b'{"kind": "end"}\n')
    out.flush()


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    out = os.fdopen(int(argv[1]), "wb", buffering=0)
    run(Path(argv[0]), out)
    out.close()
    os._exit(0)  # no atexit hooks of the student's


if __name__ == "__main__":
    main()
