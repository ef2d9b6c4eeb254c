"""Scatter operators (mxc/ops/sparse_scatter.py): the dense operation on dense arrays, with its
gradient; with a sparse left operand, values only at its stored rows (row_sparse) or entries
(CSR, scalar operators), the storage kept."""
import numpy as np
import pytest

import mxc as mx

from .oputil import check_forward, check_grad


def _rsp_input():
    a = np.zeros((5, 4), np.float32)
    a[1] = [1, -2, 0, 4]
    a[3] = [0, 0.5, 3, 1]
    return a


def test_scatter_ops_dense_forward_and_grad():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2, (3, 4))
    y = rng.uniform(0.5, 2, (3, 4))
    check_forward("_scatter_elemwise_div", [x, y], {}, x / y)
    check_forward("_scatter_plus_scalar", [x], {"scalar": 2.5}, x + 2.5)
    check_forward("_scatter_minus_scalar", [x], {"scalar": 2.5}, x - 2.5)
    check_grad("_scatter_elemwise_div", [x, y], {}, rng)
    check_grad("_scatter_plus_scalar", [x], {"scalar": 2.5}, rng)
    check_grad("_scatter_minus_scalar", [x], {"scalar": 2.5}, rng)


@pytest.mark.parametrize("name,f", [("_scatter_plus_scalar", lambda v: v + 9),
                                    ("_scatter_minus_scalar", lambda v: v - 9)])
@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_scatter_scalar_keeps_unstored_zeros(name, f, stype):
    a = _rsp_input()
    x = mx.nd.array(a).tostype(stype)
    r = getattr(mx.nd._internal, name)(x, scalar=9)
    assert r.stype == stype
    if stype == "row_sparse":
        want = np.zeros_like(a)
        want[[1, 3]] = f(a[[1, 3]])                     # whole stored rows
        assert r.indices.asnumpy().tolist() == [1, 3]
    else:
        want = np.where(a != 0, f(a), 0)                # stored entries only
        np.testing.assert_array_equal(r.indices.asnumpy(), x.indices.asnumpy())
    np.testing.assert_allclose(r.asnumpy(), want, rtol=1e-6)


def test_scatter_div_row_sparse_and_csr():
    a = _rsp_input()
    b = np.arange(1, 21, dtype=np.float32).reshape(5, 4)
    r = mx.nd._internal._scatter_elemwise_div(mx.nd.array(a).tostype("row_sparse"),
                                              mx.nd.array(b))
    assert r.stype == "row_sparse" and r.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_allclose(r.asnumpy(), a / b, rtol=1e-6)
    # a CSR lhs with an array rhs: MXNet's storage fallback (dense result)
    r = mx.nd._internal._scatter_elemwise_div(mx.nd.array(a).tostype("csr"), mx.nd.array(b))
    np.testing.assert_allclose(r.asnumpy(), a / b, rtol=1e-6)
    # through a bound symbol with a sparse argument
    s = mx.sym._internal._scatter_plus_scalar(mx.sym.var("x", stype="row_sparse"), scalar=1)
    out = s.bind(mx.cpu(), args={"x": mx.nd.array(a).tostype("row_sparse")}).forward()[0]
    want = np.zeros_like(a)
    want[[1, 3]] = a[[1, 3]] + 1
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_quadratic_and_square_sum_keep_sparse_storage():
    a = _rsp_input()
    c = mx.nd.array(a).tostype("csr")
    r = mx.nd.contrib.quadratic(c, a=2, b=-1)
    assert r.stype == "csr"
    np.testing.assert_allclose(r.asnumpy(), 2 * a * a - a, rtol=1e-6)
    r = mx.nd.contrib.quadratic(c, a=2, b=-1, c=1)       # f(0) != 0: dense
    assert r.stype == "default"
    np.testing.assert_allclose(r.asnumpy(), 2 * a * a - a + 1, rtol=1e-6)
    x = mx.nd.array(a).tostype("row_sparse")
    r = mx.nd._internal._square_sum(x, axis=1, keepdims=True)
    assert r.stype == "row_sparse" and r.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_allclose(r.asnumpy(), (a * a).sum(1, keepdims=True), rtol=1e-6)
    r = mx.nd._internal._square_sum(x, axis=0)
    assert r.stype == "default"
    np.testing.assert_allclose(r.asnumpy(), (a * a).sum(0), rtol=1e-6)
