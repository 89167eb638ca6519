"""The NumPy reference optimizers match torch.optim in float64."""

import numpy as np
import pytest
import torch

from gdcourse import optim

SHAPES = [(7,), (3, 4), (2, 3, 5), (1,)]
STEPS = 25


def _problem(seed, steps=STEPS):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) * 10.0 ** rng.uniform(-3, 1) for s in SHAPES] for _ in range(steps)]
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


# --- optimizers after Adam (chapter 23): Muon, Lion, Adafactor, Shampoo ----------------------

MATRIX_SHAPES = [(3, 4), (6, 2), (5, 5), (8, 3)]


def _matrix_problem(seed, shapes=MATRIX_SHAPES, steps=STEPS):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) * 10.0 ** rng.uniform(-3, 1) for s in shapes] for _ in range(steps)]
    return params, grads


@pytest.fixture
def torch_muon_in_float64(monkeypatch):
    """torch.optim.Muon casts to bfloat16 before Newton-Schulz (`grad.bfloat16()`); make that cast
    an identity copy so that torch's own iteration runs in float64 and can be compared at 1e-7."""
    monkeypatch.setattr(torch.Tensor, "bfloat16", lambda self, *a, **k: self.clone())


@pytest.mark.parametrize("shape", [(4, 9), (9, 4), (6, 6), (1, 5)])
def test_newton_schulz_matches_torchs_iteration(shape, torch_muon_in_float64):
    from torch.optim._muon import _zeropower_via_newtonschulz
    G = np.random.default_rng(shape[0]).standard_normal(shape)
    theirs = _zeropower_via_newtonschulz(torch.tensor(G), optim.NS_COEFFICIENTS, 5, 1e-7).numpy()
    ours = optim.newton_schulz(G)
    assert ours.shape == shape and np.max(np.abs(ours - theirs)) <= 1e-12 * np.max(np.abs(theirs)) + 1e-15
    assert np.array_equal(G, np.random.default_rng(shape[0]).standard_normal(shape))  # input untouched


def test_newton_schulz_pushes_singular_values_towards_one_whatever_the_conditioning():
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((32, 32)))
    V, _ = np.linalg.qr(rng.standard_normal((16, 16)))
    S = np.logspace(0, -3, 16)                            # condition number 1000
    s = np.linalg.svd(optim.newton_schulz(U[:, :16] * S @ V.T), compute_uv=False)
    assert 0.3 < s.min() and s.max() < 1.25               # after 5 steps: not exactly 1 (by design)
    s10 = np.linalg.svd(optim.newton_schulz(U[:, :16] * S @ V.T, steps=10), compute_uv=False)
    assert 0.65 < s10.min() and s10.max() < 1.25
    with pytest.raises(ValueError, match="2-D"):
        optim.newton_schulz(np.ones(3))


def test_torchs_bfloat16_newton_schulz_is_within_bfloat16_error_of_ours():
    """Unpatched torch (bfloat16 iteration) agrees with the float64 reference only to bf16's
    precision: 8 bits of mantissa, about 4e-3 relative per rounding, compounded over 5 steps."""
    from torch.optim._muon import _zeropower_via_newtonschulz
    G = np.random.default_rng(1).standard_normal((16, 32))
    theirs = _zeropower_via_newtonschulz(torch.tensor(G), optim.NS_COEFFICIENTS, 5, 1e-7).double().numpy()
    rel = np.linalg.norm(optim.newton_schulz(G) - theirs) / np.linalg.norm(theirs)
    assert 1e-4 < rel < 5e-2


MUON_CASES = [
    ("muon-default", {}),
    ("muon-no-nesterov-no-decay", dict(nesterov=False, weight_decay=0.0, momentum=0.9)),
    ("muon-match-rms-adamw", dict(adjust_lr_fn="match_rms_adamw", lr=0.02, weight_decay=0.01)),
    ("muon-fewer-steps", dict(ns_steps=3, lr=0.05)),
]


@pytest.mark.parametrize("name, kwargs", MUON_CASES, ids=[c[0] for c in MUON_CASES])
def test_muon_matches_torch_in_float64_over_many_steps(name, kwargs, torch_muon_in_float64):
    params, grads = _matrix_problem(seed=len(name))
    err = _max_rel_error(_ours_run(optim.Muon(**kwargs), params, grads), _torch_run(torch.optim.Muon, kwargs, params, grads))
    assert err <= 1e-7, f"{name}: relative error {err:.2e}"


