"""dot and batch_dot: MXNet's N-d shape rules with transpose_a/b against a numpy reference,
float16/32/64, batched small and large products, gradients vs central differences, errors."""
import numpy as np
import pytest

import mxc as mx
from mxc.ndarray import register
from mxc.ops import registry

from .oputil import check_forward, check_grad


def _ref_dot(a, b, ta, tb):
    """MXNet's dot in numpy: lhs as (rest, last) or (first, rest)^T, rhs as (first, rest) or
    (rest, last)^T; the output keeps lhs's then rhs's non-contracted dims."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if a.ndim == 1 and b.ndim == 1:
        return np.array([a64 @ b64]).astype(a.dtype)
    if ta:
        A, lkeep = a64.reshape(a.shape[0], -1).T, a.shape[1:]
    else:
        A, lkeep = a64.reshape(-1, a.shape[-1]), a.shape[:-1]
    if tb:
        B, rkeep = b64.reshape(-1, b.shape[-1]).T, b.shape[:-1]
    else:
        B, rkeep = b64.reshape(b.shape[0], -1), b.shape[1:]
    if a.ndim == 1:
        A, lkeep = A.reshape(1, -1), ()
    if b.ndim == 1:
        B, rkeep = B.reshape(-1, 1), ()
    return (A @ B).reshape(tuple(lkeep) + tuple(rkeep)).astype(a.dtype)


CASES = [  # lhs shape, rhs shape, transpose_a, transpose_b
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((2, 3, 4), (4, 5), False, False),
    ((2, 3, 4), (4, 5, 2), False, False),
    ((4, 2, 3), (4, 5), True, False),
    ((2, 3, 4), (5, 2, 4), False, True),
    ((4, 2, 3), (5, 2, 4), True, True),
    ((4,), (4, 5), False, False),
    ((3, 4), (4,), False, False),
    ((4,), (5, 4), False, True),
    ((4,), (4,), False, False),
    ((1, 4), (4, 1), False, False),
]


@pytest.mark.parametrize("ls,rs,ta,tb", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_forward(ls, rs, ta, tb, dtype, rng):
    a = rng.uniform(-1, 1, ls).astype(dtype)
    b = rng.uniform(-1, 1, rs).astype(dtype)
    check_forward("dot", [a, b], {"transpose_a": ta, "transpose_b": tb}, _ref_dot(a, b, ta, tb))


def test_dot_float16(rng):
    a = rng.uniform(-1, 1, (5, 17)).astype(np.float16)
    b = rng.uniform(-1, 1, (17, 3)).astype(np.float16)
    got = mx.nd.dot(mx.nd.array(a, dtype=np.float16), mx.nd.array(b, dtype=np.float16))
    assert got.dtype == np.float16
    exp = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), exp.astype(np.float32),
                               rtol=2e-3, atol=2e-3)


def test_dot_large(rng):
    a = rng.standard_normal((129, 65)).astype(np.float32)
    b = rng.standard_normal((65, 130)).astype(np.float32)
    got = mx.nd.dot(mx.nd.array(a), mx.nd.array(b), transpose_a=False).asnumpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [0, 3])
def test_dot_overwrites_nan_out(batch, dtype, rng):
    """What out= held before, NaN included, never reaches a product (dot.h clears O before BLAS
    adds into it; beta 0 in OpenBLAS cleared slower, see the commit that made this test)."""
    for m, k, n in ((33, 40, 70), (2, 3, 4)):
        shape_a, shape_b = ((batch, m, k), (batch, k, n)) if batch else ((m, k), (k, n))
        a = rng.standard_normal(shape_a).astype(dtype)
        b = rng.standard_normal(shape_b).astype(dtype)
        out = mx.nd.array(np.full(shape_a[:-1] + (n,), np.nan, dtype), dtype=dtype)
        fn = mx.nd.batch_dot if batch else mx.nd.dot
        fn(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype), out=out)
        tol = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(out.asnumpy(), np.matmul(a.astype(np.float64), b),
                                   rtol=tol, atol=tol)


def test_dot_empty(rng):
    a = np.zeros((3, 0), np.float32)
    b = np.zeros((0, 4), np.float32)
    check_forward("dot", [a, b], {}, np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("ls,rs,ta,tb", [c for c in CASES])
def test_dot_grad(ls, rs, ta, tb, rng):
    check_grad("dot", [rng.standard_normal(ls), rng.standard_normal(rs)],
               {"transpose_a": ta, "transpose_b": tb}, rng)


@pytest.mark.parametrize("ls,rs,kw,msg", [
    ((3, 4), (5, 6), {}, "shape error"),
    ((4,), (4,), {"transpose_a": True}, "cannot transpose vectors"),
    ((3, 4), (3, 4), {"transpose_b": False}, "shape error"),
])
def test_dot_errors(ls, rs, kw, msg):
    with pytest.raises(ValueError, match="dot: " + msg):
        mx.nd.dot(mx.nd.zeros(ls), mx.nd.zeros(rs), **kw)


def test_dot_rejects_int_and_mixed():
    with pytest.raises(ValueError, match="dot"):
        mx.nd.dot(mx.nd.zeros((2, 2), dtype=np.int32), mx.nd.zeros((2, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="dot"):
        mx.nd.dot(mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2), dtype=np.float64))
    with pytest.raises(ValueError, match="forward_stype"):
        mx.nd.batch_dot(mx.nd.zeros((1, 2, 2)), mx.nd.zeros((1, 2, 2)), forward_stype="csr")
    with pytest.raises(ValueError, match="forward_stype"):
        mx.nd.dot(mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2)), forward_stype="coo")


def test_dot_forward_stype_keeps_values():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    for fs in ("default", "csr", "row_sparse"):
        out = mx.nd.dot(mx.nd.array(a), mx.nd.array(b), forward_stype=fs)
        np.testing.assert_allclose(out.tostype("default").asnumpy(), a @ b, rtol=1e-6)
        out = mx.nd.dot(mx.nd.array(a).tostype("csr"), mx.nd.array(b), forward_stype=fs)
        np.testing.assert_allclose(out.tostype("default").asnumpy(), a @ b, rtol=1e-6)


def _ref_batch(a, b, ta, tb):
    A = np.swapaxes(a, -1, -2) if ta else a
    B = np.swapaxes(b, -1, -2) if tb else b
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(a.dtype)


BCASES = [((6, 3, 4), (6, 4, 5)), ((2, 3, 3, 4), (2, 3, 4, 5)), ((40, 9, 7), (40, 7, 8)),
          ((3, 50, 60), (3, 60, 40))]


@pytest.mark.parametrize("ls,rs", BCASES)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_dot_forward(ls, rs, ta, tb, dtype, rng):
    a = rng.uniform(-1, 1, ls).astype(dtype)
    b = rng.uniform(-1, 1, rs).astype(dtype)
    if ta:
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    if tb:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    exp = _ref_batch(a, b, ta, tb)
    if dtype == np.float32:
        got = mx.nd.batch_dot(mx.nd.array(a), mx.nd.array(b), transpose_a=ta,
                              transpose_b=tb).asnumpy()
        np.testing.assert_allclose(got, exp, rtol=1e-4, atol=1e-5)
    else:
        check_forward("batch_dot", [a, b], {"transpose_a": ta, "transpose_b": tb}, exp)


def test_batch_dot_float16(rng):
    a = rng.uniform(-1, 1, (4, 3, 5)).astype(np.float16)
    b = rng.uniform(-1, 1, (4, 5, 2)).astype(np.float16)
    got = mx.nd.batch_dot(mx.nd.array(a, dtype=np.float16), mx.nd.array(b, dtype=np.float16))
    np.testing.assert_allclose(got.asnumpy().astype(np.float32),
                               (a.astype(np.float32) @ b.astype(np.float32)), rtol=3e-3, atol=3e-3)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_batch_dot_grad(ta, tb, rng):
    a = rng.standard_normal((2, 4, 3) if ta else (2, 3, 4))
    b = rng.standard_normal((2, 5, 4) if tb else (2, 4, 5))
    check_grad("batch_dot", [a, b], {"transpose_a": ta, "transpose_b": tb}, rng)


@pytest.mark.parametrize("ls,rs,msg", [
    ((3, 4), (4, 5), "N >= 3"),
    ((2, 3, 4), (2, 4, 5, 1), "N >= 3"),
    ((2, 3, 4), (3, 4, 5), "leading batch"),
    ((2, 3, 4), (2, 5, 6), "shape mismatch"),
])
def test_batch_dot_errors(ls, rs, msg):
    with pytest.raises(ValueError, match="batch_dot.*" + msg):
        mx.nd.batch_dot(mx.nd.zeros(ls), mx.nd.zeros(rs))


def test_second_order_grad_graph(rng):
    """dot's gradient is made of dots: differentiating the gradient again works."""
    op = registry.get("dot")
    x = mx.nd.array(rng.standard_normal((3, 4)), dtype=np.float64)
    y = mx.nd.array(rng.standard_normal((4, 2)), dtype=np.float64)
    g = mx.nd.array(rng.standard_normal((3, 2)), dtype=np.float64)
    dx, dy = op.grad(mx.nd, op.parse({}), [x, y], [None], [g])
    np.testing.assert_allclose(dx.asnumpy(), g.asnumpy() @ y.asnumpy().T, rtol=1e-12)
    np.testing.assert_allclose(dy.asnumpy(), x.asnumpy().T @ g.asnumpy(), rtol=1e-12)


