"""Autograd: MXNet 1.x's semantics (grad_req write/add/null, retain_graph, pause, create_graph,
custom Function, train/predict mode), gradients checked against numpy formulas and central
differences."""
import numpy as np
import pytest

import mxc as mx
from mxc import autograd
from mxc.base import MXNetError


def _x(values):
    x = mx.nd.array(np.asarray(values, dtype=np.float64), dtype=np.float64)
    x.attach_grad()
    return x


def test_chain_matches_formula(rng):
    xn = rng.uniform(-1, 1, (3, 4))
    x = _x(xn)
    with autograd.record():
        y = mx.nd.exp(x) * x + x.sum()
        z = (y ** 2).sum()
    z.backward()
    yv = np.exp(xn) * xn + xn.sum()
    expected = 2 * yv * (np.exp(xn) * xn + np.exp(xn)) + (2 * yv).sum()
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-12)


def test_broadcast_and_reduce_against_central_differences(rng):
    an, bn = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))

    def f(a, b):
        return ((mx.nd.broadcast_mul(a, b) + mx.nd.tanh(a)).mean(axis=0) * b.reshape((3,))).sum()

    a, b = _x(an), _x(bn)
    with autograd.record():
        out = f(a, b)
    out.backward()
    for arr, base, k in ((a, an, 0), (b, bn, 1)):
        num = np.zeros_like(base)
        for i in range(base.size):
            p, m = base.copy(), base.copy()
            p.flat[i] += 1e-6
            m.flat[i] -= 1e-6
            args_p = [mx.nd.array(p if k == j else (an if j == 0 else bn), dtype=np.float64)
                      for j in range(2)]
            args_m = [mx.nd.array(m if k == j else (an if j == 0 else bn), dtype=np.float64)
                      for j in range(2)]
            num.flat[i] = (f(*args_p).asscalar() - f(*args_m).asscalar()) / 2e-6
        np.testing.assert_allclose(arr.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)


def test_grad_req_add_accumulates_write_overwrites_null_skips():
    x = _x([1.0, 2.0, 3.0])
    x.attach_grad("add")
    for _ in range(3):
        with autograd.record():
            y = (x * 2).sum()
        y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6, 6, 6])
    w = _x([1.0, 2.0])
    for _ in range(2):
        with autograd.record():
            y = (w * w).sum()
        y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [2, 4])
    n = _x([1.0])
    n.attach_grad("null")
    with autograd.record():
        y = n * 5
    y.backward()
    np.testing.assert_array_equal(n.grad.asnumpy(), [0])


def test_head_gradient_defaults_to_ones_and_can_be_given():
    x = _x([1.0, 2.0])
    with autograd.record():
        y = x * 3
    y.backward(mx.nd.array([10.0, 100.0], dtype=np.float64))
    np.testing.assert_array_equal(x.grad.asnumpy(), [30, 300])
    with autograd.record():
        y = x * 3
    autograd.backward([y])
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 3])


def test_second_backward_through_freed_graph_is_a_clear_error():
    x = _x([1.0, 2.0])
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    with pytest.raises(MXNetError, match="retain_graph"):
        y.backward()


def test_an_output_of_a_freed_graph_is_a_constant_in_a_new_one():
    # MXNet: once backward freed a graph, its outputs start new graphs as constants
    x = _x([1.0, 2.0])
    w = _x([3.0, 4.0])
    with autograd.record():
        b = x + 1
        (b * b).sum().backward()
    with autograd.record():
        b2 = b + 1                      # b's history is gone: a constant [3, 4]
        z = (b2 * w).sum()
    z.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [3.0, 4.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, 6.0])   # from the first backward only


def test_retain_graph_allows_two_backwards():
    x = _x([1.0, 2.0])
    x.attach_grad("add")
    with autograd.record():
        y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4, 8])


