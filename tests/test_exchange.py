"""The nbgrader exchange path of the instructor guide on a fresh machine: release, a student's
fetch and submit, collect, grade, with the venv not activated and no grading folder yet."""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest

from submissions import solution_answers

ROOT = Path(__file__).resolve().parent.parent
EX = "ex01-gd-loop"
NBG = ".venv/bin/nbgrader"
EXCHANGE_COMMANDS = [  # as the guide shows them; ~ is a fresh home, the exchange a folder in it
    f"{NBG} release_assignment {EX} --Exchange.root=$HOME/exchange",
    f"{NBG} collect {EX} --Exchange.root=$HOME/exchange",
    f".venv/bin/gdcourse grade {EX} ~/.cache/gdcourse/grading/submitted --out ~/term/{EX}-exchange",
]
STUDENT_COMMANDS = [  # in the student's own folder (JupyterHub's Assignments tab does the same)
    f"nbgrader fetch_assignment {EX} --course gdcourse --Exchange.root=$HOME/exchange",
    f"nbgrader submit {EX} --course gdcourse --Exchange.root=$HOME/exchange",
]


def _run(command: str, cwd: Path, home: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GDCOURSE_GRADING_DIR"}
    env.update(HOME=str(home), PATH="/usr/local/bin:/usr/bin:/bin")
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (command, proc.stdout[-2000:], proc.stderr[-3000:])
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_release_fetch_submit_collect_grade_on_a_fresh_machine(tmp_path):
    import nbformat
    from test_term import _repo_state

    home = tmp_path / "home"
    student = tmp_path / "student"
    home.mkdir(), student.mkdir()
    before = _repo_state()
    _run(EXCHANGE_COMMANDS[0], ROOT, home)
    nbgrader = str(ROOT / NBG)
    _run(STUDENT_COMMANDS[0].replace("nbgrader", nbgrader, 1), student, home)
    fetched = student / EX / f"{EX}.ipynb"
    nb = nbformat.read(fetched, as_version=4)
    for cell in nb.cells:  # the student answers every function
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in (answers := solution_answers(EX)) and cell.cell_type == "code":
            cell.source = answers[gid]
    nbformat.write(nb, fetched)
    _run(STUDENT_COMMANDS[1].replace("nbgrader", nbgrader, 1), student, home)
    _run(EXCHANGE_COMMANDS[1], ROOT, home)
    submitted = home / ".cache" / "gdcourse" / "grading" / "submitted"
    me = os.environ.get("USER") or __import__("getpass").getuser()
    assert (submitted / me / EX / f"{EX}.ipynb").is_file() and (submitted / me / EX / "timestamp.txt").is_file()
    _run(EXCHANGE_COMMANDS[2], ROOT, home)
    with open(home / "term" / f"{EX}-exchange" / "grades.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["student"], row["status"], row["score"]) == (me, "graded", "7.0")
    from datetime import datetime
    age = datetime.now().astimezone() - datetime.fromisoformat(row["uploaded"])
    assert 0 <= age.total_seconds() < 3600, "the upload time is nbgrader's timestamp.txt of this submission"
    assert _repo_state() == before, "a command of the exchange path wrote into the checkout"
