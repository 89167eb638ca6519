"""Figures used across the book: loss curves, learning-rate sweeps, optimizer paths on a 2-D loss."""

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


def plot_paths(loss: Callable[[np.ndarray, np.ndarray], np.ndarray], paths: Mapping[str, np.ndarray], *,
               ax=None, extent: tuple[float, float, float, float] | None = None, levels: int = 14,
               upto: int | None = None, title: str | None = None):
    """Contours of a 2-D ``loss(w1, w2)`` and each named optimizer's path over them (d2l's picture).

    ``paths`` maps a name to an array of iterates, shape (steps + 1, 2). ``upto`` draws only the first
    ``upto`` steps (the frames of :func:`gdcourse.widgets.path_player`). ``extent`` is
    (w1_min, w1_max, w2_min, w2_max); by default it frames every path with a margin. Returns the axes.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.8, 4.2), layout="constrained")
    points = np.concatenate([np.asarray(p, dtype=float) for p in paths.values()])
    if extent is None:
        lo, hi = points.min(0), points.max(0)
        pad = 0.12 * (hi - lo) + 1e-9
        extent = (lo[0] - pad[0], hi[0] + pad[0], lo[1] - pad[1], hi[1] + pad[1])
    w1, w2 = np.meshgrid(np.linspace(extent[0], extent[1], 200), np.linspace(extent[2], extent[3], 200))
    z = loss(w1, w2)
    ax.contour(w1, w2, z, levels=np.geomspace(max(z.min(), 1e-3 * z.max()), z.max(), levels),
               colors="0.75", linewidths=0.8)
    for name, path in paths.items():
        path = np.asarray(path, dtype=float)[: None if upto is None else upto + 1]
        ax.plot(path[:, 0], path[:, 1], "-o", markersize=2.5, linewidth=1.3, label=name)
    ax.plot(0, 0, "k*", markersize=9)
    ax.set(xlim=extent[:2], ylim=extent[2:], xlabel="$w_1$", ylabel="$w_2$")
    if title:
        ax.set_title(title)
    ax.legend(frameon=False, loc="upper right")
    return ax
