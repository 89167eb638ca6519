"""What the judge decided about one notebook: one type from the sandbox's output to the grade row.

:func:`gdcourse.grading.judge.grade` makes a :class:`Verdict`; the cohort adds what it knows of the
submission (its digest, its answers, the settings) and stores it as JSON, signed
(:mod:`.cohort`); the gradebook (:mod:`.export`), the final grades (:mod:`.grades`) and the feedback
pages (:mod:`.feedback`) read it back with :meth:`Verdict.from_json`. Status values are
:data:`gdcourse.grading.grades.STATUSES`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import NamedTuple


class CellGrade(NamedTuple):
    """One graded cell: the points the cases gave, the cell's points, and whether it waits for a hand
    grade (a written answer the student changed)."""

    score: float
    points: float
    by_hand: bool


@dataclass(frozen=True)
class CaseResult:
    """One case as the student's feedback shows it."""

    test: str
    name: str
    visible: bool
    passed: bool
    message: str
    points: float = 0.0


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str = ""
    seed: int | None = None
    seconds: float = 0.0
    peak_mb: float = 0.0
    tampered: list[str] = field(default_factory=list)
    score: float = 0.0
    max_score: float | None = None
    grades: dict[str, CellGrade] = field(default_factory=dict)  # every graded cell, by grade_id
    cases: list[CaseResult] = field(default_factory=list)  # in the notebook's order of test cells
    zeroed: dict[str, list[str]] = field(default_factory=dict)  # test -> why it scores 0 (the static check)
    flags: list[str] = field(default_factory=list)  # for the instructor's review
    cell_errors: dict[str, str] = field(default_factory=dict)
    # what the cohort adds: the submission it judged, and under which settings
    sha256: str = ""
    settings: str = ""
    isolated: bool = True
    answers: list[tuple[str, str]] = field(default_factory=list)  # (grade_id, source) of the answer cells
    written: list[str] = field(default_factory=list)  # the grade_ids of written answers

    @property
    def graded(self) -> bool:
        return self.status == "graded"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Verdict":
        """A stored verdict; unknown keys (an older grader's) are ignored."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["grades"] = {k: CellGrade(*v) for k, v in values.get("grades", {}).items()}
        values["cases"] = [CaseResult(**c) for c in values.get("cases", [])]
        values["answers"] = [tuple(a) for a in values.get("answers", [])]
        return cls(**values)
