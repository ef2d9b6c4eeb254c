"""The executor: bind/simple_bind, forward/backward against mx.nd + autograd, grad_req,
aux states, reshape, copy_params_from, monitor, errors."""
import numpy as np
import pytest

import mxc as mx
from mxc.test_utils import check_numeric_gradient, check_symbolic_backward, \
    check_symbolic_forward


def _mlp():
    data = mx.sym.var("data")
    h = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh")
    return mx.sym.FullyConnected(h, num_hidden=3, name="fc2")


def test_forward_backward_match_imperative():
    sym = _mlp()
    ex = sym.simple_bind(mx.cpu(), data=(4, 5))
    rng = np.random.RandomState(0)
    for a in ex.arg_arrays:
        a[:] = rng.uniform(-1, 1, a.shape)
    og = mx.nd.array(rng.uniform(-1, 1, (4, 3)))
    out = ex.forward(is_train=True)[0]
    ex.backward(og)
    d = dict(ex.arg_dict)
    xs = {k: v.copy() for k, v in d.items()}
    for v in xs.values():
        v.attach_grad()
    with mx.autograd.record():
        h = mx.nd.tanh(mx.nd.FullyConnected(xs["data"], xs["fc1_weight"], xs["fc1_bias"],
                                            num_hidden=6))
        y = mx.nd.FullyConnected(h, xs["fc2_weight"], xs["fc2_bias"], num_hidden=3)
    y.backward(og)
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-5)
    for k in d:
        np.testing.assert_allclose(ex.grad_dict[k].asnumpy(), xs[k].grad.asnumpy(), rtol=1e-5,
                                   atol=1e-6)
    assert ex.output_dict["fc2_output"] is ex.outputs[0]


def test_grad_req_add_null_and_kwargs_forward():
    x = mx.sym.var("x")
    y = mx.sym.var("y")
    s = x * y
    gx, gy = mx.nd.ones((2,)), mx.nd.ones((2,))
    ex = s.bind(mx.cpu(), {"x": mx.nd.array([1, 2]), "y": mx.nd.array([3, 4])},
                args_grad={"x": gx, "y": gy}, grad_req={"x": "add", "y": "null"})
    ex.forward(is_train=True, x=np.array([5, 6]))
    ex.backward(mx.nd.ones((2,)))
    np.testing.assert_allclose(gx.asnumpy(), [4, 5])
    np.testing.assert_allclose(gy.asnumpy(), [1, 1])
    with pytest.raises(ValueError):
        ex.forward(z=np.ones(2))


def test_batchnorm_aux_updated_in_training():
    sym = mx.sym.BatchNorm(mx.sym.var("data"), name="bn", fix_gamma=False)
    ex = sym.simple_bind(mx.cpu(), data=(4, 3))
    ex.arg_dict["data"][:] = np.arange(12).reshape(4, 3)
    ex.arg_dict["bn_gamma"][:] = 1
    ex.aux_dict["bn_moving_var"][:] = 1
    ex.forward(is_train=False)
    assert (ex.aux_dict["bn_moving_mean"].asnumpy() == 0).all()
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((4, 3)))       # MXNet's CPU BatchNorm updates them in backward
    assert (ex.aux_dict["bn_moving_mean"].asnumpy() != 0).all()


def test_missing_argument_is_named():
    with pytest.raises(ValueError, match="fc1_weight"):
        _mlp().bind(mx.cpu(), {"data": mx.nd.ones((2, 5))})


def test_reshape_copy_params_monitor():
    sym = _mlp()
    ex = sym.simple_bind(mx.cpu(), data=(4, 5))
    ex.copy_params_from({"fc1_weight": mx.nd.ones((6, 5))}, allow_extra_params=True)
    assert (ex.arg_dict["fc1_weight"].asnumpy() == 1).all()
    with pytest.raises(ValueError):
        ex.copy_params_from({"nope": mx.nd.ones((1,))})
    with pytest.raises(AssertionError, match="allow_up_sizing"):
        ex.reshape(data=(7, 5))
    ex2 = ex.reshape(data=(7, 5), allow_up_sizing=True)
    assert ex2.arg_dict["fc1_weight"] is ex.arg_dict["fc1_weight"]
    assert ex2.forward()[0].shape == (7, 3)
    # down-sizing shares the storage of the data and the outputs (MXNet's reshape)
    ex.arg_dict["data"][:] = 1
    ex3 = ex.reshape(data=(2, 5))
    assert (ex3.arg_dict["data"].asnumpy() == 1).all()
    out3 = ex3.forward()[0].asnumpy()
    np.testing.assert_allclose(ex.outputs[0].asnumpy()[:2], out3)
    with pytest.raises(AssertionError, match="fc1_weight"):
        ex.reshape(data=(2, 7))
    seen = []
    ex2.set_monitor_callback(lambda name, arr: seen.append(name))
    ex2.forward()
    assert "fc2_output" in seen


def test_test_utils_with_symbols():
    x = mx.sym.var("x")
    s = mx.sym.sin(x) * 2
    v = np.random.uniform(-1, 1, (3, 4))
    check_symbolic_forward(s, [v], [np.sin(v) * 2], rtol=1e-5, atol=1e-6)
    check_symbolic_backward(s, [v], [np.ones((3, 4))], [2 * np.cos(v)], rtol=1e-5, atol=1e-6)
    check_symbolic_backward(s, {"x": v}, [np.ones((3, 4))], {"x": 2 * np.cos(v)},
                            grad_req="add", rtol=1e-5, atol=1e-6)
    check_numeric_gradient(s, [v], numeric_eps=1e-4, rtol=1e-3, atol=1e-4, dtype=np.float64)
    bn = mx.sym.BatchNorm(x, fix_gamma=False)
    check_numeric_gradient(bn, [np.random.uniform(-1, 1, (4, 3)), np.ones(3), np.zeros(3)],
                           aux_states=[np.zeros(3), np.ones(3)], numeric_eps=1e-4, rtol=1e-2,
                           atol=1e-3, dtype=np.float64)
