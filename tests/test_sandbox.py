"""gdcourse.grading.sandbox: the sandbox's limits, with and without a cgroup of its own."""

import json

import pytest

MARK = "6007"  # `sleep 6007`: a process left behind on purpose


def _run_python(code, tmp_path, **kw):
    import sys
    from gdcourse.grading import sandbox
    return sandbox.run([sys.executable, "-c", code + "\nimport sys; sys.exit(0)\n#"], tmp_path, seconds=30, **kw)


def _survivors():
    import psutil
    return [p for p in psutil.process_iter(["cmdline"]) if MARK in (p.info["cmdline"] or [])]


@pytest.mark.parametrize("cgroup", [True, False], ids=["own cgroup", "process-tree watch"])
def test_memory_and_processes_stay_inside_the_limits(cgroup, monkeypatch, tmp_path):
    from gdcourse.grading import sandbox
    if cgroup and not sandbox.cgroups_available():
        pytest.skip("this machine gives the grader no cgroup; the process-tree watch case covers it")
    if not cgroup:  # a machine that delegates no cgroup: the grader watches the sandbox's whole tree
        monkeypatch.setattr(sandbox.Cgroup, "active", property(lambda self: False))
    hog = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    hog = []\n    while True:\n"
           "        hog.append(b'x' * (20 * 2**20))\ntime.sleep(20)")
    ran = _run_python(hog, tmp_path, memory_mb=300)
    assert ran.ended == "memory", ran
    if cgroup:  # the kernel holds the line: it kills the hoarder, and the row says so when the sandbox ends
        assert ran.peak_bytes <= 330 * 2**20, ran.peak_bytes
    else:  # the watch looks 20 times a second: it may overshoot a little, and it stops the sandbox at once
        assert ran.seconds < 10, ran
    daemon = (f"import os, subprocess\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
              f"        os.execv('/usr/bin/sleep', ['sleep', '{MARK}'])\n    os._exit(0)\n"
              f"subprocess.Popen(['sleep', '{MARK}'], start_new_session=True)")
    ran = _run_python(daemon, tmp_path, memory_mb=300)
    assert ran.ended == "exit" and ran.returncode == 0, ran
    import time
    time.sleep(0.3)
    assert not _survivors()


def test_the_sandbox_sees_only_what_it_needs(tmp_path):
    import sys
    from pathlib import Path
    from gdcourse.grading import sandbox
    root = Path(__file__).resolve().parent.parent
    code = ("import os, json, sys\n"
            "paths = %r\n"
            "seen = [p for p in paths if os.path.exists(p)]\n"
            "os.write(int(sys.argv[-1]), json.dumps(seen).encode())\n") % (
        [str(root / "solutions"), str(root / "tests"), str(root / "README.md"), str(tmp_path.parent), "/etc/passwd",
         "/home", str(root / "gdcourse" / "grading" / "judge.py")],)
    ran = sandbox.run([sys.executable, "-c", code], tmp_path, seconds=30, memory_mb=500)
    assert json.loads(ran.output) == [str(root / "gdcourse" / "grading" / "judge.py")]
