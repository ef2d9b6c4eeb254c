"""Operators on sparse storage (mxc/ops/sparse_ops.py, csrc/kernels/sparse_ops.h) against
scipy.sparse / numpy references: dot in every supported storage combination, elementwise
add/sub/mul, sum/mean along axes, storage-preserving unaries, the storage fallback and its
one-time warning, Embedding with sparse gradients or a row_sparse weight, and the lazy optimizer
updates (only the rows a row_sparse gradient holds change; the others stay bit-identical)."""
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.ndarray import sparse as sp


def _rand(rng, shape, density, dtype=np.float32, empty_rows=()):
    a = rng.standard_normal(shape).astype(dtype)
    a[rng.random(shape) > density] = 0
    for r in empty_rows:
        a[r] = 0
    return a


# ---- dot -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_csr_dense(rng, dtype):
    sps = pytest.importorskip("scipy.sparse")
    a = _rand(rng, (37, 53), 0.1, dtype, empty_rows=(0, 5))
    b = rng.standard_normal((53, 19)).astype(dtype)
    c = mx.nd.array(a, dtype=dtype).tostype("csr")
    ref = sps.csr_matrix(a) @ b
    out = mx.nd.dot(c, mx.nd.array(b, dtype=dtype))
    assert out.stype == "default" and out.dtype == dtype
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    # csr x row_sparse -> dense
    bb = b.copy()
    bb[::3] = 0
    out = mx.nd.dot(c, mx.nd.array(bb, dtype=dtype).tostype("row_sparse"))
    np.testing.assert_allclose(out.asnumpy(), a @ bb, rtol=1e-5, atol=1e-5)
    # a sliced CSR (rebased indptr) gives the rows of the product
    out = mx.nd.dot(c[3:20], mx.nd.array(b, dtype=dtype))
    np.testing.assert_allclose(out.asnumpy(), ref[3:20], rtol=1e-5, atol=1e-5)


def test_dot_csr_transposed(rng):
    a = _rand(rng, (40, 30), 0.08)
    a[:, 7] = 0                       # a column with no entry: absent from the rsp result
    b = rng.standard_normal((40, 6)).astype(np.float32)
    c = mx.nd.array(a).tostype("csr")
    ref = a.T @ b
    r = mx.nd.dot(c, mx.nd.array(b), transpose_a=True)
    assert r.stype == "row_sparse"
    r.check_format()
    assert 7 not in r.indices.asnumpy().tolist()
    np.testing.assert_array_equal(r.indices.asnumpy(), np.flatnonzero(a.any(axis=0)))
    np.testing.assert_allclose(r.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    d = mx.nd.dot(c, mx.nd.array(b), transpose_a=True, forward_stype="default")
    assert d.stype == "default"
    np.testing.assert_allclose(d.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    # sp.dot is the same operator
    np.testing.assert_allclose(sp.dot(c, mx.nd.array(b), transpose_a=True).asnumpy(), ref,
                               rtol=1e-5, atol=1e-5)


def test_dot_dense_rsp(rng):
    a = rng.standard_normal((9, 12)).astype(np.float32)
    b = _rand(rng, (12, 5), 1.0, empty_rows=(0, 3, 4, 11))
    r = mx.nd.array(b).tostype("row_sparse")
    out = mx.nd.dot(mx.nd.array(a), r)
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), a @ b, rtol=1e-5, atol=1e-5)
    z = mx.nd.dot(mx.nd.array(a), sp.zeros("row_sparse", (12, 5)))
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((9, 5), np.float32))


def test_dot_shape_error():
    c = mx.nd.array(np.eye(3, 4, dtype=np.float32)).tostype("csr")
    with pytest.raises(ValueError, match="shape"):
        mx.nd.dot(c, mx.nd.ones((3, 2)))


