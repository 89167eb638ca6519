"""Implementations of ex12 a student might hand in (the contract is in gdcourse.grading.variants).

Exports take seconds, and every variant is a full grading run (two exports: the visible case and a hidden
one), so the export bugs are one per mistake the chapter shows (static batch, training mode,
external data, input name) and the legacy exporter; the others cost milliseconds per case.
"""

from gdcourse.grading.variants import edited

# The right answers; each wrong one below differs from one of them in a line or two.
_EXPORT_OK = (
    "def export_onnx(model, example_input, path):\n"
    "    model.eval()\n"
    "    batch = torch.export.Dim('batch')\n"
    "    torch.onnx.export(model, (example_input,), str(path), dynamo=True, dynamic_shapes=({0: batch},),\n"
    "                      external_data=False, input_names=['x'], output_names=['logits'])\n"
    "    return path\n")
_PREDICT_OK = (
    "def onnx_predict(path, X):\n"
    "    sess = ort.InferenceSession(str(path), providers=['CPUExecutionProvider'])\n"
    "    return sess.run(['logits'], {'x': np.asarray(X, dtype=np.float32)})[0]\n")
_PARITY_OK = (
    "def parity_check(model, path, X, atol=1e-4):\n"
    "    model.eval()\n"
    "    with torch.no_grad():\n"
    "        ref = model(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()\n"
    "    got = onnx_predict(path, X)\n"
    "    d = float(np.abs(got - ref).max())\n"
    "    agreement = float(np.mean(got.argmax(1) == ref.argmax(1)))\n"
    "    return {'max_abs_diff': d, 'argmax_agreement': agreement, 'ok': d <= atol}\n")

WRONG = {
    # export_onnx
    # The batch dimension is frozen to the example's 8 rows: a batch of 1 is rejected.
    "static_batch": ("test_export", {"export_onnx": edited(
        _EXPORT_OK, (" dynamic_shapes=({0: batch},),", ""))}),
    # No model.eval(): Dropout nodes with training_mode=True land in the file (seen with optimizations off).
    "exported_in_training_mode": ("test_export", {"export_onnx": edited(_EXPORT_OK, ("    model.eval()\n", ""))}),
    # external_data defaults to True: the weights go to model.onnx.data next to the file.
    "external_data_file": ("test_export", {"export_onnx": edited(_EXPORT_OK, ("external_data=False, ", ""))}),
    # The input keeps the name of forward's argument instead of "x".
    "wrong_input_name": ("test_export", {"export_onnx": edited(_EXPORT_OK, ("input_names=['x']", "input_names=['input']"))}),
    # The legacy TorchScript exporter, with a dynamic batch and the right names: numerically right, not the
    # required exporter (it says so only in a DeprecationWarning; the file has none of dynamo's node metadata).
    "legacy_torchscript_exporter": ("test_export", {"export_onnx": edited(
        _EXPORT_OK, ("dynamo=True, dynamic_shapes=({0: batch},)",
                     "dynamo=False, dynamic_axes={'x': {0: 'batch'}, 'logits': {0: 'batch'}}"),
        ("external_data=False, ", ""))}),
    # onnx_predict
    "predict_returns_the_list": ("test_predict", {"onnx_predict": edited(
        _PREDICT_OK, ("np.float32)})[0]", "np.float32)})"))}),
    "predict_feeds_float64": ("test_predict", {"onnx_predict": edited(
        _PREDICT_OK, ("np.asarray(X, dtype=np.float32)", "X"))}),
    # A batch of one row comes back as a 1-d vector.
    "predict_squeezes_the_batch": ("test_predict", {"onnx_predict": edited(
        _PREDICT_OK, ("return sess.run(['logits'], {'x': np.asarray(X, dtype=np.float32)})[0]",
                      "return np.squeeze(sess.run(['logits'], {'x': np.asarray(X, dtype=np.float32)})[0])"))}),
    # parity_check
    "parity_without_eval": ("test_parity", {"parity_check": edited(_PARITY_OK, ("    model.eval()\n", ""))}),
    "parity_mean_difference": ("test_parity", {"parity_check": edited(
        _PARITY_OK, ("np.abs(got - ref).max()", "np.abs(got - ref).mean()"))}),
    "parity_ignores_atol": ("test_parity", {"parity_check": edited(_PARITY_OK, ("'ok': d <= atol", "'ok': d <= 1e-4"))}),
    # float64 X goes to a float32 model as float64: torch refuses the matmul (hidden cases send float64).
    "parity_feeds_x_as_it_comes": ("test_parity", {"parity_check": edited(
        _PARITY_OK, ("torch.as_tensor(np.asarray(X, dtype=np.float32))", "torch.as_tensor(X)"))}),
}

