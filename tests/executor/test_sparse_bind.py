"""Executors with sparse arrays (mxc/executor/sparse_bind.py and its hooks in executor.py):
bind/simple_bind with stypes, forward/backward against numpy/scipy references, Module with a
row_sparse weight."""
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

sp = pytest.importorskip("scipy.sparse")


@pytest.fixture(autouse=True)
def _quiet():
    # storage fallback warnings are expected here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _csr(rng, shape, density=0.4):
    d = rng.random(shape) * (rng.random(shape) < density)
    return d.astype(np.float32)


def _dot_sym(w_stype="row_sparse", **kw):
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype=w_stype)
    return mx.sym.sparse.dot(x, w, **kw)


def test_bind_csr_rsp_dot_forward_backward(rng):
    d = _csr(rng, (6, 5))
    d[:, 1] = 0                       # a column no row has: weight row 1 gets no gradient
    wn = rng.standard_normal((5, 3)).astype(np.float32)
    og = rng.standard_normal((6, 3)).astype(np.float32)
    X = mx.nd.sparse.csr_matrix(sp.csr_matrix(d))
    W = mx.nd.array(wn).tostype("row_sparse")
    G = mx.nd.sparse.zeros("row_sparse", (5, 3))
    ex = _dot_sym().bind(mx.cpu(), {"data": X, "weight": W}, args_grad={"weight": G})
    out = ex.forward(is_train=True)[0]
    assert out.stype == "default"
    ref = sp.csr_matrix(d.astype(np.float64)) @ wn.astype(np.float64)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    ex.backward(mx.nd.array(og))
    assert ex.grad_dict["weight"] is G and G.stype == "row_sparse"
    gref = sp.csr_matrix(d.astype(np.float64)).T @ og.astype(np.float64)
    np.testing.assert_allclose(G.asnumpy(), gref, rtol=1e-5, atol=1e-5)
    assert 1 not in set(G.indices.asnumpy().tolist())
    # the bound arguments kept their storage and values
    assert ex.arg_dict["data"].stype == "csr" and ex.arg_dict["weight"].stype == "row_sparse"
    np.testing.assert_array_equal(ex.arg_dict["weight"].asnumpy(), wn)


def test_bind_dense_weight_grad_and_grad_req_add(rng):
    d = _csr(rng, (4, 6))
    wn = rng.standard_normal((6, 2)).astype(np.float32)
    X = mx.nd.array(d).tostype("csr")
    G = mx.nd.ones((6, 2))
    ex = _dot_sym("default").bind(mx.cpu(), {"data": X, "weight": mx.nd.array(wn)},
                                  args_grad={"weight": G}, grad_req="add")
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((4, 2)))
    expect = 1 + 2 * d.T.astype(np.float64) @ np.ones((4, 2))
    np.testing.assert_allclose(G.asnumpy(), expect, rtol=1e-5, atol=1e-5)


def test_transpose_a_dot_gradient_dense(rng):
    d = _csr(rng, (5, 4))
    wn = rng.standard_normal((5, 3)).astype(np.float32)
    og = rng.standard_normal((4, 3)).astype(np.float32)
    ex = _dot_sym("default", transpose_a=True).simple_bind(
        mx.cpu(), data=(5, 4), weight=(5, 3), grad_req={"weight": "write"})
    assert ex.arg_dict["data"].stype == "csr"
    # MXNet: dot(csr.T, w) gives w a dense gradient
    assert ex.grad_dict["weight"].stype == "default"
    ex.arg_dict["data"][:] = mx.nd.array(d).tostype("csr")
    ex.arg_dict["weight"][:] = wn
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), d.T @ wn, rtol=1e-5, atol=1e-5)
    ex.backward(mx.nd.array(og))
    np.testing.assert_allclose(ex.grad_dict["weight"].asnumpy(), d @ og, rtol=1e-5, atol=1e-5)


def test_simple_bind_storage_types():
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse")
    b = mx.sym.Variable("bias")
    y = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b)
    ex = y.simple_bind(mx.cpu(), data=(4, 5), weight=(5, 3), bias=(1, 3))
    st = {n: a.stype for n, a in ex.arg_dict.items()}
    assert st == {"data": "csr", "weight": "row_sparse", "bias": "default"}
    gst = {n: g.stype for n, g in ex.grad_dict.items()}
    # MXNet's backward storage inference: dot(csr, w) gives w a row_sparse gradient
    assert gst == {"data": "default", "weight": "row_sparse", "bias": "default"}
    # stype_dict overrides the variables' declarations; a dense weight of dot(csr, w) still
    # gets a row_sparse gradient
    ex2 = y.simple_bind(mx.cpu(), stype_dict={"weight": "default"}, data=(4, 5), weight=(5, 3),
                        bias=(1, 3))
    assert ex2.arg_dict["weight"].stype == "default"
    assert ex2.grad_dict["weight"].stype == "row_sparse"
    with pytest.raises(ValueError, match="not arguments"):
        y.simple_bind(mx.cpu(), stype_dict={"nope": "csr"}, data=(4, 5), weight=(5, 3),
                      bias=(1, 3))


def test_embedding_sparse_grad_simple_bind(rng):
    data = mx.sym.Variable("data")
    emb = mx.sym.Embedding(data, input_dim=10, output_dim=4, sparse_grad=True, name="emb")
    ex = emb.simple_bind(mx.cpu(), data=(3,))
    assert ex.grad_dict["emb_weight"].stype == "row_sparse"
    wn = rng.standard_normal((10, 4)).astype(np.float32)
    ex.arg_dict["emb_weight"][:] = wn
    ex.arg_dict["data"][:] = np.array([1, 7, 1], dtype=np.float32)
    out = ex.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), wn[[1, 7, 1]])
    ex.backward(mx.nd.ones((3, 4)))
    g = ex.grad_dict["emb_weight"]
    assert g.stype == "row_sparse"
    assert sorted(g.indices.asnumpy().tolist()) == [1, 7]
    expect = np.zeros((10, 4))
    expect[1], expect[7] = 2, 1
    np.testing.assert_allclose(g.asnumpy(), expect)


