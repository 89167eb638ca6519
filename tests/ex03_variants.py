"""Implementations of ex03 a student might hand in (see ex01_variants for the contract)."""

WRONG = {
    "momentum_applied_before_the_gradient": ("test_momentum_step", {"momentum_step": (
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    v_old = np.zeros_like(g) if v is None else v\n"
        "    w_new = w - lr * (g + momentum * v_old if nesterov else v_old + g)\n"
        "    return w_new, momentum * v_old + g\n")}),
    "dampened_like_an_average": ("test_momentum_step", {"momentum_step": (
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    v = g.copy() if v is None else momentum * v + (1 - momentum) * g\n"
        "    d = g + momentum * v if nesterov else v\n"
        "    return w - lr * d, v\n")}),
    "nesterov_uses_the_old_velocity": ("test_momentum_step", {"momentum_step": (
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    v_old = np.zeros_like(g) if v is None else v\n"
        "    v_new = g.copy() if v is None else momentum * v + g\n"
        "    d = g + momentum * v_old if nesterov else v_new\n"
        "    return w - lr * d, v_new\n")}),
    "learning_rate_inside_the_buffer": ("test_momentum_step", {"momentum_step": (
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    # the heavy-ball buffer under PyTorch's name: right only while lr never changes\n"
        "    v = lr * g if v is None else momentum * v + lr * g\n"
        "    d = lr * g + momentum * v if nesterov else v\n"
        "    return w - d, v\n")}),
    "heavy_ball_sign_error": ("test_heavy_ball_step", {"heavy_ball_step": (
        "def heavy_ball_step(w, g, v, lr, momentum):\n"
        "    v = momentum * v + lr * g\n"
        "    return w + v, v\n")}),
    "heavy_ball_in_place": ("test_heavy_ball_step", {"heavy_ball_step": (
        "def heavy_ball_step(w, g, v, lr, momentum):\n"
        "    v *= momentum\n"
        "    v -= lr * g\n"
        "    w += v\n"
        "    return w, v\n")}),
    "minimize_returns_w0_first": ("test_minimize", {"minimize": (
        "def minimize(grad_fn, w0, lrs, momentum, nesterov=False):\n"
        "    w, v, path = np.array(w0, dtype=float), None, []\n"
        "    for lr in lrs:\n"
        "        path.append(w)\n"
        "        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)\n"
        "    return path\n")}),
    "minimize_ignores_the_schedule": ("test_minimize", {"minimize": (
        "def minimize(grad_fn, w0, lrs, momentum, nesterov=False):\n"
        "    w, v, path = np.array(w0, dtype=float), None, []\n"
        "    for _ in lrs:\n"
        "        w, v = momentum_step(w, grad_fn(w), v, lrs[0], momentum, nesterov=nesterov)\n"
        "        path.append(w)\n"
        "    return path\n")}),
    "calls_the_course_reference": ("test_momentum_step", {"momentum_step": (
        "from gdcourse.optim import SGD\n"
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    opt = SGD(lr=lr, momentum=momentum, nesterov=nesterov)\n"
        "    p = [np.array(w, dtype=float)]\n"
        "    state = {'t': 0 if v is None else 1, 'velocity': [np.zeros_like(p[0]) if v is None else np.array(v, dtype=float)]}\n"
        "    (p,), state = opt.step(p, [g], state)\n"
        "    return p, state['velocity'][0]\n")}),
}

CORRECT = {
    "nesterov_as_lookahead_algebra": {
        "momentum_step": (
            "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
            "    buf = np.array(g, dtype=float) if v is None else np.add(np.multiply(momentum, v), g)\n"
            "    if nesterov:\n"
            "        return w - lr * g - lr * momentum * buf, buf\n"
            "    return w - lr * buf, buf\n"),
        "heavy_ball_step": (
            "def heavy_ball_step(w, g, v, lr, momentum):\n"
            "    new_v = np.subtract(np.multiply(momentum, v), np.multiply(lr, g))\n"
            "    return np.add(w, new_v), new_v\n"),
        "why_forms": "u = -lr * v turns one recursion into the other when lr is constant; with a schedule PyTorch rescales the whole buffer at once, the heavy-ball form only new gradients.",
    },
    "copies_and_loops": {
        "momentum_step": (
            "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
            "    w_new, v_new = w.copy(), np.empty_like(w, dtype=float)\n"
            "    for i in np.ndindex(w.shape):\n"
            "        v_new[i] = g[i] if v is None else momentum * v[i] + g[i]\n"
            "        step = g[i] + momentum * v_new[i] if nesterov else v_new[i]\n"
            "        w_new[i] = w[i] - lr * step\n"
            "    return w_new, v_new\n"),
        "minimize": (
            "def minimize(grad_fn, w0, lrs, momentum, nesterov=False):\n"
            "    out = []\n"
            "    w, v = np.copy(w0).astype(float), None\n"
            "    for k in range(len(lrs)):\n"
            "        w, v = momentum_step(w, grad_fn(w), v, lrs[k], momentum, nesterov)\n"
            "        out.append(w.copy())\n"
            "    return out\n"),
    },
}
