"""The notebook runner: papermill executes every notebook of the course.

GPU work is tagged one way: a notebook whose metadata says
``gdcourse.gpu: true`` needs a GPU throughout; a code cell tagged ``gpu`` is a
guarded GPU section inside a CPU notebook (it checks the device and does
nothing on a CPU). The GPU workflow executes exactly the notebooks that carry
either tag, with ``device="cuda"`` injected.

Each notebook has a ``parameters``-tagged cell whose defaults are the full,
reader-sized run. Its CI-sized values live in the notebook's own metadata,
``metadata.gdcourse.ci_parameters`` (a dict), so a chapter and its CI budget
travel together. The ``reader`` profile injects nothing; the ``ci`` profile
injects those values. The runner reports each notebook's wall time and, when
one breaks, the failing cell and its error.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PROFILES = ("ci", "reader")
NOTEBOOK_DIRS = ("book", "solutions")

# The environment of every process the course's tools start (kernels, Sphinx, nbgrader), set in this
# one place: no debugger warning about frozen modules, no jupyter path-migration notice, and no network
# for Hugging Face (chapter 14 and its tests work offline). The grader's sandbox sets its own, whole.
COURSE_ENV = {"PYDEVD_DISABLE_FILE_VALIDATION": "1", "JUPYTER_PLATFORM_DIRS": "1", "HF_HUB_OFFLINE": "1"}


def use_course_env() -> None:
    """Put :data:`COURSE_ENV` into this process's environment, for it and its children (what the
    caller set already wins)."""
    for name, value in COURSE_ENV.items():
        os.environ.setdefault(name, value)


@dataclass(frozen=True)
class Result:
    """What happened to one notebook."""

    source: Path
    output: Path
    seconds: float
    error: str | None = None  # "cell N: ExcName: message" when it broke
    # CPU seconds of the kernel and what it started (the processes it waited for): the cost of the
    # notebook, which other work on the machine does not inflate as it inflates ``seconds``
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def discover(root: Path | str = ".", dirs=NOTEBOOK_DIRS) -> list[Path]:
    """Every notebook under ``dirs`` of ``root``, sorted, checkpoints excluded."""
    root = Path(root)
    found = []
    for d in dirs:
        found += [p for p in (root / d).rglob("*.ipynb") if not any(part.startswith(".") for part in p.parts)]
    return sorted(found)


def needs_gpu(notebook: Path | str) -> bool:
    """True if the notebook, or any of its code cells, is tagged for a GPU."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    if nb.get("metadata", {}).get("gdcourse", {}).get("gpu"):
        return True
    return any("gpu" in c.get("metadata", {}).get("tags", []) for c in nb["cells"] if c["cell_type"] == "code")


def parameters_for(notebook: Path | str, profile: str) -> dict:
    """The parameters papermill injects into ``notebook`` under ``profile``."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {PROFILES}")
    if profile == "reader":
        return {}
    meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    params = meta.get("gdcourse", {}).get("ci_parameters", {})
    if not isinstance(params, dict):
        raise ValueError(f"{notebook}: metadata.gdcourse.ci_parameters must be a dict")
    return params


def execute(source: Path | str, output: Path | str, *, profile: str = "ci",
            timeout: int = 600, extra_parameters: dict | None = None) -> Result:
    """Execute one notebook with papermill; never raises for a broken notebook."""
    import papermill as pm

    source, output = Path(source).resolve(), Path(output).resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    params = {**parameters_for(source, profile), **(extra_parameters or {})}
    use_course_env()
    start, children = time.perf_counter(), _children_cpu()
    error = None
    try:
        pm.execute_notebook(
            str(source), str(output), parameters=params, kernel_name="python3",
            cwd=str(source.parent), progress_bar=False, log_output=False,
            request_save_on_cell_execute=False, execution_timeout=timeout,
        )
    except pm.PapermillExecutionError as exc:
        error = f"cell {exc.cell_index} (In [{exc.exec_count}]): {exc.ename}: {exc.evalue}"
    except Exception as exc:  # a kernel that died, a timeout, invalid JSON, ...
        error = f"{type(exc).__name__}: {exc}"
    return Result(source, output, time.perf_counter() - start, error, _children_cpu() - children)


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_all(sources, out_dir: Path | str, *, root: Path | str = ".", profile: str = "ci",
            jobs: int = 1, timeout: int = 600, extra_parameters: dict | None = None) -> list[Result]:
    """Execute ``sources`` into ``out_dir`` (mirroring their paths under ``root``)."""
    root, out_dir = Path(root).resolve(), Path(out_dir)
    pairs = [(Path(s).resolve(), out_dir / Path(s).resolve().relative_to(root)) for s in sources]
    kwargs = dict(profile=profile, timeout=timeout, extra_parameters=extra_parameters)
    if jobs <= 1:
        return [execute(s, o, **kwargs) for s, o in pairs]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(execute, s, o, **kwargs) for s, o in pairs]
        return [f.result() for f in futures]


def report(results: list[Result], root: Path | str = ".") -> str:
    """A plain table: status, seconds, notebook, and the error of each that broke."""
    root = Path(root).resolve()
    lines = [f"{'status':6}  {'seconds':>7}  {'cpu s':>7}  notebook"]
    for r in results:
        lines.append(f"{'ok' if r.ok else 'FAILED':6}  {r.seconds:7.1f}  {r.cpu_seconds:7.1f}  {r.source.relative_to(root)}")
        if not r.ok:
            lines.append(f"{'':26}{r.error}")
    failed = sum(not r.ok for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed in {sum(r.seconds for r in results):.1f} s of notebook time")
    return "\n".join(lines)


def write_timings(results: list[Result], path: Path | str, *, root: Path | str = ".",
                  profile: str = "ci", device: str | None = None) -> Path:
    """Save what ``report`` prints as JSON, for a workflow to upload and compare across runs."""
    import platform

    root, path = Path(root).resolve(), Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "profile": profile, "device": device or "default", "host": platform.node(),
        "notebooks": [{"notebook": r.source.relative_to(root).as_posix(), "ok": r.ok,
                       "seconds": round(r.seconds, 2),
                       "cpu_seconds": round(r.cpu_seconds, 2), "error": r.error} for r in results],
    }
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path

