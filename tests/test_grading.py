"""`gdcourse grade` on a small cohort, through the command line an instructor uses."""

import csv
import subprocess
import sys
from pathlib import Path

from submissions import solution_answers, submission

ROOT = Path(__file__).resolve().parent.parent
EX01 = "ex01-gd-loop"


def test_three_student_cohort_yields_the_expected_csv(tmp_path):
    cohort = tmp_path / "submissions"
    answers = solution_answers(EX01)
    submission(EX01, answers, cohort, "ada")                          # complete
    partial = {k: v for k, v in answers.items() if k in ("predict", "mse_loss")}
    submission(EX01, partial, cohort, "grace")                        # two functions done
    (cohort / "linus").mkdir()                                        # handed in nothing
    out = tmp_path / "graded"
    gdcourse = Path(sys.executable).with_name("gdcourse")
    proc = subprocess.run([str(gdcourse), "--root", str(ROOT), "grade", EX01, str(cohort), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "3 students: 2 graded, 1 not" in proc.stdout

    with open(out / "grades.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert list(rows) == ["ada", "grace", "linus"]
    from gdcourse.grading.grades import CSV_FIELDS
    assert tuple(next(iter(rows.values()))) == CSV_FIELDS
    assert (rows["ada"]["score"], rows["ada"]["max_score"], rows["ada"]["status"]) == ("7.0", "9.0", "graded")
    assert (rows["ada"]["auto_score"], rows["ada"]["manual_score"], rows["ada"]["pending"]) == ("7.0", "0.0", "2.0")
    assert rows["ada"]["reason"] == "2 point(s) await manual grading (why_diverge)"
    assert rows["ada"]["uploads"] == "1" and rows["ada"]["uploaded"][:4].isdigit()
    # grace: predict (1) and mse_loss (1) pass; the tests of unwritten functions fail
    assert (rows["grace"]["score"], rows["grace"]["status"]) == ("2.0", "graded")
    assert "test_gradients" in rows["grace"]["reason"] and "test_predict" not in rows["grace"]["reason"]
    # grace's written answer is the release's stub: 0, said so, and nothing waits for the instructor
    assert "written answer left empty: why_diverge" in rows["grace"]["reason"] and rows["grace"]["pending"] == "0.0"
    assert (rows["linus"]["score"], rows["linus"]["max_score"], rows["linus"]["status"]) == ("0.0", "9.0", "missing")
    assert rows["linus"]["reason"] == "the student's folder is empty"

    for student in ("ada", "grace"):
        html = out / "feedback" / student / EX01 / f"{EX01}.html"
        assert html.is_file() and "test_predict" in html.read_text()
    assert (out / "gradebook.db").is_file()
    assert not (ROOT / "submitted").exists() and not (ROOT / "gradebook.db").exists(), "grading state leaked into the repo"


def test_unreadable_or_misplaced_submissions_get_a_row_not_a_crash(tmp_path):
    from gdcourse.grading import grade

    cohort = tmp_path / "subs"
    (cohort / "broken").mkdir(parents=True)
    (cohort / "broken" / f"{EX01}.ipynb").write_text("{ this is not json")
    (cohort / "two-notebooks").mkdir()
    for name in ("a.ipynb", "b.ipynb"):
        (cohort / "two-notebooks" / name).write_text("{}")
    rows = {r.student: r for r in grade(EX01, cohort, tmp_path / "out", course_root=ROOT)}
    assert rows["broken"].status == "invalid notebook" and "JSON" in rows["broken"].reason
    # two notebooks: the newest is graded (here neither is a notebook), and the row says there were two
    assert rows["two-notebooks"].status == "invalid notebook" and "2 notebooks handed in" in rows["two-notebooks"].reason
