"""NDArray handles: chunks of storage owned by engine vars, array views on them, and the push of
kernels onto the engine. The NDArray class (mxc/ndarray/ndarray.py) subclasses
NDArrayBase; everything on the per-operator hot path lives here, in C."""
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, strlen
cimport numpy as cnp
import numpy as np

from mxc._core._types cimport mxc_opcall, mxc_kernel, mxc_tensor, MXC_MAX_NDIM
from mxc._core.engine cimport (Var, VarC, push_native, push_native_small, push_native_team,
                               wait_var, free_fn,
                               profile_mask, profile_record, profile_now_ns, PROF_SYMBOLIC,
                               profile_api_on)
from mxc._core.storage cimport Block, storage_alloc, storage_free
from mxc._core.opcall cimport new_call, free_call, run_call, fill_attrs, capped_threads
from mxc._core.opcall import DTYPE_CODE, CODE_DTYPE
from mxc.base import MXNetError, env_int
from mxc._core.api_calls import timed as _api_timed

cnp.import_array()

cdef extern from *:
    """
    static inline void *mxc_load_ptr(void **p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void mxc_store_ptr(void **p, void *v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int mxc_cas_ptr(void **p, void *expected, void *desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE);
    }
    """
    void *mxc_load_ptr(void **p) noexcept nogil
    void mxc_store_ptr(void **p, void *v) noexcept nogil
    int mxc_cas_ptr(void **p, void *expected, void *desired) noexcept nogil

cdef extern from "mxc/smallpool.h" nogil:
    void *mxc_sp_alloc(size_t n)
    void mxc_sp_free(void *p)

cdef extern from "<stdio.h>" nogil:
    int snprintf(char *buf, size_t n, const char *fmt, ...)

cdef enum:
    MAX_STACK_VARS = 16


cdef void _release_block(void *b) noexcept nogil:
    storage_free(<Block*>b)


cdef void _release_pyobj(void *o) noexcept nogil:
    # external memory (numpy / DLPack producer): drop the owner's reference; workers hold no GIL
    with gil:
        Py_DECREF(<object>o)


cdef class Chunk(Var):
    def __repr__(self):
        return f"<Chunk {self.nbytes} bytes @{self.dev_type}:{self.dev_id}>"


cdef object _cuda = None


cdef object cuda_module():
    global _cuda
    if _cuda is None:
        from mxc._core import cuda
        _cuda = cuda
    return _cuda


cdef Chunk alloc_chunk(size_t nbytes, int dev_type, int dev_id):
    """A chunk whose block is allocated lazily (chunk_ensure) from the pooled storage."""
    if dev_type == 2:
        cuda_module().ensure_device(dev_id)      # MXNetError naming the missing device
    cdef Chunk c = Chunk()
    c.c.gpu = dev_id + 1 if dev_type == 2 else 0
    c.c.payload = NULL
    c.c.release_payload = _release_block      # storage_free(NULL) is a no-op
    c.c.data = NULL
    c.nbytes = nbytes
    c.dev_type = dev_type
    c.dev_id = dev_id
    return c


cdef int chunk_ensure(VarC *v, size_t nbytes, int dev_type, int dev_id) noexcept nogil:
    """Give v its storage block if it has none. Safe from any thread: concurrent readers of a
    never-written chunk may race here, so the block is installed with a compare-and-swap."""
    cdef Block *b
    if mxc_load_ptr(&v.data) != NULL:
        return 0
    b = storage_alloc(nbytes, dev_type, dev_id)
    if b == NULL:
        return -1
    if not mxc_cas_ptr(&v.payload, NULL, <void*>b):
        storage_free(b)            # another thread won; use its block
    mxc_store_ptr(&v.data, (<Block*>mxc_load_ptr(&v.payload)).ptr)
    return 0


cdef Chunk external_chunk(object owner, void *ptr, size_t nbytes):
    """A chunk over memory someone else owns (a numpy array, a DLPack tensor): no copy."""
    cdef Chunk c = Chunk()
    Py_INCREF(owner)
    c.c.payload = <void*><PyObject*>owner
    c.c.release_payload = _release_pyobj
    c.c.data = ptr
    c.nbytes = nbytes
    c.dev_type = 1
    c.dev_id = 0
    return c


cdef inline int64_t _prod(tuple shape) except -1:
    cdef int64_t n = 1
    cdef object d
    for d in shape:
        if d < 0:
            raise ValueError(f"negative dimension in shape {shape}")
        n *= <int64_t>d
    return n


