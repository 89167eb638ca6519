"""nbgrader's autograde for one student, inside that student's sandbox.

For assignments that have no trusted cases yet (``solutions/<name>/cases.py``):
nbgrader runs the hidden tests in the student's own kernel, so a student's
code can influence this verdict. It runs in a fresh sandbox per student, so
nothing carries over to the next student, and the supervisor checks what
it reports against the gradebook (:func:`read_result`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import warnings
from pathlib import Path

from gdcourse.check import GRADING_ENV


def nbgrader_config(course_root: Path, work: Path, *, db: Path, release: Path, cell_timeout: int,
                    autograded: Path | None = None):
    """The course's nbgrader_config.py with every stateful folder inside ``work``."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    overrides = Config()
    cd = overrides.CourseDirectory
    cd.root = str(work)
    cd.source_directory = str((course_root / "solutions").resolve())
    cd.release_directory = str(release)
    cd.submitted_directory = str(work / "submitted")
    cd.autograded_directory = str(autograded or work / "autograded")
    cd.feedback_directory = str(work / "feedback")
    cd.db_url = f"sqlite:///{db}"
    overrides.Execute.timeout = cell_timeout
    # a cell that prints megabytes keeps the client busy after the kernel replies;
    # nbgrader's 4 s wait for those messages turns a slow machine into a failed grade
    overrides.Execute.iopub_timeout = 120
    overrides.OverwriteCells.add_missing_cells = True  # a deleted test cell is graded anyway
    overrides.NbGraderAPI.log_level = "ERROR"
    config.merge(overrides)
    return config


def _api(config):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def prepare_template(course_root: Path, template: Path, assignment: str, cell_timeout: int) -> None:
    """A gradebook holding the assignment, and its release, made once per cohort."""
    template.mkdir(parents=True, exist_ok=True)
    config = nbgrader_config(course_root, template, db=template / "gradebook.db", release=template / "release",
                             cell_timeout=cell_timeout)
    made = _api(config).generate_assignment(assignment)
    if not made["success"]:
        raise RuntimeError(f"nbgrader could not register {assignment}:\n{made.get('error') or made.get('log')}")


def grade_one(student: str, notebook: Path, *, assignment: str, course_root: Path, template: Path,
              work: Path, cell_timeout: int) -> dict:
    """Autograde one notebook; return scores per test cell and what integrity checks found."""
    import nbformat
    from nbgrader.api import Gradebook

    from gdcourse.grading.integrity import reference_calls, scrub_for_feedback, tampered_cells

    here = work / "students" / student
    shutil.rmtree(here, ignore_errors=True)
    (here / "submitted" / student / assignment).mkdir(parents=True)
    db = here / "gradebook.db"
    shutil.copyfile(template / "gradebook.db", db)
    shutil.copyfile(notebook, here / "submitted" / student / assignment / f"{assignment}.ipynb")
    release_nb = nbformat.read(template / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    submitted_nb = nbformat.read(notebook, as_version=4)
    tampered = tampered_cells(submitted_nb, release_nb)

    config = nbgrader_config(course_root, here, db=db, release=template / "release", cell_timeout=cell_timeout)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's own SQLAlchemy use
        result = _api(config).autograde(assignment, student)
    seconds = time.perf_counter() - start
    if not result["success"]:
        log = (result.get("error") or "") + "\n" + (result.get("log") or "")
        died = "DeadKernelError" in log or "Kernel died" in log or "kernel died" in log
        print(f"autograde of {student} failed:\n{log}", file=sys.stderr, flush=True)  # worker.log
        last = next((l for l in reversed(log.strip().splitlines()) if l.strip()), "unknown error")
        return {"status": "crashed", "seconds": seconds, "tampered": tampered,
                "reason": ("the notebook's kernel died while grading (os._exit, a segfault or out of memory)"
                           if died else f"autograde failed: {last[:200]}")}

    graded_path = here / "autograded" / student / assignment / f"{assignment}.ipynb"
    autograded_nb = nbformat.read(graded_path, as_version=4)
    with Gradebook(config.CourseDirectory.db_url) as gb:
        sub = gb.find_submission(assignment, student)
        grades = {g.name: [g.score, g.max_score, bool(g.needs_manual_grade)] for nb in sub.notebooks for g in nb.grades}
        score, max_score = float(sub.score), float(sub.max_score)

    # feedback from a scrubbed copy: visible tests only, no hidden lines in tracebacks
    scrubbed = here / "scrubbed"
    target = scrubbed / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True)
    clean = nbformat.read(graded_path, as_version=4)
    scrub_for_feedback(clean, release_nb)
    nbformat.write(clean, target)
    feedback_config = nbgrader_config(course_root, here, db=db, release=template / "release",
                                      cell_timeout=cell_timeout, autograded=scrubbed)
    _generate_feedback(feedback_config, assignment, student)
    return {"status": "graded", "score": score, "max_score": max_score, "grades": grades, "seconds": seconds,
            "tampered": tampered, "reference_calls": reference_calls(autograded_nb),
            "autograded": str(graded_path), "feedback": str(here / "feedback" / student / assignment)}


