"""mx.mod.Module: binding, parameters, training against references, checkpoints, MXNet fixtures."""
import logging
import os
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc import nd

FIX = os.path.join(os.path.dirname(__file__), "..", "data", "module")


def mlp(num_hidden=8, num_classes=3):
    d = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(d, num_hidden=num_hidden, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.FullyConnected(h, num_hidden=num_classes, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def blobs(rng, n=96, dim=4, classes=3, noise=0.5):
    centers = 2.0 * np.eye(classes, dim)
    y = np.arange(n) % classes
    x = centers[y] + noise * rng.standard_normal((n, dim))
    return x.astype(np.float32), y.astype(np.float32)


def init_params(rng, dim=4, hidden=8, classes=3):
    return {"fc1_weight": nd.array(0.5 * rng.standard_normal((hidden, dim))),
            "fc1_bias": nd.zeros((hidden,)),
            "fc2_weight": nd.array(0.5 * rng.standard_normal((classes, hidden))),
            "fc2_bias": nd.zeros((classes,))}


def params_np(mod):
    arg, _ = mod.get_params()
    return {k: v.asnumpy() for k, v in arg.items()}


# ---- binding and basic computation --------------------------------------------------------------
def test_bind_errors_and_flags():
    sym = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(TypeError):
        mod.bind(data_shapes=[("data", mx.nd.array([10, 10]))])
    assert mod.binded is False
    with pytest.raises(ValueError, match="don't match names"):
        mod.bind(data_shapes=[("x", (4, 2))])
    mod.bind(data_shapes=[("data", (10, 10))])
    assert mod.binded
    assert mod.data_shapes[0].shape == (10, 10) and mod.label_shapes is None
    assert mod.output_shapes == [("activation0_output", (10, 10))] or \
        mod.output_shapes[0][1] == (10, 10)
    with pytest.raises(ValueError, match="not found in symbol.list_arguments"):
        mx.mod.Module(sym, ("nodata",), None)
    with pytest.warns(UserWarning, match="label_names"):
        mx.mod.Module(sym, ("data",), ("no_label",))


def test_input_grads_over_two_devices():
    a, b, c = (mx.sym.Variable(n, __layout__="NC") for n in "abc")
    out = a + 2 * b + 3 * c
    mod = mx.mod.Module(out, data_names=["b", "c", "a"], label_names=None,
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[["b", (5, 5)], ["c", (5, 5)], ["a", (5, 5)]], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[nd.ones((5, 5))] * 3))
    mod.backward(out_grads=[nd.ones((5, 5))])
    gb, gc, ga = (g.asnumpy() for g in mod.get_input_grads())
    assert (ga == 1).all() and (gb == 2).all() and (gc == 3).all()
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((5, 5), 6.0))
    # per device: round(2.5) = 2, the rest to the last device (as MXNet)
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape for p in parts] == [(2, 5), (3, 5)]


def test_layout_splits_batch_axis():
    sym = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu", __layout__="TNC")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    x = np.random.default_rng(0).standard_normal((3, 8, 7)).astype(np.float32)
    mod.forward(mx.io.DataBatch(data=[nd.array(x)]))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
    for part in mod.get_outputs(merge_multi_context=False)[0]:
        assert part.shape == (3, 4, 7)


def test_float16_module():
    sym = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (4, 3), np.float16)])
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[nd.ones((4, 3), dtype=np.float16)]))
    mod.backward([nd.ones((4, 3), dtype=np.float16)])
    assert all(o.dtype == np.float16 for o in mod.get_outputs())


def test_forward_reshapes_on_new_batch_shape(rng):
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (2, 4))])
    mod.init_params()
    w = mod.get_params()[0]["fc_weight"].asnumpy()
    for n in (2, 5, 1):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        mod.forward(mx.io.DataBatch([nd.array(x)]))
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), x @ w.T, rtol=1e-5,
                                   atol=1e-6)
    # any object with .data works, and so do NDArray / numpy inputs to predict
    from collections import namedtuple
    Batch = namedtuple("Batch", ["data"])
    mod.forward(Batch([nd.ones((3, 4))]))
    assert mod.get_outputs()[0].shape == (3, 3)
    assert mod.predict(np.ones((2, 4))).shape == (2, 3)


