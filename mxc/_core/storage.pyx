"""Pooled storage allocator: 64-byte aligned host blocks, reused by size class.

Every block is one ``posix_memalign`` allocation: a 64-byte header (the public ``Block``, the
free-list link and a liveness tag) followed by the data, so ``Block.ptr`` is the allocation plus
64 and stays 64-byte aligned. Requests round up to a size class (64 bytes, then four classes per
power of two: at most 25% waste). A freed block is pushed on its class's free list (LIFO, so the
most recently touched memory, still warm in cache, goes out first) unless that would take the
pool past its limit, in which case it goes back to the OS. MXNet kept freed memory forever; the
limit (env ``MXC_CPU_MEM_POOL_LIMIT_MB``, default 1024) and ``release_all`` let memory go.

One pool per host device type (cpu, cpu_pinned) and one per GPU, each with its own pthread
mutex, held only around free-list pops/pushes and counter updates — never around the allocation
itself — so engine workers allocate without the GIL and a big allocation never stalls a small
one. GPU memory and page-locked host memory come from a device backend that mxc/_core/cuda.pyx
installs when the CUDA driver loads (``storage_set_backend``); until then gpu allocations return
NULL and cpu_pinned is plain host memory. Such "external" blocks keep their header in a separate
host allocation (device memory cannot hold it). A GPU block returned to its pool may be reused
at once although kernels queued on the device's stream may still use it: every user of a
device's memory is ordered on that device's one stream (mxc/_core/cuda.pyx), so the next user
runs after them. GPU pools keep everything by default (as MXNet and CuPy do);
``MXC_GPU_MEM_POOL_LIMIT_MB`` or ``set_pool_limit(n, dev_type=2)`` bounds them.
"""
from libc.stdint cimport uint64_t, uintptr_t
from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memset
from libc.stdio cimport fprintf, stderr
from posix.stdlib cimport posix_memalign
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from mxc.base import MXNetError, env_int

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_mutexattr_t:
        pass
    ctypedef struct pthread_attr_t:
        pass
    ctypedef unsigned long pthread_t
    int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
    int pthread_mutex_lock(pthread_mutex_t *m)
    int pthread_mutex_unlock(pthread_mutex_t *m)
    int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                       void *(*fn)(void *) noexcept nogil, void *arg)
    int pthread_join(pthread_t t, void **ret)
    int pthread_atfork(void (*prepare)() noexcept nogil, void (*parent)() noexcept nogil,
                       void (*child)() noexcept nogil)

cdef extern from *:
    int __builtin_clzll(unsigned long long x) nogil


cdef enum:
    ALIGN = 64          # data alignment (a cache line; AVX-512 loads)
    HEADER = 64         # bytes in front of the data; keeps the data aligned like the allocation
    MIN_CLASS = 64      # smallest capacity; also what a 0-byte request gets
    MAX_SHIFT = 48      # requests above 2**48 bytes fail (no machine has that; avoids overflow)
    NCLASS = 4 * (MAX_SHIFT - 6) + 1
    NHOST = 2           # cpu, cpu_pinned
    NPOOL = NHOST + STORAGE_MAX_GPUS

# Tags in the header: a live block, and one sitting in a free list. storage_free checks the tag
# so a double free aborts with a message instead of putting a block on a free list twice (which
# would later hand the same memory to two owners).
cdef uint64_t TAG_LIVE = 0x6d78632d6c697665ULL
cdef uint64_t TAG_FREE = 0x6d78632d66726565ULL
cdef size_t MAX_REQUEST = (<size_t>1) << MAX_SHIFT


cdef struct Header:
    Block blk           # first member, so a Block* is the Header* (and the allocation)
    Header *next        # free-list link while pooled
    uint64_t tag
    int ext             # data from the device backend, header malloc'ed apart


cdef struct Pool:
    pthread_mutex_t lock
    Header *free_list[NCLASS]
    size_t in_use       # capacity of live blocks
    size_t pooled       # capacity waiting in free lists
    size_t peak         # highest in_use since start or reset_peak()
    size_t limit        # pooled never exceeds this
    uint64_t hits       # allocations served from a free list
    uint64_t os_allocs  # allocations that went to posix_memalign
    uint64_t os_frees   # blocks handed back to the OS (limit, release_all, trimming)