cdef class NDArrayBase:
    """Shape, dtype, context and a byte offset into a chunk; the chunk's var orders every access."""

    @property
    def shape(self):
        return self._shape

    @property
    def size(self):
        return self._size

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def context(self):
        return self._ctx

    @property
    def ctx(self):
        return self._ctx

    @property
    def dtype(self):
        return self._dtype.type

    @property
    def handle(self):
        return self._chunk

    def _same_memory(self, NDArrayBase other):
        return self._chunk is other._chunk

    cdef void* data_ptr(self) except NULL:
        cdef Chunk c = self._chunk
        if chunk_ensure(c.c, c.nbytes, c.dev_type, c.dev_id) != 0:
            raise MemoryError(f"mxc: cannot allocate {c.nbytes} bytes")
        return <char*>c.c.data + self._offset

    def wait_to_read(self):
        """Block until every pending operation on this array's storage is done; raise its error."""
        if profile_api_on():     # the profiler records API calls (profile_api)
            _api_timed("MXNDArrayWaitToRead", wait_var_of, self)
        else:
            wait_var(self._chunk.c)

    def _numpy_view(self):
        """A numpy array sharing this array's memory (the caller waited first). Keeps it alive."""
        if self._chunk.dev_type == 2:
            raise MXNetError(f"{self._ctx}: a GPU array has no host view; use asnumpy()")
        cdef cnp.npy_intp dims[MXC_MAX_NDIM]
        cdef int i, nd = len(self._shape)
        for i in range(nd):
            dims[i] = self._shape[i]
        arr = cnp.PyArray_SimpleNewFromData(nd, dims, self._dtype.num, self.data_ptr())
        cnp.set_array_base(arr, self)
        return arr

    def asnumpy(self):
        """Wait for pending writes, then copy into a new numpy array (as MXNet)."""
        if profile_api_on():     # the profiler records API calls (profile_api)
            return _api_timed("MXNDArraySyncCopyToCPU", self._to_numpy)
        return self._to_numpy()

    def _to_numpy(self):
        if self._chunk.dev_type == 2:
            return cuda_module().to_numpy(self)
        wait_var(self._chunk.c)
        out = np.empty(self._shape, self._dtype)
        cdef size_t n = <size_t>self._size * self._itemsize
        cdef void *dst = cnp.PyArray_DATA(out)
        cdef void *src = self.data_ptr()
        if n >= 1 << 20:
            with nogil:
                memcpy(dst, src, n)
        else:
            memcpy(dst, src, n)
        return out

    # Python operators: see _binop at the end of this file
    def __add__(self, other): return _binop(self, other, 0, False, False)
    def __radd__(self, other): return _binop(self, other, 0, True, False)
    def __iadd__(self, other): return _binop(self, other, 0, False, True)
    def __sub__(self, other): return _binop(self, other, 1, False, False)
    def __rsub__(self, other): return _binop(self, other, 1, True, False)
    def __isub__(self, other): return _binop(self, other, 1, False, True)
    def __mul__(self, other): return _binop(self, other, 2, False, False)
    def __rmul__(self, other): return _binop(self, other, 2, True, False)
    def __imul__(self, other): return _binop(self, other, 2, False, True)
    def __truediv__(self, other): return _binop(self, other, 3, False, False)
    def __rtruediv__(self, other): return _binop(self, other, 3, True, False)
    def __itruediv__(self, other): return _binop(self, other, 3, False, True)
    def __mod__(self, other): return _binop(self, other, 4, False, False)
    def __rmod__(self, other): return _binop(self, other, 4, True, False)
    def __imod__(self, other): return _binop(self, other, 4, False, True)
    def __pow__(self, other, modulo=None): return _binop(self, other, 5, False, False)
    def __rpow__(self, other, modulo=None): return _binop(self, other, 5, True, False)
    def __ipow__(self, other): return _binop(self, other, 5, False, True)
    def __eq__(self, other): return _binop(self, other, 6, False, False)
    def __ne__(self, other): return _binop(self, other, 7, False, False)
    def __gt__(self, other): return _binop(self, other, 8, False, False)
    def __ge__(self, other): return _binop(self, other, 9, False, False)
    def __lt__(self, other): return _binop(self, other, 10, False, False)
    def __le__(self, other): return _binop(self, other, 11, False, False)
    __hash__ = object.__hash__


cpdef NDArrayBase make_array(type cls, Chunk chunk, Py_ssize_t offset, tuple shape, object dtype, object ctx):
    """Wrap (chunk, offset) as an instance of `cls` (NDArray); checks the view fits the chunk."""
    cdef NDArrayBase a = cls.__new__(cls)
    dtype = np.dtype(dtype)
    cdef int64_t size = _prod(shape)
    if len(shape) > MXC_MAX_NDIM:
        raise ValueError(f"mxc arrays have at most {MXC_MAX_NDIM} dimensions, got shape {shape}")
    if offset < 0 or <size_t>(offset + size * dtype.itemsize) > chunk.nbytes:
        raise ValueError(f"view of {size} x {dtype} at byte {offset} overruns a chunk of {chunk.nbytes} bytes")
    a._chunk = chunk
    a._offset = offset
    a._shape = shape
    a._dtype = dtype
    a._dcode = DTYPE_CODE[dtype]
    a._itemsize = dtype.itemsize
    a._size = size
    a._ctx = ctx
    a._ag = None
    return a


def adopt(NDArrayBase dst, NDArrayBase src):
    """Make `dst`, a new instance nothing has filled (``NDArray(handle)``: the Python constructor
    runs on what __new__ made), another view of src's storage, as make_array makes views."""
    if dst._chunk is not None:
        raise ValueError("adopt: the array already has storage")
    dst._chunk = src._chunk
    dst._offset = src._offset
    copy_layout(dst, src)


cpdef NDArrayBase empty(type cls, tuple shape, object dtype, object ctx):
    """A new array with fresh (uninitialised) pooled storage."""
    dtype = np.dtype(dtype)
    if dtype not in DTYPE_CODE:
        raise TypeError(f"mxc does not support dtype {dtype}")
    cdef int64_t size = _prod(shape)
    cdef Chunk c = alloc_chunk(<size_t>size * dtype.itemsize, ctx.device_typeid, ctx.device_id)
    return make_array(cls, c, 0, shape, dtype, ctx)


