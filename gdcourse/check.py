"""A student's self-check: the visible cases of an exercise, run against the notebook's own functions.

For an exercise on the judge, the visible cases are the ones the grader runs
(:mod:`gdcourse.grading.assignments`), through the same code: each call is made
as the grading harness makes it (the other graded functions stood in for by the
course's reference), its result crosses the same wire, and the same check scores
it. So the self-check and the grade cannot disagree on a visible case. Each test
cell runs its own cases (``check("ex01-gd-loop", "test_predict")``) and raises
if one fails; the self-check cell at the end runs them all and, when functions
are not defined yet (a fresh kernel, a Run All that stopped early), says which
cells to run first.

Points come from the released notebook (``exercises/<name>/<name>.ipynb`` in
the course checkout that gdcourse was imported from, or the copy packaged with
gdcourse where it was pip-installed, as on Colab); nbgrader is not needed.

The written answers (markdown cells graded by hand) are counted apart from the
automatic points, and the report says which of them are still the release's stub.
The kernel cannot see the notebook's cells, so the self-check reads the notebook's
file as last saved, found by :func:`student_notebook` (``JPY_SESSION_NAME`` under
Jupyter Server 2 and later, ``__vsc_ipynb_file__`` in VS Code); where there is no
file to read (Colab), the report says so and leaves the check to the student.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT_ENV = "GDCOURSE_ROOT"
# Set by the cohort grader: the graded test cells have just run, so the self-check cell
# would only run the visible tests a second time (seconds per submission, hours per cohort).
GRADING_ENV = "GDCOURSE_GRADING"
# Where the running notebook's file is named: Jupyter Server (>= 2) sets this for the kernels it
# starts, and ipykernel copies it into the notebook's globals as __session__; VS Code sets a global.
SESSION_ENV = "JPY_SESSION_NAME"
NOTEBOOK_GLOBALS = ("__vsc_ipynb_file__", "__session__")


@dataclass(frozen=True)
class TestResult:
    grade_id: str
    points: float
    status: str  # "passed", "failed" (a case failed) or "not run" (its function is not defined yet)
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class CheckReport:
    assignment: str
    results: tuple[TestResult, ...]
    skipped: bool = False  # under the grader
    run_first: tuple[str, ...] = ()  # cells to run before checking again, as the student reads them
    # The answers graded by hand: (grade_id, points, state), state "written", "empty" (still the
    # release's stub), "missing" (the cell is gone from the notebook) or "unknown" (no file to read).
    written: tuple[tuple[str, float, str], ...] = ()
    notebook_file: str | None = None  # the notebook file the written answers were read from

    @property
    def points(self) -> float:
        """Points from the visible cases that passed (the automatic points only)."""
        return sum(r.points for r in self.results if r.passed)

    @property
    def max_points(self) -> float:
        """The automatic points at stake; the written answers' points are :attr:`hand_points`."""
        return sum(r.points for r in self.results)

    @property
    def hand_points(self) -> float:
        """Points of the written answers, graded by hand: in neither :attr:`points` nor :attr:`max_points`."""
        return sum(points for _, points, _ in self.written)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def __str__(self) -> str:
        if self.skipped:
            return f"Self-check of {self.assignment} skipped: the grader runs the tests itself"
        lines = [f"Self-check of {self.assignment}: the visible cases (hidden cases run when you are graded)"]
        for r in self.results:
            mark = {"passed": "PASS", "failed": "FAIL", "not run": "----"}[r.status]
            lines.append(f"  {mark:5} {r.grade_id} ({r.points:g} pt)")
            if r.message:
                lines += [f"        {line}" for line in r.message.splitlines()]
        if self.run_first:
            lines.append("Run these cells first, then check again:")
            lines += [f"  - {cell}" for cell in self.run_first]
        summary = (f"{self.points:g} / {self.max_points:g} points from visible cases "
                   "(hidden cases run when you are graded)")
        if self.written:
            summary += "; " + self._hand_graded()
        lines.append(summary)
        return "\n".join(lines)

    def _hand_graded(self) -> str:
        hand = self.hand_points
        head = f"{hand:g} more point{'' if hand == 1 else 's'} {'is' if hand == 1 else 'are'} graded by hand"
        if self.notebook_file is None or any(state == "unknown" for _, _, state in self.written):
            return f"{head} (the self-check cannot read your written answers here: check them yourself)"
        several = len(self.written) > 1

        def names(state: str) -> list[str]:
            return [f"{gid} ({points:g} pt)" if several else gid for gid, points, s in self.written if s == state]

        def said(items: list[str], first: bool, verb: str) -> str:
            subject = " and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 1 else items)
            answer = ("your written answers " if len(items) > 1 else "your written answer ") if first else ""
            return f"{answer}{subject} {'are' if len(items) > 1 else 'is'} {verb}"

        where = f"as last saved in {Path(self.notebook_file).name}"
        todo = [(names("empty"), "still empty"), (names("missing"), "missing from the notebook")]
        todo = [(items, verb) for items, verb in todo if items]
        if not todo:
            return f"{head} ({said(names('written'), True, 'written')}, {where})"
        parts = [said(items, i == 0, verb) for i, (items, verb) in enumerate(todo)]
        if names("written"):
            parts.append(said(names("written"), False, "written"))
        return f"{head}: {'; '.join(parts)} ({where})"

    __repr__ = __str__


