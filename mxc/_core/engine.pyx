"""mxc's dependency engine: MXNet's ThreadedEngine contract on pthreads that run without the GIL.

An operation reads some vars and writes others. Operations on one var run in push order: reads
may overlap, a write is exclusive (each var keeps a FIFO; the head is granted when compatible
with what runs). Independent operations run in parallel on worker threads. Errors travel on the
vars an operation writes and are raised by whoever waits on them. See docs/engine.md.

Scheduling state lives under one mutex (2 cores: contention is cheap, and one lock makes the
grant logic easy to trust); nothing under that mutex ever takes the GIL, so a thread holding the
GIL may take the mutex. Each operation is one block (block + var list + FIFO entries + name) from
the small-object pool (csrc/mxc/smallpool.h), as is each var.
"""
import atexit
import os

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdint cimport int64_t, uint64_t, uintptr_t
from libc.stdlib cimport malloc, calloc, realloc, free, qsort

cdef extern from "mxc/smallpool.h" nogil:
    void *mxc_sp_alloc(size_t n)
    void *mxc_sp_calloc(size_t n)
    void mxc_sp_free(void *p)
from libc.string cimport memcpy, strlen

from mxc.base import MXNetError, env_int, env_str, error_from


cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    cdef struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk, timespec *ts)
    enum:
        CLOCK_REALTIME

from cpython.exc cimport PyErr_CheckSignals

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    ctypedef struct pthread_mutexattr_t:
        pass
    ctypedef struct pthread_condattr_t:
        pass
    ctypedef struct pthread_attr_t:
        pass
    ctypedef unsigned long pthread_t
    int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
    int pthread_mutex_lock(pthread_mutex_t *m)
    int pthread_mutex_unlock(pthread_mutex_t *m)
    int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
    int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
    int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const timespec *t)
    int pthread_cond_signal(pthread_cond_t *c)
    int pthread_cond_broadcast(pthread_cond_t *c)
    int pthread_create(pthread_t *t, const pthread_attr_t *a,
                       void *(*start)(void *) noexcept nogil, void *arg)
    int pthread_join(pthread_t t, void **ret)


cdef extern from *:
    """
    #include <time.h>
    /* Thread-local: the operation this thread is running (NULL outside one), and whether the
       thread is an engine worker. Used to refuse waits that would deadlock and to exempt
       pushes made from inside an operation from back-pressure. */
    static __thread void *mxc_engine_tls_op = 0;
    static __thread int mxc_engine_tls_worker = 0;
    static __thread int mxc_engine_tls_depth = 0;   /* ops running on this thread's stack */
    static inline void *mxc_engine_cur_op(void) { return mxc_engine_tls_op; }
    static inline void mxc_engine_set_op(void *p) { mxc_engine_tls_op = p; }
    static inline int mxc_engine_is_worker(void) { return mxc_engine_tls_worker; }
    static inline void mxc_engine_set_worker(int w) { mxc_engine_tls_worker = w; }
    static inline int mxc_engine_depth(void) { return mxc_engine_tls_depth; }
    static inline void mxc_engine_add_depth(int d) { mxc_engine_tls_depth += d; }
    static inline int mxc_atomic_inc(int *p) { return __atomic_add_fetch(p, 1, __ATOMIC_RELAXED); }
    static inline int mxc_atomic_dec(int *p) { return __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL); }
    static inline long long mxc_atomic_load_ll(long long *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void mxc_atomic_add_ll(long long *p, long long d) { __atomic_add_fetch(p, d, __ATOMIC_RELAXED); }
    static inline int mxc_atomic_load_i(int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void mxc_atomic_store_i(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline long long mxc_now_ns(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    #include <unistd.h>
    #include <sys/syscall.h>
    /* Profiler: the OS thread id (what Perfetto shows, and Python's threading.get_native_id),
       cached per thread; and the scope a thread is in (a custom operator's name), which names
       the operations it pushes "scope::op" while the profiler records. */
    static __thread long mxc_tls_tid = 0;
    static __thread char *mxc_tls_scope = 0;
    /* 1 while this thread runs a bound graph (an executor's or a CachedOp's): the operations it
       pushes are "symbolic" for the profiler's mode, the others "imperative" (MXNet's split) */
    static __thread int mxc_tls_graph = 0;
    static inline int mxc_prof_graph(void) { return mxc_tls_graph; }
    static inline void mxc_set_prof_graph(int g) { mxc_tls_graph = g; }
    static inline long mxc_thread_id(void) {
        if (!mxc_tls_tid) mxc_tls_tid = (long)syscall(SYS_gettid);
        return mxc_tls_tid;
    }
    static inline void mxc_reset_thread_id(void) { mxc_tls_tid = 0; }
    static inline char *mxc_prof_scope(void) { return mxc_tls_scope; }
    static inline void mxc_set_prof_scope(char *s) { mxc_tls_scope = s; }
    static inline void mxc_sleep_us(long long us) {
        struct timespec ts; ts.tv_sec = us / 1000000; ts.tv_nsec = (us % 1000000) * 1000;
        nanosleep(&ts, 0);
    }
    """
    void *mxc_engine_cur_op() noexcept nogil
    void mxc_engine_set_op(void *p) noexcept nogil
    int mxc_engine_is_worker() noexcept nogil
    void mxc_engine_set_worker(int w) noexcept nogil
    int mxc_engine_depth() noexcept nogil
    void mxc_engine_add_depth(int d) noexcept nogil
    int mxc_atomic_inc(int *p) noexcept nogil
    int mxc_atomic_dec(int *p) noexcept nogil
    long long mxc_atomic_load_ll(long long *p) noexcept nogil
    void mxc_atomic_add_ll(long long *p, long long d) noexcept nogil
    int mxc_atomic_load_i(int *p) noexcept nogil
    void mxc_atomic_store_i(int *p, int v) noexcept nogil
    long long mxc_now_ns() noexcept nogil
    void mxc_sleep_us(long long us) noexcept nogil
    long mxc_thread_id() noexcept nogil
    void mxc_reset_thread_id() noexcept nogil
    char *mxc_prof_scope() noexcept nogil
    void mxc_set_prof_scope(char *s) noexcept nogil
    int mxc_prof_graph() noexcept nogil
    void mxc_set_prof_graph(int g) noexcept nogil


cdef enum:
    ERRBUF = 1024          # bytes an exec_fn may write into err
    SMALL = 16             # var lists up to this size live on the stack

# ---------------------------------------------------------------------------------------------
# configuration (read once, at import)

_KINDS = ("NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice")
_engine_type = env_str("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice")
if _engine_type not in _KINDS:
    raise ValueError(
        f"environment variable MXNET_ENGINE_TYPE={_engine_type!r} names no engine mxc has; "
        f"use one of {', '.join(_KINDS)}")
_cfg_workers = env_int("MXNET_CPU_WORKER_NTHREADS", 1)
if _cfg_workers < 1:
    raise ValueError(f"environment variable MXNET_CPU_WORKER_NTHREADS={_cfg_workers} must be >= 1")
_cfg_max_pending = env_int("MXC_ENGINE_MAX_PENDING", 8192)
if _cfg_max_pending < 1:
    raise ValueError(f"environment variable MXC_ENGINE_MAX_PENDING={_cfg_max_pending} must be >= 1")

# ---------------------------------------------------------------------------------------------
# engine state; everything but the atomics is guarded by g_mu

cdef pthread_mutex_t g_mu
cdef pthread_cond_t g_work_cond      # idle workers sleep here
cdef pthread_cond_t g_wait_cond      # waiters (wait_var, wait_for_all, back-pressure) sleep here
cdef OpBlock **g_heap = NULL         # ready ops: binary heap, priority desc then seq asc
cdef int g_heap_n = 0
cdef int g_heap_cap = 0
cdef uint64_t g_seq = 0
cdef long long g_pending = 0         # pushed, not completed (atomic reads outside the lock)
cdef long long g_max_pending = _cfg_max_pending
cdef int g_naive = _engine_type == "NaiveEngine"
cdef int g_inline = g_naive          # run ops inside push: naive engine, or after shutdown
cdef int g_nworkers = 0 if g_naive else _cfg_workers
cdef int g_nstarted = 0
cdef pthread_t *g_threads = NULL
cdef int g_stop = 0
cdef int g_nidle = 0                 # workers asleep on g_work_cond
cdef int g_nsignaled = 0             # wake-ups sent to them and not yet consumed
cdef int g_nsleepers = 0             # waiters asleep on g_wait_cond that would run a ready op
cdef int g_nwait_all = 0
cdef int g_nbp = 0                   # pushers blocked by back-pressure
cdef int g_running = 0               # ops taken from the heap, not completed
cdef uint64_t g_ncompleted = 0       # ops completed so far: the progress a polite waiter watches
cdef uint64_t g_cutoff = 0           # exit/fork drain: ops with seq < cutoff are counted ...
cdef long long g_nbefore = 0         # ... here, so the drain ignores ops pushed after it began
cdef ErrRec **g_errs = NULL          # errors stored since the last wait_for_all
cdef int g_nerrs = 0
cdef int g_errcap = 0
cdef ErrRec g_oom_err                # used when even an error record cannot be allocated
# per-device workers (GPU ops): a FIFO each, served by one thread that owns the device's stream
cdef OpBlock *g_dq_head[ENGINE_MAX_DEVICES]
cdef OpBlock *g_dq_tail[ENGINE_MAX_DEVICES]
cdef pthread_cond_t g_dq_cond[ENGINE_MAX_DEVICES]
cdef pthread_t g_dthreads[ENGINE_MAX_DEVICES]
cdef int g_dstarted[ENGINE_MAX_DEVICES]
# A thread is running one of gpu(d)'s ops: its worker, or a pusher launching inline (see
# _register_maybe_inline). One at a time keeps the device's ops in push order on its stream.
cdef int g_dbusy[ENGINE_MAX_DEVICES]
cdef OpBlock *g_inline_try = NULL    # the launch being pushed, which its pusher may run itself
cdef bint g_inline_go = False        # _make_ready found it ready, its device idle: run it inline
cdef gpu_sync_fn g_gpu_sync = NULL
cdef char *g_oom_msg = b"mxc engine: out of memory recording an operator error"


