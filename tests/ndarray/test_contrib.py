"""mx.nd.contrib's Python wrappers (mxc/ndarray/contrib.py): the AdamW family, against numpy."""
import numpy as np
import pytest

import mxc as mx


def _adamw_ref(w, g, m, v, rescale, lr, eta, wd, b1=0.9, b2=0.999, eps=1e-8):
    # the operators' parameters are float32, as in MXNet (1 - float32(0.999) is 0.000999987)
    b1, b2, eps = float(np.float32(b1)), float(np.float32(b2)), float(np.float32(eps))
    g = g * rescale
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w), m, v


@pytest.mark.parametrize("rescale_as_array", [False, True])
def test_adamw_update_wrapper(rng, rescale_as_array):
    w, g = rng.standard_normal((2, 5, 3))
    m, v = rng.standard_normal((5, 3)), rng.random((5, 3))
    nd = [mx.nd.array(a, dtype="float64") for a in (w, g, m, v)]
    rescale = mx.nd.array([0.5]) if rescale_as_array else 0.5
    mx.nd.contrib.adamw_update(*nd, rescale, lr=0.01, eta=0.7, wd=0.1, out=nd[0])
    rw, rm, rv = _adamw_ref(w, g, m, v, 0.5, 0.01, 0.7, 0.1)
    # the operator rounds 1 - beta to float32 as MXNet does (~1e-9 off the reference's): an
    # element that cancels to near zero needs an absolute tolerance (MXC_TEST_SEED=648874498
    # gave 0.0017572170 against 0.0017572214)
    np.testing.assert_allclose(nd[0].asnumpy(), rw, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(nd[2].asnumpy(), rm, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(nd[3].asnumpy(), rv, rtol=1e-6, atol=1e-7)


def test_multi_mp_adamw_update_wrapper(rng):
    shapes = [(4,), (2, 3)]
    ws32 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    gs = [rng.standard_normal(s).astype(np.float16) for s in shapes]
    ms = [np.zeros(s, np.float32) for s in shapes]
    vs = [np.zeros(s, np.float32) for s in shapes]
    W = [mx.nd.array(w, dtype="float16") for w in ws32]
    W32 = [mx.nd.array(w) for w in ws32]
    G = [mx.nd.array(g, dtype="float16") for g in gs]
    M = [mx.nd.array(m) for m in ms]
    V = [mx.nd.array(v) for v in vs]
    lrs, wds, etas = [0.1, 0.2], [0.0, 0.01], [1.0, 0.5]
    mx.nd.contrib.multi_mp_adamw_update(W, G, M, V, W32, 2.0, lrs=lrs, wds=wds, etas=etas,
                                        out=W)
    for i in range(2):
        rw, rm, rv = _adamw_ref(ws32[i].astype(np.float64), gs[i].astype(np.float64),
                                ms[i], vs[i], 2.0, lrs[i], etas[i], wds[i])
        # float32 arithmetic on steps of ~0.3: the operator itself is checked bit-close against
        # MXNet's fixtures in tests/ops/test_optimizer_ops.py; this checks the wrapper's wiring
        # (each weight's lr/wd/eta, the master copies, the rescale)
        np.testing.assert_allclose(W32[i].asnumpy(), rw, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(W[i].asnumpy(), rw.astype(np.float16), rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(M[i].asnumpy(), rm, rtol=1e-5, atol=1e-6)
