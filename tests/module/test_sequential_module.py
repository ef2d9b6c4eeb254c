"""mx.mod.SequentialModule: chained modules equal the one-symbol network."""
import numpy as np
import pytest

import mxc as mx
from mxc import nd


def test_sequential_equals_single_module(rng):
    d = mx.sym.Variable("data")
    net1 = mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=5, name="fc1"),
                             act_type="relu", name="relu1")
    net2 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3,
                                                      name="fc2"), name="softmax")
    full = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net1, num_hidden=3, name="fc2"),
                                name="softmax")
    params = {"fc1_weight": nd.array(rng.standard_normal((5, 4))), "fc1_bias": nd.zeros(5),
              "fc2_weight": nd.array(rng.standard_normal((3, 5))), "fc2_bias": nd.zeros(3)}
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(net1, label_names=None)).add(mx.mod.Module(net2), take_labels=True,
                                                         auto_wiring=True)
    ref = mx.mod.Module(full)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2], np.float32)
    b = mx.io.DataBatch([nd.array(x)], [nd.array(y)])
    for mod in (seq, ref):
        mod.bind([("data", (6, 4))], [("softmax_label", (6,))])
        mod.init_params(arg_params=params, allow_missing=True)
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.3})
        for _ in range(3):
            mod.forward_backward(b)
            mod.update()
    assert seq.label_shapes is not None and seq.output_shapes == ref.output_shapes
    a, r = seq.get_params()[0], ref.get_params()[0]
    assert sorted(a) == sorted(r)
    for k in a:
        np.testing.assert_allclose(a[k].asnumpy(), r[k].asnumpy(), rtol=1e-5, atol=1e-6)
    seq.forward(b, is_train=False)
    ref.forward(b, is_train=False)
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), ref.get_outputs()[0].asnumpy(),
                               rtol=1e-5, atol=1e-6)
    acc = mx.metric.Accuracy()
    seq.update_metric(acc, [nd.array(y)])
    assert acc.num_inst == 6


def test_sequential_errors():
    seq = mx.mod.SequentialModule()
    with pytest.raises(AssertionError, match="empty SequentialModule"):
        seq.bind([("data", (1, 2))])
    with pytest.raises(AssertionError, match="Unknown meta"):
        seq.add(mx.mod.Module(mx.sym.Variable("data") * 2, label_names=None), take_label=True)
    a = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(a, label_names=None)).add(mx.mod.Module(a, label_names=None),
                                                    auto_wiring=True)
    seq.bind([("data", (1, 2))])
    with pytest.raises(AssertionError, match="Duplicated parameter names"):
        seq.init_params()
