"""Trusted cases of ex04: read by the judge only, never copied into the sandbox.

Every case is one call of ``adam_step`` or ``adamw_step`` on a state chosen
here, ``{"t": t, "m": m, "v": v}`` (``t`` steps already taken): ``t = 0`` with
zero moments is the first step; a random ``t >= 1`` with random moments
``m`` and ``v >= 0`` checks bias correction at any step. A path of many steps
is therefore checked one step at a time: the visible paths' last steps start
from torch's own state after the steps before.

The expected answer is ``torch.optim.Adam`` / ``torch.optim.AdamW`` in float64,
started from the same state. The returned state is checked as well (``t``
counted up by one, ``m`` and ``v`` updated), since the next step starts from it.

Tolerances are relative to the size of the terms the update adds up
(``|w|``, and ``lr`` times the bias-corrected ``|m|`` terms over the
denominator), so a correct answer that orders the float operations otherwise
(PyTorch's ``lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)``, ``w - lr * wd * w``)
passes even where the new weight cancels to nearly zero.
"""

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, number, require, unchanged

REFERENCES = ("gdcourse.optim.Adam", "gdcourse.optim.AdamW")
FORBIDDEN = ("torch.optim",)

RTOL_W = 1e-10  # the new weights, relative to the size of the terms of the update
RTOL_MV = 1e-12  # the new moments, relative to the size of their two terms

ADAM_DEFAULTS = dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
ADAMW_DEFAULTS = dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)

ADAM_SETTINGS = [("defaults", dict(lr=0.01)),
                 ("betas, eps and L2 decay set", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1))]
ADAMW_SETTINGS = [("default decay", dict(lr=0.01)),
                  ("betas, eps and decay set", dict(lr=0.003, betas=(0.5, 0.9), eps=1e-5, weight_decay=0.3))]


# --- the reference: torch in float64, from a given state ----------------------------------

def _torch_step(kind, w, g, t, m, v, kw):
    """(w_new, m_new, v_new) of one torch.optim.Adam/AdamW step from state (t, m, v)."""
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


def _torch_states(kind, w0, grads, kw):
    """(w, t, m, v) before each step of a torch path from w0 (t = 0 first), and after the last."""
    w, t, m, v = np.array(w0, float), 0, np.zeros_like(w0, dtype=float), np.zeros_like(w0, dtype=float)
    out = [(w, t, m, v)]
    for g in grads:
        w, m, v = _torch_step(kind, w, g, t, m, v, kw)
        t += 1
        out.append((w, t, m, v))
    return out


def _scales(kind, w, g, t, m, v, kw):
    """How large the terms of the new w, m and v are, element-wise (what their rounding is relative to)."""
    d = {**(ADAMW_DEFAULTS if kind == "adamw" else ADAM_DEFAULTS), **kw}
    (b1, b2), eps, wd, lr = d["betas"], d["eps"], d["weight_decay"], d["lr"]
    if kind == "adamw":
        w_part, g_abs = np.abs(w) * abs(1 - lr * wd) + np.abs(lr * wd * w), np.abs(g)
    else:
        w_part, g_abs = np.abs(w), np.abs(g) + abs(wd) * np.abs(w)
    m_abs = b1 * np.abs(m) + (1 - b1) * g_abs
    v_abs = b2 * v + (1 - b2) * g_abs ** 2
    t1 = t + 1
    denom = np.sqrt(v_abs / (1 - b2 ** t1)) + eps
    return w_part + lr * m_abs / (1 - b1 ** t1) / denom, m_abs, v_abs


def _within(got, want, scale, rtol, what, hint=""):
    a = as_array(got, what)
    if a.shape != want.shape:
        raise Fail(f"{what} has shape {a.shape}, expected {want.shape} (the shape of w)")
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(a - want)
        ok = np.isfinite(a) & (err <= rtol * scale + 1e-300)
    if not ok.all():
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            rel = np.nanmax(np.where(np.isfinite(a), err / np.maximum(scale, 1e-300), np.inf))
        shown = (f": expected {np.array2string(want, precision=10)}, got {np.array2string(a, precision=10)}"
                 if a.size <= 6 else f": {int((~ok).sum())} of {a.size} entries off")
        raise Fail(f"{what} differs from torch by a relative {rel:.1e} (allowed {rtol:g}){shown}"
                   + (f". {hint}" if hint else ""))


# --- one step ---------------------------------------------------------------------------

