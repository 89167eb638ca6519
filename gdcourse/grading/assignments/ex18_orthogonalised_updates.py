"""ex18, orthogonalised updates: the course's reference, the probe, the case builders and the visible cases.

What is compared, as the exercise's statement says:

- ``newton_schulz(G, steps=5, eps=1e-7)``: an array of ``G``'s shape, finite, whose relative
  Frobenius distance ``||O - O_ref||_F / ||O_ref||_F`` to the course's
  (:func:`gdcourse.optim.newton_schulz`, what ``torch.optim.Muon`` computes, in float64) is at most
  ``NS_RTOL`` (``||O||_F`` at most ``NS_RTOL`` for a zero ``G``; ``O_ref`` is then 0).
  Every case's ``G`` has ``||G||_F`` of 0 or at least 0.1, where dividing by ``||G||_F + eps``
  (Jordan's original) and by ``max(||G||_F, eps)`` (torch's) agree within a few 1e-7. The behaviour
  cases (``test_newton_schulz_spectrum``) check, without the reference: every singular value of ``O``
  that comes from a singular value of ``G`` of at least ``SPECTRUM_FLOOR * ||G||_F`` lies in
  ``[BAND_LOW, BAND_HIGH]``, the others of ``O`` are at most ``BAND_HIGH``; and ``O`` has ``G``'s row
  and column spaces (``||O - O P_row||_F`` and ``||O - P_col O||_F`` at most ``SPACE_RTOL * ||O||_F``),
  so a rank-deficient ``G`` keeps its rank. ``G`` is left as it was.
- ``muon_step(W, G, buf, lr, momentum=0.95, weight_decay=0.1, nesterov=True, ns_steps=5)``: run
  for several steps by :func:`muon_run` from a zero buffer, each step on the student's own ``W`` and
  ``buf`` of the step before; at every step the returned ``buf`` within ``BUF_RTOL`` and ``W`` within
  ``W_RTOL`` (relative Frobenius distances) of the course's trajectory (:class:`gdcourse.optim.Muon`,
  as ``torch.optim.Muon`` with its defaults); ``W``, ``G`` and ``buf`` passed in left unchanged.
  While these cases run, ``newton_schulz`` is the course's.
- ``zero_memory(n_params, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1)``:
  a dict whose five entries equal, exactly, :func:`gdcourse.cost.memory_footprint` with
  ``zero_stage=stage`` ("muon" keeps one buffer, as "momentum"); an unknown optimizer or stage
  raises ``ValueError``.
- ``largest_model(memory_bytes, optimizer, *, ...)``: the largest whole ``n_params`` whose
  per-rank total is at most ``memory_bytes``, exactly. While these cases run, ``zero_memory`` is the
  course's.
"""

from __future__ import annotations

import math

import numpy as np

from gdcourse.cost import memory_footprint
from gdcourse.grading.cases import Case, Fail, as_array, call, diagnose, kind, probe, require
from gdcourse.optim import NS_COEFFICIENTS, Muon
from gdcourse.optim import newton_schulz as _library_newton_schulz

NS_RTOL = 1e-5          # newton_schulz: relative Frobenius distance to the reference (stated in the exercise)
SPECTRUM_FLOOR = 0.01   # singular values of G at least this fraction of ||G||_F are pushed into the band
BAND_LOW, BAND_HIGH = 0.6, 1.25   # where five quintic steps put them (measured: [0.68, 1.21])
SPACE_RTOL = 1e-6       # O's row and column spaces are G's
W_RTOL = 1e-7           # muon_step: W at every step, relative Frobenius distance
BUF_RTOL = 1e-10        # muon_step: the momentum buffer at every step
KEYS = ("params", "grads", "optimizer_state", "master_weights", "total")
OPTIMIZERS = {"sgd": "sgd", "momentum": "momentum", "muon": "momentum", "adam": "adam", "adamw": "adamw"}
STAGES = (0, 1, 2, 3)


# --- the reference: thin adapters over the course library -----------------------------------------

def newton_schulz(G, steps=5, eps=1e-7):
    return _library_newton_schulz(np.asarray(G, dtype=float), steps=steps, eps=eps)


def muon_step(W, G, buf, lr, momentum=0.95, weight_decay=0.1, nesterov=True, ns_steps=5):
    opt = Muon(lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov, ns_steps=ns_steps)
    W_new = np.array(W, dtype=float, copy=True)
    state = {"t": 0, "momentum_buffer": [np.array(buf, dtype=float, copy=True)]}
    opt.step([W_new], [np.asarray(G, dtype=float)], state)
    return W_new, state["momentum_buffer"][0]


