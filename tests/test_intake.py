"""Intake of submissions: LMS downloads (Moodle, Canvas, Blackboard) and nbgrader's folder layouts,
matched to a roster, with nothing dropped silently. Fast: nothing is graded or run."""

from __future__ import annotations

import os
import time
import unicodedata
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gdcourse.grading import intake, lms
from gdcourse.grading.intake import collect, read_roster

ROOT = Path(__file__).resolve().parent.parent
EX = "ex01-gd-loop"
NB = (ROOT / "exercises" / EX / f"{EX}.ipynb").read_bytes()
NEWER = NB + b"\n"  # another valid notebook, to tell which one was taken
ZIP_TIME = (2030, 1, 2, 3, 4, 6)  # the download's time, never an upload's (a zip keeps even seconds)
MOODLE_HEADER = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                 "Last modified (submission),Last modified (grade),Feedback comments")
CANVAS_HEADER = "Student,ID,SIS User ID,SIS Login ID,Section,ex01-gd-loop (123)"


@pytest.fixture(autouse=True)
def _not_utc(monkeypatch):
    """A local zone that is not UTC (5:30 behind, no tz database needed): a time read in the wrong zone shows."""
    monkeypatch.setenv("TZ", "XST+05:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def make_zip(path: Path, entries) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in (entries.items() if isinstance(entries, dict) else entries):
            z.writestr(zipfile.ZipInfo(name, ZIP_TIME), data)
    return path


def make_dir(top: Path, entries: dict) -> Path:
    for name, data in entries.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_bytes(data)
    return top


def source(tmp_path: Path, kind: str, entries: dict) -> Path:
    return make_zip(tmp_path / "download.zip", entries) if kind == "zip" else make_dir(tmp_path / "download", entries)


def roster(tmp_path: Path, text: str, name="roster.csv"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_roster(tmp_path / name)


def local(iso: str) -> datetime:
    return datetime.fromisoformat(iso).replace(tzinfo=None)


# --- names ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, want", [
    ("Zoë Müller_1234_assignsubmission_file/ex01-gd-loop.ipynb", ("moodle", "1234", "ex01-gd-loop.ipynb", "Zoë Müller")),
    ("Zoë Müller_1234_assignsubmission_file_/sub/x.ipynb", ("moodle", "1234", "sub/x.ipynb", "Zoë Müller")),
    ("王小明_1235_assignsubmission_file_my_ex01.ipynb", ("moodle", "1235", "my_ex01.ipynb", "王小明")),
    ("Participant_7790_assignsubmission_file/ex01-gd-loop.ipynb", ("moodle", "7790", "ex01-gd-loop.ipynb", None)),
    ("Sean OBrien_1236_assignsubmission_onlinetext_onlinetext.html", ("moodle", "1236", "onlinetext.html", "Sean OBrien")),
    ("müllerzoë_1001_555_ex01-gd-loop.ipynb", ("canvas", "1001", "ex01-gd-loop.ipynb", "müllerzoë")),
    ("lovelaceada_LATE_1002_556_ex01-gd-loop-1.ipynb", ("canvas", "1002", "ex01-gd-loop-1.ipynb", "lovelaceada")),
    ("Ex_01_GD_jdoe_attempt_2026-10-01-23-59-00_ex01-gd-loop.ipynb", ("blackboard", "jdoe", "ex01-gd-loop.ipynb", None)),
    ("Ex_01_GD_jdoe_attempt_2026-10-01-23-59-00.txt", ("blackboard", "jdoe", "", None)),
    ("anon_dUb3x_558_ex01-gd-loop.ipynb", ("canvas", "anon_dUb3x", "ex01-gd-loop.ipynb", None)),
    ("LATE_anon_Qw9zT_559_ex01-gd-loop.ipynb", ("canvas", "anon_Qw9zT", "ex01-gd-loop.ipynb", None)),
    ("ada/ex01-gd-loop/ex01-gd-loop.ipynb", ("folder", "ada", "ex01-gd-loop/ex01-gd-loop.ipynb", None)),
    ("ada/ex01-gd-loop.ipynb", ("folder", "ada", "ex01-gd-loop.ipynb", None)),
    ("ada.ipynb", ("folder", "ada", "ada.ipynb", None)),
    ("ada_ex01-gd-loop.ipynb", ("folder", "ada", "ada_ex01-gd-loop.ipynb", None)),
    ("notes.txt", None),
    ("=1+2.ipynb", None),
])
def test_classify_reads_who_from_each_lms_name(path, want):
    e = lms.classify(path)
    assert (e and (e.lms, e.key, e.file, e.name)) == want
    assert e is None or e.late == ("LATE_" in path)
    if e and e.lms == "blackboard":
        assert e.uploaded == datetime(2026, 10, 1, 23, 59)


