"""mxc._core.blas: the BLAS library the CPU kernels call, and how its thread pool is set up."""
import os
import subprocess
import sys

from mxc._core import blas

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _timeout_after_import(env_value):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if env_value is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = env_value
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", "import os, mxc._core.blas; "
                          "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_idle_pool_threads_sleep_soon_unless_the_user_says_otherwise():
    # set before OpenBLAS loads (it reads the variable once, at load)
    assert _timeout_after_import(None) == "16"
    assert _timeout_after_import("24") == "24"


def test_thread_count_round_trip():
    before = blas.get_num_threads()
    try:
        blas.set_num_threads(1)
        assert blas.get_num_threads() == 1
        blas.set_num_threads(0)             # clamped to one thread, never zero
        assert blas.get_num_threads() == 1
    finally:
        blas.set_num_threads(before)
    assert blas.get_num_threads() == before


def test_config_names_openblas():
    assert "OpenBLAS" in blas.config()


# Several GEMM callers at once: the main thread pushing dots and waiting on them (a waiter may
# run ready ops itself), two engine workers, and two more Python threads pushing dots. With
# OpenBLAS multi-threaded, callers that meet inside its one pool queue behind each other while
# its threads spin (issue 27); the gate in csrc/mxc/blas.h lets only a lone caller use the pool.
_CONCURRENT_GEMMS = r"""
import threading, time
import numpy as np
import mxc as mx
from mxc._core import blas

rs = np.random.RandomState(0)
mats = [rs.rand(200 + 40 * i, 300).astype(np.float32) for i in range(3)]
want = [m.astype(np.float64) @ m.astype(np.float64).T for m in mats]
errors = []

def caller(i, rounds):
    try:
        x = mx.nd.array(mats[i])
        for _ in range(rounds):
            outs = [mx.nd.dot(x, x, transpose_b=True) for _ in range(4)]
            for o in outs:
                np.testing.assert_allclose(o.asnumpy(), want[i], rtol=1e-4)
    except Exception as exc:          # reported by the main thread
        errors.append(repr(exc))

t0 = time.monotonic()
threads = [threading.Thread(target=caller, args=(i, 25)) for i in (1, 2)]
for t in threads:
    t.start()
caller(0, 25)
for t in threads:
    t.join()
mx.nd.waitall()
assert not errors, errors
assert blas._GATE.inside == 0, blas._GATE.inside
print("took %.2f threads %d" % (time.monotonic() - t0, blas.get_num_threads()))
"""


