"""Pooled storage allocator (mxc/_core/storage.pyx), driven through its Python test hooks.

Exact-counter tests use the cpu_pinned pool (dev_type 3): nothing else in a test process
allocates from it, so its counters move only because of the test.
"""
import ctypes
import os
import subprocess
import sys
import threading

import pytest

from mxc._core import storage
from mxc.base import MXNetError

CPU, GPU, PINNED = 1, 2, 3
MB = 1 << 20


def expected_capacity(n):
    """Independent size-class rule: 64, then the quarter steps (1.25, 1.5, 1.75, 2) * 2**k."""
    if n <= 64:
        return 64
    k = 6
    while (1 << (k + 1)) < n:
        k += 1
    # n in (2**k, 2**(k+1)]
    for q in (5, 6, 7, 8):
        if n <= q * (1 << k) // 4:
            return q * (1 << k) // 4
    raise AssertionError(n)


@pytest.fixture
def pool():
    """A clean cpu_pinned pool with the default limit; restores the limit afterwards."""
    old = storage.get_pool_limit()
    storage.set_pool_limit(1024 * MB)
    storage.release_all()
    storage.reset_peak()
    yield PINNED
    storage.release_all()
    storage.set_pool_limit(old)


def test_alignment_and_capacity_many_sizes(pool):
    sizes = sorted(set(list(range(0, 300)) + [2 ** k + d for k in range(6, 27) for d in (-1, 0, 1)]
                       + [1000, 4097, 123457, 3 * MB + 5]))
    addrs = []
    for n in sizes:
        a = storage._alloc(n, pool)
        ptr, nbytes, cap = storage._block_info(a)
        assert ptr % 64 == 0, n
        assert nbytes == n
        assert cap == expected_capacity(n), n
        assert cap >= n and (n <= 64 or cap - n < 0.25 * n), n
        addrs.append(a)
    # every live block is distinct, even the many 0-byte ones
    ptrs = [storage._block_info(a)[0] for a in addrs]
    assert len(set(ptrs)) == len(ptrs)
    for a in addrs:
        storage._free(a)


def test_zero_byte_blocks_are_unique_and_writable(pool):
    blocks = [storage._alloc(0, pool) for _ in range(10)]
    infos = [storage._block_info(b) for b in blocks]
    assert all(cap == 64 and n == 0 and ptr % 64 == 0 for ptr, n, cap in infos)
    assert len({ptr for ptr, _, _ in infos}) == 10
    for i, (ptr, _, cap) in enumerate(infos):
        ctypes.memset(ptr, i + 1, cap)
    for i, (ptr, _, cap) in enumerate(infos):
        assert ctypes.string_at(ptr, cap) == bytes([i + 1]) * cap
    for b in blocks:
        storage._free(b)


def test_size_class_boundaries():
    assert storage._size_class(0) == (0, 64)
    assert storage._size_class(64) == (0, 64)
    assert storage._size_class(65) == (1, 80)
    assert storage._size_class(128) == (4, 128)
    assert storage._size_class(129) == (5, 160)
    # classes are increasing with capacity and each capacity maps to itself
    caps = sorted({expected_capacity(n) for n in range(0, 70000, 7)})
    idx = [storage._size_class(c)[0] for c in caps]
    assert idx == sorted(idx) and len(set(idx)) == len(idx)
    assert all(storage._size_class(c)[1] == c for c in caps)


def test_reuse_same_class_lifo(pool):
    a = storage._alloc(1000, pool)
    b = storage._alloc(1000, pool)
    pa, pb = storage._block_info(a)[0], storage._block_info(b)[0]
    storage._free(a)
    storage._free(b)
    # LIFO: the last freed comes back first, and any size of the same class gets it
    c = storage._alloc(900, pool)              # 900 and 1000 share the 1024 class
    assert c == b and storage._block_info(c) == (pb, 900, 1024)
    d = storage._alloc(1024, pool)
    assert d == a and storage._block_info(d)[0] == pa
    # another class does not take from this list
    e = storage._alloc(1025, pool)
    assert e not in (a, b)
    for x in (c, d, e):
        storage._free(x)