def _generate_feedback(config, assignment: str, student: str) -> None:
    """nbgrader's generate_feedback for one student, with the HTML exporter built once per worker.

    nbgrader builds a new exporter (and compiles its Jinja templates) on every
    call, about 0.9 s; its own batch mode pays that once. A worker grades one
    student at a time, so it keeps one exporter and re-registers nbgrader's
    preprocessors on it for each student.
    """
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback
    from traitlets.config import Config

    global _Exporter
    if _Exporter is None:
        class _Exporter(HTMLExporter):
            _shared = None

            def __new__(cls, *args, **kwargs):
                if cls._shared is None:
                    cls._shared = super().__new__(cls, *args, **kwargs)
                return cls._shared

            def __init__(self, *args, **kwargs):
                if getattr(self, "_built", False):
                    # keep the exporter's own preprocessors; nbgrader registers this student's next
                    self._preprocessors = self._preprocessors[:self._own]
                    return
                super().__init__(*args, **kwargs)
                self._own, self._built = len(self._preprocessors), True

    from nbgrader.coursedir import CourseDirectory
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = assignment, student
    app = GenerateFeedback(coursedir=coursedir, config=config)
    extra = Config()
    extra.HTMLExporter.template_name = "feedback"
    app.update_config(extra)
    app.exporter_class = _Exporter
    app.force = True
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not in session.*")
        app.start()


_Exporter = None


def main(argv=None) -> None:
    """Grade one student (inside the sandbox) and write one JSON line to the result fd, the last argument."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--assignment", required=True)
    parser.add_argument("--course-root", type=Path, required=True)
    parser.add_argument("--template", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--cell-timeout", type=int, required=True)
    parser.add_argument("--student", required=True)
    parser.add_argument("--notebook", type=Path, required=True)
    parser.add_argument("result_fd", type=int)
    args = parser.parse_args(argv)
    # every tool the kernel or nbgrader runs keeps its state in the writable work folder
    for name, sub in (("HOME", "home"), ("TMPDIR", "tmp"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                      ("MPLCONFIGDIR", "mpl"), ("IPYTHONDIR", "ipython")):
        os.environ[name] = str(args.work / sub)
        (args.work / sub).mkdir(parents=True, exist_ok=True)
    os.environ[GRADING_ENV] = "1"  # the notebooks' self-check cells stand down: their tests run graded anyway
    out = os.fdopen(args.result_fd, "w", buffering=1)
    try:
        result = grade_one(args.student, args.notebook, assignment=args.assignment, course_root=args.course_root,
                           template=args.template, work=args.work, cell_timeout=args.cell_timeout)
    except Exception as exc:  # this student gets a reason
        result = {"status": "crashed", "reason": f"grading error: {type(exc).__name__}: {str(exc)[:200]}"}
    result.pop("autograded", None)
    result.pop("feedback", None)
    out.write(json.dumps(result) + "\n")
    out.close()


def read_result(output: bytes, template: Path, assignment: str) -> dict | None:
    """The worker's result, checked against the gradebook (cells, points), or None if it is not one.

    It came from inside the sandbox: every key, type and score is checked, nothing is taken as a path."""
    from nbgrader.api import Gradebook

    try:
        result = json.loads(output.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError, UnicodeDecodeError):
        return None
    if not isinstance(result, dict) or result.get("status") not in ("graded", "crashed"):
        return None
    clean = {"status": result["status"], "tampered": [str(t)[:200] for t in result.get("tampered", [])
                                                      if isinstance(t, str)][:50]}
    if result["status"] == "crashed":
        clean["reason"] = str(result.get("reason", ""))[:300]
        return clean
    with Gradebook(f"sqlite:///{template / 'gradebook.db'}") as gb:
        cells = {c.name: float(c.max_score) for nb in gb.find_assignment(assignment).notebooks for c in nb.grade_cells}
    grades = result.get("grades")
    if not isinstance(grades, dict) or set(grades) != set(cells):
        return None
    checked = {}
    for name, value in grades.items():
        if not (isinstance(value, list) and len(value) == 3):
            return None
        score, _, manual = value
        score = 0.0 if score is None else score
        if type(score) not in (int, float) or not 0 <= score <= cells[name] or type(manual) is not bool:
            return None
        checked[name] = [float(score), cells[name], manual]
    refs = [r for r in result.get("reference_calls", []) if r in cells]
    clean.update(grades=checked, max_score=sum(cells.values()),
                 score=sum(s for s, _, m in checked.values() if not m),
                 zeroed={r: ["calls the course library's reference implementation"] for r in refs})
    return clean


if __name__ == "__main__":
    main()