def from_numpy(type cls, src, ctx, dtype=None):
    """A new array holding a copy of numpy array `src` (converted to `dtype`)."""
    # (np.ascontiguousarray would turn a 0-d array into shape (1,))
    cdef cnp.ndarray a = np.asarray(src, dtype=dtype, order="C")
    cdef NDArrayBase out = empty(cls, (<object>a).shape, a.dtype, ctx)
    if out._chunk.dev_type == 2:
        return cuda_module().from_numpy(out, a)
    cdef size_t n = a.nbytes
    cdef void *dst = out.data_ptr()
    cdef void *s = cnp.PyArray_DATA(a)
    with nogil:
        memcpy(dst, s, n)
    return out


def wrap_numpy(type cls, cnp.ndarray a, ctx):
    """Share a C-contiguous numpy array's memory (no copy); the array stays alive with the chunk."""
    if not a.flags.c_contiguous:
        raise ValueError("wrap_numpy needs a C-contiguous array")
    cdef Chunk c = external_chunk(a, cnp.PyArray_DATA(a), a.nbytes)
    return make_array(cls, c, 0, (<object>a).shape, a.dtype, ctx)


# A queued kernel call: the call, plus where each tensor's memory will come from. Pointers are
# resolved when the op runs, after its output chunks got their blocks (lazily), so a long queue
# of pending work holds no memory for results that do not exist yet.
cdef struct TensorRef:
    VarC *var
    size_t nbytes
    Py_ssize_t offset
    int dev_type
    int dev_id

cdef struct Pushed:
    mxc_opcall *call
    int n              # nin + nout; TensorRef refs[n] follow the struct
    int compute_bound  # a GEMM-like kernel (push_kernel's compute_bound)


cdef inline TensorRef* _refs(Pushed *p) noexcept nogil:
    return <TensorRef*>(<char*>p + sizeof(Pushed))


cdef Pushed* _new_pushed(mxc_kernel kernel, int nin, int nout) except NULL:
    cdef mxc_opcall *call = new_call(kernel, nin, nout)
    cdef Pushed *p = <Pushed*>mxc_sp_alloc(sizeof(Pushed) + <size_t>(nin + nout) * sizeof(TensorRef))
    if p == NULL:
        free_call(call)
        raise MemoryError("mxc: out of memory queueing an operator")
    p.call = call
    p.n = nin + nout
    p.compute_bound = 0
    return p


cdef void _free_pushed(void *arg) noexcept nogil:
    free_call((<Pushed*>arg).call)
    mxc_sp_free(arg)


cdef int _resolve_pushed(Pushed *p, char *err, size_t errlen) noexcept nogil:
    """Allocate the call's chunks where not yet done and set its data pointers."""
    cdef TensorRef *r = _refs(p)
    cdef int i
    for i in range(p.n):                      # call.out directly follows call.inp
        if chunk_ensure(r[i].var, r[i].nbytes, r[i].dev_type, r[i].dev_id) != 0:
            snprintf(err, errlen, "out of memory allocating %zu bytes", r[i].nbytes)
            return -1
        p.call.inp[i].data = <char*>r[i].var.data + r[i].offset
    return 0


cdef int _run_pushed(void *arg, char *err, size_t errlen) noexcept nogil:
    cdef Pushed *p = <Pushed*>arg
    if _resolve_pushed(p, err, errlen) != 0:
        return -1
    return run_call(p.call, err, errlen)


cdef inline int _set_tensor(Pushed *p, int i, NDArrayBase a) except -1:
    """Describe array `a` as tensor i (inputs first, then outputs) of the queued call."""
    cdef mxc_tensor *t = &p.call.inp[i]
    cdef TensorRef *r = &_refs(p)[i]
    cdef Chunk c = a._chunk
    cdef int k, nd = len(a._shape)
    t.data = NULL
    t.dtype = a._dcode
    t.ndim = nd
    t.size = a._size
    for k in range(nd):
        t.shape[k] = a._shape[k]
    r.var = c.c
    r.nbytes = c.nbytes
    r.offset = a._offset
    r.dev_type = c.dev_type
    r.dev_id = c.dev_id
    return 0


# A kernel call on at most SMALL_CALL_BYTES (inputs and outputs together) is short enough for
# its pusher to run it when the engine is idle (engine.push_native_small). One on more than its
# team bytes a waiting thread leaves to a worker (engine.push_native_team), whose kernels fork
# OpenMP teams, where the waiter's own run would compute on one thread; below them one thread
# beats a worker's wake-up (25-55 us here) and the hand-back. Where that lies depends on the work
# per byte: COMPUTE_TEAM_BYTES for GEMM-like kernels (push_kernel's compute_bound, from the
# kernel's family in mxc/ops/registry.py) and bulk sequences holding such a call (a static
# CachedOp's forward: the MLP's three products waited for each step ran on the waiter at ~590 us
# each against ~330 on the team), STREAM_TEAM_BYTES for the others.
# A GEMM on 768 KiB of arrays took 350 us alone against ~275 with a team, and a ReLU on 65,536
# floats (512 KiB) 6-7 us alone against 13 handed to the worker.
cdef enum:
    SMALL_CALL_BYTES = 16384
    COMPUTE_TEAM_BYTES = 262144
    STREAM_TEAM_BYTES = 4194304


cdef inline int _push_call(Pushed *p, VarC **vars, int nin, int nout, const char *name,
                           size_t nbytes, size_t team_bytes=STREAM_TEAM_BYTES) except -1:
    if nbytes <= SMALL_CALL_BYTES:
        return push_native_small(_run_pushed, p, _free_pushed, vars, nin, vars + nin, nout, name)
    if nbytes > team_bytes:
        return push_native_team(_run_pushed, p, _free_pushed, vars, nin, vars + nin, nout, 0,
                                name)
    return push_native(_run_pushed, p, _free_pushed, vars, nin, vars + nin, nout, 0, name)


