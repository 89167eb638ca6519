"""Write the code of every notebook as a .py file next to a copy of gdcourse/, so that a
copy-finder that reads source files (``duplicates``, jscpd, PMD's CPD) sees chapter code and
library code side by side:

    .venv/bin/python tools/notebook_code.py /tmp/code && duplicates --repo /tmp/code --most 40

Each notebook's code cells go into ``OUT/<notebook path>.py`` in order, each after a
``# cell N`` line, so a reported line range leads back to its cell. Nothing is written in the
checkout.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("book", "solutions")


def extract(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return "".join(f"# cell {i}\n{''.join(c['source'])}\n\n" for i, c in enumerate(cells) if c["cell_type"] == "code")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="an empty or new folder outside the checkout")
    out = parser.parse_args(argv).out.resolve()
    if out == ROOT or ROOT in out.parents:
        parser.error("write outside the checkout: a copy-finder reading the checkout would see the copies twice")
    if out.exists() and any(out.iterdir()):
        parser.error(f"{out} is not empty")
    shutil.copytree(ROOT / "gdcourse", out / "gdcourse", ignore=shutil.ignore_patterns("__pycache__", "exercises"))
    count = 0
    for folder in NOTEBOOKS:
        for notebook in sorted((ROOT / folder).rglob("*.ipynb")):
            if ".ipynb_checkpoints" in notebook.parts:
                continue
            target = out / notebook.relative_to(ROOT).with_suffix(".py")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(extract(notebook), encoding="utf-8")
            count += 1
    print(f"{count} notebooks and gdcourse/ written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
