"""Implementations of ex11 a student might hand in (the contract is in gdcourse.grading.variants).

The process-group functions run in forked gloo processes (a tenth of a second per launch once
torch is loaded), so a submission grades in seconds; each wrong variant is the right answer with
one mistake, most of them ones that only some world sizes, epochs or states show."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_SHARD_OK = (
    "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
    "    if shuffle:\n"
    "        g = torch.Generator()\n"
    "        g.manual_seed(seed + epoch)\n"
    "        indices = torch.randperm(n, generator=g).tolist()\n"
    "    else:\n"
    "        indices = list(range(n))\n"
    "    per_rank = n // world_size if drop_last else math.ceil(n / world_size)\n"
    "    total = per_rank * world_size\n"
    "    while len(indices) < total:\n"
    "        indices += indices[:total - len(indices)]\n"
    "    return indices[:total][rank::world_size]\n")
_AVERAGE_OK = (
    "def average_gradients(model):\n"
    "    world_size = dist.get_world_size()\n"
    "    for p in model.parameters():\n"
    "        if p.grad is not None:\n"
    "            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)\n"
    "            p.grad /= world_size\n")
_ACCUMULATE_OK = (
    "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
    "    k = len(micro_batches)\n"
    "    total = 0.0\n"
    "    for i, (x, y) in enumerate(micro_batches):\n"
    "        with contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync():\n"
    "            loss = loss_fn(ddp_model(x), y) / k\n"
    "            loss.backward()\n"
    "        total += loss.item()\n"
    "    return total\n")


def _shard(*edits):
    return {"shard_indices": edited(_SHARD_OK, *edits)}


def _average(*edits):
    return {"average_gradients": edited(_AVERAGE_OK, *edits)}


def _accumulate(*edits):
    return {"accumulate_gradients": edited(_ACCUMULATE_OK, *edits)}


WRONG = {
    # shard_indices
    "shard_without_padding": ("test_shard_indices", _shard(
        ("    while len(indices) < total:\n        indices += indices[:total - len(indices)]\n"
         "    return indices[:total][rank::world_size]\n",
         "    return (indices[:total] if drop_last else indices)[rank::world_size]\n"))),
    "shard_ignores_the_epoch": ("test_shard_indices", _shard(("g.manual_seed(seed + epoch)", "g.manual_seed(seed)"))),
    "shard_seeds_with_the_epoch_only": ("test_shard_indices", _shard(("g.manual_seed(seed + epoch)",
                                                                      "g.manual_seed(epoch)"))),
    "shard_in_contiguous_blocks": ("test_shard_indices", _shard(
        ("return indices[:total][rank::world_size]", "return indices[rank * per_rank:(rank + 1) * per_rank]"))),
    "shard_pads_only_once": ("test_shard_indices", _shard(
        ("    while len(indices) < total:\n", "    if len(indices) < total:\n"))),
    "shard_reseeds_the_global_generator": ("test_shard_indices", _shard(
        ("        g = torch.Generator()\n        g.manual_seed(seed + epoch)\n"
         "        indices = torch.randperm(n, generator=g).tolist()\n",
         "        torch.manual_seed(seed + epoch)\n        indices = torch.randperm(n).tolist()\n"))),
    "shard_returns_a_tensor": ("test_shard_indices", _shard(
        ("return indices[:total][rank::world_size]", "return torch.tensor(indices[:total][rank::world_size])"))),
    # average_gradients
    "average_sums_without_dividing": ("test_average_gradients", _average(("            p.grad /= world_size\n", ""))),
    "average_divides_by_two": ("test_average_gradients", _average(("p.grad /= world_size", "p.grad /= 2"))),
    "average_all_reduces_a_new_tensor": ("test_average_gradients", _average(
        ("            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)\n            p.grad /= world_size\n",
         "            dist.all_reduce(p.grad / world_size, op=dist.ReduceOp.SUM)\n"))),
    "average_without_skipping_frozen_parameters": ("test_average_gradients", _average(
        ("        if p.grad is not None:\n            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)\n"
         "            p.grad /= world_size\n",
         "        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)\n        p.grad /= world_size\n"))),
    "average_from_the_course_reference": ("test_average_gradients", {"average_gradients": (
        "from gdcourse.grading.assignments.ex11_distributed import average_gradients\n")}),
    # accumulate_gradients
    "accumulate_without_no_sync": ("test_accumulate_gradients", _accumulate(
        ("contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync()", "contextlib.nullcontext()"))),
    "accumulate_everything_in_no_sync": ("test_accumulate_gradients", _accumulate(
        ("contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync()", "ddp_model.no_sync()"))),
    "accumulate_syncs_the_first_micro_batch": ("test_accumulate_gradients", _accumulate(
        ("if i == k - 1 else", "if i == 0 else"))),
    "accumulate_zeroing_every_micro_batch": ("test_accumulate_gradients", _accumulate(
        ("        with contextlib", "        ddp_model.zero_grad()\n        with contextlib"))),
    "accumulate_zeroes_before_it_starts": ("test_accumulate_gradients", _accumulate(
        ("    total = 0.0\n", "    total = 0.0\n    ddp_model.zero_grad()\n"))),
    "accumulate_loss_not_divided": ("test_accumulate_gradients", _accumulate(
        ("loss = loss_fn(ddp_model(x), y) / k", "loss = loss_fn(ddp_model(x), y)"), ("return total", "return total / k"))),
    "accumulate_divides_the_whole_grad_at_the_end": ("test_accumulate_gradients", _accumulate(
        ("loss = loss_fn(ddp_model(x), y) / k", "loss = loss_fn(ddp_model(x), y)"),
        ("    return total\n", "    for p in ddp_model.parameters():\n        p.grad /= k\n    return total / k\n"))),
    "accumulate_forward_through_the_module": ("test_accumulate_gradients", _accumulate(
        ("loss_fn(ddp_model(x), y)", "loss_fn(ddp_model.module(x), y)"))),
    "accumulate_returns_a_tensor": ("test_accumulate_gradients", _accumulate(
        ("total += loss.item()", "total += loss.detach()"))),
}

# Caught by the static check (FORBIDDEN in solutions/ex11-distributed/cases.py): test_shard_indices scores 0
# and the submission is flagged for the instructor. Not in WRONG, whose contract expects "flagged" only for
# names with course_reference; checked by hand (score 5 of 8, flagged, only test_shard_indices lost).
WRONG |= {  # flagged by the static check: the exercise asks to write what DistributedSampler does
    "shard_forbidden_distributed_sampler": ("test_shard_indices", {"shard_indices": (
        "from torch.utils.data.distributed import DistributedSampler\n"
        "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
        "    s = DistributedSampler(range(n), world_size, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)\n"
        "    s.set_epoch(epoch)\n"
        "    return list(s)\n")}),
}

CORRECT = {
    "padding_by_cycling_and_bucketed_average": {
        "shard_indices": (
            "import itertools\n"
            "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
            "    if shuffle:\n"
            "        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch)).tolist()\n"
            "    else:\n"
            "        order = list(range(n))\n"
            "    per_rank = (n // world_size) if drop_last else -(-n // world_size)\n"
            "    padded = list(itertools.islice(itertools.cycle(order), per_rank * world_size)) if order else []\n"
            "    return [padded[i] for i in range(rank, len(padded), world_size)]\n"),
        "average_gradients": (  # one flat all-reduce, as DDP's buckets do
            "def average_gradients(model):\n"
            "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "    flat = torch.cat([g.reshape(-1) for g in grads])\n"
            "    dist.all_reduce(flat)\n"
            "    flat.div_(dist.get_world_size())\n"
            "    offset = 0\n"
            "    for g in grads:\n"
            "        g.copy_(flat[offset:offset + g.numel()].view_as(g))\n"
            "        offset += g.numel()\n"),
        "accumulate_gradients": (  # the no_sync micro-batches in one block, the last one after it
            "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
            "    k = len(micro_batches)\n"
            "    losses = []\n"
            "    with ddp_model.no_sync():\n"
            "        for x, y in micro_batches[:-1]:\n"
            "            loss = loss_fn(ddp_model(x), y)\n"
            "            (loss / k).backward()\n"
            "            losses.append(loss.item())\n"
            "    x, y = micro_batches[-1]\n"
            "    loss = loss_fn(ddp_model(x), y)\n"
            "    (loss / k).backward()\n"
            "    losses.append(loss.item())\n"
            "    return sum(losses) / k\n"),
        "set_epoch_answer": "set_epoch reseeds the shuffle with seed + epoch; without it every epoch repeats epoch 0's shards.",
    },
    "tensor_padding_and_async_average_divided_first": {
        "shard_indices": (
            "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
            "    g = torch.Generator()\n"
            "    g.manual_seed(seed + epoch)\n"
            "    order = torch.randperm(n, generator=g) if shuffle else torch.arange(n)\n"
            "    count = n // world_size if drop_last else math.ceil(n / world_size)\n"
            "    if n:\n"
            "        order = order.repeat(math.ceil(count * world_size / n) + 1)\n"
            "    return order[:count * world_size][rank::world_size].tolist()\n"),
        "average_gradients": (  # divide first, then sum; asynchronous all-reduces
            "def average_gradients(model):\n"
            "    works = []\n"
            "    for p in model.parameters():\n"
            "        if p.grad is not None:\n"
            "            p.grad.mul_(1.0 / dist.get_world_size())\n"
            "            works.append(dist.all_reduce(p.grad, async_op=True))\n"
            "    for work in works:\n"
            "        work.wait()\n"),
        "accumulate_gradients": (  # an ExitStack decides, a tensor of losses averaged at the end
            "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
            "    losses = []\n"
            "    for i, (x, y) in enumerate(micro_batches):\n"
            "        with contextlib.ExitStack() as stack:\n"
            "            if i < len(micro_batches) - 1:\n"
            "                stack.enter_context(ddp_model.no_sync())\n"
            "            loss = loss_fn(ddp_model(x), y)\n"
            "            loss.div(len(micro_batches)).backward()\n"
            "        losses.append(loss.detach())\n"
            "    return torch.stack(losses).mean().item()\n"),
    },
    "numpy_resize_and_new_grad_tensors": {
        "shard_indices": (  # np.resize repeats the order cyclically; .tolist() gives Python ints
            "import numpy as np\n"
            "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
            "    if shuffle:\n"
            "        gen = torch.Generator().manual_seed(seed + epoch)\n"
            "        order = np.array(torch.randperm(n, generator=gen).tolist(), dtype=np.int64)\n"
            "    else:\n"
            "        order = np.arange(n)\n"
            "    size = world_size * (n // world_size if drop_last else (n + world_size - 1) // world_size)\n"
            "    padded = np.resize(order, size) if n else order[:0]\n"
            "    return padded.reshape(-1, world_size)[:, rank].tolist() if size else []\n"),
        "average_gradients": (  # a new tensor assigned to .grad (the statement allows it)
            "def average_gradients(model):\n"
            "    size = float(dist.get_world_size())\n"
            "    for name, p in model.named_parameters():\n"
            "        if p.grad is None:\n"
            "            continue\n"
            "        summed = p.grad.clone()\n"
            "        dist.all_reduce(summed)\n"
            "        p.grad = summed / size\n"),
        "accumulate_gradients": (  # the last micro-batch handled apart, losses averaged with NumPy
            "import numpy as np\n"
            "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
            "    *head, tail = micro_batches\n"
            "    k = len(micro_batches)\n"
            "    losses = []\n"
            "    for x, y in head:\n"
            "        with ddp_model.no_sync():\n"
            "            out = loss_fn(ddp_model(x), y)\n"
            "            (out * (1.0 / k)).backward()\n"
            "        losses.append(out.item())\n"
            "    out = loss_fn(ddp_model(tail[0]), tail[1])\n"
            "    (out * (1.0 / k)).backward()\n"
            "    losses.append(out.item())\n"
            "    return float(np.mean(losses))\n"),
    },
}