cdef void _init_sync() noexcept nogil:
    cdef int i
    pthread_mutex_init(&g_mu, NULL)
    pthread_cond_init(&g_work_cond, NULL)
    pthread_cond_init(&g_wait_cond, NULL)
    for i in range(ENGINE_MAX_DEVICES):
        pthread_cond_init(&g_dq_cond[i], NULL)
        g_dq_head[i] = NULL
        g_dq_tail[i] = NULL
        g_dstarted[i] = 0
        g_dbusy[i] = 0


cdef void engine_set_gpu_sync(gpu_sync_fn fn) noexcept nogil:
    global g_gpu_sync
    g_gpu_sync = fn


_init_sync()
g_oom_err.refcount = 1 << 30
g_oom_err.msg = g_oom_msg


cdef inline void _lock() noexcept nogil:
    pthread_mutex_lock(&g_mu)


cdef inline void _unlock() noexcept nogil:
    pthread_mutex_unlock(&g_mu)

# ---------------------------------------------------------------------------------------------
# profiler records (the front is mxc/profiler.py; the engine never imports it)
#
# While the profiler records (profile_set_ops(1)), _execute times every operation on the thread
# that runs it and appends (name, begin, end, thread, device) here; the front takes them with
# profile_take(). A record is one fixed-size slot with the name inline, so recording is one
# clock read before and after the operation plus a short critical section on its own mutex
# (never the engine's). Off, the cost is the one test of g_prof_ops in _execute.

cdef enum:
    PROF_NAME = 88                 # bytes of a name kept (longer ones are cut)
    PROF_MAX_RECORDS = 1 << 22     # past this many untaken records new ones are counted, dropped
    PROF_MAX_WORKERS = 256

cdef struct ProfRec:
    long long t0                   # CLOCK_MONOTONIC ns (Python's time.monotonic_ns)
    long long t1
    long tid                       # OS thread id
    int dev                        # -1 cpu, k gpu(k)
    void *gpu                      # gpu(k)'s start/stop events around the launch (the GPU
                                   # layer's token), read in profile_take; NULL: host times
    char name[PROF_NAME]

# what is recorded: PROF_SYMBOLIC (operations pushed inside a bound graph's run) and/or
# PROF_IMPERATIVE (the others), decided per operation when it is pushed (op.prof), as MXNet does
cdef int g_prof_ops = 0
cdef int g_prof_api = 0              # API calls are recorded (mxc/_core/api_calls.py sets it)
# The GPU layer's timers (mxc/_core/cuda.pyx sets them): a GPU operation is timed by events its
# device's stream records before and after the work it queues; the elapsed time is read when the
# records are taken, never by synchronising per operation
cdef gpu_timer_begin_fn g_gpu_timer_begin = NULL
cdef gpu_timer_end_fn g_gpu_timer_end = NULL
cdef gpu_timer_read_fn g_gpu_timer_read = NULL
cdef long long g_prof_dev_busy[ENGINE_MAX_DEVICES]   # where gpu(k)'s last timed op ended (ns)
cdef pthread_mutex_t g_prof_mu
cdef ProfRec *g_prof = NULL
cdef Py_ssize_t g_prof_n = 0
cdef Py_ssize_t g_prof_cap = 0
cdef long long g_prof_dropped = 0
cdef ProfRec *g_prof_spare = NULL   # the buffer profile_take emptied, reused (no page faults)
cdef Py_ssize_t g_prof_spare_cap = 0
cdef long g_prof_worker_tid[PROF_MAX_WORKERS]   # engine worker i's thread id (0: none yet)
cdef long g_prof_dev_tid[ENGINE_MAX_DEVICES]    # gpu(d)'s worker's thread id
cdef int g_prof_nworker_tids = 0
pthread_mutex_init(&g_prof_mu, NULL)


cdef void _prof_add(const char *name, long long t0, long long t1, int dev) noexcept nogil:
    _prof_add_gpu(name, t0, t1, dev, NULL)


cdef void _prof_add_gpu(const char *name, long long t0, long long t1, int dev,
                        void *gpu) noexcept nogil:
    cdef ProfRec *grown
    cdef Py_ssize_t cap
    cdef size_t k
    pthread_mutex_lock(&g_prof_mu)
    if g_prof_n == g_prof_cap:
        cap = g_prof_cap * 2 + 1024
        grown = NULL
        if cap <= PROF_MAX_RECORDS:
            grown = <ProfRec*>realloc(g_prof, sizeof(ProfRec) * cap)
        if grown == NULL:
            _prof_drop()
            pthread_mutex_unlock(&g_prof_mu)
            if gpu != NULL:
                g_gpu_timer_read(gpu, NULL)      # its events released unread
            return
        _prof_grow(grown, cap)
    k = strlen(name)
    if k > PROF_NAME - 1:
        k = PROF_NAME - 1
    memcpy(g_prof[g_prof_n].name, name, k)
    g_prof[g_prof_n].name[k] = 0
    g_prof[g_prof_n].t0 = t0
    g_prof[g_prof_n].t1 = t1
    g_prof[g_prof_n].tid = mxc_thread_id()
    g_prof[g_prof_n].dev = dev
    g_prof[g_prof_n].gpu = gpu
    _prof_count(1)
    pthread_mutex_unlock(&g_prof_mu)


cdef inline void _prof_grow(ProfRec *p, Py_ssize_t cap) noexcept nogil:
    global g_prof, g_prof_cap
    g_prof = p
    g_prof_cap = cap


cdef inline void _prof_count(Py_ssize_t d) noexcept nogil:
    global g_prof_n
    g_prof_n += d


cdef inline void _prof_drop() noexcept nogil:
    global g_prof_dropped
    g_prof_dropped += 1


cdef void _prof_name_thread(int dev) noexcept nogil:
    """A worker notes its thread id: dev -1 for a CPU worker, k for gpu(k)'s."""
    global g_prof_nworker_tids
    cdef int i
    if dev >= 0:
        g_prof_dev_tid[dev] = mxc_thread_id()
        return
    pthread_mutex_lock(&g_prof_mu)
    if g_prof_nworker_tids < PROF_MAX_WORKERS:
        g_prof_worker_tid[g_prof_nworker_tids] = mxc_thread_id()
        g_prof_nworker_tids += 1
    pthread_mutex_unlock(&g_prof_mu)


cdef bint profile_recording() noexcept nogil:
    return g_prof_ops


cdef void profile_record(const char *name, long long t0, long long t1, int dev) noexcept nogil:
    _prof_add(name, t0, t1, dev)


cdef long long profile_now_ns() noexcept nogil:
    return mxc_now_ns()


cdef int profile_mask() noexcept nogil:
    return g_prof_ops


cdef bint profile_api_on() noexcept nogil:
    return g_prof_api


def profile_set_api(bint on):
    """Whether the front doors record their calls (api_calls.set_recording keeps it)."""
    global g_prof_api
    g_prof_api = on


cdef void engine_set_gpu_timer(gpu_timer_begin_fn begin, gpu_timer_end_fn end,
                               gpu_timer_read_fn read) noexcept nogil:
    global g_gpu_timer_begin, g_gpu_timer_end, g_gpu_timer_read
    g_gpu_timer_read = read
    g_gpu_timer_end = end
    g_gpu_timer_begin = begin


def profile_set_ops(mask):
    """Record the operations of the kinds in `mask` from now on: PROF_SYMBOLIC (1, pushed while
    the pushing thread runs a bound graph, see profile_graph), PROF_IMPERATIVE (2, the others);
    True is both, 0 (False) none."""
    global g_prof_ops
    if type(mask) is bool:
        mask = (PROF_SYMBOLIC | PROF_IMPERATIVE) if mask else 0
    if mask < 0 or mask > (PROF_SYMBOLIC | PROF_IMPERATIVE):
        raise ValueError(f"profile_set_ops: mask {mask} has bits other than 1 and 2")
    g_prof_ops = mask


def profile_ops_on():
    """Whether operations (of any kind) are being recorded."""
    return bool(g_prof_ops)


def profile_graph(bint on):
    """Mark the calling thread as running a bound graph (True) or not; returns the previous
    mark. Operations pushed while it is on are symbolic for the profiler."""
    cdef int old = mxc_prof_graph()
    mxc_set_prof_graph(on)
    return bool(old)


PROFILE_SYMBOLIC = PROF_SYMBOLIC
PROFILE_IMPERATIVE = PROF_IMPERATIVE


