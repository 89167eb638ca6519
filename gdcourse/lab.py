"""JupyterLab for students: the course's environment without nbgrader's instructor tools.

The course venv has nbgrader installed for the instructor, and JupyterLab
shows its menus to everyone (Formgrader, Create Assignment, ...). ``gdcourse
lab`` starts JupyterLab with a configuration folder of its own put first on
``JUPYTER_CONFIG_PATH`` (the venv and ``~/.jupyter`` stay as they are) that
turns off the formgrader server extension and nbgrader's lab plugins, all but
"Validate": a student can still validate a notebook before handing it in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:menu", "@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:course-list")
INSTRUCTOR_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader",)


def write_config(folder: Path) -> Path:
    """The two files that hide the instructor tools, in ``folder`` (a Jupyter config directory)."""
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    (folder / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {p: True for p in INSTRUCTOR_PLUGINS}}, indent=1))
    (folder / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {e: False for e in INSTRUCTOR_SERVER_EXTENSIONS}}}, indent=1))
    return folder


def environment(folder: Path) -> dict[str, str]:
    path = os.environ.get("JUPYTER_CONFIG_PATH", "")
    return {**os.environ, "JUPYTER_CONFIG_PATH": os.pathsep.join(p for p in (str(folder), path) if p)}


def launch(paths: list[str], extra: list[str]) -> int:
    """Run JupyterLab (``jupyter lab PATHS EXTRA``) for a student until it is stopped."""
    jupyter = Path(sys.executable).with_name("jupyter")
    with tempfile.TemporaryDirectory(prefix="gdcourse-lab-") as folder:
        env = environment(write_config(Path(folder)))
        return subprocess.call([str(jupyter), "lab", *paths, *extra], env=env)
