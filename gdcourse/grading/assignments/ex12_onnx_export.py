"""ex12, ONNX export: the course's reference, the probes, the case builders and the visible cases.

Nothing comes out of the sandbox as a file. The export probe builds the model from a seed, hands it
(in training mode, as straight after a training loop) to the student's ``export_onnx`` with a path in a
fresh temporary folder, and reports what the folder holds afterwards: the names of the files in it and
the bytes of the file at ``path`` as a ``np.uint8`` array. The trusted side parses those bytes with
``onnx.load_from_string`` (a file that refers to external data is refused, never followed), refuses
operators outside the standard ONNX domain and control flow, and runs the file with ONNX Runtime in a
sandbox of its own (:mod:`gdcourse.grading.contained`: a crafted graph cannot take the grader down),
on its own inputs of several batch sizes, with graph optimizations off
(``ORT_DISABLE_ALL``: a Dropout left in training mode shows) and on (``ORT_ENABLE_ALL``).

Tolerances (stated in the exercise):

- exported file against ``model.eval()`` in PyTorch (float32): ``atol = rtol = 1e-4`` (``EXPORT_TOL``);
- ``onnx_predict`` against the file's function computed in float64 from its float32 weights:
  ``rtol = atol = 1e-4`` (``PREDICT_TOL``);
- ``parity_check``'s ``max_abs_diff`` against the grader's own: ``rtol = 1e-3``, ``atol = 1e-5``
  (``PARITY_TOL``); ``argmax_agreement`` within ``1e-9``; ``ok`` exactly, as a bool.

The dynamo exporter is required. Its file is recognised by behaviour, not by warnings: it records on the
graph's nodes where in the PyTorch program each came from (metadata keys ``pkg.torch.onnx.*``), which
the legacy TorchScript exporter (``dynamo=False``) never writes.

The files given to ``onnx_predict`` and ``parity_check`` are built here by hand (Gemm, Relu; no PyTorch
exporter involved, so those cases cost milliseconds): the eval-mode function of the probe's model (batch
norm folded into the linear layer before it), possibly with its last bias shifted, or another model's.
"""

from __future__ import annotations

import contextlib
import copy
import io
import shutil
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import TensorProto, helper, numpy_helper

from gdcourse.grading import contained
from gdcourse.grading.assignments import onnx_graph
from gdcourse.grading.cases import Case, Fail, close, diagnose, kind, number, probe, require, resembles
from gdcourse.grading.wire import Tensor
from gdcourse.models import mlp

EXPORT_TOL = {"rtol": 1e-4, "atol": 1e-4}
PREDICT_TOL = {"rtol": 1e-4, "atol": 1e-4}
PARITY_TOL = {"rtol": 1e-3, "atol": 1e-5}
MAX_FILE_BYTES = 32 * 2**20  # a tiny MLP's file is kilobytes
MAX_NODES = 2000
DYNAMO_MARK = "pkg.torch.onnx."  # metadata the dynamo exporter writes on the nodes it makes
STANDARD_DOMAINS = ("", "ai.onnx")
CONTROL_FLOW = ("Loop", "Scan", "If", "SequenceMap")


# --- the reference ----------------------------------------------------------------------

def export_onnx(model, example_input, path):
    model.eval()  # dropout off, batch norm on its running statistics: the function to serve
    batch = torch.export.Dim("batch")
    torch.onnx.export(model, (example_input,), str(path), dynamo=True, dynamic_shapes=({0: batch},),
                      external_data=False, input_names=["x"], output_names=["logits"], verbose=False)
    return path


def onnx_predict(path, X):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(["logits"], {"x": np.asarray(X, dtype=np.float32)})[0]