# ---- elementwise ---------------------------------------------------------------------------------
@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
@pytest.mark.parametrize("kind", ["add", "sub", "mul"])
def test_elemwise_sparse_sparse(rng, stype, kind):
    f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[kind]
    a = _rand(rng, (11, 6), 0.4, empty_rows=(2, 3))
    b = _rand(rng, (11, 6), 0.4, empty_rows=(2, 7))
    x, y = mx.nd.array(a).tostype(stype), mx.nd.array(b).tostype(stype)
    r = getattr(mx.nd, "elemwise_" + kind)(x, y)
    assert r.stype == stype
    r.check_format()
    np.testing.assert_allclose(r.asnumpy(), f(a, b), rtol=1e-6)
    if stype == "row_sparse":
        ra, rb = set(np.flatnonzero(a.any(1))), set(np.flatnonzero(b.any(1)))
        want = sorted(ra | rb) if kind != "mul" else sorted(ra & rb)
        assert r.indices.asnumpy().tolist() == want
    # the Python operators take the same path
    np.testing.assert_allclose(getattr(x, f"__{kind}__")(y).asnumpy(), f(a, b), rtol=1e-6)


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_elemwise_sparse_dense(rng, stype):
    a = _rand(rng, (8, 5), 0.4)
    b = rng.standard_normal((8, 5)).astype(np.float32)
    x, d = mx.nd.array(a).tostype(stype), mx.nd.array(b)
    for kind, f, out_st in (("add", np.add, "default"), ("sub", np.subtract, "default"),
                            ("mul", np.multiply, stype)):
        for l, r, ln, rn in ((x, d, a, b), (d, x, b, a)):
            res = getattr(mx.nd, "elemwise_" + kind)(l, r)
            assert res.stype == out_st, (kind, l.stype, r.stype)
            np.testing.assert_allclose(res.asnumpy(), f(ln, rn), rtol=1e-6)


def test_rsp_grad_accumulation_keeps_rows(rng):
    # sparse gradients added by autograd (two lookups of one weight) stay row_sparse
    w = mx.nd.array(rng.standard_normal((20, 4)).astype(np.float32))
    w.attach_grad(stype="row_sparse")
    d1, d2 = mx.nd.array([1, 5, 5]), mx.nd.array([[5, 19]])
    with mx.autograd.record():
        y = (mx.nd.Embedding(d1, w, input_dim=20, output_dim=4, sparse_grad=True).sum()
             + 2 * mx.nd.Embedding(d2, w, input_dim=20, output_dim=4, sparse_grad=True).sum())
    y.backward()
    g = w.grad
    assert g.stype == "row_sparse"
    assert g.indices.asnumpy().tolist() == [1, 5, 19]
    ref = np.zeros((20, 4), np.float32)
    ref[1], ref[5], ref[19] = 1, 4, 2
    np.testing.assert_array_equal(g.asnumpy(), ref)


def test_rsp_grad_req_add():
    w = mx.nd.ones((6, 2))
    w.attach_grad(grad_req="add", stype="row_sparse")
    for d in ([1, 2], [2, 4]):
        with mx.autograd.record():
            y = mx.nd.Embedding(mx.nd.array(d), w, input_dim=6, output_dim=2, sparse_grad=True)
        y.backward()
    assert w.grad.stype == "row_sparse" and w.grad.indices.asnumpy().tolist() == [1, 2, 4]
    np.testing.assert_array_equal(w.grad.asnumpy()[:, 0], [0, 1, 2, 0, 1, 0])