# ---- golden fixtures from MXNet 1.9.1 (tests/data/make_matrix_golden.py) ---------------------
GOLDEN_PATH = __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "data",
                                         "matrix_golden.npz")


def golden_cases(ops):
    """[(case, op, kwargs, inputs, out, head, grads or None)] for the operators in `ops`."""
    import json
    z = np.load(GOLDEN_PATH)
    cases = sorted({k.split("/")[0] for k in z.files})
    out = []
    for c in cases:
        op = str(z[f"{c}/op"])
        if op not in ops:
            continue
        ins, i = [], 0
        while f"{c}/in{i}" in z.files:
            ins.append(z[f"{c}/in{i}"])
            i += 1
        grads = [z[f"{c}/grad{j}"] for j in range(len(ins))] if f"{c}/grad0" in z.files else None
        head = z[f"{c}/head"] if grads is not None else None
        out.append((c, op, json.loads(str(z[f"{c}/kw"])), ins, z[f"{c}/out"], head, grads))
    return out


def check_golden(case, op, kw, ins, out, head, grads):
    """mxc's forward and its OpDef's gradient (for MXNet's head gradient) equal MXNet's."""
    tol = {np.dtype(np.float32): (1e-5, 1e-5), np.dtype(np.float64): (1e-10, 1e-10)}
    rtol, atol = tol[out.dtype]
    nd_in = [mx.nd.array(x, dtype=x.dtype) for x in ins]
    opdef = registry.get(op)
    kw2 = dict(kw)
    if opdef.variadic:
        kw2[opdef.variadic] = len(ins)
    # the registry's run, not mx.nd.<op>: FullyConnected(no_bias=True) takes 2 inputs
    got = register.run(opdef, nd_in, opdef.parse(kw2))
    assert got.dtype == out.dtype, case
    np.testing.assert_allclose(got.asnumpy(), out, rtol=rtol, atol=atol, err_msg=case)
    if grads is None:
        return
    gs = opdef.grad(mx.nd, opdef.parse(kw2), nd_in, [got], [mx.nd.array(head, dtype=head.dtype)])
    for k, (g, e) in enumerate(zip(gs, grads)):
        np.testing.assert_allclose(g.asnumpy(), e, rtol=rtol * 10, atol=atol * 10,
                                   err_msg=f"{case} grad{k}")


@pytest.mark.parametrize("case", golden_cases({"dot", "batch_dot"}), ids=lambda c: c[0])
def test_golden(case):
    check_golden(*case)
