"""Grade a cohort: every student gets a row, whatever their notebook does.

A few long-lived workers (:mod:`gdcourse.grading.worker`, one per core by
default) autograde in parallel, each inside the sandbox
(:mod:`gdcourse.grading.sandbox`). This supervisor gives each submission a
wall-clock limit and a memory limit; a worker that breaks either is killed
with every process it started, the student gets a status and a reason, and
a fresh worker takes the next submission.

Each student's result is written to ``results/<student>.json`` the moment
it is known (atomically). A re-run reuses every result whose submission and
settings are unchanged, so grading is idempotent, and a batch killed midway
(even with ``kill -9``) resumes where it stopped. The CSV and the nbgrader
gradebook are rebuilt from those results at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import queue
from dataclasses import dataclass
from pathlib import Path

import psutil

from gdcourse.grading import export, sandbox
from gdcourse.grading.intake import DEFAULT_ZIP_PATTERN, collect, notebook_problem, read_roster

STATUSES = ("graded", "tampered", "flagged", "timed out", "crashed", "invalid notebook", "missing")


@dataclass(frozen=True)
class GradeRow:
    student: str
    score: float | None
    max_score: float | None
    status: str  # one of STATUSES
    reason: str = ""


@dataclass(frozen=True)
class Limits:
    cell_seconds: int = 300  # nbgrader's per-cell timeout: training cells need more than its 30 s default
    notebook_seconds: int = 900  # the whole submission, start to feedback
    memory_mb: int = 4096  # the worker's process tree: worker, kernel, anything the kernel starts


def grade(assignment: str, submissions: Path | str, out_dir: Path | str, *, course_root: Path | str = ".",
          jobs: int | None = None, roster: Path | str | list[str] | None = None, limits: Limits = Limits(),
          isolate: bool | None = None, zip_pattern: str = DEFAULT_ZIP_PATTERN, progress=print) -> list[GradeRow]:
    """Autograde every submission of ``assignment`` found in ``submissions`` (a folder or an LMS zip).

    Writes into ``out_dir``: ``grades.csv`` (a row for every student found or
    on the ``roster``), nbgrader's ``gradebook.db``, ``feedback/<student>/``
    (HTML without hidden tests) and ``autograded/<student>/``. ``isolate``
    (default: whenever the OS allows it) cuts graders off the network and
    makes everything outside their own folder read-only.
    """
    course_root, out = Path(course_root).resolve(), Path(out_dir).resolve()
    source = course_root / "solutions" / assignment / f"{assignment}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"unknown assignment {assignment!r}: no {source}")
    out.mkdir(parents=True, exist_ok=True)
    found = collect(submissions, assignment, work=out, zip_pattern=zip_pattern)
    students = set(found)
    if roster is not None:
        students |= set(read_roster(roster) if isinstance(roster, (str, Path)) else roster)
    settings = _fingerprint(source, limits)
    results = out / "results"
    results.mkdir(exist_ok=True)

    rows: dict[str, GradeRow] = {}
    todo: list[tuple[str, Path, str]] = []
    for student in sorted(students):
        sub = found.get(student)
        if sub is None:
            rows[student] = GradeRow(student, 0.0, None, "missing", "on the roster, but no submission was found")
        elif sub.notebook is None:
            rows[student] = GradeRow(student, 0.0, None, "missing", sub.problem or "no notebook found")
        elif problem := notebook_problem(sub.notebook):
            rows[student] = GradeRow(student, 0.0, None, "invalid notebook", problem)
        else:
            digest = hashlib.sha256(sub.notebook.read_bytes()).hexdigest()
            previous = _read_json(results / f"{student}.json")
            if previous and previous.get("sha256") == digest and previous.get("settings") == settings:
                rows[student] = _row(student, previous)
                progress(_line(rows[student], "(kept)"))
            else:
                todo.append((student, sub.notebook, digest))

    template = out / "template"
    if todo or not (template / "gradebook.db").is_file():
        _prepare(course_root, template, assignment, limits, settings)
    if todo:
        isolate = sandbox.isolation_available() if isolate is None else isolate
        for student, result in _run_workers(todo, assignment, course_root, template, out, limits, isolate,
                                            jobs or os.cpu_count() or 1):
            result["settings"] = settings
            _keep_outputs(out, student, assignment, result)
            _write_json(results / f"{student}.json", result)
            rows[student] = _row(student, result)
            progress(_line(rows[student]))

    max_score = export.assignment_max_score(template / "gradebook.db", assignment)
    final = [r if r.max_score is not None else GradeRow(r.student, r.score, max_score, r.status, r.reason)
             for _, r in sorted(rows.items())]
    export.gradebook(out / "gradebook.db", template / "gradebook.db", assignment,
                     {s: _read_json(results / f"{s}.json") for s, r in rows.items() if r.status != "timed out"
                      and (results / f"{s}.json").is_file()})
    export.write_csv(final, out / "grades.csv")
    return final


# --- results -----------------------------------------------------------------

def _fingerprint(source: Path, limits: Limits) -> str:
    h = hashlib.sha256(source.read_bytes())
    h.update(repr(limits).encode())
    return h.hexdigest()[:16]


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _row(student: str, r: dict) -> GradeRow:
    if r["status"] != "graded":
        return GradeRow(student, 0.0, r.get("max_score"), r["status"], r.get("reason", ""))
    grades = r["grades"]
    lost = [name for name, (score, top, manual) in grades.items() if not manual and top and (score or 0) < top]
    manual = sum(top for _, (_, top, m) in grades.items() if m)
    parts, status = [], "graded"
    if r.get("tampered"):
        status = "tampered"
        parts.append("test cells changed by the student: " + ", ".join(r["tampered"])
                     + " (graded with the original tests)")
    if r.get("reference_calls"):
        status = "flagged" if status == "graded" else status
        parts.append("calls the course library's reference implementation in " + ", ".join(r["reference_calls"])
                     + " (those tests score 0)")
    if lost:
        parts.append("lost points in " + ", ".join(lost))
    if manual:
        parts.append(f"{manual:g} point(s) await manual grading")
    return GradeRow(student, r["score"], r["max_score"], status, "; ".join(parts))


def _line(row: GradeRow, note: str = "") -> str:
    score = "" if row.max_score is None else f"{row.score:g} / {row.max_score:g}"
    return f"{row.student:24} {row.status:16} {score:12} {note}".rstrip()


def _keep_outputs(out: Path, student: str, assignment: str, result: dict) -> None:
    """Move the autograded notebook and the feedback out of the worker's scratch folder."""
    for key, kind in (("autograded", "autograded"), ("feedback", "feedback")):
        src = result.pop(key, None)
        if not src or not Path(src).exists():
            continue
        dest = out / kind / student / assignment
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(src).parent if kind == "autograded" else src), dest)
        result[key] = str(dest.relative_to(out))


