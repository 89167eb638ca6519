"""An instructor's whole term on ex01, through the commands of the instructor guide.

LMS downloads of each kind, with awkward names, are graded against the LMS's own
roster files; written answers are graded by hand in nbgrader's formgrader (in a
real browser, and through nbgrader's gradebook API as formgrader does); then the
final grades, both LMS files and the feedback pages are checked field by field.
Every command runs from the course checkout, which must stay clean, and the
guide must hold exactly these commands (``GUIDE_COMMANDS``).
"""

from __future__ import annotations

import csv
import html
import os
import re
import socket
import subprocess
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from submissions import solution_answers, submission

ROOT = Path(__file__).resolve().parent.parent
EX = "ex01-gd-loop"
GDC = ".venv/bin/gdcourse"
MATH_ANSWER = "It diverges once $\\eta > 2/L$: each step overshoots, and $$|1 - \\eta L| > 1$$ grows the error."
COMMENT = "Right: name the curvature L explicitly next time."

# The term, as the guide shows it (HOME is a fresh folder; ~ is it). Each line runs in the checkout.
GUIDE_COMMANDS = [
    f"{GDC} grade {EX} ~/term/moodle-ex01.zip --roster ~/term/moodle-worksheet.csv --due 2026-10-01T23:59 --out ~/term/ex01",
    f"{GDC} formgrader ~/term/ex01",
    f"{GDC} grades ~/term/ex01",
    f"{GDC} feedback ~/term/ex01",
    f"{GDC} grade {EX} ~/term/canvas-ex01.zip --roster ~/term/canvas-gradebook.csv --due 2026-10-01T23:59 "
    f"--canvas-column 'Exercise 1 (4321)' --out ~/term/ex01-canvas",
    f"{GDC} grade {EX} ~/term/blackboard-ex01.zip --roster ~/term/students.csv --out ~/term/ex01-blackboard",
]

WORKSHEET = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed",
             "Last modified (submission)", "Last modified (grade)", "Feedback comments"]


def _code_only() -> dict:
    return {k: v for k, v in solution_answers(EX).items() if k != "why_diverge"}


def _nb(answers: dict, tmp: Path, name: str) -> bytes:
    return submission(EX, answers, tmp / "made", name).read_bytes()