def course_root() -> Path:
    """The course checkout: ``$GDCOURSE_ROOT`` or the folder above this package."""
    return Path(os.environ.get(ROOT_ENV) or Path(__file__).resolve().parent.parent)


def release_notebook(assignment: str, root: Path | None = None) -> Path:
    """The released notebook of ``assignment``: in the checkout, else the one packaged with gdcourse."""
    path = (root or course_root()) / "exercises" / assignment / f"{assignment}.ipynb"
    if path.is_file():
        return path
    if root is None:
        packaged = Path(__file__).resolve().parent / "exercises" / assignment / f"{assignment}.ipynb"
        if packaged.is_file():
            return packaged
    raise FileNotFoundError(
        f"no released exercise {assignment!r} at {path}. Check the name (e.g. 'ex01-gd-loop'), "
        f"or set {ROOT_ENV} to your copy of the course repository."
    )


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


def points_per_function(notebook: Path) -> list[tuple[tuple[str, ...], float]]:
    """What each graded function is worth: ``[((names...), points), ...]`` in notebook order, from
    the test cells after each answer cell (functions whose tests are shared are listed together),
    then ``(("written answer",), points)`` for the answers graded by hand."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    groups, pending, written = [], [], 0.0
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if meta.get("solution") and cell["cell_type"] == "code":
            if pending and groups and groups[-1][0] is pending:
                pending = []
            try:
                names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
            except SyntaxError:
                names = []
            pending += names or [meta["grade_id"]]
        elif meta.get("grade") and cell["cell_type"] == "code":
            if groups and groups[-1][0] is pending:
                groups[-1][1] += float(meta.get("points", 0))
            else:
                groups.append([pending, float(meta.get("points", 0))])
        elif meta.get("grade"):
            written += float(meta.get("points", 0))
    return [(tuple(names), points) for names, points in groups] + [(("written answer",), written)]


def written_answers(notebook: Path) -> list[tuple[str, float, str]]:
    """(grade_id, points, stub) of each answer graded by hand, as the grader reads them
    (:class:`gdcourse.grading.judge.Assignment`): graded cells other than test cells."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    answers = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not (cell["cell_type"] == "code" and not meta.get("solution")):
            answers.append((meta["grade_id"], float(meta.get("points", 0)), _source(cell)))
    return answers


def student_notebook(assignment: str, namespace: dict | None = None) -> tuple[Path, dict] | None:
    """The running notebook's file, as last saved, and its content: ``(path, notebook)``, or None
    where it cannot be found (Colab keeps the notebook in the browser and Drive, not in a file).

    Tried in turn: ``__vsc_ipynb_file__`` (VS Code), ``__session__`` and ``$JPY_SESSION_NAME``
    (Jupyter Server >= 2: an absolute path, or one relative to the server's root, tried from the
    kernel's working directory, the notebook's folder); then the one notebook of this exercise in
    the working directory, if there is exactly one. A file counts only if it is a notebook that
    names ``assignment``, so a stale name (a renamed notebook, a kernel shared with another) is passed over."""
    namespace = namespace or {}
    names = [namespace.get(var) for var in NOTEBOOK_GLOBALS] + [os.environ.get(SESSION_ENV)]
    try:
        cwd = Path.cwd()
    except OSError:  # the working directory was deleted
        cwd = None
    tried = set()
    for name in names:
        if not isinstance(name, str) or not name.strip():
            continue
        path = Path(name.strip()).expanduser()
        candidates = [path] if path.is_absolute() else [cwd / path, cwd / path.name] if cwd else []
        for candidate in candidates:
            if candidate in tried:
                continue
            tried.add(candidate)
            nb = _exercise_notebook(candidate, assignment)
            if nb is not None:
                return candidate, nb
    try:
        here = [(p, nb) for p in sorted(cwd.glob("*.ipynb"))
                if (nb := _exercise_notebook(p, assignment)) is not None] if cwd else []
    except OSError:
        here = []
    return here[0] if len(here) == 1 else None


