"""Interactive explorers. They are live only with a kernel; every chapter
that shows one also shows a static figure that tells the same story."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt

from gdcourse.plot import plot_losses


def lr_slider(
    run: Callable[[float], Sequence[float]],
    *,
    lr_min: float = 1e-4,
    lr_max: float = 10.0,
    value: float = 0.1,
    steps_per_decade: int = 8,
    description: str = "learning rate",
    ceiling: float | None = None,
):
    """A log-scale learning-rate slider that redraws ``run(lr)``'s loss curve.

    ``run(lr)`` returns one loss history; large rates overflow on purpose, so
    NumPy's overflow warnings are silenced while it runs. ``ceiling`` is passed
    to :func:`gdcourse.plot.plot_losses`. Returns the widget (display it as the
    last expression of a cell).
    """
    import ipywidgets as widgets
    import numpy as np

    if not 0 < lr_min < value < lr_max:
        raise ValueError(f"need 0 < lr_min < value < lr_max, got {lr_min}, {value}, {lr_max}")
    slider = widgets.FloatLogSlider(
        value=value, base=10, min=np.log10(lr_min), max=np.log10(lr_max),
        step=1.0 / steps_per_decade, description=description, readout_format=".2e",
        continuous_update=False, layout=widgets.Layout(width="32em"),
        style={"description_width": "initial"},
    )
    out = widgets.Output()

    def redraw(lr: float) -> None:
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(6.4, 3.6))
            with np.errstate(over="ignore", invalid="ignore"):
                losses = run(lr)
            plot_losses({f"lr = {lr:.2e}": losses}, ax=ax, ceiling=ceiling)
            plt.show()
            plt.close(fig)

    slider.observe(lambda change: redraw(change["new"]), names="value")
    redraw(value)
    return widgets.VBox([slider, out])


def path_player(loss, paths, *, steps: int, alt: str, frames: int = 11, interval: int = 400, **plot_kwargs):
    """The paths of :func:`gdcourse.plot.plot_paths` drawn step by step, with a slider and play buttons
    that work in the page itself, without a kernel: every frame is drawn now and embedded
    (matplotlib's ``to_jshtml``, as JPEG: a tenth of PNG's bytes for contour lines). ``alt`` describes
    the picture for readers who cannot see it. Returns HTML to display as the last expression of a cell."""
    import html as html_escape
    import re

    import numpy as np
    from IPython.display import HTML
    from matplotlib.animation import FuncAnimation

    from gdcourse.plot import plot_paths

    fig, ax = plt.subplots(figsize=plot_kwargs.pop("figsize", (6.8, 4.2)), layout="constrained")
    marks = np.unique(np.linspace(0, steps, frames).round().astype(int))

    def draw(i):
        ax.clear()
        plot_paths(loss, paths, ax=ax, upto=int(marks[i]), title=f"after {marks[i]} steps", **plot_kwargs)

    animation = FuncAnimation(fig, draw, frames=len(marks), interval=interval)
    with plt.rc_context({"animation.frame_format": "jpeg"}):
        html = animation.to_jshtml(default_mode="once")
    plt.close(fig)
    if html.count("<img ") != 1:
        raise RuntimeError("matplotlib's player changed: expected one <img> to label")
    html = html.replace("<img ", f'<img alt="{html_escape.escape(alt)}" ', 1)
    # Its buttons draw Font Awesome icons from a CDN; plain symbols need no other host (the page works offline).
    html = re.sub(r"<link[^>]*font-awesome[^>]*>", "", html)
    for icon, symbol in _PLAYER_ICONS.items():
        html = html.replace(f'<i class="fa {icon}"></i>', symbol)
    if "font-awesome" in html or '<i class="fa ' in html:
        raise RuntimeError("matplotlib's player changed: an icon or the icon font is left")
    return HTML(html)


_PLAYER_ICONS = {"fa-minus": "\u2212", "fa-fast-backward": "\u23ee", "fa-step-backward": "\u25c1",
                 "fa-play fa-flip-horizontal": "\u25c0", "fa-pause": "\u23f8", "fa-play": "\u25b6",
                 "fa-step-forward": "\u25b7", "fa-fast-forward": "\u23ed", "fa-plus": "+"}
