"""Tests of mx.profiler (mxc/profiler.py over the engine's and the storage pools' records).

Every trace file is checked against the Chrome trace-event format's rules (check_trace); the
aggregate table and its JSON are compared byte for byte with real MXNet 1.9.1's output
(tests/data/profiler/aggregate_golden.json, made by make_golden.py there). Scenarios that need
a fresh process (environment switches, a crash) run in subprocesses.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import mxc as mx
from mxc import profiler
from mxc._core import engine, storage
from mxc.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN = os.path.join(HERE, "data", "profiler")

PHASES = set("BEXiIbenCMsStf") | {"(", ")"}


def check_trace(path):
    """Load a trace file and assert the trace-event format's rules on every event.

    Returns the list of events. Rules: the file is JSON (object format with traceEvents, or
    an array); every event has a known phase; every non-metadata event has a numeric ts >= 0
    and integer pid and tid; X has dur >= 0; B/E pair up per thread, last opened first closed,
    with matching names; b/e pair up per (cat, id, name); C has numeric args; i/I has scope
    g, p or t; every pid has a process_name and every (pid, tid) a thread_name metadata event.
    """
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    assert isinstance(events, list)
    if isinstance(doc, dict) and "displayTimeUnit" in doc:
        assert doc["displayTimeUnit"] in ("ms", "ns")
    procs, threads, used_pids, used_threads = set(), set(), set(), set()
    stacks, asyncs = {}, {}
    for ev in events:
        ph = ev.get("ph")
        assert ph in PHASES, ev
        assert isinstance(ev.get("pid"), int), ev
        if ph == "M":
            assert ev["name"] in ("process_name", "thread_name", "process_sort_index",
                                  "thread_sort_index", "process_labels"), ev
            assert isinstance(ev.get("args"), dict) and "name" in ev["args"] or \
                ev["name"].endswith("sort_index"), ev
            if ev["name"] == "process_name":
                procs.add(ev["pid"])
            elif ev["name"] == "thread_name":
                assert isinstance(ev.get("tid"), int), ev
                threads.add((ev["pid"], ev["tid"]))
            continue
        assert isinstance(ev.get("tid"), int), ev
        assert isinstance(ev.get("ts"), (int, float)) and ev["ts"] >= 0, ev
        assert isinstance(ev.get("name"), str), ev
        used_pids.add(ev["pid"])
        used_threads.add((ev["pid"], ev["tid"]))
        key = (ev["pid"], ev["tid"])
        if ph == "X":
            assert isinstance(ev.get("dur"), (int, float)) and ev["dur"] >= 0, ev
        elif ph == "B":
            stacks.setdefault(key, []).append(ev)
        elif ph == "E":
            st = stacks.get(key)
            assert st, f"E without B: {ev}"
            b = st.pop()
            assert b["name"] == ev["name"] and b["ts"] <= ev["ts"], (b, ev)
        elif ph in "be":
            akey = (ev.get("cat"), ev.get("id"), ev["name"])
            assert ev.get("id") is not None and ev.get("cat"), ev
            if ph == "b":
                asyncs.setdefault(akey, []).append(ev)
            else:
                assert asyncs.get(akey), f"e without b: {ev}"
                assert asyncs[akey].pop()["ts"] <= ev["ts"]
        elif ph == "C":
            assert isinstance(ev.get("args"), dict) and ev["args"], ev
            assert all(isinstance(v, (int, float)) for v in ev["args"].values()), ev
        elif ph in "iI":
            assert ev.get("s", "t") in ("g", "p", "t"), ev
    assert not any(stacks.values()), "B without E"
    assert not any(asyncs.values()), "b without e"
    assert used_pids <= procs, used_pids - procs
    assert used_threads <= threads, used_threads - threads
    return events


@pytest.fixture
def prof(tmp_path):
    """A configured, stopped profiler writing into tmp_path; stopped and cleared afterwards."""
    fname = str(tmp_path / "trace.json")
    profiler.set_config(profile_symbolic=True, profile_imperative=True, profile_memory=True,
                        aggregate_stats=True, continuous_dump=False, filename=fname)
    profiler.dumps(reset=True)
    yield fname
    profiler.set_state("stop")
    profiler.set_config(profile_memory=False, aggregate_stats=False, continuous_dump=False,
                        filename=fname)
    mx.nd.waitall()
    profiler.dump(True)
    profiler.dumps(reset=True)


def ops_of(events):
    return [e for e in events if e.get("cat") in ("operator", "Custom Operator")]


def test_operations_recorded_by_engine(prof):
    a = mx.nd.ones((64, 64))            # before the run: not recorded
    a.wait_to_read()
    profiler.set_state("run")
    b = mx.nd.sqrt(a)
    c = b + 1
    c = c + 1
    z = mx.nd.zeros((3, 3))
    d = c.copyto(mx.cpu())
    d.asnumpy()
    z.asnumpy()
    profiler.set_state("stop")
    e = a * 3                             # after the stop: not recorded
    e.wait_to_read()
    profiler.dump()
    events = check_trace(prof)
    names = [ev["name"] for ev in ops_of(events)]
    assert sorted(names) == sorted(["sqrt", "_plus_scalar", "_plus_scalar", "_zeros",
                                    "CopyCPU2CPU"]), names
    # on the thread that ran them: an engine worker, or this thread when it ran them itself
    allowed = set(engine.profile_threads()) | {threading.get_native_id()}
    assert {ev["tid"] for ev in ops_of(events)} <= allowed
    meta = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name"}
    for ev in ops_of(events):
        assert meta[(ev["pid"], ev["tid"])] in ("MainThread",) or \
            meta[(ev["pid"], ev["tid"])].startswith("engine worker")
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert {procs[ev["pid"]] for ev in ops_of(events)} == {"cpu/0"}
    # the dependent chain sqrt -> +1 -> +1 ran in order, one after the other
    chain = sorted((ev for ev in ops_of(events) if ev["name"] in ("sqrt", "_plus_scalar")),
                   key=lambda ev: ev["ts"])
    assert [ev["name"] for ev in chain] == ["sqrt", "_plus_scalar", "_plus_scalar"]
    for x, y in zip(chain, chain[1:]):
        assert x["ts"] + x["dur"] <= y["ts"] + 0.5     # (0.25 us: a double at epoch scale)
    # timestamps are microseconds since the epoch
    assert abs(chain[0]["ts"] / 1e6 - time.time()) < 600


def test_durations_match_the_work(prof):
    """A Python operation that sleeps 30 ms is recorded with about that duration."""
    profiler.set_state("run")
    v = engine.Var()
    engine.push(lambda: time.sleep(0.03), mutable_vars=[v], name="sleepy")
    v.wait()
    profiler.set_state("stop")
    stats = json.loads(profiler.dumps(format="json"))
    st = stats["Time"]["operator"]["sleepy"]
    assert st["Count"] == 1 and 29 <= st["Total"] < 1000


def test_memory_counters_follow_the_pool(prof):
    profiler.set_state("run")
    before = storage.stats(1)["in_use"]
    a = mx.nd.zeros((1000, 250))        # 1,000,000 bytes: a 1 MiB size class at most
    a.wait_to_read()
    after = storage.stats(1)["in_use"]
    del a
    mx.nd.waitall()
    final = storage.stats(1)["in_use"]
    profiler.set_state("stop")
    profiler.dump()
    events = check_trace(prof)
    mem = [e for e in events if e.get("cat") == "Device Storage"]
    assert mem and all(e["ph"] == "C" and e["name"] == "Memory: cpu/0" for e in mem)
    values = [e["args"]["Memory: cpu/0"] for e in sorted(mem, key=lambda e: e["ts"])]
    assert after in values and values[-1] == final
    assert after - before >= 1_000_000
    assert max(values) >= after
    stats = json.loads(profiler.dumps(format="json"))["Memory"]["Device Storage"]
    assert stats["Memory: cpu/0"]["Count"] == len(values)
    assert stats["Memory: cpu/0"]["Max"] == pytest.approx(max(values) / 1000, rel=1e-3)


def test_repeated_dumps_stay_valid_and_grow(prof):
    profiler.set_state("run")
    sizes, counts = [], []
    x = mx.nd.ones((8,))
    for i in range(4):
        x = x + 1
        x.wait_to_read()
        profiler.Marker(profiler.Domain("D"), f"step{i}").mark()
        profiler.dump(False)
        events = check_trace(prof)
        counts.append(len(ops_of(events)))
        sizes.append(os.path.getsize(prof))
    assert counts == sorted(counts) and counts[-1] >= 5 and counts[0] >= 1
    assert sizes == sorted(sizes)
    marks = [e["name"] for e in check_trace(prof) if e["ph"] == "i"]
    assert marks == ["step0", "step1", "step2", "step3"]
    profiler.dump(True)                 # finished: the next run starts a new trace
    profiler.set_state("stop")
    profiler.set_state("run")
    (x * 2).wait_to_read()
    profiler.dump(True)
    events = check_trace(prof)
    assert [e["name"] for e in ops_of(events)] == ["_mul_scalar"]
    assert not [e for e in events if e["ph"] == "i"]


def test_user_objects(prof):
    profiler.set_state("run")
    dom = profiler.Domain("PyDom")
    task = dom.new_task("mytask")
    frame = profiler.Frame(dom, "myframe")
    ev = profiler.Event("myevent")
    task.start()
    frame.start()
    ev.start()
    time.sleep(0.002)
    ev.stop()
    frame.stop()
    task.stop()
    cnt = profiler.Counter(dom, "cnt", 5)
    cnt += 3
    cnt -= 1
    cnt.increment(10)
    cnt.decrement()
    profiler.Marker(dom, "mark").mark("global")
    with profiler.Event("ctx"):
        pass
    profiler.dump()
    events = check_trace(prof)
    spans = {e["name"]: e for e in events if e["ph"] == "X"}
    assert spans["mytask"]["cat"] == "PyDom" and spans["myframe"]["cat"] == "PyDom,frame"
    assert spans["myevent"]["cat"] == "event" and "ctx" in spans
    assert spans["mytask"]["dur"] >= spans["myframe"]["dur"] >= spans["myevent"]["dur"] >= 2000
    assert [e["args"]["cnt"] for e in events if e["ph"] == "C" and e["name"] == "cnt"] == \
        [5, 8, 7, 17, 16]
    [m] = [e for e in events if e["ph"] == "i"]
    assert m["name"] == "mark" and m["s"] == "g" and m["cat"] == "PyDom,instant_marker"
    assert str(dom) == "PyDom" and str(task) == "mytask" and str(cnt) == "cnt"
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert stats["PyDom"]["cnt"] == {"Count": 5, "Total": 0.016, "Min": 0.005, "Max": 0.017,
                                     "Avg": 0.006}
    assert stats["PyDom,instant_marker"] == {}
    with pytest.raises(MXNetError, match="stopped without being started"):
        profiler.Task(dom, "never").stop()


def test_pause_resume(prof):
    profiler.set_state("run")
    profiler.pause()
    assert not engine.profile_ops_on()
    (mx.nd.ones((4,)) * 5).wait_to_read()
    profiler.Event("hidden").start()
    profiler.resume()
    assert engine.profile_ops_on()
    (mx.nd.ones((4,)) - 1).wait_to_read()
    profiler.set_state("stop")
    assert not engine.profile_ops_on()
    profiler.dump()
    names = [e["name"] for e in ops_of(check_trace(prof))]
    assert "_minus_scalar" in names and "_mul_scalar" not in names


def test_custom_operator_names(prof):
    class AddOne(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] + 1)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0])

    @mx.operator.register("ProfAddOne")
    class AddOneProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["data"]

        def list_outputs(self):
            return ["output"]

        def infer_shape(self, in_shape):
            return [in_shape[0]], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return AddOne()

    profiler.set_state("run")
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="ProfAddOne")
    y.backward()
    mx.nd.waitall()
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 3.0])
    profiler.dump()
    custom = {e["name"] for e in check_trace(prof) if e.get("cat") == "Custom Operator"}
    assert {"ProfAddOne::pure_python", "ProfAddOne::_plus_scalar",
            "_backward_ProfAddOne::pure_python"} <= custom
    # outside the custom op the names are plain again
    engine_scope = engine.profile_scope(None)
    assert engine_scope is None


def _strip_category(text, category, fmt):
    """Remove MXNet's C API section (mxc has no C API) from a dumps() text."""
    if fmt == "table":
        start = text.index(category + "\n=================\n")
        end = text.index("\n\n", start) + 2
        return text[:start] + text[end:]
    start = text.index(f'        "{category}": {{\n')
    end = text.index("\n        }\n", start) + len("\n        }\n")
    if text[start - len("        ,\n"):start] == "        ,\n":
        start -= len("        ,\n")
    return text[:start] + text[end:]


