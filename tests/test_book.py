"""gdcourse.book: glue hands the book plain numbers."""

import numpy as np

from gdcourse.book import glue


def test_glue_hands_the_book_plain_numbers(monkeypatch):
    seen = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: seen.setdefault(name, value))
    glue("x", np.float64(0.25))
    glue("n", np.int64(3))
    assert type(seen["x"]) is float and type(seen["n"]) is int
    assert f"{seen['x']:.2f}" == "0.25"


def test_glue_returns_nothing_so_a_cell_shows_no_stray_value(monkeypatch):
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: None)
    assert glue("x", 1.5) is None
