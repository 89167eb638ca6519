"""Exercises are trustworthy: the committed release is what nbgrader makes of
solutions/, and grading through nbgrader gives the solution full marks, the
untouched release zero, plausible wrong answers less, and correct alternatives
full marks."""

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from ex01_variants import CORRECT, WRONG
from submissions import release, solution_answers, submission

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_is_current(assignment, tmp_path):
    nbgrader = Path(sys.executable).with_name("nbgrader")
    subprocess.run([str(nbgrader), "generate_assignment", assignment, "--force", "--no-db", "--log-level=ERROR",
                    f"--CourseDirectory.release_directory={tmp_path}"], cwd=ROOT, check=True)
    fresh, committed = tmp_path / assignment, ROOT / "exercises" / assignment
    cmp = filecmp.dircmp(fresh, committed)
    assert not (cmp.left_only or cmp.right_only), f"files differ: {cmp.left_only} vs {cmp.right_only}; run `make exercises`"
    for name in cmp.common_files:
        assert (fresh / name).read_bytes() == (committed / name).read_bytes(), f"{assignment}/{name} is stale: run `make exercises`"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_holds_no_solutions_or_hidden_tests(assignment):
    text = (ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "_reference_fit"):
        assert marker not in text


def test_every_graded_cell_has_points_and_a_unique_id():
    for assignment in ASSIGNMENTS:
        nb = release(assignment)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
        assert len(ids) == len(set(ids))
        for c in nb.cells:
            meta = c.metadata.get("nbgrader", {})
            if meta.get("grade"):
                assert meta.get("points", 0) > 0 and meta["schema_version"] == 3
        assert any(c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade") for c in nb.cells), \
            "every exercise has at least one written answer graded by hand"


# --- ex01 graded through nbgrader -----------------------------------------

EX01 = "ex01-gd-loop"


@pytest.fixture(scope="module")
def ex01_grades(tmp_path_factory):
    """One cohort holding every variant, graded once by `gdcourse grade`."""
    from gdcourse.grading import grade

    cohort = tmp_path_factory.mktemp("ex01-cohort")
    reference = solution_answers(EX01)
    submission(EX01, reference, cohort, "solution")
    submission(EX01, {}, cohort, "untouched")
    for name, (_, answers) in WRONG.items():
        submission(EX01, {**reference, **answers}, cohort, f"wrong-{name}")
    for name, answers in CORRECT.items():
        submission(EX01, answers, cohort, f"correct-{name}")
    rows = grade(EX01, cohort, tmp_path_factory.mktemp("ex01-graded"), course_root=ROOT, progress=lambda _: None)
    return {r.student: r for r in rows}


def _auto_max(row):
    return row.max_score - 2  # the written answer (2 points) is graded by hand


def test_solution_gets_every_automatic_point(ex01_grades):
    row = ex01_grades["solution"]
    assert row.status == "graded" and row.max_score == 9
    assert row.score == _auto_max(row), row.reason
    assert "await manual grading" in row.reason


def test_untouched_release_scores_zero(ex01_grades):
    row = ex01_grades["untouched"]
    assert row.status == "graded" and row.score == 0
    assert "await manual grading" not in row.reason  # an unchanged answer is not worth an instructor's time


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_implementation_loses_points_where_expected(ex01_grades, name):
    catching_test, _ = WRONG[name]
    row = ex01_grades[f"wrong-{name}"]
    assert row.status == "graded"
    assert row.score < _auto_max(row), f"{name} kept full marks"
    assert catching_test in row.reason, f"{name} should fail {catching_test}; reason: {row.reason}"


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_alternative_keeps_full_marks(ex01_grades, name):
    row = ex01_grades[f"correct-{name}"]
    assert row.status == "graded"
    assert row.score == _auto_max(row), f"{name} lost points: {row.reason}"