def profile_take():
    """Take the records made so far (they are removed).

    Returns
    -------
    (list, int)
        ``(name, begin_ns, end_ns, thread_id, device)`` tuples in the order they completed
        (times from CLOCK_MONOTONIC, as ``time.monotonic_ns``; device -1 is the cpu), and how
        many records were dropped since the last take because too many were waiting.
    """
    cdef ProfRec *recs
    cdef Py_ssize_t n, i, cap
    cdef long long dropped
    global g_prof, g_prof_n, g_prof_cap, g_prof_dropped, g_prof_spare, g_prof_spare_cap
    with nogil:
        pthread_mutex_lock(&g_prof_mu)
        recs = g_prof
        n = g_prof_n
        cap = g_prof_cap
        dropped = g_prof_dropped
        g_prof = g_prof_spare
        g_prof_cap = g_prof_spare_cap
        g_prof_spare = NULL
        g_prof_spare_cap = 0
        g_prof_n = 0
        g_prof_dropped = 0
        pthread_mutex_unlock(&g_prof_mu)
    try:
        with nogil:
            _prof_gpu_times(recs, n)
        out = [(recs[i].name.decode("utf-8", "replace"), recs[i].t0, recs[i].t1, recs[i].tid,
                recs[i].dev) for i in range(n)]
    finally:
        with nogil:
            pthread_mutex_lock(&g_prof_mu)
            if g_prof_spare == NULL:
                g_prof_spare = recs
                g_prof_spare_cap = cap
                recs = NULL
            pthread_mutex_unlock(&g_prof_mu)
        free(recs)
    return out, dropped


cdef void _prof_gpu_times(ProfRec *recs, Py_ssize_t n) noexcept nogil:
    """A GPU record's times become its work's on the device: the elapsed time between its
    stream's start and stop events, from when the stream reached it (the later of its queuing
    and the end of the device's previous timed work: a stream runs its work in order)."""
    cdef Py_ssize_t i
    cdef long long elapsed, start
    cdef int dev
    for i in range(n):
        if recs[i].gpu == NULL:
            continue
        dev = recs[i].dev
        if g_gpu_timer_read(recs[i].gpu, &elapsed) == 0:
            start = recs[i].t0
            if g_prof_dev_busy[dev] > start:
                start = g_prof_dev_busy[dev]
            recs[i].t0 = start
            recs[i].t1 = start + elapsed
            g_prof_dev_busy[dev] = recs[i].t1
        recs[i].gpu = NULL


def profile_span(str name, long long begin_ns, long long end_ns):
    """Record a span the engine did not run itself (a custom operator's Python code), on the
    calling thread, as if it were an operation (only while recording)."""
    cdef bytes b = name.encode("utf-8", "replace")
    if g_prof_ops:
        _prof_add(b, begin_ns, end_ns, -1)


def profile_api_span(str name, long long begin_ns, long long end_ns):
    """Record a call of the API (its front-door function, named as MXNet's C API function) on
    the calling thread: device -2 in the records. The caller checks that API calls are
    being recorded (mxc/_core/api_calls.py)."""
    cdef bytes b = name.encode("utf-8", "replace")
    _prof_add(b, begin_ns, end_ns, -2)


def profile_scope(name):
    """Set the calling thread's scope to ``name`` (str) or none (None); returns the previous one.

    While the profiler records, operations pushed from a scope are named ``"<scope>::<op>"``
    (MXNet's names for the operations a custom operator runs)."""
    cdef char *old = mxc_prof_scope()
    cdef char *new = NULL
    cdef bytes b
    if name is not None:
        b = str(name).encode("utf-8", "replace")
        new = <char*>malloc(len(b) + 1)
        if new == NULL:
            raise MemoryError()
        memcpy(new, <char*>b, len(b) + 1)
    mxc_set_prof_scope(new)
    if old == NULL:
        return None
    try:
        return old.decode("utf-8", "replace")
    finally:
        free(old)


cdef class ProfileScope:
    """``with ProfileScope(name[, key][, span=True])``: while the profiler records, operations
    pushed by this thread inside the block are named ``"<name>::<op>"`` (``"<name>[key]::<op>"``
    with a key), and with span the block itself is recorded as ``"<name>::pure_python"``.
    Off, entering and leaving test one flag (the name is only formatted when recording)."""
    cdef object name, key, prev, full
    cdef bint span, active
    cdef long long t0

    def __init__(self, name, key=None, bint span=False):
        self.name = name
        self.key = key
        self.span = span
        self.active = False

    def __enter__(self):
        if not g_prof_ops:
            return self
        self.active = True
        self.full = self.name if self.key is None else f"{self.name}[{self.key}]"
        self.prev = profile_scope(self.full)
        self.t0 = mxc_now_ns()
        return self

    def __exit__(self, *exc):
        if not self.active:
            return False
        self.active = False
        if self.span:
            profile_span(f"{self.full}::pure_python", self.t0, mxc_now_ns())
        profile_scope(self.prev)
        return False


def profile_threads():
    """``{thread_id: name}`` of the engine's worker threads started so far."""
    out = {}
    cdef int i
    for i in range(g_prof_nworker_tids):
        out[g_prof_worker_tid[i]] = f"engine worker {i}"
    for i in range(ENGINE_MAX_DEVICES):
        if g_prof_dev_tid[i]:
            out[g_prof_dev_tid[i]] = f"gpu({i}) worker"
    return out

# ---------------------------------------------------------------------------------------------
# vars and error records


cdef VarC* var_new() noexcept nogil:
    cdef VarC *v = <VarC*>mxc_sp_calloc(sizeof(VarC))
    if v != NULL:
        v.refcount = 1
    return v


cdef void var_incref(VarC *v) noexcept nogil:
    mxc_atomic_inc(&v.refcount)


cdef void _err_decref(ErrRec *e) noexcept nogil:   # lock held
    e.refcount -= 1
    if e.refcount == 0:
        free(e)


cdef void var_decref(VarC *v) noexcept nogil:
    if mxc_atomic_dec(&v.refcount) != 0:
        return
    # No op holds a ref, so none is pending on v: only the error record needs the lock.
    if v.release_payload != NULL:
        v.release_payload(v.payload)
    if v.err != NULL:
        _lock()
        _err_decref(v.err)
        _unlock()
    mxc_sp_free(v)


cdef inline ErrRec* _var_err(VarC *v) noexcept nogil:   # lock held
    # A delivered error is gone from every var it reached, as in MXNet (whose vars share one
    # exception_ptr that the delivering wait sets to null): b = f(a) failing on a's error,
    # b.wait_to_read() raises and a.wait_to_read() then does not.
    cdef ErrRec *e = v.err
    if e != NULL and (e.cleared or e.delivered):
        _err_decref(e)
        v.err = NULL
        return NULL
    return e


cdef ErrRec* _new_err(const char *opname, const char *msg) noexcept nogil:
    cdef size_t a = strlen(opname)
    cdef size_t b = strlen(msg)
    cdef ErrRec *e = <ErrRec*>malloc(sizeof(ErrRec) + a + b + 3)
    if e == NULL:
        g_oom_err.cleared = 0     # shared by every failure without memory for its own record
        g_oom_err.delivered = 0
        return &g_oom_err
    e.refcount = 1
    e.delivered = 0
    e.cleared = 0
    e.recorded = 0
    e.msg = <char*>e + sizeof(ErrRec)
    memcpy(e.msg, opname, a)
    e.msg[a] = b':'
    e.msg[a + 1] = b' '
    memcpy(e.msg + a + 2, msg, b)
    e.msg[a + 2 + b] = 0
    return e


cdef void _record(ErrRec *e) noexcept nogil:   # lock held
    cdef int i, j
    cdef ErrRec **grown
    if g_nerrs == g_errcap:
        # drop records no wait can raise any more (delivered and on no var), then grow
        j = 0
        for i in range(g_nerrs):
            if g_errs[i].cleared or (g_errs[i].delivered and g_errs[i].refcount == 1):
                g_errs[i].recorded = 0
                _err_decref(g_errs[i])
            else:
                g_errs[j] = g_errs[i]
                j += 1
        _set_nerrs(j)
    if g_nerrs == g_errcap:
        grown = <ErrRec**>realloc(g_errs, sizeof(ErrRec*) * (g_errcap * 2 + 8))
        if grown == NULL:
            return          # the error still sits on its vars; only wait_for_all misses it
        _set_errs(grown, g_errcap * 2 + 8)
    e.recorded = 1
    e.refcount += 1
    g_errs[g_nerrs] = e
    _set_nerrs(g_nerrs + 1)


# Cython treats a module-level cdef assigned inside a function as local without `global`;
# these setters keep the nogil helpers short.
cdef inline void _set_nerrs(int n) noexcept nogil:
    global g_nerrs
    g_nerrs = n


cdef inline void _set_errs(ErrRec **p, int cap) noexcept nogil:
    global g_errs, g_errcap
    g_errs = p
    g_errcap = cap

# ---------------------------------------------------------------------------------------------
# ready heap (lock held)


cdef inline bint _before(OpBlock *a, OpBlock *b) noexcept nogil:
    return a.priority > b.priority or (a.priority == b.priority and a.seq < b.seq)


cdef void _heap_push(OpBlock *op) noexcept nogil:
    global g_heap_n
    cdef int i = g_heap_n
    cdef int p
    g_heap_n += 1
    while i > 0:
        p = (i - 1) >> 1
        if not _before(op, g_heap[p]):
            break
        g_heap[i] = g_heap[p]
        i = p
    g_heap[i] = op


cdef OpBlock* _heap_pop() noexcept nogil:
    global g_heap_n
    cdef OpBlock *top = g_heap[0]
    cdef OpBlock *last
    cdef int i = 0
    cdef int c
    g_heap_n -= 1
    if g_heap_n == 0:
        return top
    last = g_heap[g_heap_n]
    while True:
        c = 2 * i + 1
        if c >= g_heap_n:
            break
        if c + 1 < g_heap_n and _before(g_heap[c + 1], g_heap[c]):
            c += 1
        if not _before(g_heap[c], last):
            break
        g_heap[i] = g_heap[c]
        i = c
    g_heap[i] = last
    return top


