"""Mixed precision on gpu(0) (skipped without a GPU, see conftest.py): mx.contrib.amp with its
float16 lists trains a small convnet with dynamic loss scaling as on the CPU (the same steps
skipped for overflow, the same losses to float16 rounding), multi_precision SGD and Adam keep float32
master weights of float16 parameters, convert_hybrid_block gives a float16 inference block on
the GPU, and the overflow check (multi_all_finite) runs its GPU kernel."""
import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from mxc.contrib import amp
from mxc.contrib.amp import amp as amp_mod


@pytest.fixture
def amp_on():
    amp.init("float16")
    try:
        yield
    finally:
        amp_mod._restore()


def _net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.MaxPool2D(2), gluon.nn.Conv2D(8, 3, padding=1), gluon.nn.LayerNorm(axis=1),
            gluon.nn.GlobalAvgPool2D(), gluon.nn.Dense(5))
    return net


def _data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((6, 3, 8, 8)).astype(np.float32),
            rng.integers(0, 5, 6).astype(np.float32))


def _params():
    x, _ = _data()
    ref = _net()
    ref.initialize(mx.init.Xavier())
    ref(mx.nd.array(x[:1]))
    return [v.data().asnumpy() for v in ref.collect_params().values()]


def _amp_train(ctx, params, steps=8):
    x, y = _data()
    net = _net()
    net.initialize(ctx=ctx)
    net(mx.nd.array(x[:1], ctx=ctx))
    for p, v in zip(net.collect_params().values(), params):
        p.set_data(mx.nd.array(v, ctx=ctx))
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    amp.init_trainer(tr)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    d, lab = mx.nd.array(x, ctx=ctx), mx.nd.array(y, ctx=ctx)
    losses, scales = [], []
    for _ in range(steps):
        with autograd.record():
            out = net(d)
            loss = loss_fn(out, lab)
            with amp.scale_loss(loss, tr) as scaled:
                autograd.backward(scaled)
        tr.step(len(x))
        assert out.dtype == np.float16 and out.context == ctx   # the lists put Dense in fp16
        losses.append(float(loss.mean().asscalar()))
        scales.append(tr._amp_loss_scaler.loss_scale)
    return losses, scales


def test_amp_trains_on_the_gpu_as_on_the_cpu(amp_on):
    params = _params()
    lc, sc = _amp_train(mx.cpu(), params)
    lg, sg = _amp_train(mx.gpu(0), params)
    assert sg == sc                          # the same steps overflowed and were skipped
    assert sg[-1] < 2.0 ** 16                # some did: the scale came down
    assert np.all(np.isfinite(lg)) and lg[-1] < lg[0]
    np.testing.assert_allclose(lg, lc, rtol=3e-2)


@pytest.mark.parametrize("opt,kw", [
    ("sgd", {"learning_rate": 0.05, "momentum": 0.9}),     # mp_sgd_mom_update's kernel
    ("adam", {"learning_rate": 0.01}),                     # adam_update on the float32 copy
])
def test_multi_precision_updates_on_the_gpu(opt, kw):
    # float16 parameters with float32 master weights
    x, y = _data()
    params = _params()
    res = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        net = _net()
        net.initialize(ctx=ctx)
        net(mx.nd.array(x[:1], ctx=ctx))
        for p, v in zip(net.collect_params().values(), params):
            p.set_data(mx.nd.array(v, ctx=ctx))
        net.cast("float16")
        tr = gluon.Trainer(net.collect_params(), opt, dict(kw, multi_precision=True))
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        d = mx.nd.array(x, ctx=ctx, dtype="float16")
        lab = mx.nd.array(y, ctx=ctx, dtype="float16")
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(d), lab)
            loss.backward()
            tr.step(len(x))
        # Adam's step is about lr * sign(gradient) whatever its size: the first convolution's
        # bias, whose gradient BatchNorm makes rounding noise (1e-4 against 0.6 for its weight),
        # moves by +-lr per step in directions no two devices share; it is left out for Adam
        res.append([p.data().asnumpy() for p in net.collect_params().values()
                    if not (opt == "adam" and p is net[0].bias)])
        # (BatchNorm keeps float32 parameters under cast, as MXNet's)
        assert net[0].weight.data().dtype == np.float16
    for g, c in zip(res[1], res[0]):
        np.testing.assert_allclose(g.astype(np.float32), c.astype(np.float32), rtol=2e-2,
                                   atol=2e-2)


def test_convert_hybrid_block_runs_in_float16_on_the_gpu():
    x, _ = _data()
    ctx = mx.gpu(0)
    net = _net()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize()
    d = mx.nd.array(x, ctx=ctx)
    want = net(d).asnumpy()
    lp = amp.convert_hybrid_block(net, target_dtype="float16")   # stays on the GPU
    got = lp(d)
    assert got.context == ctx
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), want, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_overflow_check_on_the_gpu(dtype):
    ctx = mx.gpu(0)
    good = mx.nd.array(np.arange(1000), ctx=ctx, dtype=dtype)
    bad = mx.nd.array([1.0, np.inf, 2.0], ctx=ctx, dtype=dtype)
    assert mx.nd.all_finite(good).asnumpy()[0] == 1
    assert mx.nd.all_finite(bad).asnumpy()[0] == 0
    flag = mx.nd.ones((1,), ctx=ctx)
    mx.nd.multi_all_finite(good, bad, num_arrays=2, init_output=False, out=flag)
    mx.nd.multi_all_finite(good, good, num_arrays=2, init_output=False, out=flag)
    assert flag.asnumpy()[0] == 0            # cleared once, kept cleared
    mx.nd.multi_all_finite(good, good, num_arrays=2, init_output=True, out=flag)
    assert flag.asnumpy()[0] == 1
