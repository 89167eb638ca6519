"""The "Claims checked" appendix agrees with the chapters' claim boxes: "What the sources say" (a seed
post's claim) and "Rule of thumb" (a practitioners' guide's rule, tested the same way).

Fast: reads the committed notebooks and book/appendices/claims.md, executes nothing. The chapters are
whatever notebooks _toc.yml lists, in every part, so a new chapter's boxes are demanded here as soon as
it is in the toc.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import nbformat
import pytest

from book_toc import chapter_notebooks

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "book" / "appendices" / "claims.md"

VERDICTS = ("holds", "partly", "wrong", "outdated", "cannot be checked")
OPENING = re.compile(r"^(`{3,})\{admonition\} (What the sources say|Rule of thumb)")
TARGET = re.compile(r"^\((claim-ch(\d\d)-[a-z0-9]+(?:-[a-z0-9]+){1,4})\)=$")
ANY_TARGET = re.compile(r"^\((claim-[^)]*)\)=\s*$")
REF = re.compile(r"^\{ref\}`[^`<]*\S <((?:claim-)?ch\d\d-[a-z0-9-]+)>`$")
SECTION_TARGET = re.compile(r"^\((ch(\d\d)-[a-z0-9-]+)\)=\s*$", re.M)
POSTS = ("post2026numpy", "post2026skeleton", "post2026principles")
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")
COUNTS = re.compile(r"the table holds (\d+) claims: (\d+) holds, (\d+) partly, (\d+) wrong, "
                    r"(\d+) outdated and (\d+) cannot be checked\.")

Box = collections.namedtuple("Box", "chapter number label body problem kind")


def boxes() -> list[Box]:
    """Every "What the sources say" box of every chapter, with the label directly before it (or None)."""
    found = []
    for chapter in chapter_notebooks():
        number = re.match(r"(\d\d)-", Path(chapter).name)
        nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            lines = cell.source.split("\n")
            for i, line in enumerate(lines):
                opening = OPENING.match(line)
                if not opening:
                    continue
                fence = opening.group(1)
                end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence), len(lines))
                body = "\n".join(lines[i:end + 1])
                label, problem = None, None
                target = TARGET.match(lines[i - 2]) if i >= 2 else None
                if not (target and lines[i - 1] == ""):
                    problem = f"not directly preceded by '(claim-chNN-slug)=' and a blank line: {line!r}"
                elif number is None or target.group(2) != number.group(1):
                    problem = f"{target.group(1)}: chapter number does not match the file name"
                else:
                    label = target.group(1)
                found.append(Box(chapter, number and number.group(1), label, body, problem, opening.group(2)))
    return found


Row = collections.namedtuple("Row", "line section cells")


def page_rows() -> tuple[list[str], list[Row], str]:
    """(chapter sections in page order, table rows with the section they sit under, page text)."""
    text = PAGE.read_text(encoding="utf-8")
    sections, rows, section = [], [], None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            doc = DOC.search(line) if line.startswith("## ") else None
            section = (PAGE.parent / doc.group(1)).resolve().relative_to(ROOT).as_posix() if doc else None
            if section:
                sections.append(section)
            continue
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if cells == ["Claim", "Verdict", "Experiment"] or all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        rows.append(Row(n, section, cells))
    return sections, rows, text


def test_every_box_is_labelled_and_labels_are_unique():
    found = boxes()
    assert found, "no 'What the sources say' boxes found in the toc's chapters"
    problems = [f"{b.chapter}: {b.problem}" for b in found if b.problem]
    assert not problems, "\n".join(problems)
    labels = collections.Counter(b.label for b in found)
    assert not [l for l, k in labels.items() if k > 1], f"labels used twice: {[l for l, k in labels.items() if k > 1]}"
    slugs = collections.Counter(l.split("-", 2)[2] for l in labels)
    assert not [s for s, k in slugs.items() if k > 1], f"slugs used twice: {[s for s, k in slugs.items() if k > 1]}"


def test_no_claim_target_without_its_box():
    """A `(claim-...)=` line anywhere in a chapter must sit directly before a box."""
    stray = []
    for chapter in chapter_notebooks():
        nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:
            lines = cell.source.split("\n")
            for i, line in enumerate(lines):
                if ANY_TARGET.match(line) and not (i + 2 < len(lines) and lines[i + 1] == ""
                                                    and OPENING.match(lines[i + 2])):
                    stray.append(f"{chapter}: {line}")
    assert not stray, stray


def section_targets() -> dict[str, str]:
    """Every `(chNN-slug)=` target in the chapters, with its chapter: where a row without a box links."""
    found = {}
    for chapter in chapter_notebooks():
        nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                found.update((m.group(1), chapter) for m in SECTION_TARGET.finditer(cell.source))
    return found


def _cited(box: Box) -> set[str]:
    keys = set(re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", box.body))
    return {k.strip() for group in keys for k in group.split(",")}


def test_every_box_cites_the_post_it_tests():
    """A box argues with a named post: it cites one of the three seed posts with its chapter's prefix."""
    uncited = [box.label or box.body.splitlines()[0] for box in boxes() if box.kind == "What the sources say"
               and not _cited(box) & {f"ch{box.number}-{post}" for post in POSTS}]
    assert not uncited, f"boxes that do not cite their source post ({{cite:p}}`chNN-post2026...`): {uncited}"


