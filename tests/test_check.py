"""The student self-check runs the release's visible tests in the student's namespace."""

import json
from pathlib import Path

import numpy as np
import pytest

from gdcourse.check import check, release_notebook, visible_tests

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ex01-gd-loop"


def solution_namespace(assignment=ASSIGNMENT):
    """Definitions from the reference solution, as a student's kernel would hold them."""
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text())
    ns = {}
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and (meta.get("solution") or meta.get("grade_id") == "imports"):
            exec("".join(cell["source"]), ns)
    return ns


def test_visible_tests_come_from_the_release_and_hide_nothing_secret():
    tests = visible_tests(release_notebook(ASSIGNMENT))
    assert [t[0] for t in tests] == ["test_predict", "test_mse_loss", "test_gradients", "test_gd_step", "test_fit"]
    assert all("HIDDEN" not in src for _, _, src in tests)


def test_reference_solution_passes_every_visible_test():
    report = check(ASSIGNMENT, solution_namespace())
    assert all(r.passed for r in report.results), str(report)
    assert report.points == report.max_points == 7


def test_a_wrong_function_fails_with_a_helpful_message():
    ns = solution_namespace()
    ns["predict"] = lambda X, w, b: X @ w  # forgot the bias
    report = check(ASSIGNMENT, ns)
    by_id = {r.grade_id: r for r in report.results}
    assert by_id["test_predict"].status == "failed"
    assert "bias" in by_id["test_predict"].message
    assert report.points < report.max_points
    assert "FAIL  test_predict" in str(report)


def test_untouched_stub_scores_zero_and_names_the_error():
    def stub(*args, **kwargs):
        raise NotImplementedError()

    ns = {"np": np, **{name: stub for name in ["predict", "mse_loss", "gradients", "gd_step", "fit"]}}
    report = check(ASSIGNMENT, ns)
    assert report.points == 0
    assert all(r.status == "error" and "NotImplementedError" in r.message for r in report.results)


def test_tests_do_not_overwrite_the_students_variables():
    ns = solution_namespace()
    ns["X"] = "my data"
    check(ASSIGNMENT, ns)
    assert ns["X"] == "my data"


def test_check_uses_the_callers_globals_by_default():
    # Called from this module, whose globals lack the student functions: everything errors.
    report = check(ASSIGNMENT)
    assert report.points == 0 and all(r.status == "error" for r in report.results)


def test_unknown_assignment_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="GDCOURSE_ROOT"):
        check("ex99-nope", {})
    with pytest.raises(FileNotFoundError, match="ex01"):
        check(ASSIGNMENT, {}, root=tmp_path)


def test_self_check_needs_no_nbgrader(tmp_path):
    """On Colab nbgrader is absent: the check must run with it unimportable."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['nbgrader'] = None\n"
        "from gdcourse.check import check\n"
        "import numpy as np\n"
        "def predict(X, w, b): return X @ w + b\n"
        "r = check('ex01-gd-loop')\n"
        "print([x.status for x in r.results][0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.strip() == "passed"


def test_under_the_grader_the_self_check_stands_down(monkeypatch):
    from gdcourse.check import GRADING_ENV
    monkeypatch.setenv(GRADING_ENV, "1")
    report = check(ASSIGNMENT, {})  # an empty namespace would fail every test if they ran
    assert report.skipped and report.results == () and "skipped" in str(report)
    monkeypatch.delenv(GRADING_ENV)
    assert check(ASSIGNMENT, {}).points == 0 and not check(ASSIGNMENT, {}).skipped
