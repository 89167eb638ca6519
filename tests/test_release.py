"""A release: one version everywhere, a changelog entry, a citation, a frozen
requirements file; and the landing page's path with the chapters' own times."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import gdcourse
from book_toc import toc_files
from course_times import chapter_times, exercise_time, fmt

ROOT = Path(__file__).resolve().parent.parent
VERSION = gdcourse.__version__


def test_the_version_is_the_same_everywhere():
    Version(VERSION)  # a valid PEP 440 version
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["parse"]["myst_substitutions"]["version"] == VERSION
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["version"] == VERSION
    about = (ROOT / "book" / "about.md").read_text()
    assert f"version = {{{VERSION}}}" in about, "the BibTeX record must cite this version"
    assert f"this is version {VERSION}." in (ROOT / "README.md").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "gdcourse.__version__"}' in pyproject


def test_the_changelog_opens_with_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## \[(\d[^\]]*)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert released, "no released version in CHANGELOG.md"
    assert released[0][0] == VERSION, f"the newest entry is {released[0][0]}, gdcourse says {VERSION}"
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert str(citation["date-released"]) == released[0][1]
    assert changelog.index("## [Unreleased]") < changelog.index(f"## [{VERSION}]")
    assert f"[{VERSION}]: https://github.com/gdcourse/gdcourse/releases/tag/v{VERSION}" in changelog


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements-release.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier  # exactly one clause
            assert spec.operator == "==", f"not pinned: {line}"
            pins[canonicalize_name(req.name)] = spec.version
    return pins


def test_release_requirements_pin_everything_the_course_needs():
    pins = _pins()
    header = (ROOT / "requirements-release.txt").read_text().splitlines()[0]
    assert f"gdcourse {VERSION}" in header, "requirements-release.txt was frozen for another version"
    assert "gdcourse" not in pins, "gdcourse itself is installed from the checkout"
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate():
                continue  # not for this Python
            name = canonicalize_name(req.name)
            assert name in pins, f"{req.name} is required but not pinned for the release"
            assert req.specifier.contains(pins[name], prereleases=True), \
                f"the release pins {req.name}=={pins[name]}, outside requirements.txt's {req.specifier}"
    # Pinned with what they need: the big packages' own dependencies are in the file too.
    for dependency in ("sphinx", "nbformat", "jupyter-client", "tokenizers", "protobuf", "greenlet"):
        assert dependency in pins, f"{dependency} is not pinned: freeze the whole environment (make freeze)"


def _intro_rows():
    intro = (ROOT / "book" / "intro.md").read_text()
    rows = re.findall(r"^\| (\d+)\. \{doc\}`([^`]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", intro, re.M)
    parts = re.findall(r"^\| \*\*(Part [^*]+)\*\* \| \*\*([^*]+)\*\* \| \*\*([^*]+)\*\* \| \*\*([^*]+)\*\* \|$",
                       intro, re.M)
    return rows, parts


def test_the_landing_page_gives_each_chapters_own_times():
    rows, _ = _intro_rows()
    chapters = [f for f in toc_files() if re.match(r"book/0\d-", f)]
    assert [f"book/{doc}" for _, doc, *_ in rows] == chapters, "one row per chapter, in the toc's order"
    exercise_of = {f"book/{doc}": int(n) for n, doc in re.findall(
        r"^\| Exercise (\d+) — [^|]+\| \{doc\}`([^`]+)`", (ROOT / "book" / "exercises.md").read_text(), re.M)}
    for number, doc, read, run, exercise in rows:
        path = ROOT / f"book/{doc}.ipynb"
        assert int(number) == int(Path(doc).name[:2])
        reading, with_experiments = chapter_times(path)
        assert (read.strip(), run.strip()) == (fmt(reading), fmt(with_experiments)), doc
        n = exercise_of.get(f"book/{doc}")
        if n is None:
            assert exercise.strip() == "—", f"{doc} has no exercise"
        else:
            (notebook,) = (ROOT / "exercises").glob(f"ex{n:02d}-*/*.ipynb")
            assert exercise.strip() == f"exercise {n}, {fmt(exercise_time(notebook))}", doc


def _minutes_of(shown: str) -> int:
    """'45 min' -> 45, '1 h' -> 60, '1 h 30' -> 90 (what fmt writes)."""
    m = re.fullmatch(r"(?:(\d+) h)? ?(\d+)?(?: min)?", shown.strip())
    assert m and shown.strip(), f"not a duration: {shown!r}"
    return 60 * int(m.group(1) or 0) + int(m.group(2) or 0)


def test_each_parts_times_add_up():
    rows, parts = _intro_rows()
    folders = list(dict.fromkeys(f.split("/")[1] for f in toc_files() if re.match(r"book/0\d-", f)))
    assert len(parts) == len(folders), "one bold row per part of the toc"
    for (title, read, run, exercises), folder in zip(parts, folders):
        mine = [r for r in rows if r[1].startswith(folder + "/")]
        totals = [0, 0, 0]
        for _, doc, *_ in mine:
            reading, with_experiments = chapter_times(ROOT / f"book/{doc}.ipynb")
            totals[0] += reading
            totals[1] += with_experiments
        totals[2] = sum(_minutes_of(r[4].split(",", 1)[1]) for r in mine if r[4].strip() != "—")
        assert [read, run, exercises] == [fmt(t) for t in totals], title
