"""Trusted cases of ex08: read by the judge only, never copied into the sandbox.

ex08's functions take objects (a model, an optimizer, a scheduler, a loader), which cannot
cross the sandbox wall. So every case names a probe of
:mod:`gdcourse.grading.probes.ex08_training_step` and the data to build those objects from
(a seed and a layer list for the model, an optimizer and scheduler spec, the batches); the
probe calls the student's function and reports the parameters, learning rates, modes and
returned values it left. The check here rebuilds the same model from the same seed (with the
probe module's public builders), runs what a correct function does on that twin, and
compares. Visible cases repeat the notebook's visible tests (their data drawn as the notebook
draws it); hidden ones draw fresh data and seeds from the run's ``rng``.
"""

from __future__ import annotations

import numpy as np
import torch

from gdcourse.grading.cases import Case, Fail, close, kind, probe, require
from gdcourse.grading.probes.ex08_training_step import (
    as_tensor, build_model, make_batches, make_layers, make_loader, make_loss, make_optimizer, make_scheduler)
from gdcourse.grading.wire import Tensor

REFERENCES = ()  # the course library has no training step of its own

MLP = [("linear", 4, 8), ("tanh",), ("linear", 8, 3)]
SMALL = [("linear", 5, 7), ("relu",), ("linear", 7, 2)]
DROPOUT = [("linear", 4, 8), ("relu",), ("dropout", 0.5), ("linear", 8, 3)]
TOL = {"float64": {"loss": 1e-9, "rtol": 1e-8, "atol": 1e-10},
       "float32": {"loss": 1e-5, "rtol": 1e-5, "atol": 1e-6}}


# --- what a correct function does, on the twin ------------------------------------------

def _twin(seed, layers, dtype, optimizer=None):
    net = build_model(layers, seed, dtype)
    return net, (make_optimizer(net.parameters(), optimizer) if optimizer is not None else None)


def _state(net):
    return [(name, p.detach().clone().numpy()) for name, p in net.named_parameters()]


def _reference_step(net, X, y, loss_fn, optimizer, max_norm=None):
    optimizer.zero_grad()
    loss = loss_fn(net(X), y)
    loss.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    optimizer.step()
    return loss.item()


def _reference_steps(seed, layers, dtype, optimizer, loss, batches, max_norm=None):
    """(losses, parameters after each step) of correct train_step calls on the twin."""
    net, opt = _twin(seed, layers, dtype, optimizer)
    loss_fn, losses, states = make_loss(loss), [], []
    for X, y in make_batches(batches, dtype):
        losses.append(_reference_step(net, X, y, loss_fn, opt, max_norm))
        states.append(_state(net))
    return losses, states


def _reference_epochs(seed, layers, dtype, optimizer, loss, batches, epochs=1, scheduler=None, max_norm=None,
                      scheduler_per=None, dataloader=None):
    """Per epoch: (mean batch loss, parameters, lr after, lr at each step) of a correct train_epoch."""
    net, opt = _twin(seed, layers, dtype, optimizer)
    sched = make_scheduler(opt, scheduler)
    loss_fn, loader, per = make_loss(loss), make_loader(batches, dtype, dataloader), scheduler_per or "epoch"
    out = []
    for _ in range(epochs):
        net.train()
        losses, lrs = [], []
        for X, y in loader:
            lrs.append(opt.param_groups[0]["lr"])
            losses.append(_reference_step(net, X, y, loss_fn, opt, max_norm))
            if sched is not None and per == "batch":
                sched.step()
        if sched is not None and per == "epoch":
            sched.step()
        out.append((float(np.mean(losses)), _state(net), opt.param_groups[0]["lr"], lrs))
    return out


def _reference_evaluation(seed, layers, dtype, loss, batches, warmup=()):
    """(loss over all samples, accuracy, buffers) of the twin in evaluation mode, after the same warm-up."""
    net = build_model(layers, seed, dtype)
    net.train()
    with torch.no_grad():
        for W in warmup:
            net(as_tensor(W, dtype))
    buffers = [b.detach().clone().numpy() for b in net.buffers()]
    net.eval()
    pairs = make_batches(batches, dtype)
    X, y = torch.cat([p[0] for p in pairs]), torch.cat([p[1] for p in pairs])
    with torch.no_grad():
        logits = net(X)
    return make_loss(loss)(logits, y).item(), (logits.argmax(dim=1) == y).sum().item() / len(y), buffers


