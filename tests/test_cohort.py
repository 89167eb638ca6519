"""An adversarial cohort, graded for real: every student gets the right status
and reason, honest scores are exact, hidden tests stay hidden, and the batch
finishes. Then a batch killed with SIGKILL resumes without losing or
duplicating a grade."""

import csv
import html
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import psutil
import pytest

from gdcourse.grading import Limits, grade
from gdcourse.grading.verdict import Verdict
from submissions import solution_answers, submission, variants_of

ROOT = Path(__file__).resolve().parent.parent
@pytest.fixture(scope="module")
def listener():
    """A TCP server on this machine's loopback: reachable from here, not from inside the sandbox."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


EX = "ex01-gd-loop"  # on the judge, NumPy only (fast)
AUTO = 7.0  # automatic points (2 more are graded by hand)
MAX = 9.0
MARK = "7919"  # `sleep 7919`: a process a student tried to leave behind

def _attacks(ok, port, outside, secrets):
    """Every kind of attack from the issue, each as a submission: answers {grade_id: source}."""
    def first(prefix):  # a full solution whose first answer cell first runs ``prefix`` (errors ignored)
        guarded = "try:\n" + "\n".join("    " + l for l in prefix.splitlines()) + "\nexcept Exception:\n    pass"
        return {**ok, "predict": guarded + "\n" + ok["predict"]}
    read_all = ("readable = []\nfor p in %r:\n    try:\n        open(p, 'rb').read(1)\n        readable.append(p)\n"
                "    except OSError:\n        pass\n"
                "raise RuntimeError('READ:' + repr(readable))\n") % (secrets,)
    return {
        # the student controls the interpreter the tests run in
        "strips-asserts": {"fit": (
            "import ast\nclass Strip(ast.NodeTransformer):\n    def visit_Assert(self, node):\n        return ast.Pass()\n"
            "get_ipython().ast_transformers.append(Strip())\n"
            "def fit(X, y, lr, epochs):\n    return np.ones(X.shape[1]), 1.0, [1.0] * (epochs + 1)\n")},
        "displayhook-then-fail": {"fit": "import sys\ndef fit(X, y, lr, epochs):\n    sys.displayhook(1)\n    raise ValueError('x')\n"},
        "patches-allclose": {"fit": "import numpy as np\nnp.allclose = np.isclose = lambda *a, **k: True\n"
                                    "np.testing.assert_allclose = lambda *a, **k: None\n"
                                    "def fit(X, y, lr, epochs):\n    return np.ones(X.shape[1]), 1.0, [1.0] * (epochs + 1)\n"}, 
        # the result channel: forge frames on every fd, then die
        "forges-results": {"predict": (
            "import os, json\nfake = json.dumps({'kind': 'call', 'id': 'c0', 'size': 5}).encode() + b'\\n12345'\n"
            "for fd in range(3, 64):\n    try:\n        os.write(fd, fake + b'{\"kind\": \"end\"}\\n')\n    except OSError:\n        pass\n"
            "def predict(X, w, b):\n    return X @ w + b\n")},
        "forges-an-end": {"predict": (
            "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'{\"kind\": \"end\"}\\n')\n    except OSError:\n        pass\n"
            "os._exit(0)\n")},
        # the sandbox
        "remounts-root": first("import subprocess\nsubprocess.run(['mount', '-o', 'remount,bind,rw', '/'])\n"
                               f"open({str(outside)!r}, 'w').write('pwned')"),
        "writes-outside": first(f"try:\n    open({str(outside)!r}, 'w').write('pwned')\nexcept OSError:\n    pass"),
        "reads-secrets": {**ok, "gd_step": ok["gd_step"] + "\n" + read_all},
        "leaves-a-daemon": first(f"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                                 f"        os.execv('/usr/bin/sleep', ['sleep', '{MARK}'])\n    os._exit(0)"),
        "fork-bomb": first(f"import subprocess\nfor _ in range(400):\n    try:\n"
                           f"        subprocess.Popen(['sleep', '{MARK}'], start_new_session=True)\n"
                           "    except OSError:\n        break"),
        "detached-memory-hog": first("import os, time\nif os.fork() == 0:\n    os.setsid()\n    hog = []\n"
                                     "    while True:\n        hog.append(b'x' * (50 * 2**20))\ntime.sleep(5)"),
        "network": first(f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                         "except OSError:\n    pass"),
        # feedback
        "xss": {**ok, "predict": ok["predict"] + "\nprint('<script>alert(1)</script>')\n",
                "fit": "def fit(X, y, lr, epochs):\n    raise ValueError('<img src=x onerror=alert(1)> \\x1b[31mred\\x1b[0m')\n",
                "why_diverge": "<script>alert(2)</script><iframe src=\"javascript:alert(3)\"></iframe> <b onclick=x>hi</b>"},
        "huge-output": first("print('x' * 100_000_000)"),
        # limits
        "endless-loop": {**ok, "predict": "while True:\n    pass"},
        "kernel-dies": {**ok, "predict": "import os\nos._exit(1)"},
        "memory-bomb": first("hog = []\nwhile True:\n    hog.append(bytearray(50 * 2**20))"),
        # the course's own code
        "dynamic-import": {**ok, "gd_step": "mod = __import__('gdcourse.linear', fromlist=['x'])\n" + ok["gd_step"]},
    }


def _edit(path, grade_id, **change):
    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            if "source" in change:
                c.source = change["source"]
            if "cell_type" in change:
                c.cell_type = change["cell_type"]
                c.pop("outputs", None), c.pop("execution_count", None)
            c.metadata["nbgrader"].update(change.get("meta", {}))
    nbformat.write(nb, path)


LIMITS = Limits(cell_seconds=60, notebook_seconds=45, memory_mb=1500)
EXPECTED = {  # student: (status, score, a phrase of the reason)
    "strips-asserts": ("graded", AUTO - 2, "test_fit"),
    "displayhook-then-fail": ("flagged", AUTO - 2, "dynamic code or imports (sys.displayhook)"),
    "patches-allclose": ("graded", AUTO - 2, "test_fit"),
    "forges-results": ("crashed", 0.0, "cannot read"),
    "forges-an-end": ("flagged", 0.0, "lost points in test_predict"),
    "remounts-root": ("flagged", AUTO, "system access (subprocess"),
    "writes-outside": ("flagged", AUTO, "a path outside"),
    "reads-secrets": ("flagged", AUTO, "a path outside"),
    "leaves-a-daemon": ("flagged", AUTO, "system access (os"),
    "fork-bomb": ("flagged", AUTO, "system access (subprocess"),
    "network": ("flagged", AUTO, "system access (socket"),
    "xss": ("graded", AUTO - 2, "test_fit"),
    "huge-output": ("graded", AUTO, "await manual grading"),
    "endless-loop": ("timed out", 0.0, "45 s"),
    "kernel-dies": ("crashed", 0.0, "died"),
    "memory-bomb": ("crashed", 0.0, "1500 MB"),
    "dynamic-import": ("flagged", AUTO, "dynamic code or imports (__import__)"),
    "edits-points": ("tampered", AUTO, "test_fit (points changed from 2 to 200)"),
    "renames-a-test": ("tampered", AUTO, "test_fit (deleted)"),
    "test-made-markdown": ("tampered", AUTO, "test_predict (cell type changed from code to markdown)"),
    "edited-test": ("tampered", AUTO - 2, "test_fit (edited)"),
    "deleted-test": ("tampered", AUTO, "test_gd_step (deleted)"),
    "=1+2": ("invalid notebook", 0.0, "not a valid student id"),
    "symlinked": ("invalid notebook", 0.0, "symbolic link"),
    "broken-json": ("invalid notebook", 0.0, "JSON"),
    "absent": ("missing", 0.0, "on the roster"),
}
HONEST = {"full": AUTO, "no-fit": AUTO - 2, "alternative": AUTO}  # kind: exact score


def _honest(ok, kind):
    return {"full": ok, "no-fit": {k: v for k, v in ok.items() if k != "fit"},
            "alternative": {**ok, **variants_of(EX).CORRECT["other_formulas"]}}[kind]


@pytest.fixture(scope="module")
def cohort(tmp_path_factory, listener):
    port, accepted = listener
    base = tmp_path_factory.mktemp("adversarial")
    subs, outside = base / "subs", base / "outside.txt"
    out = base / "out"
    ok = solution_answers(EX)
    # files a student must not read: the trusted cases, the source, the grading folder, other students, the host
    secrets = [str(ROOT / "solutions" / EX / "cases.py"), str(ROOT / "solutions" / EX / f"{EX}.ipynb"),
               str(out / "template" / "gradebook.db"), str(out / ".results-key"),
               str(subs / "00b-full" / f"{EX}.ipynb"), str(ROOT / "README.md"), "/etc/passwd", "/etc/hostname"]
    attacks = _attacks(ok, port, outside, secrets)
    honest = list(HONEST)
    order = list(attacks) + ["edits-points", "renames-a-test", "test-made-markdown", "edited-test", "deleted-test"]
    names, followers = {}, {}
    for i, attack in enumerate(order):
        # every attacker is followed, in the batch's order, by an honest student
        kind = honest[i % len(honest)]
        names[attack], followers[attack] = f"{i:02d}a-{attack}", f"{i:02d}b-{kind}"
        submission(EX, _honest(ok, kind), subs, followers[attack])
        if attack in attacks:
            submission(EX, {**ok, **attacks[attack]}, subs, names[attack])
    p = submission(EX, ok, subs, names["edits-points"])
    _edit(p, "test_fit", meta={"points": 200})
    p = submission(EX, ok, subs, names["renames-a-test"])
    _edit(p, "test_fit", meta={"grade_id": "test_fit_mine"})
    p = submission(EX, ok, subs, names["test-made-markdown"])
    _edit(p, "test_predict", cell_type="markdown")
    p = submission(EX, {**ok, "fit": "def fit(X, y, lr, epochs):\n    return np.ones(X.shape[1]), 1.0, [1.0] * (epochs + 1)\n"},
                   subs, names["edited-test"])
    _edit(p, "test_fit", source="assert True  # looks fine to me")
    p = submission(EX, ok, subs, names["deleted-test"])
    nb = nbformat.read(p, as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_gd_step"]
    nbformat.write(nb, p)
    submission(EX, ok, subs, "=1+2")
    (subs / "symlinked.ipynb").symlink_to(p)
    (subs / "broken-json").mkdir()
    (subs / "broken-json" / f"{EX}.ipynb").write_text('{"cells": [')
    names.update({k: k for k in ("=1+2", "symlinked", "broken-json", "absent")})

    before = {p.pid for p in psutil.process_iter()}
    course = _snapshot()
    limits = LIMITS
    start = time.perf_counter()
    rows = grade(EX, subs, out, course_root=ROOT, jobs=2, limits=limits, roster=["absent"])
    seconds = time.perf_counter() - start
    time.sleep(0.5)
    left = [p for p in psutil.process_iter(["cmdline"]) if p.pid not in before and MARK in (p.info["cmdline"] or [])]
    return {"rows": {r.student: r for r in rows}, "names": names, "followers": followers, "out": out,
            "course_before": course, "course_after": _snapshot(), "outside": outside, "subs": subs,
            "accepted": accepted, "seconds": seconds, "left": left, "ok": ok}


def _snapshot() -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file of the course a submission could aim at."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for top in ("solutions", "exercises", "gdcourse")
            for p in (ROOT / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_every_student_has_one_row_with_a_known_status(cohort):
    rows = cohort["rows"]
    with open(cohort["out"] / "grades.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert len(csv_rows) == len(rows) == len(cohort["names"]) + len(cohort["followers"])
    assert all(float(r["max_score"]) == MAX and r["reason"] for r in csv_rows)
    assert "'=1+2" in [r["student"] for r in csv_rows], "a name that a spreadsheet would run as a formula"


@pytest.mark.parametrize("attack", sorted(EXPECTED))
def test_each_attack_is_defeated_with_a_clear_status(cohort, attack):
    status, score, reason = EXPECTED[attack]
    row = cohort["rows"][cohort["names"][attack]]
    assert (row.status, row.score) == (status, score), row
    assert reason in row.reason, row.reason
    assert row.max_score == MAX


def test_honest_students_right_after_each_attacker_get_their_exact_scores(cohort):
    assert len(cohort["followers"]) >= 20
    for attack, student in cohort["followers"].items():
        row = cohort["rows"][student]
        assert (row.status, row.score) == ("graded", HONEST[student.split("-", 1)[1]]), (attack, row)


def test_nothing_escaped_the_sandbox(cohort):
    assert not cohort["outside"].exists(), "a file was written outside the student's folder"
    assert cohort["course_after"] == cohort["course_before"], "a file of the course changed during grading"
    assert not cohort["accepted"], "a submission reached a server on the grading machine"
    assert not cohort["left"], f"processes outlived the batch: {cohort['left']}"
    # reads: the cell raised with the list of paths it could read, and the judge kept that message
    result = _result(cohort, cohort["names"]["reads-secrets"])
    message = result["cell_errors"]["gd_step"]
    assert "READ:[]" in message.replace(" ", ""), message


def _result(cohort, student):
    return json.loads(json.loads((cohort["out"] / "results" / f"{student}.json").read_text())["result"])


def test_a_detached_child_cannot_hold_more_than_the_memory_limit(cohort):
    """Whether the kernel kills the hoarder (the row says so) or refuses it memory, the sandbox's peak stays
    within --memory-mb (measured by its cgroup, or the grader's watch of its whole process tree)."""
    from gdcourse.grading.sandbox import cgroups_available
    student = cohort["names"]["detached-memory-hog"]
    row, result = cohort["rows"][student], _result(cohort, student)
    if cgroups_available():
        assert 0 < result["peak_mb"] <= LIMITS.memory_mb * 1.05, result["peak_mb"]
        assert (row.status == "crashed" and "1500 MB" in row.reason) or (row.status, row.score) == ("flagged", AUTO), row
    else:  # the process-tree watch stops it once it is over the limit
        assert row.status == "crashed" and "1500 MB" in row.reason, row


class _Markup(HTMLParser):
    """Every tag and attribute of a page, as a browser's parser sees them."""

    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]


