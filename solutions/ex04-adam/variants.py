"""Implementations of ex04 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_INIT_OK = (
    "def init_state(w):\n"
    "    return {\"t\": 0, \"m\": np.zeros_like(w, dtype=float), \"v\": np.zeros_like(w, dtype=float)}\n")
_ADAM_OK = (
    "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
    "    b1, b2 = betas\n"
    "    t = state[\"t\"] + 1\n"
    "    if weight_decay:\n"
    "        g = g + weight_decay * w\n"
    "    m = b1 * state[\"m\"] + (1 - b1) * g\n"
    "    v = b2 * state[\"v\"] + (1 - b2) * g * g\n"
    "    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)\n"
    "    return w - lr * m_hat / (np.sqrt(v_hat) + eps), {\"t\": t, \"m\": m, \"v\": v}\n")
_ADAMW_OK = (
    "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
    "    return adam_step(w * (1 - lr * weight_decay), g, state, lr, betas=betas, eps=eps, weight_decay=0.0)\n")
_BIAS = "    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)\n"

WRONG = {
    # adam_step: bias correction and the step counter
    "missing_bias_correction": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, (_BIAS, "    m_hat, v_hat = m, v\n"))}),
    "only_m_bias_corrected": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, (_BIAS, "    m_hat, v_hat = m / (1 - b1 ** t), v\n"))}),
    "bias_correction_skipped_at_the_first_step": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, (_BIAS, "    m_hat, v_hat = (m / (1 - b1 ** t), v / (1 - b2 ** t)) if t > 1 else (m, v)\n"))}),
    "bias_correction_with_the_steps_before": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, ('t = state["t"] + 1', 't = state["t"]'), ('{"t": t, "m"', '{"t": t + 1, "m"'))}),
    "t_counted_twice": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, (_BIAS, "    m_hat, v_hat = m / (1 - b1 ** (t + 1)), v / (1 - b2 ** (t + 1))\n"))}),
    "state_t_not_advanced": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, ('{"t": t, "m"', '{"t": state["t"], "m"'))}),
    # adam_step: the formula
    "eps_inside_the_sqrt": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, ("(np.sqrt(v_hat) + eps)", "np.sqrt(v_hat + eps)"))}),
    "betas_swapped": ("test_adam_step", {"adam_step": edited(_ADAM_OK, ("b1, b2 = betas", "b2, b1 = betas"))}),
    "l2_decay_added_to_the_update_not_the_gradient": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, ("    if weight_decay:\n        g = g + weight_decay * w\n", ""),
        ("lr * m_hat / (np.sqrt(v_hat) + eps)", "lr * (m_hat / (np.sqrt(v_hat) + eps) + weight_decay * w)"))}),
    "adam_decay_decoupled_instead_of_l2": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, ("        g = g + weight_decay * w\n", "        w = w * (1 - lr * weight_decay)\n"))}),
    # adam_step: the state
    "moments_not_returned": ("test_adam_step", {"adam_step": edited(
        _ADAM_OK, ('{"t": t, "m": m, "v": v}', '{"t": t, "m": state["m"], "v": state["v"]}'))}),
    "state_updated_in_place": ("test_adam_step", {"adam_step": (
        "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
        "    b1, b2 = betas\n"
        "    state['t'] += 1\n"
        "    t = state['t']\n"
        "    grad = g + weight_decay * w if weight_decay else g\n"
        "    state['m'] *= b1\n"
        "    state['m'] += (1 - b1) * grad\n"
        "    state['v'] *= b2\n"
        "    state['v'] += (1 - b2) * grad ** 2\n"
        "    denom = np.sqrt(state['v']) / np.sqrt(1 - b2 ** t) + eps\n"
        "    return w - (lr / (1 - b1 ** t)) * state['m'] / denom, state\n")}),
    "init_state_flat_for_2d_weights": ("test_adam_step", {"init_state": edited(
        _INIT_OK, ("np.zeros_like(w, dtype=float), \"v\": np.zeros_like(w, dtype=float)",
                   "np.zeros(len(w)), \"v\": np.zeros(len(w))"))}),
    # adamw_step
    "adamw_decay_without_the_learning_rate": ("test_adamw_step", {"adamw_step": edited(
        _ADAMW_OK, ("w * (1 - lr * weight_decay)", "w * (1 - weight_decay)"))}),
    "adamw_is_adam_with_l2": ("test_adamw_step", {"adamw_step": edited(
        _ADAMW_OK, ("w * (1 - lr * weight_decay), g", "w, g"), ("weight_decay=0.0)", "weight_decay=weight_decay)"))}),
    "adamw_decays_after_the_update": ("test_adamw_step", {"adamw_step": (
        "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
        "    w_new, state = adam_step(w, g, state, lr, betas=betas, eps=eps)\n"
        "    return w_new * (1 - lr * weight_decay), state\n")}),
    "adamw_shrinks_w_in_place": ("test_adamw_step", {"adamw_step": (
        "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
        "    w *= 1 - lr * weight_decay\n"
        "    return adam_step(w, g, state, lr, betas=betas, eps=eps)\n")}),
    "adamw_default_decay_zero": ("test_adamw_step", {"adamw_step": edited(
        _ADAMW_OK, ("eps=1e-8, weight_decay=0.01)", "eps=1e-8, weight_decay=0.0)"))}),
    "calls_the_course_reference": ("test_adam_step", {"adam_step": (
        "from gdcourse import optim as course_optim\n"
        "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
        "    opt = course_optim.Adam(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)\n"
        "    p = [np.array(w, dtype=float)]\n"
        "    s = {'t': state['t'], 'm': [np.array(state['m'], dtype=float)], 'v': [np.array(state['v'], dtype=float)], 'scratch': [np.zeros_like(p[0])]}\n"
        "    opt.step(p, [np.asarray(g, dtype=float)], s)\n"
        "    (p,) = p\n"
        "    return p, {'t': s['t'], 'm': s['m'][0], 'v': s['v'][0]}\n")}),
}

CORRECT = {
    "torch_arrangement_on_copies": {
        "adam_step": (
            "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
            "    beta1, beta2 = betas\n"
            "    step = state['t'] + 1\n"
            "    grad = g + weight_decay * w\n"
            "    m, v = state['m'].copy(), state['v'].copy()\n"
            "    m += (grad - m) * (1 - beta1)   # torch's lerp\n"
            "    v *= beta2\n"
            "    v += (1 - beta2) * grad * grad\n"
            "    # PyTorch's own arrangement: step size lr / bc1, denominator sqrt(v) / sqrt(bc2) + eps\n"
            "    denom = np.sqrt(v) / np.sqrt(1 - beta2 ** step) + eps\n"
            "    return w - (lr / (1 - beta1 ** step)) * m / denom, {'t': step, 'm': m, 'v': v}\n"),
        "eps_answer": "Epsilon floors the denominator: large gradients give scale-free steps of about lr, tiny ones give SGD with lr/eps.",
    },
    "adamw_written_out": {
        "adamw_step": (
            "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
            "    b1, b2 = betas\n"
            "    t = state['t'] + 1\n"
            "    w = w - lr * weight_decay * w\n"
            "    m = b1 * state['m'] + (1 - b1) * g\n"
            "    v = b2 * state['v'] + (1 - b2) * np.square(g)\n"
            "    update = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)\n"
            "    return w - lr * update, dict(t=t, m=m, v=v)\n"),
        "init_state": (
            "def init_state(w):\n"
            "    z = np.zeros(np.shape(w))\n"
            "    return dict(t=0, m=z.copy(), v=z.copy())\n"),
    },
    "elementwise_loops_and_decay_after_computing_the_update": {
        "adam_step": (
            "import math\n"
            "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
            "    b1, b2 = betas\n"
            "    t = state['t'] + 1\n"
            "    w_new, m, v = np.array(w, dtype=float), np.empty(np.shape(w)), np.empty(np.shape(w))\n"
            "    for i in np.ndindex(np.shape(w)):\n"
            "        gi = g[i] + weight_decay * w[i]\n"
            "        m[i] = b1 * state['m'][i] + (1 - b1) * gi\n"
            "        v[i] = b2 * state['v'][i] + (1 - b2) * gi ** 2\n"
            "        w_new[i] = w[i] - lr * (m[i] / (1 - b1 ** t)) / (math.sqrt(v[i] / (1 - b2 ** t)) + eps)\n"
            "    return w_new, {'t': t, 'm': m, 'v': v}\n"),
        "adamw_step": (
            "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
            "    # the Adam part does not depend on w, so the decay can be applied to the result\n"
            "    moved, new_state = adam_step(np.zeros_like(w), g, state, lr, betas=betas, eps=eps)\n"
            "    return w * (1 - lr * weight_decay) + moved, new_state\n"),
    },
    "pure_python_state_as_new_dict": {
        "init_state": (
            "def init_state(w):\n"
            "    w = np.asarray(w)\n"
            "    return {'t': 0, 'm': np.full(w.shape, 0.0), 'v': np.full(w.shape, 0.0)}\n"),
        "adamw_step": (
            "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
            "    decayed = w.copy()\n"
            "    decayed -= lr * weight_decay * w\n"
            "    return adam_step(decayed, g, dict(state), lr, betas, eps, 0.0)\n"),
    },
}
