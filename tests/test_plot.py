"""gdcourse.plot: loss curves, learning-rate sweeps and optimizer paths."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gdcourse.plot import plot_losses, plot_lr_sweep  # noqa: E402


def test_plot_losses_draws_each_curve_and_marks_divergence():
    ax = plot_losses({"ok": [4.0, 2.0, 1.0], "boom": [1.0, 10.0, np.inf, np.nan]})
    lines = ax.get_lines()
    assert [l.get_label() for l in lines if not l.get_label().startswith("_")] == ["ok", "boom"]
    ok, boom, marker = lines
    assert list(ok.get_ydata()) == [4.0, 2.0, 1.0]
    assert list(boom.get_ydata()) == [1.0, 10.0]  # stops at the first non-finite value
    assert marker.get_marker() == "x" and list(marker.get_ydata()) == [10.0]
    assert ax.get_yscale() == "log"
    plt.close("all")


def test_plot_lr_sweep_calls_run_once_per_rate():
    seen = []

    def run(lr):
        seen.append(lr)
        return [1.0 / (1 + lr * t) for t in range(5)]

    ax = plot_lr_sweep(run, [0.01, 0.1, 1.0])
    assert seen == [0.01, 0.1, 1.0]
    assert len(ax.get_lines()) == 3
    plt.close("all")


def test_plot_paths_draws_contours_and_each_path_up_to_a_step():
    from gdcourse.plot import plot_paths

    loss = lambda a, b: 0.5 * (a ** 2 + 20 * b ** 2)
    paths = {"GD": np.array([[2.0, 1.0], [1.8, -0.8], [1.6, 0.6], [1.5, -0.4]]),
             "Adam": np.array([[2.0, 1.0], [1.9, 0.9], [1.8, 0.8], [1.7, 0.7]])}
    fig, ax = plt.subplots()
    plot_paths(loss, paths, ax=ax, upto=2)
    lines = {l.get_label(): l for l in ax.get_lines()}
    assert lines["GD"].get_xydata().tolist() == paths["GD"][:3].tolist()  # steps 0..2 only
    assert len(lines["Adam"].get_xydata()) == 3
    assert ax.collections, "no contour lines"
    x0, x1 = ax.get_xlim()
    assert x0 < 1.5 and x1 > 2.0, "every point of every path is inside the frame"
    plt.close(fig)
