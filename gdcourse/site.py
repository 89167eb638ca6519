"""A Sphinx extension for the book's HTML: what each page loads.

**Everything from the site itself.** MathJax, require.js and the ipywidgets HTML manager
are npm packages fetched at build time (``npm pack``, pinned by version and checked by
their sha512), and the pages load them from ``_static/vendor/``. Read offline, or where
a CDN is slow or blocked, the formulas and chapter 1's slider still work.

**Each script once.** Jupyter Book 1 registers sphinx-thebe's inline configuration
script once per read of the sources, so a page can carry ``const THEBE_JS_URL = …``
twice and the browser throws "Identifier 'THEBE_JS_URL' has already been declared"
on every page (found by the site's browser test); each page keeps the first copy.

**Glued numbers in the text's own weight.** myst-nb draws ``{glue:text}`` bold; bold
is kept for what a paragraph exists to show, written as ``**…**``.

Enabled in ``_config.yml`` under ``sphinx.extra_extensions``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

# npm package: (version, sha512 of its tarball as `npm pack --json` reports it, where it goes
# under _static/vendor/, the paths in the package the site needs).
ASSETS = {
    "mathjax": ("3.2.2", "Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
                "mathjax", ("es5/tex-mml-chtml.js", "es5/input/tex/extensions/", "es5/output/chtml/fonts/woff-v2/",
                            "es5/a11y/", "es5/ui/", "LICENSE")),
    "requirejs": ("2.3.7", "DouTG8T1WanGok6Qjg2SXuCMzszOo0eHeH9hDZ5Y4x8Je+9JB38HdTLT4/VA8OaUhBa0JPVHJ0pyBkM1z+pDsw==",
                  "requirejs", ("require.js", "LICENSE")),
    "@jupyter-widgets/html-manager": (
        "1.0.15", "5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
        "html-manager", ("dist/", "LICENSE")),
}
MATHJAX = "vendor/mathjax/es5/tex-mml-chtml.js"  # relative to _static, as Sphinx's mathjax_path reads it
# in this order: the loader, the glue between it, MathJax 3 and the manager, the manager
WIDGETS = {"vendor/requirejs/require.js": {}, "gdcourse-widgets.js": {}, "vendor/html-manager/dist/embed-amd.js": {}}
CSS = "gdcourse-site.css"


def asset_cache() -> Path:
    """Where fetched packages are kept between builds: $GDCOURSE_ASSET_CACHE or ~/.cache/gdcourse/site-assets."""
    return Path(os.environ.get("GDCOURSE_ASSET_CACHE") or Path.home() / ".cache" / "gdcourse" / "site-assets")


def sha512(path: Path) -> str:
    return base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def unpack(tarball: Path, expected: str, keep: tuple[str, ...], dest: Path) -> None:
    """The files under ``keep`` of an npm tarball, into ``dest``, if its sha512 is ``expected``."""
    if sha512(tarball) != expected:
        raise RuntimeError(f"{tarball.name} is not the pinned package (sha512 differs); refusing to serve it")
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            inside = member.name.split("/", 1)[1] if "/" in member.name else ""
            if member.isfile() and any(inside == k or (k.endswith("/") and inside.startswith(k)) for k in keep) \
                    and not inside.endswith(".map"):
                target = dest / inside
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)


def fetch_assets(cache: Path | None = None) -> Path:
    """A folder holding ``vendor/<package>/…`` for every pinned package (fetched once, then reused)."""
    root = (cache or asset_cache()) / "static"
    for name, (version, integrity, folder, keep) in ASSETS.items():
        dest = root / "vendor" / folder
        done = dest / ".gdcourse-version"
        if done.is_file() and done.read_text() == f"{version} {integrity}":
            continue
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("the book serves MathJax and the widget manager itself, fetched with npm at build "
                               "time: install Node.js and npm (Debian: apt-get install npm)")
        shutil.rmtree(dest, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run([npm, "pack", f"{name}@{version}", "--json", "--pack-destination", tmp],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"npm pack {name}@{version} failed:\n{out.stderr[-2000:]}")
            unpack(Path(tmp) / json.loads(out.stdout)[0]["filename"], integrity, keep, dest)
        done.write_text(f"{version} {integrity}")
    return root


def _serve_assets(app, config):
    config.mathjax_path = MATHJAX
    config.nb_ipywidgets_js = WIDGETS
    config.html_static_path = [*config.html_static_path, str(fetch_assets()),
                               str(Path(__file__).with_name("site_static"))]


def _script_key(script) -> tuple:
    """What makes two script entries the same: file name and attributes (an inline body included)."""
    attributes = getattr(script, "attributes", {}) or {}
    # An inline script's file name is None in one copy and "" in the other.
    filename = getattr(script, "filename", script) or ""
    return str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items()))


def unique_scripts(scripts: list) -> list:
    """``scripts`` without repeats, in their first order."""
    seen, kept = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _on_page(app, pagename, templatename, context, doctree):
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def setup(app):
    app.connect("config-inited", _serve_assets)
    app.add_css_file(CSS, priority=800)  # after mystnb.css, whose rule it overrides
    app.connect("html-page-context", _on_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
