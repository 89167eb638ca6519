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
