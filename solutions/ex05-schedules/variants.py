"""Implementations of ex05 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_WC = ("def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
       "    if t < warmup_steps:\n"
       "        return peak_lr * t / warmup_steps\n"
       "    progress = min(1.0, (t - warmup_steps) / (total_steps - warmup_steps))\n"
       "    return min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))\n")
_CW = ("def cosine_warmup(t, peak_lr, warmup_steps):\n"
       "    if t >= warmup_steps:\n"
       "        return peak_lr\n"
       "    return peak_lr * 0.5 * (1 - math.cos(math.pi * t / warmup_steps))\n")
_RT = ("def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
       "    w = np.array(w0, dtype=float)\n"
       "    lrs, losses = [], []\n"
       "    for i in range(steps):\n"
       "        lr = lr_min * (lr_max / lr_min) ** (i / (steps - 1))\n"
       "        loss, grad = loss_and_grad(w)\n"
       "        lrs.append(lr)\n"
       "        losses.append(loss)\n"
       "        if not np.isfinite(loss) or loss > 4 * min(losses):\n"
       "            break\n"
       "        w = w - lr * grad\n"
       "    return np.array(lrs), np.array(losses)\n")
_SL = ("def suggest_lr(lrs, losses):\n"
       "    losses = np.asarray(losses, dtype=float)\n"
       "    i = int(np.argmin(np.where(np.isfinite(losses), losses, np.inf)))\n"
       "    return float(np.asarray(lrs, dtype=float)[i] / 10)\n")
_RECORD = "        lrs.append(lr)\n        losses.append(loss)\n"
_STOP = "        if not np.isfinite(loss) or loss > 4 * min(losses):\n            break\n"

WRONG = {
    "warmup_counts_from_one": ("test_warmup_cosine", {"warmup_cosine": edited(
        _WC, ("peak_lr * t / warmup_steps", "peak_lr * (t + 1) / warmup_steps"))}),
    "warmup_boundary_inclusive_divides_by_zero": ("test_warmup_cosine", {"warmup_cosine": edited(
        _WC, ("if t < warmup_steps:", "if t <= warmup_steps:"))}),
    "cosine_progress_over_total_steps": ("test_warmup_cosine", {"warmup_cosine": edited(
        _WC, ("(t - warmup_steps) / (total_steps - warmup_steps)", "t / total_steps"))}),
    "min_lr_ignored": ("test_warmup_cosine", {"warmup_cosine": edited(
        _WC, ("min_lr + (peak_lr - min_lr) * 0.5", "peak_lr * 0.5"))}),
    "warmup_starts_at_min_lr": ("test_warmup_cosine", {"warmup_cosine": edited(
        _WC, ("return peak_lr * t / warmup_steps", "return min_lr + (peak_lr - min_lr) * t / warmup_steps"))}),
    "climbs_back_past_total_steps": ("test_warmup_cosine", {"warmup_cosine": edited(
        _WC, ("min(1.0, (t - warmup_steps) / (total_steps - warmup_steps))",
              "(t - warmup_steps) / (total_steps - warmup_steps)"))}),
    "the_sources_cosine_warmup_decays": ("test_cosine_warmup", {"cosine_warmup": edited(
        _CW, ("(1 - math.cos(", "(1 + math.cos("))}),
    "quarter_sine_warmup": ("test_cosine_warmup", {"cosine_warmup": (
        "def cosine_warmup(t, peak_lr, warmup_steps):\n"
        "    if t >= warmup_steps:\n"
        "        return peak_lr\n"
        "    return peak_lr * math.sin(0.5 * math.pi * t / warmup_steps)\n")}),
    "cosine_warmup_not_flat_after": ("test_cosine_warmup", {"cosine_warmup": edited(
        _CW, ("    if t >= warmup_steps:\n        return peak_lr\n", ""))}),
    "cosine_warmup_divides_by_zero_without_warmup": ("test_cosine_warmup", {"cosine_warmup": (
        "def cosine_warmup(t, peak_lr, warmup_steps):\n"
        "    x = min(t / warmup_steps, 1.0)\n"
        "    return peak_lr * 0.5 * (1 - math.cos(math.pi * x))\n")}),
    "range_test_linear_sweep": ("test_lr_range_test", {"lr_range_test": edited(
        _RT, ("lr_min * (lr_max / lr_min) ** (i / (steps - 1))", "lr_min + (lr_max - lr_min) * i / (steps - 1)"))}),
    "range_test_exponent_over_steps": ("test_lr_range_test", {"lr_range_test": edited(
        _RT, ("** (i / (steps - 1))", "** (i / steps)"))}),
    "range_test_never_stops": ("test_lr_range_test", {"lr_range_test": edited(_RT, (_STOP, ""))}),
    "range_test_does_not_stop_on_nan": ("test_lr_range_test", {"lr_range_test": edited(
        _RT, ("not np.isfinite(loss) or loss > 4", "loss > 4"))}),
    "range_test_compares_with_the_first_loss": ("test_lr_range_test", {"lr_range_test": edited(
        _RT, ("4 * min(losses)", "4 * losses[0]"))}),
    "range_test_stops_before_recording": ("test_lr_range_test", {"lr_range_test": edited(
        _RT, (_RECORD + _STOP, "        if not np.isfinite(loss) or loss > 4 * min(losses + [loss]):\n"
                               "            break\n" + _RECORD))}),
    "range_test_updates_w0_in_place": ("test_lr_range_test", {"lr_range_test": edited(
        _RT, ("w = np.array(w0, dtype=float)", "w = np.asarray(w0, dtype=float)"),
        ("w = w - lr * grad", "w -= lr * grad"))}),
    "suggests_the_minimum_itself": ("test_suggest_lr", {"suggest_lr": edited(_SL, ("[i] / 10", "[i]"))}),
    "suggest_argmin_picks_a_nan": ("test_suggest_lr", {"suggest_lr": (
        "def suggest_lr(lrs, losses):\n"
        "    return float(np.asarray(lrs)[int(np.argmin(losses))] / 10)\n")}),
    "suggest_last_of_equal_losses": ("test_suggest_lr", {"suggest_lr": edited(
        _SL, ("    i = int(np.argmin(np.where(np.isfinite(losses), losses, np.inf)))\n",
              "    masked = np.where(np.isfinite(losses), losses, np.inf)\n"
              "    i = len(masked) - 1 - int(np.argmin(masked[::-1]))\n"))}),
    "suggest_overwrites_the_nans_in_place": ("test_suggest_lr", {"suggest_lr": edited(
        _SL, ("    i = int(np.argmin(np.where(np.isfinite(losses), losses, np.inf)))\n",
              "    losses[~np.isfinite(losses)] = np.inf\n    i = int(np.argmin(losses))\n"))}),
    "calls_the_course_reference": ("test_warmup_cosine", {"warmup_cosine": (
        "from gdcourse.schedules import WarmupCosine\n"
        "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
        "    return WarmupCosine(peak_lr, warmup_steps, total_steps, min_lr)(t)\n")}),
}

CORRECT = {
    "numpy_vectorised_forms": {
        "warmup_cosine": (
            "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
            "    warm = peak_lr * t / max(warmup_steps, 1)\n"
            "    p = np.clip((t - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)\n"
            "    decay = min_lr + 0.5 * (peak_lr - min_lr) * (1 + np.cos(np.pi * p))\n"
            "    return float(warm if t < warmup_steps else decay)\n"),
        "cosine_warmup": (
            "def cosine_warmup(t, peak_lr, warmup_steps):\n"
            "    x = min(t / warmup_steps, 1.0) if warmup_steps else 1.0\n"
            "    return peak_lr * math.sin(0.5 * math.pi * x) ** 2\n"),
        "why_range": "Flat, steep fall, minimum at the edge, blow-up; take a tenth of the minimum. StepLR per epoch, warm-up per optimizer step.",
    },
    "precomputed_geomspace_and_while_loop": {
        "lr_range_test": (
            "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
            "    rates = np.geomspace(lr_min, lr_max, steps)\n"
            "    w = np.copy(w0).astype(float)\n"
            "    out_lr, out_loss, best, i = [], [], np.inf, 0\n"
            "    while i < steps:\n"
            "        loss, grad = loss_and_grad(w)\n"
            "        out_lr.append(rates[i]); out_loss.append(loss)\n"
            "        best = min(best, loss)\n"
            "        if np.isnan(loss) or np.isinf(loss) or loss > 4 * best:\n"
            "            break\n"
            "        w = w - rates[i] * grad\n"
            "        i += 1\n"
            "    return np.asarray(out_lr), np.asarray(out_loss)\n"),
        "suggest_lr": (
            "def suggest_lr(lrs, losses):\n"
            "    pairs = [(l, r) for l, r in zip(losses, lrs) if math.isfinite(l)]\n"
            "    pairs.sort(key=lambda p: p[0])\n"
            "    return pairs[0][1] * 0.1\n"),
    },
    "running_product_and_lists": {
        "lr_range_test": (
            "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
            "    factor = (lr_max / lr_min) ** (1 / (steps - 1))\n"
            "    w, lr, lrs, losses = w0.copy(), lr_min, [], []\n"
            "    for _ in range(steps):\n"
            "        loss, grad = loss_and_grad(w)\n"
            "        lrs.append(lr)\n"
            "        losses.append(float(loss))\n"
            "        if not math.isfinite(loss) or loss > 4 * min(losses):\n"
            "            return lrs, losses\n"
            "        w -= lr * grad\n"
            "        lr *= factor\n"
            "    return lrs, losses\n"),
        "suggest_lr": (
            "def suggest_lr(lrs, losses):\n"
            "    best, pick = math.inf, None\n"
            "    for lr, loss in zip(lrs, losses):\n"
            "        if math.isfinite(loss) and loss < best:\n"
            "            best, pick = loss, lr\n"
            "    return pick / 10\n"),
    },
    "other_cosine_identities_and_log_spacing": {
        "warmup_cosine": (
            "def warmup_cosine(t, peak_lr, warmup_steps, total_steps, min_lr=0.0):\n"
            "    if warmup_steps > 0 and t < warmup_steps:\n"
            "        return t / warmup_steps * peak_lr\n"
            "    if t >= total_steps:\n"
            "        return min_lr\n"
            "    angle = math.pi * (t - warmup_steps) / (total_steps - warmup_steps)\n"
            "    return (peak_lr + min_lr) / 2 + (peak_lr - min_lr) / 2 * math.cos(angle)\n"),
        "cosine_warmup": (
            "def cosine_warmup(t, peak_lr, warmup_steps):\n"
            "    if t < warmup_steps:\n"
            "        return peak_lr * math.sin(math.pi * t / (2 * warmup_steps)) ** 2\n"
            "    return peak_lr\n"),
        "lr_range_test": (
            "def lr_range_test(loss_and_grad, w0, lr_min, lr_max, steps):\n"
            "    rates = np.exp(np.linspace(np.log(lr_min), np.log(lr_max), steps))\n"
            "    w, n, losses = np.array(w0, dtype=float), 0, np.empty(steps)\n"
            "    for lr in rates:\n"
            "        loss, grad = loss_and_grad(w)\n"
            "        losses[n] = loss\n"
            "        n += 1\n"
            "        if not np.isfinite(loss) or loss > 4 * losses[:n].min():\n"
            "            break\n"
            "        w = w - lr * grad\n"
            "    return rates[:n].copy(), losses[:n].copy()\n"),
        "suggest_lr": (
            "def suggest_lr(lrs, losses):\n"
            "    clean = np.array(losses, dtype=float)\n"
            "    clean[np.isinf(clean)] = np.nan\n"
            "    return 0.1 * float(np.asarray(lrs)[np.nanargmin(clean)])\n"),
    },
}