def _prepare(course_root: Path, template: Path, assignment: str, limits: Limits, settings: str) -> None:
    if (template / "settings").is_file() and (template / "settings").read_text() == settings \
            and (template / "gradebook.db").is_file():
        return
    from gdcourse.grading.worker import prepare_template
    # nbgrader runs the `alembic` script by name; with an un-activated venv
    # (`.venv/bin/gdcourse grade ...`) it is not on PATH unless we put it there.
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    shutil.rmtree(template, ignore_errors=True)
    prepare_template(course_root, template, assignment, limits.cell_seconds)
    (template / "settings").write_text(settings)


# --- workers -------------------------------------------------------------------

def _run_workers(todo, assignment, course_root, template, out, limits, isolate, jobs):
    """Yield (student, result) as workers finish them."""
    jobs_q: queue.Queue = queue.Queue()
    for item in todo:
        jobs_q.put(item)
    done_q: queue.Queue = queue.Queue()
    shutil.rmtree(out / "work", ignore_errors=True)
    n = max(1, min(jobs, len(todo)))

    def slot(k):
        worker = _Worker(out / "work" / f"slot-{k}", assignment, course_root, template, limits, isolate)
        try:
            while True:
                try:
                    student, notebook, digest = jobs_q.get_nowait()
                except queue.Empty:
                    return
                try:
                    result = worker.grade(student, notebook)
                except Exception as exc:  # never lose a student: a row with the reason, and on to the next
                    worker.stop()
                    result = {"status": "crashed", "reason": f"the grading worker failed: {exc}"}
                result["sha256"] = digest
                done_q.put((student, result))
        finally:
            worker.stop()
            done_q.put(None)

    threads = [threading.Thread(target=slot, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    finished = 0
    while finished < n:
        item = done_q.get()
        if item is None:
            finished += 1
        else:
            yield item
    for t in threads:
        t.join()


class _Worker:
    """One worker process, restarted whenever a submission forces a kill."""

    def __init__(self, folder: Path, assignment, course_root, template, limits: Limits, isolate: bool):
        self.folder, self.limits, self.isolate = folder, limits, isolate
        self.args = ["--assignment", assignment, "--course-root", str(course_root), "--template", str(template),
                     "--work", str(folder), "--cell-timeout", str(limits.cell_seconds)]
        self.proc: subprocess.Popen | None = None
        self.buffer = b""

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        read_fd, write_fd = os.pipe()
        cmd = sandbox.command([sys.executable, "-m", "gdcourse.grading.worker", *self.args,
                               "--result-fd", str(write_fd)], [str(self.folder)], isolate=self.isolate)
        log = open(self.folder / "worker.log", "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                     pass_fds=(write_fd,), start_new_session=True)
        log.close()
        os.close(write_fd)
        self.fd, self.buffer = read_fd, b""
        event = self._next_event(time.monotonic() + 180, watch_memory=False)
        if event is None or event.get("event") != "ready":
            self.stop()
            raise RuntimeError(f"grading worker did not start (see {self.folder / 'worker.log'})")

    def grade(self, student: str, notebook: Path) -> dict:
        if self.proc is None:
            self.start()
        self.proc.stdin.write((json.dumps({"student": student, "notebook": str(notebook)}) + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + self.limits.notebook_seconds
        while True:
            event = self._next_event(deadline)
            if isinstance(event, dict) and event.get("event") == "done":
                return {k: v for k, v in event.items() if k not in ("event", "student")}
            if isinstance(event, str):  # the supervisor stopped it
                self.stop()
                return {"status": "timed out" if event == "time" else "crashed", "reason": {
                    "time": f"stopped after {self.limits.notebook_seconds} s, the limit for one notebook "
                            "(an endless loop, or far too much work)",
                    "memory": f"stopped when it used more than {self.limits.memory_mb} MB of memory",
                    "exit": "the grading process died (the notebook probably killed it)"}[event]}

    def _next_event(self, deadline: float, watch_memory: bool = True):
        """The next JSON event, or "time" / "memory" / "exit" when the worker must be (or was) stopped."""
        while True:
            if b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    return json.loads(line)
                except ValueError:
                    continue
            if time.monotonic() > deadline:
                return "time"
            if watch_memory and sandbox.tree_memory(self.proc.pid) > self.limits.memory_mb * 2**20:
                return "memory"
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    return "exit"
                self.buffer += chunk

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            procs = [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            procs = []
        for p in procs:  # the kernel runs in its own session: kill the whole tree, not one group
            try:
                p.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()
        os.close(self.fd)
        self.proc = None
