"""Final grades: the judge's automatic scores, the hand grades from nbgrader's gradebook
(formgrader), and what intake learnt of each upload, merged into one row per student.

The inputs all live in the grading folder ``OUT``:

- ``results/<student>.json``, the judge's authenticated verdicts (:mod:`.cohort`);
- ``gradebook.db``, where formgrader keeps hand grades, overrides and comments;
- ``intake.json``, every student intake found or the roster named (upload time, number of
  uploads, LMS and id, or why there is nothing to grade), the roster and the due date.

From them :func:`final` makes the rows and :func:`write` the files: ``grades.csv``, and
the grade-import files of the LMSs the students came from (``lms/canvas.csv``, Canvas's
gradebook import; ``lms/moodle.csv``, Moodle's offline grading worksheet). Points still to
be graded by hand are never a silent 0: the row counts them as ``pending``, and the LMS files
leave such a grade blank, with a warning. ``gdcourse grades OUT`` rebuilds all of it after
hand grading; ``gdcourse grade`` does it at the end of every run.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path

from gdcourse.grading import export, lms
from gdcourse.grading.verdict import Verdict

STATUSES = ("graded", "tampered", "flagged", "timed out", "crashed", "invalid notebook", "missing")
NO_ISOLATION = "graded without isolation (--no-isolation)"
INTAKE = "intake.json"
WARNINGS = "warnings.txt"


@dataclass(frozen=True)
class GradeRow:
    """One student's line of ``grades.csv``."""

    student: str
    score: float | None  # automatic + graded by hand so far
    max_score: float | None
    status: str  # one of STATUSES
    reason: str = ""
    auto_score: float | None = None  # the test cells (with any score the instructor set by hand)
    manual_score: float | None = None  # written answers graded by hand so far
    pending: float = 0.0  # points still to be graded by hand
    name: str = ""
    uploaded: str = ""  # ISO time of the graded upload
    late: str = ""  # "yes", "no", or "" when neither a due date nor the LMS says
    hours_late: float | None = None
    uploads: int = 0
    lms: str = ""
    lms_id: str = ""


CSV_FIELDS = tuple(f.name for f in fields(GradeRow))


# --- the intake record ------------------------------------------------------------------------

def save_intake(out: Path, assignment: str, intake, roster, *, due: str | None = None,
                canvas_column: str | None = None) -> None:
    """What intake found, kept for :func:`final` (which runs again after hand grading). A due date or
    Canvas column given once is kept until another is given."""
    before = read_intake(out) if (out / INTAKE).is_file() else {}
    record = {"assignment": assignment, "due": due or before.get("due"),
              "canvas_column": canvas_column or before.get("canvas_column"), "warnings": intake.warnings,
              "roster": None if roster is None else {
                  "kind": roster.kind, "columns": list(roster.columns),
                  "students": [{"id": s.id, "name": s.name, "email": s.email, "lms_ids": dict(s.lms_ids),
                                "row": dict(s.row)} for s in roster.students]},
              "students": {sid: {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(sub).items()}
                           for sid, sub in intake.submissions.items()}}
    _atomic(out / INTAKE, json.dumps(record, indent=1, sort_keys=True))


def update_intake(out: Path, *, due: str | None = None, canvas_column: str | None = None) -> None:
    """Change the due date or the Canvas column of a graded cohort (``gdcourse grades OUT --due ...``)."""
    record = read_intake(out)
    if due:
        parse_due(due)
        record["due"] = due
    if canvas_column:
        record["canvas_column"] = canvas_column
    _atomic(out / INTAKE, json.dumps(record, indent=1, sort_keys=True))


def read_intake(out: Path) -> dict:
    path = out / INTAKE
    if not path.is_file():
        raise FileNotFoundError(f"{out} is not a grading folder of `gdcourse grade` (no {INTAKE})")
    return json.loads(path.read_text(encoding="utf-8"))


def parse_due(text: str | None) -> datetime | None:
    """``--due``: an ISO 8601 date and time, e.g. 2026-10-01T23:59 or 2026-10-01T23:59+02:00 (local time if
    no offset is given); a date alone means the end of that day."""
    if not text:
        return None
    try:
        # a trailing Z (UTC) as Python 3.11 reads it; 3.10's fromisoformat does not
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise ValueError(f"--due {text!r}: give an ISO date and time, e.g. 2026-10-01T23:59") from None
    if len(text) == 10:
        when = when.replace(hour=23, minute=59, second=59)
    return when


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo else when.astimezone()  # a naive time is this machine's local time


# --- merging ------------------------------------------------------------------------------------

