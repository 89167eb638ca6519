"""ex14, optimizer memory and curvature: the course's reference, the probes, the case builders and the visible cases.

What is compared, as the exercise's statement says:

- ``optimizer_memory``: every entry of the table exactly (they are whole numbers of bytes), against
  the rules of the statement (``test_optimizer_memory``) and against the bytes torch really holds after
  one step of ``torch.optim.SGD`` / ``Adam`` on float32 models (``test_optimizer_memory_torch``); a name
  other than "sgd", "momentum" and "adam" must raise ``ValueError``.
- ``hessian_vector_product``: ``|Hv - H v| / |H v|`` below ``HVP_RTOL`` over all entries together, ``H``
  the full Hessian built on the trusted side; ``params`` and ``v`` unchanged after the call (same values,
  ``params`` still not requiring gradients and without a ``.grad``).
- ``top_hessian_eigenvalue``: a Python float within ``EIG_RTOL`` times the largest |eigenvalue| of the
  most positive eigenvalue of the full Hessian; ``params`` unchanged after the call. Its cases run with
  the course's ``hessian_vector_product`` (a stand-in).
- ``predict_divergence``: a bool, equal to ``lr * lam_max > 2 * (1 + momentum)`` (what
  ``torch.optim.SGD`` does on a quadratic); exactly on the boundary the answer is ``False``.

Models and losses cannot cross the sandbox wall: cases name them by data (:func:`build_model`,
:func:`problem`, :func:`direction`), and both sides build the same objects from it.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from gdcourse.grading.cases import Case, Fail, as_array, call, diagnose, kind, probe, require
from gdcourse.models import mlp

HVP_RTOL = 1e-12
EIG_RTOL = 1e-3
KEYS = ("params", "grads", "optimizer_state", "master_weights", "total")
STATE_TENSORS = {"sgd": 0, "momentum": 1, "adam": 2}


# --- the notebook's helpers (the same code as its imports cell) ----------------------------

def flatten(tree, like=None):
    return torch.cat([tree[k].reshape(-1) for k in (tree if like is None else like)])


def mlp_problem(seed=0, sizes=(5, 8, 3), n=32):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, sizes[0], generator=g, dtype=torch.float64)
    y = torch.randint(0, sizes[-1], (n,), generator=g)
    params = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        params[f"w{i}"] = torch.randn(b, a, generator=g, dtype=torch.float64) / math.sqrt(a)
        params[f"b{i}"] = 0.1 * torch.randn(b, generator=g, dtype=torch.float64)
    layers = len(sizes) - 1

    def loss_fn(p):
        h = X
        for i in range(layers):
            h = h @ p[f"w{i}"].T + p[f"b{i}"]
            if i < layers - 1:
                h = torch.tanh(h)
        return nn.functional.cross_entropy(h, y)

    return loss_fn, params


def quadratic_problem(eigenvalues, seed=0):
    g = torch.Generator().manual_seed(seed)
    lam = torch.as_tensor(eigenvalues, dtype=torch.float64)
    n = lam.numel()
    Q, _ = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
    A = Q @ torch.diag(lam) @ Q.T
    A = (A + A.T) / 2
    c = torch.randn(n, generator=g, dtype=torch.float64)
    w = c + torch.randn(n, generator=g, dtype=torch.float64)
    m = n // 4
    params = {"a": w[:2 * m].reshape(2, m).clone(), "b": w[2 * m:].clone()}

    def loss_fn(p):
        d = torch.cat([p["a"].reshape(-1), p["b"]]) - c
        return 0.5 * d @ A @ d

    return loss_fn, params, A


def exact_hessian(loss_fn, params):
    shapes = [(k, t.shape, t.numel()) for k, t in params.items()]

    def f(w):
        p, i = {}, 0
        for k, shape, numel in shapes:
            p[k] = w[i:i + numel].reshape(shape)
            i += numel
        return loss_fn(p)

    return torch.autograd.functional.hessian(f, flatten(params).clone())


# --- the reference ----------------------------------------------------------------------------

def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):
    if optimizer_name not in STATE_TENSORS:
        raise ValueError(f"unknown optimizer {optimizer_name!r}; expected one of {sorted(STATE_TENSORS)}")
    n_all = n_trainable = 0
    for p in model.parameters():  # yields a shared tensor once
        n_all += p.numel()
        if p.requires_grad:
            n_trainable += p.numel()
    table = {"params": n_all * param_bytes, "grads": n_trainable * param_bytes,
             "optimizer_state": n_trainable * STATE_TENSORS[optimizer_name] * 4,
             "master_weights": n_trainable * 4 if master_weights else 0}
    table["total"] = sum(table.values())
    return table


def hessian_vector_product(loss_fn, params, v):
    p = {k: t.detach().requires_grad_(True) for k, t in params.items()}
    with torch.enable_grad():
        grads = torch.autograd.grad(loss_fn(p), list(p.values()), create_graph=True)
        dot = sum((g * v[k]).sum() for k, g in zip(p, grads))
        hv = torch.autograd.grad(dot, list(p.values()))
    return {k: h.detach() for k, h in zip(p, hv)}


def top_hessian_eigenvalue(loss_fn, params, iters=100, seed=0):
    gen = torch.Generator().manual_seed(seed)
    like = next(iter(params.values()))

    def unflatten(x):
        out, i = {}, 0
        for k, t in params.items():
            out[k] = x[i:i + t.numel()].reshape(t.shape)
            i += t.numel()
        return out

    n = sum(t.numel() for t in params.values())

    def power(shift):
        x = torch.randn(n, generator=gen, dtype=like.dtype).to(like.device)
        x = x / x.norm()
        estimate = 0.0
        for _ in range(iters):
            hx = flatten(hessian_vector_product(loss_fn, params, unflatten(x))).detach() - shift * x
            new = float(x @ hx)
            norm = hx.norm()
            if norm == 0:
                return 0.0
            x = hx / norm
            if abs(new - estimate) <= 1e-10 * abs(new):
                return new
            estimate = new
        return estimate

    mu = power(0.0)
    if mu >= 0:
        return mu
    return power(mu) + mu


def predict_divergence(lr, lam_max, momentum=0.0):
    return bool(lr * lam_max > 2.0 * (1.0 + momentum))


REFERENCE = {"optimizer_memory": optimizer_memory, "hessian_vector_product": hessian_vector_product,
             "top_hessian_eigenvalue": top_hessian_eigenvalue, "predict_divergence": predict_divergence}


# --- models, problems and directions from data (both sides) -------------------------------------

class TiedLM(nn.Module):
    """The notebook's language model: the output layer reuses the embedding matrix; batch norm adds buffers."""

    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.BatchNorm1d(dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, tokens):
        return self.out(self.norm(self.embed(tokens)))


