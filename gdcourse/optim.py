"""NumPy reference optimizers, one contract for all of them (and for every loop in the course):

    opt = Adam(lr=1e-3)
    state = opt.init(params)          # params: a list of float arrays
    opt.step(params, grads, state)    # updates params and state in place; returns nothing

That is ``torch.optim``'s shape: an optimizer is its hyperparameters, ``init`` makes its state,
``step`` changes the parameters where they are (no copies, no return value to forget). ``step``
accepts ``lr=`` to override the learning rate for that step, which is how a schedule
(:mod:`gdcourse.schedules`, ``lr = schedule(t)``) drives an optimizer.

Each class is a frozen dataclass of hyperparameters with PyTorch's defaults and PyTorch's update
rule, written out line by line; ``tests/test_optim.py`` checks every one against ``torch.optim``
in float64 (relative error <= 1e-7 over many steps). Updates reuse one scratch buffer per
parameter, so the reference is also fast enough to benchmark against torch.

The exercises ask for the other shape a textbook writes, a pure function of one array
(``adam_step(w, g, state, lr) -> (w_new, state_new)``, ex03 and ex04). :class:`PerArray` turns
such a function into an optimizer of this contract, so a student's ``adam_step`` can stand in
for :class:`Adam` in any chapter's loop. Used in chapters 5 to 9 and by
:func:`gdcourse.diagnostics.lr_range_test`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


def _check(params, grads):
    if len(params) != len(grads):
        raise ValueError(f"got {len(params)} parameters but {len(grads)} gradients")
    for i, (p, g) in enumerate(zip(params, grads)):
        if not isinstance(p, np.ndarray) or p.dtype.kind != "f":
            raise TypeError(f"parameter {i} must be a float NumPy array (updated in place), got {type(p).__name__}")
        if np.shape(g) != p.shape:
            raise ValueError(f"gradient {i} has shape {np.shape(g)}, parameter has {p.shape}")


def _zeros(params):
    return [np.zeros_like(p) for p in params]


@dataclass(frozen=True)
class SGD:
    """SGD with optional momentum (heavy ball or Nesterov), as ``torch.optim.SGD``.

    PyTorch's momentum form: ``buf = momentum * buf + (1 - dampening) * g`` (the
    first step sets ``buf = g``) and ``p -= lr * buf``; the learning rate
    multiplies the velocity, not the gradient inside it.
    """

    lr: float = 1e-3
    momentum: float = 0.0
    dampening: float = 0.0
    weight_decay: float = 0.0
    nesterov: bool = False

    def __post_init__(self):
        if self.nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")

    def init(self, params):
        return {"t": 0, "velocity": _zeros(params) if self.momentum else None}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        for i, (p, g) in enumerate(zip(params, grads)):
            d = g + self.weight_decay * p if self.weight_decay else g
            if self.momentum:
                buf = state["velocity"][i]
                if state["t"] == 1:
                    buf[...] = d
                else:
                    buf *= self.momentum
                    buf += (1 - self.dampening) * d
                d = d + self.momentum * buf if self.nesterov else buf
            p -= lr * d


@dataclass(frozen=True)
class Adam:
    """Adam with bias correction, as ``torch.optim.Adam`` (amsgrad not included).

    ``weight_decay`` is L2 (added to the gradient, so it is rescaled by the
    adaptive denominator); ``decoupled=True`` is AdamW (the weights shrink by
    ``lr * weight_decay`` directly). ``eps`` is added *outside* the square root.
    """

    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    decoupled: bool = False

    def init(self, params):
        return {"t": 0, "m": _zeros(params), "v": _zeros(params), "scratch": _zeros(params)}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        b1, b2 = self.betas
        state["t"] += 1
        t = state["t"]
        step_size = lr / (1 - b1**t)
        sqrt_bc2 = math.sqrt(1 - b2**t)
        for p, g, m, v, tmp in zip(params, grads, state["m"], state["v"], state["scratch"]):
            if self.weight_decay and self.decoupled:
                p *= 1 - lr * self.weight_decay
            elif self.weight_decay:
                g = g + self.weight_decay * p
            m *= b1                                   # m = b1 m + (1 - b1) g
            np.multiply(g, 1 - b1, out=tmp)
            m += tmp
            v *= b2                                   # v = b2 v + (1 - b2) g^2
            np.multiply(g, g, out=tmp)
            tmp *= 1 - b2
            v += tmp
            np.sqrt(v, out=tmp)                       # denom = sqrt(v) / sqrt(bc2) + eps
            tmp /= sqrt_bc2
            tmp += self.eps
            np.divide(m, tmp, out=tmp)                # p -= lr / bc1 * m / denom
            tmp *= step_size
            p -= tmp


def AdamW(lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2) -> Adam:
    """Adam with decoupled weight decay, as ``torch.optim.AdamW`` (default decay 0.01)."""
    return Adam(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, decoupled=True)


@dataclass(frozen=True)
class RMSprop:
    """RMSprop as ``torch.optim.RMSprop``: ``v = alpha v + (1 - alpha) g^2``,
    ``p -= lr * g / (sqrt(v) + eps)``; optional momentum and centering."""

    lr: float = 1e-2
    alpha: float = 0.99
    eps: float = 1e-8
    weight_decay: float = 0.0
    momentum: float = 0.0
    centered: bool = False

    def init(self, params):
        return {"t": 0, "v": _zeros(params),
                "g_avg": _zeros(params) if self.centered else None,
                "velocity": _zeros(params) if self.momentum else None}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        for i, (p, g) in enumerate(zip(params, grads)):
            if self.weight_decay:
                g = g + self.weight_decay * p
            v = state["v"][i]
            v *= self.alpha
            v += (1 - self.alpha) * g * g
            if self.centered:
                g_avg = state["g_avg"][i]
                g_avg *= self.alpha
                g_avg += (1 - self.alpha) * g
                denom = np.sqrt(v - g_avg * g_avg) + self.eps
            else:
                denom = np.sqrt(v) + self.eps
            if self.momentum:
                buf = state["velocity"][i]
                buf *= self.momentum
                buf += g / denom
                p -= lr * buf
            else:
                p -= lr * g / denom


@dataclass(frozen=True)
class Adagrad:
    """AdaGrad as ``torch.optim.Adagrad``: the squared gradients are summed,
    never forgotten, so the effective step only shrinks."""

    lr: float = 1e-2
    lr_decay: float = 0.0
    weight_decay: float = 0.0
    initial_accumulator_value: float = 0.0
    eps: float = 1e-10

    def init(self, params):
        return {"t": 0, "sum": [np.full_like(p, self.initial_accumulator_value) for p in params]}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        clr = lr / (1 + (state["t"] - 1) * self.lr_decay)
        for p, g, s in zip(params, grads, state["sum"]):
            if self.weight_decay:
                g = g + self.weight_decay * p
            s += g * g
            p -= clr * g / (np.sqrt(s) + self.eps)


@dataclass(frozen=True)
class PerArray:
    """An optimizer of this module's contract from a pure update of one array.

    ``update(w, g, s, lr) -> (w_new, s_new)`` leaves its inputs alone; ``init_state(w) -> s`` is the
    state before the first step (``None`` is fine). For ex04's ``adam_step`` and ``init_state``:
    ``PerArray(adam_step, init_state, lr=1e-3)``; for ex03's ``momentum_step``:
    ``PerArray(lambda w, g, v, lr: momentum_step(w, g, v, lr, 0.9), lambda w: None, lr=0.1)``.
    """

    update: Callable[[np.ndarray, np.ndarray, Any, float], tuple]
    init_state: Callable[[np.ndarray], Any]
    lr: float = 1e-3

    def init(self, params):
        return {"t": 0, "per_array": [self.init_state(p.copy()) for p in params]}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        for i, (p, g) in enumerate(zip(params, grads)):
            new, state["per_array"][i] = self.update(p.copy(), np.array(g, dtype=p.dtype), state["per_array"][i], lr)
            p[...] = new


def state_bytes(state) -> int:
    """Bytes held by an optimizer's state arrays (the scratch buffer excluded:
    it is this implementation's workspace, not state an optimizer must keep)."""
    total = 0
    for key, value in state.items():
        if key != "scratch" and isinstance(value, list):
            total += sum(a.nbytes for a in value)
    return total
