"""Shared fixtures. Executing notebooks and building the book are slow, so
each happens once per session and several tests read the result."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the environment every process of the course gets (gdcourse.notebooks.COURSE_ENV), here as under `gdcourse`
from gdcourse.notebooks import use_course_env  # noqa: E402

use_course_env()

# The slow tier, which `make check` leaves out: a test is slow when it uses one of these fixtures
# (they grade cohorts, execute notebooks, build the book or drive a browser) or is marked slow itself.
SLOW_FIXTURES = {
    "executed_ci", "built_book",  # here: every notebook at CI parameters; the HTML book
    "graded",  # test_exercises: every variant of an assignment graded as a cohort
    "cohort",  # test_cohort: the adversarial cohort
    "browsed",  # test_site: every page in Chromium
    "term", "moodle",  # test_term: an instructor's term, formgrader in Chromium
    "pages",  # test_lab: a student's JupyterLab in Chromium
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
        shared = _shares(item)
        if shared and work_unit(item.nodeid) != shared:
            raise pytest.UsageError(f"{item.nodeid} shares the fixture of {shared!r} but work_unit() puts it in "
                                    f"{work_unit(item.nodeid)!r}: name its file in tests/conftest.py")


# `make test` runs two pytest-xdist workers. Tests that share a slow fixture form one work unit, which
# one worker runs, so the fixture is made once, while the other worker runs the rest: a cohort's graders
# and the book's single-core build overlap. The controller that hands out the units sees test ids only,
# so the units are named from ids (work_unit); each worker checks them against the fixtures (_shares).
BOOK_FILES = {"test_build.py", "test_notebooks.py", "test_site.py"}  # executed_ci, built_book, browsed
MODULE_FIXTURE_FILES = {"test_cohort.py", "test_term.py", "test_lab.py", "test_packaging.py"}


def work_unit(nodeid: str) -> str:
    path, _, name = nodeid.partition("::")
    file = path.rsplit("/", 1)[-1]
    if file in BOOK_FILES:
        return "book"
    if file == "test_exercises.py" and (m := re.search(r"\[(ex\d\d-[a-z0-9-]+?)(?:[:\]])", name)):
        return f"graded-{m[1]}"  # one cohort per assignment
    if file in MODULE_FIXTURE_FILES:
        return path
    return nodeid


def _shares(item) -> str | None:
    """The work unit a test must be in because of a slow fixture it uses, or None."""
    names = set(item.fixturenames)
    if names & {"executed_ci", "built_book", "browsed"}:
        return "book"
    if "graded" in names:
        return f"graded-{item.callspec.params['assignment']}"
    if names & {"cohort", "term", "moodle", "pages", "wheel"}:  # module-scoped
        return item.nodeid.partition("::")[0]
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return SharedFixtureScheduling(config, log)


def pytest_sessionfinish(session):
    """In an xdist worker: hand the sections below to the controller, which prints them."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["gdcourse_reports"] = [list(r) for r in _REPORTS]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _REPORTS.extend(tuple(r) for r in getattr(node, "workeroutput", {}).get("gdcourse_reports", []))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def executed_ci(tmp_path_factory):
    """Every notebook of book/ and solutions/ executed at CI parameters.

    Returns {relative source path: gdcourse.notebooks.Result}.
    """
    from gdcourse.notebooks import discover, report, run_all

    out = tmp_path_factory.mktemp("executed-ci")
    results = run_all(discover(ROOT), out, root=ROOT, profile="ci", jobs=2)
    _REPORTS.append(("notebook execution at CI parameters (2 at a time)",
                     # the runner's own closing line would read like a test count
                     "\n".join(report(results, ROOT).splitlines()[:-1])))
    return {r.source.relative_to(ROOT).as_posix(): r for r in results}


_REPORTS: list[tuple[str, str]] = []


@pytest.fixture(scope="session")
def report_section():
    """Add a titled section to the end of the pytest run (timings, page counts)."""
    return lambda title, text: _REPORTS.append((title, text))


def pytest_terminal_summary(terminalreporter):
    """Show what the slow fixtures measured (notebook times, the browser run) at the end."""
    for title, text in _REPORTS:
        terminalreporter.section(title)
        for line in text.splitlines():
            terminalreporter.write_line(line)


# `make site-check` points the site tests at the book `make book` built instead.
SITE_ENV = "GDCOURSE_SITE"


@pytest.fixture(scope="session")
def built_book(tmp_path_factory, request):
    """The HTML book built with -W from the CI-executed chapters (or $GDCOURSE_SITE)."""
    from gdcourse.build import build_html, stage

    if os.environ.get(SITE_ENV):
        site = Path(os.environ[SITE_ENV]).resolve()
        assert (site / "book" / "intro.html").is_file(), f"${SITE_ENV}={site} is not a built book"
        return site
    executed_ci = request.getfixturevalue("executed_ci")
    work = tmp_path_factory.mktemp("book")
    staged = work / "src"
    stage(ROOT, staged)
    for rel, result in executed_ci.items():
        if rel.startswith("book/"):
            assert result.ok, f"{rel} did not execute: {result.error}"
            (staged / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(result.output, staged / rel)
    return build_html(staged, work / "out")