cdef int _reserve_heap() noexcept nogil:   # lock held; the heap never holds more than pending ops
    global g_heap, g_heap_cap
    cdef int cap
    cdef OpBlock **grown
    if g_heap_cap > g_pending:
        return 0
    cap = g_heap_cap * 2 + 64
    grown = <OpBlock**>realloc(g_heap, sizeof(OpBlock*) * cap)
    if grown == NULL:
        return -1
    g_heap = grown
    g_heap_cap = cap
    return 0

# ---------------------------------------------------------------------------------------------
# dependency bookkeeping (lock held)


cdef void _dq_push(OpBlock *op) noexcept nogil:   # lock held
    cdef int d = op.dev
    op.qnext = NULL
    if g_dq_tail[d] != NULL:
        g_dq_tail[d].qnext = op
    else:
        g_dq_head[d] = op
    g_dq_tail[d] = op
    pthread_cond_signal(&g_dq_cond[d])


cdef inline void _make_ready(OpBlock *op) noexcept nogil:
    global g_nsignaled
    global g_inline_go
    if op.dev >= 0 and not g_inline:
        if op == g_inline_try and g_dq_head[op.dev] == NULL and not g_dbusy[op.dev]:
            g_inline_go = True  # its pusher launches it (_register_maybe_inline)
            return
        _dq_push(op)            # GPU op: its device's worker, in order (stream order)
        return
    if op == g_inline_try and g_running == 0 and g_heap_n == 0:
        g_inline_go = True      # a small CPU op, the engine idle: its pusher runs it
        return
    _heap_push(op)
    if g_nidle > g_nsignaled:
        g_nsignaled += 1
        pthread_cond_signal(&g_work_cond)
    elif g_nsleepers > 0:
        # every worker is busy: a sleeping waiter that runs ready ops takes it (see
        # _wait_locked). Broadcast: a signal could wake a polite waiter instead, which would
        # not run it. Polite waiters are not woken per ready op: in an imperative ResNet-18
        # step that cost the waiting thread 2 ms of CPU per step (one wake-up per backward
        # op), taken from the worker's kernel threads on a 2-core machine.
        pthread_cond_broadcast(&g_wait_cond)


cdef inline void _dec_wait(OpBlock *op) noexcept nogil:
    op.wait -= 1
    if op.wait == 0:
        _make_ready(op)


cdef void _grant(VarC *v) noexcept nogil:
    """Grant the head of v's FIFO while it is compatible with what runs on v."""
    cdef DepEntry *e = v.head
    while e != NULL:
        if e.write:
            if v.running_write or v.running_reads:
                break
            v.running_write = 1
            e = e.next
            _dec_wait(v.head.op)
            v.head = e
            break
        if v.running_write:
            break
        v.running_reads += 1
        e = e.next
        _dec_wait(v.head.op)
        v.head = e
    if v.head == NULL:
        v.tail = NULL


cdef void _register(OpBlock *op) noexcept nogil:
    global g_seq
    cdef int i
    cdef VarC *v
    cdef DepEntry *e
    op.seq = g_seq
    g_seq += 1
    op.wait = op.nvars + 1
    mxc_atomic_add_ll(&g_pending, 1)
    for i in range(op.nvars):
        v = op.vars[i]
        e = &op.entries[i]
        e.op = op
        e.next = NULL
        e.write = i < op.nmut
        v.nops += 1
        if v.tail != NULL:
            v.tail.next = e
        else:
            v.head = e
        v.tail = e
        _grant(v)
    _dec_wait(op)


cdef inline OpBlock* _take() noexcept nogil:
    """Pop the best ready op; if one of its inputs holds an error it will skip, carrying it."""
    return _claim(_heap_pop())


cdef OpBlock* _claim(OpBlock *op) noexcept nogil:
    global g_running
    cdef ErrRec *e
    cdef int i
    g_running += 1
    for i in range(op.nvars):
        e = _var_err(op.vars[i])
        if e != NULL:
            e.refcount += 1
            op.err = e
            break
    return op


cdef void _complete(OpBlock *op) noexcept nogil:
    global g_running, g_ncompleted
    cdef ErrRec *e = op.err
    cdef VarC *v
    cdef int i
    cdef bint wake = False
    if e != NULL and not e.recorded:
        _record(e)
    for i in range(op.nvars):
        v = op.vars[i]
        if i < op.nmut:
            # the write leaves its outcome on v: the error, or none (a success clears it)
            if v.err != e:
                if v.err != NULL:
                    _err_decref(v.err)
                v.err = e
                if e != NULL:
                    e.refcount += 1
            v.running_write = 0
        else:
            v.running_reads -= 1
        _grant(v)
        v.nops -= 1
        if v.nops == 0 and v.nwaiters > 0:
            wake = True
    if e != NULL:
        _err_decref(e)
        op.err = NULL
    g_running -= 1
    g_ncompleted += 1
    mxc_atomic_add_ll(&g_pending, -1)
    if g_pending == 0 and g_nwait_all > 0:
        wake = True
    if op.seq < g_cutoff:
        _add_nbefore(-1)
        if g_nbefore == 0 and g_nwait_all > 0:
            wake = True
    if g_nbp > 0 and g_pending < g_max_pending:
        wake = True
    if wake:
        pthread_cond_broadcast(&g_wait_cond)

# ---------------------------------------------------------------------------------------------
# running ops (lock NOT held)


cdef int _execute_timed(OpBlock *op, char *buf) noexcept nogil:
    """Run op and record it; returns its return code. A GPU op is timed by events on its
    device's stream around the work it queues (read later, in profile_take)."""
    cdef void *tok = NULL
    cdef long long t0 = mxc_now_ns()
    cdef int rc
    if op.dev >= 0 and g_gpu_timer_begin != NULL:
        tok = g_gpu_timer_begin(op.dev)
    rc = op.fn(op.arg, buf, ERRBUF)
    if tok != NULL:
        g_gpu_timer_end(tok)
    _prof_add_gpu(op.opname, t0, mxc_now_ns(), op.dev, tok)
    return rc


cdef void _execute(OpBlock *op) noexcept nogil:
    cdef char buf[ERRBUF]
    cdef void *outer = mxc_engine_cur_op()
    cdef int rc
    if op.err == NULL:
        buf[0] = 0
        mxc_engine_set_op(op)
        mxc_engine_add_depth(1)
        if op.prof:              # the profiler's one branch per operation while it is off
            rc = _execute_timed(op, buf)
        else:
            rc = op.fn(op.arg, buf, ERRBUF)
        mxc_engine_add_depth(-1)
        mxc_engine_set_op(outer)
        if rc != 0:
            buf[ERRBUF - 1] = 0
            if buf[0] == 0:
                op.err = _new_err(op.opname, <const char*>"operation failed")
            else:
                op.err = _new_err(op.opname, buf)
            if op.err != NULL:
                op.err.seq = op.seq
    if op.free_arg != NULL:
        op.free_arg(op.arg)


cdef void _release(OpBlock *op) noexcept nogil:
    cdef int i
    for i in range(op.nvars):
        var_decref(op.vars[i])
    mxc_sp_free(op)


cdef inline void _run_taken(OpBlock *op) noexcept nogil:
    """Lock held on entry and exit: run an op popped by _take and finish it."""
    _unlock()
    _execute(op)
    _lock()
    _complete(op)
    _unlock()
    _release(op)
    _lock()


# A waiter outside any op leaves ready ops to a worker that is running one for this long, as
# long as ops complete meanwhile (see _wait_locked). It is also how often such a waiter wakes
# to look: at 2 ms an imperative ResNet-18 step woke it ~45 times and let it run ops beside a
# convolution that merely took longer than that (1.0-1.1 ms of its CPU per step, median);
# 20 ms still bounds the rare wait on an op that waits for a ready one
cdef enum:
    POLITE_NS = 20000000


cdef void _deadline_in(timespec *t, long ns) noexcept nogil:
    clock_gettime(CLOCK_REALTIME, t)
    t.tv_nsec += ns
    if t.tv_nsec >= 1000000000:
        t.tv_sec += 1
        t.tv_nsec -= 1000000000


cdef int _wait_locked(VarC *v, int kind, bint interruptible=False) noexcept nogil:
    """Lock held. Block until: kind 0 -> v has no pending op; 1 -> nothing is pending;
    2 -> pending is under the back-pressure limit; 3 -> every op pushed before the current
    exit/fork drain began is done. Runs ready ops meanwhile (the waiter helps), except that:
    - an interruptible waiter (a Python thread, which takes Ctrl-C) leaves Python operations to
      the workers when there are any: Ctrl-C must stop the wait, not the user's operation;
    - a waiter outside any op is polite: while a worker runs an op, it leaves the ready ones to
      the workers, because every kernel already spreads over all cores and two at once
      oversubscribe them (ResNet-18's imperative step was about 15% slower when the waiter ran
      ops beside the worker). It helps once no op has completed for POLITE_NS: the running op may
      be waiting for one of the ready ones.
    Returns -1 when nothing can ever make progress (no workers, and the only running ops are
    the ones this thread itself is inside)."""
    global g_nsleepers
    cdef bint done, timed_out, polite, helper
    cdef bint stalled = False, armed = False
    cdef uint64_t seen = 0
    cdef timespec deadline
    while True:
        if kind == 0:
            done = v.nops == 0
        elif kind == 1:
            done = g_pending == 0
        elif kind == 3:
            done = g_nbefore == 0
        else:
            done = g_pending < g_max_pending
        if done:
            return 0
        polite = False
        if g_heap_n > 0 and not (interruptible and g_nstarted > 0 and not g_inline
                                 and g_heap[0].fn == _py_exec):
            # an op whose kernels fork teams is left to a worker (woken when it was made
            # ready): on this thread they would compute on one core (engine_team_thread)
            if (stalled or (g_running == 0 and not g_heap[0].team) or g_inline
                    or g_nstarted == 0 or mxc_engine_depth() > 0):
                stalled = armed = False
                _run_taken(_take())
                continue
            polite = True
        if g_inline and g_running <= mxc_engine_depth():
            # no workers, and every running op is up this thread's own stack
            return -1
        # a waiter that would run a ready op is woken when one becomes ready (_make_ready);
        # a polite one wakes on its own deadline, a waiter with nothing to run when its var,
        # or everything, is done (_complete)
        helper = stalled or g_inline or g_nstarted == 0 or mxc_engine_depth() > 0
        if helper:
            g_nsleepers += 1
        if polite:
            if not armed or g_ncompleted != seen:
                # (re)start the window in which some op must complete
                armed = True
                seen = g_ncompleted
                _deadline_in(&deadline, POLITE_NS)
            timed_out = pthread_cond_timedwait(&g_wait_cond, &g_mu, &deadline) != 0
            if helper:
                g_nsleepers -= 1
            if timed_out:
                if g_ncompleted == seen:
                    stalled = True
                elif interruptible:
                    return 2
            continue
        if interruptible:
            # wake up now and then so that the waiting Python thread can take Ctrl-C
            _deadline_in(&deadline, 100000000)
            timed_out = pthread_cond_timedwait(&g_wait_cond, &g_mu, &deadline) != 0
            if helper:
                g_nsleepers -= 1
            if timed_out:
                return 2
            continue
        if helper:
            pthread_cond_wait(&g_wait_cond, &g_mu)
            g_nsleepers -= 1
        else:
            # not woken when an op becomes ready: look again after the polite window, so that
            # a worker stuck in an op that waits for a ready one is still helped
            _deadline_in(&deadline, POLITE_NS)
            pthread_cond_timedwait(&g_wait_cond, &g_mu, &deadline)