CORRECT = {
    # Export a frozen copy through an ONNXProgram, name the dimension automatically, save explicitly;
    # predict reads the input name from the session.
    "program_then_save": {
        "export_onnx": (
            "def export_onnx(model, example_input, path):\n"
            "    frozen = copy.deepcopy(model).eval()\n"
            "    program = torch.onnx.export(frozen, (example_input,), dynamo=True,\n"
            "                                dynamic_shapes={'input': {0: torch.export.Dim.DYNAMIC}},\n"
            "                                input_names=['x'], output_names=['logits'])\n"
            "    program.save(str(path), external_data=False)\n"),
        "onnx_predict": (
            "def onnx_predict(path, X):\n"
            "    sess = ort.InferenceSession(str(path), providers=['CPUExecutionProvider'])\n"
            "    name = sess.get_inputs()[0].name\n"
            "    (logits,) = sess.run(['logits'], {name: np.ascontiguousarray(X, dtype=np.float32)})\n"
            "    return logits\n"),
    },
    # Restore the caller's mode afterwards, bound the dimension, pin the opset; parity on a frozen copy in float64.
    "mode_restored_bounded_dim": {
        "export_onnx": (
            "def export_onnx(model, example_input, path):\n"
            "    was_training = model.training\n"
            "    model.eval()\n"
            "    try:\n"
            "        torch.onnx.export(model, example_input, str(path), dynamo=True, opset_version=18,\n"
            "                          dynamic_shapes=({0: torch.export.Dim('n', min=1, max=100_000)},),\n"
            "                          external_data=False, input_names=['x'], output_names=['logits'])\n"
            "    finally:\n"
            "        model.train(was_training)\n"),
        "parity_check": (
            "def parity_check(model, path, X, atol=1e-4):\n"
            "    frozen = copy.deepcopy(model).eval()\n"
            "    with torch.inference_mode():\n"
            "        ref = frozen(torch.as_tensor(np.asarray(X), dtype=torch.float32)).double().numpy()\n"
            "    got = onnx_predict(path, X).astype(np.float64)\n"
            "    d = float(np.max(np.abs(got - ref)))\n"
            "    return {'max_abs_diff': d, 'argmax_agreement': float(np.mean(got.argmax(-1) == ref.argmax(-1))),\n"
            "            'ok': bool(d <= atol)}\n"),
        "why_onnx": "Training mode puts active Dropout in the file; ORT's dropout elimination hides it; "
                    "check with ORT_DISABLE_ALL. Above 2 GB use external data and ship the .data file with it.",
    },
    # dynamic_axes with dynamo=True: torch converts it to dynamic shapes and warns twice (UserWarning,
    # DeprecationWarning); warnings never decide a grade. Predict from the file's bytes; parity row by row.
    "dynamic_axes_with_warnings": {
        "export_onnx": (
            "def export_onnx(model, example_input, path):\n"
            "    model.train(False)\n"
            "    with warnings.catch_warnings():\n"
            "        warnings.simplefilter('always')\n"
            "        torch.onnx.export(model, (example_input,), f=Path(path), dynamo=True, external_data=False,\n"
            "                          dynamic_axes={'x': {0: 'batch'}, 'logits': {0: 'batch'}},\n"
            "                          input_names=['x'], output_names=['logits'])\n"),
        "onnx_predict": (
            "def onnx_predict(path, X):\n"
            "    session = ort.InferenceSession(Path(path).read_bytes(), providers=['CPUExecutionProvider'])\n"
            "    outputs = session.run(None, {'x': np.array(X, dtype=np.float32, order='C')})\n"
            "    return outputs[0]\n"),
        "parity_check": (
            "def parity_check(model, path, X, atol=1e-4):\n"
            "    model.eval()\n"
            "    onnx_logits = onnx_predict(path, X)\n"
            "    worst, same = 0.0, 0\n"
            "    for i, row in enumerate(np.asarray(X, dtype=np.float32)):\n"
            "        with torch.no_grad():\n"
            "            torch_row = model(torch.from_numpy(row.copy()).unsqueeze(0))[0].numpy()\n"
            "        worst = max(worst, float(np.abs(onnx_logits[i] - torch_row).max()))\n"
            "        same += int(np.argmax(onnx_logits[i]) == np.argmax(torch_row))\n"
            "    return dict(max_abs_diff=worst, argmax_agreement=same / len(onnx_logits), ok=worst <= atol)\n"),
    },
    # A UserWarning of its own (on stderr) and a print, the ONNXProgram's proto saved with onnx.save; predict with the
    # optimizations off and a numpy bool for ok.
    "warns_and_saves_the_proto": {
        "export_onnx": (
            "def export_onnx(model, example_input, path):\n"
            "    warnings.warn('exporting in eval mode', UserWarning)\n"
            "    print('exporting to', path)\n"
            "    model.eval()\n"
            "    program = torch.onnx.export(model, args=(example_input,), dynamo=True, input_names=['x'],\n"
            "                                output_names=['logits'],\n"
            "                                dynamic_shapes=[{0: torch.export.Dim('rows')}])\n"
            "    onnx.save(program.model_proto, str(path))\n"
            "    return program\n"),
        "onnx_predict": (
            "def onnx_predict(path, X):\n"
            "    options = ort.SessionOptions()\n"
            "    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL\n"
            "    sess = ort.InferenceSession(str(path), options, providers=['CPUExecutionProvider'])\n"
            "    return sess.run(['logits'], {'x': X.astype(np.float32)})[0]\n"),
        "parity_check": (
            "def parity_check(model, path, X, atol=1e-4):\n"
            "    model.eval()\n"
            "    x = torch.tensor(X, dtype=torch.float32)\n"
            "    with torch.no_grad():\n"
            "        ref = model(x).numpy()\n"
            "    gap = np.abs(onnx_predict(path, X) - ref)\n"
            "    return {'max_abs_diff': gap.max(), 'argmax_agreement': np.count_nonzero(\n"
            "                onnx_predict(path, X).argmax(1) == ref.argmax(1)) / len(ref), 'ok': np.all(gap <= atol)}\n"),
    },
}