def test_module_reshape_updates_shared_params():
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=20, name="fc")
    mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (7, 20))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 1})
    mod.forward(mx.io.DataBatch(data=[nd.ones((7, 20))]))
    mod.backward([nd.ones((7, 20))])
    mod.update()
    # bias gradient per sample is 1, rescale_grad = 1/7, lr 1: bias = -1
    np.testing.assert_allclose(mod.get_params()[0]["fc_bias"].asnumpy(), -1, rtol=1e-6)
    mod.reshape(data_shapes=[("data", (14, 20))])
    mod.forward(mx.io.DataBatch(data=[nd.ones((14, 20))]))
    mod.backward([nd.ones((14, 20))])
    mod.update()
    assert mod.get_outputs()[0].shape == (14, 20)
    np.testing.assert_allclose(mod.get_params()[0]["fc_bias"].asnumpy(), -3, rtol=1e-6)


def test_set_params_missing_and_extra():
    x = mx.sym.Variable("data")
    x = mx.sym.FullyConnected(x, name="fc_0", num_hidden=2)
    x = mx.sym.FullyConnected(x, name="fc_1", num_hidden=2)
    x = mx.sym.LinearRegressionOutput(x, name="softmax")
    mod = mx.mod.Module(x)
    mod.bind([("data", (1, 2))], [("softmax_label", (1, 2))])
    full = {"fc_0_weight": nd.ones((2, 2)), "fc_0_bias": nd.ones(2),
            "fc_1_weight": nd.ones((2, 2)), "fc_1_bias": nd.ones(2) * 3}
    missing = {k: v for k, v in full.items() if k != "fc_1_bias"}
    extra = dict(full, fc_2_weight=nd.ones(2))
    mod.set_params(full, {}, force_init=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_1_bias"].asnumpy(), [3, 3])
    mod.set_params(missing, {}, allow_missing=True, force_init=True)
    with pytest.raises(RuntimeError, match="fc_1_bias is not presented"):
        mod.set_params(missing, {}, allow_missing=False, force_init=True)
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True, force_init=True)
    with pytest.raises(ValueError, match="fc_2_weight"):
        mod.set_params(extra, {}, allow_missing=True, allow_extra=False, force_init=True)
    with pytest.raises(RuntimeError):
        mod.set_params({"fc_2_weight": nd.ones(2)}, {}, force_init=True)
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params()


def test_init_params_uses_initializer_and_attrs():
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("fc_weight", init=mx.init.Constant(0.5))
    sym = mx.sym.FullyConnected(data, weight=w, num_hidden=3, name="fc")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind([("data", (2, 4))])
    mod.init_params(initializer=mx.init.Constant(0.25))
    arg, _ = mod.get_params()
    assert (arg["fc_weight"].asnumpy() == 0.5).all()   # the variable's own init wins
    assert (arg["fc_bias"].asnumpy() == 0).all()       # biases start at 0 (as MXNet)
    mod.init_params(initializer=mx.init.Constant(0.25), force_init=True,
                    arg_params={"fc_bias": nd.ones(3)}, allow_missing=True)
    arg, _ = mod.get_params()
    assert (arg["fc_weight"].asnumpy() == 0.5).all() and (arg["fc_bias"].asnumpy() == 1).all()


def test_batchnorm_aux_params_and_save_load_params(tmp_path, rng):
    data = mx.sym.Variable("data")
    sym = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="bn")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind([("data", (4, 5))])
    mod.init_params()
    _, aux = mod.get_params()
    assert sorted(aux) == ["bn_moving_mean", "bn_moving_var"]
    assert (aux["bn_moving_var"].asnumpy() == 1).all()
    mod.forward(mx.io.DataBatch([nd.array(rng.standard_normal((4, 5)))]), is_train=True)
    mod.backward([nd.ones((4, 3))])
    fname = str(tmp_path / "m.params")
    mod.save_params(fname)
    keys = sorted(mx.nd.load(fname))
    assert keys == ["arg:bn_beta", "arg:bn_gamma", "arg:fc_bias", "arg:fc_weight",
                    "aux:bn_moving_mean", "aux:bn_moving_var"]
    mod2 = mx.mod.Module(sym, label_names=None)
    mod2.bind([("data", (4, 5))])
    mod2.init_params()
    mod2.load_params(fname)
    for d1, d2 in zip(mod.get_params(), mod2.get_params()):
        for k in d1:
            np.testing.assert_array_equal(d1[k].asnumpy(), d2[k].asnumpy())


