"""Cohort grading: a judge in the manner of contest systems (CMS with isolate, DOMjudge).

- :mod:`.lms`       what each LMS names its downloads, and the grade files it takes back
- :mod:`.intake`    find each student's notebook (folders, LMS downloads) and match it to the roster
- :mod:`.integrity` tampered cells and the static check of answer cells (trusted, reads data only)
- :mod:`.cases`     the case vocabulary: calls, checks, tolerances, scoring (judge and self-check alike)
- :mod:`.assignments` one public module per assignment: references, probes, case builders, visible cases
- :mod:`.wire`      values as data across the sandbox wall (npz, no pickle)
- :mod:`.harness`   the untrusted side: runs a notebook's cells and the calls in the sandbox
- :mod:`.sandbox`   a fresh bubblewrap sandbox per student, with its limits
- :mod:`.judge`     the trusted side for one student: job in, frames back, every case scored here
- :mod:`.feedback`  the student's page, from the grader's data only
- :mod:`.contained` trusted code on a student's data (an exported graph) in a sandbox of its own
- :mod:`.cohort`    the supervisor: parallel sandboxes, authenticated resumable results
- :mod:`.export`    safe CSV files and nbgrader's gradebook (its template made by nbgrader)
- :mod:`.grades`    final grades: automatic + hand grades + intake facts, grades.csv and the LMS files
- :mod:`.formgrader` nbgrader's formgrader on one graded cohort, for the written answers

The package imports nothing heavy itself, so the harness starts fast in the sandbox.
"""

__all__ = ["STATUSES", "GradeRow", "Limits", "grade", "collect", "notebook_problem"]


def __getattr__(name):
    if name in ("STATUSES", "GradeRow"):
        from gdcourse.grading import grades
        return getattr(grades, name)
    if name in ("Limits", "grade"):
        from gdcourse.grading import cohort
        return getattr(cohort, name)
    if name in ("collect", "notebook_problem"):
        from gdcourse.grading import intake
        return getattr(intake, name)
    raise AttributeError(name)