# ---- reductions ----------------------------------------------------------------------------------
@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_sum_mean_axes(rng, stype, op):
    a = _rand(rng, (9, 7), 0.3, empty_rows=(4,))
    x = mx.nd.array(a).tostype(stype)
    npf = getattr(np, op)
    for axis in (None, 0, 1, -1, (0, 1)):
        for keepdims in (False, True):
            r = getattr(mx.nd, op)(x, axis=axis, keepdims=keepdims)
            ref = np.asarray(npf(a.astype(np.float64), axis=axis, keepdims=keepdims))
            if ref.ndim == 0:
                ref = ref.reshape(1)
            assert r.stype == "default" and r.shape == ref.shape, (axis, keepdims, r.shape)
            np.testing.assert_allclose(r.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_sum_rsp_3d(rng):
    a = _rand(rng, (6, 3, 4), 1.0, empty_rows=(0, 2))
    x = mx.nd.array(a).tostype("row_sparse")
    for axis in (0, 1, 2, (1, 2), (0, 2)):
        np.testing.assert_allclose(mx.nd.sum(x, axis=axis).asnumpy(), a.sum(axis=axis),
                                   rtol=1e-5, atol=1e-6)


# ---- unaries and the fallback --------------------------------------------------------------------
@pytest.mark.parametrize("name,f", [("square", np.square), ("abs", np.abs), ("sign", np.sign),
                                    ("relu", lambda v: np.maximum(v, 0)),
                                    ("negative", np.negative), ("expm1", np.expm1),
                                    ("cbrt", np.cbrt),
                                    ("log1p", lambda v: np.log1p(np.abs(v)))])
@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_unary_keeps_storage(rng, name, f, stype):
    a = _rand(rng, (6, 5), 0.5)
    if name == "log1p":
        a = np.abs(a)
    x = mx.nd.array(a).tostype(stype)
    r = getattr(mx.nd, name)(x)
    assert r.stype == stype
    np.testing.assert_array_equal(r.indices.asnumpy(), x.indices.asnumpy())
    np.testing.assert_allclose(r.asnumpy(), f(a), rtol=1e-6, atol=1e-7)
    s = mx.nd.sqrt(mx.nd.array(np.abs(a)).tostype(stype))
    assert s.stype == stype
    np.testing.assert_allclose(s.asnumpy(), np.sqrt(np.abs(a)), rtol=1e-6)
    m = x * 3
    assert m.stype == stype
    np.testing.assert_allclose(m.asnumpy(), a * 3, rtol=1e-6)


def test_fallback_warns_once_naming_op(rng):
    a = _rand(rng, (4, 5), 0.5)
    x = mx.nd.array(a).tostype("csr")
    cond = (rng.random((4, 5)) > 0.5).astype(np.float32)
    sp._WARNED.discard("where")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = mx.nd.where(mx.nd.array(cond), x, mx.nd.ones((4, 5)))
        r2 = mx.nd.where(mx.nd.array(cond), x, mx.nd.ones((4, 5)))
    msgs = [str(m.message) for m in w if "fallback" in str(m.message)]
    assert len(msgs) == 1 and "where" in msgs[0]
    np.testing.assert_array_equal(r.asnumpy(), np.where(cond, a, 1))
    np.testing.assert_array_equal(r2.asnumpy(), r.asnumpy())
    # the dense result of another fallback operator
    e = mx.nd.exp(x)
    assert e.stype == "default"
    np.testing.assert_allclose(e.asnumpy(), np.exp(a), rtol=1e-6)


# ---- Embedding -----------------------------------------------------------------------------------
def test_embedding_sparse_grad(rng):
    w = mx.nd.array(rng.standard_normal((10, 3)).astype(np.float32))
    w.attach_grad(stype="row_sparse")
    data = np.array([[1, 3], [3, 12], [-2, 4]], dtype=np.float32)       # clipped to [0, 9]
    og = rng.standard_normal((3, 2, 3)).astype(np.float32)
    ids = np.clip(data.astype(np.int64), 0, 9)
    ref = np.zeros((10, 3), np.float32)
    np.add.at(ref, ids.reshape(-1), og.reshape(-1, 3))
    for op, kw in ((mx.nd.Embedding, {"sparse_grad": True}), (mx.nd.contrib.SparseEmbedding, {})):
        with mx.autograd.record():
            y = op(mx.nd.array(data), w, input_dim=10, output_dim=3, **kw)
        y.backward(mx.nd.array(og))
        g = w.grad
        assert g.stype == "row_sparse"
        assert g.indices.asnumpy().tolist() == [0, 1, 3, 4, 9]
        np.testing.assert_allclose(g.asnumpy(), ref, rtol=1e-6, atol=1e-6)
    # a dense gradient buffer receives the same values
    w2 = mx.nd.array(w.asnumpy())
    w2.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array(data), w2, input_dim=10, output_dim=3, sparse_grad=True)
    y.backward(mx.nd.array(og))
    assert w2.grad.stype == "default"
    np.testing.assert_allclose(w2.grad.asnumpy(), ref, rtol=1e-6, atol=1e-6)


def test_embedding_rsp_weight(rng):
    wd = _rand(rng, (8, 4), 1.0, empty_rows=(2, 6))
    w = mx.nd.array(wd).tostype("row_sparse")
    data = mx.nd.array([[0, 2], [6, 7]])
    sp._WARNED.discard("Embedding")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = mx.nd.Embedding(data, w, input_dim=8, output_dim=4)
    assert not [c for c in caught if "fallback" in str(c.message)]
    assert y.stype == "default"
    np.testing.assert_array_equal(y.asnumpy(), wd[[[0, 2], [6, 7]]])
    empty = sp.zeros("row_sparse", (8, 4))
    np.testing.assert_array_equal(mx.nd.Embedding(data, empty, input_dim=8, output_dim=4)
                                  .asnumpy(), np.zeros((2, 2, 4), np.float32))


