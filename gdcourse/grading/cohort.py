"""Grade a cohort: every student gets a row, whatever their notebook does.

Students are graded in parallel (one per core by default), each in a fresh
sandbox of their own (:mod:`gdcourse.grading.sandbox`), by the judge
(:mod:`gdcourse.grading.judge`) from the assignment's trusted cases
(``solutions/<name>/cases.py``): the verdict is computed here, never in the
student's process.

Each student's result is written to ``results/<student>.json`` the moment
it is known (atomically), with an HMAC whose key never enters a sandbox. A
re-run reuses every authentic result whose submission and settings are
unchanged, so grading is idempotent and a batch killed midway (even with
``kill -9``) resumes where it stopped; a forged or altered result is graded
again. The CSV, the gradebook and the feedback pages are built from those
results.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import queue
import secrets
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from gdcourse.grading import export, sandbox
from gdcourse.grading.intake import DEFAULT_ZIP_PATTERN, collect, notebook_problem, read_roster

STATUSES = ("graded", "tampered", "flagged", "timed out", "crashed", "invalid notebook", "missing")
NO_ISOLATION = "graded without isolation (--no-isolation)"


@dataclass(frozen=True)
class GradeRow:
    student: str
    score: float | None
    max_score: float | None
    status: str  # one of STATUSES
    reason: str = ""


@dataclass(frozen=True)
class Limits:
    cell_seconds: int = 300  # one cell, or one call of a graded function
    notebook_seconds: int = 900  # the whole submission, start to verdict
    memory_mb: int = 4096  # the student's sandbox: every process in it


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made on this machine, and the instructor did not choose --no-isolation."""


def grade(assignment: str, submissions: Path | str, out_dir: Path | str, *, course_root: Path | str = ".",
          jobs: int | None = None, roster: Path | str | list[str] | None = None, limits: Limits = Limits(),
          isolate: bool | None = None, zip_pattern: str = DEFAULT_ZIP_PATTERN, seed: int | None = None,
          progress=print) -> list[GradeRow]:
    """Grade every submission of ``assignment`` found in ``submissions`` (a folder or an LMS zip).

    Writes into ``out_dir``: ``grades.csv`` (a row for every student found or
    on the ``roster``), nbgrader's ``gradebook.db``, ``feedback/<student>/``
    and ``autograded/<student>/``. ``isolate`` defaults to True; where no
    sandbox can be made that raises :class:`SandboxUnavailable` with what
    fixes it, unless ``isolate=False`` is chosen explicitly. ``seed`` fixes
    the hidden inputs (default: fresh each run, recorded in every result).
    """
    from gdcourse.grading import cases as case_defs

    course_root, out = Path(course_root).resolve(), Path(out_dir).resolve()
    source = course_root / "solutions" / assignment / f"{assignment}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"unknown assignment {assignment!r}: no {source}")
    if isolate is None or isolate:
        ok, why = sandbox.availability()
        if not ok:
            raise SandboxUnavailable(f"cannot grade in a sandbox here: {why} "
                                     "To grade without one, pass --no-isolation (every row will say so).")
        isolate = True
    module, public = case_defs.load(course_root, assignment), case_defs.public(assignment)
    if module is None or public is None:
        raise FileNotFoundError(f"{assignment} has no cases to grade by: solutions/{assignment}/cases.py and "
                                f"gdcourse.grading.assignments.{case_defs.module_name(assignment)} are both needed")
    out.mkdir(parents=True, exist_ok=True)
    found = collect(submissions, assignment, work=out, zip_pattern=zip_pattern)
    students = set(found)
    if roster is not None:
        students |= set(read_roster(roster) if isinstance(roster, (str, Path)) else roster)
    settings = _fingerprint([source, source.parent / "cases.py", Path(public.__file__)], limits, isolate)
    results = out / "results"
    results.mkdir(exist_ok=True)
    key = _key(out)

    rows: dict[str, GradeRow] = {}
    todo: list[tuple[str, Path, str]] = []
    for student in sorted(students):
        sub = found.get(student)
        if sub is None:
            rows[student] = GradeRow(student, 0.0, None, "missing", "on the roster, but no submission was found")
        elif sub.notebook is None:
            rows[student] = GradeRow(student, 0.0, None, sub.status or "missing", sub.problem or "no notebook found")
        elif problem := notebook_problem(sub.notebook):
            rows[student] = GradeRow(student, 0.0, None, "invalid notebook", problem)
        else:
            digest = hashlib.sha256(sub.notebook.read_bytes()).hexdigest()
            previous = _read_result(results / f"{student}.json", key)
            if previous and previous.get("sha256") == digest and previous.get("settings") == settings:
                rows[student] = _row(student, previous)
                progress(_line(rows[student], "(kept)"))
            else:
                todo.append((student, sub.notebook, digest))

    template = out / "template"
    if todo or not (template / "gradebook.db").is_file():
        _prepare(course_root, template, assignment, limits, settings)
    release = template / "release" / assignment / f"{assignment}.ipynb"
    if todo:
        run_seed = secrets.randbits(63) if seed is None else seed
        from gdcourse.grading.judge import Assignment
        spec = Assignment.load(assignment, release, module, public)
        spec.draw(0)  # a broken cases.py stops here, before any student, with its reason
        grade_one = _judged(spec, out, limits, isolate, run_seed)
        for student, result in _parallel(todo, grade_one, jobs or os.cpu_count() or 1):
            result["settings"] = settings
            result["isolated"] = isolate
            _write_result(results / f"{student}.json", result, key)
            rows[student] = _row(student, result)
            progress(_line(rows[student]))

    from gdcourse.grading.export import assignment_max_score
    max_score = assignment_max_score(template / "gradebook.db", assignment)
    final = [r if r.max_score is not None else GradeRow(r.student, r.score, max_score, r.status, r.reason)
             for _, r in sorted(rows.items())]
    export.gradebook(out / "gradebook.db", template / "gradebook.db", assignment,
                     {s: _read_result(results / f"{s}.json", key) for s, r in rows.items()
                      if r.status in ("graded", "tampered", "flagged")})
    export.write_csv(final, out / "grades.csv")
    return final