def test_pause_is_not_recorded_and_backward_needs_a_graph():
    x = _x([1.0, 2.0])
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
            z = x * 2
        y = x * 3
    assert z._ag is None and y._ag is not None
    with pytest.raises(MXNetError, match="not in a computational graph"):
        z.backward()
    assert not autograd.is_recording()


def test_mode_scopes_and_setters():
    assert not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training() and not autograd.is_recording()
        with autograd.predict_mode():
            assert not autograd.is_training()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    prev = autograd.set_recording(True)
    assert prev is False and autograd.is_recording()
    assert autograd.set_recording(False) is True
    assert autograd.set_training(True) is False
    assert autograd.set_training(False) is True


def test_create_graph_gives_second_order():
    xn = np.array([0.5, -1.0, 2.0])
    x = _x(xn)
    with autograd.record():
        y = x * x * x + mx.nd.sin(x)
        dy = autograd.grad(y, [x], create_graph=True)[0]
    np.testing.assert_allclose(dy.asnumpy(), 3 * xn ** 2 + np.cos(xn), rtol=1e-12)
    dy.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * xn - np.sin(xn), rtol=1e-12)


def test_grad_returns_without_touching_dot_grad():
    x = _x([1.0, 2.0])
    with autograd.record():
        y = (x * x).sum()
    g = autograd.grad(y, x)
    np.testing.assert_array_equal(g[0].asnumpy(), [2, 4])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0])


def test_views_reshape_and_slices_are_recorded():
    x = _x(np.arange(6.0))
    with autograd.record():
        y = (x[1:4] * 2).sum() + (x.reshape((2, 3))[1] * 3).sum() + x[0] * 5
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [5, 2, 2, 5, 3, 3])


def test_inplace_write_to_a_variable_while_recording_is_an_error():
    x = _x([1.0, 2.0])
    with autograd.record():
        with pytest.raises(MXNetError, match="computational graph"):
            x += 1


def test_detach_cuts_the_graph():
    x = _x([1.0, 2.0])
    with autograd.record():
        y = x * 2
        z = (y.detach() * x).sum()
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 4])


def test_mark_variables_with_own_buffers():
    x = mx.nd.array([1.0, 2.0, 3.0])
    g = mx.nd.zeros(3)
    autograd.mark_variables([x], [g], "write")
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    np.testing.assert_array_equal(g.asnumpy(), [2, 4, 6])
    assert x.grad is g


def test_custom_function():
    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y) * 10     # scaled so it is clearly this backward that ran

    xn = np.array([-1.0, 0.0, 2.0])
    x = _x(xn)
    with autograd.record():
        y = Sigmoid()(x)
    y.backward()
    s = 1 / (1 + np.exp(-xn))
    np.testing.assert_allclose(y.asnumpy(), s, rtol=1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), 10 * s * (1 - s), rtol=1e-12)


def test_multiple_heads_and_shared_subgraph():
    x = _x([1.0, 2.0])
    with autograd.record():
        a = x * x
        y1 = a * 2
        y2 = a + x
    autograd.backward([y1, y2])
    # d/dx (2x^2) + d/dx (x^2 + x) = 4x + 2x + 1
    np.testing.assert_array_equal(x.grad.asnumpy(), [7, 13])


def test_graph_memory_is_freed_with_its_outputs():
    import gc
    import weakref
    x = _x(np.ones(4))
    with autograd.record():
        y = x * 2
        z = y * 3
    node = weakref.ref(z._ag.node)
    del y, z
    assert node() is None       # no reference cycles: freed without the garbage collector
    gc.collect()


