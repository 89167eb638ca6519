"""Implementations of ex09 a student might hand in (the contract is in gdcourse.grading.variants).

On the judge an answer cell that calls into ``os`` (other than ``os.path``) or ``shutil`` is flagged
for review, so the file handling below goes through ``pathlib`` and ``tempfile``."""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_STOP_OK = (
    "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
    "    best, bad = None, 0\n"
    "    for v in history:\n"
    "        if best is None or ((v < best - min_delta) if mode == 'min' else (v > best + min_delta)):\n"
    "            best, bad = v, 0\n"
    "        else:\n"
    "            bad += 1\n"
    "    return best is not None and bad >= patience\n")
_SAVE_OK = (
    "def atomic_save(state, path):\n"
    "    target = Path(path)\n"
    "    tmp = None\n"
    "    try:\n"
    "        with tempfile.NamedTemporaryFile('wb', dir=target.parent, suffix='.tmp', delete=False) as f:\n"
    "            tmp = Path(f.name)\n"
    "            torch.save(state, f)\n"
    "        tmp.replace(target)\n"
    "    except BaseException:\n"
    "        if tmp is not None:\n"
    "            tmp.unlink(missing_ok=True)\n"
    "        raise\n")
_CKPT_OK = (
    "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
    "    return {'model': model.state_dict(), 'opt': optimizer.state_dict(), 'sched': scheduler.state_dict(),\n"
    "            'torch': torch.get_rng_state(), 'numpy': np.random.get_state(), 'epoch': epoch}\n"
    "def resume(path, model, optimizer, scheduler):\n"
    "    ckpt = torch.load(path, weights_only=False)\n"
    "    model.load_state_dict(ckpt['model'])\n"
    "    optimizer.load_state_dict(ckpt['opt'])\n"
    "    scheduler.load_state_dict(ckpt['sched'])\n"
    "    torch.set_rng_state(ckpt['torch'])\n"
    "    np.random.set_state(ckpt['numpy'])\n"
    "    return ckpt['epoch']\n")
_IMPROVES = "(v < best - min_delta) if mode == 'min' else (v > best + min_delta)"

