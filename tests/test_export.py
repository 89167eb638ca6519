"""gdcourse.grading.export: what leaves the grader as CSV cannot run as a formula."""

import pytest

from gdcourse.grading import export


@pytest.mark.parametrize("cell, shown", [("=1+2", "'=1+2"), ("+cmd", "'+cmd"), ("@SUM(A1)", "'@SUM(A1)"),
                                         ("-3.5", "-3.5"), ("ada", "ada"), (None, ""), (7.0, "7.0")])
def test_csv_cells_are_defused(cell, shown):
    assert export.defused(cell) == shown