def test_aggregate_text_matches_mxnet(tmp_path):
    """dumps() as table and JSON, every sort order, byte for byte against MXNet 1.9.1."""
    sys.path.insert(0, GOLDEN)
    try:
        import make_golden
    finally:
        sys.path.remove(GOLDEN)
    with open(os.path.join(GOLDEN, "aggregate_golden.json")) as f:
        golden = json.load(f)["outputs"]
    profiler.dumps(reset=True)
    ours = make_golden.scenario(mx, profiler, str(tmp_path / "g.json"))
    profiler.dumps(reset=True)
    assert set(ours) == set(golden)
    for key, text in golden.items():
        fmt = key.split("-")[0]
        want = _strip_category(text, "MXNET_C_API", fmt)
        assert ours[key] == want, key


def test_dumps_argument_errors():
    with pytest.raises(ValueError, match="format"):
        profiler.dumps(format="xml")
    with pytest.raises(ValueError, match="sort_by"):
        profiler.dumps(sort_by="median")
    with pytest.raises(ValueError, match="'run' or 'stop'"):
        profiler.set_state("go")
    with pytest.raises(MXNetError, match="unknown option 'profile_everything'"):
        profiler.set_config(profile_everything=True)
    with pytest.raises(MXNetError, match="not a boolean"):
        profiler.set_config(profile_memory="maybe")
    with pytest.raises(MXNetError, match="dump_period"):
        profiler.set_config(dump_period=0)
    # a bad option changes nothing, not even the good ones before it
    before = profiler._P.filename
    with pytest.raises(MXNetError, match="not a boolean"):
        profiler.set_config(filename="elsewhere.json", profile_memory="maybe")
    assert profiler._P.filename == before
    with pytest.raises(MXNetError, match="cannot write the trace file"):
        profiler.set_config(filename="/nonexistent-dir/x/trace.json")
        profiler.dump()
    profiler.set_config(filename=before)


