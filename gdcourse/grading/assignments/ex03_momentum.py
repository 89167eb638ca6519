"""ex03, momentum and Nesterov: the course's reference, the probes, the case builders and the visible cases.

The reference is ``torch.optim.SGD``'s rule (dampening 0, no weight decay) written out in NumPy;
``tests/test_optim.py`` and :func:`torch_path` tie it to torch in float64. Every returned array is
compared with the reference within ``RTOL`` relative, plus ``RTOL`` times the largest term the
update adds up (``|w|``, ``lr * |d|``, ``|momentum * v|``, ``|g|``), for entries that cancel to
nearly zero: any order of the float operations passes, as the statement says.

``minimize`` takes a callable: :func:`minimize_probe` builds ``grad_fn`` from data (the gradient
``A @ w - c`` of the quadratic ``0.5 w^T A w - c^T w``) in the sandbox. :func:`step_path_probe`
and :func:`heavy_ball_path_probe` run many steps of a student's step function, feeding its own
``(w, v)`` back, so schedules (the first and the last step of them) are checked as a whole too.
A list of iterates crosses the wire as one stacked array (their values as they are after the
call, so an array appended twice and then changed in place still shows).
"""

from __future__ import annotations

import numpy as np

from gdcourse.grading.cases import Case, Fail, as_array, call, close, diagnose, probe, require, resembles, unchanged

RTOL = 1e-9  # stated in the exercise


# --- the reference ----------------------------------------------------------------------

def momentum_step(w, g, v, lr, momentum, nesterov=False):
    v = np.array(g, dtype=float) if v is None else momentum * v + g
    d = g + momentum * v if nesterov else v
    return w - lr * d, v


def heavy_ball_step(w, g, v, lr, momentum):
    v = momentum * v - lr * g
    return w + v, v


def minimize(grad_fn, w0, lrs, momentum, nesterov=False):
    w, v, path = np.array(w0, dtype=float), None, []
    for lr in lrs:
        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)
        path.append(w)
    return path


REFERENCE = {"momentum_step": momentum_step, "heavy_ball_step": heavy_ball_step, "minimize": minimize}


