"""Implementations of ex08 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

_STEP_HEAD = "def train_step(model, X, y, loss_fn, optimizer, max_norm=None):\n"
_EPOCH_HEAD = ("def train_epoch(model, loader, loss_fn, optimizer, scheduler=None, max_norm=None, "
               "scheduler_per=\"epoch\"):\n")
_EVAL_HEAD = "def evaluate(model, loader, loss_fn):\n"
_ACC_HEAD = "def accumulation_step(model, micro_batches, loss_fn, optimizer):\n"

# The right answers; each wrong one below differs from one of them in a line or two.
_STEP_OK = _STEP_HEAD + (
    "    optimizer.zero_grad()\n"
    "    loss = loss_fn(model(X), y)\n"
    "    loss.backward()\n"
    "    if max_norm is not None:\n"
    "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    "    optimizer.step()\n"
    "    return loss.item()\n")
_EPOCH_OK = _EPOCH_HEAD + (
    "    model.train()\n"
    "    losses = []\n"
    "    for X, y in loader:\n"
    "        losses.append(train_step(model, X, y, loss_fn, optimizer, max_norm))\n"
    "        if scheduler is not None and scheduler_per == 'batch':\n"
    "            scheduler.step()\n"
    "    if scheduler is not None and scheduler_per == 'epoch':\n"
    "        scheduler.step()\n"
    "    return sum(losses) / len(losses)\n")
_EVAL_OK = _EVAL_HEAD + (
    "    was = model.training\n"
    "    model.eval()\n"
    "    total, correct, n = 0.0, 0, 0\n"
    "    with torch.no_grad():\n"
    "        for X, y in loader:\n"
    "            out = model(X)\n"
    "            total += loss_fn(out, y).item() * len(y)\n"
    "            correct += (out.argmax(1) == y).sum().item()\n"
    "            n += len(y)\n"
    "    model.train(was)\n"
    "    return total / n, correct / n\n")
_ACC_OK = _ACC_HEAD + (
    "    optimizer.zero_grad()\n"
    "    k, total = len(micro_batches), 0.0\n"
    "    for X, y in micro_batches:\n"
    "        loss = loss_fn(model(X), y) / k\n"
    "        loss.backward()\n"
    "        total += loss.item()\n"
    "    optimizer.step()\n"
    "    return total\n")
_CLIP = ("    if max_norm is not None:\n"
         "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n")
_BATCH_SCHED = ("        if scheduler is not None and scheduler_per == 'batch':\n"
                "            scheduler.step()\n")
_TRAIN = "        losses.append(train_step(model, X, y, loss_fn, optimizer, max_norm))\n"

WRONG = {
    "step_without_zero_grad": ("test_train_step", {"train_step": edited(
        _STEP_OK, ("    optimizer.zero_grad()\n", ""))}),
    "step_zero_grad_at_the_end": ("test_train_step", {"train_step": edited(
        _STEP_OK, ("    optimizer.zero_grad()\n", ""),
        ("    optimizer.step()\n", "    optimizer.step()\n    optimizer.zero_grad()\n"))}),
    "step_clips_before_backward": ("test_train_step", {"train_step": edited(
        _STEP_OK, ("    loss.backward()\n" + _CLIP, _CLIP + "    loss.backward()\n"))}),
    "step_returns_the_loss_tensor": ("test_train_step", {"train_step": edited(
        _STEP_OK, ("return loss.item()", "return loss"))}),
    "epoch_steps_the_scheduler_every_batch": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, (" and scheduler_per == 'batch'", ""),
        ("    if scheduler is not None and scheduler_per == 'epoch':\n        scheduler.step()\n", ""))}),
    "epoch_scheduler_before_the_optimizer": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, (_TRAIN + _BATCH_SCHED, _BATCH_SCHED + _TRAIN))}),
    "epoch_forgets_train_mode": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, ("    model.train()\n", ""))}),
    "epoch_drops_max_norm": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, ("optimizer, max_norm))", "optimizer))"))}),
    "step_clips_each_parameter_separately": ("test_train_step", {"train_step": edited(
        _STEP_OK, (_CLIP, "    if max_norm is not None:\n        for p in model.parameters():\n"
                          "            torch.nn.utils.clip_grad_norm_([p], max_norm)\n"))}),
    "epoch_weights_batch_losses_by_size": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, ("    losses = []\n", "    losses, sizes = [], []\n"),
        (_TRAIN, _TRAIN + "        sizes.append(len(y))\n"),
        ("    return sum(losses) / len(losses)\n",
         "    return sum(l * n for l, n in zip(losses, sizes)) / sum(sizes)\n"))}),
    "epoch_puts_the_callers_mode_back": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, ("    model.train()\n", "    was = model.training\n    model.train()\n"),
        ("    return sum(losses) / len(losses)\n", "    model.train(was)\n    return sum(losses) / len(losses)\n"))}),
    "epoch_scheduler_before_the_first_batch": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, ("    if scheduler is not None and scheduler_per == 'epoch':\n        scheduler.step()\n", ""),
        ("    losses = []\n", "    losses = []\n    if scheduler is not None and scheduler_per == 'epoch':\n"
                              "        scheduler.step()\n"))}),
    "epoch_per_batch_skips_the_last_batch": ("test_train_epoch", {"train_epoch": edited(
        _EPOCH_OK, ("    for X, y in loader:\n", "    batches = list(loader)\n    for i, (X, y) in enumerate(batches):\n"),
        ("scheduler_per == 'batch':", "scheduler_per == 'batch' and i < len(batches) - 1:"))}),
    "evaluate_forgets_eval_mode": ("test_evaluate", {"evaluate": edited(
        _EVAL_OK, ("    was = model.training\n    model.eval()\n", ""), ("    model.train(was)\n", ""))}),
    "evaluate_forgets_no_grad": ("test_evaluate", {"evaluate": edited(
        _EVAL_OK, ("    with torch.no_grad():\n", "    if True:  # no torch.no_grad()\n"))}),
    "evaluate_leaves_eval_mode_on": ("test_evaluate", {"evaluate": edited(
        _EVAL_OK, ("    was = model.training\n", ""), ("    model.train(was)\n", ""))}),
    "evaluate_averages_batch_means": ("test_evaluate", {"evaluate": (
        _EVAL_HEAD +
        "    was = model.training\n"
        "    model.eval()\n"
        "    losses, accs = [], []\n"
        "    with torch.no_grad():\n"
        "        for X, y in loader:\n"
        "            out = model(X)\n"
        "            losses.append(loss_fn(out, y).item())\n"
        "            accs.append((out.argmax(1) == y).float().mean().item())\n"
        "    model.train(was)\n"
        "    return float(np.mean(losses)), float(np.mean(accs))\n")}),
    "accumulation_zero_grad_in_every_micro_batch": ("test_accumulation_step", {"accumulation_step": edited(
        _ACC_OK, ("    optimizer.zero_grad()\n", ""),
        ("    for X, y in micro_batches:\n", "    for X, y in micro_batches:\n        optimizer.zero_grad()\n"))}),
    "accumulation_zero_grad_only_after_the_step": ("test_accumulation_step", {"accumulation_step": edited(
        _ACC_OK, ("    optimizer.zero_grad()\n", ""),
        ("    optimizer.step()\n", "    optimizer.step()\n    optimizer.zero_grad()\n"))}),
    "accumulation_without_dividing_by_k": ("test_accumulation_step", {"accumulation_step": edited(
        _ACC_OK, (" / k\n", "\n"))}),
    "accumulation_steps_every_micro_batch": ("test_accumulation_step", {"accumulation_step": edited(
        _ACC_OK, ("        total += loss.item()\n    optimizer.step()\n", "        optimizer.step()\n        total += loss.item()\n"))}),
}

CORRECT = {
    "set_to_false_inference_mode_one_backward": {
        "train_step": (
            _STEP_HEAD +
            "    model.zero_grad(set_to_none=False)\n"
            "    out = model(X)\n"
            "    loss = loss_fn(out, y)\n"
            "    loss.backward()\n"
            "    if max_norm is not None:\n"
            "        nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=max_norm, norm_type=2.0)\n"
            "    optimizer.step()\n"
            "    return float(loss.detach())\n"),
        "train_epoch": (
            _EPOCH_HEAD +
            "    model.train(True)\n"
            "    total, count = 0.0, 0\n"
            "    for batch in loader:\n"
            "        X, y = batch\n"
            "        total += train_step(model, X, y, loss_fn, optimizer, max_norm=max_norm)\n"
            "        count += 1\n"
            "        if scheduler_per == 'batch' and scheduler:\n"
            "            scheduler.step()\n"
            "    if scheduler_per == 'epoch' and scheduler:\n"
            "        scheduler.step()\n"
            "    return total / count\n"),
        "evaluate": (
            _EVAL_HEAD +
            "    mode = model.training\n"
            "    model.eval()\n"
            "    try:\n"
            "        with torch.inference_mode():\n"
            "            outs, ys = [], []\n"
            "            for X, y in loader:\n"
            "                outs.append(model(X)); ys.append(y)\n"
            "            out, y = torch.cat(outs), torch.cat(ys)\n"
            "            return loss_fn(out, y).item(), (out.argmax(-1) == y).double().mean().item()\n"
            "    finally:\n"
            "        model.train(mode)\n"),
        "accumulation_step": (
            _ACC_HEAD +
            "    optimizer.zero_grad()\n"
            "    k = len(micro_batches)\n"
            "    loss = sum(loss_fn(model(X), y) for X, y in micro_batches) / k\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n"),
        "why_zero_grad": "backward adds into .grad, so without zero_grad the steps use a running sum (momentum 1) "
                         "and the loss oscillates; accumulate on purpose for a large batch: zero_grad once, loss/k, one step.",
    },
    "clipping_by_hand_weighted_micro_batches": {
        "train_step": (
            _STEP_HEAD +
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "    loss = loss_fn(model(X), y)\n"
            "    loss.backward()\n"
            "    if max_norm is not None:\n"
            "        grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "        norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))\n"
            "        scale = max_norm / (norm + 1e-6)\n"
            "        if scale < 1:\n"
            "            for g in grads:\n"
            "                g.mul_(scale.to(g.dtype))\n"
            "    optimizer.step()\n"
            "    return loss.item()\n"),
        "train_epoch": (
            _EPOCH_HEAD +
            "    model.train()\n"
            "    losses = [None] * 0\n"
            "    for i, (X, y) in enumerate(loader):\n"
            "        losses.append(train_step(model, X, y, loss_fn, optimizer, max_norm))\n"
            "        if scheduler_per == 'batch' and scheduler is not None:\n"
            "            scheduler.step()\n"
            "    if scheduler_per == 'epoch' and scheduler is not None:\n"
            "        scheduler.step()\n"
            "    return float(np.mean(losses))\n"),
        "evaluate": (
            _EVAL_HEAD +
            "    training = model.training\n"
            "    model.train(False)\n"
            "    with torch.no_grad():\n"
            "        parts = [(loss_fn(model(X), y) * len(y), (model(X).argmax(1) == y).sum(), len(y)) for X, y in loader]\n"
            "    if training:\n"
            "        model.train()\n"
            "    n = sum(p[2] for p in parts)\n"
            "    return float(sum(p[0] for p in parts) / n), float(sum(p[1] for p in parts)) / n\n"),
        "accumulation_step": (
            _ACC_HEAD +
            "    n = sum(len(y) for _, y in micro_batches)\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            "    total = 0.0\n"
            "    for X, y in micro_batches:\n"
            "        part = loss_fn(model(X), y) * (len(y) / n)\n"
            "        part.backward()\n"
            "        total += part.item()\n"
            "    optimizer.step()\n"
            "    return total\n"),
    },
    "enumerate_running_mean_decorated_no_grad": {
        "train_step": (
            _STEP_HEAD +
            "    optimizer.zero_grad(set_to_none=True)\n"
            "    prediction = model.forward(X)\n"
            "    loss = loss_fn(prediction, y)\n"
            "    loss.backward()\n"
            "    if max_norm is not None:\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, error_if_nonfinite=False)\n"
            "    optimizer.step()\n"
            "    return float(loss)\n"),
        "train_epoch": (
            _EPOCH_HEAD +
            "    model.train()\n"
            "    per_batch = scheduler is not None and scheduler_per == 'batch'\n"
            "    mean = 0.0\n"
            "    for i, (X, y) in enumerate(loader, start=1):\n"
            "        loss = train_step(model, X, y, loss_fn, optimizer, max_norm=max_norm)\n"
            "        mean += (loss - mean) / i          # running mean of the batch losses\n"
            "        if per_batch:\n"
            "            scheduler.step()\n"
            "    if scheduler is not None and not per_batch:\n"
            "        scheduler.step()\n"
            "    return float(mean)\n"),
        "evaluate": (
            "@torch.no_grad()\n" + _EVAL_HEAD +
            "    restore = model.train if model.training else model.eval\n"
            "    model.eval()\n"
            "    losses, hits, sizes = [], [], []\n"
            "    for X, y in loader:\n"
            "        logits = model(X)\n"
            "        losses.append(loss_fn(logits, y) * y.shape[0])\n"
            "        hits.append((logits.max(dim=1).indices == y).sum())\n"
            "        sizes.append(y.shape[0])\n"
            "    restore()\n"
            "    n = float(sum(sizes))\n"
            "    return torch.stack(losses).sum().item() / n, torch.stack(hits).sum().item() / n\n"),
        "accumulation_step": (
            _ACC_HEAD +
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "    losses = []\n"
            "    for X, y in micro_batches:\n"
            "        loss = loss_fn(model(X), y)\n"
            "        (loss / len(micro_batches)).backward()\n"
            "        losses.append(loss.item())\n"
            "    optimizer.step()\n"
            "    return float(np.mean(losses))\n"),
    },
}