def zero_memory(n_params, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; expected one of {sorted(OPTIMIZERS)}")
    if stage not in STAGES:
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage!r}")
    fp = memory_footprint(int(n_params), OPTIMIZERS[optimizer], param_bytes=param_bytes,
                          master_weights=master_weights, zero_stage=stage, world_size=world_size)
    return {"params": fp.params, "grads": fp.grads, "optimizer_state": fp.optimizer_state,
            "master_weights": fp.master_weights, "total": fp.total}


def largest_model(memory_bytes, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):
    def fits(n):
        return zero_memory(n, optimizer, param_bytes=param_bytes, master_weights=master_weights,
                           stage=stage, world_size=world_size)["total"] <= memory_bytes
    lo, hi = 0, int(memory_bytes) * int(world_size) + 1   # every element costs >= 1 byte per world_size ranks
    while hi - lo > 1:                                     # invariant: fits(lo), not fits(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


REFERENCE = {"newton_schulz": newton_schulz, "muon_step": muon_step, "zero_memory": zero_memory,
             "largest_model": largest_model}


# --- matrices from data (both sides) ------------------------------------------------------------------

def matrix(rng, shape, *, scale=1.0, rank=None, condition=None):
    """A random float64 matrix: Gaussian, or of the given rank, or with singular values spread
    geometrically over ``condition`` (largest / smallest), times ``scale``."""
    m, n = shape
    if rank is None and condition is None:
        return scale * rng.standard_normal(shape)
    k = min(m, n)
    U, _ = np.linalg.qr(rng.standard_normal((m, k)))
    V, _ = np.linalg.qr(rng.standard_normal((n, k)))
    s = np.geomspace(1.0, 1.0 / (condition or 1.0), k)
    if rank is not None:
        s[rank:] = 0.0
    return scale * (U * s) @ V.T


# --- the probe (runs in the sandbox) --------------------------------------------------------------

def muon_run(fn, W0, grads, settings):
    """``fn`` for ``len(grads)`` steps from ``W0`` and a zero buffer, each on what the step before
    returned; reports every step's ``W`` and ``buf``, and the inputs a step modified."""
    W = np.array(W0, dtype=float)
    buf = np.zeros_like(W)
    Ws, bufs, modified = [], [], []
    for g in grads:
        g = np.array(g, dtype=float)
        before = (W.copy(), g.copy(), buf.copy())
        out = fn(W, g, buf, **dict(settings))
        for name, now, was in zip(("W", "G", "buf"), (W, g, buf), before):
            if not np.array_equal(now, was, equal_nan=True) and name not in modified:
                modified.append(name)
        if not (isinstance(out, tuple) and len(out) == 2):
            return {"form": kind(out), "W": Ws, "buf": bufs, "modified": modified}
        W, buf = np.array(out[0], dtype=float), np.array(out[1], dtype=float)
        if W.shape != before[0].shape or buf.shape != before[0].shape:
            return {"shape": [list(W.shape), list(buf.shape)], "W": Ws, "buf": bufs, "modified": modified}
        Ws.append(W.copy())
        bufs.append(buf.copy())
    return {"W": Ws, "buf": bufs, "modified": modified}


def memory_raises(fn, n_params, optimizer, options):
    """``fn(n_params, optimizer, **options)``: whether it raised, and whether a ValueError."""
    try:
        fn(n_params, optimizer, **dict(options))
    except Exception as exc:  # the case says whether raising is right
        return {"raised": type(exc).__name__, "value_error": isinstance(exc, ValueError)}
    return {"returned": True}


# --- what a mistake gives (for the hints) ------------------------------------------------------------

def _ns(G, steps=5, eps=1e-7, coefficients=NS_COEFFICIENTS, norm="fro", transpose_back=True):
    a, b, c = coefficients
    X = np.array(G, dtype=float)
    tall = X.shape[0] > X.shape[1]
    if tall:
        X = X.T
    if norm == "fro":
        X = X / max(float(np.linalg.norm(X)), eps)
    elif norm == "spectral":
        X = X / max(float(np.linalg.norm(X, 2)), eps)
    with np.errstate(all="ignore"):   # a mistake's answer may overflow (no normalisation)
        for _ in range(steps):
            A = X @ X.T
            X = a * X + (b * A + c * A @ A) @ X
    return X.T if tall and transpose_back else X