# ---- prepared gradients (autograd._prepared_grad): traced once per signature, replayed --------
def _mlp_grads(rng_seed, prepared):
    from mxc._core import tape
    r = np.random.RandomState(rng_seed)
    x = mx.nd.array(r.rand(6, 7).astype(np.float32))
    y = mx.nd.array(r.randint(0, 3, 6).astype(np.float32))
    ws = [mx.nd.array(r.randn(5, 7).astype(np.float32)), mx.nd.array(r.randn(3, 5).astype(np.float32))]
    bs = [mx.nd.array(r.randn(5).astype(np.float32)), mx.nd.array(r.randn(3).astype(np.float32))]
    for p in ws + bs:
        p.attach_grad()
    prev = tape.set_grad_runner(autograd._prepared_grad if prepared else None)
    try:
        out = []
        for _ in range(2):        # the second pass replays the cached plans
            with autograd.record():
                h = mx.nd.relu(mx.nd.FullyConnected(x, ws[0], bs[0], num_hidden=5))
                o = mx.nd.FullyConnected(h, ws[1], bs[1], num_hidden=3)
                loss = -mx.nd.pick(mx.nd.log_softmax(o), y).mean()
            loss.backward()
            out.append([p.grad.asnumpy().copy() for p in ws + bs])
    finally:
        tape.set_grad_runner(prev)
    return x.asnumpy(), y.asnumpy(), [w.asnumpy() for w in ws], [b.asnumpy() for b in bs], out


def test_prepared_gradients_equal_eager_bit_for_bit_and_numpy():
    xn, yn, ws, bs, prep = _mlp_grads(3, True)
    _, _, _, _, eager = _mlp_grads(3, False)
    for a, b in zip(prep[0] + prep[1], eager[0] + eager[1]):
        np.testing.assert_array_equal(a, b)
    # numpy reference of the same two-layer network
    h_pre = xn @ ws[0].T + bs[0]
    h = np.maximum(h_pre, 0)
    o = h @ ws[1].T + bs[1]
    p = np.exp(o - o.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    do = p.copy()
    do[np.arange(len(yn)), yn.astype(int)] -= 1
    do /= len(yn)
    dh = (do @ ws[1]) * (h_pre > 0)
    expected = [dh.T @ xn, do.T @ h, dh.sum(0), do.sum(0)]
    for got, exp in zip(prep[1], expected):
        np.testing.assert_allclose(got, exp, rtol=1e-4, atol=1e-5)


def test_prepared_gradient_skips_unneeded_input_and_keeps_needed_ones():
    # data x is not in the graph: FullyConnected's data gradient (a GEMM) is not computed
    autograd._GRAD_PLANS.clear()
    x = mx.nd.array(np.ones((2, 3), np.float32))
    w = mx.nd.array(np.arange(12, dtype=np.float32).reshape(4, 3))
    w.attach_grad()
    with autograd.record():
        y = mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=4)
    y.backward(mx.nd.ones((2, 4)))
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((4, 3), 2, np.float32))
    plan = next(v for k, v in autograd._GRAD_PLANS.items() if k[0].name == "FullyConnected")
    kernels = [st[0].name for st in plan.steps if st[0] is not None]
    assert kernels == ["dot"], kernels
    # with x attached, both gradients come back
    x.attach_grad()
    with autograd.record():
        y = mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=4)
    y.backward(mx.nd.ones((2, 4)))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.tile(w.asnumpy().sum(0), (2, 1)))


@pytest.fixture
def zero_fills(monkeypatch):
    """The shapes of the arrays filled with a constant (the zeros_like operator, or _full) while
    it runs."""
    from mxc.ops import registry
    shapes = []

    def count(op):
        fwd = op.forward

        def counted(a, inputs, outputs):
            shapes.extend(o.shape for o in outputs)
            fwd(a, inputs, outputs)
        monkeypatch.setattr(op, "forward", counted)
    count(registry.get("_full"))
    count(registry.get("zeros_like"))
    return shapes