def parity_check(model, path, X, atol=1e-4):
    model.eval()
    with torch.no_grad():
        ref = model(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()
    got = onnx_predict(path, X)
    max_abs_diff = float(np.max(np.abs(got - ref)))
    agreement = float(np.mean(got.argmax(axis=1) == ref.argmax(axis=1)))
    return {"max_abs_diff": max_abs_diff, "argmax_agreement": agreement, "ok": max_abs_diff <= atol}


REFERENCE = {"export_onnx": export_onnx, "onnx_predict": onnx_predict, "parity_check": parity_check}


# --- building (both sides: the trusted side rebuilds the same model and file from the same data) ----------

def classifier(seed, d, hidden, k, dropout) -> torch.nn.Sequential:
    """mlp(d, hidden, k) with batch norm and dropout, built under ``torch.manual_seed(seed)`` (torch's global
    generator left as it was), running statistics moved away from 0 and 1 so that the eval and train functions
    differ clearly; returned in training mode, as straight after a training loop."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        net = mlp(int(d), [int(h) for h in hidden], int(k), dropout=float(dropout), batch_norm=True)
        with torch.no_grad():
            for layer in net:
                if isinstance(layer, torch.nn.BatchNorm1d):
                    layer.running_mean.normal_(0.0, 0.5)
                    layer.running_var.uniform_(0.5, 2.0)
                    layer.weight.uniform_(0.5, 1.5)
                    layer.bias.normal_(0.0, 0.2)
    return net.train()


def eval_logits(net, X) -> np.ndarray:
    """``model.eval()``'s logits (float32) on ``X`` cast to float32, on a copy: ``net`` is left as it is."""
    with torch.no_grad():
        return copy.deepcopy(net).eval()(torch.from_numpy(np.asarray(X, dtype=np.float32))).numpy()


def folded_layers(net) -> list:
    """The eval-mode function of an :func:`classifier` as ``[(W, b), ...]`` (float64, W of shape (out, in)),
    batch norm folded into the linear layer before it; ReLU between layers, dropout gone."""
    layers = []
    for layer in net:
        if isinstance(layer, torch.nn.Linear):
            layers.append((layer.weight.detach().double().numpy().copy(), layer.bias.detach().double().numpy().copy()))
        elif isinstance(layer, torch.nn.BatchNorm1d):
            g = (layer.weight.detach().double() / torch.sqrt(layer.running_var.double() + layer.eps)).numpy()
            W, b = layers[-1]
            layers[-1] = (W * g[:, None], (b - layer.running_mean.double().numpy()) * g + layer.bias.detach().double().numpy())
    return layers


def mlp_file_bytes(layers) -> bytes:
    """An ONNX file built by hand (no PyTorch involved): Gemm -> Relu -> ... -> Gemm with the float32 weights of
    ``layers``; input "x" (n, in), output "logits" (n, out), the batch dimension dynamic."""
    nodes, weights, current = [], [], "x"
    for i, (W, b) in enumerate(layers):
        weights += [numpy_helper.from_array(np.asarray(W, dtype=np.float32), f"W{i}"),
                    numpy_helper.from_array(np.asarray(b, dtype=np.float32), f"b{i}")]
        out = "logits" if i == len(layers) - 1 else f"h{i}"
        nodes.append(helper.make_node("Gemm", [current, f"W{i}", f"b{i}"], [out], transB=1))
        if i < len(layers) - 1:
            nodes.append(helper.make_node("Relu", [out], [f"r{i}"]))
            current = f"r{i}"
    graph = helper.make_graph(
        nodes, "by_hand", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", np.shape(layers[0][0])[1]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", np.shape(layers[-1][0])[0]])], weights)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="gdcourse")
    proto.ir_version = 8
    return proto.SerializeToString()


def file_layers(spec: dict) -> list:
    """The layers of a parity file: ``{"seed", "d", "hidden", "k", "dropout"}`` of the model whose eval-mode
    function it holds, and ``"shift"``, added to the last bias (None: none)."""
    layers = folded_layers(classifier(spec["seed"], spec["d"], spec["hidden"], spec["k"], spec["dropout"]))
    if spec.get("shift") is not None:
        W, b = layers[-1]
        layers[-1] = (W, b + np.asarray(spec["shift"], dtype=np.float64))
    return layers


def forward(layers, X) -> np.ndarray:
    """What a hand-built file computes, in float64 from its float32 weights, on ``X`` cast to float32."""
    h = np.asarray(X, dtype=np.float32).astype(np.float64)
    for i, (W, b) in enumerate(layers):
        h = h @ np.asarray(W, np.float32).astype(np.float64).T + np.asarray(b, np.float32).astype(np.float64)
        if i < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h


def _state(net) -> list:
    return [t.detach().clone() for t in net.state_dict().values()]