def _rel(got, want) -> float:
    scale = float(np.linalg.norm(want))
    d = float(np.linalg.norm(got - want))
    return d / scale if scale > 0 else d


def _near(got, want, tol=1e-3):
    try:
        return got.shape == np.shape(want) and np.all(np.isfinite(want)) and _rel(got, want) <= tol
    except (TypeError, ValueError):
        return False


NS_MISTAKES = [
    (dict(coefficients=(1.5, -0.5, 0.0)), "those are the cubic Newton-Schulz coefficients (1.5, -0.5, 0); Muon's "
                                          "quintic ones are (a, b, c) = (3.4445, -4.7750, 2.0315)"),
    (dict(norm="spectral"), "divide by the Frobenius norm ||G||_F (np.linalg.norm(G)), not the spectral norm"),
    (dict(norm="none"), "normalise G by its Frobenius norm first: the polynomial pushes singular values towards 1 "
                        "only from (0, 1]"),
    (dict(coefficients=(3.4445, 2.0315, -4.7750)), "b goes with A = X X^T and c with A^2: X <- a X + (b A + c A^2) X"),
]


# --- checks ---------------------------------------------------------------------------------------

def _ns_result(r, G, what="newton_schulz(G)"):
    got = as_array(r.value, what)
    require(got.shape == G.shape, f"{what} has shape {got.shape}, expected {G.shape} (the shape of G: "
                                  f"transpose a tall matrix back at the end)")
    require(np.all(np.isfinite(got)), f"{what} has NaN or inf entries (dividing by a zero norm? overflow?)")
    after = r.args_after[0] if r.args_after else None
    try:
        same = np.array_equal(as_array(after), G)
    except Fail:
        same = False
    require(same, "newton_schulz modified G: work on a copy")
    return got


def ns_case(G, steps=None, eps=None, name="", visible=False):
    G = np.asarray(G, dtype=float)
    kwargs = {k: v for k, v in (("steps", steps), ("eps", eps)) if v is not None}
    st, ep = kwargs.get("steps", 5), kwargs.get("eps", 1e-7)

    def check(r):
        got = _ns_result(r, G)
        want = newton_schulz(G, st, ep)

        def right():
            err = _rel(got, want)
            if not err <= NS_RTOL:
                raise Fail(f"newton_schulz(G) is off by a relative {err:.2e} in the Frobenius norm (allowed {NS_RTOL:g})",
                           summary=f"the result differs from Muon's orthogonalisation beyond the tolerance ({NS_RTOL:g})")
        hints = [(lambda bug=bug: _near(got, _ns(G, st, ep, **bug)), hint) for bug, hint in NS_MISTAKES]
        hints += [(lambda: _near(got, _ns(G, st - 1, ep)), f"that is {st - 1} steps: run exactly `steps` ({st})"),
                  (lambda: _near(got, _ns(G, st + 1, ep)), f"that is {st + 1} steps: run exactly `steps` ({st})")]
        diagnose(right, hints)
    return Case("test_newton_schulz", name, call("newton_schulz", G, **kwargs), check, visible)


def spectrum_case(G, name="", visible=False):
    G = np.asarray(G, dtype=float)

    def check(r):
        got = _ns_result(r, G)
        U, s, Vt = np.linalg.svd(G, full_matrices=False)
        norm = float(np.linalg.norm(G))
        rank = int((s > 1e-12 * s[0]).sum())
        sv = np.linalg.svd(got, compute_uv=False)
        strong = int((s >= SPECTRUM_FLOOR * norm).sum())
        top = sv[:strong]
        require(np.all((top >= BAND_LOW) & (top <= BAND_HIGH)),
                f"the {strong} singular values of G of at least {SPECTRUM_FLOOR:g} ||G||_F should come out in "
                f"[{BAND_LOW}, {BAND_HIGH}]; they are in [{top.min():.3g}, {top.max():.3g}]" if visible else
                f"singular values of G that are not tiny should come out in [{BAND_LOW}, {BAND_HIGH}]")
        require(sv.max() <= BAND_HIGH, f"no singular value of the result should exceed {BAND_HIGH}; the largest is "
                                       f"{sv.max():.3g}")
        size = max(float(np.linalg.norm(got)), 1e-300)
        Ur, Vr = U[:, :rank], Vt[:rank].T
        off_rows = float(np.linalg.norm(got - (got @ Vr) @ Vr.T)) / size
        off_cols = float(np.linalg.norm(got - Ur @ (Ur.T @ got))) / size
        require(off_rows <= SPACE_RTOL and off_cols <= SPACE_RTOL,
                f"the result leaves G's row or column space (relative {max(off_rows, off_cols):.1e}): O = U p(S) V^T "
                f"has G's singular vectors, and a zero singular value stays zero")
    return Case("test_newton_schulz_spectrum", name, call("newton_schulz", G), check, visible)


