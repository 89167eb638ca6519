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


# ---------------------------------------------------------------------------------------------
# Optimizers after Adam (chapter 23). Same contract as above: frozen dataclass, init -> state,
# step updates in place. Muon and Adafactor follow torch.optim line by line (tests compare them
# in float64); Lion and Shampoo have no torch.optim class and are tested against their papers.
# ---------------------------------------------------------------------------------------------

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # Jordan et al. (2024), tuned for speed, not exactness


def newton_schulz(G, steps: int = 5, eps: float = 1e-7, coefficients=NS_COEFFICIENTS) -> np.ndarray:
    """Muon's quintic Newton-Schulz map: approximately ``U V^T`` for ``G = U S V^T``, matmuls only.

    Each step applies ``x -> a x + b x^3 + c x^5`` to every singular value at once
    (``X <- a X + (b A + c A^2) X`` with ``A = X X^T``), so no SVD is needed. Dividing by the
    Frobenius norm first puts every singular value in (0, 1], where the polynomial pushes them
    towards 1; the coefficients overshoot on purpose, leaving values in about [0.7, 1.2] after
    five steps. A tall matrix is transposed so that ``A`` is the smaller Gram matrix. As
    ``torch.optim.Muon`` does it, except that this runs in the input's float precision
    (float64 here) and torch runs the iteration in bfloat16.
    """
    if np.ndim(G) != 2:
        raise ValueError(f"Newton-Schulz needs a 2-D matrix, got shape {np.shape(G)}")
    a, b, c = coefficients
    X = np.array(G, dtype=np.result_type(G, np.float32), copy=True)
    tall = X.shape[0] > X.shape[1]
    if tall:
        X = X.T
    X /= max(float(np.linalg.norm(X)), eps)   # Frobenius norm >= spectral norm, so sigma_max <= 1
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * (A @ A)) @ X
    return X.T if tall else X


@dataclass(frozen=True)
class Muon:
    """Muon (momentum, then orthogonalise), as ``torch.optim.Muon``; 2-D weight matrices only.

    ``buf = momentum buf + (1 - momentum) g``; the Nesterov update is ``(1 - momentum) g +
    momentum buf``; it is replaced by ``newton_schulz(update)``, whose singular values are all
    near 1, so every direction of the matrix moves by about the same amount: the fix for
    ill-conditioning that a per-coordinate (diagonal) method cannot see when it is rotated.
    ``p *= 1 - lr weight_decay`` (decoupled), then ``p -= lr sqrt(max(1, rows/cols)) O``
    (``adjust_lr_fn=None`` or ``"original"``; ``"match_rms_adamw"`` uses ``0.2 sqrt(max(rows, cols))``).

    Muon is for hidden layers' matrices. As torch's documentation prescribes, biases, gains,
    embeddings (and, in practice, the output head) go to AdamW in a second parameter group:
    ``[p for p in params if p.ndim == 2 and not head]`` to Muon, the rest to :func:`AdamW`.
    """

    lr: float = 1e-3
    weight_decay: float = 0.1
    momentum: float = 0.95
    nesterov: bool = True
    ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS
    eps: float = 1e-7
    ns_steps: int = 5
    adjust_lr_fn: str | None = None

    def __post_init__(self):
        if self.adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"adjust_lr_fn must be None, 'original' or 'match_rms_adamw', got {self.adjust_lr_fn!r}")

    def init(self, params):
        for i, p in enumerate(params):
            if np.ndim(p) != 2:
                raise ValueError(f"Muon takes 2-D parameters only; parameter {i} has shape {np.shape(p)} (give it to AdamW)")
        return {"t": 0, "momentum_buffer": _zeros(params)}

    def _scale(self, shape):
        rows, cols = shape
        if self.adjust_lr_fn == "match_rms_adamw":
            return 0.2 * math.sqrt(max(rows, cols))
        return math.sqrt(max(1.0, rows / cols))     # a tall matrix's O has entries ~1/sqrt(rows)

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        mu = self.momentum
        for p, g, buf in zip(params, grads, state["momentum_buffer"]):
            buf *= mu                                  # buf = mu buf + (1 - mu) g  (torch's lerp_)
            buf += (1 - mu) * g
            update = (1 - mu) * g + mu * buf if self.nesterov else buf
            O = newton_schulz(update, self.ns_steps, self.eps, self.ns_coefficients)
            p *= 1 - lr * self.weight_decay            # decay uses the unscaled rate, as torch does
            p -= lr * self._scale(p.shape) * O