cdef Pool _pools[NPOOL]
cdef backend_alloc_fn g_backend_alloc = NULL
cdef backend_free_fn g_backend_free = NULL
cdef int g_ngpus = 0


cdef void storage_set_backend(backend_alloc_fn alloc, backend_free_fn free_, int ngpus) noexcept nogil:
    global g_backend_alloc, g_backend_free, g_ngpus
    g_backend_alloc = alloc
    g_backend_free = free_
    g_ngpus = ngpus if ngpus < STORAGE_MAX_GPUS else STORAGE_MAX_GPUS


cdef inline Pool* pool_of(int dev_type, int dev_id) noexcept nogil:
    if dev_type == 1 or dev_type == 5:       # cpu, cpu_shared: host memory
        return &_pools[0]
    if dev_type == 3:
        return &_pools[1]
    if dev_type == 2 and 0 <= dev_id < g_ngpus:
        return &_pools[NHOST + dev_id]
    return NULL


cdef inline bint use_backend(int dev_type) noexcept nogil:
    return g_backend_alloc != NULL and (dev_type == 2 or dev_type == 3)


cdef inline void release_memory(Header *h) noexcept nogil:
    """Give one block's memory back (the OS or the device backend)."""
    if h.ext:
        g_backend_free(h.blk.dev_type, h.blk.dev_id, h.blk.ptr)
    free(h)


cdef inline int size_class(size_t n, size_t *cap) noexcept nogil:
    """Class index of an n-byte request (n <= MAX_REQUEST); its capacity goes to cap[0]."""
    if n <= MIN_CLASS:
        cap[0] = MIN_CLASS
        return 0
    # n - 1 lies in [2**k, 2**(k+1)); its top three bits after the leading one pick one of the
    # four quarter steps, and the capacity is the next step up: (top + 1) * 2**(k - 2).
    cdef uint64_t m = n - 1
    cdef int k = 63 - __builtin_clzll(m)
    cdef int sh = k - 2
    cdef uint64_t top = m >> sh          # 4..7
    cap[0] = <size_t>((top + 1) << sh)
    return (k - 6) * 4 + <int>(top - 4) + 1


cdef Block* storage_alloc(size_t nbytes, int dev_type, int dev_id) noexcept nogil:
    cdef Pool *p = pool_of(dev_type, dev_id)
    cdef size_t cap
    cdef int c
    cdef Header *h
    cdef void *mem = NULL
    cdef size_t used = 0
    if p == NULL or nbytes > MAX_REQUEST:
        return NULL
    c = size_class(nbytes, &cap)
    pthread_mutex_lock(&p.lock)
    h = p.free_list[c]
    if h != NULL:
        p.free_list[c] = h.next
        p.pooled -= cap
        p.hits += 1
        p.in_use += cap
        if p.in_use > p.peak:
            p.peak = p.in_use
        used = p.in_use
    pthread_mutex_unlock(&p.lock)
    if h == NULL:
        if use_backend(dev_type):
            h = <Header*>malloc(sizeof(Header))
            if h == NULL:
                return NULL
            if g_backend_alloc(dev_type, dev_id, cap, &mem) != 0:
                free(h)
                return NULL
            h.blk.ptr = mem
            h.ext = 1
        else:
            if dev_type == 2 or posix_memalign(&mem, ALIGN, HEADER + cap) != 0:
                return NULL
            h = <Header*>mem
            h.blk.ptr = <char*>mem + HEADER
            h.ext = 0
        h.blk.capacity = cap
        h.blk.dev_type = dev_type
        pthread_mutex_lock(&p.lock)
        p.os_allocs += 1
        p.in_use += cap
        if p.in_use > p.peak:
            p.peak = p.in_use
        used = p.in_use
        pthread_mutex_unlock(&p.lock)
    h.next = NULL
    h.tag = TAG_LIVE
    h.blk.nbytes = nbytes
    h.blk.dev_id = dev_id
    if g_prof_mem:
        _mem_record(dev_type, dev_id, used)
    return &h.blk