WRONG = {
    # --- should_stop
    "stop_one_epoch_late": ("test_should_stop", {"should_stop": edited(
        _STOP_OK, ("bad >= patience", "bad > patience"))}),
    "min_delta_the_wrong_way": ("test_should_stop", {"should_stop": edited(
        _STOP_OK, (_IMPROVES, "(v < best + min_delta) if mode == 'min' else (v > best - min_delta)"))}),
    "a_gain_of_exactly_min_delta_counts": ("test_should_stop", {"should_stop": edited(
        _STOP_OK, (_IMPROVES, "(v <= best - min_delta) if mode == 'min' else (v >= best + min_delta)"))}),
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
    "mode_ignored": ("test_should_stop", {"should_stop": edited(_STOP_OK, (_IMPROVES, "v < best - min_delta"))}),
    "nan_counts_as_an_improvement": ("test_should_stop", {"should_stop": (
        "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
        "    best, bad = None, 0\n"
        "    for v in history:\n"
        "        if best is not None and ((v >= best - min_delta) if mode == 'min' else (v <= best + min_delta)):\n"
        "            bad += 1                         # no improvement... unless v is NaN\n"
        "        else:\n"
        "            best, bad = v, 0\n"
        "    return best is not None and bad >= patience\n")}),
    "nan_values_skipped": ("test_should_stop", {"should_stop": edited(
        _STOP_OK, ("    for v in history:\n", "    for v in [h for h in history if h == h]:   # drop NaNs\n"))}),
    "empty_history_raises": ("test_should_stop", {"should_stop": (
        "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
        "    best, bad = history[0], 0\n"
        "    for v in history[1:]:\n"
        "        if " + _IMPROVES + ":\n"
        "            best, bad = v, 0\n"
        "        else:\n"
        "            bad += 1\n"
        "    return bad >= patience\n")}),
    "negates_history_in_place": ("test_should_stop", {"should_stop": (
        "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
        "    if mode == 'max':                        # turn accuracies into losses... in the caller's list\n"
        "        for i in range(len(history)):\n"
        "            history[i] = -history[i]\n"
        "    best, bad = None, 0\n"
        "    for v in history:\n"
        "        if best is None or v < best - min_delta:\n"
        "            best, bad = v, 0\n"
        "        else:\n"
        "            bad += 1\n"
        "    return best is not None and bad >= patience\n")}),
    "calls_the_course_reference_early_stopping": ("test_should_stop", {"should_stop": (
        "from gdcourse.train import EarlyStopping\n"
        "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
        "    s = EarlyStopping(max(patience, 1), min_delta, mode)\n"
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
        "    tmp = Path(str(path) + '.tmp')\n"
        "    torch.save(state, tmp)\n"
        "    tmp.replace(path)\n")}),
    "cleanup_only_on_exception": ("test_atomic_save", {"atomic_save": edited(
        _SAVE_OK, ("except BaseException:", "except Exception:"))}),
    "swallows_the_error": ("test_atomic_save", {"atomic_save": edited(
        _SAVE_OK, ("            tmp.unlink(missing_ok=True)\n        raise\n",
                    "            tmp.unlink(missing_ok=True)\n        print('could not save')\n"))}),
    "temporary_file_in_the_system_tmp": ("test_atomic_save", {"atomic_save": edited(
        _SAVE_OK, ("NamedTemporaryFile('wb', dir=target.parent, ", "NamedTemporaryFile('wb', "))}),
    "backup_then_write_in_place": ("test_atomic_save", {"atomic_save": (
        "def atomic_save(state, path):\n"
        "    target, backup = Path(path), Path(str(path) + '.bak')\n"
        "    if target.exists():\n"
        "        backup.write_bytes(target.read_bytes())\n"
        "    try:\n"
        "        torch.save(state, target)\n"
        "    except BaseException:\n"
        "        if backup.exists():\n"
        "            backup.replace(target)\n"
        "        raise\n"
        "    backup.unlink(missing_ok=True)\n")}),
    "serialise_first_then_write_in_place": ("test_atomic_save", {"atomic_save": (
        "import io\n"
        "def atomic_save(state, path):\n"
        "    buffer = io.BytesIO()\n"
        "    torch.save(state, buffer)           # a failure here leaves the file alone...\n"
        "    Path(path).write_bytes(buffer.getvalue())   # ...but this truncates and rewrites it in place\n")}),
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
    "no_scheduler_state": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    scheduler.load_state_dict(ckpt['sched'])\n", ""))}),
    "scheduler_last_epoch_only": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    scheduler.load_state_dict(ckpt['sched'])\n", "    scheduler.last_epoch = ckpt['epoch']\n"))}),
    "no_random_states": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    torch.set_rng_state(ckpt['torch'])\n    np.random.set_state(ckpt['numpy'])\n", ""))}),
    "torch_generator_only": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    np.random.set_state(ckpt['numpy'])\n", ""))}),
    "reseeds_instead_of_restoring": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    torch.set_rng_state(ckpt['torch'])\n    np.random.set_state(ckpt['numpy'])\n",
                   "    torch.manual_seed(ckpt['epoch']); np.random.seed(ckpt['epoch'])   # a 'deterministic' restart\n"))}),
    "numpy_state_without_its_cached_gaussian": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("'numpy': np.random.get_state(),", "'numpy': np.random.get_state()[:3],"))}),
    "parameters_without_buffers": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("{'model': model.state_dict(),", "{'model': dict(model.named_parameters()),"),
        ("model.load_state_dict(ckpt['model'])", "model.load_state_dict(ckpt['model'], strict=False)"))}),
    "weights_saved_in_float32": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("{'model': model.state_dict(),",
                   "{'model': {k: v.float() if v.is_floating_point() else v for k, v in model.state_dict().items()},"))}),
    "returns_the_next_epoch": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    return ckpt['epoch']\n", "    return ckpt['epoch'] + 1\n"))}),
    "optimizer_rebuilt_not_restored": ("test_resume", {"checkpoint": edited(
        _CKPT_OK, ("    optimizer.load_state_dict(ckpt['opt'])\n",
                   "    optimizer = type(optimizer)(model.parameters(), **optimizer.defaults)\n"
                   "    optimizer.load_state_dict(ckpt['opt'])   # a new optimizer: the caller's is untouched\n"))}),
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
    "recursive_and_rename": {
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
            "import uuid\n"
            "def atomic_save(state, path):\n"
            "    folder = Path(path).resolve().parent\n"
            "    tmp = folder / f'.{uuid.uuid4().hex}.tmp'\n"
            "    try:\n"
            "        with open(tmp, 'wb') as f:\n"
            "            torch.save(state, f)\n"
            "        tmp.rename(path)                          # rename(2): replaces path atomically on POSIX\n"
            "    except BaseException:\n"
            "        if tmp.exists():\n"
            "            tmp.unlink()\n"
            "        raise\n"),
        "checkpoint": (
            "import copy\n"
            "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
            "    return copy.deepcopy({'e': epoch, 'm': model.state_dict(), 'o': optimizer.state_dict(),\n"
            "                          's': scheduler.state_dict(),\n"
            "                          'r': (random.getstate(), np.random.get_state(), torch.random.get_rng_state())})\n"
            "def resume(path, model, optimizer, scheduler):\n"
            "    c = torch.load(path, weights_only=False)\n"
            "    for obj, key in ((scheduler, 's'), (optimizer, 'o'), (model, 'm')):\n"
            "        obj.load_state_dict(c[key])\n"
            "    py, npy, th = c['r']\n"
            "    random.setstate(py); np.random.set_state(npy); torch.random.set_rng_state(th)\n"
            "    return int(c['e'])\n"),
        "answer": "A crash leaves the old or the new file (rename is atomic); work since the last epoch is lost; "
                  "GPU nondeterminism and loader generators can still differ; only patience prevents early stops.",
    },
    "sign_trick_and_lists": {
        "should_stop": (
            "import math\n"
            "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
            "    if len(history) == 0:\n"
            "        return False\n"
            "    s = 1.0 if mode == 'min' else -1.0\n"
            "    best, since = s * history[0], 0\n"
            "    for v in history[1:]:\n"
            "        since += 1\n"
            "        if s * v < best - min_delta:              # NaN compares False: never an improvement\n"
            "            best, since = s * v, 0\n"
            "    return since >= patience\n"),
        "atomic_save": (
            "def atomic_save(state, path):\n"
            "    final = Path(path)\n"
            "    with tempfile.NamedTemporaryFile(dir=final.parent, delete=False) as handle:\n"
            "        tmp = Path(handle.name)\n"
            "    try:\n"
            "        torch.save(state, str(tmp))                # by name, into the file just made\n"
            "        tmp.replace(final)\n"
            "    except BaseException:\n"
            "        tmp.unlink(missing_ok=True)\n"
            "        raise\n"),
        "checkpoint": (
            "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
            "    _, key, pos, has_gauss, gauss = np.random.get_state()\n"
            "    return {'state': {'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                      'scheduler': scheduler.state_dict()},\n"
            "            'rng': {'torch': torch.get_rng_state(), 'numpy_key': key.tolist(), 'numpy_pos': int(pos),\n"
            "                    'numpy_gauss': [int(has_gauss), float(gauss)]},\n"
            "            'epoch': torch.tensor(epoch)}\n"
            "def resume(path, model, optimizer, scheduler):\n"
            "    ckpt = torch.load(path, map_location='cpu', weights_only=True)\n"
            "    for name, obj in (('model', model), ('optimizer', optimizer), ('scheduler', scheduler)):\n"
            "        obj.load_state_dict(ckpt['state'][name])\n"
            "    rng = ckpt['rng']\n"
            "    torch.set_rng_state(rng['torch'])\n"
            "    np.random.set_state(('MT19937', np.array(rng['numpy_key'], dtype=np.uint32), rng['numpy_pos'],\n"
            "                         *rng['numpy_gauss']))\n"
            "    return int(ckpt['epoch'].item())\n"),
    },
    "new_generator_api_and_checked_save": {
        "should_stop": (
            "import numpy as np\n"
            "def should_stop(history, patience, min_delta=0.0, mode='min'):\n"
            "    h = np.asarray(history, dtype=float)\n"
            "    if h.size == 0:\n"
            "        return False\n"
            "    if mode == 'max':\n"
            "        h = -h                                     # a new array: the caller's list is untouched\n"
            "    best, count = h[0], 0\n"
            "    for v in h[1:]:\n"
            "        improved = v < best - min_delta\n"
            "        best = v if improved else best\n"
            "        count = 0 if improved else count + 1\n"
            "    return bool(count >= patience)\n"),
        "atomic_save": (
            "def atomic_save(state, path):\n"
            "    path = Path(path)\n"
            "    fd_path = Path(tempfile.mkdtemp(dir=path.parent)) / path.name   # a private folder beside path\n"
            "    try:\n"
            "        torch.save(state, fd_path)\n"
            "        fd_path.replace(path)\n"
            "    finally:\n"
            "        fd_path.unlink(missing_ok=True)\n"
            "        fd_path.parent.rmdir()\n"),
        "checkpoint": (
            "def make_checkpoint(model, optimizer, scheduler, epoch):\n"
            "    return dict(epoch=epoch, model=model.state_dict(), optimizer=optimizer.state_dict(),\n"
            "                scheduler=scheduler.state_dict(), torch_rng=torch.random.get_rng_state(),\n"
            "                numpy_rng=np.random.get_state(legacy=False))   # a dict, cached Gaussian included\n"
            "def resume(path, model, optimizer, scheduler):\n"
            "    ckpt = torch.load(path, weights_only=False)\n"
            "    optimizer.load_state_dict(ckpt['optimizer'])\n"
            "    scheduler.load_state_dict(ckpt['scheduler'])\n"
            "    model.load_state_dict(ckpt['model'])\n"
            "    np.random.set_state(ckpt['numpy_rng'])\n"
            "    torch.random.set_rng_state(ckpt['torch_rng'])\n"
            "    return ckpt['epoch']\n"),
    },
}
