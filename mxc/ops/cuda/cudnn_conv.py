"""Convolution and Deconvolution through cuDNN: the operators' kernel calls as cuDNN plans
(cudnn_plans.py) run on the engine's stream, where the frontend's Python module (``cudnn``, the
``nvidia-cudnn-frontend`` wheel of the gpu extra) imports. convolution.py asks ``spec`` first
and falls back to im2col + cuBLAS where it returns None: no module, ``cudnn_off=True`` on the
operator (as in MXNet), ``MXC_CUDNN_ENABLED=0`` (all operators; MXNet only had its build flag),
or a convolution no cuDNN engine supports (remembered, not retried).

The passes (convolution.py's geometry: the convolution's input x, filter w, output y):
- conv:forward       fprop(x, w) -> y, then the bias added (mxc_conv_add_bias)
- conv:backward      wgrad(x, dy) -> dw; dgrad(dy, w) -> dx unless skipped; bias gradient
- deconv:forward     dgrad(data, w) -> out, then the bias (over the deconvolution's channels)
- deconv:backward    fprop(dy, w) -> ddata unless skipped; wgrad(dy, data) -> dw; bias gradient
A 1-D convolution is a 2-D one of height 1 (cuDNN takes 2-D and 3-D).

The spec is convolution.py's ``{"steps": [...], "workspace": bytes}``, with cuDNN steps
``{"cudnn": ConvDesc, "graph": its plan, "tensors": {uid: ("in"|"out", i)}}`` that
mxc/ops/_gpu.py runs through ``runner`` on the device worker (the pointers of mxc's arrays, the
workspace from the storage pool; every step reads it from offset 0, they run in stream order).
A cuDNN handle per device and thread is bound to that device's engine stream. Plans are built
at the first call of a shape (the workspace size comes from them), on the pushing thread;
MXNET_CUDNN_AUTOTUNE_DEFAULT, or the operator's cudnn_tune ('off': heuristics;
'limited_workspace'/'fastest': measured), chooses; all but 'fastest' (2) keep to the operator's
``workspace`` (MB), as in MXNet.
"""
import contextlib
import os
import threading

from . import cudnn_plans
from ._launch import NoKernel, launch

_state = {"module": None, "probed": False, "plans": None}
_handles = {}               # (device id, thread) -> cuDNN handle bound to the engine's stream
_idents = {}                # device id -> (device name and arch, cuDNN version) of plan keys
_specs = {}                 # everything a spec depends on -> the spec (or None: im2col)
_SPEC_LIMIT = 4096
_lock = threading.Lock()


def frontend():
    """The ``cudnn`` module, or None where it does not import or finds no libcudnn (probed
    once)."""
    if not _state["probed"]:
        try:
            import cudnn
            cudnn.backend_version()     # the module imports without libcudnn; this needs it
        except Exception:           # not installed, or its libcudnn does not load
            cudnn = None
        _state["module"], _state["probed"] = cudnn, True
        _state["plans"] = None
    return _state["module"]


def use_frontend(module, probe=False):
    """Run with `module` standing for ``cudnn`` (None: no cuDNN; probe=True: import it again at
    the next use); forgets handles and plans."""
    _state["module"], _state["probed"], _state["plans"] = module, not probe, None
    _handles.clear()
    _idents.clear()
    _specs.clear()


def enabled(attrs):
    if attrs.get("cudnn_off") or os.environ.get("MXC_CUDNN_ENABLED", "1") == "0":
        return False
    return frontend() is not None


def plans():
    if _state["plans"] is None:
        _state["plans"] = cudnn_plans.ConvPlans(frontend())
    return _state["plans"]


def _device_scope(dev):
    try:
        import cupy
    except ImportError:         # only the fake frontend of the tests runs without CuPy
        return contextlib.nullcontext()
    return cupy.cuda.Device(dev)


def _stream(dev):
    from ..._core import cuda
    return cuda.stream_handle(dev)


def handle(dev):
    """This thread's cuDNN handle for gpu(dev), created once and bound to the engine's stream
    of that device. One per thread: cuDNN does not allow a handle to be used by two threads
    at once, and plans are built on the pushing thread while the device worker runs others."""
    key = (dev, threading.get_ident())
    h = _handles.get(key)
    if h is None:
        fe = frontend()
        with _device_scope(dev):
            h = fe.create_handle()
            fe.set_stream(h, _stream(dev))
        with _lock:
            _handles[key] = h
    return h


