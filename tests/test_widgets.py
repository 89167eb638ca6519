"""gdcourse.widgets: the learning-rate slider and the kernel-free path player."""

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


def test_path_player_embeds_every_frame_and_its_controls_without_a_kernel():
    import re

    import numpy as np

    from gdcourse.widgets import path_player

    loss = lambda a, b: 0.5 * (a ** 2 + 20 * b ** 2)
    path = np.array([[2.0 - 0.1 * t, (-0.8) ** t] for t in range(11)])
    html = path_player(loss, {"GD": path}, steps=10, frames=6, alt='GD "zig-zags" to the minimum').data
    frames = re.findall(r"data:image/jpeg;base64,", html)
    assert len(frames) == 6, len(frames)  # steps 0, 2, 4, 6, 8, 10: drawn now, shown by the page's script
    assert 'type="range"' in html and "<script" in html
    assert '<img alt="GD &quot;zig-zags&quot; to the minimum" ' in html
    assert "application/vnd.jupyter.widget" not in html, "a plain page script: no widget state, no kernel"
    assert not re.findall(r"https?://", html), "nothing from another host (matplotlib's icons came from a CDN)"
    plt.close("all")
