"""mxc._core.pool: the load pool's GEMM blocks (csrc/mxc/pool.h). Whoever computes a block (the
caller, or the helper thread into its scratch), the result is the blocked result bit for bit;
a forked child, interpreter exit and two callers at once stay correct."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mxc as mx
from mxc._core import blas, pool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _conv_step(rng, n, c, k, hw, kernel, stride, pad):
    """forward and both gradients of one convolution (im2col + GEMM path: beta 0 and beta 1)"""
    x = mx.nd.array(rng.standard_normal((n, c, hw, hw)).astype(np.float32))
    w = mx.nd.array(rng.standard_normal((k, c, kernel, kernel)).astype(np.float32))
    b = mx.nd.array(rng.standard_normal(k).astype(np.float32))
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(x, w, b, kernel=(kernel, kernel), stride=(stride, stride),
                              pad=(pad, pad), num_filter=k)
    y.backward(mx.nd.array(rng.standard_normal(y.shape).astype(np.float32)))
    return [y.asnumpy(), x.grad.asnumpy(), w.grad.asnumpy(), b.grad.asnumpy()]


def _products(seed):
    rng = np.random.default_rng(seed)
    out = []
    # ResNet-18-at-32px shapes: blocks along C's columns and along its rows
    out += _conv_step(rng, 16, 64, 128, 4, 3, 1, 1)
    out += _conv_step(rng, 16, 128, 256, 2, 3, 1, 1)
    out += _conv_step(rng, 8, 32, 64, 9, 3, 2, 1)
    a = mx.nd.array(rng.standard_normal((300, 700)).astype(np.float32))
    bt = mx.nd.array(rng.standard_normal((500, 700)).astype(np.float32))
    out.append(mx.nd.dot(a, bt, transpose_b=True).asnumpy())            # byrow? bycol
    out.append(mx.nd.dot(bt, a, transpose_b=True).asnumpy())
    return out


@pytest.fixture
def one_blas_thread():
    """the pool runs only where OpenBLAS runs on one thread (as under the watcher's cap)"""
    before = blas.get_num_threads()
    blas.set_num_threads(1)
    yield
    pool.set_mode(0)
    blas.set_num_threads(before)


def test_pool_blocks_equal_the_callers_blocks_bit_for_bit(one_blas_thread):
    pool.set_mode(2)                       # blocked, every block on the caller
    jobs = pool.stats()["jobs"]
    ref = _products(0)
    assert pool.stats()["jobs"] > jobs     # the products did go through the blocks
    pool.set_mode(0)
    plain = _products(0)
    for r, p in zip(ref, plain):
        np.testing.assert_allclose(r, p, rtol=1e-4, atol=1e-3)
    pool.set_mode(1)
    assert pool.stats()["alive"]
    helped = pool.stats()["done"] + pool.stats()["dropped"]
    deadline = time.monotonic() + 20
    while True:                # until the helper took some blocks (it runs when it gets a core)
        got = _products(0)
        for r, g in zip(ref, got):
            np.testing.assert_array_equal(r, g)
        if pool.stats()["done"] + pool.stats()["dropped"] > helped or time.monotonic() > deadline:
            break
    assert pool.stats()["done"] + pool.stats()["dropped"] > helped


def test_mode_is_checked():
    with pytest.raises(ValueError, match="load pool mode"):
        pool.set_mode(3)


def _script(body, **env):
    e = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
    e.pop("OMP_NUM_THREADS", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=e,
                          capture_output=True, text=True, timeout=120)


def test_fork_child_runs_inline_and_exit_never_waits_for_the_helper():
    out = _script("""
        import os, numpy as np, mxc as mx
        from mxc._core import blas, pool
        blas.set_num_threads(1)
        rng = np.random.default_rng(1)
        a = mx.nd.array(rng.standard_normal((256, 512)).astype(np.float32))
        ref = mx.nd.dot(a, a, transpose_b=True).asnumpy()
        assert pool.stats()["mode"] == 1 and pool.stats()["alive"], pool.stats()
        pid = os.fork()
        if pid == 0:
            st = pool.stats()
            ok = st["mode"] == 0 and not st["alive"]
            pool.set_mode(1)                       # stays off: the child has no helper
            ok = ok and pool.stats()["mode"] == 0
            got = mx.nd.dot(a, a, transpose_b=True).asnumpy()
            os._exit(0 if ok and np.array_equal(got, ref) else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        for _ in range(20):    # the helper may still be inside a block when the interpreter exits
            mx.nd.dot(a, a, transpose_b=True)
        mx.nd.waitall()
        print("jobs", pool.stats()["jobs"])
    """, MXC_LOAD_POOL="force")
    assert out.returncode == 0, out.stderr
    assert "child 0" in out.stdout
    assert int(out.stdout.split("jobs")[1]) >= 2


def test_two_engine_workers_share_the_pool():
    # one caller owns the pool at a time; the other runs its product inline
    out = _script("""
        import numpy as np, mxc as mx
        from mxc._core import blas, pool
        blas.set_num_threads(1)
        rng = np.random.default_rng(2)
        xs = [mx.nd.array(rng.standard_normal((200, 300 + 16 * i)).astype(np.float32))
              for i in range(8)]
        want = [x.asnumpy() @ x.asnumpy().T for x in xs]
        for _ in range(10):
            ys = [mx.nd.dot(x, x, transpose_b=True) for x in xs]    # independent: both workers
            for y, w in zip(ys, want):
                np.testing.assert_allclose(y.asnumpy(), w, rtol=1e-4, atol=1e-3)
        print("jobs", pool.stats()["jobs"])
    """, MXC_LOAD_POOL="force", MXNET_CPU_WORKER_NTHREADS="2")
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split("jobs")[1]) > 0
