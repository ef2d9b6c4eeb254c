"""DataParallelExecutorGroup: slicing by workload, merging, sharing between groups."""
import numpy as np
import pytest

import mxc as mx
from mxc import nd
from mxc.module.executor_group import DataParallelExecutorGroup, _split_input_slice


def test_split_input_slice():
    assert _split_input_slice(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert _split_input_slice(10, [1, 3]) == [slice(0, 2), slice(2, 10)]
    assert _split_input_slice(7, [1, 1, 1]) == [slice(0, 2), slice(2, 4), slice(4, 7)]
    with pytest.raises(ValueError, match="Too many slices"):
        _split_input_slice(2, [1, 1, 1])


def _net():
    d = mx.sym.Variable("data")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(d, num_hidden=3, name="fc"),
                                name="softmax")


def test_workload_slices_and_forward(rng):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    grp = DataParallelExecutorGroup(_net(), ctxs, [1, 3], [("data", (8, 4))],
                                    [("softmax_label", (8,))], ["fc_weight", "fc_bias"],
                                    for_training=True, inputs_need_grad=False)
    assert grp.slices == [slice(0, 2), slice(2, 8)]
    assert [e.arg_dict["data"].shape for e in grp.execs] == [(2, 4), (6, 4)]
    w = rng.standard_normal((3, 4)).astype(np.float32)
    grp.set_params({"fc_weight": nd.array(w), "fc_bias": nd.zeros(3)}, {})
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1], np.float32)
    grp.forward(mx.io.DataBatch([nd.array(x)], [nd.array(y)]), is_train=True)
    grp.backward()
    z = x @ w.T
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(grp.get_outputs()[0].asnumpy(), p, rtol=1e-5, atol=1e-6)
    assert grp.get_output_shapes() == [("softmax_output", (8, 3))]
    g = p.copy()
    g[np.arange(8), y.astype(int)] -= 1
    total = sum(e.grad_dict["fc_weight"].asnumpy() for e in grp.execs)
    np.testing.assert_allclose(total, g.T @ x, rtol=1e-4, atol=1e-5)
    acc = mx.metric.Accuracy()
    grp.update_metric(acc, [nd.array(y)], pre_sliced=False)
    assert acc.num_inst == 8
    assert acc.get()[1] == pytest.approx(float((p.argmax(1) == y).mean()))
    arg = {"fc_weight": nd.zeros((3, 4)), "fc_bias": nd.zeros(3)}
    grp.get_params(arg, {})
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), w)


def test_shared_group_shares_params_and_data():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    names = ["fc_weight", "fc_bias"]
    g1 = DataParallelExecutorGroup(_net(), ctxs, None, [("data", (4, 4))],
                                   [("softmax_label", (4,))], names, True, False)
    d = mx.sym.Variable("data")
    net2 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.FullyConnected(d, num_hidden=3, name="fc"), num_hidden=3, name="fc_extra"),
        name="softmax")
    g2 = DataParallelExecutorGroup(net2, ctxs, None, [("data", (4, 4))],
                                   [("softmax_label", (4,))], names, True, False,
                                   shared_group=g1)
    for i in range(2):
        for n in names:
            assert mx.test_utils.same_array(g1.execs[i].arg_dict[n], g2.execs[i].arg_dict[n])
            assert mx.test_utils.same_array(g1.execs[i].grad_dict[n], g2.execs[i].grad_dict[n])
        assert g1.shared_data_arrays[i] is g2.shared_data_arrays[i]
        assert mx.test_utils.same_array(g1.execs[i].arg_dict["data"],
                                        g2.execs[i].arg_dict["data"])
    assert g2.grad_req["fc_extra_weight"] == "null"  # not a parameter of the group
    assert g2.grad_req["fc_weight"] == "write" and g2.grad_req["data"] == "null"
