"""Intake: find each student's notebook, from a folder or from an LMS zip.

Layouts accepted in a folder: ``<student>/<assignment>.ipynb``,
``<student>/<assignment>/<assignment>.ipynb`` (nbgrader's own), the only
notebook anywhere in a student's folder, or loose ``<student>.ipynb`` files.

An LMS download is a zip of files named after the student, as nbgrader's
``zip_collect`` expects: a regular expression with a ``student_id`` group
picks the student out of each file name. The default accepts Canvas- and
Moodle-style names such as ``ada_12345_67890_ex01-gd-loop.ipynb`` or
``ada_ex01-gd-loop.ipynb``, and zips holding one folder per student. When a
student submitted several times, the newest file (by its zip timestamp) wins.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat

# <student>_<anything>.ipynb at any depth (Canvas: name_userid_subid_file.ipynb)
DEFAULT_ZIP_PATTERN = r"(?:^|/)(?P<student_id>[A-Za-z0-9.\-]+)_[^/]*\.ipynb$"
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")


@dataclass(frozen=True)
class Submission:
    """One student's hand-in: the notebook (None if none was found) and why not."""

    student: str
    notebook: Path | None
    timestamp: str | None = None  # ISO time the LMS recorded, when it recorded one
    problem: str | None = None  # why ``notebook`` is None, or a note about the choice made
    status: str | None = None  # the row's status when there is nothing to grade ("missing", "invalid notebook")


def collect(source: Path | str, assignment: str, *, work: Path | str | None = None,
            zip_pattern: str = DEFAULT_ZIP_PATTERN) -> dict[str, Submission]:
    """Every student found in ``source`` (a folder, or a zip extracted under ``work``)."""
    source = Path(source)
    if source.is_file() and zipfile.is_zipfile(source):
        if work is None:
            raise ValueError("a zip of submissions needs a work folder to extract into")
        return _from_zip(source, assignment, Path(work), zip_pattern)
    if not source.is_dir():
        raise FileNotFoundError(f"submissions {source} is neither a folder nor a zip file")
    found: dict[str, Submission] = {}
    for entry in sorted(source.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            name = entry.stem if entry.suffix == ".ipynb" else entry.name
            found[name] = Submission(name, None, None, "the submission is a symbolic link, not a file or folder",
                                     "invalid notebook")
        elif entry.is_dir():
            nb = find_submission(entry, assignment)
            found[entry.name] = Submission(entry.name, nb, _mtime(nb), None if nb else
                                           f"no single {assignment}.ipynb in the student's folder")
        elif entry.suffix == ".ipynb":
            found[entry.stem] = Submission(entry.stem, entry, _mtime(entry))
    for name in [n for n in found if not STUDENT_ID.match(n)]:  # a name is data, not a formula or a path
        found[name] = Submission(name, None, None, f"{name!r} is not a valid student id (letters, digits, "
                                 "'.', '_' and '-', starting with a letter or digit)", "invalid notebook")
    return found


def find_submission(folder: Path, assignment: str) -> Path | None:
    for candidate in (folder / f"{assignment}.ipynb", folder / assignment / f"{assignment}.ipynb"):
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    found = [p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and not p.is_symlink()]
    return found[0] if len(found) == 1 else None


def _mtime(path: Path | None) -> str | None:
    return None if path is None else datetime.fromtimestamp(path.stat().st_mtime).isoformat(timespec="seconds")


def _from_zip(archive: Path, assignment: str, work: Path, pattern: str) -> dict[str, Submission]:
    rx = re.compile(pattern)
    chosen: dict[str, tuple[zipfile.ZipInfo, int]] = {}
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            name = info.filename
            if info.is_dir() or not name.endswith(".ipynb") or "__MACOSX" in name or ".ipynb_checkpoints" in name:
                continue
            m = rx.search(name)
            parts = name.split("/")
            student = m.group("student_id") if m else (parts[-2] if len(parts) >= 2 else None)
            if not student or not STUDENT_ID.match(student):
                continue
            previous = chosen.get(student)
            count = previous[1] + 1 if previous else 1
            if previous is None or info.date_time >= previous[0].date_time:
                chosen[student] = (info, count)
            else:
                chosen[student] = (previous[0], count)
        found = {}
        for student, (info, count) in sorted(chosen.items()):
            target = work / "intake" / student / f"{assignment}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))  # never extract by the archive's own paths
            note = f"{count} files in the zip; graded the newest" if count > 1 else None
            found[student] = Submission(student, target, datetime(*info.date_time).isoformat(timespec="seconds"), note)
    return found


def read_roster(path: Path | str) -> list[str]:
    """Student ids, one per line, or a CSV whose header has a ``student`` or ``id`` column."""
    lines = [l.strip() for l in Path(path).read_text(encoding="utf-8").splitlines() if l.strip()]
    if lines and "," in lines[0]:
        header = [h.strip().lower() for h in lines[0].split(",")]
        col = next((header.index(h) for h in ("student", "student_id", "id") if h in header), None)
        if col is None:
            raise ValueError(f"roster {path}: a CSV roster needs a 'student' or 'id' column")
        lines = [l.split(",")[col].strip() for l in lines[1:]]
    bad = [s for s in lines if not STUDENT_ID.match(s)]
    if bad:
        raise ValueError(f"roster {path}: not valid student ids: {bad[:5]}")
    return sorted(set(lines))


MAX_NOTEBOOK_BYTES = 50 * 2**20


def notebook_problem(path: Path) -> str | None:
    """Why a file is not a gradable notebook, or None if it is."""
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return f"the notebook is {path.stat().st_size / 2**20:.0f} MB (at most {MAX_NOTEBOOK_BYTES // 2**20} MB)"
    try:
        nb = nbformat.read(path, as_version=4)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return f"not valid notebook JSON ({type(exc).__name__}: {str(exc)[:120]})"
    except Exception as exc:
        return f"unreadable notebook ({type(exc).__name__}: {str(exc)[:120]})"
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        return f"invalid notebook structure ({str(exc).splitlines()[0][:120]})"
    return None