def _reference_accumulation(seed, layers, dtype, optimizer, loss, calls):
    """Per call: (mean loss over all samples, parameters) of one step on the micro-batches put together."""
    net, opt = _twin(seed, layers, dtype, optimizer)
    loss_fn, out = make_loss(loss), []
    for micro in calls:
        pairs = make_batches(micro, dtype)
        X, y = torch.cat([p[0] for p in pairs]), torch.cat([p[1] for p in pairs])
        out.append((_reference_step(net, X, y, loss_fn, opt), _state(net)))
    return out


# --- checks ------------------------------------------------------------------------------

def _report(r, *keys, count=None):
    v = r.value
    require(isinstance(v, dict) and all(k in v for k in keys), "the probe's report is incomplete")
    if count is not None:
        require(isinstance(v["returned"], list) and len(v["returned"]) == count, "the probe's report is incomplete")
    return v


def _float(x, what, hint=""):
    require(isinstance(x, float) and not isinstance(x, bool),
            f"{what} should be a Python float, got {kind(x)}{hint}")
    return float(x)


def _loss(got, want, dtype, what, message=None):
    value = _float(got, what, ": return loss.item(), not the tensor (it keeps its graph alive)"
                   if isinstance(got, Tensor) else "")
    if not abs(value - want) <= TOL[dtype]["loss"] * max(1.0, abs(want)):
        raise Fail(message.format(want=want, got=value) if message else f"{what}: expected {want:.8g}, got {value:.8g}")


def _params(got, want, dtype, hint, rtol=None, atol=None):
    """The reported parameters (a list of tensors) against the twin's ``want`` [(name, array)]."""
    require(isinstance(got, list) and len(got) == len(want), "the probe's report is incomplete")
    tol = TOL[dtype]
    for g, (name, w) in zip(got, want):
        try:
            close(g, w, rtol=tol["rtol"] if rtol is None else rtol, atol=tol["atol"] if atol is None else atol,
                  what=f"parameter {name}")
        except Fail as exc:
            raise Fail(f"{hint} ({exc})") from None


def _steps(got, want, what="one optimizer step per call"):
    require(list(got) == list(want), f"{what}: expected {list(want)} optimizer steps in all, counted {list(got)}")


def _lr_close(got, want, what):
    require(isinstance(got, float) and abs(got - want) <= 1e-12 * max(1.0, abs(want)),
            f"{what}: expected lr {want:g}, got {got}")


def _seed(rng) -> int:
    return int(rng.integers(2**31 - 1))


# --- train_step ---------------------------------------------------------------------------

STEP_HINT = "the weights differ from what a correct step leaves"


def step_case(name, seed, layers, dtype, optimizer, loss, batches, *, max_norm=None, stale=None, visible=False,
              hints=None, loss_message=None, extra=None):
    """``hints[i]``: the message when the parameters after call ``i`` differ; ``extra(v)``: further checks first."""
    def check(r):
        v = _report(r, "returned", "params", "steps", count=len(batches))
        if extra is not None:
            extra(v)
        losses, states = _reference_steps(seed, layers, dtype, optimizer, loss, batches, max_norm)
        require(isinstance(v["params"], list) and len(v["params"]) == len(batches), "the probe's report is incomplete")
        for i, (got, want, params, state) in enumerate(zip(v["returned"], losses, v["params"], states)):
            _loss(got, want, dtype, f"the loss returned by call {i + 1}", loss_message)
            _params(params, state, dtype, (hints or {}).get(i, f"after call {i + 1}, {STEP_HINT}"))
        _steps(v["steps"], range(1, len(batches) + 1))
    return Case("test_train_step", name, probe("ex08_training_step:step", seed, layers, dtype, optimizer, loss,
                                               batches, max_norm=max_norm, stale=stale), check, visible)


