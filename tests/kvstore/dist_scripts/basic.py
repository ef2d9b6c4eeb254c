"""Rank script: every store type's sums and updates against a numpy reference computed from
what every rank pushes (values are functions of the rank, so each rank knows all of them).
Prints 'OK rank <r>' at the end; any mismatch raises."""
import os
import sys
import tempfile

import numpy as np

import mxc as mx


def say(line):
    """One write per line, so lines of different ranks never interleave (under mpiexec
    with PYTHONUNBUFFERED, print writes the text and the newline separately)."""
    os.write(1, (line + "\n").encode())


GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                      "kvstore_2bit_golden.npz")


def val(rank, key, step, shape):
    r = np.random.RandomState(1000 * rank + 37 * key + step)
    return r.randn(*shape).astype(np.float32)


def check(name, got, want, exact=False):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    if exact:
        ok = np.array_equal(got, want)
    else:
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
    if not ok:
        raise AssertionError("%s: rank %d got %s, want %s" % (name, RANK, got.ravel()[:6],
                                                              np.asarray(want).ravel()[:6]))


def sync_store(kvtype):
    kv = mx.kv.create(kvtype)
    assert kv.type == kvtype and kv.rank == RANK and kv.num_workers == N
    assert kv.is_capable("optimizer")
    shapes = {3: (4, 3), 5: (7,), 9: (2, 2, 2)}
    # init: rank 0's value everywhere
    for k, s in shapes.items():
        kv.init(k, mx.nd.array(val(RANK, k, 0, s)))
        out = mx.nd.zeros(s)
        kv.pull(k, out=out)
        check("%s init %d" % (kvtype, k), out, val(0, k, 0, s), exact=True)
    # push a list of two values per key (two 'devices'), list of keys, pull the sum
    keys = list(shapes)
    vals = [[mx.nd.array(val(RANK, k, 1, shapes[k])), mx.nd.array(val(RANK, k, 2, shapes[k]))]
            for k in keys]
    kv.push(keys, vals)
    outs = [mx.nd.zeros(shapes[k]) for k in keys]
    kv.pull(keys, out=outs)
    for k, o in zip(keys, outs):
        want = sum(val(r, k, 1, shapes[k]) + val(r, k, 2, shapes[k]) for r in range(N))
        check("%s sum %d" % (kvtype, k), o, want)
    # pushpull into several outputs
    outs = [mx.nd.zeros(shapes[3]), mx.nd.zeros(shapes[3])]
    kv.pushpull(3, mx.nd.array(val(RANK, 3, 3, shapes[3])), out=outs)
    for o in outs:
        check("%s pushpull" % kvtype, o, sum(val(r, 3, 3, shapes[3]) for r in range(N)))
    # optimizer: same update on every rank
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=0.5))
    w = mx.nd.zeros(shapes[5])
    kv.pull(5, out=w)
    w0 = w.asnumpy()
    mom = np.zeros_like(w0)
    for step in range(3):
        kv.push(5, mx.nd.array(val(RANK, 5, 10 + step, shapes[5])))
        kv.pull(5, out=w)
        g = 0.5 * sum(val(r, 5, 10 + step, shapes[5]) for r in range(N))
        mom = 0.9 * mom - 0.1 * g
        w0 = w0 + mom
        check("%s sgd step %d" % (kvtype, step), w, w0)
    fname = os.path.join(tempfile.gettempdir(), "mxc_dist_opt_%d_%d" % (os.getpid(), RANK))
    kv.save_optimizer_states(fname)
    kv.load_optimizer_states(fname)
    os.remove(fname)
    kv.barrier()


def str_keys():
    kv = mx.kv.create("dist_sync")
    kv.init(["a", "b"], [mx.nd.ones((2,)) * (RANK + 1), mx.nd.ones((3,)) * (RANK + 2)])
    oa, ob = mx.nd.zeros((2,)), mx.nd.zeros((3,))
    kv.pull(["b", "a"], out=[ob, oa])
    check("str init", oa, np.ones(2)), check("str init b", ob, np.ones(3) * 2)
    kv.pushpull("a", mx.nd.ones((2,)) * RANK, out=oa)
    check("str pushpull", oa, np.ones(2) * sum(range(N)))


def horovod():
    kv = mx.kv.create("horovod")
    assert kv.type == "horovod" and kv.num_workers == N and not kv.is_capable("optimizer")
    x = mx.nd.array(val(RANK, 1, 0, (5, 2)))
    kv.pushpull("g", x)
    check("horovod pushpull", x, sum(val(r, 1, 0, (5, 2)) for r in range(N)))
    out = mx.nd.zeros((5, 2))
    kv.broadcast("p", mx.nd.array(val(RANK, 2, 0, (5, 2))), out)
    check("horovod broadcast", out, val(0, 2, 0, (5, 2)), exact=True)
    # the store is declared distributed, so a Trainer given its name uses it with one device
    # per rank too (as for 'dist_sync'): the update sees every rank's gradient summed
    p = mx.gluon.Parameter("hvd_w", shape=(3,), init=mx.init.Zero())
    p.initialize()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, kvstore="horovod")
    with mx.autograd.record():
        loss = (p.data() * mx.nd.array(val(RANK, 3, 0, (3,)))).sum()
    loss.backward()
    trainer.step(1)
    check("horovod trainer", p.data(), -sum(val(r, 3, 0, (3,)) for r in range(N)))


def compression():
    d = np.load(GOLDEN)
    for ti in range(2):
        kv = mx.kv.create("dist_sync")
        kv.set_gradient_compression({"type": "2bit", "threshold": float(d["threshold_t%d" % ti])})
        kv.init(0, mx.nd.zeros((7, 9)))
        out = mx.nd.zeros((7, 9))
        for s in range(5):
            g = d["grad_t%d_w%d_s%d" % (ti, RANK, s)] if RANK < 2 else np.zeros((7, 9), np.float32)
            kv.push(0, mx.nd.array(g))
            kv.pull(0, out=out)
            want = d["pulled_t%d_w0_s%d" % (ti, s)] + d["pulled_t%d_w1_s%d" % (ti, s)]
            check("2bit t%d step %d" % (ti, s), out, want, exact=True)


def big_chunks():
    os.environ["MXC_KVSTORE_CHUNK_BYTES"] = "4096"    # read per collective: many chunks
    import mxc.kvstore._mpi as m
    old, m._CHUNK_BYTES = m._CHUNK_BYTES, 4096
    try:
        kv = mx.kv.create("dist_sync")
        n = 10_000
        kv.init(0, mx.nd.zeros((n,)))
        out = mx.nd.zeros((n,))
        kv.pushpull(0, mx.nd.arange(n) * (RANK + 1), out=out)
        check("chunked", out, np.arange(n, dtype=np.float32) * sum(r + 1 for r in range(N)))
    finally:
        # the communication thread reads the chunk size when it runs a collective, and the
        # check above waits for the pushpull only: the init's broadcast may run after it (the
        # ranks agree on the order of collectives as they become ready everywhere). Restoring
        # the size before it ran made this rank cut that broadcast unlike rank 0 (one CI run:
        # ranks 1-3 failed it with "Other MPI error" while rank 0 completed)
        mx.nd.waitall()
        m._CHUNK_BYTES = old


kv0 = mx.kv.create("dist_sync")
RANK, N = kv0.rank, kv0.num_workers
for t in ("dist_sync", "dist_device_sync", "dist_sync_device"):
    sync_store(t)
str_keys()
horovod()
compression()
big_chunks()
mx.nd.waitall()
say("OK rank %d" % RANK)
sys.stdout.flush()