def _ident(dev, fe):
    got = _idents.get(dev)
    if got is None:
        try:
            import cupy
            p = cupy.cuda.runtime.getDeviceProperties(dev)
            name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
            name = "%s sm_%d%d" % (name, p["major"], p["minor"])
        except Exception:       # no CuPy (the fake): the plans are keyed without it
            name = ""
        try:
            version = str(fe.backend_version())
        except Exception:
            version = ""
        got = _idents[dev] = (name, version)
    return got


def _tune(attrs):
    """(autotune 0/1, workspace limit in bytes or 0) as MXNet: the operator's cudnn_tune, else
    MXNET_CUDNN_AUTOTUNE_DEFAULT (0 'off', 1 'limited_workspace', 2 'fastest'); all but
    'fastest' keep a plan's workspace within the operator's ``workspace`` (MB)."""
    t = attrs.get("cudnn_tune")
    if t is None:
        try:
            mode = int(os.environ.get("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1"))
        except ValueError:
            mode = 1
    else:
        mode = {"off": 0, "limited_workspace": 1, "fastest": 2}[t]
    limit = 0 if mode >= 2 else max(0, int(attrs.get("workspace") or 0)) << 20
    return (0 if mode <= 0 else 1), limit


def _timer(desc, dev, h):
    """timer(graph, index) -> seconds of plan `index` on scratch arrays of desc's shapes, on the
    engine's stream (drained first), best of 3 after a warm-up; a plan that fails is never
    chosen. Used once per shape when measuring is asked for."""
    try:
        import cupy
    except ImportError:
        return None
    import numpy as np
    bufs = {}

    def timer(g, i):
        with cupy.cuda.Device(dev):
            stream = cupy.cuda.ExternalStream(_stream(dev), dev)
            stream.synchronize()
            if not bufs:
                isz = np.dtype("float16" if desc.dtype == "bfloat16" else desc.dtype).itemsize
                for uid, shape in ((cudnn_plans.UID_X, desc.x), (cudnn_plans.UID_W, desc.w),
                                   (cudnn_plans.UID_Y, desc.y)):
                    bufs[uid] = cupy.zeros(int(np.prod(shape)) * isz, np.uint8)
            try:
                ws = cupy.empty(max(1, int(g.get_workspace_size_plan_at_index(i))), np.uint8)
                pack = {uid: b.data.ptr for uid, b in bufs.items()}
                start, stop, best = cupy.cuda.Event(), cupy.cuda.Event(), float("inf")
                for rep in range(4):
                    start.record(stream)
                    g.execute_plan_at_index(pack, ws.data.ptr, i, handle=h)
                    stop.record(stream)
                    stop.synchronize()
                    if rep:
                        best = min(best, cupy.cuda.get_elapsed_time(start, stop) / 1e3)
                return best
            except Exception:       # a plan that does not run here
                return float("inf")
    return timer


def _promote(geo, nd):
    """(x, w, y, pad, stride, dilate) of geometry `geo` for cuDNN: nd spatial dims (2 or 3)."""
    sp = slice(3 - nd, 3)
    x = (geo.N, geo.C) + geo.I[sp]
    w = (geo.M, geo.Cg) + geo.k[sp]
    y = (geo.N, geo.M) + geo.O[sp]
    return x, w, y, geo.p[sp], geo.s[sp], geo.d[sp]


def spec(kernel, geo, nsp, dtype, attrs, inputs, outputs, skip, ctype):
    """The cuDNN steps of one convolution kernel call, or None (im2col + cuBLAS instead)."""
    fe = frontend()
    # the device of the outputs (the tests' emulation builds specs from numpy arrays: gpu(0))
    ctx = getattr(outputs[0], "_ctx", None)
    dev = ctx.device_id if ctx is not None else 0
    dtype = str(dtype)
    if dtype not in ("float32", "float16", "float64", "bfloat16"):
        return None
    from .dot import CUBLAS_COMPUTE_32F_FAST_TF32, float32_compute
    tf32 = dtype == "float32" and float32_compute() == CUBLAS_COMPUTE_32F_FAST_TF32
    x, w, y, pad, stride, dilate = _promote(geo, 3 if nsp == 3 else 2)
    if 0 in x or 0 in y:
        return None             # nothing to compute: im2col's steps cover empty arrays
    autotune, limit = _tune(attrs)
    # a spec is plain data made for these shapes and switches: kept, a call costs a lookup
    # (measured with the fake frontend: 106-117 -> 21-23 us of CPU per Convolution spec; im2col
    # takes 20)
    memo = (kernel, x, w, y, pad, stride, dilate, dtype, tf32, autotune, limit, bool(skip),
            len(inputs), len(outputs), dev)
    got = _specs.get(memo, False)
    if got is not False:
        return got
    got = _spec(kernel, geo, dtype, inputs, outputs, skip, ctype, dev, fe, x, w, y, pad,
                stride, dilate, tf32, autotune, limit)
    if len(_specs) >= _SPEC_LIMIT:
        _specs.clear()
    _specs[memo] = got
    return got