def test_counters_exact(pool):
    s0 = storage.stats(pool)
    # pooled is 0 after release_all; in_use may hold other tests' live pinned arrays
    u0 = s0["in_use"]
    assert s0["pooled"] == 0 and s0["peak"] == u0
    hits0, os0, frees0 = s0["pool_hits"], s0["os_allocs"], s0["os_frees"]

    def now():
        s = storage.stats(pool)
        return s["in_use"] - u0, s["pooled"], s["peak"] - u0

    a = storage._alloc(100, pool)        # 112
    b = storage._alloc(5000, pool)       # 5120
    c = storage._alloc(0, pool)          # 64
    assert now() == (112 + 5120 + 64, 0, 112 + 5120 + 64)
    s = storage.stats(pool)
    assert (s["pool_hits"] - hits0, s["os_allocs"] - os0) == (0, 3)

    storage._free(b)
    assert now() == (176, 5120, 5296)

    b2 = storage._alloc(4500, pool)      # same class: from the pool
    assert now() == (5296, 0, 5296)
    s = storage.stats(pool)
    assert (s["pool_hits"] - hits0, s["os_allocs"] - os0) == (1, 3)

    storage._free(a)
    storage._free(b2)
    storage.reset_peak(pool)
    assert now() == (64, 112 + 5120, 64)

    d = storage._alloc(200, pool)        # 224: new class, from the OS
    assert now()[::2] == (288, 288)
    assert storage.stats(pool)["os_allocs"] - os0 == 4
    storage._free(c)
    storage._free(d)
    assert now() == (0, 112 + 5120 + 64 + 224, 288)
    s = storage.stats(pool)
    assert s["os_frees"] == frees0
    assert s["limit"] == storage.get_pool_limit() == 1024 * MB


def test_release_all_returns_pooled_bytes(pool):
    blocks = [storage._alloc(n, pool) for n in (10, 100, 1000, 10000, 100000, 100000)]
    live = storage._alloc(777, pool)
    for b in blocks:
        storage._free(b)
    s = storage.stats(pool)
    want = sum(expected_capacity(n) for n in (10, 100, 1000, 10000, 100000, 100000))
    assert s["pooled"] == want
    assert storage.release_all(pool) == want
    s2 = storage.stats(pool)
    assert s2["pooled"] == 0
    assert s2["in_use"] == s["in_use"]
    assert s2["os_frees"] - s["os_frees"] == 6
    assert storage.release_all(pool) == 0
    # the released blocks are gone: the next alloc of that class comes from the OS
    before = storage.stats(pool)["os_allocs"]
    x = storage._alloc(100000, pool)
    assert storage.stats(pool)["os_allocs"] == before + 1
    storage._free(x)
    storage._free(live)


def test_release_all_both_pools():
    storage.release_all()
    a, b = storage._alloc(3000, CPU), storage._alloc(3000, PINNED)
    storage._free(a)
    storage._free(b)
    want = storage.stats(CPU)["pooled"] + storage.stats(PINNED)["pooled"]
    assert want >= 2 * 3072
    assert storage.release_all() == want
    assert storage.stats(CPU)["pooled"] == 0 and storage.stats(PINNED)["pooled"] == 0


def test_pool_limit(pool):
    storage.set_pool_limit(10000)
    assert storage.get_pool_limit() == 10000 and storage.stats(pool)["limit"] == 10000
    blocks = [storage._alloc(4096, pool) for _ in range(4)]
    f0 = storage.stats(pool)["os_frees"]
    for b in blocks:
        storage._free(b)
    s = storage.stats(pool)
    # 2 * 4096 fit under 10000; the third and fourth go back to the OS
    assert s["pooled"] == 8192 and s["os_frees"] - f0 == 2

    # lowering the limit trims the pool
    assert storage.set_pool_limit(5000) == 4096
    assert storage.stats(pool)["pooled"] == 4096

    storage.set_pool_limit(0)
    assert storage.stats(pool)["pooled"] == 0
    h0, o0 = storage.stats(pool)["pool_hits"], storage.stats(pool)["os_allocs"]
    for _ in range(5):
        storage._free(storage._alloc(64, pool))
    s = storage.stats(pool)
    assert s["pooled"] == 0 and s["pool_hits"] == h0 and s["os_allocs"] == o0 + 5


def test_bad_arguments():
    with pytest.raises(MXNetError, match="GPU backend not available"):
        storage._alloc(16, GPU)
    with pytest.raises(MXNetError, match="GPU backend not available"):
        storage.stats(GPU)
    with pytest.raises(ValueError, match="dev_type"):
        storage._alloc(16, 7)
    with pytest.raises(ValueError, match="dev_type"):
        storage.stats(0)
    with pytest.raises(ValueError, match="negative"):
        storage._alloc(-1)
    with pytest.raises(MemoryError):
        storage._alloc(1 << 60)
    with pytest.raises(ValueError):
        storage.set_pool_limit(-1)
    with pytest.raises(TypeError):
        storage.set_pool_limit(1.5)
    a = storage._alloc(10)
    storage._free(a)
    with pytest.raises(ValueError, match="not a live block"):
        storage._free(a)                      # double free is refused, not corrupting
    with pytest.raises(ValueError, match="not a live block"):
        storage._block_info(a)
    with pytest.raises(ValueError):
        storage._free(0)