def _trajectory(W0, grads, settings):
    W, buf = np.array(W0, dtype=float), np.zeros(np.shape(W0))
    out = []
    for g in grads:
        W, buf = muon_step(W, g, buf, **settings)
        out.append((W, buf))
    return out


def _muon_mistake(W0, grads, settings, *, nesterov=None, dampening=True, adjust="sqrt", decay="decoupled",
                  orthogonalise="update"):
    lr, mu = settings["lr"], settings.get("momentum", 0.95)
    wd, nest = settings.get("weight_decay", 0.1), settings.get("nesterov", True) if nesterov is None else nesterov
    steps = settings.get("ns_steps", 5)
    W, buf = np.array(W0, dtype=float), np.zeros(np.shape(W0))
    rows, cols = W.shape
    scale = {"sqrt": math.sqrt(max(1.0, rows / cols)), "none": 1.0, "inverse": math.sqrt(max(1.0, cols / rows)),
             "rms": 0.2 * math.sqrt(max(rows, cols))}[adjust]
    out = []
    for g in grads:
        g = np.asarray(g, dtype=float)
        if decay == "coupled":
            g = g + wd * W
        buf = mu * buf + ((1 - mu) * g if dampening else g)
        update = ((1 - mu) * g + mu * buf if dampening else g + mu * buf) if nest else buf
        O = _ns(g if orthogonalise == "gradient" else update, steps)
        if decay == "decoupled":
            W = W * (1 - lr * wd) - lr * scale * O
        elif decay == "adjusted":
            W = W * (1 - lr * scale * wd) - lr * scale * O
        elif decay == "after":
            W = (W - lr * scale * O) * (1 - lr * wd)
        else:
            W = W - lr * scale * O
        out.append((W, buf))
    return out


MUON_MISTAKES = [
    (dict(nesterov=False), "nesterov=True (torch's default) orthogonalises (1 - momentum) G + momentum buf, the new "
                           "buffer's look-ahead, not buf itself"),
    (dict(dampening=False), "torch's buffer is an average: buf <- momentum buf + (1 - momentum) G (buf.lerp_(G, 1 - momentum))"),
    (dict(adjust="none"), "scale the rate by sqrt(max(1, rows / cols)), as torch's default adjust_lr_fn does "
                          "(a tall matrix's update has small entries)"),
    (dict(adjust="inverse"), "the rate is scaled by sqrt(max(1, rows / cols)): rows over columns"),
    (dict(adjust="rms"), "that is adjust_lr_fn='match_rms_adamw'; the default scales by sqrt(max(1, rows / cols))"),
    (dict(decay="coupled"), "the decay is decoupled: W <- W (1 - lr weight_decay), not weight_decay W added to G"),
    (dict(decay="adjusted"), "the decay uses the unadjusted lr: W (1 - lr weight_decay), as torch does"),
    (dict(decay="after"), "decay W before the update: W (1 - lr weight_decay) - adjusted_lr O"),
    (dict(decay="none"), "weight_decay is missing: W <- W (1 - lr weight_decay) before the update"),
    (dict(orthogonalise="gradient"), "orthogonalise the momentum update, not the raw gradient"),
]


