"""Trusted code on a student's data, outside the grader's own process.

A few checks must run something a student made: ONNX Runtime on an exported
file. A crafted file could ask for terabytes (``ConstantOfShape``), spin, or
crash the runtime; in the grader's process that would take the whole batch
down. :func:`call` runs a course function on such data in a fresh sandbox of
its own (:mod:`.sandbox`: no network, limits on time and memory), and only data
comes back (:mod:`.wire`). No student code runs there, only the course's
function on the student's bytes.

    outputs = contained.call("gdcourse.grading.assignments.ex12_onnx_export:run_graph", data, inputs)
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path


class ContainedError(RuntimeError):
    """The contained call did not come back with a value: stopped at a limit, crashed, or raised."""


def call(target: str, *args, seconds: float = 60, memory_mb: int = 2048):
    """``module:function(*args)`` in a fresh sandbox; its return value (data only), or :class:`ContainedError`."""
    from gdcourse.grading import sandbox, wire

    isolate = sandbox.availability()[0]  # where no sandbox can be made, still a separate, limited process
    with tempfile.TemporaryDirectory(prefix="gdcourse-contained-") as folder:
        job = Path(folder)
        (job / "job.npz").write_bytes(wire.pack({"target": target, "args": list(args)}))
        path = f"{sandbox.JOB}/job.npz" if isolate else str(job / "job.npz")
        ran = sandbox.run([sys.executable, "-m", "gdcourse.grading.contained", path], job, seconds=seconds,
                          memory_mb=memory_mb, isolate=isolate, name="contained")
    if ran.ended != "exit":
        raise ContainedError(sandbox.stopped_because(ran.ended, seconds=seconds, memory_mb=memory_mb)[1])
    try:
        reply = wire.unpack(ran.output)
    except wire.WireError:
        raise ContainedError("the contained process died without a result") from None
    if not isinstance(reply, dict) or ("value" not in reply and "error" not in reply):
        raise ContainedError("the contained process sent no result")
    if "error" in reply:
        raise ContainedError(str(reply["error"]))
    return reply["value"]


def main(argv=None) -> None:
    from gdcourse.grading import wire

    argv = sys.argv[1:] if argv is None else argv
    job = wire.unpack(Path(argv[0]).read_bytes())
    module, function = job["target"].split(":")
    try:
        reply = {"value": getattr(importlib.import_module(module), function)(*job["args"])}
    except Exception as exc:
        reply = {"error": exc}
    with os.fdopen(int(argv[1]), "wb") as out:
        out.write(wire.pack(reply))
    os._exit(0)


if __name__ == "__main__":
    main()
