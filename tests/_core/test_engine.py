"""Tests of the dependency engine (mxc/_core/engine.pyx).

The engine kind and worker count are read at import, so the scenarios below run in
subprocesses with MXNET_ENGINE_TYPE / MXNET_CPU_WORKER_NTHREADS set; each scenario is a plain
function of this module, imported by the child. The reference for every computation is a
sequential replay in Python of the same pushes.
"""
import os
import random
import subprocess
import sys
import threading
import time

import pytest

from mxc._core import engine
from mxc.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
M64 = (1 << 64) - 1

KINDS = [
    pytest.param({"MXNET_ENGINE_TYPE": "NaiveEngine"}, id="naive"),
    pytest.param({"MXNET_ENGINE_TYPE": "ThreadedEnginePerDevice",
                  "MXNET_CPU_WORKER_NTHREADS": "1"}, id="threaded-1"),
    pytest.param({"MXNET_CPU_WORKER_NTHREADS": "2"}, id="threaded-2"),
    pytest.param({"MXNET_ENGINE_TYPE": "ThreadedEngine",
                  "MXNET_CPU_WORKER_NTHREADS": "4"}, id="threaded-4"),
]


def run_child(code, env_extra, timeout=60, args=()):
    """Run python code in a child with the engine configured by env_extra; return the result."""
    env = dict(os.environ)
    for k in ("MXNET_ENGINE_TYPE", "MXNET_CPU_WORKER_NTHREADS", "MXC_ENGINE_MAX_PENDING"):
        env.pop(k, None)
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, HERE, env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def run_scenario(call, env_extra, timeout=60):
    res = run_child(f"import test_engine as t; t.{call}", env_extra, timeout)
    assert res.returncode == 0, f"{call} failed:\n{res.stdout}\n{res.stderr}"
    return res.stdout


# ---------------------------------------------------------------------------------------------
# scenarios (run in children)


def affine_ref(ref, outs, ins, k):
    """Sequential model of engine._push_affine."""
    s = sum(ref[i] for i in ins) & M64
    for j, o in enumerate(outs):
        ref[o] = (ref[o] * 31 + s + k + j) & M64


def scenario_dag(seed=0, nops=20000, nvars=64, npy=2000):
    """Random DAG of native ops (random read/write sets and priorities) equals a replay."""
    rng = random.Random(seed)
    buf = engine._Int64Buffer(nvars)
    vs = [engine.Var() for _ in range(nvars)]
    ref = [(7 * i + 1) for i in range(nvars)]
    for i in range(nvars):
        buf[i] = ref[i]
    checked = 0
    for k in range(nops):
        outs = rng.sample(range(nvars), rng.choice((1, 1, 1, 2)))
        ins = rng.sample(range(nvars), rng.randint(0, 3))      # may overlap outs
        engine._push_affine(buf, vs, outs, ins, k, priority=rng.randint(-2, 2))
        affine_ref(ref, outs, ins, k)
        assert engine.pending() <= engine.max_pending()
        if k % 2000 == 1999:         # a read in the middle sees exactly the prefix
            i = rng.randrange(nvars)
            vs[i].wait()
            assert buf.tolist_u64()[i] == ref[i]
            checked += 1
    engine.wait_for_all()
    assert engine.pending() == 0
    assert buf.tolist_u64() == ref
    assert checked == nops // 2000

    # the same with Python ops (GIL taken on the workers), on Python ints
    pyvals = [i + 3 for i in range(16)]
    pvs = [engine.Var() for _ in range(16)]
    pref = list(pyvals)

    def make(outs, ins, k):
        def op():
            s = sum(pyvals[i] for i in ins)
            for j, o in enumerate(outs):
                pyvals[o] = (pyvals[o] * 31 + s + k + j) % (1 << 61)
        return op

    for k in range(npy):
        outs = rng.sample(range(16), rng.choice((1, 2)))
        ins = rng.sample(range(16), rng.randint(0, 3))
        engine.push(make(outs, ins, k), [pvs[i] for i in ins], [pvs[o] for o in outs],
                    priority=rng.randint(-1, 1))
        s = sum(pref[i] for i in ins)
        for j, o in enumerate(outs):
            pref[o] = (pref[o] * 31 + s + k + j) % (1 << 61)
    engine.wait_for_all()
    assert pyvals == pref