def test_fixed_params_are_not_updated(rng):
    x, y = blobs(rng, n=12)
    mod = mx.mod.Module(mlp(), fixed_param_names=["fc1_weight"])
    mod.bind([("data", (12, 4))], [("softmax_label", (12,))])
    mod.init_params(arg_params=init_params(rng), force_init=True)
    before = params_np(mod)
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    mod.forward_backward(mx.io.DataBatch([nd.array(x)], [nd.array(y)]))
    mod.update()
    after = params_np(mod)
    np.testing.assert_array_equal(before["fc1_weight"], after["fc1_weight"])
    assert np.abs(before["fc2_weight"] - after["fc2_weight"]).max() > 1e-4


def test_update_without_params():
    mod = mx.mod.Module(mx.sym.Dropout(mx.sym.Variable("data"), 0.5))
    mod.bind(data_shapes=[("data", (10, 10))])
    mod.init_params()
    mod.init_optimizer()
    mod.forward_backward(mx.io.DataBatch([nd.ones((10, 10))]))
    mod.update()
    assert mod.get_outputs()[0].shape == (10, 10)


def test_init_optimizer_idx2name_and_rescale_warning():
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=20, name="fc")
    mod = mx.mod.Module(sym, ("data",), None)
    mod.bind(data_shapes=[("data", (8, 20))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1})
    assert mod._optimizer.idx2name == dict(enumerate(mod._exec_group.param_names))
    assert mod._optimizer.rescale_grad == pytest.approx(1.0 / 8)
    mod2 = mx.mod.Module(sym, ("data",), None)
    mod2.bind(data_shapes=[("data", (8, 20))])
    mod2.init_params()
    with pytest.warns(UserWarning, match="rescale_grad"):
        mod2.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=1))
    assert mod2._optimizer.idx2name == {0: "fc_weight", 1: "fc_bias"}


# ---- training ----------------------------------------------------------------------------------
def test_matches_manual_executor_sgd_loop(rng):
    """Module's forward/backward/update equals simple_bind + a numpy SGD-momentum update."""
    x, y = blobs(rng, n=48)
    init = init_params(rng)
    lr, mom, wd, bs = 0.2, 0.9, 0.01, 16
    mod = mx.mod.Module(mlp())
    mod.bind([("data", (bs, 4))], [("softmax_label", (bs,))])
    mod.init_params(arg_params=init)
    mod.init_optimizer(optimizer="sgd",
                       optimizer_params={"learning_rate": lr, "momentum": mom, "wd": wd})

    exe = mlp().simple_bind(mx.cpu(), data=(bs, 4), softmax_label=(bs,))
    weights = {k: v.asnumpy().astype(np.float64) for k, v in init.items()}
    moms = {k: np.zeros_like(v) for k, v in weights.items()}
    for step in range(6):
        sl = slice((step % 3) * bs, (step % 3 + 1) * bs)
        batch = mx.io.DataBatch([nd.array(x[sl])], [nd.array(y[sl])])
        mod.forward_backward(batch)
        mod.update()
        for k, v in weights.items():
            exe.arg_dict[k][:] = v.astype(np.float32)
        exe.arg_dict["data"][:] = x[sl]
        exe.arg_dict["softmax_label"][:] = y[sl]
        exe.forward(is_train=True)
        exe.backward()
        for k in weights:
            # MXNet's optimizer gives wd_mult 0 to parameters not named *_weight / *_gamma
            wd_k = wd if k.endswith("_weight") else 0.0
            g = exe.grad_dict[k].asnumpy().astype(np.float64) / bs + wd_k * weights[k]
            moms[k] = mom * moms[k] - lr * g
            weights[k] = weights[k] + moms[k]
        got = params_np(mod)
        for k in weights:
            np.testing.assert_allclose(got[k], weights[k], rtol=1e-4, atol=1e-5,
                                       err_msg=f"{k} at step {step}")


