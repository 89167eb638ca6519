"""Glue executed values into the book's prose.

``myst_nb.glue`` exists only where the book is built. On Colab or a bare
Jupyter it is absent, so this wrapper falls back to showing the value, and a
chapter runs unchanged everywhere.
"""

from __future__ import annotations

from typing import Any


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` for ``{glue}`` roles.

    Returns nothing, so a cell ending in ``glue(...)`` shows no stray value.

    NumPy scalars become plain Python numbers first: under NumPy 2 their repr
    is ``np.float64(...)``, which a ``{glue:text}`name:.3f``` format cannot parse.
    """
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    myst_glue(name, value, display=display)


# --- building the book ---------------------------------------------------
# The HTML is built from executed copies of the chapters, never from the
# committed (output-free) sources: what a reader sees is what was run.

BOOK_FILES = ("_config.yml", "_toc.yml")


def stage(root, dest) -> None:
    """Copy the book's configuration and non-notebook sources into ``dest``.

    Executed notebooks are written into ``dest`` by the runner at the same
    relative paths, so ``dest`` is a complete book whose page paths match the
    repository's (launch buttons and "edit" links point at real files).
    """
    import shutil
    from pathlib import Path

    root, dest = Path(root), Path(dest)
    for name in BOOK_FILES:
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, dest / name)
    for path in (root / "book").rglob("*"):
        if path.is_file() and path.suffix != ".ipynb" and not any(p.startswith(".") for p in path.parts):
            target = dest / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def build_html(staged, output_parent, *, strict: bool = True) -> "Path":
    """Run Jupyter Book 1 on a staged book; return the ``_build/html`` path.

    ``strict`` turns every Sphinx warning into an error (``-W``).
    """
    import subprocess
    import sys
    from pathlib import Path

    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", str(staged),
           "--path-output", str(output_parent), "--builder", "html"]
    if strict:
        cmd += ["-W", "--keep-going"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return Path(output_parent) / "_build" / "html"
