"""gdcourse.grading.judge: the frames the harness sends back, read whole or refused."""

import json

import pytest

from gdcourse.grading import judge, wire


def _frame(kind, ident, value) -> bytes:
    data = wire.pack(value)
    return json.dumps({"kind": kind, "id": ident, "size": len(data)}).encode() + b"\n" + data


END = b'{"kind": "end"}\n'


def test_a_clean_stream_is_read_whole():
    cells, calls, complete, problem = judge.read_frames(
        _frame("cell", "fit", {"error": None}) + _frame("call", "c0", {"value": 1.5}) + END)
    assert complete and not problem and calls["c0"]["value"] == 1.5 and cells["fit"]["error"] is None


@pytest.mark.parametrize("stream, problem", [
    (_frame("call", "c0", {"value": 1}), "no end frame"),
    (_frame("call", "c0", {"value": 1}) + _frame("call", "c0", {"value": 2}) + END, "repeated"),
    (b'{"kind": "call", "id": "c0", "size": 99999}\n12' + END, "wrong size"),
    (b'{"kind": "call", "id": "c0", "size": 5}\n12345' + END, "not data"),
    (b"garbage\n" + END, "malformed"),
    (END + b"more", "after the end"),
    (b'{"kind": "verdict", "score": 9}\n' + END, "unknown"),
])
def test_a_forged_or_broken_stream_is_not_complete(stream, problem):
    _, _, complete, why = judge.read_frames(stream)
    assert not complete and problem in why