@dataclass(frozen=True)
class Lion:
    """Lion (Chen et al. 2023, Algorithm 2): the sign of an interpolation, one buffer.

    ``c = beta1 m + (1 - beta1) g``; ``p -= lr (sign(c) + weight_decay p)``; then
    ``m = beta2 m + (1 - beta2) g``. Every coordinate moves by exactly ``lr`` (plus decay), so
    the update's RMS is 1, several times AdamW's: hence the paper's advice of a 3-10x smaller
    rate and a 3-10x larger decay (their product sets the equilibrium weight norm). Half
    Adam's state: ``m`` only. Defaults are the paper's (and the ``lion-pytorch`` package's).
    """

    lr: float = 1e-4
    betas: tuple[float, float] = (0.9, 0.99)
    weight_decay: float = 0.0

    def init(self, params):
        return {"t": 0, "m": _zeros(params), "scratch": _zeros(params)}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        b1, b2 = self.betas
        state["t"] += 1
        for p, g, m, c in zip(params, grads, state["m"], state["scratch"]):
            np.multiply(m, b1, out=c)                 # c = b1 m + (1 - b1) g
            c += (1 - b1) * g
            np.sign(c, out=c)
            if self.weight_decay:
                p *= 1 - lr * self.weight_decay       # = p - lr wd p, decoupled as in AdamW
            c *= lr
            p -= c
            m *= b2                                   # m = b2 m + (1 - b2) g, after the update
            m += (1 - b2) * g


@dataclass(frozen=True)
class Adafactor:
    """Adafactor as ``torch.optim.Adafactor`` (no first moment; relative step; update clipping).

    For a matrix (the last two axes of any array with ``ndim >= 2``) the second moment is kept
    as a row mean ``r`` (rows x 1) and a column mean ``c`` (1 x cols) of ``g^2``, and rebuilt as
    the rank-1 ``r c / mean(r)``: rows + cols numbers instead of rows x cols (Shazeer & Stern
    2018). Vectors keep a full ``v``. The averaging weight is ``1 - beta2_t = t^beta2_decay``;
    the step is ``max(eps2, RMS(p)) min(lr, 1/sqrt(t))`` (relative to the weights' size), and
    the update ``g / sqrt(v_hat)`` is shrunk when its RMS exceeds ``d``. ``eps[0] = None`` means
    the dtype's machine epsilon, as in torch.
    """

    lr: float = 1e-2
    beta2_decay: float = -0.8
    eps: tuple[float | None, float] = (None, 1e-3)
    d: float = 1.0
    weight_decay: float = 0.0

    def init(self, params):
        def factor(p, axis):
            return np.zeros(p.shape[:axis] + (1,) + p.shape[axis + 1:], p.dtype) if p.ndim > 1 else np.zeros(0, p.dtype)
        return {"t": 0,
                "row_var": [factor(p, p.ndim - 1) for p in params],     # (..., rows, 1)
                "col_var": [factor(p, p.ndim - 2) for p in params],     # (..., 1, cols)
                "variance": [np.zeros_like(p) if p.ndim <= 1 else np.zeros(0, p.dtype) for p in params]}

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        t = state["t"]
        weight = t ** self.beta2_decay               # 1 - beta2_t: 1 at t = 1, then t^-0.8
        rho = min(lr, 1 / math.sqrt(t))
        for i, (p, g) in enumerate(zip(params, grads)):
            eps1 = np.finfo(p.dtype).eps if self.eps[0] is None else self.eps[0]
            alpha = max(self.eps[1], float(np.linalg.norm(p)) / math.sqrt(p.size)) * rho  # before decay
            if self.weight_decay:
                p *= 1 - lr * self.weight_decay
            if p.ndim > 1:
                r, c = state["row_var"][i], state["col_var"][i]
                r += weight * (np.mean(g * g, axis=-1, keepdims=True) - r)   # lerp towards the row mean
                c += weight * (np.mean(g * g, axis=-2, keepdims=True) - c)
                v_hat = (r @ c) / np.maximum(np.mean(r, axis=-2, keepdims=True), eps1)
            else:
                v = state["variance"][i]
                v += weight * (g * g - v)
                v_hat = v.copy()
            update = g / np.sqrt(np.maximum(v_hat, eps1 * eps1))
            clip = max(1.0, float(np.linalg.norm(update)) / (math.sqrt(update.size) * self.d))
            p -= (alpha / clip) * update


