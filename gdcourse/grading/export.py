"""What the grader writes for other tools: CSV files a spreadsheet or an LMS reads safely, and
nbgrader's own gradebook (for formgrader), updated from the per-student results so that
re-running never duplicates a grade and never loses one given by hand. The gradebook starts
from a template nbgrader makes once per cohort (:func:`prepare_template`), holding the
assignment, its cells and points."""

from __future__ import annotations

import csv
import os
from pathlib import Path


def defused(value) -> str:
    """A CSV cell that a spreadsheet shows as text: a leading = + - @ (or tab, CR) would start a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_number(text) else text


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def write_csv(columns, rows: list[dict], path: Path) -> None:
    """``rows`` (dicts) under ``columns``, every cell defused, written atomically (UTF-8, comma, CRLF as RFC 4180)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
        writer.writeheader()
        for r in rows:
            writer.writerow({k: defused(r.get(k)) for k in columns})
    os.replace(tmp, path)


def prepare_template(course_root: Path, template: Path, assignment: str) -> None:
    """``template/gradebook.db`` holding the assignment, and its release in ``template/release``, by nbgrader."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    template.mkdir(parents=True, exist_ok=True)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    overrides = Config()
    cd = overrides.CourseDirectory
    cd.root = str(template)  # every stateful folder of nbgrader's inside the template
    cd.source_directory = str((course_root / "solutions").resolve())
    cd.release_directory = str(template / "release")
    cd.db_url = f"sqlite:///{template / 'gradebook.db'}"
    overrides.NbGraderAPI.log_level = "ERROR"
    config.merge(overrides)
    made = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config).generate_assignment(assignment)
    if not made["success"]:
        raise RuntimeError(f"nbgrader could not register {assignment}:\n{made.get('error') or made.get('log')}")


def assignment_max_score(db: Path, assignment: str) -> float:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{db}", course_id="gdcourse") as gb:
        return float(gb.find_assignment(assignment).max_score)


def gradebook(db: Path, template_db: Path, assignment: str, results: dict[str, dict], *,
              rereview: dict[str, list[str]] | None = None) -> None:
    """Write every graded student's automatic scores into nbgrader's gradebook at ``db``.

    Starts from the template (which holds the assignment and its cells) when ``db`` does not exist
    yet; updates rows in place otherwise. What formgrader set by hand (scores, overrides, extra
    credit, comments) is kept, except that a written answer in ``rereview[student]`` (changed since
    the last run) is queued for hand grading again, its earlier score still shown.
    """
    import shutil
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    rereview = rereview or {}
    if not db.is_file():
        shutil.copyfile(template_db, db)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's own SQLAlchemy use
        with Gradebook(f"sqlite:///{db}", course_id="gdcourse") as gb:
            for student, result in sorted(results.items()):
                gb.update_or_create_student(student)
                try:
                    gb.find_submission(assignment, student)
                except MissingEntry:
                    gb.add_submission(assignment, student)
                for name, (score, _, by_hand) in result.grades.items():
                    g = gb.find_grade(name, assignment, assignment, student)
                    g.auto_score = None if by_hand else score
                    if by_hand:  # a written answer: formgrader's rule, queued until a score is given
                        g.needs_manual_grade = g.manual_score is None or name in rereview.get(student, ())
                    else:
                        g.needs_manual_grade = False
                gb.db.commit()