def _visible_train_step():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        make_layers(MLP)
        Xa, ya = torch.randn(16, 4), torch.randint(0, 3, (16,))
        Xb, yb = torch.randn(16, 4), torch.randint(0, 3, (16,))
        torch.manual_seed(1)
        make_layers([("linear", 3, 1)])
        Xc, yc = torch.randn(8, 3), 1e4 * torch.randn(8, 1)
    a, b, c = (Xa.numpy(), ya.numpy()), (Xb.numpy(), yb.numpy()), (Xc.numpy(), yc.numpy())
    sgd = {"name": "sgd", "lr": 0.1}

    def returns_a_float(v):
        out = v["returned"][0]
        _float(out, "train_step's result", " (loss.item()): a tensor keeps its graph alive")

    yield step_case("the visible example: the loss before the step, as a Python float", 0, MLP, "float32", sgd,
                    "ce", [a], visible=True, extra=returns_a_float,
                    loss_message="return the loss computed BEFORE the step: expected {want:.6f}, got {got:.6f}")
    two = ("after two steps your weights differ from plain SGD's: clear the gradients (optimizer.zero_grad()) "
           "before loss.backward(), or the second step adds the first gradient again")
    yield step_case("the visible example: two steps equal two plain SGD steps", 0, MLP, "float32", sgd, "ce",
                    [a, b], visible=True, hints={0: "after one step, " + STEP_HINT, 1: two})
    yield step_case("the visible example: stale gradients on entry are cleared", 0, MLP, "float32", sgd, "ce",
                    [a, b, a], stale=[None, None, 100.0], visible=True, hints={
                        0: "after one step, " + STEP_HINT, 1: two,
                        2: "the gradients held stale values on entry and your step used them: clear them at the "
                           "START of train_step, before backward"})

    layers, clip_sgd = [("linear", 3, 1)], {"name": "sgd", "lr": 0.01}

    def clipped(v):
        before = [p.detach().numpy() for p in build_model(layers, 1, "float32").parameters()]
        require(isinstance(v["params"][0], list) and len(v["params"][0]) == len(before),
                "the probe's report is incomplete")
        after = [np.asarray(p.array if isinstance(p, Tensor) else p, float) for p in v["params"][0]]
        moved = float(np.sqrt(sum(((q - p) ** 2).sum() for p, q in zip(before, after))))
        require(moved <= 0.01 * (1 + 1e-4),
                f"with max_norm=1 and lr=0.01 one SGD step may move the weights by at most 0.01, yours moved "
                f"{moved:.4g}: clip the global norm (clip_grad_norm_) AFTER loss.backward() (before it there is "
                f"nothing to clip) and BEFORE optimizer.step()")
        require(moved > 0.0099, f"the clipped step should be lr * max_norm = 0.01 long (the gradient norm is far "
                                f"above 1), yours is {moved:.4g}")

    yield step_case("the visible example: a large gradient clipped to max_norm", 1, layers, "float32", clip_sgd,
                    "mse", [c], max_norm=1.0, visible=True, extra=clipped,
                    hints={0: "the clipped step differs from clip_grad_norm_ on the global norm, after backward "
                              "and before step"})


def _hidden_train_step(rng):
    def regression(n, scale):
        return (rng.standard_normal((n, 5)), scale * rng.standard_normal((n, 2)))

    yield step_case("Adam over several calls, a large gradient left unclipped without max_norm, "
                    "one optimizer step per call", _seed(rng), SMALL, "float64",
                    {"name": "adam", "lr": float(rng.uniform(0.005, 0.02))}, "mse",
                    [regression(10, 50) for _ in range(3)])
    yield step_case("SGD with momentum, the global norm clipped, stale gradients before every call", _seed(rng),
                    SMALL, "float64", {"name": "sgd", "lr": float(rng.uniform(0.02, 0.08)), "momentum": 0.9},
                    "mse", [regression(6, 100) for _ in range(3)], max_norm=float(rng.uniform(0.3, 0.8)),
                    stale=[float(s) for s in 5 * rng.standard_normal(3)])
    n = int(rng.integers(6, 12))
    yield step_case("a small gradient is not clipped (float32 classifier)", _seed(rng), SMALL, "float32",
                    {"name": "sgd", "lr": 0.1}, "ce",
                    [(rng.standard_normal((n, 5)).astype(np.float32), rng.integers(0, 2, n))], max_norm=1e3)
    n = int(rng.integers(8, 20))
    yield step_case("stale gradients on entry do not enter the step; the loss before the step as a float",
                    _seed(rng), MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.05, 0.5))}, "ce",
                    [(rng.standard_normal((n, 4)), rng.integers(0, 3, n)) for _ in range(2)],
                    stale=[float(s) for s in 50 * rng.standard_normal(2)])
    yield step_case("a large gradient is clipped on the norm of all parameters together", _seed(rng),
                    [("linear", 5, 4), ("tanh",), ("linear", 4, 2)], "float64",
                    {"name": "sgd", "lr": float(rng.uniform(0.005, 0.05))}, "mse",
                    [regression(8, 1e3) for _ in range(2)], max_norm=float(rng.uniform(0.5, 2.0)))