def scenario_threads(nthreads=4, nops=1500):
    """Python threads pushing at once, each on its own vars plus shared reads."""
    shared, per = 4, 6
    n = shared + nthreads * per
    buf = engine._Int64Buffer(n)
    vs = [engine.Var() for _ in range(n)]
    ref = [0] * n
    for i in range(n):
        buf[i] = ref[i] = 1000 + i
    logs = [[] for _ in range(nthreads)]
    seen = [[] for _ in range(nthreads)]
    pyvars = [engine.Var() for _ in range(nthreads)]
    errors = []

    def work(t):
        try:
            rng = random.Random(100 + t)
            own = list(range(shared + t * per, shared + (t + 1) * per))
            for k in range(nops):
                outs = rng.sample(own, rng.choice((1, 2)))
                ins = rng.sample(own + list(range(shared)), rng.randint(0, 3))
                key = k * nthreads + t
                engine._push_affine(buf, vs, outs, ins, key)
                logs[t].append((outs, ins, key))
                if k % 50 == 0:
                    engine.push(lambda k=k: seen[t].append(k), [vs[0]], [pyvars[t]])
        except BaseException as exc:      # surfaced by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    engine.wait_for_all()
    assert not errors, errors
    for t in range(nthreads):
        for outs, ins, key in logs[t]:
            affine_ref(ref, outs, ins, key)
        assert seen[t] == list(range(0, nops, 50))
    assert buf.tolist_u64() == ref

    # a wait for an op another thread is running (inline, on NaiveEngine) blocks until it ends
    v = engine.Var()
    started, done = threading.Event(), []

    def slow():
        started.set()
        time.sleep(0.1)
        done.append(1)

    th = threading.Thread(target=engine.push, args=(slow, [], [v]))
    th.start()
    assert started.wait(10)
    v.wait()
    assert done == [1]
    th.join()


def scenario_kind(expect_type, expect_workers):
    """MXNET_ENGINE_TYPE / MXNET_CPU_WORKER_NTHREADS are honoured."""
    assert engine.engine_type() == expect_type
    assert engine.num_workers() == expect_workers


def scenario_errors():
    """Failures: stored on written vars, propagated to dependents, raised at the wait."""
    clean_slate()
    a, b, c, d, x = (engine.Var() for _ in range(5))
    ran = []
    engine._push_fail(writes=[a], message="disk on fire", name="burner")
    # errors are raised at the wait, never at the push (also on NaiveEngine)
    engine.push(lambda: ran.append("b"), [a], [b], name="dep_b")          # skipped
    engine.push(lambda: ran.append("c"), [b], [c], name="dep_c")          # skipped
    engine.push(lambda: ran.append("d"), [], [d], name="free_d")          # unrelated: runs
    engine.push(lambda: ran.append("a"), [], [a], name="overwrite_a")     # input a failed: skipped
    # everything has run (or been skipped) before the delivery: an op that only starts after
    # it finds the error gone and runs, as in MXNet
    engine.wait_for_pushed()
    assert engine.error_pending(c)                    # not waited: still to deliver
    with pytest.raises(MXNetError, match=r"^burner: disk on fire$"):
        c.wait()
    # delivered: gone from every var it reached (MXNet 1.9.1 nulls the exception_ptr they
    # share; with the oracle, d = a * 2 failing on a: d.wait_to_read() raises, a's does not)
    for v in (c, b, a):
        v.wait()
        assert not engine.error_pending(v)
    d.wait()
    assert ran == ["d"]
    # delivered errors are not raised again by wait_for_all
    engine.wait_for_all()

    # Python exceptions carry the type name; the engine keeps working
    def boom():
        raise KeyError("missing")
    engine.push(boom, [], [x], name="pyop")
    with pytest.raises(MXNetError, match=r"^pyop: KeyError: 'missing'$"):
        engine.wait_for_var(x)
    engine.push(lambda: ran.append("x"), [], [x])
    x.wait()
    assert ran == ["d", "x"]

    # wait_for_all raises the first undelivered error once, then everything is clean
    e1, e2, f = engine.Var(), engine.Var(), engine.Var()
    engine._push_fail(writes=[e1], message="first", name="f1")
    engine._push_fail(writes=[e2], message="second", name="f2")
    engine.push(lambda: None, [e1], [f], name="after")
    with pytest.raises(MXNetError, match=r"^f1: first$"):
        engine.wait_for_all()
    engine.wait_for_all()
    e1.wait(), e2.wait(), f.wait()                    # cleared, as after MXNet's WaitForAll

    # a wait that could never finish is an error, not a hang
    s = engine.Var()
    engine.push(lambda: s.wait(), [], [s], name="selfwait")
    with pytest.raises(MXNetError, match=r"^selfwait: MXNetError: .*never finish"):
        s.wait()
    engine.push(engine.wait_for_all, [], [s], name="waitall_inside")
    with pytest.raises(MXNetError, match=r"^waitall_inside: MXNetError: .*never finish"):
        s.wait()
    # a long message is truncated, not overflowed
    engine._push_fail(writes=[s], message="y" * 5000, name="long")
    with pytest.raises(MXNetError) as info:
        s.wait()
    assert str(info.value).startswith("long: yyy") and 1000 < len(str(info.value)) < 1100
    assert engine.pending() == 0


