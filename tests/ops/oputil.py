"""Checks shared by the registry-driven operator tests."""
import numpy as np

import mxc as mx
from mxc.ops import registry

# one tolerance table per dtype: (rtol, atol)
TOL = {np.float16: (2e-3, 2e-3), np.float32: (2e-5, 1e-6), np.float64: (1e-10, 1e-12)}


def tol(dtype):
    return TOL.get(np.dtype(dtype).type, (0, 0))


def run(opname, inputs, kwargs):
    """Run operator `opname` through mx.nd on numpy inputs; numpy outputs (list)."""
    fn = getattr(mx.nd, opname)
    out = fn(*[mx.nd.array(x, dtype=x.dtype) for x in inputs], **kwargs)
    outs = out if isinstance(out, list) else [out]
    return [o.asnumpy() for o in outs]


def check_forward(opname, inputs, kwargs, expected):
    """Forward equals the numpy reference; shapes and dtypes equal the op's inference."""
    op = registry.get(opname)
    got = run(opname, inputs, kwargs)
    exp = expected if isinstance(expected, list) else [expected]
    assert len(got) == len(exp), opname
    for g, e in zip(got, exp):
        e = np.asarray(e)
        assert g.shape == e.shape, f"{opname}: shape {g.shape} != {e.shape}"
        assert g.dtype == e.dtype, f"{opname}: dtype {g.dtype} != {e.dtype}"
        rtol, atol = tol(g.dtype)
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=opname, equal_nan=True)
    if op.infer is not None:
        kw = dict(kwargs)
        if op.variadic:
            kw.setdefault(op.variadic, len(inputs))
        attrs = op.parse(kw)
        shapes, dtypes = op.infer(attrs, [x.shape for x in inputs], [x.dtype for x in inputs])
        assert [tuple(s) for s in shapes] == [g.shape for g in got], opname
        assert [np.dtype(d) for d in dtypes] == [g.dtype for g in got], opname


def check_grad(opname, inputs, kwargs, rng, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-7):
    """The OpDef's gradient against central differences of the forward, in float64."""
    op = registry.get(opname)
    inputs = [np.asarray(x, dtype=np.float64) if np.issubdtype(np.asarray(x).dtype, np.floating)
              else np.asarray(x) for x in inputs]
    nd_in = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    out = getattr(mx.nd, opname)(*nd_in, **kwargs)
    outs = out if isinstance(out, list) else [out]
    heads = [rng.standard_normal(o.shape) for o in outs]
    kw = dict(kwargs)
    if op.variadic:
        kw.setdefault(op.variadic, len(inputs))
    grads = op.grad(mx.nd, op.parse(kw), nd_in, outs,
                    [mx.nd.array(h, dtype=np.float64) for h in heads])

    def f(xs):
        r = run(opname, xs, kwargs)
        return sum(float(np.sum(o * h)) for o, h in zip(r, heads))

    wrt = range(len(inputs)) if wrt is None else wrt
    for k in wrt:
        assert grads[k] is not None, f"{opname}: no gradient for input {k}"
        g = grads[k].asnumpy()
        assert g.shape == inputs[k].shape, opname
        num = np.zeros_like(inputs[k])
        flat = num.reshape(-1)
        for i in range(inputs[k].size):
            xp = [x.copy() for x in inputs]
            xm = [x.copy() for x in inputs]
            xp[k].reshape(-1)[i] += eps
            xm[k].reshape(-1)[i] -= eps
            flat[i] = (f(xp) - f(xm)) / (2 * eps)
        np.testing.assert_allclose(g, num, rtol=rtol, atol=atol, err_msg=f"{opname} d/dinput{k}")