cdef void storage_free(Block *b) noexcept nogil:
    cdef Header *h = <Header*>b
    cdef Pool *p
    cdef size_t cap
    cdef int c
    cdef bint keep
    cdef size_t used
    if b == NULL:
        return
    p = pool_of(b.dev_type, b.dev_id)
    cap = b.capacity
    c = size_class(cap, &cap)           # a capacity is its own class's capacity
    pthread_mutex_lock(&p.lock)
    if h.tag != TAG_LIVE:
        pthread_mutex_unlock(&p.lock)
        fprintf(stderr, b"mxc storage: free of a block that is not live (double free?) at %p\n",
                <void*>b)
        abort()
    p.in_use -= cap
    used = p.in_use
    keep = p.pooled + cap <= p.limit
    if keep:
        h.tag = TAG_FREE
        h.next = p.free_list[c]
        p.free_list[c] = h
        p.pooled += cap
    else:
        h.tag = 0
        p.os_frees += 1
    pthread_mutex_unlock(&p.lock)
    if g_prof_mem:
        _mem_record(b.dev_type, b.dev_id, used)
    if not keep:
        release_memory(h)


cdef size_t trim_pool(Pool *p, size_t keep) noexcept nogil:
    """Free pooled blocks, largest classes first, until at most keep bytes stay pooled.

    The blocks are unlinked under the lock and freed after it is dropped.
    """
    cdef Header *chain = NULL
    cdef Header *h
    cdef size_t released = 0
    cdef int c
    pthread_mutex_lock(&p.lock)
    c = NCLASS - 1
    while c >= 0 and p.pooled > keep:
        while p.pooled > keep and p.free_list[c] != NULL:
            h = p.free_list[c]
            p.free_list[c] = h.next
            p.pooled -= h.blk.capacity
            p.os_frees += 1
            released += h.blk.capacity
            h.tag = 0
            h.next = chain
            chain = h
        c -= 1
    pthread_mutex_unlock(&p.lock)
    while chain != NULL:
        h = chain.next
        release_memory(chain)
        chain = h
    return released


# fork(): a child inherits the pools but not the threads. If an engine worker held a pool lock
# at the moment of fork, the child's first allocation would wait forever (DataLoader workers
# fork). Taking every lock around fork makes the child's copy consistent and unlocked.
cdef void atfork_prepare() noexcept nogil:
    cdef int i
    for i in range(NPOOL):
        pthread_mutex_lock(&_pools[i].lock)


cdef void atfork_release() noexcept nogil:
    cdef int i
    for i in range(NPOOL - 1, -1, -1):
        pthread_mutex_unlock(&_pools[i].lock)


def _limit_from_env():
    return _limit_env("MXC_CPU_MEM_POOL_LIMIT_MB", 1024)


def _limit_env(name, default_mb):
    mb = env_int(name, default_mb)
    if mb < 0 or mb > (1 << 40):
        raise ValueError(f"environment variable {name}={mb} must be an "
                         f"integer number of megabytes in [0, 2**40]")
    return mb << 20


cdef int init_pools(size_t limit, size_t gpu_limit) except -1:
    cdef int i
    memset(_pools, 0, sizeof(_pools))
    for i in range(NPOOL):
        if pthread_mutex_init(&_pools[i].lock, NULL) != 0:
            raise RuntimeError("mxc storage: pthread_mutex_init failed")
        _pools[i].limit = limit if i < NHOST else gpu_limit
    if pthread_atfork(atfork_prepare, atfork_release, atfork_release) != 0:
        raise RuntimeError("mxc storage: pthread_atfork failed")
    return 0


init_pools(_limit_from_env(), _limit_env("MXC_GPU_MEM_POOL_LIMIT_MB", 1 << 40))


# ---------------------------------------------------------------- profiler records
# While the profiler records memory (profile_set_memory(1); the front is mxc/profiler.py),
# every allocation and free appends (time, device, bytes in use after it) to a buffer on its own
# mutex; the front takes them with profile_take_memory(). Off, it is one test per call.

cdef extern from *:
    """
    #include <time.h>
    static inline long long mxc_storage_now_ns(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    """
    long long mxc_storage_now_ns() noexcept nogil

cdef enum:
    MEM_MAX_RECORDS = 1 << 22