def test_names_fold_for_comparison_and_slug_to_ascii_ids():
    assert lms.fold("Zoë O'Brien") == lms.fold(unicodedata.normalize("NFD", "zoe OBRIEN")) == "zoeobrien"
    assert {"adalovelace", "lovelaceada"} <= lms.name_forms("Ada Lovelace")
    assert lms.name_forms("Ana María de la Cruz") == {"anamariadelacruz", "cruzanamariadela"}
    assert lms.slug("Zoë O'Brien") == "zoe-obrien" and lms.slug("王小明") == ""


# --- Moodle ------------------------------------------------------------------------------------

def moodle(style: str, who: str, file: str, plugin="file") -> str:
    return {"folders": f"{who}_assignsubmission_{plugin}/{file}", "old": f"{who}_assignsubmission_{plugin}_/{file}",
            "flat": f"{who}_assignsubmission_{plugin}_{file}"}[style]


@pytest.mark.parametrize("kind", ["zip", "dir"])
@pytest.mark.parametrize("style", ["folders", "old", "flat"])
def test_moodle_download_without_roster(tmp_path, style, kind):
    nfd = unicodedata.normalize("NFD", "Zoë Müller")  # as a Mac extracts it
    src = source(tmp_path, kind, {
        moodle(style, f"{nfd}_1234", f"{EX}.ipynb"): NB, moodle(style, f"{nfd}_1234", "onlinetext.html", "onlinetext"): b"hi",
        moodle(style, "王小明_1235", "my ex01.ipynb"): NB,
        moodle(style, "Sean OBrien_1236", f"{EX}.ipynb"): NB,
        moodle(style, "Seán O'Brien_1237", f"{EX}.ipynb"): NB,
        moodle(style, "Participant_7790", f"{EX}.ipynb"): NB,
        moodle(style, "Pat Pdf_1238", "report.pdf"): b"%PDF",
        moodle(style, "Olive Text_1239", "onlinetext.html", "onlinetext"): b"<p>x</p>",
    })
    got = collect(src, EX, work=tmp_path / "work")
    subs = got.submissions
    assert got.warnings == []
    assert set(subs) == {"zoe-muller-1234", "moodle-1235", "sean-obrien-1236", "sean-obrien-1237", "moodle-7790",
                         "pat-pdf-1238", "olive-text-1239"}
    for sid in ("zoe-muller-1234", "moodle-1235", "sean-obrien-1236", "sean-obrien-1237", "moodle-7790"):
        s = subs[sid]
        assert s.notebook.read_bytes() == NB and (s.status, s.uploads, s.lms) == (None, 1, "moodle"), s
        assert s.uploaded is None, "a Moodle archive's times are the download's"
    assert subs["zoe-muller-1234"].name == nfd and subs["moodle-7790"].name is None
    assert subs["moodle-1235"].lms_id == "1235"
    assert subs["pat-pdf-1238"].status == "invalid notebook" and "report.pdf" in subs["pat-pdf-1238"].problem
    assert subs["olive-text-1239"].status == "invalid notebook" and "onlinetext.html" in subs["olive-text-1239"].problem