# --- results -----------------------------------------------------------------

def stored_results(out_dir: Path | str) -> dict[str, dict]:
    """Every authentic stored result of a grading folder, by student (for review and for tests)."""
    out = Path(out_dir)
    key = _key(out)
    found = {p.stem: _read_result(p, key) for p in sorted((out / "results").glob("*.json"))}
    return {student: result for student, result in found.items() if result is not None}


def _fingerprint(files: list, limits: Limits, isolate: bool) -> str:
    """What decides a grade besides the notebook: the source, both case modules, the limits."""
    h = hashlib.sha256()
    for path in files:
        if path.is_file():
            h.update(path.read_bytes())
    h.update(repr((limits, isolate)).encode())
    return h.hexdigest()[:16]


def _key(out: Path) -> bytes:
    """The HMAC key of this grading folder: made once, readable by the instructor only, never in a sandbox."""
    path = out / ".results-key"
    if not path.is_file():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
    return path.read_bytes()


def _mac(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def _read_result(path: Path, key: bytes) -> dict | None:
    """A stored result, only if it is authentic (written by this grading folder's supervisor)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        body, mac = stored["result"], stored["mac"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(key, body)):
        return None
    result = json.loads(body)
    return result if isinstance(result, dict) else None


def _write_result(path: Path, result: dict, key: bytes) -> None:
    body = json.dumps(result, sort_keys=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"result": body, "mac": _mac(key, body)}), encoding="utf-8")
    os.replace(tmp, path)


def _row(student: str, r: dict) -> GradeRow:
    tail = [] if r.get("isolated", True) else [NO_ISOLATION]
    if r["status"] != "graded":
        return GradeRow(student, 0.0, r.get("max_score"), r["status"], "; ".join([r.get("reason", ""), *tail]))
    grades = r["grades"]
    lost = [name for name, (score, top, manual) in grades.items() if not manual and top and (score or 0) < top]
    manual = sum(top for _, (_, top, m) in grades.items() if m)
    parts, status = [], "graded"
    if r.get("tampered"):
        status = "tampered"
        parts.append("cells changed by the student: " + ", ".join(r["tampered"]) + " (graded with the released cells)")
    if r.get("zeroed"):
        status = "flagged" if status == "graded" else status
        parts.append("; ".join(f"{test} scores 0: {', '.join(why)}" for test, why in r["zeroed"].items()))
    if r.get("flags"):
        status = "flagged" if status == "graded" else status
        parts.append("for review: " + ", ".join(r["flags"]))
    if lost:
        parts.append("lost points in " + ", ".join(lost))
    if manual:
        parts.append(f"{manual:g} point(s) await manual grading")
    return GradeRow(student, r["score"], r["max_score"], status, "; ".join(parts + tail))


def _line(row: GradeRow, note: str = "") -> str:
    score = "" if row.max_score is None else f"{row.score:g} / {row.max_score:g}"
    return f"{row.student:24} {row.status:16} {score:12} {note}".rstrip()


def _prepare(course_root: Path, template: Path, assignment: str, limits: Limits, settings: str) -> None:
    if (template / "settings").is_file() and (template / "settings").read_text() == settings \
            and (template / "gradebook.db").is_file():
        return
    from gdcourse.grading.export import prepare_template
    # nbgrader runs the `alembic` script by name; with an un-activated venv
    # (`.venv/bin/gdcourse grade ...`) it is not on PATH unless we put it there.
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    shutil.rmtree(template, ignore_errors=True)
    prepare_template(course_root, template, assignment)
    (template / "settings").write_text(settings)


def _parallel(todo, grade_one, jobs):
    """Yield (student, result) as they finish; an exception becomes that student's `crashed` row."""
    pending: queue.Queue = queue.Queue()
    for item in todo:
        pending.put(item)
    done: queue.Queue = queue.Queue()
    n = max(1, min(jobs, len(todo)))

    def slot():
        try:
            while True:
                try:
                    student, notebook, digest = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    result = grade_one(student, notebook)
                except Exception as exc:  # never lose a student: a row with the reason, and on to the next
                    result = {"status": "crashed", "reason": f"the grader failed: {type(exc).__name__}: {str(exc)[:200]}"}
                result["sha256"] = digest
                done.put((student, result))
        finally:
            done.put(None)

    threads = [threading.Thread(target=slot, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    finished = 0
    while finished < n:
        item = done.get()
        if item is None:
            finished += 1
        else:
            yield item
    for t in threads:
        t.join()


# --- the judge -------------------------------------------------------------------

def _judged(spec, out: Path, limits: Limits, isolate: bool, run_seed: int):
    import nbformat

    from gdcourse.grading import feedback, integrity, judge

    def grade_one(student: str, notebook: Path) -> dict:
        result = judge.grade(student, notebook, spec, out / "work" / student, run_seed=run_seed,
                             cell_seconds=limits.cell_seconds, notebook_seconds=limits.notebook_seconds,
                             memory_mb=limits.memory_mb, isolate=isolate)
        submitted = nbformat.read(notebook, as_version=4)
        answers = [(c.metadata["nbgrader"]["grade_id"], c.source) for c in submitted.cells
                   if c.metadata.get("nbgrader", {}).get("solution")]
        page = out / "feedback" / student / spec.name / f"{spec.name}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(feedback.page(student, spec.name, result, answers), encoding="utf-8")
        graded = out / "autograded" / student / spec.name / f"{spec.name}.ipynb"
        graded.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(integrity.for_review(submitted, spec.release), graded)
        result.setdefault("max_score", spec.max_score)
        return result

    return grade_one
