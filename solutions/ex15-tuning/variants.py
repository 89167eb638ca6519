"""Implementations of ex15 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

_SAMPLE = (
    "def sample_space(space, n, seed):\n"
    "    for name, (scale, low, high) in space.items():\n"
    "        if scale not in ('log', 'linear'):\n"
    "            raise ValueError(f'unknown scale {scale!r}')\n"
    "    u = qmc.Halton(len(space), scramble=True, seed=seed).random(n)\n"
    "    sample = {}\n"
    "    for j, (name, (scale, low, high)) in enumerate(space.items()):\n"
    "        if scale == 'log':\n"
    "            sample[name] = np.exp(np.log(low) + u[:, j] * (np.log(high) - np.log(low)))\n"
    "        else:\n"
    "            sample[name] = low + u[:, j] * (high - low)\n"
    "    return sample\n")

_COMPARE = (
    "def compare(a, b, confidence=0.95):\n"
    "    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)\n"
    "    if len(a) < 2 or len(b) < 2:\n"
    "        raise ValueError('at least two scores each')\n"
    "    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)\n"
    "    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))\n"
    "    diff = b.mean() - a.mean()\n"
    "    half = stats.t.ppf((1 + confidence) / 2, df) * math.sqrt(va + vb)\n"
    "    low, high = diff - half, diff + half\n"
    "    decision = 'b' if high < 0 else 'a' if low > 0 else 'tie'\n"
    "    return {'diff': float(diff), 'low': float(low), 'high': float(high), 'decision': decision}\n")

_BUDGET = (
    "def best_under_budget(curves, cost_per_epoch, budget):\n"
    "    if budget < cost_per_epoch:\n"
    "        raise ValueError('not one epoch')\n"
    "    spent, best = 0.0, None\n"
    "    for trial, curve in enumerate(curves):\n"
    "        for epoch, value in enumerate(curve):\n"
    "            if spent + cost_per_epoch > budget:\n"
    "                break\n"
    "            spent += cost_per_epoch\n"
    "            if not math.isnan(value) and (best is None or value < best[2]):\n"
    "                best = (trial, epoch, float(value))\n"
    "    if best is None:\n"
    "        raise ValueError('no finite checkpoint')\n"
    "    return best\n")

WRONG = {
    # --- sample_space ---------------------------------------------------------------------------------
    "sample_linear_instead_of_log": ("test_sample_space_spread", {"sample_space": edited(
        _SAMPLE, ("np.exp(np.log(low) + u[:, j] * (np.log(high) - np.log(low)))", "low + u[:, j] * (high - low)"))}),
    "sample_iid_random_points": ("test_sample_space_spread", {"sample_space": edited(
        _SAMPLE, ("qmc.Halton(len(space), scramble=True, seed=seed).random(n)",
                  "np.random.default_rng(seed).random((n, len(space)))"))}),
    "sample_seed_ignored": ("test_sample_space", {"sample_space": edited(
        _SAMPLE, ("qmc.Halton(len(space), scramble=True, seed=seed)", "qmc.Halton(len(space), scramble=False)"))}),
    "sample_log_bases_mixed": ("test_sample_space", {"sample_space": edited(
        _SAMPLE, ("np.exp(np.log(low) + u[:, j] * (np.log(high) - np.log(low)))",
                  "10 ** (np.log(low) + u[:, j] * (np.log(high) - np.log(low)))"))}),
    "sample_same_sequence_on_every_axis": ("test_sample_space_spread", {"sample_space": edited(
        _SAMPLE, ("    u = qmc.Halton(len(space), scramble=True, seed=seed).random(n)\n",
                  "    u = np.column_stack([qmc.Halton(1, seed=seed).random(n)[:, 0] for _ in space])\n"))}),
    # --- compare -----------------------------------------------------------------------------------------
    "compare_standard_error_without_sqrt_n": ("test_compare", {"compare": edited(
        _COMPARE, ("va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)", "va, vb = a.var(ddof=1), b.var(ddof=1)"))}),
    "compare_one_sided_quantile": ("test_compare", {"compare": edited(
        _COMPARE, ("stats.t.ppf((1 + confidence) / 2, df)", "stats.t.ppf(confidence, df)"))}),
    "compare_decision_sign_flipped": ("test_compare_decision", {"compare": edited(
        _COMPARE, ("'b' if high < 0 else 'a' if low > 0", "'a' if high < 0 else 'b' if low > 0"))}),
    "compare_decides_by_the_mean_alone": ("test_compare_decision", {"compare": edited(
        _COMPARE, ("'b' if high < 0 else 'a' if low > 0 else 'tie'", "'b' if diff < 0 else 'a'"))}),
    "compare_calls_the_course_reference": ("test_compare", {"compare": (
        "from gdcourse.grading.assignments.ex15_tuning import compare as _course_compare\n"
        "def compare(a, b, confidence=0.95):\n"
        "    return _course_compare(a, b, confidence)\n")}),
    # --- best_under_budget -----------------------------------------------------------------------------------
    "budget_last_epoch_not_best": ("test_best_under_budget", {"best_under_budget": (
        "def best_under_budget(curves, cost_per_epoch, budget):\n"
        "    if budget < cost_per_epoch:\n"
        "        raise ValueError('not one epoch')\n"
        "    left, best = int(budget // cost_per_epoch), None\n"
        "    for trial, curve in enumerate(curves):\n"
        "        if left == 0:\n"
        "            break\n"
        "        trained = curve[:left]\n"
        "        left -= len(trained)\n"
        "        last = len(trained) - 1          # the checkpoint the trial ended on\n"
        "        if not math.isnan(trained[last]) and (best is None or trained[last] < best[2]):\n"
        "            best = (trial, last, float(trained[last]))\n"
        "    if best is None:\n"
        "        raise ValueError('no finite checkpoint')\n"
        "    return best\n")}),
    "budget_nan_not_skipped": ("test_best_under_budget_edge", {"best_under_budget": (
        "def best_under_budget(curves, cost_per_epoch, budget):\n"
        "    if budget < cost_per_epoch:\n"
        "        raise ValueError('not one epoch')\n"
        "    k = int(budget // cost_per_epoch)\n"
        "    where = [(t, e) for t, c in enumerate(curves) for e in range(len(c))][:k]\n"
        "    values = np.array([curves[t][e] for t, e in where])\n"
        "    i = int(np.argmin(values))\n"
        "    return where[i][0], where[i][1], float(values[i])\n")}),
    "budget_whole_trials_only": ("test_best_under_budget", {"best_under_budget": (
        "def best_under_budget(curves, cost_per_epoch, budget):\n"
        "    if budget < cost_per_epoch:\n"
        "        raise ValueError('not one epoch')\n"
        "    spent, best = 0.0, None\n"
        "    for trial, curve in enumerate(curves):\n"
        "        if spent + len(curve) * cost_per_epoch > budget:\n"
        "            continue                     # a trial that does not fit is skipped\n"
        "        spent += len(curve) * cost_per_epoch\n"
        "        for epoch, value in enumerate(curve):\n"
        "            if not math.isnan(value) and (best is None or value < best[2]):\n"
        "                best = (trial, epoch, float(value))\n"
        "    if best is None:\n"
        "        raise ValueError('no finite checkpoint')\n"
        "    return best\n")}),
    "budget_boundary_excluded": ("test_best_under_budget", {"best_under_budget": edited(
        _BUDGET, ("if spent + cost_per_epoch > budget:", "if spent + cost_per_epoch >= budget:"))}),
    "budget_overspent_by_the_last_epoch": ("test_best_under_budget", {"best_under_budget": edited(
        _BUDGET, ("if spent + cost_per_epoch > budget:", "if spent >= budget:"))}),
    "budget_ties_pick_the_last": ("test_best_under_budget", {"best_under_budget": edited(
        _BUDGET, ("value < best[2]", "value <= best[2]"))}),
}

CORRECT = {
    "sobol_bootstrap_flat": {
        "sample_space": (
            "def sample_space(space, n, seed):\n"
            "    names = list(space)\n"
            "    if any(space[k][0] not in ('log', 'linear') for k in names):\n"
            "        raise ValueError('scale must be log or linear')\n"
            "    rng = np.random.default_rng(seed)\n"
            "    u = qmc.Sobol(d=len(names), scramble=True, seed=rng).random(n)\n"
            "    out = {}\n"
            "    for j, k in enumerate(names):\n"
            "        scale, lo, hi = space[k]\n"
            "        if scale == 'log':\n"
            "            out[k] = 10.0 ** (np.log10(lo) + u[:, j] * np.log10(hi / lo))\n"
            "        else:\n"
            "            out[k] = np.interp(u[:, j], [0.0, 1.0], [lo, hi])\n"
            "    return out\n"),
        "compare": (
            "def compare(a, b, confidence=0.95):\n"
            "    a, b = np.asarray(a, float), np.asarray(b, float)\n"
            "    if min(a.size, b.size) < 2:\n"
            "        raise ValueError('need two scores per configuration')\n"
            "    rng = np.random.default_rng(12345)\n"
            "    B = 4000\n"
            "    ma = a[rng.integers(a.size, size=(B, a.size))].mean(axis=1)\n"
            "    mb = b[rng.integers(b.size, size=(B, b.size))].mean(axis=1)\n"
            "    low, high = np.quantile(mb - ma, [(1 - confidence) / 2, (1 + confidence) / 2])\n"
            "    if high < 0:\n"
            "        decision = 'b'\n"
            "    elif low > 0:\n"
            "        decision = 'a'\n"
            "    else:\n"
            "        decision = 'tie'\n"
            "    return dict(diff=b.mean() - a.mean(), low=low, high=high, decision=decision)\n"),
        "best_under_budget": (
            "def best_under_budget(curves, cost_per_epoch, budget):\n"
            "    k = int(budget // cost_per_epoch)\n"
            "    if k < 1:\n"
            "        raise ValueError('budget below one epoch')\n"
            "    index = [(t, e) for t, c in enumerate(curves) for e in range(len(c))][:k]\n"
            "    values = np.array([curves[t][e] for t, e in index], dtype=float)\n"
            "    if np.all(np.isnan(values)):\n"
            "        raise ValueError('only NaN within the budget')\n"
            "    i = int(np.nanargmin(values))\n"
            "    return index[i] + (values[i],)\n"),
    },
    "lhs_scipy_welch_per_trial": {
        "sample_space": (
            "def sample_space(space, n, seed):\n"
            "    lows, highs, logs = [], [], []\n"
            "    for scale, lo, hi in space.values():\n"
            "        if scale == 'log':\n"
            "            lows.append(math.log(lo)); highs.append(math.log(hi)); logs.append(True)\n"
            "        elif scale == 'linear':\n"
            "            lows.append(lo); highs.append(hi); logs.append(False)\n"
            "        else:\n"
            "            raise ValueError(scale)\n"
            "    u = qmc.LatinHypercube(d=len(space), seed=seed).random(n)\n"
            "    x = qmc.scale(u, lows, highs) if n else u\n"
            "    x[:, logs] = np.exp(x[:, logs])\n"
            "    return {name: x[:, j].copy() for j, name in enumerate(space)}\n"),
        "compare": (
            "import warnings\n"
            "def compare(a, b, confidence=0.95):\n"
            "    if len(a) < 2 or len(b) < 2:\n"
            "        raise ValueError('too few seeds')\n"
            "    with warnings.catch_warnings():\n"
            "        warnings.simplefilter('ignore')\n"
            "        low, high = stats.ttest_ind(b, a, equal_var=False).confidence_interval(confidence)\n"
            "    diff = np.mean(b) - np.mean(a)\n"
            "    return {'diff': diff, 'low': low, 'high': high,\n"
            "            'decision': 'b' if high < 0 else ('a' if low > 0 else 'tie')}\n"),
        "best_under_budget": (
            "def best_under_budget(curves, cost_per_epoch, budget):\n"
            "    epochs_left = math.floor(budget / cost_per_epoch)\n"
            "    if epochs_left == 0:\n"
            "        raise ValueError('the budget buys no epoch')\n"
            "    candidates = []\n"
            "    for t, curve in enumerate(curves):\n"
            "        part = np.asarray(curve[:epochs_left], dtype=float)\n"
            "        epochs_left -= len(part)\n"
            "        finite = ~np.isnan(part)\n"
            "        if finite.any():\n"
            "            e = int(np.flatnonzero(finite)[np.argmin(part[finite])])\n"
            "            candidates.append((part[e], t, e))\n"
            "        if epochs_left == 0:\n"
            "            break\n"
            "    if not candidates:\n"
            "        raise ValueError('every checkpoint within the budget is NaN')\n"
            "    value, t, e = min(candidates)          # ties: the lowest trial, then epoch\n"
            "    return t, e, value\n"),
    },
    "kronecker_bootstrap_1000_while": {
        "sample_space": (
            "def sample_space(space, n, seed):\n"
            "    d = len(space)\n"
            "    phi = 2.0\n"
            "    for _ in range(60):\n"
            "        phi = (1 + phi) ** (1 / (d + 1))    # the generalised golden ratio (Roberts' R_d sequence)\n"
            "    alpha = (1 / phi) ** np.arange(1, d + 1)\n"
            "    shift = np.random.default_rng(seed).random(d)\n"
            "    u = (shift + np.arange(1, n + 1)[:, None] * alpha) % 1.0\n"
            "    sample = {}\n"
            "    for j, (name, spec) in enumerate(space.items()):\n"
            "        scale, lo, hi = spec\n"
            "        if scale == 'linear':\n"
            "            sample[name] = lo + (hi - lo) * u[:, j]\n"
            "        elif scale == 'log':\n"
            "            sample[name] = lo * (hi / lo) ** u[:, j]\n"
            "        else:\n"
            "            raise ValueError(f'{name}: {scale}')\n"
            "    return sample\n"),
        "compare": (
            "def compare(a, b, confidence=0.95):\n"
            "    a, b = list(map(float, a)), list(map(float, b))\n"
            "    if len(a) < 2 or len(b) < 2:\n"
            "        raise ValueError('two scores at least')\n"
            "    rng = np.random.default_rng(0)\n"
            "    diffs = []\n"
            "    for _ in range(1000):\n"
            "        ra = rng.choice(a, size=len(a), replace=True)\n"
            "        rb = rng.choice(b, size=len(b), replace=True)\n"
            "        diffs.append(rb.mean() - ra.mean())\n"
            "    tail = 100 * (1 - confidence) / 2\n"
            "    low, high = np.percentile(diffs, [tail, 100 - tail])\n"
            "    diff = sum(b) / len(b) - sum(a) / len(a)\n"
            "    return {'decision': 'tie' if low <= 0 <= high else ('b' if high < 0 else 'a'),\n"
            "            'diff': diff, 'low': float(low), 'high': float(high)}\n"),
        "best_under_budget": (
            "def best_under_budget(curves, cost_per_epoch, budget):\n"
            "    if cost_per_epoch > budget:\n"
            "        raise ValueError('budget too small')\n"
            "    order = [(t, e) for t in range(len(curves)) for e in range(len(curves[t]))]\n"
            "    i, best = 0, None\n"
            "    while i < len(order) and (i + 1) * cost_per_epoch <= budget:\n"
            "        t, e = order[i]\n"
            "        v = curves[t][e]\n"
            "        if v == v and (best is None or v < curves[best[0]][best[1]]):\n"
            "            best = (t, e)\n"
            "        i += 1\n"
            "    if best is None:\n"
            "        raise ValueError('nothing finite')\n"
            "    return best[0], best[1], curves[best[0]][best[1]]\n"),
    },
}