def scenario_backpressure():
    """MXC_ENGINE_MAX_PENDING=16: pending never exceeds 16; pushes inside an op never block."""
    assert engine.max_pending() == 16
    v = engine.Var()
    rec = engine._Int64Buffer(3)
    buf = engine._Int64Buffer(1)
    t0 = time.perf_counter()    # before the push: the slow op ends >= 0.2 s after t0, for sure
    engine._push_record(rec, 0, writes=[v], usec=200_000)          # holds the worker
    ref = [0]
    high = 0
    for k in range(1000):
        engine._push_affine(buf, [v], [0], [], k)
        affine_ref(ref, [0], [], k)
        high = max(high, engine.pending())
    elapsed = time.perf_counter() - t0
    assert high == 16
    assert elapsed > 0.15          # the pushes did wait for the slow op
    engine.wait_for_all()
    assert buf.tolist_u64() == ref

    # an op that pushes 200 ops from inside the engine: no deadlock, all run
    inner_buf = engine._Int64Buffer(1)
    w, u = engine.Var(), engine.Var()
    inner_ref = [0]

    def pusher():
        for k in range(200):
            engine._push_affine(inner_buf, [w], [0], [], k)

    for k in range(200):
        affine_ref(inner_ref, [0], [], k)
    engine.push(pusher, [], [u])
    u.wait()
    w.wait()
    assert inner_buf.tolist_u64() == inner_ref
    assert engine.pending() == 0


def scenario_overlap():
    """Two workers: reads of one var overlap; a write overlaps nothing on its var."""
    v = engine.Var()
    rec = engine._Int64Buffer(3 * 4)
    # read 0 holds a worker until the gate opens; read 1 must run and end on the other worker
    # meanwhile. Polling for those events (not sleeping for a guessed time) makes the overlap
    # certain however slowly a loaded machine schedules the workers.
    engine._test_gate(0)
    engine._push_record(rec, 0, reads=[v], gate=True)
    deadline = time.time() + 30
    while rec[0] == 0 and time.time() < deadline:      # read 0 began
        time.sleep(0.001)
    engine._push_record(rec, 1, reads=[v], usec=1_000)
    while rec[4] == 0 and time.time() < deadline:      # read 1 ended, read 0 still gated
        time.sleep(0.001)
    engine._test_gate(1)                 # (before asserting: a failing child must not hang)
    assert rec[0] != 0 and rec[4] != 0, "two reads did not overlap"
    engine._push_record(rec, 2, writes=[v], usec=20_000)
    engine._push_record(rec, 3, reads=[v], usec=1_000)
    engine.wait_for_all()
    b = [rec[3 * s] for s in range(4)]
    e = [rec[3 * s + 1] for s in range(4)]
    assert b[0] < e[1] and b[1] < e[0], "two reads did not overlap"
    assert b[2] >= max(e[0], e[1]), "a write started before earlier reads ended"
    assert b[3] >= e[2], "a read started before the earlier write ended"

    # randomized: for every pair on a shared var with a write, intervals are disjoint and in
    # push order; reads between writes may overlap
    rng = random.Random(5)
    vs = [engine.Var() for _ in range(3)]
    n = 120
    rec = engine._Int64Buffer(3 * n)
    sets = []
    for s in range(n):
        reads = rng.sample(range(3), rng.randint(0, 2))
        writes = [w for w in rng.sample(range(3), rng.randint(0, 1)) if w not in reads]
        sets.append((set(reads), set(writes)))
        engine._push_record(rec, s, [vs[i] for i in reads], [vs[i] for i in writes], usec=300)
    engine.wait_for_all()
    for s in range(n):
        for t in range(s + 1, n):
            rs, ws = sets[s]
            rt, wt = sets[t]
            if (ws & (rt | wt)) or (wt & rs):
                assert rec[3 * s + 1] <= rec[3 * t], (s, t, sets[s], sets[t])


