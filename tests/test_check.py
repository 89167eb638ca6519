"""The student self-check runs the judge's visible cases, through the judge's own code, in the
student's namespace; a test cell runs its own cases and raises when one fails."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gdcourse.check import check, release_notebook, visible_tests
from gdcourse.grading import cases as case_defs
from gdcourse.grading.judge import Assignment

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ex01-gd-loop"
FUNCTIONS = ["predict", "mse_loss", "gradients", "gd_step", "fit"]


def solution_namespace(assignment=ASSIGNMENT):
    """Definitions from the reference solution, as a student's kernel would hold them."""
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text())
    ns = {}
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and (meta.get("solution") or meta.get("grade_id") == "imports"):
            exec("".join(cell["source"]), ns)
    return ns


def test_test_cells_are_one_check_each_and_hide_nothing_secret():
    tests = visible_tests(release_notebook(ASSIGNMENT))
    assert [t[0] for t in tests] == ["test_predict", "test_mse_loss", "test_gradients", "test_gd_step", "test_fit"]
    for grade_id, _, source in tests:
        assert f'check("{ASSIGNMENT}", "{grade_id}")' in source and "HIDDEN" not in source


def test_reference_solution_passes_every_visible_case():
    report = check(ASSIGNMENT, namespace=solution_namespace())
    assert report.passed, str(report)
    assert report.points == report.max_points == 7


def test_self_check_and_judge_run_the_same_visible_cases():
    public = case_defs.public(ASSIGNMENT)
    spec = Assignment.load(ASSIGNMENT, release_notebook(ASSIGNMENT), case_defs.load(ROOT, ASSIGNMENT), public)
    judged = [(c.test, c.name, c.call.fn) for c in spec.draw(seed=123) if c.visible]
    assert judged == [(c.test, c.name, c.call.fn) for c in public.visible()]
    assert judged and {t for t, _, _ in judged} == set(spec.tests)


def test_a_wrong_function_fails_with_a_helpful_message():
    ns = solution_namespace()
    exec("def predict(X, w, b):\n    return X @ w\n", ns)  # forgot the bias
    report = check(ASSIGNMENT, namespace=ns)
    by_id = {r.grade_id: r for r in report.results}
    assert by_id["test_predict"].status == "failed"
    assert "bias" in by_id["test_predict"].message
    assert report.points == report.max_points - 1  # the other functions' cases stand alone
    assert "FAIL  test_predict" in str(report)


def test_a_test_cell_raises_only_when_its_own_cases_fail():
    ns = solution_namespace()
    exec("def gradients(X, y, w, b):\n    r = X @ w + b - y\n    return X.T @ r / len(y), float(r.mean())\n", ns)
    with pytest.raises(AssertionError, match="half the gradient"):
        check(ASSIGNMENT, "test_gradients", namespace=ns)
    # fit calls the broken gradients, but its cases run with the course's: it still passes
    assert check(ASSIGNMENT, "test_fit", namespace=ns).passed
    with pytest.raises(ValueError, match="no test cell"):
        check(ASSIGNMENT, "test_nope", namespace=ns)


def test_untouched_stubs_score_zero_and_name_the_error():
    ns = {"np": np}
    for name in FUNCTIONS:
        exec(f"def {name}(*args, **kwargs):\n    raise NotImplementedError()\n", ns)
    report = check(ASSIGNMENT, namespace=ns)
    assert report.points == 0
    assert all(r.status == "failed" and "NotImplementedError" in r.message for r in report.results)


def test_a_fresh_kernel_is_told_which_cells_to_run_first():
    """Run All stopped at a failing test: later functions are undefined, and `np` too in a fresh kernel."""
    ns = {}
    exec("def fit(X, y, lr, epochs):\n    return np.zeros(X.shape[1]), 0.0, []\n", ns)
    report = check(ASSIGNMENT, namespace=ns)
    text = str(report)
    assert "NameError" not in "".join(r.message for r in report.results if r.grade_id != "test_fit")
    assert [r.status for r in report.results] == ["not run"] * 4 + ["failed"]
    assert "Run these cells first" in text
    assert 'the cell that defines predict, under "1. Prediction"' in text
    assert "the imports cell" in text and "it defines np" in text


def test_the_check_does_not_touch_the_students_variables():
    ns = solution_namespace()
    ns["X"] = "my data"
    mine = ns["gradients"]
    check(ASSIGNMENT, namespace=ns)
    assert ns["X"] == "my data" and ns["gradients"] is mine  # stand-ins are put back


def test_a_function_that_modifies_its_input_fails_without_changing_the_cases():
    ns = solution_namespace()
    exec("def gd_step(w, b, dw, db, lr):\n    w -= lr * dw\n    return w, b - lr * db\n", ns)
    first = check(ASSIGNMENT, "test_fit", namespace=ns)
    with pytest.raises(AssertionError, match="modified"):
        check(ASSIGNMENT, "test_gd_step", namespace=ns)
    with pytest.raises(AssertionError, match="modified"):  # the inputs crossed a wire: the case data is intact
        check(ASSIGNMENT, "test_gd_step", namespace=ns)
    assert first.passed