def _run(code, env_extra, cwd, timeout=120):
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, timeout=timeout,
                          capture_output=True, text=True)


def test_autostart_writes_profile_at_exit(tmp_path):
    code = "import mxc as mx\n(mx.nd.ones((5,)) * 2).wait_to_read()\n"
    r = _run(code, {"MXNET_PROFILER_AUTOSTART": "1", "MXNET_PROFILER_MODE": "2"}, tmp_path)
    assert r.returncode == 0, r.stderr
    events = check_trace(tmp_path / "profile.json")
    assert {"_ones", "_mul_scalar"} <= {e["name"] for e in ops_of(events)}
    assert not [e for e in events if e.get("cat") == "Device Storage"]
    # mode 1 records symbolic operations only: these imperative ones are not in the trace
    r = _run(code, {"MXNET_PROFILER_AUTOSTART": "1", "MXNET_PROFILER_MODE": "1"}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert not ops_of(check_trace(tmp_path / "profile.json"))


def test_autostart_default_mode_is_mxnets(tmp_path):
    """Unset, MXNET_PROFILER_MODE is MXNet's 13 (checked with MXNet 1.9.1): symbolic operators,
    API calls and memory; an mx.nd call's operators are imperative and not recorded."""
    code = ("import mxc as mx\n(mx.nd.ones((5,)) * 2).wait_to_read()\n"
            "x = mx.sym.Variable('x')\nex = (x * 2).simple_bind(mx.cpu(), x=(3,))\n"
            "ex.forward()\nex.outputs[0].wait_to_read()\n")
    env = {"MXNET_PROFILER_AUTOSTART": "1"}
    r = _run(code, env, tmp_path)
    assert r.returncode == 0, r.stderr
    events = check_trace(tmp_path / "profile.json")
    assert [e["name"] for e in ops_of(events)] == ["_mul_scalar"]
    api = {e["name"] for e in events if e.get("cat") == "MXNET_C_API"}
    assert {"MXImperativeInvokeEx", "MXNDArrayWaitToRead", "MXExecutorForward"} <= api, api
    assert [e for e in events if e.get("cat") == "Device Storage"]


def test_profiler_mode_memory_only(tmp_path):
    code = "import mxc as mx\n(mx.nd.ones((5,)) * 2).wait_to_read()\n"
    r = _run(code, {"MXNET_PROFILER_AUTOSTART": "1", "MXNET_PROFILER_MODE": "8"}, tmp_path)
    assert r.returncode == 0, r.stderr
    events = check_trace(tmp_path / "profile.json")
    assert not ops_of(events)
    assert [e for e in events if e.get("cat") == "Device Storage"]


def test_no_autostart_no_file(tmp_path):
    r = _run("import mxc as mx\n(mx.nd.ones((5,)) * 2).wait_to_read()\n", {}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(tmp_path / "profile.json")
    r = _run("import mxc", {"MXNET_PROFILER_MODE": "x"}, tmp_path)
    assert r.returncode != 0 and "MXNET_PROFILER_MODE" in r.stderr


CRASHER = """
import os, sys, time
import mxc as mx
from mxc import profiler
profiler.set_config(profile_all=True, continuous_dump=True, dump_period=0.05,
                    aggregate_stats=True, filename=sys.argv[1])
profiler.set_state('run')
x = mx.nd.ones((32, 32))
dom = profiler.Domain('loop')
cnt = profiler.Counter(dom, 'iters', 0)
while True:
    with profiler.Event('step'):
        x = mx.nd.relu(x * 0.5 + 1)
        x.wait_to_read()
    cnt += 1
    if cnt.value == 20:
        print('ready', flush=True)
"""


def test_continuous_dump_survives_a_kill(tmp_path):
    fname = str(tmp_path / "crash.json")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.Popen([sys.executable, "-c", CRASHER, fname], env=env, cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(fname):
            time.sleep(0.02)
        time.sleep(0.3)                  # several rewrites, then a kill at an arbitrary moment
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    events = check_trace(fname)
    names = {e["name"] for e in ops_of(events)}
    assert {"_mul_scalar", "_plus_scalar", "relu"} <= names
    assert [e for e in events if e["name"] == "step" and e["ph"] == "X"]
    assert [e for e in events if e["ph"] == "C" and e["name"] == "iters"]


def test_forked_child_writes_nothing(prof):
    profiler.set_state("run")
    (mx.nd.ones((3,)) + 1).wait_to_read()
    pid = os.fork()
    if pid == 0:                        # the child: its exit must not write the parent's file
        try:
            assert not engine.profile_ops_on()
            (mx.nd.ones((3,)) + 2).wait_to_read()
            profiler.dump()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert not os.path.exists(prof)
    profiler.dump()
    names = [e["name"] for e in ops_of(check_trace(prof))]
    assert "_plus_scalar" in names


def test_kvstore_operations_named_per_key(prof):
    kv = mx.kv.create("local")
    a = mx.nd.ones((4,))
    kv.init(3, a)
    kv.init(7, a)
    profiler.set_state("run")
    kv.push(3, [a, a * 2])
    out = mx.nd.zeros((4,))
    kv.pull(3, out=out)
    kv.push(7, a)
    kv.pull(7, out=[out])
    mx.nd.waitall()
    np.testing.assert_array_equal(out.asnumpy(), [1, 1, 1, 1])
    profiler.dump()
    kvs = [e["name"] for e in check_trace(prof) if e.get("cat") == "KVStore"]
    assert sorted(kvs) == sorted(["KVStorePush[3]::add_n", "KVStorePull[3]::CopyCPU2CPU",
                                  "KVStorePush[7]::CopyCPU2CPU", "KVStorePull[7]::CopyCPU2CPU"])


def test_bound_graph_records_each_operator(prof):
    """A bound executor runs its kernels as one bulk operation; each is recorded inside it."""
    a, b = mx.sym.Variable("A"), mx.sym.Variable("B")
    ex = mx.sym.relu(mx.sym.dot(a, b) + 1).simple_bind(mx.cpu(), "write", A=(16, 16),
                                                       B=(16, 16))
    ex.arg_dict["A"][:] = 1
    ex.arg_dict["B"][:] = -1
    ex.forward()
    ex.outputs[0].wait_to_read()
    profiler.set_state("run")
    ex.forward()
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), np.zeros((16, 16)))
    profiler.dump()
    ops = ops_of(check_trace(prof))
    by = {e["name"]: e for e in ops}
    assert {"dot", "_plus_scalar", "relu"} <= set(by)
    # the second run is one bulk operation, named as MXNet names a segment
    # (a double holds microseconds since the epoch to about 0.25 us)
    outer = by["[dot,_plus_scalar,relu]"]
    for name in ("dot", "_plus_scalar", "relu"):
        inner = by[name]
        assert inner["tid"] == outer["tid"]
        assert outer["ts"] <= inner["ts"] + 0.5
        assert inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 0.5
    assert by["dot"]["ts"] <= by["_plus_scalar"]["ts"] <= by["relu"]["ts"]


def test_deprecated_forms(prof, tmp_path):
    fname = str(tmp_path / "old.json")
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_config(mode="all", filename=fname)
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_state("run")
    (mx.nd.ones((2,)) * 7).wait_to_read()
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.dump_profile()
    assert "_mul_scalar" in [e["name"] for e in ops_of(check_trace(fname))]


@pytest.mark.parametrize("events, why", [
    ([{"ph": "Q", "name": "a", "ts": 1, "pid": 0, "tid": 0}], "phase"),
    ([{"ph": "X", "name": "a", "ts": 1, "dur": -1, "pid": 0, "tid": 0}], "negative dur"),
    ([{"ph": "X", "name": "a", "ts": -5, "dur": 1, "pid": 0, "tid": 0}], "negative ts"),
    ([{"ph": "B", "name": "a", "ts": 1, "pid": 0, "tid": 0}], "B without E"),
    ([{"ph": "B", "name": "a", "ts": 1, "pid": 0, "tid": 0},
      {"ph": "E", "name": "b", "ts": 2, "pid": 0, "tid": 0}], "E closes another name"),
    ([{"ph": "b", "name": "a", "cat": "c", "id": 1, "ts": 1, "pid": 0, "tid": 0}], "b alone"),
    ([{"ph": "C", "name": "a", "ts": 1, "pid": 0, "tid": 0, "args": {"a": "x"}}], "C text"),
    ([{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 0, "tid": 3}], "unnamed thread"),
])
def test_check_trace_rejects_broken_traces(tmp_path, events, why):
    """The validator the tests rely on fails on each broken rule (and passes the fixed trace)."""
    meta = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "p"}},
            {"ph": "M", "name": "thread_name", "pid": 0, "tid": 0, "args": {"name": "t"}}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": meta + events}))
    with pytest.raises(AssertionError):
        check_trace(path)
    good = [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 0, "tid": 0},
            {"ph": "B", "name": "a", "ts": 1, "pid": 0, "tid": 0},
            {"ph": "E", "name": "a", "ts": 2, "pid": 0, "tid": 0}]
    path.write_text(json.dumps({"traceEvents": meta + good}))
    assert len(check_trace(path)) == 5


