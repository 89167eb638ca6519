"""What training costs: the bytes an optimizer step must read and write per
parameter; the memory held by parameters, gradients, optimizer state and the
activations saved for backward (timing is :mod:`gdcourse.timing`), and what one
rank holds of them when ZeRO shards the state over data-parallel ranks.

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
    """Bytes held between steps for ``n_params`` parameters (activations not included).

    Under ZeRO (``zero_stage`` > 0) the byte fields are what ONE rank holds; ``n_params``
    stays the model's size, so ``bytes_per_param`` is per-rank bytes per model parameter.
    """
    n_params: int
    params: int
    grads: int
    optimizer_state: int
    master_weights: int = 0
    zero_stage: int = 0
    world_size: int = 1

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer_state + self.master_weights

    @property
    def bytes_per_param(self) -> float:
        return self.total / self.n_params if self.n_params else 0.0


ZERO_STAGES = (0, 1, 2, 3)


def shard(n: int, world_size: int) -> int:
    """Elements of an ``n``-element tensor one rank holds when it is split over ``world_size`` ranks.

    ``ceil(n / world_size)``: the tensor is flattened and padded to a multiple of ``world_size``
    (what ZeRO's flat partitions and FSDP's padded dim-0 shards do), so every rank holds the same
    amount and the ranks together hold ``n`` plus at most ``world_size - 1`` padding elements.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    return -(-n // world_size)


def memory_footprint(n_params: int, optimizer: str, *, param_bytes: int = 4, grad_bytes: int | None = None,
                     state_bytes: int = 4, master_weights: bool = False, zero_stage: int = 0,
                     world_size: int = 1) -> Footprint:
    """Parameters + gradients + optimizer state (+ an fp32 master copy when training in 16-bit).

    Mixed-precision Adam, the usual large-model recipe, is
    ``memory_footprint(n, "adam", param_bytes=2, master_weights=True)``:
    2 + 2 + 4 + 4 + 4 = 16 bytes per parameter.

    With ``zero_stage`` and ``world_size`` the result is the bytes held by ONE of ``world_size``
    data-parallel ranks under ZeRO (Rajbhandari et al., 2020): stage 0 is plain data parallelism
    (every rank holds everything); stage 1 shards the optimizer state, and the fp32 master weights
    with it, since they belong to the optimizer; stage 2 also shards the gradients; stage 3 also
    the parameters. A sharded component holds ``shard(n_params, world_size)`` elements
    (``ceil(n_params / world_size)``, see :func:`shard`); an unsharded one all ``n_params``.
    Transient buffers (a gathered layer's parameters under stage 3, communication buckets) are
    not counted.
    """
    if n_params < 0:
        raise ValueError(f"n_params must be non-negative, got {n_params}")
    if zero_stage not in ZERO_STAGES:
        raise ValueError(f"zero_stage must be one of {ZERO_STAGES}, got {zero_stage!r}")
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    grad_bytes = param_bytes if grad_bytes is None else grad_bytes
    sharded = shard(n_params, world_size)
    n_state = sharded if zero_stage >= 1 else n_params
    n_grad = sharded if zero_stage >= 2 else n_params
    n_param = sharded if zero_stage >= 3 else n_params
    return Footprint(
        n_params=n_params,
        params=n_param * param_bytes,
        grads=n_grad * grad_bytes,
        optimizer_state=n_state * state_tensors(optimizer) * state_bytes,
        master_weights=n_state * 4 if master_weights else 0,
        zero_stage=zero_stage,
        world_size=world_size,
    )


def local_bytes(tensor) -> int:
    """Bytes a tensor occupies in this process: for a sharded ``DTensor`` (FSDP2's parameters, their
    gradients and optimizer state) only the local shard, since its ``numel()`` counts the whole tensor."""
    if hasattr(tensor, "to_local"):
        tensor = tensor.to_local()
    return tensor.numel() * tensor.element_size()


def measured_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of tensors actually held in a torch optimizer's state in this process (after at least one
    step); a sharded ``DTensor`` counts its local shard only (see :func:`local_bytes`)."""
    total = 0
    for state in optimizer.state.values():
        for value in state.values():
            if torch.is_tensor(value):
                total += local_bytes(value)
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
