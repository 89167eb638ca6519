"""A Sphinx extension for the book's HTML: what each page loads.

Jupyter Book 1 registers sphinx-thebe's inline configuration script once per
read of the sources, so a page can carry ``const THEBE_JS_URL = …`` twice and
the browser throws "Identifier 'THEBE_JS_URL' has already been declared" on
every page (found by the site's browser test). The same script twice is
never wanted, so each page keeps the first copy of each.

Enabled in ``_config.yml`` under ``sphinx.extra_extensions``.
"""

from __future__ import annotations


def _script_key(script) -> tuple:
    """What makes two script entries the same: file name and attributes (an inline body included)."""
    attributes = getattr(script, "attributes", {}) or {}
    return str(getattr(script, "filename", script)), tuple(sorted((k, str(v)) for k, v in attributes.items()))


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
    app.connect("html-page-context", _on_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
