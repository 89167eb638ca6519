"""Glue executed values into the book's prose.

``myst_nb.glue`` exists only where the book is built. On Colab or a bare
Jupyter it is absent, so this wrapper falls back to showing the value, and a
chapter runs unchanged everywhere.
"""

from __future__ import annotations

from typing import Any


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` for ``{glue}`` roles.

    Returns nothing, so a cell ending in ``glue(...)`` shows no stray value.

    NumPy scalars become plain Python numbers first: under NumPy 2 their repr
    is ``np.float64(...)``, which a ``{glue:text}`name:.3f``` format cannot parse.
    """
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    myst_glue(name, value, display=display)