cdef struct MemRec:
    long long t              # CLOCK_MONOTONIC ns
    size_t in_use            # the pool's bytes in use after the call
    int dev_type
    int dev_id

cdef int g_prof_mem = 0
cdef pthread_mutex_t g_mem_mu
cdef MemRec *g_mem = NULL
cdef Py_ssize_t g_mem_n = 0
cdef Py_ssize_t g_mem_cap = 0
cdef long long g_mem_dropped = 0
pthread_mutex_init(&g_mem_mu, NULL)


cdef void _mem_record(int dev_type, int dev_id, size_t in_use) noexcept nogil:
    global g_mem, g_mem_n, g_mem_cap, g_mem_dropped
    cdef MemRec *grown
    cdef Py_ssize_t cap
    cdef long long t = mxc_storage_now_ns()
    pthread_mutex_lock(&g_mem_mu)
    if g_mem_n == g_mem_cap:
        cap = g_mem_cap * 2 + 1024
        grown = NULL
        if cap <= MEM_MAX_RECORDS:
            grown = <MemRec*>realloc(g_mem, sizeof(MemRec) * cap)
        if grown == NULL:
            g_mem_dropped += 1
            pthread_mutex_unlock(&g_mem_mu)
            return
        g_mem = grown
        g_mem_cap = cap
    g_mem[g_mem_n].t = t
    g_mem[g_mem_n].in_use = in_use
    g_mem[g_mem_n].dev_type = dev_type
    g_mem[g_mem_n].dev_id = dev_id
    g_mem_n += 1
    pthread_mutex_unlock(&g_mem_mu)


def profile_set_memory(bint on):
    """Start (True) or stop (False) recording every allocation and free."""
    global g_prof_mem
    g_prof_mem = on


def profile_take_memory():
    """Take the memory records made so far (they are removed).

    Returns
    -------
    (list, int)
        ``(time_ns, dev_type, dev_id, bytes_in_use)`` tuples (CLOCK_MONOTONIC, as
        ``time.monotonic_ns``; bytes are the pool's capacity in use after the call), and how
        many records were dropped since the last take because too many were waiting.
    """
    global g_mem, g_mem_n, g_mem_cap, g_mem_dropped
    cdef MemRec *recs
    cdef Py_ssize_t n, i
    cdef long long dropped
    with nogil:
        pthread_mutex_lock(&g_mem_mu)
        recs = g_mem
        n = g_mem_n
        dropped = g_mem_dropped
        g_mem = NULL
        g_mem_n = g_mem_cap = 0
        g_mem_dropped = 0
        pthread_mutex_unlock(&g_mem_mu)
    try:
        out = [(recs[i].t, recs[i].dev_type, recs[i].dev_id, recs[i].in_use) for i in range(n)]
    finally:
        free(recs)
    return out, dropped


def _profile_after_fork():
    global g_mem, g_mem_n, g_mem_cap
    pthread_mutex_init(&g_mem_mu, NULL)
    free(g_mem)
    g_mem = NULL
    g_mem_n = g_mem_cap = 0


import os as _os
_os.register_at_fork(after_in_child=_profile_after_fork)


# ---------------------------------------------------------------- Python API

cdef list host_pools(dev_type):
    """The host pools a dev_type argument names: None means every host pool."""
    if dev_type is None:
        return [1, 3]
    if dev_type == 2:
        raise MXNetError("storage: GPU backend not available")
    if dev_type not in (1, 3):
        raise ValueError(f"storage: dev_type must be 1 (cpu), 2 (gpu) or 3 (cpu_pinned), "
                         f"got {dev_type!r}")
    return [dev_type]


cdef Pool* named_pool(dev_type, dev_id) except NULL:
    """The pool of (dev_type, dev_id); a clear error for a GPU without a backend or device."""
    if dev_type == 2:
        if g_backend_alloc == NULL:
            raise MXNetError("storage: GPU backend not available (no CUDA driver or device)")
        if not isinstance(dev_id, int) or not 0 <= dev_id < g_ngpus:
            raise MXNetError(f"storage: gpu({dev_id}) does not exist ({g_ngpus} GPU(s))")
        return &_pools[NHOST + dev_id]
    return pool_of(host_pools(dev_type)[0], 0)


