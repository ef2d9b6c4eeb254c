"""Rank script: gluon.Trainer(kvstore='dist_sync') on this rank's part of a global batch
gives, on every rank, the weights of one-process training on the whole batch; with
update_on_kvstore the store holds the weights themselves (no copy per pull), so a weight
clipped in place between steps stays clipped, as in one-process training."""
import os

import numpy as np

import mxc as mx
from mxc import autograd, gluon


def say(line):
    """One write per line, so lines of different ranks never interleave (under mpiexec
    with PYTHONUNBUFFERED, print writes the text and the newline separately)."""
    os.write(1, (line + "\n").encode())


kv = mx.kv.create("dist_sync")
RANK, N = kv.rank, kv.num_workers
B = 4 * N
rs = np.random.RandomState(5)
X = rs.randn(3, B, 6).astype(np.float32)
Y = rs.randn(3, B, 2).astype(np.float32)


def make(seed):
    mx.random.seed(seed)
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(5, activation="tanh"), gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 6)))
    return net


def train(net, trainer, part, clip):
    loss_fn = gluon.loss.L2Loss()
    for step in range(3):
        x, y = X[step][part], Y[step][part]
        with autograd.record():
            loss = loss_fn(net(mx.nd.array(x)), mx.nd.array(y))
        loss.backward()
        trainer.step(B)
        if clip:
            for p in net.collect_params().values():
                p.data()[:] = mx.nd.clip(p.data(), -0.3, 0.3)
    return [p.data().asnumpy() for p in net.collect_params().values()]


def run(update_on_kv, clip):
    kv = mx.kv.create("dist_sync")
    net = make(100)        # same seed: the Trainer's kvstore (and its broadcast) starts at step 1
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "momentum": 0.5},
                       kvstore=kv, update_on_kvstore=update_on_kv)
    got = train(net, tr, slice(RANK * 4, RANK * 4 + 4), clip)
    stored = [tr._kvstore._store[tr._param2idx[p.name]] is p.data()
              for p in net.collect_params().values()]
    assert all(stored) if update_on_kv else not any(stored), (update_on_kv, stored)
    ref_net = make(100)
    ref_tr = gluon.Trainer(ref_net.collect_params(), "sgd", {"learning_rate": 0.5, "momentum": 0.5},
                           kvstore=None)
    want = train(ref_net, ref_tr, slice(0, B), clip)
    for g, w in zip(got, want):
        if not np.allclose(g, w, rtol=1e-4, atol=1e-5):
            raise AssertionError("rank %d: dist weights %s != 1-process %s" % (RANK, g.ravel()[:4],
                                                                              w.ravel()[:4]))
    # every rank holds the same bits
    allw = np.concatenate([g.ravel() for g in got])
    first = MPI.COMM_WORLD.bcast(allw if RANK == 0 else None, root=0)
    assert np.array_equal(first, allw), "rank %d weights differ from rank 0's" % RANK


def shared_key_without_optimizer():
    """A key whose stored value is the caller's array, pushed to without an optimizer: the
    store then holds the sums in its own buffers and never writes the caller's array."""
    kv = mx.kv.create("dist_sync")
    w = mx.nd.full((3, 2), 7.0 + RANK)
    kv._broadcast_shared("w", w)
    assert kv._store["w"] is w
    out = mx.nd.zeros((3, 2))
    for step in range(3):
        kv.push("w", mx.nd.full((3, 2), float(step + RANK)))
        kv.pull("w", out=out)
        np.testing.assert_array_equal(out.asnumpy(), np.full((3, 2), N * step + N * (N - 1) / 2.0))
        np.testing.assert_array_equal(w.asnumpy(), np.full((3, 2), 7.0))   # rank 0's, kept


from mpi4py import MPI  # noqa: E402
for mode in (True, False):
    for clip in (False, True):
        run(mode, clip)
shared_key_without_optimizer()
say("OK rank %d" % RANK)
