"""Implementations of ex18 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

_NS = (
    "def newton_schulz(G, steps=5, eps=1e-7):\n"
    "    a, b, c = MUON_COEFFICIENTS\n"
    "    X = np.array(G, dtype=float)\n"
    "    tall = X.shape[0] > X.shape[1]\n"
    "    if tall:\n"
    "        X = X.T\n"
    "    X = X / max(np.linalg.norm(X), eps)\n"
    "    for _ in range(steps):\n"
    "        A = X @ X.T\n"
    "        X = a * X + (b * A + c * A @ A) @ X\n"
    "    return X.T if tall else X\n")
_MUON = (
    "def muon_step(W, G, buf, lr, momentum=0.95, weight_decay=0.1, nesterov=True, ns_steps=5):\n"
    "    buf = momentum * buf + (1 - momentum) * G\n"
    "    update = (1 - momentum) * G + momentum * buf if nesterov else buf\n"
    "    O = newton_schulz(update, steps=ns_steps)\n"
    "    rows, cols = W.shape\n"
    "    adjusted_lr = lr * math.sqrt(max(1.0, rows / cols))\n"
    "    return W * (1 - lr * weight_decay) - adjusted_lr * O, buf\n")
_ZERO = (
    "def zero_memory(n_params, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):\n"
    "    state_tensors = {'sgd': 0, 'momentum': 1, 'muon': 1, 'adam': 2, 'adamw': 2}\n"
    "    if optimizer not in state_tensors or stage not in (0, 1, 2, 3):\n"
    "        raise ValueError('bad optimizer or stage')\n"
    "    shard = -(-n_params // world_size)\n"
    "    n_state = shard if stage >= 1 else n_params\n"
    "    n_grad = shard if stage >= 2 else n_params\n"
    "    n_param = shard if stage >= 3 else n_params\n"
    "    table = {'params': n_param * param_bytes, 'grads': n_grad * param_bytes,\n"
    "             'optimizer_state': n_state * state_tensors[optimizer] * 4,\n"
    "             'master_weights': n_state * 4 if master_weights else 0}\n"
    "    table['total'] = sum(table.values())\n"
    "    return table\n")

WRONG = {
    "ns_cubic_coefficients": ("test_newton_schulz", {"newton_schulz": edited(
        _NS, ("a, b, c = MUON_COEFFICIENTS", "a, b, c = 1.5, -0.5, 0.0"))}),
    "ns_no_normalisation": ("test_newton_schulz", {"newton_schulz": edited(
        _NS, ("    X = X / max(np.linalg.norm(X), eps)\n", ""))}),
    "ns_spectral_norm": ("test_newton_schulz", {"newton_schulz": edited(
        _NS, ("np.linalg.norm(X)", "np.linalg.norm(X, 2)"))}),
    "ns_one_step_too_few": ("test_newton_schulz", {"newton_schulz": edited(
        _NS, ("range(steps)", "range(steps - 1)"))}),
    "ns_tall_not_transposed_back": ("test_newton_schulz", {"newton_schulz": edited(
        _NS, ("return X.T if tall else X", "return X"))}),
    "ns_no_eps_guard": ("test_newton_schulz", {"newton_schulz": edited(
        _NS, ("max(np.linalg.norm(X), eps)", "np.linalg.norm(X)"))}),
    "ns_calls_the_course_reference": ("test_newton_schulz", {"newton_schulz": (
        "from gdcourse.optim import newton_schulz as _ns\n"
        "def newton_schulz(G, steps=5, eps=1e-7):\n"
        "    return _ns(np.asarray(G, dtype=float), steps, eps)\n")}),
    "muon_without_nesterov": ("test_muon_step", {"muon_step": edited(
        _MUON, ("if nesterov else buf", "if False else buf"))}),
    "muon_buffer_without_dampening": ("test_muon_step", {"muon_step": edited(
        _MUON, ("momentum * buf + (1 - momentum) * G", "momentum * buf + G"))}),
    "muon_no_lr_adjustment": ("test_muon_step", {"muon_step": edited(
        _MUON, ("lr * math.sqrt(max(1.0, rows / cols))", "lr"))}),
    "muon_coupled_weight_decay": ("test_muon_step", {"muon_step": edited(
        _MUON, ("    buf = momentum * buf", "    G = G + weight_decay * W\n    buf = momentum * buf"),
        ("W * (1 - lr * weight_decay)", "W"))}),
    "muon_decay_with_adjusted_lr": ("test_muon_step", {"muon_step": edited(
        _MUON, ("(1 - lr * weight_decay)", "(1 - adjusted_lr * weight_decay)"))}),
    "muon_in_place": ("test_muon_step", {"muon_step": edited(
        _MUON, ("    buf = momentum * buf + (1 - momentum) * G\n", "    buf *= momentum\n    buf += (1 - momentum) * G\n"))}),
    "zero_stage2_shards_params": ("test_zero_memory", {"zero_memory": edited(
        _ZERO, ("shard if stage >= 3", "shard if stage >= 2"))}),
    "zero_master_weights_unsharded": ("test_zero_memory", {"zero_memory": edited(
        _ZERO, ("n_state * 4 if master_weights", "n_params * 4 if master_weights"))}),
    "zero_forgets_master_weights": ("test_zero_memory", {"zero_memory": edited(
        _ZERO, ("n_state * 4 if master_weights else 0", "0"))}),
    "zero_floor_shard": ("test_zero_memory", {"zero_memory": edited(
        _ZERO, ("-(-n_params // world_size)", "n_params // world_size"))}),
    "largest_model_off_by_one": ("test_largest_model", {"largest_model": (
        "def largest_model(memory_bytes, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):\n"
        "    fits = lambda n: zero_memory(n, optimizer, param_bytes=param_bytes, master_weights=master_weights,\n"
        "                                 stage=stage, world_size=world_size)['total'] <= memory_bytes\n"
        "    lo, hi = 0, memory_bytes * world_size + 1\n"
        "    while hi - lo > 1:\n"
        "        mid = (lo + hi) // 2\n"
        "        lo, hi = (mid, hi) if fits(mid) else (lo, mid)\n"
        "    return hi\n")}),
    "largest_model_ignores_rounding": ("test_largest_model", {"largest_model": (
        "def largest_model(memory_bytes, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):\n"
        "    per = zero_memory(world_size * 10**6, optimizer, param_bytes=param_bytes, master_weights=master_weights,\n"
        "                      stage=stage, world_size=world_size)['total'] / (world_size * 10**6)\n"
        "    return int(memory_bytes / per)\n")}),
}

CORRECT = {
    "right_gram_svd_and_closed_form": {
        "newton_schulz": (
            "def newton_schulz(G, steps=5, eps=1e-7):\n"
            "    a, b, c = MUON_COEFFICIENTS\n"
            "    X = np.asarray(G, dtype=float) / (math.sqrt(float(np.sum(np.square(G)))) + eps)\n"
            "    for _ in range(steps):            # no transpose: B = X^T X on the right, the same polynomial\n"
            "        B = X.T @ X\n"
            "        X = a * X + X @ (b * B + c * (B @ B))\n"
            "    return X\n"),
        "muon_step": (
            "def muon_step(W, G, buf, lr, momentum=0.95, weight_decay=0.1, nesterov=True, ns_steps=5):\n"
            "    new_buf = buf + (1 - momentum) * (G - buf)          # torch's lerp_\n"
            "    update = G + momentum * (new_buf - G) if nesterov else new_buf\n"
            "    scale = math.sqrt(W.shape[0] / W.shape[1]) if W.shape[0] > W.shape[1] else 1.0\n"
            "    W_new = W - lr * weight_decay * W\n"
            "    W_new = W_new - lr * scale * newton_schulz(update, ns_steps)\n"
            "    return W_new, new_buf\n"),
    },
    "svd_polynomial": {
        "newton_schulz": (
            "def newton_schulz(G, steps=5, eps=1e-7):\n"
            "    a, b, c = MUON_COEFFICIENTS\n"
            "    U, s, Vt = np.linalg.svd(np.asarray(G, dtype=float), full_matrices=False)\n"
            "    x = s / max(np.linalg.norm(s), eps)      # ||G||_F is the norm of the singular values\n"
            "    for _ in range(steps):\n"
            "        x = a * x + b * x ** 3 + c * x ** 5\n"
            "    return (U * x) @ Vt\n"),
        "zero_memory": (
            "def zero_memory(n_params, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):\n"
            "    if optimizer not in ('sgd', 'momentum', 'muon', 'adam', 'adamw'):\n"
            "        raise ValueError(optimizer)\n"
            "    if stage not in range(4):\n"
            "        raise ValueError(stage)\n"
            "    per_rank = math.ceil(n_params / world_size) if n_params < 2**52 else -(-n_params // world_size)\n"
            "    count = lambda first_sharded_stage: per_rank if stage >= first_sharded_stage else n_params\n"
            "    moments = {'sgd': 0, 'momentum': 1, 'muon': 1, 'adam': 2, 'adamw': 2}[optimizer]\n"
            "    out = dict(params=count(3) * param_bytes, grads=count(2) * param_bytes,\n"
            "               optimizer_state=4 * moments * count(1), master_weights=4 * count(1) * int(bool(master_weights)))\n"
            "    out['total'] = out['params'] + out['grads'] + out['optimizer_state'] + out['master_weights']\n"
            "    return out\n"),
    },
    "closed_form_largest_model": {
        "largest_model": (
            "def largest_model(memory_bytes, optimizer, *, param_bytes=4, master_weights=False, stage=0, world_size=1):\n"
            "    total = lambda n: zero_memory(n, optimizer, param_bytes=param_bytes, master_weights=master_weights,\n"
            "                                  stage=stage, world_size=world_size)['total']\n"
            "    # total(n) = n (u + s / world_size) for a multiple of world_size: solve, then fix the rounding\n"
            "    n = max(memory_bytes * world_size // max(total(world_size), 1) - 2 * world_size, 0)\n"
            "    while total(n + 1) <= memory_bytes:\n"
            "        n += 1\n"
            "    while n > 0 and total(n) > memory_bytes:\n"
            "        n -= 1\n"
            "    return int(n)\n"),
    },
}
