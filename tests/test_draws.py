"""gdcourse.grading.draws: every draw of the hidden cases against notebooks that are right, each failure
named with the seed that drew it (`gdcourse draws`)."""

from __future__ import annotations

from gdcourse.cli import main
from gdcourse.grading.draws import check, correct_notebooks
from submissions import solution_answers, submission, variants_of

EX = "ex01-gd-loop"
ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
# wrong only on some draws: where the drawn bias is above 1.5 (about one draw in four)
SOMETIMES = {"predict": "def predict(X, w, b):\n    return X @ w + (b if b < 1.5 else 0.0)\n"}


def test_a_right_notebook_passes_every_draw_and_meets_the_cases_of_all_of_them(tmp_path):
    notebook = submission(EX, solution_answers(EX), tmp_path, "solution")
    one, _ = check(EX, [notebook], course_root=ROOT, draws=1)
    count, failures = check(EX, [notebook], course_root=ROOT, draws=20)
    assert failures == [] and count == 20 * one > 0


def test_an_answer_wrong_on_some_draws_is_caught_with_the_seeds_that_show_it(tmp_path, capsys):
    notebook = submission(EX, {**solution_answers(EX), **SOMETIMES}, tmp_path, "sometimes")
    _, failures = check(EX, [notebook], course_root=ROOT, draws=20)
    seeds = {f.seed for f in failures}
    assert failures and {f.test for f in failures} == {"test_predict"}
    assert 0 < len(seeds) < 20  # only some draws show it
    bad = min(seeds)
    good = next(s for s in range(20) if s not in seeds)
    assert check(EX, [notebook], course_root=ROOT, draws=1, first=bad)[1]  # the seed named reproduces it
    assert not check(EX, [notebook], course_root=ROOT, draws=1, first=good)[1]
    assert main(["--root", str(ROOT), "draws", EX, str(notebook), "--draws", "20"]) == 1
    out = capsys.readouterr().out
    assert f"draw {bad}, test_predict" in out and out.rstrip().endswith(f"{len(failures)} failed")


def test_correct_runs_the_solution_and_every_correct_variant(tmp_path, capsys):
    notebooks = correct_notebooks(EX, tmp_path, course_root=ROOT)
    assert sorted(p.parent.name for p in notebooks) == sorted(["solution", *(f"correct-{n}" for n in variants_of(EX).CORRECT)])
    assert main(["--root", str(ROOT), "draws", EX, "--correct", "--draws", "5"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"{len(notebooks)} notebook(s), "
                                                     f"{check(EX, notebooks[:1], course_root=ROOT, draws=5)[0]} "
                                                     "hidden cases each (seeds 0..4): every case passed")
    assert main(["--root", str(ROOT), "draws", EX]) == 2  # nothing to run is an error, not a pass
