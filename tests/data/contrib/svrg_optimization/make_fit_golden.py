"""Weights and train MSE of SVRGModule.fit on a fixed linear regression with MXNet 1.9.1
(update_freq=2, 5 epochs: three full-gradient snapshots, each summed onto the last average as
MXNet does). Run:
    /work/mxnet-oracle/bin/python tests/data/contrib/svrg_optimization/make_fit_golden.py
(mxc: PYTHONPATH=. python ... --mxc); the literals in test_svrg_module.py came from it."""
import sys

import numpy as np

if "--mxc" in sys.argv:
    import mxc as mx
    from mxc.contrib.svrg_optimization import SVRGModule
else:
    import mxnet as mx
    from mxnet.contrib.svrg_optimization.svrg_module import SVRGModule

X = np.array([[1, 2], [3, 1], [2, 2], [4, 3], [1, 1], [2, 4], [3, 3], [1, 4], [4, 1], [2, 3]],
             dtype=np.float32)
Y = X @ np.array([1.0, 2.0], dtype=np.float32)
it = mx.io.NDArrayIter(X, Y, batch_size=5, shuffle=False, label_name="lin_reg_label")
net = mx.sym.LinearRegressionOutput(
    mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=1),
    label=mx.sym.Variable("lin_reg_label"), name="lro")
mod = SVRGModule(net, data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
metric = mx.metric.create("mse")
mod.fit(it, eval_metric=metric, num_epoch=5, optimizer="sgd", initializer=mx.init.One(),
        optimizer_params=(("learning_rate", 0.025),))
arg = mod.get_params()[0]
print("weight", arg["fc1_weight"].asnumpy().tolist(), "bias", arg["fc1_bias"].asnumpy().tolist(),
      "mse", metric.get()[1])
