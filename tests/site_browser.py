"""Drive the built site in headless Chromium: serve a folder on localhost,
visit pages, and record what a reader's browser would report.

The browser is Debian's ``chromium`` (``make test`` installs it when no
Chromium-family browser is on the machine), driven by Playwright without
Playwright's own browser download. Requests to other hosts (MathJax, the
ipywidgets manager and require.js from their CDNs) are answered locally with
an empty body, because CI has no network; they are recorded, so a test can
check that the site depends on nothing else.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Flags for a closed network and a root user (see the machine notes): no
# sandbox, no background connections, a fresh profile per run.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def find_chromium() -> str:
    """The browser to drive: $CHROMIUM, else the first Chromium-family browser on PATH."""
    candidates = [os.environ.get("CHROMIUM", "")] + [shutil.which(b) or "" for b in BROWSERS]
    for path in candidates:
        if path and Path(path).is_file():
            return path
    raise RuntimeError("no Chromium found: `make test` installs Debian's chromium package "
                       "(apt-get install chromium), or set CHROMIUM=/path/to/chrome")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output readable
        pass


@contextmanager
def serve(folder: Path):
    """Serve ``folder`` on an ephemeral localhost port; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class PageVisit:
    """What the browser saw on one page."""

    path: str
    errors: list[str] = field(default_factory=list)   # console errors and uncaught exceptions
    failed: list[str] = field(default_factory=list)   # local requests that failed or returned >= 400
    images: list[dict] = field(default_factory=list)  # {src, loaded, alt, widget (drawn by one), shown, natural (px)}
    headings: list[int] = field(default_factory=list)  # levels of the visible h1..h6 in <main>, in order
    links: list[str] = field(default_factory=list)    # absolute hrefs of every <a>
    icon: str | None = None                            # the favicon's URL
    logos: list[dict] = field(default_factory=list)   # the site logo: {src, loaded, alt}
    math: dict = field(default_factory=dict)          # formulas: {typeset, untypeset, errors}
    widgets: dict = field(default_factory=dict)       # ipywidgets: {views (embedded), drawn}
    glue: list[dict] = field(default_factory=list)    # glued numbers: {weight, body (the paragraph's weight)}
    code: list[int] = field(default_factory=list)     # lines of each code cell input shown without a click
    boxes: list[dict] = field(default_factory=list)   # source boxes: {title, cited (texts of the entries cited)}
    seconds: float = 0.0
    url: str = ""  # where the page ended up (a redirect moves it)


_PAGE_FACTS = """async () => {
  // MathJax typesets after the load event, and the widget manager draws its views after that.
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
  for (let i = 0; views && i < 150 && !document.querySelector('.jupyter-widgets'); i++)
    await new Promise(r => setTimeout(r, 100));
  return {
  math: {typeset: document.querySelectorAll('.math mjx-container').length,
         untypeset: Array.from(document.querySelectorAll('.math')).filter(e => !e.querySelector('mjx-container')).length,
         errors: document.querySelectorAll('mjx-merror').length},
  widgets: {views: views, drawn: document.querySelectorAll('.jupyter-widgets').length},
  // Code a reader sees without opening anything: each shown cell's input, by lines.
  // (a closed <details> keeps layout boxes for its content in Chromium, so ask for the closed ancestor)
  code: Array.from(document.querySelectorAll('.cell_input pre'))
      .filter(e => e.getClientRects().length > 0 && !e.closest('details:not([open])'))
      .map(e => e.textContent.replace(/\\n+$/, '').split('\\n').length),
  // Each "What the sources say" box and the bibliography entries its citations lead to.
  boxes: Array.from(document.querySelectorAll('.admonition')).filter(a => {
      const t = a.querySelector('.admonition-title');
      return t && t.textContent.startsWith('What the sources say'); }).map(a => ({
      title: a.querySelector('.admonition-title').textContent,
      cited: Array.from(a.querySelectorAll('a[href*="#"]')).map(l => {
          const target = document.getElementById(decodeURIComponent(l.hash.slice(1)));
          const entry = target && (target.closest('.citation') || target.parentElement);
          return entry ? entry.textContent : null; }).filter(t => t)})),
  glue: Array.from(document.querySelectorAll('p > span.pasted-text')).map(e => ({
      weight: getComputedStyle(e).fontWeight, body: getComputedStyle(e.parentElement).fontWeight})),
  images: Array.from(document.querySelectorAll('article img')).map(i => ({
      src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0, alt: i.getAttribute('alt'),
      widget: i.closest('.jupyter-widgets') !== null, shown: i.getBoundingClientRect().width,
      natural: i.naturalWidth})),
  // Headings a reader sees (the theme repeats the title in a print-only block).
  headings: Array.from(document.querySelectorAll(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map(h => 'main ' + h).join(', ')))
      .filter(h => h.getClientRects().length > 0).map(h => Number(h.tagName[1])),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  icon: (document.querySelector('link[rel~="icon"]') || {}).href || null,
  logos: Array.from(document.querySelectorAll('img.logo__image')).map(i => ({
      src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0, alt: i.getAttribute('alt')})),
  };
}"""


