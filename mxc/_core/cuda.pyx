"""mxc's CUDA runtime: the driver API opened at run time, device contexts and streams, and the
GPU operations the engine runs (kernel launches, copies), all without the GIL.

Building mxc never needs CUDA: ``libcuda.so.1`` (or ``MXC_LIBCUDA``, a path; the tests use a fake
driver) is opened with dlopen on first use. Each device gets its primary context and ONE stream
(non-blocking), owned by that device's engine worker (engine.push_native_dev): every GPU
operation of a device is enqueued on that stream in push order, so an operation is complete
for the engine as soon as it is queued, and device memory returned to the pool may be reused by
the next queued operation at once (stream order). The host synchronises only where it reads:
a wait on a var that lives on gpu(k) records an event on gpu(k)'s stream and waits for it (the
engine calls ``_host_sync`` after its own wait); copies that touch host memory wait for their
own event before they complete; a copy between devices makes the destination's stream wait for
an event on the source's. Nothing synchronises a whole device.

Errors: a failed launch (``cuLaunchKernel`` returning an error) fails the operation, and the
engine stores "<op>: CUDA_ERROR_...: <text>" on the vars it writes. An error the device reports
later (an illegal address) surfaces at the next host synchronisation, naming the last operator
queued on that device.

Storage: gpu blocks are raw ``cuMemAlloc`` memory and cpu_pinned blocks ``cuMemHostAlloc``
memory, pooled by size class in mxc/_core/storage.pyx (this module installs itself as its
backend). Those calls need no GIL, so chunks can be freed on any thread (var_decref ->
release_payload) without the Python-object ownership a CuPy MemoryPointer would need.
"""
import os
import threading

from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset, strncpy, strlen
cimport numpy as cnp
import numpy as np

from mxc._core.engine cimport (VarC, push_native_dev, push_native_launch, engine_set_gpu_sync,
                               engine_set_gpu_timer, wait_var_queued, ENGINE_MAX_DEVICES,
                               var_new, var_decref, wait_var, exec_fn)
from mxc._core.storage cimport (Block, storage_alloc, storage_free, storage_set_backend,
                                STORAGE_MAX_GPUS)
from mxc._core.handle cimport Chunk, NDArrayBase, chunk_ensure
from mxc.base import MXNetError
from mxc._core import engine as _engine

cnp.import_array()

cdef extern from "<dlfcn.h>" nogil:
    void *dlopen(const char *path, int flags)
    void *dlsym(void *handle, const char *name)
    char *dlerror()
    enum:
        RTLD_NOW
        RTLD_LOCAL

cdef extern from "<stdio.h>" nogil:
    int snprintf(char *buf, size_t n, const char *fmt, ...)

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_mutexattr_t:
        pass
    int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
    int pthread_mutex_lock(pthread_mutex_t *m)
    int pthread_mutex_unlock(pthread_mutex_t *m)

cdef extern from *:
    """
    /* the context current on this thread (the driver keeps one per thread too; caching it
       saves a driver call per operation) */
    static __thread void *mxc_cuda_tls_ctx = 0;
    static inline void *mxc_cuda_cur_ctx(void) { return mxc_cuda_tls_ctx; }
    static inline void mxc_cuda_set_ctx(void *c) { mxc_cuda_tls_ctx = c; }
    """
    void *mxc_cuda_cur_ctx() noexcept nogil
    void mxc_cuda_set_ctx(void *c) noexcept nogil

# ---------------------------------------------------------------------------------------------
# the driver API, as function pointers filled by dlsym

ctypedef int CUresult
ctypedef int CUdevice
ctypedef void *CUcontext
ctypedef void *CUstream
ctypedef void *CUevent
ctypedef void *CUfunction
ctypedef unsigned long long CUdeviceptr

cdef enum:
    CUDA_SUCCESS = 0
    CU_STREAM_NON_BLOCKING = 1
    CU_EVENT_DISABLE_TIMING = 2
    CU_MEMHOSTALLOC_PORTABLE = 1
    NEVENTS = 64            # idle events kept per device
    NAMELEN = 128
    MSGLEN = 1024

ctypedef CUresult (*f_init)(unsigned int) noexcept nogil
ctypedef CUresult (*f_int_p)(int *) noexcept nogil
ctypedef CUresult (*f_device_get)(CUdevice *, int) noexcept nogil
ctypedef CUresult (*f_device_name)(char *, int, CUdevice) noexcept nogil
ctypedef CUresult (*f_ctx_retain)(CUcontext *, CUdevice) noexcept nogil
ctypedef CUresult (*f_ctx_set)(CUcontext) noexcept nogil
ctypedef CUresult (*f_stream_create)(CUstream *, unsigned int) noexcept nogil
ctypedef CUresult (*f_stream)(CUstream) noexcept nogil
ctypedef CUresult (*f_stream_wait_event)(CUstream, CUevent, unsigned int) noexcept nogil
ctypedef CUresult (*f_event_create)(CUevent *, unsigned int) noexcept nogil
ctypedef CUresult (*f_event_record)(CUevent, CUstream) noexcept nogil
ctypedef CUresult (*f_event)(CUevent) noexcept nogil
ctypedef CUresult (*f_launch)(CUfunction, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, unsigned int, CUstream,
                              void **, void **) noexcept nogil
ctypedef CUresult (*f_mem_alloc)(CUdeviceptr *, size_t) noexcept nogil
ctypedef CUresult (*f_mem_free)(CUdeviceptr) noexcept nogil
ctypedef CUresult (*f_host_alloc)(void **, size_t, unsigned int) noexcept nogil
ctypedef CUresult (*f_host_free)(void *) noexcept nogil
ctypedef CUresult (*f_htod)(CUdeviceptr, const void *, size_t, CUstream) noexcept nogil
ctypedef CUresult (*f_dtoh)(void *, CUdeviceptr, size_t, CUstream) noexcept nogil
ctypedef CUresult (*f_dtod)(CUdeviceptr, CUdeviceptr, size_t, CUstream) noexcept nogil
ctypedef CUresult (*f_peer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
                            CUstream) noexcept nogil
ctypedef CUresult (*f_mem_info)(size_t *, size_t *) noexcept nogil
ctypedef CUresult (*f_err_str)(CUresult, const char **) noexcept nogil
ctypedef CUresult (*f_event_elapsed)(float *, CUevent, CUevent) noexcept nogil

