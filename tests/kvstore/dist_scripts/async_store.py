"""Rank script for dist_async (argv[1]: 'main' or 'stop').

main: sums and SGD updates against a numpy reference (integer gradients and lr = 0.25 make
every float32 result exact, whatever order rank 0 applies the pushes in), a worker's pull
right after its own push reflecting that push, 2-bit compression, Trainer(kvstore=
'dist_async'), and rank 0 ending its script first: it keeps serving until the others end.
Prints 'OK rank <r>'.

stop: rank 0 is stopped (SIGSTOP) after setup; the other ranks print 'ERROR <seconds> rank
<r>: <message>' when their pull fails."""
import os
import signal
import sys
import tempfile
import time

import numpy as np

import mxc as mx
from mxc import autograd, gluon
from mxc.kvstore.compression import dequantize_2bit, quantize_2bit


def say(line):
    """One write per line, so lines of different ranks never interleave (under mpiexec
    with PYTHONUNBUFFERED, print writes the text and the newline separately)."""
    os.write(1, (line + "\n").encode())


MODE = sys.argv[1]
LR = 0.25


def grad(rank, step, shape, only_row=None):
    r = np.random.RandomState(100 * rank + step)
    g = r.randint(-3, 4, size=shape).astype(np.float32)
    if only_row is not None:              # nonzero only in this rank's row
        mask = np.zeros(shape, np.float32)
        mask[only_row] = 1
        g *= mask
    return g


def check(what, got, want):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    if not np.array_equal(got, want):
        raise AssertionError("%s: rank %d got %s, want %s" % (what, RANK, got.ravel()[:6],
                                                              np.asarray(want).ravel()[:6]))


def sgd_store():
    kv = mx.kv.create("dist_async")
    assert kv.type == "dist_async" and kv.rank == RANK and kv.num_workers == N
    shape = (N, 5)
    w0 = np.arange(N * 5, dtype=np.float32).reshape(shape) * (RANK + 1)   # rank 0's wins
    kv.init(3, mx.nd.array(w0))
    kv.init(5, mx.nd.zeros((2, 3)))
    w0 = w0 / (RANK + 1)
    try:
        kv.push(3, mx.nd.ones(shape))
        raise AssertionError("push without an optimizer did not raise")
    except mx.base.MXNetError as exc:
        assert "optimizer" in str(exc), exc
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=LR, momentum=0.0, wd=0.0))
    out = mx.nd.zeros(shape)
    mine = w0[RANK].copy()
    for step in range(4):
        # own push then own pull: this rank's row shows every push it made, at once
        g = grad(RANK, step, shape, only_row=RANK)
        kv.push(3, mx.nd.array(g))
        kv.pull(3, out=out)
        mine -= LR * g[RANK]
        check("own push reflected (step %d)" % step, out.asnumpy()[RANK], mine)
        # two 'devices' per worker: summed here, then sent
        kv.push(5, [mx.nd.array(grad(RANK, 10 + step, (2, 3))),
                    mx.nd.array(grad(RANK, 20 + step, (2, 3)))])
    kv.barrier()
    want3 = w0 - LR * sum(grad(r, s, shape, only_row=r) for r in range(N) for s in range(4))
    want5 = -LR * sum(grad(r, 10 + s, (2, 3)) + grad(r, 20 + s, (2, 3))
                      for r in range(N) for s in range(4))
    outs = [mx.nd.zeros(shape), mx.nd.zeros((2, 3))]
    kv.pull([3, 5], out=outs)
    check("after barrier, key 3", outs[0], want3)
    check("after barrier, key 5", outs[1], want5)
    kv.barrier()                # before anyone pushes again
    # pushpull: another worker's pushes may or may not be in, this rank's own must be
    o = mx.nd.zeros(shape)
    g = grad(RANK, 50, shape, only_row=RANK)
    kv.pushpull(3, mx.nd.array(g), out=o)
    check("pushpull", o.asnumpy()[RANK], want3[RANK] - LR * g[RANK])
    kv.barrier()
    # optimizer states: rank 0 holds them
    fname = os.path.join(tempfile.gettempdir(), "mxc_async_opt_%d" % os.getpid())
    if RANK == 0:
        kv.save_optimizer_states(fname)
        kv.load_optimizer_states(fname)
        os.remove(fname)
    else:
        try:
            kv.save_optimizer_states(fname)
            raise AssertionError("save_optimizer_states on rank %d did not raise" % RANK)
        except mx.base.MXNetError as exc:
            assert "rank 0" in str(exc), exc
    try:
        kv.init(9, mx.nd.zeros((4, 2)).tostype("row_sparse"))
        raise AssertionError("sparse init did not raise")
    except mx.base.MXNetError as exc:
        assert "dense" in str(exc), exc


