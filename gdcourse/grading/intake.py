"""Intake: every student's notebook, from a folder or an LMS download, matched to the roster.

A source is a folder or a zip. Every file in it is read as data (never
extracted by the archive's own paths) and assigned to a student by its name
(:func:`gdcourse.grading.lms.classify`: Moodle, Canvas, Blackboard, or
nbgrader's folder layouts). With a roster, a file's student is the roster
entry with the same LMS id, else the same username, else the same name
(accents, case, spaces and word order aside); without one, the id comes
from the download (:func:`gdcourse.grading.lms.student_id`).

Nothing is dropped silently: a student on the roster with nothing found is
``missing``; a student found but not on the roster is graded and their row
says so; a file whose name says nobody, or a name that matches two roster
entries, is a warning (printed by ``gdcourse grade`` and kept next to the
CSV). When a student handed in several notebooks, the newest is graded and
the row says how many there were.
"""

from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from gdcourse.grading import lms
from gdcourse.grading.lms import STUDENT_ID

MAX_NOTEBOOK_BYTES = 50 * 2**20
_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Student:
    """One roster entry: the course's id, and what the LMS knows them by."""

    id: str
    name: str | None = None
    email: str | None = None
    lms_ids: tuple[tuple[str, str], ...] = ()  # (("moodle", "7788"), ("canvas", "1001"), ("username", "alove"))
    row: tuple[tuple[str, str], ...] = ()  # the roster's own row, when the roster is an LMS's file

    def lms_id(self, kind: str) -> str | None:
        return dict(self.lms_ids).get(kind)


@dataclass(frozen=True)
class Roster:
    students: tuple[Student, ...]
    kind: str = "list"  # "list", "csv", "canvas" (a gradebook export) or "moodle" (a grading worksheet)
    columns: tuple[str, ...] = ()  # the LMS file's header, to write it back in the same shape

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.students]


@dataclass(frozen=True)
class Submission:
    """One student's hand-in: the notebook to grade (None if there is none) and what is known of it."""

    student: str
    notebook: Path | None
    uploaded: str | None = None  # ISO time of the graded upload: the LMS's, nbgrader's timestamp.txt or the file's
    uploads: int = 0  # notebooks this student handed in
    problem: str | None = None  # why ``notebook`` is None, or a note about the choice made
    status: str | None = None  # the row's status when there is nothing to grade ("missing", "invalid notebook")
    name: str | None = None
    email: str | None = None
    lms: str | None = None  # where it came from: "moodle", "canvas", "blackboard", "folder"
    lms_id: str | None = None
    late: bool = False  # marked late by the LMS itself
    on_roster: bool | None = None  # None when there is no roster


@dataclass
class Intake:
    submissions: dict[str, Submission]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _File:
    path: str  # relative, '/'-separated
    time: datetime | None
    size: int
    symlink: bool
    read: object  # () -> the file's bytes
    on_disk: Path | None = None  # the file itself, in a folder (graded in place)


def collect(source: Path | str, assignment: str, *, work: Path | str | None = None,
            roster: Roster | None = None) -> Intake:
    """Every student found in ``source`` (a folder, or a zip read into ``work``), and every roster student."""
    source = Path(source)
    if source.is_file() and zipfile.is_zipfile(source):
        if work is None:
            raise ValueError("a zip of submissions needs a work folder to extract into")
        with zipfile.ZipFile(source) as z:
            return _collect(_zip_files(z), assignment, Path(work), roster)
    if not source.is_dir():
        raise FileNotFoundError(f"submissions {source} is neither a folder nor a zip file")
    # a student's folder with nothing in it is a student too: they get a row, not silence
    empty = [d.name for d in sorted(source.iterdir()) if d.is_dir() and not d.is_symlink()
             and not _ignored(d.name) and not any(p.is_file() for p in d.rglob("*"))]
    return _collect(_folder_files(source), assignment, Path(work) if work else None, roster, empty)


def _zip_files(z: zipfile.ZipFile) -> list[_File]:
    return [_File(i.filename, datetime(*i.date_time), i.file_size, False, (lambda i=i: z.read(i)))
            for i in z.infolist() if not i.is_dir()]


