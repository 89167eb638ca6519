"""Implementations of ex07 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_LSE = ("def logsumexp(z):\n"
        "    z = np.asarray(z, dtype=float)\n"
        "    m = np.max(z, axis=-1, keepdims=True)\n"
        "    m = np.where(np.isfinite(m), m, 0.0)\n"
        "    with np.errstate(divide='ignore'):\n"
        "        return np.log(np.sum(np.exp(z - m), axis=-1)) + m[..., 0]\n")
_SM = ("def softmax(z):\n"
       "    z = np.asarray(z, dtype=float)\n"
       "    e = np.exp(z - np.max(z, axis=-1, keepdims=True))\n"
       "    return e / np.sum(e, axis=-1, keepdims=True)\n")
_CE = ("def cross_entropy(logits, labels):\n"
       "    logits = np.asarray(logits, dtype=float)\n"
       "    picked = logits[np.arange(len(labels)), labels]\n"
       "    return float(np.mean(logsumexp(logits) - picked))\n")
_FP16 = ("def fp16_second_moment(grads, beta2=0.999):\n"
         "    b2, c = np.float16(beta2), np.float16(1 - beta2)\n"
         "    v = np.zeros(np.shape(grads[0]), dtype=np.float16)\n"
         "    for g in grads:\n"
         "        g16 = np.asarray(g).astype(np.float16)\n"
         "        v = b2 * v + c * (g16 * g16)\n"
         "    return v\n")

WRONG = {
    "naive_logsumexp": ("test_logsumexp", {"logsumexp": (
        "def logsumexp(z):\n"
        "    return np.log(np.sum(np.exp(z), axis=-1))\n")}),
    "shift_not_added_back": ("test_logsumexp", {"logsumexp": edited(_LSE, (" + m[..., 0]", ""))}),
    "one_shift_for_the_whole_batch": ("test_logsumexp", {"logsumexp": edited(
        _LSE, ("np.max(z, axis=-1, keepdims=True)", "np.max(z)"), ("m[..., 0]", "m"))}),
    "logsumexp_keeps_the_reduced_axis": ("test_logsumexp", {"logsumexp": edited(
        _LSE, ("axis=-1)) + m[..., 0]", "axis=-1, keepdims=True)) + m"))}),
    "fully_masked_row_gives_nan": ("test_logsumexp", {"logsumexp": edited(
        _LSE, ("    m = np.where(np.isfinite(m), m, 0.0)\n", ""))}),
    "logsumexp_shifts_z_in_place": ("test_logsumexp", {"logsumexp": edited(
        _LSE, ("        return np.log(np.sum(np.exp(z - m), axis=-1)) + m[..., 0]\n",
               "        z -= m\n        return np.log(np.sum(np.exp(z), axis=-1)) + m[..., 0]\n"))}),
    "naive_softmax": ("test_softmax", {"softmax": edited(
        _SM, ("np.exp(z - np.max(z, axis=-1, keepdims=True))", "np.exp(z)"))}),
    "softmax_over_the_wrong_axis": ("test_softmax", {"softmax": edited(
        _SM, ("np.max(z, axis=-1, keepdims=True)", "np.max(z, axis=0, keepdims=True)"),
        ("np.sum(e, axis=-1, keepdims=True)", "np.sum(e, axis=0, keepdims=True)"))}),
    "softmax_in_place": ("test_softmax", {"softmax": (
        "def softmax(z):\n"
        "    z = np.asarray(z, dtype=float)\n"
        "    z -= np.max(z, axis=-1, keepdims=True)\n"
        "    np.exp(z, out=z)\n"
        "    z /= np.sum(z, axis=-1, keepdims=True)\n"
        "    return z\n")}),
    "cross_entropy_through_probabilities": ("test_cross_entropy", {"cross_entropy": (
        "def cross_entropy(logits, labels):\n"
        "    p = softmax(logits)\n"
        "    with np.errstate(divide='ignore'):\n"
        "        return float(-np.mean(np.log(p[np.arange(len(labels)), labels])))\n")}),
    "cross_entropy_summed": ("test_cross_entropy", {"cross_entropy": edited(_CE, ("np.mean(", "np.sum("))}),
    "cross_entropy_picks_a_matrix": ("test_cross_entropy", {"cross_entropy": edited(
        _CE, ("logits[np.arange(len(labels)), labels]", "logits[:, labels]"),
        ("logsumexp(logits) - picked", "logsumexp(logits)[:, None] - picked"))}),
    "cross_entropy_one_hot_times_minus_inf": ("test_cross_entropy", {"cross_entropy": (
        "def cross_entropy(logits, labels):\n"
        "    logits = np.asarray(logits, dtype=float)\n"
        "    log_p = logits - logsumexp(logits)[:, None]\n"
        "    one_hot = np.eye(logits.shape[1])[labels]\n"
        "    with np.errstate(invalid='ignore'):\n"
        "        return float(-np.mean(np.sum(one_hot * log_p, axis=1)))\n")}),
    "fp16_only_at_the_end": ("test_fp16_second_moment", {"fp16_second_moment": (
        "def fp16_second_moment(grads, beta2=0.999):\n"
        "    v = np.zeros(np.shape(grads[0]))\n"
        "    for g in grads:\n"
        "        v = beta2 * v + (1 - beta2) * np.asarray(g, dtype=float) ** 2\n"
        "    return v.astype(np.float16)\n")}),
    "fp16_scales_before_squaring": ("test_fp16_second_moment", {"fp16_second_moment": edited(
        _FP16, ("c * (g16 * g16)", "c * g16 * g16"))}),
    "fp16_one_minus_beta2_in_float16": ("test_fp16_second_moment", {"fp16_second_moment": edited(
        _FP16, ("np.float16(1 - beta2)", "np.float16(1) - np.float16(beta2)"))}),
    "fp16_gradients_left_in_float64": ("test_fp16_second_moment", {"fp16_second_moment": edited(
        _FP16, ("np.asarray(g).astype(np.float16)", "np.asarray(g, dtype=float)"))}),
    "calls_the_course_reference": ("test_cross_entropy", {"cross_entropy": (
        "from gdcourse.precision import cross_entropy_from_logits\n"
        "def cross_entropy(logits, labels):\n"
        "    return cross_entropy_from_logits(logits, labels)\n")}),
}

CORRECT = {
    "log_softmax_route": {
        "logsumexp": (
            "def logsumexp(z):\n"
            "    z = np.asarray(z, dtype=float)\n"
            "    top = np.max(z, axis=-1)\n"
            "    safe = np.where(np.isneginf(top), 0.0, top)\n"
            "    with np.errstate(divide='ignore'):\n"
            "        return safe + np.log(np.exp(z - safe[..., None]).sum(axis=-1))\n"),
        "cross_entropy": (
            "def cross_entropy(logits, labels):\n"
            "    log_p = logits - logsumexp(logits)[:, None]\n"
            "    return -float(np.mean([log_p[i, c] for i, c in enumerate(labels)]))\n"),
        "why_fp16": "Small squared gradients underflow to 0 in float16; loss scaling and fp32 state fix it; bf16 has float32's range.",
    },
    "softmax_from_logsumexp": {
        "softmax": (
            "def softmax(z):\n"
            "    return np.exp(z - logsumexp(z)[..., None])\n"),
        "fp16_second_moment": (
            "def fp16_second_moment(grads, beta2=0.999):\n"
            "    h = np.float16\n"
            "    v = np.zeros_like(np.asarray(grads[0], dtype=h))\n"
            "    for g in grads:\n"
            "        g = np.asarray(g, dtype=h)\n"
            "        v = np.add(np.multiply(h(beta2), v), np.multiply(h(1 - beta2), np.square(g)))\n"
            "    return v\n"),
    },
    "numpy_logaddexp_and_python_coefficients": {
        "logsumexp": (
            "def logsumexp(z):\n"
            "    return np.logaddexp.reduce(np.asarray(z, dtype=float), axis=-1)\n"),
        "softmax": (
            "def softmax(z):\n"
            "    z = np.asarray(z, dtype=float)\n"
            "    return np.exp(z - np.logaddexp.reduce(z, axis=-1, keepdims=True))\n"),
        "fp16_second_moment": (
            "def fp16_second_moment(grads, beta2=0.999):\n"
            "    # NumPy keeps float16 when a Python float meets a float16 array: beta2 and 1 - beta2\n"
            "    # (computed as Python floats) are rounded to float16 once, as np.float16(...) does\n"
            "    v = np.zeros(np.shape(grads[0]), dtype=np.float16)\n"
            "    for g in grads:\n"
            "        g = np.array(g, dtype=np.float16)\n"
            "        v = v * beta2 + (g * g) * (1 - beta2)\n"
            "    return v\n"),
    },
    "row_by_row_loops": {
        "logsumexp": (
            "import math\n"
            "def logsumexp(z):\n"
            "    z = np.asarray(z, dtype=float)\n"
            "    rows = z.reshape(-1, z.shape[-1])\n"
            "    out = np.empty(len(rows))\n"
            "    for i, row in enumerate(rows):\n"
            "        m = row.max()\n"
            "        if m == -np.inf:\n"
            "            out[i] = -np.inf\n"
            "        else:\n"
            "            out[i] = m + math.log(math.fsum(math.exp(x - m) for x in row))\n"
            "    return out.reshape(z.shape[:-1])\n"),
        "softmax": (
            "def softmax(z):\n"
            "    z = np.array(z, dtype=float)\n"
            "    out = np.empty_like(z)\n"
            "    for idx in np.ndindex(z.shape[:-1]):\n"
            "        shifted = z[idx] - z[idx].max()\n"
            "        e = np.exp(shifted)\n"
            "        out[idx] = e / e.sum()\n"
            "    return out\n"),
        "cross_entropy": (
            "def cross_entropy(logits, labels):\n"
            "    total = 0.0\n"
            "    for row, y in zip(np.asarray(logits, dtype=float), labels):\n"
            "        total += logsumexp(row) - row[y]\n"
            "    return total / len(labels)\n"),
    },
}
