"""Implementations of ex04 a student might hand in (see ex01_variants for the contract)."""

def _adam(body_t="t = state['t'] + 1", moments="", update="w - lr * m_hat / (np.sqrt(v_hat) + eps)", bias="m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)", decay="    if weight_decay:\n        g = g + weight_decay * w\n"):
    return (
        "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
        "    b1, b2 = betas\n"
        f"    {body_t}\n"
        f"{decay}"
        "    m = b1 * state['m'] + (1 - b1) * g\n"
        "    v = b2 * state['v'] + (1 - b2) * g * g\n"
        f"{moments}"
        f"    {bias}\n"
        f"    return {update}, {{'t': t, 'm': m, 'v': v}}\n")


WRONG = {
    "missing_bias_correction": ("test_adam_step", {"adam_step": _adam(bias="m_hat, v_hat = m, v")}),
    "t_counted_from_zero": ("test_adam_step", {"adam_step": _adam(
        body_t="t = state['t'] + 1",
        bias="m_hat, v_hat = m / (1 - b1 ** (t + 1)), v / (1 - b2 ** (t + 1))")}),
    "eps_inside_the_sqrt": ("test_adam_step", {"adam_step": _adam(update="w - lr * m_hat / np.sqrt(v_hat + eps)")}),
    "only_m_bias_corrected": ("test_adam_step", {"adam_step": _adam(bias="m_hat, v_hat = m / (1 - b1 ** t), v")}),
    "l2_decay_added_to_the_update_not_the_gradient": ("test_adam_step", {"adam_step": _adam(
        decay="", update="w - lr * (m_hat / (np.sqrt(v_hat) + eps) + weight_decay * w)")}),
    "adamw_forgets_the_learning_rate_in_the_decay": ("test_adamw_step", {"adamw_step": (
        "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
        "    return adam_step(w * (1 - weight_decay), g, state, lr, betas=betas, eps=eps)\n")}),
    "adamw_is_adam_with_l2": ("test_adamw_step", {"adamw_step": (
        "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
        "    return adam_step(w, g, state, lr, betas=betas, eps=eps, weight_decay=weight_decay)\n")}),
    "adamw_decays_after_the_update": ("test_adamw_step", {"adamw_step": (
        "def adamw_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):\n"
        "    w_new, state = adam_step(w, g, state, lr, betas=betas, eps=eps)\n"
        "    return w_new * (1 - lr * weight_decay), state\n")}),
    "calls_the_course_reference": ("test_adam_step", {"adam_step": (
        "from gdcourse import optim as course_optim\n"
        "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
        "    opt = course_optim.Adam(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)\n"
        "    p = [np.array(w, dtype=float)]\n"
        "    s = {'t': state['t'], 'm': [np.array(state['m'], dtype=float)], 'v': [np.array(state['v'], dtype=float)], 'scratch': [np.zeros_like(p[0])]}\n"
        "    (p,), s = opt.step(p, [np.asarray(g, dtype=float)], s)\n"
        "    return p, {'t': s['t'], 'm': s['m'][0], 'v': s['v'][0]}\n")}),
}

CORRECT = {
    "in_place_state_and_rearranged_formula": {
        "adam_step": (
            "def adam_step(w, g, state, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):\n"
            "    b1, b2 = betas\n"
            "    state['t'] += 1\n"
            "    t = state['t']\n"
            "    grad = g + weight_decay * w if weight_decay else g\n"
            "    state['m'] *= b1\n"
            "    state['m'] += (1 - b1) * grad\n"
            "    state['v'] *= b2\n"
            "    state['v'] += (1 - b2) * grad ** 2\n"
            "    # PyTorch's own arrangement: step size lr / bc1, denominator sqrt(v) / sqrt(bc2) + eps\n"
            "    denom = np.sqrt(state['v']) / np.sqrt(1 - b2 ** t) + eps\n"
            "    return w - (lr / (1 - b1 ** t)) * state['m'] / denom, state\n"),
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
}