# --- train_epoch --------------------------------------------------------------------------

def epoch_case(name, seed, layers, dtype, optimizer, loss, batches, *, epochs=1, scheduler=None, max_norm=None,
               scheduler_per=None, dataloader=None, mode="train", visible=False, first=None, hint=None):
    """``first(v)``: checks before the comparison with a correct train_epoch (whose messages are generic)."""
    kwargs = dict(epochs=epochs, scheduler=scheduler, max_norm=max_norm, scheduler_per=scheduler_per,
                  dataloader=dataloader)

    def check(r):
        v = _report(r, "returned", "params", "lr", "training", "modes", "step_lrs", count=epochs)
        if first is not None:
            first(v)
        want = _reference_epochs(seed, layers, dtype, optimizer, loss, batches, **kwargs)
        for e, (got, (mean, state, lr, lrs)) in enumerate(zip(v["returned"], want)):
            what = f"epoch {e + 1}"
            _loss(got, mean, dtype, f"the mean batch loss train_epoch returned ({what})")
            steps = v["step_lrs"][e]
            require(len(steps) == len(lrs), f"{what}: expected {len(lrs)} optimizer steps (one per batch), "
                                            f"counted {len(steps)}")
            for i, (g, w) in enumerate(zip(steps, lrs)):
                _lr_close(g, w, f"{what}, batch {i + 1}: the optimizer step")
            _params(v["params"][e], state, dtype, hint or f"the weights after {what} differ from a correct "
                                                            "train_epoch's")
            _lr_close(v["lr"][e], lr, f"after {what}")
    return Case("test_train_epoch", name, probe("ex08_training_step:epoch", seed, layers, dtype, optimizer, loss,
                                                batches, mode=mode, **kwargs), check, visible)


def mode_case(name, seed, X, y, visible=False):
    """Dropout model handed over in evaluation mode: every forward pass of the epoch in training mode."""
    batches = [(X[i:i + 8], y[i:i + 8]) for i in range(0, len(y), 8)]

    def check(r):
        v = _report(r, "returned", "training", "modes", count=1)
        modes = v["modes"][0]
        require(isinstance(modes, list) and len(modes) > 0, "train_epoch ran no forward pass")
        require(all(m == "train" for m in modes) and v["training"][0] is True,
                "train_epoch must switch the model to training mode (model.train()) before the first batch: "
                "it arrived in eval mode, with dropout off")
        _float(v["returned"][0], "train_epoch's result")
    return Case("test_train_epoch", name, probe("ex08_training_step:epoch", seed, DROPOUT, "float32",
                                                {"name": "sgd", "lr": 0.1}, "ce", batches, mode="eval"),
                check, visible)