def _page(cohort, attack):
    student = cohort["names"][attack]
    return (cohort["out"] / "feedback" / student / EX / f"{EX}.html").read_text()


def test_feedback_shows_no_hidden_case_and_runs_nothing(cohort):
    cases_source = (ROOT / "solutions" / EX / "cases.py").read_text()
    correct = variants_of(EX).CORRECT
    written = "\n".join([*cohort["ok"].values(), *(v for answers in correct.values() for v in answers.values())])
    hidden_lines = [l.strip() for l in cases_source.splitlines() if len(l.strip()) > 25 and l.strip() not in written]
    for student in cohort["rows"]:
        page_path = cohort["out"] / "feedback" / student / EX / f"{EX}.html"
        if not page_path.exists():
            continue
        text = html.unescape(page_path.read_text())
        assert not [l for l in hidden_lines if l in text], student
    page = _page(cohort, "xss")
    markup = _Markup()
    markup.feed(page)
    assert not {"script", "iframe", "img", "b", "object", "embed"} & set(markup.tags), markup.tags
    assert not [k for k, _ in markup.attrs if k.startswith("on")]
    assert not [v for _, v in markup.attrs if "javascript:" in v.lower()]
    assert "\x1b" not in page and "&lt;script&gt;" in page and "Content-Security-Policy" in page
    assert len(_page(cohort, "huge-output").encode()) < 1_100_000