def _folder_files(top: Path) -> list[_File]:
    files = []
    for folder, dirs, names in os.walk(top, followlinks=False):
        here = Path(folder)
        for name in sorted(names) + sorted(d for d in dirs if (here / d).is_symlink()):
            p = here / name
            rel = p.relative_to(top).as_posix()
            if p.is_symlink():
                files.append(_File(rel, None, 0, True, lambda: b""))
            else:
                st = p.stat()
                files.append(_File(rel, datetime.fromtimestamp(st.st_mtime), st.st_size, False, p.read_bytes, p))
    return files


def _ignored(path: str) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in path.split("/"))


def _collect(files: list[_File], assignment: str, work: Path | None, roster: Roster | None,
             empty: list[str] = ()) -> Intake:
    warnings: list[str] = []
    groups: dict[tuple[str, str], list[tuple[lms.Entry, _File | None]]] = {
        ("folder", name): [(lms.Entry("folder", name, ""), None)] for name in empty}
    names: dict[str, str] = {}  # Blackboard username -> the full name in its .txt
    stamps: dict[str, datetime] = {}  # top folder -> nbgrader's timestamp.txt
    for f in files:
        if ".." in f.path.split("/"):  # a crafted zip entry: said, and never followed
            warnings.append(f"{f.path}: a path that climbs out of its folder; not graded")
            continue
        entry = lms.classify(f.path)
        if _ignored(f.path):
            if entry and not _ignored(entry.key):  # a student whose only files are hidden still gets a row
                groups.setdefault((entry.lms, entry.key), [(replace(entry, file=""), None)])
            continue
        if entry is None and f.symlink and "/" not in f.path:  # a student's folder that is a link
            entry = lms.Entry("folder", f.path, f.path)
        if entry is None:
            warnings.append(f"{f.path}: the file name does not say whose it is; not graded")
            continue
        if entry.lms == "blackboard" and not entry.file and f.path.endswith(".txt") and not f.symlink:
            if m := lms.BLACKBOARD_NAME.search(_text(f)):
                names[entry.key] = m["name"]
            continue
        if entry.lms == "folder" and entry.file.endswith("timestamp.txt") and not f.symlink:
            if when := _nbgrader_time(_text(f)):
                stamps[entry.key] = when.astimezone()
            continue
        groups.setdefault((entry.lms, entry.key), []).append((entry, f))

    matcher = _Matcher(roster, warnings)
    found: dict[str, list[tuple[lms.Entry, _File]]] = {}
    people: dict[str, tuple[lms.Entry, Student | None]] = {}
    for (kind, key), items in sorted(groups.items()):
        entry = items[0][0]
        if kind == "blackboard" and key in names:
            entry = replace(entry, name=names[key])
        student = matcher.match(entry)
        sid = student.id if student else lms.student_id(entry)
        if roster is not None and student is None:
            warnings.append(f"{_describe(entry)} is not on the roster; graded as {sid!r}")
        found.setdefault(sid, []).extend((e, f) for e, f in items if f is not None)
        people.setdefault(sid, (entry, student))

    submissions = {}
    for sid, items in sorted(found.items()):
        entry, student = people[sid]
        who = dict(name=(student.name if student and student.name else entry.name),
                   email=student.email if student else None, lms=entry.lms, lms_id=entry.lms_id,
                   on_roster=None if roster is None else student is not None)
        if not STUDENT_ID.match(sid):
            submissions[sid] = Submission(sid, None, status="invalid notebook", problem=(
                f"{sid!r} is not a valid student id (letters, digits, '.', '_', '@', '+' and '-', "
                "starting with a letter or digit)"), **who)
            continue
        # an LMS archive's times are the download's: Moodle's worksheet, as the roster, has the upload's
        known = stamps.get(entry.key) or (student and lms.moodle_time(dict(student.row).get("Last modified (submission)")))
        submissions[sid] = _choose(sid, items, assignment, work, known, who)
    if roster is not None:
        for s in roster.students:
            if s.id not in submissions:
                submissions[s.id] = Submission(s.id, None, status="missing", name=s.name, email=s.email,
                                               problem="on the roster, but no submission was found", on_roster=True)
    return Intake(dict(sorted(submissions.items())), warnings)


