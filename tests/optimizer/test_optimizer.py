"""mx.optimizer: the Optimizer base (registry, lr/wd multipliers, counts, multi-precision) and
numpy references for the main update rules."""
import warnings

import numpy as np
import pytest

import mxc as mx


def _run(opt, w0, grads, index=0):
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0, dtype=w0.dtype)
    for g in grads:
        upd(index, mx.nd.array(g, dtype=g.dtype), w)
    return w.asnumpy(), upd


def _data(rng, shape=(4, 5), steps=4):
    w0 = rng.uniform(-1, 1, shape).astype(np.float32)
    grads = [rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(steps)]
    return w0, grads


def _clip(g, c):
    return g if c is None else np.clip(g, -c, c)


@pytest.mark.parametrize("momentum,wd,clip,rescale", [(0.0, 0.0, None, 1.0),
                                                      (0.9, 0.01, None, 1.0),
                                                      (0.5, 0.1, 0.7, 0.5)])
def test_sgd_numpy_reference(rng, momentum, wd, clip, rescale):
    w0, grads = _data(rng)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=wd, clip_gradient=clip,
                           rescale_grad=rescale)
    got, _ = _run(opt, w0, grads)
    w, mom = w0.astype(np.float64), np.zeros_like(w0, dtype=np.float64)
    for g in grads:
        step = 0.1 * (_clip(rescale * g, clip) + wd * w)
        if momentum:
            mom = momentum * mom - step
            w = w + mom
        else:
            w = w - step
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("wd,clip", [(0.0, None), (0.05, 0.5)])
def test_adam_numpy_reference(rng, wd, clip):
    w0, grads = _data(rng)
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.01
    got, _ = _run(mx.optimizer.Adam(learning_rate=lr, wd=wd, clip_gradient=clip), w0, grads)
    w = w0.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = _clip(g + wd * w, clip)      # adam_update clips after adding weight decay
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * m / (np.sqrt(v) + eps)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_numpy_reference(rng, centered):
    w0, grads = _data(rng)
    lr, g1, g2, eps = 0.01, 0.9, 0.9, 1e-8
    got, _ = _run(mx.optimizer.RMSProp(learning_rate=lr, centered=centered), w0, grads)
    w = w0.astype(np.float64)
    n = np.zeros_like(w)
    gm = np.zeros_like(w)
    delta = np.zeros_like(w)
    for g in grads:
        n = (1 - g1) * g * g + g1 * n
        if centered:
            gm = (1 - g1) * g + g1 * gm
            delta = g2 * delta - lr * g / np.sqrt(n - gm * gm + eps)
            w = w + delta
        else:
            w = w - lr * g / np.sqrt(n + eps)
    np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-6)


def test_adagrad_numpy_reference(rng):
    w0, grads = _data(rng)
    got, _ = _run(mx.optimizer.AdaGrad(learning_rate=0.1, wd=0.01), w0, grads)
    w = w0.astype(np.float64)
    h = np.zeros_like(w)
    for g in grads:
        h += g * g
        w = w - 0.1 * (g / np.sqrt(h + 1e-7) + 0.01 * w)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_nag_numpy_reference(rng):
    w0, grads = _data(rng)
    lr, mu, wd = 0.1, 0.9, 0.01
    got, _ = _run(mx.optimizer.NAG(learning_rate=lr, momentum=mu, wd=wd), w0, grads)
    w = w0.astype(np.float64)
    mom = np.zeros_like(w)
    for g in grads:
        # MXNet's nag_mom_update kernel, run in place (out is weight): the momentum's weight
        # decay term reads the already updated weight
        mom = mu * mom
        w = w - mom + (mu + 1) * (mom - lr * (g + wd * w))
        mom = mom - lr * (g + wd * w)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_dcasgd_with_momentum(rng):
    # MXNet 1.9.1 raises here (`if mom:` on an array); mxc runs the documented rule
    w0, grads = _data(rng)
    lr, mu, lam = 0.1, 0.9, 0.04
    got, _ = _run(mx.optimizer.DCASGD(learning_rate=lr, momentum=mu, lamda=lam), w0, grads)
    w = w0.astype(np.float64)
    prev = w.copy()
    mom = np.zeros_like(w)
    for g in grads:
        mom = mu * mom - lr * (g + lam * g * g * (w - prev))
        prev = w.copy()
        w = w + mom
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_sgld_follows_seed_and_noise_scale():
    w0 = np.zeros((200, 100), np.float32)
    g = [np.zeros_like(w0)]
    mx.random.seed(11)
    a, _ = _run(mx.optimizer.SGLD(learning_rate=0.04), w0, g)
    mx.random.seed(11)
    b, _ = _run(mx.optimizer.SGLD(learning_rate=0.04), w0, g)
    np.testing.assert_array_equal(a, b)
    assert abs(a.mean()) < 0.005
    assert abs(a.std() - 0.2) < 0.005           # N(0, lr): std sqrt(0.04)
    # the deterministic half step: weight -= lr/2 * (grad + wd * weight)
    mx.random.seed(11)
    c, _ = _run(mx.optimizer.SGLD(learning_rate=0.04), w0, [np.ones_like(w0)])
    np.testing.assert_allclose(c - a, -0.02, atol=1e-6)


