"""Implementations of ex12 a student might hand in (see ex01_variants for the contract).

Exports take seconds, so every WRONG export variant costs a full grading run: there are four, one per
mistake the chapter shows (static batch, training mode, external data, input name).
"""

_EXPORT = (
    "def export_onnx(model, example_input, path):\n"
    "{prep}"
    "    torch.onnx.export(model, (example_input,), str(path), dynamo=True,{dyn}\n"
    "                      {ext}input_names=[{name!r}], output_names=['logits'])\n")


def _export(prep="    model.eval()\n", dyn=" dynamic_shapes=({0: torch.export.Dim('batch')},),",
            ext="external_data=False, ", name="x"):
    return _EXPORT.format(prep=prep, dyn=dyn, ext=ext, name=name)


WRONG = {
    # The batch dimension is frozen to the example's 8 rows: a batch of 1 is rejected.
    "static_batch": ("test_export", {"export_onnx": _export(dyn="")}),
    # No model.eval(): Dropout nodes with training_mode=True land in the file.
    "exported_in_training_mode": ("test_export", {"export_onnx": _export(prep="")}),
    # external_data defaults to True: the weights go to model.onnx.data next to the file.
    "external_data_file": ("test_export", {"export_onnx": _export(ext="")}),
    # The input keeps the name of forward's argument instead of "x".
    "wrong_input_name": ("test_export", {"export_onnx": _export(name="input")}),
    # Uses the PyTorch model of the notebook instead of running the file.
    "predict_calls_the_torch_model": ("test_predict", {"onnx_predict": (
        "def onnx_predict(path, X):\n"
        "    with torch.no_grad():\n"
        "        return model.eval()(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()\n")}),
    "predict_returns_the_list": ("test_predict", {"onnx_predict": (
        "def onnx_predict(path, X):\n"
        "    sess = ort.InferenceSession(str(path), providers=['CPUExecutionProvider'])\n"
        "    return sess.run(None, {'x': np.asarray(X, dtype=np.float32)})\n")}),
    "predict_feeds_float64": ("test_predict", {"onnx_predict": (
        "def onnx_predict(path, X):\n"
        "    sess = ort.InferenceSession(str(path), providers=['CPUExecutionProvider'])\n"
        "    return sess.run(['logits'], {'x': X})[0]\n")}),
    "parity_without_eval": ("test_parity", {"parity_check": (
        "def parity_check(model, path, X, atol=1e-4):\n"
        "    with torch.no_grad():\n"
        "        ref = model(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()\n"
        "    got = onnx_predict(path, X)\n"
        "    d = float(np.abs(got - ref).max())\n"
        "    return {'max_abs_diff': d, 'argmax_agreement': float(np.mean(got.argmax(1) == ref.argmax(1))), 'ok': d <= atol}\n")}),
    "parity_mean_difference": ("test_parity", {"parity_check": (
        "def parity_check(model, path, X, atol=1e-4):\n"
        "    model.eval()\n"
        "    with torch.no_grad():\n"
        "        ref = model(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()\n"
        "    got = onnx_predict(path, X)\n"
        "    d = float(np.abs(got - ref).mean())\n"
        "    return {'max_abs_diff': d, 'argmax_agreement': float(np.mean(got.argmax(1) == ref.argmax(1))), 'ok': d <= atol}\n")}),
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
}