def _zip(path: Path, entries: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(zipfile.ZipInfo(name, (2026, 10, 3, 9, 0, 0)), data)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    tmp = tmp_path_factory.mktemp("made")
    t = home / "term"
    t.mkdir()
    ok = _code_only()  # every function right, the written answer left as released
    full = {**ok, "why_diverge": MATH_ANSWER}
    no_fit = {k: v for k, v in full.items() if k != "fit"}
    # Moodle: folders of Moodle >= 4.1 and before, a flat file, a space, an apostrophe Moodle removed, CJK,
    # a PDF instead of a notebook, and someone the worksheet does not list
    _zip(t / "moodle-ex01.zip", {
        f"Erin Moodle_7788_assignsubmission_file/{EX}.ipynb": _nb(full, tmp, "erin"),
        f"Sean OBrien_7789_assignsubmission_file_/{EX}.ipynb": _nb(no_fit, tmp, "sean"),
        f"王小明_7790_assignsubmission_file_{EX}.ipynb": _nb(ok, tmp, "wang"),
        "Pat Pdf_7791_assignsubmission_file/report.pdf": b"%PDF-1.4",
        f"Stray Student_7799_assignsubmission_file/{EX}.ipynb": _nb(ok, tmp, "stray"),
        "notes.txt": b"whose is this?",
    })
    modified = "Thursday, 1 October 2026, 11:00 PM"
    late = "Friday, 2 October 2026, 8:15 AM"
    rows = [("7788", "Erin Moodle", "erin@uni.edu", modified), ("7789", "Seán O'Brien", "sean@uni.edu", late),
            ("7790", "王小明", "wang@uni.edu", modified), ("7791", "Pat Pdf", "pat@uni.edu", modified),
            ("7792", "Ngozi Absent", "ngozi@uni.edu", "-")]
    with open(t / "moodle-worksheet.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(WORKSHEET)
        for pid, name, email, when in rows:
            w.writerow([f"Participant {pid}", name, email, "Submitted for grading", "", "9.00", "Yes", when, "-", ""])
    # Canvas: last+first run together, a LATE marker, a resubmission's -1, a gradebook export as the roster
    _zip(t / "canvas-ex01.zip", {
        f"lovelaceada_1001_9001_{EX}-1.ipynb": _nb(full, tmp, "ada"),
        f"müllerzoë_LATE_1002_9002_{EX}.ipynb": _nb(no_fit, tmp, "zoe"),
    })
    (t / "canvas-gradebook.csv").write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Exercise 1 (4321)\n"
        "    Points Possible,,,,,9.00\n"
        "\"Lovelace, Ada\",1001,S1,alovelace,ML 101,\n"
        "\"Müller, Zoë\",1002,S2,zmuller,ML 101,\n"
        "\"Turing, Alan\",1003,S3,aturing,ML 101,\n", encoding="utf-8")
    # Blackboard: two attempts of one student, the name in the attempt's .txt
    a = "Exercise_1 GD loop"
    _zip(t / "blackboard-ex01.zip", {
        f"{a}_jdoe_attempt_2026-09-30-10-00-00_{EX}.ipynb": _nb(no_fit, tmp, "jdoe1"),
        f"{a}_jdoe_attempt_2026-10-01-22-00-00_{EX}.ipynb": _nb(ok, tmp, "jdoe2"),
        f"{a}_jdoe_attempt_2026-10-01-22-00-00.txt": b"Name: Jane Doe (jdoe)\nAssignment: Exercise 1\n",
    })
    (t / "students.csv").write_text("student,name,username\njane,Jane Doe,jdoe\nkim,Kim Lee,klee\n")
    return {"home": home, "term": t}


def _run(term, command: str, **kw) -> subprocess.CompletedProcess | subprocess.Popen:
    """A guide command as an instructor runs it: from the checkout, ~ their home, the venv not activated."""
    env = {**os.environ, "HOME": str(term["home"]), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    args = ["bash", "-c", command]
    if kw.pop("background", False):
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (command, proc.stdout[-2000:], proc.stderr[-3000:])
    return proc


def _repo_state() -> str:
    ignored_ok = (".venv/", "_build/", ".pytest_cache/", "gdcourse.egg-info/")
    lines = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=ROOT, capture_output=True,
                           text=True).stdout.splitlines()
    return "\n".join(l for l in lines if not (l.startswith("!! ") and (l[3:] in ignored_ok or "__pycache__" in l)))


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def moodle(term):
    """Grade the Moodle cohort, hand-grade in formgrader (browser and API), then final grades and feedback."""
    before = _repo_state()
    log = _run(term, GUIDE_COMMANDS[0]).stdout
    assert _repo_state() == before, "grade wrote into the checkout"
    out = term["term"] / "ex01"
    first = {r["student"]: r for r in _csv(out / "grades.csv")}
    port = _free_port()
    server = _run(term, GUIDE_COMMANDS[1] + f" --no-browser --port {port} --token term-token", background=True)
    try:
        seen = _formgrader_in_a_browser(port, out)
    finally:
        os.kill(server.pid, 15)  # the instructor stops the command (bash execs it): the server goes with it
        server.wait(timeout=60)
    with pytest.raises(OSError):  # nothing is left serving
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=3)
    assert _repo_state() == before, "formgrader wrote into the checkout"
    # the second hand grade through nbgrader's gradebook API, as formgrader's grade handler does
    _set_by_hand(out, "wang", "why_diverge", 0.0, "The answer cell is empty.")
    grades_log = _run(term, GUIDE_COMMANDS[2]).stdout
    _run(term, GUIDE_COMMANDS[3])
    assert _repo_state() == before, "grades or feedback wrote into the checkout"
    return {"out": out, "log": log, "first": first, "seen": seen, "grades_log": grades_log,
            "rows": {r["student"]: r for r in _csv(out / "grades.csv")}}


def _formgrader_in_a_browser(port: int, out: Path) -> dict:
    from playwright.sync_api import sync_playwright

    from site_browser import CHROMIUM_FLAGS, find_chromium
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(
                    f"{base}/api/status", headers={"Authorization": "token term-token"}), timeout=2):
                break
        except OSError:
            assert time.time() < deadline, "formgrader did not start"
            time.sleep(0.3)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}", course_id="gdcourse") as gb:
        erin = gb.find_submission_notebook(EX, EX, "erin").id
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=["--headless", *CHROMIUM_FLAGS])
        page = browser.new_page()
        page.goto(f"{base}/formgrader?token=term-token")
        page.goto(f"{base}/formgrader/manage_submissions/{EX}")
        page.wait_for_selector("#main-table td.student-id:text-is('erin')", timeout=30_000)
        listed = page.locator("#main-table td.student-id").all_inner_texts()
        # the instructor grades Erin's written answer and leaves a comment, as in the UI
        page.goto(f"{base}/formgrader/submissions/{erin}/", wait_until="domcontentloaded")
        page.wait_for_selector("input.score#why_diverge", timeout=30_000)
        # The inputs are in the page's HTML, but save only once formgrader has fetched the grades and
        # comments and bound its views to them: typing before that sends nothing (seen on a busy machine).
        page.wait_for_function("() => window.formgrader && formgrader.grades && formgrader.grades.loaded"
                               " && formgrader.comments && formgrader.comments.loaded", timeout=60_000)
        with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"):
            page.fill("input.score#why_diverge", "1.5")
            page.keyboard.press("Tab")
        with page.expect_response(lambda r: "/formgrader/api/comment/" in r.url and r.request.method == "PUT"):
            page.fill("textarea#why_diverge-comment", COMMENT)
            page.keyboard.press("Tab")
        browser.close()
    return {"listed": sorted(t.strip() for t in listed)}


