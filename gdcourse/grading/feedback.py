"""The student's feedback page, built from the grader's data only.

Per test cell: its points; per case: its name, its share of the points,
pass or fail and the message the course wrote (a visible case may show
expected vs got; a hidden one names the property, not its inputs). Then the
student's own answers, each with what the instructor gave it by hand in
formgrader (score, comment) or "not graded yet". Nothing on the page is
markup the student wrote: every string is escaped, control characters are
dropped, the page forbids scripts (Content-Security-Policy) and its size is
capped. Math in written answers is turned into MathML here (latex2mathml,
then only MathML elements and presentational attributes are kept), which
browsers draw without any script or network, so a page works offline.

Pages are (re)built by :func:`write_pages` from the stored results and the
gradebook: after every ``gdcourse grade``, and by ``gdcourse feedback OUT``
after hand grading. nbgrader's own ``generate_feedback`` is not used: it
renders the notebook instead, and would overwrite these pages.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from gdcourse.grading.verdict import Verdict

MAX_PAGE = 1_000_000  # bytes
MAX_ANSWER = 20_000  # characters of one answer cell
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|\x1b\[[0-9;?]*[ -/]*[@-~]")

STYLE = """body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.6rem}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}
.pass{color:#1a7f37}.fail{color:#b42318}pre{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap}
.note{color:#555}.comment{background:#fff8e1;padding:.4rem .6rem;border-left:3px solid #e0a800}"""


def printable(text, limit: int | None = None) -> str:
    """Untrusted text without control characters or terminal escapes, cut at ``limit`` characters."""
    text = _CONTROL.sub("", str(text))
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n... ({len(text) - limit:,} more characters not shown)"
    return text


def clean(text, limit: int | None = None) -> str:
    """Untrusted text as HTML: :func:`printable`, then escaped."""
    return html.escape(printable(text, limit), quote=True)


def page(student: str, assignment: str, result: Verdict, answers: list[tuple[str, str]],
         hand: dict[str, dict] | None = None) -> str:
    """The HTML page for one judged student. ``answers``: (grade_id, source) of their answer cells;
    ``hand``: what formgrader holds per cell (``manual_score``, ``needs_manual_grade``, ``comment``)."""
    hand = hand or {}
    written = set(result.written)
    parts = [f"<h1>{clean(assignment)}: feedback for {clean(student)}</h1>"]
    grades = result.grades
    if not result.graded:
        parts.append(f"<p><strong>{clean(result.status)}</strong>: {clean(result.reason)}</p>")
    else:
        # test cells in the notebook's order (the cases keep it; a stored result's dicts are sorted)
        auto = [(g, grades[g]) for g in dict.fromkeys(c.test for c in result.cases) if g in grades and g not in written]
        got = sum(_auto_score(g, v, hand) for g, v in auto)
        top = sum(v[1] for _, v in auto)
        summary = [f"Automatic score: <strong>{got:g} / {top:g}</strong>."]
        marks = [_written_mark(g, grades[g], hand) for g in sorted(written) if g in grades]
        if marks:
            done = [m for m in marks if m[0] is not None]
            by_hand_top = sum(m[1] for m in marks)
            if len(done) == len(marks):
                summary.append(f"Graded by hand: <strong>{sum(m[0] for m in done):g} / {by_hand_top:g}</strong>.")
            else:
                summary.append(f"{sum(m[1] for m in marks if m[0] is None):g} of {by_hand_top:g} point(s) are "
                               "graded by hand and not graded yet.")
        parts.append("<p>" + " ".join(summary) + "</p>")
        for test, (score, points, _) in auto:
            shown = _auto_score(test, (score, points, False), hand)
            parts.append(f"<h2>{clean(test)}: {shown:g} / {points:g}</h2>")
            if hand.get(test, {}).get("manual_score") is not None:
                parts.append(f"<p class=note>Score set by your instructor (the cases gave {score:g}).</p>")
            if test in result.zeroed:
                parts.append(f"<p class=fail>Scored 0: {clean('; '.join(result.zeroed[test]))}.</p>")
            parts += _comment(hand.get(test, {}))
            rows = []
            for case in (c for c in result.cases if c.test == test):
                mark = "<span class=pass>passed</span>" if case.passed else "<span class=fail>failed</span>"
                kind = "" if case.visible else " <span class=note>(hidden)</span>"
                message = f"<br><span class=note>{clean(case.message, 600)}</span>" if case.message else ""
                rows.append(f"<tr><td>{mark}</td><td>{clean(case.name, 200)}{kind}{message}</td>"
                            f"<td>{case.points:g}</td></tr>")
            parts.append("<table><tr><th></th><th>case</th><th>points</th></tr>" + "".join(rows) + "</table>")
        errors = result.cell_errors
        if errors:
            parts.append("<h2>Cells that raised an error when your notebook ran</h2><ul>"
                         + "".join(f"<li>{clean(cid)}: {clean(msg, 300)}</li>" for cid, msg in errors.items())
                         + "</ul>")
    parts.append("<h2>Your answers</h2>")
    for grade_id, source in answers:
        heading = clean(grade_id)
        if grade_id in written and grade_id in grades:
            score, top = _written_mark(grade_id, grades[grade_id], hand)
            heading += f" <span class=note>({'not graded yet' if score is None else f'{score:g}'} / {top:g}"
            empty = not grades[grade_id].by_hand and hand.get(grade_id, {}).get("manual_score") is None
            heading += ": left empty)</span>" if empty else ", graded by hand)</span>"
        body = math_html(source, MAX_ANSWER) if grade_id in written else clean(source, MAX_ANSWER)
        parts.append(f"<h3>{heading}</h3><pre>{body}</pre>")
        parts += _comment(hand.get(grade_id, {}))
    body = "\n".join(parts)
    if len(body.encode()) > MAX_PAGE:
        body = body.encode()[:MAX_PAGE].decode("utf-8", "ignore").rsplit("<", 1)[0] + \
            "<p>... the rest of this page was cut: it was too long.</p>"
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><title>{clean(assignment)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}\n</body></html>\n")


def _auto_score(test: str, grade, hand: dict) -> float:
    by_hand = hand.get(test, {}).get("manual_score")
    return by_hand if by_hand is not None else (grade[0] or 0.0)


def _written_mark(gid: str, grade, hand: dict) -> tuple[float | None, float]:
    """(score, points) of a written answer: None while it awaits hand grading; 0 if left empty."""
    _, top, needs_hand = grade
    g = hand.get(gid, {})
    if g.get("manual_score") is not None and not g.get("needs_manual_grade"):
        return g["manual_score"], top
    return (None, top) if needs_hand else (0.0, top)


def _comment(cell: dict) -> list[str]:
    text = cell.get("comment")
    return [f"<p class=comment><strong>Comment:</strong> {clean(text, 5000)}</p>"] if text else []


def write_pages(out: Path | str, results: dict[str, Verdict] | None = None) -> list[Path]:
    """Every judged student's page, ``OUT/feedback/<student>/<assignment>/<assignment>.html``, from the
    stored results and the hand grades in ``OUT/gradebook.db``."""
    from gdcourse.grading.cohort import stored_results
    from gdcourse.grading.grades import hand_grades, read_intake

    out = Path(out)
    assignment = read_intake(out)["assignment"]
    results = stored_results(out) if results is None else results
    hand = hand_grades(out / "gradebook.db", assignment)
    written = []
    for student, result in sorted(results.items()):
        path = out / "feedback" / student / assignment / f"{assignment}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(student, assignment, result, result.answers, hand.get(student)), encoding="utf-8")
        written.append(path)
    return written


# --- math, drawn as MathML -------------------------------------------------------------------------

_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(?!\s)(.+?)(?<![\s\\])\$", re.S)
_MATHML_TAGS = {"math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot", "mstyle",
                "mpadded", "mphantom", "mfenced", "menclose", "msub", "msup", "msubsup", "munder", "mover",
                "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "semantics",
                "annotation"}
_MATHML_ATTRS = {"display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "width",
                 "height", "depth", "mathsize", "accent", "accentunder", "movablelimits", "symmetric", "minsize",
                 "maxsize", "largeop", "form", "linethickness", "displaystyle", "scriptlevel", "notation",
                 "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines", "frame",
                 "open", "close", "separators", "encoding"}


def math_html(text, limit: int | None = None) -> str:
    """Untrusted Markdown as escaped text, its ``$...$`` and ``$$...$$`` drawn as MathML."""
    text = printable(text, limit)
    pieces, last = [], 0
    for m in _MATH.finditer(text):
        pieces.append(html.escape(text[last:m.start()], quote=True))
        tex, block = (m.group(1), True) if m.group(1) is not None else (m.group(2), False)
        pieces.append(_mathml(tex, block) or html.escape(m.group(0), quote=True))
        last = m.end()
    pieces.append(html.escape(text[last:], quote=True))
    return "".join(pieces)


def _mathml(tex: str, block: bool) -> str | None:
    """MathML for ``tex`` with nothing but MathML elements and presentational attributes, or None."""
    try:
        from latex2mathml.converter import convert
        tree = ET.fromstring(convert(tex, display="block" if block else "inline"))
    except Exception:  # TeX it cannot read: shown as the student wrote it
        return None
    return _rebuild(tree)


def _rebuild(node) -> str:
    tag = node.tag.rsplit("}", 1)[-1]
    inner = html.escape(node.text or "", quote=True) + "".join(
        _rebuild(child) + html.escape(child.tail or "", quote=True) for child in node)
    if tag not in _MATHML_TAGS:
        return inner  # an element MathML does not have (latex2mathml passes \\text{<b>} through): text only
    attrs = "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in sorted(node.attrib.items())
                    if k in _MATHML_ATTRS)
    if tag == "math":
        attrs = ' xmlns="http://www.w3.org/1998/Math/MathML"' + attrs
    return f"<{tag}{attrs}>{inner}</{tag}>"
