"""gdcourse.gpu_results: a GPU cell runs and is recorded on CUDA, and shows its record elsewhere,
labelled with device and date; with no record the page says so once. End to end on this CPU with a
recorded fixture (tests/fixtures/gpu-results)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gdcourse import gpu_results
from gdcourse.gpu_results import gpu_cell
from gdcourse.notebooks import execute

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gpu-results"
FAKE = {"device": "Fake GPU 80GB", "torch": "2.13.0", "cuda": "12.8"}


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(gpu_results, "_said_not_recorded", False)
    monkeypatch.delenv(gpu_results.RECORD_ENV, raising=False)
    monkeypatch.delenv(gpu_results.RESULTS_ENV, raising=False)


def test_on_cuda_the_cell_runs_prints_and_is_recorded_then_shown_elsewhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu_results, "device_facts", lambda device: FAKE)  # no CUDA on this machine
    monkeypatch.setenv(gpu_results.RECORD_ENV, str(tmp_path))
    with gpu_cell("ch99-peak", "cuda:0") as on_gpu:
        assert on_gpu
        print("peak 123.4 MiB")
    assert capsys.readouterr().out == "peak 123.4 MiB\n"  # the reader on the GPU sees it as usual
    record = json.loads((tmp_path / "ch99-peak.json").read_text())
    assert record["output"] == "peak 123.4 MiB\n" and record["device"] == "Fake GPU 80GB"
    assert len(record["date"]) == 10 and record["date"][:2] == "20"

    monkeypatch.setenv(gpu_results.RESULTS_ENV, str(tmp_path))
    ran = []
    with gpu_cell("ch99-peak", "cpu") as on_gpu:
        if on_gpu:
            ran.append(1)
    shown = capsys.readouterr().out
    assert not ran, "on a CPU the body's GPU work is skipped"
    assert shown.startswith(f"Recorded on Fake GPU 80GB (torch 2.13.0, CUDA 12.8), {record['date']}:\n")
    assert shown.rstrip().endswith("peak 123.4 MiB")


def test_without_a_record_the_page_says_so_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(gpu_results.RESULTS_ENV, str(tmp_path))  # an empty folder: nothing recorded
    for key in ("ch99-first", "ch99-second"):
        with gpu_cell(key, "cpu"):
            pass
    assert capsys.readouterr().out == gpu_results.NOT_RECORDED + "\n"


def test_a_key_is_checked_before_anything_runs():
    with pytest.raises(ValueError, match="key"):
        with gpu_cell("../escape", "cpu"):
            pass


def test_a_notebook_run_on_the_cpu_shows_the_recorded_fixture(tmp_path, monkeypatch):
    """The whole path a reader's page takes: the runner executes a chapter-like notebook on the CPU,
    and its GPU cell's output is the committed record, labelled."""
    monkeypatch.setenv(gpu_results.RESULTS_ENV, str(FIXTURES))  # the kernel inherits it
    cells = [new_code_cell('device = "cpu"', metadata={"tags": ["parameters"]}),
             new_code_cell("from gdcourse.gpu_results import gpu_cell\n"
                           'with gpu_cell("ch99-demo", device) as on_gpu:\n'
                           "    if on_gpu:\n"
                           "        raise RuntimeError('the GPU branch ran on a CPU')\n",
                           metadata={"tags": ["gpu"]})]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    nbformat.write(nb, tmp_path / "chapter.ipynb")
    result = execute(tmp_path / "chapter.ipynb", tmp_path / "out.ipynb", profile="reader")
    assert result.ok, result.error
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in out.cells for o in c.get("outputs", []))
    assert "Recorded on NVIDIA H200 (torch 2.13.0, CUDA 12.8), 2026-12-01:" in printed
    assert "peak extra memory    512.0 MiB (recorded fixture)" in printed


def _gpu_cell_keys() -> dict[str, str]:
    """{key: notebook} of every GPU-tagged cell of the book; each must be a gpu_cell."""
    import re

    keys = {}
    for path in sorted((gpu_results.RESULTS.parent).rglob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if "gpu" in cell.metadata.get("tags", []):
                found = re.findall(r'gpu_cell\("([^"]+)", DEVICE\)', cell.source)
                assert len(found) == 1, f"{path.name}: a GPU cell is one `with gpu_cell(KEY, DEVICE)` block"
                assert found[0] not in keys, f"{found[0]} is the key of two GPU cells"
                keys[found[0]] = path.name
    return keys


def test_every_gpu_cell_has_its_own_key_and_every_record_a_cell():
    keys = _gpu_cell_keys()
    assert len(keys) >= 8 and {n[:2] for n in keys.values()} == {"11", "12", "13", "18"}, keys
    for path in sorted(gpu_results.RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        assert record["key"] == path.stem in keys, f"{path.name} records no GPU cell of the book"
        assert record["device"] and record["date"] and record["output"].strip(), path
