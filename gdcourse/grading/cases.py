"""Cases: what the judge asks of a submission, and how it decides; the self-check asks the same.

Every assignment on the judge has two case modules:

- **public**, :mod:`gdcourse.grading.assignments` ``.<exNN_slug>``: the course's
  ``REFERENCE`` of every graded function, the probes (for functions that
  take objects, callables or files), the case builders with their checks,
  and ``visible()``, the visible cases. The self-check in the student's
  notebook runs exactly these visible cases, and so does the judge.
- **trusted**, ``solutions/<name>/cases.py``, beside the nbgrader source, read
  only by the judge and never copied into the sandbox or the release:
  ``cases(rng)`` yields the hidden cases, their inputs drawn from ``rng``
  (fresh every grading run), and the optional ``REFERENCES`` (qualified
  names of course functions that do the exercise's work, e.g.
  ``"gdcourse.optim.Adam"``) and ``FORBIDDEN`` (modules a by-hand exercise
  must not use, e.g. ``"torch.optim"``) for the static check, and ``ALLOWED``
  (system calls the exercise asks for, e.g. ``"os.replace"``, not flagged).

A case::

    Case("test_predict", "one prediction per row, bias added",
         call("predict", X, w, b),
         lambda r: close(r.value, X @ w + b, rtol=1e-10))

- ``test`` is the grade_id of the notebook's test cell whose points the
  case shares (a cell's points are split over its cases by ``weight``,
  evenly by default);
- ``call`` names the one graded function the case is about, and what the
  sandbox does with it: call it on data (:func:`call`), or hand it to a probe
  of the public module that builds objects (a model, a loss function) from
  data and reports what is left (:func:`probe`). While it runs, every *other*
  graded function is the course's reference (a stand-in), so a bug in one
  function costs only that function's cases;
- ``check`` runs on the trusted side on what came back (:class:`Result`),
  computes the expected answer itself and raises :class:`Fail` when the
  answer is wrong.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gdcourse.grading.wire import Opaque, Raised, Tensor


class Fail(Exception):
    """A case's answer is wrong. ``message`` says how (for a visible case: expected vs got);
    ``summary``, shown for a hidden case instead, says what is wrong without the case's inputs
    (None: the case's name alone is shown)."""

    def __init__(self, message: str, summary: str | None = None):
        super().__init__(message)
        self.summary = summary


@dataclass(frozen=True)
class Call:
    fn: str  # the graded function (or graded value, see :func:`value`) the case is about
    probe: str = ""  # "": call fn on the arguments; else a probe function of the assignment's public module
    args: tuple | None = ()  # None: fn is a value the answer cell defines, reported as it is
    kwargs: dict = field(default_factory=dict)

    def as_data(self) -> dict:
        """The call as the harness reads it: data only."""
        return {"fn": self.fn, "probe": self.probe, "args": None if self.args is None else list(self.args),
                "kwargs": dict(self.kwargs)}


def call(fn: str, *args, **kwargs) -> Call:
    """Call the student's ``fn(*args, **kwargs)`` in the sandbox; arguments are data."""
    return Call(fn, "", args, kwargs)


def value(name: str) -> Call:
    """Report the answer cell's variable ``name`` as it is (a graded answer that is a value, not a function)."""
    return Call(name, "", None)


def probe(fn: str, name: str, *args, **kwargs) -> Call:
    """Run ``name(student_fn, *args, **kwargs)``, a probe of the assignment's public module, with
    the student's ``fn``; the probe builds objects from the data arguments and reports as data."""
    if not name.isidentifier():
        raise ValueError(f"a probe is a function name of the public module, got {name!r}")
    return Call(fn, name, args, kwargs)


@dataclass(frozen=True)
class Case:
    test: str
    name: str
    call: Call
    check: Callable[["Result"], Any]
    visible: bool = False
    weight: float = 1.0  # its share of the test cell's points, relative to the cell's other cases (0: worth nothing)


@dataclass(frozen=True)
class Result:
    """What a call left, as data: ``value`` (the return value, or what the probe reported),
    ``args_after`` (the arguments after the call, for a plain call) and ``shares_input``
    (indices of returned arrays that share memory with an argument)."""

    value: Any
    args_after: tuple = ()
    shares_input: tuple = ()


def module_name(assignment: str) -> str:
    """``"ex01-gd-loop"`` -> ``"ex01_gd_loop"``, the public module's name."""
    return assignment.replace("-", "_")


def public(assignment: str):
    """The assignment's public case module, or None if it has none (not on the judge yet)."""
    name = f"gdcourse.grading.assignments.{module_name(assignment)}"
    if importlib.util.find_spec(name) is None:
        return None
    module = importlib.import_module(name)
    for attr in ("REFERENCE", "visible"):
        if not hasattr(module, attr):
            raise TypeError(f"{name} defines no {attr}")
    return module


def load(course_root: Path, assignment: str):
    """The assignment's trusted case module, or None if the judge does not grade it yet."""
    path = Path(course_root) / "solutions" / assignment / "cases.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"gdcourse_cases_{module_name(assignment)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "cases", None)):
        raise TypeError(f"{path} defines no cases(rng)")
    return module


