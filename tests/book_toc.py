"""The book's table of contents, as the tests read it (shared by test_build, test_claims, test_glossary)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _files(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("file", "root"):
                yield value
            else:
                yield from _files(value)
    elif isinstance(node, list):
        for item in node:
            yield from _files(item)


def toc_files() -> list[str]:
    """Every page _toc.yml lists (the root first), in order, as repository paths without suffix."""
    return list(_files(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))))


def chapter_notebooks() -> list[str]:
    """The toc's notebook pages, in order (Markdown pages skipped)."""
    return [f for f in toc_files() if (ROOT / f"{f}.ipynb").is_file()]
