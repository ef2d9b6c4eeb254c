"""Rank script: many keys pushed in one step, which the communication thread sums together
(fused: one pass over the shared-memory window, or concurrent MPI collectives with
MXC_KVSTORE_SHM=0). Keys of three dtypes, of sizes 0, 1, odd and larger than a chunk (the
test shrinks MXC_KVSTORE_SHM_BYTES so that keys straddle chunks and slices), pushed with
priorities, some as lists of two values; horovod in-place sums. Checks the sums against numpy
and that every rank received bit-identical values. argv[1]: "shm" or "mpi", the path the
store must be using. Prints 'OK rank <r>'."""
import hashlib
import os
import sys

import numpy as np

import mxc as mx


def say(line):
    os.write(1, (line + "\n").encode())


def val(rank, key, step, size, dtype):
    r = np.random.RandomState(1000 * rank + 37 * key + step)
    if np.dtype(dtype).kind == "i":
        return r.randint(-1000, 1000, size).astype(dtype)
    return r.randn(size).astype(dtype)


kv = mx.kv.create("dist_sync")
RANK, N = kv.rank, kv.num_workers
comm = kv._comm
path = "shm" if comm._node is not None else "mpi"
if path != sys.argv[1]:
    raise AssertionError("rank %d sums over %s, the test expects %s" % (RANK, path, sys.argv[1]))

specs = [(0, np.float32), (1, np.float32), (1001, np.float32), (7, np.float64),
         (5000, np.float32), (333, np.int32), (2049, np.float32), (0, np.int32),
         (3, np.float64), (4097, np.float32), (64, np.int32), (1, np.float64)]
for k, (size, dt) in enumerate(specs):
    kv.init(k, mx.nd.zeros((size,), dtype=dt))
digest = hashlib.sha256()
for step in range(1, 3):
    for k, (size, dt) in enumerate(specs):
        if k % 3 == 0:       # two values of this worker, summed here first
            vals = [mx.nd.array(val(RANK, k, step, size, dt), dtype=dt),
                    mx.nd.array(val(RANK, k, step + 10, size, dt), dtype=dt)]
        else:
            vals = mx.nd.array(val(RANK, k, step, size, dt), dtype=dt)
        kv.push(k, vals, priority=-(k % 4))
    for k, (size, dt) in enumerate(specs):
        out = mx.nd.zeros((size,), dtype=dt)
        kv.pull(k, out=out)
        got = out.asnumpy()
        want = sum(val(r, k, step, size, dt) for r in range(N))
        if k % 3 == 0:
            want = want + sum(val(r, k, step + 10, size, dt) for r in range(N))
        assert got.dtype == np.dtype(dt), (k, got.dtype)
        if np.dtype(dt).kind == "i":
            assert np.array_equal(got, want), (RANK, k, got[:5], want[:5])
        else:
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (RANK, k, got[:5], want[:5])
        digest.update(got.tobytes())

hvd = mx.kv.create("horovod")
xs = [mx.nd.array(val(RANK, 50 + i, 0, 3001, np.float32)) for i in range(3)]
for i, x in enumerate(xs):
    hvd.pushpull("h%d" % i, x)         # in place: the sum lands in x
for i, x in enumerate(xs):
    got = x.asnumpy()
    assert np.allclose(got, sum(val(r, 50 + i, 0, 3001, np.float32) for r in range(N)),
                       rtol=1e-5, atol=1e-5), (RANK, i)
    digest.update(got.tobytes())

from mxc.contrib import horovod as hv      # noqa: E402  (in place; averaged, then summed)
hv.init()
ys = [mx.nd.array(val(RANK, 60 + i, 0, 1000 + i, np.float32)) for i in range(3)]
hv.allreduce_(ys[0], average=True, name="y0")
hv.grouped_allreduce_(ys[1:], average=False, name="ys")
for i, y in enumerate(ys):
    want = sum(val(r, 60 + i, 0, 1000 + i, np.float32) for r in range(N)) / (N if i == 0 else 1)
    got = y.asnumpy()
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (RANK, "hvd", i)
    digest.update(got.tobytes())

# every rank holds the very same bits (one rank sums each slice; the others copy it)
mine = np.frombuffer(digest.digest(), np.uint8).copy()
box = {}
req = mx.kvstore._mpi.Request(comm.next_name("check", None), None, 0,
                              lambda c: box.setdefault("all", c.allgather(mine, "digest")))
comm.submit(req, ready=True)
req.wait()
assert all(np.array_equal(box["all"][r], mine) for r in range(N)), "ranks differ"
say("OK rank %d %s" % (RANK, path))
