"""gdcourse.grading.cases: checks compare values, not forms."""

import numpy as np
import pytest

from gdcourse.grading import wire
from gdcourse.grading.cases import Fail, Result, close, number, rel_error, unchanged


def test_checks_compare_values_not_forms():
    close([1.0, 2.0 + 1e-12], np.array([1.0, 2.0]), rtol=1e-10)
    close(wire.Tensor(np.array([3.0]), "float32"), [3.0], rtol=0)
    with pytest.raises(Fail, match="shape"):
        close(np.zeros((2, 1)), np.zeros(2), rtol=1)
    with pytest.raises(Fail, match="should be numbers"):
        close(wire.Opaque("generator"), [1.0], rtol=1)
    with pytest.raises(Fail, match="expected"):
        close([1.0, np.nan], [1.0, 2.0], rtol=1e-3)
    assert number(np.array([2.5])) == 2.5 and rel_error([1.0, np.inf], [1.0, np.inf]) == 0.0
    with pytest.raises(Fail, match="was modified"):
        unchanged(Result(None, (np.array([1.0, 9.0]),)), 0, [1.0, 2.0], "w")
