"""Hidden tests use this to catch a submission that merely calls the course's
own reference implementation (``gdcourse.optim``, ``gdcourse.clipping``, ...)
instead of implementing it.

    with forbid_reference(gdcourse.optim.SGD):
        student_function(...)          # fails if it reaches SGD's code

It swaps the code of the reference functions (and of a class's own methods)
for one that raises, so it catches every way of reaching them: a module
attribute, a name imported earlier with ``from ... import``, or an instance.
"""

from __future__ import annotations

from contextlib import contextmanager
from types import FunctionType

MESSAGE = "this calls the course library's reference implementation (gdcourse) instead of implementing it"


def _poison(*args, **kwargs):
    # Runs with the *target's* globals, so everything it uses is a literal or a builtin.
    raise AssertionError("this calls the course library's reference implementation (gdcourse) instead of implementing it")


def _functions(target):
    if isinstance(target, FunctionType):
        return [target]
    if isinstance(target, type):
        # the class's own methods; dataclass-generated dunders are closures and stay
        return [v for k, v in vars(target).items() if isinstance(v, FunctionType) and not v.__code__.co_freevars]
    raise TypeError(f"forbid_reference takes functions or classes, got {target!r}")


@contextmanager
def forbid_reference(*targets):
    swapped = []
    try:
        for target in targets:
            for f in _functions(target):
                if f.__code__.co_freevars:
                    raise TypeError(f"{f.__qualname__} is a closure and cannot be guarded")
                swapped.append((f, f.__code__))
                f.__code__ = _poison.__code__
        yield
    finally:
        for f, code in swapped:
            f.__code__ = code
