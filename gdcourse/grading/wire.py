"""Values as data, both ways across the sandbox wall.

One message is an ``.npz`` archive: a JSON tree (stored as a uint8 array
``__tree__``) whose arrays stand in the archive beside it. The sandbox side
(:func:`pack`) turns whatever a student's function returned into that form;
the trusted side (:func:`unpack`) reads it with ``allow_pickle=False``,
caps its size, and accepts only the node kinds below, so nothing the
student made can run, or point anywhere, on the trusted side.

Node kinds: JSON scalars and lists; ``{"t": "tuple" | "dict" | "array" |
"tensor" | "scalar" | "error" | "object", ...}``.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass

import numpy as np

MAX_BYTES = 64 * 2**20  # one message, unpacked
MAX_NODES = 200_000
MAX_DEPTH = 32


class WireError(ValueError):
    """A message that is not what the other side may send."""


@dataclass(frozen=True)
class Tensor:
    """A torch tensor as the trusted side sees it: its values, dtype name, device type and grad flag."""

    array: np.ndarray
    dtype: str
    device: str = "cpu"
    requires_grad: bool = False


@dataclass(frozen=True)
class Raised:
    """An exception raised on the sandbox side: its type name and message, nothing else."""

    type: str
    message: str

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass(frozen=True)
class Opaque:
    """A value with no data form (a model, a generator): only its type name crosses."""

    type: str


# --- sandbox side --------------------------------------------------------------

def pack(value) -> bytes:
    """``value`` as one message (called in the sandbox, on anything a student's code returned)."""
    arrays: dict[str, np.ndarray] = {}

    def array(a: np.ndarray) -> str:
        key = f"a{len(arrays)}"
        arrays[key] = np.asarray(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        return key

    def node(v, depth=0):
        if depth > MAX_DEPTH:
            return {"t": "object", "type": "too deeply nested"}
        if v is None or isinstance(v, (bool, str)):
            return v
        if type(v) is int:
            return v if abs(v) < 2**63 else {"t": "object", "type": "int (too large)"}
        if type(v) is float:
            return {"t": "scalar", "dtype": "float", "v": repr(v)}
        if isinstance(v, BaseException):
            return {"t": "error", "type": type(v).__name__, "message": str(v)[:2000]}
        if isinstance(v, np.generic):
            if v.dtype.kind in "biufc":
                return {"t": "scalar", "dtype": v.dtype.name, "a": array(np.asarray(v))}
            return {"t": "object", "type": type(v).__name__}
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in "biufc":
                return {"t": "object", "type": f"ndarray of {v.dtype}"}
            return {"t": "array", "a": array(v)}
        if isinstance(v, Tensor):  # a tensor the judge sends as an argument
            return {"t": "tensor", "a": array(v.array), "dtype": v.dtype, "device": v.device, "grad": v.requires_grad}
        tensor = _tensor(v)
        if tensor is not None:
            return tensor if isinstance(tensor, dict) else {
                "t": "tensor", "a": array(tensor[0]), "dtype": tensor[1], "device": tensor[2], "grad": tensor[3]}
        if isinstance(v, tuple):
            return {"t": "tuple", "items": [node(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return [node(x, depth + 1) for x in v]
        if isinstance(v, dict):
            return {"t": "dict", "items": [[node(k, depth + 1), node(x, depth + 1)] for k, x in v.items()]}
        return {"t": "object", "type": type(v).__name__}

    tree = json.dumps(node(value), allow_nan=False).encode()
    buffer = io.BytesIO()
    np.savez(buffer, __tree__=np.frombuffer(tree, dtype=np.uint8), **arrays)
    return buffer.getvalue()


def _tensor(v):
    """(values, dtype, device type, requires_grad) of a torch tensor, or None if ``v`` is not one."""
    torch = __import__("sys").modules.get("torch")
    if torch is None or not isinstance(v, torch.Tensor):
        return None
    t = v.detach()
    dtype = str(t.dtype).removeprefix("torch.")
    if t.is_complex() or t.dtype == torch.bool or not (t.is_floating_point() or t.dtype in _INTS(torch)):
        values = t.cpu().numpy() if t.dtype == torch.bool else t.cpu().to(torch.float64).numpy()
    elif t.dtype in (torch.bfloat16, torch.float16) or str(t.dtype).startswith("torch.float8"):
        values = t.cpu().to(torch.float32).numpy()  # exact: every bf16/fp16/fp8 value is a float32
    else:
        values = t.cpu().numpy()
    return values, dtype, t.device.type, bool(v.requires_grad)


def _INTS(torch):
    return (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


# --- trusted side ----------------------------------------------------------------

def unpack(data: bytes):
    """The value in a message, as plain Python/NumPy data; :class:`WireError` for anything else."""
    if len(data) > MAX_BYTES:
        raise WireError(f"message of {len(data):,} bytes (at most {MAX_BYTES:,})")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            if sum(i.file_size for i in z.infolist()) > MAX_BYTES:
                raise WireError("message unpacks to more than the limit")
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        arrays = {k: archive[k] for k in archive.files}
    except WireError:
        raise
    except Exception as exc:  # not a zip, a pickled member, a bad header: all the same to us
        raise WireError(f"not a message ({type(exc).__name__}: {str(exc)[:200]})") from None
    tree = arrays.pop("__tree__", None)
    if tree is None or tree.dtype != np.uint8 or tree.ndim != 1:
        raise WireError("message without its tree")
    try:
        root = json.loads(tree.tobytes().decode("utf-8"))
    except ValueError as exc:
        raise WireError(f"tree is not JSON ({exc})") from None
    count = [0]

    def arr(key) -> np.ndarray:
        a = arrays.get(key) if isinstance(key, str) else None
        if a is None or a.dtype.kind not in "biufc":
            raise WireError(f"bad array reference {key!r}")
        return a

    def text(x, limit=2000) -> str:
        if not isinstance(x, str):
            raise WireError("expected a string")
        return x[:limit]

    def node(n, depth=0):
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH + 2:
            raise WireError("message too large or too deep")
        if n is None or isinstance(n, (bool, str)) or type(n) is int:
            return n
        if isinstance(n, list):
            return [node(x, depth + 1) for x in n]
        if not isinstance(n, dict):
            raise WireError(f"unexpected node {type(n).__name__}")
        kind = n.get("t")
        if kind == "scalar":
            if n.get("dtype") == "float":
                try:
                    return float(text(n.get("v"), 64))
                except ValueError:
                    raise WireError("bad float") from None
            a = arr(n.get("a"))
            if a.ndim != 0:
                raise WireError("scalar with a shape")
            return a[()]
        if kind == "array":
            return arr(n.get("a"))
        if kind == "tensor":
            return Tensor(arr(n.get("a")), text(n.get("dtype"), 40), text(n.get("device", "cpu"), 40),
                          n.get("grad") is True)
        if kind == "tuple":
            items = n.get("items")
            if not isinstance(items, list):
                raise WireError("tuple without items")
            return tuple(node(x, depth + 1) for x in items)
        if kind == "dict":
            items = n.get("items")
            if not isinstance(items, list) or not all(isinstance(p, list) and len(p) == 2 for p in items):
                raise WireError("dict without pairs")
            out = {}
            for k, v in items:
                key = node(k, depth + 1)
                try:
                    out[key] = node(v, depth + 1)
                except TypeError:
                    raise WireError("unhashable dict key") from None
            return out
        if kind == "error":
            return Raised(text(n.get("type"), 200), text(n.get("message", "")))
        if kind == "object":
            return Opaque(text(n.get("type"), 200))
        raise WireError(f"unknown node kind {kind!r}")

    return node(root)