def test_muon_per_step_learning_rate_matches_torch(torch_muon_in_float64):
    params, grads = _matrix_problem(seed=11)
    lrs = list(np.linspace(0.001, 0.05, STEPS))
    err = _max_rel_error(_ours_run(optim.Muon(), params, grads, lrs), _torch_run(torch.optim.Muon, {}, params, grads, lrs))
    assert err <= 1e-7


def test_the_muon_comparison_would_catch_a_missing_shape_scale(torch_muon_in_float64):
    """Guard: a Muon that forgets sqrt(max(1, rows/cols)) on tall matrices must not match."""
    params, grads = _matrix_problem(seed=4, shapes=[(8, 3)])
    bad = _max_rel_error(_ours_run(optim.Muon(adjust_lr_fn="match_rms_adamw"), params, grads),
                         _torch_run(torch.optim.Muon, {}, params, grads))
    assert bad > 1e-3


def test_muon_refuses_what_belongs_to_adamw():
    with pytest.raises(ValueError, match="AdamW"):
        optim.Muon().init([np.zeros((3, 3)), np.zeros(3)])
    with pytest.raises(ValueError, match="adjust_lr_fn"):
        optim.Muon(adjust_lr_fn="rms")


def _lion_by_the_paper(params, grads, lr, beta1, beta2, wd):
    """Chen et al. (2023), Algorithm 2, one line per line of the paper."""
    params = [p.copy() for p in params]
    ms = [np.zeros_like(p) for p in params]
    history = []
    for gs in grads:
        for k, (theta, g) in enumerate(zip(params, gs)):
            update = np.sign(beta1 * ms[k] + (1 - beta1) * g)
            params[k] = theta - lr * (update + wd * theta)
            ms[k] = beta2 * ms[k] + (1 - beta2) * g
        history.append([p.copy() for p in params])
    return history


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=3e-3, betas=(0.95, 0.98), weight_decay=1.0)], ids=["default", "decay"])
def test_lion_follows_the_papers_algorithm(kwargs):
    params, grads = _problem(seed=8)
    full = dict(lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0) | kwargs
    ours = _ours_run(optim.Lion(**kwargs), params, grads)
    err = _max_rel_error(ours, _lion_by_the_paper(params, grads, full["lr"], *full["betas"], full["weight_decay"]))
    assert err <= 1e-12
    if not full["weight_decay"]:  # every coordinate moved by exactly lr at every step
        steps = np.concatenate([(b - a).ravel() for a, b in zip(ours[0], ours[1])])
        assert np.allclose(np.abs(steps), full["lr"], rtol=1e-9)


def test_lion_keeps_one_buffer():
    p = [np.zeros((10, 10), dtype=np.float32)]
    assert optim.state_bytes(optim.Lion().init(p)) == 400


ADAFACTOR_CASES = [
    ("adafactor-default", {}),
    ("adafactor-decay-clip", dict(lr=0.05, weight_decay=0.1, d=2.0, beta2_decay=-0.5)),
    ("adafactor-eps", dict(eps=(1e-30, 1e-2))),
]


@pytest.mark.parametrize("name, kwargs", ADAFACTOR_CASES, ids=[c[0] for c in ADAFACTOR_CASES])
def test_adafactor_matches_torch_over_many_steps(name, kwargs):
    params, grads = _problem(seed=len(name))          # vectors, matrices and a 3-D array
    err = _max_rel_error(_ours_run(optim.Adafactor(**kwargs), params, grads), _torch_run(torch.optim.Adafactor, kwargs, params, grads))
    assert err <= 1e-7, f"{name}: relative error {err:.2e}"