def compressed_store():
    t = 1.5
    kv = mx.kv.create("dist_async")
    kv.set_gradient_compression({"type": "2bit", "threshold": t})
    kv.init(0, mx.nd.zeros((3, 7)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=LR))
    for step in range(3):
        kv.push(0, mx.nd.array(grad(RANK, 30 + step, (3, 7)) * 0.5))
    kv.barrier()
    out = mx.nd.zeros((3, 7))
    kv.pull(0, out=out)
    want = np.zeros(21, np.float32)
    for r in range(N):
        res = np.zeros(21, np.float32)
        for step in range(3):
            packed = quantize_2bit((grad(r, 30 + step, (3, 7)) * 0.5).ravel(), res, t)
            want -= LR * dequantize_2bit(packed, 21, t)
    check("2bit", out, want.reshape(3, 7))


def trainer():
    mx.random.seed(7)
    net = gluon.nn.Dense(1)
    net.initialize(mx.init.Normal(0.5))
    net(mx.nd.zeros((1, 4)))
    try:
        gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                      kvstore="dist_async", update_on_kvstore=False)._init_kvstore()
        raise AssertionError("update_on_kvstore=False was accepted for dist_async")
    except ValueError:
        pass
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                       kvstore="dist_async")
    rs = np.random.RandomState(RANK)
    true_w = np.array([[1.0, -2.0, 0.5, 3.0]], np.float32)
    loss_fn = gluon.loss.L2Loss()
    losses = []
    for step in range(40):
        x = rs.randn(16, 4).astype(np.float32)
        y = x.dot(true_w.T) + 1.0
        with autograd.record():
            loss = loss_fn(net(mx.nd.array(x)), mx.nd.array(y))
        loss.backward()
        tr.step(16)
        losses.append(float(loss.mean().asscalar()))
    assert tr._update_on_kvstore is True and tr._kvstore.type == "dist_async"
    assert np.mean(losses[-5:]) < 0.05 * np.mean(losses[:5]), losses
    # after a barrier every rank pulls rank 0's copy
    tr._kvstore.barrier()
    params = tr._params                 # the store's keys are indices into this list
    for i, p in enumerate(params):
        tr._kvstore.pull(i, out=p.data())
    flat = np.concatenate([p.data().asnumpy().ravel() for p in params])
    first = MPI.COMM_WORLD.bcast(flat if RANK == 0 else None, root=0)
    check("trainer weights after barrier", flat, first)
    w = net.weight.data().asnumpy()
    assert np.abs(w - true_w).max() < 0.2, w


def rank0_leaves_first():
    kv = mx.kv.create("dist_async")
    shape = (N, 3)
    kv.init(1, mx.nd.zeros(shape))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=LR))
    kv.barrier()
    if RANK == 0:
        return                    # rank 0's script ends now; it keeps serving the others
    time.sleep(0.2)
    out = mx.nd.zeros(shape)
    mine = np.zeros(3, np.float32)
    for step in range(6):
        g = grad(RANK, 60 + step, shape, only_row=RANK)
        kv.push(1, mx.nd.array(g))
        kv.pull(1, out=out)
        mine -= LR * g[RANK]
        check("served after rank 0 ended (step %d)" % step, out.asnumpy()[RANK], mine)
    for step in range(5):         # pushes still in flight when the script ends
        kv.push(1, mx.nd.array(grad(RANK, 70 + step, shape, only_row=RANK)))


def stopped_server():
    kv = mx.kv.create("dist_async")
    kv.init(1, mx.nd.zeros((2, 2)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=LR))
    kv.barrier()
    if RANK == 0:
        os.kill(os.getpid(), signal.SIGSTOP)
        return
    time.sleep(0.3)
    t0 = time.monotonic()
    out = mx.nd.zeros((2, 2))
    try:
        kv.push(1, mx.nd.ones((2, 2)))
        kv.pull(1, out=out)
        out.wait_to_read()
        say("NOERROR rank %d" % RANK)
    except mx.base.MXNetError as exc:
        say("ERROR %.1f rank %d: %s" % (time.monotonic() - t0, RANK, exc))
        sys.stdout.flush()
        os._exit(3)


from mpi4py import MPI  # noqa: E402
kv0 = mx.kv.create("dist_async")
RANK, N = kv0.rank, kv0.num_workers
if MODE == "stop":
    stopped_server()
else:
    sgd_store()
    compressed_store()
    trainer()
    mx.nd.waitall()
    say("OK rank %d" % RANK)
    rank0_leaves_first()
