"""The papermill runner: parameters, timing, and a clear report of breakage.
Also the conventions every notebook of the course keeps."""

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gdcourse.cli import main
from gdcourse.notebooks import discover, execute, needs_gpu, parameters_for, report
from gdcourse.setup_cell import SETUP_CELL

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = discover(ROOT)


def _write(path, cells, ci=None):
    cells = [new_code_cell(src, metadata={"tags": tags}) for src, tags in cells]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    if ci is not None:
        nb.metadata["gdcourse"] = {"ci_parameters": ci}
    nbformat.write(nb, path)
    return path


def test_ci_profile_injects_the_notebooks_own_parameters(tmp_path):
    src = _write(tmp_path / "p.ipynb", [("epochs = 1000", ["parameters"]), ("print('epochs', epochs)", [])], ci={"epochs": 7})
    assert parameters_for(src, "ci") == {"epochs": 7}
    assert parameters_for(src, "reader") == {}
    for profile, expected in [("ci", "epochs 7"), ("reader", "epochs 1000")]:
        result = execute(src, tmp_path / f"out-{profile}.ipynb", profile=profile)
        assert result.ok and result.seconds > 0
        out = json.loads((tmp_path / f"out-{profile}.ipynb").read_text())
        printed = "".join(_text(o) for c in out["cells"] for o in c.get("outputs", []))
        assert expected in printed


