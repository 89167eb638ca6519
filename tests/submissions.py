"""Build student submissions from the released notebook: fill its answer
cells with given code, as a student would, so that tests grade real
notebooks through nbgrader rather than calling functions directly."""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def release(assignment: str):
    return nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)


def submission(assignment: str, answers: dict[str, str], folder: Path, student: str) -> Path:
    """Write ``folder/student/<assignment>.ipynb`` with ``answers`` ({grade_id: source})
    in place of the release's stubs; cells not named keep the release's stub."""
    nb = release(assignment)
    unknown = set(answers) - {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    assert not unknown, f"no answer cell named {unknown}"
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            assert cell.metadata["nbgrader"].get("solution"), f"{grade_id} is not a cell students edit"
            cell.source = answers[grade_id]
    path = folder / student / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def solution_answers(assignment: str) -> dict[str, str]:
    """The reference solution's answer cells, markers stripped."""
    nb = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)
    answers = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            lines = [l for l in cell.source.splitlines() if "### BEGIN SOLUTION" not in l and "### END SOLUTION" not in l]
            answers[meta["grade_id"]] = "\n".join(lines)
    return answers


def edited(source: str, *edits: tuple[str, str]) -> str:
    """``source`` with each (old, new) replacement applied; a wrong variant is the right answer
    with a mistake or two, and each ``old`` must be there, so a variant cannot silently stop differing."""
    for old, new in edits:
        if old not in source:
            raise ValueError(f"not in the source: {old!r}")
        source = source.replace(old, new)
    return source
