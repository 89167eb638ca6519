"""The NumPy reference optimizers match torch.optim in float64."""

import numpy as np
import pytest
import torch

from gdcourse import optim

SHAPES = [(7,), (3, 4), (2, 3, 5), (1,)]
STEPS = 25


def _problem(seed):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) * 10.0 ** rng.uniform(-3, 1) for s in SHAPES] for _ in range(STEPS)]
    return params, grads


def _torch_run(cls, kwargs, params, grads, lrs=None):
    tensors = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    opt = cls(tensors, **kwargs)
    history = []
    for t, gs in enumerate(grads):
        if lrs is not None:
            for group in opt.param_groups:
                group["lr"] = lrs[t]
        for x, g in zip(tensors, gs):
            x.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
        history.append([x.detach().numpy().copy() for x in tensors])
    return history


def _ours_run(opt, params, grads, lrs=None):
    params = [p.copy() for p in params]
    state = opt.init(params)
    history = []
    for t, gs in enumerate(grads):
        opt.step(params, gs, state, lr=None if lrs is None else lrs[t])
        history.append([p.copy() for p in params])
    return history


def _max_rel_error(a_hist, b_hist):
    worst = 0.0
    for a_step, b_step in zip(a_hist, b_hist):
        for a, b in zip(a_step, b_step):
            worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(1e-12, np.abs(a) + np.abs(b)))))
    return worst


CASES = [
    ("sgd", optim.SGD(lr=0.05), torch.optim.SGD, dict(lr=0.05)),
    ("sgd-wd", optim.SGD(lr=0.05, weight_decay=0.1), torch.optim.SGD, dict(lr=0.05, weight_decay=0.1)),
    ("momentum", optim.SGD(lr=0.05, momentum=0.9), torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
    ("momentum-dampening", optim.SGD(lr=0.05, momentum=0.9, dampening=0.5), torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.5)),
    ("nesterov", optim.SGD(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), torch.optim.SGD,
     dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("adam", optim.Adam(lr=0.01), torch.optim.Adam, dict(lr=0.01)),
    ("adam-l2", optim.Adam(lr=0.01, weight_decay=0.1, eps=1e-6), torch.optim.Adam, dict(lr=0.01, weight_decay=0.1, eps=1e-6)),
    ("adamw", optim.AdamW(lr=0.01, weight_decay=0.1), torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    ("adamw-default", optim.AdamW(), torch.optim.AdamW, dict()),
    ("rmsprop", optim.RMSprop(lr=0.01), torch.optim.RMSprop, dict(lr=0.01)),
    ("rmsprop-centered-momentum", optim.RMSprop(lr=0.01, centered=True, momentum=0.5, weight_decay=0.01),
     torch.optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.01)),
    ("adagrad", optim.Adagrad(lr=0.1), torch.optim.Adagrad, dict(lr=0.1)),
    ("adagrad-decay", optim.Adagrad(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1),
     torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1)),
]


@pytest.mark.parametrize("name, ours, cls, kwargs", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_over_many_steps(name, ours, cls, kwargs):
    params, grads = _problem(seed=len(name))
    err = _max_rel_error(_ours_run(ours, params, grads), _torch_run(cls, kwargs, params, grads))
    assert err <= 1e-7, f"{name}: relative error {err:.2e}"


@pytest.mark.parametrize("name, ours, cls, kwargs", [CASES[2], CASES[5], CASES[7]], ids=["momentum", "adam", "adamw"])
def test_per_step_learning_rate_matches_torch_param_group_edits(name, ours, cls, kwargs):
    params, grads = _problem(seed=3)
    lrs = list(np.linspace(0.001, 0.05, STEPS))
    err = _max_rel_error(_ours_run(ours, params, grads, lrs), _torch_run(cls, kwargs, params, grads, lrs))
    assert err <= 1e-7


def test_the_comparison_would_catch_a_missing_bias_correction():
    """Guard against a vacuous test: a plausible bug must break the match."""
    params, grads = _problem(seed=5)

    def adam_without_bias_correction(params, grads, lr=0.01, b1=0.9, b2=0.999, eps=1e-8):
        params = [p.copy() for p in params]
        m, v, history = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params], []
        for gs in grads:
            for p, g, m_, v_ in zip(params, gs, m, v):
                m_[...] = b1 * m_ + (1 - b1) * g
                v_[...] = b2 * v_ + (1 - b2) * g * g
                p -= lr * m_ / (np.sqrt(v_) + eps)
            history.append([p.copy() for p in params])
        return history

    bad = _max_rel_error(adam_without_bias_correction(params, grads), _torch_run(torch.optim.Adam, dict(lr=0.01), params, grads))
    assert bad > 1e-3


