"""The built site, read by a real browser.

The book built by the ``built_book`` fixture (the CI-executed chapters, -W)
is served on localhost and every page is opened in headless Chromium. What a
reader would hit is checked on what the browser actually loaded: console
errors, figures that do not load or have no alt text, headings out of order,
links to pages or anchors that do not exist, search, and the Colab buttons.
A screenshot of a chapter and the page count and timing are saved under
``_build/artifacts`` (CI uploads them).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from book_toc import toc_files
from site_browser import Browser, serve

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "_build" / "artifacts"
SCREENSHOT_PAGE = "book/01-by-hand/01-the-loop.html"
# Chapters with many figures, photographed at a laptop's and a phone's width for CI's artifacts
PHOTOGRAPHED = ("book/01-by-hand/01-the-loop.html", "book/01-by-hand/06-adaptive-methods.html",
                "book/02-pytorch/12-mixed-precision.html", "book/03-diagnosis-and-cost/16-troubleshooting-clinic.html")
WIDTHS = {"laptop": 1280, "phone": 390}
# gdcourse/book.mplstyle draws the smallest text at 9 pt and 100 dpi, 12.5 px: a figure shown at 72 % of its
# own width or more keeps every label at 9 px or more.
FIGURE_RATIO = 0.72
COLAB = "https://colab.research.google.com/github/gdcourse/gdcourse/blob/main/"
# Every request to another host is blocked (site_browser): the site must work offline.
# The pages with a widget (chapter 1's slider), and one with many formulas.
WIDGET_PAGE = "book/01-by-hand/01-the-loop.html"
MATH_PAGE = "book/01-by-hand/02-why-the-gradient.html"
# A term of the course, and the chapter search must find for it.
SEARCH = ("Nesterov", "book/01-by-hand/05-momentum-and-nesterov.html")


def site_pages(site: Path) -> list[str]:
    """Every HTML page of the site, as paths relative to its root (the root's
    index.html is only a redirect to the landing page, checked on its own)."""
    skip = {"_static", "_sources", "_images"}
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not skip & set(p.relative_to(site).parts) and p != site / "index.html")


@pytest.fixture(scope="module")
def browsed(built_book, report_section):
    """Open every page, run one search and take one screenshot; return what was seen."""
    pages = site_pages(built_book)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with serve(built_book) as base, Browser(base) as browser:
        visits = {path: browser.visit(path) for path in pages}
        browser.page.goto(base + SCREENSHOT_PAGE, wait_until="load")
        browser.page.screenshot(path=str(ARTIFACTS / "chapter.png"))
        sized = {}
        for device, width in WIDTHS.items():
            browser.page.set_viewport_size({"width": width, "height": 900})
            for path in PHOTOGRAPHED:
                sized[device, path] = browser.visit(path)
                figure = browser.page.locator("article img[src*='_images/']").first
                figure.scroll_into_view_if_needed()
                browser.page.screenshot(path=str(ARTIFACTS / f"{Path(path).stem}-{width}px.png"))
        browser.page.set_viewport_size({"width": WIDTHS["laptop"], "height": 900})
        browser.page.goto(f"{base}search.html?q={SEARCH[0]}", wait_until="load")
        browser.page.wait_for_selector("#search-results li", timeout=30_000)
        hits = browser.page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
        external = set(browser.external)
    seconds = time.perf_counter() - start
    summary = {"pages": len(pages), "seconds": round(seconds, 1),
               "slowest": sorted(((round(v.seconds, 2), p) for p, v in visits.items()), reverse=True)[:3]}
    (ARTIFACTS / "site-check.json").write_text(json.dumps(summary, indent=1))
    report_section("the built site in headless Chromium",
                   f"{len(pages)} pages, search and screenshot in {seconds:.1f} s; slowest: "
                   + ", ".join(f"{p} {s} s" for s, p in summary["slowest"]))
    return {"base": base, "site": built_book, "visits": visits, "hits": hits, "external": external,
            "sized": sized}


def _local_path(url: str, base: str) -> tuple[str, str]:
    """(file path relative to the site, fragment) of a link into the site."""
    parts = urlsplit(url)
    path = unquote(parts.path.lstrip("/"))
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path, parts.fragment


def test_every_page_is_visited(browsed, built_book):
    visits = browsed["visits"]
    assert len(visits) >= 20, sorted(visits)
    for page in (SCREENSHOT_PAGE, "book/intro.html", "book/about.html", "search.html", "genindex.html"):
        assert page in visits


def test_the_site_root_opens_the_landing_page(built_book):
    root = (built_book / "index.html").read_text(encoding="utf-8")
    assert 'http-equiv="Refresh" content="0; url=book/intro.html"' in root


def test_pages_load_without_console_errors(browsed):
    problems = {path: visit.errors + visit.failed for path, visit in browsed["visits"].items()
                if visit.errors or visit.failed}
    assert not problems, json.dumps(problems, indent=1)


def test_the_site_loads_nothing_from_another_host(browsed):
    assert browsed["external"] == set(), f"pages asked other hosts (blocked): {sorted(browsed['external'])}"


def test_math_renders_and_the_widget_draws_with_every_other_host_blocked(browsed):
    visits = browsed["visits"]
    assert visits[MATH_PAGE].math["typeset"] >= 10, visits[MATH_PAGE].math
    broken = {p: v.math for p, v in visits.items() if v.math.get("untypeset") or v.math.get("errors")}
    assert not broken, f"formulas left as TeX or drawn as errors: {broken}"
    assert visits[WIDGET_PAGE].widgets["views"] >= 1, "chapter 1 embeds no widget"
    undrawn = {p: v.widgets for p, v in visits.items() if v.widgets.get("views") and not v.widgets.get("drawn")}
    assert not undrawn, f"embedded widgets the page never drew: {undrawn}"


def test_every_figure_loads_and_has_alt_text(browsed):
    figures = 0
    problems = []
    for path, visit in browsed["visits"].items():
        for img in visit.images:
            figures += "_images/" in (img["src"] or "")
            if not img["loaded"]:
                problems.append(f"{path}: {img['src']} did not load")
            alt = (img["alt"] or "").strip()
            # A frame a live widget draws from its embedded state carries no alt text; the page's
            # static figure of the same sweep (gdcourse.plot.plot_lr_sweep) does, and is checked here.
            if not img["widget"] and (len(alt) < 8 or re.search(r"\.(png|svg|jpe?g|gif)$", alt)):
                problems.append(f"{path}: {img['src']} has no alt text (alt={alt!r})")
    assert figures >= 100, f"expected the chapters' executed figures, found {figures}"
    assert not problems, "\n".join(problems)


def _too_small(visit) -> list[str]:
    return [f"{visit.path}: {img['src'][:60]} shown at {img['shown'] / img['natural']:.0%} of its "
            f"{img['natural']} px" for img in visit.images
            if "_images/" in (img["src"] or "") and img["natural"] and img["shown"] < FIGURE_RATIO * img["natural"]]


def test_every_figure_is_shown_large_enough_to_read_its_labels(browsed):
    """At 1280 px every figure of the book is shown at 72 % of its drawn width or more (its 9 pt labels
    at 9 px or more); on a phone the photographed chapters' figures keep that size and scroll sideways."""
    problems = [p for visit in browsed["visits"].values() for p in _too_small(visit)]
    assert not problems, f"{len(problems)} figures too wide for the column:\n" + "\n".join(problems)
    phone = [p for (device, _), visit in browsed["sized"].items() if device == "phone" for p in _too_small(visit)]
    assert not phone, "\n".join(phone)
    for (device, path), visit in browsed["sized"].items():
        assert any("_images/" in (i["src"] or "") for i in visit.images), (device, path)
        assert (ARTIFACTS / f"{Path(path).stem}-{WIDTHS[device]}px.png").is_file()