def _choose(sid, items, assignment, work, known: datetime | None, who) -> Submission:
    """The notebook graded for one student: the newest (in a folder, the one named after the assignment).
    ``known``: the upload time where the files' own do not tell (nbgrader's timestamp.txt, Moodle's worksheet)."""
    if not items:
        return Submission(sid, None, status="missing", problem="the student's folder is empty", **who)
    late = any(e.late for e, _ in items)
    notebooks = [(e, f) for e, f in items if f.path.endswith(".ipynb") and not f.symlink]
    if not notebooks:
        links = [f for _, f in items if f.symlink]
        if links:
            return Submission(sid, None, status="invalid notebook", late=late, uploads=len(links),
                              problem="the submission is a symbolic link, not a file or folder", **who)
        handed = ", ".join(sorted(e.file or f.path.rsplit("/", 1)[-1] for e, f in items)[:5])
        return Submission(sid, None, status="invalid notebook", late=late, uploads=len(items),
                          problem=f"handed in {handed}, but no notebook (.ipynb)", **who)

    def when(item):  # only a folder's own files have the student's times (an LMS archive's are the download's)
        e, f = item
        found = e.uploaded or (f.time if e.lms == "folder" else None)
        return found.astimezone() if found else _EARLIEST  # a naive time is this machine's local time

    def named(item):
        return item[0].file.rsplit("/", 1)[-1] == f"{assignment}.ipynb"

    folder = items[0][0].lms == "folder"
    ordered = sorted(notebooks, key=(lambda i: (named(i), when(i), i[1].path)) if folder
                     else (lambda i: (when(i), named(i), i[1].path)))
    entry, chosen = ordered[-1]
    uploaded = known.astimezone() if known else when(ordered[-1])
    note = None
    if len(notebooks) > 1:
        note = f"{len(notebooks)} notebooks handed in; graded {entry.file or chosen.path}"
    base = dict(uploaded=None if uploaded == _EARLIEST else uploaded.isoformat(timespec="seconds"),
                uploads=len(notebooks), late=late, **who)
    if chosen.size > MAX_NOTEBOOK_BYTES:
        return Submission(sid, None, status="invalid notebook", **base, problem=(
            f"the notebook is {chosen.size / 2**20:.0f} MB (at most {MAX_NOTEBOOK_BYTES // 2**20} MB)"))
    target = chosen.on_disk
    if target is None:
        target = work / "intake" / sid / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(chosen.read())  # never by the archive's own path
    return Submission(sid, target, problem=note, **base)


def _text(f: _File) -> str:
    return f.read()[:10_000].decode("utf-8", "replace")


def _nbgrader_time(text: str) -> datetime | None:
    """nbgrader's timestamp.txt, in UTC: '2026-10-01 12:00:00.123456 UTC' (`nbgrader submit`) or
    '2026-10-01 12:00:00' (`zip_collect`)."""
    text = text.strip().replace(" UTC", "").replace("T", " ")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return None


def _describe(entry: lms.Entry) -> str:
    what = {"moodle": "Moodle participant", "canvas": "Canvas user", "blackboard": "Blackboard user",
            "folder": "folder"}[entry.lms]
    name = f" ({entry.name})" if entry.name else ""
    return f"{what} {entry.lms_id or entry.key}{name}"


class _Matcher:
    """A download's student -> a roster entry: by LMS id, else username, else a unique name."""

    def __init__(self, roster: Roster | None, warnings: list[str]):
        self.roster, self.warnings = roster, warnings

    def match(self, entry: lms.Entry) -> Student | None:
        if self.roster is None:
            return None
        students = self.roster.students
        if entry.lms_id:
            by_id = [s for s in students if s.lms_id(entry.lms) == entry.lms_id]
            if len(by_id) == 1:
                return by_id[0]
        key = entry.key.casefold()
        by_user = [s for s in students if key in {s.id.casefold(), (s.lms_id("username") or "").casefold(),
                                                  (s.email or "").casefold().split("@")[0]}]
        if entry.lms in ("folder", "blackboard") and len(by_user) == 1:
            return by_user[0]
        if entry.name:
            forms = lms.name_forms(entry.name)
            by_name = [s for s in students if s.name and forms & lms.name_forms(s.name)]
            if len(by_name) == 1:
                return by_name[0]
            if len(by_name) > 1:
                self.warnings.append(f"{_describe(entry)} matches {len(by_name)} roster names "
                                     f"({', '.join(s.id for s in by_name)}); add the LMS id to the roster")
        return None


