"""Implementations of ex07 a student might hand in (see ex01_variants for the contract)."""

WRONG = {
    "naive_logsumexp": ("test_logsumexp", {"logsumexp": (
        "def logsumexp(z):\n"
        "    return np.log(np.sum(np.exp(z), axis=-1))\n")}),
    "shift_not_added_back": ("test_logsumexp", {"logsumexp": (
        "def logsumexp(z):\n"
        "    m = np.max(z, axis=-1, keepdims=True)\n"
        "    return np.log(np.sum(np.exp(z - m), axis=-1))\n")}),
    "one_shift_for_the_whole_batch": ("test_logsumexp", {"logsumexp": (
        "def logsumexp(z):\n"
        "    m = np.max(z)\n"
        "    return np.log(np.sum(np.exp(z - m), axis=-1)) + m\n")}),
    "naive_softmax": ("test_softmax", {"softmax": (
        "def softmax(z):\n"
        "    e = np.exp(z)\n"
        "    return e / np.sum(e, axis=-1, keepdims=True)\n")}),
    "softmax_over_the_wrong_axis": ("test_softmax", {"softmax": (
        "def softmax(z):\n"
        "    e = np.exp(z - np.max(z, axis=0, keepdims=True))\n"
        "    return e / np.sum(e, axis=0, keepdims=True)\n")}),
    "cross_entropy_through_probabilities": ("test_cross_entropy", {"cross_entropy": (
        "def cross_entropy(logits, labels):\n"
        "    p = softmax(logits)\n"
        "    with np.errstate(divide='ignore'):\n"
        "        return float(-np.mean(np.log(p[np.arange(len(labels)), labels])))\n")}),
    "cross_entropy_summed": ("test_cross_entropy", {"cross_entropy": (
        "def cross_entropy(logits, labels):\n"
        "    return float(np.sum(logsumexp(logits) - logits[np.arange(len(labels)), labels]))\n")}),
    "fp16_only_at_the_end": ("test_fp16_second_moment", {"fp16_second_moment": (
        "def fp16_second_moment(grads, beta2=0.999):\n"
        "    v = np.zeros(np.shape(grads[0]))\n"
        "    for g in grads:\n"
        "        v = beta2 * v + (1 - beta2) * np.asarray(g, dtype=float) ** 2\n"
        "    return v.astype(np.float16)\n")}),
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
}