@pytest.mark.parametrize("prepared", [True, False])
def test_outputs_without_a_gradient_get_zeros_where_the_gradient_reads_them(prepared,
                                                                            zero_fills):
    # split's gradient concatenates all output gradients: the unused outputs' are zeros
    prev = autograd._tape.set_grad_runner(autograd._prepared_grad if prepared else None)
    try:
        xn = np.arange(12, dtype=np.float32).reshape(2, 6)
        x = mx.nd.array(xn)
        x.attach_grad()
        for _ in range(2):                  # the second time through a prepared plan
            with autograd.record():
                a, b, c = mx.nd.split(x, num_outputs=3, axis=1)
                z = (b * b).sum()
            z.backward()
            want = np.zeros_like(xn)
            want[:, 2:4] = 2 * xn[:, 2:4]
            np.testing.assert_array_equal(x.grad.asnumpy(), want)
        assert (2, 2) in zero_fills
    finally:
        autograd._tape.set_grad_runner(prev)


def test_a_hidden_output_the_gradient_never_reads_is_not_filled(zero_fills, rng):
    # max Pooling's argmax output gets no gradient and its gradient ignores it: no zeros made
    xn = rng.permutation(64).reshape(1, 1, 8, 8).astype(np.float32)
    x = mx.nd.array(xn)
    x.attach_grad()
    for _ in range(2):
        with autograd.record():
            y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
        y.backward(mx.nd.array(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)))
        blocks = xn.reshape(4, 2, 4, 2).transpose(0, 2, 1, 3).reshape(16, 4)
        want = np.zeros((16, 4), np.float32)
        want[np.arange(16), blocks.argmax(1)] = np.arange(16)
        np.testing.assert_array_equal(
            x.grad.asnumpy(), want.reshape(4, 4, 2, 2).transpose(0, 2, 1, 3).reshape(1, 1, 8, 8))
    assert zero_fills == []


def _storage(a):
    return (a._chunk, a._offset)


def test_backward_writes_a_sole_gradient_into_dot_grad_in_place():
    """backward() hands a variable's .grad to the kernel making its gradient when that gradient
    alone sets it (grad_req 'write'), as MXNet's kWriteTo: no copy, same values; a variable
    reached twice, a head, 'add' and autograd.grad keep the summed/copied/returned results."""
    from mxc.ndarray.ndarray import run_backward
    xn = np.arange(6, dtype=np.float32).reshape(2, 3)
    wn = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    bn = np.array([0.5, -0.5, 1.0, 2.0], np.float32)
    x, w, b = mx.nd.array(xn), mx.nd.array(wn), mx.nd.array(bn)
    for a in (w, b):
        a.attach_grad()
        a.grad[:] = 99                      # stale contents are overwritten, not added to
    w_grad, b_grad = w.grad, b.grad
    for _ in range(2):                      # the second time through prepared gradients
        with autograd.record():
            y = mx.nd.FullyConnected(x, w, b, num_hidden=4)
            z = (y * y).sum()
        grads = run_backward([z], None, False, False, True, into_grads=True)
        assert _storage(grads[id(w._ag)][1]) == _storage(w.grad)
        assert _storage(grads[id(b._ag)][1]) == _storage(b.grad)
        with autograd.record():
            y = mx.nd.FullyConnected(x, w, b, num_hidden=4)
            z = (y * y).sum()
        z.backward()
        dy = 2 * (xn @ wn.T + bn)
        assert w.grad is w_grad and b.grad is b_grad
        np.testing.assert_allclose(w.grad.asnumpy(), dy.T @ xn, rtol=1e-5)
        np.testing.assert_allclose(b.grad.asnumpy(), dy.sum(0), rtol=1e-5)
    # reached by two nodes: the sum lands in .grad
    with autograd.record():
        z = (mx.nd.FullyConnected(x, w, b, num_hidden=4) * 2).sum() + (w * w).sum()
    grads = run_backward([z], None, False, False, True, into_grads=True)
    assert _storage(grads[id(w._ag)][1]) != _storage(w.grad)
    with autograd.record():
        z = (mx.nd.FullyConnected(x, w, b, num_hidden=4) * 2).sum() + (w * w).sum()
    z.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * np.tile(xn.sum(0), (4, 1)) + 2 * wn,
                               rtol=1e-5)
    # autograd.grad leaves .grad alone
    before = w.grad.asnumpy()
    with autograd.record():
        z = (mx.nd.FullyConnected(x, w, b, num_hidden=4) * 3).sum()
    (g,) = autograd.grad(z, [w])
    np.testing.assert_allclose(g.asnumpy(), 3 * np.tile(xn.sum(0), (4, 1)), rtol=1e-5)
    np.testing.assert_array_equal(w.grad.asnumpy(), before)
    # grad_req 'add' accumulates
    w.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            z = (mx.nd.FullyConnected(x, w, b, num_hidden=4) * 3).sum()
        z.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), 6 * np.tile(xn.sum(0), (4, 1)), rtol=1e-5)