cdef inline int _cpu_only(NDArrayBase a, bytes name) except -1:
    """A CPU kernel must never get device memory."""
    if a._chunk.dev_type == 2:
        raise MXNetError(f"{name.decode()}: this operator has no GPU kernel in mxc yet (an "
                         f"array is on {a._ctx}); run it on mx.cpu()")
    return 0


def push_kernel(uintptr_t kernel, list inputs, list outputs, iattr, fattr, bytes name,
                int nthreads=1, int req=1, bint compute_bound=False):
    """Queue `kernel` on the engine: it reads `inputs` and writes `outputs` (NDArrayBase lists).
    compute_bound: a GEMM-like kernel, which a waiting thread leaves to a worker from fewer bytes
    of arrays (COMPUTE_TEAM_BYTES, not STREAM_TEAM_BYTES).

    Shapes and dtypes were checked by the operator's inference; this only builds the call."""
    cdef int nin = len(inputs), nout = len(outputs), i
    cdef Pushed *p = _new_pushed(<mxc_kernel>kernel, nin, nout)
    cdef VarC *stack_vars[MAX_STACK_VARS]
    cdef VarC **vars = stack_vars
    cdef NDArrayBase a
    cdef size_t nbytes = 0
    try:
        if nin + nout > MAX_STACK_VARS:
            vars = <VarC**>malloc(sizeof(VarC*) * (nin + nout))
            if vars == NULL:
                raise MemoryError()
        for i in range(nin):
            a = <NDArrayBase?>inputs[i]
            _cpu_only(a, name)
            _set_tensor(p, i, a)
            vars[i] = a._chunk.c
            nbytes += <size_t>a._size * a._itemsize
        for i in range(nout):
            a = <NDArrayBase?>outputs[i]
            _cpu_only(a, name)
            _set_tensor(p, nin + i, a)
            vars[nin + i] = a._chunk.c
            nbytes += <size_t>a._size * a._itemsize
        if iattr or fattr:
            fill_attrs(p.call, iattr, fattr)
        p.call.req = req
        p.call.nthreads = nthreads
        p.compute_bound = compute_bound
        if g_capture is not None:          # recorded for a bulk operation (KernelSeq), not run
            g_capture.append((<uintptr_t>p, inputs, outputs, name))
            return
        _push_call(p, vars, nin, nout, name, nbytes,
                   COMPUTE_TEAM_BYTES if compute_bound else STREAM_TEAM_BYTES)
    except BaseException:
        _free_pushed(p)          # push_native raising means nothing was queued
        raise
    finally:
        if vars != stack_vars:
            free(vars)


# ---- bulk execution: a planned graph's kernel calls as one engine operation ------------------
# A bound executor (or a static CachedOp) runs the same kernel calls on the same arrays every
# time. Between capture_begin() and capture_end() push_kernel records its calls instead of
# queueing them (any other push is refused by the engine, see engine.PushRefused); a KernelSeq
# made from them queues all of them as ONE engine operation reading and writing the union of
# their arrays, and runs them in order on one worker. The calls are kept and reused; their
# data pointers are resolved at each run, as for a single call.

cdef extern from *:
    """
    static inline int mxc_seq_inc(int *p) { return __atomic_add_fetch(p, 1, __ATOMIC_RELAXED); }
    static inline int mxc_seq_dec(int *p) { return __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL); }
    """
    int mxc_seq_inc(int *p) noexcept nogil
    int mxc_seq_dec(int *p) noexcept nogil

cdef extern from "<stdio.h>" nogil:
    int snprintf(char *s, size_t n, const char *fmt, ...)

cdef object g_capture = None


def capture_begin():
    """Start recording push_kernel calls (refusing every other push)."""
    global g_capture
    from mxc._core import engine as _engine
    g_capture = []
    _engine._set_refuse_push(1)


def capture_end(bint keep=True):
    """Stop recording; returns the recorded calls (freed instead when keep is False)."""
    global g_capture
    from mxc._core import engine as _engine
    cdef list got = g_capture if g_capture is not None else []
    g_capture = None
    _engine._set_refuse_push(0)
    if not keep:
        for entry in got:
            _free_pushed(<void*><uintptr_t>entry[0])
        return []
    return got


def capture_discard(list calls):
    """Free recorded calls that will not be run."""
    for entry in calls:
        _free_pushed(<void*><uintptr_t>entry[0])


def wait_var_of(NDArrayBase a):
    """Block until the pending operations on `a`'s storage are done (its wait_to_read)."""
    wait_var(a._chunk.c)


cdef extern from "mxc/tiled_chain.h" nogil:
    int mxc_run_tiled_chain(mxc_opcall **calls, int m, int64_t n, int nthreads, int *bad,
                            char *err, size_t errlen)


cdef struct SeqOp:
    int refs                 # the KernelSeq's, plus one per queued run (atomic)
    int n
    Pushed **items
    char **labels            # the graph node each call belongs to (error messages), then,
                             # after its NUL, the call's operator name (the profiler's)
    int *chain               # per item: length of the fused chain starting there (0: none)
    int64_t *chain_n         # its element count


