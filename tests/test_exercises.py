"""Exercises are trustworthy: the committed release is what nbgrader makes of
solutions/, and grading with `gdcourse grade` gives the solution full marks, the
untouched release zero, every plausible wrong answer less, in the cases of the
function it breaks and nowhere else, and correct alternatives full marks."""

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import pytest

from submissions import release, solution_answers, submission, variants_of

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())


@pytest.mark.slow  # nbgrader generates each release again
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
    # the judge's trusted cases stay beside the source (nbgrader_config ignores them)
    assert sorted(p.name for p in (ROOT / "exercises" / assignment).iterdir()) == [f"{assignment}.ipynb"]


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


# --- every assignment graded through nbgrader -----------------------------

# Each assignment has solutions/<assignment>/variants.py with WRONG and CORRECT submissions.
VARIANTS = {a: v for a in ASSIGNMENTS if (v := variants_of(a)) is not None}


def test_every_assignment_has_graded_variants():
    assert sorted(VARIANTS) == ASSIGNMENTS, "add solutions/<assignment>/variants.py (WRONG and CORRECT) for each assignment"
    for assignment, module in VARIANTS.items():
        # at least 8 bugs and 3 correct alternatives written differently from the reference
        assert len(module.WRONG) >= 8 and len(module.CORRECT) >= 3, assignment


# `make test` grades every correct alternative and at most CORE_WRONG of the bugs of each assignment:
# those that test the integrity flags (calling the course's reference, a forbidden library), then
# round-robin over the test cells the bugs are written for, in the order the module lists them, so
# every test cell that has bugs keeps some. `make mutants` grades all of them (GDCOURSE_ALL_VARIANTS=1),
# as a maintainer should after changing an assignment's cases; each one is a torch process (2-5 s).
CORE_WRONG = 10


def graded_wrong(module) -> list[str]:
    if os.environ.get("GDCOURSE_ALL_VARIANTS") == "1":
        return list(module.WRONG)
    picked = [n for n in module.WRONG if "course_reference" in n or "forbidden" in n]
    queues = {}
    for name, (test, _) in module.WRONG.items():
        if name not in picked:
            queues.setdefault(test, []).append(name)
    while len(picked) < CORE_WRONG and any(queues.values()):
        for queue in queues.values():
            if queue and len(picked) < CORE_WRONG:
                picked.append(queue.pop(0))
    return picked


def test_the_graded_bugs_cover_every_test_cell_that_has_bugs():
    for assignment, module in VARIANTS.items():
        chosen = graded_wrong(module)
        assert len(chosen) >= min(8, len(module.WRONG)), assignment
        assert {module.WRONG[n][0] for n in chosen} == {t for t, _ in module.WRONG.values()}, assignment


def _covering(assignment):
    """Answer cell grade_id -> the test cells that grade it (the tests after it, up to the next answer)."""
    covers, pending = {}, []
    for cell in release(assignment).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            if pending and pending[-1] in covers:
                pending = []
            pending.append(meta["grade_id"])
        elif meta.get("grade") and cell.cell_type == "code":
            for gid in pending:
                covers.setdefault(gid, []).append(meta["grade_id"])
    return covers