def test_exit_with_a_pushing_daemon_thread(tmp_path):
    """The exit dump waits for what was pushed before exit, not for a thread that never stops."""
    code = ("import threading, mxc as mx\n"
            "from mxc import profiler\n"
            "profiler.set_config(filename='p.json')\n"
            "profiler.set_state('run')\n"
            "started = threading.Event()\n"
            "def spin():\n"
            "    x = mx.nd.ones((4,))\n"
            "    while True:\n"
            "        x = x + 1\n"
            "        started.set()\n"
            "threading.Thread(target=spin, daemon=True).start()\n"
            "started.wait(30)\n"
            "(mx.nd.ones((3,)) * 4).wait_to_read()\n")
    r = _run(code, {}, tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    names = {e["name"] for e in ops_of(check_trace(tmp_path / "p.json"))}
    assert {"_mul_scalar", "_plus_scalar"} <= names


def test_backward_operations_named_after_their_operator(prof):
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    profiler.set_state("run")
    with mx.autograd.record():
        y = (x * 2).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0, 2.0])
    profiler.dump()
    ops = ops_of(check_trace(prof))
    backward = {e["name"] for e in ops if e["name"].startswith("_backward_")}
    assert {e["cat"] for e in ops if e["name"].startswith("_backward_")} == {"operator"}
    assert any(n.startswith("_backward_sum::") for n in backward), backward
    assert any(n.startswith("_backward_mul_scalar::") for n in backward), backward
    assert {"_mul_scalar", "sum"} <= {e["name"] for e in ops}