def test_sparse_outputs_and_cast_storage_in_graph(rng):
    a = rng.standard_normal((5, 3)).astype(np.float32)
    a[[0, 3]] = 0
    x = mx.sym.Variable("x")
    y = mx.sym.sparse.cast_storage(x, stype="row_sparse")
    ex = y.bind(mx.cpu(), {"x": mx.nd.array(a)})       # dense arrays bound
    out = ex.forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), a)
    assert sorted(out.indices.asnumpy().tolist()) == [1, 2, 4]


def test_fallback_operator_with_sparse_inputs_matches_dense(rng):
    # FullyConnected and an elementwise op have no sparse implementation: storage fallback
    d = _csr(rng, (4, 6))
    wn = rng.standard_normal((3, 6)).astype(np.float32)
    x = mx.sym.Variable("data", stype="csr")
    y = mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=3, no_bias=True, name="fc"))
    ex = y.bind(mx.cpu(), {"data": mx.nd.array(d).tostype("csr"), "fc_weight": mx.nd.array(wn)},
                args_grad={"fc_weight": mx.nd.zeros((3, 6))})
    out = ex.forward(is_train=True)[0].asnumpy()
    pre = d @ wn.T
    np.testing.assert_allclose(out, np.maximum(pre, 0), rtol=1e-5, atol=1e-6)
    ex.backward(mx.nd.ones((4, 3)))
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), (pre > 0).T.astype(
        np.float32) @ d, rtol=1e-5, atol=1e-5)


def test_batchnorm_fix_gamma_refuses_sparse_inputs():
    data = mx.sym.Variable("data", stype="row_sparse")
    bn = mx.sym.BatchNorm(data, fix_gamma=True, name="bn")
    args = {"data": mx.nd.ones((2, 3)).tostype("row_sparse"), "bn_gamma": mx.nd.ones((3,)),
            "bn_beta": mx.nd.zeros((3,))}
    aux = [mx.nd.zeros((3,)), mx.nd.ones((3,))]
    with pytest.raises(MXNetError, match="fix_gamma=True is not supported for sparse"):
        bn.bind(mx.cpu(), args, aux_states=aux)
    bn2 = mx.sym.BatchNorm(data, fix_gamma=False, name="bn")
    ex = bn2.bind(mx.cpu(), args, aux_states=aux)
    assert ex.forward()[0].shape == (2, 3)


@pytest.mark.parametrize("init,val", [(mx.init.Constant(2.0), 2.0), (mx.init.Zero(), 0.0),
                                      (mx.init.One(), 1.0)])
def test_module_init_params_row_sparse(init, val):
    # MXNet's test_init.py::test_rsp_const_init
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(10, 2), init=init, stype="row_sparse")
    mod = mx.mod.Module(mx.sym.sparse.dot(x, w), label_names=None)
    mod.bind(data_shapes=[("data", (10, 10))])
    mod.init_params()
    p = mod.get_params()[0]["weight"]
    assert p.stype == "row_sparse"
    np.testing.assert_array_equal(p.asnumpy(), np.full((10, 2), val, np.float32))


def _train_two_steps(dense, y, w0, stype_data, stype_w):
    n, k = y.shape
    x = mx.sym.Variable("data", stype=stype_data)
    w = mx.sym.Variable("weight", stype=stype_w, shape=w0.shape)
    dot = mx.sym.sparse.dot(x, w) if stype_data == "csr" else mx.sym.dot(x, w)
    sym = mx.sym.LinearRegressionOutput(dot, mx.sym.Variable("label"))
    it = mx.io.NDArrayIter(mx.nd.array(dense).tostype(stype_data), mx.nd.array(y),
                           batch_size=n, label_name="label", last_batch_handle="discard")
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(arg_params={"weight": mx.nd.array(w0).tostype(stype_w)})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1,
                                                          "rescale_grad": 1.0 / n})
    for _ in range(2):
        it.reset()
        mod.forward(next(it), is_train=True)
        mod.backward()
        mod.update()
    return mod


def test_module_sparse_weight_two_sgd_steps_equal_dense(rng):
    n, dd, k = 8, 6, 3
    dense = _csr(rng, (n, dd))
    dense[:, 2] = 0
    y = rng.random((n, k)).astype(np.float32)
    w0 = rng.standard_normal((dd, k)).astype(np.float32)
    ms = _train_two_steps(dense, y, w0, "csr", "row_sparse")
    md = _train_two_steps(dense, y, w0, "default", "default")
    ws, wd = ms.get_params()[0]["weight"], md.get_params()[0]["weight"]
    assert ws.stype == "row_sparse" and wd.stype == "default"
    np.testing.assert_allclose(ws.asnumpy(), wd.asnumpy(), rtol=1e-5, atol=1e-6)
    g = ms._exec_group.execs[0].grad_dict["weight"]
    assert g.stype == "row_sparse" and 2 not in set(g.indices.asnumpy().tolist())
    # numpy reference (LinearRegressionOutput's gradient is (out - label) / outputs per row)
    W = w0.astype(np.float64)
    for _ in range(2):
        W = W - 0.1 * dense.T.astype(np.float64) @ (dense @ W - y) / n / k
    np.testing.assert_allclose(ws.asnumpy(), W, rtol=1e-5, atol=1e-5)