def _auto_points(assignment):
    """Points the autograder can award: the test cells (written answers are graded by hand)."""
    return sum(c.metadata["nbgrader"]["points"] for c in release(assignment).cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade"))


_GRADED = {}
_RESULTS = {}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade, once per assignment, one cohort holding all its variants with `gdcourse grade`."""
    from gdcourse.grading import grade
    from gdcourse.grading.cohort import stored_results

    def get(assignment):
        if assignment not in _GRADED:
            module = VARIANTS[assignment]
            cohort = tmp_path_factory.mktemp(f"{assignment}-cohort")
            reference = solution_answers(assignment)
            submission(assignment, reference, cohort, "solution")
            submission(assignment, {}, cohort, "untouched")
            for name in graded_wrong(module):
                _, answers = module.WRONG[name]
                submission(assignment, {**reference, **answers}, cohort, f"wrong-{name}")
            for name, answers in module.CORRECT.items():
                submission(assignment, {**reference, **answers}, cohort, f"correct-{name}")
            # the solution with every answer cell warning on stderr and ending in a value (an
            # execute_result); and the solution with one function left as the release's stub
            submission(assignment, {gid: _noisy(src) for gid, src in reference.items() if gid in _covering(assignment)},
                       cohort, "noisy-solution")
            for gid in _covering(assignment):
                submission(assignment, {k: v for k, v in reference.items() if k != gid}, cohort, f"stub-{gid}")
            out = tmp_path_factory.mktemp(f"{assignment}-graded")
            rows = grade(assignment, cohort, out, course_root=ROOT)
            _GRADED[assignment] = {r.student: r for r in rows}
            _RESULTS[assignment] = stored_results(out)
        return _GRADED[assignment]

    return get


@pytest.mark.parametrize("assignment", sorted(VARIANTS))
def test_solution_gets_every_automatic_point(graded, assignment):
    row = graded(assignment)["solution"]
    assert row.status == "graded"
    assert row.score == _auto_points(assignment) < row.max_score, row.reason
    assert "await manual grading" in row.reason


def _noisy(source: str) -> str:
    return "import warnings\nwarnings.warn('noise on stderr')\n" + source + "\n'an execute_result'\n"


def _lost(assignment, student):
    grades = _RESULTS[assignment][student].grades
    return {t for t, (score, top, manual) in grades.items() if not manual and score < top}


@pytest.mark.parametrize("assignment", sorted(VARIANTS))
def test_stderr_warnings_and_cell_values_decide_nothing(graded, assignment):
    row = graded(assignment)["noisy-solution"]
    assert row.status == "graded" and row.score == _auto_points(assignment), row.reason


@pytest.mark.parametrize("assignment", sorted(VARIANTS))
def test_a_missing_function_costs_only_its_own_tests(graded, assignment):
    """Each function left as the release's stub, the rest the solution: every test of that function
    loses points, and no other test does (the other functions run with the course's stand-ins)."""
    rows = graded(assignment)
    for gid, tests in _covering(assignment).items():
        assert rows[f"stub-{gid}"].status == "graded", rows[f"stub-{gid}"]
        assert _lost(assignment, f"stub-{gid}") == set(tests), f"{gid} left as the stub"


@pytest.mark.parametrize("assignment", sorted(VARIANTS))
def test_untouched_release_scores_zero(graded, assignment):
    row = graded(assignment)["untouched"]
    assert row.status == "graded" and row.score == 0
    assert "await manual grading" not in row.reason  # an unchanged answer is not worth an instructor's time


WRONG_CASES = [(a, name) for a, m in sorted(VARIANTS.items()) for name in sorted(graded_wrong(m))]
CORRECT_CASES = [(a, name) for a, m in sorted(VARIANTS.items()) for name in sorted(m.CORRECT)]


@pytest.mark.parametrize("assignment, name", WRONG_CASES, ids=[f"{a}:{n}" for a, n in WRONG_CASES])
def test_wrong_implementation_loses_points_where_expected(graded, assignment, name):
    catching_test, _ = VARIANTS[assignment].WRONG[name]
    row = graded(assignment)[f"wrong-{name}"]
    # a submission that calls the course's reference, or a library the exercise forbids, is flagged for
    # the instructor, not just marked down
    assert row.status == ("flagged" if "course_reference" in name or "forbidden" in name else "graded"), row
    assert row.score < _auto_points(assignment), f"{name} kept full marks"
    assert catching_test in row.reason, f"{name} should fail {catching_test}; reason: {row.reason}"
    # a bug costs points only in the cases of the function it breaks: the tests of the cells it edits
    _, answers = VARIANTS[assignment].WRONG[name]
    allowed = {t for gid in answers for t in _covering(assignment).get(gid, [])}
    lost = _lost(assignment, f"wrong-{name}")
    assert lost <= allowed, f"{name} edits {sorted(answers)} but lost points in {sorted(lost - allowed)} too"


@pytest.mark.parametrize("assignment, name", CORRECT_CASES, ids=[f"{a}:{n}" for a, n in CORRECT_CASES])
def test_correct_alternative_keeps_full_marks(graded, assignment, name):
    row = graded(assignment)[f"correct-{name}"]
    assert row.status == "graded"
    assert row.score == _auto_points(assignment), f"{name} lost points: {row.reason}"


def test_exercises_page_states_each_assignments_points_per_function():
    """The table on the exercises page (included in the instructor guide) is what the notebooks award."""
    from gdcourse.check import points_per_function

    page = (ROOT / "book" / "exercises.md").read_text()
    table = page.split("<!-- points-per-function -->")[1].split("<!-- /points-per-function -->")[0]
    for assignment in ASSIGNMENTS:
        groups = points_per_function(ROOT / "exercises" / assignment / f"{assignment}.ipynb")
        cells = " · ".join(", ".join(n if n == "written answer" else f"`{n}`" for n in names) + f" {p:g}"
                           for names, p in groups)
        assert f"| {assignment} | {cells} |" in table, f"update the row of {assignment}: | {assignment} | {cells} |"
    guide = (ROOT / "book" / "instructors.md").read_text()
    assert ":start-after: <!-- points-per-function -->" in guide and "```{include} exercises.md" in guide


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_case_definitions_take_nothing_from_the_notebook_but_the_function(assignment):
    """A case's call is data and names one graded function; its check sees only what that call left
    (no stderr, no cell output, no execute_result); test cells define nothing a case could depend on."""
    import ast
    import dataclasses

    from gdcourse.grading import cases as case_defs, wire
    from gdcourse.grading.judge import Assignment

    assert {f.name for f in dataclasses.fields(case_defs.Result)} == {"value", "args_after", "shares_input"}
    public = case_defs.public(assignment)
    spec = Assignment.load(assignment, ROOT / "exercises" / assignment / f"{assignment}.ipynb",
                           case_defs.load(ROOT, assignment), public)
    for seed in (0, 1):
        for case in spec.draw(seed):
            assert case.call.fn in public.REFERENCE
            assert not case.call.probe or callable(getattr(public, case.call.probe, None)), case.call.probe
            data = case.call.as_data()
            packed = wire.unpack(wire.pack(data))
            assert "wire.Opaque" not in repr(packed) and "Opaque(" not in repr(packed), (case.name, "not data")
    for grade_id, _, source in __import__("gdcourse.check", fromlist=["x"]).visible_tests(
            ROOT / "exercises" / assignment / f"{assignment}.ipynb"):
        tree = ast.parse(source)
        assert [type(n) for n in tree.body] == [ast.ImportFrom, ast.Expr], grade_id
        assert ast.unparse(tree.body[1]) == f"check('{assignment}', '{grade_id}')", grade_id


@pytest.mark.parametrize("assignment", ["ex13-diagnose-and-fix"])
def test_a_wrong_cause_scores_nothing_though_its_form_is_right(graded, assignment):
    """ex13's visible cause case only checks the form (one key of CAUSES) and weighs nothing."""
    rows = graded(assignment)
    for name in graded_wrong(VARIANTS[assignment]):
        test, _ = VARIANTS[assignment].WRONG[name]
        if test.startswith("test_cause"):
            score, top, _ = _RESULTS[assignment][f"wrong-{name}"].grades[test]
            assert (score, top) == (0.0, 1.0), (name, rows[f"wrong-{name}"].reason)