# ---- fusion of pointwise chains ----------------------------------------------------------------
# The kernels whose out[i] depends only on the inputs at i (their addresses; the operator layer
# installs them, see mxc/ops/fusion.py). Consecutive calls of them over one element count run
# tile by tile as one chain (csrc/mxc/tiled_chain.h); MXNET_USE_FUSION=0 turns that off.
cdef object g_pointwise_source = None     # () -> addresses; installed by the operator layer
cdef frozenset g_pointwise = None         # asked of it at the first bulk operation
# chains shorter than this many elements fit in cache unfused; longer than MAX_CHAIN calls is
# split (the per-thread call copies are on the heap, their pointers on the stack)
cdef int64_t CHAIN_MIN_ELEMS = 32768
DEF MAX_CHAIN = 64


def set_pointwise_source(source):
    """Install `source`, a function giving the addresses of the pointwise kernels (the operator
    layer's; asked once, when a bulk operation first forms, so importing loads no kernel
    table for it)."""
    global g_pointwise_source, g_pointwise
    g_pointwise_source = source
    g_pointwise = None


cdef frozenset _pointwise():
    global g_pointwise
    if g_pointwise is None:
        g_pointwise = frozenset(int(a) for a in (g_pointwise_source() if g_pointwise_source
                                                 is not None else ()))
    return g_pointwise


def fusion_enabled():
    return env_int("MXNET_USE_FUSION", 1) != 0


def chain_min_elems():
    """Element count from which a pointwise chain is fused."""
    return CHAIN_MIN_ELEMS


cdef int64_t _pointwise_size(uintptr_t ptr, list inputs, list outputs):
    """The element count of a pointwise call whose tensors all hold it, else -1."""
    cdef Pushed *p = <Pushed*>ptr
    cdef NDArrayBase a
    cdef int64_t n
    if <uintptr_t>p.call.kernel not in _pointwise() or not outputs:
        return -1
    n = (<NDArrayBase?>outputs[0])._size
    for x in inputs + outputs:
        a = <NDArrayBase?>x
        if a._size != n or a._chunk.dev_type == 2:
            return -1
    return n


cdef bint _overlaps_badly(dict ranges, list arrays):
    """Whether one of `arrays` overlaps a range in `ranges` ({chunk id: [(start, end,
    itemsize)]}) other than exactly (same start and element size); adds their ranges."""
    cdef NDArrayBase a
    cdef list new = []
    for x in arrays:
        a = <NDArrayBase>x
        start, end = a._offset, a._offset + a._size * a._itemsize
        for s0, e0, it0 in ranges.get(id(a._chunk), ()):
            if start < e0 and s0 < end and (start != s0 or a._itemsize != it0):
                return True
        new.append((id(a._chunk), (start, end, a._itemsize)))
    for k, r in new:
        ranges.setdefault(k, []).append(r)
    return False


def find_runs(list sizes, list arrays, int64_t min_elems, int max_len=MAX_CHAIN):
    """[(first, length, elements)] of the fusable runs of a sequence of calls: sizes[i] is
    call i's element count when it is pointwise (else -1) and arrays[i] its inputs + outputs;
    a run is at least 2 consecutive pointwise calls over one count of at least `min_elems`
    whose arrays overlap only exactly (same start and element size), so element i of every
    call depends only on element i of the others. The one chain notion of the CPU's tiled
    chains and the GPU's generated kernels (mxc/ops/cuda/fusion.py)."""
    cdef list found = []
    cdef int i = 0, j, n = len(sizes)
    cdef int64_t size
    while i < n:
        size = sizes[i]
        if size < 0 or size < min_elems:
            i += 1
            continue
        ranges = {}
        _overlaps_badly(ranges, arrays[i])
        j = i + 1
        while j < n and j - i < max_len:
            if sizes[j] != size or _overlaps_badly(ranges, arrays[j]):
                break
            j += 1
        if j - i >= 2:
            found.append((i, j - i, size))
        i = j
    return found


cdef list _find_chains(list calls):
    """[(first item, length, elements)] of the fusable runs of `calls`."""
    return find_runs([_pointwise_size(c[0], c[1], c[2]) for c in calls],
                     [c[1] + c[2] for c in calls], CHAIN_MIN_ELEMS)


cdef int _run_chain(SeqOp *s, int i0, char *err, size_t errlen) noexcept nogil:
    """Run the fused chain starting at item i0 (see tiled_chain.h)."""
    cdef mxc_opcall *calls[MAX_CHAIN]
    cdef int m = s.chain[i0], k, rc = 0, bad = 0, nthreads = 1
    cdef char *msg
    for k in range(m):
        if _resolve_pushed(s.items[i0 + k], err, errlen) != 0:
            bad = k
            rc = -1
            break
        calls[k] = s.items[i0 + k].call
        if calls[k].nthreads > nthreads:
            nthreads = calls[k].nthreads
    else:
        rc = mxc_run_tiled_chain(calls, m, s.chain_n[i0], capped_threads(nthreads), &bad, err,
                                 errlen)
    if rc != 0:
        if bad >= m:
            bad = 0
        msg = <char*>malloc(errlen)
        if msg != NULL:
            memcpy(msg, err, errlen)
            msg[errlen - 1] = 0
            snprintf(err, errlen, "Error in operator %s: %s", s.labels[i0 + bad], msg)
            free(msg)
    return rc


cdef void _seq_release(void *arg) noexcept nogil:
    cdef SeqOp *s = <SeqOp*>arg
    cdef int i
    if mxc_seq_dec(&s.refs) != 0:
        return
    for i in range(s.n):
        _free_pushed(s.items[i])
        free(s.labels[i])
    free(s.items)
    free(s.labels)
    free(s.chain)
    free(s.chain_n)
    free(s)


