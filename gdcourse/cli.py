"""The ``gdcourse`` command: grade a cohort, execute notebooks, build the book,
regenerate the student release."""

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
    bar = _progress_bar(args.quiet)
    try:
        rows = grade(args.assignment, args.submissions, out, course_root=args.root, jobs=args.jobs,
                     roster=args.roster, limits=limits, isolate=False if args.no_isolation else None,
                     seed=args.seed, progress=bar)
    except SandboxUnavailable as exc:
        bar.close()
        print(f"gdcourse grade: {exc}", file=sys.stderr)
        return 2
    bar.close()
    graded = sum(r.status == "graded" for r in rows)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(Counter(r.status for r in rows).items()))
    print(f"{len(rows)} students: {graded} graded, {len(rows) - graded} not ({counts}).")
    print(f"CSV: {out / 'grades.csv'}; feedback: {out / 'feedback'}; gradebook: {out / 'gradebook.db'}")
    return 0


class _progress_bar:
    """tqdm on stderr, one line per student printed above it."""

    def __init__(self, quiet: bool):
        from tqdm.auto import tqdm
        self.bar = None if quiet else tqdm(unit="student", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, line: str) -> None:
        if self.bar is not None:
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
    results = run_all(expanded, args.out, root=args.root, profile=args.profile, jobs=args.jobs,
                      timeout=args.timeout, extra_parameters=extra)
    print(report(results, args.root))
    if args.timings:
        write_timings(results, args.timings, root=args.root, profile=args.profile, device=args.device)
    return 0 if all(r.ok for r in results) else 1


def _book(args) -> int:
    from gdcourse.book import build_html, stage
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


def _setup_cells(args) -> int:
    from gdcourse.notebooks import discover, write_setup_cells

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
    p.add_argument("submissions", help="a folder (one folder or one .ipynb per student) or an LMS zip")
    p.add_argument("--out", help="grading folder (default: ./ASSIGNMENT-graded); re-running resumes in it")
    p.add_argument("--jobs", type=int, default=None, help="parallel graders (default: number of cores)")
    p.add_argument("--roster", help="student ids, one per line or a CSV with a 'student' column")
    p.add_argument("--cell-timeout", type=int, default=300, help="seconds per cell or graded call (default 300)")
    p.add_argument("--notebook-timeout", type=int, default=900, help="seconds per notebook (default 900)")
    p.add_argument("--memory-mb", type=int, default=4096, help="memory per grader, kernel included (default 4096)")
    p.add_argument("--no-isolation", action="store_true",
                   help="grade without the sandbox (where none can be made); every row says so")
    p.add_argument("--seed", type=int, default=None,
                   help="the hidden cases' seed, to re-grade exactly (default: fresh each run, kept in results/)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_grade)

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
    p.set_defaults(func=_run_notebooks)

    p = sub.add_parser("book", help="execute the chapters and build the HTML (warnings are errors)")
    p.add_argument("--profile", choices=("ci", "reader"), default="reader")
    p.add_argument("--html-parent", default=".", help="the HTML goes to HTML_PARENT/_build/html")
    p.add_argument("--jobs", type=int, default=1)
    p.set_defaults(func=_book)

    p = sub.add_parser("setup-cells", help="write gdcourse.notebooks.SETUP_CELL into every notebook")
    p.add_argument("--check", action="store_true", help="only report notebooks whose setup cell differs")
    p.set_defaults(func=_setup_cells)

    p = sub.add_parser("release", help="regenerate exercises/ from solutions/ with nbgrader")
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_release)

    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
