"""pyproject.toml: the wheel holds every package, and every import is declared.

A learner's ``pip install`` (a wheel, or ``pip install git+...`` on Colab) is not the
editable checkout: a package missing from the wheel, or an import no requirement
brings, only shows there.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# the course's tools: the `gdcourse` command and what only it runs
COURSE_TOOLS = ("gdcourse/cli.py", "gdcourse/notebooks.py", "gdcourse/build.py", "gdcourse/lab.py",
                "gdcourse/grading/")


def _third_party_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "gdcourse"}


def _distributions(imports: set[str]) -> set[str]:
    """The installed distributions that provide these top-level import names (normalised)."""
    provided = metadata.packages_distributions()
    missing = sorted(n for n in imports if n not in provided)
    assert not missing, f"imported but installed by no distribution: {missing}"
    return {_norm(d) for n in imports for d in provided[n]}


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _declared(requirements) -> set[str]:
    return {_norm(Requirement(r).name) for r in requirements}


def test_every_import_of_the_course_tools_is_in_the_course_extra():
    base = _declared(PROJECT["dependencies"])
    course = _declared(PROJECT["optional-dependencies"]["course"])
    for path in sorted((ROOT / "gdcourse").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        undeclared = _distributions(_third_party_imports(path)) - base - course
        assert not undeclared, f"{rel} imports {sorted(undeclared)}: add them to the course extra"
    tool_imports = set().union(*(_third_party_imports(p) for p in sorted((ROOT / "gdcourse").rglob("*.py"))
                                 if p.relative_to(ROOT).as_posix().startswith(COURSE_TOOLS)))
    assert {"nbgrader", "papermill", "tqdm", "psutil"} <= tool_imports  # the scan sees the tools' imports


def test_a_learners_install_stays_light():
    """The base install is what every chapter's first cell imports; torch and the tools are not in it."""
    base = _declared(PROJECT["dependencies"])
    assert base == {"numpy", "matplotlib"}
    first = _third_party_imports(ROOT / "gdcourse" / "__init__.py") | _third_party_imports(ROOT / "gdcourse" / "check.py")
    assert _distributions(first) <= base, "gdcourse and its self-check import only the base requirements"


def test_the_development_environment_satisfies_every_extra():
    """requirements.txt (what `make venv` installs) brings every extra at a version it allows."""
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for text in requirements:
            req = Requirement(text)
            version = metadata.version(req.name)
            assert req.specifier.contains(version, prereleases=True), f"[{extra}] {text}: {version} installed"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out, src = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source") / "gdcourse"
    # a copy, so that setuptools' build/ and egg-info are not written into the checkout
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".*", "_build", "build", "*.egg-info", "__pycache__"))
    # --no-build-isolation: setuptools comes from requirements.txt, so this needs no network
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(out), str(src)], check=True, capture_output=True, cwd=out)
    [built] = out.glob("gdcourse-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_every_module_and_the_student_release(wheel):
    names = set(wheel.namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "gdcourse").rglob("*")
               if p.suffix in (".py", ".css", ".js", ".mplstyle") and "__pycache__" not in p.parts}
    assert modules and modules <= names, f"missing from the wheel: {sorted(modules - names)}"
    release = {f"gdcourse/exercises/{p.parent.name}/{p.name}" for p in (ROOT / "exercises").glob("*/*.ipynb")}
    assert release and release <= names, f"missing from the wheel: {sorted(release - names)}"
    [meta] = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = wheel.read(meta).decode()
    assert "Provides-Extra: course" in text and "Requires-Dist: nbgrader" in text
    assert not any(n.startswith(("tests/", "solutions/", "book/")) for n in names), "the wheel ships no course source"