cdef int _run_seq(void *arg, char *err, size_t errlen) noexcept nogil:
    cdef SeqOp *s = <SeqOp*>arg
    cdef int i, rc
    cdef char *msg
    cdef long long t0
    i = 0
    while i < s.n:
        if s.chain[i] >= 2:
            if profile_mask() & PROF_SYMBOLIC:
                t0 = profile_now_ns()
                rc = _run_chain(s, i, err, errlen)
                profile_record("FusedOp", t0, profile_now_ns(), -1)
            else:
                rc = _run_chain(s, i, err, errlen)
            if rc != 0:
                return rc
            i += s.chain[i]
            continue
        if profile_mask() & PROF_SYMBOLIC:   # each kernel of a bound graph's bulk operation
            t0 = profile_now_ns()
            rc = _run_pushed(s.items[i], err, errlen)
            profile_record(s.labels[i] + strlen(s.labels[i]) + 1, t0, profile_now_ns(), -1)
        else:
            rc = _run_pushed(s.items[i], err, errlen)
        if rc != 0:
            msg = <char*>malloc(errlen)
            if msg != NULL:
                memcpy(msg, err, errlen)
                msg[errlen - 1] = 0
                snprintf(err, errlen, "Error in operator %s: %s", s.labels[i], msg)
                free(msg)
            return rc
        i += 1
    return 0


cdef class KernelSeq:
    """Recorded kernel calls queued together as one engine operation (see capture_begin)."""
    cdef SeqOp *s
    cdef list keep                 # the arrays: their chunks (and vars) outlive the calls
    cdef VarC **vars
    cdef int nread, nwrite
    cdef bytes name
    cdef readonly int nchains
    cdef bint team                 # pushed as a team op: over COMPUTE_TEAM_BYTES of arrays
                                   # with a GEMM-like call in it, else over STREAM_TEAM_BYTES

    def __cinit__(self, list calls, list labels, bytes name=b"bulk"):
        cdef int n = len(calls), i, k
        cdef size_t nbytes
        cdef NDArrayBase a
        cdef dict written = {}, read = {}
        cdef bint compute = False
        self.s = <SeqOp*>malloc(sizeof(SeqOp))
        if self.s == NULL:
            raise MemoryError()
        self.s.refs = 1
        self.s.n = 0
        self.s.chain = NULL
        self.s.chain_n = NULL
        self.s.items = <Pushed**>malloc(sizeof(Pushed*) * max(1, n))
        self.s.labels = <char**>malloc(sizeof(char*) * max(1, n))
        self.s.chain = <int*>calloc(max(1, n), sizeof(int))
        self.s.chain_n = <int64_t*>calloc(max(1, n), sizeof(int64_t))
        if (self.s.items == NULL or self.s.labels == NULL or self.s.chain == NULL
                or self.s.chain_n == NULL):
            raise MemoryError()
        self.keep = []
        for i in range(n):
            ptr, inputs, outputs, opname = calls[i]
            lab = labels[i].encode() if isinstance(labels[i], str) else bytes(labels[i])
            lab = lab.replace(b"\0", b"") + b"\0" + bytes(opname).replace(b"\0", b"")
            self.s.labels[i] = <char*>malloc(len(lab) + 1)
            if self.s.labels[i] == NULL:
                raise MemoryError()
            memcpy(self.s.labels[i], <char*>lab, len(lab))
            self.s.labels[i][len(lab)] = 0
            self.s.items[i] = <Pushed*><uintptr_t>ptr
            self.s.n = i + 1
            compute = compute or self.s.items[i].compute_bound
            for x in inputs:
                a = <NDArrayBase?>x
                read[id(a._chunk)] = a._chunk
            for x in outputs:
                a = <NDArrayBase?>x
                written[id(a._chunk)] = a._chunk
            self.keep.append((inputs, outputs))
        reads = [c for k2, c in read.items() if k2 not in written]
        writes = list(written.values())
        self.keep.append((reads, writes))
        self.nread, self.nwrite = len(reads), len(writes)
        self.vars = <VarC**>malloc(sizeof(VarC*) * max(1, self.nread + self.nwrite))
        if self.vars == NULL:
            raise MemoryError()
        k = 0
        nbytes = 0
        for c in reads + writes:
            self.vars[k] = (<Chunk>c).c
            nbytes += (<Chunk>c).nbytes
            k += 1
        self.team = nbytes > <size_t>(COMPUTE_TEAM_BYTES if compute else STREAM_TEAM_BYTES)
        self.name = name
        self.nchains = 0
        if fusion_enabled() and _pointwise():
            for i0, m, size in _find_chains(calls):
                self.s.chain[i0] = m
                self.s.chain_n[i0] = size
                self.nchains += 1

    @property
    def fused_chains(self):
        """[(first call, number of calls, elements)] of the chains run fused."""
        return [(i, self.s.chain[i], self.s.chain_n[i]) for i in range(self.s.n)
                if self.s.chain[i] >= 2]

    def run(self, int priority=0):
        """Queue every recorded call, in order, as one engine operation."""
        mxc_seq_inc(&self.s.refs)
        try:
            if self.team:
                push_native_team(_run_seq, self.s, _seq_release, self.vars, self.nread,
                                 self.vars + self.nread, self.nwrite, priority, self.name)
            else:
                push_native(_run_seq, self.s, _seq_release, self.vars, self.nread,
                            self.vars + self.nread, self.nwrite, priority, self.name)
        except BaseException:
            mxc_seq_dec(&self.s.refs)      # not queued: the KernelSeq still holds it
            raise

    def __len__(self):
        return self.s.n if self.s != NULL else 0

    def __dealloc__(self):
        if self.s != NULL:
            _seq_release(self.s)
        if self.vars != NULL:
            free(self.vars)