def muon_case(W0, grads, settings, name="", visible=False):
    W0 = np.asarray(W0, dtype=float)
    grads = [np.asarray(g, dtype=float) for g in grads]
    settings = dict(settings)

    def check(r):
        report = r.value
        require(isinstance(report, dict), "the probe reported nothing")
        require("form" not in report, f"return a tuple (W_new, buf_new); got {report.get('form')}")
        require("shape" not in report, "W_new and buf_new should have W's shape")
        want = _trajectory(W0, grads, settings)
        got_W, got_buf = report.get("W"), report.get("buf")
        require(isinstance(got_W, list) and len(got_W) == len(want), "the probe did not get every step")
        for t, ((wW, wbuf), gW, gbuf) in enumerate(zip(want, got_W, got_buf), start=1):
            gW, gbuf = as_array(gW, "W_new"), as_array(gbuf, "buf_new")

            def right(t=t, wW=wW, wbuf=wbuf, gW=gW, gbuf=gbuf):
                eb = _rel(gbuf, wbuf)
                if not (np.all(np.isfinite(gbuf)) and eb <= BUF_RTOL):
                    raise Fail(f"step {t}: the momentum buffer is off by a relative {eb:.1e} (allowed {BUF_RTOL:g})",
                               summary="the momentum buffer differs from torch.optim.Muon's")
                ew = _rel(gW, wW)
                if not (np.all(np.isfinite(gW)) and ew <= W_RTOL):
                    raise Fail(f"step {t}: W is off by a relative {ew:.1e} (allowed {W_RTOL:g})",
                               summary="W differs from torch.optim.Muon's")

            def hints(t=t, gW=gW, gbuf=gbuf):
                for bug, hint in MUON_MISTAKES:
                    wrong = _muon_mistake(W0, grads, settings, **bug)[t - 1]
                    if _rel(wrong[0], want[t - 1][0]) > 10 * W_RTOL or _rel(wrong[1], want[t - 1][1]) > 10 * BUF_RTOL:
                        yield (lambda wrong=wrong: _rel(gW, wrong[0]) <= 1e-6 and _rel(gbuf, wrong[1]) <= 1e-6, hint)
            diagnose(right, list(hints()))
        modified = report.get("modified")
        require(modified == [], f"muon_step modified {', '.join(map(str, modified or []))} passed in: return new arrays")
    return Case("test_muon_step", name, probe("muon_step", "muon_run", W0, grads, settings), check, visible)