def test_moodle_worksheet_roster_gives_upload_times_and_matches_participants(tmp_path):
    sheet = roster(tmp_path, "\ufeff" + MOODLE_HEADER + "\n" + "\n".join([
        'Participant 7788,Erin Moodle,erin@uni.edu,Submitted for grading,,100.00,Yes,"Tuesday, 5 March 2024, 3:07 PM",-,',
        "Participant 7789,Finn Late,finn@uni.edu,No submission,,100.00,Yes,-,-,",
        'Participant 7790,Gus Blind,gus@uni.edu,Submitted for grading,,100.00,Yes,"Monday, 4 March 2024, 9:15 AM",-,',
    ]) + "\n")
    src = make_zip(tmp_path / "d.zip", {
        moodle("folders", "Erin Moodle_7788", f"{EX}.ipynb"): NB,
        moodle("flat", "Participant_7790", f"{EX}.ipynb"): NB,
        moodle("folders", "Hal Extra_7791", f"{EX}.ipynb"): NB,
    })
    got = collect(src, EX, work=tmp_path / "work", roster=sheet)
    subs = got.submissions
    assert set(subs) == {"erin", "finn", "gus", "hal-extra-7791"}
    assert local(subs["erin"].uploaded) == datetime(2024, 3, 5, 15, 7)
    assert local(subs["gus"].uploaded) == datetime(2024, 3, 4, 9, 15)
    assert (subs["gus"].name, subs["gus"].email, subs["gus"].on_roster) == ("Gus Blind", "gus@uni.edu", True)
    assert (subs["finn"].status, subs["finn"].notebook, subs["finn"].on_roster) == ("missing", None, True)
    assert subs["hal-extra-7791"].on_roster is False and subs["hal-extra-7791"].uploaded is None
    assert [w for w in got.warnings if "7791" in w and "not on the roster" in w] == got.warnings != []


# --- Canvas ------------------------------------------------------------------------------------

CANVAS = {"müllerzoë_1001_555_ex01-gd-loop.ipynb": NB, "lovelaceada_LATE_1002_556_ex01-gd-loop-1.ipynb": NB,
          "王小明_1003_557_ex01-gd-loop.ipynb": NB}
CANVAS_ROSTERS = {
    "by canvas_id": "student,name,canvas_id\nzoe,Somebody Else,1001\nada,A. L.,1002\nxm,X. M.,1003\n",
    "by name": "student,name\nzoe,Zoë Müller\nada,Ada Lovelace\nxm,王小明\n",
    "gradebook export": (f"{CANVAS_HEADER}\n    Points Possible,,,,,10\n\"Müller, Zoë\",1001,S1,zoe,A,\n"
                         "\"Lovelace, Ada\",1002,S2,ada,A,\n王小明,1003,S3,xm,B,\n"),
}


@pytest.mark.parametrize("how", list(CANVAS_ROSTERS))
def test_canvas_download_matched_to_roster(tmp_path, how):
    src = make_zip(tmp_path / "d.zip", CANVAS)
    got = collect(src, EX, work=tmp_path / "work", roster=roster(tmp_path, CANVAS_ROSTERS[how]))
    assert got.warnings == [] and set(got.submissions) == {"zoe", "ada", "xm"}
    for sid, s in got.submissions.items():
        assert s.notebook == tmp_path / "work" / "intake" / sid / f"{EX}.ipynb" and s.notebook.read_bytes() == NB
        assert (s.late, s.on_roster, s.lms, s.uploaded) == (sid == "ada", True, "canvas", None)


def test_canvas_without_roster_and_ambiguous_names(tmp_path):
    src = make_zip(tmp_path / "d.zip", CANVAS)
    assert set(collect(src, EX, work=tmp_path / "w1").submissions) == {"mullerzoe-1001", "lovelaceada-1002", "canvas-1003"}
    two = roster(tmp_path, "student,name\nada1,Ada Lovelace\nada2,Lovelace Ada\nzoe,Zoë Müller\nxm,王小明\n")
    got = collect(src, EX, work=tmp_path / "w2", roster=two)
    subs = got.submissions
    assert (subs["ada1"].status, subs["ada2"].status) == ("missing", "missing")
    assert subs["lovelaceada-1002"].on_roster is False and subs["lovelaceada-1002"].notebook.read_bytes() == NB
    assert any("1002" in w and "2 roster names" in w and "ada1" in w and "ada2" in w for w in got.warnings)
    assert any("1002" in w and "not on the roster" in w for w in got.warnings) and len(got.warnings) == 2
    anon = make_zip(tmp_path / "anon.zip", {"anon_dUb3x_558_ex01-gd-loop.ipynb": NB,  # anonymous grading
                                            "LATE_anon_Qw9zT_559_ex01-gd-loop.ipynb": NEWER})
    subs = collect(anon, EX, work=tmp_path / "w3").submissions
    assert set(subs) == {"canvas-anon_dUb3x", "canvas-anon_Qw9zT"}, "anonymous students are not one student"
    assert subs["canvas-anon_Qw9zT"].late and subs["canvas-anon_Qw9zT"].notebook.read_bytes() == NEWER