# ---- the fast path --------------------------------------------------------------------------
# Elementwise operators on arrays of one shape and dtype (and array-scalar forms) are the bulk
# of imperative code. For them the whole call (checks, output allocation, building the kernel
# call, the push) runs here in C; anything else returns None and the caller takes the general
# path through the registry (mxc/ndarray/register.py), which gives the same result.

cdef class FastKernel:
    def __init__(self, name, table, int nthreads, op=None, attrs=None):
        self.op = op            # the OpDef, recorded by autograd
        self.attrs = attrs      # its default attributes (unary and binary kernels)
        cdef int i
        for i in range(16):
            self.addr[i] = 0
        for code, addr in table.items():
            if isinstance(code, int) and 0 <= code < 16:
                self.addr[code] = addr
        self.name = name.encode() if isinstance(name, str) else name
        self.nthreads = nthreads
        self.gpu_plans = {}


cdef void copy_layout(NDArrayBase dst, NDArrayBase src) noexcept:
    """dst takes src's shape, dtype, element size and context (not its storage)."""
    dst._shape = src._shape
    dst._dtype = src._dtype
    dst._dcode = src._dcode
    dst._itemsize = src._itemsize
    dst._size = src._size
    dst._ctx = src._ctx


cdef NDArrayBase _new_like(NDArrayBase p):
    """A fresh array with p's shape, dtype, context and class."""
    cdef Chunk c = alloc_chunk(<size_t>p._size * p._itemsize, p._chunk.dev_type, p._chunk.dev_id)
    cdef type cls = type(p)
    cdef NDArrayBase a = cls.__new__(cls)
    a._chunk = c
    a._offset = 0
    copy_layout(a, p)
    a._ag = None
    return a


cdef int _push_ew(FastKernel k, uintptr_t addr, NDArrayBase x, NDArrayBase y, NDArrayBase out,
                  double scalar, bint has_scalar) except -1:
    cdef int nin = 1 if y is None else 2
    cdef Pushed *p = _new_pushed(<mxc_kernel>addr, nin, 1)
    cdef VarC *vars[3]
    try:
        _set_tensor(p, 0, x)
        vars[0] = x._chunk.c
        if y is not None:
            _set_tensor(p, 1, y)
            vars[1] = y._chunk.c
        _set_tensor(p, nin, out)
        vars[nin] = out._chunk.c
        if has_scalar:
            p.call.fattr[0] = scalar
            p.call.nfattr = 1
        p.call.nthreads = k.nthreads
        _push_call(p, vars, nin, 1, k.name, <size_t>(nin + 1) * out._size * out._itemsize)
    except BaseException:
        _free_pushed(p)
        raise
    return 0


# Autograd: inputs that take part in a graph (_ag set) are recorded when recording is on, by
# the recorder autograd installs; writing into an existing array while recording goes to the
# general path (which raises MXNet's error when that array is in a graph).
cdef object _RECORD = None
cdef object _MODES = None


def install_recorder(record, modes):
    """record(op, attrs, inputs, outputs) records one operation; modes.recording is read per call."""
    global _RECORD, _MODES
    _RECORD = record
    _MODES = modes


cdef inline bint _recording() except -1:
    return _MODES is not None and _MODES.recording


# GPU arrays take the same fast path with a packed launch instead of a host kernel: mxc.ops._gpu
# installs plan(k, inputs, scalar, has_scalar) -> a cuda.PackedLaunch (None: no GPU kernel, the
# general path says so) and push(packed, inputs, outputs) (cuda.push_packed). The plans are kept
# on the FastKernel per device, shape, dtype and scalar.
cdef object _GPU_PLAN = None
cdef object _GPU_PUSH = None
cdef enum:
    GPU_PLANS_MAX = 256


def install_gpu_fast_path(plan, push):
    global _GPU_PLAN, _GPU_PUSH
    _GPU_PLAN = plan
    _GPU_PUSH = push


cdef object _gpu_fast(FastKernel k, NDArrayBase a, NDArrayBase b, double scalar, bint has_scalar,
                      NDArrayBase out, bint rec):
    """The fast path's GPU half: a and b (None for unary and scalar kernels) on one GPU, one
    shape and dtype; None for the general path."""
    if _GPU_PLAN is None:
        return None
    key = (a._chunk.dev_id, a._shape, a._dcode, scalar if has_scalar else None)
    plan = k.gpu_plans.get(key)
    ins = [a] if b is None else [a, b]
    if plan is None:
        plan = _GPU_PLAN(k, ins, scalar, has_scalar)
        if plan is None:
            return None
        if len(k.gpu_plans) >= GPU_PLANS_MAX:
            k.gpu_plans.clear()
        k.gpu_plans[key] = plan
    if out is None:
        out = _new_like(a)
    elif (out._shape != a._shape or out._dcode != a._dcode or out._chunk.dev_type != 2
          or out._chunk.dev_id != a._chunk.dev_id or _overlaps_shifted(a, out)
          or (b is not None and _overlaps_shifted(b, out))):
        return None
    _GPU_PUSH(plan, ins, [out])
    if rec:
        _RECORD(k.op, {"scalar": scalar, "is_int": True} if has_scalar else k.attrs, ins, [out])
    return out


