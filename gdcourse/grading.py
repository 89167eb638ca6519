"""Grade a cohort: autograde every submission with nbgrader, write feedback,
export a CSV with a row for every student.

nbgrader is the engine (gradebook, autograde, feedback). This module adds the
intake of a folder of submissions, a status and a human-readable reason for
every student, and an export that an instructor can paste into a gradebook.
All grading state lives in one output folder, never in the course repository.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

CSV_FIELDS = ("student", "score", "max_score", "status", "reason")


@dataclass(frozen=True)
class GradeRow:
    student: str
    score: float | None
    max_score: float | None
    status: str  # graded | missing | invalid notebook | failed
    reason: str = ""


# --- intake ----------------------------------------------------------------

def find_submission(folder: Path, assignment: str) -> Path | None:
    """The notebook a student handed in, by the layouts students actually use.

    ``<student>/<assignment>.ipynb``, ``<student>/<assignment>/<assignment>.ipynb``
    (nbgrader's own), or the only notebook anywhere in the student's folder.
    """
    for candidate in (folder / f"{assignment}.ipynb", folder / assignment / f"{assignment}.ipynb"):
        if candidate.is_file():
            return candidate
    found = [p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    return found[0] if len(found) == 1 else None


def collect(submissions_dir: Path, assignment: str) -> dict[str, Path | None]:
    """Map each student to their notebook (or None): one folder per student,
    or loose ``<student>.ipynb`` files."""
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise FileNotFoundError(f"submissions folder {submissions_dir} does not exist")
    found: dict[str, Path | None] = {}
    for entry in sorted(submissions_dir.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            found[entry.name] = find_submission(entry, assignment)
        elif entry.suffix == ".ipynb":
            found[entry.stem] = entry
    return found


def notebook_problem(path: Path) -> str | None:
    """Why a file is not a gradable notebook, or None if it is."""
    try:
        nb = nbformat.read(path, as_version=4)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return f"not valid notebook JSON ({type(exc).__name__}: {str(exc)[:120]})"
    except Exception as exc:
        return f"unreadable notebook ({type(exc).__name__}: {str(exc)[:120]})"
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        return f"invalid notebook structure ({str(exc).splitlines()[0][:120]})"
    return None


# --- nbgrader ----------------------------------------------------------------

def nbgrader_config(course_root: Path, work: Path, *, cell_timeout: int):
    """The course's nbgrader_config.py, with every stateful folder moved into ``work``."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    overrides = Config()
    cd = overrides.CourseDirectory
    cd.root = str(work)
    cd.source_directory = str((course_root / "solutions").resolve())
    cd.release_directory = str(work / "release")
    cd.submitted_directory = str(work / "submitted")
    cd.autograded_directory = str(work / "autograded")
    cd.feedback_directory = str(work / "feedback")
    cd.db_url = f"sqlite:///{work / 'gradebook.db'}"
    overrides.Execute.timeout = cell_timeout
    overrides.NbGraderAPI.log_level = "ERROR"
    config.merge(overrides)
    return config


def _why(grades) -> str:
    lost = [g.name for g in grades if not g.needs_manual_grade and g.max_score and (g.score or 0) < g.max_score]
    manual = sum(g.max_score for g in grades if g.needs_manual_grade)
    parts = []
    if lost:
        parts.append("lost points in " + ", ".join(lost))
    if manual:
        parts.append(f"{manual:g} point(s) await manual grading")
    return "; ".join(parts)


def grade(assignment: str, submissions_dir: Path | str, out_dir: Path | str, *,
          course_root: Path | str = ".", cell_timeout: int = 120, progress=print) -> list[GradeRow]:
    """Autograde every submission of ``assignment`` in ``submissions_dir``.

    Writes ``out_dir/grades.csv``, nbgrader's gradebook ``out_dir/gradebook.db``
    and per-student feedback under ``out_dir/feedback``. One bad submission
    never stops the batch: it gets a row with a status and a reason.
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    _put_own_scripts_on_path()
    course_root, work = Path(course_root).resolve(), Path(out_dir).resolve()
    source = course_root / "solutions" / assignment / f"{assignment}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"unknown assignment {assignment!r}: no {source}")
    work.mkdir(parents=True, exist_ok=True)
    config = nbgrader_config(course_root, work, cell_timeout=cell_timeout)
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    made = api.generate_assignment(assignment)
    if not made["success"]:
        raise RuntimeError(f"nbgrader could not register {assignment}:\n{made.get('error') or made.get('log')}")

    with warnings.catch_warnings():
        # nbgrader's own SQLAlchemy usage warns on every autograde; nothing for us to act on.
        warnings.filterwarnings("ignore", message=".*not in session.*")
        rows = _grade_each(api, config, assignment, collect(Path(submissions_dir), assignment), work, progress)

    max_score = next((r.max_score for r in rows if r.max_score is not None), None)
    rows = [r if r.max_score is not None else GradeRow(**{**asdict(r), "max_score": max_score}) for r in rows]
    write_csv(rows, work / "grades.csv")
    return rows


def _grade_each(api, config, assignment, submissions, work, progress) -> list[GradeRow]:
    from nbgrader.api import Gradebook

    rows: list[GradeRow] = []
    for student, notebook in submissions.items():
        if notebook is None:
            rows.append(GradeRow(student, 0.0, None, "missing", f"no single {assignment}.ipynb in the student's folder"))
        elif problem := notebook_problem(notebook):
            rows.append(GradeRow(student, 0.0, None, "invalid notebook", problem))
        else:
            target = work / "submitted" / student / assignment / f"{assignment}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, target)
            result = api.autograde(assignment, student)
            if not result["success"]:
                last = (result.get("error") or result.get("log") or "unknown error").strip().splitlines()[-1]
                rows.append(GradeRow(student, 0.0, None, "failed", f"autograde failed: {last[:200]}"))
            else:
                api.generate_feedback(assignment, student)
                with Gradebook(config.CourseDirectory.db_url) as gb:
                    sub = gb.find_submission(assignment, student)
                    grades = [g for nb in sub.notebooks for g in nb.grades]
                    rows.append(GradeRow(student, float(sub.score), float(sub.max_score), "graded", _why(grades)))
        progress(f"{rows[-1].student:24} {rows[-1].status:16} {_score(rows[-1])}")
    return rows


def _put_own_scripts_on_path() -> None:
    """nbgrader runs the ``alembic`` script by name; with an un-activated venv
    (``.venv/bin/gdcourse grade ...``) it is not on PATH, so put it there."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def _score(row: GradeRow) -> str:
    return "" if row.max_score is None else f"{row.score:g} / {row.max_score:g}"


def write_csv(rows: list[GradeRow], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in asdict(r).items()})
