"""Importing hand-written ONNX graphs with in-graph shape arithmetic (dynamic Reshape targets
from Shape/Gather/Slice/Concat/Mul/Div), PRelu, OneHot, ConstantOfShape and Resize: mxc's
Symbol computes what onnxruntime computes on the same file."""
import json

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

from .common import assert_close, mx_forward, onnx, run_onnx

from onnx import TensorProto, helper, numpy_helper  # noqa: E402  (after the importorskip)

I64 = np.int64


def _model(nodes, inputs, outputs, inits, path, opset=13):
    """inputs: (name, dims (a str is a dynamic dimension), elem type)."""
    graph = helper.make_graph(
        nodes, "hand", [helper.make_tensor_value_info(n, t, s) for n, s, t in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.save(model, str(path))
    return str(path)


def _compare(path, feeds, rtol=1e-5):
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    want = run_onnx(path, feeds)
    got = mx_forward(sym, {**arg, **aux}, feeds)
    for g, w in zip(got, want):
        assert_close(g, w, rtol)
    return sym


def _reshape_codes(sym):
    return [n["attrs"]["shape"] for n in json.loads(sym.tojson())["nodes"]
            if n["op"] == "Reshape"]


F = TensorProto.FLOAT


def test_reshape_to_batch_and_rest(rng, tmp_path):
    """PyTorch's x.view(x.size(0), -1) with a dynamic batch: Shape -> Gather -> Unsqueeze ->
    Concat -> Reshape becomes reshape(0, -1); the same file runs for any batch."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    inits = {"zero": np.array(0, I64), "ax0": np.array([0], I64), "minus1": np.array([-1], I64)}
    path = _model(nodes, [("x", ["N", 3, 4, 5], F)], ["y"], inits, tmp_path / "view.onnx")
    for n in (2, 5):
        sym = _compare(path, {"x": rng.normal(size=(n, 3, 4, 5)).astype(np.float32)})
    assert _reshape_codes(sym) == ["(0, -1)"]


def test_reshape_merge_and_split_codes(rng, tmp_path):
    """The pieces mxc's exporter writes for MXNet's -3 (merge two dimensions), -2 (the rest)
    and -4 (split one): they import back as those codes."""
    big = np.iinfo(I64).max
    c = {"b0": [0], "e1": [1], "b1": [1], "e2": [2], "b2": [2], "e3": [3], "b3": [3],
         "end": [big], "two": [2]}
    inits = {k: np.array(v, I64) for k, v in c.items()}
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "b0", "e1"], ["d0"]),
             helper.make_node("Slice", ["s", "b1", "e2"], ["d1"]),
             helper.make_node("Slice", ["s", "b2", "e3"], ["d2"]),
             helper.make_node("Slice", ["s", "b3", "end"], ["rest"]),
             # (N, C, H, W) -> (N * C, H, W): -3, -2
             helper.make_node("Mul", ["d0", "d1"], ["nc"]),
             helper.make_node("Slice", ["s", "b2", "end"], ["rest3"]),
             helper.make_node("Concat", ["nc", "rest3"], ["t1"], axis=0),
             helper.make_node("Reshape", ["x", "t1"], ["y1"]),
             # (N, C, H, W) -> (N, 2, C / 2, H, W): 0, -4, 2, -1, -2
             helper.make_node("Div", ["d1", "two"], ["half"]),
             helper.make_node("Concat", ["d0", "two", "half", "d2", "rest"], ["t2"], axis=0),
             helper.make_node("Reshape", ["x", "t2"], ["y2"]),
             # (N, C, H, W) -> (N, C / 2, 2, H * W): 0, -4, -1, 2, -3
             helper.make_node("Mul", ["d2", "rest"], ["hw"]),
             helper.make_node("Concat", ["d0", "half", "two", "hw"], ["t3"], axis=0),
             helper.make_node("Reshape", ["x", "t3"], ["y3"])]
    path = _model(nodes, [("x", ["N", 4, 3, 5], F)], ["y1", "y2", "y3"], inits,
                  tmp_path / "codes.onnx")
    for n in (1, 3):
        sym = _compare(path, {"x": rng.normal(size=(n, 4, 3, 5)).astype(np.float32)})
    assert _reshape_codes(sym) == ["(-3, 0, 0)", "(0, -4, 2, -1, 0, 0)", "(0, -4, -1, 2, -3)"]


def test_exported_dynamic_reshape_round_trips(rng, tmp_path):
    """mxc's own export of reshape(-3, -2) / reshape(0, -4, 2, -1, -2) with a dynamic batch
    imports back and computes the same."""
    x = mx.sym.var("x")
    y = mx.sym.Group([mx.sym.reshape(x, shape=(-3, -2)),
                      mx.sym.reshape(x, shape=(0, -4, 2, -1, -2))])
    path = str(tmp_path / "rt.onnx")
    mx.onnx.export_model(y, {}, [(1, 4, 3, 5)], np.float32, path, dynamic=True,
                         dynamic_input_shapes=[(None, 4, 3, 5)])
    feed = {"x": rng.normal(size=(3, 4, 3, 5)).astype(np.float32)}
    sym = _compare(path, feed)
    want = mx_forward(y, {}, feed)
    for g, w in zip(mx_forward(sym, {}, feed), want):
        np.testing.assert_array_equal(g, w)


def test_static_shape_arithmetic_folds(rng, tmp_path):
    """With every dimension known, the shape arithmetic folds into constants (no operator)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ReduceProd", ["s"], ["p"], keepdims=1),
             helper.make_node("Reshape", ["x", "p"], ["y"])]
    path = _model(nodes, [("x", [2, 3, 4], F)], ["y"], {}, tmp_path / "fold.onnx")
    sym = _compare(path, {"x": rng.normal(size=(2, 3, 4)).astype(np.float32)})
    assert _reshape_codes(sym) == ["(24,)"]


def test_unknown_dimension_used_as_a_number_is_a_clear_error(tmp_path):
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Tile", ["x", "s"], ["y"])]
    path = _model(nodes, [("x", ["N", 3], F)], ["y"], {}, tmp_path / "tile.onnx")
    with pytest.raises(MXNetError, match=r"Tile .*dimension 0 of 'x'.*not known"):
        mx.contrib.onnx.import_model(path)


@pytest.mark.parametrize("slope_shape", [(3, 1, 1), (1,), (5,)])
def test_prelu(rng, tmp_path, slope_shape):
    """Per channel (MXNet's LeakyReLU prelu), one slope, and a slope along the last axis."""
    slope = rng.uniform(0.1, 0.9, slope_shape).astype(np.float32)
    path = _model([helper.make_node("PRelu", ["x", "slope"], ["y"])], [("x", [2, 3, 4, 5], F)],
                  ["y"], {"slope": slope}, tmp_path / "prelu.onnx")
    sym = _compare(path, {"x": rng.normal(size=(2, 3, 4, 5)).astype(np.float32)})
    ops = {n["op"] for n in json.loads(sym.tojson())["nodes"]}
    assert ("LeakyReLU" in ops) == (slope_shape != (5,))


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_one_hot(rng, tmp_path, axis):
    """Negative indices count from the end, as ONNX says; values and axis as given."""
    idx = np.array([[0, 3, -1], [2, -4, 1]], I64)
    inits = {"depth": np.array([4], I64), "values": np.array([0.5, 3.0], np.float32)}
    path = _model([helper.make_node("OneHot", ["i", "depth", "values"], ["y"], axis=axis)],
                  [("i", [2, 3], TensorProto.INT64)], ["y"], inits, tmp_path / "oh.onnx")
    _compare(path, {"i": idx})


def test_constant_of_shape(rng, tmp_path):
    """A constant shape and the shape of a tensor of dynamic batch."""
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5])
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], value=value),
             helper.make_node("Add", ["x", "c"], ["y"]),
             helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["z"], value=value),
             helper.make_node("Mul", ["x", "z"], ["y2"])]
    path = _model(nodes, [("x", ["N", 3], F)], ["y", "y2"], {"shape": np.array([1, 3], I64)},
                  tmp_path / "cos.onnx")
    for n in (2, 4):
        _compare(path, {"x": rng.normal(size=(n, 3)).astype(np.float32)})