cdef bint engine_team_thread() noexcept nogil:
    """Whether a kernel running on this thread may fork an OpenMP team: an engine worker may,
    and so may any thread when the engine has no workers (NaiveEngine). Another thread running
    an op (the Python thread while it waits, a small op inline) computes on one thread. libgomp
    keeps a pool of threads for every thread that ever forked a team, and once its pools hold
    more threads than there are cores it cuts every barrier's spin to ~100 iterations for good:
    every team then sleeps and wakes at each barrier. A waiting Python thread that ran one op
    with two threads, racing the worker's wake-up, left MLP training at 36k samples/s instead
    of 46k (3 pooled threads on 2 cores; ~21 sleeps per step on each team thread, not ~1)."""
    return mxc_engine_is_worker() or g_nworkers == 0


def team_thread_address():
    """engine_team_thread's address, for C code that cannot cimport it (csrc/mxc/blas.h's gate)."""
    return <uintptr_t>engine_team_thread


cdef void* _worker_main(void *unused) noexcept nogil:
    global g_nidle, g_nsignaled
    cdef OpBlock *op
    cdef OpBlock *nxt
    mxc_engine_set_worker(1)
    _prof_name_thread(-1)
    _lock()
    while True:
        while g_heap_n == 0 and not g_stop:
            g_nidle += 1
            pthread_cond_wait(&g_work_cond, &g_mu)
            g_nidle -= 1
            if g_nsignaled > 0:
                g_nsignaled -= 1
        if g_stop:
            # leftovers (pushed after the exit drain began) run inline in whoever pushes or waits
            break
        op = _take()
        _unlock()
        while op != NULL:
            _execute(op)
            _lock()
            _complete(op)
            # take the next one in the same critical section: one lock round per op
            nxt = _take() if g_heap_n > 0 and not g_stop else NULL
            _unlock()
            _release(op)
            op = nxt
        _lock()
    _unlock()
    return NULL


cdef void* _device_worker_main(void *arg) noexcept nogil:
    """One per GPU: runs that device's ops in push order (they enqueue on its stream)."""
    cdef int d = <int><size_t>arg
    cdef OpBlock *op
    mxc_engine_set_worker(1)
    _prof_name_thread(d)
    _lock()
    while True:
        while (g_dq_head[d] == NULL and not g_stop) or g_dbusy[d]:
            pthread_cond_wait(&g_dq_cond[d], &g_mu)
        op = g_dq_head[d]
        if op == NULL:
            break                 # stopping, queue empty
        g_dq_head[d] = op.qnext
        if g_dq_head[d] == NULL:
            g_dq_tail[d] = NULL
        g_dbusy[d] = 1
        _run_taken(_claim(op))
        g_dbusy[d] = 0
    _unlock()
    return NULL


cdef int _start_device_worker(int d) except -1:
    if pthread_create(&g_dthreads[d], NULL, _device_worker_main, <void*><size_t>d) != 0:
        raise MXNetError(f"mxc engine: could not start the worker thread of gpu({d})")
    g_dstarted[d] = 1
    return 0


cdef void _drain_inline() noexcept nogil:
    _lock()
    while g_heap_n > 0:
        _run_taken(_take())
    _unlock()


cdef int _start_workers() except -1:
    global g_threads, g_nstarted
    cdef int i
    if g_threads == NULL:
        g_threads = <pthread_t*>calloc(g_nworkers, sizeof(pthread_t))
        if g_threads == NULL:
            raise MemoryError("mxc engine: out of memory starting workers")
    for i in range(g_nstarted, g_nworkers):
        if pthread_create(&g_threads[i], NULL, _worker_main, NULL) != 0:
            if g_nstarted == 0:
                raise MXNetError("mxc engine: could not start a worker thread")
            break
        g_nstarted += 1
    return 0

# ---------------------------------------------------------------------------------------------
# the C-level API


cdef int _ptr_cmp(const void *a, const void *b) noexcept nogil:
    cdef size_t x = <size_t>(<VarC**>a)[0]
    cdef size_t y = <size_t>(<VarC**>b)[0]
    return (x > y) - (x < y)


cdef int _dedupe(VarC **dst, VarC **mut, int nmut, VarC **cst, int nconst,
                 int *out_nmut) noexcept nogil:
    """Write the distinct vars to dst, mutable first (a var in both lists is mutable)."""
    cdef int n = 0, i, j, k, m
    cdef VarC *v
    cdef VarC **tmp
    if nmut + nconst <= 4 * SMALL:
        for i in range(nmut + nconst):
            v = mut[i] if i < nmut else cst[i - nmut]
            for j in range(n):
                if dst[j] == v:
                    break
            else:
                dst[n] = v
                n += 1
            if i == nmut - 1:
                out_nmut[0] = n
        if nmut == 0:
            out_nmut[0] = 0
        return n
    # large lists: sort copies, then merge
    tmp = <VarC**>malloc(sizeof(VarC*) * (nmut + nconst))
    if tmp == NULL:
        return -1
    memcpy(tmp, mut, sizeof(VarC*) * nmut)
    memcpy(tmp + nmut, cst, sizeof(VarC*) * nconst)
    qsort(tmp, nmut, sizeof(VarC*), _ptr_cmp)
    qsort(tmp + nmut, nconst, sizeof(VarC*), _ptr_cmp)
    for i in range(nmut):
        if i == 0 or tmp[i] != tmp[i - 1]:
            dst[n] = tmp[i]
            n += 1
    m = n
    out_nmut[0] = m
    k = 0
    for i in range(nmut, nmut + nconst):
        v = tmp[i]
        if i > nmut and v == tmp[i - 1]:
            continue
        while k < m and <size_t>dst[k] < <size_t>v:
            k += 1
        if k < m and dst[k] == v:
            continue
        dst[n] = v
        n += 1
    free(tmp)
    return n


# Set while a planned graph records its kernel calls into one bulk operation
# (handle.capture_begin): a push from any other path is refused with PushRefused before anything
# is queued, so the caller runs that step on its own, in order.
cdef int g_refuse_push = 0


class PushRefused(RuntimeError):
    """A push made while kernel calls are being captured for a bulk operation."""


def _set_refuse_push(int on):
    global g_refuse_push
    g_refuse_push = on


