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


cdef VarC* var_new() noexcept nogil
cdef void var_incref(VarC *v) noexcept nogil
cdef void var_decref(VarC *v) noexcept nogil
cdef int push_native(exec_fn fn, void *arg, free_fn free_arg,
                     VarC **const_vars, int nconst, VarC **mutable_vars, int nmut,
                     int priority, const char *opname) except -1
cdef int wait_var(VarC *v) except -1


cdef class Var:
    cdef VarC *c
