"""The judge's trusted pieces, one by one: what they accept from the sandbox, and what they refuse."""

import io
import json
import zipfile
from html.parser import HTMLParser

import nbformat
import numpy as np
import pytest

from gdcourse.grading import export, feedback, integrity, judge, wire
from gdcourse.grading.cases import Fail, Result, close, number, rel_error, unchanged
from submissions import release

# --- wire ----------------------------------------------------------------------------


def test_values_cross_as_data_and_keep_their_kind():
    value = {"w": np.arange(6.0).reshape(2, 3), "t": (1, 2.5, np.float32(3.5), None, True, "s"),
             "nested": [[np.int64(4)], {"k": np.zeros(0)}], "err": ValueError("bad <x>"), "obj": object()}
    got = wire.unpack(wire.pack(value))
    assert np.array_equal(got["w"], value["w"]) and got["w"].dtype == np.float64
    assert got["t"][:2] == (1, 2.5) and type(got["t"][1]) is float
    assert got["t"][2] == np.float32(3.5) and got["t"][2].dtype == np.float32 and got["t"][3:] == (None, True, "s")
    assert got["nested"][0][0] == 4 and got["nested"][1]["k"].shape == (0,)
    assert got["err"] == wire.Raised("ValueError", "bad <x>")
    assert got["obj"] == wire.Opaque("object")


def test_torch_tensors_arrive_as_values_with_their_dtype():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -2.0], dtype=torch.bfloat16, requires_grad=True)
    got = wire.unpack(wire.pack(t))
    assert isinstance(got, wire.Tensor) and got.dtype == "bfloat16" and got.requires_grad
    assert np.array_equal(got.array, [1.5, -2.0])


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize("data", [
    b"not a zip at all",
    _npz(__tree__=np.frombuffer(b'{"t": "array", "a": "a0"}', np.uint8), a0=np.array([object()], dtype=object)),
    _npz(__tree__=np.frombuffer(b'{"t": "array", "a": "missing"}', np.uint8)),
    _npz(__tree__=np.frombuffer(b'{"t": "exec", "code": "import os"}', np.uint8)),
    _npz(__tree__=np.frombuffer(b'{"t": "dict", "items": [[[1], 2]]}', np.uint8)),
    _npz(other=np.zeros(3)),
])
def test_anything_but_data_is_refused(data):
    with pytest.raises(wire.WireError):
        wire.unpack(data)


def test_a_zip_bomb_is_refused_before_it_is_unpacked():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("__tree__.npy", b"\0" * (wire.MAX_BYTES + 1))
    with pytest.raises(wire.WireError, match="limit"):
        wire.unpack(buffer.getvalue())


# --- frames from the harness -------------------------------------------------------------

def _frame(kind, ident, value) -> bytes:
    data = wire.pack(value)
    return json.dumps({"kind": kind, "id": ident, "size": len(data)}).encode() + b"\n" + data


END = b'{"kind": "end"}\n'


def test_a_clean_stream_is_read_whole():
    cells, calls, complete, problem = judge.read_frames(
        _frame("cell", "fit", {"error": None}) + _frame("call", "c0", {"value": 1.5}) + END)
    assert complete and not problem and calls["c0"]["value"] == 1.5 and cells["fit"]["error"] is None


@pytest.mark.parametrize("stream, problem", [
    (_frame("call", "c0", {"value": 1}), "no end frame"),
    (_frame("call", "c0", {"value": 1}) + _frame("call", "c0", {"value": 2}) + END, "repeated"),
    (b'{"kind": "call", "id": "c0", "size": 99999}\n12' + END, "wrong size"),
    (b'{"kind": "call", "id": "c0", "size": 5}\n12345' + END, "not data"),
    (b"garbage\n" + END, "malformed"),
    (END + b"more", "after the end"),
    (b'{"kind": "verdict", "score": 9}\n' + END, "unknown"),
])
def test_a_forged_or_broken_stream_is_not_complete(stream, problem):
    _, _, complete, why = judge.read_frames(stream)
    assert not complete and problem in why


# --- checks ----------------------------------------------------------------------------

def test_checks_compare_values_not_forms():
    close([1.0, 2.0 + 1e-12], np.array([1.0, 2.0]), rtol=1e-10)
    close(wire.Tensor(np.array([3.0]), "float32"), [3.0], rtol=0)
    with pytest.raises(Fail, match="shape"):
        close(np.zeros((2, 1)), np.zeros(2), rtol=1)
    with pytest.raises(Fail, match="should be numbers"):
        close(wire.Opaque("generator"), [1.0], rtol=1)
    with pytest.raises(Fail, match="expected"):
        close([1.0, np.nan], [1.0, 2.0], rtol=1e-3)
    assert number(np.array([2.5])) == 2.5 and rel_error([1.0, np.inf], [1.0, np.inf]) == 0.0
    with pytest.raises(Fail, match="was modified"):
        unchanged(Result(None, (np.array([1.0, 9.0]),)), 0, [1.0, 2.0], "w")


# --- the static check and tampering ----------------------------------------------------------

REFS = ("gdcourse.optim.Adam", "gdcourse.optim.AdamW")


@pytest.mark.parametrize("source", [
    "from gdcourse.optim import Adam\n",
    "import gdcourse.optim as o\ndef f(): return o.AdamW\n",
    "from gdcourse import optim\nstep = optim.Adam\n",
    "import gdcourse\nx = gdcourse.optim.Adam\n",
    "from gdcourse.optim import *\n",
    "import torch\nopt = torch.optim.SGD\n",
    "from torch import optim\n",
])
def test_reaching_for_the_reference_or_a_library_optimizer_is_found(source):
    work, _ = integrity.static_findings(source, references=REFS, forbidden=("torch.optim",))
    assert work, source