@contextlib.contextmanager
def _folder(subfolder: str = ""):
    root = Path(tempfile.mkdtemp(prefix="gdcourse-ex12-"))
    try:
        folder = root / subfolder if subfolder else root
        folder.mkdir(parents=True, exist_ok=True)
        yield root, folder
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _path(folder: Path, filename: str, as_str: bool):
    path = folder / filename
    return str(path) if as_str else path


# --- probes (in the sandbox, and in the student's kernel for the self-check) ------------------------

def export_probe(fn, model_spec, example, filename="model.onnx", subfolder="", as_str=False, mode="train"):
    """``export_onnx(model, example_input, path)`` with the model of ``model_spec`` (handed over in ``mode``),
    ``example`` as a float32 tensor and ``path`` in a fresh folder (a ``str`` if ``as_str``, else a
    ``pathlib.Path``). Reports the files in the folder afterwards (relative names), the bytes of the file
    at ``path`` (None if there is none), and whether the model's state or the example was changed."""
    model = classifier(**model_spec)
    model.train(mode == "train")
    before = _state(model)
    example_t = torch.tensor(np.asarray(example, dtype=np.float32))
    kept = example_t.clone()
    with _folder(subfolder) as (root, folder):
        path = folder / filename
        with contextlib.redirect_stdout(io.StringIO()):  # the exporter's progress lines
            fn(model, example_t, _path(folder, filename, as_str))
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        data = None
        if path.is_file():
            size = path.stat().st_size
            data = np.frombuffer(path.read_bytes(), dtype=np.uint8).copy() if size <= MAX_FILE_BYTES else int(size)
        after = _state(model)
    return {"files": files, "file": str(path.relative_to(root)), "bytes": data,
            "state_changed": any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(before, after)),
            "example_changed": not torch.equal(example_t, kept)}


def predict_probe(fn, layers, X, as_str=False, subfolder="", order="C"):
    """``onnx_predict(path, X)`` on a file built by hand from ``layers``, ``X`` as sent (in Fortran order if
    ``order == "F"``). Reports what it returned and ``X`` afterwards."""
    X = np.asfortranarray(X) if order == "F" else np.array(X)
    with _folder(subfolder) as (_, folder):
        (folder / "model.onnx").write_bytes(mlp_file_bytes(layers))
        out = fn(_path(folder, "model.onnx", as_str), X)
    return {"value": out, "x_after": X}


def parity_probe(fn, model_spec, file_spec, X, atol=None, mode="train", as_str=False):
    """``parity_check(model, path, X[, atol=atol])``, the model of ``model_spec`` handed over in ``mode``, the file
    built by hand from ``file_spec`` (:func:`file_layers`). Reports what it returned, ``X`` afterwards and
    whether the model's weights or running statistics changed (its mode may)."""
    model = classifier(**model_spec)
    model.train(mode == "train")
    before = _state(model)
    X = np.array(X)
    with _folder() as (_, folder):
        (folder / "model.onnx").write_bytes(mlp_file_bytes(file_layers(file_spec)))
        path = _path(folder, "model.onnx", as_str)
        out = fn(model, path, X) if atol is None else fn(model, path, X, atol=atol)
    after = _state(model)
    return {"value": out, "x_after": X,
            "state_changed": any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(before, after))}


# --- reading an exported file (trusted side) --------------------------------------------

