"""The tests' course: gdcourse.grading.variants bound to this checkout, so tests grade real
notebooks built from the release as a student would hand them in."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from gdcourse.grading import variants

ROOT = Path(__file__).resolve().parent.parent

release = partial(variants.release, course_root=ROOT)
solution_answers = partial(variants.solution_answers, course_root=ROOT)
submission = partial(variants.submission, course_root=ROOT)


def variants_of(assignment: str):
    """solutions/<assignment>/variants.py (WRONG and CORRECT), or None."""
    return variants.load(ROOT, assignment)
