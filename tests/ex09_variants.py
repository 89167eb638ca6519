"""Implementations of ex09 a student might hand in (see ex01_variants for the contract)."""

_STOP_OK = (
    "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
    "    best, bad = None, 0\n"
    "    for v in history:\n"
    "        if best is None or ((v < best - min_delta) if mode == 'min' else (v > best + min_delta)):\n"
    "            best, bad = v, 0\n"
    "        else:\n"
    "            bad += 1\n"
    "    return best is not None and bad >= patience\n")

WRONG = {
    # --- should_stop
    "stop_one_epoch_late": ("test_should_stop", {"should_stop": _STOP_OK.replace("bad >= patience", "bad > patience")}),
    "min_delta_the_wrong_way": ("test_should_stop", {"should_stop": _STOP_OK.replace(
        "(v < best - min_delta) if mode == 'min' else (v > best + min_delta)",
        "(v < best + min_delta) if mode == 'min' else (v > best - min_delta)")}),
    "best_follows_every_small_gain": ("test_should_stop", {"should_stop": (
        "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
        "    sign = 1.0 if mode == 'min' else -1.0\n"
        "    best, bad = None, 0\n"
        "    for v in history:\n"
        "        v = sign * v\n"
        "        if best is None or v < best - min_delta:\n"
        "            bad = 0\n"
        "        else:\n"
        "            bad += 1\n"
        "        best = v if best is None else min(best, v)   # the best moves on any gain\n"
        "    return best is not None and bad >= patience\n")}),
    "mode_ignored": ("test_should_stop", {"should_stop": _STOP_OK.replace(
        "(v < best - min_delta) if mode == 'min' else (v > best + min_delta)", "v < best - min_delta")}),
    "calls_the_course_reference_early_stopping": ("test_should_stop", {"should_stop": (
        "from gdcourse.train import EarlyStopping\n"
        "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
        "    s = EarlyStopping(patience, min_delta, mode)\n"
        "    stop = False\n"
        "    for v in history:\n"
        "        stop = s.step(v)\n"
        "    return stop\n")}),
    # --- atomic_save
    "save_straight_to_the_path": ("test_atomic_save", {"atomic_save": (
        "def atomic_save(state, path):\n"
        "    torch.save(state, path)\n")}),
    "no_cleanup_on_failure": ("test_atomic_save", {"atomic_save": (
        "def atomic_save(state, path):\n"
        "    tmp = str(path) + '.tmp'\n"
        "    torch.save(state, tmp)\n"
        "    os.replace(tmp, path)\n")}),
    "backup_then_write_in_place": ("test_atomic_save", {"atomic_save": (
        "import shutil\n"
        "def atomic_save(state, path):\n"
        "    backup = str(path) + '.bak'\n"
        "    if os.path.exists(path):\n"
        "        shutil.copyfile(path, backup)\n"
        "    try:\n"
        "        torch.save(state, path)\n"
        "    except BaseException:\n"
        "        if os.path.exists(backup):\n"
        "            os.replace(backup, path)\n"
        "        raise\n"
        "    if os.path.exists(backup):\n"
        "        os.remove(backup)\n")}),
    "cleanup_only_on_exception": ("test_atomic_save", {"atomic_save": (
        "def atomic_save(state, path):\n"
        "    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)))\n"
        "    try:\n"
        "        with os.fdopen(fd, 'wb') as f:\n"
        "            torch.save(state, f)\n"
        "        os.replace(tmp, path)\n"
        "    except Exception:\n"
        "        os.remove(tmp)\n"
        "        raise\n")}),
    "temporary_file_in_tmp": ("test_atomic_save", {"atomic_save": (
        "def atomic_save(state, path):\n"
        "    with tempfile.NamedTemporaryFile(delete=False) as f:\n"
        "        tmp = f.name\n"
        "    try:\n"
        "        torch.save(state, tmp)\n"
        "        os.replace(tmp, path)\n"
        "    except BaseException:\n"
        "        if os.path.exists(tmp):\n"
        "            os.remove(tmp)\n"
        "        raise\n")}),
    "calls_the_course_reference_save": ("test_atomic_save", {"atomic_save": (
        "from gdcourse.train import save_checkpoint\n"
        "def atomic_save(state, path):\n"
        "    save_checkpoint(path, state)\n")}),
    # --- make_checkpoint / resume
    "weights_only_checkpoint": ("test_resume", {"checkpoint": (
        "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
        "    return {'model': model.state_dict(), 'epoch': epoch}\n"
        "def resume(path, model, optimizer, scheduler):\n"
        "    ckpt = torch.load(path, weights_only=True)\n"
        "    model.load_state_dict(ckpt['model'])\n"
        "    return ckpt['epoch']\n")}),
    "no_scheduler_state": ("test_resume", {"checkpoint": (
        "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
        "    return {'model': model.state_dict(), 'opt': optimizer.state_dict(), 'epoch': epoch,\n"
        "            'torch': torch.get_rng_state(), 'numpy': np.random.get_state()}\n"
        "def resume(path, model, optimizer, scheduler):\n"
        "    ckpt = torch.load(path, weights_only=False)\n"
        "    model.load_state_dict(ckpt['model']); optimizer.load_state_dict(ckpt['opt'])\n"
        "    torch.set_rng_state(ckpt['torch']); np.random.set_state(ckpt['numpy'])\n"
        "    return ckpt['epoch']\n")}),
    "no_random_states": ("test_resume", {"checkpoint": (
        "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
        "    return {'model': model.state_dict(), 'opt': optimizer.state_dict(),\n"
        "            'sched': scheduler.state_dict(), 'epoch': epoch}\n"
        "def resume(path, model, optimizer, scheduler):\n"
        "    ckpt = torch.load(path, weights_only=True)\n"
        "    model.load_state_dict(ckpt['model']); optimizer.load_state_dict(ckpt['opt'])\n"
        "    scheduler.load_state_dict(ckpt['sched'])\n"
        "    return ckpt['epoch']\n")}),
    "torch_generator_only": ("test_resume", {"checkpoint": (
        "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
        "    return {'model': model.state_dict(), 'opt': optimizer.state_dict(),\n"
        "            'sched': scheduler.state_dict(), 'epoch': epoch, 'rng': torch.get_rng_state()}\n"
        "def resume(path, model, optimizer, scheduler):\n"
        "    ckpt = torch.load(path, weights_only=True)\n"
        "    model.load_state_dict(ckpt['model']); optimizer.load_state_dict(ckpt['opt'])\n"
        "    scheduler.load_state_dict(ckpt['sched']); torch.set_rng_state(ckpt['rng'])\n"
        "    return ckpt['epoch']\n")}),
    "reseeds_instead_of_restoring": ("test_resume", {"checkpoint": (
        "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
        "    return {'model': model.state_dict(), 'opt': optimizer.state_dict(),\n"
        "            'sched': scheduler.state_dict(), 'epoch': epoch}\n"
        "def resume(path, model, optimizer, scheduler):\n"
        "    ckpt = torch.load(path, weights_only=True)\n"
        "    model.load_state_dict(ckpt['model']); optimizer.load_state_dict(ckpt['opt'])\n"
        "    scheduler.load_state_dict(ckpt['sched'])\n"
        "    torch.manual_seed(ckpt['epoch']); np.random.seed(ckpt['epoch'])   # 'deterministic' restart\n"
        "    return ckpt['epoch']\n")}),
    "calls_the_course_reference_capture": ("test_resume", {"checkpoint": (
        "from gdcourse.train import capture, restore\n"
        "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
        "    return capture(model, optimizer, scheduler, epoch=epoch)\n"
        "def resume(path, model, optimizer, scheduler):\n"
        "    return restore(torch.load(path, weights_only=True), model, optimizer, scheduler)['epoch']\n")}),
}