def test_check_uses_the_callers_globals_by_default():
    # Called from this module, whose globals lack the student functions: nothing runs.
    report = check(ASSIGNMENT)
    assert report.points == 0 and all(r.status == "not run" for r in report.results)


def test_unknown_assignment_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="GDCOURSE_ROOT"):
        check("ex99-nope", namespace={})
    with pytest.raises(FileNotFoundError, match="ex01"):
        check(ASSIGNMENT, namespace={}, root=tmp_path)


def test_self_check_needs_no_nbgrader(tmp_path):
    """On Colab nbgrader is absent: the check must run with it unimportable."""
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
    report = check(ASSIGNMENT, namespace={})  # an empty namespace would fail every case if they ran
    assert report.skipped and report.results == () and "skipped" in str(report)
    assert check(ASSIGNMENT, "test_fit", namespace={}).skipped  # a test cell does not raise either
    monkeypatch.delenv(GRADING_ENV)
    assert check(ASSIGNMENT, namespace={}).points == 0 and not check(ASSIGNMENT, namespace={}).skipped


def test_a_graded_value_that_is_still_the_stub_is_not_run_and_named():
    """ex13's answers include values (cause_a = ...); the release's stub cell only raises."""
    report = check("ex13-diagnose-and-fix", namespace={})
    assert report.points == 0 and "cause_a is not defined yet" in str(report)
    assert "Run these cells first" in str(report)


# --- written answers: graded by hand, counted apart, read from the notebook's file as last saved ---

WRITTEN = "why_diverge"  # ex01's one written answer, 2 points
ANSWER = "Past lr = 2 / lambda_max each step overshoots the minimum by more than it corrects, so the loss grows."


@pytest.fixture
def no_notebook(monkeypatch, tmp_path):
    """A kernel that names no notebook file, in an empty working directory."""
    from gdcourse.check import SESSION_ENV
    monkeypatch.delenv(SESSION_ENV, raising=False)
    work = tmp_path / "kernel-cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path


def in_vs_code(ns, path):
    """``ns`` as VS Code's kernel holds it (the same dict: the functions' globals are the namespace)."""
    ns["__vsc_ipynb_file__"] = str(path)
    return ns


def saved(folder, answers=None, student="student"):
    from submissions import submission
    return submission(ASSIGNMENT, answers or {}, folder, student)


def test_an_untouched_written_answer_is_reported_empty(no_notebook):
    path = saved(no_notebook)
    report = check(ASSIGNMENT, namespace=in_vs_code(solution_namespace(), path))
    assert report.written == ((WRITTEN, 2.0, "empty"),) and report.notebook_file == str(path)
    assert str(report).splitlines()[-1] == (
        "7 / 7 points from visible cases (hidden cases run when you are graded); 2 more points are graded "
        f"by hand: your written answer {WRITTEN} is still empty (as last saved in {path.name})")


def test_a_written_answer_is_reported_written(no_notebook):
    path = saved(no_notebook, {WRITTEN: ANSWER})
    report = check(ASSIGNMENT, namespace=in_vs_code(solution_namespace(), path))
    assert report.written == ((WRITTEN, 2.0, "written"),)
    assert str(report).endswith(f"; 2 more points are graded by hand (your written answer {WRITTEN} is written, "
                                f"as last saved in {path.name})")
    assert "still empty" not in str(report)


def test_the_stub_is_compared_with_whitespace_normalised(no_notebook):
    path = saved(no_notebook, {WRITTEN: "\n  YOUR ANSWER HERE   \n\n"})
    report = check(ASSIGNMENT, namespace={"__vsc_ipynb_file__": str(path)})
    assert report.written == ((WRITTEN, 2.0, "empty"),)


def test_hand_graded_points_are_apart_from_the_automatic_ones(no_notebook):
    ns = solution_namespace()
    exec("def predict(X, w, b):\n    return X @ w\n", ns)  # 1 point lost
    for answers, state in (({}, "empty"), ({WRITTEN: ANSWER}, "written")):
        path = saved(no_notebook, answers, student=state)
        report = check(ASSIGNMENT, namespace=in_vs_code(ns, path))
        assert (report.points, report.max_points, report.hand_points) == (6, 7, 2), state
        assert report.written[0][2] == state
        assert "6 / 7 points from visible cases" in str(report) and "2 more points are graded by hand" in str(report)
    # the written answer adds to neither count, written or not (the grader's points_per_function agrees)
    from gdcourse.check import points_per_function
    assert points_per_function(release_notebook(ASSIGNMENT))[-1] == (("written answer",), 2.0)