def step_case(kind, w, g, t, m, v, kw, name, visible=False, hint="", first=False):
    """One adam_step / adamw_step call from state (t, m, v); checks the new w, the new state, and the inputs."""
    fn = "adamw_step" if kind == "adamw" else "adam_step"
    test = "test_adamw_step" if kind == "adamw" else "test_adam_step"
    w, g, m, v = (np.array(x, dtype=float) for x in (w, g, m, v))
    state = {"t": int(t), "m": m.copy(), "v": v.copy()}

    def check(r):
        require(isinstance(r.value, (tuple, list)) and len(r.value) == 2, f"{fn} should return (w_new, state_new)")
        w_new, state_new = r.value
        want_w, want_m, want_v = _torch_step(kind, w, g, t, m, v, kw)
        scale_w, scale_m, scale_v = _scales(kind, w, g, t, m, v, kw)
        if first and kind == "adam":  # the visible first-step assert: about lr * sign(g)
            got = as_array(w_new, "the new w")
            rough = w - kw["lr"] * np.sign(g)
            require(got.shape == rough.shape and np.allclose(got, rough, rtol=1e-6),
                    f"Adam's FIRST step is about lr * sign(g) for every coordinate once bias correction is "
                    f"applied (expected about {np.array2string(rough, precision=6)}, got "
                    f"{np.array2string(got, precision=6)}). Bias-correct m and v with t = 1 on the first step.")
        _within(w_new, want_w, scale_w, RTOL_W, "the new w", hint)
        require(isinstance(state_new, dict) and {"t", "m", "v"} <= set(state_new),
                f"{fn} should return the new state as a dict with 't', 'm' and 'v', like init_state")
        require(number(state_new["t"], "the new state's t") == t + 1,
                f"the new state's t should be {t + 1} (it was {t} before this step), "
                f"got {number(state_new['t'], 'the new state t')}")
        _within(state_new["m"], want_m, scale_m, RTOL_MV, "the new state's m",
                "m = beta1 * m + (1 - beta1) * g" + (" with g + weight_decay * w" if kind == "adam" else ""))
        _within(state_new["v"], want_v, scale_v, RTOL_MV, "the new state's v",
                "v = beta2 * v + (1 - beta2) * g**2" + (" with g + weight_decay * w" if kind == "adam" else ""))
        unchanged(r, 0, w, "w")
        unchanged(r, 1, g, "g")
        require(0 not in r.shares_input, "the new w shares memory with an input: return a new array")

    return Case(test, name, call(fn, w, g, state, **kw), check, visible)


def init_case(w, name, visible=False):
    def check(r):
        s = r.value
        require(isinstance(s, dict) and {"t", "m", "v"} <= set(s), "init_state should return a dict with 't', 'm' and 'v'")
        require(number(s["t"], "init_state's t") == 0, "init_state's t should be 0 (no step taken yet)")
        for key in ("m", "v"):
            a = as_array(s[key], f"init_state's {key}")
            require(a.shape == w.shape, f"init_state's {key} should have the shape of w, {w.shape}, got {a.shape}")
            require(np.array_equal(a, np.zeros(w.shape)), f"init_state's {key} should be all zeros")
        unchanged(r, 0, w, "w")
    return Case("test_adam_step", name, call("init_state", w), check, visible)


def _random_state(rng, shape, scale, t):
    """Moments as after t steps of gradients of about this scale: m any sign, v >= 0."""
    m = scale * rng.standard_normal(shape) * rng.uniform(0.1, 1.0)
    v = scale ** 2 * (rng.standard_normal(shape) ** 2 + rng.uniform(0.01, 1.0)) * rng.uniform(0.1, 1.0)
    return m, v