def test_fit_reaches_accuracy_and_logs(rng, caplog):
    # blobs 4 noise sigmas from the class boundaries: 0.95 on 30 samples is then the model's
    # doing, not the draw's (at noise 0.5 an unlucky draw put 2 of 30 across, Bayes-optimal)
    x, y = blobs(rng, n=150, noise=0.35)
    mx.random.seed(int(rng.integers(2**31)))      # Xavier's draws and the shuffle follow the seed
    np.random.seed(int(rng.integers(2**31)))
    train = mx.io.NDArrayIter(x[:120], y[:120], batch_size=20, shuffle=True)
    val = mx.io.NDArrayIter(x[120:], y[120:], batch_size=10)
    mod = mx.mod.Module(mlp(16))
    caplog.set_level(logging.INFO)
    seen = []
    mod.fit(train, eval_data=val, num_epoch=4, optimizer="sgd",
            optimizer_params={"learning_rate": 0.5, "momentum": 0.9},
            initializer=mx.init.Xavier(), eval_metric="acc",
            batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
            epoch_end_callback=lambda e, s, a, x_: seen.append(("end", e)))
    acc = dict(mod.score(val, "acc"))["accuracy"]
    assert acc >= 0.95, acc
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[0] Train-accuracy=") for m in msgs)
    assert any(m.startswith("Epoch[3] Time cost=") for m in msgs)
    assert any(m.startswith("Epoch[3] Validation-accuracy=") for m in msgs)
    assert seen[:7] == [(0, i) for i in range(6)] + [("end", 0)]
    pred = mod.predict(val)
    assert pred.shape == (30, 3)
    np.testing.assert_allclose(pred.asnumpy().sum(axis=1), 1, rtol=1e-5)


def test_fit_two_devices_equals_one(rng, monkeypatch):
    """One device; two devices updating in the kvstore; two devices aggregating through the
    kvstore and updating locally (MXNET_UPDATE_ON_KVSTORE=0): the same parameters."""
    x, y = blobs(rng, n=32)
    init = init_params(rng)
    results = []
    for env, ctx in (("1", [mx.cpu(0)]), ("1", [mx.cpu(0), mx.cpu(1)]),
                     ("0", [mx.cpu(0), mx.cpu(1)])):
        monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", env)
        it = mx.io.NDArrayIter(x, y, batch_size=16)
        mod = mx.mod.Module(mlp(), context=ctx)
        mod.fit(it, num_epoch=2, arg_params=init, optimizer="sgd",
                optimizer_params={"learning_rate": 0.3, "momentum": 0.5})
        assert mod._update_on_kvstore == (len(ctx) == 2 and env == "1")
        assert (mod._kvstore is None) == (len(ctx) == 1)
        results.append(params_np(mod))
    for other in results[1:]:
        for k in results[0]:
            np.testing.assert_allclose(results[0][k], other[k], rtol=1e-5, atol=1e-6)


def test_predict_and_iter_predict_padding(rng):
    x, _ = blobs(rng, n=10)
    mod = mx.mod.Module(mlp())
    with pytest.warns(UserWarning, match="label_shapes don't match"):
        mod.bind([("data", (4, 4))], for_training=False)
    mod.init_params(arg_params=init_params(rng), allow_missing=True)
    it = mx.io.NDArrayIter(x, batch_size=4)          # 4 + 4 + 2 (padded)
    merged = mod.predict(it)
    assert merged.shape == (10, 3)
    per_batch = mod.predict(it, merge_batches=False)
    assert [o[0].shape for o in per_batch] == [(4, 3), (4, 3), (2, 3)]
    lst = mod.predict(it, always_output_list=True)
    assert isinstance(lst, list) and lst[0].shape == (10, 3)
    # iter_predict yields views of the outputs: read each before the next batch
    outs = [(o[0].asnumpy(), b) for o, b, _ in mod.iter_predict(it)]
    assert [b for _, b in outs] == [0, 1, 2] and outs[2][0].shape == (2, 3)
    np.testing.assert_allclose(np.concatenate([o for o, _ in outs]), merged.asnumpy())
    assert mod.predict(it, num_batch=1).shape == (4, 3)


def test_checkpoint_resume_continues_identically(tmp_path, rng):
    x, y = blobs(rng, n=48)
    init = init_params(rng)
    opt = {"learning_rate": 0.1, "momentum": 0.9}
    prefix = str(tmp_path / "ck")

    it = mx.io.NDArrayIter(x, y, batch_size=16)
    ref = mx.mod.Module(mlp())
    ref.fit(it, num_epoch=2, arg_params=init, optimizer="sgd", optimizer_params=opt)
    ref.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert os.path.exists(prefix + "-0002.states")
    ref.fit(it, begin_epoch=2, num_epoch=3, optimizer="sgd", optimizer_params=opt)

    resumed = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
    resumed.fit(it, begin_epoch=2, num_epoch=3, optimizer="sgd", optimizer_params=opt)
    a, b = params_np(ref), params_np(resumed)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-6, atol=1e-7)

    # without the optimizer states the momentum restarts, so the result differs
    fresh = mx.mod.Module.load(prefix, 2)
    fresh.fit(it, begin_epoch=2, num_epoch=3, optimizer="sgd", optimizer_params=opt)
    c = params_np(fresh)
    assert max(np.abs(a[k] - c[k]).max() for k in a) > 1e-5