# --- Blackboard --------------------------------------------------------------------------------

def test_blackboard_newest_attempt_and_name_from_its_txt(tmp_path):
    a = "Ex_01_GD_Loop"  # the assignment's own name has underscores
    src = make_zip(tmp_path / "d.zip", [
        (f"{a}_jdoe_attempt_2026-10-02-08-30-00_{EX}.ipynb", NEWER),
        (f"{a}_jdoe_attempt_2026-10-02-08-30-00.txt", b"Name: Jane Doe (jdoe)\nAssignment: Ex 01\n"),
        (f"{a}_jdoe_attempt_2026-10-01-23-59-00_{EX}.ipynb", NB),
        (f"{a}_jdoe_attempt_2026-10-01-23-59-00.txt", b"Name: Jane Doe (jdoe)\nAssignment: Ex 01\n"),
        (f"{a}_mroe_attempt_2026-10-01-10-00-00_{EX}.ipynb", NB),
        (f"{a}_mroe_attempt_2026-10-01-10-00-00.txt", "Name: Mary O’Roe (mroe)\n".encode()),
    ])
    got = collect(src, EX, work=tmp_path / "work")
    jdoe, mroe = got.submissions["jdoe"], got.submissions["mroe"]
    assert got.warnings == [] and set(got.submissions) == {"jdoe", "mroe"}
    assert jdoe.notebook.read_bytes() == NEWER and jdoe.uploads == 2 and "2 notebooks" in jdoe.problem
    assert local(jdoe.uploaded) == datetime(2026, 10, 2, 8, 30)
    assert (jdoe.name, jdoe.lms, mroe.name, mroe.uploads) == ("Jane Doe", "blackboard", "Mary O’Roe", 1)


# --- nbgrader's folders ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["dir", "zip"])
def test_nbgrader_submitted_folder_with_timestamps(tmp_path, kind):
    src = source(tmp_path, kind, {  # what `nbgrader collect` leaves in submitted/, as a folder or zipped
        f"ada/{EX}/{EX}.ipynb": NB, f"ada/{EX}/timestamp.txt": b"2026-10-01 12:00:00.123456 UTC\n",
        f"bob/{EX}/{EX}.ipynb": NEWER, f"bob/{EX}/timestamp.txt": b"2026-10-02 09:30:00", f"cy/{EX}/{EX}.ipynb": NB})
    mtime = datetime(2026, 9, 30, 18, 0, tzinfo=timezone.utc)
    if kind == "dir":
        os.utime(src / f"cy/{EX}/{EX}.ipynb", (mtime.timestamp(), mtime.timestamp()))
    got = collect(src, EX, work=tmp_path / "work")
    subs = got.submissions
    assert got.warnings == [] and set(subs) == {"ada", "bob", "cy"}
    assert datetime.fromisoformat(subs["ada"].uploaded) == datetime(2026, 10, 1, 12, 0, tzinfo=timezone.utc)
    assert datetime.fromisoformat(subs["bob"].uploaded) == datetime(2026, 10, 2, 9, 30, tzinfo=timezone.utc)
    # without timestamp.txt, a folder's own file time (a zip's is naive: local time)
    cy = datetime.fromisoformat(subs["cy"].uploaded)
    assert cy == mtime if kind == "dir" else cy.replace(tzinfo=None) == datetime(*ZIP_TIME)
    assert subs["bob"].notebook.read_bytes() == NEWER and subs["bob"].uploads == 1
    assert (subs["bob"].notebook == src / f"bob/{EX}/{EX}.ipynb") == (kind == "dir"), "a folder is graded in place"