def test_cpu_seconds_count_the_kernel_and_the_processes_it_starts(tmp_path):
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5: pass"
    src = _write(tmp_path / "busy.ipynb", [(f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {busy!r}])", [])])
    result = execute(src, tmp_path / "out.ipynb")
    assert result.ok and result.cpu_seconds >= 1.5, result


def test_a_broken_notebook_reports_its_cell_and_error(tmp_path):
    src = _write(tmp_path / "broken.ipynb", [("x = 1", []), ("y = 2", []), ("raise ValueError('loss is nan at step 3')", [])])
    result = execute(src, tmp_path / "out.ipynb")
    assert not result.ok
    assert "cell 2" in result.error and "ValueError" in result.error and "loss is nan at step 3" in result.error
    assert (tmp_path / "out.ipynb").exists()  # the executed copy is kept for inspection
    text = report([result], tmp_path)
    assert "FAILED" in text and "broken.ipynb" in text and "0 passed, 1 failed" in text


def test_unknown_profile_is_rejected(tmp_path):
    src = _write(tmp_path / "p.ipynb", [("pass", [])])
    with pytest.raises(ValueError, match="profile"):
        parameters_for(src, "huge")


def test_the_course_has_notebooks_to_run():
    names = {p.relative_to(ROOT).as_posix() for p in NOTEBOOKS}
    assert "book/01-by-hand/01-the-loop.ipynb" in names
    assert "solutions/ex01-gd-loop/ex01-gd-loop.ipynb" in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_conventions(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert not any(c.get("outputs") for c in code), "commit notebooks without outputs; CI executes them"
    setup = [c for c in code if "setup" in c.get("metadata", {}).get("tags", [])]
    assert len(setup) == 1 and "".join(setup[0]["source"]) == SETUP_CELL, "the setup cell must be gdcourse.setup_cell.SETUP_CELL"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    ci = nb["metadata"].get("gdcourse", {}).get("ci_parameters")
    assert isinstance(ci, dict), "metadata.gdcourse.ci_parameters must exist (it may be empty)"
    if path.relative_to(ROOT).parts[0] == "book":
        params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, "a chapter has exactly one cell tagged 'parameters'"
        assert set(ci) <= _assigned_names("".join(params[0]["source"])), "every CI parameter must be a parameter of the notebook"


def _text(output):
    """A stream output's text; nbformat stores it as a string or a list of lines."""
    text = output.get("text", "")
    return text if isinstance(text, str) else "".join(text)


def _assigned_names(source):
    import ast

    return {t.id for node in ast.parse(source).body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


# The budget is CPU seconds of the kernel and its children (what 2 cores spend), not wall seconds, which
# grow with whatever else the machine runs (`make test` grades cohorts meanwhile). Starting two
# processes (DDP) or the Trainer machinery costs real seconds.
CI_BUDGET_SECONDS = {"book/02-pytorch/13-data-parallel.ipynb": 90, "book/02-pytorch/14-hf-trainer.ipynb": 90}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_executes_at_ci_parameters(path, executed_ci):
    result = executed_ci[path.relative_to(ROOT).as_posix()]
    assert result.ok, f"{path.name} broke: {result.error} (executed copy: {result.output})"
    budget = CI_BUDGET_SECONDS.get(path.relative_to(ROOT).as_posix(), 60)
    assert 0 < result.cpu_seconds < budget, (f"{path.name} took {result.cpu_seconds:.0f} CPU s at CI parameters "
                                            f"({result.seconds:.0f} s of wall time); the budget is {budget} s")
    executed = json.loads(result.output.read_text(encoding="utf-8"))
    for i, cell in enumerate(executed["cells"]):
        for out in cell.get("outputs", []):
            text = _text(out) if out.get("name") == "stderr" else ""
            assert "DeprecationWarning" not in text and "FutureWarning" not in text, \
                f"cell {i} of {path.name} raised a deprecation warning: {text[:300]}"


def _nb(path, *, meta_gpu=False, cell_tags=()):
    nb = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": list(cell_tags)})])
    if meta_gpu:
        nb.metadata["gdcourse"] = {"gpu": True}
    nbformat.write(nb, path)
    return path


def test_needs_gpu_reads_both_tag_forms(tmp_path):
    assert not needs_gpu(_nb(tmp_path / "cpu.ipynb"))
    assert needs_gpu(_nb(tmp_path / "whole.ipynb", meta_gpu=True))
    assert needs_gpu(_nb(tmp_path / "cell.ipynb", cell_tags=["gpu"]))


def test_gpu_listing_prints_exactly_the_tagged_notebooks(tmp_path, capsys):
    _nb(tmp_path / "cpu.ipynb")
    _nb(tmp_path / "gpu.ipynb", cell_tags=["gpu"])
    assert main(["--root", str(tmp_path), "run-notebooks", "--gpu-only", "--list", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "gpu.ipynb")]


def test_timings_record_each_notebook(tmp_path):
    from gdcourse.notebooks import Result, write_timings

    results = [Result(tmp_path / "a.ipynb", tmp_path / "out/a.ipynb", 1.234, cpu_seconds=1.107),
               Result(tmp_path / "b.ipynb", tmp_path / "out/b.ipynb", 2.0, error="cell 3: RuntimeError: CUDA")]
    path = write_timings(results, tmp_path / "t.json", root=tmp_path, profile="reader", device="cuda")
    record = json.loads(path.read_text())
    assert (record["profile"], record["device"]) == ("reader", "cuda")
    assert record["notebooks"] == [
        {"notebook": "a.ipynb", "ok": True, "seconds": 1.23, "cpu_seconds": 1.11, "error": None},
        {"notebook": "b.ipynb", "ok": False, "seconds": 2.0, "cpu_seconds": 0.0, "error": "cell 3: RuntimeError: CUDA"}]


def test_the_gpu_workflow_runs_the_tagged_notebooks_on_cuda_and_uploads_them():
    """The workflow's commands are the CLI's: list, then run --gpu-only with device=cuda into
    the folder it uploads, timings included; and it runs on a CUDA runner."""
    import shlex
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    workflow = yaml.safe_load((root / ".github/workflows/gpu.yml").read_text())
    (job,) = workflow["jobs"].values()
    assert "cuda" in job["runs-on"] and "self-hosted" in job["runs-on"]
    runs = [" ".join(step["run"].split()) for step in job["steps"] if "run" in step]
    assert any(r.endswith("gdcourse run-notebooks --gpu-only --list") for r in runs)
    (execute,) = [shlex.split(r) for r in runs if "run-notebooks" in r and "--list" not in r]
    args = dict(zip(execute, execute[1:]))
    assert "--gpu-only" in execute and args["--device"] == "cuda"
    (upload,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload["if"] == "always()", "executed notebooks are uploaded even when one fails"
    uploaded = upload["with"]["path"].split()
    assert args["--out"] in uploaded and args["--timings"].startswith(args["--out"] + "/")
    assert args["--record-gpu"] == "book/gpu-results" in uploaded, "the GPU cells' records come back to commit"
    # What it would run: exactly the tagged notebooks, listed by the same command.
    assert main(["--root", str(root), "run-notebooks", "--gpu-only", "--list"]) == 0


BOOK_NOTEBOOKS = [p for p in NOTEBOOKS if p.relative_to(ROOT).parts[0] == "book"]


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda p: p.stem)
def test_figures_are_drawn_for_the_column(path):
    """gdcourse/book.mplstyle, no figure wider than the text column (6.9 in at 100 dpi), no text below 9 pt:
    the browser test then finds every label at 9 px or more."""
    import re

    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    if "matplotlib" not in code and "plot_" not in code:
        return
    assert 'plt.style.use("gdcourse.book")' in code, f"{path.name} draws without the book's style"
    wide = [w for w in re.findall(r"figsize=\(\s*([0-9.]+)", code) if float(w) > 6.9]
    assert not wide, f"{path.name}: figures {wide} in wide, more than the column's 6.9"
    small = [s for s in re.findall(r"fontsize=([0-9.]+)", code) if float(s) < 9]
    assert not small, f"{path.name}: text at {small} pt, below 9"
    assert not re.search(r"""fontsize=["'](x-|xx-)?small""", code), f"{path.name}: 'small' text is below 9 pt"


VISIBLE_LINES = 25  # a lesson fits on one screen; glue, asserts and plot dressing go to hidden cells
HIDDEN_INPUT = {"hide-input", "remove-input", "hide-cell", "remove-cell"}


def visible_cells(path):
    """(lines, cell id) of every code cell whose source the web page shows."""
    cells = nbformat.read(path, as_version=4).cells
    return [(len(c.source.strip("\n").splitlines()), c.get("id")) for c in cells
            if c.cell_type == "code" and not HIDDEN_INPUT & set(c.metadata.get("tags", []))]


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda p: p.stem)
def test_visible_code_shows_the_lesson(path):
    """A shown cell is the lesson (issue 17): the bookkeeping around it runs in cells tagged hide-input,
    executed and checked in CI like the rest. The message reports the chapter's longest shown cell."""
    shown = visible_cells(path)
    longest = max(shown, default=(0, None))
    over = sorted((n, i) for n, i in shown if n > VISIBLE_LINES)
    assert not over, (f"{path.stem}: longest shown cell {longest[1]} has {longest[0]} lines; "
                      f"cells over {VISIBLE_LINES}: {over}")


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda p: p.stem)
def test_alt_text_sits_on_the_cell_that_draws(path):
    """myst-nb reads a figure's alt text from the metadata of the cell whose output it is: split a cell,
    and the text must move with the drawing (the browser test would find the figure without alt text)."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    stray = [c.id for c in cells if "mystnb" in c.metadata and "plt.show()" not in c.source
             and any(d.id.startswith(c.id + "-") and "plt.show()" in d.source and "mystnb" not in d.metadata
                     for d in cells)]
    assert not stray, f"{path.stem}: alt text on {stray}, but a later part of the same cell draws"