def test_params_and_state_are_updated_in_place_and_nothing_is_returned():
    p = [np.ones(3)]
    before = p[0]
    opt = optim.Adam(lr=0.1)
    state = opt.init(p)
    assert opt.step(p, [np.ones(3)], state) is None
    assert p[0] is before and state["t"] == 1
    assert np.all(p[0] < 1)


def _exercise_functions(assignment):
    """The reference solution's functions of an exercise (the answers a student writes)."""
    from submissions import solution_answers

    namespace = {"np": np}
    for source in solution_answers(assignment).values():
        try:
            exec(compile(source, assignment, "exec"), namespace)
        except SyntaxError:  # a written answer, not code
            pass
    return namespace


def test_an_exercise_step_function_stands_in_for_the_library_optimizer():
    """ex04's adam_step and ex03's momentum_step, through PerArray, take the library's steps."""
    rng = np.random.default_rng(0)
    shapes, steps = [(4, 3), (3,)], 40
    grads = [[rng.normal(size=s) for s in shapes] for _ in range(steps)]
    start = [rng.normal(size=s) for s in shapes]
    ex04, ex03 = _exercise_functions("ex04-adam"), _exercise_functions("ex03-momentum")
    pairs = [(optim.Adam(lr=0.01), optim.PerArray(ex04["adam_step"], ex04["init_state"], lr=0.01)),
             (optim.SGD(lr=0.05, momentum=0.9),
              optim.PerArray(lambda w, g, v, lr: ex03["momentum_step"](w, g, v, lr, 0.9), lambda w: None, lr=0.05))]
    for library, student in pairs:
        ours, theirs = [p.copy() for p in start], [p.copy() for p in start]
        s_ours, s_theirs = library.init(ours), student.init(theirs)
        for t, g in enumerate(grads):
            lr = 0.01 * (1 + t % 3)  # a schedule overrides the rate of both
            library.step(ours, g, s_ours, lr=lr)
            student.step(theirs, g, s_theirs, lr=lr)
        assert _max_rel_error([ours], [theirs]) < 1e-12, type(library).__name__
        assert not np.allclose(ours[0], start[0])  # they moved


def test_bad_inputs_get_clear_errors():
    opt = optim.SGD(lr=0.1)
    with pytest.raises(ValueError, match="2 gradients"):
        opt.step([np.zeros(2)], [np.zeros(2), np.zeros(2)], opt.init([np.zeros(2)]))
    with pytest.raises(ValueError, match="shape"):
        opt.step([np.zeros(2)], [np.zeros(3)], opt.init([np.zeros(2)]))
    with pytest.raises(TypeError, match="float NumPy array"):
        opt.step([np.zeros(2, dtype=int)], [np.zeros(2)], opt.init([np.zeros(2)]))
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(lr=0.1, nesterov=True)


def test_state_bytes_counts_what_an_optimizer_must_keep():
    p = [np.zeros(1000, dtype=np.float32)]
    assert optim.state_bytes(optim.SGD().init(p)) == 0
    assert optim.state_bytes(optim.SGD(momentum=0.9).init(p)) == 4000
    assert optim.state_bytes(optim.Adam().init(p)) == 8000  # m and v; scratch is workspace
