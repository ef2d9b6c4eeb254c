"""mx.nd.contrib.foreach / while_loop / cond: Python bodies run eagerly and recorded by
autograd; values against numpy loops, gradients against central differences."""
import numpy as np
import pytest

import mxc as mx


def _central(f, args, eps=1e-6):
    """Gradients of the float f(**numpy args) by central differences."""
    res = {}
    for k, v in args.items():
        g = np.zeros(v.shape)
        for idx in np.ndindex(v.shape):
            plus = {n: x.copy() for n, x in args.items()}
            minus = {n: x.copy() for n, x in args.items()}
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (f(**plus) - f(**minus)) / (2 * eps)
        res[k] = g
    return res


def _autograd(f, args):
    arrs = {k: mx.nd.array(v, dtype="float64") for k, v in args.items()}
    for a in arrs.values():
        a.attach_grad()
    with mx.autograd.record():
        y = f(**arrs)
    y.backward()
    return float(y.asscalar()), {k: a.grad.asnumpy() for k, a in arrs.items()}


def _value(f):
    return lambda **a: float(f(**{k: mx.nd.array(v, dtype="float64") for k, v in a.items()})
                             .asscalar())


def test_foreach_values_and_gradients():
    rng = np.random.RandomState(0)
    args = {"data": rng.uniform(-1, 1, (4, 3)), "h": rng.uniform(-1, 1, (3,)),
            "w": rng.uniform(-1, 1, (3,))}
    c = rng.uniform(-1, 1, (4, 3))

    def f(data, h, w):
        outs, states = mx.nd.contrib.foreach(
            lambda x, st: (x * st[0], [mx.nd.tanh(st[0] * w + x)]), data, [h])
        return (outs * mx.nd.array(c, dtype="float64")).sum() + states[0].sum()

    st, rows = args["h"], []
    for x in args["data"]:
        rows.append(x * st)
        st = np.tanh(st * args["w"] + x)
    val, grads = _autograd(f, args)
    np.testing.assert_allclose(val, (np.stack(rows) * c).sum() + st.sum(), rtol=1e-12)
    num = _central(_value(f), args)
    for k in args:
        np.testing.assert_allclose(grads[k], num[k], rtol=1e-5, atol=1e-7, err_msg=k)


def test_foreach_nested_lists_keep_their_format():
    d1, d2 = mx.nd.arange(6).reshape((3, 2)), mx.nd.ones((3, 1))
    outs, states = mx.nd.contrib.foreach(
        lambda xs, st: ([xs[0] + xs[1], [xs[0]]], [st[0] + xs[1], st[1]]),
        [d1, d2], [mx.nd.zeros((1,)), mx.nd.ones((2,))])
    assert isinstance(outs, list) and isinstance(outs[1], list)
    np.testing.assert_array_equal(outs[0].asnumpy(), np.arange(6).reshape(3, 2) + 1)
    np.testing.assert_array_equal(outs[1][0].asnumpy(), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(states[0].asnumpy(), [3])
    np.testing.assert_array_equal(states[1].asnumpy(), [1, 1])


def test_while_loop_values_padding_and_gradients():
    rng = np.random.RandomState(1)
    args = {"s": rng.uniform(-1, 1, (2,)), "w": rng.uniform(-1, 1, (2,))}
    c = rng.uniform(-1, 1, (3, 2))

    def f(s, w):
        outs, (i, s_end) = mx.nd.contrib.while_loop(
            cond=lambda i, s: i < 3, func=lambda i, s: (s * w, (i + 1, mx.nd.sin(s) + w)),
            loop_vars=(mx.nd.array([0.0], dtype="float64"), s), max_iterations=5)
        # one step output comes back as one array, of max_iterations rows
        assert outs.shape == (5, 2) and i.asscalar() == 3
        return (outs[:3] * mx.nd.array(c, dtype="float64")).sum() + s_end.sum()

    cur, want = args["s"], 0.0
    for k in range(3):
        want += (cur * args["w"] * c[k]).sum()
        cur = np.sin(cur) + args["w"]
    val, grads = _autograd(f, args)
    np.testing.assert_allclose(val, want + cur.sum(), rtol=1e-12)
    num = _central(_value(f), args)
    for k in args:
        np.testing.assert_allclose(grads[k], num[k], rtol=1e-5, atol=1e-7, err_msg=k)


def test_while_loop_stops_at_max_iterations_and_checks_arguments():
    outs, s = mx.nd.contrib.while_loop(lambda s: s < 100, lambda s: (s, s * 2),
                                       mx.nd.array([1.0]), max_iterations=4)
    np.testing.assert_array_equal(outs.asnumpy()[:, 0], [1, 2, 4, 8])
    assert s.asscalar() == 16           # a single loop variable comes back unwrapped
    with pytest.raises(ValueError, match="max_iterations"):
        mx.nd.contrib.while_loop(lambda s: s < 1, lambda s: (s, s), [mx.nd.ones(1)])
    with pytest.raises(ValueError, match="consistent"):
        mx.nd.contrib.while_loop(lambda a, b: a < 2, lambda a, b: (a, [a + 1]),
                                 [mx.nd.ones(1), mx.nd.ones(1)], max_iterations=3)


@pytest.mark.parametrize("scale", [0.1, 10.0])
def test_cond_branches_and_gradients(scale):
    rng = np.random.RandomState(2)
    args = {"a": rng.uniform(0.5, 1, (3,)) * scale, "b": rng.uniform(0.5, 1, (3,))}

    def f(a, b):
        out = mx.nd.contrib.cond((a * b).sum() < 5, lambda: a * b + a, lambda: mx.nd.exp(a - b))
        return out.sum()

    a, b = args["a"], args["b"]
    want = (a * b + a).sum() if (a * b).sum() < 5 else np.exp(a - b).sum()
    val, grads = _autograd(f, args)
    np.testing.assert_allclose(val, want, rtol=1e-12)
    num = _central(_value(f), args)
    for k in args:
        np.testing.assert_allclose(grads[k], num[k], rtol=1e-5, atol=1e-7, err_msg=k)