def scenario_priority():
    """One worker blocked: the queued ready ops then run highest priority first."""
    engine._test_gate(0)
    engine._test_order_reset()
    prios = [0, 5, -1, 5, 3, 0, 10, -7, 3, 1]
    rec = engine._Int64Buffer(3 * (len(prios) + 1))
    engine._push_record(rec, 0, writes=[engine.Var()], gate=True)
    deadline = time.time() + 10
    while rec[2] == 0:                   # the gate op started on the worker
        assert time.time() < deadline
        time.sleep(0.001)
    for i, p in enumerate(prios):
        engine._push_record(rec, i + 1, writes=[engine.Var()], priority=p)
    order_py = []
    for i, p in enumerate(prios):
        engine.push(lambda i=i: order_py.append(i), [], [engine.Var()], priority=p)
    engine._test_gate(1)
    while engine.pending():              # no waiter helping: only the worker runs them
        assert time.time() < deadline
        time.sleep(0.001)
    want = sorted(range(len(prios)), key=lambda i: (-prios[i], i))
    got = sorted(range(len(prios)), key=lambda i: rec[3 * (i + 1) + 2])
    assert got == want
    # Python ops were pushed later: equal priorities go after the native ones
    assert order_py == want


def scenario_fork():
    """A forked child gets a working engine."""
    buf = engine._Int64Buffer(2)
    vs = [engine.Var(), engine.Var()]
    for k in range(1000):
        engine._push_affine(buf, vs, [k % 2], [(k + 1) % 2], k)
    pid = os.fork()
    if pid == 0:
        ok = 1
        try:
            out = []
            engine.push(lambda: out.append(1), [], [vs[0]])
            engine._push_affine(buf, vs, [1], [0], 5)
            engine.wait_for_all()
            ok = 0 if out == [1] else 2
        finally:
            os._exit(ok)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    engine.wait_for_all()
    ref = [0, 0]
    for k in range(1000):
        affine_ref(ref, [k % 2], [(k + 1) % 2], k)
    assert buf.tolist_u64() == ref


# ---------------------------------------------------------------------------------------------
# tests


# One child per engine kind runs several scenarios: a child costs an `import mxc`.
KIND_RUNS = [
    pytest.param(KINDS[0].values[0],
                 ["scenario_kind('NaiveEngine', 0)", "scenario_dag()", "scenario_threads()",
                  "scenario_errors()"], id="naive"),
    pytest.param(dict(KINDS[1].values[0], MXC_ENGINE_MAX_PENDING="16"),
                 ["scenario_kind('ThreadedEnginePerDevice', 1)", "scenario_backpressure()",
                  "scenario_priority()", "scenario_dag()", "scenario_threads()"],
                 id="threaded-1-maxpending-16"),
    pytest.param(KINDS[2].values[0],
                 ["scenario_kind('ThreadedEnginePerDevice', 2)", "scenario_dag()",
                  "scenario_threads()", "scenario_errors()", "scenario_overlap()",
                  "scenario_fork()"], id="threaded-2"),
    pytest.param(KINDS[3].values[0],
                 ["scenario_kind('ThreadedEngine', 4)", "scenario_dag()", "scenario_threads()",
                  "scenario_errors()"], id="threaded-4"),
]