cdef list pools_for(dev_type, dev_id):
    if dev_type == 2:
        if dev_id is None:
            if g_ngpus == 0:
                named_pool(2, 0)          # raises the no-backend / no-device error
            return [<size_t>&_pools[NHOST + i] for i in range(g_ngpus)]
        return [<size_t>named_pool(2, dev_id)]
    return [<size_t>pool_of(d, 0) for d in host_pools(dev_type)]


def stats(dev_type=1, dev_id=0):
    """Counters of one pool.

    Parameters
    ----------
    dev_type : int
        1 (cpu), 3 (cpu_pinned) or 2 (gpu; MXNetError without a CUDA device).
    dev_id : int
        The GPU, for dev_type 2.

    Returns
    -------
    dict
        ``in_use`` (capacity of live blocks, bytes), ``pooled`` (capacity in free lists),
        ``peak`` (highest ``in_use`` since start or :func:`reset_peak`), ``pool_hits``
        (allocations served from a free list), ``os_allocs`` (allocations that went to the OS),
        ``os_frees`` (blocks given back to the OS) and ``limit`` (the pool limit, bytes).
    """
    cdef Pool *p = named_pool(dev_type, dev_id)
    cdef size_t in_use, pooled, peak, limit
    cdef uint64_t hits, os_allocs, os_frees
    with nogil:
        pthread_mutex_lock(&p.lock)
        in_use = p.in_use
        pooled = p.pooled
        peak = p.peak
        limit = p.limit
        hits = p.hits
        os_allocs = p.os_allocs
        os_frees = p.os_frees
        pthread_mutex_unlock(&p.lock)
    return {"in_use": in_use, "pooled": pooled, "peak": peak, "pool_hits": hits,
            "os_allocs": os_allocs, "os_frees": os_frees, "limit": limit}


def release_all(dev_type=None, dev_id=None):
    """Give every pooled (freed, unused) block back to the OS (or the device).

    Parameters
    ----------
    dev_type : int or None
        1 (cpu) or 3 (cpu_pinned); None releases both host pools; 2 the GPU pools.
    dev_id : int or None
        For dev_type 2: one GPU; None: every GPU.

    Returns
    -------
    int
        Bytes released (the ``pooled`` counters before the call).
    """
    cdef size_t total = 0
    cdef Pool *p
    for addr in pools_for(dev_type, dev_id):
        p = <Pool*><size_t>addr
        with nogil:
            total += trim_pool(p, 0)
    return total


def set_pool_limit(nbytes, dev_type=None):
    """Set how many freed bytes each host pool (or, with dev_type=2, each GPU pool) may keep.

    Blocks freed while the pool holds ``nbytes`` already go back to the OS. Lowering the limit
    releases pooled blocks (largest first) until each pool fits.

    Parameters
    ----------
    nbytes : int
        The limit in bytes, >= 0; 0 keeps nothing.

    Returns
    -------
    int
        Bytes released by trimming the pools to the new limit.
    """
    if not isinstance(nbytes, int) or isinstance(nbytes, bool):
        raise TypeError(f"set_pool_limit: nbytes must be an int, got {type(nbytes).__name__}")
    if nbytes < 0 or nbytes > (1 << 62):
        raise ValueError(f"set_pool_limit: nbytes must be in [0, 2**62], got {nbytes}")
    cdef size_t limit = nbytes
    cdef size_t total = 0
    cdef Pool *p
    cdef int i
    cdef bint gpu = dev_type is not None
    if gpu and not (isinstance(dev_type, int) and <long>dev_type == 2):
        raise ValueError(f"set_pool_limit: dev_type must be None (host pools) or 2 (gpu), "
                         f"got {dev_type!r}")
    cdef int lo = NHOST if gpu else 0
    cdef int hi = NPOOL if gpu else NHOST
    with nogil:
        for i in range(lo, hi):
            p = &_pools[i]
            pthread_mutex_lock(&p.lock)
            p.limit = limit
            pthread_mutex_unlock(&p.lock)
            total += trim_pool(p, limit)
    return total