def test_a_forged_or_altered_result_is_graded_again(cohort):
    """The stored results are authenticated: an edited score is not kept by a re-run."""
    out, student = cohort["out"], cohort["names"]["kernel-dies"]
    path = out / "results" / f"{student}.json"
    stored = json.loads(path.read_text())
    body = json.loads(stored["result"])
    body.update(status="graded", score=AUTO, grades={})
    path.write_text(json.dumps({"result": json.dumps(body, sort_keys=True), "mac": stored["mac"]}))
    follower = cohort["followers"]["kernel-dies"]
    (out / "results" / f"{follower}.json").write_text('{"result": "{}", "mac": "0"}')
    rows = {r.student: r for r in grade(EX, cohort["subs"], out, course_root=ROOT, jobs=2, limits=LIMITS,
                                        roster=["absent"])}
    assert (rows[student].status, rows[student].score) == ("crashed", 0.0)
    assert (rows[follower].status, rows[follower].score) == ("graded", cohort["rows"][follower].score)


def test_the_cohort_reports_its_speed(cohort, report_section):
    n = sum(r.status != "missing" for r in cohort["rows"].values())
    report_section("adversarial cohort", f"{n} submissions graded in {cohort['seconds']:.1f} s with 2 jobs")
    assert cohort["seconds"] < 600