cdef int push_native(exec_fn fn, void *arg, free_fn free_arg,
                     VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                     int priority, const char *opname) except -1:
    """Queue fn(arg) reading const_vars and writing mutable_vars. Holding the GIL.

    On success the engine owns arg: free_arg(arg) runs (no GIL) once the op ran or skipped.
    When this raises, nothing was queued and the caller still owns arg.
    """
    # The device comes from push_native_dev through g_next_dev, read and reset here before
    # anything could release the GIL (pushes hold it), so the CPU hot path stays one call.
    cdef int dev = g_next_dev
    cdef bint may_inline = g_next_launch and not g_inline and (dev >= 0 or g_inline_small)
    cdef bint team = g_next_team
    _set_next_dev(-1)
    cdef int i, n, nm = 0
    if g_refuse_push:
        raise PushRefused("push while capturing kernel calls")
    cdef size_t name_len
    cdef size_t total
    cdef OpBlock *op
    cdef char *p
    cdef bint block
    if fn == NULL:
        raise ValueError("mxc engine: push_native needs an exec function")
    if nconst < 0 or nmut < 0 or (nconst > 0 and const_vars == NULL) or \
            (nmut > 0 and mutable_vars == NULL):
        raise ValueError("mxc engine: bad var list passed to push_native")
    for i in range(nconst):
        if const_vars[i] == NULL:
            raise ValueError("mxc engine: NULL var in const_vars")
    for i in range(nmut):
        if mutable_vars[i] == NULL:
            raise ValueError("mxc engine: NULL var in mutable_vars")
    if opname == NULL:
        opname = b"operator"
    cdef char *scope = mxc_prof_scope() if g_prof_ops else NULL
    cdef size_t scope_len = strlen(scope) + 2 if scope != NULL else 0
    name_len = strlen(opname) + scope_len
    n = nconst + nmut
    total = sizeof(OpBlock) + <size_t>n * (sizeof(VarC*) + sizeof(DepEntry)) + name_len + 1
    op = <OpBlock*>mxc_sp_alloc(total)
    if op == NULL:
        raise MemoryError("mxc engine: out of memory queueing an operation")
    p = <char*>op + sizeof(OpBlock)
    op.entries = <DepEntry*>p
    op.vars = <VarC**>(p + <size_t>n * sizeof(DepEntry))
    op.opname = <char*>(p + <size_t>n * (sizeof(VarC*) + sizeof(DepEntry)))
    if scope != NULL:            # "MyOp::_plus_scalar", as MXNet names a custom op's operations
        memcpy(op.opname, scope, scope_len - 2)
        op.opname[scope_len - 2] = b':'
        op.opname[scope_len - 1] = b':'
    memcpy(op.opname + scope_len, opname, name_len - scope_len + 1)
    n = _dedupe(op.vars, mutable_vars, nmut, const_vars, nconst, &nm)
    if n < 0:
        mxc_sp_free(op)
        raise MemoryError("mxc engine: out of memory queueing an operation")
    op.nvars = n
    op.nmut = nm
    op.fn = fn
    op.arg = arg
    op.free_arg = free_arg
    op.priority = priority
    op.err = NULL
    op.dev = dev
    op.team = team
    # recorded when it runs if the profiler records its kind now (MXNet decides at push too)
    op.prof = g_prof_ops & (PROF_SYMBOLIC if mxc_prof_graph() else PROF_IMPERATIVE)
    if not g_inline and g_nstarted < g_nworkers:
        try:
            _start_workers()
        except BaseException:
            mxc_sp_free(op)
            raise
    if dev >= 0 and not g_inline and not g_dstarted[dev]:
        try:
            _start_device_worker(dev)
        except BaseException:
            mxc_sp_free(op)
            raise
    for i in range(n):
        var_incref(op.vars[i])

    # Pushes from inside an operation never block: what they would wait for may need them.
    block = (not g_inline and mxc_atomic_load_ll(&g_pending) >= g_max_pending
             and mxc_engine_cur_op() == NULL and not mxc_engine_is_worker())
    if block:
        with nogil:
            _lock()
            _set_nbp(1)
            _wait_locked(NULL, 2)
            _set_nbp(-1)
            i = _reserve_heap()
            if i == 0:
                _register_maybe_inline(op, may_inline)
            _unlock()
    else:
        _lock()
        i = _reserve_heap()
        if i == 0:
            _register_maybe_inline(op, may_inline)
        _unlock()
    if i != 0:
        for i in range(n):
            var_decref(op.vars[i])
        mxc_sp_free(op)
        raise MemoryError("mxc engine: out of memory queueing an operation")
    if g_inline:
        with nogil:
            _drain_inline()
    return 0


cdef int g_next_dev = -1
cdef bint g_next_launch = False


cdef bint g_next_team = False


cdef inline void _set_next_dev(int d, bint launch=False, bint team=False) noexcept nogil:
    global g_next_dev, g_next_launch, g_next_team
    g_next_dev = d
    g_next_launch = launch
    g_next_team = team


# MXC_ENGINE_INLINE_SMALL=0: every CPU op goes to a worker (push_native_small = push_native)
cdef bint g_inline_small = env_int("MXC_ENGINE_INLINE_SMALL", 1) != 0


cdef void _register_maybe_inline(OpBlock *op, bint may_inline) noexcept nogil:
    """Lock held: _register(op). A kernel launch pushed by a thread outside any op, ready at
    once, with its device idle and nothing queued before it, is launched here by its pusher
    instead of the device's worker: a launch only enqueues on the stream (a few us), and handing
    it to the worker thread and back cost two thread wake-ups per op (on the fake driver, most
    of an op + wait). Its device is busy meanwhile, so push order on the stream holds.
    A small CPU op (push_native_small) ready at once while no op runs or waits to run is run
    here too: waking the sleeping worker for it costs more than the kernel (a 64-float add is
    ~0.1 us, a wake-up several us, and on a loaded machine the worker may wait for a core)."""
    global g_inline_try, g_inline_go
    cdef int d = op.dev
    if not (may_inline and mxc_engine_cur_op() == NULL and not mxc_engine_is_worker()):
        _register(op)
        return
    g_inline_try = op
    _register(op)
    g_inline_try = NULL
    if not g_inline_go:
        return
    g_inline_go = False
    if d < 0:
        _run_taken(_claim(op))
        return
    g_dbusy[d] = 1
    _run_taken(_claim(op))
    g_dbusy[d] = 0
    if g_dq_head[d] != NULL:
        pthread_cond_signal(&g_dq_cond[d])


cdef int push_native_dev(exec_fn fn, void *arg, free_fn free_arg,
                         VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                         int priority, const char *opname, int dev) except -1:
    """push_native for device `dev`'s worker (dev >= 0), or any worker (dev -1)."""
    if dev < -1 or dev >= ENGINE_MAX_DEVICES:
        raise ValueError(f"mxc engine: device {dev} out of range [0, {ENGINE_MAX_DEVICES})")
    _set_next_dev(dev)
    return push_native(fn, arg, free_arg, const_vars, nconst, mutable_vars, nmut, priority,
                       opname)


cdef int push_native_launch(exec_fn fn, void *arg, free_fn free_arg,
                            VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                            const char *opname, int dev) except -1:
    """push_native_dev for an op that only enqueues work on gpu(dev)'s stream and never
    blocks (a kernel launch): when it is ready at once and the device is idle, the pushing
    thread runs it (_register_maybe_inline)."""
    if dev < 0 or dev >= ENGINE_MAX_DEVICES:
        raise ValueError(f"mxc engine: device {dev} out of range [0, {ENGINE_MAX_DEVICES})")
    _set_next_dev(dev, True)
    return push_native(fn, arg, free_arg, const_vars, nconst, mutable_vars, nmut, 0, opname)


cdef int push_native_team(exec_fn fn, void *arg, free_fn free_arg,
                          VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                          int priority, const char *opname) except -1:
    """push_native for a CPU op whose kernels fork OpenMP teams: a waiter leaves it to a worker
    (run by the waiter, it would compute on one thread: engine_team_thread)."""
    _set_next_dev(-1, False, True)
    return push_native(fn, arg, free_arg, const_vars, nconst, mutable_vars, nmut, priority,
                       opname)


cdef int push_native_small(exec_fn fn, void *arg, free_fn free_arg,
                           VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                           const char *opname) except -1:
    """push_native for a short CPU op (a kernel on a few KiB): when it is ready at once and the
    engine is idle, the pushing thread runs it (_register_maybe_inline)."""
    _set_next_dev(-1, True)
    return push_native(fn, arg, free_arg, const_vars, nconst, mutable_vars, nmut, 0, opname)


cdef inline void _set_nbp(int d) noexcept nogil:
    global g_nbp
    g_nbp += d


cdef bint _op_uses(OpBlock *op, VarC *v) noexcept nogil:
    cdef int i
    for i in range(op.nvars):
        if op.vars[i] == v:
            return True
    return False


cdef object _interrupt = None      # the exception a signal handler raised during a wait


cdef int _poll_signals() noexcept with gil:
    """Run pending Python signal handlers (Ctrl-C) for a thread blocked in a wait; 1 if one
    raised (kept in _interrupt for the waiter to re-raise)."""
    global _interrupt
    try:
        PyErr_CheckSignals()
    except BaseException as e:
        _interrupt = e
        return 1
    return 0


cdef int _wait_interruptible(VarC *v, int kind) noexcept nogil:
    """Lock held: _wait_locked, polling Python's signal handlers between timed sleeps; 2 when
    a handler raised (the caller re-raises it with _reraise_interrupt)."""
    cdef int rc = _wait_locked(v, kind, True)
    while rc == 2:
        _unlock()
        if _poll_signals():
            _lock()
            return 2
        _lock()
        rc = _wait_locked(v, kind, True)
    return rc


cdef inline void _reraise_interrupt() except *:
    global _interrupt
    cdef object e = _interrupt
    if e is not None:
        _interrupt = None
        raise e


cdef int wait_var(VarC *v) except -1:
    """Block (GIL released) until every op pushed on v is done; raise the error v holds."""
    return _wait_var(v, True)


cdef int wait_var_queued(VarC *v) except -1:
    """wait_var without the device wait: for a var on a GPU, return once its ops are queued on
    the device's stream (a caller that enqueues behind them waits for its own work instead)."""
    return _wait_var(v, False)


cdef int _wait_var(VarC *v, bint device) except -1:
    cdef OpBlock *cur = <OpBlock*>mxc_engine_cur_op()
    cdef ErrRec *e = NULL
    cdef int rc = 0
    if v == NULL:
        raise ValueError("mxc engine: wait_var on a NULL var")
    if cur != NULL and _op_uses(cur, v):
        raise MXNetError(
            f"{cur.opname.decode('utf-8', 'replace')}: an operation waited on a variable it "
            "reads or writes itself; that can never finish")
    _lock()
    if v.nops == 0 and _var_err(v) == NULL:
        _unlock()
        return _sync_gpu(v.gpu - 1) if device and v.gpu > 0 else 0
    _unlock()
    with nogil:
        _lock()
        v.nwaiters += 1
        rc = _wait_interruptible(v, 0)
        v.nwaiters -= 1
        if rc == 0:
            e = _var_err(v)
            if e != NULL:
                v.err = NULL          # delivered: v's reference moves to us
                e.delivered = 1
        _unlock()
    if rc == 2:
        _reraise_interrupt()      # Ctrl-C: the operations go on; a later wait finds them done
    if rc != 0:
        raise MXNetError("mxc engine: wait on a variable whose operations wait for the running "
                         "one (NaiveEngine) can never finish")
    if e != NULL:
        msg = e.msg.decode("utf-8", "replace")
        _lock()
        _err_decref(e)
        _unlock()
        raise error_from(msg)
    return _sync_gpu(v.gpu - 1) if device and v.gpu > 0 else 0


