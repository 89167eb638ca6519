"""Implementations of ex10 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

_STEP_HEAD = (
    "def amp_train_step(model, X, y, loss_fn, optimizer, scaler, device_type='cpu', dtype=torch.bfloat16,\n"
    "                   max_norm=None):\n"
)

# The right answer; each wrong one below differs from it in one place.
_STEP_OK = _STEP_HEAD + (
    "    optimizer.zero_grad()\n"
    "    with torch.autocast(device_type=device_type, dtype=dtype):\n"
    "        loss = loss_fn(model(X), y)\n"
    "    scaler.scale(loss).backward()\n"
    "    if max_norm is not None:\n"
    "        scaler.unscale_(optimizer)\n"
    "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    "    before = scaler.get_scale()\n"
    "    scaler.step(optimizer)\n"
    "    scaler.update()\n"
    "    return loss.item(), not step_was_skipped(before, scaler.get_scale())\n")
_CLIP = "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
_AUTOCAST = ("    with torch.autocast(device_type=device_type, dtype=dtype):\n"
             "        loss = loss_fn(model(X), y)\n")


def _step(*edits):
    return {"amp_train_step": edited(_STEP_OK, *edits)}


WRONG = {
    "backward_on_the_unscaled_loss": ("test_amp_step_basic", _step(
        ("scaler.scale(loss).backward()", "loss.backward()"))),
    "clips_before_unscale": ("test_amp_step_clip", _step(("        scaler.unscale_(optimizer)\n", ""))),
    "clips_after_the_step": ("test_amp_step_clip", _step(
        ("    if max_norm is not None:\n        scaler.unscale_(optimizer)\n" + _CLIP, ""),
        ("    scaler.step(optimizer)\n", "    scaler.step(optimizer)\n    if max_norm is not None:\n" + _CLIP))),
    "forgets_scaler_update": ("test_amp_step_skip", _step(("    scaler.update()\n", ""))),
    "forgets_zero_grad": ("test_amp_step_basic", _step(("    optimizer.zero_grad()\n", ""))),
    "calls_optimizer_step_directly": ("test_amp_step_skip", _step(("scaler.step(optimizer)", "optimizer.step()"))),
    "returns_the_scaled_loss": ("test_amp_step_basic", _step(
        ("    scaler.scale(loss).backward()\n", "    scaled = scaler.scale(loss)\n    scaled.backward()\n"),
        ("return loss.item()", "return scaled.item()"))),
    "hard_codes_cuda": ("test_amp_step_basic", _step((_AUTOCAST, (
        "    import warnings\n"
        "    with warnings.catch_warnings():\n"
        "        warnings.simplefilter('ignore')  # autocast('cuda') on a CPU-only machine warns and disables itself\n"
        "        with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "            loss = loss_fn(model(X), y)\n")))),
    "ignores_the_dtype_argument": ("test_amp_step_basic", _step(("dtype=dtype)", "dtype=autocast_dtype(device_type))"))),
    "growth_counted_as_skip": ("test_step_was_skipped", {"step_was_skipped": (
        "def step_was_skipped(scale_before, scale_after):\n"
        "    return scale_after != scale_before\n")}),
    "loss_outside_autocast": ("test_amp_step_basic", _step((_AUTOCAST, (
        "    with torch.autocast(device_type=device_type, dtype=dtype):\n"
        "        out = model(X)\n"
        "    loss = loss_fn(out, y)\n")))),
    "autocasts_on_the_tensors_device": ("test_amp_step_basic", _step(
        ("torch.autocast(device_type=device_type, dtype=dtype)", "torch.autocast(device_type=X.device.type, dtype=dtype)"))),
    "always_cpu_autocast": ("test_amp_step_basic", _step(
        ("torch.autocast(device_type=device_type, dtype=dtype)", "torch.autocast('cpu', dtype=dtype)"))),
    "clears_the_gradients_at_the_end": ("test_amp_step_basic", _step(
        ("    optimizer.zero_grad()\n", ""),
        ("    scaler.update()\n", "    scaler.update()\n    optimizer.zero_grad()\n"))),
    "updates_the_scale_only_after_a_taken_step": ("test_amp_step_skip", _step(
        ("    scaler.step(optimizer)\n    scaler.update()\n",
         "    scaler.step(optimizer)\n    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
         "    if all(torch.isfinite(g).all() for g in grads):\n        scaler.update()\n"))),
    "clips_each_parameter_separately": ("test_amp_step_clip", _step(
        (_CLIP, "        for p in model.parameters():\n            torch.nn.utils.clip_grad_norm_([p], max_norm)\n"))),
    "skip_means_exactly_halved": ("test_step_was_skipped", {"step_was_skipped": (
        "def step_was_skipped(scale_before, scale_after):\n"
        "    return scale_after == scale_before / 2\n")}),
    "unchanged_scale_counted_as_skip": ("test_step_was_skipped", {"step_was_skipped": (
        "def step_was_skipped(scale_before, scale_after):\n"
        "    return scale_after <= scale_before\n")}),
    "asks_whether_cuda_is_available": ("test_autocast_dtype", {"autocast_dtype": (
        "def autocast_dtype(device_type):\n"
        "    return torch.float16 if torch.cuda.is_available() else torch.bfloat16\n")}),
    "returns_the_dtype_name": ("test_autocast_dtype", {"autocast_dtype": (
        "def autocast_dtype(device_type):\n"
        "    return 'bfloat16' if device_type == 'cpu' else 'float16'\n")}),
    "float16_on_the_cpu": ("test_autocast_dtype", {"autocast_dtype": (
        "def autocast_dtype(device_type):\n"
        "    return torch.float16\n")}),
}

CORRECT = {
    "clips_against_the_scaled_threshold": {
        "amp_train_step": _STEP_HEAD + (
            "    # Clipping the scaled gradients at max_norm * S is the same as clipping the true ones at max_norm.\n"
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "    with torch.amp.autocast(device_type, dtype=dtype):\n"
            "        out = model(X)\n"
            "        loss = loss_fn(out, y)\n"
            "    scaler.scale(loss).backward()\n"
            "    S = scaler.get_scale()\n"
            "    if max_norm is not None:\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm * S)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    return float(loss.detach()), not step_was_skipped(S, scaler.get_scale())\n"),
        "step_was_skipped": (
            "def step_was_skipped(scale_before, scale_after):\n"
            "    return scale_after / scale_before < 1.0\n"),
        "autocast_dtype": (
            "def autocast_dtype(device_type):\n"
            "    return torch.get_autocast_dtype(device_type)\n"),
        "why_amp": "Clip after unscale_, or the threshold is divided by the scale; bf16 needs no scaler.",
    },
    "manual_norm_and_step_count": {
        "amp_train_step": _STEP_HEAD + (
            "    optimizer.zero_grad(set_to_none=True)\n"
            "    with torch.autocast(device_type=device_type, dtype=dtype, enabled=True):\n"
            "        loss = loss_fn(model(X), y).float()\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)                      # always: the gradients are then true ones\n"
            "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "    if max_norm is not None:\n"
            "        total = torch.sqrt(sum((g.float() ** 2).sum() for g in grads))\n"
            "        factor = max_norm / (total + 1e-6)\n"
            "        if factor < 1:\n"
            "            for g in grads:\n"
            "                g.mul_(factor)\n"
            "    old = scaler.get_scale()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    new = scaler.get_scale()\n"
            "    optimizer.zero_grad(set_to_none=True)          # and clear at the end too: no gradient kept alive\n"
            "    return loss.item(), bool(new >= old)\n"),
        "autocast_dtype": (
            "def autocast_dtype(device_type):\n"
            "    return {'cpu': torch.bfloat16}.get(str(device_type), torch.float16)\n"),
    },
    "set_to_zero_functional_autocast_and_inverted_test": {
        "amp_train_step": _STEP_HEAD + (
            "    optimizer.zero_grad(set_to_none=False)        # zeros, not None: NaN left by a skipped step goes too\n"
            "    ctx = torch.autocast(device_type, dtype=dtype)\n"
            "    with ctx:\n"
            "        logits = model(X)\n"
            "        loss = loss_fn(logits, y)\n"
            "    scaled = scaler.scale(loss)\n"
            "    scaled.backward()\n"
            "    if max_norm is not None:\n"
            "        scaler.unscale_(optimizer)\n"
            "        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.grad is not None],\n"
            "                                       max_norm=max_norm, error_if_nonfinite=False)\n"
            "    old = scaler.get_scale()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    return float(loss.detach().cpu()), not step_was_skipped(old, scaler.get_scale())\n"),
        "step_was_skipped": (
            "def step_was_skipped(scale_before, scale_after):\n"
            "    return not (scale_after >= scale_before)\n"),
        "autocast_dtype": (
            "def autocast_dtype(device_type):\n"
            "    if device_type == 'cuda':\n"
            "        return torch.float16\n"
            "    return torch.bfloat16\n"),
    },
}