def test_folder_layouts_and_what_is_ignored(tmp_path):
    src = make_dir(tmp_path / "subs", {
        f"cy/{EX}.ipynb": NB, "dee.ipynb": NB,
        f"fay/.ipynb_checkpoints/{EX}-checkpoint.ipynb": NB,
        f"gil/{EX}.ipynb": NB, "gil/draft.ipynb": NEWER, f"gil/.ipynb_checkpoints/{EX}-checkpoint.ipynb": NEWER,
        "hal/a.ipynb": NB, "hal/b.ipynb": NEWER,
        f".hidden/{EX}.ipynb": NB, f"__MACOSX/cy/._{EX}.ipynb": b"\0", ".DS_Store": b"\0",
        f"=1+2/{EX}.ipynb": NB, f"o'brien/{EX}.ipynb": NB, "notes.txt": b"read me"})
    (src / "eli").mkdir()
    for path, when in (("gil/draft.ipynb", 2e9), ("hal/a.ipynb", 1.8e9), ("hal/b.ipynb", 1.9e9)):
        os.utime(src / path, (when, when))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / f"{EX}.ipynb").write_bytes(NB)
    (src / "ivy.ipynb").symlink_to(tmp_path / "elsewhere" / f"{EX}.ipynb")
    (src / "jo").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (src / "kim").mkdir()
    (src / "kim" / f"{EX}.ipynb").symlink_to(tmp_path / "elsewhere" / f"{EX}.ipynb")
    got = collect(src, EX)
    subs = got.submissions
    assert set(subs) == {"cy", "dee", "eli", "fay", "gil", "hal", "ivy", "jo", "kim", "=1+2", "o'brien"}
    assert subs["cy"].notebook == src / "cy" / f"{EX}.ipynb" and subs["dee"].notebook == src / "dee.ipynb"
    assert (subs["cy"].uploads, subs["cy"].problem) == (1, None)
    for sid in ("eli", "fay"):
        assert (subs[sid].status, subs[sid].notebook) == ("missing", None)
    assert subs["gil"].notebook.name == f"{EX}.ipynb", "in a folder, the one named after the assignment"
    assert subs["hal"].notebook.name == "b.ipynb", "else the newest"
    for sid in ("gil", "hal"):
        assert subs[sid].uploads == 2 and subs[sid].problem.startswith("2 notebooks handed in")
    for sid in ("ivy", "jo", "kim"):
        assert (subs[sid].status, subs[sid].notebook) == ("invalid notebook", None) and "symbolic link" in subs[sid].problem
    for sid in ("=1+2", "o'brien"):
        assert (subs[sid].status, subs[sid].notebook) == ("invalid notebook", None)
        assert "not a valid student id" in subs[sid].problem
    assert len(got.warnings) == 1 and "notes.txt" in got.warnings[0]


# --- nothing dropped silently ----------------------------------------------------------------

def test_every_roster_student_and_every_found_student_has_a_row(tmp_path):
    src = make_zip(tmp_path / "d.zip", {f"ada/{EX}.ipynb": NB, "bob.ipynb": NB, "xavier_hw.ipynb": NB,
                                        "README.md": b"x", "Random Folder Name.ipynb": NB})
    got = collect(src, EX, work=tmp_path / "work", roster=roster(tmp_path, "ada\nbob\nzed\nada\n", "r.txt"))
    subs = got.submissions
    assert set(subs) == {"ada", "bob", "zed", "xavier"}
    assert [subs[s].on_roster for s in ("ada", "bob", "zed", "xavier")] == [True, True, True, False]
    assert (subs["zed"].status, subs["zed"].problem) == ("missing", "on the roster, but no submission was found")
    assert local(subs["ada"].uploaded) == datetime(*ZIP_TIME), "a zip of folders keeps the files' own times"
    for needle in ("xavier", "README.md", "Random Folder Name.ipynb"):
        assert sum(needle in w for w in got.warnings) == 1, (needle, got.warnings)
    assert len(got.warnings) == 3


# --- safety ------------------------------------------------------------------------------------

def test_zip_paths_never_write_outside_work(tmp_path):
    deep = tmp_path / "a" / "b" / "c"  # so that climbing out of work stays inside tmp_path, where it shows
    climbing = ["../evil.ipynb", "../../x/evil.ipynb", "ada/../../evil.ipynb",
                "Eve Moodle_1_assignsubmission_file/../../../evil.ipynb"]
    src = make_zip(tmp_path / "d.zip", {name: NB for name in climbing + ["/abs/evil.ipynb"]})
    got = collect(src, EX, work=deep / "work")
    assert [w.split(": ")[0] for w in got.warnings] == climbing and set(got.submissions) == {"abs"}
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != src]
    assert written and all(deep / "work" / "intake" in p.parents for p in written), written
    assert not any("evil" in p.name for p in written) and not Path("/abs/evil.ipynb").exists()
    assert all(s.notebook is None or deep / "work" in s.notebook.parents for s in got.submissions.values())


