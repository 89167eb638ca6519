"""The book's GPU cells: run on a CUDA device, recorded there, shown beside the CPU run elsewhere.

A GPU cell is written as::

    with gpu_cell("ch12-amp-memory", DEVICE) as on_gpu:
        if on_gpu:
            ...  # measure on the GPU and print the result

On a CUDA device the body runs and prints as usual. When ``$GDCOURSE_GPU_RECORD`` names a folder
(``gdcourse run-notebooks --record-gpu book/gpu-results``, as the GPU workflow runs it), what the cell
printed is also written there as ``<key>.json`` with the device's name, the date and the versions.
Those files are committed. Everywhere else (this CPU, CI, a reader's laptop) the cell prints the
recorded result under a line naming the device and the date; where nothing is recorded yet, the
page says so once, at its first GPU cell. Used in chapters 11, 12, 13 and 18.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import re
import sys
from pathlib import Path

RECORD_ENV = "GDCOURSE_GPU_RECORD"  # folder to write results into (a GPU run)
RESULTS_ENV = "GDCOURSE_GPU_RESULTS"  # folder to read them from (default: the checkout's book/gpu-results)
RESULTS = Path(__file__).resolve().parent.parent / "book" / "gpu-results"
NOT_RECORDED = ("No GPU run of these cells is recorded yet: on a CUDA device they run and print their own "
                "results (run the notebook with device='cuda'); here the CPU results above stand alone.")
_said_not_recorded = False


def _check_key(key: str) -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", key):
        raise ValueError(f"a GPU cell's key is lowercase letters, digits and '-', got {key!r}")
    return key


def device_facts(device) -> dict:
    """What the record says about the machine: the GPU's name and the software versions."""
    import torch

    return {"device": torch.cuda.get_device_name(torch.device(device)), "torch": torch.__version__,
            "cuda": torch.version.cuda}


def results_folder() -> Path:
    return Path(os.environ.get(RESULTS_ENV) or RESULTS)


def recorded(key: str) -> dict | None:
    """The recorded result of the GPU cell ``key``, or None."""
    path = results_folder() / f"{_check_key(key)}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def describe(record: dict) -> str:
    """The recorded output under a line naming where and when it was measured."""
    versions = f"torch {record['torch']}" + (f", CUDA {record['cuda']}" if record.get("cuda") else "")
    return f"Recorded on {record['device']} ({versions}), {record['date']}:\n{record['output'].rstrip()}"


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


@contextlib.contextmanager
def gpu_cell(key: str, device):
    """Run the body on a CUDA ``device`` (recording what it prints), else show what a GPU run recorded."""
    global _said_not_recorded
    _check_key(key)
    if not str(device).startswith("cuda"):
        yield False
        record = recorded(key)
        if record is not None:
            print(describe(record))
        elif not _said_not_recorded:
            _said_not_recorded = True
            print(NOT_RECORDED)
        return
    printed = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, printed)):
        yield True
    folder = os.environ.get(RECORD_ENV)
    if folder:
        record = {"key": key, **device_facts(device), "date": datetime.date.today().isoformat(),
                  "output": printed.getvalue()}
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{key}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