cdef int _sync_gpu(int dev) except -1:
    """The engine wait is over (the writers are queued on the device's stream): wait for the
    stream up to now (dev k), or every device's (-1). Raises the CUDA error, naming the op."""
    cdef char buf[ERRBUF]
    cdef int rc
    if g_gpu_sync == NULL:
        return 0
    buf[0] = 0
    with nogil:
        rc = g_gpu_sync(dev, buf, ERRBUF)
    if rc != 0:
        buf[ERRBUF - 1] = 0
        raise MXNetError(buf.decode("utf-8", "replace") or "CUDA error")
    return 0

# ---------------------------------------------------------------------------------------------
# Python API


cdef class Var:
    """An engine variable: operations that read or write it are ordered through it.

    ``Var()`` makes a fresh var and owns one reference to it, dropped when the object dies
    (the var itself lives on while queued operations still use it).
    """

    def __cinit__(self):
        self.c = var_new()
        if self.c == NULL:
            raise MemoryError("mxc engine: out of memory creating a var")

    def __dealloc__(self):
        if self.c != NULL:
            var_decref(self.c)
            self.c = NULL

    def wait(self):
        """Block until every operation pushed on this var is done.

        Raises
        ------
        MXNetError
            If the last operation writing the var failed (or skipped because its own inputs
            had failed); the error is then cleared from the var.
        """
        wait_var(self.c)

    def __repr__(self):
        return f"<mxc.engine.Var at 0x{<size_t>self.c:x}>"


cdef int _py_call(object fn, char *err, size_t errlen) noexcept:
    cdef bytes msg
    cdef size_t k
    try:
        fn()
        return 0
    except BaseException as exc:
        try:
            text = f"{type(exc).__name__}: {exc}"
        except BaseException:
            text = type(exc).__name__
        msg = text.encode("utf-8", "replace")
        k = min(<size_t>len(msg), errlen - 1)
        memcpy(err, <char*>msg, k)
        err[k] = 0
        return -1


cdef int _py_exec(void *arg, char *err, size_t errlen) noexcept nogil:
    with gil:
        return _py_call(<object>arg, err, errlen)


cdef void _py_free(void *arg) noexcept nogil:
    with gil:
        Py_XDECREF(<PyObject*>arg)


cdef int _gather(object seq, VarC **stack, VarC ***out, const char *what) except -1:
    """Fill a VarC* array from a sequence of Var (stack storage when short)."""
    cdef Py_ssize_t n = len(seq), i
    cdef VarC **arr = stack
    if n > SMALL:
        arr = <VarC**>malloc(sizeof(VarC*) * n)
        if arr == NULL:
            raise MemoryError("mxc engine: out of memory")
    for i, v in enumerate(seq):
        if not isinstance(v, Var):
            if arr != stack:
                free(arr)
            raise TypeError(f"push: {what.decode()} must hold engine Vars, got {type(v).__name__}")
        arr[i] = (<Var>v).c
    out[0] = arr
    return 0


def push(fn, const_vars=(), mutable_vars=(), int priority=0, name=None, int device=-1):
    """Queue a Python callable as an engine operation.

    Parameters
    ----------
    fn : callable
        Called with no arguments on a worker thread (holding the GIL) once every earlier
        operation writing ``const_vars`` and every earlier one touching ``mutable_vars`` is done.
    const_vars : sequence of Var
        Vars the operation reads.
    mutable_vars : sequence of Var
        Vars the operation writes (a var in both lists counts as written).
    priority : int
        Among ready operations, higher runs first; ties run in push order.
    name : str, optional
        Operation name used in error messages; defaults to ``fn.__name__``.
    device : int
        -1: any worker. k >= 0: gpu(k)'s worker, in push order with that device's other
        operations (a Python op that enqueues on the device's stream, e.g. cuBLAS via CuPy).

    Notes
    -----
    An exception raised by ``fn`` is stored on ``mutable_vars`` as
    ``"<name>: <ExceptionType>: <message>"`` and raised as ``MXNetError`` by the next wait.
    """
    cdef VarC *cst_stack[SMALL]
    cdef VarC *mut_stack[SMALL]
    cdef VarC **cst = NULL
    cdef VarC **mut = NULL
    if not callable(fn):
        raise TypeError(f"push: fn must be callable, got {type(fn).__name__}")
    const_vars = tuple(const_vars)
    mutable_vars = tuple(mutable_vars)
    if name is None:
        name = getattr(fn, "__name__", None) or "python_op"
    bname = str(name).encode("utf-8", "replace")
    _gather(const_vars, cst_stack, &cst, b"const_vars")
    try:
        _gather(mutable_vars, mut_stack, &mut, b"mutable_vars")
        Py_INCREF(fn)
        try:
            push_native_dev(_py_exec, <void*>fn, _py_free, cst, len(const_vars),
                            mut, len(mutable_vars), priority, bname, device)
        except BaseException:
            Py_XDECREF(<PyObject*>fn)
            raise
    finally:
        if cst != cst_stack:
            free(cst)
        if mut != NULL and mut != mut_stack:
            free(mut)


def wait_for_var(Var var):
    """Block until every operation pushed on ``var`` is done; raise its stored error.

    Raises
    ------
    MXNetError
        ``"<opname>: <message>"`` of the failure the var holds; the error is then cleared.
    """
    wait_var(var.c)


def error_pending(Var var):
    """True while an operation on `var` is queued or running, or `var` holds an error no wait
    has delivered yet (it does not wait, and delivers nothing)."""
    cdef bint r
    _lock()
    r = var.c.nops > 0 or _var_err(var.c) != NULL
    _unlock()
    return r


def wait_for_all():
    """Block until every pushed operation is done.

    Raises
    ------
    MXNetError
        The first error stored since the previous ``wait_for_all`` that no wait has raised
        yet. All errors stored so far are then cleared, from the vars too (as in MXNet).
    """
    cdef int rc, i, best
    cdef char *first = NULL
    cdef char *copy = NULL
    cdef size_t k
    if mxc_engine_cur_op() != NULL:
        raise MXNetError("mxc engine: wait_for_all inside an operation can never finish "
                         "(the operation itself is pending)")
    with nogil:
        _lock()
        _add_wait_all(1)
        rc = _wait_interruptible(NULL, 1)
        _add_wait_all(-1)
        _unlock()
    if rc == 2:
        _reraise_interrupt()
    if rc != 0:
        raise MXNetError("mxc engine: wait_for_all can never finish (NaiveEngine)")
    _lock()
    # with several workers, errors are recorded in completion order: report the earliest pushed
    best = -1
    for i in range(g_nerrs):
        if not g_errs[i].delivered and not g_errs[i].cleared and (
                best < 0 or g_errs[i].seq < g_errs[best].seq):
            best = i
    for i in range(g_nerrs):
        if first == NULL and i == best:
            first = g_errs[i].msg
            # a C copy: no Python object may be made under the lock (GC could free a Var,
            # whose release takes the lock)
            k = strlen(first)
            copy = <char*>malloc(k + 1)
            if copy != NULL:
                memcpy(copy, first, k + 1)
        g_errs[i].cleared = 1
        g_errs[i].recorded = 0
        _err_decref(g_errs[i])
    _set_nerrs(0)
    _unlock()
    if first == NULL:
        _sync_gpu(-1)            # and the devices' streams (each, not device-wide)
    if first != NULL:
        if copy == NULL:
            raise MXNetError("mxc engine: an operation failed (out of memory copying its error)")
        try:
            msg = copy.decode("utf-8", "replace")
        finally:
            free(copy)
        raise error_from(msg)


cdef inline void _add_wait_all(int d) noexcept nogil:
    global g_nwait_all
    g_nwait_all += d


cdef inline void _add_nbefore(long long d) noexcept nogil:
    global g_nbefore
    g_nbefore += d


cdef void _drain_pushed_before_now() noexcept nogil:
    """Wait (helping) until every op pushed so far is done, ignoring later pushes: a thread
    that never stops pushing must not hang exit or fork."""
    global g_cutoff, g_nbefore
    _lock()
    if g_nbefore == 0:           # no drain in progress: start one
        g_cutoff = g_seq
        g_nbefore = g_pending
    _add_wait_all(1)
    _wait_locked(NULL, 3)
    _add_wait_all(-1)
    _unlock()


def engine_type():
    """Name of the engine kind in use (``MXNET_ENGINE_TYPE``, default ThreadedEnginePerDevice)."""
    return _engine_type


def num_workers():
    """Number of worker threads (``MXNET_CPU_WORKER_NTHREADS``; 0 for NaiveEngine)."""
    return g_nworkers


def pending():
    """Number of operations queued or running."""
    return mxc_atomic_load_ll(&g_pending)


def max_pending():
    """Back-pressure limit (``MXC_ENGINE_MAX_PENDING``): pushes block beyond it."""
    return g_max_pending