def test_oversized_notebook_is_refused_without_being_written(tmp_path, monkeypatch):
    monkeypatch.setattr(intake, "MAX_NOTEBOOK_BYTES", len(NB) - 1)
    src = make_zip(tmp_path / "d.zip", {f"ada/{EX}.ipynb": NB, f"bea/{EX}.ipynb": NB[: len(NB) - 1]})
    subs = collect(src, EX, work=tmp_path / "work").submissions
    assert (subs["ada"].status, subs["ada"].notebook) == ("invalid notebook", None) and "at most" in subs["ada"].problem
    assert not (tmp_path / "work" / "intake" / "ada").exists()
    assert subs["bea"].status is None and subs["bea"].notebook.stat().st_size == len(NB) - 1


def test_bad_sources(tmp_path):
    with pytest.raises(ValueError, match="work folder"):
        collect(make_zip(tmp_path / "d.zip", {"ada.ipynb": NB}), EX)
    with pytest.raises(FileNotFoundError):
        collect(tmp_path / "nowhere", EX)


# --- rosters -----------------------------------------------------------------------------------

def test_roster_plain_list_and_course_csv(tmp_path):
    plain = roster(tmp_path, "bob\nada\n\nbob\n", "r.txt")
    assert (plain.ids, plain.kind) == (["ada", "bob"], "list")
    csv_ = roster(tmp_path, "Student_ID,Full Name,Email Address,Canvas User ID,Participant,Login\n"
                            "ada,Ada Lovelace,ada@uni.edu,1001,7788,alove\nbob,,,,,\n")
    ada, bob = csv_.students
    assert (csv_.kind, ada.name, ada.email, bob.name, bob.lms_ids) == ("csv", "Ada Lovelace", "ada@uni.edu", None, ())
    assert (ada.lms_id("canvas"), ada.lms_id("moodle"), ada.lms_id("username")) == ("1001", "7788", "alove")


def test_roster_lms_files(tmp_path):
    canvas = roster(tmp_path, CANVAS_ROSTERS["gradebook export"].replace(",ada,A,", ",,A,"))
    assert canvas.kind == "canvas" and canvas.columns[0] == "Student"
    assert canvas.ids == ["ada-lovelace-1002", "xm", "zoe"], "the Points Possible row is no student"
    assert [s.name for s in canvas.students] == ["Ada Lovelace", "王小明", "Zoë Müller"]
    assert canvas.students[2].lms_ids == (("canvas", "1001"), ("username", "zoe"))
    sheet = roster(tmp_path, MOODLE_HEADER + "\nParticipant 12,Blind Name,,Submitted,,10,Yes,-,-,\n"
                   "Participant 13,Ann Lee,ann@uni.edu,Submitted,,10,Yes,-,-,\n")
    assert (sheet.kind, sheet.columns[-1], sheet.ids) == ("moodle", "Feedback comments", ["ann", "blind-name-12"])
    assert sheet.students[1].lms_ids == (("moodle", "12"),) and dict(sheet.students[0].row)["Full name"] == "Ann Lee"


@pytest.mark.parametrize("text, message, shown", [
    ("ada\n=1+2\n", "not valid student ids", "=1+2"),
    ("student,name\nada,Ada\n../bob,Bob\n", "not valid student ids", "../bob"),
    ("student,name\nada,Ada\nada,Ada Again\n", "appear twice", "ada"),
    ("name,email\nAda,ada@uni.edu\n", "needs a 'student' or 'id' column", "email"),
    (f"{MOODLE_HEADER}\nStudent 7,Ann,,,,,,,,\n", "not a Moodle participant identifier", "Student 7"),
    ("\n\n", "is empty", "roster.csv"),
])
def test_roster_errors_are_clear(tmp_path, text, message, shown):
    with pytest.raises(ValueError, match=message) as err:
        roster(tmp_path, text)
    assert shown in str(err.value)
