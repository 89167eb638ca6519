"""Implementations of ex16 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_INIT_OK = (
    "def init_fan_in(model, scheme):\n"
    "    if scheme not in ('lecun', 'xavier', 'he'):\n"
    "        raise ValueError(scheme)\n"
    "    with torch.no_grad():\n"
    "        for layer in model:\n"
    "            if isinstance(layer, nn.Linear):\n"
    "                fan_in, fan_out = layer.in_features, layer.out_features\n"
    "                if scheme == 'lecun':\n"
    "                    std = 1 / math.sqrt(fan_in)\n"
    "                elif scheme == 'he':\n"
    "                    std = math.sqrt(2 / fan_in)\n"
    "                else:\n"
    "                    std = math.sqrt(2 / (fan_in + fan_out))\n"
    "                layer.weight.normal_(0.0, std)\n"
    "                if layer.bias is not None:\n"
    "                    layer.bias.zero_()\n"
    "    return model\n")
_INIT_NN = (
    "def init_fan_in(model, scheme):\n"
    "    if scheme not in ('lecun', 'xavier', 'he'):\n"
    "        raise ValueError(scheme)\n"
    "    for layer in model:\n"
    "        if isinstance(layer, nn.Linear):\n"
    "            if scheme == 'he':\n"
    "                nn.init.kaiming_normal_(layer.weight, mode='fan_in', nonlinearity='relu')\n"
    "            elif scheme == 'xavier':\n"
    "                nn.init.xavier_normal_(layer.weight)\n"
    "            else:\n"
    "                nn.init.kaiming_normal_(layer.weight, mode='fan_in', nonlinearity='linear')\n"
    "            if layer.bias is not None:\n"
    "                nn.init.zeros_(layer.bias)\n"
    "    return model\n")
_LOSS_OK = (
    "def expected_initial_loss(task, y=None, n_classes=None):\n"
    "    if task == 'classification':\n"
    "        return math.log(n_classes)\n"
    "    y = np.asarray(y, dtype=float)\n"
    "    return float(np.mean(np.var(y, axis=0)))\n")
_RATIO_OK = (
    "def update_to_weight_ratio(model, loss_fn, optimizer):\n"
    "    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.ndim >= 2}\n"
    "    optimizer.zero_grad()\n"
    "    loss = loss_fn()\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
    "    params = dict(model.named_parameters())\n"
    "    return {n: float((params[n].detach() - w).norm() / w.norm()) for n, w in before.items()}\n")

WRONG = {
    # --- init_fan_in ---------------------------------------------------------------------------------
    "init_fan_out_mode": ("test_init_scale", {"init_fan_in": edited(
        _INIT_NN, ("mode='fan_in', nonlinearity='relu'", "mode='fan_out', nonlinearity='relu'"),
        ("mode='fan_in', nonlinearity='linear'", "mode='fan_out', nonlinearity='linear'"))}),
    "init_fan_in_from_shape_0": ("test_init_scale", {"init_fan_in": edited(
        _INIT_OK, ("fan_in, fan_out = layer.in_features, layer.out_features",
                   "fan_in, fan_out = layer.weight.shape"))}),
    "init_variance_as_std": ("test_init_scale", {"init_fan_in": edited(
        _INIT_OK, ("layer.weight.normal_(0.0, std)", "layer.weight.normal_(0.0, std ** 2)"))}),
    "init_he_gain_on_xavier": ("test_init_scale", {"init_fan_in": edited(
        _INIT_NN, ("nn.init.xavier_normal_(layer.weight)",
                   "nn.init.xavier_normal_(layer.weight, gain=nn.init.calculate_gain('relu'))"))}),
    "init_xavier_without_the_2": ("test_init_scale", {"init_fan_in": edited(
        _INIT_OK, ("math.sqrt(2 / (fan_in + fan_out))", "math.sqrt(1 / (fan_in + fan_out))"))}),
    "init_xavier_as_lecun": ("test_init_scale", {"init_fan_in": edited(
        _INIT_OK, ("math.sqrt(2 / (fan_in + fan_out))", "1 / math.sqrt(fan_in)"))}),
    "init_he_gain_2_on_the_std": ("test_init_scale", {"init_fan_in": edited(
        _INIT_OK, ("std = math.sqrt(2 / fan_in)", "std = 2 / math.sqrt(fan_in)"))}),
    "init_only_the_first_layer": ("test_init_scale", {"init_fan_in": edited(
        _INIT_OK, ("                    layer.bias.zero_()\n", "                    layer.bias.zero_()\n"
                                                               "                break\n"))}),
    "init_uniform_of_the_right_std": ("test_init_distribution", {"init_fan_in": edited(
        _INIT_OK, ("layer.weight.normal_(0.0, std)", "layer.weight.uniform_(-math.sqrt(3) * std, math.sqrt(3) * std)"))}),
    "init_truncated_normal": ("test_init_distribution", {"init_fan_in": edited(
        _INIT_OK, ("layer.weight.normal_(0.0, std)", "nn.init.trunc_normal_(layer.weight, 0.0, std, -2 * std, 2 * std)"))}),
    "init_bias_untouched": ("test_init_distribution", {"init_fan_in": edited(
        _INIT_OK, ("                if layer.bias is not None:\n                    layer.bias.zero_()\n", ""))}),
    "init_crashes_on_a_layer_without_bias": ("test_init_distribution", {"init_fan_in": edited(
        _INIT_NN, ("            if layer.bias is not None:\n                nn.init.zeros_(layer.bias)\n",
                   "            nn.init.zeros_(layer.bias)\n"))}),
    "init_new_parameters": ("test_init_in_place", {"init_fan_in": edited(
        _INIT_OK, ("layer.weight.normal_(0.0, std)",
                   "layer.weight = nn.Parameter(torch.randn_like(layer.weight) * std)"))}),
    "init_returns_nothing": ("test_init_in_place", {"init_fan_in": edited(
        _INIT_OK, ("    return model\n", "    return None\n"))}),
    "init_turns_off_gradients": ("test_init_in_place", {"init_fan_in": edited(
        _INIT_OK, ("    with torch.no_grad():\n        for layer in model:\n",
                   "    model.requires_grad_(False)\n    if True:\n        for layer in model:\n"))}),
    "init_float32_data": ("test_init_in_place", {"init_fan_in": edited(
        _INIT_OK, ("layer.weight.normal_(0.0, std)", "layer.weight.data = torch.randn(layer.weight.shape) * std"))}),
    "init_unknown_scheme_falls_back": ("test_init_in_place", {"init_fan_in": edited(
        _INIT_OK, ("    if scheme not in ('lecun', 'xavier', 'he'):\n        raise ValueError(scheme)\n", ""))}),

    # --- expected_initial_loss ---------------------------------------------------------------------------
    "loss_log10": ("test_initial_loss_classification", {"expected_initial_loss": edited(
        _LOSS_OK, ("math.log(n_classes)", "math.log10(n_classes)"))}),
    "loss_ln_c_minus_1": ("test_initial_loss_classification", {"expected_initial_loss": edited(
        _LOSS_OK, ("math.log(n_classes)", "math.log(n_classes - 1)"))}),
    "loss_counts_the_classes_in_y": ("test_initial_loss_classification", {"expected_initial_loss": edited(
        _LOSS_OK, ("return math.log(n_classes)",
                   "return math.log(len(np.unique(y)) if y is not None else n_classes)"))}),
    "loss_sample_variance": ("test_initial_loss_regression", {"expected_initial_loss": edited(
        _LOSS_OK, ("np.var(y, axis=0)", "np.var(y, axis=0, ddof=1)"))}),
    "loss_mean_of_y_squared": ("test_initial_loss_regression", {"expected_initial_loss": edited(
        _LOSS_OK, ("np.mean(np.var(y, axis=0))", "np.mean(y ** 2)"))}),
    "loss_standard_deviation": ("test_initial_loss_regression", {"expected_initial_loss": edited(
        _LOSS_OK, ("np.var(y, axis=0)", "np.std(y, axis=0)"))}),
    "loss_one_mean_for_every_output": ("test_initial_loss_regression", {"expected_initial_loss": edited(
        _LOSS_OK, ("np.mean(np.var(y, axis=0))", "np.var(y)"))}),

    # --- update_to_weight_ratio ------------------------------------------------------------------------
    "ratio_to_the_weights_after": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("/ w.norm()", "/ params[n].detach().norm()"))}),
    "ratio_includes_biases": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, (" if p.ndim >= 2}", "}"))}),
    "ratio_selects_weights_by_name": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("if p.ndim >= 2}", "if n.endswith('weight')}"))}),
    "ratio_lr_times_the_gradient": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("    params = dict(model.named_parameters())\n"
                    "    return {n: float((params[n].detach() - w).norm() / w.norm()) for n, w in before.items()}\n",
                    "    params = dict(model.named_parameters())\n"
                    "    lr = optimizer.param_groups[0]['lr']\n"
                    "    return {n: float(lr * params[n].grad.norm() / w.norm()) for n, w in before.items()}\n"))}),
    "ratio_squared_norms": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("float((params[n].detach() - w).norm() / w.norm())",
                    "float((params[n].detach() - w).square().sum() / w.square().sum())"))}),
    "ratio_weights_not_copied": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("p.detach().clone()", "p.detach()"))}),
    "ratio_no_step": ("test_update_ratio", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("    optimizer.step()\n", ""))}),
    "ratio_no_zero_grad": ("test_update_ratio_step", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("    optimizer.zero_grad()\n", ""))}),
    "ratio_zero_grad_after_backward": ("test_update_ratio_step", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("    optimizer.zero_grad()\n    loss = loss_fn()\n    loss.backward()\n",
                    "    loss = loss_fn()\n    loss.backward()\n    optimizer.zero_grad()\n"))}),
    "ratio_steps_twice": ("test_update_ratio_step", {"update_to_weight_ratio": edited(
        _RATIO_OK, ("    optimizer.step()\n", "    optimizer.step()\n    optimizer.step()\n"))}),
    "ratio_calls_the_course_reference": ("test_update_ratio", {"update_to_weight_ratio": (
        "from gdcourse.monitor import update_ratios\n"
        "def update_to_weight_ratio(model, loss_fn, optimizer):\n"
        "    optimizer.zero_grad()\n"
        "    loss_fn().backward()\n"
        "    with update_ratios(model) as ratios:\n"
        "        optimizer.step()\n"
        "    shapes = {n: p.ndim for n, p in model.named_parameters()}\n"
        "    return {n: r for n, r in ratios.items() if shapes[n] >= 2}\n")}),
}

CORRECT = {
    # torch.nn.init throughout, a loop over the modules; the loss from torch in float64; the ratio with a
    # deep copy of the model and vector norms
    "nn_init_torch_loss_deepcopy_ratio": {
        "init_fan_in": _INIT_NN,
        "expected_initial_loss": (
            "def expected_initial_loss(task, y=None, n_classes=None):\n"
            "    if task == 'classification':\n"
            "        return float(torch.log(torch.tensor(float(n_classes), dtype=torch.float64)))\n"
            "    t = torch.as_tensor(y, dtype=torch.float64)\n"
            "    if t.ndim == 1:\n"
            "        t = t[:, None]\n"
            "    return torch.nn.functional.mse_loss(t.mean(dim=0).expand_as(t), t).item()\n"),
        "update_to_weight_ratio": (
            "import copy\n"
            "def update_to_weight_ratio(model, loss_fn, optimizer):\n"
            "    old = copy.deepcopy(model)\n"
            "    model.zero_grad(set_to_none=False)\n"
            "    loss_fn().backward()\n"
            "    optimizer.step()\n"
            "    out = {}\n"
            "    for (name, p), q in zip(model.named_parameters(), old.parameters()):\n"
            "        if p.dim() > 1:\n"
            "            out[name] = (torch.linalg.vector_norm(p.detach() - q.detach())\n"
            "                         / torch.linalg.vector_norm(q.detach())).item()\n"
            "    return out\n"),
    },
    # weights drawn with torch.randn and copied in through .data (no autograd involved); the variance
    # by its second-moment formula; the ratio with a closure passed to step()
    "randn_copy_moment_formula_closure": {
        "init_fan_in": (
            "def init_fan_in(model, scheme):\n"
            "    gains = {'lecun': 1.0, 'he': 2.0 ** 0.5}\n"
            "    if scheme not in gains and scheme != 'xavier':\n"
            "        raise ValueError('scheme must be lecun, xavier or he')\n"
            "    for m in model.modules():\n"
            "        if type(m) is nn.Linear:\n"
            "            n_out, n_in = m.weight.shape\n"
            "            std = (2.0 / (n_in + n_out)) ** 0.5 if scheme == 'xavier' else gains[scheme] / n_in ** 0.5\n"
            "            m.weight.data.copy_(torch.randn(n_out, n_in, dtype=m.weight.dtype) * std)\n"
            "            if m.bias is not None:\n"
            "                m.bias.data.fill_(0.0)\n"
            "    return model\n"),
        "expected_initial_loss": (
            "def expected_initial_loss(task, y=None, n_classes=None):\n"
            "    if task == 'regression':\n"
            "        y = np.array(y, dtype=np.float64).reshape(len(y), -1)\n"
            "        second = (y ** 2).mean(axis=0)\n"
            "        first = y.mean(axis=0)\n"
            "        return float((second - first ** 2).mean())\n"
            "    return -math.log(1.0 / n_classes)\n"),
        "update_to_weight_ratio": (
            "def update_to_weight_ratio(model, loss_fn, optimizer):\n"
            "    names = [n for n, p in model.named_parameters() if len(p.shape) >= 2]\n"
            "    params = dict(model.named_parameters())\n"
            "    with torch.no_grad():\n"
            "        before = [params[n].clone() for n in names]\n"
            "    def closure():\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn()\n"
            "        loss.backward()\n"
            "        return loss\n"
            "    optimizer.step(closure)\n"
            "    ratios = {}\n"
            "    with torch.no_grad():\n"
            "        for n, w in zip(names, before):\n"
            "            ratios[n] = math.sqrt(float(((params[n] - w) ** 2).sum())) / math.sqrt(float((w ** 2).sum()))\n"
            "    return ratios\n"),
    },
    # a per-layer std from a table of gains, nn.init.normal_; the classification loss as the cross-entropy
    # of zero logits; the ratio from flattened copies in NumPy
    "gain_table_zero_logits_numpy_ratio": {
        "init_fan_in": (
            "def init_fan_in(model, scheme):\n"
            "    def std(fan_in, fan_out):\n"
            "        if scheme == 'lecun':\n"
            "            return fan_in ** -0.5\n"
            "        if scheme == 'he':\n"
            "            return (2 / fan_in) ** 0.5\n"
            "        if scheme == 'xavier':\n"
            "            return (2 / (fan_in + fan_out)) ** 0.5\n"
            "        raise ValueError(f'no scheme {scheme}')\n"
            "    linears = [m for m in model if isinstance(m, nn.Linear)]\n"
            "    stds = [std(m.in_features, m.out_features) for m in linears]\n"
            "    for m, s in zip(linears, stds):\n"
            "        nn.init.normal_(m.weight, mean=0.0, std=s)\n"
            "        if m.bias is not None:\n"
            "            nn.init.constant_(m.bias, 0.0)\n"
            "    return model\n"),
        "expected_initial_loss": (
            "def expected_initial_loss(task, y=None, n_classes=None):\n"
            "    if task == 'classification':\n"
            "        logits = torch.zeros(1, n_classes, dtype=torch.float64)\n"
            "        return nn.functional.cross_entropy(logits, torch.tensor([0])).item()\n"
            "    y = np.asarray(y, dtype=np.float64)\n"
            "    return float(((y - y.mean(axis=0)) ** 2).mean())\n"),
        "update_to_weight_ratio": (
            "def update_to_weight_ratio(model, loss_fn, optimizer):\n"
            "    before = {}\n"
            "    for name, p in model.named_parameters():\n"
            "        if p.ndim >= 2:\n"
            "            before[name] = p.detach().cpu().numpy().copy().ravel()\n"
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "    loss_fn().backward()\n"
            "    optimizer.step()\n"
            "    after = {n: p.detach().cpu().numpy().ravel() for n, p in model.named_parameters() if n in before}\n"
            "    return {n: float(np.linalg.norm(after[n] - before[n]) / np.linalg.norm(before[n])) for n in before}\n"),
    },
    # each scheme as a gain on a fan: kaiming_normal_'s defaults for He, and normal_ on an empty tensor from a
    # generator of its own, copied in; torch.var with correction=0; a state_dict deep copy and matrix norms
    "own_generator_torch_var_state_dict_matrix_norm": {
        "init_fan_in": (
            "def init_fan_in(model, scheme):\n"
            "    if scheme not in {'lecun', 'xavier', 'he'}:\n"
            "        raise ValueError(f'unknown scheme: {scheme}')\n"
            "    g = torch.Generator().manual_seed(1234)\n"
            "    for module in model.modules():\n"
            "        if not isinstance(module, nn.Linear):\n"
            "            continue\n"
            "        w = module.weight\n"
            "        if scheme == 'he':\n"
            "            nn.init.kaiming_normal_(w)\n"
            "        else:\n"
            "            fan = w.shape[1] if scheme == 'lecun' else (w.shape[0] + w.shape[1]) / 2\n"
            "            draw = torch.empty(w.shape, dtype=torch.float64).normal_(0.0, 1.0, generator=g)\n"
            "            with torch.no_grad():\n"
            "                w.copy_(draw / math.sqrt(fan))\n"
            "        if module.bias is not None:\n"
            "            with torch.no_grad():\n"
            "                module.bias.mul_(0.0)\n"
            "    return model\n"),
        "expected_initial_loss": (
            "def expected_initial_loss(task, y=None, n_classes=None):\n"
            "    if task == 'classification':\n"
            "        return float(np.log(n_classes))\n"
            "    t = torch.from_numpy(np.asarray(y, dtype=np.float64))\n"
            "    return float(torch.var(t, dim=0, correction=0).mean())\n"),
        "update_to_weight_ratio": (
            "import copy\n"
            "def update_to_weight_ratio(model, loss_fn, optimizer):\n"
            "    state = copy.deepcopy(model.state_dict())\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            "    loss = loss_fn()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    out = {}\n"
            "    for name, p in model.named_parameters():\n"
            "        if p.dim() >= 2:\n"
            "            old = state[name]\n"
            "            out[name] = float(torch.linalg.matrix_norm(p.detach() - old, 'fro')\n"
            "                              / torch.linalg.matrix_norm(old, 'fro'))\n"
            "    return out\n"),
    },
}
