"""mx.npx operators against values real MXNet 1.9.1 computed (tests/data/npx_golden.npz, made by
tests/data/make_npx_golden.py), plus numpy references for reshape codes and autograd."""
import os

import numpy as onp
import pytest

import mxc as mx
from mxc import autograd, npx
from mxc.base import MXNetError
from mxc.numpy.multiarray import ndarray as np_ndarray, array as np_array

G = onp.load(os.path.join(os.path.dirname(__file__), "..", "data", "npx_golden.npz"))

pytestmark = pytest.mark.usefixtures("np_mode")


def arr(a):
    return np_array(a, dtype=a.dtype)


def inputs(name):
    out, i = [], 0
    while f"in_{name}_{i}" in G:
        out.append(arr(G[f"in_{name}_{i}"]))
        i += 1
    return out


CASES = {
    "relu": npx.relu, "sigmoid": npx.sigmoid,
    "softmax": lambda a: npx.softmax(a, axis=0, temperature=2.0),
    "log_softmax": lambda a: npx.log_softmax(a, axis=-1),
    "softmax_len": lambda a, l: npx.softmax(a, l, axis=-1, use_length=True),
    "act_tanh": lambda a: npx.activation(a, act_type="tanh"),
    "act_softrelu": lambda a: npx.activation(a, act_type="softrelu"),
    "leaky": lambda a: npx.leaky_relu(a, act_type="leaky", slope=0.1),
    "elu": lambda a: npx.leaky_relu(a, act_type="elu", slope=0.3),
    "gelu": lambda a: npx.leaky_relu(a, act_type="gelu"),
    "fc": lambda a, w, b: npx.fully_connected(a, w, b, num_hidden=5),
    "fc_noflat": lambda a, w: npx.fully_connected(a, w, None, num_hidden=5, no_bias=True,
                                                  flatten=False),
    "conv": lambda a, w, b: npx.convolution(a, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1),
                                            stride=(2, 1)),
    "deconv": lambda a, w: npx.deconvolution(a, w, None, kernel=(2, 2), num_filter=3,
                                             stride=(2, 2), no_bias=True),
    "pool_max": lambda a: npx.pooling(a, kernel=(2, 2), pool_type="max", stride=(2, 2)),
    "pool_avg_global": lambda a: npx.pooling(a, kernel=(1, 1), pool_type="avg",
                                             global_pool=True),
    "bn_infer": lambda a, g, b, m, v: npx.batch_norm(a, g, b, m, v, fix_gamma=False,
                                                     use_global_stats=True, eps=1e-5),
    "layer_norm": lambda a, g, b: npx.layer_norm(a, g, b, axis=-1, eps=1e-5),
    "embedding": lambda i, w: npx.embedding(i, w, input_dim=6, output_dim=3),
    "one_hot": lambda i: npx.one_hot(i, depth=4, on_value=2.0, off_value=-1.0),
    "pick": lambda a, i: npx.pick(a, i, axis=1, keepdims=True),
    "topk": lambda a: npx.topk(a, axis=-1, k=2, ret_typ="both"),
    "topk_idx": lambda a: npx.topk(a, k=3, is_ascend=True, dtype="int32"),
    "batch_dot": lambda a, b: npx.batch_dot(a, b, transpose_b=True),
    "seq_mask": lambda a, l: npx.sequence_mask(a, l, use_sequence_length=True, value=-1.0),
    "batch_flatten": npx.batch_flatten,
    "reshape_like": npx.reshape_like,
    "arange_like": lambda a: npx.arange_like(a, start=0.1, step=0.3, repeat=2),
    "arange_like_axis": lambda a: npx.arange_like(a, start=1.0, axis=1),
    "gamma": npx.gamma, "gammaln": npx.gammaln, "erf": npx.erf,
    "shape_array": npx.shape_array,
    "slice": lambda a: npx.slice(a, begin=(0, 1), end=(3, 4), step=(2, 2)),
    "smooth_l1": lambda a: npx.smooth_l1(a, scalar=1.5),
    "nonzero": npx.nonzero, "gather_nd": npx.gather_nd,
    "cast": lambda a: npx.cast(a, dtype="int32"),
    "dropout_eval": lambda a: npx.dropout(a, p=0.5),
    "relu_0d": npx.relu, "sigmoid_empty": npx.sigmoid,
}


def _check(got, want, name):
    assert type(got) is np_ndarray, (name, type(got))
    g = got.asnumpy()
    assert g.shape == want.shape, (name, g.shape, want.shape)
    assert g.dtype == want.dtype, (name, g.dtype, want.dtype)
    onp.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_mxnet(name):
    out = CASES[name](*inputs(name))
    if f"out_{name}" in G:
        _check(out, G[f"out_{name}"], name)
    else:
        j = 0
        while f"out_{name}_{j}" in G:
            _check(out[j], G[f"out_{name}_{j}"], f"{name}[{j}]")
            j += 1
        assert j == len(out) and j > 0