def _shutdown():
    """atexit: finish queued work, then stop and join the workers; later pushes run inline."""
    global g_inline, g_stop, g_nstarted
    cdef int i, n
    if g_inline and g_nstarted == 0:
        return
    if mxc_engine_cur_op() != NULL or mxc_engine_is_worker():
        return
    with nogil:
        _drain_pushed_before_now()
        _lock()
        g_inline = 1
        g_stop = 1
        pthread_cond_broadcast(&g_work_cond)
        for i in range(ENGINE_MAX_DEVICES):
            pthread_cond_broadcast(&g_dq_cond[i])
        n = g_nstarted
        _unlock()
        for i in range(n):
            pthread_join(g_threads[i], NULL)
        for i in range(ENGINE_MAX_DEVICES):
            if g_dstarted[i]:
                pthread_join(g_dthreads[i], NULL)
                g_dstarted[i] = 0
    g_nstarted = 0


def wait_for_pushed():
    """Block until every operation pushed before this call is done; later pushes are not
    waited for (a thread that never stops pushing cannot hang the caller), and errors stay on
    their vars. The profiler's exit uses it to record what was pushed before exit."""
    if g_inline or mxc_engine_cur_op() != NULL or mxc_engine_is_worker():
        return
    with nogil:
        _drain_pushed_before_now()


def _before_fork():
    # Finish queued work so the child inherits a consistent, idle engine (MXNet stops its engine
    # around fork for the same reason). Skipped inside an operation, where it could not finish.
    if g_inline or mxc_engine_cur_op() != NULL or mxc_engine_is_worker():
        return
    with nogil:
        _drain_pushed_before_now()


def _after_fork_child():
    # Threads do not survive fork: fresh locks, no workers (started again by the next push).
    global g_nstarted, g_nidle, g_nsignaled, g_nsleepers, g_nwait_all, g_nbp, g_stop, g_threads
    global g_running
    _init_sync()
    g_nstarted = 0
    g_nidle = 0
    g_nsignaled = 0
    g_nsleepers = 0
    g_nwait_all = 0
    g_nbp = 0
    g_stop = 0
    g_running = 0
    free(g_threads)
    g_threads = NULL
    mxc_engine_set_worker(0)
    # the profiler: the parent's records and workers are not the child's; its thread id is new
    global g_prof, g_prof_n, g_prof_cap, g_prof_nworker_tids, g_prof_spare, g_prof_spare_cap
    pthread_mutex_init(&g_prof_mu, NULL)
    free(g_prof)
    g_prof = NULL
    g_prof_n = g_prof_cap = 0
    free(g_prof_spare)
    g_prof_spare = NULL
    g_prof_spare_cap = 0
    g_prof_nworker_tids = 0
    for i in range(ENGINE_MAX_DEVICES):
        g_prof_dev_tid[i] = 0
    mxc_reset_thread_id()


atexit.register(_shutdown)
os.register_at_fork(before=_before_fork, after_in_child=_after_fork_child)

# ---------------------------------------------------------------------------------------------
# test-only native operations (tests/_core/test_engine.py): they run without the GIL so the
# tests exercise real parallel workers. Not part of the API.

cdef enum:
    MAXIDX = 16

cdef struct _AffineArg:
    uint64_t *data
    int nin
    int nout
    int idx[MAXIDX]
    uint64_t k


cdef int _affine_exec(void *arg, char *err, size_t errlen) noexcept nogil:
    # data[o_j] = data[o_j] * 31 + sum(data[inputs]) + k + j   (uint64 wrap-around)
    cdef _AffineArg *a = <_AffineArg*>arg
    cdef uint64_t s = 0
    cdef int j
    for j in range(a.nin):
        s += a.data[a.idx[j]]
    for j in range(a.nout):
        a.data[a.idx[a.nin + j]] = a.data[a.idx[a.nin + j]] * 31 + s + a.k + <uint64_t>j
    return 0


cdef struct _RecArg:
    long long *rec
    int slot
    long long usec
    int gate


cdef int g_test_gate = 0
cdef int g_test_order = 0


cdef int _rec_exec(void *arg, char *err, size_t errlen) noexcept nogil:
    # rec[3*slot] = begin ns, rec[3*slot+1] = end ns, rec[3*slot+2] = start order
    cdef _RecArg *a = <_RecArg*>arg
    a.rec[3 * a.slot] = mxc_now_ns()
    a.rec[3 * a.slot + 2] = mxc_atomic_inc(&g_test_order)
    if a.gate:
        while mxc_atomic_load_i(&g_test_gate) == 0:
            mxc_sleep_us(50)
    elif a.usec > 0:
        mxc_sleep_us(a.usec)
    a.rec[3 * a.slot + 1] = mxc_now_ns()
    return 0


cdef int _fail_exec(void *arg, char *err, size_t errlen) noexcept nogil:
    cdef const char *msg = <const char*>arg
    cdef size_t k = strlen(msg)
    if k > errlen - 1:
        k = errlen - 1
    memcpy(err, msg, k)
    err[k] = 0
    return -1


cdef int _noop_exec(void *arg, char *err, size_t errlen) noexcept nogil:
    return 0


cdef class _Int64Buffer:
    """Test-only int64 array that native test ops read and write (wait before reading it)."""
    cdef long long *data
    cdef Py_ssize_t n

    def __cinit__(self, Py_ssize_t n):
        self.data = <long long*>calloc(max(n, 1), sizeof(long long))
        if self.data == NULL:
            raise MemoryError()
        self.n = n

    def __dealloc__(self):
        free(self.data)

    def __len__(self):
        return self.n

    def __getitem__(self, Py_ssize_t i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.data[i]

    def __setitem__(self, Py_ssize_t i, long long x):
        if not 0 <= i < self.n:
            raise IndexError(i)
        self.data[i] = x

    def tolist(self):
        return [self.data[i] for i in range(self.n)]

    def tolist_u64(self):
        return [<uint64_t>self.data[i] for i in range(self.n)]


cdef int _push_test(exec_fn fn, void *arg, free_fn fr, reads, writes, int priority,
                    str name, int device=-1) except -1:
    cdef VarC *cs[SMALL]
    cdef VarC *ms[SMALL]
    cdef VarC **c = NULL
    cdef VarC **m = NULL
    _gather(reads, cs, &c, b"reads")
    try:
        _gather(writes, ms, &m, b"writes")
        push_native_dev(fn, arg, fr, c, len(reads), m, len(writes), priority, name.encode(),
                        device)
    finally:
        if c != cs:
            free(c)
        if m != NULL and m != ms:
            free(m)
    return 0


def _push_affine(_Int64Buffer buf, vars, outs, ins, uint64_t k, int priority=0,
                 str name="affine"):
    """Test: buf[o_j] = buf[o_j]*31 + sum(buf[ins]) + k + j as a native op on vars[ins]/vars[outs]."""
    if len(ins) + len(outs) > MAXIDX:
        raise ValueError("_push_affine: too many indices")
    for i in list(ins) + list(outs):
        if not 0 <= i < buf.n:
            raise IndexError(i)
    cdef _AffineArg *a = <_AffineArg*>malloc(sizeof(_AffineArg))
    if a == NULL:
        raise MemoryError()
    a.data = <uint64_t*>buf.data
    a.nin = len(ins)
    a.nout = len(outs)
    for j, i in enumerate(list(ins) + list(outs)):
        a.idx[j] = i
    a.k = k
    try:
        _push_test(_affine_exec, a, free, [vars[i] for i in ins], [vars[o] for o in outs],
                   priority, name)
    except BaseException:
        free(a)
        raise


def _push_record(_Int64Buffer rec, int slot, reads=(), writes=(), long long usec=0,
                 bint gate=False, int priority=0, str name="record", int device=-1):
    """Test: record begin/end ns and start order in rec[3*slot:3*slot+3]; sleep usec or wait
    for _test_gate(1)."""
    if not 0 <= 3 * slot + 2 < rec.n:
        raise IndexError(slot)
    cdef _RecArg *a = <_RecArg*>malloc(sizeof(_RecArg))
    if a == NULL:
        raise MemoryError()
    a.rec = rec.data
    a.slot = slot
    a.usec = usec
    a.gate = gate
    try:
        _push_test(_rec_exec, a, free, tuple(reads), tuple(writes), priority, name, device)
    except BaseException:
        free(a)
        raise


def _push_fail(reads=(), writes=(), str message="failed", str name="fail", int device=-1):
    """Test: a native op that fails with ``message``."""
    cdef bytes m = message.encode()
    cdef char *s = <char*>malloc(len(m) + 1)
    if s == NULL:
        raise MemoryError()
    memcpy(s, <char*>m, len(m) + 1)
    try:
        _push_test(_fail_exec, s, free, tuple(reads), tuple(writes), 0, name, device)
    except BaseException:
        free(s)
        raise


def _test_gate(int value):
    """Test: open (1) or close (0) the gate that gated _push_record ops wait on."""
    mxc_atomic_store_i(&g_test_gate, value)


def _test_order_reset():
    mxc_atomic_store_i(&g_test_order, 0)


def _bench_native(int nchain=1000, int nsingle=1000):
    """Measure engine overhead with a no-op native exec_fn, entirely from C.

    Returns
    -------
    dict
        ``chain_us_per_op``: push of ``nchain`` ops writing one var, then one wait, per op;
        ``single_us``: one push then its wait, averaged over ``nsingle`` rounds.
    """
    cdef Var v = Var()
    cdef VarC *c = v.c
    cdef long long t0, t1, t2
    cdef int i
    t0 = mxc_now_ns()
    for i in range(nchain):
        push_native(_noop_exec, NULL, NULL, NULL, 0, &c, 1, 0, b"noop")
    wait_var(c)
    t1 = mxc_now_ns()
    for i in range(nsingle):
        push_native(_noop_exec, NULL, NULL, NULL, 0, &c, 1, 0, b"noop")
        wait_var(c)
    t2 = mxc_now_ns()
    return {"chain_us_per_op": (t1 - t0) / 1e3 / nchain, "single_us": (t2 - t1) / 1e3 / nsingle}
