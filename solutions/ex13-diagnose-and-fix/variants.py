"""Answers to ex13 a student might hand in (the contract is in gdcourse.grading.variants)."""

from gdcourse.grading.variants import edited

# The body of run B with one line changed: where (and whether) the gradients are cleared.
def _run_b(clear_before="", clear_after_backward="", clear_after_step="", clear_per_epoch=""):
    return (
        "def fixed_run_b(X, y, epochs=5, batch_size=32, seed=0):\n"
        "    torch.manual_seed(seed)\n"
        "    model = mlp(X.shape[1], 32, 10)\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)\n"
        "    tracker, history = GradNormTracker(model), new_history()\n"
        "    for epoch in range(epochs):\n"
        + (f"        {clear_per_epoch}\n" if clear_per_epoch else "") +
        "        for b in batches(len(X), batch_size):\n"
        + (f"            {clear_before}\n" if clear_before else "") +
        "            loss = F.cross_entropy(model(X[b]), y[b])\n"
        "            loss.backward()\n"
        + (f"            {clear_after_backward}\n" if clear_after_backward else "") +
        "            record(history, loss, tracker, optimizer)\n"
        "            optimizer.step()\n"
        + (f"            {clear_after_step}\n" if clear_after_step else "") +
        "    history['predict'] = lambda X_new: model(X_new).detach()\n"
        "    return history\n")


# Run C with the scheduler line(s) given.
def _run_c(make_scheduler, per_batch="", per_epoch_start="", per_epoch_end=""):
    return (
        "def fixed_run_c(X, y, epochs=6, batch_size=32, seed=0):\n"
        "    torch.manual_seed(seed)\n"
        "    model = mlp(X.shape[1], 32, 10)\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
        f"    {make_scheduler}\n"
        "    tracker, history = GradNormTracker(model), new_history()\n"
        "    for epoch in range(epochs):\n"
        + (f"        {per_epoch_start}\n" if per_epoch_start else "") +
        "        for b in batches(len(X), batch_size):\n"
        "            optimizer.zero_grad()\n"
        "            loss = F.cross_entropy(model(X[b]), y[b])\n"
        "            loss.backward()\n"
        "            record(history, loss, tracker, optimizer)\n"
        "            optimizer.step()\n"
        + (f"            {per_batch}\n" if per_batch else "") +
        (f"        {per_epoch_end}\n" if per_epoch_end else "") +
        "    history['predict'] = lambda X_new: model(X_new).detach()\n"
        "    return history\n")


# Run D with the loss computed by `loss_lines` from `logits` and `yb` (and `temperature` as given).
def _run_d(loss_lines, temperature="temperature"):
    body = "".join(f"            {line}\n" for line in loss_lines)
    return (
        "def fixed_run_d(X, y, epochs=5, batch_size=32, seed=0, temperature=1 / 30):\n"
        "    torch.manual_seed(seed)\n"
        "    model = mlp(X.shape[1], 32, 10)\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.003, momentum=0.9)\n"
        "    tracker, history = GradNormTracker(model), new_history()\n"
        "    for epoch in range(epochs):\n"
        "        for b in batches(len(X), batch_size):\n"
        "            optimizer.zero_grad()\n"
        f"            logits = model(X[b]) / {temperature}\n"
        "            yb = y[b]\n"
        + body +
        "            loss.backward()\n"
        "            record(history, loss, tracker, optimizer)\n"
        "            optimizer.step()\n"
        f"    history['predict'] = lambda X_new: (model(X_new) / {temperature}).detach()\n"
        "    return history\n")


