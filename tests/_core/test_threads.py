"""The watcher that narrows kernel and BLAS threads while other processes compete for the
cores (mxc/_core/threads.py)."""
import os
import subprocess
import sys
import time

import pytest

from mxc._core import threads

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs Linux /proc")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_busy_processes_count_as_runnable_threads_of_others():
    before = min(threads.others_running() for _ in range(5))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        time.sleep(0.3)
        during = max(threads.others_running() for _ in range(5))
    finally:
        for p in busy:
            p.kill()
        for p in busy:
            p.wait()
    # all three are runnable beside whatever else the machine runs (one of slack for the rest
    # coming and going); this process's own thread is not counted although it runs to sample
    assert during >= before + 2, (before, during)


def test_one_reading_that_miscounts_own_threads_is_not_load(monkeypatch):
    # procs_running read while an own thread ran, the scan after it slept: 3 - 1 = 2 others in
    # that reading; the next two readings agree on 1 (the other process really running)
    totals, owns = iter([3, 2, 2]), iter([1, 1, 1])
    monkeypatch.setattr(threads, "_running_total", lambda: next(totals))
    monkeypatch.setattr(threads, "_running_own", lambda: next(owns))
    assert threads.others_running() == 1
    totals, owns = iter([1, 1, 2]), iter([2, 1, 1])    # a negative reading is no one
    assert threads.others_running() == 0


def test_own_runnable_threads_are_not_others():
    assert threads._running_own() >= 1           # the sampling thread itself
    assert threads.others_running() <= threads._running_total() - 1


def test_kernels_and_blas_are_capped_at_the_free_cores():
    # a fresh interpreter with the watcher on, its cores taken by busy processes, then freed
    code = (
        "import os, time, subprocess, sys\n"
        "os.environ['MXC_FOLLOW_LOAD'] = '1'\n"
        "os.environ.pop('OMP_NUM_THREADS', None)\n"
        "from mxc._core import threads, blas\n"
        "import mxc as mx\n"
        "from mxc._core import engine\n"
        "seen = []\n"
        "threads.follow_load(seen.append)\n"
        "top = threads.omp_threads()\n"
        "busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
        "        for _ in range(3 * len(threads._cpus()))]\n"
        "try:\n"
        "    time.sleep(1.0)\n"
        "    idle_cap = seen[-1] if seen else None\n"
        "    t0 = time.time()\n"
        "    while not (seen and seen[-1] == 1) and time.time() - t0 < 10:\n"
        "        v = engine.Var()\n"
        "        engine.push(lambda: time.sleep(0.1), mutable_vars=(v,))\n"
        "        engine.wait_for_var(v)\n"
        "    capped = blas._GATE.max\n"
        "    x = mx.nd.ones((64, 64))\n"
        "    ok = float(mx.nd.dot(x, x).asnumpy()[0, 0]) == 64.0\n"
        "finally:\n"
        "    for p in busy: p.kill()\n"
        "    for p in busy: p.wait()\n"
        "print('top', top, 'seen', seen[-1] if seen else None, 'capped', capped, 'ok', ok,\n"
        "      'idle', idle_cap)\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    words = out.stdout.split()
    top = int(words[1])
    if top == 1:
        pytest.skip("one core: nothing to narrow")
    assert words[3] == "1" and words[5] == "1" and words[7] == "True", out.stdout
    # for the first second the process had nothing in the engine: the busy ones did not
    # compete with it, so no cap yet (two 0.5 s windows passed)
    assert words[9] == "None", out.stdout
