"""The feedback page's pieces: math drawn as MathML with nothing but MathML in it, and the hand grades."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

import pytest

from gdcourse.grading import feedback
from gdcourse.grading.feedback import math_html, page
from gdcourse.grading.verdict import CellGrade, Verdict


def _parsed(text: str):
    from test_cohort import _Markup  # every tag and attribute, as a browser's parser sees them
    t = _Markup()
    t.feed(text)
    return t


@pytest.mark.parametrize("tex", [
    r"$\text{<script>alert(1)</script>}$", r"$\href{javascript:alert(1)}{x}$", r"$$\text{<img src=x onerror=alert(1)>}$$",
    r"$\color{red}{x} \style{background:url(x)}{y}$", "$x$</pre><script>alert(1)</script>",
])
def test_math_from_a_student_carries_no_markup_but_mathml(tex):
    out = _parsed(math_html(tex))
    mathml = {"math", "mi", "mn", "mo", "mrow", "mtext", "mstyle", "msup", "mfrac", "mspace"}
    assert set(out.tags) <= mathml, out.tags
    assert not [k for k, v in out.attrs if k.startswith("on") or k in ("href", "src", "style")
                or "javascript:" in (v or "")], out.attrs


def test_math_is_drawn_and_prose_escaped():
    out = math_html(r"Diverges if $\eta > 2/L$; costs \$5 & <b>more</b>. $$\frac{1}{2}$$ and $unclosed")
    assert out.count("<math") == 2 and 'display="block"' in out and 'display="inline"' in out
    assert "&lt;b&gt;more&lt;/b&gt;" in out and "$unclosed" in out and "\\$5" in out


RESULT = Verdict.from_json({
    "status": "graded", "written": ["why"], "grades": {"test_a": [1.0, 2.0, False], "why": [0.0, 2.0, True]},
    "cases": [{"test": "test_a", "name": "a works", "visible": True, "passed": True, "message": "", "points": 1.0},
              {"test": "test_a", "name": "a edge", "visible": False, "passed": False, "message": "", "points": 1.0}]})


def test_a_written_answer_reads_not_graded_yet_then_its_score_and_comment():
    before = page("ada", "exA", RESULT, [("why", "Because $x$.")], {})
    assert "not graded yet / 2" in before and "2 of 2 point(s) are graded by hand and not graded yet" in before
    hand = {"why": {"manual_score": 1.5, "needs_manual_grade": False, "comment": "Say <why>."},
            "test_a": {"manual_score": 2.0, "needs_manual_grade": False}}
    after = page("ada", "exA", RESULT, [("why", "Because $x$.")], hand)
    assert "Graded by hand: <strong>1.5 / 2</strong>" in after and "Say &lt;why&gt;." in after
    assert "Automatic score: <strong>2 / 2</strong>" in after and "Score set by your instructor (the cases gave 1)" in after


def test_an_untouched_written_answer_says_left_empty():
    result = replace(RESULT, grades={**RESULT.grades, "why": CellGrade(0.0, 2.0, False)})
    assert "(0 / 2: left empty)" in page("ada", "exA", result, [("why", "YOUR ANSWER HERE")], {})


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs += attrs


def test_the_feedback_page_is_text_whatever_the_student_wrote():
    evil = "<script>x()</script><img src=x onerror=y()><a href='javascript:z()'>a</a>\x1b[31m\x00"
    result = Verdict.from_json({"status": "graded", "grades": {"test_f": [0.5, 1.0, False], "essay": [0.0, 2.0, True]},
                                "cases": [{"test": "test_f", "name": evil, "visible": True, "passed": False,
                                           "message": evil, "points": 0.5}], "cell_errors": {"f": evil}})
    page = feedback.page("ada", "ex", result, [("f", evil * 5000), ("essay", evil)])
    tags = _Tags()
    tags.feed(page)
    assert tags.tags <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "strong", "table",
                         "tr", "th", "td", "span", "br", "ul", "li", "pre"}, tags.tags
    assert not [k for k, _ in tags.attrs if k.startswith("on")] and "\x1b" not in page and "\x00" not in page
    assert len(page.encode()) <= feedback.MAX_PAGE + 2000
