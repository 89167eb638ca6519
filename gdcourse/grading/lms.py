"""What each LMS calls the files it hands out, and the grade files it takes back.

In: the entry names of a "download all submissions" archive (or of the
folder it was extracted to), read as data. Each LMS writes who submitted
into the name:

- Moodle: ``Full Name_<participant>_assignsubmission_file/<file>`` (one
  folder per submission; ``..._file_/`` before Moodle 4.1) or
  ``Full Name_<participant>_assignsubmission_file_<file>``; the full name
  keeps its spaces and non-ASCII letters (Moodle drops ``'&<>"`` and the
  like), and the participant number is the one Moodle's grading worksheet
  calls ``Participant <n>`` (not the user id). Under blind marking the name
  is ``Participant``. The archive's times are the download's, not the uploads'.
- Canvas: ``<lastnamefirstname>_[LATE_]<user id>_<file id>_<file>``, the name
  lower-cased with everything but letters and digits removed (``[LATE_]anon_<id>_<file id>_<file>``,
  with no name, under anonymous grading).
- Blackboard: ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>[_<file>]``
  (the bare ``.txt`` of an attempt holds ``Name: First Last (username)``).
- Otherwise nbgrader's conventions: a folder per student (``submitted/``
  included), loose ``<student>.ipynb``, or ``<student>_<anything>.ipynb``
  as ``zip_collect`` expects.

Out: the grade-import files Canvas (gradebook import CSV) and Moodle (the
offline grading worksheet) document, written by :mod:`gdcourse.grading.grades`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from itertools import permutations

# A student id is data, not a formula or a path: it names folders and CSV rows.
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+\-]*$")

_MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?$")
_MOODLE_FILE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.+)$")
# anonymous grading: no name, and "anon_<anonymous id>" for the user id
_CANVAS = re.compile(r"^(?:(?P<name>[^_/]+)_)??(?:(?P<late>LATE)_)?(?P<id>\d+|anon_[A-Za-z0-9]+)_"
                     r"(?P<sub>\d+)_(?P<file>.+)$")
_BLACKBOARD = re.compile(r"^(?P<assignment>.+)_(?P<user>[^_/]+)_attempt_"
                         r"(?P<date>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+)|\.txt)?$")
_ZIP_COLLECT = re.compile(r"^(?P<student>[A-Za-z0-9.\-]+)_.+$")
BLACKBOARD_NAME = re.compile(r"^Name:\s*(?P<name>.*?)\s*\((?P<user>[^()]+)\)\s*$", re.M)


@dataclass(frozen=True)
class Entry:
    """Who one file of a download belongs to, as its name says."""

    lms: str  # "moodle", "canvas", "blackboard" or "folder" (nbgrader's layouts)
    key: str  # the student as that LMS names them: participant, user id, username or folder
    file: str  # the file's own name, as the student uploaded it
    name: str | None = None  # the full name the LMS wrote, if any
    lms_id: str | None = None  # Moodle participant, Canvas user id or Blackboard username
    uploaded: datetime | None = None  # from the name (Blackboard's attempt date)
    late: bool = False  # the LMS marked it late (Canvas)


def classify(path: str) -> Entry | None:
    """Whose file ``path`` (relative, '/'-separated) is, or None when its name does not say."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    base = parts[-1]
    for i, part in enumerate(parts[:-1]):
        if m := _MOODLE_DIR.match(part):  # a folder of Moodle's: the rest is the student's own path
            return _moodle(m, "/".join(parts[i + 1:]))
    if m := _MOODLE_FILE.match(base):
        return _moodle(m, m["file"])
    if m := _BLACKBOARD.match(base):
        when = datetime.strptime(m["date"], "%Y-%m-%d-%H-%M-%S")
        return Entry("blackboard", m["user"], m["file"] or "", lms_id=m["user"], uploaded=when)
    if m := _CANVAS.match(base):
        return Entry("canvas", m["id"], m["file"], name=m["name"], lms_id=m["id"], late=bool(m["late"]))
    if len(parts) >= 2:
        return Entry("folder", parts[0], "/".join(parts[1:]))
    stem = base[: -len(".ipynb")] if base.endswith(".ipynb") else None
    if stem and STUDENT_ID.match(stem) and "_" not in stem:
        return Entry("folder", stem, base)
    if m := _ZIP_COLLECT.match(base):
        return Entry("folder", m["student"], base)
    return None


def _moodle(m: re.Match, file: str) -> Entry:
    name = m["name"]
    # blind marking writes "Participant_<n>" for the name
    return Entry("moodle", m["id"], file, name=None if name.lower() == "participant" else name, lms_id=m["id"])


def fold(name: str) -> str:
    """A name for comparison: letters and digits only, accents dropped, case folded ("Zoë O'Brien" -> "zoeobrien")."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c)).casefold()


def name_forms(name: str) -> set[str]:
    """The folded forms a full name takes in LMS file names: its words in any order, run together
    (Canvas writes "lastnamefirstname"), for names of up to four words; else first-last and last-first."""
    words = [fold(w) for w in re.split(r"[\s_\-]+", name) if fold(w)]
    if len(words) <= 4:
        return {"".join(p) for p in permutations(words)}
    return {"".join(words), "".join(words[-1:] + words[:-1])}


def slug(name: str) -> str:
    """An ASCII id made from a name ("Zoë O'Brien" -> "zoe-obrien"), or "" when nothing ASCII is left."""
    decomposed = unicodedata.normalize("NFKD", name)
    ascii_name = "".join(c for c in decomposed if not unicodedata.combining(c)).encode("ascii", "ignore").decode()
    words = re.findall(r"[A-Za-z0-9]+", ascii_name.replace("'", ""))
    return "-".join(w.lower() for w in words)


def student_id(entry: Entry) -> str:
    """The id a student found in a download gets when no roster names them."""
    if entry.lms == "folder" or (entry.lms == "blackboard" and STUDENT_ID.match(entry.key)):
        return entry.key  # a folder's name, valid or not: intake gives an invalid one an "invalid notebook" row
    base = slug(entry.name or "")
    return "-".join(p for p in (base or entry.lms, entry.lms_id or slug(entry.key)) if p)


# --- grade files the LMSs take back -----------------------------------------------------------

# Canvas: Grades > Import. The first five columns identify the student (Canvas matches on ID, then
# SIS User ID, then SIS Login ID); each further column is an assignment, named "Title (assignment id)"
# as Canvas's own export names it; "Points Possible" may be the second row.
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")

# Moodle: Assignment > Grading action > "Upload grading worksheet" (offline grading worksheet): rows are
# matched by "Identifier" ("Participant <n>"); Moodle reads "Grade" and "Feedback comments", and refuses a
# row whose grade changed in Moodle after the worksheet's "Last modified (grade)".
MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments")
MOODLE_PARTICIPANT = re.compile(r"^Participant\s+(?P<id>\d+)$")
MOODLE_TIME = "%A, %d %B %Y, %I:%M %p"  # "Tuesday, 5 March 2024, 3:07 PM"; "-" when there is none


def moodle_time(text: str | None) -> datetime | None:
    try:
        return datetime.strptime((text or "").strip(), MOODLE_TIME)
    except ValueError:
        return None