def cases(rng):
    # --- the visible tests' examples (the same inputs, one step at a time from torch's state)
    vis = np.random.default_rng(0)
    w0 = vis.standard_normal(5)
    grads = [vis.standard_normal(5) for _ in range(10)]
    zero = np.zeros(5)
    yield step_case("adam", w0, grads[0], 0, zero, zero, dict(lr=0.1),
                    "the visible example, first step (about lr * sign(g))", visible=True, first=True,
                    hint="Bias-correct m and v with t = 1 on the first step, and add eps outside the square root.")
    w, t, m, v = _torch_states("adam", w0, grads[:9], dict(lr=0.1))[-1]
    yield step_case("adam", w, grads[9], t, m, v, dict(lr=0.1),
                    "the visible example, step 10 from torch's state after 9 steps", visible=True,
                    hint="Check the step counter t and that eps is added outside the square root.")
    w, t, m, v = _torch_states("adam", w0, grads[:9], dict(lr=0.1, weight_decay=0.5))[-1]
    yield step_case("adam", w, grads[9], t, m, v, dict(lr=0.1, weight_decay=0.5),
                    "the visible example with weight_decay=0.5, step 10 from torch's state after 9 steps",
                    visible=True, hint="Adam's weight decay is L2: add weight_decay * w to the gradient "
                                       "before the moments.")
    vis = np.random.default_rng(1)
    w0 = vis.standard_normal(4)
    grads = [vis.standard_normal(4) for _ in range(10)]
    kw = dict(lr=0.1, weight_decay=0.5)
    w, t, m, v = _torch_states("adamw", w0, grads[:9], kw)[-1]
    hint = ("AdamW shrinks w by (1 - lr * weight_decay) before the Adam step and does not add decay to "
            "the gradient.")
    yield step_case("adamw", w0, grads[0], 0, np.zeros(4), np.zeros(4), kw,
                    "the visible example, first step", visible=True, hint=hint)
    yield step_case("adamw", w, grads[9], t, m, v, kw,
                    "the visible example, step 10 from torch's state after 9 steps", visible=True, hint=hint)
    yield step_case("adamw", w0 * 0.95 ** 2, np.zeros(4), 2, np.zeros(4), np.zeros(4), kw,
                    "the visible example with zero gradients, step 3", visible=True,
                    hint="With zero gradients AdamW only decays: w * (1 - lr * weight_decay) per step.")

    # --- hidden: init_state
    yield init_case(rng.standard_normal(3), "init_state: t = 0 and zero moments, shaped like w")
    yield init_case(rng.standard_normal((3, 4)), "init_state for a 2-d w")

    # --- hidden: Adam, one step at a random point of a run, every shape x gradient scale x setting
    for shape in [(1,), (3, 4), (7,)]:
        for scale in (1e-9, 1e-3, 1.0, 1e3):  # gradient magnitudes where eps does and does not matter
            for label, kw in ADAM_SETTINGS:
                t = int(rng.integers(1, 60))
                m, v = _random_state(rng, shape, scale, t)
                yield step_case("adam", rng.standard_normal(shape), scale * rng.standard_normal(shape), t, m, v, kw,
                                f"adam_step at a later step, shape {shape}, gradients of scale {scale:g}, {label}")
    for scale, (label, kw) in zip((1e-9, 1e-3, 1.0, 1e3), ADAM_SETTINGS * 2):
        shape = (int(rng.integers(1, 8)),)
        z = np.zeros(shape)
        yield step_case("adam", rng.standard_normal(shape), scale * rng.standard_normal(shape), 0, z, z, kw,
                        f"adam_step's first step (t = 1), gradients of scale {scale:g}, {label}")
    t = int(rng.integers(2000, 20000))
    m, v = _random_state(rng, (6,), 1.0, t)
    yield step_case("adam", rng.standard_normal(6), rng.standard_normal(6), t, m, v, ADAM_SETTINGS[1][1],
                    "adam_step late in a run (bias corrections near 1)")
    w = rng.standard_normal(3)
    yield step_case("adam", w, np.full(3, 2.0), 0, np.zeros(3), np.zeros(3), dict(lr=0.1, weight_decay=0.1),
                    "adam_step with weight decay leaves w and g unchanged")

    # --- hidden: AdamW likewise
    for shape in [(1,), (2, 3)]:
        for scale in (1e-6, 1.0, 1e2):
            for label, kw in ADAMW_SETTINGS:
                t = int(rng.integers(1, 60))
                m, v = _random_state(rng, shape, scale, t)
                yield step_case("adamw", rng.standard_normal(shape), scale * rng.standard_normal(shape), t, m, v, kw,
                                f"adamw_step at a later step, shape {shape}, gradients of scale {scale:g}, {label}")
    for scale, (label, kw) in zip((1e-6, 1.0, 1e2), ADAMW_SETTINGS * 2):
        shape = (int(rng.integers(1, 8)),)
        z = np.zeros(shape)
        yield step_case("adamw", rng.standard_normal(shape), scale * rng.standard_normal(shape), 0, z, z, kw,
                        f"adamw_step's first step (t = 1), gradients of scale {scale:g}, {label}")
    shape, t = (5,), int(rng.integers(1, 30))
    z = np.zeros(shape)
    yield step_case("adamw", rng.standard_normal(shape), z, t, z, z, ADAMW_SETTINGS[1][1],
                    "adamw_step with zero gradients and zero moments only decays the weights")
    w = rng.standard_normal(3)
    yield step_case("adamw", w, rng.standard_normal(3), 0, np.zeros(3), np.zeros(3), dict(lr=0.1, weight_decay=0.1),
                    "adamw_step leaves w and g unchanged")