def _visible_train_epoch():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(2)
        Xd, yd = torch.randn(32, 4), torch.randint(0, 3, (32,))
    X, y = Xd.numpy(), yd.numpy()
    loader = [(X[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)]
    yield mode_case("the visible example: training mode from the first batch", 2, X, y, visible=True)

    sgd, halve = {"name": "sgd", "lr": 0.1}, {"name": "step", "step_size": 1, "gamma": 0.5}

    def per_epoch(v):
        lr_now = v["lr"][0]
        hint = (" (that is 0.1 * 0.5**4: you stepped it after every batch)"
                if isinstance(lr_now, float) and abs(lr_now - 0.1 * 0.5 ** 4) < 1e-12 else "")
        require(isinstance(lr_now, float) and abs(lr_now - 0.05) < 1e-12,
                f"scheduler_per='epoch': step the scheduler once, after the last batch; expected lr 0.05, "
                f"got {lr_now:g}{hint}")
        (mean, _, _, _), = _reference_epochs(3, MLP, "float32", sgd, "ce", loader, scheduler=halve)
        got = v["returned"][0]
        require(isinstance(got, float) and abs(got - mean) < 1e-6,
                f"return the mean of the batch losses: expected {mean:.6f}, got {got}")

    yield epoch_case("the visible example: the scheduler once per epoch (the default)", 3, MLP, "float32", sgd,
                     "ce", loader, scheduler=halve, visible=True, first=per_epoch,
                     hint="the weights after one epoch differ from four SGD steps at lr 0.1")

    def per_batch(v):
        require(isinstance(v["lr"][0], float) and abs(v["lr"][0] - 0.1 * 0.5 ** 4) < 1e-12,
                "scheduler_per='batch': step the scheduler after every batch")
        require(len(v["step_lrs"][0]) == 4 and isinstance(v["step_lrs"][0][0], float)
                and abs(v["step_lrs"][0][0] - 0.1) < 1e-12,
                "per batch, the first batch must use lr 0.1: call scheduler.step() after optimizer.step(), "
                "not before")

    yield epoch_case("the visible example: the scheduler after every batch", 3, MLP, "float32", sgd, "ce", loader,
                     scheduler=halve, scheduler_per="batch", visible=True, first=per_batch,
                     hint="per batch, the batches must use lr 0.1, 0.05, 0.025, 0.0125: call scheduler.step() "
                          "after optimizer.step(), not before")

    def a_float(v):
        _float(v["returned"][0], "train_epoch's result (the mean of the batch losses)")

    yield epoch_case("the visible example: no scheduler at all", 3, MLP, "float32", sgd, "ce", loader,
                     visible=True, first=a_float)


def _hidden_train_epoch(rng):
    n = 10 * int(rng.integers(2, 5))
    Xr, yr = rng.standard_normal((n, 3)), 1e4 * rng.standard_normal((n, 2))
    yield epoch_case("max_norm reaches every step of the epoch", _seed(rng), [("linear", 3, 2)], "float64",
                     {"name": "sgd", "lr": 0.01}, "mse", [(Xr[i:i + 10], yr[i:i + 10]) for i in range(0, n, 10)],
                     max_norm=float(rng.uniform(0.2, 1.0)))

    size = int(rng.integers(3, 7))
    Xd, yd = rng.standard_normal((4 * size, 4)), rng.integers(0, 3, 4 * size)
    yield epoch_case("a DataLoader over several epochs, the scheduler stepped once per epoch", _seed(rng),
                     [("linear", 4, 6), ("relu",), ("linear", 6, 3)], "float64", {"name": "sgd", "lr": 0.2}, "ce",
                     [(Xd, yd)], epochs=3, scheduler={"name": "step", "step_size": 2, "gamma": 0.1},
                     dataloader=size)

    Xb, yb = rng.standard_normal((24, 4)), rng.integers(0, 3, 24)
    yield epoch_case("the scheduler stepped after every optimizer step, with momentum, over two epochs",
                     _seed(rng), MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.1, 0.3)), "momentum": 0.9},
                     "ce", [(Xb[i:i + 6], yb[i:i + 6]) for i in range(0, 24, 6)], epochs=2,
                     scheduler={"name": "exponential", "gamma": float(rng.uniform(0.5, 0.9))}, scheduler_per="batch")

    X = rng.standard_normal((24, 4)).astype(np.float32)
    yield mode_case("training mode from the first batch when handed over in evaluation mode", _seed(rng), X,
                    rng.integers(0, 3, 24))


# --- evaluate -----------------------------------------------------------------------------

