"""Build the HTML book with Jupyter Book 1, from executed copies of the chapters.

The HTML is never built from the committed (output-free) sources: the runner
(:mod:`gdcourse.notebooks`) writes executed copies into a staged book, and what
a reader sees is what was run. Used by ``gdcourse book`` and the tests' site build.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


BOOK_FILES = ("_config.yml", "_toc.yml")


def stage(root, dest) -> None:
    """Copy the book's configuration and non-notebook sources into ``dest``.

    Executed notebooks are written into ``dest`` by the runner at the same
    relative paths, so ``dest`` is a complete book whose page paths match the
    repository's (launch buttons and "edit" links point at real files).
    """
    root, dest = Path(root), Path(dest)
    for name in BOOK_FILES:
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, dest / name)
    for path in (root / "book").rglob("*"):
        if path.is_file() and path.suffix != ".ipynb" and not any(p.startswith(".") for p in path.parts):
            target = dest / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def build_html(staged, output_parent, *, strict: bool = True) -> Path:
    """Run Jupyter Book 1 on a staged book; return the ``_build/html`` path.

    ``strict`` turns every Sphinx warning into an error (``-W``).
    """
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", str(staged),
           "--path-output", str(output_parent), "--builder", "html"]
    if strict:
        cmd += ["-W", "--keep-going"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return Path(output_parent) / "_build" / "html"