class Adapter(nn.Module):
    """A frozen base layer with a trainable low-rank adapter (as LoRA)."""

    def __init__(self, dim=64, rank=4):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.base.requires_grad_(False)
        self.down, self.up = nn.Linear(dim, rank, bias=False), nn.Linear(rank, dim, bias=False)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


def _frozen(model, *indices):
    for i in indices:
        model[i].requires_grad_(False)
    return model


def _tied_chain():
    model = nn.Sequential(nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 12))
    model[2].weight = model[0].weight  # shared: one gradient, one state
    return _frozen(model, 4)


def _shared_twice():
    shared = nn.Linear(7, 7)
    return nn.Sequential(shared, nn.Tanh(), shared, nn.Linear(7, 2))


MODELS = {
    "linear": lambda: nn.Linear(10, 5),
    "frozen_first": lambda: _frozen(nn.Sequential(nn.Linear(100, 11), nn.ReLU(), nn.Linear(11, 4)), 0),
    "tied_lm": lambda: TiedLM(),
    "tied_lm_small": lambda: TiedLM(30, 8),
    "mlp_batchnorm_dropout": lambda: mlp(64, [32, 16], 10, batch_norm=True, dropout=0.1),
    "adapter": lambda: Adapter(),
    "conv_frozen": lambda: _frozen(nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                                                 nn.Linear(8 * 6 * 6, 10)), 0),
    "shared_twice": _shared_twice,
    "all_frozen": lambda: nn.Linear(5, 5).requires_grad_(False),
    "frozen_middle": lambda: _frozen(nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 30), nn.ReLU(),
                                                   nn.Linear(30, 3)), 2),
    "tied_chain": _tied_chain,
    "plain": lambda: nn.Sequential(nn.Linear(9, 40), nn.ReLU(), nn.Linear(40, 2)),
}


