"""An adversarial cohort, graded for real: every student gets the right status
and reason, honest scores are exact, hidden tests stay hidden, and the batch
finishes. Then a batch killed with SIGKILL resumes without losing or
duplicating a grade."""

import csv
import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from gdcourse.grading import Limits, grade
from gdcourse.grading.intake import collect, read_roster
from gdcourse.grading.sandbox import isolation_available
from submissions import release, solution_answers, submission

ROOT = Path(__file__).resolve().parent.parent
EX = "ex07-stable-softmax"  # NumPy only (fast), and its hidden tests guard the library's reference
AUTO = 6.0  # automatic points (2 more are graded by hand)
MAX = 8.0


def _edit(path, grade_id, source=None, delete=False):
    nb = nbformat.read(path, as_version=4)
    cells = []
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            if delete:
                continue
            c.source = source
        cells.append(c)
    nb.cells = cells
    nbformat.write(nb, path)


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


@pytest.fixture(scope="module")
def cohort(tmp_path_factory, listener):
    port, accepted = listener
    base = tmp_path_factory.mktemp("adversarial")
    subs, outside = base / "subs", base / "outside.txt"
    ok = solution_answers(EX)
    def last_cell_first(prefix):  # a full solution whose last answer cell first runs `prefix`
        return {**ok, "fp16_second_moment": prefix + "\n" + ok["fp16_second_moment"]}

    submission(EX, ok, subs, "correct")
    submission(EX, {k: v for k, v in ok.items() if k in ("logsumexp", "softmax")}, subs, "partial")
    submission(EX, {}, subs, "blank")
    submission(EX, {**ok, "softmax": "while True:\n    pass"}, subs, "endless-loop")
    submission(EX, {**ok, "softmax": "import os\nos._exit(1)"}, subs, "kernel-dies")
    submission(EX, last_cell_first("hog = []\nwhile True:\n    hog.append(bytearray(50 * 2**20))"), subs, "memory-bomb")
    (subs / "broken-json").mkdir()
    (subs / "broken-json" / f"{EX}.ipynb").write_text('{"cells": [')
    p = submission(EX, ok, subs, "deleted-test")
    _edit(p, "test_softmax", delete=True)
    naive = "def softmax(z):\n    e = np.exp(z)\n    return e / np.sum(e, axis=-1, keepdims=True)\n"
    p = submission(EX, {**ok, "softmax": naive}, subs, "edited-test")
    _edit(p, "test_softmax", "assert True  # looks fine to me")
    submission(EX, last_cell_first("print('x' * 100_000_000)"), subs, "huge-output")
    submission(EX, last_cell_first(f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                                   "    print('NETWORK: connected')\nexcept OSError as e:\n    print('NETWORK: blocked', e)"),
               subs, "network")
    submission(EX, last_cell_first(f"try:\n    open({str(outside)!r}, 'w').write('pwned')\n    print('WRITE: done')\n"
                                   "except OSError as e:\n    print('WRITE: refused', e)"), subs, "writes-outside")
    submission(EX, {**ok, "softmax": "from gdcourse.precision import format_table  # imported, never called\n"
                    + ok["softmax"]}, subs, "honest-import")
    submission(EX, {**ok, "cross_entropy": "from gdcourse.precision import cross_entropy_from_logits\n"
                    "def cross_entropy(logits, labels):\n    return cross_entropy_from_logits(logits, labels)\n"},
               subs, "calls-reference")
    # one shift for the whole batch: passes the visible test, fails the hidden rows-on-different-levels case
    one_shift = ("def logsumexp(z):\n    z = np.asarray(z, dtype=float)\n    m = np.max(z)\n"
                 "    return np.log(np.sum(np.exp(z - m), axis=-1)) + m\n")
    submission(EX, {**ok, "logsumexp": one_shift}, subs, "fails-hidden")

    limits = Limits(cell_seconds=60, notebook_seconds=45, memory_mb=1500)
    out = base / "out"
    start = time.perf_counter()
    rows = grade(EX, subs, out, course_root=ROOT, jobs=2, limits=limits, roster=["correct", "absent"],
                 progress=lambda _: None)
    return {"rows": {r.student: r for r in rows}, "out": out, "outside": outside, "accepted": accepted,
            "seconds": time.perf_counter() - start}


