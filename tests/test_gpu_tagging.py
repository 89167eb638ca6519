import json

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from gdcourse.cli import main
from gdcourse.notebooks import needs_gpu


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

    results = [Result(tmp_path / "a.ipynb", tmp_path / "out/a.ipynb", 1.234),
               Result(tmp_path / "b.ipynb", tmp_path / "out/b.ipynb", 2.0, error="cell 3: RuntimeError: CUDA")]
    path = write_timings(results, tmp_path / "t.json", root=tmp_path, profile="reader", device="cuda")
    record = json.loads(path.read_text())
    assert (record["profile"], record["device"]) == ("reader", "cuda")
    assert record["notebooks"] == [
        {"notebook": "a.ipynb", "ok": True, "seconds": 1.23, "error": None},
        {"notebook": "b.ipynb", "ok": False, "seconds": 2.0, "error": "cell 3: RuntimeError: CUDA"}]


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
    # What it would run: exactly the tagged notebooks, listed by the same command.
    assert main(["--root", str(root), "run-notebooks", "--gpu-only", "--list"]) == 0