def torch_path(w0, grads, lrs, momentum, nesterov):
    """The iterates ``torch.optim.SGD`` takes for a fixed sequence of gradients, in float64 (the
    reference's own check; the cases use the NumPy reference, which is the same rule)."""
    import torch
    p = torch.tensor(np.asarray(w0, float), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([p], lr=float(lrs[0]), momentum=momentum, nesterov=nesterov)
    path = []
    for g, lr in zip(grads, lrs):
        opt.param_groups[0]["lr"] = float(lr)
        p.grad = torch.tensor(np.asarray(g, float), dtype=torch.float64)
        opt.step()
        path.append(p.detach().numpy().copy())
    return path


# --- probes (run in the sandbox, and in the student's kernel for the self-check) ----------

def _nesterov(nesterov):
    return {} if nesterov is None else {"nesterov": bool(nesterov)}


def _stacked(path):
    """A list of same-shaped numeric arrays as one array (one array crosses the wire faster than a
    hundred); anything else as it is, for the check to judge."""
    try:
        if isinstance(path, (list, tuple)) and path and all(isinstance(p, np.ndarray) for p in path):
            return np.stack([np.asarray(p, dtype=float) for p in path])
    except (ValueError, TypeError):
        pass
    return path


def step_path_probe(momentum_step, w0, grads, lrs, momentum, nesterov=None):
    """``len(lrs)`` steps of the student's ``momentum_step`` from ``w0`` with an empty buffer (``v=None``),
    each fed the ``(w, v)`` the previous step returned and the recorded gradient ``grads[k]``.
    Reports ``{"path": [w after each step], "v": the last v}``."""
    w, v, path = np.array(w0, dtype=float), None, []
    for g, lr in zip(grads, lrs):
        w, v = momentum_step(w, np.array(g, dtype=float), v, float(lr), float(momentum), **_nesterov(nesterov))
        path.append(np.array(w, dtype=float))
    return {"path": _stacked(path), "v": v}


def heavy_ball_path_probe(heavy_ball_step, w0, grads, lrs, momentum):
    """``len(lrs)`` steps of the student's ``heavy_ball_step`` from ``w0`` with ``v`` = zeros, each fed the
    ``(w, v)`` the previous step returned. Reports ``{"path": [w after each step], "v": the last v}``."""
    w = np.array(w0, dtype=float)
    v, path = np.zeros_like(w), []
    for g, lr in zip(grads, lrs):
        w, v = heavy_ball_step(w, np.array(g, dtype=float), v, float(lr), float(momentum))
        path.append(np.array(w, dtype=float))
    return {"path": _stacked(path), "v": v}


def minimize_probe(minimize, A, c, w0, lrs, momentum, nesterov=None):
    """The student's ``minimize`` on ``grad_fn(w) = A @ w - c`` (a new array each call). Reports
    ``{"path": what it returned, "w0": w0 after the call}``."""
    A, c = np.array(A, dtype=float), np.array(c, dtype=float)
    w0 = np.array(w0, dtype=float)

    def grad_fn(w):
        return A @ np.asarray(w, dtype=float) - c

    path = minimize(grad_fn, w0, lrs, float(momentum), **_nesterov(nesterov))
    return {"path": _stacked(path), "w0": w0}


# --- checks -----------------------------------------------------------------------------

def _items(value, n, what):
    require(isinstance(value, (tuple, list)) and len(value) == n, f"{what} should return a tuple of {n}")
    return value


def _scale(*terms) -> float:
    """The largest magnitude among the terms an update adds up: the absolute part of the tolerance."""
    return max([float(np.max(np.abs(np.asarray(t, float)), initial=0.0)) for t in terms] + [0.0])


def _close(got, want, scale, what):
    close(got, want, rtol=RTOL, atol=RTOL * scale, what=what)


def _torch_step_terms(w, g, v, lr, mu, nesterov):
    v_new = np.array(g, float) if v is None else mu * v + g
    d = g + mu * v_new if nesterov else v_new
    return v_new, d


def _mistake(got, mistaken, right) -> bool:
    """``got`` is what a known mistake gives, and that mistake gives something else than the right answer."""
    return resembles(got, mistaken) and not resembles(mistaken, right)


def step_case(w, g, v, lr, momentum, nesterov, name, visible=False):
    """One ``momentum_step`` from a given state (``v=None``: the first step); ``nesterov=None`` leaves the
    argument out (its default, False)."""
    nest = bool(nesterov)

    def check(r):
        new_w, new_v = _items(r.value, 2, "momentum_step")
        want_w, want_v = momentum_step(w, g, v, lr, momentum, nest)
        v_old = np.zeros_like(g) if v is None else v
        sw = _scale(w, lr * np.asarray(g), lr * momentum * np.asarray(want_v), lr * want_v)
        sv = _scale(g, momentum * v_old)
        v_hints = [(lambda: v is None and _mistake(new_v, np.zeros_like(g), want_v),
                    "on the first step (v=None) the buffer becomes the gradient itself: v = g (a copy)"),
                   (lambda: _mistake(new_v, momentum * v_old + (1 - momentum) * g, want_v),
                    "no dampening: the buffer is momentum * v + g, not the average momentum * v + (1 - momentum) * g"),
                   (lambda: _mistake(new_v, lr * want_v, want_v) or _mistake(new_v, momentum * v_old + lr * g, want_v),
                    "the learning rate stays out of PyTorch's buffer: v = momentum * v + g, then w - lr * d"),
                   (lambda: nest and _mistake(new_v, g + momentum * want_v, want_v),
                    "return the buffer v = momentum * v + g, not the Nesterov direction g + momentum * v")]
        w_hints = [(lambda: nest and v is None and _mistake(new_w, w - lr * g, want_w),
                    "on the first step Nesterov still adds momentum * v: with v = g that is w - lr * (1 + momentum) * g"),
                   (lambda: nest and _mistake(new_w, w - lr * (g + momentum * v_old), want_w),
                    "Nesterov looks ahead with the NEW buffer: update v first, then d = g + momentum * v"),
                   (lambda: not nest and _mistake(new_w, w - lr * v_old, want_w),
                    "the step uses the old buffer: update v first (v = momentum * v + g), then step with it"),
                   (lambda: _mistake(new_w, 2 * w - want_w, want_w), "the step goes up the gradient: subtract lr * d")]
        diagnose(lambda: _close(new_v, want_v, sv, "the new v (the momentum buffer)"), v_hints)
        diagnose(lambda: _close(new_w, want_w, sw, "the new w"), w_hints)
        unchanged(r, 0, w, "w")
        unchanged(r, 1, g, "g")
        if v is not None:
            unchanged(r, 2, v, "v")
        require(0 not in r.shares_input, "the new w shares memory with an input array: return a new array")
        require(1 not in r.shares_input, "the new v shares memory with an input array (on the first step: g itself): "
                                         "return a new array, e.g. g.copy()")
    kwargs = {} if nesterov is None else {"nesterov": nest}
    return Case("test_momentum_step", name, call("momentum_step", w, g, v, lr, momentum, **kwargs), check, visible)


def _reference_path(w0, grads, lrs, momentum, nesterov):
    """(iterates, last buffer, scale of the w terms, scale of the v terms) of the reference from w0."""
    w, v, path, scale_w, scale_v = np.array(w0, float), None, [], _scale(w0), 0.0
    for g, lr in zip(grads, lrs):
        scale_v = max(scale_v, _scale(g, 0.0 if v is None else momentum * v))
        v_new, d = _torch_step_terms(w, g, v, lr, momentum, nesterov)
        w, v = momentum_step(w, g, v, lr, momentum, nesterov)
        scale_w = max(scale_w, _scale(w, lr * d, lr * momentum * v_new))
        path.append(w)
    return np.array(path).reshape((len(path),) + np.shape(w0)), v, scale_w, scale_v


def _path(value, steps, shape, what):
    require(isinstance(value, dict) and "path" in value, "the probe reported no path")
    path = value["path"]
    require(isinstance(path, (list, tuple, np.ndarray)) and len(path) == steps,
            f"{what} should give one iterate per learning rate: {steps}")
    a = as_array(list(path), what)
    require(a.shape == (steps,) + tuple(shape), f"{what}: every iterate should have the shape of w0, {tuple(shape)}")
    return a


def step_path_case(w0, grads, lrs, momentum, nesterov, name, visible=False):
    """Many steps of ``momentum_step`` fed its own output, against the reference (torch's rule)."""
    grads, lrs = [np.asarray(g, float) for g in grads], [float(x) for x in lrs]

    def check(r):
        path = _path(r.value, len(lrs), np.shape(w0), "the path of momentum_step")
        want, want_v, scale, scale_v = _reference_path(w0, grads, lrs, momentum, bool(nesterov))
        if len(lrs):
            require(resembles(path[0], want[0], rtol=1e-6),
                    "the FIRST step differs: with v=None the buffer is the gradient itself"
                    + (", and Nesterov steps by g + momentum * g" if nesterov else ""))
        _close(path, want, scale, "the iterates after each step")
        if len(lrs):
            _close(r.value["v"], want_v, scale_v, "the buffer after the last step")
    return Case("test_momentum_step", name,
                probe("momentum_step", "step_path_probe", w0, grads, lrs, momentum, nesterov=nesterov), check, visible)


def heavy_ball_case(w, g, v, lr, momentum, name, visible=False):
    def check(r):
        new_w, new_v = _items(r.value, 2, "heavy_ball_step")
        want_w, want_v = heavy_ball_step(w, g, v, lr, momentum)
        sv = _scale(momentum * np.asarray(v), lr * np.asarray(g))
        v_hints = [(lambda: _mistake(new_v, momentum * v + lr * g, want_v) or _mistake(new_v, -want_v, want_v),
                   "signs: v = momentum * v - lr * g, then w = w + v"),
                   (lambda: _mistake(new_v, momentum * v - g, want_v),
                    "the heavy-ball velocity carries the learning rate: v = momentum * v - lr * g")]
        w_hints = [(lambda: _mistake(new_w, w - want_v, want_w), "signs: v = momentum * v - lr * g, then w = w + v"),
                   (lambda: _mistake(new_w, w + v, want_w),
                    "step with the NEW velocity: v = momentum * v - lr * g first, then w = w + v")]
        diagnose(lambda: _close(new_v, want_v, sv, "the new v (the velocity)"), v_hints)
        diagnose(lambda: _close(new_w, want_w, _scale(w, want_v), "the new w"), w_hints)
        unchanged(r, 0, w, "w")
        unchanged(r, 1, g, "g")
        unchanged(r, 2, v, "v")
        require(0 not in r.shares_input, "the new w shares memory with an input array: return a new array")
        require(1 not in r.shares_input, "the new v shares memory with an input array: return a new array")
    return Case("test_heavy_ball_step", name, call("heavy_ball_step", w, g, v, lr, momentum), check, visible)


def heavy_ball_path_case(w0, grads, lrs, momentum, name, visible=False):
    """Many heavy-ball steps from v = zeros, fed their own output. With a constant learning rate these are the
    iterates of PyTorch's form as well; with a schedule they are not (the check is the heavy-ball rule's)."""
    grads, lrs = [np.asarray(g, float) for g in grads], [float(x) for x in lrs]

    def check(r):
        path = _path(r.value, len(lrs), np.shape(w0), "the path of heavy_ball_step")
        w, v, want, scale = np.array(w0, float), np.zeros(np.shape(w0)), [], _scale(w0)
        for g, lr in zip(grads, lrs):
            scale = max(scale, _scale(momentum * v, lr * g))
            w, v = heavy_ball_step(w, g, v, lr, momentum)
            scale = max(scale, _scale(w))
            want.append(w)
        _close(path, np.array(want), scale, "the iterates after each step")
    return Case("test_heavy_ball_step", name,
                probe("heavy_ball_step", "heavy_ball_path_probe", w0, grads, lrs, momentum), check, visible)


def minimize_case(A, c, w0, lrs, momentum, nesterov, name, visible=False):
    A, c, w0 = np.asarray(A, float), np.asarray(c, float), np.asarray(w0, float)
    nest = bool(nesterov)

    def grad_fn(w):
        return A @ w - c

    def check(r):
        w, v, ref, scale = np.array(w0), None, [], _scale(w0)
        for lr in np.asarray(lrs, float):
            g = grad_fn(w)
            v_new, d = _torch_step_terms(w, g, v, lr, momentum, nest)
            w, v = momentum_step(w, g, v, lr, momentum, nest)
            scale = max(scale, _scale(w, lr * d, momentum * v_new))
            ref.append(w)
        want = np.array(ref).reshape((len(ref),) + w0.shape)
        steps = len(want)
        require(isinstance(r.value, dict) and "path" in r.value, "the probe reported no path")
        path = r.value["path"]
        require(isinstance(path, (list, tuple, np.ndarray)), "minimize should return a list of iterates")
        if steps == 0:
            require(len(path) == 0, "with no learning rates minimize takes no step: return an empty list")
            require(np.array_equal(as_array(r.value.get("w0"), "w0"), w0), "w0 was modified")
            return
        got = as_array(list(path), "the iterates")
        if steps and got.shape == (steps + 1,) + w0.shape:
            raise Fail(f"minimize returned {steps + 1} iterates for {steps} learning rates",
                       summary="one iterate per learning rate: the path holds the iterates after each step, not w0")
        require(got.shape == (steps,) + w0.shape,
                f"minimize should return one iterate per learning rate ({steps}), each shaped like w0")
        lrs_f = [float(x) for x in lrs]
        hints = [(lambda: steps > 1 and resembles(got[0], w0) and resembles(got[1:], want[:-1]),
                  "path[0] is the iterate after the first step, not w0: append w after each step"),
                 (lambda: steps > 1 and resembles(got[:-1], got[1:]) and not resembles(want[:-1], want[1:]),
                  "every entry of the path is the same array: append a new array each step "
                  "(do not update w in place)"),
                 (lambda: resembles(got, minimize(grad_fn, w0, [lrs_f[0]] * steps, momentum, nest)),
                  "lrs is a schedule: step k uses lrs[k]"),
                 (lambda: nest and resembles(got, minimize(grad_fn, w0, lrs_f, momentum, False)),
                  "nesterov is ignored: pass it on to momentum_step"),
                 (lambda: resembles(got, minimize(lambda _: grad_fn(w0), w0, lrs_f, momentum, nest)),
                  "the gradient is always taken at w0: call grad_fn at the current w in every step")]
        diagnose(lambda: _close(got, want, scale, "the iterates after each step"), hints)
        require(np.array_equal(as_array(r.value.get("w0"), "w0"), w0),
                "w0 was modified: start from a copy, e.g. np.array(w0, dtype=float)")
    return Case("test_minimize", name,
                probe("minimize", "minimize_probe", A, c, w0, lrs, momentum, nesterov=nesterov), check, visible)


# --- the visible cases --------------------------------------------------------------------

def visible():
    w, g = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    yield step_case(w, g, None, 0.05, 0.9, None,
                    "first step (v=None): v = g, w - 0.05 * g = [0.975, 2.05]", visible=True)
    yield step_case(w, g, None, 0.05, 0.9, True,
                    "first step with Nesterov: w - 0.05 * (g + 0.9 * g) = [0.9525, 2.095]", visible=True)
    yield step_case(w, g, np.array([1.0, 1.0]), 0.05, 0.9, False,
                    "a later step: v = 0.9 * [1, 1] + g = [1.4, -0.1], w - 0.05 * v = [0.93, 2.005]", visible=True)
    yield step_case(w, g, np.array([1.0, 1.0]), 0.05, 0.9, True,
                    "a later step with Nesterov: d = g + 0.9 * v_new = [1.76, -1.09], w - 0.05 * d = [0.912, 2.0545]",
                    visible=True)
    rng = np.random.default_rng(0)
    w0, grads = rng.standard_normal(4), [rng.standard_normal(4) for _ in range(6)]
    for nesterov in (False, True):
        yield step_path_case(w0, grads, [0.1] * 6, 0.9, nesterov,
                             f"six steps as torch.optim.SGD takes them ({'Nesterov' if nesterov else 'plain momentum'})",
                             visible=True)
    yield step_path_case(w0, grads, [0.2, 0.1, 0.05, 0.05, 0.01, 0.0], 0.9, False,
                         "six steps under a schedule, the last one with lr = 0", visible=True)

    yield heavy_ball_case(np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.zeros(2), 0.1, 0.9,
                          "first step from v = 0: v = [-0.05, 0.1], w = [0.95, 2.1]", visible=True)
    yield heavy_ball_case(np.array([0.95, 2.1]), np.array([0.5, -1.0]), np.array([-0.05, 0.1]), 0.1, 0.9,
                          "second step: v = 0.9 * v - 0.1 * g = [-0.095, 0.19]", visible=True)
    yield heavy_ball_path_case(w0, grads, [0.1] * 6, 0.9,
                               "six steps with a constant lr: the same iterates as PyTorch's form", visible=True)

    A = np.diag([1.0, 10.0])
    yield minimize_case(A, np.zeros(2), np.array([1.0, 1.0]), [0.05] * 100, 0.9, None,
                        "100 steps on 0.5 w^T A w with A = diag(1, 10): one iterate per step", visible=True)
    yield minimize_case(A, np.zeros(2), np.array([1.0, 1.0]), [0.05] * 10, 0.9, True,
                        "10 Nesterov steps, as torch.optim.SGD(nesterov=True) takes them", visible=True)
    yield minimize_case(A, np.array([1.0, -2.0]), np.array([0.0, 0.0]), [0.1, 0.08, 0.06, 0.04, 0.02], 0.8, False,
                        "a schedule of 5 learning rates: step k uses lrs[k]", visible=True)
