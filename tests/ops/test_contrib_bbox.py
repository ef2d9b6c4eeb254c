"""Bounding-box contrib operators: box_nms, box_iou, bipartite_matching, box_encode, box_decode
against what MXNet 1.9.1 computed (tests/data/make_contrib_bbox_golden.py) and
against numpy references; gradientmultiplier against the analytic gradient."""
import os
import sys

import numpy as np
import pytest

import mxc as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data"))
from make_contrib_bbox_golden import DECODE_CASES, MATCH_CASES, NMS_CASES  # noqa: E402

G = np.load(os.path.join(HERE, "..", "data", "contrib_bbox_golden.npz"))


@pytest.mark.parametrize("name", sorted(NMS_CASES))
def test_box_nms_matches_mxnet(name):
    x = mx.nd.array(G[f"{name}/in0"])
    x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.box_nms(x, **NMS_CASES[name])
    out.backward(mx.nd.array(G[f"{name}/head"]))
    np.testing.assert_allclose(out.asnumpy(), G[f"{name}/out0"], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(x.grad.asnumpy(), G[f"{name}/grad"])


def test_box_nms_through_bind_and_dtypes():
    name = "nms_class"
    data, expected = G[f"{name}/in0"], G[f"{name}/out0"]
    sym = mx.sym.contrib.box_nms(mx.sym.var("data"), **NMS_CASES[name])
    assert len(sym.list_outputs()) == 1            # the record output is hidden
    grad = mx.nd.zeros(data.shape)
    ex = sym.bind(mx.cpu(), args={"data": mx.nd.array(data)}, args_grad={"data": grad})
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), expected, rtol=1e-6, atol=1e-6)
    ex.backward(mx.nd.array(G[f"{name}/head"]))
    np.testing.assert_array_equal(grad.asnumpy(), G[f"{name}/grad"])
    for dtype in ("float16", "float64"):
        got = mx.nd.contrib.box_non_maximum_suppression(
            mx.nd.array(data, dtype=dtype), **NMS_CASES[name])
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=2e-3, atol=5e-3)


def test_box_nms_rejects_bad_layouts():
    with pytest.raises(mx.base.MXNetError, match="id_index"):
        mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), id_index=3)
    with pytest.raises(mx.base.MXNetError, match="at least 6"):
        mx.nd.contrib.box_nms(mx.nd.zeros((3, 5)), id_index=0)


def _iou_reference(a, b, fmt):
    # one pair at a time, from the definition
    def corners(box):
        if fmt == "corner":
            return box
        x, y, w, h = box
        return (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    out = np.zeros((len(a), len(b)))
    for i, p in enumerate(a):
        for j, q in enumerate(b):
            p0, p1, p2, p3 = corners(p)
            q0, q1, q2, q3 = corners(q)
            iw = max(0.0, min(p2, q2) - max(p0, q0))
            ih = max(0.0, min(p3, q3) - max(p1, q1))
            inter = iw * ih
            if inter > 0:
                out[i, j] = inter / ((p2 - p0) * (p3 - p1) + (q2 - q0) * (q3 - q1) - inter)
    return out


@pytest.mark.parametrize("fmt", ["corner", "center"])
def test_box_iou_against_the_definition(fmt):
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.uniform(0, 5, (2, 3, 2)), rng.uniform(0.5, 3, (2, 3, 2))], -1)
    b = np.concatenate([rng.uniform(0, 5, (4, 2)), rng.uniform(0.5, 3, (4, 2))], -1)
    if fmt == "corner":
        a[..., 2:] += a[..., :2]
        b[..., 2:] += b[..., :2]
    got = mx.nd.contrib.box_iou(mx.nd.array(a), mx.nd.array(b), format=fmt).asnumpy()
    assert got.shape == (2, 3, 4)
    np.testing.assert_allclose(got.reshape(6, 4), _iou_reference(a.reshape(6, 4), b, fmt),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MATCH_CASES))
def test_bipartite_matching_matches_mxnet(name):
    rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array(G[f"{name}/in0"]),
                                                  **MATCH_CASES[name])
    np.testing.assert_array_equal(rows.asnumpy(), G[f"{name}/out0"])
    np.testing.assert_array_equal(cols.asnumpy(), G[f"{name}/out1"])


def test_box_encode_matches_mxnet():
    ins = [mx.nd.array(G[f"encode/in{i}"]) for i in range(6)]
    t, m = mx.nd.contrib.box_encode(*ins)
    np.testing.assert_allclose(t.asnumpy(), G["encode/out0"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(m.asnumpy(), G["encode/out1"])


@pytest.mark.parametrize("name", sorted(DECODE_CASES))
def test_box_decode_matches_mxnet(name):
    out = mx.nd.contrib.box_decode(mx.nd.array(G[f"{name}/in0"]), mx.nd.array(G[f"{name}/in1"]),
                                   **DECODE_CASES[name])
    np.testing.assert_allclose(out.asnumpy(), G[f"{name}/out0"], rtol=1e-5, atol=1e-5)


def test_gradientmultiplier_scales_only_the_gradient():
    rng = np.random.default_rng(5)
    x = mx.nd.array(rng.standard_normal((3, 4)))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.gradientmultiplier(x * x, scalar=-0.25)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), -0.25 * 2 * x.asnumpy(), rtol=1e-6)
    sym = mx.sym.contrib.gradientmultiplier(mx.sym.var("x"), scalar=3.0)
    g = mx.nd.zeros((3, 4))
    ex = sym.bind(mx.cpu(), args={"x": x}, args_grad={"x": g})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((3, 4)))
    np.testing.assert_allclose(g.asnumpy(), np.full((3, 4), 3.0))


def test_backward_box_nms_scatters_rows_to_their_sources():
    from mxc.ndarray.register import invoke
    from mxc.ops import registry
    og = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    record = np.array([[[4], [0], [-1]], [[-1], [-1], [-1]]], np.float32)   # flat row indices
    got = invoke(registry.get("_backward_contrib_box_nms"),
                 [mx.nd.array(og), mx.nd.array(record)], {}).asnumpy()
    expected = np.zeros((6, 4), np.float32)
    expected[4], expected[0] = og[0, 0], og[0, 1]
    np.testing.assert_array_equal(got, expected.reshape(2, 3, 4))
