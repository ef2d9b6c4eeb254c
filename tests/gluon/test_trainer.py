"""gluon.Trainer against MXNet 1.9.1 trajectories (tests/data/gluon/trainer_golden.npz) and
hand-written numpy updates."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon

from .test_block import TwoLayer

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "gluon")


def _optimizer():
    from mxc import optimizer
    return optimizer


def _net_from_golden(g):
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize(init="zeros")
    net(mx.nd.array(g["x"]))
    net.d0.weight.set_data(mx.nd.array(g["w0"]))
    net.d1.weight.set_data(mx.nd.array(g["w1"]))
    return net


def _loss_step(net, trainer, x, t, batch):
    with autograd.record():
        loss = ((net(x) - t) ** 2).sum()
    loss.backward()
    trainer.step(batch)


@pytest.mark.parametrize("key,opt,params", [
    ("sgd", "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("adam", "adam", {"learning_rate": 0.01})])
@pytest.mark.parametrize("hybrid", [False, True])
def test_trajectory_matches_mxnet(key, opt, params, hybrid):
    g = np.load(os.path.join(HERE, "trainer_golden.npz"))
    net = _net_from_golden(g)
    net.d1.weight.lr_mult = 0.5
    if hybrid:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), opt, params)
    x, t = mx.nd.array(g["x"]), mx.nd.array(g["t"])
    for _ in range(4):
        _loss_step(net, trainer, x, t, 8)
    for name, p in net.collect_params().items():
        np.testing.assert_allclose(p.data().asnumpy(), g[f"{key}/{name}"], rtol=1e-4, atol=1e-6,
                                   err_msg=name)


def test_sgd_steps_equal_manual_updates(rng):
    p = gluon.Parameter("w", shape=(5,))
    p.initialize(init="zeros")
    w0 = rng.uniform(-1, 1, 5).astype(np.float32)
    p.set_data(mx.nd.array(w0))
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.2, "wd": 0.1,
                                         "rescale_grad": 2.0})
    assert trainer.learning_rate == pytest.approx(0.2)
    c = rng.uniform(-1, 1, 5).astype(np.float32)
    w = w0.astype(np.float64)
    for step in range(3):
        with autograd.record():
            loss = (p.data() * mx.nd.array(c)).sum() * (step + 1)
        loss.backward()
        trainer.step(4)
        grad = c * (step + 1) * 2.0 / 4
        w = w - 0.2 * (grad + 0.1 * w)
    np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-5, atol=1e-6)
    trainer.set_learning_rate(0.05)
    assert trainer.learning_rate == pytest.approx(0.05)
    assert trainer.optimizer.learning_rate == pytest.approx(0.05)


def test_stale_gradient_error_and_ignore():
    used = gluon.Parameter("used", shape=(2,))
    unused = gluon.Parameter("unused", shape=(2,))
    frozen = gluon.Parameter("frozen", shape=(2,), grad_req="null")
    for q in (used, unused, frozen):
        q.initialize(init="ones")
    trainer = gluon.Trainer([used, unused, frozen], "sgd", {"learning_rate": 1.0})
    with autograd.record():
        y = (used.data() * 3).sum()
    y.backward()
    with pytest.raises(UserWarning, match="Gradient of Parameter `unused` on context cpu\\(0\\) "
                                          "has not been updated by backward since last `step`"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_allclose(used.data().asnumpy(), [-2, -2])
    np.testing.assert_allclose(unused.data().asnumpy(), [1, 1])
    # the gradient of `used` is stale now too: skipped, not applied twice
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_allclose(used.data().asnumpy(), [-2, -2])


def test_allreduce_then_update_equals_step(rng):
    def make():
        q = gluon.Parameter("w", shape=(3,))
        q.initialize(init="ones")
        return q, gluon.Trainer([q], "sgd", {"learning_rate": 0.5, "momentum": 0.5})
    c = mx.nd.array(rng.uniform(-1, 1, 3))
    (a, ta), (b, tb) = make(), make()
    for _ in range(2):
        for q in (a, b):
            with autograd.record():
                loss = (q.data() * c).sum()
            loss.backward()
        ta.step(2)
        tb.allreduce_grads()
        tb.update(2)
    np.testing.assert_allclose(b.data().asnumpy(), a.data().asnumpy(), rtol=1e-6)


def test_multi_context_gradients_are_summed(rng):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    p = gluon.Parameter("w", shape=(4,))
    p.initialize(init="zeros", ctx=ctxs)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.1}, kvstore="device")
    c = [rng.uniform(-1, 1, 4).astype(np.float32) for _ in ctxs]
    with autograd.record():
        losses = [(p.data(ctx) * mx.nd.array(ci, ctx=ctx)).sum() for ctx, ci in zip(ctxs, c)]
    autograd.backward(losses)
    trainer.step(2)
    expect = -0.1 * (c[0] + c[1]) / 2
    for ctx in ctxs:
        np.testing.assert_allclose(p.data(ctx).asnumpy(), expect, rtol=1e-5, atol=1e-7)


def test_update_on_kvstore_updates_keys_together(rng):
    """A Trainer that updates on the store hands all keys of a step to one updater call: six
    float32 keys take two fused updates (aggregate_num 4) instead of six, and the weights equal
    one context training on the summed gradients."""
    ctxs = [mx.cpu(0), mx.cpu(1)]
    shapes = [(3,), (2, 3), (4,), (5,), (1, 2), (3, 3)]
    coefs = [[rng.uniform(-1, 1, s).astype(np.float32) for s in shapes] for _ in ctxs]

    def make(ctx, kvstore, **kw):
        ps = [gluon.Parameter("p%d" % i, shape=s) for i, s in enumerate(shapes)]
        for q in ps:
            q.initialize(init="ones", ctx=ctx)
        return ps, gluon.Trainer(ps, "sgd", {"learning_rate": 0.1, "momentum": 0.9},
                                 kvstore=kvstore, **kw)

    ps, tr = make(ctxs, "device", update_on_kvstore=True)
    ref, rtr = make(mx.cpu(0), None)
    calls = []
    for step in range(3):
        with autograd.record():
            losses = [sum((q.data(ctx) * mx.nd.array(c[i], ctx=ctx)).sum()
                          for i, q in enumerate(ps)) for ctx, c in zip(ctxs, coefs)]
        autograd.backward(losses)
        with autograd.record():
            rloss = sum((q.data() * mx.nd.array(coefs[0][i] + coefs[1][i])).sum()
                        for i, q in enumerate(ref))
        rloss.backward()
        if step == 1:
            opt = tr._kvstore._updater.optimizer
            real = opt.update_multi_precision
            opt.update_multi_precision = lambda *a: (calls.append(a[0]), real(*a))
        tr.step(2)
        rtr.step(2)
        if step == 1:
            del opt.update_multi_precision
    assert tr._update_on_kvstore
    assert [list(c) for c in calls] == [[0, 1, 2, 3], [4, 5]]
    for q, r in zip(ps, ref):
        for ctx in ctxs:
            np.testing.assert_allclose(q.data(ctx).asnumpy(), r.data().asnumpy(), rtol=1e-6)


def test_save_and_load_states_resume(tmp_path, rng):
    x = mx.nd.array(rng.uniform(-1, 1, (4, 3)))
    t = mx.nd.array(rng.uniform(-1, 1, (4, 3)))

    def fresh():
        with mx.name.NameManager():
            net = TwoLayer()
        net.initialize(init="ones")
        net(x)
        return net, gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})

    net, trainer = fresh()
    for _ in range(2):
        _loss_step(net, trainer, x, t, 4)
    net.save_parameters(str(tmp_path / "n.params"))
    trainer.save_states(str(tmp_path / "t.states"))
    for _ in range(2):
        _loss_step(net, trainer, x, t, 4)
    net2, trainer2 = fresh()
    net2.load_parameters(str(tmp_path / "n.params"))
    trainer2.load_states(str(tmp_path / "t.states"))
    for _ in range(2):
        _loss_step(net2, trainer2, x, t, 4)
    for p, q in zip(net.collect_params().values(), net2.collect_params().values()):
        np.testing.assert_allclose(q.data().asnumpy(), p.data().asnumpy(), rtol=1e-6)
    assert trainer2.optimizer.param_dict[1] is net2.d0.weight   # sorted names: bias first


def test_constructor_errors():
    p = gluon.Parameter("w", shape=(1,))
    p.initialize()
    with pytest.raises(ValueError, match="First argument must be a list or dict of Parameters"):
        gluon.Trainer(p, "sgd")
    with pytest.raises(ValueError, match="got list of"):
        gluon.Trainer([p, 3], "sgd")
    opt = _optimizer().SGD(learning_rate=0.1)
    with pytest.raises(AssertionError, match="optimizer_params must be None"):
        gluon.Trainer([p], opt, {"learning_rate": 0.2})
    tr = gluon.Trainer([p], opt)
    assert tr.optimizer is opt and opt.param_dict == {0: p}
    q = gluon.Parameter("q", shape=(1,))
    q.initialize(ctx=mx.cpu(1))
    with pytest.raises(AssertionError, match="All Parameters must be initialized on the same set"):
        gluon.Trainer([p, q], "sgd")


def test_dict_params_are_sorted_by_name():
    pd = gluon.ParameterDict("n_")
    pd.get("b", shape=(1,))
    pd.get("a", shape=(1,))
    pd.initialize()
    tr = gluon.Trainer(pd, "sgd")
    assert [q.name for q in tr._params] == ["n_a", "n_b"]
