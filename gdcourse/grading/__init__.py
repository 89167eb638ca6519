"""Cohort grading over nbgrader: intake, sandboxed parallel autograding,
integrity checks, leak-free feedback and export.

- :mod:`.intake`    find each student's notebook (folders, LMS zips, a roster)
- :mod:`.sandbox`   no network, read-only outside the worker's folder; memory/time watch
- :mod:`.worker`    a long-lived nbgrader process that grades one notebook at a time
- :mod:`.integrity` tampered tests, reference calls, hidden tests kept out of feedback
- :mod:`.cohort`    the supervisor: parallel workers, limits, resumable results
- :mod:`.export`    the CSV and nbgrader's gradebook
"""

from gdcourse.grading.cohort import STATUSES, GradeRow, Limits, grade
from gdcourse.grading.intake import collect, notebook_problem

__all__ = ["STATUSES", "GradeRow", "Limits", "grade", "collect", "notebook_problem"]
