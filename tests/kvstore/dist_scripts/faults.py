"""Rank script for the fault tests: rank 1 misbehaves as argv[1] says; every other rank
prints 'ERROR <seconds> <message>' when the store raises, or 'NOERROR'.

die_init: rank 1 SIGKILLs itself inside init's broadcast, once its part is staged (in the
engine operation that marks the request ready); die_init_unstaged: just before. die_step: a
gluon Trainer over the store, its pushes in buckets of several keys (the test shrinks
MXC_KVSTORE_BUCKET_BYTES); rank 1 SIGKILLs itself in the middle of a step, once a bucket's
pushes are staged and its finish operation waits for the sum."""
import os
import signal
import sys
import time

import mxc as mx


def say(line):
    """One write per line, so lines of different ranks never interleave (under mpiexec
    with PYTHONUNBUFFERED, print writes the text and the newline separately). With
    FAULTS_OUT set, also into FAULTS_OUT/rank<r>, for ranks that outlive mpiexec."""
    os.write(1, (line + "\n").encode())
    if os.environ.get("FAULTS_OUT") and "rank" in globals():
        path = os.path.join(os.environ["FAULTS_OUT"], "rank%d" % rank)
        with open(path + ".tmp", "w") as f:
            f.write(line + "\n")
        os.replace(path + ".tmp", path)


mode = sys.argv[1]
kv = mx.kv.create("dist_sync")
rank = kv.rank
shape = (4, 5)
kv.init(0, mx.nd.zeros(shape))
kv.init(1, mx.nd.zeros(shape))
out = mx.nd.zeros(shape)
kv.pushpull(0, mx.nd.ones(shape), out=out)
out.wait_to_read()
kv.barrier()
bad = rank == 1

def die():
    os.kill(os.getpid(), signal.SIGKILL)


comm = kv._comm
if bad and mode in ("die_init", "die_init_unstaged"):
    _ready = comm.mark_ready

    def mark_ready(req):
        if req.name[:2] == ("init", 7) and mode == "die_init_unstaged":
            die()              # before its part is ready: the others wait inside init
        _ready(req)
        if req.name[:2] == ("init", 7):
            time.sleep(0.3)    # the communication thread has told the others
            die()
    comm.mark_ready = mark_ready
if bad and mode == "die_step":
    _note = comm.note

    def note(event, name):
        _note(event, name)
        if event == "finish" and name[0] == "push" and isinstance(name[1], tuple):
            time.sleep(0.3)
            die()
    comm.note = note
t0 = time.monotonic()
try:
    if mode in ("die_init", "die_init_unstaged"):
        kv.init(7, mx.nd.ones((64, 64)))
        kv.pull(7, out=mx.nd.zeros((64, 64)))
        mx.nd.waitall()
    if mode == "die_step":
        from mxc import autograd, gluon
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(32, activation="relu"), gluon.nn.Dense(16), gluon.nn.Dense(4))
        net.initialize(mx.init.Xavier())
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                           kvstore=mx.kv.create("dist_sync"))
        x, y = mx.nd.ones((8, 10)), mx.nd.zeros((8, 4))
        for i in range(3):
            with autograd.record():
                loss = gluon.loss.L2Loss()(net(x), y)
            loss.backward()
            tr.step(8)
            mx.nd.waitall()
        # the step's pushes went out in buckets of several keys (what rank 1 died in)
        assert any(k == "push" and isinstance(n, tuple) for k, n in comm._counts), comm._counts
    if bad and mode == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if bad and mode == "raise":
        raise RuntimeError("rank 1 fails on purpose")
    if bad and mode == "hang":
        time.sleep(600)
    steps = 3 if (bad and mode == "fewer") else 5
    if mode == "shape":
        kv.init(2, mx.nd.ones((5, 4) if bad else (4, 5)))
        kv.pull(2, out=mx.nd.zeros((5, 4) if bad else (4, 5)))
        mx.nd.waitall()
    if mode == "dtype":
        kv.pushpull(1, mx.nd.ones(shape, dtype="float64" if bad else "float32"),
                    out=mx.nd.zeros(shape))
        mx.nd.waitall()
    if mode == "bucket_dtype":
        # a Trainer step's pushes (bucketed, receive arrays in a shared block) whose gradient
        # dtypes differ between the ranks: the blocks' layouts differ, named on every rank
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        kv._pushpull_updates([(0, [mx.nd.ones(shape)], [mx.nd.zeros(shape)], 0),
                              (1, [mx.nd.ones(shape, dtype="float64" if bad else "float32")],
                               [mx.nd.zeros(shape)], -1)])
        mx.nd.waitall()
    for i in range(steps):
        kv.pushpull(0, mx.nd.ones(shape) * i, out=out)
        out.wait_to_read()
    if bad and mode == "fewer":
        kv.barrier()           # the end-of-epoch barrier the others never reach in time
    say("NOERROR rank %d" % rank)
except mx.base.MXNetError as exc:
    say("ERROR %.1f rank %d: %s" % (time.monotonic() - t0, rank, exc))
    sys.exit(3)
