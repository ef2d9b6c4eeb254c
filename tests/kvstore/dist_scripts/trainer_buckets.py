"""Rank script: a Trainer step's pushes go out in buckets (dist.py _flush_pushes): keys of two
dtypes (a float32 net on two CPU contexts, so two values per key, and a float64 net), with
MXC_KVSTORE_BUCKET_BYTES shrunk by the test so that buckets hold several keys and one key is
larger than the cap; with update_on_kvstore (the store updates) and without (the sums go
back into the gradients). Checks, for 3 steps: the summed gradients the updates read equal
the sum of every rank's gradients computed here with numpy (bit for bit on 2 ranks, where the
order of a sum of two cannot matter); the weights equal one-process training on the whole batch;
every rank holds the same bits; the store used the path argv[1] names ("shm": the receive
arrays in shared blocks; "mpi": its own arrays) and one request per bucket, not per key.
Prints 'OK rank <r> <path>'."""
import os
import sys

import numpy as np
from mpi4py import MPI

import mxc as mx
from mxc import autograd, gluon


def say(line):
    os.write(1, (line + "\n").encode())


PATH = sys.argv[1]
kv = mx.kv.create("dist_sync")
RANK, N = kv.rank, kv.num_workers
CTX = [mx.cpu(0), mx.cpu(1)]
B = 4 * N
rs = np.random.RandomState(7)
X = rs.randn(3, B, 6)
Y = rs.randn(3, B, 3)


def make(ctx):
    mx.random.seed(11)
    a = gluon.nn.Sequential()
    a.add(gluon.nn.Dense(40, activation="tanh"), gluon.nn.Dense(3))   # 280 + 40 + 123 floats
    a.initialize(mx.init.Xavier(), ctx=ctx)
    b = gluon.nn.Dense(3, in_units=6, dtype="float64")
    b.initialize(mx.init.Xavier(), ctx=ctx)
    params = a.collect_params()
    params.update(b.collect_params())
    return a, b, params


def step_loss(a, b, x, y, ctx):
    loss_fn = gluon.loss.L2Loss()
    xs = np.array_split(x, len(ctx))
    ys = np.array_split(y, len(ctx))
    losses = []
    with autograd.record():
        for c, xc, yc in zip(ctx, xs, ys):
            out32 = a(mx.nd.array(xc, ctx=c, dtype="float32"))
            out64 = b(mx.nd.array(xc, ctx=c, dtype="float64"))
            losses.append(loss_fn(out32, mx.nd.array(yc, ctx=c, dtype="float32"))
                          + loss_fn(out64, mx.nd.array(yc, ctx=c, dtype="float64"))
                          .astype("float32"))
    for l in losses:
        l.backward()


def run(update_on_kv):
    store = mx.kv.create("dist_sync")
    a, b, params = make(CTX)
    tr = gluon.Trainer(params, "sgd", {"learning_rate": 0.3, "momentum": 0.5}, kvstore=store,
                       update_on_kvstore=update_on_kv)
    names = list(params.keys())
    part = slice(RANK * 4, RANK * 4 + 4)
    for step in range(3):
        step_loss(a, b, X[step][part], Y[step][part], CTX)
        # this rank's local sums (what the store sends), then the sum over ranks, in numpy
        local = [np.add(*[g.asnumpy() for g in params[n].list_grad()]) for n in names]
        every = MPI.COMM_WORLD.allgather(local)
        want = [every[0][i].copy() for i in range(len(names))]
        for r in range(1, N):
            for i in range(len(names)):
                want[i] = want[i] + every[r][i]
        tr.step(B)
        mx.nd.waitall()
        blocks = list(store._blocks.values())
        assert len(blocks) == 1, blocks
        if PATH == "shm":
            assert blocks[0] is not None, "the receive arrays are not in a shared block"
            recv = {k: v[0] for k, v in blocks[0].items()}
        else:
            assert blocks[0] is None, "a shared block without a shared-memory path"
            recv = store._recv
        for i, n in enumerate(names):
            # what the update read; without update_on_kvstore, also the gradients themselves
            got = [recv[tr._param2idx[n]].asnumpy()]
            if not update_on_kv:
                got += [g.asnumpy() for g in params[n].list_grad()]
            for g in got:
                assert g.dtype == want[i].dtype, (n, g.dtype, want[i].dtype)
                if N == 2:
                    assert np.array_equal(g, want[i]), (RANK, n, g.ravel()[:3],
                                                        want[i].ravel()[:3])
                else:
                    np.testing.assert_allclose(g, want[i], rtol=1e-6 if g.dtype == np.float32
                                               else 1e-13, atol=1e-7)

    # one request per bucket: the names of the sums are tuples of keys (and a key alone)
    pushed = sorted({k for (kind, k) in store._comm._counts if kind == "push"}, key=str)
    assert any(isinstance(k, tuple) and len(k) > 1 for k in pushed), pushed
    assert len(pushed) < len(names), pushed
    keys = [k for p in pushed for k in (p if isinstance(p, tuple) else (p,))]
    assert sorted(keys) == sorted(tr._param2idx[n] for n in names), pushed

    # the weights of one-process training on the whole batch, on one context
    ra, rb, rparams = make([mx.cpu(0)])
    rtr = gluon.Trainer(rparams, "sgd", {"learning_rate": 0.3, "momentum": 0.5}, kvstore=None)
    for step in range(3):
        step_loss(ra, rb, X[step], Y[step], [mx.cpu(0)])
        rtr.step(B)
    got = [params[n].data(CTX[1]).asnumpy() for n in names]
    for n, g, w in zip(names, got, [rparams[n].data().asnumpy() for n in rparams.keys()]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg="rank %d %s" % (RANK, n))
    allw = np.concatenate([g.ravel().astype(np.float64) for g in got])
    first = MPI.COMM_WORLD.bcast(allw if RANK == 0 else None, root=0)
    assert np.array_equal(first, allw), "rank %d weights differ from rank 0's" % RANK


run(True)
run(False)

# a store makes at most _MAX_BLOCKS shared blocks (one per set of keys a step pushes): later
# sets keep private receive arrays, on every rank alike, and still sum right
from mxc.kvstore import dist  # noqa: E402
kv2 = mx.kv.create("dist_sync")
ws = [mx.nd.zeros((5, 3)) for _ in range(dist._MAX_BLOCKS + 2)]
for i, w in enumerate(ws):
    kv2._broadcast_shared(i, w)
kv2.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, rescale_grad=1.0))
for nkeys in range(1, len(ws) + 1):
    kv2._pushpull_updates([(i, [mx.nd.full((5, 3), RANK + 1.0)], [ws[i]], -i)
                           for i in range(nkeys)])
    mx.nd.waitall()
    blocks = list(kv2._blocks.values())
    assert len(blocks) == nkeys, (nkeys, len(blocks))
    assert (blocks[-1] is not None) == (PATH == "shm" and nkeys <= dist._MAX_BLOCKS), nkeys
    recv = blocks[-1][nkeys - 1][0] if blocks[-1] is not None else kv2._recv[nkeys - 1]
    np.testing.assert_array_equal(recv.asnumpy(), np.full((5, 3), N * (N + 1) / 2.0))
# key i was updated (len(ws) - i) times by -sum
for i, w in enumerate(ws):
    np.testing.assert_array_equal(w.asnumpy(), np.full((5, 3), -(len(ws) - i) * N * (N + 1) / 2.0))
say("OK rank %d %s" % (RANK, PATH))