def _exercise_notebook(path: Path, assignment: str) -> dict | None:
    """The notebook at ``path`` if it is one and a code cell names ``assignment`` as a string
    (its test cells and self-check cell do: ``check("ex01-gd-loop")``; prose about it does not count)."""
    quoted = (f'"{assignment}"', f"'{assignment}'")
    try:
        if not path.is_file():
            return None
        nb = json.loads(path.read_text(encoding="utf-8"))
        if any(cell.get("cell_type") == "code" and any(q in _source(cell) for q in quoted)
               for cell in nb["cells"]):
            return nb
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def _written_states(assignment: str, release: Path, namespace: dict) -> tuple[tuple, str | None]:
    """(the report's ``written``, the file it was read from): each written answer of the release
    compared with the release's stub, whitespace normalised as the grader does."""
    from gdcourse.grading.integrity import _normal

    answers = written_answers(release)
    if not answers:
        return (), None
    found = student_notebook(assignment, namespace)
    if found is None:
        return tuple((gid, points, "unknown") for gid, points, _ in answers), None
    path, nb = found
    mine: dict[str, str] = {}
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") if isinstance(cell, dict) else None
        if isinstance(gid, str):
            mine.setdefault(gid, _source(cell))
    states = tuple((gid, points, "missing" if gid not in mine
                    else "empty" if _normal(mine[gid]) == _normal(stub) else "written")
                   for gid, points, stub in answers)
    return states, str(path)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def check(assignment: str, test: str | None = None, *, namespace: dict | None = None,
          root: Path | None = None) -> CheckReport:
    """Run the visible cases of ``assignment`` (of its test cell ``test`` only, if given) against
    the caller's definitions; ``namespace`` defaults to the caller's global variables (the notebook's).

    From a test cell, ``check("ex01-gd-loop", "test_predict")`` raises AssertionError with the
    report when a case fails, as a test cell does; the self-check cell, ``check("ex01-gd-loop")``,
    returns the report of every test cell, and says what the written answers (graded by hand)
    are worth and which of them are still empty in the notebook's file, as last saved."""
    if os.environ.get(GRADING_ENV):
        return CheckReport(assignment, (), skipped=True)
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    notebook = release_notebook(assignment, root)
    from gdcourse.grading import cases as case_defs
    public = case_defs.public(assignment)
    if public is None:
        raise FileNotFoundError(f"{assignment} has no cases (gdcourse.grading.assignments."
                                f"{case_defs.module_name(assignment)}): is gdcourse up to date?")
    report = _check_cases(assignment, public, notebook, namespace, test)
    if test is not None:
        report = CheckReport(assignment, tuple(r for r in report.results if r.grade_id == test),
                             run_first=report.run_first)
        if not report.results:
            raise ValueError(f"{assignment} has no test cell {test!r}")
        if not report.passed:
            raise AssertionError("\n" + str(report)) from None
        return report
    written, notebook_file = _written_states(assignment, notebook, namespace)
    return CheckReport(assignment, report.results, run_first=report.run_first,
                       written=written, notebook_file=notebook_file)


def _check_cases(assignment: str, public, notebook: Path, ns: dict, test: str | None) -> CheckReport:
    """The judge's own path, in the student's process: call, wire, check."""
    from gdcourse.grading import cases as case_defs, harness, wire

    cells = _cells(notebook)
    results, run_first = [], []
    for grade_id, points, _ in visible_tests(notebook):
        if test is not None and grade_id != test:
            continue
        lines, status = [], "passed"
        for case in (c for c in public.visible() if c.test == grade_id):
            if case.call.fn not in ns or (case.call.args is not None and not callable(ns[case.call.fn])):
                status = "not run"
                lines.append(f"{case.call.fn} is not defined yet")
                run_first.append(cells["defines"].get(case.call.fn, f"the cell that defines {case.call.fn}"))
                break
            try:  # the arguments cross the wire as they do to the sandbox: the function gets its own copies
                frame = harness.make_call(ns, wire.unpack(wire.pack(case.call.as_data())), public)
            except BaseException as exc:  # the student's function raised: that is its result
                frame = {"error": exc}
                missing = _undefined_name(exc)
                if missing in cells["defines"]:
                    run_first.append(cells["defines"][missing])
            passed, message = case_defs.score(case, wire.unpack(wire.pack(frame)))
            if not passed:
                status = "failed"
                lines.append(f"{case.name}: {message}")
        results.append(TestResult(grade_id, points, status, "\n".join(lines)))
    return CheckReport(assignment, tuple(results), run_first=tuple(dict.fromkeys(run_first)))


def _undefined_name(exc: BaseException) -> str | None:
    return getattr(exc, "name", None) if isinstance(exc, NameError) else None


def _cells(notebook: Path) -> dict:
    """``{"defines": name -> how a student finds the cell that defines it}``, from the released notebook:
    the answer cells' functions and the names the setup and import cells bind."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    defines, heading = {}, "the top of the notebook"
    for cell in nb["cells"]:
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "markdown":
            titles = [line.lstrip("#").strip() for line in source.splitlines() if line.startswith("#")]
            heading = titles[0] if titles else heading
            continue
        if meta.get("grade") and not meta.get("solution"):
            continue  # a test cell defines nothing
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(a.asname or a.name).split(".")[0] for a in node.names]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if not names:  # a statement that binds nothing (the stub's `raise NotImplementedError()`)
                continue
            where = (f"the cell that defines {names[0]}, under \"{heading}\"" if meta.get("solution")
                     else f"the {meta.get('grade_id', 'import')} cell under \"{heading}\" (it defines {{}})")
            for name in names:
                defines.setdefault(name, where.replace("{}", name))
    return {"defines": defines}