cdef struct Driver:
    f_init cuInit
    f_int_p cuDriverGetVersion
    f_int_p cuDeviceGetCount
    f_device_get cuDeviceGet
    f_device_name cuDeviceGetName
    f_ctx_retain cuDevicePrimaryCtxRetain
    f_ctx_set cuCtxSetCurrent
    f_stream_create cuStreamCreate
    f_stream cuStreamSynchronize
    f_stream_wait_event cuStreamWaitEvent
    f_event_create cuEventCreate
    f_event_record cuEventRecord
    f_event cuEventSynchronize
    f_event cuEventDestroy
    f_launch cuLaunchKernel
    f_mem_alloc cuMemAlloc
    f_mem_free cuMemFree
    f_host_alloc cuMemHostAlloc
    f_host_free cuMemFreeHost
    f_htod cuMemcpyHtoDAsync
    f_dtoh cuMemcpyDtoHAsync
    f_dtod cuMemcpyDtoDAsync
    f_peer cuMemcpyPeerAsync
    f_mem_info cuMemGetInfo
    f_err_str cuGetErrorName
    f_err_str cuGetErrorString
    f_event_elapsed cuEventElapsedTime

cdef Driver D
cdef void *g_lib = NULL
cdef int g_ndev = 0
cdef object g_status = None          # None: not tried; "" ok; else why CUDA is unavailable
cdef object g_lock = threading.Lock()

# (symbol, versioned symbol preferred when the driver has it)
_SYMBOLS = (
    ("cuInit", None), ("cuDriverGetVersion", None), ("cuDeviceGetCount", None),
    ("cuDeviceGet", None), ("cuDeviceGetName", None), ("cuDevicePrimaryCtxRetain", None),
    ("cuCtxSetCurrent", None), ("cuStreamCreate", None), ("cuStreamSynchronize", None),
    ("cuStreamWaitEvent", None), ("cuEventCreate", None), ("cuEventRecord", None),
    ("cuEventSynchronize", None), ("cuEventDestroy", "cuEventDestroy_v2"),
    ("cuLaunchKernel", None), ("cuMemAlloc", "cuMemAlloc_v2"), ("cuMemFree", "cuMemFree_v2"),
    ("cuMemHostAlloc", None), ("cuMemFreeHost", None),
    ("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2"), ("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2"),
    ("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2"), ("cuMemcpyPeerAsync", None),
    ("cuMemGetInfo", "cuMemGetInfo_v2"), ("cuGetErrorName", None), ("cuGetErrorString", None),
    ("cuEventElapsedTime", None),
)


cdef struct Device:
    int ready
    CUdevice dev
    CUcontext ctx
    CUstream stream
    pthread_mutex_t lock            # guards events and lastop
    CUevent events[NEVENTS]
    int nevents
    char lastop[NAMELEN]            # the last operator queued on the stream (error messages)
    char name[NAMELEN]
    int capturing                   # a CUDA graph capture is open on the stream (set by the
                                    # thread that opened it, before its steps are pushed)

cdef Device g_dev[STORAGE_MAX_GPUS]


cdef void _errtext(CUresult rc, char *buf, size_t n) noexcept nogil:
    """'CUDA_ERROR_NAME (code): description' for rc."""
    cdef const char *name = NULL
    cdef const char *text = NULL
    if D.cuGetErrorName != NULL:
        D.cuGetErrorName(rc, &name)
    if D.cuGetErrorString != NULL:
        D.cuGetErrorString(rc, &text)
    if name == NULL:
        name = b"CUDA error"
    if text == NULL:
        text = b"no description"
    snprintf(buf, n, b"%s (%d): %s", name, rc, text)


cdef str _errstr(CUresult rc):
    cdef char buf[256]
    _errtext(rc, buf, 256)
    return buf.decode("utf-8", "replace")


def _load_library():
    """dlopen the driver and resolve every symbol; sets g_status to '' or the reason."""
    global g_lib, g_status, g_ndev
    cdef void *lib
    cdef void *sym
    cdef void **slots = <void**>&D
    cdef int n = 0, i
    cdef CUresult rc
    path = os.environ.get("MXC_LIBCUDA") or "libcuda.so.1"
    bpath = path.encode()
    lib = dlopen(bpath, RTLD_NOW | RTLD_LOCAL)
    if lib == NULL:
        err = dlerror()
        g_status = (f"the CUDA driver library {path} could not be loaded"
                    f" ({err.decode('utf-8', 'replace') if err != NULL else 'dlopen failed'})")
        return
    for i, (base, versioned) in enumerate(_SYMBOLS):
        sym = NULL
        if versioned is not None:
            sym = dlsym(lib, versioned.encode())
        if sym == NULL:
            sym = dlsym(lib, base.encode())
        if sym == NULL:
            g_status = f"the CUDA driver library {path} lacks {versioned or base}"
            memset(&D, 0, sizeof(D))
            return
        slots[i] = sym
    g_lib = lib
    rc = D.cuInit(0)
    if rc != CUDA_SUCCESS:
        g_status = f"cuInit failed: {_errstr(rc)}"
        return
    rc = D.cuDeviceGetCount(&n)
    if rc != CUDA_SUCCESS:
        g_status = f"cuDeviceGetCount failed: {_errstr(rc)}"
        return
    if n <= 0:
        g_status = "the CUDA driver reports no device"
        return
    g_ndev = min(n, STORAGE_MAX_GPUS, ENGINE_MAX_DEVICES)
    g_status = ""


def _ensure_loaded():
    with g_lock:
        if g_status is None:
            _load_library()
    return g_status == ""


def status():
    """'' when CUDA is usable, else why not (the library or a device is missing, cuInit failed)."""
    _ensure_loaded()
    return g_status


def device_count():
    """Number of CUDA devices mxc can use; 0 when the driver or a device is missing."""
    return g_ndev if _ensure_loaded() else 0


cdef inline int _bind(Device *d) noexcept nogil:
    """Make d's context current on this thread (cached per thread)."""
    if mxc_cuda_cur_ctx() == d.ctx:
        return 0
    cdef CUresult rc = D.cuCtxSetCurrent(d.ctx)
    if rc == CUDA_SUCCESS:
        mxc_cuda_set_ctx(d.ctx)
    return rc


cdef int _init_device(int i) except -1:
    cdef Device *d = &g_dev[i]
    cdef CUresult rc
    if d.ready:
        return 0
    memset(d, 0, sizeof(Device))
    rc = D.cuDeviceGet(&d.dev, i)
    if rc == CUDA_SUCCESS:
        D.cuDeviceGetName(d.name, NAMELEN - 1, d.dev)
        rc = D.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)
    if rc == CUDA_SUCCESS:
        rc = D.cuCtxSetCurrent(d.ctx)
    if rc == CUDA_SUCCESS:
        mxc_cuda_set_ctx(d.ctx)
        rc = D.cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING)
    if rc != CUDA_SUCCESS:
        raise MXNetError(f"gpu({i}): could not initialise the device: {_errstr(rc)}")
    pthread_mutex_init(&d.lock, NULL)
    d.ready = 1
    return 0