def _bn_train(rng_seed, prepared):
    """Two recorded BatchNorm (training) passes and backwards: the inputs, per pass the
    gradients and the moving statistics after the backward, and the shapes backward() copied
    into a .grad (none when each gradient's kernel wrote it there)."""
    from mxc._core import tape
    r = np.random.default_rng(rng_seed)
    xn = r.standard_normal((4, 3, 5, 2)).astype(np.float32) * 2 + 1
    dyn = r.standard_normal(xn.shape).astype(np.float32)
    gn = r.uniform(0.5, 1.5, 3).astype(np.float32)
    bn = r.standard_normal(3).astype(np.float32)
    x, g, b = mx.nd.array(xn), mx.nd.array(gn), mx.nd.array(bn)
    mm, mv = mx.nd.zeros(3), mx.nd.ones(3)
    for a in (x, g, b):
        a.attach_grad()
    copied = []
    copyto = mx.nd._copyto

    def counted(src, out=None, **kw):
        copied.append(src.shape)
        return copyto(src, out=out, **kw)
    mx.nd._copyto = counted
    prev = tape.set_grad_runner(autograd._prepared_grad if prepared else None)
    try:
        passes = []
        for _ in range(2):        # the second pass replays the cached plan
            with autograd.record():
                y = mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False, eps=1e-3, momentum=0.8)
            y.backward(mx.nd.array(dyn))
            passes.append([a.asnumpy().copy() for a in (x.grad, g.grad, b.grad, mm, mv)])
    finally:
        tape.set_grad_runner(prev)
        mx.nd._copyto = copyto
    return xn, dyn, gn, passes, copied


