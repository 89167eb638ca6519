"""nbgrader configuration for the course repository.

solutions/ is nbgrader's source (reference solutions and visible tests; the
hidden cases are in each assignment's cases.py, never released); exercises/ is
the student release generated from it and committed. Grading state of the
nbgrader exchange (submitted/, autograded/, feedback/, the gradebook) never
lives in the repository: by default under ~/.cache/gdcourse/grading, or
wherever GDCOURSE_GRADING_DIR points. `gdcourse grade` keeps everything in its
--out folder, and `gdcourse formgrader OUT` writes OUT/nbgrader_config.py,
which loads this file and then points every folder into OUT.
"""

import os
import sys

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

here = os.path.dirname(os.path.abspath(__file__))
grading = os.environ.get("GDCOURSE_GRADING_DIR", os.path.expanduser("~/.cache/gdcourse/grading"))

# What nbgrader's commands need on a fresh machine, run as .venv/bin/nbgrader without activating the venv:
# the gradebook's folder (`nbgrader collect` does not make it) and this venv's `alembic` on PATH.
os.makedirs(grading, exist_ok=True)
scripts = os.path.dirname(sys.executable)
if scripts not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")

c.CourseDirectory.root = here
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.submitted_directory = os.path.join(grading, "submitted")
c.CourseDirectory.autograded_directory = os.path.join(grading, "autograded")
c.CourseDirectory.feedback_directory = os.path.join(grading, "feedback")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(grading, "gradebook.db")
c.CourseDirectory.course_id = "gdcourse"

# Release notebooks carry no outputs, and the stub students replace is explicit.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearOutput.enabled = True

# solutions/<name>/cases.py holds the judge's trusted cases (and the reference they compute), and
# variants.py the mutants the cases are tested against: neither goes into the student release,
# nor anywhere a submission runs.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "cases.py", "variants.py"]