def _set_by_hand(out: Path, student: str, cell: str, score: float, comment: str) -> None:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}", course_id="gdcourse") as gb:
        g = gb.find_grade(cell, EX, EX, student)
        g.manual_score, g.extra_credit = score, None
        g.needs_manual_grade = g.manual_score is None and g.auto_score is None
        gb.find_comment(cell, EX, EX, student).manual_comment = comment
        gb.db.commit()


def test_every_moodle_student_has_a_row_and_nothing_is_dropped(moodle):
    rows = moodle["first"]
    # the worksheet's five participants, and the stray upload beside them
    assert sorted(rows) == ["erin", "ngozi", "pat", "sean", "stray-student-7799", "wang"]
    assert rows["ngozi"]["status"] == "missing"
    assert rows["pat"]["status"] == "invalid notebook" and "report.pdf" in rows["pat"]["reason"]
    assert "not on the roster" in rows["stray-student-7799"]["reason"]
    warnings = (moodle["out"] / "warnings.txt").read_text()
    assert "notes.txt" in warnings and "7799" in warnings and "7799" in moodle["log"]


def test_before_hand_grading_written_points_are_pending_never_a_silent_zero(moodle):
    erin, wang = moodle["first"]["erin"], moodle["first"]["wang"]
    assert (erin["score"], erin["pending"], erin["status"]) == ("7.0", "2.0", "graded")
    assert "2 point(s) await manual grading (why_diverge)" in erin["reason"]
    assert wang["pending"] == "0.0" and "written answer left empty: why_diverge" in wang["reason"]


def test_formgrader_lists_the_cohort_in_a_browser(moodle):
    assert moodle["seen"]["listed"] == ["erin", "sean", "stray-student-7799", "wang"]


def test_final_grades_merge_hand_grades_lateness_and_uploads(moodle):
    rows = moodle["rows"]
    erin, sean, wang = rows["erin"], rows["sean"], rows["wang"]
    assert (erin["score"], erin["auto_score"], erin["manual_score"], erin["pending"]) == ("8.5", "7.0", "1.5", "0.0")
    assert "await manual grading" not in erin["reason"]
    # Sean's written answer is not graded yet: it stays pending, and the score says only what is known
    assert (sean["score"], sean["pending"]) == ("5.0", "2.0") and "await manual grading" in sean["reason"]
    assert (wang["score"], wang["manual_score"]) == ("7.0", "0.0")
    # lateness from the worksheet's upload times against --due (the archive's own times are the download's)
    assert (erin["late"], erin["hours_late"]) == ("no", "0.0")
    assert sean["late"] == "yes" and float(sean["hours_late"]) == pytest.approx(8.27, abs=0.01)
    assert (erin["uploads"], erin["lms"], erin["lms_id"], erin["name"]) == ("1", "moodle", "7788", "Erin Moodle")
    assert rows["wang"]["name"] == "王小明"
    assert "1 student(s) have written answers to grade by hand" in moodle["grades_log"]


def test_moodle_worksheet_is_the_downloaded_one_filled_in(moodle):
    sheet = _csv(moodle["out"] / "lms" / "moodle.csv")
    with open(moodle["out"] / "lms" / "moodle.csv", encoding="utf-8") as f:
        assert f.readline().strip() == ",".join(WORKSHEET)
    by_id = {r["Identifier"]: r for r in sheet}
    assert list(by_id) == [f"Participant {n}" for n in (7788, 7792, 7791, 7789, 7799, 7790)]
    assert by_id["Participant 7788"]["Grade"] == "8.50" and by_id["Participant 7788"]["Full name"] == "Erin Moodle"
    assert by_id["Participant 7788"]["Last modified (submission)"] == "Thursday, 1 October 2026, 11:00 PM"
    assert by_id["Participant 7789"]["Grade"] == "", "a grade with points still to grade by hand is left blank"
    assert by_id["Participant 7792"]["Grade"] == "0.00" and "missing" in by_id["Participant 7792"]["Feedback comments"]
    assert by_id["Participant 7790"]["Grade"] == "7.00" and by_id["Participant 7799"]["Maximum Grade"] == "9.00"
    assert all(len(r) == len(WORKSHEET) for r in sheet)


