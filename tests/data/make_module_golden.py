"""Write the Module fixtures in tests/data/module/ with real MXNet 1.9.1.

Run with the oracle's interpreter from the repository root::

    /work/mxnet-oracle/bin/python tests/data/make_module_golden.py

Files (all written by MXNet itself):
- mlp-symbol.json, mlp-0003.params, mlp-0003.states: ``Module.save_checkpoint(prefix, 3,
  save_optimizer_states=True)`` after 3 epochs of ``fit`` (SGD, momentum 0.9) on the data below;
- golden.npz: the training data (x, y), a test batch ``xt`` and MXNet's ``predict`` on it
  (``pred``), MXNet's training accuracy after epoch 3 (``acc3``), and the parameters after
  resuming from the checkpoint (``Module.load(..., load_optimizer_states=True)``) for one more
  epoch (``resumed:<name>``).
The suite never imports MXNet.
"""
import logging
import os

import numpy as np
import mxnet as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module")
PREFIX = os.path.join(HERE, "mlp")
OPT = {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.001}


def data():
    rng = np.random.RandomState(7)
    centers = np.array([[2, 0, 0, 1], [0, 2, 0, -1], [0, 0, 2, 0]], dtype=np.float32)
    y = np.arange(64) % 3
    x = centers[y] + 0.6 * rng.randn(64, 4).astype(np.float32)
    xt = centers[np.arange(10) % 3] + 0.6 * rng.randn(10, 4).astype(np.float32)
    return x.astype(np.float32), y.astype(np.float32), xt.astype(np.float32)


def net():
    d = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(d, num_hidden=8, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def main():
    logging.basicConfig(level=logging.INFO)
    os.makedirs(HERE, exist_ok=True)
    mx.random.seed(3)
    x, y, xt = data()
    it = mx.io.NDArrayIter(x, y, batch_size=16, shuffle=False)
    mod = mx.mod.Module(net())
    metric = mx.metric.Accuracy()
    mod.fit(it, num_epoch=3, optimizer="sgd", optimizer_params=OPT,
            initializer=mx.init.Xavier(), eval_metric=metric)
    mod.save_checkpoint(PREFIX, 3, save_optimizer_states=True)
    acc3 = metric.get()[1]
    pred = mod.predict(mx.io.NDArrayIter(xt, batch_size=16)).asnumpy()

    mod2 = mx.mod.Module.load(PREFIX, 3, load_optimizer_states=True)
    it.reset()
    mod2.fit(it, begin_epoch=3, num_epoch=4, optimizer="sgd", optimizer_params=OPT)
    arg, aux = mod2.get_params()
    out = {"x": x, "y": y, "xt": xt, "pred": pred, "acc3": np.float64(acc3)}
    for k, v in arg.items():
        out["resumed:" + k] = v.asnumpy()
    np.savez_compressed(os.path.join(HERE, "golden.npz"), **out)
    print("written", sorted(os.listdir(HERE)))


if __name__ == "__main__":
    main()
