"""Importing ONNX models written by hand with onnx.helper (not by mxc's exporter): mxc's
Symbol computes what onnxruntime computes on the same file."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

from .common import assert_close, mx_forward, onnx, run_onnx

from onnx import TensorProto, helper, numpy_helper  # noqa: E402  (after the importorskip)


def _model(nodes, inputs, outputs, inits, path):
    graph = helper.make_graph(
        nodes, "hand", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                        for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, str(path))
    return str(path)


def _compare(path, feeds):
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    for got, want in zip(mx_forward(sym, {**arg, **aux}, feeds), run_onnx(path, feeds)):
        assert_close(got, want, 1e-5)
    return sym, arg, aux


def test_import_cnn(rng, tmp_path):
    f32 = np.float32
    inits = {"w": rng.normal(0, 0.3, (4, 3, 3, 3)).astype(f32),
             "b": rng.normal(0, 1, 4).astype(f32),
             "scale": rng.uniform(0.5, 1.5, 4).astype(f32), "bias": rng.normal(0, 1, 4).astype(f32),
             "mean": rng.normal(0, 1, 4).astype(f32), "var": rng.uniform(0.5, 2, 4).astype(f32),
             "fw": rng.normal(0, 0.3, (5, 4)).astype(f32), "fb": rng.normal(0, 1, 5).astype(f32),
             "half": np.array(0.5, f32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"],
                              epsilon=1e-3),
             helper.make_node("LeakyRelu", ["n"], ["r"], alpha=0.2),
             helper.make_node("AveragePool", ["r"], ["p"], kernel_shape=[2, 2],
                              count_include_pad=0, pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Mul", ["p", "half"], ["m"]),
             helper.make_node("GlobalMaxPool", ["m"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y0"], transB=1),
             helper.make_node("Softmax", ["y0"], ["y"], axis=-1)]
    path = _model(nodes, [("x", [2, 3, 9, 9])], ["y"], inits, tmp_path / "cnn.onnx")
    x = rng.uniform(-1, 1, (2, 3, 9, 9)).astype(f32)
    sym, arg, aux = _compare(path, {"x": x})
    assert sorted(aux) == ["mean", "var"] and "half" not in arg   # the scalar is an attribute


def test_import_shape_ops(rng, tmp_path):
    i64 = np.int64
    inits = {"shape": np.array([0, -1, 2], i64), "axes": np.array([1], i64),
             "starts": np.array([0, 3], i64), "ends": np.array([2, -1], i64),
             "sl_axes": np.array([0, 1], i64), "steps": np.array([1, 2], i64),
             "lo": np.array(-0.5, np.float32), "w": rng.normal(0, 1, (2, 3)).astype(np.float32)}
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),      # (2, 6, 4)
             helper.make_node("Reshape", ["t", "shape"], ["r"]),                 # (2, 12, 2)
             helper.make_node("Unsqueeze", ["r", "axes"], ["u"]),                # (2, 1, 12, 2)
             helper.make_node("Squeeze", ["u", "axes"], ["s"]),                  # (2, 12, 2)
             helper.make_node("Slice", ["s", "starts", "ends", "sl_axes", "steps"], ["sl"]),
             helper.make_node("Clip", ["sl", "lo"], ["c"]),
             helper.make_node("MatMul", ["c", "w"], ["mm"]),
             helper.make_node("ReduceMean", ["mm"], ["y"], axes=[1], keepdims=0),
             helper.make_node("Concat", ["x", "x"], ["y2"], axis=1),
             helper.make_node("Exp", ["y2"], ["y3"])]
    path = _model(nodes, [("x", [2, 4, 6])], ["y", "y3"], inits, tmp_path / "shape.onnx")
    x = rng.uniform(-1, 1, (2, 4, 6)).astype(np.float32)
    _compare(path, {"x": x})


def test_import_refuses_what_it_cannot_map(tmp_path):
    hard = _model([helper.make_node("Hardmax", ["x"], ["y"])], [("x", [2, 3])], ["y"], {},
                  tmp_path / "hard.onnx")
    with pytest.raises(MXNetError, match="operator 'Hardmax'"):
        mx.contrib.onnx.import_model(hard)
    w = np.ones((2, 1, 3, 3), np.float32)
    asym = _model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[0, 1, 1, 0])],
                  [("x", [1, 1, 5, 5])], ["y"], {"w": w}, tmp_path / "asym.onnx")
    with pytest.raises(MXNetError, match=r"Conv .*asymmetric pads \[0, 1, 1, 0\]"):
        mx.contrib.onnx.import_model(asym)