class Browser:
    """One headless Chromium with one page, and everything it reported."""

    def __init__(self, base_url: str, executable: str | None = None):
        self.base_url = base_url
        self.executable = executable or find_chromium()
        self.external: set[str] = set()

    def __enter__(self):
        import tempfile

        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._profile = tempfile.mkdtemp(prefix="gdcourse-chromium-")
        self._context = self._pw.chromium.launch_persistent_context(
            self._profile, executable_path=self.executable, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900})
        self._context.route("**/*", self._route)
        self.page = self._context.pages[0] if self._context.pages else self._context.new_page()
        self._visit = PageVisit("")
        self._listen(self.page)
        return self

    def __exit__(self, *exc):
        self._context.close()
        self._pw.stop()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _route(self, route):
        url = route.request.url
        if url.startswith(self.base_url) or url.startswith("data:"):
            route.continue_()
            return
        # Nothing from elsewhere: the site must work offline, or where a CDN is blocked.
        self.external.add(urlsplit(url).netloc)
        route.abort("blockedbyclient")

    def _listen(self, page):
        # One set of listeners for the life of the page; they report into the current visit.
        def on_console(msg):
            if msg.type == "error":
                self._visit.errors.append(f"console: {msg.text}")

        def on_response(response):
            if response.url.startswith(self.base_url) and response.status >= 400:
                self._visit.failed.append(f"{response.status} {response.url}")

        def on_failed(request):
            # ERR_ABORTED: the next navigation cancelled it (a favicon still loading, say);
            # what a page needs is checked on the page itself (images loaded, no errors).
            if request.url.startswith(self.base_url) and "ERR_ABORTED" not in str(request.failure):
                self._visit.failed.append(f"failed {request.url}: {request.failure}")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self._visit.errors.append(f"exception: {exc}"))
        page.on("response", on_response)
        page.on("requestfailed", on_failed)

    def visit(self, path: str) -> PageVisit:
        """Load ``path`` (relative to the base URL), wait for its load event, read its facts."""
        import time

        self._visit = visit = PageVisit(path)
        start = time.perf_counter()
        self.page.goto(self.base_url + path, wait_until="load")
        for attempt in range(3):  # a page that redirects (index.html) navigates once more
            try:
                facts = self.page.evaluate(_PAGE_FACTS)
                break
            except PlaywrightError:
                if attempt == 2:
                    raise
                self.page.wait_for_load_state("load")
        visit.url = self.page.url
        visit.seconds = time.perf_counter() - start
        visit.images, visit.headings, visit.links = facts["images"], facts["headings"], facts["links"]
        visit.icon, visit.logos = facts["icon"], facts["logos"]
        visit.math, visit.widgets, visit.glue = facts["math"], facts["widgets"], facts["glue"]
        visit.code, visit.boxes = facts["code"], facts["boxes"]
        return visit
