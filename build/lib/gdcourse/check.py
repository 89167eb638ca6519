"""A student's self-check: run an exercise's visible tests in their notebook.

The tests are read from the released notebook (``exercises/<name>/<name>.ipynb``
in the course checkout that gdcourse was imported from: a clone, a JupyterHub
copy, or the clone that the Colab setup cell makes), so nbgrader is not needed
and hidden tests, which are not in the release, cannot leak. The tests run in a
*copy* of the caller's namespace, in order, as nbgrader runs them: the
student's functions are found, and the tests' own variables (``X``, ``w``, ...)
do not overwrite the student's.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT_ENV = "GDCOURSE_ROOT"
# Set by the cohort grader: the graded test cells have just run, so the self-check cell
# would only run the visible tests a second time (seconds per submission, hours per cohort).
GRADING_ENV = "GDCOURSE_GRADING"


@dataclass(frozen=True)
class TestResult:
    grade_id: str
    points: float
    status: str  # "passed", "failed" (an assert) or "error" (any other exception)
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class CheckReport:
    assignment: str
    results: tuple[TestResult, ...]
    skipped: bool = False  # under the grader

    @property
    def points(self) -> float:
        return sum(r.points for r in self.results if r.passed)

    @property
    def max_points(self) -> float:
        return sum(r.points for r in self.results)

    def __str__(self) -> str:
        if self.skipped:
            return f"Self-check of {self.assignment} skipped: the grader runs the tests itself"
        lines = [f"Self-check of {self.assignment}: visible tests only (hidden tests run when graded)"]
        for r in self.results:
            mark = {"passed": "PASS", "failed": "FAIL", "error": "ERROR"}[r.status]
            lines.append(f"  {mark:5} {r.grade_id} ({r.points:g} pt)")
            if r.message:
                lines += [f"        {line}" for line in r.message.splitlines()]
        lines.append(f"{self.points:g} / {self.max_points:g} points from visible tests")
        return "\n".join(lines)

    __repr__ = __str__


def course_root() -> Path:
    """The course checkout: ``$GDCOURSE_ROOT`` or the folder above this package."""
    return Path(os.environ.get(ROOT_ENV) or Path(__file__).resolve().parent.parent)


def release_notebook(assignment: str, root: Path | None = None) -> Path:
    path = (root or course_root()) / "exercises" / assignment / f"{assignment}.ipynb"
    if not path.is_file():
        raise FileNotFoundError(
            f"no released exercise {assignment!r} at {path}. Check the name (e.g. 'ex01-gd-loop'), "
            f"or set {ROOT_ENV} to your copy of the course repository."
        )
    return path


def visible_tests(notebook: Path) -> list[tuple[str, float, str]]:
    """(grade_id, points, source) of each autograded test cell, in order."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    tests = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("grade") and not meta.get("solution"):
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            tests.append((meta["grade_id"], float(meta.get("points", 0)), source))
    return tests


def check(assignment: str, namespace: dict | None = None, *, root: Path | None = None) -> CheckReport:
    """Run the visible tests of ``assignment`` against the caller's definitions.

    Call it from the exercise notebook: ``check("ex01-gd-loop")``. ``namespace``
    defaults to the caller's global variables (the notebook's).
    """
    if os.environ.get(GRADING_ENV):
        return CheckReport(assignment, (), skipped=True)
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    results = []
    # One copy for all tests, run in order, as nbgrader runs the cells in one kernel
    # (a later test may use what an earlier one imported); the student's own
    # variables are never overwritten.
    scope = dict(namespace)
    for grade_id, points, source in visible_tests(release_notebook(assignment, root)):
        try:
            exec(compile(source, f"<visible test {grade_id}>", "exec"), scope)
        except AssertionError as exc:
            results.append(TestResult(grade_id, points, "failed", str(exc) or "an assert failed (no message)"))
        except Exception as exc:
            where = traceback.extract_tb(exc.__traceback__)[-1]
            results.append(TestResult(grade_id, points, "error",
                                      f"{type(exc).__name__}: {exc}  (in {where.name}, line {where.lineno})"))
        else:
            results.append(TestResult(grade_id, points, "passed"))
    return CheckReport(assignment, tuple(results))