def final(out: Path | str, results: dict[str, Verdict] | None = None) -> list[GradeRow]:
    """One row per student of ``out``'s intake (so one per roster student, and any found beside it)."""
    from gdcourse.grading.cohort import stored_results
    out = Path(out)
    record = read_intake(out)
    results = stored_results(out) if results is None else results
    hand = hand_grades(out / "gradebook.db", record["assignment"])
    due = parse_due(record.get("due"))
    max_score = _max_score(out, record["assignment"])
    rows = []
    for sid, sub in sorted(record["students"].items()):
        result = results.get(sid)
        if sub.get("status"):
            row = GradeRow(sid, 0.0, max_score, sub["status"], sub.get("problem") or "no notebook found")
        elif result is None:
            row = GradeRow(sid, 0.0, max_score, "crashed", "no result was kept for this student: run gdcourse grade again")
        else:
            row = _judged(sid, result, hand.get(sid, {}), max_score)
        rows.append(_with_intake(row, sub, due))
    return rows


def _judged(student: str, r: Verdict, hand: dict, max_score: float | None) -> GradeRow:
    tail = [] if r.isolated else [NO_ISOLATION]
    top_score = max_score if r.max_score is None else r.max_score
    if not r.graded:
        return GradeRow(student, 0.0, top_score, r.status, "; ".join([r.reason, *tail]))
    written = set(r.written)
    auto = manual = pending = extra = 0.0
    lost, waiting, overridden, empty = [], [], [], []
    order = list(dict.fromkeys(c.test for c in r.cases))  # the notebook's order (stored sorted)
    cells = sorted(r.grades.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    for name, (score, top, needs_hand) in cells:
        g = hand.get(name, {})
        extra += g.get("extra_credit") or 0.0
        by_hand = g.get("manual_score")
        if name in written:
            if needs_hand and (by_hand is None or g.get("needs_manual_grade")):
                pending += top
                waiting.append(name)
            elif by_hand is not None:
                manual += by_hand
            else:
                empty.append(name)
            continue
        if by_hand is not None:
            overridden.append(f"{name} set by hand to {by_hand:g} (automatic {score or 0:g})")
            score = by_hand
        auto += score or 0.0
        if top and (score or 0) < top:
            lost.append(name)
    parts, status = [], "graded"
    if r.tampered:
        status = "tampered"
        parts.append("cells changed by the student: " + ", ".join(r.tampered) + " (graded with the released cells)")
    if r.zeroed:
        status = "flagged" if status == "graded" else status
        parts.append("; ".join(f"{test} scores 0: {', '.join(why)}" for test, why in r.zeroed.items()))
    if r.flags:
        status = "flagged" if status == "graded" else status
        parts.append("for review: " + ", ".join(r.flags))
    if lost:
        parts.append("lost points in " + ", ".join(lost))
    parts += overridden
    if empty:
        parts.append("written answer left empty: " + ", ".join(empty))
    if waiting:
        parts.append(f"{pending:g} point(s) await manual grading ({', '.join(waiting)})")
    if extra:
        parts.append(f"{extra:g} extra point(s) given by hand")
    total = round(auto + manual + extra, 6)
    return GradeRow(student, total, top_score, status, "; ".join(parts + tail),
                    auto_score=round(auto, 6), manual_score=round(manual, 6) if written else None,
                    pending=round(pending, 6))


def _with_intake(row: GradeRow, sub: dict, due: datetime | None) -> GradeRow:
    uploaded = sub.get("uploaded") or ""
    late, hours = ("yes", None) if sub.get("late") else ("", None)
    if due is not None and uploaded:
        delta = (_aware(datetime.fromisoformat(uploaded)) - _aware(due)).total_seconds() / 3600
        late, hours = ("yes" if delta > 0 or sub.get("late") else "no"), round(max(delta, 0.0), 2)
    notes = [row.reason] if row.reason else []
    if sub.get("problem") and not sub.get("status"):
        notes.append(sub["problem"])
    if sub.get("on_roster") is False:
        notes.append("not on the roster")
    return GradeRow(**{**asdict(row), "reason": "; ".join(notes), "name": sub.get("name") or "",
                       "uploaded": uploaded, "late": late, "hours_late": hours,
                       "uploads": sub.get("uploads") or 0, "lms": sub.get("lms") or "",
                       "lms_id": sub.get("lms_id") or ""})


def hand_grades(db: Path, assignment: str) -> dict[str, dict[str, dict]]:
    """From nbgrader's gradebook, what formgrader set: ``{student: {cell: {manual_score, needs_manual_grade,
    extra_credit, comment}}}`` (a cell's comment under its own name)."""
    if not db.is_file():
        return {}
    import warnings

    from nbgrader.api import Gradebook
    found: dict[str, dict[str, dict]] = {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not in session.*")
        with Gradebook(f"sqlite:///{db}", course_id="gdcourse") as gb:
            for sub in gb.find_assignment(assignment).submissions:
                cells: dict[str, dict] = {}
                for nb in sub.notebooks:
                    for g in nb.grades:
                        cells.setdefault(g.name, {}).update(manual_score=g.manual_score, extra_credit=g.extra_credit,
                                                            needs_manual_grade=bool(g.needs_manual_grade))
                    for c in nb.comments:
                        if c.manual_comment:
                            cells.setdefault(c.name, {})["comment"] = c.manual_comment
                found[sub.student_id] = cells
    return found


def _max_score(out: Path, assignment: str) -> float | None:
    db = out / "template" / "gradebook.db"
    return export.assignment_max_score(db, assignment) if db.is_file() else None


# --- the files ------------------------------------------------------------------------------------

def write(out: Path | str, rows: list[GradeRow] | None = None) -> list[str]:
    """``grades.csv`` and the LMS files; returns the warnings (also kept in ``warnings.txt``)."""
    out = Path(out)
    record = read_intake(out)
    rows = final(out) if rows is None else rows
    export.write_csv(CSV_FIELDS, [asdict(r) for r in rows], out / "grades.csv")
    warnings = list(record.get("warnings", []))
    roster = record.get("roster") or {}
    for kind, writer in (("canvas", _canvas), ("moodle", _moodle)):
        if roster.get("kind") == kind or any(r.lms == kind for r in rows):
            table, notes = writer(rows, record)
            export.write_csv(table[0], table[1], out / "lms" / f"{kind}.csv")
            warnings += notes
    pending = [r.student for r in rows if r.pending]
    if pending and (out / "lms").is_dir():
        warnings.append(f"{len(pending)} student(s) have points to grade by hand ({', '.join(pending[:8])}"
                        f"{', ...' if len(pending) > 8 else ''}): their LMS grade is left blank until then")
    _atomic(out / WARNINGS, "".join(f"{w}\n" for w in warnings))
    return warnings


def _lms_grade(row: GradeRow) -> str:
    return "" if row.pending or row.score is None else f"{row.score:.2f}"


def _comment(row: GradeRow) -> str:
    return f"{row.status}: {row.reason}" if row.reason else row.status


def _canvas(rows: list[GradeRow], record: dict) -> tuple[tuple, list[str]]:
    """Canvas's gradebook import: the identifying columns, one assignment column, a Points Possible row."""
    roster = record.get("roster") or {}
    column = record.get("canvas_column") or record["assignment"]
    by_id = {s["id"]: s for s in roster.get("students", [])} if roster.get("kind") == "canvas" else {}
    header = lms.CANVAS_COLUMNS + (column,)
    top = next((r.max_score for r in rows if r.max_score is not None), None)
    table = [{**{c: "" for c in header}, "Student": "Points Possible", column: "" if top is None else f"{top:g}"}]
    notes = []
    for r in rows:
        known = by_id.get(r.student, {}).get("row") or {}
        canvas_id = known.get("ID") or (r.lms_id if r.lms == "canvas" else "")
        if not canvas_id:
            notes.append(f"{r.student} has no Canvas user id (not in a Canvas download or roster): not in canvas.csv")
            continue
        line = {c: known.get(c, "") for c in lms.CANVAS_COLUMNS}
        line.update({"Student": known.get("Student") or r.name or r.student, "ID": canvas_id, column: _lms_grade(r)})
        table.append(line)
    return (header, table), notes


def _moodle(rows: list[GradeRow], record: dict) -> tuple[tuple, list[str]]:
    """Moodle's offline grading worksheet: the downloaded worksheet's rows with Grade and Feedback comments
    filled in when the roster is that worksheet, else one built from the participant numbers."""
    roster = record.get("roster") or {}
    worksheet = roster.get("kind") == "moodle"
    header = tuple(roster["columns"]) if worksheet else lms.MOODLE_COLUMNS
    by_participant = {}
    for s in roster.get("students", []) if worksheet else []:
        by_participant[s["id"]] = s["row"]
    table, notes = [], []
    for r in rows:
        known = by_participant.get(r.student)
        participant = (lms.MOODLE_PARTICIPANT.match(known["Identifier"])["id"] if known
                       else r.lms_id if r.lms == "moodle" else "")
        if not participant:
            notes.append(f"{r.student} has no Moodle participant number (not in a Moodle download or worksheet): "
                         "not in moodle.csv")
            continue
        line = dict(known) if known else {c: "" for c in header}
        line.update({"Identifier": f"Participant {participant}", "Grade": _lms_grade(r)})
        if not known:
            line.update({"Full name": r.name or r.student,
                         "Maximum Grade": "" if r.max_score is None else f"{r.max_score:.2f}",
                         "Grade can be changed": "Yes"})
        if "Feedback comments" in header:
            line["Feedback comments"] = _comment(r)
        table.append({c: line.get(c, "") for c in header})
    return (header, table), notes


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
