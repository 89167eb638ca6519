"""Loss-curve figures used across the book."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np


def plot_losses(
    curves: Mapping[str, Sequence[float]],
    *,
    ax=None,
    logy: bool = True,
    title: str | None = None,
    xlabel: str = "epoch",
    ylabel: str = "training loss (MSE)",
    ceiling: float | None = None,
):
    """Draw one line per named loss history and return the axes.

    Non-finite values (an exploding run) end the line there and are marked
    with an ``x`` at the last finite point, so a divergent run is visible
    instead of silently dropped by the log scale. Values above ``ceiling``
    count as blown up too: a loss near the float64 limit would otherwise
    squash every other curve (and matplotlib cannot autoscale a log axis there).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, values in curves.items():
        values, stop = _finite_prefix(values, ceiling)
        (line,) = ax.plot(np.arange(stop), values[:stop], label=label)
        if stop < len(values) and stop > 0:
            ax.plot(stop - 1, values[stop - 1], "x", color=line.get_color(), markersize=9)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(frameon=False)
    return ax


def plot_lr_sweep(
    run: Callable[[float], Sequence[float]],
    learning_rates: Sequence[float],
    *,
    ax=None,
    title: str | None = None,
    ceiling: float | None = None,
):
    """Loss histories for many learning rates, coloured on a log scale.

    ``run(lr)`` returns one loss history. This is the static figure that tells
    the story of :func:`gdcourse.widgets.lr_slider` where no kernel runs.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    lrs = np.asarray(learning_rates, dtype=float)
    norm = plt.matplotlib.colors.LogNorm(vmin=lrs.min(), vmax=lrs.max())
    cmap = plt.get_cmap("viridis")
    for lr in lrs:
        values, stop = _finite_prefix(run(float(lr)), ceiling)
        ax.plot(np.arange(stop), values[:stop], color=cmap(norm(lr)))
    ax.set_yscale("log")
    if ceiling is not None:
        ax.set_ylim(top=ceiling)
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (MSE)")
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.figure.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="learning rate")
    return ax


def _finite_prefix(values, ceiling: float | None = None) -> tuple[np.ndarray, int]:
    """The values as floats, and how many lead before the first inf, nan or
    value above ``ceiling``."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values) & (values <= (np.inf if ceiling is None else ceiling))
    return values, (len(values) if finite.all() else int(np.argmin(finite)))