@pytest.mark.parametrize("mode,coord,nearest,scales,sizes", [
    ("nearest", "half_pixel", "round_prefer_floor", [1, 1, 2, 2], None),
    ("nearest", "asymmetric", "floor", None, [2, 3, 12, 15]),
    ("nearest", "pytorch_half_pixel", "round_prefer_ceil", [1, 1, 3, 3], None),
    ("linear", "align_corners", None, None, [2, 3, 7, 11]),
    ("linear", "half_pixel", None, [1, 1, 2, 2], None),
    ("linear", "pytorch_half_pixel", None, None, [2, 3, 9, 6]),
])
def test_resize(rng, tmp_path, mode, coord, nearest, scales, sizes):
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if nearest:
        attrs["nearest_mode"] = nearest
    inits = {"roi": np.zeros(0, np.float32), "scales": np.array(scales or [], np.float32)}
    ins = ["x", "roi", "scales"]
    if sizes:
        inits["sizes"] = np.array(sizes, I64)
        ins.append("sizes")
    path = _model([helper.make_node("Resize", ins, ["y"], **attrs)], [("x", [2, 3, 4, 5], F)],
                  ["y"], inits, tmp_path / "resize.onnx")
    sym = _compare(path, {"x": rng.normal(size=(2, 3, 4, 5)).astype(np.float32)}, 1e-4)
    ops = {n["op"] for n in json.loads(sym.tojson())["nodes"]}
    assert ops & {"UpSampling", "_contrib_BilinearResize2D"}


def test_resize_refuses_what_mxnet_cannot_do(tmp_path):
    inits = {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 1.5, 1.5], np.float32)}
    path = _model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="nearest")],
                  [("x", [1, 1, 4, 4], F)], ["y"], inits, tmp_path / "r.onnx")
    with pytest.raises(MXNetError, match="one integer scale"):
        mx.contrib.onnx.import_model(path)
    path = _model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="cubic")],
                  [("x", [1, 1, 4, 4], F)], ["y"], inits, tmp_path / "c.onnx")
    with pytest.raises(MXNetError, match="mode 'cubic'"):
        mx.contrib.onnx.import_model(path)
    inits["scales"] = np.array([1, 1, 1.3, 1.3], np.float32)
    path = _model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear")],
                  [("x", [1, 1, 4, 4], F)], ["y"], inits, tmp_path / "l.onnx")
    with pytest.raises(MXNetError, match="does not give whole sizes"):
        mx.contrib.onnx.import_model(path)


def test_upsample_nearest_opset9(rng, tmp_path):
    inits = {"scales": np.array([1, 1, 2, 2], np.float32)}
    path = _model([helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest")],
                  [("x", [2, 3, 4, 5], F)], ["y"], inits, tmp_path / "up.onnx", opset=9)
    _compare(path, {"x": rng.normal(size=(2, 3, 4, 5)).astype(np.float32)})