# ---- lazy optimizer updates ----------------------------------------------------------------------
def _opt_case(name, rng, shape, rows):
    """(op, kwargs, number of states, dense-reference op)"""
    cases = {
        "sgd_update": (mx.nd.sgd_update, dict(lr=0.1, wd=0.01, rescale_grad=0.5), 0),
        "sgd_mom_update": (mx.nd.sgd_mom_update, dict(lr=0.1, wd=0.01, momentum=0.9,
                                                      rescale_grad=0.5, clip_gradient=0.4), 1),
        "adam_update": (mx.nd.adam_update, dict(lr=0.01, wd=0.01, beta1=0.9, beta2=0.99,
                                                epsilon=1e-6, rescale_grad=0.5), 2),
        "ftrl_update": (mx.nd.ftrl_update, dict(lr=0.1, lamda1=0.01, beta=1.0, wd=0.01,
                                                rescale_grad=0.5), 2),
        "adagrad": (mx.nd.sparse.adagrad_update, dict(lr=0.1, epsilon=1e-6, rescale_grad=0.5,
                                                      clip_gradient=1.0), 1),
    }
    return cases[name]


@pytest.mark.parametrize("name", ["sgd_update", "sgd_mom_update", "adam_update", "ftrl_update",
                                  "adagrad"])
@pytest.mark.parametrize("wstype", ["default", "row_sparse"])
def test_lazy_updates_touch_only_present_rows(rng, name, wstype):
    op, kw, nstate = _opt_case(name, rng, None, None)
    if name == "ftrl_update" and wstype == "default":
        pytest.skip("ftrl's sparse update needs row_sparse weight and states (as MXNet)")
    R, L = 30, 7
    w0 = rng.standard_normal((R, L)).astype(np.float32)
    s0 = [np.abs(rng.standard_normal((R, L))).astype(np.float32) for _ in range(nstate)]
    rows = np.array([0, 4, 5, 17, 29])
    gvals = rng.standard_normal((rows.size, L)).astype(np.float32)
    g = sp.row_sparse_array((gvals, rows), shape=(R, L))

    def mk(a):
        x = mx.nd.array(a)
        return x.tostype("row_sparse") if wstype == "row_sparse" else x
    w = mk(w0)
    states = [mk(s) for s in s0]
    if wstype == "row_sparse":
        assert w.indices.shape[0] == R            # every row stored (MXNet's requirement)
    kwl = dict(kw, lazy_update=True) if name in ("sgd_update", "sgd_mom_update",
                                                  "adam_update") else kw
    op(w, g, *states, out=w, **kwl)
    got_w = w.asnumpy()
    got_s = [s.asnumpy() for s in states]
    # dense reference: the dense operator on the touched rows only
    ref_op = {"adagrad": None}.get(name, op)
    wr = mx.nd.array(w0[rows])
    sr = [mx.nd.array(s[rows]) for s in s0]
    if ref_op is None:
        # adagrad (MXNet's AdagradDnsRspDnsKernel): h += g'^2; w -= lr * g' / sqrt(h + eps)
        gp = np.clip(gvals * kw["rescale_grad"], -kw["clip_gradient"], kw["clip_gradient"])
        h = s0[0][rows] + gp * gp
        ref_w = w0[rows] - kw["lr"] * gp / np.sqrt(h + kw["epsilon"])
        ref_s = [h]
    else:
        dkw = {k: v for k, v in kw.items()}
        op(wr, mx.nd.array(gvals), *sr, out=wr, **dkw)
        ref_w, ref_s = wr.asnumpy(), [s.asnumpy() for s in sr]
    np.testing.assert_allclose(got_w[rows], ref_w, rtol=2e-6, atol=1e-6)
    for gs, rs in zip(got_s, ref_s):
        np.testing.assert_allclose(gs[rows], rs, rtol=2e-6, atol=1e-6)
    other = np.setdiff1d(np.arange(R), rows)
    assert np.array_equal(got_w[other].view(np.uint32), w0[other].view(np.uint32))
    for gs, s in zip(got_s, s0):
        assert np.array_equal(gs[other].view(np.uint32), s[other].view(np.uint32))