def memory_case(n_params, optimizer, name="", visible=False, **options):
    def check(r):
        got = r.value
        require(isinstance(got, dict) and set(KEYS) <= set(got),
                f"return a dict with the keys {list(KEYS)}; got {kind(got) if not isinstance(got, dict) else sorted(map(str, got))}")
        want = zero_memory(n_params, optimizer, **options)
        stage, W = options.get("stage", 0), options.get("world_size", 1)
        pb, mw = options.get("param_bytes", 4), options.get("master_weights", False)
        sharded, floor = -(-n_params // W), n_params // W
        per = {"sgd": 0, "momentum": 1, "muon": 1, "adam": 2, "adamw": 2}[optimizer]
        hints = {
            "params": [(lambda: stage == 2 and got["params"] == sharded * pb,
                        "stage 2 shards gradients and optimizer state; only stage 3 shards the parameters")],
            "grads": [(lambda: stage == 1 and got["grads"] == sharded * pb,
                       "stage 1 shards the optimizer state only; gradients are sharded from stage 2")],
            "optimizer_state": [(lambda: stage >= 1 and got["optimizer_state"] == n_params * per * 4,
                                 "from stage 1 on the optimizer state is sharded: ceil(n_params / world_size) per rank"),
                                (lambda: got["optimizer_state"] == (sharded if stage else n_params) * per * pb,
                                 "optimizer state is float32: 4 bytes a number whatever param_bytes is")],
            "master_weights": [(lambda: mw and stage >= 1 and got["master_weights"] == 4 * n_params,
                                "the fp32 master weights belong to the optimizer: stage 1 shards them with its state"),
                               (lambda: mw and got["master_weights"] == 0, "master_weights=True adds a float32 copy")],
            "total": [(lambda: True, "total is the sum of the four other entries")],
        }
        rounding = (lambda: n_params % W and any(got[k] in (floor * b for b in (1, 2, 4, 8, 12, 16)) for k in KEYS[:4]),
                    "a shard holds ceil(n_params / world_size) elements (the flat buffer is padded), not the floor")
        for key in KEYS:
            def same(key=key):
                if got[key] != want[key]:
                    raise Fail(f"{key} should be {want[key]} bytes per rank, got {got[key]}", summary=f"{key} is wrong")
            diagnose(same, [rounding] + hints[key])
    return Case("test_zero_memory", name, call("zero_memory", n_params, optimizer, **options), check, visible)


def raises_case(n_params, optimizer, name="", visible=False, **options):
    def check(r):
        report = r.value
        require(isinstance(report, dict), "the probe reported nothing")
        require("raised" in report, f"zero_memory({n_params}, {optimizer!r}, **{options}) must raise ValueError; "
                                    f"it returned a value" if visible else
                "an unknown optimizer or ZeRO stage must raise ValueError; your function returned a value")
        require(report.get("value_error") is True, f"raise ValueError, not {report.get('raised')}")
    return Case("test_zero_memory", name, probe("zero_memory", "memory_raises", n_params, optimizer, options),
                check, visible)


def largest_case(memory_bytes, optimizer, name="", visible=False, **options):
    def check(r):
        got = r.value
        require(isinstance(got, (int, np.integer)) and not isinstance(got, bool),
                f"return a whole number of parameters (an int), got {kind(got)}")
        want = largest_model(memory_bytes, optimizer, **options)
        total = lambda n: zero_memory(max(int(n), 0), optimizer, **options)["total"]
        if int(got) != want:
            if int(got) > want:
                hint = (f"{int(got)} parameters need {total(got)} bytes per rank, more than {memory_bytes}"
                        if visible else "that many parameters do not fit")
            else:
                hint = (f"{int(got) + 1} parameters still fit ({total(int(got) + 1)} bytes per rank, at most {memory_bytes})"
                        if visible else "a larger model still fits")
            raise Fail(f"the largest model that fits has {want} parameters, you returned {int(got)}: {hint}",
                       summary=f"not the largest model that fits: {hint}")
    return Case("test_largest_model", name, call("largest_model", memory_bytes, optimizer, **options), check, visible)


# --- the visible cases -----------------------------------------------------------------------------

def visible():
    rng = np.random.default_rng(18)
    yield ns_case(matrix(rng, (6, 10)), name="a random wide 6 x 10 matrix", visible=True)
    yield ns_case(matrix(rng, (12, 5)), name="a random tall 12 x 5 matrix: transposed and back", visible=True)
    yield ns_case(matrix(rng, (8, 8), rank=3), name="a square 8 x 8 matrix of rank 3", visible=True)
    yield ns_case(matrix(rng, (7, 9), scale=1e4), steps=3, name="entries of order 1e4, three steps", visible=True)
    yield ns_case(np.zeros((3, 4)), name="a zero matrix: zeros, not NaN", visible=True)
    yield spectrum_case(matrix(rng, (16, 8), condition=50.0),
                        name="singular values spread over 50x: all pushed into the band", visible=True)
    yield spectrum_case(matrix(rng, (10, 6), rank=2), name="a rank-2 matrix keeps its rank and its singular vectors",
                        visible=True)
    W0 = 0.5 * rng.standard_normal((6, 4))
    grads = [rng.standard_normal((6, 4)) for _ in range(4)]
    yield muon_case(W0, grads, dict(lr=0.05), name="four steps on a tall 6 x 4 matrix, the defaults", visible=True)
    W0 = 0.5 * rng.standard_normal((3, 7))
    grads = [rng.standard_normal((3, 7)) for _ in range(3)]
    yield muon_case(W0, grads, dict(lr=0.1, momentum=0.9, weight_decay=0.2),
                    name="three steps on a wide 3 x 7 matrix, momentum 0.9, decay 0.2", visible=True)
    yield memory_case(1_000_000, "adam", name="one rank, fp32 Adam: 16 bytes a parameter", visible=True)
    yield memory_case(1_000_000, "adam", param_bytes=2, master_weights=True, stage=1, world_size=8,
                      name="mixed-precision Adam, ZeRO-1 on 8 ranks", visible=True)
    yield memory_case(1_000_000, "adam", param_bytes=2, master_weights=True, stage=2, world_size=8,
                      name="mixed-precision Adam, ZeRO-2 on 8 ranks", visible=True)
    yield memory_case(1_000_003, "muon", param_bytes=2, master_weights=True, stage=3, world_size=4,
                      name="Muon (one buffer), ZeRO-3 on 4 ranks, a size not divisible by 4", visible=True)
    yield largest_case(80 * 10 ** 9, "adam", param_bytes=2, master_weights=True, stage=3, world_size=8,
                       name="80 GB per rank, 8 ranks, ZeRO-3, mixed-precision Adam", visible=True)
    yield largest_case(10 ** 6, "momentum", stage=1, world_size=3, name="1 MB, ZeRO-1 on 3 ranks", visible=True)
