"""_SVRGOptimizer: '<name>_full' keys are assigned, the others go to the wrapped optimizer."""
import numpy as np

import mxc as mx
from mxc.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def test_kvstore_keys_dispatch_by_name():
    svrg = _SVRGOptimizer(default_optimizer="sgd", learning_rate=0.5, rescale_grad=2.0,
                          param_idx2name={0: "w", 1: "w_full"})
    assert svrg.default_opt.lr == 0.5 and svrg.default_opt.rescale_grad == 2.0
    kv = mx.kv.create("local")
    kv.set_optimizer(svrg)
    w = mx.nd.array([1.0, 2.0])
    kv.init(0, w)
    kv.push(0, mx.nd.array([1.0, -1.0]))
    kv.pull(0, out=w)
    np.testing.assert_allclose(w.asnumpy(), [1 - 0.5 * 2, 2 + 0.5 * 2])
    full = mx.nd.array([7.0, 7.0])
    kv.init(1, full)
    kv.push(1, [mx.nd.array([3.0, 4.0]), mx.nd.array([1.0, 1.0])])
    kv.pull(1, out=full)
    np.testing.assert_allclose(full.asnumpy(), [4.0, 5.0])  # the sum, assigned


def test_registered_by_name():
    o = mx.optimizer.create("_svrgoptimizer", default_optimizer="adam", learning_rate=0.1)
    assert type(o.default_opt).__name__ == "Adam" and o.default_opt.lr == 0.1