def get_pool_limit(dev_type=None):
    """The host pools' limit in bytes (from MXC_CPU_MEM_POOL_LIMIT_MB or :func:`set_pool_limit`);
    with dev_type=2 the GPU pools' (MXC_GPU_MEM_POOL_LIMIT_MB)."""
    return _pools[NHOST if dev_type == 2 else 0].limit


def reset_peak(dev_type=None, dev_id=None):
    """Set ``peak`` to the current ``in_use`` (dev_type 1, 3, None for both host pools, 2 for
    the GPU pools: ``dev_id`` or all)."""
    cdef Pool *p
    for addr in pools_for(dev_type, dev_id):
        p = <Pool*><size_t>addr
        with nogil:
            pthread_mutex_lock(&p.lock)
            p.peak = p.in_use
            pthread_mutex_unlock(&p.lock)


# ---------------------------------------------------------------- test hooks

cdef Block* live_block(addr) except NULL:
    if not isinstance(addr, int) or addr <= 0:
        raise ValueError(f"storage: {addr!r} is not a block address")
    cdef Header *h = <Header*><uintptr_t>addr
    if h.tag != TAG_LIVE:
        raise ValueError(f"storage: 0x{addr:x} is not a live block (already freed?)")
    return &h.blk


def _alloc(nbytes, int dev_type=1, int dev_id=0):
    """Test hook: allocate a block, return its address (an int); free it with :func:`_free`."""
    if nbytes < 0:
        raise ValueError(f"storage: negative size {nbytes}")
    named_pool(dev_type, dev_id)
    if nbytes > MAX_REQUEST:
        raise MemoryError(f"storage: cannot allocate {nbytes} bytes")
    cdef size_t n = nbytes
    cdef Block *b
    with nogil:
        b = storage_alloc(n, dev_type, dev_id)
    if b == NULL:
        raise MemoryError(f"storage: out of memory allocating {nbytes} bytes")
    return <uintptr_t>b


def _free(addr):
    """Test hook: free a block made by :func:`_alloc` (ValueError if it is not live)."""
    cdef Block *b = live_block(addr)
    with nogil:
        storage_free(b)


def _block_info(addr):
    """Test hook: ``(ptr, nbytes, capacity)`` of a live block."""
    cdef Block *b = live_block(addr)
    return <uintptr_t>b.ptr, b.nbytes, b.capacity


def _size_class(nbytes):
    """Test hook: ``(class index, capacity)`` a request of nbytes rounds to."""
    if nbytes < 0 or nbytes > MAX_REQUEST:
        raise ValueError(f"storage: size {nbytes} out of range")
    cdef size_t cap
    cdef int c = size_class(<size_t>nbytes, &cap)
    return c, cap


cdef struct StressArg:
    uint64_t seed
    long iters
    long nallocs        # out: successful allocations
    int ok              # out: 1 while every block kept its pattern and its invariants


