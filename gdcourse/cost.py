"""What training costs: the bytes an optimizer step must read and write per
parameter; the memory held by parameters, gradients, optimizer state and the
activations saved for backward (timing is :mod:`gdcourse.timing`).

The traffic figures are the minimum of a single fused pass over the tensors;
a for-loop implementation also reads and writes intermediate results, which is
why it is slower than the table says (chapter 18 measures by how much).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch

# Per parameter, the full-precision tensors one update touches:
# (read, written) counted in tensors of the state dtype.
_TRAFFIC = {
    # p <- p - lr * g
    "sgd": (("param", "grad"), ("param",)),
    # buf <- mu * buf + g ; p <- p - lr * buf
    "momentum": (("param", "grad", "momentum"), ("param", "momentum")),
    # m <- b1 m + (1-b1) g ; v <- b2 v + (1-b2) g^2 ; p <- p - lr * m_hat / (sqrt(v_hat) + eps)
    "adam": (("param", "grad", "exp_avg", "exp_avg_sq"), ("param", "exp_avg", "exp_avg_sq")),
    # AdamW only adds a decay term to the same pass
    "adamw": (("param", "grad", "exp_avg", "exp_avg_sq"), ("param", "exp_avg", "exp_avg_sq")),
}
OPTIMIZERS = tuple(_TRAFFIC)


def _kind(optimizer: str) -> str:
    key = optimizer.lower()
    if key not in _TRAFFIC:
        raise ValueError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    return key


def state_tensors(optimizer: str) -> int:
    """How many parameter-sized tensors of state the optimizer keeps (0 for SGD, 1 momentum, 2 Adam)."""
    read, _ = _TRAFFIC[_kind(optimizer)]
    return len(read) - 2


def bytes_per_parameter(optimizer: str, dtype_bytes: int = 4) -> dict:
    """Bytes one update reads and writes per parameter (all tensors in one dtype)."""
    read, written = _TRAFFIC[_kind(optimizer)]
    return {"read": len(read) * dtype_bytes, "written": len(written) * dtype_bytes,
            "total": (len(read) + len(written)) * dtype_bytes}


@dataclass(frozen=True)
class Footprint:
    """Bytes held between steps for ``n_params`` parameters (activations not included)."""
    n_params: int
    params: int
    grads: int
    optimizer_state: int
    master_weights: int = 0

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer_state + self.master_weights

    @property
    def bytes_per_param(self) -> float:
        return self.total / self.n_params if self.n_params else 0.0


def memory_footprint(n_params: int, optimizer: str, *, param_bytes: int = 4, grad_bytes: int | None = None,
                     state_bytes: int = 4, master_weights: bool = False) -> Footprint:
    """Parameters + gradients + optimizer state (+ an fp32 master copy when training in 16-bit).

    Mixed-precision Adam, the usual large-model recipe, is
    ``memory_footprint(n, "adam", param_bytes=2, master_weights=True)``:
    2 + 2 + 4 + 4 + 4 = 16 bytes per parameter.
    """
    if n_params < 0:
        raise ValueError(f"n_params must be non-negative, got {n_params}")
    grad_bytes = param_bytes if grad_bytes is None else grad_bytes
    return Footprint(
        n_params=n_params,
        params=n_params * param_bytes,
        grads=n_params * grad_bytes,
        optimizer_state=n_params * state_tensors(optimizer) * state_bytes,
        master_weights=n_params * 4 if master_weights else 0,
    )


def measured_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of tensors actually held in a torch optimizer's state (after at least one step)."""
    total = 0
    for state in optimizer.state.values():
        for value in state.values():
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total


def footprint_table(n_params: int, optimizers=OPTIMIZERS[:3], **kwargs) -> list[dict]:
    """One row per optimizer: MiB of parameters, gradients, state and the total."""
    mib = 2 ** 20
    rows = []
    for name in optimizers:
        fp = memory_footprint(n_params, name, **kwargs)
        rows.append({"optimizer": name, "params_MiB": fp.params / mib, "grads_MiB": fp.grads / mib,
                     "state_MiB": (fp.optimizer_state + fp.master_weights) / mib, "total_MiB": fp.total / mib,
                     "bytes_per_param": fp.bytes_per_param})
    return rows


# --- activation memory --------------------------------------------------------

class _Saved:  # what autograd keeps instead of a tensor while we watch (no grad_fn: no reference cycle)
    __slots__ = ("t", "__weakref__")

    def __init__(self, t):
        self.t = t


class SavedTensors:
    """Bytes of the tensors autograd saves for backward, while they are alive.

        probe = SavedTensors(exclude=[*model.parameters(), x])
        with probe:
            loss = model(x).sum()
        probe.live_bytes()      # activations held until backward frees them

    Storages are counted once (views share them); tensors listed in ``exclude``
    (parameters, the input batch) are not counted because they exist anyway.
    """

    def __init__(self, exclude=()):
        self._exclude = {t.untyped_storage().data_ptr() for t in exclude}
        self._alive: weakref.WeakSet = weakref.WeakSet()
        self.peak = 0
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda s: s.t)

    def _pack(self, t):
        saved = _Saved(t.detach())
        self._alive.add(saved)
        self.peak = max(self.peak, self.live_bytes())
        return saved

    def live_bytes(self) -> int:
        storages = {s.t.untyped_storage().data_ptr(): s.t.untyped_storage().nbytes() for s in list(self._alive)}
        return sum(n for ptr, n in storages.items() if ptr not in self._exclude)

    def __enter__(self):
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)