def test_feedback_pages_carry_the_hand_grade_and_comment_and_no_hidden_case(moodle):
    page = (moodle["out"] / "feedback" / "erin" / EX / f"{EX}.html").read_text()
    assert html.escape(COMMENT) in page or COMMENT in page
    assert "Graded by hand: <strong>1.5 / 2</strong>" in page
    assert "<math" in page and "$\\eta" not in page, "math is drawn as MathML, not left as TeX"
    assert "<script" not in page and "default-src 'none'" in page
    sean = (moodle["out"] / "feedback" / "sean" / EX / f"{EX}.html").read_text()
    assert "not graded yet" in sean
    cases_source = (ROOT / "solutions" / EX / "cases.py").read_text()
    written = "\n".join(solution_answers(EX).values())
    hidden = [l.strip() for l in cases_source.splitlines() if len(l.strip()) > 25 and l.strip() not in written]
    for path in (moodle["out"] / "feedback").rglob("*.html"):
        text = html.unescape(path.read_text())
        assert not [l for l in hidden if l in text], path


def test_hand_grades_survive_regrading_and_a_changed_answer_is_queued_again(moodle, term, tmp_path):
    out = moodle["out"]
    archive = term["term"] / "moodle-ex01.zip"
    with zipfile.ZipFile(archive) as z:
        entries = {i.filename: z.read(i) for i in z.infolist()}
    ok = _code_only()
    entries[f"Ngozi Absent_7792_assignsubmission_file/{EX}.ipynb"] = _nb(ok, tmp_path, "ngozi")  # a late hand-in
    entries[f"王小明_7790_assignsubmission_file_{EX}.ipynb"] = _nb({**ok, "why_diverge": "Now I wrote it."},
                                                                    tmp_path, "wang2")
    regrade = tmp_path / "moodle-again.zip"
    _zip(regrade, entries)
    _run(term, GUIDE_COMMANDS[0].replace("~/term/moodle-ex01.zip", str(regrade)))
    rows = {r["student"]: r for r in _csv(out / "grades.csv")}
    assert (rows["erin"]["score"], rows["erin"]["manual_score"]) == ("8.5", "1.5"), "a hand grade was lost"
    assert rows["ngozi"]["status"] == "graded"
    assert rows["wang"]["pending"] == "2.0", "a written answer changed since it was hand-graded must be graded again"


def test_canvas_cohort_and_its_gradebook_import_file(term):
    _run(term, GUIDE_COMMANDS[4])
    out = term["term"] / "ex01-canvas"
    rows = {r["student"]: r for r in _csv(out / "grades.csv")}
    assert sorted(rows) == ["alovelace", "aturing", "zmuller"]
    assert rows["zmuller"]["late"] == "yes" and rows["aturing"]["status"] == "missing"
    assert rows["alovelace"]["reason"].endswith("(why_diverge)") and rows["alovelace"]["uploads"] == "1"
    with open(out / "lms" / "canvas.csv", newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Exercise 1 (4321)"]
    assert table[1][0] == "Points Possible" and table[1][-1] == "9"
    body = {r[1]: r for r in table[2:]}
    assert body["1001"] == ["Lovelace, Ada", "1001", "S1", "alovelace", "ML 101", ""]  # written answer pending
    assert body["1003"] == ["Turing, Alan", "1003", "S3", "aturing", "ML 101", "0.00"]
    assert body["1002"][-1] == "", "Zoë's written answer is pending too"


def test_blackboard_attempts_newest_graded_and_counted(term):
    _run(term, GUIDE_COMMANDS[5])
    rows = {r["student"]: r for r in _csv(term["term"] / "ex01-blackboard" / "grades.csv")}
    assert sorted(rows) == ["jane", "kim"]
    assert (rows["jane"]["uploads"], rows["jane"]["score"], rows["jane"]["name"]) == ("2", "7.0", "Jane Doe")
    assert rows["jane"]["uploaded"].startswith("2026-10-01T22:00:00")
    assert "2 notebooks handed in" in rows["jane"]["reason"] and rows["kim"]["status"] == "missing"


def test_the_guide_shows_exactly_the_commands_this_test_runs():
    guide = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", guide, re.S)
    shown = [line.split(" #")[0].strip() for block in blocks for line in block.splitlines()
             if line.strip().startswith((GDC, ".venv/bin/nbgrader"))]
    from test_exchange import EXCHANGE_COMMANDS
    for command in GUIDE_COMMANDS + EXCHANGE_COMMANDS:
        assert command in shown, f"the guide does not show: {command}"
    assert [c for c in shown if c not in GUIDE_COMMANDS + EXCHANGE_COMMANDS] == [], "a guide command no test runs"
