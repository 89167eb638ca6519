"""What leaves the grader: the CSV an instructor pastes into a gradebook, and
nbgrader's own gradebook (for formgrader and `nbgrader export`), both rebuilt
from the per-student results so that re-running never duplicates a grade.
The gradebook starts from a template nbgrader makes once per cohort
(:func:`prepare_template`), holding the assignment, its cells and points."""

from __future__ import annotations

import csv
import os
from dataclasses import asdict
from pathlib import Path

CSV_FIELDS = ("student", "score", "max_score", "status", "reason")


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


def write_csv(rows, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: defused(v) for k, v in asdict(r).items()})
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
    with Gradebook(f"sqlite:///{db}") as gb:
        return float(gb.find_assignment(assignment).max_score)


def gradebook(db: Path, template_db: Path, assignment: str, results: dict[str, dict]) -> None:
    """Write every graded student's automatic scores into nbgrader's gradebook at ``db``.

    Starts from the template (which holds the assignment and its cells) when
    ``db`` does not exist yet; updates rows in place otherwise.
    """
    import shutil
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    if not db.is_file():
        shutil.copyfile(template_db, db)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's own SQLAlchemy use
        with Gradebook(f"sqlite:///{db}") as gb:
            for student, result in sorted(results.items()):
                if not result or result.get("status") != "graded":
                    continue
                gb.update_or_create_student(student)
                try:
                    gb.find_submission(assignment, student)
                except MissingEntry:
                    gb.add_submission(assignment, student)
                for name, (score, _, manual) in result["grades"].items():
                    g = gb.find_grade(name, assignment, assignment, student)
                    g.auto_score = None if manual else score
                    g.needs_manual_grade = bool(manual)
                gb.db.commit()