def test_create_register_and_aliases():
    assert isinstance(mx.optimizer.create("SGD"), mx.optimizer.SGD)
    assert type(mx.opt.create("ccsgd")) is mx.optimizer.ccSGD
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("adam", beta1=0.5),
                      mx.optimizer.Adam)
    with pytest.raises(ValueError, match="Cannot find optimizer nosuch"):
        mx.optimizer.create("nosuch")

    @mx.optimizer.register
    class MyOptH2(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] -= grad

    try:
        assert isinstance(mx.optimizer.create("myopth2"), MyOptH2)
        with pytest.warns(UserWarning, match="overriding existing optimizer"):
            mx.optimizer.register(MyOptH2)
    finally:
        mx.optimizer.Optimizer.opt_registry.pop("myopth2")
    assert mx.optimizer.contrib.GroupAdaGrad is mx.optimizer.Optimizer.opt_registry["groupadagrad"]


def test_learning_rate_and_scheduler(capsys):
    o = mx.optimizer.Optimizer(learning_rate=0.01)
    o.set_learning_rate(0.2)
    assert o.learning_rate == 0.2
    assert mx.optimizer.Optimizer().learning_rate == 0.01
    sched = mx.lr_scheduler.FactorScheduler(step=1)
    o2 = mx.optimizer.Optimizer(lr_scheduler=sched, learning_rate=0.3)
    assert "overwritten" in capsys.readouterr().out
    assert o2.learning_rate == 0.3 and sched.base_lr == 0.3
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer"):
        o2.set_learning_rate(0.5)
    o3 = mx.optimizer.Optimizer(lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1,
                                                                             base_lr=1024))
    assert o3.learning_rate == 1024


def test_lr_wd_mult_from_names_and_symbol():
    data = mx.sym.Variable("data")
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name="fc1", num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=10, wd_mult=0.5)
    names = fc2.list_arguments()
    idx2name = {i: n for i, n in enumerate(names) if n != "data"}
    opt = mx.optimizer.SGD(sym=fc2, param_idx2name=idx2name, wd=0.1, learning_rate=1.0)
    assert opt.lr_mult == {"fc1_bias": 1.0, "fc1_weight": 0.0}
    assert opt.wd_mult == {"fc2_bias": 0.5, "fc2_weight": 0.5, "fc1_bias": 0.0}
    by_name = {n: i for i, n in idx2name.items()}
    assert opt._get_lr(by_name["fc1_weight"]) == 0.0
    assert opt._get_lr(by_name["fc2_weight"]) == 1.0
    assert opt._get_wd(by_name["fc1_weight"]) == 0.1
    assert opt._get_wd(by_name["fc2_bias"]) == pytest.approx(0.05)
    opt.set_lr_mult({by_name["fc2_weight"]: 3.0})       # by index beats the name table
    assert opt._get_lr(by_name["fc2_weight"]) == 3.0
    assert opt.lr_mult[by_name["fc2_weight"]] == 3.0 and "fc1_weight" in opt.lr_mult


def test_param_dict_multipliers():
    class P:
        lr_mult, wd_mult = 0.25, 4.0
    opt = mx.optimizer.SGD(learning_rate=0.4, wd=0.01, param_dict={0: P()})
    assert opt._get_lr(0) == pytest.approx(0.1) and opt._get_wd(0) == pytest.approx(0.04)
    assert opt._get_lr(1) == pytest.approx(0.4)
    state = opt.__getstate__()
    assert "param_dict" not in state


def test_update_counts_begin_num_update_and_devices():
    opt = mx.optimizer.SGD(begin_num_update=10)
    opt._update_count(0)
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 12, 1: 11} and opt.num_update == 12
    opt._set_current_context(1)
    opt._update_count(0)
    assert opt._index_update_count == {0: 11}
    assert opt._all_index_update_counts[0] == {0: 12, 1: 11}
    assert opt.num_update == 12


def test_float16_warns_without_multi_precision():
    w = mx.nd.ones((3,), dtype="float16")
    with pytest.warns(UserWarning, match="multi_precision=True"):
        mx.optimizer.Adam().create_state_multi_precision(0, w)
    st = mx.optimizer.Adam(multi_precision=True).create_state_multi_precision(0, w)
    assert st[0].dtype == np.float32 and st[1][0].dtype == np.float32
    st = mx.optimizer.SGD(momentum=0.9, multi_precision=True).create_state_multi_precision(0, w)
    assert st[0].dtype == np.float32 and st[1].dtype == np.float32     # (mom, weight32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.optimizer.SGD(multi_precision=True).create_state_multi_precision(0, w)


def test_multi_precision_keeps_small_steps():
    # 1e-4 steps vanish in float16 arithmetic at weight 1.0 but add up in the float32 master
    w0 = np.ones((8,), np.float16)
    grads = [np.full((8,), 1e-4, np.float16)] * 20
    got, upd = _run(mx.optimizer.SGD(learning_rate=1.0, multi_precision=True), w0, grads)
    np.testing.assert_allclose(upd.states[0][1].asnumpy(), 1 - 20e-4, rtol=1e-4)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), np.float16(1 - 20e-4), rtol=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain, _ = _run(mx.optimizer.SGD(learning_rate=1.0), w0, grads)
    np.testing.assert_array_equal(plain, np.ones(8, np.float16))


