import numpy as np
import pytest

from gdcourse import clipping, optim
from gdcourse.clipping import clip_by_global_norm as imported_early
from gdcourse.reference_guard import MESSAGE, forbid_reference


def test_guard_catches_every_route_to_the_reference_and_restores_it():
    grads = [np.ones(3)]
    opt = optim.SGD(lr=0.1, momentum=0.9)
    with forbid_reference(clipping.clip_by_global_norm, optim.SGD):
        for call in (lambda: clipping.clip_by_global_norm(grads, 1.0),
                     lambda: imported_early(grads, 1.0),
                     lambda: opt.step([np.ones(3)], grads, {"t": 0, "velocity": [np.zeros(3)]}),
                     lambda: optim.SGD(lr=0.1).init([np.ones(3)])):
            with pytest.raises(AssertionError, match="reference implementation"):
                call()
        # an honest implementation is unaffected
        assert np.isclose(np.linalg.norm(grads[0] / np.linalg.norm(grads[0])), 1.0)
    clipped, norm = imported_early(grads, 1.0)
    assert norm == pytest.approx(np.sqrt(3))
    assert opt.init([np.ones(2)])["t"] == 0
    assert "reference implementation" in MESSAGE


def test_guard_restores_even_when_the_body_fails():
    with pytest.raises(ZeroDivisionError):
        with forbid_reference(optim.Adam):
            1 / 0
    assert optim.Adam().init([np.ones(1)])["t"] == 0


def test_guard_rejects_what_it_cannot_guard():
    with pytest.raises(TypeError):
        with forbid_reference(42):
            pass


def test_message_constant_matches_what_the_guard_raises():
    from gdcourse import reference_guard

    with pytest.raises(AssertionError) as info:
        reference_guard._poison()
    assert str(info.value) == MESSAGE