def _tensors(graph):
    """Every TensorProto a graph holds (initializers, constants, nested graphs)."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        yield from _attribute_tensors(node)


def _attribute_tensors(node):
    for a in node.attribute:
        if a.HasField("t"):
            yield a.t
        yield from a.tensors
        if a.HasField("sparse_tensor"):
            yield a.sparse_tensor.values
            yield a.sparse_tensor.indices
        if a.HasField("g"):
            yield from _tensors(a.g)
        for g in a.graphs:
            yield from _tensors(g)


def _nodes(graph):
    for node in graph.node:
        yield node
        for a in node.attribute:
            if a.HasField("g"):
                yield from _nodes(a.g)
            for g in a.graphs:
                yield from _nodes(g)


def _external(proto) -> bool:
    tensors = list(_tensors(proto.graph))
    for f in proto.functions:
        for node in f.node:
            tensors += list(_attribute_tensors(node))
    return any(t.data_location == TensorProto.EXTERNAL or len(t.external_data) > 0 for t in tensors)


def _all_nodes(proto) -> list:
    nodes = list(_nodes(proto.graph))
    for f in proto.functions:
        nodes += list(f.node)
    return nodes


def _training_dropout(proto) -> bool:
    """A Dropout whose training_mode input is a constant True: the model was exported in training mode."""
    consts = {t.name: t for t in proto.graph.initializer}
    consts.update({n.output[0]: a.t for n in proto.graph.node if n.op_type == "Constant"
                   for a in n.attribute if a.name == "value"})
    for node in _all_nodes(proto):
        if node.op_type == "Dropout":
            if len(node.input) < 3 or not node.input[2]:
                continue
            t = consts.get(node.input[2])
            if t is None or bool(np.all(numpy_helper.to_array(t))):
                return True
    return False


def exported_file(report, filename: str, visible: bool = False):
    """(the parsed model, its bytes) from what the export probe reported; :class:`Fail` naming what is wrong."""
    require(isinstance(report, dict) and "files" in report and "bytes" in report,
            "export_onnx's probe reported nothing readable")
    files, data, name = report["files"], report["bytes"], report.get("file", filename)
    require(data is not None, "export_onnx wrote no file at `path`" + (f" (the folder holds {list(files)})" if visible
                                                                        else "") + ": pass path as torch.onnx.export's f")
    require(isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 1,
            "the exported file is far too large for a small MLP (more than 32 MiB)")
    others = [f for f in files if f != name]
    require(not others, (f"export_onnx wrote {list(files)}, expected only {name!r}" if visible else
                         "export_onnx wrote other files next to the file")
            + ": nothing may be written next to it. A second file is the weights as external data: "
              "pass external_data=False")
    data = data.tobytes()
    try:
        proto = onnx.load_from_string(data)
    except Exception:
        raise Fail("the file at `path` is not an ONNX model", summary="the file at `path` is not an ONNX model") from None
    require(not _external(proto), "the file refers to external data (its weights are not inside it): "
                                  "pass external_data=False to get one self-contained file")
    nodes = _all_nodes(proto)
    local = {f.domain for f in proto.functions}
    require(len(nodes) <= MAX_NODES and all(n.domain in STANDARD_DOMAINS or n.domain in local for n in nodes)
            and not any(n.op_type in CONTROL_FLOW for n in nodes),
            "the file uses operators an MLP's export never has (another domain, or control flow)")
    marked = any(p.key.startswith(DYNAMO_MARK) for n in nodes for p in n.metadata_props)
    require(marked, "the file was not written by the dynamo exporter: call torch.onnx.export(..., dynamo=True). "
                    "The legacy TorchScript exporter (dynamo=False) is not accepted")
    return proto, data


def export_case(model_spec, example, X, batches, name, filename="model.onnx", subfolder="", as_str=False,
                mode="train", visible=False):
    """export_onnx on the model of ``model_spec``; the file must hold its eval-mode function, input "x",
    output "logits", and serve every batch size in ``batches`` (rows of ``X``)."""
    X = np.asarray(X, dtype=np.float32)

    def check(r):
        report = r.value
        proto, data = exported_file(report, filename, visible)
        want_all = eval_logits(classifier(**model_spec), X)
        try:  # the student's graph runs in a sandbox of its own, never in the grader's process
            ran = contained.call(f"{onnx_graph.__name__}:run_graph", np.frombuffer(data, np.uint8), X, list(batches))
        except contained.ContainedError:
            raise Fail("ONNX Runtime could not run the exported file within the grader's limits",
                       summary="ONNX Runtime could not run the exported file within the grader's limits") from None
        require(isinstance(ran, dict) and ran.get("loaded") is True, "ONNX Runtime cannot load the exported file")
        inputs, outputs = ran["names"]
        require(inputs == ["x"], f"the file's input is named {inputs}, expected ['x']: pass input_names=['x']")
        require(outputs == ["logits"],
                f"the file's output is named {outputs}, expected ['logits']: pass output_names=['logits']")
        for (level_name, _), runs in zip(onnx_graph.LEVELS, ran["runs"]):
            for b, out in zip(batches, runs):
                if out is None:
                    message = (f"the exported file rejects a batch of {b} row(s): the batch dimension was frozen to the "
                               "example's size. Declare it dynamic: dynamic_shapes=({0: torch.export.Dim('batch')},)")
                    raise Fail(message, summary="the exported file rejects other batch sizes: the batch dimension "
                                                "is not dynamic")
                diagnose(lambda: close(out, want_all[:b], **EXPORT_TOL,
                                       what=f"the file's logits on a batch of {b} {level_name}"),
                         [(lambda: _training_dropout(proto),
                           "the file holds Dropout in training mode: the model was exported in training mode. Call "
                           "model.eval() before exporting (ONNX Runtime's default optimizations happen to remove "
                           "the Dropout nodes, so only a run with them off shows it)")])
        require(isinstance(report.get("state_changed"), bool) and not report["state_changed"],
                "export_onnx changed the model's weights or running statistics")
        require(report.get("example_changed") is False, "export_onnx changed example_input")
    return Case("test_export", name, probe("export_onnx", "export_probe", model_spec, np.asarray(example, np.float32),
                                           filename=filename, subfolder=subfolder, as_str=as_str, mode=mode),
                check, visible)


# --- onnx_predict and parity_check ------------------------------------------------------------------

def _unchanged(report, X, what="X"):
    after = report.get("x_after") if isinstance(report, dict) else None
    same = isinstance(after, np.ndarray) and after.dtype == np.asarray(X).dtype and np.array_equal(after, X)
    require(same, f"{what} was modified: cast into a new array instead of changing the one passed in")


def predict_case(layers, X, name, as_str=False, subfolder="", order="C", visible=False):
    """onnx_predict on a hand-built file of ``layers``: a NumPy float32 array of shape (n, k), the file's function."""
    layers = [(np.asarray(W, np.float32), np.asarray(b, np.float32)) for W, b in layers]
    X = np.asarray(X)

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "value" in report, "onnx_predict's probe reported nothing readable")
        got = report["value"]
        if isinstance(got, (list, tuple)) and len(got) == 1 and isinstance(got[0], np.ndarray):
            raise Fail(f"onnx_predict returned {kind(got)} holding one array: session.run returns a list with one "
                       "array per output, so take its first element",
                       summary="onnx_predict returned session.run's list instead of its one array")
        require(isinstance(got, np.ndarray), f"onnx_predict should return a NumPy array, got {kind(got)}"
                + (": call .numpy() on it" if isinstance(got, Tensor) else ""))
        want = forward(layers, X)
        require(got.shape == want.shape, f"onnx_predict returned shape {got.shape}, expected {want.shape} "
                                         "(one row of logits per row of X, a batch of 1 included)"
                if visible else "onnx_predict returns the wrong shape (one row of logits per row of X)")
        require(got.dtype == np.float32, f"onnx_predict returned {got.dtype}, expected float32 (what ONNX Runtime "
                                         "computes): return its output as it is")
        diagnose(lambda: close(got, want, **PREDICT_TOL, what="onnx_predict(path, X)"),
                 [(lambda: resembles(got, np.asarray(X, np.float64) @ np.asarray(layers[0][0], np.float64).T)
                   if len(layers) == 1 else False, "the bias is missing: run the file itself")])
        _unchanged(report, X)
    return Case("test_predict", name, probe("onnx_predict", "predict_probe", layers, X, as_str=as_str,
                                            subfolder=subfolder, order=order), check, visible)


