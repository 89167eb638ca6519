"""Run a grading worker so that one student cannot stall, crash or reach out.

Two layers:

- **Isolation** (Linux, where unprivileged user namespaces are allowed): the
  worker starts under ``unshare --user --map-root-user --mount --net``. In
  that namespace this module remounts the whole file system read-only except
  the worker's own folder, gives it a private ``/dev/shm``, and brings up only
  the loopback interface (the kernel talks to its client over localhost), so
  there is no route to any other host. Where ``unshare`` is refused, grading
  still runs, without this layer, and says so.
- **Limits**, enforced from outside by the supervisor in
  :mod:`gdcourse.grading.cohort`: a wall-clock limit per notebook and a memory
  limit on the worker's whole process tree (kernel included), checked several
  times a second; a worker over either limit is killed with its process group.

What it does not protect: CPU time shared with the other workers, files
readable by the instructor's account (a student can read, not write, them),
and anything a root user outside the namespace could do.
"""

from __future__ import annotations

import fcntl
import functools
import os
import socket
import struct
import subprocess
import sys
import tempfile

import psutil


def command(cmd: list[str], writable: list[str], *, isolate: bool) -> list[str]:
    """``cmd``, wrapped to run isolated with only ``writable`` folders writable (when ``isolate``)."""
    if not isolate:
        return list(cmd)
    args = ["unshare", "--user", "--map-root-user", "--mount", "--net", "--",
            sys.executable, "-c", "import sys; from gdcourse.grading.sandbox import main; main(sys.argv[1:])"]
    for folder in writable:
        args += ["--writable", os.path.abspath(folder)]
    return args + ["--", *cmd]


@functools.lru_cache(maxsize=None)
def isolation_available() -> bool:
    """True when an isolated process really is cut off: no writes outside, no network."""
    with tempfile.TemporaryDirectory() as inside:
        probe = ("import os, socket, sys\n"
                 "try:\n    socket.create_connection(('192.0.2.1', 9), timeout=1); sys.exit(3)\n"
                 "except OSError: pass\n"
                 f"open(os.path.join({inside!r}, 'ok'), 'w').write('1')\n"
                 "try:\n    open('/probe-outside', 'w'); sys.exit(4)\nexcept OSError: pass\n")
        try:
            done = subprocess.run(command([sys.executable, "-c", probe], [inside], isolate=True),
                                  capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and os.path.exists(os.path.join(inside, "ok"))


def tree_memory(pid: int) -> int:
    """Resident memory (bytes) of a process and all its descendants; 0 once it is gone."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def _loopback_up() -> None:
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sh", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def main(argv: list[str]) -> None:
    """Inside the new namespaces: lock the file system down, then become ``cmd``."""
    split = argv.index("--")
    writable = [argv[i + 1] for i, a in enumerate(argv[:split]) if a == "--writable"]
    cmd = argv[split + 1:]
    _loopback_up()
    _mount("--rbind", "/", "/")
    _mount("-o", "remount,bind,ro", "/")
    _mount("-t", "tmpfs", "-o", "size=64m", "tmpfs", "/dev/shm")
    for folder in writable:
        _mount("--bind", folder, folder)
        _mount("-o", "remount,bind,rw", folder)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