def test_lazy_update_touches_only_gradient_rows():
    w0 = np.ones((5, 3), np.float32)
    g = np.zeros((5, 3), np.float32)
    g[[1, 3]] = 0.5
    w = mx.nd.array(w0)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1)
    upd = mx.optimizer.get_updater(opt)
    upd(0, mx.nd.array(g).tostype("row_sparse"), w)
    out = w.asnumpy()
    np.testing.assert_array_equal(out[[0, 2, 4]], 1.0)
    np.testing.assert_allclose(out[[1, 3]], 1 - 0.1 * (0.5 + 0.1), rtol=1e-6)
    # lazy_update=False: the standard update decays every row
    w = mx.nd.array(w0)
    upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1,
                                                    lazy_update=False))
    upd(0, mx.nd.array(g).tostype("row_sparse"), w)
    np.testing.assert_allclose(w.asnumpy()[0], 1 - 0.01, rtol=1e-6)


def test_adagrad_sparse_rejects_weight_decay():
    g = mx.nd.array(np.ones((3, 2), np.float32)).tostype("row_sparse")
    upd = mx.optimizer.get_updater(mx.optimizer.AdaGrad(wd=0.1))
    with pytest.raises(ValueError, match="weight decay"):
        upd(0, g, mx.nd.ones((3, 2)))


def test_test_optimizer_and_state():
    got, upd = _run(mx.optimizer.Test(rescale_grad=2.0), np.zeros(3, np.float32),
                    [np.ones(3, np.float32)])
    np.testing.assert_array_equal(got, [2, 2, 2])
    np.testing.assert_array_equal(upd.states[0].asnumpy(), [2, 2, 2])


def test_bad_inputs_are_named():
    opt = mx.optimizer.Adam()
    with pytest.raises(AssertionError, match="weight must be an NDArray"):
        opt.update(0, np.ones(2), mx.nd.ones(2), opt.create_state(0, mx.nd.ones(2)))
    with pytest.raises(AssertionError, match="param_idx2name"):
        mx.optimizer.SGD(param_idx2name=[1, 2])


# MXNet 1.9.1's optimizers, all defined in mxnet/optimizer/optimizer.py there
_MXNET_19 = ("SGD", "Signum", "FTML", "LARS", "LBSGD", "LAMB", "DCASGD", "NAG", "SGLD", "ccSGD",
             "Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "Adamax", "Nadam", "Test")


@pytest.mark.parametrize("name", _MXNET_19)
def test_one_module_per_optimizer_and_mxnet_paths(name):
    import io
    import pickle
    from mxc.optimizer.updater import _StatesUnpickler, dumps_states, loads_states
    cls = getattr(mx.optimizer, name)
    # MXNet 1.9.1 code imports mx.optimizer.optimizer.SGD; create() finds every one
    assert getattr(mx.optimizer.optimizer, name) is cls
    assert type(mx.optimizer.create(name.lower())) is cls
    want_module = {"Test": "optimizer", "ccSGD": "sgd"}.get(name, name.lower())
    assert cls.__module__ == f"mxc.optimizer.{want_module}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = cls(learning_rate=0.25)
    assert type(pickle.loads(pickle.dumps(opt))) is cls
    # .states files name the class as MXNet 1.9.1 does, and read back under either path
    blob = dumps_states(({}, opt))
    assert b"mxnet.optimizer.optimizer" in blob and name.encode() in blob
    assert b"mxc.optimizer" not in blob
    st, back = loads_states(blob)
    assert type(back) is cls and back.lr == 0.25
    reader = _StatesUnpickler(io.BytesIO(b""))
    for module in ("mxnet.optimizer", f"mxnet.optimizer.{want_module}", cls.__module__):
        assert reader.find_class(module, name) is cls


def test_lars_takes_sgds_step():
    # with eta chosen so the layer ratio is 1, LARS is SGD (its step is SGD's, not a copy)
    rng = np.random.RandomState(5)
    w0, grads = _data(rng)
    w_norm = np.linalg.norm(w0)
    g_norm = np.linalg.norm(grads[0])
    lars = mx.optimizer.LARS(learning_rate=0.1, momentum=0.0, eta=g_norm / w_norm)
    sgd = mx.optimizer.SGD(learning_rate=0.1, momentum=0.0)
    assert isinstance(lars, mx.optimizer.SGD)
    w_lars, _ = _run(lars, w0, grads[:1])
    w_sgd, _ = _run(sgd, w0, grads[:1])
    np.testing.assert_allclose(w_lars, w_sgd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_sgd, w0 - 0.1 * grads[0], rtol=1e-6, atol=1e-6)
    # biases keep the scheduled rate; only weights decay by default
    lars = mx.optimizer.LARS(param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"})
    assert lars.wd_mult == {"fc_bias": 0.0, "bn_gamma": 0.0}