@dataclass(frozen=True)
class Shampoo:
    """A small Shampoo (Gupta et al. 2018, Algorithm 1) for 2-D parameters; no torch.optim class.

    ``L += G G^T`` (rows x rows), ``R += G^T G`` (cols x cols), both starting at ``eps I``;
    ``p -= lr L^{-1/4} G R^{-1/4}``, the roots from an eigendecomposition. A full-matrix
    preconditioner per side, so it sees rotated curvature that Adam's diagonal cannot; at the
    first step the update is exactly ``U V^T`` (Muon's target) up to eps. State: rows^2 + cols^2
    numbers per matrix. Production versions (distributed Shampoo, SOAP) add grafting, momentum and
    roots recomputed every k steps; this one recomputes them every step.
    """

    lr: float = 1e-3
    eps: float = 1e-6

    def init(self, params):
        for i, p in enumerate(params):
            if np.ndim(p) != 2:
                raise ValueError(f"this Shampoo takes 2-D parameters only; parameter {i} has shape {np.shape(p)}")
        return {"t": 0,
                "L": [self.eps * np.eye(p.shape[0], dtype=p.dtype) for p in params],
                "R": [self.eps * np.eye(p.shape[1], dtype=p.dtype) for p in params]}

    @staticmethod
    def _inverse_root(M, k=4):
        w, Q = np.linalg.eigh(M)                  # M is symmetric positive definite
        return (Q * np.maximum(w, np.finfo(M.dtype).tiny) ** (-1.0 / k)) @ Q.T

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        lr = self.lr if lr is None else lr
        state["t"] += 1
        for p, g, L, R in zip(params, grads, state["L"], state["R"]):
            L += g @ g.T
            R += g.T @ g
            p -= lr * (self._inverse_root(L) @ g @ self._inverse_root(R))