def ensure_device(int i):
    """Initialise gpu(i) (context, stream) and the GPU storage backend; MXNetError when
    CUDA or that device is missing."""
    if not _ensure_loaded():
        raise MXNetError(f"gpu({i}): no CUDA device available: {g_status}; use mx.cpu()")
    if not 0 <= i < g_ndev:
        raise MXNetError(f"gpu({i}) does not exist: {g_ndev} CUDA device(s) visible")
    if g_dev[i].ready:
        return
    with g_lock:
        _init_device(0)            # pinned host memory is allocated in device 0's context
        _init_device(i)
        storage_set_backend(_be_alloc, _be_free, g_ndev)
        engine_set_gpu_sync(_host_sync)
        engine_set_gpu_timer(_timer_begin, _timer_end, _timer_read)


def device_name(int i):
    ensure_device(i)
    return g_dev[i].name.decode("utf-8", "replace")


def mem_info(int i):
    """(free, total) bytes of gpu(i), as cudaMemGetInfo."""
    cdef size_t fr = 0, tot = 0
    cdef CUresult rc
    ensure_device(i)
    with nogil:
        rc = _bind(&g_dev[i])
        if rc == CUDA_SUCCESS:
            rc = D.cuMemGetInfo(&fr, &tot)
    if rc != CUDA_SUCCESS:
        raise MXNetError(f"gpu({i}): cuMemGetInfo failed: {_errstr(rc)}")
    return int(fr), int(tot)


def stream_handle(int i):
    """gpu(i)'s stream (a CUstream as an int), for libraries that enqueue on it (CuPy)."""
    ensure_device(i)
    return <uintptr_t>g_dev[i].stream


def driver_version():
    cdef int v = 0
    if not _ensure_loaded():
        return 0
    D.cuDriverGetVersion(&v)
    return v

# ---------------------------------------------------------------------------------------------
# storage backend (installed by ensure_device): any thread, no GIL


cdef int _be_alloc(int dev_type, int dev_id, size_t nbytes, void **out) noexcept nogil:
    cdef CUdeviceptr p = 0
    cdef Device *d = &g_dev[dev_id if dev_type == 2 else 0]
    if not d.ready or _bind(d) != CUDA_SUCCESS:
        return -1
    if dev_type == 2:
        if D.cuMemAlloc(&p, nbytes if nbytes > 0 else 1) != CUDA_SUCCESS:
            return -1
        out[0] = <void*>p
        return 0
    return 0 if D.cuMemHostAlloc(out, nbytes if nbytes > 0 else 1,
                                 CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS else -1


cdef void _be_free(int dev_type, int dev_id, void *ptr) noexcept nogil:
    # cuMemFree waits for work still using the memory (it synchronises), so a block leaving
    # the pool is never freed under a queued kernel
    cdef Device *d = &g_dev[dev_id if dev_type == 2 else 0]
    if _bind(d) != CUDA_SUCCESS:
        return
    if dev_type == 2:
        D.cuMemFree(<CUdeviceptr>ptr)
    else:
        D.cuMemFreeHost(ptr)


# ---------------------------------------------------------------------------------------------
# events and host synchronisation


cdef CUevent _get_event(Device *d) noexcept nogil:
    cdef CUevent ev = NULL
    pthread_mutex_lock(&d.lock)
    if d.nevents > 0:
        d.nevents -= 1
        ev = d.events[d.nevents]
    pthread_mutex_unlock(&d.lock)
    if ev == NULL:
        if D.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS:
            return NULL
    return ev


cdef void _put_event(Device *d, CUevent ev) noexcept nogil:
    pthread_mutex_lock(&d.lock)
    if d.nevents < NEVENTS:
        d.events[d.nevents] = ev
        d.nevents += 1
        ev = NULL
    pthread_mutex_unlock(&d.lock)
    if ev != NULL:
        D.cuEventDestroy(ev)


# The profiler's timing of a GPU operation (engine.engine_set_gpu_timer): two timing events
# recorded on the device's stream around the work the operation queues; the engine reads their
# elapsed time when the profiler takes its records (a wait then, none per operation).
cdef struct GpuTimer:
    Device *d
    CUevent start
    CUevent stop


cdef void _timer_free(GpuTimer *t) noexcept nogil:
    if t.start != NULL:
        D.cuEventDestroy(t.start)
    if t.stop != NULL:
        D.cuEventDestroy(t.stop)
    free(t)


cdef void *_timer_begin(int dev) noexcept nogil:
    cdef GpuTimer *t
    if dev >= g_ndev or not g_dev[dev].ready:
        return NULL
    t = <GpuTimer*>calloc(1, sizeof(GpuTimer))
    if t == NULL:
        return NULL
    t.d = &g_dev[dev]
    if _bind(t.d) != CUDA_SUCCESS or D.cuEventCreate(&t.start, 0) != CUDA_SUCCESS or \
            D.cuEventCreate(&t.stop, 0) != CUDA_SUCCESS or \
            D.cuEventRecord(t.start, t.d.stream) != CUDA_SUCCESS:
        _timer_free(t)
        return NULL            # recorded with its host times instead
    return t


cdef void _timer_end(void *tok) noexcept nogil:
    cdef GpuTimer *t = <GpuTimer*>tok
    D.cuEventRecord(t.stop, t.d.stream)


cdef int _timer_read(void *tok, long long *ns) noexcept nogil:
    cdef GpuTimer *t = <GpuTimer*>tok
    cdef float ms = 0
    cdef int rc = -1
    if ns != NULL and _bind(t.d) == CUDA_SUCCESS and \
            D.cuEventSynchronize(t.stop) == CUDA_SUCCESS and \
            D.cuEventElapsedTime(&ms, t.start, t.stop) == CUDA_SUCCESS:
        ns[0] = <long long>(<double>ms * 1e6)
        rc = 0
    _timer_free(t)
    return rc


cdef void _set_lastop(Device *d, const char *name) noexcept nogil:
    pthread_mutex_lock(&d.lock)
    memcpy(d.lastop, name, NAMELEN)      # name is a NAMELEN buffer (Launch/Copy.name)
    d.lastop[NAMELEN - 1] = 0
    pthread_mutex_unlock(&d.lock)


cdef CUresult _stream_fence(Device *d) noexcept nogil:
    """Wait on the host until the work queued on d's stream so far is done (an event, not a
    device-wide synchronisation: later work does not delay it)."""
    cdef CUresult rc = _bind(d)
    cdef CUevent ev
    if rc != CUDA_SUCCESS:
        return rc
    ev = _get_event(d)
    if ev == NULL:
        return D.cuStreamSynchronize(d.stream)
    rc = D.cuEventRecord(ev, d.stream)
    if rc == CUDA_SUCCESS:
        rc = D.cuEventSynchronize(ev)
    _put_event(d, ev)
    return rc


cdef int _device_error(int i, CUresult rc, char *err, size_t n) noexcept nogil:
    cdef char text[256]
    cdef char last[NAMELEN]
    _errtext(rc, text, 256)
    pthread_mutex_lock(&g_dev[i].lock)
    memcpy(last, g_dev[i].lastop, NAMELEN)
    pthread_mutex_unlock(&g_dev[i].lock)
    cdef const char *who = last
    if last[0] == 0:
        who = b"gpu operator"
    snprintf(err, n, b"%s: %s (reported by gpu(%d) at a synchronisation; operators run "
             b"asynchronously there: MXNET_ENGINE_TYPE=NaiveEngine with CUDA_LAUNCH_BLOCKING=1 "
             b"pins it down)", who, text, i)
    return -1


cdef int _host_sync(int dev, char *err, size_t n) noexcept nogil:
    """engine hook: the engine's wait is over; wait for gpu(dev)'s stream (every ready device
    for dev -1)."""
    cdef int i
    cdef CUresult rc
    for i in range(g_ndev):
        if (dev < 0 or i == dev) and g_dev[i].ready:
            if g_dev[i].capturing:
                snprintf(err, n, b"gpu(%d): a host synchronisation while a CUDA graph is being "
                         b"captured on its stream (the step that waits cannot be in a graph)", i)
                return -1
            rc = _stream_fence(&g_dev[i])
            if rc != CUDA_SUCCESS:
                return _device_error(i, rc, err, n)
    return 0


cdef int _raise_device_error(int dev, CUresult rc) except -1:
    """A host read or write found gpu(dev)'s stream failed: the error names its last operator,
    as a wait's does."""
    cdef char buf[MSGLEN]
    _device_error(dev, rc, buf, MSGLEN)
    raise MXNetError(buf.decode("utf-8", "replace"))


def synchronize(int dev=-1):
    """Wait for the work queued on gpu(dev)'s stream (every device's for -1); raise its error."""
    cdef char buf[MSGLEN]
    cdef int rc
    if not _ensure_loaded():
        return
    with nogil:
        rc = _host_sync(dev, buf, MSGLEN)
    if rc != 0:
        raise MXNetError(buf.decode("utf-8", "replace"))

# ---------------------------------------------------------------------------------------------
# tensors of a queued GPU operation: pointers resolved when it runs (lazy allocation)


cdef struct TRef:
    VarC *var
    size_t nbytes
    Py_ssize_t offset
    int dev_type
    int dev_id
    size_t slot             # launches: byte offset of the pointer in the argument buffer


cdef int _tref(TRef *r, NDArrayBase a) except -1:
    cdef Chunk c = a._chunk
    r.var = c.c
    r.nbytes = c.nbytes
    r.offset = a._offset
    r.dev_type = c.dev_type
    r.dev_id = c.dev_id
    return 0


cdef inline char* _resolve(TRef *r, char *err, size_t n) noexcept nogil:
    if chunk_ensure(r.var, r.nbytes, r.dev_type, r.dev_id) != 0:
        snprintf(err, n, b"out of memory allocating %zu bytes on %s(%d)", r.nbytes,
                 <const char*>(b"gpu" if r.dev_type == 2 else b"cpu"), r.dev_id)
        return NULL
    return <char*>r.var.data + r.offset

# ---------------------------------------------------------------------------------------------
# kernel launches


cdef struct Launch:
    int dev
    CUfunction fn
    unsigned int grid[3]
    unsigned int block[3]
    unsigned int shmem
    int nargs
    int nptr
    void **params           # nargs pointers into buf
    TRef *ptrs              # nptr tensors whose device pointers go into buf
    char *buf
    char name[NAMELEN]


cdef int _run_launch(void *arg, char *err, size_t n) noexcept nogil:
    cdef Launch *L = <Launch*>arg
    cdef Device *d = &g_dev[L.dev]
    cdef int i
    cdef char *p
    cdef CUresult rc
    for i in range(L.nptr):
        p = _resolve(&L.ptrs[i], err, n)
        if p == NULL:
            return -1
        (<CUdeviceptr*>(L.buf + L.ptrs[i].slot))[0] = <CUdeviceptr>p
    rc = _bind(d)
    if rc == CUDA_SUCCESS:
        rc = D.cuLaunchKernel(L.fn, L.grid[0], L.grid[1], L.grid[2], L.block[0], L.block[1],
                              L.block[2], L.shmem, d.stream, L.params, NULL)
    if rc != CUDA_SUCCESS:
        _errtext(rc, err, n)
        return -1
    _set_lastop(d, L.name)
    return 0


# argument kinds: (kind, value) -> (bytes, numpy scalar type or None for pointers)
_SCALARS = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
            "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
            "f16": np.float16, "f32": np.float32, "f64": np.float64, "bool": np.bool_}


