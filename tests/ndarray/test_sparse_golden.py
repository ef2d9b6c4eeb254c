"""Sparse operators against outputs real MXNet 1.9.1 produced (tests/data/sparse_golden.npz from
tests/data/make_sparse_golden.py): values and result storage types of dot, elementwise ops,
unaries, sum/mean, retain, the lazy optimizer updates and a row_sparse autograd gradient."""
import os
import warnings

import numpy as np
import pytest

import mxc as mx

G = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "sparse_golden.npz"))


def _check(y, key, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(y.asnumpy(), G[key], rtol=rtol, atol=atol, err_msg=key)
    if key + "_stype" in G:
        assert y.stype == str(G[key + "_stype"]), key


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_dot_golden():
    csr = mx.nd.array(G["dot_A"]).tostype("csr")
    rsp = mx.nd.array(G["dot_R"]).tostype("row_sparse")
    _check(mx.nd.dot(csr, mx.nd.array(G["dot_B"])), "dot_csr_dns")
    _check(mx.nd.dot(csr, mx.nd.array(G["dot_Bt"]), transpose_a=True), "dot_csrT_dns")
    _check(mx.nd.dot(mx.nd.array(G["dot_A"]), rsp), "dot_dns_rsp")
    _check(mx.nd.dot(csr, rsp), "dot_csr_rsp")


def test_elementwise_and_unary_golden():
    X, Y = G["ew_X"], G["ew_Y"]
    xr, yr = mx.nd.array(X).tostype("row_sparse"), mx.nd.array(Y).tostype("row_sparse")
    xc, yc = mx.nd.array(X).tostype("csr"), mx.nd.array(Y).tostype("csr")
    for name in ("add", "sub", "mul"):
        f = getattr(mx.nd, "elemwise_" + name)
        _check(f(xr, yr), f"ew_{name}_rsp")
        _check(f(xr, mx.nd.array(Y)), f"ew_{name}_rsp_dns")
    for name in ("add", "mul"):
        _check(getattr(mx.nd, "elemwise_" + name)(xc, yc), f"ew_{name}_csr")
    for name in ("abs", "square", "sign", "relu", "negative"):
        _check(getattr(mx.nd, name)(xr), f"un_{name}")
    _check(mx.nd.sqrt(mx.nd.abs(xc)), "un_sqrt_csr")
    _check(xr * 3, "mul_scalar")
    for ax in (0, 1):
        _check(mx.nd.sum(xc, axis=ax), f"sum_csr_{ax}")
        _check(mx.nd.mean(xc, axis=ax), f"mean_csr_{ax}")
    z = mx.nd.sparse.retain(xr, mx.nd.array(G["retain_idx"], dtype="int64"))
    _check(z, "retain")
    np.testing.assert_array_equal(z.indices.asnumpy(), G["retain_rows"])


def _run(name, nstate, suffix="", sstype="default", wstype="row_sparse", **kw):
    w = mx.nd.array(G["opt_W"]).tostype(wstype)
    g = mx.nd.array(G["opt_G"]).tostype("row_sparse")
    st = [mx.nd.array(G[k]).tostype(sstype) for k in ("opt_S1", "opt_S2")[:nstate]]
    getattr(mx.nd, name)(w, g, *st, out=w, **kw)
    _check(w, f"opt_{name}{suffix}_w", rtol=1e-5)
    for i, s in enumerate(st):
        _check(s, f"opt_{name}{suffix}_s{i}", rtol=1e-5)


def test_lazy_updates_golden():
    _run("sgd_update", 0, lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)
    _run("sgd_mom_update", 1, lr=0.1, momentum=0.9, wd=0.01)
    _run("adam_update", 2, lr=0.01, wd=0.01, beta1=0.9, beta2=0.99, epsilon=1e-6)
    _run("ftrl_update", 2, lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)
    _run("ftrl_update", 2, "_rsp", "row_sparse", lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)
    _run("sgd_update", 0, "_dns", wstype="default", lr=0.1, wd=0.01)
    _run("sgd_update", 0, "_nolazy", lr=0.1, wd=0.01, lazy_update=False)
    _run("adam_update", 2, "_dns", wstype="default", lr=0.01, wd=0.01, beta1=0.9, beta2=0.99,
         epsilon=1e-6)
    _run("adam_update", 2, "_nolazy", wstype="default", lr=0.01, wd=0.01, beta1=0.9, beta2=0.99,
         epsilon=1e-6, lazy_update=False)
    _run("sgd_mom_update", 1, "_rsp", "row_sparse", lr=0.1, momentum=0.9, wd=0.01)
    w = mx.nd.array(G["opt_W"]).tostype("row_sparse")
    h = mx.nd.array(G["opt_S1"]).tostype("row_sparse")
    g = mx.nd.array(G["opt_G"]).tostype("row_sparse")
    mx.nd.sparse.adagrad_update(w, g, h, out=w, lr=0.1, epsilon=1e-7)
    _check(w, "opt_adagrad_w", rtol=1e-5)
    _check(h, "opt_adagrad_s0", rtol=1e-5)


def test_autograd_dot_rsp_grad_golden():
    csr = mx.nd.array(G["dot_A"]).tostype("csr")
    w = mx.nd.array(G["dot_B"])
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(csr, w)
    y.backward()
    _check(w.grad, "ag_dot_grad")


def test_embedding_golden():
    w = mx.nd.array(G["emb_W"])
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array(G["emb_data"]), w, input_dim=10, output_dim=3,
                            sparse_grad=True)
    y.backward(mx.nd.array(G["emb_ograd"]))
    _check(y, "emb_out")
    _check(w.grad, "emb_grad")
    np.testing.assert_array_equal(w.grad.indices.asnumpy(), G["emb_grad_rows"])
    y = mx.nd.contrib.SparseEmbedding(mx.nd.array(G["emb_data"]),
                                      mx.nd.array(G["emb_rsp_W"]).tostype("row_sparse"),
                                      input_dim=10, output_dim=3)
    _check(y, "emb_rsp_out")


def test_sum_rsp_golden():
    xr = mx.nd.array(G["ew_X"]).tostype("row_sparse")
    for ax in (0, 1):
        _check(mx.nd.sum(xr, axis=ax), f"sum_rsp_{ax}")
        _check(mx.nd.mean(xr, axis=ax), f"mean_rsp_{ax}")
