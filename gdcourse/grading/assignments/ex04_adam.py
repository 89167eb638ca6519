"""ex04, Adam and AdamW: the course's reference, the case builders and the visible cases.

Every case is one call: ``init_state(w)``, or one ``adam_step`` / ``adamw_step`` from a state
``{"t": t, "m": m, "v": v}`` chosen here (``t`` steps already taken: ``t = 0`` with zero moments
is the first step; ``t >= 1`` with moments ``m`` of any sign and ``v >= 0`` checks bias
correction at any step). A path of many steps is checked one step at a time, from the state the
course's reference reached after the steps before.

The expected answer is ``torch.optim.Adam`` / ``torch.optim.AdamW`` in float64, started from the
same state (on the trusted side and in the self-check only: torch is imported when a check runs,
never by a call in the sandbox). Compared, as the exercise's statement says:

- the new ``w`` within ``RTOL_W = 1e-10`` times the size of the terms the update adds up,
  element-wise ``|w| + lr * |m_hat| / (sqrt(v_hat) + eps)`` (for AdamW also ``lr * wd * |w|``),
  so any order of the float operations passes (PyTorch's ``lr / bc1 * m / (sqrt(v) / sqrt(bc2) +
  eps)``, ``w - lr * wd * w``), even where the new weight cancels to nearly zero;
- the new state's ``m`` and ``v`` within ``RTOL_MV = 1e-12`` times the size of their two terms
  (``beta1 * |m| + (1 - beta1) * |g|`` and likewise for ``v``); its ``t`` exactly ``t + 1``;
- ``w``, ``g`` and the state passed in (the dict, its ``t``, ``m`` and ``v``) unchanged, and the
  new ``w`` a new array.

While a case of ``adamw_step`` runs, ``adam_step`` and ``init_state`` are the course's (below),
so an AdamW written on top of ``adam_step`` is graded on its own decay alone.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, diagnose, number, require, resembles, unchanged

RTOL_W = 1e-10  # the new weights, relative to the size of the terms of the update (stated in the exercise)
RTOL_MV = 1e-12  # the new moments, relative to the size of their two terms (stated in the exercise)

DEFAULTS = {"adam": dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0),
            "adamw": dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)}


# --- the reference ----------------------------------------------------------------------

def init_state(w):
    return {"t": 0, "m": np.zeros(np.shape(w)), "v": np.zeros(np.shape(w))}


def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    t = state["t"] + 1
    if weight_decay:
        g = g + weight_decay * w
    m = b1 * state["m"] + (1 - b1) * g
    v = b2 * state["v"] + (1 - b2) * g * g
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return w - lr * m_hat / (np.sqrt(v_hat) + eps), {"t": t, "m": m, "v": v}


def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
    return adam_step(w * (1 - lr * weight_decay), g, state, lr, betas=betas, eps=eps, weight_decay=0.0)


REFERENCE = {"init_state": init_state, "adam_step": adam_step, "adamw_step": adamw_step}


# --- the expected answer: torch in float64, from a given state -----------------------------

def torch_step(kind, w, g, t, m, v, kw):
    """(w_new, m_new, v_new) of one torch.optim.Adam/AdamW step from state (t, m, v), float64."""
    import torch
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
    p = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    opt = cls([p], foreach=False, **kw)
    if t:
        opt.state[p] = {"step": torch.tensor(float(t)), "exp_avg": torch.tensor(m, dtype=torch.float64),
                        "exp_avg_sq": torch.tensor(v, dtype=torch.float64)}
    p.grad = torch.tensor(g, dtype=torch.float64)
    opt.step()
    s = opt.state[p]
    return p.detach().numpy().copy(), s["exp_avg"].numpy().copy(), s["exp_avg_sq"].numpy().copy()


def reference_state(kind, w0, grads, kw):
    """(w, t, m, v) after the course's reference took one step per gradient from ``w0`` and init_state."""
    step = adamw_step if kind == "adamw" else adam_step
    w, state = np.array(w0, dtype=float), init_state(w0)
    for g in grads:
        w, state = step(w, g, state, **kw)
    return w, state["t"], state["m"], state["v"]


