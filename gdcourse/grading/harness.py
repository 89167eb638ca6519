"""The untrusted side of the judge: runs inside the sandbox, one process per student.

    python -m gdcourse.grading.harness JOB OUT_FD

``JOB`` (a :mod:`~gdcourse.grading.wire` message the judge wrote, read-only
here) holds the notebook's code cells, in order, and the calls to make.
The harness runs every cell in an IPython shell (as a kernel would, magics
included), then makes each call: a graded function of the student's on
inputs the judge chose (``probe == "call"``), or a probe from
:mod:`gdcourse.grading.probes` that builds objects (a model, an optimizer)
from those inputs and reports what the function left behind. Each result
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


def generic_call(ns: dict, fn: str, args: list, kwargs: dict) -> dict:
    """Call ``ns[fn](*args, **kwargs)``; report what it returned and the arguments as they are after it."""
    import numpy as np
    if not callable(ns.get(fn)):
        raise NameError(f"{fn} is not defined: its cell did not run, or defines another name")
    result = ns[fn](*args, **kwargs)
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
            args, kwargs = _materialize(call["args"]), _materialize(call["kwargs"])
            if call["probe"] == "call":
                value = generic_call(ns, call["fn"], args, kwargs)
            else:
                module, name = call["probe"].split(":")
                probe = getattr(importlib.import_module(f"gdcourse.grading.probes.{module}"), name)
                value = {"value": probe(ns, *args, **kwargs)}
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
