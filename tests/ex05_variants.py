"""Implementations of ex05 a student might hand in (see ex01_variants for the contract)."""

WRONG = {
    "warmup_counts_from_one": ("test_warmup_cosine", {"warmup_cosine": (
        "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
        "    if t < warmup_steps:\n"
        "        return peak_lr * (t + 1) / warmup_steps\n"
        "    progress = min(1.0, (t - warmup_steps) / (total_steps - warmup_steps))\n"
        "    return min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))\n")}),
    "cosine_progress_over_total_steps": ("test_warmup_cosine", {"warmup_cosine": (
        "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
        "    if t < warmup_steps:\n"
        "        return peak_lr * t / warmup_steps\n"
        "    progress = min(1.0, t / total_steps)\n"
        "    return min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))\n")}),
    "min_lr_ignored": ("test_warmup_cosine", {"warmup_cosine": (
        "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
        "    if t < warmup_steps:\n"
        "        return peak_lr * t / warmup_steps\n"
        "    progress = min(1.0, (t - warmup_steps) / (total_steps - warmup_steps))\n"
        "    return peak_lr * 0.5 * (1 + math.cos(math.pi * progress))\n")}),
    "the_sources_cosine_warmup_decays": ("test_cosine_warmup", {"cosine_warmup": (
        "def cosine_warmup(t, peak_lr, warmup_steps):\n"
        "    # the formula printed in the source article: lr_max * (1 + cos(pi t / T)) / 2\n"
        "    if t >= warmup_steps:\n"
        "        return peak_lr\n"
        "    return peak_lr * (1 + math.cos(math.pi * t / warmup_steps)) / 2\n")}),
    "quarter_sine_warmup": ("test_cosine_warmup", {"cosine_warmup": (
        "def cosine_warmup(t, peak_lr, warmup_steps):\n"
        "    return peak_lr * math.sin(0.5 * math.pi * min(t, warmup_steps) / warmup_steps)\n")}),
    "range_test_linear_sweep": ("test_lr_range_test", {"lr_range_test": (
        "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
        "    w, lrs, losses = np.array(w0, dtype=float), [], []\n"
        "    for lr in np.linspace(lr_min, lr_max, steps):\n"
        "        loss, grad = loss_and_grad(w)\n"
        "        lrs.append(lr); losses.append(loss)\n"
        "        if not np.isfinite(loss) or loss > 4 * min(losses):\n"
        "            break\n"
        "        w = w - lr * grad\n"
        "    return np.array(lrs), np.array(losses)\n")}),
    "range_test_never_stops": ("test_lr_range_test", {"lr_range_test": (
        "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
        "    w, lrs, losses = np.array(w0, dtype=float), [], []\n"
        "    with np.errstate(all='ignore'):\n"
        "        for i in range(steps):\n"
        "            lr = lr_min * (lr_max / lr_min) ** (i / (steps - 1))\n"
        "            loss, grad = loss_and_grad(w)\n"
        "            lrs.append(lr); losses.append(loss)\n"
        "            w = w - lr * grad\n"
        "    return np.array(lrs), np.array(losses)\n")}),
    "range_test_updates_w0_in_place": ("test_lr_range_test", {"lr_range_test": (
        "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
        "    w, lrs, losses = w0, [], []\n"
        "    for i in range(steps):\n"
        "        lr = lr_min * (lr_max / lr_min) ** (i / (steps - 1))\n"
        "        loss, grad = loss_and_grad(w)\n"
        "        lrs.append(lr); losses.append(loss)\n"
        "        if not np.isfinite(loss) or loss > 4 * min(losses):\n"
        "            break\n"
        "        w -= lr * grad\n"
        "    return np.array(lrs), np.array(losses)\n")}),
    "suggests_the_minimum_itself": ("test_suggest_lr", {"suggest_lr": (
        "def suggest_lr(lrs, losses):\n"
        "    return float(np.asarray(lrs)[int(np.argmin(losses))])\n")}),
    "calls_the_course_reference": ("test_warmup_cosine", {"warmup_cosine": (
        "from gdcourse.schedules import WarmupCosine\n"
        "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
        "    return WarmupCosine(peak_lr, warmup_steps, total_steps, min_lr)(t)\n")}),
}

CORRECT = {
    "numpy_vectorised_forms": {
        "warmup_cosine": (
            "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
            "    warm = peak_lr * t / warmup_steps\n"
            "    p = np.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)\n"
            "    decay = min_lr + 0.5 * (peak_lr - min_lr) * (1 + np.cos(np.pi * p))\n"
            "    return float(warm if t < warmup_steps else decay)\n"),
        "cosine_warmup": (
            "def cosine_warmup(t, peak_lr, warmup_steps):\n"
            "    x = min(t / warmup_steps, 1.0)\n"
            "    return peak_lr * math.sin(0.5 * math.pi * x) ** 2\n"),
        "why_range": "Flat, steep fall, minimum at the edge, blow-up; take a tenth of the minimum. StepLR per epoch, warm-up per optimizer step.",
    },
    "precomputed_schedule_and_while_loop": {
        "lr_range_test": (
            "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
            "    rates = np.geomspace(lr_min, lr_max, steps)\n"
            "    w = np.copy(w0).astype(float)\n"
            "    out_lr, out_loss, best, i = [], [], np.inf, 0\n"
            "    while i < steps:\n"
            "        loss, grad = loss_and_grad(w)\n"
            "        out_lr.append(rates[i]); out_loss.append(loss)\n"
            "        best = min(best, loss)\n"
            "        if not np.isfinite(loss) or loss > 4 * best:\n"
            "            break\n"
            "        w = w - rates[i] * grad\n"
            "        i += 1\n"
            "    return np.asarray(out_lr), np.asarray(out_loss)\n"),
        "suggest_lr": (
            "def suggest_lr(lrs, losses):\n"
            "    pairs = sorted(zip(losses, lrs), key=lambda p: p[0])\n"
            "    return pairs[0][1] * 0.1\n"),
    },
}