CORRECT = {
    "index_based_and_bytes_first": {
        "should_stop": (
            "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
            "    values = [float(v) if mode == 'min' else -float(v) for v in history]\n"
            "    if not values:\n"
            "        return False\n"
            "    best_i = 0\n"
            "    for i in range(1, len(values)):\n"
            "        if values[i] + min_delta < values[best_i]:\n"
            "            best_i = i\n"
            "    return len(values) - 1 - best_i >= patience\n"),
        "atomic_save": (
            "import io\n"
            "from pathlib import Path\n"
            "def atomic_save(state, path):\n"
            "    path = Path(path)\n"
            "    buffer = io.BytesIO()\n"
            "    torch.save(state, buffer)                      # serialise first: nothing touches the disk yet\n"
            "    tmp = path.with_name(path.name + '.partial')\n"
            "    try:\n"
            "        tmp.write_bytes(buffer.getvalue())\n"
            "        tmp.replace(path)\n"
            "    finally:\n"
            "        tmp.unlink(missing_ok=True)\n"),
        "checkpoint": (
            "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
            "    kind, key, pos, has_gauss, cached = np.random.get_state()\n"
            "    return {'epoch': epoch, 'weights': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "            'scheduler': scheduler.state_dict(), 'torch': torch.get_rng_state(),\n"
            "            'numpy': [kind, torch.from_numpy(key.astype(np.int64)), int(pos), int(has_gauss), float(cached)]}\n"
            "def resume(path, model, optimizer, scheduler):\n"
            "    c = torch.load(path, weights_only=True)        # safe load: the NumPy state was stored as a tensor\n"
            "    model.load_state_dict(c['weights']); optimizer.load_state_dict(c['optimizer'])\n"
            "    scheduler.load_state_dict(c['scheduler']); torch.set_rng_state(c['torch'])\n"
            "    kind, key, pos, has_gauss, cached = c['numpy']\n"
            "    np.random.set_state((kind, key.numpy().astype(np.uint32), pos, has_gauss, cached))\n"
            "    return c['epoch']\n"),
    },
    "recursive_and_shutil": {
        "should_stop": (
            "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
            "    better = (lambda v, b: v < b - min_delta) if mode == 'min' else (lambda v, b: v > b + min_delta)\n"
            "    def walk(rest, best, count):\n"
            "        if not rest:\n"
            "            return count\n"
            "        head = rest[0]\n"
            "        return walk(rest[1:], head, 0) if better(head, best) else walk(rest[1:], best, count + 1)\n"
            "    history = list(history)\n"
            "    return bool(history) and walk(history[1:], history[0], 0) >= patience\n"),
        "atomic_save": (
            "import shutil, uuid\n"
            "def atomic_save(state, path):\n"
            "    folder = os.path.dirname(os.path.abspath(path))\n"
            "    tmp = os.path.join(folder, f'.{uuid.uuid4().hex}.tmp')\n"
            "    try:\n"
            "        with open(tmp, 'wb') as f:\n"
            "            torch.save(state, f)\n"
            "            f.flush(); os.fsync(f.fileno())\n"
            "        shutil.move(tmp, path)                    # os.rename within one folder: atomic\n"
            "    except BaseException:\n"
            "        if os.path.exists(tmp):\n"
            "            os.remove(tmp)\n"
            "        raise\n"),
        "checkpoint": (
            "import copy\n"
            "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
            "    return copy.deepcopy({'e': epoch, 'm': model.state_dict(), 'o': optimizer.state_dict(),\n"
            "                          's': scheduler.state_dict(),\n"
            "                          'r': (random.getstate(), np.random.get_state(), torch.random.get_rng_state())})\n"
            "def resume(path, model, optimizer, scheduler):\n"
            "    c = torch.load(path, weights_only=False)\n"
            "    for obj, key in ((model, 'm'), (optimizer, 'o'), (scheduler, 's')):\n"
            "        obj.load_state_dict(c[key])\n"
            "    py, npy, th = c['r']\n"
            "    random.setstate(py); np.random.set_state(npy); torch.random.set_rng_state(th)\n"
            "    return c['e']\n"),
        "answer": "A crash leaves the old or the new file (rename is atomic); work since the last epoch is lost; GPU nondeterminism and loader generators can still differ; only patience prevents early stops.",
    },
}
