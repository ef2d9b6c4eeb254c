"""A tour of mxc's runtime core: asynchronous NDArrays on the dependency engine.

Run: python examples/quickstart.py
"""
import os
import tempfile
import time

import numpy as np

import mxc as mx


def main():
    # 1. create arrays, as in MXNet 1.x
    a = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    b = mx.nd.ones((2, 3)) * 2
    print("a =", a.asnumpy().tolist(), a.dtype.__name__, a.context)
    c = (a + b) * a - 1            # queued on the engine; values arrive when read
    print("(a + b) * a - 1 =", c.asnumpy().tolist())
    print("sum over axis 1:", mx.nd.sum(c, axis=1).asnumpy().tolist())

    # 2. pushing returns before the work is done: time the push and the wait separately
    x = mx.nd.ones((1024, 1024))
    t0 = time.perf_counter()
    y = x
    for _ in range(200):
        y = mx.nd.exp(y * 0.0)      # 400 operations, each depending on the previous one
    t1 = time.perf_counter()
    y.wait_to_read()
    t2 = time.perf_counter()
    print(f"pushed 400 ops in {1e3 * (t1 - t0):.1f} ms; they finished {1e3 * (t2 - t1):.1f} ms later")
    assert np.allclose(y.asnumpy(), 1.0)

    # 3. views share storage and writes through them are ordered by the engine
    v = a[1]                        # row 1, a view
    v[:] = 0
    print("after a[1][:] = 0, a =", a.asnumpy().tolist())

    # 4. save and load a .params file (MXNet's binary format)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tour.params")
        mx.nd.save(path, {"arg:weight": c, "aux:count": mx.nd.arange(3, dtype="int32")})
        loaded = mx.nd.load(path)
        print(f"saved {os.path.getsize(path)} bytes; loaded {sorted(loaded)}")
        assert np.array_equal(loaded["arg:weight"].asnumpy(), c.asnumpy())
        assert loaded["aux:count"].asnumpy().tolist() == [0, 1, 2]
    mx.nd.waitall()
    print("engine:", mx.engine.engine_type(), "| pooled memory:", mx.storage.stats()["pooled"], "bytes")
    print("quickstart OK")


if __name__ == "__main__":
    main()