@pytest.mark.parametrize("env,calls", KIND_RUNS)
def test_engine_kind(env, calls):
    """Random DAG vs replay, 4 pushing threads, errors, and per-kind extras (back-pressure and
    priority on 1 worker; read overlap / write exclusion and fork on 2)."""
    out = run_scenario("; t.".join(calls) + "; print('ok')", env, timeout=120)
    assert out.strip().endswith("ok")


@pytest.mark.parametrize("var,value", [("MXNET_ENGINE_TYPE", "TurboEngine"),
                                       ("MXNET_CPU_WORKER_NTHREADS", "0"),
                                       ("MXC_ENGINE_MAX_PENDING", "lots")])
def test_bad_env_is_a_clear_error(var, value):
    res = run_child("import mxc._core.engine", {var: value})
    assert res.returncode != 0
    assert "ValueError" in res.stderr and var in res.stderr


def test_errors_in_process():
    scenario_errors()


@pytest.mark.parametrize("env", [KINDS[1], KINDS[3]])
def test_exit_with_queued_work(env, tmp_path):
    marker = tmp_path / "done"
    code = (
        "import sys, time\n"
        "from mxc._core import engine\n"
        "buf = engine._Int64Buffer(8)\n"
        "vs = [engine.Var() for _ in range(8)]\n"
        "def slow():\n"
        "    time.sleep(0.3)\n"
        "    open(sys.argv[1], 'w').write('done')\n"
        "engine.push(slow, [], [vs[0]])\n"
        "for k in range(10000):\n"
        "    engine._push_affine(buf, vs, [k % 8], [(k + 1) % 8], k)\n"
        "engine._push_fail(writes=[engine.Var()], message='never waited')\n"
        "engine.push(slow, [], [vs[1]])\n"
    )
    res = run_child(code, env, timeout=30, args=(str(marker),))
    assert res.returncode == 0, res.stderr
    assert marker.read_text() == "done"          # queued work ran before exit
    assert res.stderr == ""


def test_exit_while_a_daemon_thread_keeps_pushing():
    # exit waits for what was pushed before it began, not for a thread that never stops
    code = (
        "import threading, time\n"
        "from mxc._core import engine\n"
        "vs = [engine.Var() for _ in range(4)]\n"
        "buf = engine._Int64Buffer(4)\n"
        "def spam():\n"
        "    k = 0\n"
        "    while True:\n"
        "        engine.push(lambda: time.sleep(0.0001), [vs[0]], [vs[k % 3 + 1]])\n"
        "        engine._push_affine(buf, vs, [k % 4], [], k)\n"
        "        k += 1\n"
        "threading.Thread(target=spam, daemon=True).start()\n"
        "time.sleep(0.2)\n"
    )
    res = run_child(code, KINDS[2].values[0], timeout=30)
    assert res.returncode == 0, res.stderr


def clean_slate():
    """Finish work other test modules may have left in this process (and drop its errors)."""
    try:
        engine.wait_for_all()
    except MXNetError:
        pass


def test_push_argument_errors():
    clean_slate()
    v = engine.Var()
    with pytest.raises(TypeError, match="callable"):
        engine.push(42, [], [v])
    with pytest.raises(TypeError, match="mutable_vars"):
        engine.push(lambda: None, [], [v, "x"])
    with pytest.raises(TypeError, match="const_vars"):
        engine.push(lambda: None, [object()], [])
    assert engine.pending() == 0


def test_duplicates_and_var_in_both_lists():
    # a var in both lists counts as written: the op is exclusive and ordered after the read
    buf = engine._Int64Buffer(2)
    vs = [engine.Var(), engine.Var()]
    ref = [0, 0]
    for k in range(200):
        outs, ins = [k % 2], [0, 1, 0, k % 2]
        engine._push_affine(buf, vs, outs, ins, k)
        affine_ref(ref, outs, ins, k)
    out = []
    many = vs * 40                            # 80 entries: the sorted dedupe path
    engine.push(lambda: out.append(buf.tolist_u64()), many, many[::-1])
    engine.wait_for_all()
    assert out == [ref]


