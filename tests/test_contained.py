"""gdcourse.grading.contained: trusted code on a student's data, in a sandbox of its own."""

import pytest


def test_a_contained_call_brings_back_data_and_contains_a_memory_bomb():
    """Trusted code on a student's data (ONNX Runtime on an exported file) runs outside the grader."""
    from gdcourse.grading import contained

    assert contained.call("numpy:arange", 3).tolist() == [0, 1, 2]
    with pytest.raises(contained.ContainedError, match="(?i)memory"):
        contained.call("numpy:ones", 10**10, seconds=60, memory_mb=400)  # 80 GB of float64
    with pytest.raises(contained.ContainedError, match="TypeError"):
        contained.call("numpy:arange", "not a number")