def test_every_student_has_one_row_with_a_known_status(cohort):
    rows = cohort["rows"]
    assert len(rows) == 16
    with open(cohort["out"] / "grades.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert [r["student"] for r in csv_rows] == sorted(rows)
    assert all(float(r["max_score"]) == MAX and r["reason"] for r in csv_rows)


@pytest.mark.parametrize("student, status, score, reason", [
    ("correct", "graded", AUTO, "await manual grading"),
    ("partial", "graded", 3.0, "test_cross_entropy"),
    ("blank", "graded", 0.0, "test_logsumexp"),
    ("absent", "missing", 0.0, "on the roster"),
    ("endless-loop", "timed out", 0.0, "45 s"),
    ("kernel-dies", "crashed", 0.0, "kernel died"),
    ("memory-bomb", "crashed", 0.0, "1500 MB"),
    ("broken-json", "invalid notebook", 0.0, "JSON"),
    ("deleted-test", "tampered", AUTO, "test_softmax (deleted)"),
    ("edited-test", "tampered", AUTO - 1, "test_softmax (edited)"),  # graded on the real test
    ("huge-output", "graded", AUTO, "await manual grading"),
    ("network", "graded", AUTO, "await manual grading"),
    ("writes-outside", "graded", AUTO, "await manual grading"),
    ("honest-import", "graded", AUTO, "await manual grading"),
    ("calls-reference", "flagged", AUTO - 2, "reference implementation in test_cross_entropy"),
    ("fails-hidden", "graded", AUTO - 4, "test_logsumexp"),  # and cross_entropy, which calls it
])
def test_status_score_and_reason(cohort, student, status, score, reason):
    row = cohort["rows"][student]
    assert (row.status, row.score) == (status, score), row
    assert reason in row.reason, row.reason
    assert row.max_score == MAX


def _output(out, student):
    nb = nbformat.read(out / "autograded" / student / EX / f"{EX}.ipynb", as_version=4)
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


@pytest.mark.skipif(not isolation_available(), reason="this OS refuses unprivileged namespaces")
def test_the_sandbox_blocked_the_network_and_the_write(cohort):
    assert "NETWORK: blocked" in _output(cohort["out"], "network") and not cohort["accepted"]
    assert "WRITE: refused" in _output(cohort["out"], "writes-outside")
    assert not cohort["outside"].exists()


def test_feedback_shows_visible_tests_and_hides_hidden_ones(cohort):
    source = nbformat.read(ROOT / "solutions" / EX / f"{EX}.ipynb", as_version=4)
    answers = "\n".join(solution_answers(EX).values())
    hidden = [l.strip() for c in source.cells if "BEGIN HIDDEN TESTS" in c.source
              for l in c.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0].splitlines()
              if len(l.strip()) > 12 and l.strip() not in answers]
    assert hidden
    page = html.unescape(re.sub(r"<[^>]+>", "", (cohort["out"] / "feedback" / "fails-hidden" / EX / f"{EX}.html").read_text()))
    assert "test_logsumexp" in page and "hidden test" in page
    leaked = [l for l in hidden if l in page]
    assert not leaked, leaked[:3]
    big = cohort["out"] / "feedback" / "huge-output" / EX / f"{EX}.html"
    assert big.stat().st_size < 2_000_000 and "output truncated" in big.read_text()


def test_gradebook_holds_each_graded_student_once(cohort):
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{cohort['out'] / 'gradebook.db'}") as gb:
        subs = {s.student.id: s.score for s in gb.assignment_submissions(EX)}
    graded = {s: r.score for s, r in cohort["rows"].items() if r.status in ("graded", "tampered", "flagged")}
    assert subs == pytest.approx(graded)


def _cli(*args, **kw):
    return subprocess.Popen([str(Path(sys.executable).with_name("gdcourse")), "--root", str(ROOT), "grade", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def test_a_batch_killed_with_sigkill_resumes_without_losing_or_duplicating(tmp_path):
    EX = "ex01-gd-loop"  # 7 automatic points; fit's test is worth 2
    ok = solution_answers(EX)
    students = [f"s{i}" for i in range(6)]
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
    assert "6 students: 6 graded" in log
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["student"] for r in rows] == students
    assert [float(r["score"]) for r in rows] == [7.0, 5.0] * 3
    kept = {s: json.loads((out / "results" / f"{s}.json").read_text()) for s in first}

    third = _cli(EX, str(tmp_path / "subs"), "--out", str(out), "--quiet")  # nothing left to do
    log3 = third.communicate(timeout=300)[0]
    assert third.returncode == 0 and "6 students: 6 graded" in log3
    with open(out / "grades.csv", newline="") as f:
        assert list(csv.DictReader(f)) == rows
    assert all(json.loads((out / "results" / f"{s}.json").read_text()) == kept[s] for s in first)


def test_lms_zip_intake_takes_the_newest_attempt(tmp_path):
    nb = (ROOT / "exercises" / EX / f"{EX}.ipynb").read_bytes()
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(zipfile.ZipInfo(f"ada_1001_55_{EX}.ipynb", (2026, 3, 1, 10, 0, 0)), b'{"old": 1}')
        z.writestr(zipfile.ZipInfo(f"ada_LATE_1001_56_{EX}.ipynb", (2026, 3, 2, 9, 0, 0)), nb)
        z.writestr(zipfile.ZipInfo(f"grace_1002_57_{EX}.ipynb", (2026, 3, 1, 11, 0, 0)), nb)
        z.writestr(zipfile.ZipInfo(f"linus/{EX}.ipynb", (2026, 3, 1, 12, 0, 0)), nb)
        z.writestr(zipfile.ZipInfo("__MACOSX/._ada_1001_55.ipynb", (2026, 3, 1, 12, 0, 0)), b"junk")
        z.writestr(zipfile.ZipInfo("../../evil_1_2_x.ipynb", (2026, 3, 1, 12, 0, 0)), nb)
    found = collect(archive, EX, work=tmp_path / "work")
    assert sorted(found) == ["ada", "evil", "grace", "linus"]
    assert found["ada"].notebook.read_bytes() == nb and "2 files" in found["ada"].problem
    assert found["ada"].timestamp == "2026-03-02T09:00:00"
    assert all(tmp_path / "work" in s.notebook.parents for s in found.values())  # nothing written outside


def test_roster_formats(tmp_path):
    (tmp_path / "a.txt").write_text("ada\ngrace\n\nada\n")
    (tmp_path / "b.csv").write_text("name,student,email\nAda,ada,a@x\nGrace,grace,g@x\n")
    assert read_roster(tmp_path / "a.txt") == read_roster(tmp_path / "b.csv") == ["ada", "grace"]
    (tmp_path / "c.txt").write_text("ada\n../etc\n")
    with pytest.raises(ValueError, match="not valid"):
        read_roster(tmp_path / "c.txt")


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
