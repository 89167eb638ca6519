"""The student's feedback page, built from the grader's data only.

Per test cell: its points; per case: its name, its share of the points,
pass or fail and the message the course wrote (a visible case may show
expected vs got; a hidden one names the property, not its inputs). Then the
student's own answers, as escaped text. Nothing on the page is markup the
student wrote: every string is escaped, control characters are dropped,
the page forbids scripts (Content-Security-Policy) and its size is capped.
"""

from __future__ import annotations

import html
import re

MAX_PAGE = 1_000_000  # bytes
MAX_ANSWER = 20_000  # characters of one answer cell
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|\x1b\[[0-9;?]*[ -/]*[@-~]")

STYLE = """body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.6rem}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}
.pass{color:#1a7f37}.fail{color:#b42318}pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap}
.note{color:#555}"""


def printable(text, limit: int | None = None) -> str:
    """Untrusted text without control characters or terminal escapes, cut at ``limit`` characters."""
    text = _CONTROL.sub("", str(text))
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n... ({len(text) - limit:,} more characters not shown)"
    return text


def clean(text, limit: int | None = None) -> str:
    """Untrusted text as HTML: :func:`printable`, then escaped."""
    return html.escape(printable(text, limit), quote=True)


def page(student: str, assignment: str, result: dict, answers: list[tuple[str, str]]) -> str:
    """The HTML page for one judged student. ``answers``: (grade_id, source) of their answer cells."""
    parts = [f"<h1>{clean(assignment)}: feedback for {clean(student)}</h1>"]
    status = result.get("status", "")
    if status != "graded":
        parts.append(f"<p><strong>{clean(status)}</strong>: {clean(result.get('reason', ''))}</p>")
    else:
        grades = result["grades"]
        auto = [(g, v) for g, v in grades.items() if not v[2] and g in {c["test"] for c in result["cases"]}]
        got = sum(v[0] for _, v in auto)
        top = sum(v[1] for _, v in auto)
        manual = sum(v[1] for v in grades.values() if v[2])
        parts.append(f"<p>Automatic score: <strong>{got:g} / {top:g}</strong>"
                     + (f"; {manual:g} more point(s) are graded by hand." if manual else ".") + "</p>")
        for test, (score, points, _) in auto:
            parts.append(f"<h2>{clean(test)}: {score:g} / {points:g}</h2>")
            if test in result.get("zeroed", {}):
                parts.append(f"<p class=fail>Scored 0: {clean('; '.join(result['zeroed'][test]))}.</p>")
            rows = []
            for case in (c for c in result["cases"] if c["test"] == test):
                mark = "<span class=pass>passed</span>" if case["passed"] else "<span class=fail>failed</span>"
                kind = "" if case["visible"] else " <span class=note>(hidden)</span>"
                message = f"<br><span class=note>{clean(case['message'], 600)}</span>" if case["message"] else ""
                rows.append(f"<tr><td>{mark}</td><td>{clean(case['name'], 200)}{kind}{message}</td>"
                            f"<td>{case['points']:g}</td></tr>")
            parts.append("<table><tr><th></th><th>case</th><th>points</th></tr>" + "".join(rows) + "</table>")
        errors = result.get("cell_errors", {})
        if errors:
            parts.append("<h2>Cells that raised an error when your notebook ran</h2><ul>"
                         + "".join(f"<li>{clean(cid)}: {clean(msg, 300)}</li>" for cid, msg in errors.items())
                         + "</ul>")
    parts.append("<h2>Your answers</h2>")
    for grade_id, source in answers:
        parts.append(f"<h3>{clean(grade_id)}</h3><pre>{clean(source, MAX_ANSWER)}</pre>")
    body = "\n".join(parts)
    if len(body.encode()) > MAX_PAGE:
        body = body.encode()[:MAX_PAGE].decode("utf-8", "ignore").rsplit("<", 1)[0] + \
            "<p>... the rest of this page was cut: it was too long.</p>"
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><title>{clean(assignment)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")