# Run A with `prepare` (making `target`, and what predict needs), an optional lr and clipping, and `predict`.
def _run_a(prepare, predict, lr="0.01", clip=""):
    return (
        "def fixed_run_a(X, y, steps=100, seed=0):\n"
        "    torch.manual_seed(seed)\n"
        + "".join(f"    {line}\n" for line in prepare) +
        "    model = mlp(X.shape[1], 32, 1)\n"
        f"    optimizer = torch.optim.SGD(model.parameters(), lr={lr}, momentum=0.9)\n"
        "    tracker, history = GradNormTracker(model), new_history()\n"
        "    for step in range(steps):\n"
        "        optimizer.zero_grad()\n"
        "        loss = F.mse_loss(model(X).squeeze(1), target)\n"
        "        loss.backward()\n"
        + (f"        {clip}\n" if clip else "") +
        "        record(history, loss, tracker, optimizer)\n"
        "        optimizer.step()\n"
        f"    history['predict'] = lambda X_new: ({predict}).detach()\n"
        "    return history\n")


WRONG = {
    # the diagnosis
    "run_a_blamed_on_the_learning_rate": ("test_cause_a", {"cause_a": 'cause_a = "lr_too_high"\n'}),
    "run_b_blamed_on_the_learning_rate": ("test_cause_b", {"cause_b": 'cause_b = "lr_too_high"\n'}),
    "run_d_blamed_on_the_inputs": ("test_cause_d", {"cause_d": 'cause_d = "unnormalised_inputs"\n'}),
    "every_cause_at_once": ("test_cause_c", {"cause_c": "cause_c = list(CAUSES)\n"}),
    # run A: "fixes" that do not fix
    "a_rate_lowered_until_it_stops_diverging": ("test_fix_a", {"fixed_run_a": _run_a(
        ["target = y"], "model(X_new).squeeze(1)", lr="1e-9")}),
    "a_gradients_clipped_instead": ("test_fix_a", {"fixed_run_a": _run_a(
        ["target = y"], "model(X_new).squeeze(1)",
        clip="torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)")}),
    "a_standardised_but_predicts_standard_units": ("test_fix_a", {"fixed_run_a": _run_a(
        ["target = (y - y.mean()) / y.std()"], "model(X_new).squeeze(1)")}),
    "a_only_centred": ("test_fix_a", {"fixed_run_a": _run_a(
        ["mean = y.mean()", "target = y - mean"], "model(X_new).squeeze(1) + mean")}),
    # run B
    "b_zero_grad_after_backward": ("test_fix_b", {"fixed_run_b": _run_b(
        clear_after_backward="optimizer.zero_grad()")}),
    "b_zero_grad_once_per_epoch": ("test_fix_b", {"fixed_run_b": _run_b(
        clear_per_epoch="optimizer.zero_grad()")}),
    "b_rate_lowered_instead": ("test_fix_b", {"fixed_run_b": _run_b().replace("lr=0.05", "lr=0.002")}),
    # run C
    "c_scheduler_still_per_batch_gentler": ("test_fix_c", {"fixed_run_c": _run_c(
        "scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.98)", per_batch="scheduler.step()")}),
    "c_scheduler_stepped_before_each_epoch": ("test_fix_c", {"fixed_run_c": _run_c(
        "scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)",
        per_epoch_start="scheduler.step()")}),
    "c_batches_per_epoch_hard_coded": ("test_fix_c", {"fixed_run_c": _run_c(
        "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.8)", per_batch="scheduler.step()")}),
    # run D
    "d_clamp_that_still_overflows": ("test_fix_d", {"fixed_run_d": _run_d([
        "z = logits.clamp(-100, 100)",
        "probs = torch.exp(z) / torch.exp(z).sum(dim=1, keepdim=True)",
        "loss = -torch.log(probs[torch.arange(len(z)), yb]).mean()"])}),
    "d_epsilon_inside_the_log": ("test_fix_d", {"fixed_run_d": _run_d([
        "probs = torch.exp(logits) / torch.exp(logits).sum(dim=1, keepdim=True)",
        "loss = -torch.log(probs[torch.arange(len(logits)), yb] + 1e-12).mean()"])}),
    "d_probabilities_clamped": ("test_fix_d", {"fixed_run_d": _run_d([
        "probs = torch.softmax(logits, dim=1).clamp(min=1e-6)",
        "loss = -torch.log(probs[torch.arange(len(logits)), yb]).mean()"])}),
    "d_log_of_softmax_with_a_floor": ("test_fix_d", {"fixed_run_d": _run_d([
        "probs = torch.softmax(logits, dim=1).clamp(min=1e-12)",
        "loss = -torch.log(probs[torch.arange(len(logits)), yb]).mean()"])}),
    "d_temperature_removed": ("test_fix_d", {"fixed_run_d": _run_d([
        "loss = F.cross_entropy(logits, yb)"], temperature="1.0")}),
    # the regimes of the hidden cases: reseeding, sharper temperatures
    "a_not_seeded": ("test_fix_a", {"fixed_run_a": edited(_run_a(
        ["mean, std = y.mean(), y.std()", "target = (y - mean) / std"], "model(X_new).squeeze(1) * std + mean"),
        ("    torch.manual_seed(seed)\n", ""))}),
    "c_not_seeded": ("test_fix_c", {"fixed_run_c": edited(_run_c(
        "scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)", per_epoch_end="scheduler.step()"),
        ("    torch.manual_seed(seed)\n", ""))}),
    "d_stable_softmax_epsilon_in_the_log": ("test_fix_d", {"fixed_run_d": _run_d([
        "probs = torch.softmax(logits, dim=1)",
        "loss = -torch.log(probs[torch.arange(len(logits)), yb] + 1e-8).mean()"])}),
    "d_default_temperature_changed": ("test_fix_d", {"fixed_run_d": edited(_run_d([
        "loss = F.cross_entropy(logits, yb)"]), ("temperature=1 / 30", "temperature=1 / 20"))}),
}