def test_save_load_optimizer_states_multi_device(tmp_path):
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=10)
    for ctx in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        mod = mx.mod.Module(sym, ("data",), label_names=None, context=ctx)
        mod.bind(data_shapes=[("data", (10, 10))])
        mod.init_params()
        mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
        mod.forward_backward(mx.io.DataBatch([nd.ones((10, 10))]))
        mod.backward([nd.ones((10, 10))])
        mod.update()
        prefix = str(tmp_path / f"m{len(ctx)}")
        mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
        mod2 = mx.mod.Module.load(prefix, 0, load_optimizer_states=True, data_names=("data",),
                                  label_names=None, context=ctx)
        mod2.bind(data_shapes=[("data", (10, 10))])
        mod2.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
        assert mod._symbol.tojson() == mod2._symbol.tojson()
        st1 = (mod._kvstore._updater if mod._update_on_kvstore else mod._updater).states
        st2 = (mod2._kvstore._updater if mod2._update_on_kvstore else mod2._updater).states
        assert set(st1) == set(st2)
        for k in st1:
            np.testing.assert_array_equal(st1[k].asnumpy(), st2[k].asnumpy())
        for k, v in mod.get_params()[0].items():
            np.testing.assert_array_equal(v.asnumpy(), mod2.get_params()[0][k].asnumpy())
        # both continue the same way: same states were restored
        for m in (mod, mod2):
            m.forward(mx.io.DataBatch([nd.ones((10, 10))]), is_train=True)
            m.backward([nd.ones((10, 10))])
            m.update()
        for k, v in mod.get_params()[0].items():
            np.testing.assert_allclose(v.asnumpy(), mod2.get_params()[0][k].asnumpy(),
                                       rtol=1e-6)