def _settings(kind, kw):
    d = {**DEFAULTS[kind], **kw}
    return d["lr"], d["betas"], d["eps"], d["weight_decay"]


def _scales(kind, w, g, t, m, v, kw, v_new):
    """How large the terms of the new w, m and v are, element-wise (what their rounding is relative to)."""
    lr, (b1, b2), eps, wd = _settings(kind, kw)
    if kind == "adamw":
        w_part, g_abs = np.abs(w) * abs(1 - lr * wd) + np.abs(lr * wd * w), np.abs(g)
    else:
        w_part, g_abs = np.abs(w), np.abs(g) + abs(wd) * np.abs(w)
    m_abs = b1 * np.abs(m) + (1 - b1) * g_abs
    v_abs = b2 * v + (1 - b2) * g_abs ** 2
    n = t + 1
    denom = np.sqrt(np.minimum(v_abs, v_new) / (1 - b2 ** n)) + eps
    return w_part + lr * m_abs / (1 - b1 ** n) / denom, m_abs, v_abs


def _mistake(kind, w, g, t, m, v, kw, *, decay=None, bias="both", t_off=0, eps_inside=False, swap=False):
    """(w_new, m_new, v_new) of one step with a known mistake: what a wrong answer is matched against."""
    lr, (b1, b2), eps, wd = _settings(kind, kw)
    if swap:
        b1, b2 = b2, b1
    decay = decay or ("l2" if kind == "adam" else "decoupled")
    n = t + 1 + t_off
    w0 = w
    if decay == "l2":
        g = g + wd * w
    elif decay == "decoupled":
        w = w * (1 - lr * wd)
    elif decay == "decoupled_without_lr":
        w = w * (1 - wd)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    with np.errstate(all="ignore"):
        m_hat = m / (1 - b1 ** n) if bias in ("both", "m") else m
        v_hat = v / (1 - b2 ** n) if bias in ("both", "v") else v
        denom = np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps
        new = w - lr * m_hat / denom
        if decay == "in_update":
            new = new - lr * wd * w0
        elif decay == "after":
            new = new * (1 - lr * wd)
    return new, m, v


ADAM_MISTAKES = [
    (dict(bias="none"), "bias-correct both moments, m / (1 - beta1**t) and v / (1 - beta2**t), on every step "
                        "including the first"),
    (dict(bias="m"), "bias-correct v too: v / (1 - beta2**t)"),
    (dict(bias="v"), "bias-correct m too: m / (1 - beta1**t)"),
    (dict(t_off=-1), "the bias correction uses the number of THIS step, t = state['t'] + 1 (1 on the first step)"),
    (dict(t_off=1), "the step number is counted twice: this step is number state['t'] + 1, not + 2"),
    (dict(eps_inside=True), "add eps outside the square root: sqrt(v_hat) + eps"),
    (dict(swap=True), "beta1 goes with m (the average of g) and beta2 with v (the average of g**2)"),
]
ADAM_DECAY_MISTAKES = [
    (dict(decay="decoupled"), "adam_step's weight decay is L2: add weight_decay * w to the gradient before the "
                              "moments (shrinking w directly is AdamW)"),
    (dict(decay="in_update"), "L2 weight decay goes into the gradient before the moments, not into the update"),
    (dict(decay="none"), "weight_decay is ignored: add weight_decay * w to the gradient before the moments"),
]
ADAMW_DECAY_MISTAKES = [
    (dict(decay="l2"), "AdamW's decay is decoupled: shrink w by (1 - lr * weight_decay) and leave g alone "
                       "(adding weight_decay * w to the gradient is Adam's L2)"),
    (dict(decay="decoupled_without_lr"), "the decay factor is 1 - lr * weight_decay: weight_decay is scaled by "
                                         "the learning rate"),
    (dict(decay="after"), "shrink w BEFORE the Adam update, as torch.optim.AdamW does, not after it"),
    (dict(decay="in_update"), "decay w itself, w * (1 - lr * weight_decay), before the Adam update"),
    (dict(decay="none"), "the decay is missing: w shrinks by (1 - lr * weight_decay) before the Adam update"),
]


