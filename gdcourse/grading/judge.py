"""The trusted side of the judge: one student's notebook in, a verdict out.

1. Read the submission as data: what changed that must not (:mod:`.integrity`),
   and what its answer cells reach for (the static check).
2. Build the program: the submission's code cells in order, each locked cell
   (setup, imports, visible tests) taken from the release instead.
3. Draw the cases (:mod:`.cases`) from this student's seed, and write the
   job: the program and the calls, data only.
4. Run :mod:`.harness` on it in a fresh sandbox (:mod:`.sandbox`).
5. Read back the frames it sent (schema-checked, :mod:`.wire`), and score
   every case here, by the case's own check against answers computed here.

Nothing from the sandbox is a verdict, a path or a score: only values that
the checks examine.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from gdcourse.grading import cases as case_defs, integrity, sandbox, wire
from gdcourse.grading.feedback import printable
from gdcourse.grading.cases import Case
from gdcourse.grading.verdict import CaseResult, CellGrade, Verdict

MAX_HEADER = 1000
# Case code may use process-wide state (torch.manual_seed, NumPy's global generator); the supervisor's
# threads draw and check one student's cases at a time, so no two students' checks interleave. Parsing
# (the static check's ast, np.load's header) holds it too: CPython 3.11 can fail building ASTs in two
# threads at once ("AST constructor recursion depth mismatch", gh-106905).
TRUSTED = threading.Lock()


@dataclass(frozen=True)
class Assignment:
    """What the judge knows of an assignment before any student: its release and its cases."""

    name: str
    release: object  # nbformat notebook
    module: object  # solutions/<name>/cases.py: the hidden cases
    public: object  # gdcourse.grading.assignments.<name>: references, probes, visible cases
    points: dict  # grade_id -> points, every graded cell
    tests: dict  # test grade_id -> answer grade_ids it covers
    manual: dict  # written-answer grade_id -> the release's stub text

    @classmethod
    def load(cls, name: str, release_path: Path, module, public) -> "Assignment":
        release = nbformat.read(release_path, as_version=4)
        points, tests, manual, pending = {}, {}, {}, []
        for cell in release.cells:
            meta = cell.metadata.get("nbgrader", {})
            gid = meta.get("grade_id")
            if meta.get("solution") and cell.cell_type == "code":
                pending.append(gid)
            if meta.get("grade"):
                points[gid] = float(meta.get("points", 0))
                if cell.cell_type == "code" and not meta.get("solution"):
                    tests[gid], pending = tuple(pending), []
                else:
                    manual[gid] = cell.source
        return cls(name, release, module, public, points, tests, manual)

    def draw(self, seed: int) -> list[Case]:
        """This student's cases: the public visible ones, then the hidden ones drawn from their seed.
        Every test cell has a case, no case is orphaned, and each case is about a graded function."""
        visible = list(self.public.visible())
        hidden = list(self.module.cases(np.random.default_rng(seed)))
        cases = visible + hidden
        problems = []
        if not all(c.visible for c in visible) or any(c.visible for c in hidden):
            problems.append("visible cases come from the public module only, hidden ones from cases.py")
        unknown = sorted({c.test for c in cases} - set(self.tests))
        empty = sorted(set(self.tests) - {c.test for c in cases})
        if unknown or empty:
            problems.append(f"cases for cells that are not tests {unknown}; test cells without cases {empty}")
        weightless = sorted(t for t in self.tests if not sum(c.weight for c in cases if c.test == t) > 0)
        if weightless or any(c.weight < 0 for c in cases):
            problems.append(f"test cells whose cases weigh nothing {weightless}, or a negative weight")
        strangers = sorted({c.call.fn for c in cases} - set(self.public.REFERENCE))
        if strangers:
            problems.append(f"cases about functions that are not graded: {strangers}")
        if problems:
            raise ValueError(f"cases of {self.name}: " + "; ".join(problems))
        return cases

    @property
    def max_score(self) -> float:
        return sum(self.points.values())


def student_seed(run_seed: int, student: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{run_seed}:{student}".encode()).digest()[:8], "little")


# --- the program -------------------------------------------------------------------

def program(submitted, release) -> list[dict]:
    """Code cells to run, in the submission's order: its own cells and answers as written, every locked
    cell as released (a deleted one at the end); ``{"id": grade_id or "cell-N", "source": ...}``."""
    released = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in release.cells
                if c.metadata.get("nbgrader", {}).get("grade_id")}
    cells, seen = [], set()
    for i, cell in enumerate(submitted.cells):
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        original = released.get(gid)
        if original is not None and gid not in seen:
            seen.add(gid)
            if original.metadata["nbgrader"].get("solution"):
                if original.cell_type == "code":
                    cells.append({"id": gid, "source": cell.source})
            elif original.cell_type == "code":
                cells.append({"id": gid, "source": original.source})
        elif cell.cell_type == "code" and original is None:
            cells.append({"id": f"cell-{i}", "source": cell.source})
    for gid, original in released.items():
        if gid not in seen and original.cell_type == "code" and not original.metadata["nbgrader"].get("solution"):
            cells.append({"id": gid, "source": original.source})
    return cells


def answer_sections(submitted, assignment: Assignment) -> dict[str, list[str]]:
    """Test grade_id -> the submission's own code before it (since the previous test cell).

    Code after the last test cell runs before any case too, so it counts for every test."""
    locked = set(integrity.locked_cells(assignment.release))
    sections, current = {}, []
    for cell in submitted.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in assignment.tests:
            sections[gid], current = current, []
        elif cell.cell_type == "code" and gid not in locked:
            current.append(cell.source)
    if current:
        sections = {test: sections.get(test, []) + current for test in assignment.tests}
    return sections


# --- reading the frames ------------------------------------------------------------------

def read_frames(output: bytes) -> tuple[dict, dict, bool, str]:
    """(cells by id, calls by id, ended cleanly, problem) from the harness's stream; stops at the first bad frame."""
    cells, calls, pos = {}, {}, 0
    while pos < len(output):
        end = output.find(b"\n", pos, pos + MAX_HEADER)
        if end < 0:
            return cells, calls, False, "a malformed frame header"
        try:
            header = json.loads(output[pos:end])
        except ValueError:
            return cells, calls, False, "a malformed frame header"
        if not isinstance(header, dict) or header.get("kind") not in ("cell", "call", "end"):
            return cells, calls, False, "an unknown frame"
        if header["kind"] == "end":
            return cells, calls, end + 1 == len(output), "" if end + 1 == len(output) else "data after the end"
        size, ident = header.get("size"), header.get("id")
        if type(size) is not int or not 0 <= size <= len(output) - end - 1 or not isinstance(ident, str):
            return cells, calls, False, "a frame of the wrong size"
        try:
            value = wire.unpack(output[end + 1:end + 1 + size])
        except wire.WireError as exc:
            return cells, calls, False, f"a frame that is not data ({exc})"
        target = cells if header["kind"] == "cell" else calls
        if ident in target or not isinstance(value, dict):
            return cells, calls, False, "a repeated or malformed frame"
        target[ident] = value
        pos = end + 1 + size
    return cells, calls, False, "no end frame"


