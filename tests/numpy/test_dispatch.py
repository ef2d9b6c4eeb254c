"""numpy functions and ufuncs called on mx.np arrays (NEP 18 / NEP 13) dispatch to mx.np, as
in MXNet 1.9.1; anything else runs on the host and comes back as mx.np arrays."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np
from mxc import numpy_dispatch_protocol as proto


def test_listed_function_runs_the_mx_np_version_and_records():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = onp.sum(onp.square(x) * 1.0, axis=0)    # both dispatch to mx.np
    assert isinstance(y, np.ndarray) and y.dtype == onp.float32
    onp.testing.assert_allclose(y.asnumpy(), [10.0, 20.0])
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy())


def test_unlisted_function_falls_back_to_host_numpy():
    x = np.array([[1.0, 2.0, 4.0], [0.5, 0.5, 3.0]])
    c = onp.corrcoef(x)
    assert isinstance(c, np.ndarray) and c.dtype == onp.float64
    onp.testing.assert_allclose(c.asnumpy(), onp.corrcoef(x.asnumpy()))
    q, r = onp.linalg.qr(onp.eye(2) + x[:, :2])         # not listed: host, tuple of mx arrays
    assert isinstance(q, np.ndarray) and isinstance(r, np.ndarray)
    assert onp.ndim(x) == 2 and onp.shape(x) == (2, 3)


def test_fallback_refused_while_recording():
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        with pytest.raises(ValueError, match="numpy.corrcoef with autograd active"):
            onp.corrcoef(x)
        with pytest.raises(ValueError, match="numpy.spacing with autograd active"):
            onp.spacing(x)
        assert onp.ndim(x) == 1 and onp.size(x) == 2     # metadata: mx.np's, no host copy


def test_ufuncs_mixed_with_numpy_arrays_and_out():
    a = np.array([1.0, 2.0, 3.0])
    h = onp.array([1.0, 1.0, 1.0], dtype=onp.float32)
    for r in (onp.add(h, a), h + a, onp.multiply(a, 2.0)):
        assert isinstance(r, np.ndarray)
    onp.testing.assert_allclose((h + a).asnumpy(), [2.0, 3.0, 4.0])
    out = np.zeros(3)
    res = onp.exp(a, out=out)
    assert res is out
    onp.testing.assert_allclose(out.asnumpy(), onp.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    m, e = onp.frexp(a)                    # an unlisted ufunc: host, two results
    onp.testing.assert_allclose((m * 2.0 ** e.astype("float32")).asnumpy(), a.asnumpy())
    with pytest.raises(TypeError):
        onp.add.reduce(a)                  # ufunc methods are not dispatched (MXNet neither)


def test_protocol_lists_resolve():
    for name in proto._NUMPY_ARRAY_FUNCTION_LIST:
        mod_np, mod_mx = onp, np
        *pkg, leaf = name.split(".")
        for p in pkg:
            mod_np, mod_mx = getattr(mod_np, p), getattr(mod_mx, p)
        assert proto._NUMPY_ARRAY_FUNCTION_DICT[getattr(mod_np, leaf)] is getattr(mod_mx, leaf)
    assert "sum" in proto._NUMPY_ARRAY_FUNCTION_LIST and "linalg.eig" in \
        proto._NUMPY_ARRAY_FUNCTION_LIST
    # numpy 2 has none of these any more, so they cannot be dispatched
    assert not {"sometrue", "product", "round_"} & set(proto._NUMPY_ARRAY_FUNCTION_LIST)
    assert set(proto._NUMPY_ARRAY_UFUNC_LIST) >= {"add", "exp", "greater_equal", "bitwise_or"}


def test_protocol_decorators_report_failures():
    @proto.with_array_function_protocol
    def bad():
        raise KeyError("x")
    with pytest.raises(RuntimeError, match="bad with NumPy array function protocol failed"):
        bad()
    assert proto.with_array_ufunc_protocol(lambda: 3)() == 3