# ---------------------------------------------------------------------------------------------
# Schedules after cosine (chapter 22): Schedule-Free AdamW and an EMA of the weights. Same
# contract; ScheduleFreeAdamW adds eval_params / train_params, as schedulefree's
# optimizer.eval() / .train(); tests compare it with schedulefree.AdamWScheduleFreeReference and
# WeightEMA with torch.optim.swa_utils.AveragedModel(get_ema_multi_avg_fn) in float64.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleFreeAdamW:
    """Schedule-Free AdamW (Defazio et al. 2024), as ``schedulefree.AdamWScheduleFreeReference``.

    Three sequences per parameter: ``z`` takes AdamW's steps (constant rate, no schedule); ``x``
    is a running average of the ``z``'s, ``x = (1 - c) x + c z`` with ``c = w_t / sum(w)`` and
    ``w_t = (t^r) lr_max^weight_lr_power`` (uniform after warm-up, when ``r = 0``); the gradient
    is taken at ``y = beta1 x + (1 - beta1) z``, between the two. The average does what a
    schedule's decay would do, so no run length is needed; ``beta1`` plays momentum's part
    (there is no first moment ``m``). Weight decay is ``lr weight_decay y``, applied to ``z``.

    **Where the weights are.** During training ``params`` hold ``y`` (the gradient's point, as
    in schedulefree's ``train()`` mode). ``x`` is what to evaluate and deploy:
    ``eval_params(params, state)`` puts ``x`` into ``params``; ``train_params`` puts ``y`` back.
    ``step`` refuses to run in eval mode, and evaluating at ``y`` instead of ``x`` (or keeping
    batch-norm statistics gathered at ``y``) is the trap chapter 22 measures. ``warmup_steps``
    scales the rate by ``(t + 1) / warmup_steps`` for the first steps, as schedulefree does;
    ``lr=`` in ``step`` replaces ``lr`` before that factor.
    """

    lr: float = 0.0025
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    warmup_steps: int = 0
    r: float = 0.0
    weight_lr_power: float = 2.0

    def init(self, params):
        return {"t": 0, "z": [p.copy() for p in params], "x": [p.copy() for p in params],
                "v": _zeros(params), "weight_sum": 0.0, "lr_max": -1.0, "train_mode": True}

    def _y(self, params, state):
        b1 = self.betas[0]
        for p, x, z in zip(params, state["x"], state["z"]):
            np.multiply(x, b1, out=p)                 # y = b1 x + (1 - b1) z
            p += (1 - b1) * z

    def eval_params(self, params, state):
        """Put the average ``x`` into ``params``: evaluate, checkpoint or deploy these."""
        if state["train_mode"]:
            for p, x in zip(params, state["x"]):
                p[...] = x
            state["train_mode"] = False

    def train_params(self, params, state):
        """Put ``y`` (where gradients are taken) back into ``params`` before the next step."""
        if not state["train_mode"]:
            self._y(params, state)
            state["train_mode"] = True

    def step(self, params, grads, state, *, lr=None):
        _check(params, grads)
        if not state["train_mode"]:
            raise RuntimeError("step() in eval mode: call train_params(params, state) first")
        b1, b2 = self.betas
        k = state["t"]
        lr = (self.lr if lr is None else lr) * (min(1.0, (k + 1) / self.warmup_steps) if self.warmup_steps else 1.0)
        state["lr_max"] = lr_max = max(lr, state["lr_max"])
        weight = (k + 1) ** self.r * lr_max**self.weight_lr_power
        state["weight_sum"] += weight
        c = weight / state["weight_sum"] if state["weight_sum"] else 0.0
        bias_correction2 = 1 - b2 ** (k + 1)
        for p, g, z, x, v in zip(params, grads, state["z"], state["x"], state["v"]):
            if self.weight_decay:
                z -= (lr * self.weight_decay) * p     # decay at y, the point the gradient saw
            v *= b2                                   # v = b2 v + (1 - b2) g^2, Adam's second moment
            v += (1 - b2) * g * g
            z -= lr * g / (np.sqrt(v / bias_correction2) + self.eps)
            x *= 1 - c                                # x = (1 - c) x + c z: the running average
            x += c * z
        self._y(params, state)
        state["t"] = k + 1


@dataclass(frozen=True)
class WeightEMA:
    """An exponential moving average of the weights, as ``torch.optim.swa_utils.AveragedModel``
    with ``multi_avg_fn=get_ema_multi_avg_fn(decay)``: the first ``update`` copies the weights,
    later ones do ``average += (1 - decay) (params - average)``.

    Not an optimizer: it watches one and keeps a copy that forgets with a timescale of about
    ``1 / (1 - decay)`` steps, which averages out the last steps' noise the way a schedule's
    decay would. Evaluate ``state["average"]``; keep training ``params``.
    """

    decay: float = 0.999

    def __post_init__(self):
        if not 0.0 <= self.decay <= 1.0:
            raise ValueError(f"decay must be in [0, 1], got {self.decay!r}")

    def init(self, params):
        return {"n_averaged": 0, "average": [p.copy() for p in params]}

    def update(self, params, state):
        for p, a in zip(params, state["average"]):
            if state["n_averaged"] == 0:
                a[...] = p
            else:
                a += (1 - self.decay) * (p - a)
        state["n_averaged"] += 1