def test_batchnorm_gradient_is_prepared_and_equals_the_eager_walk_and_numpy(rng):
    """BatchNorm's backward writes the moving statistics in place (as MXNet's CPU backward):
    its prepared plan must run that write on the node's own arrays, each replay, and leave the
    results bit for bit those of the eager walk; gamma's and beta's gradients land in .grad."""
    seed = int(rng.integers(2**31))
    autograd._GRAD_PLANS.clear()
    xn, dyn, gn, prep, copied = _bn_train(seed, True)
    plans = [v for k, v in autograd._GRAD_PLANS.items() if k[0].name == "BatchNorm"]
    assert plans and all(p is not False for p in plans)
    assert copied == [], copied
    _, _, _, eager, _ = _bn_train(seed, False)
    for got, exp in zip(prep, eager):
        for a, e in zip(got, exp):
            np.testing.assert_array_equal(a, e)
    # numpy reference (float64): batch statistics over (N, H, W); the moving statistics follow
    # m <- m * momentum + stat * (1 - momentum) once per backward (the biased variance)
    x64, dy64 = xn.astype(np.float64), dyn.astype(np.float64)
    red, n = (0, 2, 3), xn.size // xn.shape[1]
    mean, var = x64.mean(red), x64.var(red)
    inv = 1 / np.sqrt(var + 1e-3)
    xh = (x64 - mean[None, :, None, None]) * inv[None, :, None, None]
    db = dy64.sum(red)
    dg = (dy64 * xh).sum(red)
    dx = (gn[None, :, None, None] * inv[None, :, None, None]) * (
        dy64 - db[None, :, None, None] / n - xh * dg[None, :, None, None] / n)
    for k, exp in enumerate((dx, dg, db)):
        np.testing.assert_allclose(prep[1][k], exp, rtol=1e-4, atol=1e-4)
    mm, mv = np.zeros(3), np.ones(3)
    for p in prep:
        mm, mv = mm * 0.8 + mean * 0.2, mv * 0.8 + var * 0.2
        np.testing.assert_allclose(p[3], mm, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(p[4], mv, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybrid", [False, True])
def test_a_grad_array_the_computation_reads_is_not_written_early(hybrid):
    """dW = dY^T . data where data is W's own .grad array: the product must read the old .grad,
    so that gradient is not written into .grad by the kernel (it is copied afterwards)."""
    wn = np.arange(9, dtype=np.float32).reshape(3, 3)
    gn = np.linspace(1, 2, 9, dtype=np.float32).reshape(3, 3)
    w = mx.nd.array(wn)
    w.attach_grad()
    w.grad[:] = gn
    if hybrid:
        d, v = mx.sym.var("d"), mx.sym.var("w")
        op = mx.nd.CachedOp(mx.sym.FullyConnected(d, v, num_hidden=3, no_bias=True),
                            [("static_alloc", True)])
        fc = lambda a, b: op(a, b)                                      # noqa: E731
    else:
        fc = lambda a, b: mx.nd.FullyConnected(a, b, num_hidden=3, no_bias=True)  # noqa: E731
    for _ in range(2):
        with autograd.record():
            y = fc(w.grad, w)
        y.backward(mx.nd.ones((3, 3)))
        expected = np.tile(gn.sum(0), (3, 1))
        np.testing.assert_allclose(w.grad.asnumpy(), expected, rtol=1e-6)
        gn = expected


def test_backward_refuses_a_gradient_through_an_operator_without_one():
    """MXNet 1.9.1: "Operator _shuffle is non-differentiable because it didn't register
    FGradient attribute." at backward; a BlockGrad in between lets the gradient of the rest
    through (x.grad all ones here, as MXNet's)."""
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    for f, name in ((lambda v: mx.nd.shuffle(v), "_shuffle"),
                    (lambda v: mx.nd.all_finite(v), "all_finite")):
        with mx.autograd.record():
            y = f(x).sum()
        with pytest.raises(MXNetError, match=f"Operator {name} is non-differentiable"):
            y.backward()
    with mx.autograd.record():
        y = (mx.nd.BlockGrad(mx.nd.shuffle(x)) + x).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_second_order_of_a_gradient_that_does_not_read_x_is_zero():
    """radians' gradient is a constant times the head: its own gradient in x is zero (as MXNet,
    whose _backward_radians reads x), not an error; zeros_like is the operator, recorded"""
    x = mx.nd.array([0.5, -1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.radians(x)
        g1 = mx.autograd.grad(heads=y, variables=x, head_grads=mx.nd.array([1.0, 2.0, 3.0]),
                              create_graph=True, retain_graph=True)[0]
        g2 = mx.autograd.grad(heads=g1, variables=x, head_grads=mx.nd.ones((3,)),
                              create_graph=True, retain_graph=True)[0]
    np.testing.assert_allclose(g1.asnumpy(), np.array([1.0, 2.0, 3.0]) * np.pi / 180, rtol=1e-6)
    np.testing.assert_array_equal(g2.asnumpy(), [0, 0, 0])
    with mx.autograd.record():
        z = mx.nd.zeros_like(x) + x * 3
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 3, 3])
    assert mx.nd.op.zeros_like is not mx.nd.zeros_like
    assert mx.nd.op.relu(mx.nd.array([-1.0, 2.0])).asnumpy().tolist() == [0, 2]