cpdef object fast_binary(FastKernel k, NDArrayBase a, NDArrayBase b, NDArrayBase out=None):
    """out = a OP b for arrays of one shape, dtype and device; None otherwise."""
    cdef uintptr_t addr = k.addr[a._dcode]
    cdef bint rec = False
    if (addr == 0 or a._dcode != b._dcode
            or not (a._shape is b._shape or a._shape == b._shape)
            or not (a._ctx is b._ctx or a._ctx == b._ctx)):
        return None
    if a._ag is not None or b._ag is not None:
        rec = _recording()
        if rec and (out is not None or k.op is None):
            return None
    if a._chunk.dev_type == 2:
        return _gpu_fast(k, a, b, 0.0, False, out, rec)
    if out is None:
        out = _new_like(a)
    elif (out._shape != a._shape or out._dcode != a._dcode or out._chunk.dev_type == 2
          or _overlaps_shifted(a, out) or _overlaps_shifted(b, out)):
        return None
    _push_ew(k, addr, a, b, out, 0.0, False)
    if rec:
        _RECORD(k.op, k.attrs, [a, b], [out])
    return out


cdef inline bint _overlaps_shifted(NDArrayBase x, NDArrayBase out):
    """x and out share storage at different offsets: an elementwise kernel writing out would
    read values it already overwrote (x[1:] += x[:-1]); the general path uses a temporary."""
    return x._chunk is out._chunk and x._offset != out._offset


cdef object _fast1(FastKernel k, NDArrayBase x, double scalar, bint has_scalar, NDArrayBase out):
    cdef uintptr_t addr = k.addr[x._dcode]
    cdef bint rec = False
    if addr == 0:
        return None
    if x._ag is not None:
        rec = _recording()
        if rec and (out is not None or k.op is None):
            return None
    if x._chunk.dev_type == 2:
        return _gpu_fast(k, x, None, scalar, has_scalar, out, rec)
    if out is None:
        out = _new_like(x)
    elif (out._shape != x._shape or out._dcode != x._dcode or out._chunk.dev_type == 2
          or _overlaps_shifted(x, out)):
        return None         # (an output on a GPU: a copy to it, the general path's push_copy)
    _push_ew(k, addr, x, None, out, scalar, has_scalar)
    if rec:
        _RECORD(k.op, {"scalar": scalar, "is_int": True} if has_scalar else k.attrs, [x], [out])
    return out


cpdef object fast_unary(FastKernel k, NDArrayBase x, NDArrayBase out=None):
    """y = f(x) for an elementwise kernel; None when this call needs the general path."""
    return _fast1(k, x, 0.0, False, out)


cpdef object fast_scalar(FastKernel k, NDArrayBase x, double scalar, NDArrayBase out=None):
    """out = x OP scalar (or scalar OP x for the reflected kernels); None for the general path."""
    return _fast1(k, x, scalar, True, out)


# ---- Python operators --------------------------------------------------------------------------
# NDArray's arithmetic and comparison operators try the fast path first; mxc.ndarray installs,
# per operator, the three FastKernels (array-array, array-scalar, scalar-array) and the general
# Python function that handles everything else (broadcasting, numpy operands, autograd).
cdef list _FAST_BIN = []
cdef list _FAST_SC = []
cdef list _FAST_RSC = []
cdef list _SLOW = []

OPERATORS = ("add", "sub", "mul", "truediv", "mod", "pow", "eq", "ne", "gt", "ge", "lt", "le")


def install_operators(list table):
    """table[i] = (FastKernel array-array, FastKernel x OP s, FastKernel s OP x, slow function);
    slow(self, other, reflected, inplace) computes the general case."""
    global _FAST_BIN, _FAST_SC, _FAST_RSC, _SLOW
    if len(table) != len(OPERATORS):
        raise ValueError("install_operators: one entry per operator in OPERATORS")
    _FAST_BIN = [t[0] for t in table]
    _FAST_SC = [t[1] for t in table]
    _FAST_RSC = [t[2] for t in table]
    _SLOW = [t[3] for t in table]


cdef object _binop(NDArrayBase self, object other, int op, bint reflected, bint inplace):
    if profile_api_on():    # the profiler records API calls: MXNet's Python invokes one here
        return _api_timed("MXImperativeInvokeEx", _binop_call, self, other, op, reflected,
                          inplace)
    return _binop_run(self, other, op, reflected, inplace)


def _binop_call(NDArrayBase self, other, int op, bint reflected, bint inplace):
    return _binop_run(self, other, op, reflected, inplace)


cdef object _binop_run(NDArrayBase self, object other, int op, bint reflected, bint inplace):
    cdef object r = None
    cdef NDArrayBase out = self if inplace else None
    if _SLOW:
        if isinstance(other, NDArrayBase):
            if not reflected:
                r = fast_binary(<FastKernel>_FAST_BIN[op], self, <NDArrayBase>other, out)
        elif isinstance(other, float) or (isinstance(other, int) and not isinstance(other, bool)):
            r = fast_scalar(<FastKernel>(_FAST_RSC[op] if reflected else _FAST_SC[op]), self,
                            <double>other, out)
        if r is not None:
            return r
        return _SLOW[op](self, other, reflected, inplace)
    raise RuntimeError("mxc.ndarray is not initialised")
