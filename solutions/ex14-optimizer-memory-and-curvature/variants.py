"""Implementations of ex14 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

_HVP_OK = (
    "def hessian_vector_product(loss_fn, params, v):\n"
    "    p = {k: t.detach().requires_grad_(True) for k, t in params.items()}\n"
    "    with torch.enable_grad():\n"
    "        grads = torch.autograd.grad(loss_fn(p), list(p.values()), create_graph=True)\n"
    "        dot = sum((g * v[k]).sum() for k, g in zip(p, grads))\n"
    "        hv = torch.autograd.grad(dot, list(p.values()))\n"
    "    return {k: h.detach() for k, h in zip(p, hv)}\n")
_MEMORY_OK = (
    "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
    "    state_tensors = {'sgd': 0, 'momentum': 1, 'adam': 2}\n"
    "    if optimizer_name not in state_tensors:\n"
    "        raise ValueError(f'unknown optimizer {optimizer_name!r}')\n"
    "    n_all = sum(p.numel() for p in model.parameters())\n"
    "    n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)\n"
    "    table = {'params': n_all * param_bytes, 'grads': n_trainable * param_bytes,\n"
    "             'optimizer_state': n_trainable * state_tensors[optimizer_name] * 4,\n"
    "             'master_weights': n_trainable * 4 if master_weights else 0}\n"
    "    table['total'] = sum(table.values())\n"
    "    return table\n")
_DIVERGE_OK = (
    "def predict_divergence(lr, lam_max, momentum=0.0):\n"
    "    return bool(lr * lam_max > 2.0 * (1.0 + momentum))\n")

_TABLE = (
    "    table = {'params': n_all * param_bytes, 'grads': n_train * param_bytes,\n"
    "             'optimizer_state': 4 * k * n_train, 'master_weights': 4 * n_train if master_weights else 0}\n"
    "    table['total'] = sum(table.values())\n"
    "    return table\n")

# power iteration that returns the eigenvalue of largest magnitude, with a pluggable ending
_POWER_HEAD = (
    "def top_hessian_eigenvalue(loss_fn, params, iters=100, seed=0):\n"
    "    g = torch.Generator().manual_seed(seed)\n"
    "    keys = list(params)\n"
    "    def unflat(x):\n"
    "        out, i = {}, 0\n"
    "        for k in keys:\n"
    "            out[k] = x[i:i + params[k].numel()].reshape(params[k].shape)\n"
    "            i += params[k].numel()\n"
    "        return out\n"
    "    H = lambda x: flatten(hessian_vector_product(loss_fn, params, unflat(x)), params).detach()\n"
    "    x = torch.randn(sum(t.numel() for t in params.values()), generator=g, dtype=torch.float64)\n")

WRONG = {
    "memory_counts_frozen_parameters": ("test_optimizer_memory", {"optimizer_memory": (
        "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
        "    k = {'sgd': 0, 'momentum': 1, 'adam': 2}[optimizer_name]\n"
        "    n_all = n_train = sum(p.numel() for p in model.parameters())\n" + _TABLE)}),
    "memory_from_the_state_dict": ("test_optimizer_memory", {"optimizer_memory": (
        "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
        "    if optimizer_name not in ('sgd', 'momentum', 'adam'):\n"
        "        raise ValueError(optimizer_name)\n"
        "    k = {'sgd': 0, 'momentum': 1, 'adam': 2}[optimizer_name]\n"
        "    n_all = sum(t.numel() for t in model.state_dict().values())\n"
        "    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)\n" + _TABLE)}),
    "memory_state_in_the_parameter_dtype": ("test_optimizer_memory", {"optimizer_memory": (
        "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
        "    if optimizer_name not in ('sgd', 'momentum', 'adam'):\n"
        "        raise ValueError(optimizer_name)\n"
        "    k = {'sgd': 0, 'momentum': 1, 'adam': 2}[optimizer_name] * param_bytes / 4\n"
        "    n_all = sum(p.numel() for p in model.parameters())\n"
        "    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)\n" + _TABLE)}),
    "memory_calls_the_course_reference": ("test_optimizer_memory", {"optimizer_memory": (
        "from gdcourse.cost import memory_footprint\n"
        "from gdcourse.models import count_parameters\n"
        "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
        "    fp = memory_footprint(count_parameters(model, trainable_only=True), optimizer_name,\n"
        "                          param_bytes=param_bytes, master_weights=master_weights)\n"
        "    table = {'params': count_parameters(model) * param_bytes, 'grads': fp.grads,\n"
        "             'optimizer_state': fp.optimizer_state, 'master_weights': fp.master_weights}\n"
        "    table['total'] = sum(table.values())\n"
        "    return table\n")}),
    "hvp_central_finite_difference": ("test_hvp", {"hessian_vector_product": (
        "def hessian_vector_product(loss_fn, params, v, h=1e-5):\n"
        "    def gradient(p):\n"
        "        p = {k: t.detach().requires_grad_() for k, t in p.items()}\n"
        "        return dict(zip(p, torch.autograd.grad(loss_fn(p), list(p.values()))))\n"
        "    scale = flatten(v).norm()\n"
        "    u = {k: t / scale for k, t in v.items()}\n"
        "    plus = gradient({k: params[k] + h * u[k] for k in params})\n"
        "    minus = gradient({k: params[k] - h * u[k] for k in params})\n"
        "    return {k: (plus[k] - minus[k]) / (2 * h) * scale for k in params}\n")}),
    "hvp_hessian_times_ones_then_v": ("test_hvp", {"hessian_vector_product": (
        "def hessian_vector_product(loss_fn, params, v):\n"
        "    p = {k: t.detach().requires_grad_() for k, t in params.items()}\n"
        "    g = torch.autograd.grad(loss_fn(p), list(p.values()), create_graph=True)\n"
        "    hg = torch.autograd.grad(sum(gi.sum() for gi in g), list(p.values()))\n"
        "    return {k: h * v[k] for k, h in zip(p, hg)}\n")}),
    "eigenvalue_of_largest_magnitude": ("test_top_eigenvalue_negative", {"top_hessian_eigenvalue": (
        _POWER_HEAD +
        "    for _ in range(iters):\n"
        "        x = x / x.norm()\n"
        "        hx = H(x)\n"
        "        lam = float(x @ hx)\n"
        "        x = hx\n"
        "    return lam\n")}),
    "eigenvalue_magnitude_as_norm_of_hv": ("test_top_eigenvalue_negative", {"top_hessian_eigenvalue": (
        _POWER_HEAD +
        "    for _ in range(iters):\n"
        "        x = x / x.norm()\n"
        "        hx = H(x)\n"
        "        lam = float(hx.norm())\n"
        "        x = hx\n"
        "    return lam\n")}),
    "eigenvalue_from_norm_of_hv_for_a_non_unit_v": ("test_top_eigenvalue", {"top_hessian_eigenvalue": (
        _POWER_HEAD +
        "    for _ in range(iters):\n"
        "        x = x / x.norm()\n"
        "        x = H(x)                     # the last x is H times a unit vector: not unit\n"
        "    return float(H(x).norm())\n")}),
    "eigenvalue_never_normalised": ("test_top_eigenvalue", {"top_hessian_eigenvalue": (
        _POWER_HEAD +
        "    x = x / x.norm()\n"
        "    for _ in range(iters):\n"
        "        hx = H(x)\n"
        "        lam = float(x @ hx)\n"
        "        x = hx\n"
        "    return lam\n")}),
    "eigenvalue_from_a_gradient_difference": ("test_top_eigenvalue", {"top_hessian_eigenvalue": (
        _POWER_HEAD +
        "    def gradient(p):\n"
        "        p = {k: t.detach().requires_grad_() for k, t in p.items()}\n"
        "        return flatten(dict(zip(p, torch.autograd.grad(loss_fn(p), list(p.values())))), params)\n"
        "    g0 = gradient(params)\n"
        "    for _ in range(iters):\n"
        "        x = x / x.norm()\n"
        "        u = unflat(x)\n"
        "        hx = gradient({k: params[k] + u[k] for k in keys}) - g0   # 'Hv' as a change of gradient\n"
        "        lam = float(x @ hx)\n"
        "        x = hx\n"
        "    return lam\n")}),
    "eigenvalue_calls_the_course_reference": ("test_top_eigenvalue", {"top_hessian_eigenvalue": (
        "from gdcourse.curvature import top_eigenvalue\n"
        "def top_hessian_eigenvalue(loss_fn, params, iters=100, seed=0):\n"
        "    mu = top_eigenvalue(loss_fn, params, iters=iters, seed=seed, tol=1e-12)\n"
        "    if mu >= 0:\n"
        "        return mu\n"
        "    shifted = lambda p: loss_fn(p) - 0.5 * mu * sum(t.square().sum() for t in p.values())\n"
        "    return top_eigenvalue(shifted, params, iters=iters, seed=seed, tol=1e-12) + mu\n")}),
    "divergence_ignores_momentum": ("test_predict_divergence", {"predict_divergence": (
        "def predict_divergence(lr, lam_max, momentum=0.0):\n"
        "    return lr > 2 / lam_max\n")}),
    "divergence_at_one_over_lambda": ("test_predict_divergence", {"predict_divergence": (
        "def predict_divergence(lr, lam_max, momentum=0.0):\n"
        "    return lr > (1 + momentum) / lam_max\n")}),
    # the regimes of the hidden cases
    "memory_accepts_adamw": ("test_optimizer_memory", {"optimizer_memory": edited(
        _MEMORY_OK, ("{'sgd': 0, 'momentum': 1, 'adam': 2}", "{'sgd': 0, 'momentum': 1, 'adam': 2, 'adamw': 2}"))}),
    "memory_master_copy_in_the_parameter_width": ("test_optimizer_memory", {"optimizer_memory": edited(
        _MEMORY_OK, ("n_trainable * 4 if master_weights", "n_trainable * param_bytes if master_weights"))}),
    "hvp_marks_params_requiring_grad": ("test_hvp", {"hessian_vector_product": edited(
        _HVP_OK, ("t.detach().requires_grad_(True)", "t.requires_grad_(True)"))}),
    "hvp_backward_leaves_grad_on_params": ("test_hvp", {"hessian_vector_product": edited(
        _HVP_OK, ("t.detach().requires_grad_(True)", "t.requires_grad_(True)"),
        ("        hv = torch.autograd.grad(dot, list(p.values()))\n", "        dot.backward()\n        hv = [t.grad for t in p.values()]\n"))}),
    "hvp_replaces_the_callers_tensors": ("test_hvp", {"hessian_vector_product": edited(
        _HVP_OK, ("    p = {k: t.detach().requires_grad_(True) for k, t in params.items()}\n",
                  "    for k in params:\n        params[k] = params[k].detach().requires_grad_(True)\n    p = params\n"))}),
    "divergence_on_the_boundary": ("test_predict_divergence", {"predict_divergence": edited(
        _DIVERGE_OK, ("lr * lam_max > 2.0", "lr * lam_max >= 2.0"))}),
}

CORRECT = {
    "vjp_of_the_gradient_and_the_full_hessian": {
        "optimizer_memory": (
            "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
            "    state_bytes = {'sgd': 0, 'momentum': 4, 'adam': 8}\n"
            "    if optimizer_name not in state_bytes:\n"
            "        raise ValueError(f'no such optimizer: {optimizer_name}')\n"
            "    unique = {id(p): p for m in model.modules() for p in m.parameters(recurse=False)}\n"
            "    n = sum(p.numel() for p in unique.values())\n"
            "    nt = sum(p.numel() for p in unique.values() if p.requires_grad)\n"
            "    out = dict(params=param_bytes * n, grads=param_bytes * nt,\n"
            "               optimizer_state=state_bytes[optimizer_name] * nt, master_weights=4 * nt * bool(master_weights))\n"
            "    return {**out, 'total': sum(out.values())}\n"),
        "hessian_vector_product": (
            "def hessian_vector_product(loss_fn, params, v):\n"
            "    names = list(params)\n"
            "    leaves = [params[k].detach().clone().requires_grad_() for k in names]\n"
            "    g = torch.autograd.grad(loss_fn(dict(zip(names, leaves))), leaves, create_graph=True)\n"
            "    hv = torch.autograd.grad(g, leaves, grad_outputs=[v[k] for k in names])  # v^T H = (H v)^T\n"
            "    return {k: h.detach() for k, h in zip(names, hv)}\n"),
        "top_hessian_eigenvalue": (
            "def top_hessian_eigenvalue(loss_fn, params, iters=100, seed=0):\n"
            "    # small models only: P products build the whole Hessian\n"
            "    n = sum(t.numel() for t in params.values())\n"
            "    columns = []\n"
            "    for i in range(n):\n"
            "        e = torch.zeros(n, dtype=torch.float64)\n"
            "        e[i] = 1.0\n"
            "        chunks = torch.split(e, [t.numel() for t in params.values()])\n"
            "        unit = {k: c.reshape(t.shape) for (k, t), c in zip(params.items(), chunks)}\n"
            "        columns.append(flatten(hessian_vector_product(loss_fn, params, unit), params))\n"
            "    H = torch.stack(columns, dim=1)\n"
            "    return torch.linalg.eigvalsh((H + H.T) / 2)[-1].item()\n"),
        "predict_divergence": (
            "def predict_divergence(lr, lam_max, momentum=0.0):\n"
            "    return 2 * (1 + momentum) / lam_max < lr\n"),
        "why_answer": "Weights 2 + grads 2 + Adam moments 8 + fp32 master 4; activations are not in the table. λmax grows during training.",
    },
    "torch_func_and_lanczos": {
        "optimizer_memory": (
            "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
            "    copies = ['sgd', 'momentum', 'adam'].index(optimizer_name) if optimizer_name in ('sgd', 'momentum', 'adam') else None\n"
            "    if copies is None:\n"
            "        raise ValueError(optimizer_name)\n"
            "    seen, total, trainable = set(), 0, 0\n"
            "    for name, p in model.named_parameters(remove_duplicate=False):\n"
            "        if p.data_ptr() in seen:\n"
            "            continue\n"
            "        seen.add(p.data_ptr())\n"
            "        total += p.numel()\n"
            "        trainable += p.numel() if p.requires_grad else 0\n"
            "    result = {'params': total * param_bytes, 'grads': trainable * param_bytes,\n"
            "              'optimizer_state': copies * trainable * 4, 'master_weights': (4 * trainable) if master_weights else 0}\n"
            "    result['total'] = result['params'] + result['grads'] + result['optimizer_state'] + result['master_weights']\n"
            "    return result\n"),
        "hessian_vector_product": (
            "from torch.func import grad, vjp\n"
            "def hessian_vector_product(loss_fn, params, v):\n"
            "    _, pullback = vjp(grad(loss_fn), params)\n"
            "    return pullback(v)[0]\n"),
        "top_hessian_eigenvalue": (
            "def top_hessian_eigenvalue(loss_fn, params, iters=100, seed=0):\n"
            "    # Lanczos with full reorthogonalisation; the extreme Ritz values converge first\n"
            "    sizes = [t.numel() for t in params.values()]\n"
            "    n = sum(sizes)\n"
            "    def H(x):\n"
            "        d = {k: c.reshape(t.shape) for (k, t), c in zip(params.items(), torch.split(x, sizes))}\n"
            "        return flatten(hessian_vector_product(loss_fn, params, d), params).detach()\n"
            "    q = torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)\n"
            "    Q = [q / q.norm()]\n"
            "    alphas, betas = [], []\n"
            "    for j in range(min(iters, n)):\n"
            "        w = H(Q[-1])\n"
            "        alphas.append(float(Q[-1] @ w))\n"
            "        basis = torch.stack(Q, dim=1)\n"
            "        w = w - basis @ (basis.T @ w)\n"
            "        w = w - basis @ (basis.T @ w)\n"
            "        b = float(w.norm())\n"
            "        if b < 1e-10 or j == min(iters, n) - 1:\n"
            "            break\n"
            "        betas.append(b)\n"
            "        Q.append(w / b)\n"
            "    T = torch.diag(torch.tensor(alphas, dtype=torch.float64))\n"
            "    if betas:\n"
            "        off = torch.tensor(betas, dtype=torch.float64)\n"
            "        T = T + torch.diag(off, 1) + torch.diag(off, -1)\n"
            "    return float(torch.linalg.eigvalsh(T).max())\n"),
        "predict_divergence": (
            "def predict_divergence(lr, lam_max, momentum=0.0):\n"
            "    roots = np.roots([1.0, -(1.0 + momentum - lr * lam_max), momentum])\n"
            "    return bool(np.abs(roots).max() > 1.0 + 1e-12)  # on the boundary |z| = 1, up to rounding\n"),
    },
    "forward_over_reverse_and_the_roots_in_closed_form": {
        "optimizer_memory": (
            "def optimizer_memory(model, optimizer_name, *, param_bytes=4, master_weights=False):\n"
            "    if optimizer_name not in ('sgd', 'momentum', 'adam'):\n"
            "        raise ValueError('optimizer_name must be sgd, momentum or adam')\n"
            "    everything = list(model.parameters())\n"
            "    trainable = [p for p in everything if p.requires_grad]\n"
            "    n = torch.nn.utils.parameters_to_vector(everything).numel() if everything else 0\n"
            "    nt = torch.nn.utils.parameters_to_vector(trainable).numel() if trainable else 0\n"
            "    moments = {'sgd': 0, 'momentum': 1, 'adam': 2}[optimizer_name]\n"
            "    table = dict(params=float(n * param_bytes), grads=float(nt * param_bytes),\n"
            "                 optimizer_state=float(4 * moments * nt), master_weights=float(4 * nt) if master_weights else 0.0)\n"
            "    table['total'] = table['params'] + table['grads'] + table['optimizer_state'] + table['master_weights']\n"
            "    return table\n"),
        "hessian_vector_product": (
            "def hessian_vector_product(loss_fn, params, v):\n"
            "    # forward-mode derivative of the gradient along v\n"
            "    _, hv = torch.func.jvp(torch.func.grad(loss_fn), (params,), (v,))\n"
            "    return hv\n"),
        "predict_divergence": (
            "def predict_divergence(lr, lam_max, momentum=0.0):\n"
            "    a = 1.0 + momentum - lr * lam_max\n"
            "    disc = a * a - 4.0 * momentum\n"
            "    if disc < 0:\n"
            "        return False  # complex roots of modulus sqrt(momentum) < 1\n"
            "    return (abs(a) + math.sqrt(disc)) / 2.0 > 1.0\n"),
    },
    "power_iteration_always_shifted": {
        "hessian_vector_product": (
            "def hessian_vector_product(loss_fn, params, v):\n"
            "    def directional(p):\n"
            "        g = torch.func.grad(loss_fn)(p)\n"
            "        return sum(torch.dot(g[k].flatten(), v[k].flatten()) for k in p)\n"
            "    return torch.func.grad(directional)(params)\n"),
        "top_hessian_eigenvalue": (
            "def _power(matvec, n, iters, gen):\n"
            "    x = torch.randn(n, generator=gen, dtype=torch.float64)\n"
            "    for _ in range(iters):\n"
            "        x = x / x.norm()\n"
            "        y = matvec(x)\n"
            "        if y.norm() == 0:\n"
            "            return 0.0\n"
            "        rayleigh = torch.dot(x, y).item()\n"
            "        x = y\n"
            "    return rayleigh\n"
            "\n"
            "def top_hessian_eigenvalue(loss_fn, params, iters=100, seed=0):\n"
            "    gen = torch.Generator().manual_seed(seed)\n"
            "    sizes = [t.numel() for t in params.values()]\n"
            "    def H(x):\n"
            "        d = dict(zip(params, (c.view_as(t) for c, t in zip(torch.split(x, sizes), params.values()))))\n"
            "        return flatten(hessian_vector_product(loss_fn, params, d), params)\n"
            "    radius = abs(_power(H, sum(sizes), iters, gen))       # the largest |eigenvalue|\n"
            "    # H + radius I has eigenvalues in [0, 2 radius]: its top one is lambda_max + radius\n"
            "    return _power(lambda x: H(x) + radius * x, sum(sizes), iters, gen) - radius\n"),
    },
}
