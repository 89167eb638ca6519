"""Implementations of ex03 a student might hand in (the contract is in gdcourse.grading.variants).

Most WRONG ones are the right answer with one mistake (``edited``), in the one answer cell it breaks."""

from gdcourse.grading.variants import edited

_STEP_OK = (
    "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
    "    v = g.copy() if v is None else momentum * v + g\n"
    "    d = g + momentum * v if nesterov else v\n"
    "    return w - lr * d, v\n")

_HB_OK = (
    "def heavy_ball_step(w, g, v, lr, momentum):\n"
    "    v = momentum * v - lr * g\n"
    "    return w + v, v\n")

_MIN_OK = (
    "def minimize(grad_fn, w0, lrs, momentum, nesterov=False):\n"
    "    w, v, path = np.array(w0, dtype=float), None, []\n"
    "    for lr in lrs:\n"
    "        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)\n"
    "        path.append(w)\n"
    "    return path\n")


def _step(*edits):
    return {"momentum_step": edited(_STEP_OK, *edits)}


def _hb(*edits):
    return {"heavy_ball_step": edited(_HB_OK, *edits)}


def _min(*edits):
    return {"minimize": edited(_MIN_OK, *edits)}


WRONG = {
    # momentum_step
    "momentum_applied_before_the_gradient": ("test_momentum_step", {"momentum_step": (
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    v_old = np.zeros_like(g) if v is None else v\n"
        "    w_new = w - lr * (g + momentum * v_old if nesterov else v_old + g)\n"
        "    return w_new, momentum * v_old + g\n")}),
    "dampened_like_an_average": ("test_momentum_step", _step(
        ("momentum * v + g", "momentum * v + (1 - momentum) * g"))),
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
    "first_buffer_is_g_itself": ("test_momentum_step", _step(
        ("v = g.copy() if v is None", "v = g if v is None"))),
    "step_updates_w_in_place": ("test_momentum_step", _step(
        ("    return w - lr * d, v\n", "    w -= lr * d\n    return w, v\n"))),
    "nesterov_skipped_on_the_first_step": ("test_momentum_step", _step(
        ("    v = g.copy() if v is None else momentum * v + g\n    d = g + momentum * v if nesterov else v\n",
         "    first = v is None\n"
         "    v = g.copy() if v is None else momentum * v + g\n"
         "    d = g + momentum * v if nesterov and not first else v\n"))),
    "nesterov_returns_the_lookahead_as_buffer": ("test_momentum_step", _step(
        ("    return w - lr * d, v\n", "    return w - lr * d, d\n"))),
    "calls_the_course_reference": ("test_momentum_step", {"momentum_step": (
        "from gdcourse.optim import SGD\n"
        "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
        "    opt = SGD(lr=lr, momentum=momentum, nesterov=nesterov)\n"
        "    p = [np.array(w, dtype=float)]\n"
        "    state = {'t': 0 if v is None else 1, 'velocity': [np.zeros_like(p[0]) if v is None else np.array(v, dtype=float)]}\n"
        "    opt.step(p, [g], state)\n"
        "    (p,) = p\n"
        "    return p, state['velocity'][0]\n")}),
    # heavy_ball_step
    "heavy_ball_sign_error": ("test_heavy_ball_step", _hb(
        ("momentum * v - lr * g", "momentum * v + lr * g"))),
    "heavy_ball_in_place": ("test_heavy_ball_step", {"heavy_ball_step": (
        "def heavy_ball_step(w, g, v, lr, momentum):\n"
        "    v *= momentum\n"
        "    v -= lr * g\n"
        "    w += v\n"
        "    return w, v\n")}),
    "heavy_ball_learning_rate_outside_the_velocity": ("test_heavy_ball_step", _hb(
        ("    v = momentum * v - lr * g\n    return w + v, v\n",
         "    v = momentum * v - g\n    return w + lr * v, v\n"))),
    "heavy_ball_steps_with_the_old_velocity": ("test_heavy_ball_step", _hb(
        ("    v = momentum * v - lr * g\n    return w + v, v\n",
         "    return w + v, momentum * v - lr * g\n"))),
    # minimize
    "minimize_returns_w0_first": ("test_minimize", _min(
        ("        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)\n        path.append(w)\n",
         "        path.append(w)\n        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)\n"))),
    "minimize_ignores_the_schedule": ("test_minimize", _min(
        ("    for lr in lrs:\n", "    for _ in lrs:\n"),
        ("v, lr, momentum", "v, lrs[0], momentum"))),
    "minimize_ignores_nesterov": ("test_minimize", _min(
        ("momentum, nesterov=nesterov)", "momentum)"))),
    "minimize_includes_w0": ("test_minimize", _min(
        ("path = np.array(w0, dtype=float), None, []", "path = np.array(w0, dtype=float), None, [np.array(w0, dtype=float)]"))),
    "minimize_updates_one_array_in_place": ("test_minimize", _min(
        ("        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)\n",
         "        w[:], v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov=nesterov)\n"))),
    "minimize_modifies_w0": ("test_minimize", _min(
        ("w, v, path = np.array(w0, dtype=float), None, []", "w, v, path = w0, None, []"),
        ("        path.append(w)\n", "        w0[...] = w\n        path.append(w.copy())\n"))),
    "minimize_gradient_at_w0": ("test_minimize", _min(
        ("grad_fn(w)", "grad_fn(w0)"))),
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
    "zero_buffer_in_place_on_copies": {
        # PyTorch's buffer starting at zeros gives the gradient itself on the first step (0 * mu + g = g)
        "momentum_step": (
            "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
            "    buf = np.zeros_like(g, dtype=float) if v is None else np.array(v, dtype=float)\n"
            "    buf *= momentum\n"
            "    buf += g\n"
            "    direction = g + momentum * buf if nesterov else buf\n"
            "    w_new = np.array(w, dtype=float)\n"
            "    w_new -= lr * direction\n"
            "    return w_new, buf\n"),
        "heavy_ball_step": (
            "def heavy_ball_step(w, g, v, lr, momentum):\n"
            "    v_new = -(lr * g - momentum * v)\n"
            "    w_new = w.copy()\n"
            "    w_new += v_new\n"
            "    return w_new, v_new\n"),
        "minimize": (
            "def minimize(grad_fn, w0, lrs, momentum, nesterov=False):\n"
            "    w = np.asarray(w0, dtype=float).copy()\n"
            "    v = np.zeros_like(w)\n"
            "    iterates = []\n"
            "    k = 0\n"
            "    while k < len(lrs):\n"
            "        w, v = momentum_step(w, grad_fn(w), v, lrs[k], momentum, nesterov=nesterov)\n"
            "        iterates.append(w)\n"
            "        k += 1\n"
            "    return iterates\n"),
    },
    "stacked_path_and_enumerate": {
        "momentum_step": (
            "def momentum_step(w, g, v, lr, momentum, nesterov=False):\n"
            "    if v is None:\n"
            "        v_new = np.copy(g)\n"
            "    else:\n"
            "        v_new = g + momentum * v\n"
            "    if nesterov:\n"
            "        return w - lr * (momentum * v_new + g), v_new\n"
            "    return w - v_new * lr, v_new\n"),
        "minimize": (
            "def minimize(grad_fn, w0, lrs, momentum, nesterov=False):\n"
            "    schedule = np.asarray(lrs, dtype=float)\n"
            "    path = np.empty((len(schedule),) + np.shape(w0))\n"
            "    w, v = np.array(w0, dtype=float), None\n"
            "    for k, lr in enumerate(schedule):\n"
            "        w, v = momentum_step(w, grad_fn(w), v, lr, momentum, nesterov)\n"
            "        path[k] = w\n"
            "    return list(path)\n"),
    },
}