def build_model(name: str, seed: int = 0) -> nn.Module:
    """The model ``name`` of ``MODELS``, initialised under ``torch.manual_seed(seed)`` (global state kept)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return MODELS[name]()


def problem(spec: dict):
    """``(loss_fn, params)`` of ``spec``: ``{"kind": "mlp", "seed", "sizes", "n"}`` (the notebook's
    ``mlp_problem``) or ``{"kind": "quadratic", "eigenvalues", "seed"}`` (``quadratic_problem``), optionally
    with ``scale`` (params multiplied by it), ``linear`` (plus ``linear`` times the sum of all parameters:
    the same Hessian, a larger gradient) and ``bowl`` (minus ``bowl`` times the squared norm of ``w0``)."""
    if spec["kind"] == "mlp":
        base, params = mlp_problem(int(spec["seed"]), tuple(int(s) for s in spec["sizes"]), int(spec["n"]))
    elif spec["kind"] == "quadratic":
        base, params, _ = quadratic_problem([float(x) for x in spec["eigenvalues"]], int(spec["seed"]))
    else:
        raise ValueError(f"unknown problem {spec['kind']!r}")
    scale, linear, bowl = float(spec.get("scale", 1.0)), float(spec.get("linear", 0.0)), float(spec.get("bowl", 0.0))
    params = {k: scale * t for k, t in params.items()}

    def loss_fn(p):
        loss = base(p)
        if linear:
            loss = loss + linear * sum(t.sum() for t in p.values())
        if bowl:
            loss = loss - bowl * p["w0"].square().sum()
        return loss

    return loss_fn, params


def direction(spec: dict, params: dict) -> dict:
    """``v`` of ``spec``: ``{"kind": "random", "seed", "scale"}``, ``{"kind": "unit", "index"}`` (the unit
    vector of a flattened index) or ``{"kind": "ones"}``; float64 tensors shaped like ``params``."""
    if spec["kind"] == "random":
        g = torch.Generator().manual_seed(int(spec["seed"]))
        return {k: float(spec["scale"]) * torch.randn(t.shape, generator=g, dtype=torch.float64) for k, t in params.items()}
    if spec["kind"] == "ones":
        return {k: torch.ones_like(t) for k, t in params.items()}
    flat = torch.zeros(sum(t.numel() for t in params.values()), dtype=torch.float64)
    flat[int(spec["index"])] = 1.0
    out, i = {}, 0
    for k, t in params.items():
        out[k] = flat[i:i + t.numel()].reshape(t.shape).clone()
        i += t.numel()
    return out


# --- probes (run in the sandbox) ------------------------------------------------------------------

def memory(fn, model, optimizer_name, options):
    """``fn(build_model(model), optimizer_name, **options)``: what it returned, or that it raised
    (and whether a ValueError)."""
    net = build_model(model)
    try:
        out = fn(net, optimizer_name, **dict(options))
    except Exception as exc:  # the case says whether raising is right
        return {"raised": type(exc).__name__, "message": str(exc)[:300], "value_error": isinstance(exc, ValueError)}
    return {"returned": out}


def _kept(params: dict, originals: dict, tensors: dict) -> dict:
    """Whether ``params`` holds what it held: the same keys, the same tensors with the same values,
    not requiring gradients and without a ``.grad``."""
    same = set(params) == set(originals) and all(
        params[k] is tensors[k] and torch.equal(tensors[k].detach(), originals[k]) for k in originals)
    return {"same": bool(same), "requires_grad": any(t.requires_grad for t in tensors.values()),
            "grad": any(t.grad is not None for t in tensors.values())}


def hvp(fn, spec, v_spec):
    """``fn(loss_fn, params, v)`` on ``problem(spec)`` and ``direction(v_spec)``: what it returned, and
    whether params and v are as they were."""
    loss_fn, params = problem(spec)
    v = direction(v_spec, params)
    originals, tensors = {k: t.clone() for k, t in params.items()}, dict(params)
    v_before = {k: t.clone() for k, t in v.items()}
    out = fn(loss_fn, params, v)
    v_same = set(v) == set(v_before) and all(torch.equal(v[k], v_before[k]) for k in v_before)
    return {"returned": out, "params": _kept(params, originals, tensors), "v_same": bool(v_same)}


def eigenvalue(fn, spec, iters, seed):
    """``fn(loss_fn, params, iters=iters, seed=seed)`` on ``problem(spec)``: what it returned, and
    whether params are as they were."""
    loss_fn, params = problem(spec)
    originals, tensors = {k: t.clone() for k, t in params.items()}, dict(params)
    out = fn(loss_fn, params, iters=int(iters), seed=int(seed))
    return {"returned": out, "params": _kept(params, originals, tensors)}


# --- what the trusted side computes ----------------------------------------------------------------

def _counts(model):
    n_all = sum(p.numel() for p in model.parameters())
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    n_dup = sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))
    n_buffers = sum(b.numel() for b in model.buffers())
    return n_all, n_train, n_dup, n_buffers


def torch_bytes(model, optimizer_name, seed=0):
    """One real training step; the bytes torch then holds: (params, grads, optimizer state without
    scalar step counters)."""
    make = {"sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
            "momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
            "adam": lambda ps: torch.optim.Adam(ps, lr=1e-3)}[optimizer_name]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        opt = make([p for p in model.parameters() if p.requires_grad])
        x = torch.randn(4, model[0].in_features)
        model(x).square().mean().backward()
        opt.step()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    state = sum(t.numel() * t.element_size() for s in opt.state.values() for t in s.values()
                if torch.is_tensor(t) and t.dim() > 0)
    return params, grads, state


@functools.lru_cache(maxsize=64)
def _spectrum(spec_key: str):
    import json
    loss_fn, params = problem(json.loads(spec_key))
    H = exact_hessian(loss_fn, params)
    return H.numpy(), flatten(params).numpy(), list(params), [tuple(t.shape) for t in params.values()]


def _key(spec: dict) -> str:
    import json
    return json.dumps(spec, sort_keys=True)


# --- checks ----------------------------------------------------------------------------------------

def _table(r, visible):
    report = r.value
    require(isinstance(report, dict), "the probe reported nothing")
    if "raised" in report:
        message = report.get("message")
        raise Fail(f"optimizer_memory raised {report['raised']}" + (f": {message}" if isinstance(message, str) and message else ""),
                   summary=f"optimizer_memory raised {report['raised']}")
    got = report.get("returned")
    require(isinstance(got, dict) and set(KEYS) <= set(got),
            f"return a dict with the keys {list(KEYS)}; got {kind(got) if not isinstance(got, dict) else sorted(got)}")
    for k in KEYS:
        require(isinstance(got[k], (int, float, np.integer, np.floating)) and not isinstance(got[k], bool),
                f"table[{k!r}] should be a number of bytes, got {kind(got[k])}")
    return got


def memory_case(model, optimizer_name, param_bytes=4, master_weights=False, name="", visible=False):
    options = {"param_bytes": param_bytes, "master_weights": master_weights}

    def check(r):
        got = _table(r, visible)
        net = build_model(model)
        want = optimizer_memory(net, optimizer_name, **options)
        n_all, n_train, n_dup, n_buffers = _counts(net)
        k = STATE_TENSORS[optimizer_name]
        hints = {
            "params": [(lambda: got["params"] == n_dup * param_bytes and n_dup != n_all,
                        "a tensor shared by two modules (tied weights) is stored once: count it once"),
                       (lambda: got["params"] == (n_all + n_buffers) * param_bytes and n_buffers,
                        "buffers (batch norm's running statistics) are not parameters: do not count them")],
            "grads": [(lambda: got["grads"] == n_all * param_bytes and n_all != n_train,
                       "a frozen parameter (requires_grad=False) has no gradient: count the trainable ones")],
            "optimizer_state": [(lambda: got["optimizer_state"] == n_train * k * param_bytes,
                                 "the optimizer state is float32, 4 bytes a number whatever param_bytes is"),
                                (lambda: got["optimizer_state"] == n_all * k * 4 and n_all != n_train,
                                 "frozen parameters have no optimizer state")],
            "master_weights": [(lambda: got["master_weights"] == n_train * param_bytes and master_weights,
                                "the master copy is float32: 4 bytes per trainable parameter"),
                               (lambda: got["master_weights"] == n_all * 4 and n_all != n_train,
                                "frozen parameters have no master copy")],
            "total": [(lambda: True, "total is the sum of the four other entries")],
        }
        for key in KEYS:
            def same(key=key):
                if got[key] != want[key]:
                    message = f"table[{key!r}] should be {want[key]} bytes, got {got[key]}"
                    raise Fail(message, summary=f"table[{key!r}] is wrong")
            diagnose(same, hints[key])
    return Case("test_optimizer_memory", name,
                probe("optimizer_memory", "memory", model, optimizer_name, options), check, visible)


def unknown_name_case(optimizer_name, name="", visible=False):
    def check(r):
        report = r.value
        require(isinstance(report, dict) and "raised" in report,
                f"optimizer_name={optimizer_name!r} must raise ValueError; your function returned a table")
        require(report.get("value_error") is True,
                f"optimizer_name={optimizer_name!r} must raise ValueError, not {report.get('raised')}")
    return Case("test_optimizer_memory", name, probe("optimizer_memory", "memory", "linear", optimizer_name, {}),
                check, visible)


def torch_case(model, optimizer_name, name="", visible=False):
    def check(r):
        got = _table(r, visible)
        params, grads, state = torch_bytes(build_model(model), optimizer_name)
        require(got["params"] == params, f"{optimizer_name}: torch holds {params} bytes of parameters, you count {got['params']}"
                if visible else "the parameters' bytes differ from what torch holds")
        require(got["grads"] == grads, f"{optimizer_name}: after backward torch holds {grads} bytes of gradients (none for the "
                                       f"frozen layer), you count {got['grads']}"
                if visible else "the gradients' bytes differ from what torch holds after backward")
        require(got["optimizer_state"] == state, f"{optimizer_name}: torch.optim keeps {state} bytes of state (none for frozen "
                                                 f"parameters), you count {got['optimizer_state']}"
                if visible else "the optimizer state's bytes differ from what torch.optim holds after a step")
    return Case("test_optimizer_memory_torch", name, probe("optimizer_memory", "memory", model, optimizer_name, {}),
                check, visible)


def _kept_check(report, what):
    kept = report.get("params")
    require(isinstance(kept, dict) and kept.get("same") is True,
            f"{what} changed params: work on copies (the values, and the dict, must be as they were)")
    require(kept.get("requires_grad") is False,
            f"{what} left params requiring gradients: make your own copies that do (t.detach().requires_grad_())")
    require(kept.get("grad") is False, f"{what} left a .grad on params: differentiate copies, with torch.autograd.grad")


def hvp_case(spec, v_spec, name="", visible=False):
    def check(r):
        report = r.value
        require(isinstance(report, dict), "the probe reported nothing")
        H, _, keys, shapes = _spectrum(_key(spec))
        hv = report.get("returned")
        require(isinstance(hv, dict) and set(hv) == set(keys),
                f"return a dict with the keys of params {keys}; got {kind(hv) if not isinstance(hv, dict) else sorted(map(str, hv))}")
        for k, shape in zip(keys, shapes):
            a = as_array(hv[k], f"Hv[{k!r}]")
            require(a.shape == shape, f"Hv[{k!r}] has shape {a.shape}, expected {shape}" if visible
                    else "an entry of Hv does not have its parameter's shape")
        got = np.concatenate([as_array(hv[k]).reshape(-1) for k in keys])
        _, params = problem(spec)
        v = flatten(direction(v_spec, params)).numpy()
        want = H @ v
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        hint = ("Hv is the gradient of <grad f, v> with v held fixed: differentiate it with autograd "
                "(a finite difference of gradients is not exact)")
        if not err < HVP_RTOL:
            raise Fail(f"Hv is off by a relative {err:.1e} (allowed: {HVP_RTOL:g}). {hint}",
                       summary=f"Hv is not exact (relative error above {HVP_RTOL:g}): {hint}")
        _kept_check(report, "hessian_vector_product")
        require(report.get("v_same") is True, "hessian_vector_product changed v")
    return Case("test_hvp", name, probe("hessian_vector_product", "hvp", spec, v_spec), check, visible)


def eigenvalue_case(spec, iters=100, seed=0, test="test_top_eigenvalue", name="", visible=False):
    def check(r):
        report = r.value
        require(isinstance(report, dict), "the probe reported nothing")
        got = report.get("returned")
        require(isinstance(got, float), f"return a Python float, got {kind(got)}")
        eig = np.linalg.eigvalsh(_spectrum(_key(spec))[0])
        top, bottom = float(eig[-1]), float(eig[0])
        radius = float(np.abs(eig).max())
        tol = EIG_RTOL * radius

        def right():
            if not (math.isfinite(got) and abs(got - top) <= tol):
                message = f"the largest eigenvalue is {top:.6g}, you returned {got:.6g}" if visible else \
                    "the result is not the largest (most positive) eigenvalue"
                raise Fail(message, summary=message)
        near = lambda x: math.isfinite(got) and abs(got - x) <= 10 * tol
        diagnose(right, [
            (lambda: -bottom > top and near(bottom),
             "that is the eigenvalue of largest MAGNITUDE, which plain power iteration finds; the task asks for "
             "the most positive one: run power iteration again on H - mu*I"),
            (lambda: -bottom > top and near(-bottom),
             "that is the magnitude of the most negative eigenvalue (|Hv| of a unit v); the task asks for the "
             "most positive eigenvalue, with its sign"),
            (lambda: near(top * abs(top)) and abs(top) > 1.5,
             "that is its square; the estimate of the eigenvalue is v.Hv for a UNIT vector v"),
            (lambda: not math.isfinite(got) or abs(got) > 2 * radius,
             "normalise v to unit length at every step and use the Rayleigh quotient v.Hv"),
            (lambda: True, "use Hessian-vector products (part 2), not gradients, and enough iterations"),
        ])
        _kept_check(report, "top_hessian_eigenvalue")
    return Case(test, name, probe("top_hessian_eigenvalue", "eigenvalue", spec, iters, seed), check, visible)


def divergence_case(lr, lam_max, momentum=None, name="", visible=False):
    """``momentum`` None: the argument is left out (its default, 0, applies)."""
    beta = 0.0 if momentum is None else momentum
    want = lr * lam_max > 2 * (1 + beta)
    args = (lr, lam_max) if momentum is None else (lr, lam_max, momentum)

    def check(r):
        got = r.value
        require(isinstance(got, (bool, np.bool_)), f"return a bool, got {kind(got)}")
        if bool(got) != want:
            fact = (f"lr * lam_max = {lr * lam_max:.6g}, momentum = {beta:g}: torch.optim.SGD "
                    f"{'diverges' if want else 'does not diverge'}, you predicted {'divergence' if got else 'no divergence'}")
            if lr * lam_max == 2 * (1 + beta):
                hint = ("exactly on the boundary lr * lam_max = 2 (1 + momentum) a root has |z| = 1: the error neither "
                        "grows nor shrinks, which is not divergence (mind rounding if you compute the roots)")
            elif bool(got) == (lr * lam_max > 2):
                hint = "momentum moves the boundary: it is not lr * lam_max = 2"
            else:
                hint = "the prediction does not follow the roots of z^2 - (1 + beta - lr lam) z + beta"
            raise Fail(f"{fact}. {hint[0].upper()}{hint[1:]}" if visible else hint, summary=hint)
    return Case("test_predict_divergence", name, call("predict_divergence", *args), check, visible)


# --- the visible cases -----------------------------------------------------------------------------

def visible():
    yield memory_case("linear", "sgd", name="nn.Linear(10, 5), sgd: 55 parameters, 440 bytes", visible=True)
    yield memory_case("linear", "momentum", name="nn.Linear(10, 5), momentum: one buffer", visible=True)
    yield memory_case("linear", "adam", name="nn.Linear(10, 5), adam: two moments", visible=True)
    yield memory_case("linear", "adam", 2, True, name="nn.Linear(10, 5), mixed-precision adam: 16 bytes a parameter",
                      visible=True)
    yield memory_case("frozen_first", "adam", 2, True, name="a frozen first layer: memory, no gradient, no state",
                      visible=True)
    yield memory_case("tied_lm", "sgd", name="TiedLM: a shared matrix counted once, buffers not counted", visible=True)
    for name in ("sgd", "momentum", "adam"):
        yield torch_case("frozen_middle", name, name=f"{name}: the bytes torch holds after one step, a frozen middle "
                                                      f"layer", visible=True)
    yield hvp_case({"kind": "quadratic", "eigenvalues": [5.0, 2.0, 1.0, 0.5, -1.0, -3.0, 0.2, 0.1], "seed": 0},
                   {"kind": "unit", "index": 0}, name="a quadratic, v = the first unit vector: A's first column",
                   visible=True)
    mlp0 = {"kind": "mlp", "seed": 0, "sizes": [5, 8, 3], "n": 32}
    yield hvp_case(mlp0, {"kind": "random", "seed": 0, "scale": 3.0}, name="the tanh MLP, v not a unit vector",
                   visible=True)
    yield hvp_case({**mlp0, "linear": 30.0}, {"kind": "random", "seed": 0, "scale": 3.0},
                   name="the tanh MLP plus a linear term: the same Hessian, a gradient 600 times larger", visible=True)
    yield eigenvalue_case({"kind": "quadratic", "eigenvalues": [10.0, 4.0, 2.0, 1.0, 0.5, 0.1, 0.0, -0.5, -1.0, -2.0,
                                                               3.0, 0.3], "seed": 1},
                          name="a quadratic with eigenvalues up to 10", visible=True)
    for seed in (0, 3):
        yield eigenvalue_case({"kind": "mlp", "seed": seed, "sizes": [5, 8, 3], "n": 32}, seed=seed,
                              name=f"the tanh MLP of seed {seed}: the eigenvalues of the full Hessian", visible=True)
    yield eigenvalue_case({"kind": "quadratic", "eigenvalues": [3.0, 0.5, 0.2, 0.0, -0.7, -2.0, -4.0, -9.0], "seed": 2},
                          test="test_top_eigenvalue_negative",
                          name="a negative eigenvalue, -9, larger in magnitude than every positive one (3 at most)",
                          visible=True)
    lam = 7.5
    for momentum, times in [(0.0, 1.9), (0.0, 2.1), (0.0, 1.4), (0.9, 3.6), (0.9, 3.9), (0.5, 2.5), (0.5, 3.2)]:
        yield divergence_case(times / lam, lam, momentum, name=f"lr * lam_max = {times}, momentum = {momentum}",
                              visible=True)
