"""Small deterministic data and nets for the estimator tests."""
import numpy as np

import mxc as mx
from mxc import gluon


def regression_data(n=12, batch_size=4, seed=0):
    """A DataLoader of (x, y) float32 pairs, 3 features -> 2 targets, not shuffled."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    y = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    data = gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y))
    return gluon.data.DataLoader(data, batch_size=batch_size), x, y


def classification_data(n=16, batch_size=4, seed=1):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 5)).astype(np.float32)
    y = rng.randint(0, 3, n).astype(np.float32)
    data = gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y))
    return gluon.data.DataLoader(data, batch_size=batch_size), x, y


def classifier(seed=2):
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(8, activation="tanh"), gluon.nn.Dense(3))
    mx.random.seed(seed)
    net.initialize(mx.init.Xavier())
    return net