def _spec(kernel, geo, dtype, inputs, outputs, skip, ctype, dev, fe, x, w, y, pad, stride,
          dilate, tf32, autotune, limit):
    device, version = _ident(dev, fe)

    def desc(pass_):
        return cudnn_plans.ConvDesc(pass_, dtype, x, w, y, pad, stride, dilate, tf32=tf32,
                                    device=device, version=version, workspace_limit=limit)
    X, W, Y = cudnn_plans.UID_X, cudnn_plans.UID_W, cudnn_plans.UID_Y
    # (pass, {uid: buffer}) in order
    if kernel == "conv:forward":            # in x, w[, b]; out y
        passes = [("fprop", {X: ("in", 0), W: ("in", 1), Y: ("out", 0)})]
    elif kernel == "deconv:forward":        # in data (= dy), w[, b]; out (= dx)
        passes = [("dgrad", {Y: ("in", 0), W: ("in", 1), X: ("out", 0)})]
    elif kernel == "conv:backward":         # in dy, x, w; out dx, dw[, db]
        passes = [("wgrad", {X: ("in", 1), Y: ("in", 0), W: ("out", 1)})]
        if not skip:
            passes.append(("dgrad", {Y: ("in", 0), W: ("in", 2), X: ("out", 0)}))
    else:                                   # deconv:backward: in dy (= x), data (= y), w
        passes = [] if skip else [("fprop", {X: ("in", 0), W: ("in", 2), Y: ("out", 0)})]
        passes.append(("wgrad", {X: ("in", 0), Y: ("in", 1), W: ("out", 1)}))
    h = handle(dev)
    steps, workspace = [], 256
    not_supported = (getattr(fe, "cudnnGraphNotSupportedError", RuntimeError), RuntimeError,
                     ValueError)
    for pass_, tensors in passes:
        d = desc(pass_)
        try:
            g = plans().plan(d, h, autotune=autotune, timer=_timer(d, dev, h))
        except not_supported:       # kept as None by spec(): not tried again
            return None
        workspace = max(workspace, int(g.get_workspace_size()))
        steps.append({"cudnn": d, "graph": g, "tensors": tensors})
    osz, isz = geo.osz, geo.I[0] * geo.I[1] * geo.I[2]
    has_bias = len(inputs) > 2 and kernel.endswith(":forward")
    if has_bias:
        ch, sp = (geo.M, osz) if kernel == "conv:forward" else (geo.C, isz)
        steps.append(_kernel("mxc_conv_add_bias", ctype, geo.N * ch * sp,
                             [("out", 0), ("in", 2), ("i64", geo.N * ch * sp), ("i64", ch),
                              ("i64", sp)]))
    if kernel.endswith(":backward") and len(outputs) > 2:
        ch, sp = (geo.M, osz) if kernel == "conv:backward" else (geo.C, isz)
        steps.append(_kernel("mxc_conv_bias_grad", ctype, ch,
                             [("in", 0), ("out", 2), ("i64", geo.N), ("i64", ch),
                              ("i64", sp)]))
    return {"steps": steps, "workspace": workspace}


def _kernel(name, ctype, n, args):
    L = launch("convolution", "%s<%s>" % (name, ctype), n, args)
    if L is None:
        raise NoKernel("convolution: %s<%s> is not instantiated" % (name, ctype))
    return L


def runner(step, dev):
    """run(cupy_inputs, cupy_outputs) of one cuDNN step on the engine's stream (the device
    worker calls it; the workspace is the last output)."""
    g, tensors = step["graph"], step["tensors"]

    def run(cin, cout):
        pointers = {uid: (cin if kind == "in" else cout)[i].data.ptr
                    for uid, (kind, i) in tensors.items()}
        g.execute(pointers, cout[-1].data.ptr, handle=handle(dev))
    return run
