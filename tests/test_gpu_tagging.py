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
