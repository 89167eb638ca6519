"""The appendix "Glossary: English ↔ 中文" (book/appendices/glossary.md).

Fast checks of the page's source, no build: every table row is well formed,
the Chinese column is Chinese, the entries are unique and sorted, every
"First met in" link points at a chapter of the book, a fixed list of core
terms is present, and every English term really occurs in the prose (markdown
cells) of the chapter it links to, so that the last column cannot lie.
"""

from __future__ import annotations

import json
import posixpath
import re
from functools import lru_cache
from pathlib import Path

import pytest

import book_toc

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "book" / "appendices" / "glossary.md"
PAGE_DIR = "book/appendices"  # {doc} targets are relative to this folder

# Terms a reader of chapters 1-15 and the grading pages meets again and again:
# the glossary must define each of them (matched like the entries themselves).
CORE_TERMS = [
    "gradient descent", "learning rate", "loss", "epoch", "Hessian", "condition number",
    "standardisation", "mini-batch", "batch size", "SGD",
    "noise floor", "momentum", "Nesterov", "bias correction", "Adam", "AdamW",
    "weight decay", "epsilon", "optimizer state", "warm-up", "learning-rate schedule",
    "cosine annealing", "learning-rate range test", "gradient clipping", "global norm",
    "float16", "bfloat16", "machine epsilon", "loss scaling", "master weights",
    "autograd", "leaf tensor", "gradient accumulation", "early stopping", "checkpoint",
    "mixed precision", "GradScaler", "all-reduce", "DistributedDataParallel", "rank",
    "Trainer", "ONNX", "opset", "hidden case", "autograde",
]

ROW = re.compile(r"^\|(.*)\|\s*$")
SEPARATOR = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
DOC = re.compile(r"\{doc\}`([^`<>]+)`")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


# --- reading the page ---------------------------------------------------------

def _cells(line: str) -> list[str]:
    body = ROW.match(line).group(1)
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def parse(text: str) -> list[dict]:
    """Every entry of every table, with its ``##`` group and line number.

    Each table must be a header ``| English | 中文 | Meaning | First met in |``,
    a separator row, then entries; a row of the wrong width is kept as is so
    that the width test reports it.
    """
    entries, group, in_table = [], None, False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            group, in_table = line[3:].strip(), False
            continue
        if not ROW.match(line):
            in_table = False
            continue
        if SEPARATOR.match(line):
            continue
        cells = _cells(line)
        if not in_table:  # the header of a new table
            assert cells == ["English", "中文", "Meaning", "First met in"], (
                f"line {number}: a table must start with the header | English | 中文 | Meaning | First met in |")
            in_table = True
            continue
        entries.append({"line": number, "group": group, "cells": cells})
    return entries


@lru_cache(maxsize=None)
def _text() -> str:
    return GLOSSARY.read_text(encoding="utf-8")


def entries() -> list[dict]:
    return parse(_text())


# --- matching a term against prose --------------------------------------------

def _normalise(text: str) -> str:
    text = text.lower().replace("\u2013", "-").replace("\u2014", "-").replace("\u2011", "-")
    text = re.sub(r"[`*\\]", "", text)
    text = re.sub(r"(?<=\w)-(?=\w)", "", text)  # warm-up = warmup, all-reduce = allreduce
    # British and American spellings are the same term (optimiser/optimizer, normalisation/...).
    text = re.sub(r"i[sz](e|er|ers|ed|es|ing|ation|ations)\b", r"iz\1", text)
    return re.sub(r"ization(s)?\b", "ize", text)  # standardisation ~ standardise(d), normalisation ~ normalise


