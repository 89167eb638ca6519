"""Cohort grading: a judge in the manner of contest systems (CMS with isolate, DOMjudge).

- :mod:`.intake`    find each student's notebook (folders, LMS zips, a roster)
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
- :mod:`.export`    the CSV and nbgrader's gradebook (its template made by nbgrader)

The package imports nothing heavy itself, so the harness starts fast in the sandbox.
"""

__all__ = ["STATUSES", "GradeRow", "Limits", "grade", "collect", "notebook_problem"]


def __getattr__(name):
    if name in ("STATUSES", "GradeRow", "Limits", "grade"):
        from gdcourse.grading import cohort
        return getattr(cohort, name)
    if name in ("collect", "notebook_problem"):
        from gdcourse.grading import intake
        return getattr(intake, name)
    raise AttributeError(name)
