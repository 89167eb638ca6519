"""nbgrader's formgrader on one graded cohort, for the written answers.

formgrader re-reads nbgrader's config files on every request (the Jupyter
config path and the working directory), so options given on a command line
are lost to the course's ``nbgrader_config.py``. Instead the grading folder
gets its own ``OUT/nbgrader_config.py``: the course's settings, then every
path of nbgrader's inside ``OUT``. The server runs in ``OUT`` with ``OUT`` as
its root, so nothing is written into the course repository:

- the gradebook is ``OUT/gradebook.db`` (hand grades land there, and
  ``gdcourse grades`` / ``gdcourse feedback`` read them);
- the assignment's "source" is the release nbgrader made for the cohort
  (``OUT/template/release``), so only this assignment is listed and the
  UI's "add assignment" writes inside ``OUT``;
- nbgrader's own feedback goes to ``OUT/nbgrader-feedback``, never over the
  course's pages in ``OUT/feedback``.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

CONFIG = "nbgrader_config.py"
NBGRADER_FEEDBACK = "nbgrader-feedback"


def write_config(out: Path, course_root: Path) -> Path:
    """``OUT/nbgrader_config.py``: the course's nbgrader settings, with every folder in ``OUT``."""
    out, course = Path(out).resolve(), Path(course_root).resolve()
    course_config = course / CONFIG
    if not course_config.is_file():
        raise FileNotFoundError(f"no {course_config}: is {course} the course repository?")
    text = f'''# Written by `gdcourse formgrader`: nbgrader's formgrader on this graded cohort.
# The course's settings first, then every folder of nbgrader's inside this one.
import os

c = get_config()  # noqa: F821
load_subconfig({str(course_config)!r})  # noqa: F821
here = os.path.dirname(os.path.abspath(__file__))
cd = c.CourseDirectory
cd.root = here
cd.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
cd.source_directory = os.path.join(here, "template", "release")
cd.release_directory = os.path.join(here, "template", "release")
cd.submitted_directory = os.path.join(here, "submitted")
cd.autograded_directory = os.path.join(here, "autograded")
cd.feedback_directory = os.path.join(here, {NBGRADER_FEEDBACK!r})
'''
    path = out / CONFIG
    path.write_text(text, encoding="utf-8")
    return path


def command(out: Path, *, port: int, token: str, open_browser: bool) -> list[str]:
    """The ``jupyter server`` command that serves formgrader on ``OUT`` (run with ``cwd=OUT``)."""
    jupyter = Path(sys.executable).with_name("jupyter")
    cmd = [str(jupyter), "server", f"--ServerApp.root_dir={out}", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.open_browser={open_browser}",
           "--ServerApp.default_url=/formgrader/manage_submissions"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def serve(out: Path | str, course_root: Path | str, *, port: int = 8890, token: str | None = None,
          open_browser: bool = True) -> subprocess.Popen:
    """Start formgrader on the grading folder ``out``; returns the server process.

    Its ``token`` attribute logs in (:func:`login_url`)."""
    out = Path(out).resolve()
    if not (out / "gradebook.db").is_file():
        raise FileNotFoundError(f"{out} has no gradebook.db: grade the cohort first (gdcourse grade ... --out {out})")
    write_config(out, Path(course_root))
    token = token or secrets.token_hex(16)
    # in the caller's process group: Ctrl-C or a signal to the group stops the server with the command
    server = subprocess.Popen(command(out, port=port, token=token, open_browser=open_browser), cwd=out)
    server.token = token
    return server


def login_url(port: int, token: str) -> str:
    # log in at a top-level page: a token on a deeper formgrader URL sets its cookie on that path only
    return f"http://127.0.0.1:{port}/formgrader?token={token}"
