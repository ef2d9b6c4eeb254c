"""The profiler's records in the engine and the storage pools (engine.profile_*,
storage.profile_*): what mxc/profiler.py builds its trace from."""
import os
import subprocess
import sys
import threading
import time

from mxc._core import engine, storage
from tests._core.test_cuda_fake import fake_lib, run as run_fake  # noqa: F401  (fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _take():
    recs, dropped = engine.profile_take()
    assert dropped == 0
    return recs


def test_off_records_nothing():
    engine.profile_set_ops(False)
    engine.profile_take()
    v = engine.Var()
    engine.push(lambda: None, mutable_vars=[v], name="quiet")
    v.wait()
    engine.profile_span("also_quiet", 1, 2)
    assert _take() == []


def test_record_is_the_running_thread_and_its_time():
    ran = {}

    def op():
        ran["tid"] = threading.get_native_id()
        ran["t0"] = time.monotonic_ns()
        time.sleep(0.01)
        ran["t1"] = time.monotonic_ns()

    engine.profile_take()
    engine.profile_set_ops(True)
    try:
        v = engine.Var()
        engine.push(op, mutable_vars=[v], name="timed_op")
        v.wait()
    finally:
        engine.profile_set_ops(False)
    [(name, t0, t1, tid, dev)] = _take()
    assert name == "timed_op" and dev == -1 and tid == ran["tid"]
    assert t0 <= ran["t0"] and ran["t1"] <= t1     # (a Python op's span includes taking the GIL)
    if tid != threading.get_native_id():
        assert engine.profile_threads()[tid].startswith("engine worker")


def test_scope_names_pushed_operations():
    engine.profile_take()
    engine.profile_set_ops(True)
    try:
        assert engine.profile_scope("MyOp") is None
        v = engine.Var()
        engine.push(lambda: None, mutable_vars=[v], name="inner")
        assert engine.profile_scope(None) == "MyOp"
        engine.push(lambda: None, mutable_vars=[v], name="outer")
        engine.profile_span("MyOp::pure_python", 10, 20)
        v.wait()
    finally:
        engine.profile_set_ops(False)
    recs = _take()
    assert sorted(r[0] for r in recs) == ["MyOp::inner", "MyOp::pure_python", "outer"]
    span = [r for r in recs if r[0] == "MyOp::pure_python"][0]
    assert span[1:4] == (10, 20, threading.get_native_id())


def test_long_names_are_cut():
    engine.profile_take()
    engine.profile_set_ops(True)
    try:
        engine.profile_span("x" * 500, 0, 1)
    finally:
        engine.profile_set_ops(False)
    [(name, *_)] = _take()
    assert name == "x" * 87


def test_memory_records_follow_the_pool():
    storage.profile_take_memory()
    storage.profile_set_memory(True)
    try:
        addr = storage._alloc(100000)
        used_after_alloc = storage.stats(1)["in_use"]
        storage._free(addr)
        used_after_free = storage.stats(1)["in_use"]
        pinned = storage._alloc(64, dev_type=3)
        storage._free(pinned)
    finally:
        storage.profile_set_memory(False)
    recs, dropped = storage.profile_take_memory()
    assert dropped == 0
    cpu = [r for r in recs if r[1] == 1]
    assert [r[3] for r in cpu] == [used_after_alloc, used_after_free]
    assert used_after_alloc - used_after_free >= 100000
    assert [r[1:3] for r in recs if r[1] == 3] == [(3, 0), (3, 0)]
    assert all(a[0] <= b[0] for a, b in zip(recs, recs[1:]))
    storage._free(storage._alloc(10))            # off again: no record
    assert storage.profile_take_memory() == ([], 0)


PARALLEL = """
import threading
from mxc._core import engine
buf = engine._Int64Buffer(6)
engine.profile_set_ops(True)
engine._push_record(buf, 0, writes=[engine.Var()], gate=True, name="a")
engine._push_record(buf, 1, writes=[engine.Var()], gate=True, name="b")
import time
t0 = time.time()
while not (buf[0] and buf[3]) and time.time() - t0 < 60:   # both started, side by side
    time.sleep(0.01)
engine._test_gate(1)
engine.wait_for_all()
recs, _ = engine.profile_take()
names = engine.profile_threads()
tids = {r[3] for r in recs}
print(sorted(r[0] for r in recs), len(tids), all(names.get(t, "").startswith("engine worker")
      for t in tids))
"""

NAIVE = """
import threading
from mxc._core import engine
engine.profile_set_ops(True)
v = engine.Var()
engine.push(lambda: None, mutable_vars=[v], name="inline")
v.wait()
recs, _ = engine.profile_take()
print([(r[0], r[3] == threading.get_native_id()) for r in recs])
"""