cdef inline uint64_t xorshift(uint64_t *s) noexcept nogil:
    cdef uint64_t x = s[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    s[0] = x
    return x


cdef void fill_block(Block *b, uint64_t tag) noexcept nogil:
    cdef uint64_t *w = <uint64_t*>b.ptr
    cdef size_t i, n = b.capacity // 8
    for i in range(n):
        w[i] = tag + i * 0x9E3779B97F4A7C15ULL


cdef bint check_block(Block *b, uint64_t tag) noexcept nogil:
    cdef uint64_t *w = <uint64_t*>b.ptr
    cdef size_t i, n = b.capacity // 8
    cdef bint good = 1
    for i in range(n):
        good &= w[i] == tag + i * 0x9E3779B97F4A7C15ULL
    return good


cdef void* stress_worker(void *arg) noexcept nogil:
    # Random alloc / fill / verify / free over 16 slots. Sizes mix the small classes (hot path)
    # with some up to 64 KiB; both host pools are used. A block handed to two owners, or data
    # overlapping another block or a header, shows as a broken pattern.
    cdef StressArg *a = <StressArg*>arg
    cdef Block *slots[16]
    cdef uint64_t tags[16]
    cdef uint64_t rng = a.seed * 0x9E3779B97F4A7C15ULL + 1
    cdef uint64_t r
    cdef size_t n, cap
    cdef long it
    cdef int s, kind, dev
    cdef Block *b
    memset(slots, 0, sizeof(slots))
    for it in range(a.iters):
        r = xorshift(&rng)
        s = <int>(r & 15)
        if slots[s] != NULL:
            if not check_block(slots[s], tags[s]):
                a.ok = 0
            storage_free(slots[s])
            slots[s] = NULL
            continue
        kind = <int>((r >> 4) & 7)
        if kind < 4:
            n = (r >> 8) % 257
        elif kind < 7:
            n = (r >> 8) % 4097
        else:
            n = (r >> 8) % 65537
        dev = 1 if (r >> 40) & 1 else 3
        b = storage_alloc(n, dev, 0)
        if b == NULL:
            a.ok = 0
            continue
        a.nallocs += 1
        size_class(n, &cap)
        if ((<uintptr_t>b.ptr) % ALIGN != 0 or b.nbytes != n or b.capacity != cap
                or b.dev_type != dev):
            a.ok = 0
        tags[s] = xorshift(&rng)
        fill_block(b, tags[s])
        slots[s] = b
    for s in range(16):
        if slots[s] != NULL:
            if not check_block(slots[s], tags[s]):
                a.ok = 0
            storage_free(slots[s])
    return NULL


def _stress(int nthreads, long iters, uint64_t seed):
    """Test hook: hammer the allocator from ``nthreads`` pthreads without the GIL.

    Each thread does ``iters`` random steps of allocate + write a pattern, or verify the pattern
    + free. Returns True when every block kept its pattern and alignment, and afterwards every
    host pool's ``in_use`` is back to its start value, ``pool_hits + os_allocs`` grew by exactly
    the number of allocations made, and ``pooled`` is within the limit.
    """
    if nthreads < 1 or nthreads > 64 or iters < 0:
        raise ValueError(f"_stress: need 1 <= nthreads <= 64 and iters >= 0, "
                         f"got {nthreads}, {iters}")
    before = [stats(1), stats(3)]
    cdef StressArg *args = <StressArg*>malloc(nthreads * sizeof(StressArg))
    cdef pthread_t *tids = <pthread_t*>malloc(nthreads * sizeof(pthread_t))
    cdef int i, started = 0
    cdef long total = 0
    cdef bint ok = 1
    if args == NULL or tids == NULL:
        free(args)
        free(tids)
        raise MemoryError("_stress: out of memory")
    for i in range(nthreads):
        args[i].seed = seed * 1000003ULL + <uint64_t>i + 1
        args[i].iters = iters
        args[i].nallocs = 0
        args[i].ok = 1
    with nogil:
        for i in range(nthreads):
            if pthread_create(&tids[i], NULL, stress_worker, &args[i]) != 0:
                break
            started += 1
        for i in range(started):
            pthread_join(tids[i], NULL)
    for i in range(started):
        ok &= args[i].ok
        total += args[i].nallocs
    free(args)
    free(tids)
    if started < nthreads:
        raise RuntimeError(f"_stress: could only start {started} of {nthreads} threads")
    after = [stats(1), stats(3)]
    served = sum(a["pool_hits"] + a["os_allocs"] - b["pool_hits"] - b["os_allocs"]
                 for a, b in zip(after, before))
    ok &= served == total
    for a, b in zip(after, before):
        ok &= a["in_use"] == b["in_use"] and a["pooled"] <= a["limit"]
    return bool(ok)


def _bench_pool(nbytes, long iters):
    """Test hook: nanoseconds per ``storage_alloc`` + ``storage_free`` pair on the cpu pool.

    With a non-zero limit every pair after the first is served from the pool.
    """
    if nbytes < 0 or nbytes > MAX_REQUEST or iters < 1:
        raise ValueError("_bench_pool: need 0 <= nbytes <= 2**48 and iters >= 1")
    cdef size_t n = nbytes
    cdef timespec t0, t1
    cdef long i
    cdef Block *b
    with nogil:
        storage_free(storage_alloc(n, 1, 0))
        clock_gettime(CLOCK_MONOTONIC, &t0)
        for i in range(iters):
            b = storage_alloc(n, 1, 0)
            storage_free(b)
        clock_gettime(CLOCK_MONOTONIC, &t1)
    return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / iters
