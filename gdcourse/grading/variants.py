"""An assignment's variants: the answers a student might hand in, as real notebooks.

Each assignment keeps them beside its source, in ``solutions/<assignment>/variants.py`` (never
released, like ``cases.py``): ``WRONG`` maps a name to ``(test cell that must catch it, answers)``,
each the right answer with one plausible mistake; ``CORRECT`` maps a name to answers written
differently from the reference, which must keep full marks. ``answers`` is ``{grade_id: source}``
and replaces only the cells it names; the rest is the reference solution.

The tests grade them with ``gdcourse grade``, ``gdcourse draws --variants`` runs the correct ones
against many draws of the hidden cases, and ``benchmarks/grading.py`` times a cohort made of them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat


def _folder(course_root: Path | str, assignment: str) -> Path:
    return Path(course_root) / "solutions" / assignment


def load(course_root: Path | str, assignment: str):
    """The assignment's variants module (``WRONG`` and ``CORRECT``), or None if it has none."""
    path = _folder(course_root, assignment) / "variants.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"gdcourse_variants_{assignment.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("WRONG", "CORRECT"):
        if not isinstance(getattr(module, attr, None), dict):
            raise TypeError(f"{path} defines no {attr} dict")
    return module


def release(assignment: str, *, course_root: Path | str = "."):
    """The student release of ``assignment`` as a notebook."""
    return nbformat.read(Path(course_root) / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)


def solution_answers(assignment: str, *, course_root: Path | str = ".") -> dict[str, str]:
    """The reference solution's answer cells ``{grade_id: source}``, nbgrader's markers stripped."""
    nb = nbformat.read(_folder(course_root, assignment) / f"{assignment}.ipynb", as_version=4)
    answers = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            lines = [l for l in cell.source.splitlines()
                     if "### BEGIN SOLUTION" not in l and "### END SOLUTION" not in l]
            answers[meta["grade_id"]] = "\n".join(lines)
    return answers


def submission(assignment: str, answers: dict[str, str], folder: Path | str, student: str, *,
               course_root: Path | str = ".") -> Path:
    """Write ``folder/student/<assignment>.ipynb``: the release with ``answers`` in place of its
    stubs, as a student would hand it in; cells not named keep the release's stub."""
    nb = release(assignment, course_root=course_root)
    unknown = set(answers) - {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    if unknown:
        raise KeyError(f"{assignment} has no answer cell named {sorted(unknown)}")
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            if not cell.metadata["nbgrader"].get("solution"):
                raise ValueError(f"{grade_id} is not a cell students edit")
            cell.source = answers[grade_id]
    path = Path(folder) / student / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def edited(source: str, *edits: tuple[str, str]) -> str:
    """``source`` with each (old, new) replacement applied; a wrong variant is the right answer
    with a mistake or two, and each ``old`` must be there, so a variant cannot silently stop differing."""
    for old, new in edits:
        if old not in source:
            raise ValueError(f"not in the source: {old!r}")
        source = source.replace(old, new)
    return source
