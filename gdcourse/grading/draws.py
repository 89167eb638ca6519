"""Many draws of the hidden cases against notebooks that are right: a correct answer must pass every draw.

``gdcourse grade`` draws each student's hidden inputs afresh (a seed per run and student), so a case
whose tolerance or spectrum is too tight fails a correct answer only now and then: once in a few hundred
draws is a student a term who loses points for nothing. This runs each notebook once against the hidden
cases of ``draws`` seeds together, through the same judge (:func:`.judge.grade`), and lists every case
that failed with the seed that drew it, to run after writing or changing an assignment's cases:

    .venv/bin/gdcourse draws ex14-optimizer-memory-and-curvature --correct --draws 200

``--correct`` runs the solution and every ``CORRECT`` variant (:mod:`.variants`); notebooks may be named too.
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gdcourse.grading import cases as case_defs, judge, variants
from gdcourse.grading.judge import Assignment

TAG = "[draw {}] "  # put before a case's name: the seed that drew it


@dataclass(frozen=True)
class Failure:
    notebook: str
    seed: int | None  # None: the notebook as a whole (it crashed or ran out of time)
    test: str
    case: str
    message: str


@dataclass(frozen=True)
class _ManyDraws(Assignment):
    seeds: tuple = ()

    def draw(self, seed: int) -> list:
        return [dataclasses.replace(case, name=TAG.format(s) + case.name)
                for s in self.seeds for case in self.module.cases(np.random.default_rng(s))]


def correct_notebooks(assignment: str, folder: Path | str, *, course_root: Path | str = ".") -> list[Path]:
    """Write the solution and every ``CORRECT`` variant of ``assignment`` as submissions into ``folder``."""
    found = variants.load(course_root, assignment)
    reference = variants.solution_answers(assignment, course_root=course_root)
    answers = {"solution": reference} | {f"correct-{name}": {**reference, **a}
                                         for name, a in (found.CORRECT.items() if found else ())}
    return [variants.submission(assignment, a, folder, name, course_root=course_root) for name, a in answers.items()]


def check(assignment: str, notebooks, *, course_root: Path | str = ".", draws: int = 100, first: int = 0,
          isolate: bool = True, seconds: int = 1800, memory_mb: int = 8192) -> tuple[int, list[Failure]]:
    """Run every notebook against the hidden cases of seeds ``first .. first + draws - 1``;
    returns (the number of cases each notebook met, every failure)."""
    root = Path(course_root).resolve()
    module, public = case_defs.load(root, assignment), case_defs.public(assignment)
    if module is None or public is None:
        raise FileNotFoundError(f"{assignment} has no hidden cases to draw (solutions/{assignment}/cases.py)")
    spec = Assignment.load(assignment, root / "exercises" / assignment / f"{assignment}.ipynb", module, public)
    many = _ManyDraws(**{f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)},
                      seeds=tuple(range(first, first + draws)))
    failures, count = [], 0
    with tempfile.TemporaryDirectory(prefix="gdcourse-draws-") as work:
        for notebook in map(Path, notebooks):
            verdict = judge.grade("draws", notebook, many, Path(work) / "job", run_seed=0, cell_seconds=seconds,
                                  notebook_seconds=seconds, memory_mb=memory_mb, isolate=isolate)
            if not verdict.graded:
                failures.append(Failure(str(notebook), None, "", "", f"{verdict.status}: {verdict.reason}"))
                continue
            drawn = [c for c in verdict.cases if c.name.startswith("[draw ")]
            count = len(drawn)
            for c in drawn:
                if not c.passed:
                    seed, name = c.name[len("[draw "):].split("] ", 1)
                    failures.append(Failure(str(notebook), int(seed), c.test, name, c.message))
    return count, failures
