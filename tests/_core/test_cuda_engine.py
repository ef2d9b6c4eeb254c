"""The engine's per-device workers (engine.push_native_dev), which need no CUDA: ops pushed for
a device run in push order on that device's own thread, beside the CPU workers."""
import threading

from mxc._core import engine


def test_device_ops_run_in_push_order_even_when_independent():
    rec = engine._Int64Buffer(3 * 40)
    engine._test_order_reset()
    vs = [engine.Var() for _ in range(40)]
    for i in range(40):            # no shared vars: only the device queue orders them
        engine._push_record(rec, i, writes=[vs[i]], usec=50 if i % 7 == 0 else 0, device=3)
    for v in vs:
        v.wait()
    order = [rec[3 * i + 2] for i in range(40)]
    assert order == sorted(order)
    for i in range(39):            # each started after the previous ended
        assert rec[3 * (i + 1)] >= rec[3 * i + 1]


def test_device_and_cpu_ops_share_var_ordering():
    buf = engine._Int64Buffer(4)
    vs = [engine.Var() for _ in range(4)]
    expect = [0] * 4
    recs = []                       # the buffers the queued ops write: alive until the wait
    for k in range(50):
        i, o = k % 4, (k * 3 + 1) % 4
        engine._push_affine(buf, vs, [o], [i], k)
        expect[o] = (expect[o] * 31 + expect[i] + k) % (1 << 64)
        recs.append(engine._Int64Buffer(3))
        engine._push_record(recs[-1], 0, reads=[vs[o]], writes=[vs[i]], device=k % 2)
    engine.wait_for_all()
    assert buf.tolist_u64() == expect


def test_device_op_errors_travel_on_vars():
    v, w = engine.Var(), engine.Var()
    engine._push_fail(writes=[v], message="boom", name="gpu_op", device=0)
    rec = engine._Int64Buffer(3)
    engine._push_record(rec, 0, reads=[v], writes=[w], device=0)
    try:
        w.wait()
    except Exception as e:
        assert "gpu_op: boom" in str(e)
    else:
        raise AssertionError("no error")
    v.wait()                                # delivered through w: gone from v too (as MXNet)
    assert rec[0] == 0                      # skipped
    engine.wait_for_all()


def test_python_op_on_a_device_worker():
    seen = []
    v = engine.Var()
    engine.push(lambda: seen.append(threading.get_ident()), mutable_vars=[v], device=1)
    v.wait()
    assert seen and seen[0] != threading.get_ident()
    try:
        engine.push(lambda: None, device=99)
    except ValueError as e:
        assert "device 99" in str(e)
    else:
        raise AssertionError("no error")