def test_every_page_shows_the_logo_and_has_the_favicon(browsed):
    site, base = browsed["site"], browsed["base"]
    for path, visit in browsed["visits"].items():
        assert visit.icon and visit.icon.startswith(base) and visit.icon.endswith("favicon.svg"), (path, visit.icon)
        assert (site / _local_path(visit.icon, base)[0]).is_file(), visit.icon
        assert visit.logos and all(logo["loaded"] and len(logo["alt"] or "") > 8 for logo in visit.logos), \
            (path, visit.logos)


def test_heading_levels_are_in_order(browsed):
    problems = []
    for path, visit in browsed["visits"].items():
        levels = visit.headings
        if not levels or levels[0] != 1 or levels.count(1) != 1:
            problems.append(f"{path}: needs exactly one h1, first; got {levels[:8]}")
            continue
        for before, after in zip(levels, levels[1:]):
            if after > before + 1:
                problems.append(f"{path}: h{before} followed by h{after}")
                break
    assert not problems, "\n".join(problems)


def test_internal_links_and_anchors_resolve(browsed):
    site, base = browsed["site"], browsed["base"]
    ids: dict[str, set[str]] = {}
    broken = []
    for path, visit in browsed["visits"].items():
        for url in visit.links:
            if not url.startswith(base):
                continue
            target, fragment = _local_path(url, base)
            if not (site / target).is_file():
                broken.append(f"{path} -> {target} (no such file)")
                continue
            if fragment and target.endswith(".html"):
                if target not in ids:
                    html = (site / target).read_text(encoding="utf-8")
                    ids[target] = set(re.findall(r'\bid="([^"]+)"', html))
                if unquote(fragment) not in ids[target]:
                    broken.append(f"{path} -> {target}#{fragment} (no such anchor)")
    assert not broken, "\n".join(sorted(set(broken)))


