"""gdcourse.grading.wire: values cross the sandbox wall as data, and anything but data is refused."""

import io
import zipfile

import numpy as np
import pytest

from gdcourse.grading import wire


def test_values_cross_as_data_and_keep_their_kind():
    value = {"w": np.arange(6.0).reshape(2, 3), "t": (1, 2.5, np.float32(3.5), None, True, "s"),
             "nested": [[np.int64(4)], {"k": np.zeros(0)}], "err": ValueError("bad <x>"), "obj": object()}
    got = wire.unpack(wire.pack(value))
    assert np.array_equal(got["w"], value["w"]) and got["w"].dtype == np.float64
    assert got["t"][:2] == (1, 2.5) and type(got["t"][1]) is float
    assert got["t"][2] == np.float32(3.5) and got["t"][2].dtype == np.float32 and got["t"][3:] == (None, True, "s")
    assert got["nested"][0][0] == 4 and got["nested"][1]["k"].shape == (0,)
    assert got["err"] == wire.Raised("ValueError", "bad <x>")
    assert got["obj"] == wire.Opaque("object")


def test_torch_tensors_arrive_as_values_with_their_dtype():
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -2.0], dtype=torch.bfloat16, requires_grad=True)
    got = wire.unpack(wire.pack(t))
    assert isinstance(got, wire.Tensor) and got.dtype == "bfloat16" and got.requires_grad
    assert np.array_equal(got.array, [1.5, -2.0])


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize("data", [
    b"not a zip at all",
    _npz(__tree__=np.frombuffer(b'{"t": "array", "a": "a0"}', np.uint8), a0=np.array([object()], dtype=object)),
    _npz(__tree__=np.frombuffer(b'{"t": "array", "a": "missing"}', np.uint8)),
    _npz(__tree__=np.frombuffer(b'{"t": "exec", "code": "import os"}', np.uint8)),
    _npz(__tree__=np.frombuffer(b'{"t": "dict", "items": [[[1], 2]]}', np.uint8)),
    _npz(other=np.zeros(3)),
])
def test_anything_but_data_is_refused(data):
    with pytest.raises(wire.WireError):
        wire.unpack(data)


def test_a_zip_bomb_is_refused_before_it_is_unpacked():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("__tree__.npy", b"\0" * (wire.MAX_BYTES + 1))
    with pytest.raises(wire.WireError, match="limit"):
        wire.unpack(buffer.getvalue())
