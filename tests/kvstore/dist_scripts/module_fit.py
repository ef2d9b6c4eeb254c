"""Rank script: Module.fit(kvstore='dist_sync') for one epoch, each rank on its part of the
data, gives on every rank the weights of one process fitting the whole data (batches of the
combined size); with the optimizer in the store (update_on_kvstore, the default) and, under
MXNET_UPDATE_ON_KVSTORE=0, in the module (the store only sums). Prints 'OK rank <r>'."""
import os

import numpy as np

import mxc as mx


def say(line):
    """One write per line, so lines of different ranks never interleave (under mpiexec
    with PYTHONUNBUFFERED, print writes the text and the newline separately)."""
    os.write(1, (line + "\n").encode())


kv = mx.kv.create("dist_sync")
RANK, N = kv.rank, kv.num_workers
B, STEPS = 4, 3                      # per-rank batch, batches per epoch
rs = np.random.RandomState(11)
X = rs.randn(STEPS, N * B, 6).astype(np.float32)
Y = rs.randint(0, 3, size=(STEPS, N * B)).astype(np.float32)


def symbol():
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=5, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh", name="act1")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def fit(x, y, batch, kvstore):
    it = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name="softmax_label")
    mod = mx.mod.Module(symbol(), data_names=["data"], label_names=["softmax_label"])
    mx.random.seed(3)
    mod.fit(it, num_epoch=1, kvstore=kvstore, optimizer="sgd",
            optimizer_params={"learning_rate": 0.5, "momentum": 0.5},
            initializer=mx.init.Xavier(), eval_metric="acc")
    arg, _ = mod.get_params()
    if kvstore is not None:
        assert mod._update_on_kvstore == (os.environ["MXNET_UPDATE_ON_KVSTORE"] == "1")
    return {k: v.asnumpy() for k, v in arg.items()}


def check(update_on_kv):
    os.environ["MXNET_UPDATE_ON_KVSTORE"] = "1" if update_on_kv else "0"
    # this rank's part: rows [RANK*B, RANK*B+B) of every global batch
    rows = slice(RANK * B, (RANK + 1) * B)
    mine = fit(X[:, rows].reshape(-1, 6), Y[:, rows].reshape(-1), B, mx.kv.create("dist_sync"))
    ref = fit(X.reshape(-1, 6), Y.reshape(-1), N * B, None)
    assert sorted(mine) == sorted(ref), (sorted(mine), sorted(ref))
    for name in sorted(ref):
        if not np.allclose(mine[name], ref[name], rtol=1e-4, atol=1e-5):
            raise AssertionError("rank %d: %s after dist_sync fit %s != one process %s"
                                 % (RANK, name, mine[name].ravel()[:4], ref[name].ravel()[:4]))
        if np.allclose(mine[name], 0):
            raise AssertionError("rank %d: %s is all zeros" % (RANK, name))

    from mpi4py import MPI
    flat = np.concatenate([mine[k].ravel() for k in sorted(mine)])
    first = MPI.COMM_WORLD.bcast(flat if RANK == 0 else None, root=0)
    assert np.array_equal(first, flat), "rank %d weights differ from rank 0's" % RANK


check(True)
check(False)
say("OK rank %d" % RANK)