@pytest.mark.parametrize("source, phrase", [
    ("m = __import__('gdcourse.optim')\n", "dynamic"),
    ("exec('x = 1')\n", "dynamic"),
    ("import importlib\n", "dynamic"),
    ("import subprocess\n", "system access"),
    ("import os\nos.system('ls')\n", "system access"),
    ("data = open('/work/main/solutions/x').read()\n", "a path outside"),
    ("%timeit x = 1\nimport ctypes\n", "system access"),
])
def test_code_worth_a_look_is_flagged(source, phrase):
    work, other = integrity.static_findings(source, references=REFS)
    assert not work and any(phrase in f for f in other), other


def test_honest_code_is_not_flagged():
    source = ("import numpy as np\nfrom gdcourse.precision import format_table\nimport os.path\n"
              "def adam_step(w, g, state, lr):\n    m = state['m']\n    return w - lr * g, {'m': m, 'path': 'a/b'}\n")
    assert integrity.static_findings(source, references=REFS, forbidden=("torch.optim",)) == ([], [])
    assert integrity.static_findings("def f(:\n", references=REFS) == ([], [])  # a syntax error is not a finding


def test_every_metadata_edit_is_named():
    rel = release("ex01-gd-loop")
    sub = nbformat.reads(nbformat.writes(rel), as_version=4)
    by_id = {c.metadata["nbgrader"]["grade_id"]: c for c in sub.cells if "nbgrader" in c.metadata}
    by_id["test_fit"].metadata["nbgrader"]["points"] = 200
    by_id["test_predict"].cell_type = "markdown"
    by_id["fit"].metadata["nbgrader"]["grade_id"] = "test_predict"  # now appears twice
    problems = integrity.tampered_cells(sub, rel)
    assert "test_fit (points changed from 2 to 200)" in problems
    assert "test_predict (cell type changed from code to markdown)" in problems
    assert "test_predict (appears twice)" in problems
    assert integrity.tampered_cells(rel, rel) == []


# --- what leaves the grader ---------------------------------------------------------------------

@pytest.mark.parametrize("cell, shown", [("=1+2", "'=1+2"), ("+cmd", "'+cmd"), ("@SUM(A1)", "'@SUM(A1)"),
                                         ("-3.5", "-3.5"), ("ada", "ada"), (None, ""), (7.0, "7.0")])
def test_csv_cells_are_defused(cell, shown):
    assert export.defused(cell) == shown


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs += attrs


def test_the_feedback_page_is_text_whatever_the_student_wrote():
    evil = "<script>x()</script><img src=x onerror=y()><a href='javascript:z()'>a</a>\x1b[31m\x00"
    result = {"status": "graded", "grades": {"test_f": [0.5, 1.0, False], "essay": [0.0, 2.0, True]},
              "cases": [{"test": "test_f", "name": evil, "visible": True, "passed": False, "message": evil,
                         "points": 0.5}], "cell_errors": {"f": evil}, "zeroed": {}}
    page = feedback.page("ada", "ex", result, [("f", evil * 5000), ("essay", evil)])
    tags = _Tags()
    tags.feed(page)
    assert tags.tags <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "strong", "table",
                         "tr", "th", "td", "span", "br", "ul", "li", "pre"}, tags.tags
    assert not [k for k, _ in tags.attrs if k.startswith("on")] and "\x1b" not in page and "\x00" not in page
    assert len(page.encode()) <= feedback.MAX_PAGE + 2000


def test_a_stored_result_is_kept_only_if_authentic(tmp_path):
    from gdcourse.grading import cohort
    key = cohort._key(tmp_path)
    assert (tmp_path / ".results-key").stat().st_mode & 0o077 == 0
    path = tmp_path / "r.json"
    cohort._write_result(path, {"status": "graded", "score": 1.0}, key)
    assert cohort._read_result(path, key) == {"status": "graded", "score": 1.0}
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "result": stored["result"].replace("1.0", "9.0")}))
    assert cohort._read_result(path, key) is None
    assert cohort._read_result(path, b"another key") is None


# --- the sandbox's limits, with and without a cgroup of its own ---------------------------------------

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


def test_system_calls_an_exercise_asks_for_are_not_flagged_but_others_are():
    allowed = ("os.replace", "os.fsync")
    honest = "import os\ndef save(tmp, path):\n    os.fsync(3)\n    os.replace(tmp, path)\n"
    assert integrity.static_findings(honest, allowed=allowed) == ([], [])
    _, other = integrity.static_findings(honest + "os.system('ls')\n", allowed=allowed)
    assert other == ["system access (os.system)"]
    _, other = integrity.static_findings("import shutil\nshutil.rmtree('x')\n", allowed=allowed)
    assert any("shutil" in f for f in other)


def test_a_contained_call_brings_back_data_and_contains_a_memory_bomb():
    """Trusted code on a student's data (ONNX Runtime on an exported file) runs outside the grader."""
    from gdcourse.grading import contained

    assert contained.call("numpy:arange", 3).tolist() == [0, 1, 2]
    with pytest.raises(contained.ContainedError, match="(?i)memory"):
        contained.call("numpy:ones", 10**10, seconds=60, memory_mb=400)  # 80 GB of float64
    with pytest.raises(contained.ContainedError, match="TypeError"):
        contained.call("numpy:arange", "not a number")