def test_lazy_sgd_empty_grad_and_float64(rng):
    w0 = rng.standard_normal((6, 3))
    w = mx.nd.array(w0, dtype="float64")
    mx.nd.sgd_update(w, sp.zeros("row_sparse", (6, 3), dtype="float64"), out=w, lr=0.5, wd=0.1)
    np.testing.assert_array_equal(w.asnumpy(), w0)
    g = sp.row_sparse_array((np.ones((1, 3)), [2]), shape=(6, 3), dtype="float64")
    mx.nd.sgd_update(w, g, out=w, lr=0.5)
    ref = w0.copy()
    ref[2] -= 0.5
    np.testing.assert_array_equal(w.asnumpy(), ref)


def test_non_lazy_adam_updates_every_row(rng):
    # lazy_update=False: MXNet's standard update, which moves rows with a zero gradient too
    # when their states are non-zero
    w0 = rng.standard_normal((5, 2)).astype(np.float32)
    m0 = np.ones((5, 2), np.float32)
    g = sp.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(5, 2))
    w, m, v = mx.nd.array(w0), mx.nd.array(m0), mx.nd.ones((5, 2))
    mx.nd.adam_update(w, g, m, v, out=w, lr=0.1, lazy_update=False)
    assert not np.array_equal(w.asnumpy()[0], w0[0])
    w, m, v = mx.nd.array(w0), mx.nd.array(m0), mx.nd.ones((5, 2))
    mx.nd.adam_update(w, g, m, v, out=w, lr=0.1, lazy_update=True)
    np.testing.assert_array_equal(w.asnumpy()[0], w0[0])


# ---- the mx.nd.sparse / mx.sym.sparse namespaces ---------------------------------------------
def test_sparse_namespace_has_mxnet_operator_names():
    # MXNet 1.9.1's 74 operator names of mx.sym.sparse, also in mx.nd.sparse; nothing more
    assert len(sp.OP_NAMES) == 74
    for name in sp.OP_NAMES:
        assert name in dir(mx.nd.sparse), name
        assert callable(getattr(mx.nd.sparse, name)), name
        assert name in mx.sym.sparse.__all__, name
    assert mx.nd.sparse.sgd_update is mx.nd._sparse_sgd_update
    assert mx.nd.sparse.gs_retain is mx.nd.sparse.retain
    with pytest.raises(AttributeError, match="Convolution"):
        mx.nd.sparse.Convolution          # not a sparse operator in MXNet either
    assert mx.sym.sparse.sqrt(mx.sym.var("x")).name.startswith("sqrt")


@pytest.mark.filterwarnings("ignore:Storage type fallback")
@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_sparse_namespace_operators_against_numpy(rng, stype):
    a = _rand(rng, (5, 4), 0.5)
    b = _rand(rng, (5, 4), 0.5)
    x, y = mx.nd.array(a).tostype(stype), mx.nd.array(b).tostype(stype)
    n = mx.nd.sparse
    # storage-preserving unaries (MXNet's sparse kernels)
    for name, f in (("abs", np.abs), ("sign", np.sign), ("trunc", np.trunc),
                    ("arctan", np.arctan), ("degrees", np.degrees),
                    ("_contrib_round_ste", lambda v: np.sign(v) * np.floor(np.abs(3 * v) + 0.5)),
                    ("_contrib_sign_ste", np.sign)):
        src = x * 3 if name == "_contrib_round_ste" else x
        r = getattr(n, name)(src)
        assert r.stype == stype, name
        np.testing.assert_allclose(r.asnumpy(), f(a), rtol=1e-6, atol=1e-7, err_msg=name)
    # operators with a dense fallback, as MXNet's storage fallback
    checks = [
        (n.exp(x), np.exp(a)), (n.cos(x), np.cos(a)),
        (n.rsqrt(n.abs(x) + 1), 1 / np.sqrt(np.abs(a) + 1)),
        (n.elemwise_add(x, y), a + b), (n.elemwise_mul(x, y), a * b),
        (n.broadcast_mul(x, mx.nd.array(b[:1])), a * b[:1]),
        (n.broadcast_sub(x, mx.nd.array(b[:, :1])), a - b[:, :1]),
        (n.clip(x, a_min=-0.5, a_max=0.5), np.clip(a, -0.5, 0.5)),
        (n.concat(x, y, dim=0), np.concatenate([a, b], 0)),
        (n.slice(x, begin=(1, 0), end=(4, 3)), a[1:4, 0:3]),
        (n.where(mx.nd.array(a > 0), x, y), np.where(a > 0, a, b)),
        (n.sum(x, axis=1), a.sum(1)), (n.mean(x, axis=0), a.mean(0)),
        (n.norm(x), np.linalg.norm(a)), (n.zeros_like(x), np.zeros_like(a)),
        (n.add_n(x, y, x), 2 * a + b), (n.ElementWiseSum(x, y), a + b),
        (n.stop_gradient(x), a), (n.make_loss(x), a),
        (n.dot(x, mx.nd.array(b.T)), a @ b.T),
        (n.FullyConnected(x, mx.nd.array(b), num_hidden=5, no_bias=True), a @ b.T),
    ]
    for i, (got, want) in enumerate(checks):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=str(i))