def test_python_threads_concurrently(pool):
    nthreads, iters = 4, 3000
    errors = []
    h0 = storage.stats(pool)

    def work(tid):
        live = []
        try:
            for i in range(iters):
                n = (i * 37 + tid * 101) % 3000
                a = storage._alloc(n, pool)
                ptr, nb, cap = storage._block_info(a)
                if ptr % 64 or nb != n:
                    errors.append((tid, i, "bad block"))
                ctypes.memset(ptr, tid + 1, cap)
                live.append((a, ptr, cap))
                if len(live) > 8:
                    a, ptr, cap = live.pop(0)
                    if ctypes.string_at(ptr, cap) != bytes([tid + 1]) * cap:
                        errors.append((tid, i, "pattern overwritten"))
                    storage._free(a)
            for a, ptr, cap in live:
                if ctypes.string_at(ptr, cap) != bytes([tid + 1]) * cap:
                    errors.append((tid, "end", "pattern overwritten"))
                storage._free(a)
        except Exception as e:  # surfaced below with the thread id
            errors.append((tid, repr(e)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    s = storage.stats(pool)
    assert s["in_use"] == h0["in_use"]
    assert (s["pool_hits"] + s["os_allocs"]) - (h0["pool_hits"] + h0["os_allocs"]) == nthreads * iters
    assert s["pool_hits"] - h0["pool_hits"] > nthreads * iters // 2   # the pool did its job


@pytest.mark.parametrize("seed", [1, 2])
def test_stress_nogil_threads(seed):
    assert storage._stress(4, 40000, seed) is True


def test_stress_with_tiny_limit():
    old = storage.get_pool_limit()
    try:
        storage.set_pool_limit(20000)     # most frees go back to the OS, both paths race
        f0 = storage.stats(CPU)["os_frees"] + storage.stats(PINNED)["os_frees"]
        assert storage._stress(3, 20000, 7) is True
        assert storage.stats(CPU)["os_frees"] + storage.stats(PINNED)["os_frees"] > f0
        assert storage.stats(CPU)["pooled"] <= 20000
    finally:
        storage.set_pool_limit(old)


def test_pooled_alloc_free_pairs_never_reach_the_os():
    # the speed of a pair is a benchmark (bench_core.py --section pool); what a test can hold is
    # that every pair after the first is served by the pool: no malloc, no free
    a = storage._alloc(256)
    storage._free(a)
    before = storage.stats()
    assert storage._bench_pool(256, 1000) > 0
    after = storage.stats()
    assert after["os_allocs"] == before["os_allocs"]
    assert after["os_frees"] == before["os_frees"]
    assert after["pool_hits"] - before["pool_hits"] >= 1000


def _run(code, **env):
    full = dict(os.environ)
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=60)


def test_env_limit_read():
    code = ("from mxc._core import storage as s; a = s._alloc(100); s._free(a); "
            "print(s.get_pool_limit(), s.stats()['pooled'], s.stats()['os_frees'])")
    r = _run(code, MXC_CPU_MEM_POOL_LIMIT_MB="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "0", "1"]
    r = _run(code, MXC_CPU_MEM_POOL_LIMIT_MB="3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(3 * MB), "112", "0"]
    env = dict(os.environ)
    env.pop("MXC_CPU_MEM_POOL_LIMIT_MB", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == str(1024 * MB)


@pytest.mark.parametrize("value", ["lots", "-5"])
def test_env_limit_bad_value(value):
    r = _run("import mxc._core.storage", MXC_CPU_MEM_POOL_LIMIT_MB=value)
    assert r.returncode != 0
    assert "ValueError" in r.stderr and "MXC_CPU_MEM_POOL_LIMIT_MB" in r.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_while_other_threads_allocate():
    # A child forked while nogil threads hammer the pools must not inherit a held lock.
    code = r"""
import os, threading
from mxc._core import storage as s
stop = False
def spin():
    while not stop:
        s._stress(1, 2000, 3)
t = threading.Thread(target=spin); t.start()
for i in range(20):
    pid = os.fork()
    if pid == 0:
        a = s._alloc(100); s._free(a); b = s._alloc(5000, 3); s._free(b)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0, status
stop = True; t.join()
print("ok")
"""
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