CORRECT = {
    "rescale_set_to_none_log_softmax": {
        "fixed_run_a": _run_a(["scale = 1e5", "target = y / scale"], "model(X_new).squeeze(1) * scale"),
        "fixed_run_b": _run_b(clear_after_step="optimizer.zero_grad(set_to_none=True)"),
        "fixed_run_c": _run_c(
            "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=len(batches(len(X), batch_size)), gamma=0.8)",
            per_batch="scheduler.step()"),
        "fixed_run_d": _run_d(["loss = F.nll_loss(F.log_softmax(logits, dim=1), yb)"]),
    },
    "numpy_stats_model_zero_grad_manual_logsumexp": {
        "fixed_run_a": _run_a(
            ["import numpy as np", "mu, sigma = float(np.mean(y.numpy())), float(np.std(y.numpy()))",
             "target = (y - mu) / sigma"],
            "model(X_new).squeeze(1) * sigma + mu"),
        "fixed_run_b": _run_b(clear_before="model.zero_grad()"),
        "fixed_run_c": _run_c(
            "scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8 ** (1 / len(batches(len(X), batch_size))))",
            per_batch="scheduler.step()"),
        "fixed_run_d": _run_d([
            "picked = logits.gather(1, yb[:, None]).squeeze(1)",
            "loss = (torch.logsumexp(logits, dim=1) - picked).mean()"]),
    },
    "grads_set_to_none_manual_rates_float64_loss_minmax_targets": {
        "fixed_run_a": _run_a(["lo, hi = y.min(), y.max()", "target = (y - lo) / (hi - lo)"],
                              "model(X_new).squeeze(1) * (hi - lo) + lo"),
        "fixed_run_b": _run_b(clear_before="for p in model.parameters(): p.grad = None"),
        "fixed_run_c": _run_c("pass  # no scheduler: the rate is set by hand at the start of every epoch",
                              per_epoch_start="for group in optimizer.param_groups: group['lr'] = 0.1 * 0.8 ** epoch"),
        "fixed_run_d": _run_d(["loss = F.cross_entropy(logits.double(), yb)  # the loss in float64"]),
    },
    "lambda_schedule_and_shifted_exp": {
        "fixed_run_c": _run_c(
            "scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.8 ** epoch)",
            per_epoch_end="scheduler.step()"),
        "fixed_run_d": _run_d([
            "shifted = logits - logits.max(dim=1, keepdim=True).values",
            "log_probs = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))",
            "loss = -log_probs[torch.arange(len(yb)), yb].mean()"]),
    },
}