RESHAPES = [((2, 3, 4), (-2, -1), False), ((2, 1, 4), (-2, -3, -1), False),
            ((2, 3, 4), (-5, -1), False), ((2, 3, 4), (-6, 1, 2, -4), False),
            ((6, 4), (-6, -1, 2, -2), False), ((2, 3, 4), (-4,), False),
            ((2, 3, 4), (4, -1), False), ((2, 3, 4), (-1, 12), True),
            ((2, 3, 4), (6, 4), False), ((0, 3), (-1, 3, 1), False)]


@pytest.mark.parametrize("i", range(len(RESHAPES)))
def test_reshape_codes_match_mxnet(i):
    shape, new, rev = RESHAPES[i]
    a = arr(G[f"in_reshape{i}_0"])
    out = npx.reshape(a, new, reverse=rev)
    _check(out, G[f"out_reshape{i}"], f"reshape{i}")


def test_reshape_is_a_view_and_errors():
    a = np_array(onp.arange(6, dtype="float32").reshape(2, 3))
    b = npx.reshape(a, (-1,))
    b[0] = 100.0
    assert a.asnumpy()[0, 0] == 100.0
    with pytest.raises(MXNetError, match="Cannot reshape array of shape"):
        npx.reshape(a, (4, -1))
    with pytest.raises(MXNetError, match="skip a dimension of size 1"):
        npx.reshape(a, (-3, -1))
    with pytest.raises(MXNetError, match="one and only one"):
        npx.reshape(a, (-1, -1))
    with pytest.raises(MXNetError, match="do not divide"):
        npx.reshape(a, (-6, 4, 1, -2))


def test_autograd_through_npx_ops(rng):
    xv = rng.uniform(-1, 1, (3, 4)).astype("float32")
    wv = rng.uniform(-1, 1, (5, 4)).astype("float32")
    x, w = np_array(xv), np_array(wv)
    w.attach_grad()
    with autograd.record():
        h = npx.fully_connected(x, w, None, num_hidden=5, no_bias=True)
        y = npx.reshape(npx.relu(h), (-1,))
    y.backward()
    mask = (xv @ wv.T > 0).astype("float32")
    onp.testing.assert_allclose(w.grad.asnumpy(), mask.T @ xv, rtol=1e-5, atol=1e-6)
    assert type(w.grad) is np_ndarray


def test_dropout_training_mode(rng):
    x = np_array(onp.ones((200, 50), dtype="float32"))
    with autograd.record():
        y = npx.dropout(x, p=0.5).asnumpy()
    assert set(onp.unique(y)) <= {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6


def test_constraint_check():
    ok = npx.constraint_check(np_array(onp.array([True, True])), "never")
    assert ok.shape == () and bool(ok)
    with pytest.raises(ValueError, match="bad thing"):
        npx.constraint_check(np_array(onp.array([True, False])), "bad thing")


def test_nd_inputs_and_out(rng):
    xv = rng.uniform(-1, 1, (2, 3)).astype("float32")
    y = npx.sigmoid(mx.nd.array(xv))           # legacy arrays are taken as well
    assert type(y) is np_ndarray
    out = np_array(onp.zeros((2, 3), dtype="float32"))
    r = npx.relu(np_array(xv), out=out)
    assert r is out
    onp.testing.assert_array_equal(out.asnumpy(), onp.maximum(xv, 0))


def test_namespace_exports():
    for name in ("set_np", "reset_np", "is_np_array", "is_np_shape", "cpu", "gpu", "num_gpus",
                 "current_context", "waitall", "save", "load", "seed", "use_np"):
        assert hasattr(npx, name), name
    assert npx.is_np_array() and npx.is_np_shape()
    assert mx.npx is npx


def test_masked_softmax(rng):
    xv = rng.normal(size=(3, 4)).astype("float32")
    mv = onp.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=bool)
    x = np_array(xv)
    x.attach_grad()
    with autograd.record():
        y = npx.masked_softmax(x, np_array(mv, dtype="bool"), temperature=2.0)
        (y * np_array(onp.arange(12, dtype="float32").reshape(3, 4))).sum().backward()
    e = onp.where(mv, onp.exp((xv - xv.max(axis=1, keepdims=True)) / 2.0), 0.0)
    den = e.sum(axis=1, keepdims=True)
    want = onp.divide(e, den, out=onp.zeros_like(e), where=den > 0)
    onp.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-7)
    g = x.grad.asnumpy()
    assert onp.all(g[~mv] == 0) and onp.all(onp.isfinite(g))
    c = onp.arange(12, dtype="float32").reshape(3, 4)
    want_g = want * (c - (want * c).sum(axis=1, keepdims=True)) / 2.0
    onp.testing.assert_allclose(g, want_g, rtol=1e-4, atol=1e-6)