def score(case: Case, frame: dict | None) -> tuple[bool, str]:
    """(passed, message) for one case from what its call left (a frame, as data); the message is
    safe to show this student: for a hidden case it names what is wrong, never the inputs."""
    if frame is None:
        return False, "not run (the notebook stopped before this case)"
    error = frame.get("error")
    if isinstance(error, Raised):
        from gdcourse.grading.feedback import printable
        return False, f"raised {error.type}" + (f": {printable(error.message, 300)}"
                                                if case.visible and error.message else "")
    if "value" not in frame:
        return False, "no result"
    args_after = frame.get("args_after", ())
    shares = frame.get("shares_input", ())
    result = Result(frame["value"], tuple(args_after) if isinstance(args_after, list) else (),
                    tuple(x for x in shares if type(x) is int) if isinstance(shares, list) else ())
    try:
        case.check(result)
    except Fail as exc:
        from gdcourse.grading.feedback import printable
        return False, printable(exc if case.visible else (exc.summary or ""), 600)
    except Exception as exc:  # the returned value had the wrong form for the check
        return False, (f"returned a value of the wrong form ({type(exc).__name__})" if case.visible
                       else "returned a value of the wrong form")
    return True, ""


# --- checks ----------------------------------------------------------------------

def as_array(x, what: str = "the result") -> np.ndarray:
    """``x`` as a float array (tensors, lists and tuples of numbers too); :class:`Fail` if it is not numbers."""
    if isinstance(x, Tensor):
        x = x.array
    if isinstance(x, (Raised, Opaque)) or x is None or isinstance(x, (str, dict)):
        raise Fail(f"{what} should be numbers, got {kind(x)}", summary=f"{what} should be numbers, got {kind(x)}")
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise Fail(f"{what} should be numbers, got {kind(x)}",
                   summary=f"{what} should be numbers, got {kind(x)}") from None
    return a


def kind(x) -> str:
    """What a returned value is, for a message: "a float32 tensor", "a generator", "None"."""
    name = f"{x.dtype} tensor" if isinstance(x, Tensor) else x.type if isinstance(x, Opaque) else type(x).__name__
    return "None" if x is None else f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def rel_error(got, want) -> float:
    """CS231n's relative error, max over elements: |a - b| / max(1e-8, |a| + |b|)."""
    a, b = np.asarray(got, float), np.asarray(want, float)
    if a.size == 0:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))
    return float(ratio[~np.isnan(ratio)].max(initial=0.0))  # NaN where both are NaN (or inf): compared elsewhere


def close(got, want, *, rtol: float, atol: float = 0.0, what: str = "the result", shape: bool = True) -> None:
    """``got`` equals ``want`` element-wise within ``atol + rtol * |want|`` (NaN matches NaN, inf matches inf)."""
    want = np.asarray(want, dtype=float)
    a = as_array(got, what)
    if shape and a.shape != want.shape:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape}", summary=f"{what} has the wrong shape")
    try:
        ok = np.allclose(a, want, rtol=rtol, atol=atol, equal_nan=True)
    except ValueError:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape}",
                   summary=f"{what} has the wrong shape") from None
    if not ok:
        wrong = f"{what} is wrong (beyond rtol={rtol:g}, atol={atol:g})"
        if a.size <= 8:
            raise Fail(f"{what}: expected {np.array2string(want, precision=6)}, got {np.array2string(a, precision=6)} "
                       f"(relative error {rel_error(a, want):.1e})", summary=wrong)
        bad = ~np.isclose(a, want, rtol=rtol, atol=atol, equal_nan=True)
        raise Fail(f"{what}: {int(bad.sum())} of {a.size} entries differ beyond rtol={rtol:g}, atol={atol:g} "
                   f"(relative error up to {rel_error(a, want):.1e})", summary=wrong)


def number(x, what: str = "the result") -> float:
    """``x`` as one float: a Python or NumPy number, or a 0-d array or tensor."""
    a = as_array(x, what)
    if a.ndim != 0 and a.size != 1:
        raise Fail(f"{what} should be a single number, got shape {a.shape}",
                   summary=f"{what} should be a single number")
    return float(a.reshape(()))


def require(condition, message: str) -> None:
    """:class:`Fail` with ``message`` unless ``condition``; the message names a property, so a hidden case shows it too."""
    if not condition:
        raise Fail(message, summary=message)


def unchanged(result: Result, index: int, original, what: str) -> None:
    """Argument ``index`` of a plain call is as the judge sent it: the function did not modify it."""
    after = result.args_after[index] if index < len(result.args_after) else None
    try:
        same = np.array_equal(as_array(after), np.asarray(original, float), equal_nan=True)
    except Fail:
        same = False
    if not same:
        message = f"{what} was modified: build a new array instead of changing the one passed in"
        raise Fail(message, summary=message)



def diagnose(check: Callable[[], Any], hints) -> None:
    """Run ``check``; when it fails, name the mistake: ``hints`` is a list of ``(matches, hint)``, and
    the first hint whose ``matches()`` is true (the answer is what that mistake gives) joins the
    message. A hint names a mistake, not the inputs, so a hidden case shows it too."""
    try:
        check()
    except Fail as exc:
        for matches, hint in hints:
            try:
                found = bool(matches())
            except (Fail, ValueError, TypeError, IndexError):
                found = False
            if found:
                raise Fail(f"{exc}\n{hint}", summary=hint) from None
        raise


def resembles(got, want, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """``got`` is, loosely, ``want``: for matching an answer against what a known mistake gives."""
    try:
        a = as_array(got)
    except Fail:
        return False
    return a.shape == np.shape(want) and bool(np.allclose(a, want, rtol=rtol, atol=atol, equal_nan=True))