def test_grading_refuses_without_a_sandbox_unless_told(monkeypatch, tmp_path):
    from gdcourse.grading import cohort as cohort_module
    from gdcourse.grading import sandbox
    monkeypatch.setattr(sandbox, "availability", lambda: (False, "bwrap failed: setting up uid map: Permission denied."))
    submission(EX, solution_answers(EX), tmp_path / "subs", "ada")
    with pytest.raises(cohort_module.SandboxUnavailable, match="--no-isolation"):
        grade(EX, tmp_path / "subs", tmp_path / "out", course_root=ROOT)
    rows = grade(EX, tmp_path / "subs", tmp_path / "out", course_root=ROOT, isolate=False)
    assert rows[0].score == AUTO and "graded without isolation" in rows[0].reason


def _cli(*args, **kw):
    return subprocess.Popen([str(Path(sys.executable).with_name("gdcourse")), "--root", str(ROOT), "grade", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


@pytest.mark.slow
def test_a_batch_killed_with_sigkill_resumes_without_losing_or_duplicating(tmp_path):
    EX = "ex01-gd-loop"  # 7 automatic points; fit's test is worth 2
    ok = solution_answers(EX)
    students = [f"s{i:02d}" for i in range(16)]
    for i, s in enumerate(students):
        submission(EX, ok if i % 2 == 0 else {k: v for k, v in ok.items() if k != "fit"}, tmp_path / "subs", s)
    out = tmp_path / "out"
    proc = _cli(EX, str(tmp_path / "subs"), "--out", str(out), "--jobs", "1", "--quiet")
    deadline = time.time() + 300
    while len(list((out / "results").glob("*.json"))) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, "the batch finished before it could be killed: grade more students"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = sorted(p.stem for p in (out / "results").glob("*.json"))
    assert 2 <= len(first) < len(students) and not (out / "grades.csv").exists()

    again = _cli(EX, str(tmp_path / "subs"), "--out", str(out), "--jobs", "2", "--quiet")
    log = again.communicate(timeout=600)[0]
    assert again.returncode == 0, log[-2000:]
    assert "16 students: 16 graded" in log
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["student"] for r in rows] == students
    assert [float(r["score"]) for r in rows] == [7.0, 5.0] * 8
    kept = {s: json.loads((out / "results" / f"{s}.json").read_text()) for s in first}

    third = _cli(EX, str(tmp_path / "subs"), "--out", str(out), "--quiet")  # nothing left to do
    log3 = third.communicate(timeout=300)[0]
    assert third.returncode == 0 and "16 students: 16 graded" in log3
    with open(out / "grades.csv", newline="") as f:
        assert list(csv.DictReader(f)) == rows
    assert all(json.loads((out / "results" / f"{s}.json").read_text()) == kept[s] for s in first)


def test_instructor_guide_states_the_real_defaults():
    """The guide's option table is checked against the code, so it cannot drift."""
    from gdcourse import cli
    from gdcourse.grading import STATUSES
    guide = (ROOT / "book" / "instructors.md").read_text()
    limits = Limits()
    assert f"| `--cell-timeout` | {limits.cell_seconds} s |" in guide
    assert f"| `--notebook-timeout` | {limits.notebook_seconds} s |" in guide
    assert f"| `--memory-mb` | {limits.memory_mb} MB |" in guide
    for status in STATUSES:
        assert f"| `{status}` |" in guide, status
    ns = cli.build_parser().parse_args(["grade", "ex01-gd-loop", "subs"])
    assert (ns.cell_timeout, ns.notebook_timeout, ns.memory_mb) == (limits.cell_seconds, limits.notebook_seconds, limits.memory_mb)


def test_a_stored_result_is_kept_only_if_authentic(tmp_path):
    from gdcourse.grading import cohort
    key = cohort._key(tmp_path)
    assert (tmp_path / ".results-key").stat().st_mode & 0o077 == 0
    path = tmp_path / "r.json"
    verdict = Verdict.from_json({"status": "graded", "score": 1.0, "grades": {"test_a": [1.0, 1.0, False]},
                                 "cases": [{"test": "test_a", "name": "a", "visible": True, "passed": True,
                                            "message": "", "points": 1.0}], "answers": [["a", "def a(): pass"]]})
    cohort._write_result(path, verdict, key)
    assert cohort._read_result(path, key) == verdict  # what is read back is what was judged, types and all
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "result": stored["result"].replace("1.0", "9.0")}))
    assert cohort._read_result(path, key) is None
    assert cohort._read_result(path, b"another key") is None