def _hints(kind, w, g, t, m, v, kw, want, index, got):
    """(matches, hint) for diagnose, the mistakes whose answer differs from the right one here; a
    generator, so that nothing is computed unless the answer is wrong."""
    mistakes = (ADAMW_DECAY_MISTAKES if kind == "adamw" else ADAM_DECAY_MISTAKES) + ADAM_MISTAKES
    for bug, hint in mistakes:
        wrong = _mistake(kind, w, g, t, m, v, kw, **bug)[index]
        if not resembles(wrong, want, rtol=1e-9, atol=0):
            yield (lambda wrong=wrong: resembles(got, wrong, rtol=1e-7, atol=1e-300), hint)


def _within(got, want, scale, rtol, what):
    a = as_array(got, what)
    if a.shape != want.shape:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape} (the shape of w)",
                   summary=f"{what} has the wrong shape")
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(a - want)
        ok = np.isfinite(a) & (err <= rtol * scale + 1e-300)
    if not ok.all():
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            rel = np.nanmax(np.where(np.isfinite(a), err / np.maximum(scale, 1e-300), np.inf))
        shown = (f": expected {np.array2string(want, precision=10)}, got {np.array2string(a, precision=10)}"
                 if a.size <= 6 else f": {int((~ok).sum())} of {a.size} entries off")
        raise Fail(f"{what} differs from torch by a relative {rel:.1e} (allowed {rtol:g}){shown}",
                   summary=f"{what} differs from torch beyond the tolerance ({rtol:g} of the size of its terms)")


def _state_kept(r, state, fn):
    """The state dict passed in is as the judge sent it: same keys, same t, same m and v."""
    after = r.args_after[2] if len(r.args_after) > 2 else None
    message = (f"{fn} modified the state passed in: leave it as it is and return a new dict "
               f"with new m and v arrays")
    require(isinstance(after, dict) and set(after) == set(state), message)
    require(type(after["t"]) is int and after["t"] == state["t"], message)
    for key in ("m", "v"):
        try:
            same = np.array_equal(as_array(after[key]), state[key])
        except Fail:
            same = False
        require(same, message)


def step_case(kind, w, g, t, m, v, kw, name, visible=False):
    """One adam_step / adamw_step call from state (t, m, v) with settings ``kw`` (``lr`` and any of
    betas, eps, weight_decay; the others keep the function's defaults): checks the new w, the new
    state, and that the inputs are left as they were."""
    fn = "adamw_step" if kind == "adamw" else "adam_step"
    test = "test_adamw_step" if kind == "adamw" else "test_adam_step"
    w, g, m, v = (np.array(x, dtype=float) for x in (w, g, m, v))
    t = int(t)
    state = {"t": t, "m": m.copy(), "v": v.copy()}
    rest = {k: val for k, val in kw.items() if k != "lr"}

    def check(r):
        require(isinstance(r.value, (tuple, list)) and len(r.value) == 2, f"{fn} should return (w_new, state_new)")
        w_new, state_new = r.value
        want_w, want_m, want_v = torch_step(kind, w, g, t, m, v, kw)
        scale_w, scale_m, scale_v = _scales(kind, w, g, t, m, v, kw, want_v)
        diagnose(lambda: _within(w_new, want_w, scale_w, RTOL_W, "the new w"),
                 _hints(kind, w, g, t, m, v, kw, want_w, 0, w_new))
        require(isinstance(state_new, dict) and {"t", "m", "v"} <= set(state_new),
                f"{fn} should return the new state as a dict with 't', 'm' and 'v', like init_state")
        new_t = number(state_new["t"], "the new state's t")
        require(new_t == t + 1, f"the new state's t counts the steps taken: it should be {t + 1} "
                                f"(the state passed in had t = {t}), got {new_t:g}"
                if visible else "the new state's t should be the state's t plus one")
        stale = "return the updated m and v in the new state (the next step starts from it)"
        l2 = "g + weight_decay * w" if kind == "adam" and _settings(kind, kw)[3] else "g"
        diagnose(lambda: _within(state_new["m"], want_m, scale_m, RTOL_MV, "the new state's m"),
                 chain([(lambda: resembles(state_new["m"], m, 1e-9, 0) and not resembles(m, want_m, 1e-9, 0), stale)],
                       _hints(kind, w, g, t, m, v, kw, want_m, 1, state_new["m"]),
                       [(lambda: True, f"m = beta1 * m + (1 - beta1) * {l2}")]))
        diagnose(lambda: _within(state_new["v"], want_v, scale_v, RTOL_MV, "the new state's v"),
                 chain([(lambda: resembles(state_new["v"], v, 1e-9, 0) and not resembles(v, want_v, 1e-9, 0), stale)],
                       _hints(kind, w, g, t, m, v, kw, want_v, 2, state_new["v"]),
                       [(lambda: True, f"v = beta2 * v + (1 - beta2) * ({l2})**2")]))
        unchanged(r, 0, w, "w")
        unchanged(r, 1, g, "g")
        _state_kept(r, state, fn)
        require(0 not in r.shares_input, "the new w shares memory with an input: return a new array")

    return Case(test, name, call(fn, w, g, state, kw["lr"], **rest), check, visible)