def test_var_outlives_its_python_object():
    # dropping the Python Var while ops are queued is safe: queued ops hold references
    buf = engine._Int64Buffer(2)
    buf[1] = 5
    ref = [0, 5]
    keep = engine.Var()
    for k in range(100):
        v = engine.Var()
        engine._push_affine(buf, [keep, v], [0], [1], k)   # reads v, writes buf[0] via keep
        affine_ref(ref, [0], [1], k)
        del v
    keep.wait()
    assert buf.tolist_u64() == ref


def test_latency_figures():
    # the native latency probe runs its chain and its single ops to the end and reports finite
    # figures; the speed itself is tools/bench/bench_profiler.py's (engine_chain, engine_single),
    # never a timed assertion here
    clean_slate()
    r = engine._bench_native(200, 50)
    print(f"engine: 200-op chain + wait {r['chain_us_per_op']:.3f} us/op; "
          f"one op + wait {r['single_us']:.3f} us")
    assert 0 < r["chain_us_per_op"] < float("inf") and 0 < r["single_us"] < float("inf")
    assert engine.pending() == 0


# pushes `slow` on v (after the setup lines), sends SIGINT 0.2 s into v.wait() and prints how
# long the wait took, or that it was not interrupted
_INTERRUPTED_WAIT = (
    "import os, signal, threading, time\n"
    "import mxc\n"
    "from mxc._core import engine\n"
    "v = engine.Var()\n"
    "{setup}"
    "engine.push(lambda: time.sleep({slow}), mutable_vars=[v], name='slow')\n"
    "threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
    "t = time.time()\n"
    "try:\n"
    "    v.wait()\n"
    "    print('not interrupted')\n"
    "except KeyboardInterrupt:\n"
    "    print('interrupted after %.2f s' % (time.time() - t))\n")


