"""Implementations of ex11 a student might hand in (see ex01_variants for the contract).

Each submission of this exercise starts two pairs of worker processes (about a minute of grading on two
busy cores), so the list is kept to the mistakes the exercise is about. Also checked once and caught, then
dropped to save CI time: a NumPy permutation instead of torch.randperm, padding only once (n < world_size),
dividing without all-reducing, all-reducing the weights instead of the gradients."""

WRONG = {
    "shard_without_padding": ("test_shard_indices", {"shard_indices": (
        "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
        "    g = torch.Generator()\n"
        "    g.manual_seed(seed + epoch)\n"
        "    indices = torch.randperm(n, generator=g).tolist() if shuffle else list(range(n))\n"
        "    if drop_last:\n"
        "        indices = indices[:n // world_size * world_size]\n"
        "    return indices[rank::world_size]\n")}),
    "shard_ignores_the_epoch": ("test_shard_indices", {"shard_indices": (
        "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
        "    g = torch.Generator()\n"
        "    g.manual_seed(seed)\n"
        "    indices = torch.randperm(n, generator=g).tolist() if shuffle else list(range(n))\n"
        "    per_rank = n // world_size if drop_last else math.ceil(n / world_size)\n"
        "    total = per_rank * world_size\n"
        "    while len(indices) < total:\n"
        "        indices += indices[:total - len(indices)]\n"
        "    return indices[:total][rank::world_size]\n")}),
    "shard_in_contiguous_blocks": ("test_shard_indices", {"shard_indices": (
        "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
        "    g = torch.Generator()\n"
        "    g.manual_seed(seed + epoch)\n"
        "    indices = torch.randperm(n, generator=g).tolist() if shuffle else list(range(n))\n"
        "    per_rank = n // world_size if drop_last else math.ceil(n / world_size)\n"
        "    total = per_rank * world_size\n"
        "    while len(indices) < total:\n"
        "        indices += indices[:total - len(indices)]\n"
        "    return indices[rank * per_rank:(rank + 1) * per_rank]\n")}),
    "shard_calls_distributed_sampler": ("test_shard_indices", {"shard_indices": (
        "from torch.utils.data.distributed import DistributedSampler\n"
        "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
        "    s = DistributedSampler(range(n), world_size, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)\n"
        "    s.set_epoch(epoch)\n"
        "    return list(s)\n")}),
    "average_sums_without_dividing": ("test_average_gradients", {"average_gradients": (
        "def average_gradients(model):\n"
        "    for p in model.parameters():\n"
        "        if p.grad is not None:\n"
        "            dist.all_reduce(p.grad)\n")}),
    "accumulate_without_no_sync": ("test_accumulate_gradients", {"accumulate_gradients": (
        "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
        "    k = len(micro_batches)\n"
        "    total = 0.0\n"
        "    for x, y in micro_batches:\n"
        "        loss = loss_fn(ddp_model(x), y) / k\n"
        "        loss.backward()\n"
        "        total += loss.item()\n"
        "    return total\n")}),
    "accumulate_zeroing_every_micro_batch": ("test_accumulate_gradients", {"accumulate_gradients": (
        "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
        "    k = len(micro_batches)\n"
        "    total = 0.0\n"
        "    for i, (x, y) in enumerate(micro_batches):\n"
        "        ddp_model.zero_grad()\n"
        "        with contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync():\n"
        "            loss = loss_fn(ddp_model(x), y) / k\n"
        "            loss.backward()\n"
        "        total += loss.item()\n"
        "    return total\n")}),
    "accumulate_loss_not_divided": ("test_accumulate_gradients", {"accumulate_gradients": (
        "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
        "    k = len(micro_batches)\n"
        "    total = 0.0\n"
        "    for i, (x, y) in enumerate(micro_batches):\n"
        "        with contextlib.nullcontext() if i == k - 1 else ddp_model.no_sync():\n"
        "            loss = loss_fn(ddp_model(x), y)\n"
        "            loss.backward()\n"
        "        total += loss.item()\n"
        "    return total / k\n")}),
    "accumulate_everything_in_no_sync": ("test_accumulate_gradients", {"accumulate_gradients": (
        "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
        "    k = len(micro_batches)\n"
        "    total = 0.0\n"
        "    with ddp_model.no_sync():\n"
        "        for x, y in micro_batches:\n"
        "            loss = loss_fn(ddp_model(x), y) / k\n"
        "            loss.backward()\n"
        "            total += loss.item()\n"
        "    return total\n")}),
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
        "set_epoch_answer": "set_epoch reseeds the shuffle with seed + epoch; without it every epoch repeats epoch 0's shards.",
    },
    "tensor_padding_and_grads_scaled_after": {
        "shard_indices": (
            "def shard_indices(n, rank, world_size, epoch, seed=0, shuffle=True, drop_last=False):\n"
            "    g = torch.Generator()\n"
            "    g.manual_seed(seed + epoch)\n"
            "    order = torch.randperm(n, generator=g) if shuffle else torch.arange(n)\n"
            "    count = n // world_size if drop_last else math.ceil(n / world_size)\n"
            "    if n:\n"
            "        order = order.repeat(math.ceil(count * world_size / n) + 1)\n"
            "    return order[:count * world_size][rank::world_size].tolist()\n"),
        "average_gradients": (
            "def average_gradients(model):\n"
            "    works = [(p.grad, dist.all_reduce(p.grad, async_op=True)) for p in model.parameters() if p.grad is not None]\n"
            "    for grad, work in works:\n"
            "        work.wait()\n"
            "        grad.mul_(1.0 / dist.get_world_size())\n"),
        "accumulate_gradients": (  # undivided losses, the accumulated gradient divided once at the end
            "def accumulate_gradients(ddp_model, micro_batches, loss_fn):\n"
            "    k = len(micro_batches)\n"
            "    losses = []\n"
            "    for x, y in micro_batches[:-1]:\n"
            "        with ddp_model.no_sync():\n"
            "            loss = loss_fn(ddp_model(x), y)\n"
            "            loss.backward()\n"
            "        losses.append(loss.item())\n"
            "    x, y = micro_batches[-1]\n"
            "    loss = loss_fn(ddp_model(x), y)\n"
            "    loss.backward()\n"
            "    losses.append(loss.item())\n"
            "    for p in ddp_model.parameters():\n"
            "        if p.grad is not None:\n"
            "            p.grad /= k\n"
            "    return sum(losses) / k\n"),
    },
}