def _expected_report(model_spec, file_spec, X, atol):
    data = mlp_file_bytes(file_layers(file_spec))
    (onnx_out,) = onnx_graph.session(data, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(
        ["logits"], {"x": np.asarray(X, dtype=np.float32)})
    ref = eval_logits(classifier(**model_spec), X)
    diff = float(np.max(np.abs(onnx_out.astype(np.float64) - ref.astype(np.float64))))
    agree = float(np.mean(onnx_out.argmax(axis=1) == ref.argmax(axis=1)))
    return diff, agree, diff <= atol, onnx_out, ref


def parity_case(model_spec, file_spec, X, name, atol=None, mode="train", as_str=False, visible=False):
    """parity_check of the model of ``model_spec`` against a hand-built file of ``file_spec``, on ``X``."""
    X = np.asarray(X)

    def check(r):
        report = r.value
        require(isinstance(report, dict) and "value" in report, "parity_check's probe reported nothing readable")
        got = report["value"]
        require(isinstance(got, dict) and {"max_abs_diff", "argmax_agreement", "ok"} <= set(got),
                f"parity_check should return a dict with max_abs_diff, argmax_agreement and ok, got {kind(got)}"
                + (f" with keys {sorted(map(str, got))}" if isinstance(got, dict) else ""))
        limit = 1e-4 if atol is None else atol
        diff, agree, ok, onnx_out, ref = _expected_report(model_spec, file_spec, X, limit)
        err = np.abs(onnx_out.astype(np.float64) - ref.astype(np.float64))
        diagnose(lambda: close(number(got["max_abs_diff"], "max_abs_diff"), diff, **PARITY_TOL, what="max_abs_diff"),
                 [(lambda: resembles(got["max_abs_diff"], err.mean(), rtol=1e-3, atol=1e-7) and diff > 1e-3,
                   "max_abs_diff is the mean difference: report the LARGEST absolute difference over all logits"),
                  (lambda: number(got["max_abs_diff"]) > diff + 1e-3,
                   "max_abs_diff is far too large: run the PyTorch side with model.eval() (dropout off, batch norm on "
                   "its running statistics), under torch.no_grad(), on X as float32")])
        a = number(got["argmax_agreement"], "argmax_agreement")
        require(abs(a - agree) <= 1e-9, f"argmax_agreement should be {agree:g} (the fraction of rows whose argmax "
                                        f"agrees), got {a:g}" if visible else
                "argmax_agreement is wrong: the fraction of rows whose predicted class agrees")
        flag = got["ok"]
        require(isinstance(flag, (bool, np.bool_)), f"ok should be a bool, got {kind(flag)}")
        require(bool(flag) == ok, f"ok should be {ok}: max_abs_diff <= atol with atol = {limit:g}" if visible else
                "ok is wrong: it is max_abs_diff <= atol, with the atol passed in (1e-4 by default)")
        _unchanged(report, X)
        require(report.get("state_changed") is False,
                "parity_check changed the model's weights or running statistics (a forward pass in training mode "
                "updates batch norm's running statistics): switch to eval mode first")
    return Case("test_parity", name, probe("parity_check", "parity_probe", model_spec, file_spec, X, atol=atol,
                                           mode=mode, as_str=as_str), check, visible)


def spec(seed, d, hidden, k, dropout, shift=None) -> dict:
    out = {"seed": int(seed), "d": int(d), "hidden": [int(h) for h in hidden], "k": int(k), "dropout": float(dropout)}
    if shift is not None:
        out["shift"] = [float(s) for s in shift]
    return out


def model_of(s: dict) -> dict:
    return {key: s[key] for key in ("seed", "d", "hidden", "k", "dropout")}


# --- the visible cases --------------------------------------------------------------------

def visible():
    X = np.random.default_rng(0).standard_normal((50, 64)).astype(np.float32)
    yield export_case(spec(0, 64, [32], 10, 0.5), X[:8], X, (1, 3, 8, 50),
                      "a model handed over in training mode, example of 8 rows; batches of 1, 3, 8 and 50 rows, "
                      "with ONNX Runtime's optimizations off and on", visible=True)
    rng = np.random.default_rng(3)
    W, b = rng.standard_normal((3, 4)), rng.standard_normal(3)
    X = rng.standard_normal((5, 4))
    yield predict_case([(W, b)], X.astype(np.float32), "a file built by hand (X @ W.T + b), X float32", visible=True)
    yield predict_case([(W, b)], X, "the same file, X float64 (cast it to float32 for ONNX Runtime)", visible=True)
    X = np.random.default_rng(5).standard_normal((64, 4)).astype(np.float32)
    good = spec(5, 4, [6], 3, 0.5)
    yield parity_case(good, good, X, "a file that computes the model's eval-mode function (model handed over in "
                                     "training mode): max_abs_diff < 1e-4, ok, agreement 1", visible=True)
    bad = spec(6, 4, [6], 3, 0.5)
    yield parity_case(bad, {**bad, "shift": [0.5, 0.0, 0.0]}, X,
                      "a file whose first logit is shifted by 0.5: the largest difference, ok False", visible=True)