def test_ctrl_c_interrupts_a_wait():
    """Waits take Ctrl-C (MXNet's could only be killed): KeyboardInterrupt reaches the waiting
    thread while the operation keeps running, and a later wait finds it done."""
    code = _INTERRUPTED_WAIT.format(setup="", slow=4.0) + (
        "threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    engine.wait_for_all()\n"
        "except KeyboardInterrupt:\n"
        "    print('wait_for_all interrupted')\n"
        "engine.wait_for_all()\n"
        "print('done', engine.pending())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0].startswith("interrupted after"), r.stdout
    assert float(lines[0].split()[2]) < 2.0, r.stdout      # long before the 4 s op ends
    assert lines[1] == "wait_for_all interrupted" and lines[2] == "done 0", r.stdout


def test_ctrl_c_never_lands_in_a_python_operation_the_waiter_could_run():
    """The only worker is busy, so the awaited Python operation is still queued when the wait
    begins: the waiting thread must leave it to the worker (it used to run it itself, and
    Ctrl-C then raised inside the user's operation, which failed with KeyboardInterrupt)."""
    code = _INTERRUPTED_WAIT.format(
        setup="engine.push(lambda: time.sleep(0.6), mutable_vars=[engine.Var()], name='busy')\n",
        slow=1.5) + "v.wait()\nprint('done', engine.pending())\n"
    r = run_child(code, {"MXNET_CPU_WORKER_NTHREADS": "1"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0].startswith("interrupted after"), r.stdout
    assert float(lines[0].split()[2]) < 1.0, r.stdout
    assert lines[1] == "done 0", r.stdout


# ---- a waiter outside any op is polite to a busy worker -----------------------------------------
_POLITE = """
import time
from mxc._core import engine
engine._test_gate({gate})
rec = engine._Int64Buffer(3 * ({n} + 1))
va, vb = engine.Var(), engine.Var()
for i in range({n}):
    engine._push_record(rec, i, writes=[va], usec={usec}, gate={gate} == 0)
while rec[2] == 0:                        # the worker took the first op
    time.sleep(0.0005)
engine._push_record(rec, {n}, writes=[vb])
t0 = time.monotonic_ns()
engine.wait_for_var(vb)
waited = time.monotonic_ns() - t0
started = rec[3 * {n}] - t0
engine._test_gate(1)
engine.wait_for_all()
print(waited, started, rec[3 * {n} + 2], max(rec[3 * i + 2] for i in range({n})))
"""


def test_a_waiter_leaves_ready_ops_to_a_worker_that_keeps_completing_ops():
    """The only worker runs a chain of 0.3 ms ops; the main thread waits for an independent op
    pushed after the chain. It used to run that op itself at once, beside the worker (two
    kernels, each spread over every core). Now it leaves it to the worker, which runs it after
    the chain (pushed earlier, so first in the ready queue); a loaded machine that stalls the
    worker for 20 ms lets the waiter take it then, never before."""
    r = run_child(_POLITE.format(n=60, usec=300, gate=1), {"MXNET_CPU_WORKER_NTHREADS": "1"})
    assert r.returncode == 0, r.stderr
    waited, started, order, chain_last = map(int, r.stdout.split())
    assert started >= 2_000_000, r.stdout
    assert order > 1 and waited >= started, r.stdout


def test_a_waiter_runs_a_ready_op_when_the_busy_worker_completes_nothing():
    """The only worker is stuck in an op that waits for a gate: after 20 ms without a completed
    op the waiter runs the awaited op itself (the stuck op might be waiting for it)."""
    r = run_child(_POLITE.format(n=1, usec=0, gate=0), {"MXNET_CPU_WORKER_NTHREADS": "1"},
                  timeout=30)
    assert r.returncode == 0, r.stderr
    waited, started, order, chain_last = map(int, r.stdout.split())
    assert order == 2 and chain_last == 1, r.stdout
    assert 20_000_000 <= started < 2_000_000_000, r.stdout


_WAITER_RUNS_OPS = r"""
import os, sys, time
import numpy as np
import mxc as mx
from mxc._core import blas, engine, threads
if threads.omp_threads() < 2:
    print("one-core"); sys.exit()
if "libgomp" not in open("/proc/self/maps").read():
    print("no-openmp"); sys.exit()      # kernels built without OpenMP (MXC_NO_OPENMP=1)
a_np = np.random.RandomState(0).rand(512, 512).astype(np.float32)
a = mx.nd.array(a_np)
mx.nd.relu(mx.nd.dot(a, a)).wait_to_read()     # the worker's team exists now
if sys.argv[1] == "gate-off":     # GEMMs may fork a team on any thread, as before
    blas._GATE.team_thread = None
before = len(os.listdir("/proc/self/task"))
v = engine.Var()
engine.push(lambda: time.sleep(0.4), mutable_vars=(v,))   # the only worker is busy
c = mx.nd.dot(a, a)          # ready with no worker free: the waiting thread runs it
r = mx.nd.relu(a - 0.5)
mx.nd.waitall()
after = len(os.listdir("/proc/self/task"))
ok = (np.allclose(c.asnumpy(), a_np @ a_np, rtol=1e-4)
      and np.array_equal(r.asnumpy(), np.maximum(a_np - 0.5, 0)))
print(before, after, ok)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
@pytest.mark.parametrize("gate", ["gate-on", "gate-off"])
def test_a_waiter_running_an_op_forks_no_openmp_team(gate):
    # libgomp keeps a thread pool for every thread that ever forked a team and, once its pools
    # hold more threads than there are cores, stops spinning at barriers for good: so only the
    # engine's workers fork teams; ops the waiting thread runs compute on that thread alone
    env = dict(os.environ, PYTHONPATH=ROOT, MXNET_CPU_WORKER_NTHREADS="1", MXC_FOLLOW_LOAD="0")
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", _WAITER_RUNS_OPS, gate], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    if out.stdout.strip() in ("one-core", "no-openmp"):
        pytest.skip(f"{out.stdout.strip()}: kernels fork no teams")
    before, after, ok = out.stdout.split()
    assert ok == "True", out.stdout
    if gate == "gate-on":
        assert int(after) == int(before), out.stdout
    else:
        # the check above can fail: a GEMM run by the waiter with the gate's rule off forks a
        # team, whose new thread stays
        assert int(after) == int(before) + 1, out.stdout


_WAITER_LEAVES_TEAM_OPS = r"""
import json, sys, threading
import numpy as np
import mxc as mx
a = mx.nd.array(np.random.RandomState(0).rand(384, 384).astype(np.float32))
b = mx.nd.array(np.random.RandomState(1).rand(192, 192).astype(np.float32))
x = mx.nd.array(np.ones(1024, np.float32))
mx.nd.dot(a, a).wait_to_read()
mx.profiler.set_config(profile_imperative=True, filename=sys.argv[1])
mx.profiler.set_state("run")
for _ in range(30):          # push, then wait at once: the worker may still be asleep
    mx.nd.dot(a, a).wait_to_read()
    mx.nd.dot(b, b).wait_to_read()
    mx.nd.relu(x).wait_to_read()
mx.profiler.set_state("stop")
mx.profiler.dump()
trace = json.load(open(sys.argv[1]))
main = threading.get_native_id()
on_main = {"dot": 0, "relu": 0}
for e in trace["traceEvents"] if isinstance(trace, dict) else trace:
    if e.get("ph") in ("X", "B") and e.get("name") in on_main and e.get("tid") == main:
        on_main[e["name"]] += 1
print(on_main["dot"], on_main["relu"])
"""


def test_a_waiter_leaves_ops_that_fork_teams_to_the_worker(tmp_path):
    # 384x384 and 192x192 dots (1.7 MB and 432 KiB of arrays; a GEMM is a team op from 256
    # KiB) are left by the waiting thread to the worker even when it finds them ready with the
    # worker asleep (on the waiter they would compute on one thread); a 1,024-float ReLU is
    # short, and its pusher runs it itself
    env = dict(os.environ, PYTHONPATH=ROOT, MXNET_CPU_WORKER_NTHREADS="1")
    out = subprocess.run([sys.executable, "-c", _WAITER_LEAVES_TEAM_OPS,
                          str(tmp_path / "trace.json")], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    dots, relus = map(int, out.stdout.split())
    assert dots == 0 and relus == 30, out.stdout     # dots: of 60


_TRAIN_BITS = r"""
import hashlib, sys
import numpy as np
import mxc as mx
from mxc.gluon import nn
rs = np.random.RandomState(0)
x = mx.nd.array(rs.rand(128, 784).astype(np.float32))
y = mx.nd.array(rs.randint(0, 10, 128).astype(np.float32))
net = nn.HybridSequential()
net.add(nn.Dense(512, activation="relu", in_units=784),
        nn.Dense(512, activation="relu", in_units=512), nn.Dense(10, in_units=512))
net.initialize()
for p in net.collect_params().values():     # the same start in every child, whatever the seed
    p.set_data(mx.nd.array(np.random.RandomState(1).standard_normal(p.shape) * 0.05))
net.hybridize(static_alloc=True, static_shape=True)
trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9})
loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
every = int(sys.argv[1])
for i in range(24):
    with mx.autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(128)
    if every and i % every == 0:
        mx.nd.waitall()       # the Python thread waits here: the worker's timing changes
h = hashlib.sha1()
for k in sorted(net.collect_params()):
    h.update(net.collect_params()[k].data().asnumpy().tobytes())
print(h.hexdigest())
"""


def test_training_gives_the_same_bits_however_the_python_thread_waits():
    # the thread counts the kernels get may follow the load, never the moment the Python
    # thread happened to push or wait: a kernel whose result depends on its split (a GEMM's
    # blocks, a reduction's partial sums) would then differ from run to run. A rule that gave
    # a team one thread fewer while the pusher was busy changed 1 MLP run in 4 this way
    env = {"MXNET_CPU_WORKER_NTHREADS": "1", "MXC_FOLLOW_LOAD": "0"}
    got = []
    for every in (0, 1, 2, 3, 1, 2):
        r = run_child(_TRAIN_BITS, env, timeout=120, args=(str(every),))
        assert r.returncode == 0, r.stderr[-3000:]
        got.append(r.stdout.strip())
    assert len(set(got)) == 1, got