def _run(code, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_parallel_workers_each_record_their_own_thread():
    # two gated ops that both started before the gate opened ran on two workers at once
    out = _run(PARALLEL, {"MXNET_CPU_WORKER_NTHREADS": "2"})
    assert out == "['a', 'b'] 2 True"


def test_naive_engine_records_on_the_pushing_thread():
    out = _run(NAIVE, {"MXNET_ENGINE_TYPE": "NaiveEngine"})
    assert out == "[('inline', True)]"


def test_gpu_operations_and_memory_on_the_fake_driver(fake_lib):
    """GPU operations are recorded with their device, on the thread that queued them on the
    stream (the device's worker, or the pusher that launched inline); GPU blocks as dev_type 2;
    copies under MXNet's names (CopyCPU2GPU, CopyGPU2CPU, CopyGPU2GPU)."""
    out = run_fake('''
        engine.profile_take(); storage.profile_take_memory()
        engine.profile_set_ops(True); storage.profile_set_memory(True)
        gx = gpu_array(np.arange(4, dtype=np.float32)); o = empty((4,), np.float32)
        cuda.push_launch(kfn("fake_add_f32"), (1,), (4,), 0,
                         [("in", 0), ("in", 0), ("out", 0), ("i64", 4)], [gx], [o], "my_kernel", 0)
        launcher = None
        back = mx.nd.zeros((4,))
        cuda.push_copy(o, back)
        assert back.asnumpy().tolist() == [0, 2, 4, 6]
        launcher = lib.fake_stat(8)
        o2 = empty((4,), np.float32)
        cuda.push_copy(back, o2)
        cuda.push_copy(o2, o)
        engine.wait_for_all()
        engine.profile_set_ops(False); storage.profile_set_memory(False)
        recs, _ = engine.profile_take()
        mine = {r[0]: r for r in recs}
        assert mine["my_kernel"][4] == 0 and mine["my_kernel"][3] == launcher, recs
        assert mine["CopyGPU2CPU"][4] == 0 and mine["CopyCPU2GPU"][4] == 0, recs
        assert mine["CopyGPU2GPU"][4] == 0 and "_copyto" not in mine, recs
        names = engine.profile_threads()
        assert all(r[3] == threading.get_native_id() or r[3] in names for r in recs)
        mems, _ = storage.profile_take_memory()
        assert any(m[1] == 2 and m[2] == 0 and m[3] >= 16 for m in mems), mems
        print("ok")
    ''', fake_lib)
    assert out.strip().endswith("ok")


def test_gpu_operations_timed_by_stream_events(fake_lib):
    """A GPU operation's record is its work's time on the device, from the two events its
    stream recorded around it (the fake device clock: each launch takes FAKE_CUDA_KERNEL_NS),
    read when the records are taken, not when the operation ran; back-to-back operations
    follow one another on the device's timeline."""
    out = run_fake('''
        engine.profile_take()
        gx = gpu_array(np.arange(4, dtype=np.float32)); o = empty((4,), np.float32)
        def launch():
            cuda.push_launch(kfn("fake_add_f32"), (1,), (4,), 0,
                             [("in", 0), ("in", 0), ("out", 0), ("i64", 4)], [gx], [o], "k", 0)
        launch()                                  # not recorded: its events never made
        engine.wait_for_all()
        events0 = lib.fake_stat(5)
        engine.profile_set_ops(True)
        for _ in range(3):
            launch()
        engine.wait_for_all()
        engine.profile_set_ops(False)
        assert lib.fake_stat(5) - events0 == 6    # a start and a stop event per operation
        assert lib.fake_stat(13) == 0             # nothing read yet: no wait per operation
        recs, _ = engine.profile_take()
        assert lib.fake_stat(13) == 3
        ks = [r for r in recs if r[0] == "k"]
        assert len(ks) == 3 and all(r[4] == 0 for r in ks), recs
        assert [r[2] - r[1] for r in ks] == [7000000] * 3, [r[2] - r[1] for r in ks]
        for a, b in zip(ks, ks[1:]):
            assert b[1] >= a[2]                   # the stream runs them one after the other
        # a CPU operation keeps its host times
        v = engine.Var()
        engine.profile_set_ops(True)
        engine.push(lambda: None, (), (v,), name="host_op")
        engine.wait_for_all()
        engine.profile_set_ops(False)
        recs, _ = engine.profile_take()
        assert [r[4] for r in recs if r[0] == "host_op"] == [-1] and lib.fake_stat(13) == 3
        print("ok")
    ''', fake_lib, FAKE_CUDA_KERNEL_NS=7000000)
    assert out.strip().endswith("ok")
