"""What a submission changed that it must not, and what its answer cells reach for.

Everything here reads the submitted notebook as data, on the trusted side;
nothing runs the student's code. Each locked cell is compared with the
*release* the student was given (nbgrader would restore it silently, and its
checksum warning cannot tell an edit from an honest student's copy), and the
static check looks for the course's reference code, forbidden libraries,
dynamic code, system access and absolute paths.
"""

from __future__ import annotations

import ast


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def locked_cells(nb) -> dict[str, object]:
    """Cells a student must not change: tests and locked instructions, by grade_id."""
    return {_meta(c)["grade_id"]: c for c in nb.cells
            if _meta(c).get("grade_id") and not _meta(c).get("solution")
            and (_meta(c).get("locked") or _meta(c).get("grade"))}


_GRADING_KEYS = ("grade", "solution", "locked", "task", "points")


def tampered_cells(submitted, release) -> list[str]:
    """What the student changed that they must not: ``["test_fit (edited)", "test_step (deleted)",
    "fit (points changed from 2 to 200)"]``, for locked cells' sources and every graded cell's metadata."""
    found: dict[str, object] = {}
    problems = []
    for c in submitted.cells:
        grade_id = _meta(c).get("grade_id")
        if grade_id is not None:
            if grade_id in found:
                problems.append(f"{grade_id} (appears twice)")
            found.setdefault(grade_id, c)
    released = {_meta(c)["grade_id"]: c for c in release.cells if _meta(c).get("grade_id")}
    locked = locked_cells(release)
    for grade_id, original in released.items():
        mine = found.get(grade_id)
        if mine is None:
            if grade_id in locked:
                problems.append(f"{grade_id} (deleted)")
            continue
        if mine.cell_type != original.cell_type:
            problems.append(f"{grade_id} (cell type changed from {original.cell_type} to {mine.cell_type})")
        for key in _GRADING_KEYS:
            if _meta(mine).get(key) != _meta(original).get(key):
                problems.append(f"{grade_id} ({key} changed from {_meta(original).get(key)!r} "
                                f"to {_meta(mine).get(key)!r})"[:200])
        if grade_id in locked and _normal(mine.source) != _normal(original.source):
            problems.append(f"{grade_id} (edited)")
    for grade_id in found:
        if grade_id not in released:
            problems.append(f"{str(grade_id)[:60]!r} (a graded cell that is not in the release)")
    return list(dict.fromkeys(problems))


# --- static check of answer cells --------------------------------------------------

# Always flagged: code that reaches past the exercise (the system, other processes, the network).
SYSTEM_MODULES = ("subprocess", "socket", "ctypes", "multiprocessing", "signal", "shutil", "pty", "resource")
DYNAMIC_CALLS = ("exec", "eval", "compile", "__import__", "globals", "vars", "breakpoint")
DYNAMIC_MODULES = ("importlib", "builtins", "inspect", "gc", "sys", "marshal", "types", "code", "runpy")


def _python(source: str) -> str:
    """IPython source (magics, ``!shell``) as the Python it runs."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:
        return source


class _Uses(ast.NodeVisitor):
    """Qualified names an answer cell reaches (``gdcourse.optim.Adam``), with import aliases resolved."""

    def __init__(self):
        self.aliases: dict[str, str] = {}
        self.names: list[str] = []
        self.paths: list[str] = []

    def visit_Import(self, node):
        for a in node.names:
            self.aliases[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            self.names.append(a.name)

    def visit_ImportFrom(self, node):
        base = node.module or ""
        for a in node.names:
            full = f"{base}.{a.name}" if base else a.name
            self.aliases[a.asname or a.name] = full
            self.names.append(full)

    def _qualified(self, node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
            return ".".join(reversed(parts))
        return None

    def visit_Attribute(self, node):
        name = self._qualified(node)
        if name:
            self.names.append(name)
        self.generic_visit(node)

    def visit_Name(self, node):
        self.names.append(self.aliases.get(node.id, node.id))

    def visit_Constant(self, node):
        if isinstance(node.value, str) and (node.value.startswith("/") or "../" in node.value or node.value == ".."):
            self.paths.append(node.value)


def _reaches(name: str, target: str) -> bool:
    return name == target or name.startswith(target + ".")


def static_findings(source: str, *, references=(), forbidden=(), allowed=()) -> tuple[list[str], list[str]]:
    """(uses that do the exercise's work for it, other constructs worth a look) in one answer cell.

    The first list names course reference functions or forbidden library modules the cell
    imports or touches; the second, dynamic code, system access and absolute paths, except
    ``allowed`` names the exercise asks for (``os.replace`` where a file is to be replaced)."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return [], []
    uses = _Uses()
    uses.visit(tree)
    work, other = [], []
    for name in dict.fromkeys(uses.names):
        if name in ("os", "shutil") and name in {a.split(".")[0] for a in allowed} \
                or any(_reaches(name, a) for a in allowed):
            continue
        hit = next((r for r in references if _reaches(name, r)
                    or (name.endswith(".*") and r.startswith(name[:-1]))), None)
        if hit:
            work.append(f"uses the course's reference {hit}")
        elif any(_reaches(name, f) for f in forbidden):
            work.append(f"uses {next(f for f in forbidden if _reaches(name, f))}, which this exercise asks you to write by hand")
        elif name.split(".")[0] in SYSTEM_MODULES or (name.startswith("os.") and not name.startswith("os.path")) \
                or name == "os":
            other.append(f"system access ({name})")
        elif name in DYNAMIC_CALLS or name.split(".")[0] in DYNAMIC_MODULES or name in ("getattr", "setattr"):
            other.append(f"dynamic code or imports ({name})")
    for path in dict.fromkeys(uses.paths):
        other.append(f"a path outside the notebook's folder ({path[:60]!r})")
    return list(dict.fromkeys(work)), list(dict.fromkeys(other))


def for_review(submitted, release):
    """The submission as an instructor reviews it (nbgrader's autograded notebook): locked cells as
    released, no outputs, and written answers with their HTML escaped, so nothing in them runs in a browser."""
    import copy
    import html

    nb = copy.deepcopy(submitted)
    locked = locked_cells(release)
    for cell in nb.cells:
        gid = _meta(cell).get("grade_id")
        if gid in locked:
            cell.source = locked[gid].source
            cell.metadata["nbgrader"] = dict(_meta(locked[gid]))
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        else:
            cell.source = html.escape(cell.source, quote=False)
            cell.pop("attachments", None)
    return nb