cdef inline size_t _align(size_t x, size_t a):
    return (x + a - 1) // a * a


def _pack(args, int n_in, int n_out):
    """Lay the arguments out: (buffer bytes, [offset per arg], [(offset, is_output, index)] for
    the tensors whose device pointers go into the buffer when the launch runs)."""
    chunks = []
    offs = []
    ptrs = []
    pos = 0
    for j, item in enumerate(args):
        try:
            kind, value = item
        except (TypeError, ValueError):
            raise MXNetError(f"kernel argument {j}: expected a (kind, value) pair, got {item!r}")
        if kind in ("in", "out"):
            n = n_in if kind == "in" else n_out
            if not isinstance(value, int) or not 0 <= value < n:
                raise MXNetError(f"kernel argument {j}: ({kind!r}, {value!r}) names no "
                                 f"{'input' if kind == 'in' else 'output'} (there are {n})")
            raw = b"\0" * 8
            align = 8
            pos = _align(pos, align)
            ptrs.append((pos, kind == "out", value))
        elif kind == "ptr":
            raw = int(value).to_bytes(8, "little")
            align = 8
        elif kind in _SCALARS:
            raw = np.array(value, dtype=_SCALARS[kind]).tobytes()
            align = len(raw)
        elif kind == "bytes":
            raw = bytes(value)
            align = 8 if len(raw) >= 8 else max(1, len(raw))
        else:
            raise MXNetError(f"kernel argument {j}: unknown kind {kind!r}; expected in, out, "
                             f"ptr, bytes or one of {sorted(_SCALARS)}")
        pos = _align(pos, align)
        offs.append(pos)
        chunks.append((pos, raw))
        pos += len(raw)
    buf = bytearray(_align(pos, 8) or 8)
    for off, raw in chunks:
        buf[off:off + len(raw)] = raw
    return bytes(buf), offs, ptrs


cdef int _check_on(NDArrayBase a, int dev, str name, str what) except -1:
    if a._chunk.dev_type != 2 or a._chunk.dev_id != dev:
        raise MXNetError(f"{name}: {what} is on {a._ctx}, the kernel runs on gpu({dev}); "
                         f"copy it first (as_in_context)")
    return 0