def test_every_rule_of_thumb_cites_the_guide_it_comes_from():
    """A rule of thumb is someone's rule: its box cites, with its chapter's prefix, the guide that states it
    (a work of the bibliography, not one of the seed posts, whose claims go in "What the sources say")."""
    rules = [box for box in boxes() if box.kind == "Rule of thumb"]
    bad = [box.label for box in rules
           if not any(k.startswith(f"ch{box.number}-") and k[5:] not in POSTS for k in _cited(box))]
    assert not bad, f"rules of thumb that cite no guide ({{cite:p}}`chNN-key`): {bad}"


def test_page_title_and_verdict_words_are_defined():
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith("# Claims checked\n")
    for verdict in VERDICTS:
        assert re.search(rf"^{re.escape(verdict)}\n: \S", text, re.M), f"verdict {verdict!r} is not defined"


def test_every_row_has_a_claim_a_verdict_and_a_link():
    _, rows, _ = page_rows()
    assert rows, "the page has no table rows"
    for row in rows:
        where = f"claims.md line {row.line}"
        assert len(row.cells) == 3, f"{where}: {len(row.cells)} cells, expected 3: {row.cells}"
        claim, verdict, link = row.cells
        assert claim, f"{where}: empty claim"
        assert verdict in VERDICTS, f"{where}: verdict {verdict!r} is not one of {VERDICTS}"
        assert REF.match(link), (f"{where}: experiment must be {{ref}}`a few words <claim-...>` (a box) or "
                                 f"{{ref}}`the finding in a few words <chNN-...>` (a section), got {link!r}")


def test_rows_and_labels_agree_and_sit_under_their_chapter():
    labelled = {b.label: b.chapter for b in boxes() if b.label}
    sections, rows, text = page_rows()
    chapters = chapter_notebooks()
    assert [s for s in sections if s not in chapters] == [], "sections must link chapters listed in _toc.yml"
    assert len(set(sections)) == len(sections), "a chapter has two sections"
    assert sections == [c for c in chapters if c in sections], "sections are not in the toc's order"
    referred = set(re.findall(r"<(claim-[a-z0-9-]+)>", text)) | set(re.findall(r"\((claim-[^)\s]*)\)", text))
    assert not referred - set(labelled), f"claims.md refers to labels that do not exist: {sorted(referred - set(labelled))}"
    in_rows = collections.defaultdict(list)
    for row in rows:
        match = REF.match(row.cells[-1]) if len(row.cells) == 3 else None
        if match:
            in_rows[match.group(1)].append(row)
    sections_of = section_targets()
    unknown = [f"line {r.line}: {label}" for label, rs in in_rows.items() for r in rs
               if not label.startswith("claim-") and sections_of.get(label) != r.section]
    assert not unknown, f"rows linking a section target that is not in their chapter: {unknown}"
    missing = [label for label in labelled if label not in in_rows]
    assert not missing, f"labels with no row in claims.md: {missing}"
    misplaced = [f"line {r.line}: {label} belongs under {labelled[label]}, sits under {r.section}"
                 for label, rs in in_rows.items() if label.startswith("claim-")
                 for r in rs if r.section != labelled.get(label)]
    assert not misplaced, "\n".join(misplaced)


def test_every_box_cites_executed_evidence():
    # A claim the course judges must rest on something that ran: a glued number or an assert. The one
    # exception is a box whose every row says "cannot be checked": its evidence is the reason why not.
    _, rows, _ = page_rows()
    verdicts = collections.defaultdict(set)
    for r in rows:
        match = REF.match(r.cells[2]) if len(r.cells) == 3 else None
        if match:
            verdicts[match.group(1)].add(r.cells[1])
    unsupported = [box.label for box in boxes() if box.label is not None
                   and verdicts[box.label] != {"cannot be checked"}
                   and "{glue:" not in box.body and not re.search(r"\basserted\b", box.body)]
    assert not unsupported, f"boxes with a verdict but no {{glue:...}} value and no 'asserted': {unsupported}"


def test_count_sentence_matches_the_table():
    _, rows, text = page_rows()
    counts = collections.Counter(r.cells[1] for r in rows if len(r.cells) == 3)
    expected = (len(rows), *(counts[v] for v in VERDICTS))
    found = COUNTS.findall(" ".join(text.split()))
    assert len(found) == 1, "expected exactly one count sentence 'the table holds N claims: ...'"
    stated = tuple(int(k) for k in found[0])
    wanted = (f"the table holds {expected[0]} claims: {expected[1]} holds, {expected[2]} partly, "
              f"{expected[3]} wrong, {expected[4]} outdated and {expected[5]} cannot be checked.")
    assert stated == expected, f"the count sentence should read: {wanted}"


def test_each_chapter_section_is_titled_like_its_chapter():
    """The page's navigation shows the section titles: each is its chapter's own title, not a file path."""
    import nbformat

    text = PAGE.read_text(encoding="utf-8")
    headings = [l for l in text.splitlines() if l.startswith("## {doc}")]
    assert headings
    for line in headings:
        match = re.fullmatch(r"## \{doc\}`([^`<]+) <([^`>]+)>`", line)
        assert match, f"a section names its chapter's title explicitly: {line}"
        nb = nbformat.read((PAGE.parent / (match[2] + ".ipynb")).resolve(), as_version=4)
        first = next(l for c in nb.cells if c.cell_type == "markdown" for l in c.source.splitlines()
                     if l.startswith("# "))
        assert match[1].strip() == first[2:].strip(), (line, first)