# --- one student ---------------------------------------------------------------------

def grade(student: str, notebook: Path, assignment: Assignment, work: Path, *, run_seed: int,
          cell_seconds: int, notebook_seconds: int, memory_mb: int, isolate: bool) -> Verdict:
    """Grade one notebook: the verdict the CSV, the gradebook and the feedback page are made from."""
    submitted = nbformat.read(notebook, as_version=4)
    tampered = integrity.tampered_cells(submitted, assignment.release)
    # the public case modules hold the course's reference of every graded function
    references = ("gdcourse.grading",) + tuple(getattr(assignment.module, "REFERENCES", ()))
    forbidden = tuple(getattr(assignment.module, "FORBIDDEN", ()))
    allowed = tuple(getattr(assignment.module, "ALLOWED", ()))
    zeroed, flags = {}, []
    with TRUSTED:
        for test, sources in answer_sections(submitted, assignment).items():
            for code in sources:
                work_done, other = integrity.static_findings(code, references=references, forbidden=forbidden,
                                                                   allowed=allowed)
                if work_done:
                    zeroed[test] = sorted(set(zeroed.get(test, [])) | set(work_done))
                flags += [f for f in other if f not in flags]

    seed = student_seed(run_seed, student)
    with TRUSTED:
        cases = assignment.draw(seed)
    calls = [{"id": f"c{i}", **c.call.as_data()} for i, c in enumerate(cases)]
    job = {"cells": program(submitted, assignment.release), "calls": calls,
           "module": case_defs.module_name(assignment.name),
           "cell_seconds": cell_seconds, "call_seconds": cell_seconds}
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "job.npz").write_bytes(wire.pack(job))
    target = f"{sandbox.JOB}/job.npz" if isolate else str(work / "job.npz")
    start = time.perf_counter()
    ran = sandbox.run([sys.executable, "-m", "gdcourse.grading.harness", target], work, seconds=notebook_seconds,
                      memory_mb=memory_mb, isolate=isolate, name=student)
    shutil.rmtree(work, ignore_errors=True)
    base = {"seed": seed, "seconds": time.perf_counter() - start, "tampered": tampered,
            "peak_mb": round(ran.peak_bytes / 2**20, 1)}
    if ran.ended != "exit":
        status, reason = sandbox.stopped_because(ran.ended, seconds=notebook_seconds, memory_mb=memory_mb)
        return Verdict(status=status, reason=reason, **base)
    with TRUSTED:
        cell_frames, call_frames, complete, problem = read_frames(ran.output)
    if not complete:
        died = ran.returncode not in (0, None)
        return Verdict(status="crashed", reason=(
            "the notebook's process died while grading (os._exit, a signal or out of memory)"
            if died and not problem or problem == "no end frame" else
            f"the sandbox sent results the grader cannot read ({problem})"), **base)

    checked, grades = [], {}
    with TRUSTED:
        for i, case in enumerate(cases):
            checked.append((case, *case_defs.score(case, call_frames.get(f"c{i}"))))
    results = []
    for test in assignment.tests:
        mine = [(c, passed, message) for c, passed, message in checked if c.test == test]
        total = sum(c.weight for c, _, _ in mine)
        got = 0.0
        for c, passed, message in mine:
            share = assignment.points[test] * c.weight / total
            results.append(CaseResult(c.test, c.name, c.visible, passed, message, round(share, 6)))
            got += share if passed else 0.0
        grades[test] = CellGrade(0.0 if test in zeroed else round(got, 6), assignment.points[test], False)
    answers = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in submitted.cells
               if c.metadata.get("nbgrader", {}).get("grade_id") in assignment.manual}
    for gid, stub in assignment.manual.items():
        changed = integrity._normal(answers.get(gid, stub)) != integrity._normal(stub)
        grades[gid] = CellGrade(0.0, assignment.points[gid], changed)
    errors = {cid: printable(f["error"], 300) for cid, f in cell_frames.items()
              if isinstance(f.get("error"), wire.Raised) and cid not in assignment.tests}
    score = round(sum(g.score for g in grades.values() if not g.by_hand), 6)
    return Verdict(status="graded", score=score, max_score=assignment.max_score, grades=grades,
                   cases=results, zeroed=zeroed, flags=flags, cell_errors=errors, **base)