def init_case(w, name, visible=False):
    w = np.array(w, dtype=float)

    def check(r):
        s = r.value
        require(isinstance(s, dict) and {"t", "m", "v"} <= set(s),
                "init_state should return a dict with 't', 'm' and 'v'")
        require(number(s["t"], "init_state's t") == 0, "init_state's t should be 0 (no step taken yet)")
        for key in ("m", "v"):
            a = as_array(s[key], f"init_state's {key}")
            require(a.shape == w.shape, f"init_state's {key} should have the shape of w, {w.shape}, got {a.shape}"
                    if visible else f"init_state's {key} should have the shape of w")
            require(np.array_equal(a, np.zeros(w.shape)), f"init_state's {key} should be all zeros")
        unchanged(r, 0, w, "w")
    return Case("test_adam_step", name, call("init_state", w), check, visible)


def random_state(rng, shape, scale):
    """Moments as after some steps of gradients of about this scale: m of any sign, v >= 0."""
    m = scale * rng.standard_normal(shape) * rng.uniform(0.1, 1.0)
    v = scale ** 2 * (rng.standard_normal(shape) ** 2 + rng.uniform(0.01, 1.0)) * rng.uniform(0.1, 1.0)
    return m, v


# --- the visible cases --------------------------------------------------------------------

def visible():
    yield init_case(np.array([0.5, -1.0, 2.0]), "init_state: t = 0 and zero moments shaped like w", visible=True)
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(10)]
    zero = np.zeros(5)
    yield step_case("adam", w0, grads[0], 0, zero, zero, dict(lr=0.1),
                    "the first step from init_state (t = 0 -> 1): about w - lr * sign(g)", visible=True)
    kw = dict(lr=0.1)
    yield step_case("adam", *_at(reference_state("adam", w0, grads[:9], kw), grads[9]), kw,
                    "step 10, from the state after 9 steps", visible=True)
    kw = dict(lr=0.1, weight_decay=0.5)
    yield step_case("adam", *_at(reference_state("adam", w0, grads[:9], kw), grads[9]), kw,
                    "step 10 with weight_decay=0.5 (L2), from the state after 9 steps", visible=True)
    kw = dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)
    yield step_case("adam", *_at(reference_state("adam", w0, grads[:3], kw), grads[3]), kw,
                    "step 4 with betas=(0.8, 0.99) and eps=1e-6", visible=True)
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(4)
    grads = [rng.standard_normal(4) for _ in range(10)]
    kw = dict(lr=0.1, weight_decay=0.5)
    yield step_case("adamw", w0, grads[0], 0, np.zeros(4), np.zeros(4), kw,
                    "the first step from init_state, weight_decay=0.5", visible=True)
    yield step_case("adamw", *_at(reference_state("adamw", w0, grads[:9], kw), grads[9]), kw,
                    "step 10 with weight_decay=0.5, from the state after 9 steps", visible=True)
    yield step_case("adamw", w0 * 0.95 ** 2, np.zeros(4), 2, np.zeros(4), np.zeros(4), kw,
                    "zero gradients and zero moments at step 3: only the decay, w * (1 - lr * weight_decay)",
                    visible=True)


def _at(reached, g):
    w, t, m, v = reached
    return w, g, t, m, v
