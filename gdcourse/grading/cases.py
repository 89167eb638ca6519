"""Trusted cases: what the judge asks of a submission, and how it decides.

An assignment that the judge grades has ``solutions/<name>/cases.py``
beside its source notebook, read only by the judge and never copied into
the sandbox. It defines ``cases(rng)``, yielding :class:`Case` objects:

    yield Case("test_predict", "one prediction per row, bias added",
               call("predict", X, w, b),
               lambda r: close(r.value, X @ w + b, rtol=1e-10))

- ``test`` is the grade_id of the notebook's test cell whose points the
  case shares (a cell's points are split evenly over its cases);
- ``call`` says what the sandbox calls: a graded function on data
  (:func:`call`), or a probe from :mod:`gdcourse.grading.probes` that builds
  objects (a model, an optimizer) from data and reports what is left
  (:func:`probe`). Inputs are drawn from ``rng``, fresh every grading run;
- ``check`` runs here, on the trusted side, on what came back
  (:class:`Result`), computes the expected answer itself and raises
  :class:`Fail` with a message when the answer is wrong.

Optional module attributes: ``REFERENCES`` (qualified names of course
functions that do the exercise's work, e.g. ``"gdcourse.optim.Adam"``) and
``FORBIDDEN`` (modules a by-hand exercise must not use, e.g.
``"torch.optim"``), both for the static check of answer cells.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gdcourse.grading.wire import Opaque, Raised, Tensor


class Fail(Exception):
    """A case's answer is wrong; the message says how (for a visible case, expected vs got)."""


@dataclass(frozen=True)
class Call:
    probe: str  # "call", or "<module>:<function>" in gdcourse.grading.probes
    fn: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def call(fn: str, *args, **kwargs) -> Call:
    """Call the student's ``fn(*args, **kwargs)`` in the sandbox; arguments are data."""
    return Call("call", fn, args, kwargs)


def probe(name: str, *args, **kwargs) -> Call:
    """Run probe ``name`` (``"module:function"``) in the sandbox with these data arguments."""
    module, _, function = name.partition(":")
    if not module or not function:
        raise ValueError(f"a probe is named 'module:function', got {name!r}")
    return Call(name, function, args, kwargs)


@dataclass(frozen=True)
class Case:
    test: str
    name: str
    call: Call
    check: Callable[["Result"], Any]
    visible: bool = False


@dataclass(frozen=True)
class Result:
    """What a call left, as data: ``value`` (the return value, or what the probe reported),
    ``args_after`` (the arguments after the call, for a plain call) and ``shares_input``
    (indices of returned arrays that share memory with an argument)."""

    value: Any
    args_after: tuple = ()
    shares_input: tuple = ()


def load(course_root: Path, assignment: str):
    """The assignment's case module, or None if the judge does not grade it yet."""
    path = Path(course_root) / "solutions" / assignment / "cases.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"gdcourse_cases_{assignment.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "cases", None)):
        raise TypeError(f"{path} defines no cases(rng)")
    return module


# --- checks ----------------------------------------------------------------------

def as_array(x, what: str = "the result") -> np.ndarray:
    """``x`` as a float array (tensors, lists and tuples of numbers too); :class:`Fail` if it is not numbers."""
    if isinstance(x, Tensor):
        x = x.array
    if isinstance(x, (Raised, Opaque)) or x is None or isinstance(x, (str, dict)):
        raise Fail(f"{what} should be numbers, got {kind(x)}")
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise Fail(f"{what} should be numbers, got {kind(x)}") from None
    return a


def kind(x) -> str:
    """What a returned value is, for a message: "a float32 tensor", "a generator", "None"."""
    if isinstance(x, Opaque):
        return f"a {x.type}"
    if isinstance(x, Tensor):
        return f"a {x.dtype} tensor"
    return "None" if x is None else f"a {type(x).__name__}"


def rel_error(got, want) -> float:
    """CS231n's relative error, max over elements: |a - b| / max(1e-8, |a| + |b|)."""
    a, b = np.asarray(got, float), np.asarray(want, float)
    if a.size == 0:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        return float(np.nanmax(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)), initial=0.0))


def close(got, want, *, rtol: float, atol: float = 0.0, what: str = "the result", shape: bool = True) -> None:
    """``got`` equals ``want`` element-wise within ``atol + rtol * |want|`` (NaN matches NaN, inf matches inf)."""
    want = np.asarray(want, dtype=float)
    a = as_array(got, what)
    if shape and a.shape != want.shape:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape}")
    try:
        ok = np.allclose(a, want, rtol=rtol, atol=atol, equal_nan=True)
    except ValueError:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape}") from None
    if not ok:
        if a.size <= 8:
            raise Fail(f"{what}: expected {np.array2string(want, precision=6)}, got {np.array2string(a, precision=6)}")
        bad = ~np.isclose(a, want, rtol=rtol, atol=atol, equal_nan=True)
        raise Fail(f"{what}: {int(bad.sum())} of {a.size} entries differ beyond rtol={rtol:g}, atol={atol:g} "
                   f"(relative error up to {rel_error(a, want):.1e})")


def number(x, what: str = "the result") -> float:
    """``x`` as one float: a Python or NumPy number, or a 0-d array or tensor."""
    a = as_array(x, what)
    if a.ndim != 0 and a.size != 1:
        raise Fail(f"{what} should be a single number, got shape {a.shape}")
    return float(a.reshape(()))


def require(condition, message: str) -> None:
    if not condition:
        raise Fail(message)


def unchanged(result: Result, index: int, original, what: str) -> None:
    """Argument ``index`` of a plain call is as the judge sent it: the function did not modify it."""
    after = result.args_after[index] if index < len(result.args_after) else None
    try:
        same = np.array_equal(as_array(after), np.asarray(original, float), equal_nan=True)
    except Fail:
        same = False
    if not same:
        raise Fail(f"{what} was modified: build a new array instead of changing the one passed in")

