"""SVRGModule against the SVRG rule computed with numpy on a linear regression
(LinearRegressionOutput's gradient is sum_i (x_i.w + b - y_i) [x_i, 1])."""
import numpy as np
import pytest

import mxc as mx
from mxc.contrib.svrg_optimization import SVRGModule

X = np.array([[1, 2], [3, 1], [2, 2], [4, 3], [1, 1], [2, 4], [3, 3], [1, 4], [4, 1], [2, 3]],
             dtype=np.float32)
Y = X @ np.array([1.0, 2.0], dtype=np.float32)
LR = 0.01
BS = 5


def _grads(w, b, x, y):
    r = x @ w + b - y
    return r @ x, r.sum()


def _module(update_freq=2, init=True):
    it = mx.io.NDArrayIter(X, Y, batch_size=BS, shuffle=False, label_name="lin_reg_label")
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=1),
        label=mx.sym.Variable("lin_reg_label"), name="lro")
    mod = SVRGModule(net, data_names=["data"], label_names=["lin_reg_label"],
                     update_freq=update_freq)
    if not init:  # fit binds and initializes
        return it, mod
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.One())
    mod.init_optimizer(kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", LR),))
    return it, mod


def _weights(mod):
    arg = mod.get_params()[0]
    return arg["fc1_weight"].asnumpy()[0], arg["fc1_bias"].asnumpy()[0]


def test_full_gradient_is_the_batch_average():
    it, mod = _module()
    gw, gb = _grads(np.ones(2, np.float32), 0.0, X, Y)  # init.One leaves biases at 0
    mu_w, mu_b = gw / 2, gb / 2  # 2 batches
    for _ in range(2):
        mod.update_full_grads(it)
        np.testing.assert_allclose(mod._param_dict[0]["fc1_weight"].asnumpy()[0], mu_w,
                                   rtol=1e-5)
        np.testing.assert_allclose(mod._param_dict[0]["fc1_bias"].asnumpy(), [mu_b], rtol=1e-5)
        # MXNet 1.9.1 sums the next snapshot's gradients onto this average (not reset)
        mu_w, mu_b = (mu_w + gw) / 2, (mu_b + gb) / 2


def test_updates_follow_the_svrg_rule():
    it, mod = _module()
    mod.update_full_grads(it)
    w0, b0 = np.ones(2, np.float32), np.float32(0)  # init.One leaves biases at 0
    mu_w, mu_b = (g / 2 for g in _grads(w0, b0, X, Y))
    w, b = w0.copy(), b0
    it.reset()
    for k, batch in enumerate(it):
        mod.forward_backward(batch)
        mod.update()
        x, y = X[k * BS:(k + 1) * BS], Y[k * BS:(k + 1) * BS]
        gw, gb = _grads(w, b, x, y)
        sw, sb = _grads(w0, b0, x, y)
        w = w - LR / BS * (gw - sw + mu_w)
        b = b - LR / BS * (gb - sb + mu_b)
        got_w, got_b = _weights(mod)
        np.testing.assert_allclose(got_w, w, rtol=1e-5)
        np.testing.assert_allclose(got_b, b, rtol=1e-5)


def test_fit_matches_mxnet():
    # MXNet 1.9.1's weights and train MSE (tests/data/contrib/svrg_optimization/make_fit_golden.py)
    it, mod = _module(update_freq=2, init=False)
    metric = mx.metric.create("mse")
    mod.fit(it, eval_metric=metric, num_epoch=5, optimizer="sgd", initializer=mx.init.One(),
            optimizer_params=(("learning_rate", 0.025),))
    w, b = _weights(mod)
    np.testing.assert_allclose(w, [1.4296226501464844, 1.8377412557601929], rtol=1e-6)
    np.testing.assert_allclose(b, 0.2484290450811386, rtol=1e-6)
    assert metric.get()[1] == pytest.approx(0.9844005107879639, rel=1e-6)


def test_fit_snapshots_every_update_freq_epochs():
    it, mod = _module(update_freq=2, init=False)
    calls = []
    real = mod.update_full_grads
    mod.update_full_grads = lambda data: (calls.append(1), real(data))
    mod.fit(it, num_epoch=5, eval_metric="mse", optimizer="sgd")
    assert len(calls) == 3  # epochs 0, 2, 4


def test_update_freq_must_be_positive_int():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1)
    with pytest.raises(TypeError):
        SVRGModule(net, label_names=None, update_freq=None)
    with pytest.raises(ValueError):
        SVRGModule(net, label_names=None, update_freq=0)
