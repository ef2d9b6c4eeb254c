"""MXNet 1.9.1's FeedForward on a fixed MLP: weights after fit, predict/score, and the nbatch
values its callbacks see. Run:
    /work/mxnet-oracle/bin/python tests/data/model/make_feedforward_golden.py
(with --mxc and PYTHONPATH=. for mxc); the literals in tests/test_feedforward.py came from it."""
import sys
import logging

import numpy as np

if "--mxc" in sys.argv:
    import mxc as mx
else:
    import mxnet as mx

logging.disable(logging.CRITICAL)
rng = np.random.RandomState(0)
X = rng.uniform(-1, 1, (20, 3)).astype(np.float32)
Y = (X.sum(axis=1) > 0).astype(np.float32)
W1 = rng.uniform(-0.5, 0.5, (4, 3)).astype(np.float32)
W2 = rng.uniform(-0.5, 0.5, (2, 4)).astype(np.float32)

net = mx.sym.Variable("data")
net = mx.sym.FullyConnected(net, num_hidden=4, name="fc1")
net = mx.sym.Activation(net, act_type="tanh")
net = mx.sym.FullyConnected(net, num_hidden=2, name="fc2")
net = mx.sym.SoftmaxOutput(net, name="softmax")
args = {"fc1_weight": mx.nd.array(W1), "fc1_bias": mx.nd.zeros((4,)),
        "fc2_weight": mx.nd.array(W2), "fc2_bias": mx.nd.zeros((2,))}
seen = []
model = mx.model.FeedForward(net, num_epoch=3, epoch_size=2, arg_params=args,
                             learning_rate=0.5, momentum=0.9, wd=0.0)
it = mx.io.NDArrayIter(X, Y, batch_size=8, shuffle=False)
model.fit(it, batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
          epoch_end_callback=lambda e, s, a, x: seen.append(("end", e)))
np.set_printoptions(precision=8, floatmode="unique")
print("seen", seen)
print("fc1_weight", repr(model.arg_params["fc1_weight"].asnumpy().ravel().tolist()))
print("fc2_bias", repr(model.arg_params["fc2_bias"].asnumpy().ravel().tolist()))
print("predict", repr(model.predict(X[:5]).ravel().tolist()))
print("score", model.score(mx.io.NDArrayIter(X, Y, batch_size=8)))