def evaluate_case(name, seed, layers, dtype, batches, *, mode="train", dataloader=None, warmup=(), repeat=1,
                  visible=False, first=None):
    tol = 1e-5 if dtype == "float32" else 1e-9

    def check(r):
        v = _report(r, "returned", "training", "buffers", "modes", "saved", count=repeat)
        if first is not None:
            first(v)
        want_loss, want_acc, buffers = _reference_evaluation(seed, layers, dtype, "ce", batches, warmup)
        got = v["returned"][0]
        require(isinstance(got, tuple) and len(got) == 2, "return a tuple (loss, accuracy)")
        loss, acc = got
        require(isinstance(loss, float) and isinstance(acc, float),
                f"return two Python floats, got {kind(loss)} and {kind(acc)}")
        require(abs(loss - want_loss) < tol * max(1.0, abs(want_loss)),
                f"expected the loss in evaluation mode, {want_loss:.6f}, got {loss:.6f}: call model.eval() first "
                "(dropout must be off), and weight each batch's mean loss by its size")
        require(abs(acc - want_acc) < 1e-6, f"expected accuracy {want_acc:.4f}, got {acc}")
        require(all(g == got for g in v["returned"]), "two evaluations of the same model must agree: is dropout "
                                                      "still on?")
        modes = v["modes"]
        require(isinstance(modes, list) and modes and all(m == "eval" for m in modes),
                "every forward pass of evaluate must run in evaluation mode (model.eval())")
        require(v["training"] is (mode == "train"),
                f"the model was in {'training' if mode == 'train' else 'evaluation'} mode before evaluate: "
                f"put it back in that mode before returning")
        require(v["saved"] == 0, f"evaluate recorded an autograd graph ({v['saved']} tensors saved for a backward "
                                 "pass that never comes): wrap it in torch.no_grad()")
        require(isinstance(v["buffers"], list) and len(v["buffers"]) == len(buffers),
                "the probe's report is incomplete")
        for g, w in zip(v["buffers"], buffers):
            try:
                close(g, w, rtol=1e-6, atol=1e-7, what="a buffer")
            except Fail:
                raise Fail("evaluate changed the batch norm running statistics: in evaluation mode they stay "
                           "as they are") from None
    return Case("test_evaluate", name, probe("ex08_training_step:evaluation", seed, layers, dtype, "ce", batches,
                                             mode=mode, dataloader=dataloader, warmup=list(warmup), repeat=repeat),
                check, visible)


EVAL_NET = [("linear", 4, 16), ("relu",), ("dropout", 0.5), ("linear", 16, 3)]
BN_NET = [("linear", 4, 8), ("batchnorm", 8), ("relu",), ("linear", 8, 3)]


def _visible_evaluate():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(4)
        make_layers(EVAL_NET)
        Xe, ye = torch.randn(40, 4), torch.randint(0, 3, (40,))
    X, y = Xe.numpy(), ye.numpy()
    loader = [(X[i:i + 10], y[i:i + 10]) for i in range(0, 40, 10)]

    yield evaluate_case("the visible example: (loss, accuracy) in evaluation mode, the mode put back", 4, EVAL_NET,
                        "float32", loader, repeat=2, visible=True)

    def no_graph(v):
        require(v["saved"] == 0, f"evaluate recorded an autograd graph ({v['saved']} tensors saved for a backward "
                                 "pass that never comes): wrap it in torch.no_grad()")

    yield evaluate_case("the visible example: no autograd graph", 4, EVAL_NET, "float32", loader, visible=True,
                        first=no_graph)


def _hidden_evaluate(rng):
    n = int(rng.integers(30, 50))
    X, y = rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    cuts = np.sort(rng.choice(np.arange(2, n - 2), size=2, replace=False))
    while len({cuts[0], cuts[1] - cuts[0], n - cuts[1]}) < 3:
        cuts = np.sort(rng.choice(np.arange(2, n - 2), size=2, replace=False))
    uneven = [(X[a:b], y[a:b]) for a, b in zip([0, *cuts], [*cuts, n])]
    yield evaluate_case("unequal batches: the mean over samples; a model in evaluation mode stays in it",
                        _seed(rng), EVAL_NET, "float64", uneven, mode="eval")

    warmup = [rng.standard_normal((16, 4)).astype(np.float32) for _ in range(3)]
    n = int(rng.integers(21, 30))
    Xb = (3 + 2 * rng.standard_normal((n, 4))).astype(np.float32)
    yield evaluate_case("batch norm: running statistics untouched, a DataLoader, training mode put back",
                        _seed(rng), BN_NET, "float32", [(Xb, rng.integers(0, 3, n))], dataloader=10, warmup=warmup)

    n = int(rng.integers(20, 40))
    X, y = rng.standard_normal((n, 4)), rng.integers(0, 3, n)
    yield evaluate_case("no autograd graph and evaluation mode at every forward pass, from training mode",
                        _seed(rng), EVAL_NET, "float64", [(X[i:i + 8], y[i:i + 8]) for i in range(0, n, 8)])