def main_term(english: str) -> str:
    """The English cell without a trailing parenthesis: "automatic mixed precision (AMP)" -> its first part."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", english).strip()


def aliases(english: str) -> list[str]:
    """Abbreviations given in a trailing parenthesis, e.g. AMP, FP16, κ: single words with a capital,
    a digit or a non-ASCII letter, so that a plain qualifier such as "(schedule)" matches nothing."""
    m = re.search(r"\(([^)]*)\)\s*$", english)
    if not m:
        return []
    return [a.strip() for a in m.group(1).split(",")
            if re.fullmatch(r"\S+", a.strip()) and re.search(r"[A-Z0-9]|[^\x00-\x7f]", a.strip())]


def term_pattern(term: str) -> re.Pattern:
    """A term, case-insensitive, hyphens ignored (warm-up = warmup), a space or nothing between
    its words (mini batch = minibatch), and a simple inflection on the last word (plural, -ed, -ing)."""
    words = [w for w in re.split(r"[\s\-]+", _normalise(term)) if w]
    *head, last = words
    if last.endswith("y") and len(last) > 2:
        tail = rf"(?:{re.escape(last)}|{re.escape(last[:-1])}ies)"
    elif last.endswith("e"):
        tail = rf"(?:{re.escape(last)}(?:s|d)?|{re.escape(last[:-1])}ing)"
    else:
        tail = rf"{re.escape(last)}(?:s|es|ed|ing)?"
    body = r"\s?".join([re.escape(w) for w in head] + [tail])
    return re.compile(rf"(?<![\w]){body}(?![\w])")


def mentions(prose: str, english: str) -> bool:
    text = _normalise(prose)
    return any(term_pattern(t).search(text) for t in [main_term(english), *aliases(english)])


def key(english: str) -> str:
    """Sort and uniqueness key: the main term, lower case, without markup."""
    return re.sub(r"[`*]", "", main_term(english)).lower().strip()


# --- the book -------------------------------------------------------------------

@lru_cache(maxsize=None)
def toc_files() -> frozenset:
    return frozenset(book_toc.toc_files())


def target(link: str) -> str:
    """A {doc} link of the glossary as a path from the repository root, without suffix."""
    return posixpath.normpath(posixpath.join(PAGE_DIR, link))


@lru_cache(maxsize=None)
def prose(page: str) -> str | None:
    """The markdown a reader sees on a page: markdown cells of a notebook, or a .md file."""
    notebook, markdown = ROOT / f"{page}.ipynb", ROOT / f"{page}.md"
    if notebook.is_file():
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    elif markdown.is_file():
        text = markdown.read_text(encoding="utf-8")
    else:
        return None
    # What is not prose: MyST labels, roles' targets ({cite}, {glue}, {doc}), link addresses.
    text = re.sub(r"^\([\w-]+\)=\s*$", " ", text, flags=re.M)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", text)
    return re.sub(r"\]\([^)]*\)", "] ", text)


def _first_doc(entry) -> str:
    return DOC.findall(entry["cells"][3])[0] if len(entry["cells"]) == 4 and DOC.findall(entry["cells"][3]) else ""


# --- the tests ----------------------------------------------------------------

def test_page_exists_with_title_and_introduction():
    text = _text()
    assert text.startswith("# Glossary: English ↔ 中文\n"), "the page starts with its title"
    intro = text.split("\n## ", 1)[0].split("\n", 1)[1].strip()
    sentences = re.findall(r"[.!?](?:\s|$)", intro)
    assert 2 <= len(sentences) <= 3, f"two or three sentences of introduction, found {len(sentences)}"
    assert len(entries()) >= 120, f"only {len(entries())} entries"


def test_every_row_has_four_cells():
    bad = [(e["line"], len(e["cells"])) for e in entries() if len(e["cells"]) != 4 or not all(e["cells"])]
    assert not bad, f"rows without exactly four non-empty cells (line, cells): {bad}"


def test_chinese_cell_contains_cjk():
    bad = [(e["line"], e["cells"][1]) for e in entries() if len(e["cells"]) > 1 and not CJK.search(e["cells"][1])]
    assert not bad, f"中文 cells without Chinese characters: {bad}"


def test_english_cell_has_no_cjk_and_meaning_is_one_line():
    for e in entries():
        english, _, meaning, _ = (e["cells"] + [""] * 4)[:4]
        assert not CJK.search(english), f"line {e['line']}: the English cell is in Chinese: {english}"
        assert 20 <= len(meaning) <= 260, f"line {e['line']}: a one-line definition, not {len(meaning)} characters"


def test_entries_unique_case_insensitive():
    seen: dict[str, int] = {}
    duplicates = []
    for e in entries():
        k = key(e["cells"][0])
        if k in seen:
            duplicates.append((k, seen[k], e["line"]))
        seen.setdefault(k, e["line"])
    assert not duplicates, f"duplicate terms (term, first line, again at): {duplicates}"


def test_groups_are_letters_and_entries_sorted_within_each():
    groups: dict[str, list[dict]] = {}
    for e in entries():
        groups.setdefault(e["group"], []).append(e)
    assert list(groups) == sorted(groups), f"groups out of alphabetical order: {list(groups)}"
    for group, rows in groups.items():
        assert group is not None and re.fullmatch(r"[A-Z]", group), f"group heading {group!r} is not one letter"
        for e in rows:
            assert key(e["cells"][0])[0].upper() == group, (
                f"line {e['line']}: {e['cells'][0]!r} filed under {group}")
        keys = [key(e["cells"][0]) for e in rows]
        assert keys == sorted(keys), f"group {group} not sorted: {keys}"


def test_first_met_in_is_one_doc_link_to_a_chapter_in_the_toc():
    listed = toc_files()
    problems = []
    for e in entries():
        links = DOC.findall(e["cells"][3]) if len(e["cells"]) == 4 else []
        if len(links) != 1 or e["cells"][3] != f"{{doc}}`{links[0] if links else ''}`":
            problems.append((e["line"], "the cell must be exactly one {doc} link"))
            continue
        page = target(links[0])
        if page not in listed:
            problems.append((e["line"], f"{links[0]} -> {page} is not a chapter in _toc.yml"))
        if page in listed and prose(page) is None:
            problems.append((e["line"], f"{page} is in _toc.yml but has no .ipynb or .md file"))
    assert not problems, problems


def test_core_terms_are_in_the_glossary():
    terms = [e["cells"][0] for e in entries()]
    missing = [core for core in CORE_TERMS
               if not any(term_pattern(core).fullmatch(_normalise(main_term(t))) or
                          any(term_pattern(core).fullmatch(_normalise(a)) for a in aliases(t))
                          for t in terms)]
    assert not missing, f"core terms without an entry: {missing}"


def test_core_terms_are_used_by_the_course():
    """The core list itself must not drift from the course: each term occurs in some chapter."""
    pages = [prose(p) or "" for p in sorted(toc_files()) if not p.startswith(PAGE_DIR)]  # not the glossary itself
    unused = [t for t in CORE_TERMS if not any(mentions(text, t) for text in pages)]
    assert not unused, f"core terms that no page of the book uses: {unused}"


def test_each_term_occurs_in_the_chapter_it_links_to():
    absent = []
    for e in entries():
        link = _first_doc(e)
        if not link:
            continue  # reported by the link test
        page = target(link)
        text = prose(page)
        if text is None:
            absent.append((e["line"], e["cells"][0], f"{page}: no such page"))
        elif not mentions(text, e["cells"][0]):
            absent.append((e["line"], e["cells"][0], page))
    assert not absent, f"terms that their 'First met in' chapter never mentions (line, term, page): {absent}"


def test_matcher_accepts_variants_and_rejects_near_misses():
    assert mentions("Linear warm-up, then cosine", "warmup")
    assert mentions("the Learning-rate schedules and warmup", "warm-up")
    assert mentions("two all-reduces per step", "all-reduce")
    assert mentions("Every optimiser in this course", "optimizer")
    assert mentions("batch normalization", "batch normalisation")
    assert mentions("resuming exactly", "resume")
    assert mentions("mixed-precision training", "mixed precision (AMP)") and mentions("an AMP step", "automatic mixed precision (AMP)")
    assert not mentions("a cranked lever", "rank")
    assert not mentions("momentum buffers", "momentum buffer size")
