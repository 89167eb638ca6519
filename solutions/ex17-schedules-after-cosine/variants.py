"""Implementations of ex17 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_WSD = ("def wsd_lr(t, peak_lr, warmup_steps, total_steps, decay_fraction=0.2, min_lr=0.0):\n"
        "    decay_steps = max(1, round(decay_fraction * total_steps))\n"
        "    decay_start = total_steps - decay_steps\n"
        "    if t < warmup_steps:\n"
        "        return peak_lr * t / warmup_steps\n"
        "    if t < decay_start:\n"
        "        return peak_lr\n"
        "    progress = min(1.0, (t - decay_start) / decay_steps)\n"
        "    return min_lr + (peak_lr - min_lr) * (1 - progress)\n")
_SF = ("def sf_adamw_step(state, grad_fn, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, warmup_steps=0, r=0.0,\n"
       "                  weight_lr_power=2.0):\n"
       "    b1, b2 = betas\n"
       "    k = state[\"t\"]\n"
       "    z, x, v = state[\"z\"], state[\"x\"], state[\"v\"]\n"
       "    if warmup_steps:\n"
       "        lr = lr * min(1.0, (k + 1) / warmup_steps)\n"
       "    y = b1 * x + (1 - b1) * z\n"
       "    g = grad_fn(y)\n"
       "    lr_max = max(state[\"lr_max\"], lr)\n"
       "    weight = (k + 1) ** r * lr_max ** weight_lr_power\n"
       "    weight_sum = state[\"weight_sum\"] + weight\n"
       "    c = weight / weight_sum\n"
       "    v = b2 * v + (1 - b2) * g * g\n"
       "    v_hat = v / (1 - b2 ** (k + 1))\n"
       "    z_new = z - lr * weight_decay * y - lr * g / (np.sqrt(v_hat) + eps)\n"
       "    x = (1 - c) * x + c * z_new\n"
       "    return {\"t\": k + 1, \"z\": z_new, \"x\": x, \"v\": v, \"weight_sum\": weight_sum, \"lr_max\": lr_max}\n")
_EMA = ("def ema_update(average, w, decay, n_averaged):\n"
        "    if n_averaged == 0:\n"
        "        return np.array(w, dtype=float)\n"
        "    return decay * average + (1 - decay) * w\n")

WRONG = {
    # wsd_lr
    "wsd_warmup_counts_from_one": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("peak_lr * t / warmup_steps", "peak_lr * (t + 1) / warmup_steps"))}),
    "wsd_warmup_from_min_lr": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("return peak_lr * t / warmup_steps", "return min_lr + (peak_lr - min_lr) * t / warmup_steps"))}),
    "wsd_cooldown_starts_at_the_fraction": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("decay_start = total_steps - decay_steps", "decay_start = decay_steps"))}),
    "wsd_cooldown_one_step_early": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("(t - decay_start) / decay_steps", "(t - decay_start + 1) / decay_steps"))}),
    "wsd_truncates_the_cooldown_length": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("round(decay_fraction * total_steps)", "int(decay_fraction * total_steps)"))}),
    "wsd_cooldown_to_zero": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("return min_lr + (peak_lr - min_lr) * (1 - progress)", "return peak_lr * (1 - progress)"))}),
    "wsd_goes_below_min_lr_after_the_end": ("test_wsd", {"wsd_lr": edited(
        _WSD, ("min(1.0, (t - decay_start) / decay_steps)", "(t - decay_start) / decay_steps"))}),
    # sf_adamw_step
    "sf_gradient_at_z": ("test_sf_quadratic", {"sf_adamw_step": edited(_SF, ("g = grad_fn(y)", "g = grad_fn(z)"))}),
    "sf_gradient_at_x": ("test_sf_random", {"sf_adamw_step": edited(_SF, ("g = grad_fn(y)", "g = grad_fn(x)"))}),
    "sf_y_with_beta1_on_z": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("y = b1 * x + (1 - b1) * z", "y = b1 * z + (1 - b1) * x"))}),
    "sf_uniform_average_ignores_warmup": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("    weight = (k + 1) ** r * lr_max ** weight_lr_power\n"
              "    weight_sum = state[\"weight_sum\"] + weight\n"
              "    c = weight / weight_sum\n",
              "    weight_sum = state[\"weight_sum\"] + 1.0\n"
              "    c = 1 / (k + 1)\n"))}),
    "sf_weight_from_this_steps_rate": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("lr_max ** weight_lr_power", "lr ** weight_lr_power"))}),
    "sf_warmup_off_by_one": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("min(1.0, (k + 1) / warmup_steps)", "min(1.0, k / warmup_steps)"))}),
    "sf_no_bias_correction": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("v_hat = v / (1 - b2 ** (k + 1))", "v_hat = v"))}),
    "sf_average_with_the_old_z": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("x = (1 - c) * x + c * z_new", "x = (1 - c) * x + c * z"))}),
    "sf_weight_decay_at_z": ("test_sf_quadratic", {"sf_adamw_step": edited(
        _SF, ("lr * weight_decay * y", "lr * weight_decay * z"))}),
    "sf_eps_inside_the_root": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("np.sqrt(v_hat) + eps", "np.sqrt(v_hat + eps)"))}),
    "sf_forgets_to_count_the_step": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("{\"t\": k + 1,", "{\"t\": k,"))}),
    "sf_calls_grad_fn_twice": ("test_sf_random", {"sf_adamw_step": edited(
        _SF, ("    g = grad_fn(y)\n", "    loss_check = grad_fn(y)\n    g = grad_fn(y)\n"))}),
    # ema_update
    "ema_decay_swapped": ("test_ema", {"ema_update": edited(
        _EMA, ("decay * average + (1 - decay) * w", "(1 - decay) * average + decay * w"))}),
    "ema_starts_from_zeros": ("test_ema", {"ema_update": edited(
        _EMA, ("    if n_averaged == 0:\n        return np.array(w, dtype=float)\n", ""))}),
    "ema_returns_the_weights_themselves": ("test_ema", {"ema_update": (
        "def ema_update(average, w, decay, n_averaged):\n"
        "    if n_averaged == 0:\n"
        "        return w\n"
        "    average *= decay\n"
        "    average += (1 - decay) * w\n"
        "    return average\n")}),
    "ema_bias_corrected": ("test_ema", {"ema_update": (
        "def ema_update(average, w, decay, n_averaged):\n"
        "    raw = decay * average + (1 - decay) * w if n_averaged else (1 - decay) * w\n"
        "    return raw / (1 - decay ** (n_averaged + 1))\n")}),
    "ema_copies_at_the_second_update": ("test_ema", {"ema_update": edited(
        _EMA, ("if n_averaged == 0:", "if n_averaged <= 1:"))}),
    "ema_updates_w_in_place": ("test_ema", {"ema_update": (
        "def ema_update(average, w, decay, n_averaged):\n"
        "    if n_averaged == 0:\n"
        "        return w.copy()\n"
        "    w *= 1 - decay\n"
        "    w += decay * average\n"
        "    return w.copy()\n")}),
    "calls_the_course_reference": ("test_wsd", {"wsd_lr": (
        "from gdcourse.schedules import WSD\n"
        "def wsd_lr(t, peak_lr, warmup_steps, total_steps, decay_fraction=0.2, min_lr=0.0):\n"
        "    return WSD(peak_lr, warmup_steps, total_steps, decay_fraction, min_lr)(t)\n")}),
}

CORRECT = {
    "numpy_clip_and_in_place_state": {
        "wsd_lr": (
            "def wsd_lr(t, peak_lr, warmup_steps, total_steps, decay_fraction=0.2, min_lr=0.0):\n"
            "    n = max(1, int(np.rint(decay_fraction * total_steps)))\n"
            "    warm = peak_lr * t / warmup_steps if t < warmup_steps else peak_lr\n"
            "    frac = np.clip((t - (total_steps - n)) / n, 0.0, 1.0)\n"
            "    return float(warm if t < warmup_steps else peak_lr - (peak_lr - min_lr) * frac)\n"),
        "sf_adamw_step": (
            "def sf_adamw_step(state, grad_fn, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, warmup_steps=0,\n"
            "                  r=0.0, weight_lr_power=2.0):\n"
            "    b1, b2 = betas\n"
            "    k = state['t']\n"
            "    sched = min(1.0, (k + 1) / warmup_steps) if warmup_steps > 0 else 1.0\n"
            "    lr_t = lr * sched\n"
            "    z, x, v = state['z'], state['x'], state['v']\n"
            "    y = x + (1 - b1) * (z - x)\n"
            "    g = np.asarray(grad_fn(y))\n"
            "    state['lr_max'] = max(lr_t, state['lr_max'])\n"
            "    w_k = (k + 1) ** r * state['lr_max'] ** weight_lr_power\n"
            "    state['weight_sum'] += w_k\n"
            "    c = w_k / state['weight_sum']\n"
            "    v *= b2\n"
            "    v += (1 - b2) * g ** 2\n"
            "    denom = np.sqrt(v) / math.sqrt(1 - b2 ** (k + 1)) + eps\n"
            "    z -= lr_t * (g / denom + weight_decay * y)\n"
            "    x += c * (z - x)\n"
            "    state['t'] = k + 1\n"
            "    return state\n"),
        "why_answer": "Resume WSD from the stable phase and cool down later; cosine depends on the total. "
                      "Evaluate x, not y; recompute batch-norm statistics at x.",
    },
    "loops_and_recursive_average": {
        "sf_adamw_step": (
            "def sf_adamw_step(state, grad_fn, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, warmup_steps=0,\n"
            "                  r=0.0, weight_lr_power=2.0):\n"
            "    beta1, beta2 = betas\n"
            "    t = state['t'] + 1\n"
            "    if warmup_steps and t < warmup_steps:\n"
            "        lr = lr * t / warmup_steps\n"
            "    z = [float(a) for a in state['z']]\n"
            "    x = [float(a) for a in state['x']]\n"
            "    v = [float(a) for a in state['v']]\n"
            "    y = np.array([(1 - beta1) * zi + beta1 * xi for zi, xi in zip(z, x)])\n"
            "    g = grad_fn(y)\n"
            "    lr_max = lr if lr > state['lr_max'] else state['lr_max']\n"
            "    weight = t ** r * lr_max ** weight_lr_power\n"
            "    total = state['weight_sum'] + weight\n"
            "    c = weight / total if total > 0 else 0.0\n"
            "    bc = 1 - beta2 ** t\n"
            "    for i in range(len(z)):\n"
            "        v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i]\n"
            "        z[i] = z[i] - lr * weight_decay * y[i]\n"
            "        z[i] = z[i] - lr * g[i] / (math.sqrt(v[i] / bc) + eps)\n"
            "        x[i] = x[i] * (1 - c) + z[i] * c\n"
            "    return dict(t=t, z=np.array(z), x=np.array(x), v=np.array(v), weight_sum=total, lr_max=lr_max)\n"),
        "ema_update": (
            "def ema_update(average, w, decay, n_averaged):\n"
            "    if not n_averaged:\n"
            "        return w.copy()\n"
            "    average += (1 - decay) * (w - average)\n"
            "    return average\n"),
    },
    "branches_and_lerp": {
        "wsd_lr": (
            "def wsd_lr(t, peak_lr, warmup_steps, total_steps, decay_fraction=0.2, min_lr=0.0):\n"
            "    decay_steps = max(1, int(decay_fraction * total_steps + 0.5))\n"
            "    if t >= total_steps:\n"
            "        return min_lr\n"
            "    if warmup_steps > 0 and t < warmup_steps:\n"
            "        return t / warmup_steps * peak_lr\n"
            "    left = total_steps - t\n"
            "    if left >= decay_steps:\n"
            "        return peak_lr\n"
            "    return min_lr + left / decay_steps * (peak_lr - min_lr)\n"),
        "ema_update": (
            "def ema_update(average, w, decay, n_averaged):\n"
            "    out = np.empty_like(np.asarray(w, dtype=float))\n"
            "    if n_averaged == 0:\n"
            "        out[...] = w\n"
            "    else:\n"
            "        np.add(np.multiply(average, decay), np.multiply(w, 1.0 - decay), out=out)\n"
            "    return out\n"),
    },
}
