"""The book: its table of contents, its configuration, and the HTML built
with -W from the CI-executed chapters."""

import re
from pathlib import Path

import yaml

from book_toc import toc_files
from gdcourse.notebooks import discover, needs_gpu
from gdcourse.setup_cell import REPOSITORY

ROOT = Path(__file__).resolve().parent.parent
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
CHAPTER = "book/01-by-hand/01-the-loop"


def test_toc_and_book_folder_agree():
    listed = set(toc_files())
    pages = {p.relative_to(ROOT).with_suffix("").as_posix() for p in (ROOT / "book").rglob("*")
             if p.suffix in (".ipynb", ".md") and ".ipynb_checkpoints" not in p.parts}
    assert listed == pages, f"in toc only: {listed - pages}; in book/ only: {pages - listed}"


def test_config_points_launch_buttons_at_this_repository():
    assert CONFIG["repository"]["url"] == REPOSITORY
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["execute"]["execute_notebooks"] == "off"  # the runner executes; the build renders
    assert CONFIG["only_build_toc_files"] is True


def test_book_builds_strictly_with_the_chapter_page(built_book):
    page = built_book / f"{CHAPTER}.html"
    assert page.is_file()
    html = page.read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    figures = [src for src in images if "_images/" in src]
    assert len(figures) >= 3, f"expected the chapter's executed figures, found {figures}"
    for src in figures:
        assert (page.parent / src).resolve().is_file(), f"missing image {src}"
    colab = f"https://colab.research.google.com/github/gdcourse/gdcourse/blob/main/{CHAPTER}.ipynb"
    assert colab in html, "the chapter's Colab button must open the notebook's real path"
    assert (ROOT / f"{CHAPTER}.ipynb").is_file()
    assert "application/vnd.jupyter.widget-view+json" in html, "the learning-rate slider's state is embedded"


def test_glued_numbers_are_rendered_not_left_as_roles(built_book):
    html = (built_book / f"{CHAPTER}.html").read_text(encoding="utf-8")
    assert "{glue" not in html and "glue:text" not in html


def test_gpu_tagging_is_visible_to_the_workflow():
    """Exactly the notebooks with a guarded GPU section are listed for the GPU workflow, and each of them
    takes a `device` parameter that the workflow can set to cuda."""
    import json

    tagged = {p.relative_to(ROOT).as_posix() for p in discover(ROOT) if needs_gpu(p)}
    with_gpu_cells = set()
    for p in discover(ROOT):
        cells = json.loads(p.read_text())["cells"]
        if any("gpu" in c.get("metadata", {}).get("tags", []) for c in cells):
            with_gpu_cells.add(p.relative_to(ROOT).as_posix())
            params = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
            assert re.search(r"^device\s*=", "".join(params["source"]), flags=re.M), f"{p.name}: no device parameter"
    assert tagged == with_gpu_cells and tagged  # the Part II chapters have GPU sections


def test_citations_use_the_chapters_key_prefix():
    """Several chapters cite the same works. sphinxcontrib-bibtex warns (and -W fails) when one key
    appears in two bibliographies, and myst-nb cannot resolve {footcite} across cells, so each
    chapter cites {cite}`chNN-key` and ends with one bibliography using :keyprefix: chNN-."""
    import json

    for path in sorted((ROOT / "book").rglob("*.ipynb")):
        prefix = "ch" + path.name[:2] + "-"
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")
        keys = [k.strip() for group in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", text) for k in group.split(",")]
        assert all(k.startswith(prefix) for k in keys), f"{path.name}: cite as {{cite}}`{prefix}key`, found {keys}"
        bibliographies = re.findall(r"```\{bibliography\}(.*?)```", text, flags=re.S)
        if keys:
            # :labelprefix: too: two pages citing different works of one author and year would
            # otherwise both label them "Author26a", another -W failure
            assert len(bibliographies) == 1 and f":keyprefix: {prefix}" in bibliographies[0] \
                and f":labelprefix: {prefix}" in bibliographies[0], \
                f"{path.name}: end with one {{bibliography}} with :filter: docname in docnames, :keyprefix: {prefix} and :labelprefix: {prefix}"
        assert "{footcite}" not in text


def test_exercises_page_lists_every_assignment_with_working_paths():
    page = (ROOT / "book" / "exercises.md").read_text()
    for folder in sorted((ROOT / "solutions").iterdir()):
        path = f"exercises/{folder.name}/{folder.name}.ipynb"
        assert (ROOT / path).is_file()
        assert f"https://github.com/gdcourse/gdcourse/blob/main/{path}" in page
        assert f"https://colab.research.google.com/github/gdcourse/gdcourse/blob/main/{path}" in page


def test_exercises_page_states_each_assignments_real_points():
    import nbformat

    page = (ROOT / "book" / "exercises.md").read_text()
    for folder in sorted((ROOT / "exercises").iterdir()):
        nb = nbformat.read(folder / f"{folder.name}.ipynb", as_version=4)
        graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        auto = sum(c.metadata["nbgrader"]["points"] for c in graded if c.cell_type == "code")
        manual = sum(c.metadata["nbgrader"]["points"] for c in graded if c.cell_type == "markdown")
        row = next(l for l in page.splitlines() if f"exercises/{folder.name}/" in l)
        assert f"| {auto:g} + {manual:g} |" in row, f"{folder.name}: the page should say {auto:g} + {manual:g}"


def test_each_chapter_points_at_the_next_one():
    """'Next' links the following chapter of the toc, and the last chapter the first appendix."""
    import json
    import os

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    chapters = [c["file"] for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]
    for i, chapter in enumerate(chapters):
        cells = json.loads((ROOT / f"{chapter}.ipynb").read_text())["cells"]
        text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        if i + 1 < len(chapters):
            rel = os.path.relpath(chapters[i + 1], Path(chapter).parent)
            assert f"Next: chapter {i + 2}, {{doc}}`{rel}`." in text, chapter
        else:  # the last chapter leads into the appendices
            first_page = next(c["file"] for part in toc["parts"] if part.get("caption") == "Appendices"
                              for c in part["chapters"])
            rel = os.path.relpath(first_page, Path(chapter).parent)
            assert f"Next: the appendices, starting with {{doc}}`{rel}`." in text, chapter