def test_the_notebook_is_found_through_jpy_session_name(no_notebook, monkeypatch):
    from gdcourse.check import SESSION_ENV
    path = saved(no_notebook, {WRITTEN: ANSWER})
    monkeypatch.setenv(SESSION_ENV, str(path))  # Jupyter Server: the absolute path
    report = check(ASSIGNMENT, namespace={})
    assert report.written == ((WRITTEN, 2.0, "written"),) and report.notebook_file == str(path)
    # a path relative to the server's root, read from the kernel's folder (the notebook's)
    # (a second, untouched copy in that folder: the name is what finds it, not a look around the folder)
    monkeypatch.setenv(SESSION_ENV, f"course/exercises/{path.parent.name}/{path.name}")
    (path.parent / "copy.ipynb").write_text(saved(no_notebook, student="other").read_text())
    monkeypatch.chdir(path.parent)
    report = check(ASSIGNMENT, namespace={})
    assert report.written == ((WRITTEN, 2.0, "written"),) and Path(report.notebook_file).name == path.name


def test_the_notebook_is_found_through_vs_codes_global(no_notebook):
    path = saved(no_notebook)
    report = check(ASSIGNMENT, namespace={"__vsc_ipynb_file__": str(path)})
    assert report.notebook_file == str(path) and report.written[0][2] == "empty"


def test_with_no_notebook_file_the_check_says_it_cannot_read_the_answers(no_notebook):
    report = check(ASSIGNMENT, namespace=solution_namespace())  # Colab: no file, nothing in the kernel
    assert report.written == ((WRITTEN, 2.0, "unknown"),) and report.notebook_file is None
    assert (report.points, report.max_points, report.hand_points) == (7, 7, 2)
    assert str(report).endswith("; 2 more points are graded by hand (the self-check cannot read your "
                                "written answers here: check them yourself)")


def test_a_stale_or_foreign_notebook_name_is_passed_over(no_notebook, monkeypatch):
    from gdcourse.check import SESSION_ENV
    from submissions import submission
    other = submission("ex02-minibatch", {}, no_notebook, "other")  # a kernel started for another exercise
    monkeypatch.setenv(SESSION_ENV, str(other))
    assert check(ASSIGNMENT, namespace={}).written[0][2] == "unknown"
    monkeypatch.setenv(SESSION_ENV, str(no_notebook / "renamed-since.ipynb"))  # gone
    mine = saved(no_notebook, {WRITTEN: ANSWER})
    report = check(ASSIGNMENT, namespace={"__vsc_ipynb_file__": str(other), "__session__": str(mine)})
    assert report.notebook_file == str(mine) and report.written[0][2] == "written"


def test_the_one_notebook_of_the_exercise_in_the_kernels_folder_is_read(no_notebook, monkeypatch):
    """Older servers name no file; the kernel runs in the notebook's folder."""
    path = saved(no_notebook)
    monkeypatch.chdir(path.parent)
    assert check(ASSIGNMENT, namespace={}).notebook_file == str(path.resolve())
    saved(path.parent.parent, {WRITTEN: ANSWER}, student=path.parent.name + "/copy")  # a second copy there
    (path.parent / "copy" / f"{ASSIGNMENT}.ipynb").rename(path.parent / "copy.ipynb")
    assert check(ASSIGNMENT, namespace={}).written[0][2] == "unknown"  # which one? the check does not guess


def test_a_deleted_written_answer_is_reported_missing(no_notebook):
    path = saved(no_notebook)
    nb = json.loads(path.read_text())
    nb["cells"] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") != WRITTEN]
    path.write_text(json.dumps(nb))
    report = check(ASSIGNMENT, namespace={"__vsc_ipynb_file__": str(path)})
    assert report.written == ((WRITTEN, 2.0, "missing"),)
    assert f"your written answer {WRITTEN} is missing from the notebook" in str(report)


def test_a_test_cell_and_the_grader_leave_the_written_answers_alone(no_notebook, monkeypatch):
    from gdcourse.check import GRADING_ENV
    path = saved(no_notebook)
    ns = in_vs_code(solution_namespace(), path)
    report = check(ASSIGNMENT, "test_fit", namespace=ns)
    assert report.written == () and "graded by hand" not in str(report)
    monkeypatch.setenv(GRADING_ENV, "1")
    report = check(ASSIGNMENT, namespace=ns)
    assert report.skipped and report.written == () and "graded by hand" not in str(report)


def test_several_written_answers_are_named_each(tmp_path):
    from gdcourse.check import CheckReport
    report = CheckReport("exNN", (), written=(("a", 1.0, "empty"), ("b", 2.0, "empty"), ("c", 1.0, "written")),
                         notebook_file=str(tmp_path / "exNN.ipynb"))
    assert str(report).endswith("; 4 more points are graded by hand: your written answers a (1 pt) and b (2 pt) "
                                "are still empty; c (1 pt) is written (as last saved in exNN.ipynb)")