# --- accumulation_step --------------------------------------------------------------------

def accumulation_case(name, seed, layers, dtype, optimizer, loss, calls, *, stale=None, visible=False,
                      tol=None, hint=None):
    t = TOL[dtype] if tol is None else tol

    def check(r):
        v = _report(r, "returned", "params", "steps", count=len(calls))
        want = _reference_accumulation(seed, layers, dtype, optimizer, loss, calls)
        n = sum(len(m[1]) for m in calls[0])
        for i, (got, (mean, state)) in enumerate(zip(v["returned"], want)):
            value = _float(got, "accumulation_step's result (the mean loss)")
            require(abs(value - mean) <= t["loss"] * max(1.0, abs(mean)),
                    f"return the mean loss over all {n} samples, {mean:.6f}; got {value:.6f}")
            _steps(v["steps"][:i + 1], range(1, i + 2))
            _params(v["params"][i], state, dtype, hint or f"after call {i + 1}, the weights differ from one step "
                                                           "on all the micro-batches at once",
                    rtol=t["rtol"], atol=t["atol"])
    return Case("test_accumulation_step", name,
                probe("ex08_training_step:accumulation", seed, layers, dtype, optimizer, loss, calls, stale=stale),
                check, visible)


def _visible_accumulation():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        make_layers(MLP)
        Xm, ym = torch.randn(24, 4, dtype=torch.float64), torch.randint(0, 3, (24,))
    X, y = Xm.numpy(), ym.numpy()
    micro = [(X[i:i + 6], y[i:i + 6]) for i in range(0, 24, 6)]
    yield accumulation_case(
        "the visible example: one SGD step on all samples, stale gradients on entry", 5, MLP, "float64",
        {"name": "sgd", "lr": 0.5}, "ce", [micro], stale=1.0, visible=True,
        tol={"loss": 1e-10, "rtol": 1e-10, "atol": 1e-12},
        hint="the result must equal ONE SGD step on all 24 samples at once: zero_grad once before the first "
             "micro-batch (not in each), divide each micro-batch loss by the number of micro-batches, and step "
             "once at the end")


def _hidden_accumulation(rng):
    layers = [("linear", 3, 5), ("relu",), ("linear", 5, 2)]
    adam32 = {"loss": 1e-5, "rtol": 1e-4, "atol": 1e-6}
    for name, k, size, dtype in (("Adam, two calls: one optimizer step per call, the mean loss", 2, 5, "float64"),
                                 ("Adam with many small micro-batches: one step per call", 5, 3, "float64"),
                                 ("Adam in float32: one step per call, the mean loss", 3, 8, "float32")):
        micro = [(rng.standard_normal((size, 3)).astype(dtype), rng.standard_normal((size, 2)).astype(dtype))
                 for _ in range(k)]
        yield accumulation_case(name, _seed(rng), layers, dtype, {"name": "adam", "lr": 0.01}, "mse", [micro, micro],
                                tol=adam32 if dtype == "float32" else None)
    k, size = int(rng.integers(2, 5)), int(rng.integers(3, 7))
    calls = [[(rng.standard_normal((size, 4)), rng.integers(0, 3, size)) for _ in range(k)] for _ in range(2)]
    yield accumulation_case("stale gradients on entry, SGD with momentum, each micro-batch loss scaled",
                            _seed(rng), MLP, "float64", {"name": "sgd", "lr": float(rng.uniform(0.1, 0.5)),
                                                         "momentum": 0.9}, "ce", calls,
                            stale=[float(s) for s in 3 * rng.standard_normal(2)])


def cases(rng):
    yield from _visible_train_step()
    yield from _hidden_train_step(rng)
    yield from _visible_train_epoch()
    yield from _hidden_train_epoch(rng)
    yield from _visible_evaluate()
    yield from _hidden_evaluate(rng)
    yield from _visible_accumulation()
    yield from _hidden_accumulation(rng)