def _graph_and_imperative_work():
    """An imperative sqrt, a bound executor's forward (node by node, then planned and bulked)
    and a hybridized block's CachedOp: the names only a graph run records, and sqrt."""
    a = mx.nd.ones((8, 8))
    mx.nd.sqrt(a).wait_to_read()
    x, w = mx.sym.Variable("X"), mx.sym.Variable("W")
    ex = mx.sym.relu(mx.sym.dot(x, w)).simple_bind(mx.cpu(), "null", X=(8, 8), W=(8, 8))
    for _ in range(3):
        ex.forward()
        ex.outputs[0].wait_to_read()
    net = mx.gluon.nn.Dense(4, in_units=8)
    net.initialize()
    net.hybridize()
    for _ in range(2):
        net(a).wait_to_read()
    mx.nd.waitall()


def test_symbolic_and_imperative_recorded_apart(tmp_path):
    """profile_symbolic records the operations graph runs push (executor, CachedOp);
    profile_imperative the others, as MXNet splits them."""
    traces = {}
    for kind in ("symbolic", "imperative"):
        fname = str(tmp_path / f"{kind}.json")
        profiler.set_config(profile_symbolic=kind == "symbolic",
                            profile_imperative=kind == "imperative", profile_memory=False,
                            profile_api=False, continuous_dump=False, filename=fname)
        profiler.set_state("run")
        _graph_and_imperative_work()
        profiler.set_state("stop")
        profiler.dump()
        traces[kind] = {e["name"] for e in ops_of(check_trace(fname))}
    assert {"dot", "relu", "FullyConnected"} <= traces["symbolic"], traces
    assert "sqrt" not in traces["symbolic"] and "_ones" not in traces["symbolic"], traces
    assert {"sqrt", "_ones"} <= traces["imperative"], traces
    assert not {"dot", "relu", "FullyConnected"} & traces["imperative"], traces
    profiler.set_config(profile_memory=False, continuous_dump=False,
                        filename=str(tmp_path / "profile.json"))


