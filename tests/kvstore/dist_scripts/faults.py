"""Rank script for the fault tests: rank 1 misbehaves as argv[1] says; every other rank
prints 'ERROR <seconds> <message>' when the store raises, or 'NOERROR'."""
import os
import signal
import sys
import time

import mxc as mx


def say(line):
    """One write per line, so lines of different ranks never interleave (under mpiexec
    with PYTHONUNBUFFERED, print writes the text and the newline separately)."""
    os.write(1, (line + "\n").encode())


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
t0 = time.monotonic()
try:
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