cdef class PackedLaunch:
    """A kernel launch whose arguments are packed once (``pack_launch``). Each ``push_packed``
    copies the packed block and fills in the device pointers of that call's arrays, so an
    operator that runs again on arrays of the same shapes skips the argument packing (the
    GPU front end keeps one per operator, shapes and attributes)."""
    cdef Launch *tmpl       # the Launch and its params/ptrs/buf, laid out as push_packed copies it
    cdef size_t total
    cdef size_t *offs       # per argument: its offset in buf
    cdef int *which         # per pointer: input i as i, output j as -1 - j
    cdef readonly int n_in, n_out, dev
    cdef readonly str name

    def __dealloc__(self):
        free(self.tmpl)
        free(self.offs)
        free(self.which)


def pack_launch(uintptr_t func, grid, block, unsigned int shmem, args, int n_in, int n_out,
                name, int dev):
    """A PackedLaunch of kernel `func` on gpu(dev) for operators with n_in inputs and n_out
    outputs. func: the CUfunction (``mxc.ops.cuda.loader.kernel``, or
    ``loader.function_pointer`` of a CuPy RawKernel). grid and block: up to 3 ints. args:
    (kind, value) pairs: ("in", i) / ("out", i) the device pointer of input / output i (resolved
    when the launch runs: storage is allocated lazily), ("ptr", int), ("bytes", b) a struct by
    value, or a scalar kind (i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64 bool)."""
    cdef bytes bname = name.encode() if isinstance(name, str) else bytes(name)
    cdef PackedLaunch p = PackedLaunch()
    cdef Launch *L
    cdef char *base
    cdef int i, nargs, nptr
    ensure_device(dev)
    g = tuple(int(x) for x in grid) + (1, 1, 1)
    b = tuple(int(x) for x in block) + (1, 1, 1)
    p.name = bname.decode("utf-8", "replace")
    if min(g[:3]) < 1 or min(b[:3]) < 1:
        raise MXNetError(f"{p.name}: empty launch grid {g[:3]} / block {b[:3]}")
    buf, offs, ptrs = _pack(args, n_in, n_out)
    nargs = len(offs)
    nptr = len(ptrs)
    p.total = (sizeof(Launch) + <size_t>nargs * sizeof(void*) + <size_t>nptr * sizeof(TRef)
               + len(buf))
    p.tmpl = <Launch*>calloc(1, p.total)
    p.offs = <size_t*>malloc(sizeof(size_t) * (nargs + 1))
    p.which = <int*>malloc(sizeof(int) * (nptr + 1))
    if p.tmpl == NULL or p.offs == NULL or p.which == NULL:
        raise MemoryError(f"{p.name}: out of memory packing a launch")
    L = p.tmpl
    base = <char*>L + sizeof(Launch)
    L.buf = base + <size_t>nargs * sizeof(void*) + <size_t>nptr * sizeof(TRef)
    memcpy(L.buf, <char*>buf, len(buf))
    L.ptrs = <TRef*>(base + <size_t>nargs * sizeof(void*))
    for i in range(nargs):
        p.offs[i] = offs[i]
    for i in range(nptr):
        off, is_out, idx = ptrs[i]
        L.ptrs[i].slot = off
        p.which[i] = -1 - idx if is_out else idx
    L.nargs = nargs
    L.nptr = nptr
    L.dev = dev
    L.fn = <CUfunction>func
    for i in range(3):
        L.grid[i] = g[i]
        L.block[i] = b[i]
    L.shmem = shmem
    strncpy(L.name, bname, NAMELEN - 1)
    p.n_in = n_in
    p.n_out = n_out
    p.dev = dev
    return p


def push_packed(PackedLaunch p, list inputs, list outputs):
    """Queue p on its device's worker and stream with these arrays (as many as it was packed
    for, all on that device). The launch itself runs without the GIL."""
    cdef int i, w, nin = len(inputs), nout = len(outputs)
    cdef Launch *L
    cdef char *base
    cdef NDArrayBase a
    cdef VarC *stack_vars[32]
    cdef VarC **vars = stack_vars
    if nin != p.n_in or nout != p.n_out:
        raise MXNetError(f"{p.name}: packed for {p.n_in} inputs and {p.n_out} outputs, "
                         f"given {nin} and {nout}")
    for a in inputs:
        _check_on(a, p.dev, p.name, "an input")
    for a in outputs:
        _check_on(a, p.dev, p.name, "an output")
    if nin + nout > 32:
        vars = <VarC**>malloc(sizeof(VarC*) * (nin + nout))
        if vars == NULL:
            raise MemoryError()
    L = <Launch*>malloc(p.total)
    if L == NULL:
        if vars != stack_vars:
            free(vars)
        raise MemoryError(f"{p.name}: out of memory queueing a launch")
    memcpy(L, p.tmpl, p.total)
    base = <char*>L + sizeof(Launch)
    L.params = <void**>base
    L.ptrs = <TRef*>(base + <size_t>L.nargs * sizeof(void*))
    L.buf = base + <size_t>L.nargs * sizeof(void*) + <size_t>L.nptr * sizeof(TRef)
    for i in range(L.nargs):
        L.params[i] = L.buf + p.offs[i]
    try:
        for i in range(L.nptr):
            w = p.which[i]
            _tref(&L.ptrs[i], <NDArrayBase>(inputs[w] if w >= 0 else outputs[-1 - w]))
        for i in range(nin):
            vars[i] = (<NDArrayBase>inputs[i])._chunk.c
        for i in range(nout):
            vars[nin + i] = (<NDArrayBase>outputs[i])._chunk.c
        push_native_launch(_run_launch, L, free, vars, nin, vars + nin, nout, L.name, p.dev)
    except BaseException:
        free(L)
        raise
    finally:
        if vars != stack_vars:
            free(vars)


def push_launch(uintptr_t func, grid, block, unsigned int shmem, args, list inputs,
                list outputs, name, int dev):
    """Pack and queue one launch (``pack_launch`` then ``push_packed``)."""
    push_packed(pack_launch(func, grid, block, shmem, args, len(inputs), len(outputs), name,
                            dev), inputs, outputs)

# ---------------------------------------------------------------------------------------------
# copies between devices


cdef enum:
    H2D = 0
    D2H = 1
    D2D = 2
    PEER = 3


cdef struct Copy:
    int kind
    int dev                 # the device whose stream runs it
    int dst_dev
    TRef src
    TRef dst
    size_t nbytes
    char name[NAMELEN]