def test_mxnet_checkpoint_predicts_and_resumes_like_mxnet():
    """Files MXNet 1.9.1's Module.save_checkpoint wrote: same predictions, and one more epoch of
    fit from the saved optimizer states gives MXNet's parameters."""
    g = np.load(os.path.join(FIX, "golden.npz"))
    prefix = os.path.join(FIX, "mlp")
    mod = mx.mod.Module.load(prefix, 3)
    mod.bind([("data", (16, 4))], for_training=False)
    pred = mod.predict(mx.io.NDArrayIter(g["xt"], batch_size=16))
    np.testing.assert_allclose(pred.asnumpy(), g["pred"], rtol=1e-5, atol=1e-6)

    it = mx.io.NDArrayIter(g["x"], g["y"], batch_size=16, shuffle=False)
    mod2 = mx.mod.Module.load(prefix, 3, load_optimizer_states=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod2.fit(it, begin_epoch=3, num_epoch=4, optimizer="sgd",
                 optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.001})
    got = params_np(mod2)
    for k, v in got.items():
        np.testing.assert_allclose(v, g["resumed:" + k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_score_callbacks_and_num_batch(rng):
    x, y = blobs(rng, n=20)
    mod = mx.mod.Module(mlp())
    mod.bind([("data", (5, 4))], [("softmax_label", (5,))], for_training=False)
    mod.init_params(arg_params=init_params(rng))
    it = mx.io.NDArrayIter(x, y, batch_size=5)
    seen, ends = [], []
    res = mod.score(it, "acc", num_batch=3, batch_end_callback=lambda p: seen.append(p.nbatch),
                    score_end_callback=lambda p: ends.append(p.nbatch))
    assert seen == [0, 1, 2] and ends == [3]
    assert res[0][0] == "accuracy"
    probs = mod.predict(it, num_batch=3).asnumpy()
    expect = float((probs.argmax(1) == y[:15]).mean())
    assert res[0][1] == pytest.approx(expect)


def test_monitor_through_module():
    x = mx.sym.Variable("data")
    x = mx.sym.FullyConnected(name="fc_0", data=x, num_hidden=2)
    x = mx.sym.Activation(name="act_0", data=x, act_type="sigmoid")
    x = mx.sym.LinearRegressionOutput(data=x, name="softmax")
    mon = mx.mon.Monitor(1, stat_func=lambda a: mx.nd.sum(mx.nd.abs(a)), pattern=".*",
                         sort=True)
    mod = mx.mod.Module(x)
    mod.bind([("data", (1, 2))], [("softmax_label", (1, 2))])
    mod.install_monitor(mon)
    mod.init_params(arg_params={"fc_0_weight": nd.array([[.15, .20], [.25, .30]]),
                                "fc_0_bias": nd.array([.35, .35])})
    mon.tic()
    mod.forward_backward(mx.io.DataBatch([nd.array([[0.05, 0.10]])],
                                         [nd.array([[0.01, 0.99]])]))
    res = {k: float(v.strip()) for _, k, v in mon.toc()}
    assert res["fc_0_output"] == pytest.approx(0.3775 + 0.3925, rel=1e-5)
    assert res["fc_0_weight"] == pytest.approx(0.9, rel=1e-6)
    assert {"data", "softmax_label", "act_0_output", "softmax_output"} <= set(res)


def test_fit_progress_bar_only_on_a_terminal(rng, monkeypatch):
    import io
    import sys
    pytest.importorskip("tqdm")
    from mxc.module import base_module

    x, y = blobs(rng, n=32)
    it = mx.io.NDArrayIter(x, y, batch_size=8)

    class TTY(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("MXC_PROGRESS", raising=False)
    assert base_module._progress_bar(it, 0) is None          # pytest's stderr is no terminal
    err = TTY()
    monkeypatch.setattr(sys, "stderr", err)
    mod = mx.mod.Module(mlp())
    mod.fit(it, num_epoch=1, optimizer_params={"learning_rate": 0.1})
    text = err.getvalue()
    assert "Epoch[0]" in text and "4/4" in text
    monkeypatch.setenv("MXC_PROGRESS", "0")
    assert base_module._progress_bar(it, 0) is None


@pytest.mark.parametrize("ctxs,group2ctxs,want", [
    # (module contexts, group2ctxs as the user writes it, (a, b) gradient contexts per device)
    ([mx.cpu(0)], {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, [(1, 2)]),
    ([mx.cpu(0), mx.cpu(1)], [{"dev1": mx.cpu(2), "dev2": mx.cpu(3)},
                              {"dev1": mx.cpu(4), "dev2": mx.cpu(5)}], [(2, 3), (4, 5)]),
    ([mx.cpu(0), mx.cpu(1)], {"dev1": mx.cpu(2), "dev2": [mx.cpu(3)]}, [(2, 3), (2, 3)]),
    ([mx.cpu(0), mx.cpu(1)], {"dev1": [mx.cpu(2), mx.cpu(4)], "dev2": [mx.cpu(3), mx.cpu(5)]},
     [(2, 3), (4, 5)]),
])
def test_group2ctxs_place_each_device_executor(ctxs, group2ctxs, want):
    """c = 2a + b with a's half in ctx_group dev1 and b's in dev2: every form of group2ctxs
    MXNet takes; input gradients on the groups' contexts, values 2 and 1."""
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.var("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        c = a + mx.sym.var("b")
    shape = (4, 3)
    mod = mx.mod.Module(c, context=ctxs, data_names=["a", "b"], label_names=None,
                        group2ctxs=group2ctxs)
    mod.bind(data_shapes=[("a", shape), ("b", shape)], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[nd.ones(shape), nd.ones(shape)]), is_train=True)
    mod.backward([nd.ones(shape)])
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full(shape, 3))
    for k, ex in enumerate(mod._exec_group.execs):
        ga, gb = ex.grad_dict["a"], ex.grad_dict["b"]
        assert (ga.context.device_id, gb.context.device_id) == want[k]
        np.testing.assert_array_equal(ga.asnumpy(), np.full(ga.shape, 2))
        np.testing.assert_array_equal(gb.asnumpy(), np.full(gb.shape, 1))


def test_group2ctxs_of_the_wrong_length_are_refused():
    with mx.AttrScope(ctx_group="dev1"):
        c = mx.sym.var("a") * 2
    with pytest.raises(ValueError, match="group2ctxs"):
        mx.mod.Module(c, context=[mx.cpu(0), mx.cpu(1)], data_names=["a"], label_names=None,
                      group2ctxs=[{"dev1": mx.cpu(1)}]).bind(data_shapes=[("a", (4, 3))])