def test_search_finds_a_known_term(browsed):
    term, page = SEARCH
    assert any(urlsplit(h).path.lstrip("/") == page for h in browsed["hits"]), \
        f"searching {term!r} did not list {page}: {browsed['hits'][:10]}"


def test_launch_buttons_open_the_notebook_in_colab(browsed):
    """Every page built from a notebook offers Colab on that notebook, and every
    Colab link anywhere on the site names a notebook that exists in the repository."""
    site = browsed["site"]
    notebook_pages = [p for p in browsed["visits"]
                      if (site / "_sources" / p).with_suffix(".ipynb").is_file()]
    assert len(notebook_pages) >= 19, notebook_pages
    for page in notebook_pages:
        expected = COLAB + str(Path(page).with_suffix(".ipynb"))
        assert expected in browsed["visits"][page].links, f"{page}: no launch button to {expected}"
    colab_links = {u for v in browsed["visits"].values() for u in v.links if u.startswith(COLAB)}
    missing = [u for u in colab_links if not (ROOT / u.removeprefix(COLAB)).is_file()]
    assert not missing, missing


def test_a_chapter_screenshot_is_saved(browsed):
    shot = ARTIFACTS / "chapter.png"
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000, "a blank page would compress to almost nothing"


def test_a_script_registered_twice_is_loaded_once():
    """gdcourse.site keeps the first copy of each script (Jupyter Book 1 can register
    sphinx-thebe's inline configuration twice; the page then throws)."""
    from sphinx.builders.html._assets import _JavaScript

    from gdcourse.site import unique_scripts

    config = _JavaScript(None, body='const THEBE_JS_URL = "x"')  # the builder's copy has no file name...
    scripts = [config, "doctools.js", _JavaScript("", body='const THEBE_JS_URL = "x"'),  # ...the registry's ""
               _JavaScript("thebe.js", **{"async": "async"}), "doctools.js", _JavaScript("thebe.js")]
    kept = unique_scripts(scripts)
    assert kept == [config, "doctools.js", scripts[3], scripts[5]], "same file, other attributes: both kept"