cdef int _run_copy(void *arg, char *err, size_t n) noexcept nogil:
    cdef Copy *c = <Copy*>arg
    cdef Device *d = &g_dev[c.dev]
    cdef Device *dd
    cdef char *src = _resolve(&c.src, err, n)
    cdef char *dst
    cdef CUresult rc
    cdef CUevent ev
    if src == NULL:
        return -1
    dst = _resolve(&c.dst, err, n)
    if dst == NULL:
        return -1
    rc = _bind(d)
    if rc == CUDA_SUCCESS and c.nbytes > 0:
        if c.kind == H2D:
            rc = D.cuMemcpyHtoDAsync(<CUdeviceptr>dst, src, c.nbytes, d.stream)
        elif c.kind == D2H:
            rc = D.cuMemcpyDtoHAsync(dst, <CUdeviceptr>src, c.nbytes, d.stream)
        elif c.kind == D2D:
            rc = D.cuMemcpyDtoDAsync(<CUdeviceptr>dst, <CUdeviceptr>src, c.nbytes, d.stream)
        else:
            dd = &g_dev[c.dst_dev]
            rc = D.cuMemcpyPeerAsync(<CUdeviceptr>dst, dd.ctx, <CUdeviceptr>src, d.ctx,
                                     c.nbytes, d.stream)
            if rc == CUDA_SUCCESS:
                # the destination's later work waits for the copy: an event, not a host wait
                ev = _get_event(d)
                if ev == NULL:
                    rc = D.cuStreamSynchronize(d.stream)
                else:
                    rc = D.cuEventRecord(ev, d.stream)
                    if rc == CUDA_SUCCESS:
                        rc = D.cuStreamWaitEvent(dd.stream, ev, 0)
                    _put_event(d, ev)
    if rc == CUDA_SUCCESS:
        _set_lastop(d, c.name)
        if c.kind == H2D or c.kind == D2H:
            # host memory: the op completes (for the engine, and the host readers or writers
            # after it) only when the copy is done
            rc = _stream_fence(d)
    if rc != CUDA_SUCCESS:
        _errtext(rc, err, n)
        return -1
    return 0


def push_copy(NDArrayBase src, NDArrayBase dst, name="_copyto"):
    """Queue dst[...] = src between any two of cpu, cpu_pinned and gpu(k) (same dtype, size)."""
    cdef bytes bname = name.encode() if isinstance(name, str) else bytes(name)
    cdef Copy *c
    cdef VarC *vars[2]
    cdef int sg = src._chunk.dev_type == 2
    cdef int dg = dst._chunk.dev_type == 2
    if src._dtype != dst._dtype or src._size != dst._size:
        raise MXNetError(f"{bname.decode()}: copy of {src._size} x {src._dtype} into "
                         f"{dst._size} x {dst._dtype}")
    if not sg and not dg:
        raise MXNetError(f"{bname.decode()}: push_copy needs a GPU side")
    c = <Copy*>calloc(1, sizeof(Copy))
    if c == NULL:
        raise MemoryError()
    try:
        if sg:
            ensure_device(src._chunk.dev_id)
        if dg:
            ensure_device(dst._chunk.dev_id)
        _tref(&c.src, src)
        _tref(&c.dst, dst)
        c.nbytes = <size_t>src._size * src._itemsize
        if sg and dg:
            c.kind = D2D if src._chunk.dev_id == dst._chunk.dev_id else PEER
            c.dev = src._chunk.dev_id
            c.dst_dev = dst._chunk.dev_id
        elif dg:
            c.kind = H2D
            c.dev = dst._chunk.dev_id
        else:
            c.kind = D2H
            c.dev = src._chunk.dev_id
        if c.kind == H2D or c.kind == D2H:
            _refuse_capture(c.dev, "a copy between host memory and the gpu (it waits on the host)")
        elif c.kind == PEER:
            _refuse_capture(c.dev, "a copy between two gpus (another device's stream)")
            _refuse_capture(c.dst_dev, "a copy between two gpus (another device's stream)")
        if bname == b"_copyto":
            # MXNet's names for a copy between devices (its profiler and errors show them)
            bname = (b"CopyCPU2GPU", b"CopyGPU2CPU", b"CopyGPU2GPU", b"CopyGPU2GPU")[c.kind]
        strncpy(c.name, bname, NAMELEN - 1)
        vars[0] = src._chunk.c
        vars[1] = dst._chunk.c
        push_native_dev(_run_copy, c, free, vars, 1, vars + 1, 1, 0, bname, c.dev)
    except BaseException:
        free(c)
        raise

# ---------------------------------------------------------------------------------------------
# arrays on a GPU (used by mxc.ndarray through handle's hooks; also the tests)


cdef void _release_block(void *b) noexcept nogil:
    storage_free(<Block*>b)


cdef void _release_pyobj(void *o) noexcept nogil:
    with gil:
        Py_DECREF(<object>o)


def new_chunk(size_t nbytes, int dev_id):
    """A Chunk on gpu(dev_id), its block allocated lazily (as handle.alloc_chunk)."""
    ensure_device(dev_id)
    cdef Chunk c = Chunk()
    c.c.payload = NULL
    c.c.release_payload = _release_block
    c.c.data = NULL
    c.c.gpu = dev_id + 1
    c.nbytes = nbytes
    c.dev_type = 2
    c.dev_id = dev_id
    return c


def external_chunk(object owner, uintptr_t ptr, size_t nbytes, int dev_id):
    """A Chunk over device memory someone else owns (DLPack): no copy; owner kept alive."""
    ensure_device(dev_id)
    cdef Chunk c = Chunk()
    Py_INCREF(owner)
    c.c.payload = <void*><PyObject*>owner
    c.c.release_payload = _release_pyobj
    c.c.data = <void*>ptr
    c.c.gpu = dev_id + 1
    c.nbytes = nbytes
    c.dev_type = 2
    c.dev_id = dev_id
    return c


def mark_gpu_chunk(Chunk c):
    """Tag a chunk made elsewhere (handle.alloc_chunk) as living on its GPU."""
    if c.dev_type == 2:
        c.c.gpu = c.dev_id + 1


def data_address(NDArrayBase a):
    """The array's device (or host) address, allocating its block if needed (no wait)."""
    cdef Chunk c = a._chunk
    if chunk_ensure(c.c, c.nbytes, c.dev_type, c.dev_id) != 0:
        raise MemoryError(f"mxc: cannot allocate {c.nbytes} bytes on {a._ctx}")
    return <uintptr_t>c.c.data + a._offset


def to_numpy(NDArrayBase a):
    """A GPU array's values as a new numpy array (waits for its writers, as asnumpy)."""
    cdef Chunk c = a._chunk
    cdef Device *d
    cdef CUresult rc = CUDA_SUCCESS
    cdef size_t nb = <size_t>a._size * a._itemsize
    cdef void *dst
    cdef CUdeviceptr src
    # the writers queued on the stream, the copy behind them, one fence for both
    _refuse_capture(c.dev_id, "a host read of a gpu array (asnumpy)")
    wait_var_queued(c.c)
    out = np.empty(a._shape, a._dtype)
    if nb == 0:
        return out
    d = &g_dev[c.dev_id]
    src = <CUdeviceptr>data_address(a)
    dst = cnp.PyArray_DATA(out)
    with nogil:
        rc = _bind(d)
        if rc == CUDA_SUCCESS:
            rc = D.cuMemcpyDtoHAsync(dst, src, nb, d.stream)
        if rc == CUDA_SUCCESS:
            rc = _stream_fence(d)
    if rc != CUDA_SUCCESS:
        _raise_device_error(c.dev_id, rc)
    return out


