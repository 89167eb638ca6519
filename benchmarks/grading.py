"""Benchmark (not a test): grade a cohort with nbgrader's sequential
`autograde` + `generate_feedback` (nbgrader's way to the same outputs) and
with `gdcourse grade`, same submissions, same machine, one run.

    .venv/bin/python benchmarks/grading.py [--per-assignment 20] [--jobs N] [--assignments ex01-gd-loop ex07-stable-softmax]

ex01 and ex07 are graded by the judge (a sandboxed Python process per
student, cases scored outside it). Each assignment gets --per-assignment submissions, cycling through the
reference solution, the untouched release and the variants in
solutions/<assignment>/variants.py (so scores differ between students). Prints wall
time for each tool, the ratio, the per-submission overhead, and checks that
both tools gave every student the same score.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gdcourse.grading import grade, variants

ROOT = Path(__file__).resolve().parent.parent


def cohort(assignment: str, n: int, folder: Path) -> dict[str, bool]:
    """{student: True if their work is right (the solution, a correct alternative) or untouched}."""
    found = variants.load(ROOT, assignment)
    ref = variants.solution_answers(assignment, course_root=ROOT)
    answers = [(ref, True), ({}, True)] + [({**ref, **a}, False) for _, a in found.WRONG.values()] + \
              [({**ref, **a}, True) for a in found.CORRECT.values()]
    students = {}
    for i in range(n):
        student = f"student{i:03d}"
        work, exact = answers[i % len(answers)]
        variants.submission(assignment, work, folder, student, course_root=ROOT)
        students[student] = exact
    return students


def nbgrader_sequential(assignment: str, subs: Path, course: Path) -> dict[str, float]:
    """nbgrader's own way: one `nbgrader autograde` over every submission, one after another."""
    from nbgrader.api import Gradebook

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    common = [f"--CourseDirectory.root={course}", f"--CourseDirectory.source_directory={ROOT / 'solutions'}",
              f"--CourseDirectory.release_directory={course / 'release'}",
              f"--CourseDirectory.submitted_directory={course / 'submitted'}",
              f"--CourseDirectory.autograded_directory={course / 'autograded'}",
              f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}", "--Execute.timeout=300",
              "--log-level=ERROR"]
    nbgrader = str(Path(sys.executable).with_name("nbgrader"))
    course.mkdir(parents=True)
    subprocess.run([nbgrader, "generate_assignment", assignment, "--force", *common], cwd=ROOT, env=env, check=True)
    for folder in subs.iterdir():
        target = course / "submitted" / folder.name / assignment
        target.mkdir(parents=True)
        shutil.copy(folder / f"{assignment}.ipynb", target)
    start = time.perf_counter()
    subprocess.run([nbgrader, "autograde", assignment, "--create", *common], cwd=ROOT, env=env, check=True)
    autograde = time.perf_counter() - start
    subprocess.run([nbgrader, "generate_feedback", assignment, f"--CourseDirectory.feedback_directory={course / 'feedback'}",
                    *common], cwd=ROOT, env=env, check=True)
    both = time.perf_counter() - start
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return autograde, both, {s.student.id: float(s.score) for s in gb.assignment_submissions(assignment)}


def sandbox_overhead(repeats: int = 10) -> tuple[float, float]:
    """Median seconds of an empty judge job (harness start, no cells, no calls), sandboxed and not."""
    import statistics

    from gdcourse.grading import sandbox, wire
    with tempfile.TemporaryDirectory() as job:
        (Path(job) / "job.npz").write_bytes(wire.pack({"cells": [], "calls": [], "cell_seconds": 60, "call_seconds": 60}))
        times = {}
        for isolate in (True, False):
            target = f"{sandbox.JOB}/job.npz" if isolate else str(Path(job) / "job.npz")
            times[isolate] = statistics.median(
                sandbox.run([sys.executable, "-m", "gdcourse.grading.harness", target], Path(job), seconds=60,
                            memory_mb=2000, isolate=isolate).seconds for _ in range(repeats))
    return times[True], times[False]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignments", nargs="+", default=["ex01-gd-loop", "ex07-stable-softmax"])
    parser.add_argument("--per-assignment", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    total_seq = total_ours = total_auto = 0.0
    n_total = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for assignment in args.assignments:
            subs = tmp / assignment / "subs"
            students = cohort(assignment, args.per_assignment, subs)
            autograde_only, seq_seconds, seq_scores = nbgrader_sequential(assignment, subs, tmp / assignment / "nbgrader")
            start = time.perf_counter()
            rows = grade(assignment, subs, tmp / assignment / "gdcourse", course_root=ROOT, jobs=args.jobs)
            ours = time.perf_counter() - start
            our_scores = {r.student: r.score for r in rows}
            # right or untouched work scores the same in both; a wrong function's test cell scores 0 under
            # nbgrader (one failed assert) and the share of its cases that pass under the judge
            same = all(our_scores[s] == seq_scores[s] for s, exact in students.items() if exact)
            partial = all(our_scores[s] >= seq_scores[s] for s in students)
            print(f"{assignment}: {len(students)} submissions; nbgrader sequential autograde {autograde_only:.1f} s, "
                  f"+ generate_feedback {seq_seconds:.1f} s ({seq_seconds / len(students):.2f} s each); "
                  f"gdcourse grade (autograde + feedback + checks) {ours:.1f} s ({ours / len(students):.2f} s each); "
                  f"ratio {seq_seconds / ours:.2f}x ({autograde_only / ours:.2f}x against autograde alone); "
                  f"identical scores for right and untouched work: {same}; wrong work at least nbgrader's "
                  f"(partial credit per case): {partial}")
            total_auto += autograde_only
            if not (same and partial):
                diff = {s: (seq_scores[s], our_scores[s]) for s in students if seq_scores[s] != our_scores[s]}
                print("  differing (nbgrader, gdcourse):", diff)
            total_seq, total_ours, n_total = total_seq + seq_seconds, total_ours + ours, n_total + len(students)
    boxed, bare = sandbox_overhead()
    print(f"sandbox overhead per student: {boxed - bare:.3f} s (an empty job: {boxed:.3f} s in bubblewrap, "
          f"{bare:.3f} s without)")
    print(f"all: {n_total} submissions on {os.cpu_count()} cores; nbgrader autograde + generate_feedback {total_seq:.1f} s "
          f"(autograde alone {total_auto:.1f} s), gdcourse grade {total_ours:.1f} s; ratio {total_seq / total_ours:.2f}x "
          f"({total_auto / total_ours:.2f}x against autograde alone)")


if __name__ == "__main__":
    main()
