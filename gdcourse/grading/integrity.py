"""What nbgrader does not tell an instructor: tampered tests, calls to the
course's reference code, and hidden tests leaking into feedback.

nbgrader restores locked cells from its gradebook before grading, silently,
so a student who edits a test to pass is graded on the real test but never
flagged; and its checksum warning also fires for honest students whenever a
test cell has hidden tests (the release's checksum differs from the
source's). Comparing each locked cell with the *release* the student was
given tells the two apart.
"""

from __future__ import annotations

import re

from gdcourse.reference_guard import MESSAGE as REFERENCE_MESSAGE

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MAX_OUTPUT_CHARS = 20_000  # per output in feedback: a 100 MB print must not become a 100 MB page


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def locked_cells(nb) -> dict[str, object]:
    """Cells a student must not change: tests and locked instructions, by grade_id."""
    return {_meta(c)["grade_id"]: c for c in nb.cells
            if _meta(c).get("grade_id") and not _meta(c).get("solution")
            and (_meta(c).get("locked") or _meta(c).get("grade"))}


def tampered_cells(submitted, release) -> list[str]:
    """``["test_fit (edited)", "test_step (deleted)"]`` for every locked cell that differs from the release."""
    found = {}
    for c in submitted.cells:
        if _meta(c).get("grade_id"):
            found.setdefault(_meta(c)["grade_id"], c)
    problems = []
    for grade_id, original in locked_cells(release).items():
        mine = found.get(grade_id)
        if mine is None:
            problems.append(f"{grade_id} (deleted)")
        elif mine.cell_type != original.cell_type or _normal(mine.source) != _normal(original.source):
            problems.append(f"{grade_id} (edited)")
    return problems


def graded_tests(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and _meta(c).get("grade") and not _meta(c).get("solution")]


def reference_calls(autograded) -> list[str]:
    """Test cells that failed because the submission called the course's reference implementation."""
    return [_meta(c)["grade_id"] for c in graded_tests(autograded)
            if any(o.get("output_type") == "error" and REFERENCE_MESSAGE in str(o.get("evalue", ""))
                   for o in c.get("outputs", []))]


def scrub_for_feedback(autograded, release) -> None:
    """Make an autograded notebook safe to show its student, in place.

    Test cells show the release's (visible) source; a traceback that runs
    through a hidden line is replaced by its last line; huge outputs are cut.
    """
    visible = {gid: c.source for gid, c in locked_cells(release).items()}
    tests = {id(c) for c in graded_tests(autograded)}
    for cell in autograded.cells:
        if cell.cell_type != "code":
            continue
        grade_id = _meta(cell).get("grade_id")
        if id(cell) in tests and grade_id in visible:
            shown = set(_normal(visible[grade_id]).splitlines())
            hidden = [l.strip() for l in _normal(cell.source).splitlines()
                      if l.strip() and l not in shown and len(l.strip()) > 3]
            cell.source = visible[grade_id]
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    text = ANSI.sub("", "\n".join(out.get("traceback", [])))
                    if any(h in text for h in hidden):
                        out["traceback"] = [f"{out.get('ename')}: {out.get('evalue')}",
                                            "(raised inside a hidden test; its code is not shown)"]
        for out in cell.get("outputs", []):
            _truncate(out)


def _truncate(out) -> None:
    if out.get("output_type") == "stream":
        text = out.get("text", "")
        if len(text) > MAX_OUTPUT_CHARS:
            out["text"] = text[:MAX_OUTPUT_CHARS] + f"\n... output truncated ({len(text):,} characters in all) ...\n"
    for key, value in list(out.get("data", {}).items()):
        if isinstance(value, str) and len(value) > MAX_OUTPUT_CHARS:
            out["data"][key] = value[:MAX_OUTPUT_CHARS] + "\n... output truncated ..."