def from_numpy(NDArrayBase a, src):
    """Copy a numpy array's values into GPU array `a` (fresh: nothing pending on it), and wait."""
    cdef Chunk c = a._chunk
    cdef cnp.ndarray h = np.ascontiguousarray(src, dtype=a._dtype)
    cdef size_t nb = <size_t>a._size * a._itemsize
    cdef Device *d = &g_dev[c.dev_id]
    cdef CUresult rc = CUDA_SUCCESS
    cdef CUdeviceptr dst
    cdef void *s
    if <size_t>h.nbytes != nb:
        raise ValueError(f"from_numpy: {h.nbytes} bytes into an array of {nb}")
    _refuse_capture(c.dev_id, "a host write into a gpu array")
    wait_var_queued(c.c)               # readers of the old values are on the stream before it
    if nb == 0:
        return a
    dst = <CUdeviceptr>data_address(a)
    s = cnp.PyArray_DATA(h)
    with nogil:
        rc = _bind(d)
        if rc == CUDA_SUCCESS:
            rc = D.cuMemcpyHtoDAsync(dst, s, nb, d.stream)
        if rc == CUDA_SUCCESS:
            rc = _stream_fence(d)
    if rc != CUDA_SUCCESS:
        _raise_device_error(c.dev_id, rc)
    return a



# ---------------------------------------------------------------------------------------------
# CUDA graphs (mxc/executor/cuda_graphs.py): a run of operators captured from the device's
# stream once (cuStreamBeginCapture ... cuStreamEndCapture, cuGraphInstantiate) and replayed
# with one cuGraphLaunch. The graph API is optional: a driver without it only disables graphs.

ctypedef void *CUgraph
ctypedef void *CUgraphExec
ctypedef void *CUgraphNode
ctypedef CUresult (*f_begin_capture)(CUstream, int) noexcept nogil
ctypedef CUresult (*f_end_capture)(CUstream, CUgraph *) noexcept nogil
ctypedef CUresult (*f_instantiate)(CUgraphExec *, CUgraph, unsigned long long) noexcept nogil
ctypedef CUresult (*f_graph_launch)(CUgraphExec, CUstream) noexcept nogil
ctypedef CUresult (*f_graph_destroy)(CUgraph) noexcept nogil
ctypedef CUresult (*f_exec_destroy)(CUgraphExec) noexcept nogil
ctypedef CUresult (*f_graph_nodes)(CUgraph, CUgraphNode *, size_t *) noexcept nogil

cdef struct GraphDriver:
    f_begin_capture cuStreamBeginCapture
    f_end_capture cuStreamEndCapture
    f_instantiate cuGraphInstantiateWithFlags
    f_graph_launch cuGraphLaunch
    f_graph_destroy cuGraphDestroy
    f_exec_destroy cuGraphExecDestroy
    f_graph_nodes cuGraphGetNodes

cdef GraphDriver G
cdef object g_graph_status = None      # None: not looked up; "" usable; else why not

# cuStreamBeginCapture_v2 takes the capture mode (the unversioned CUDA 10.0 entry does not)
_GRAPH_SYMBOLS = ("cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuGraphInstantiateWithFlags",
                  "cuGraphLaunch", "cuGraphDestroy", "cuGraphExecDestroy", "cuGraphGetNodes")

cdef enum:
    # any thread may make any call while the capture is open: the engine's device worker and
    # the pushing thread both queue on the stream (mxc's own checks refuse host syncs)
    CU_STREAM_CAPTURE_MODE_RELAXED = 2


class CaptureUnsafe(MXNetError):
    """An operation that cannot be part of a CUDA graph was queued while one is captured (a
    host read or copy, a sync): the capture is abandoned and that step runs outside graphs."""


def graphs_status():
    """'' when the driver has the CUDA graph API, else why graphs are not used."""
    global g_graph_status
    cdef void **slots = <void**>&G
    cdef void *sym
    if not _ensure_loaded():
        return f"no CUDA device: {g_status}"
    with g_lock:
        if g_graph_status is None:
            for i, name in enumerate(_GRAPH_SYMBOLS):
                sym = dlsym(g_lib, name.encode())
                if sym == NULL:
                    memset(&G, 0, sizeof(G))
                    g_graph_status = f"the CUDA driver lacks {name} (CUDA graphs need 11.4+)"
                    break
                slots[i] = sym
            else:
                g_graph_status = ""
    return g_graph_status


def capturing(int dev):
    """Whether a CUDA graph capture is open on gpu(dev)'s stream."""
    return 0 <= dev < STORAGE_MAX_GPUS and g_dev[dev].capturing != 0


cdef int _refuse_capture(int dev, str what) except -1:
    if 0 <= dev < STORAGE_MAX_GPUS and g_dev[dev].capturing:
        raise CaptureUnsafe(f"{what} while a CUDA graph is captured on gpu({dev})")
    return 0


cdef extern from *:
    """
    static inline int mxc_atomic_add(int *p, int v) { return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL); }
    """
    int mxc_atomic_add(int *p, int v) noexcept nogil


# One graph's driver objects, shared by the CudaGraph object and every launch still queued (the
# last of them to let go destroys it, without the GIL)
cdef struct GraphState:
    int refs
    int dev
    CUresult rc                 # the capture's outcome (begin, end or instantiate)
    int stage                   # where it failed: 0 begin, 1 end, 2 instantiate
    int discard                 # end the capture and drop what it recorded
    CUgraph graph
    CUgraphExec exec
    size_t nodes


cdef void _graph_unref(void *arg) noexcept nogil:
    cdef GraphState *s = <GraphState*>arg
    if mxc_atomic_add(&s.refs, -1) != 0:
        return
    if s.exec != NULL:
        G.cuGraphExecDestroy(s.exec)
    if s.graph != NULL:
        G.cuGraphDestroy(s.graph)
    free(s)


cdef int _run_begin(void *arg, char *err, size_t n) noexcept nogil:
    cdef GraphState *s = <GraphState*>arg
    cdef Device *d = &g_dev[s.dev]
    s.rc = _bind(d)
    if s.rc == CUDA_SUCCESS:
        s.rc = G.cuStreamBeginCapture(d.stream, CU_STREAM_CAPTURE_MODE_RELAXED)
    return 0