# --- rosters -----------------------------------------------------------------------------------

_ALIASES = {  # roster column (case-insensitive) -> what it holds
    "student": "id", "student_id": "id", "id": "id",
    "name": "name", "full name": "name", "full_name": "name",
    "email": "email", "email address": "email",
    "canvas_id": "canvas", "canvas user id": "canvas",
    "moodle_id": "moodle", "participant": "moodle",
    "username": "username", "login": "username", "blackboard": "username",
}


def read_roster(path: Path | str) -> Roster:
    """The students of a term: one id per line; a CSV with a ``student`` (or ``id``) column and optional
    ``name``, ``email``, ``canvas_id``, ``moodle_id``, ``username``; Canvas's gradebook export; or
    Moodle's grading worksheet (which ``gdcourse grades`` then fills in, in the same shape)."""
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"roster {path} is empty")
    if "," not in lines[0]:
        if lines[0].lower() in ("student", "student_id", "id"):  # a one-column CSV's header
            lines = lines[1:]
        students = [Student(s) for s in dict.fromkeys(lines)]
        return Roster(_valid(students, path), "list")
    reader = csv.DictReader(io.StringIO(text))
    header = tuple(reader.fieldnames or ())
    rows = [r for r in reader if any((v or "").strip() for v in r.values())]
    if {"Identifier", "Full name"} <= set(header):
        return Roster(_valid([_moodle_student(r) for r in rows], path), "moodle", header)
    if {"Student", "ID"} <= set(header):
        # not students: the Points Possible row, and the Test Student Canvas adds to every course
        rows = [r for r in rows if not (r.get("Student") or "").strip().startswith("Points Possible")
                and (r.get("Student") or "").strip() != "Student, Test"]
        return Roster(_valid([_canvas_student(r) for r in rows], path), "canvas", header)
    cols = {h: _ALIASES[h.strip().lower()] for h in header if h and h.strip().lower() in _ALIASES}
    if "id" not in cols.values():
        raise ValueError(f"roster {path}: a CSV roster needs a 'student' or 'id' column (it has {list(header)})")
    students = []
    for r in rows:
        got = {what: (r.get(h) or "").strip() for h, what in cols.items()}
        ids = tuple((k, got[k]) for k in ("canvas", "moodle", "username") if got.get(k))
        students.append(Student(got["id"], got.get("name") or None, got.get("email") or None, ids))
    return Roster(_valid(students, path), "csv", header)


def _moodle_student(r: dict) -> Student:
    m = lms.MOODLE_PARTICIPANT.match((r.get("Identifier") or "").strip())
    if not m:
        raise ValueError(f"not a Moodle participant identifier: {r.get('Identifier')!r}")
    name, email = (r.get("Full name") or "").strip(), (r.get("Email address") or "").strip()
    local = email.split("@")[0]
    sid = local if local and STUDENT_ID.match(local) else "-".join(p for p in (lms.slug(name), m["id"]) if p)
    return Student(sid, name or None, email or None, (("moodle", m["id"]),), tuple(r.items()))


def _canvas_student(r: dict) -> Student:
    cid = (r.get("ID") or "").strip()
    login = (r.get("SIS Login ID") or "").strip()
    name = (r.get("Student") or "").strip()
    if "," in name:  # Canvas exports "Last, First"
        last, first = [p.strip() for p in name.split(",", 1)]
        name = f"{first} {last}"
    sid = login if login and STUDENT_ID.match(login) else "-".join(p for p in (lms.slug(name), cid) if p)
    return Student(sid, name or None, None, (("canvas", cid),) + ((("username", login),) if login else ()),
                   tuple(r.items()))


def _valid(students: list[Student], path) -> tuple[Student, ...]:
    bad = [s.id for s in students if not STUDENT_ID.match(s.id)]
    if bad:
        raise ValueError(f"roster {path}: not valid student ids: {bad[:5]}")
    seen, dup = set(), []
    for s in students:
        if s.id in seen:
            dup.append(s.id)
        seen.add(s.id)
    if dup:
        raise ValueError(f"roster {path}: these ids appear twice: {sorted(set(dup))[:5]}")
    return tuple(sorted(students, key=lambda s: s.id))


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