def test_api_calls_recorded_under_mxnet_names(tmp_path):
    fname = str(tmp_path / "api.json")
    profiler.set_config(profile_api=True, profile_symbolic=False, profile_imperative=False,
                        profile_memory=False, aggregate_stats=True, continuous_dump=False,
                        filename=fname)
    profiler.dumps(reset=True)
    a = mx.nd.ones((3,))
    a.wait_to_read()
    profiler.set_state("run")
    b = mx.nd.relu(a)
    b = b * 2                                # an operator of NDArray: MXImperativeInvokeEx too
    b.asnumpy()                              # waits inside: one call, the outer one
    b.wait_to_read()
    mx.nd.waitall()
    mx.nd.save(str(tmp_path / "x.params"), {"b": b})
    mx.nd.load(str(tmp_path / "x.params"))
    profiler.set_state("stop")
    table = profiler.dumps(reset=True)
    profiler.dump()
    events = check_trace(fname)
    assert not ops_of(events)
    calls = [e for e in events if e.get("cat") == "MXNET_C_API" and e["ph"] == "X"]
    assert [e["name"] for e in sorted(calls, key=lambda e: e["ts"])] == [
        "MXImperativeInvokeEx", "MXImperativeInvokeEx", "MXNDArraySyncCopyToCPU",
        "MXNDArrayWaitToRead",
        "MXNDArrayWaitAll", "MXNDArraySave", "MXNDArrayLoad"]
    assert {e["tid"] for e in calls} == {threading.get_native_id()}
    counts = [e["args"]["MXNet C API Calls"] for e in sorted(events, key=lambda e: e.get("ts", 0))
              if e["ph"] == "C" and e["name"] == "MXNet C API Calls"]
    assert counts == list(range(counts[0], counts[0] + 7))   # the process's count goes on
    running = {e["args"]["MXNet C API Concurrency"] for e in events
               if e["ph"] == "C" and e["name"] == "MXNet C API Concurrency"}
    assert running == {0, 1}
    assert "MXNET_C_API" in table and "MXImperativeInvokeEx" in table
    profiler.set_config(profile_memory=False, continuous_dump=False,
                        filename=str(tmp_path / "profile.json"))
    profiler.dumps(reset=True)