cdef int _run_end(void *arg, char *err, size_t n) noexcept nogil:
    cdef GraphState *s = <GraphState*>arg
    cdef Device *d = &g_dev[s.dev]
    cdef CUresult rc = _bind(d)
    s.stage = 1
    if rc == CUDA_SUCCESS:
        rc = G.cuStreamEndCapture(d.stream, &s.graph)
    if rc == CUDA_SUCCESS and s.discard:
        G.cuGraphDestroy(s.graph)
        s.graph = NULL
    elif rc == CUDA_SUCCESS:
        G.cuGraphGetNodes(s.graph, NULL, &s.nodes)
        s.stage = 2
        rc = G.cuGraphInstantiateWithFlags(&s.exec, s.graph, 0)
    s.rc = rc
    return 0


cdef int _wait_device_op(exec_fn fn, GraphState *s, const char *name) except -1:
    """Run fn(s) on gpu(s.dev)'s worker after everything pushed there so far, and wait for it
    (a var of its own: no host synchronisation with the stream). An operation pushed earlier
    may still wait on its inputs, and fn, with no inputs, would overtake it: a capture opened
    or closed in its middle records a copy meant to run now (a stale input replayed ever
    after) or misses a step. So everything pushed before is drained first (once per capture)."""
    cdef VarC *v
    _engine.wait_for_pushed()
    v = var_new()
    if v == NULL:
        raise MemoryError()
    try:
        push_native_dev(fn, s, NULL, NULL, 0, &v, 1, 0, name, s.dev)
        wait_var(v)
    finally:
        var_decref(v)
    return 0


cdef class CudaGraph:
    """A capture on gpu(dev)'s stream (``begin_capture``) and, once ``end`` succeeded, the
    instantiated graph that ``push_graph`` launches."""
    cdef GraphState *s
    cdef readonly int dev
    cdef readonly str reason        # why the capture failed ('' when it did not)
    cdef int open

    def __dealloc__(self):
        if self.open:                   # never ended: close the capture (the graph is dropped)
            g_dev[self.dev].capturing = 0
            with nogil:
                if _bind(&g_dev[self.dev]) == CUDA_SUCCESS:
                    if G.cuStreamEndCapture(g_dev[self.dev].stream, &self.s.graph) != CUDA_SUCCESS:
                        self.s.graph = NULL
        if self.s != NULL:
            _graph_unref(self.s)

    @property
    def ok(self):
        return self.s != NULL and self.s.exec != NULL

    @property
    def nodes(self):
        return int(self.s.nodes) if self.s != NULL else 0

    def end(self, keep=True):
        """Close the capture (after every operation pushed so far) and instantiate the graph
        (keep=False: drop it); True when it is ready to launch, else False with ``reason``."""
        if not self.open:
            raise MXNetError("CudaGraph.end: the capture is not open")
        self.open = 0
        self.s.discard = not keep
        _wait_device_op(_run_end, self.s, b"CudaGraphEndCapture")
        g_dev[self.dev].capturing = 0
        if self.s.rc != CUDA_SUCCESS:
            self.reason = (("cuStreamEndCapture", "cuGraphInstantiate")[self.s.stage - 1]
                           + f" failed: {_errstr(self.s.rc)}")
            return False
        return True


def begin_capture(int dev):
    """Open a CUDA graph capture on gpu(dev)'s stream behind everything pushed there so far;
    the operations pushed for that device until ``CudaGraph.end`` are recorded, not run.
    MXNetError when the driver cannot (the reason names the call)."""
    cdef CudaGraph g
    cdef GraphState *s
    why = graphs_status()
    if why:
        raise MXNetError(why)
    ensure_device(dev)
    if g_dev[dev].capturing:
        raise MXNetError(f"gpu({dev}): a CUDA graph capture is already open")
    s = <GraphState*>calloc(1, sizeof(GraphState))
    if s == NULL:
        raise MemoryError()
    s.refs = 1
    s.dev = dev
    g = CudaGraph()
    g.s = s
    g.dev = dev
    g.reason = ""
    _wait_device_op(_run_begin, s, b"CudaGraphBeginCapture")
    if s.rc != CUDA_SUCCESS:
        raise MXNetError(f"cuStreamBeginCapture failed on gpu({dev}): {_errstr(s.rc)}")
    g.open = 1
    g_dev[dev].capturing = 1
    return g


cdef struct GraphLaunch:
    GraphState *s
    char name[NAMELEN]


cdef void _graph_launch_free(void *arg) noexcept nogil:
    _graph_unref((<GraphLaunch*>arg).s)
    free(arg)


cdef int _run_graph(void *arg, char *err, size_t n) noexcept nogil:
    cdef GraphLaunch *L = <GraphLaunch*>arg
    cdef Device *d = &g_dev[L.s.dev]
    cdef CUresult rc = _bind(d)
    if rc == CUDA_SUCCESS:
        rc = G.cuGraphLaunch(L.s.exec, d.stream)
    if rc != CUDA_SUCCESS:
        _errtext(rc, err, n)
        return -1
    _set_lastop(d, L.name)
    return 0


def push_graph(CudaGraph g, list inputs, list outputs, name):
    """Queue one launch of graph g on its device's stream, ordered by the engine as an
    operation reading `inputs` and writing `outputs` (every array its operations touch)."""
    cdef bytes bname = name.encode() if isinstance(name, str) else bytes(name)
    cdef int i, nin = len(inputs), nout = len(outputs)
    cdef GraphLaunch *L
    cdef VarC **vars
    cdef NDArrayBase a
    if not g.ok:
        raise MXNetError(f"{bname.decode()}: the CUDA graph was not captured ({g.reason})")
    for a in inputs:
        _check_on(a, g.dev, bname.decode(), "an input")
    for a in outputs:
        _check_on(a, g.dev, bname.decode(), "an output")
    vars = <VarC**>malloc(sizeof(VarC*) * (nin + nout + 1))
    L = <GraphLaunch*>calloc(1, sizeof(GraphLaunch))
    if vars == NULL or L == NULL:
        free(vars)
        free(L)
        raise MemoryError()
    try:
        for i in range(nin):
            a = inputs[i]
            chunk_ensure(a._chunk.c, a._chunk.nbytes, a._chunk.dev_type, a._chunk.dev_id)
            vars[i] = a._chunk.c
        for i in range(nout):
            a = outputs[i]
            vars[nin + i] = a._chunk.c
        L.s = g.s
        strncpy(L.name, bname, NAMELEN - 1)
        mxc_atomic_add(&g.s.refs, 1)
        try:
            push_native_launch(_run_graph, L, _graph_launch_free, vars, nin, vars + nin, nout,
                               L.name, g.dev)
        except BaseException:
            mxc_atomic_add(&g.s.refs, -1)
            raise
    except BaseException:
        free(L)
        raise
    finally:
        free(vars)


assert len(_SYMBOLS) * sizeof(void*) == sizeof(Driver), "Driver struct and _SYMBOLS disagree"
