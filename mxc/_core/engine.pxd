# The dependency engine's C-level contract (see docs/engine.md).
#
# Other modules cimport this file: an NDArray chunk owns a VarC (payload = its storage block),
# an operator call is pushed with push_native, readers block in wait_var.
from libc.stdint cimport int64_t, uint64_t

# 0 on success; -1 and a NUL-terminated message in err (at most errlen bytes) on failure.
ctypedef int (*exec_fn)(void *arg, char *err, size_t errlen) noexcept nogil
ctypedef void (*free_fn)(void *arg) noexcept nogil


cdef struct ErrRec:
    # An error stored on vars; shared by every var it reached. Fields change under the engine lock.
    int refcount
    int delivered        # raised by some wait_var already (wait_for_all skips it)
    int cleared          # wait_for_all cleared it: vars holding it count as clean
    int recorded         # sits in the engine's list for wait_for_all
    unsigned long long seq   # push order of the failing op: wait_for_all reports the earliest
    char *msg            # "<opname>: <message>"


cdef struct OpBlock


cdef struct DepEntry:
    # One (op, var) pair waiting in the var's FIFO for its grant.
    OpBlock *op
    DepEntry *next
    int write


cdef struct VarC:
    void *payload                # set by the owner after var_new()
    free_fn release_payload      # called once, any thread, no GIL, when refcount reaches 0
    void *data                   # the memory this var guards, for its owner (the engine never
                                 # reads it); NDArray chunks set it when they allocate, lazily
    int refcount                 # atomic
    int gpu                      # 0: host memory; k + 1: memory on gpu(k), whose stream the
                                 # host must synchronise with after the engine wait (set by
                                 # the owner, like data)
    # everything below is the engine's, guarded by its lock
    int running_reads            # granted reads not yet completed
    int running_write            # 1 while a granted write runs
    int nwaiters                 # threads blocked in wait_var on this var
    int64_t nops                 # pushed ops touching this var, not completed
    DepEntry *head               # FIFO of ops not yet granted
    DepEntry *tail
    ErrRec *err                  # error stored by the last write, or NULL


cdef struct OpBlock:
    exec_fn fn
    void *arg
    free_fn free_arg
    VarC **vars                  # distinct vars: mutable ones first, then the read-only ones
    DepEntry *entries            # one per var, same order
    int nvars
    int nmut
    int wait                     # grants still missing (+1 while the push registers)
    int priority
    uint64_t seq                 # push order
    ErrRec *err                  # own failure, or the input error that made it skip
    char *opname
    int dev                      # -1: any worker; k >= 0: gpu(k)'s worker (its CUDA stream)
    OpBlock *qnext               # link in the device queue
    int prof                     # nonzero: the profiler records it (set at push)
    int team                     # its kernels may fork OpenMP teams (push_native_team): a
                                 # waiter leaves it to a worker (engine.pyx, _wait_locked)


cdef VarC* var_new() noexcept nogil
cdef void var_incref(VarC *v) noexcept nogil
cdef void var_decref(VarC *v) noexcept nogil
cdef int push_native(exec_fn fn, void *arg, free_fn free_arg,
                     VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                     int priority, const char *opname) except -1
cdef int wait_var(VarC *v) except -1
cdef int wait_var_queued(VarC *v) except -1     # a GPU var: until its ops are on the stream
# May a kernel running on this thread fork an OpenMP team (engine.pyx says why not always)
cdef bint engine_team_thread() noexcept nogil

# GPU operations (mxc/_core/cuda.pyx): pushed with the device id, they run in push order on that
# device's own worker thread (MXNet's ThreadedEnginePerDevice), which owns the device's stream.
# Such an op only enqueues work on the stream, so it completes (for the engine) once queued.
cdef enum:
    ENGINE_MAX_DEVICES = 16
cdef int push_native_dev(exec_fn fn, void *arg, free_fn free_arg,
                         VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                         int priority, const char *opname, int dev) except -1
# A kernel launch (enqueues on the stream, never blocks): the pusher runs it itself when it is
# ready at once and the device's worker is idle with nothing queued (two thread hand-offs saved)
cdef int push_native_launch(exec_fn fn, void *arg, free_fn free_arg,
                            VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                            const char *opname, int dev) except -1
# A short CPU op (a kernel on a few KiB): the pusher runs it itself when it is ready at once and
# no op runs or waits to run (a worker wake-up costs more than the kernel)
cdef int push_native_small(exec_fn fn, void *arg, free_fn free_arg,
                           VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                           const char *opname) except -1
# A CPU op large enough that its kernels fork OpenMP teams: a waiting thread leaves it to a
# worker rather than run it itself (only the workers fork teams: engine_team_thread)
cdef int push_native_team(exec_fn fn, void *arg, free_fn free_arg,
                          VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                          int priority, const char *opname) except -1
# Host-side synchronisation with a device, called without the GIL: after wait_var on a var with
# gpu = k + 1 (dev k), and by wait_for_all for every device (dev -1). Returns 0, or -1 with the
# CUDA error (naming the operator) in err.
ctypedef int (*gpu_sync_fn)(int dev, char *err, size_t errlen) noexcept nogil
cdef void engine_set_gpu_sync(gpu_sync_fn fn) noexcept nogil


cdef class Var:
    cdef VarC *c

# The profiler's records (mxc/profiler.py drives them): whether operations are being recorded,
# and a record of part of an operation (a bulk operation's kernels, handle.pyx) on the calling
# thread, times from profile_now_ns (CLOCK_MONOTONIC ns).
cdef enum:
    PROF_SYMBOLIC = 1            # operations pushed while a bound graph runs
    PROF_IMPERATIVE = 2          # the others
cdef bint profile_recording() noexcept nogil
cdef int profile_mask() noexcept nogil     # which of those kinds are recorded now
cdef bint profile_api_on() noexcept nogil  # API calls are recorded (C code's test)
# GPU timing (mxc/_core/cuda.pyx): begin records a start event on gpu(dev)'s stream and returns
# a token (NULL: none), end records the stop event, read waits for the stop event, writes the
# elapsed ns (unless ns is NULL) and releases the token; 0, or -1 when it could not be read.
ctypedef void *(*gpu_timer_begin_fn)(int dev) noexcept nogil
ctypedef void (*gpu_timer_end_fn)(void *tok) noexcept nogil
ctypedef int (*gpu_timer_read_fn)(void *tok, long long *ns) noexcept nogil
cdef void engine_set_gpu_timer(gpu_timer_begin_fn begin, gpu_timer_end_fn end,
                               gpu_timer_read_fn read) noexcept nogil
cdef void profile_record(const char *name, long long t0, long long t1, int dev) noexcept nogil
cdef long long profile_now_ns() noexcept nogil
