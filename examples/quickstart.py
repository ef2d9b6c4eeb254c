"""A tour of mxc: asynchronous NDArrays on the dependency engine, autograd and operators.

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
    # 5. autograd over MXNet's operators: a two-layer classifier on synthetic data, trained
    #    with FullyConnected, Activation, softmax_cross_entropy and the fused sgd_mom_update
    mx.random.seed(7)
    rng = np.random.default_rng(7)
    centers = rng.normal(0, 3, size=(3, 8))
    labels = rng.integers(0, 3, size=600)
    data = mx.nd.array(centers[labels] + rng.normal(0, 1, size=(600, 8)))
    label = mx.nd.array(labels)
    params = {"w1": mx.nd.random.normal(0, 0.1, shape=(32, 8)), "b1": mx.nd.zeros(32),
              "w2": mx.nd.random.normal(0, 0.1, shape=(3, 32)), "b2": mx.nd.zeros(3)}
    moms = {k: mx.nd.zeros(v.shape) for k, v in params.items()}
    for v in params.values():
        v.attach_grad()

    def net(x):
        h = mx.nd.Activation(mx.nd.FullyConnected(x, params["w1"], params["b1"], num_hidden=32),
                             act_type="relu")
        return mx.nd.FullyConnected(h, params["w2"], params["b2"], num_hidden=3)

    for epoch in range(5):
        for i in range(0, 600, 50):
            x, y = data[i:i + 50], label[i:i + 50]
            with mx.autograd.record():
                loss = mx.nd.softmax_cross_entropy(net(x), y) / 50
            loss.backward()
            for k, w in params.items():
                mx.nd.sgd_mom_update(w, w.grad, moms[k], lr=0.1, momentum=0.9, out=w)
    accuracy = (mx.nd.argmax(net(data), axis=1) == label).mean().asscalar()
    print(f"two-layer classifier after 5 epochs: accuracy {accuracy:.3f}")
    assert accuracy > 0.9

    mx.nd.waitall()
    print("engine:", mx.engine.engine_type(), "| pooled memory:", mx.storage.stats()["pooled"], "bytes")
    print("quickstart OK")


if __name__ == "__main__":
    main()