def test_set_config_starts_from_mxnet_defaults(tmp_path):
    """Each set_config call starts from MXNet 1.9's ProfileConfigParam defaults
    (src/c_api/c_api_profile.cc: every profile_* on, continuous_dump on, aggregate_stats off,
    filename profile.json, dump_period 1) and changes what it names."""
    profiler.set_config(filename=str(tmp_path / "a.json"), aggregate_stats=True,
                        dump_period=0.5)
    p = profiler._P
    assert (p.symbolic, p.imperative, p.memory, p.api, p.continuous, p.aggregate) == \
        (True, True, True, True, True, True)
    assert p.filename == str(tmp_path / "a.json") and p.dump_period == 0.5
    profiler.set_config(profile_memory=False, continuous_dump=False)
    assert (p.memory, p.continuous, p.aggregate, p.filename, p.dump_period) == \
        (False, False, False, "profile.json", 1.0)
    assert (p.symbolic, p.imperative, p.api) == (True, True, True)
    # continuous_dump by default: the file is written while the profiler runs
    fname = str(tmp_path / "cont.json")
    profiler.set_config(filename=fname, dump_period=0.05)
    profiler.set_state("run")
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(fname):
            (mx.nd.ones((3,)) + 1).wait_to_read()
            time.sleep(0.02)
        check_trace(fname)
    finally:
        profiler.set_state("stop")
        profiler.dump()
    assert "_plus_scalar" in {e["name"] for e in ops_of(check_trace(fname))}
    profiler.set_config(profile_memory=False, continuous_dump=False,
                        filename=str(tmp_path / "profile.json"))