def test_concurrent_gemm_callers_finish_and_agree_with_numpy():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    # a multi-threaded OpenBLAS (more threads than cores, as on a loaded machine) and two
    # engine workers beside the main thread
    env.update(OMP_NUM_THREADS="4", MXNET_CPU_WORKER_NTHREADS="2")
    out = subprocess.run([sys.executable, "-c", _CONCURRENT_GEMMS], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "threads 4" in out.stdout, out.stdout


def test_a_caller_beside_another_runs_single_threaded_and_a_lone_one_gets_the_pool():
    import mxc as mx
    openblas_threads = blas._LIB.scipy_openblas_get_num_threads
    before = blas.get_num_threads()
    a = mx.nd.ones((64, 64), dtype="float64")
    a32 = mx.nd.ones((64, 64))
    # whichever thread runs the dots (a worker, or this one while it waits): this test is of
    # the gate's count of callers, not of which threads may fork teams (test_engine.py)
    team_thread = blas._GATE.team_thread
    blas._GATE.team_thread = None
    try:
        blas.set_num_threads(2)
        blas._GATE.inside += 1          # as if another thread were inside a BLAS call
        try:
            assert mx.nd.dot(a, a).asnumpy()[0, 0] == 64
            assert openblas_threads() == 1
        finally:
            blas._GATE.inside -= 1
        assert mx.nd.dot(a, a).asnumpy()[0, 0] == 64
        assert openblas_threads() == 2
        # a lone float32 GEMM runs its own threads, each with a single-threaded OpenBLAS call
        assert mx.nd.dot(a32, a32).asnumpy()[0, 0] == 64
        assert openblas_threads() == 1
        assert blas._GATE.inside == 0
    finally:
        blas.set_num_threads(before)
        blas._GATE.team_thread = team_thread


# A lone float32 GEMM in parts on OMP_NUM_THREADS threads (csrc/mxc/blas.h, mxc_sgemm_parts):
# blocks of rows of C, of columns when C has few rows, of the longer side of a small C, or one
# call; every transpose, and the blocks' edges where a part is shorter than the others.
_SPLIT_GEMMS = r"""
import numpy as np
import mxc as mx
rs = np.random.RandomState(1)
shapes = [(200, 300, 150),   # rows: 64 and more per thread
          (24, 700, 400),    # columns: few rows, 64 and more columns per thread
          (192, 600, 400),   # columns: both sides allow it, B is the larger operand
          (400, 100, 600),   # rows: both sides allow it, A and C's halves outweigh B
          (100, 90, 60),     # the longer side of a small C, blocks of at least 16
          (20, 20, 20),      # too small to share: one call
          (131, 77, 45)]     # rows in blocks of 48, 48 and 35
for m, k, n in shapes:
    for ta in (False, True):
        for tb in (False, True):
            a = rs.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
            b = rs.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
            want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
            x, y = mx.nd.array(a), mx.nd.array(b)
            got = mx.nd.dot(x, y, transpose_a=ta, transpose_b=tb).asnumpy()
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
            again = mx.nd.dot(x, y, transpose_a=ta, transpose_b=tb).asnumpy()
            assert (got == again).all(), (m, k, n, ta, tb)      # a given split: the same bits
print("ok")
"""


def test_a_lone_float32_gemm_in_parts_on_its_threads_agrees_with_numpy():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["OMP_NUM_THREADS"] = "3"    # a fixed count (no load following): three parts
    out = subprocess.run([sys.executable, "-c", _SPLIT_GEMMS], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-3000:]


def test_a_batch_through_a_weight_splits_the_weight_and_its_gradient_by_rows():
    """Where rows and columns both give 64 per thread, the split moves less data between the
    cores: a row split has both threads read B (k x n); a column split has them read A (m x k)
    and leaves half of each thread's contiguous half of C written by the other core."""
    from mxc.ops.cpu.dot import sgemm_split
    # MLP 784-512-512-10 at batch 128, (m, n, k) of C = op(A) op(B)
    assert sgemm_split(128, 512, 784, 2) == ("cols", 256, 2)   # forward: x . W1^T
    assert sgemm_split(128, 512, 512, 2) == ("cols", 256, 2)   # forward, and dH = dY . W2
    assert sgemm_split(512, 784, 128, 2) == ("rows", 256, 2)   # dW1 = dY^T . x: the update's halves
    assert sgemm_split(512, 512, 128, 2) == ("rows", 256, 2)   # dW2
    assert sgemm_split(128, 10, 512, 2) == ("rows", 64, 2)     # few columns: rows, as before
    assert sgemm_split(24, 400, 700, 2) == ("cols", 208, 2)    # few rows: columns, as before
    assert sgemm_split(20, 20, 20, 2) is None                  # too small to share
    assert sgemm_split(128, 512, 784, 1) is None
    for m, n, k in ((256, 256, 4096), (4096, 256, 256), (300, 900, 64), (256, 1024, 512)):
        by_cols = m * k + m * n / 2 < k * n
        assert sgemm_split(m, n, k, 2)[0] == ("cols" if by_cols else "rows"), (m, n, k)
    # a convolution's products (weight x columns) keep rows, which partitions their weight
    assert sgemm_split(128, 784, 1152, 2, products=False) == ("rows", 64, 2)
    assert sgemm_split(128, 784, 1152, 2) == ("cols", 400, 2)
    assert sgemm_split(64, 3136, 256, 2, products=False)[0] == "cols"    # few rows: as before


def test_a_fork_taken_with_a_caller_inside_blas_leaves_the_child_a_free_gate():
    code = ("import os, mxc as mx\n"
            "from mxc._core import blas\n"
            "blas._GATE.inside = blas._GATE.lock = 1   # a worker inside BLAS at the fork\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    a = mx.nd.ones((64, 64))\n"
            "    ok = mx.nd.dot(a, a).asnumpy()[0, 0] == 64 and blas.get_num_threads() == 1\n"
            "    os._exit(0 if ok and blas._GATE.inside == 0 else 1)\n"
            "_, st = os.waitpid(pid, 0)\n"
            "print('child', os.waitstatus_to_exitcode(st))\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "child 0", (out.stdout, out.stderr[-2000:])
