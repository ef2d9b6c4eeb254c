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


def test_monitor_all_names_inputs_as_mxnet():
    """monitor_all: per input the entry's own name, then <node>_<argument>, then the outputs."""
    data = mx.sym.Variable("data", shape=(2, 3, 4, 4))
    cases = [
        (mx.sym.Convolution(data, kernel=(2, 2), num_filter=1, name="conv"),
         ["data", "conv_data", "conv_weight", "conv_weight", "conv_bias", "conv_bias",
          "conv_output"]),
        (mx.sym.Activation(data, act_type="relu", name="act"),
         ["data", "act_input0", "act_output"]),
        (mx.sym.concat(data, data, dim=0, name="concat"),
         ["data", "concat_arg0", "data", "concat_arg1", "concat_output"]),
    ]
    for sym, want in cases:
        names = []
        ex = sym.simple_bind(mx.cpu(), grad_req="null")
        ex.set_monitor_callback(lambda n, a: names.append(n), monitor_all=True)
        ex.forward()
        mx.nd.waitall()
        assert names == want


def test_simple_bind_ignores_keywords_that_are_not_shapes():
    s = mx.sym.take(mx.sym.var("a"), mx.sym.var("indices"), axis=0)
    ex = s.simple_bind(mx.cpu(), a=(4, 3), indices=(2,), axis=0, mode="clip")
    assert ex.outputs[0].shape == (2, 3)


def test_composite_with_own_gradient_keeps_it_when_bound():
    """SVMOutput's gradient (a loss layer's) is used by bind as by autograd."""
    x = np.random.rand(4, 3).astype(np.float32)
    lab = np.array([0, 1, 2, 1], np.float32)
    s = mx.sym.SVMOutput(mx.sym.var("X"), mx.sym.var("L"), use_linear=True)
    g = mx.nd.zeros((4, 3))
    ex = s.bind(mx.cpu(), args=[mx.nd.array(x), mx.nd.array(lab)], args_grad={"X": g})
    ex.forward(is_train=True)
    ex.backward()
    mask = np.eye(3)[lab.astype(int)] * 2 - 1
    np.testing.assert_allclose(g.asnumpy(), -mask * (1 - mask * x > 0))


def test_bind_infers_outputs_with_the_bound_dtypes():
    s = mx.sym.softmax(mx.sym.var("d"), mx.sym.var("l"), use_length=True, axis=1)
    ex = s.bind(mx.cpu(), {"d": mx.nd.ones((2, 3, 4)), "l": mx.nd.ones((2, 4), dtype="int32")})
    want = np.zeros((2, 3, 4))
    want[:, 0, :] = 1           # length 1: the first entry takes everything
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), want)


def test_sort_axis_none_symbol_keeps_the_none():
    s = mx.sym.sort(mx.sym.var("a"), axis=None)
    assert s.attr_dict()[s.name]["axis"] == "None"
    ex = s.bind(mx.cpu(), {"a": mx.nd.array([[3, 1], [2, 0]])})
    assert ex.forward()[0].asnumpy().tolist() == [0, 1, 2, 3]


def test_monitor_sees_backward_outputs_named_as_mxnet():
    # MXNet 1.9.1 (checked with it) calls the monitor for each backward node's outputs:
    # <node>_backward_output, or _backward_output<i> for several inputs; values are the gradients
    x = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    x = mx.sym.Activation(x, act_type="sigmoid", name="act")
    x = mx.sym.LinearRegressionOutput(x, name="out")
    seen = {}
    ex = x.simple_bind(mx.cpu(), data=(1, 2), out_label=(1, 2))
    ex.arg_dict["data"][:] = np.array([[0.05, 0.10]])
    ex.arg_dict["fc_weight"][:] = np.array([[0.15, 0.20], [0.25, 0.30]])
    ex.arg_dict["fc_bias"][:] = 0.35
    ex.arg_dict["out_label"][:] = np.array([[0.01, 0.99]])
    ex.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy().copy()))
    ex.forward(is_train=True)
    ex.backward()
    assert {k for k in seen if "backward" in k} == {
        "act_backward_output", "fc_backward_output0", "fc_backward_output1",
        "fc_backward_output2", "out_backward_output0", "out_backward_output1"}
    np.testing.assert_allclose(seen["fc_backward_output1"], ex.grad_dict["fc_weight"].asnumpy())
    np.testing.assert_allclose(seen["fc_backward_output2"], ex.grad_dict["fc_bias"].asnumpy())
    y = seen["act_output"]
    # LinearRegressionOutput: (y - label) * grad_scale / outputs per sample
    np.testing.assert_allclose(seen["out_backward_output0"], (y - [[0.01, 0.99]]) / 2, rtol=1e-6)
    np.testing.assert_allclose(seen["act_backward_output"].sum(axis=0), seen["fc_backward_output2"])


def test_backward_accepts_an_empty_head_gradient_of_another_empty_shape():
    # MXNet's own index_array test hands a (0, 0, 2) head gradient to a (0, 0, 0, 0, 2) output:
    # both hold nothing, so it is accepted; a non-empty mismatch stays an error
    with mx.np_shape():
        sym = mx.sym.contrib.index_array(mx.sym.var("data"), axes=(2, 1))
        x = mx.nd.array(np.ones((0, 0, 0, 0)))
        g = mx.nd.array(np.ones((0, 0, 0, 0)))
        ex = sym.bind(mx.cpu(), args={"data": x}, args_grad={"data": g})
        ex.forward(is_train=True)
        assert ex.outputs[0].shape == (0, 0, 0, 0, 2)
        ex.backward([mx.nd.array(np.ones((0, 0, 2)))])
        assert g.shape == (0, 0, 0, 0)
        with pytest.raises(ValueError, match="head gradient shape"):
            ex.backward([mx.nd.array(np.ones((1, 2)))])


def test_monitored_forward_completes_zero_size_begin_states():
    # the monitored (node by node) path gives an unrolled LSTM's begin state zeros((0, H)) the
    # batch size the graph infers, as the planned path does (quantize_model calibrates an
    # unrolled LSTMCell through the monitor: MXNet's test_quantize_model_with_forward)
    cell = mx.rnn.LSTMCell(num_hidden=8, prefix="l_")
    outputs, _ = cell.unroll(3, mx.sym.Variable("data"))
    mod = mx.mod.Module(mx.sym.Group(outputs), label_names=None)
    mod.bind(data_shapes=[("data", (2, 3, 5))], for_training=False)
    mod.init_params(mx.init.Uniform(0.5))
    batch = mx.io.DataBatch([mx.nd.array(np.random.RandomState(0).rand(2, 3, 5))], [])
    mod.forward(batch, is_train=False)
    want = [o.asnumpy() for o in mod.get_outputs()]
    seen = {}
    mod._exec_group.execs[0].set_monitor_callback(lambda n, a: seen.setdefault(n, a.shape),
                                                  monitor_all=True)
    mod.forward(batch, is_train=False)
    for got, w in zip(mod.get_outputs(), want):
        np.testing.assert_array_equal(got.asnumpy(), w)
    begin = [n for n in seen if "begin_state" in n and n.endswith("_output")]
    assert begin and all(seen[n] == (2, 8) for n in begin)
