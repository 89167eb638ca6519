"""The ``gdcourse`` command: grade a cohort and carry it through the term (hand grading in
formgrader, final grades, LMS files, feedback pages), start JupyterLab for students, execute
notebooks, build the book, regenerate the student release."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _grade(args) -> int:
    from collections import Counter

    from gdcourse.grading import Limits, grade
    from gdcourse.grading.cohort import SandboxUnavailable

    out = Path(args.out or f"{args.assignment}-graded")
    limits = Limits(cell_seconds=args.cell_timeout, notebook_seconds=args.notebook_timeout, memory_mb=args.memory_mb)
    bar = _ProgressBar(args.quiet)
    try:
        rows = grade(args.assignment, args.submissions, out, course_root=args.root, jobs=args.jobs,
                     roster=args.roster, limits=limits, isolate=False if args.no_isolation else None,
                     seed=args.seed, due=args.due, canvas_column=args.canvas_column, progress=bar)
    except (SandboxUnavailable, ValueError, FileNotFoundError) as exc:
        bar.close()
        print(f"gdcourse grade: {exc}", file=sys.stderr)
        return 2
    bar.close()
    graded = sum(r.status == "graded" for r in rows)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(Counter(r.status for r in rows).items()))
    print(f"{len(rows)} students: {graded} graded, {len(rows) - graded} not ({counts}).")
    return _report(out, rows)


def _report(out: Path, rows) -> int:
    """What an instructor reads after grading: where the files are, what waits for them, every warning."""
    from gdcourse.grading.grades import WARNINGS
    pending = [r for r in rows if r.pending]
    if pending:
        print(f"{len(pending)} student(s) have written answers to grade by hand: gdcourse formgrader {out}")
    lms = sorted(p.name for p in (out / "lms").glob("*.csv"))
    print(f"CSV: {out / 'grades.csv'}" + (f"; LMS files: {', '.join(str(out / 'lms' / n) for n in lms)}" if lms else "")
          + f"; feedback: {out / 'feedback'}")
    warnings = (out / WARNINGS).read_text(encoding="utf-8").splitlines() if (out / WARNINGS).is_file() else []
    if warnings:
        print(f"{len(warnings)} warning(s), also in {out / WARNINGS}:")
        for line in warnings:
            print(f"  - {line}")
    return 0


def _grades(args) -> int:
    from gdcourse.grading import grades
    from gdcourse.grading.feedback import write_pages

    out = Path(args.out)
    try:
        grades.update_intake(out, due=args.due, canvas_column=args.canvas_column)
    except (ValueError, FileNotFoundError) as exc:
        print(f"gdcourse grades: {exc}", file=sys.stderr)
        return 2
    rows = grades.final(out)
    grades.write(out, rows)
    write_pages(out)  # a page shows the same hand grades as the CSV
    done = sum(not r.pending for r in rows)
    print(f"{len(rows)} students: {done} with every point graded, {len(rows) - done} with points still to grade by hand.")
    return _report(out, rows)


def _feedback(args) -> int:
    from gdcourse.grading.feedback import write_pages

    try:
        pages = write_pages(Path(args.out))
    except FileNotFoundError as exc:
        print(f"gdcourse feedback: {exc}", file=sys.stderr)
        return 2
    print(f"{len(pages)} feedback pages in {Path(args.out) / 'feedback'} (with the hand grades and comments)")
    return 0


def _formgrader(args) -> int:
    from gdcourse.grading import formgrader
    from gdcourse.grading.grades import read_intake

    out = Path(args.out).resolve()
    try:
        assignment = read_intake(out)["assignment"]
        server = formgrader.serve(out, args.root, port=args.port, token=args.token, open_browser=not args.no_browser)
    except FileNotFoundError as exc:
        print(f"gdcourse formgrader: {exc}", file=sys.stderr)
        return 2
    print(f"formgrader on {out / 'gradebook.db'}: {formgrader.login_url(args.port, server.token)}", flush=True)
    print(f"the written answers of {assignment}: http://127.0.0.1:{args.port}/formgrader/manage_submissions/"
          f"{assignment} (Ctrl-C stops the server; then run: gdcourse grades {args.out})", flush=True)
    import signal

    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)  # `kill` stops the server too, not only Ctrl-C
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        server.wait(timeout=30)
        return 0


def _lab(args) -> int:
    from gdcourse.lab import launch
    return launch(args.paths, args.jupyter_args)


class _ProgressBar:
    """tqdm on stderr, out of the number of students to grade, one line per student printed above it."""

    def __init__(self, quiet: bool):
        from tqdm.auto import tqdm
        self.bar = None if quiet else tqdm(unit="student", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, line: str, total: int | None) -> None:
        if self.bar is not None:
            if total and self.bar.total != total:
                self.bar.total = total
            self.bar.update(1)
            self.bar.write(line, file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_notebooks(args) -> int:
    from gdcourse.notebooks import discover, needs_gpu, report, run_all, write_timings

    sources = [Path(p) for p in args.paths] if args.paths else discover(args.root)
    expanded = []
    for p in sources:
        expanded += sorted(p.rglob("*.ipynb")) if p.is_dir() else [p]
    if args.gpu_only:
        expanded = [p for p in expanded if needs_gpu(p)]
    if args.list:
        print("\n".join(str(p) for p in expanded) or "no notebook matches")
        return 0
    if not expanded:
        print("no notebook to run")
        return 0
    extra = {"device": args.device} if args.device else None
    if args.record_gpu:  # the kernels inherit it: each GPU cell writes what it printed there
        from gdcourse.gpu_results import RECORD_ENV
        os.environ[RECORD_ENV] = str(Path(args.record_gpu).resolve())
    results = run_all(expanded, args.out, root=args.root, profile=args.profile, jobs=args.jobs,
                      timeout=args.timeout, extra_parameters=extra)
    print(report(results, args.root))
    if args.timings:
        write_timings(results, args.timings, root=args.root, profile=args.profile, device=args.device)
    return 0 if all(r.ok for r in results) else 1


def _book(args) -> int:
    from gdcourse.build import build_html, stage
    from gdcourse.notebooks import discover, report, run_all

    staged = Path("_build") / f"book-{args.profile}"
    stage(args.root, staged)
    results = run_all(discover(args.root, dirs=("book",)), staged, root=args.root, profile=args.profile, jobs=args.jobs)
    print(report(results, args.root))
    if not all(r.ok for r in results):
        return 1
    html = build_html(staged, args.html_parent)
    print(f"built {html}")
    return 0


def _draws(args) -> int:
    import tempfile

    from gdcourse.grading.draws import check, correct_notebooks

    if not (args.notebooks or args.correct):
        print("name notebooks, or pass --correct for the solution and its correct variants", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gdcourse-correct-") as folder:
        notebooks = list(args.notebooks)
        if args.correct:
            notebooks += correct_notebooks(args.assignment, folder, course_root=args.root)
        count, failures = check(args.assignment, notebooks, course_root=args.root, draws=args.draws,
                                first=args.first, isolate=not args.no_isolation)
    for f in failures:
        where = "the notebook" if f.seed is None else f"draw {f.seed}, {f.test}: {f.case}"
        print(f"FAILED {f.notebook}: {where}: {f.message}")
    seeds = f"seeds {args.first}..{args.first + args.draws - 1}"
    print(f"{len(notebooks)} notebook(s), {count} hidden cases each ({seeds}): "
          + (f"{len(failures)} failed" if failures else "every case passed"))
    return 1 if failures else 0


def _setup_cells(args) -> int:
    from gdcourse.notebooks import discover
    from gdcourse.setup_cell import write_setup_cells

    paths = discover(args.root, dirs=("book", "solutions", "exercises"))
    changed = write_setup_cells(paths, check=args.check)
    for path in changed:
        print(f"{'differs' if args.check else 'rewrote'}: {Path(path).relative_to(args.root)}")
    print(f"{len(paths)} notebooks, {len(changed)} {'differ' if args.check else 'rewritten'}")
    return 1 if args.check and changed else 0


def _release(args) -> int:
    import subprocess

    names = args.assignments or sorted(p.name for p in (Path(args.root) / "solutions").iterdir() if p.is_dir())
    for name in names:
        nbgrader = Path(sys.executable).with_name("nbgrader")
        subprocess.run([str(nbgrader), "generate_assignment", name, "--force", "--no-db", "--log-level=WARN"],
                       cwd=args.root, check=True)
        print(f"released exercises/{name}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gdcourse", description=__doc__)
    parser.add_argument("--root", default=".", help="the course repository (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("grade", help="autograde a cohort's submissions and export a CSV")
    p.add_argument("assignment", help="e.g. ex01-gd-loop")
    p.add_argument("submissions", help="a folder (one folder or one .ipynb per student, nbgrader's submitted/, "
                   "an extracted LMS download) or an LMS zip (Moodle, Canvas, Blackboard)")
    p.add_argument("--out", help="grading folder (default: ./ASSIGNMENT-graded); re-running resumes in it")
    p.add_argument("--jobs", type=int, default=None, help="parallel graders (default: number of cores)")
    p.add_argument("--roster", help="the term's students: ids one per line, a CSV with a 'student' column, "
                   "Canvas's gradebook export or Moodle's grading worksheet")
    p.add_argument("--due", help="due date and time, ISO 8601 (e.g. 2026-10-01T23:59); kept for later runs")
    p.add_argument("--canvas-column", help="the assignment's column in Canvas's gradebook, e.g. 'Exercise 1 (4321)'")
    p.add_argument("--cell-timeout", type=int, default=300, help="seconds per cell or graded call (default 300)")
    p.add_argument("--notebook-timeout", type=int, default=900, help="seconds per notebook (default 900)")
    p.add_argument("--memory-mb", type=int, default=4096, help="memory per grader, kernel included (default 4096)")
    p.add_argument("--no-isolation", action="store_true",
                   help="grade without the sandbox (where none can be made); every row says so")
    p.add_argument("--seed", type=int, default=None,
                   help="the hidden cases' seed, to re-grade exactly (default: fresh each run, kept in results/)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_grade)

    p = sub.add_parser("formgrader", help="open nbgrader's formgrader on a graded cohort, for the written answers")
    p.add_argument("out", help="the grading folder of `gdcourse grade --out`")
    p.add_argument("--port", type=int, default=8890)
    p.add_argument("--token", help="the login token (default: a fresh one, printed)")
    p.add_argument("--no-browser", action="store_true", help="print the address, do not open a browser")
    p.set_defaults(func=_formgrader)

    p = sub.add_parser("grades", help="final grades after hand grading: grades.csv, the LMS files, feedback pages")
    p.add_argument("out", help="the grading folder of `gdcourse grade --out`")
    p.add_argument("--due", help="change the due date (ISO 8601), e.g. 2026-10-01T23:59")
    p.add_argument("--canvas-column", help="the assignment's column in Canvas's gradebook, e.g. 'Exercise 1 (4321)'")
    p.set_defaults(func=_grades)

    p = sub.add_parser("feedback", help="rebuild every feedback page with the hand grades and comments")
    p.add_argument("out", help="the grading folder of `gdcourse grade --out`")
    p.set_defaults(func=_feedback)

    p = sub.add_parser("lab", help="JupyterLab for students, without nbgrader's instructor menus")
    p.add_argument("paths", nargs="*", help="notebooks or folders to open")
    p.add_argument("jupyter_args", nargs=argparse.REMAINDER, help="after --: options for jupyter lab")
    p.set_defaults(func=_lab)

    p = sub.add_parser("run-notebooks", help="execute notebooks with papermill and time them")
    p.add_argument("paths", nargs="*", help="notebooks or folders (default: book/ and solutions/)")
    p.add_argument("--profile", choices=("ci", "reader"), default="ci")
    p.add_argument("--out", default="_build/executed", help="where executed copies go")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    p.add_argument("--gpu-only", action="store_true", help="only notebooks tagged for a GPU")
    p.add_argument("--device", help="inject this `device` parameter (e.g. cuda)")
    p.add_argument("--list", action="store_true", help="print what would run, run nothing")
    p.add_argument("--timings", help="also write each notebook's status and seconds to this JSON file")
    p.add_argument("--record-gpu", metavar="DIR",
                   help="write what each GPU cell prints on a CUDA device into DIR (commit book/gpu-results)")
    p.set_defaults(func=_run_notebooks)

    p = sub.add_parser("book", help="execute the chapters and build the HTML (warnings are errors)")
    p.add_argument("--profile", choices=("ci", "reader"), default="reader")
    p.add_argument("--html-parent", default=".", help="the HTML goes to HTML_PARENT/_build/html")
    p.add_argument("--jobs", type=int, default=1)
    p.set_defaults(func=_book)

    p = sub.add_parser("draws", help="run notebooks that are right against many draws of the hidden cases")
    p.add_argument("assignment", help="e.g. ex14-optimizer-memory-and-curvature")
    p.add_argument("notebooks", nargs="*", help="correct answers: the solution, and others written differently")
    p.add_argument("--correct", action="store_true",
                   help="also the solution and every CORRECT variant of solutions/ASSIGNMENT/variants.py")
    p.add_argument("--draws", type=int, default=100, help="how many seeds (default 100)")
    p.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    p.add_argument("--no-isolation", action="store_true", help="run without the sandbox")
    p.set_defaults(func=_draws)

    p = sub.add_parser("setup-cells", help="write gdcourse.setup_cell.SETUP_CELL into every notebook")
    p.add_argument("--check", action="store_true", help="only report notebooks whose setup cell differs")
    p.set_defaults(func=_setup_cells)

    p = sub.add_parser("release", help="regenerate exercises/ from solutions/ with nbgrader")
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_release)

    return parser


def main(argv=None) -> int:
    from gdcourse.notebooks import use_course_env

    args = build_parser().parse_args(argv)
    use_course_env()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