def test_the_table_of_contents_numbers_the_chapters_across_parts(built_book):
    """The sidebar numbers the chapters straight through the parts (not 1-9, then 1-6, ...), matching
    the numbers in their file names; appendices and guides are not numbered."""
    html = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    entries = re.findall(r'<a class="reference internal" href="([^"#]+\.html)">([^<]+)</a>', html)
    numbered = {href: text for href, text in entries if re.match(r"\d+\. ", text)}
    chapters = {href for href, _ in entries if re.search(r"/\d\d-[^/]+\.html$", href)}
    in_toc = [f for f in toc_files() if re.match(r"book/0\d-", f)]
    assert len(chapters) == len(in_toc), sorted(chapters)
    for href in chapters:
        assert href in numbered, f"{href} is not numbered in the table of contents"
        assert int(numbered[href].split(".")[0]) == int(Path(href).name[:2]), (href, numbered[href])
    assert set(numbered) == chapters, "only chapters carry numbers"


def test_a_vendored_package_is_served_only_if_it_is_the_pinned_one(tmp_path):
    """gdcourse.site unpacks an npm tarball only when its sha512 is the pinned one, and only what it keeps."""
    import io
    import tarfile

    from gdcourse.site import sha512, unpack

    tarball = tmp_path / "pkg.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for name, body in {"package/es5/tex.js": b"tex", "package/es5/tex.js.map": b"map",
                           "package/es5/sre/speech.js": b"big", "package/LICENSE": b"MIT"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    unpack(tarball, sha512(tarball), ("es5/", "LICENSE"), tmp_path / "kept")
    kept = sorted(p.relative_to(tmp_path / "kept").as_posix() for p in (tmp_path / "kept").rglob("*") if p.is_file())
    assert kept == ["LICENSE", "es5/sre/speech.js", "es5/tex.js"], kept  # source maps never shipped
    with pytest.raises(RuntimeError, match="not the pinned package"):
        unpack(tarball, sha512(tmp_path / "kept" / "LICENSE"), ("es5/",), tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_glued_numbers_read_in_the_weight_of_their_sentence(browsed):
    """myst-nb draws {glue:text} bold; on the site it is the text's own weight (bold is written as **...**)."""
    page = browsed["visits"][MATH_PAGE]
    assert page.glue and all(g["weight"] == g["body"] for g in page.glue), page.glue[:5]


def test_no_page_shows_more_than_a_screen_of_code_in_one_cell(browsed):
    """Item 2 of issue 17 as a reader meets it: a shown cell is the lesson; what a collapsed cell holds
    is one click away. The limit is the notebooks' own (tests/test_notebooks.py)."""
    from test_notebooks import VISIBLE_LINES

    shown = {p: v.code for p, v in browsed["visits"].items() if v.code}
    assert len(shown) >= 18, f"code cells found on only {len(shown)} pages"
    long = {p: max(c) for p, c in shown.items() if max(c) > VISIBLE_LINES}
    assert not long, f"pages showing a code cell over {VISIBLE_LINES} lines: {long}"


def test_every_source_box_cites_a_source_post_in_the_bibliography(browsed):
    """A reader can tell which post a box argues with: its citation leads to the post's entry."""
    titles = [entry_title(key) for key in ("post2026numpy", "post2026skeleton", "post2026principles")]
    boxes = [(p, b) for p, v in browsed["visits"].items() for b in v.boxes]
    assert len(boxes) >= 90, f"only {len(boxes)} source boxes found"
    uncited = [f"{p}: {b['title']}" for p, b in boxes
               if not any(t in text for text in b["cited"] for t in titles)]
    assert not uncited, uncited


def entry_title(key: str) -> str:
    """The title of a references.bib entry, as the bibliography prints it (BibTeX braces removed)."""
    text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    entry = text[text.index("{" + key + ","):]
    title = re.search(r"title\s*=\s*\{(.*?)\},\n", entry, re.S).group(1)
    return title.replace("{", "").replace("}", "")
