"""gdcourse.grading.integrity: the static check of answer cells and tampered cells."""

import nbformat
import pytest

from gdcourse.grading import integrity
from submissions import release

REFS = ("gdcourse.optim.Adam", "gdcourse.optim.AdamW")


@pytest.mark.parametrize("source", [
    "from gdcourse.optim import Adam\n",
    "import gdcourse.optim as o\ndef f(): return o.AdamW\n",
    "from gdcourse import optim\nstep = optim.Adam\n",
    "import gdcourse\nx = gdcourse.optim.Adam\n",
    "from gdcourse.optim import *\n",
    "import torch\nopt = torch.optim.SGD\n",
    "from torch import optim\n",
])
def test_reaching_for_the_reference_or_a_library_optimizer_is_found(source):
    work, _ = integrity.static_findings(source, references=REFS, forbidden=("torch.optim",))
    assert work, source


@pytest.mark.parametrize("source, phrase", [
    ("m = __import__('gdcourse.optim')\n", "dynamic"),
    ("exec('x = 1')\n", "dynamic"),
    ("import importlib\n", "dynamic"),
    ("import subprocess\n", "system access"),
    ("import os\nos.system('ls')\n", "system access"),
    ("data = open('/work/main/solutions/x').read()\n", "a path outside"),
    ("%timeit x = 1\nimport ctypes\n", "system access"),
])
def test_code_worth_a_look_is_flagged(source, phrase):
    work, other = integrity.static_findings(source, references=REFS)
    assert not work and any(phrase in f for f in other), other


def test_honest_code_is_not_flagged():
    source = ("import numpy as np\nfrom gdcourse.precision import format_table\nimport os.path\n"
              "def adam_step(w, g, state, lr):\n    m = state['m']\n    return w - lr * g, {'m': m, 'path': 'a/b'}\n")
    assert integrity.static_findings(source, references=REFS, forbidden=("torch.optim",)) == ([], [])
    assert integrity.static_findings("def f(:\n", references=REFS) == ([], [])  # a syntax error is not a finding


def test_every_metadata_edit_is_named():
    rel = release("ex01-gd-loop")
    sub = nbformat.reads(nbformat.writes(rel), as_version=4)
    by_id = {c.metadata["nbgrader"]["grade_id"]: c for c in sub.cells if "nbgrader" in c.metadata}
    by_id["test_fit"].metadata["nbgrader"]["points"] = 200
    by_id["test_predict"].cell_type = "markdown"
    by_id["fit"].metadata["nbgrader"]["grade_id"] = "test_predict"  # now appears twice
    problems = integrity.tampered_cells(sub, rel)
    assert "test_fit (points changed from 2 to 200)" in problems
    assert "test_predict (cell type changed from code to markdown)" in problems
    assert "test_predict (appears twice)" in problems
    assert integrity.tampered_cells(rel, rel) == []


def test_system_calls_an_exercise_asks_for_are_not_flagged_but_others_are():
    allowed = ("os.replace", "os.fsync")
    honest = "import os\ndef save(tmp, path):\n    os.fsync(3)\n    os.replace(tmp, path)\n"
    assert integrity.static_findings(honest, allowed=allowed) == ([], [])
    _, other = integrity.static_findings(honest + "os.system('ls')\n", allowed=allowed)
    assert other == ["system access (os.system)"]
    _, other = integrity.static_findings("import shutil\nshutil.rmtree('x')\n", allowed=allowed)
    assert any("shutil" in f for f in other)
