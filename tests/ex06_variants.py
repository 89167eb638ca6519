"""Implementations of ex06 a student might hand in (see ex01_variants for the contract)."""

WRONG = {
    "norm_summed_per_tensor": ("test_global_norm", {"global_norm": (
        "def global_norm(grads):\n"
        "    return float(sum(np.linalg.norm(g) for g in grads))\n")}),
    "clips_each_tensor_separately": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "def clip_by_global_norm(grads, max_norm):\n"
        "    out = [g * min(1.0, max_norm / (np.linalg.norm(g) + 1e-6)) for g in grads]\n"
        "    return out, global_norm(grads)\n")}),
    "always_rescales_to_max_norm": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "def clip_by_global_norm(grads, max_norm):\n"
        "    norm = global_norm(grads)\n"
        "    return [g * (max_norm / (norm + 1e-6)) for g in grads], norm\n")}),
    "returns_the_norm_after_clipping": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "def clip_by_global_norm(grads, max_norm):\n"
        "    norm = global_norm(grads)\n"
        "    out = [g * min(1.0, max_norm / (norm + 1e-6)) for g in grads]\n"
        "    return out, global_norm(out)\n")}),
    "clips_in_place": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "def clip_by_global_norm(grads, max_norm):\n"
        "    norm = global_norm(grads)\n"
        "    for g in grads:\n"
        "        g *= min(1.0, max_norm / (norm + 1e-6))\n"
        "    return grads, norm\n")}),
    "value_clipping_rescales_instead_of_clamping": ("test_clip_by_value", {"clip_by_value": (
        "def clip_by_value(grads, clip_value):\n"
        "    top = max(np.max(np.abs(g)) for g in grads)\n"
        "    return [g * min(1.0, clip_value / top) for g in grads]\n")}),
    "calls_the_course_reference": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "import gdcourse.clipping\n"
        "def clip_by_global_norm(grads, max_norm):\n"
        "    return gdcourse.clipping.clip_by_global_norm(grads, max_norm)\n")}),
}

CORRECT = {
    "concatenate_then_split": {
        "global_norm": (
            "def global_norm(grads):\n"
            "    flat = np.concatenate([np.ravel(g) for g in grads])\n"
            "    return float(np.sqrt(flat @ flat))\n"),
        "clip_by_global_norm": (
            "def clip_by_global_norm(grads, max_norm):\n"
            "    total = global_norm(grads)\n"
            "    coef = max_norm / (total + 1e-6)\n"
            "    if coef >= 1:\n"
            "        return [g.copy() for g in grads], total\n"
            "    return [np.multiply(g, coef) for g in grads], total\n"),
        "why_clip": "Global norm keeps the direction; per-tensor and value clipping bend it. Zeros change no norm. Use global norm.",
    },
    "minimum_maximum": {
        "clip_by_value": (
            "def clip_by_value(grads, clip_value):\n"
            "    return [np.minimum(np.maximum(g, -clip_value), clip_value) for g in grads]\n"),
        "global_norm": (
            "def global_norm(grads):\n"
            "    return float(np.linalg.norm([np.linalg.norm(g) for g in grads]))\n"),
    },
}
