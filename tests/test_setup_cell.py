"""Colab: every notebook opens there, and its setup cell works there.

The setup cell is run on a simulated Colab: a kernel that has imported
``google.colab`` (a stub here), whose installed packages are this course's
environment (torch and the rest preinstalled, as on Colab), and whose
``https://github.com/gdcourse/gdcourse`` is redirected by git to a local
repository made from this working tree. pip runs for real, offline.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

import gdcourse
from gdcourse.cli import main
from gdcourse.notebooks import discover
from gdcourse.setup_cell import REPOSITORY, SETUP_CELL, setup_cell, write_setup_cells
from gdcourse.runtime import COLAB_GPU_HINT

ROOT = Path(__file__).resolve().parent.parent
COLAB_LINK = re.compile(r"https://colab\.research\.google\.com/github/gdcourse/gdcourse/blob/main/([^\s)\"'>`]+)")
# What Colab provides and the setup cell must never replace.
PREINSTALLED = {"torch", "torchvision", "torchaudio", "numpy", "matplotlib", "ipywidgets", "scikit-learn",
                "transformers", "accelerate", "jax", "tensorflow"}


def _colab_repository(tmp_path: Path) -> Path:
    """A git repository with this working tree's package (and the exercise release it ships), on main."""
    repo = tmp_path / "gdcourse-repo"
    repo.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, repo / name)
    for folder in ("gdcourse", "exercises"):
        shutil.copytree(ROOT / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(git + args, cwd=repo, check=True)
    return repo


def _run_setup_cell(tmp_path: Path, repo: Path, after: str = "", **pip_env) -> subprocess.CompletedProcess:
    """Run the setup cell as a Colab kernel would, with pip options given as PIP_* variables."""
    stub = tmp_path / "colab-stub"
    (stub / "google" / "colab").mkdir(parents=True, exist_ok=True)
    for init in (stub / "google" / "__init__.py", stub / "google" / "colab" / "__init__.py"):
        init.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "GIT_CONFIG"))}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(p) for p in (pip_env.get("target"), stub) if p]),
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.{repo.as_uri()}.insteadOf",
        "GIT_CONFIG_VALUE_0": REPOSITORY,
        # Offline: nothing may come from an index; the build uses the installed setuptools.
        "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "CUDA_VISIBLE_DEVICES": "",
    })
    env.update({f"PIP_{k.upper()}": str(v) for k, v in pip_env.items()})
    code = "import google.colab  # a Colab kernel has imported it\n" + SETUP_CELL + \
        "\nimport gdcourse; print('gdcourse from', gdcourse.__file__)\n" + after
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_setup_cell_on_colab_installs_gdcourse_and_nothing_colab_has(tmp_path):
    repo = _colab_repository(tmp_path)
    report = tmp_path / "pip-report.json"
    run = _run_setup_cell(tmp_path, repo, dry_run=1, report=report)
    assert run.returncode == 0, run.stderr[-3000:]
    installs = json.loads(report.read_text())["install"]
    names = [item["metadata"]["name"].lower() for item in installs]
    assert names == ["gdcourse"], f"the setup cell would also install or replace {names}"
    meta = installs[0]["metadata"]
    assert meta["version"] == gdcourse.__version__
    assert installs[0]["requested_extras"] == ["colab"]
    # what this install brings: the base requirements and the colab extra's (the course extra stays out)
    wanted = [Requirement(r) for r in meta.get("requires_dist", [])]
    required = {r.name.lower() for r in wanted if r.marker is None or r.marker.evaluate({"extra": "colab"})}
    assert not required & {"torch", "torchvision", "torchaudio"}, "gdcourse[colab] must never pull in a torch build"
    assert "torch" in {r.name for r in wanted}, "the course extra (not installed here) names torch"
    assert {"onnxruntime", "onnxscript"} <= required, "the colab extra brings what Colab lacks for chapter 15"
    # The rest of the cell ran: where it runs, and (no GPU here) how to switch one on.
    assert "Colab · Python" in run.stdout and COLAB_GPU_HINT in run.stdout


def test_setup_cell_on_colab_really_installs_an_importable_gdcourse(tmp_path):
    repo = _colab_repository(tmp_path)
    site = tmp_path / "site-packages"
    after = ("from gdcourse.check import release_notebook\n"
             "print('release from', release_notebook('ex01-gd-loop'))")
    run = _run_setup_cell(tmp_path, repo, after=after, target=site, no_deps=1)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"gdcourse from {site}" in run.stdout, run.stdout
    assert f"gdcourse {gdcourse.__version__}" in run.stdout
    # No checkout on Colab: the self-check reads the exercise release packaged with gdcourse.
    assert f"release from {site}/gdcourse/exercises/ex01-gd-loop/ex01-gd-loop.ipynb" in run.stdout


def test_setup_cell_does_nothing_outside_colab(tmp_path):
    run = subprocess.run([sys.executable, "-c", SETUP_CELL], cwd=tmp_path, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "COLAB_RELEASE_TAG"}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(("local ·", "CI ·")) and COLAB_GPU_HINT not in run.stdout
    assert "torch" not in run.stdout


def test_every_notebook_carries_the_current_setup_cell(capsys):
    assert main(["--root", str(ROOT), "setup-cells", "--check"]) == 0, capsys.readouterr().out


def test_setup_cells_are_rewritten_and_checked(tmp_path):
    path = tmp_path / "nb.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('old setup')", metadata={"tags": ["setup"]})])
    nbformat.write(nb, path)
    assert write_setup_cells([path], check=True) == [path]
    assert nbformat.read(path, as_version=4).cells[0].source == "print('old setup')", "--check writes nothing"
    assert write_setup_cells([path]) == [path]
    assert nbformat.read(path, as_version=4).cells[0].source == SETUP_CELL
    assert write_setup_cells([path], check=True) == []
    assert "@v9.9.9\"" in setup_cell("v9.9.9")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), path)
    with pytest.raises(ValueError, match="setup"):
        write_setup_cells([path])


def _colab_targets(text: str) -> list[str]:
    return COLAB_LINK.findall(text)


@pytest.mark.parametrize("page", ["README.md", "book/exercises.md"])
def test_colab_links_name_files_that_exist(page):
    targets = _colab_targets((ROOT / page).read_text(encoding="utf-8"))
    assert targets, f"{page} has no Colab links"
    missing = [t for t in targets if not (ROOT / t).is_file()]
    assert not missing, f"{page} links Colab to files that do not exist: {missing}"


def test_readme_has_a_colab_badge_for_every_chapter_and_exercise():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(_colab_targets(readme))
    notebooks = {p.relative_to(ROOT).as_posix() for p in discover(ROOT, dirs=("book", "exercises"))}
    assert notebooks - linked == set(), f"no Colab badge in the README for {sorted(notebooks - linked)}"
    badge = "book/_static/colab-badge.svg"
    assert readme.count(f"]({badge})") >= len(notebooks) and (ROOT / badge).is_file()
