"""The README's map of the modules ("Where things live") matches gdcourse/ and the notebooks' imports."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _map() -> dict[str, str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Where things live", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.*]+)` \| [^|]+ \| ([^|]+) \|$", section, flags=re.M)
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), "a module has two rows"
    return {name: used.strip() for name, used in rows}


def _modules() -> set[str]:
    out = set()
    for path in (ROOT / "gdcourse").rglob("*.py"):
        rel = path.relative_to(ROOT / "gdcourse").with_suffix("")
        if rel.name in ("__init__", "__main__") or rel.parts[0] == "exercises":
            continue
        out.add("grading.assignments.*" if rel.parts[:2] == ("grading", "assignments") else ".".join(rel.parts))
    return out


def _expand(used: str) -> set[str]:
    """'ch 1–4, 6 · ex 13 · pre-flight' -> {'01', '02', '03', '04', '06', 'ex13', 'preflight'}."""
    out = set()
    for group in used.split("·"):
        group = group.strip()
        if group == "pre-flight":
            out.add("preflight")
            continue
        kind, numbers = group.split(" ", 1)
        assert kind in ("ch", "ex"), group
        for part in numbers.split(","):
            lo, _, hi = part.strip().partition("–")
            for n in range(int(lo), int(hi or lo) + 1):
                out.add(f"{n:02d}" if kind == "ch" else f"ex{n:02d}")
    return out


def _imports() -> dict[str, set[str]]:
    """gdcourse module -> the notebooks (chapter number, exNN or 'preflight') whose code imports it."""
    use: dict[str, set[str]] = {}
    for nb in sorted((ROOT / "book").rglob("*.ipynb")) + sorted((ROOT / "solutions").rglob("*.ipynb")):
        code = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
        names = set(re.findall(r"(?:from|import)\s+gdcourse\.(\w+)", code))
        for group in re.findall(r"from\s+gdcourse\s+import\s+([\w, ]+)", code):
            names |= {n.strip() for n in group.split(",")}
        for name in names:
            use.setdefault(name, set()).add(nb.stem.split("-")[0])
    return use


def test_every_module_has_one_row_and_every_row_a_module():
    rows = _map()
    assert set(rows) == _modules(), (f"no row for {sorted(_modules() - set(rows))}; "
                                     f"rows for modules that do not exist: {sorted(set(rows) - _modules())}")


def test_used_in_is_what_the_notebooks_import():
    rows, imports = _map(), _imports()
    for name, used in rows.items():
        if used.startswith("tool:"):
            assert name not in imports, f"{name} is imported by {sorted(imports[name])}: list them, not 'tool:'"
        else:
            assert _expand(used) == imports.get(name, set()), \
                f"{name}: the map says {sorted(_expand(used))}, the notebooks import it in {sorted(imports.get(name, set()))}"
    assert set(imports) <= set(rows), f"notebooks import modules the map lacks: {sorted(set(imports) - set(rows))}"


def test_the_ranges_are_read_as_written():
    assert _expand("ch 1–3, 7 · ex 13 · pre-flight") == {"01", "02", "03", "07", "ex13", "preflight"}