def test_adafactor_stores_rows_plus_cols_and_torch_agrees():
    p = np.zeros((100, 30))
    assert optim.state_bytes(optim.Adafactor().init([p, np.zeros(7)])) == (100 + 30 + 7) * 8
    x = torch.zeros(100, 30, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adafactor([x])
    x.grad = torch.ones_like(x)
    opt.step()
    held = sum(v.numel() for k, v in opt.state[x].items() if k != "step")
    assert held == 100 + 30


def _shampoo_by_the_paper(params, grads, lr, eps):
    """Gupta et al. (2018), Algorithm 1: L_0 = eps I, R_0 = eps I; roots by scipy, not eigh."""
    from scipy.linalg import fractional_matrix_power
    params = [p.copy() for p in params]
    Ls = [eps * np.eye(p.shape[0]) for p in params]
    Rs = [eps * np.eye(p.shape[1]) for p in params]
    history = []
    for gs in grads:
        for k, G in enumerate(gs):
            Ls[k] = Ls[k] + G @ G.T
            Rs[k] = Rs[k] + G.T @ G
            params[k] = params[k] - lr * np.real(fractional_matrix_power(Ls[k], -0.25) @ G @ fractional_matrix_power(Rs[k], -0.25))
        history.append([p.copy() for p in params])
    return history


def test_shampoo_follows_the_papers_algorithm():
    params, grads = _matrix_problem(seed=2, steps=15)
    err = _max_rel_error(_ours_run(optim.Shampoo(lr=0.1, eps=1e-4), params, grads), _shampoo_by_the_paper(params, grads, 0.1, 1e-4))
    assert err <= 1e-7


def test_shampoos_first_step_is_the_orthogonalised_gradient():
    G = np.random.default_rng(3).standard_normal((6, 4))
    U, _, Vt = np.linalg.svd(G, full_matrices=False)
    p = [np.zeros((6, 4))]
    opt = optim.Shampoo(lr=1.0, eps=1e-12)
    opt.step(p, [G], opt.init(p))
    assert np.allclose(-p[0], U @ Vt, atol=1e-6)
    assert optim.state_bytes(opt.init(p)) == (36 + 16) * 8
    with pytest.raises(ValueError, match="2-D"):
        opt.init([np.zeros(3)])


# --- Schedule-Free AdamW and the EMA of weights (chapter 22) -----------------------------------

SF_STEPS = 200


def _long_problem(seed, steps=SF_STEPS):
    return _problem(seed, steps)


def _schedulefree_run(cls, kwargs, params, grads, lrs=None):
    """(y after every step, x at the end) from a schedulefree optimizer in float64."""
    tensors = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    opt = cls(tensors, **kwargs)
    opt.train()
    history = []
    for t, gs in enumerate(grads):
        if lrs is not None:
            opt.param_groups[0]["lr"] = lrs[t]
        for p, g in zip(tensors, gs):
            p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
        history.append([p.detach().numpy().copy() for p in tensors])
    opt.eval()
    return history, [p.detach().numpy().copy() for p in tensors]


def _ours_sf_run(opt, params, grads, lrs=None):
    params = [p.copy() for p in params]
    state = opt.init(params)
    history = _ours_run_with_state(opt, params, grads, state, lrs)
    opt.eval_params(params, state)
    return history, [p.copy() for p in params]


def _ours_run_with_state(opt, params, grads, state, lrs=None):
    history = []
    for t, gs in enumerate(grads):
        opt.step(params, gs, state, lr=None if lrs is None else lrs[t])
        history.append([p.copy() for p in params])
    return history


SF_CASES = [
    ("defaults", {}),
    ("weight-decay", dict(lr=0.01, weight_decay=0.1)),
    ("warmup", dict(lr=0.02, warmup_steps=30)),
    ("polynomial-weights", dict(lr=0.01, r=1.0, weight_lr_power=0.0, betas=(0.95, 0.99), warmup_steps=10)),
]


@pytest.mark.parametrize("name,kwargs", SF_CASES, ids=[c[0] for c in SF_CASES])
def test_schedule_free_adamw_matches_schedulefrees_reference_over_many_steps(name, kwargs, capsys):
    from schedulefree import AdamWScheduleFreeReference

    params, grads = _long_problem(0)
    ours_y, ours_x = _ours_sf_run(optim.ScheduleFreeAdamW(**kwargs), params, grads)
    ref_y, ref_x = _schedulefree_run(AdamWScheduleFreeReference, kwargs, params, grads)
    assert _max_rel_error(ours_y, ref_y) <= 1e-7
    assert _max_rel_error([ours_x], [ref_x]) <= 1e-7
    assert _max_rel_error([ours_x], [ours_y[-1]]) > 1e-3     # x and y really differ


def test_schedule_free_adamw_matches_the_packages_default_optimizer_too():
    """AdamWScheduleFree keeps only z and y (x is recovered by extrapolation): the same update."""
    from schedulefree import AdamWScheduleFree

    kwargs = dict(lr=0.01, weight_decay=0.05, warmup_steps=20)
    params, grads = _long_problem(1)
    ours_y, ours_x = _ours_sf_run(optim.ScheduleFreeAdamW(**kwargs), params, grads)
    ref_y, ref_x = _schedulefree_run(AdamWScheduleFree, dict(kwargs, foreach=False), params, grads)
    assert _max_rel_error(ours_y, ref_y) <= 1e-7 and _max_rel_error([ours_x], [ref_x]) <= 1e-7


def test_schedule_free_per_step_learning_rate_matches_param_group_edits(capsys):
    from schedulefree import AdamWScheduleFreeReference

    params, grads = _long_problem(2)
    lrs = [0.01 * (1 + np.sin(t / 9)) for t in range(SF_STEPS)]
    ours = _ours_sf_run(optim.ScheduleFreeAdamW(lr=1.0), params, grads, lrs)
    ref = _schedulefree_run(AdamWScheduleFreeReference, dict(lr=1.0), params, grads, lrs)
    assert _max_rel_error(ours[0], ref[0]) <= 1e-7 and _max_rel_error([ours[1]], [ref[1]]) <= 1e-7


def test_the_schedule_free_comparison_would_catch_a_gradient_taken_at_x(capsys):
    from schedulefree import AdamWScheduleFreeReference

    params, grads = _long_problem(0)
    ref_y, _ = _schedulefree_run(AdamWScheduleFreeReference, {}, params, grads)
    at_x, _ = _ours_sf_run(optim.ScheduleFreeAdamW(betas=(1.0 - 1e-12, 0.999)), params, grads)  # y ~ x
    assert _max_rel_error(at_x, ref_y) > 1e-3


def test_schedule_free_eval_and_train_swap_x_and_y_exactly_and_step_refuses_eval_mode():
    params, grads = _long_problem(0, steps=30)
    opt = optim.ScheduleFreeAdamW(lr=0.01)
    params = [p.copy() for p in params]
    state = opt.init(params)
    _ours_run_with_state(opt, params, grads, state)
    y = [p.copy() for p in params]
    opt.eval_params(params, state)
    opt.eval_params(params, state)                   # twice is harmless, as schedulefree's eval()
    for p, x, z in zip(params, state["x"], state["z"]):
        np.testing.assert_array_equal(p, x)
        assert not np.allclose(p, z)
    with pytest.raises(RuntimeError, match="train_params"):
        opt.step(params, grads[0], state)
    opt.train_params(params, state)
    for p, y_before in zip(params, y):
        np.testing.assert_array_equal(p, y_before)
    assert optim.state_bytes(state) == 3 * sum(p.nbytes for p in params)   # z, x and v


@pytest.mark.parametrize("decay", [0.9, 0.99, 0.999])
def test_weight_ema_matches_torchs_averaged_model_over_many_steps(decay):
    from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    rng = np.random.default_rng(3)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)).double()
    averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(decay))
    ema = optim.WeightEMA(decay)
    params = [p.detach().numpy().copy() for p in model.parameters()]
    state = ema.init(params)
    for _ in range(SF_STEPS):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.tensor(rng.standard_normal(tuple(p.shape))))
        params = [p.detach().numpy().copy() for p in model.parameters()]
        averaged.update_parameters(model)
        ema.update(params, state)
        theirs = [p.detach().numpy() for p in averaged.module.parameters()]
        assert _max_rel_error([state["average"]], [theirs]) <= 1e-7
    assert state["n_averaged"] == int(averaged.n_averaged) == SF_STEPS
    assert _max_rel_error([state["average"]], [params]) > 1e-3    # the average lags the weights


def test_weight_ema_first_update_copies_and_decay_is_checked():
    ema = optim.WeightEMA(0.5)
    params = [np.zeros(3)]
    state = ema.init(params)
    ema.update([np.ones(3)], state)
    np.testing.assert_array_equal(state["average"][0], np.ones(3))
    ema.update([np.full(3, 3.0)], state)
    np.testing.assert_array_equal(state["average"][0], np.full(3, 2.0))
    with pytest.raises(ValueError):
        optim.WeightEMA(1.5)
