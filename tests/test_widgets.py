"""gdcourse.widgets: the learning-rate slider."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


def test_lr_slider_redraws_with_the_chosen_rate():
    from gdcourse.widgets import lr_slider

    seen = []

    def run(lr):
        seen.append(lr)
        return [1.0, 0.5]

    box = lr_slider(run, lr_min=1e-3, lr_max=1.0, value=0.01)
    slider = box.children[0]
    assert seen == [0.01]
    slider.value = 0.1
    assert seen[-1] == pytest.approx(0.1)
    with pytest.raises(ValueError):
        lr_slider(run, lr_min=1.0, lr_max=0.1, value=0.5)
    plt.close("all")