def test_sparse_namespace_sgd_update_is_lazy(rng):
    w = rng.standard_normal((5, 3)).astype(np.float32)
    g = _rand(rng, (5, 3), 1.0, empty_rows=(1, 3))
    weight = mx.nd.array(w)
    mx.nd.sparse.sgd_update(weight, mx.nd.array(g).tostype("row_sparse"), lr=0.1, wd=0.1,
                            out=weight)
    got = weight.asnumpy()
    np.testing.assert_array_equal(got[[1, 3]], w[[1, 3]])   # rows absent from the gradient
    # the update in float64; the kernel's float32 rounding (the constants' included) is a few
    # ulp of the terms |w| and 0.1|g|, not of the result, which can be near 0 (rtol alone failed
    # for 38 of seeds 0-2199, e.g. MXC_TEST_SEED=42, 58, 253)
    w64, g64 = w.astype(np.float64), g.astype(np.float64)
    want = w64 - 0.1 * (g64 + 0.1 * w64)
    terms = np.abs(w64) + 0.1 * np.abs(g64)
    rows = [0, 2, 4]
    err = np.abs(got[rows] - want[rows])
    assert (err <= 4 * 2.0 ** -24 * terms[rows]).all(), (err / (2.0 ** -24 * terms[rows])).max()


def test_reshape_backward_with_a_sparse_head_gradient(rng):
    # w -> reshape -> dot(csr x, .): the reshape's head gradient is row_sparse (MXNet's
    # test_reshape_backward_fallback); it falls back to dense, into a row_sparse args_grad
    x = mx.nd.array(_rand(rng, (4, 1), 0.6)).tostype("csr")
    w = rng.standard_normal((12, 4)).astype(np.float32)
    out = mx.sym.sparse.dot(mx.sym.var("x", stype="csr"),
                            mx.sym.reshape(mx.sym.var("w"), shape=(1, 48)))
    head = rng.standard_normal((4, 48)).astype(np.float32)
    gw = mx.nd.zeros((12, 4)).tostype("row_sparse")
    ex = out.bind(mx.cpu(), args={"x": x, "w": mx.nd.array(w)}, args_grad={"w": gw})
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(head))
    want = (x.asnumpy().T @ head).reshape(12, 4)
    np.testing.assert_allclose(gw.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_retain_in_a_graph_with_a_dense_head_gradient(rng):
    # shape inference is storage-blind; the gradient of retain under a dense consumer keeps
    # the retained rows of the dense head gradient (MXNet's check_numeric_gradient case)
    a = _rand(rng, (5, 3), 0.6, empty_rows=(2,))
    sym = mx.sym.sparse.retain(data=mx.sym.var("data"), indices=mx.sym.var("indices"))
    assert sym.infer_shape(data=(5, 3), indices=(2,))[1] == [(5, 3)]
    x = mx.nd.array(a).tostype("row_sparse")
    x.attach_grad()
    idx = mx.nd.array([1, 3], dtype="int64")
    with mx.autograd.record():
        y = mx.nd.sparse.retain(x, idx) * 2          # a dense consumer: dense head gradient
    y.backward(mx.nd.ones((5, 3)))
    want = np.zeros((5, 3), np.float32)
    want[[1, 3]] = 2
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
    with pytest.raises(mx.base.MXNetError, match="row_sparse"):
        mx.nd.sparse.retain(mx.nd.array(a), idx)
