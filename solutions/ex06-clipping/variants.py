"""Implementations of ex06 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_NORM_OK = (
    "def global_norm(grads):\n"
    "    return float(np.sqrt(sum(np.sum(g.astype(float) ** 2) for g in grads)))\n")
_CLIP_OK = (
    "def clip_by_global_norm(grads, max_norm):\n"
    "    norm = global_norm(grads)\n"
    "    factor = float(np.minimum(1.0, max_norm / (norm + 1e-6)))\n"
    "    return [g * factor for g in grads], norm\n")
_VALUE_OK = (
    "def clip_by_value(grads, clip_value):\n"
    "    return [np.clip(g, -clip_value, clip_value) for g in grads]\n")
_FACTOR = "    factor = float(np.minimum(1.0, max_norm / (norm + 1e-6)))\n"

WRONG = {
    # global_norm
    "norm_summed_per_tensor": ("test_global_norm", {"global_norm": (
        "def global_norm(grads):\n"
        "    return float(sum(np.linalg.norm(g) for g in grads))\n")}),
    "norm_without_the_square_root": ("test_global_norm", {"global_norm": edited(
        _NORM_OK, ("float(np.sqrt(sum(np.sum(g.astype(float) ** 2) for g in grads)))",
                   "float(sum(np.sum(g.astype(float) ** 2) for g in grads))"))}),
    "norm_squares_in_the_arrays_dtype": ("test_global_norm", {"global_norm": edited(
        _NORM_OK, ("g.astype(float) ** 2", "g ** 2"))}),
    "norm_of_the_concatenation_in_float32": ("test_global_norm", {"global_norm": (
        "def global_norm(grads):\n"
        "    return float(np.linalg.norm(np.concatenate([g.ravel() for g in grads])))\n")}),
    # clip_by_global_norm
    "clips_each_tensor_separately": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "def clip_by_global_norm(grads, max_norm):\n"
        "    out = [g * float(np.minimum(1.0, max_norm / (global_norm([g]) + 1e-6))) for g in grads]\n"
        "    return out, global_norm(grads)\n")}),
    "always_rescales_to_max_norm": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, (_FACTOR, "    factor = max_norm / (norm + 1e-6)\n"))}),
    "returns_the_norm_after_clipping": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, ("    return [g * factor for g in grads], norm\n",
                   "    out = [g * factor for g in grads]\n    return out, global_norm(out)\n"))}),
    "clips_in_place": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, ("    return [g * factor for g in grads], norm\n",
                   "    for g in grads:\n        g *= factor\n    return grads, norm\n"))}),
    "python_min_hides_a_nan_norm": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, (_FACTOR, "    factor = min(1.0, max_norm / (norm + 1e-6))\n"))}),
    "no_epsilon_in_the_factor": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, (_FACTOR, "    factor = min(1.0, max_norm / norm)\n"))}),
    "compares_the_norm_with_max_norm_first": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, (_FACTOR, "    if norm <= max_norm:\n"
                            "        return [g.copy() for g in grads], norm\n"
                            "    factor = max_norm / (norm + 1e-6)\n"))}),
    "returns_the_given_arrays_when_nothing_is_clipped": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, ("    return [g * factor", "    if factor == 1.0:\n        return grads, norm\n    return [g * factor"))}),
    "norm_in_float32_inside_the_clip": ("test_clip_by_global_norm", {"clip_by_global_norm": edited(
        _CLIP_OK, ("    norm = global_norm(grads)\n", "    norm = float(np.sqrt(sum(np.sum(g * g) for g in grads)))\n"))}),
    # clip_by_value
    "value_clipping_rescales_instead_of_clamping": ("test_clip_by_value", {"clip_by_value": (
        "def clip_by_value(grads, clip_value):\n"
        "    top = max(np.max(np.abs(g)) for g in grads)\n"
        "    return [g * min(1.0, clip_value / top) for g in grads]\n")}),
    "value_clipping_clamps_only_the_top": ("test_clip_by_value", {"clip_by_value": edited(
        _VALUE_OK, ("np.clip(g, -clip_value, clip_value)", "np.minimum(g, clip_value)"))}),
    "value_clipping_in_place": ("test_clip_by_value", {"clip_by_value": edited(
        _VALUE_OK, ("np.clip(g, -clip_value, clip_value)", "np.clip(g, -clip_value, clip_value, out=g)"))}),
    "value_clipping_with_python_min_max_loses_nan": ("test_clip_by_value", {"clip_by_value": (
        "def clip_by_value(grads, clip_value):\n"
        "    out = []\n"
        "    for g in grads:\n"
        "        c = np.array(g, dtype=float)\n"
        "        for i in np.ndindex(c.shape):\n"
        "            c[i] = max(-clip_value, min(clip_value, c[i]))\n"
        "        out.append(c)\n"
        "    return out\n")}),
    "calls_the_course_reference": ("test_clip_by_global_norm", {"clip_by_global_norm": (
        "import gdcourse.clipping\n"
        "def clip_by_global_norm(grads, max_norm):\n"
        "    return gdcourse.clipping.clip_by_global_norm(grads, max_norm)\n")}),
}

CORRECT = {
    "concatenate_then_split": {
        "global_norm": (
            "def global_norm(grads):\n"
            "    flat = np.concatenate([np.ravel(g).astype(np.float64) for g in grads])\n"
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
    "minimum_maximum_and_norm_of_norms": {
        "clip_by_value": (
            "def clip_by_value(grads, clip_value):\n"
            "    return [np.minimum(np.maximum(g, -clip_value), clip_value) for g in grads]\n"),
        "global_norm": (
            "def global_norm(grads):\n"
            "    return float(np.linalg.norm([np.linalg.norm(g.astype(np.float64)) for g in grads]))\n"),
    },
    "python_loops_and_explicit_cases": {
        "global_norm": (
            "import math\n"
            "def global_norm(grads):\n"
            "    total = 0.0\n"
            "    for g in grads:\n"
            "        for x in np.ravel(g):\n"
            "            total += float(x) ** 2\n"
            "    return math.sqrt(total)\n"),
        "clip_by_global_norm": (
            "import math\n"
            "def clip_by_global_norm(grads, max_norm):\n"
            "    norm = global_norm(grads)\n"
            "    if math.isnan(norm):\n"
            "        factor = math.nan  # torch: a NaN norm makes every entry NaN\n"
            "    elif norm + 1e-6 > max_norm:\n"
            "        factor = max_norm / (norm + 1e-6)\n"
            "    else:\n"
            "        factor = 1.0\n"
            "    return [np.array(g, dtype=np.float64) * factor for g in grads], norm\n"),
        "clip_by_value": (
            "def clip_by_value(grads, clip_value):\n"
            "    return [np.where(g > clip_value, clip_value, np.where(g < -clip_value, -clip_value, g)) for g in grads]\n"),
    },
    "scaled_copies_in_place": {
        "clip_by_global_norm": (
            "def clip_by_global_norm(grads, max_norm):\n"
            "    norm = global_norm(grads)\n"
            "    out = [np.copy(g) for g in grads]\n"
            "    for o in out:\n"
            "        o *= np.minimum(1.0, max_norm / (norm + 1e-6))\n"
            "    return out, norm\n"),
        "clip_by_value": (
            "def clip_by_value(grads, clip_value):\n"
            "    out = []\n"
            "    for g in grads:\n"
            "        c = g.copy()\n"
            "        np.clip(c, -clip_value, clip_value, out=c)\n"
            "        out.append(c)\n"
            "    return out\n"),
    },
}
