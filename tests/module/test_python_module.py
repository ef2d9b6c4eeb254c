"""mx.mod.PythonLossModule chained after a Module equals SoftmaxOutput's training."""
import numpy as np
import pytest

import mxc as mx
from mxc import nd


def softmax_grad(scores, labels):
    s = scores.asnumpy()
    p = np.exp(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
    return p


def test_python_loss_module_matches_softmax_output(rng):
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    params = {"fc_weight": nd.array(rng.standard_normal((3, 4))), "fc_bias": nd.zeros(3)}
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 2, 1, 0], np.float32)
    batch = mx.io.DataBatch([nd.array(x)], [nd.array(y)])

    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(fc, label_names=None))
    seq.add(mx.mod.PythonLossModule(grad_func=softmax_grad), take_labels=True, auto_wiring=True)
    ref = mx.mod.Module(mx.sym.SoftmaxOutput(fc, name="softmax"))
    for mod in (seq, ref):
        mod.bind([("data", (6, 4))], [("softmax_label", (6,))])
        mod.init_params(arg_params=params)
        mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
        for _ in range(2):
            mod.forward_backward(batch)
            mod.update()
    a, r = seq.get_params()[0], ref.get_params()[0]
    for k in r:
        np.testing.assert_allclose(a[k].asnumpy(), r[k].asnumpy(), rtol=1e-5, atol=1e-6)
    assert seq.output_shapes == [("pyloss_output", (6, 3))]


def test_python_loss_module_checks():
    with pytest.raises(AssertionError, match="one data and one label"):
        mx.mod.PythonLossModule(data_names=("a", "b"))
    m = mx.mod.PythonLossModule()
    with pytest.raises(AssertionError, match="only support write"):
        m.bind([("data", (2, 3))], [("softmax_label", (2,))], grad_req="add")
    m.bind([("data", (2, 3))], [("softmax_label", (2,))])
    m.forward(mx.io.DataBatch([nd.ones((2, 3))], [nd.zeros((2,))]))
    with pytest.raises(NotImplementedError, match="grad_func"):
        m.backward()
