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
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from gdcourse.grading import export, grades, sandbox
from gdcourse.grading.grades import GradeRow
from gdcourse.grading.intake import Roster, Student, collect, notebook_problem, read_roster
from gdcourse.grading.verdict import Verdict


@dataclass(frozen=True)
class Limits:
    cell_seconds: int = 300  # one cell, or one call of a graded function
    notebook_seconds: int = 900  # the whole submission, start to verdict
    memory_mb: int = 4096  # the student's sandbox: every process in it


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made on this machine, and the instructor did not choose --no-isolation."""


def grade(assignment: str, submissions: Path | str, out_dir: Path | str, *, course_root: Path | str = ".",
          jobs: int | None = None, roster: Path | str | list[str] | Roster | None = None, limits: Limits = Limits(),
          isolate: bool | None = None, seed: int | None = None, due: str | None = None,
          canvas_column: str | None = None, progress=None) -> list[GradeRow]:
    """Grade every submission of ``assignment`` found in ``submissions`` (a folder or an LMS download).

    Writes into ``out_dir``: ``grades.csv`` (a row for every student found or on the ``roster``),
    the LMS grade files (``lms/``), ``warnings.txt``, nbgrader's ``gradebook.db`` (hand grades
    made in formgrader are kept across re-runs), ``feedback/<student>/`` and ``autograded/<student>/``.
    ``isolate`` defaults to True; where no sandbox can be made that raises
    :class:`SandboxUnavailable` with what fixes it, unless ``isolate=False`` is chosen explicitly.
    ``seed`` fixes the hidden inputs (default: fresh each run, recorded in every result). ``due``
    (ISO time) decides lateness and ``canvas_column`` names the assignment in Canvas's file; both are
    kept for later runs. ``progress(line, total)`` hears of each student as they finish.
    """
    from gdcourse.grading import cases as case_defs

    progress = progress or _quiet
    course_root, out = Path(course_root).resolve(), Path(out_dir).resolve()
    source = course_root / "solutions" / assignment / f"{assignment}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"unknown assignment {assignment!r}: no {source}")
    grades.parse_due(due)  # a bad date stops here, before any work
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
    if isinstance(roster, (str, Path)):
        roster = read_roster(roster)
    elif isinstance(roster, list):
        roster = Roster(tuple(Student(s) for s in sorted(set(roster))))
    out.mkdir(parents=True, exist_ok=True)
    found = collect(submissions, assignment, work=out, roster=roster)
    for student, sub in found.submissions.items():  # a file that is not a notebook is a row, not a crash
        if sub.notebook is not None and (problem := notebook_problem(sub.notebook)):
            found.submissions[student] = replace(sub, notebook=None, status="invalid notebook",
                                                 problem="; ".join(p for p in (problem, sub.problem) if p))
    grades.save_intake(out, assignment, found, roster, due=due, canvas_column=canvas_column)
    settings = _fingerprint([source, source.parent / "cases.py", Path(public.__file__)], limits, isolate)
    results = out / "results"
    results.mkdir(exist_ok=True)
    key = _key(out)

    todo: list[tuple[str, Path, str]] = []
    rereview: dict[str, list[str]] = {}
    total = sum(sub.notebook is not None for sub in found.submissions.values())
    for student, sub in found.submissions.items():
        if sub.notebook is None:
            continue
        digest = hashlib.sha256(sub.notebook.read_bytes()).hexdigest()
        previous = _read_result(results / f"{student}.json", key)
        if previous and previous.sha256 == digest and previous.settings == settings:
            progress(_line(student, previous, "(kept)"), total)
        else:
            todo.append((student, sub.notebook, digest))
            if previous and previous.answers:
                rereview[student] = previous.answers

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
            result = replace(result, settings=settings, isolated=isolate)
            _write_result(results / f"{student}.json", result, key)
            progress(_line(student, result), total)

    stored = stored_results(out)
    changed = {s: _changed_answers(old, stored[s]) for s, old in rereview.items() if s in stored}
    export.gradebook(out / "gradebook.db", template / "gradebook.db", assignment,
                     {s: r for s, r in stored.items() if s in found.submissions and r.graded},
                     rereview=changed)
    rows = grades.final(out, stored)
    grades.write(out, rows)
    from gdcourse.grading.feedback import write_pages
    write_pages(out, stored)
    return rows


def _quiet(line: str, total: int | None) -> None:
    pass


def _changed_answers(old: list, new: Verdict) -> list[str]:
    """The written answers that differ between two verdicts of one student (to be graded by hand again)."""
    before, after = dict(old), dict(new.answers)
    return [gid for gid in new.written if before.get(gid) != after.get(gid)]


# --- results -----------------------------------------------------------------

def stored_results(out_dir: Path | str) -> dict[str, Verdict]:
    """Every authentic stored verdict of a grading folder, by student (for review and for tests)."""
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


def _read_result(path: Path, key: bytes) -> Verdict | None:
    """A stored verdict, only if it is authentic (written by this grading folder's supervisor)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        body, mac = stored["result"], stored["mac"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(key, body)):
        return None
    try:
        return Verdict.from_json(json.loads(body))
    except (ValueError, TypeError):  # signed by an older grader with another shape: graded again
        return None


def _write_result(path: Path, result: Verdict, key: bytes) -> None:
    body = json.dumps(result.to_json(), sort_keys=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"result": body, "mac": _mac(key, body)}), encoding="utf-8")
    os.replace(tmp, path)


def _line(student: str, result: Verdict, note: str = "") -> str:
    score = f"{result.score:g} / {result.max_score:g}" if result.graded else ""
    return f"{student:24} {result.status:16} {score:12} {note}".rstrip()


def _prepare(course_root: Path, template: Path, assignment: str, limits: Limits, settings: str) -> None:
    if (template / "settings").is_file() and (template / "settings").read_text() == settings \
            and (template / "gradebook.db").is_file():
        return
    from gdcourse.grading.export import prepare_template
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
                    result = Verdict("crashed", f"the grader failed: {type(exc).__name__}: {str(exc)[:200]}")
                result = replace(result, sha256=digest)
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

    from gdcourse.grading import integrity, judge
    from gdcourse.grading.feedback import MAX_ANSWER

    def grade_one(student: str, notebook: Path) -> Verdict:
        result = judge.grade(student, notebook, spec, out / "work" / student, run_seed=run_seed,
                             cell_seconds=limits.cell_seconds, notebook_seconds=limits.notebook_seconds,
                             memory_mb=limits.memory_mb, isolate=isolate)
        submitted = nbformat.read(notebook, as_version=4)
        # what the feedback page shows of the student's work, kept with the verdict (read as data)
        answers = [(c.metadata["nbgrader"]["grade_id"], c.source[:MAX_ANSWER + 1]) for c in submitted.cells
                   if c.metadata.get("nbgrader", {}).get("solution")]
        graded = out / "autograded" / student / spec.name / f"{spec.name}.ipynb"
        graded.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(integrity.for_review(submitted, spec.release), graded)
        return replace(result, answers=answers, written=sorted(spec.manual),
                       max_score=spec.max_score if result.max_score is None else result.max_score)

    return grade_one
