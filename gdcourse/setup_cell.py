"""The setup cell: the first code cell of every chapter and exercise, tagged ``setup``.

On Colab it pip-installs gdcourse (with the extras Colab lacks) from the repository at
``SOURCE_REF``; gdcourse requires no torch, so Colab's CUDA build stays. It is plain code,
identical in every notebook (a test checks), and ``gdcourse setup-cells`` writes it there. A
release commit sets ``SOURCE_REF`` to its tag, so a notebook opened from that tag installs the
library it was written against.
"""

from __future__ import annotations

from pathlib import Path

REPOSITORY = "https://github.com/gdcourse/gdcourse"
SOURCE_REF = "main"
SETUP_TAG = "setup"


def setup_cell(ref: str = SOURCE_REF) -> str:
    """The source of the setup cell for notebooks that install gdcourse at ``ref``."""
    return f"""\
# Setup. On Colab: install the course's helper library, gdcourse, from its repository
# (it never installs torch, so Colab's own GPU build is kept). Elsewhere it is installed already.
import sys
if "google.colab" in sys.modules:
    import importlib, subprocess
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "gdcourse[colab] @ git+{REPOSITORY}@{ref}"], check=True)
    importlib.invalidate_caches()
from gdcourse.runtime import runtime_report
print(runtime_report())"""


SETUP_CELL = setup_cell()


def write_setup_cells(paths, *, check: bool = False) -> list[Path]:
    """Make each notebook's setup cell equal to SETUP_CELL; return the notebooks that differed.

    With ``check`` nothing is written. A notebook without exactly one cell
    tagged "setup" is an error: there is no right place to put one.
    """
    import nbformat

    changed = []
    for path in map(Path, paths):
        nb = nbformat.read(path, as_version=4)
        cells = [c for c in nb.cells if SETUP_TAG in c.get("metadata", {}).get("tags", [])]
        if len(cells) != 1:
            raise ValueError(f"{path}: expected one cell tagged {SETUP_TAG!r}, found {len(cells)}")
        if cells[0].source != SETUP_CELL:
            changed.append(path)
            if not check:
                cells[0].source = SETUP_CELL
                nbformat.write(nb, path)
    return changed
