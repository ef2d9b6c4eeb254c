"""cuDNN execution plans through the cuDNN frontend's Python API (the ``nvidia-cudnn-frontend``
wheel, module ``cudnn``), for every operator family that runs through cuDNN: the frontend
module and its probe, one handle per device and thread, plans built once per descriptor and kept
in memory and on disk across processes, autotuning, and the runner of a plan step. The families
only describe their graphs: cudnn_conv.py (Convolution, Deconvolution), cudnn_norm.py
(BatchNorm); each descriptor (a ``Desc``) says what decides its plan and builds its graph.

Building a plan costs 0.5-0.9 s (MXNet's autotune delay was a standing complaint), so a plan is
keyed by everything that decides it (the family and pass, dtype and math mode, shapes and the
operation's attributes, the device and the cuDNN version, the autotune mode) and stored as the
frontend's serialized graph under ``MXC_CUDNN_PLAN_DIR`` (default ``~/.cache/mxc/cudnn-plans``),
written to a temporary name and renamed: a second process deserializes it instead of building.
A file that does not load is rebuilt and replaced.

``MXNET_CUDNN_AUTOTUNE_DEFAULT`` (as MXNet): 0 takes cuDNN's heuristic choice; 1 or 2 (the
default is 1) builds every plan the heuristics offer, times each (``timer(graph, index)``,
seconds) and keeps the fastest, rebuilt alone so that only it is stored.

Tensors get fixed uids chosen by each family, so a deserialized graph is executed by uid:
``execute(graph, {uid: device pointer}, workspace pointer, handle)``. A plan step of a spec is
``{"cudnn": desc, "graph": plan, "tensors": {uid: ("in"|"out", i) or ("ws", byte offset)},
"ws_at": byte offset of the plan's own workspace}``: mxc/ops/_gpu.py runs it through ``runner``
on the device worker, the spec's workspace array being the last output.

This module drives whatever object stands for the ``cudnn`` module (the tests install a fake
that records every frontend call, tests/ops/cuda/_fake_cudnn.py). ``import mxc`` never imports
``cudnn``: it is imported at the first GPU call of an operator that may use it.
"""
import contextlib
import hashlib
import json
import os
import threading
import time


def default_dir():
    return os.environ.get("MXC_CUDNN_PLAN_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "mxc", "cudnn-plans")


def autotune_mode():
    """MXNET_CUDNN_AUTOTUNE_DEFAULT: 0 heuristics, 1 or 2 measured (MXNet's default 1)."""
    try:
        v = int(os.environ.get("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1"))
    except ValueError:
        v = 1
    return 0 if v <= 0 else 1


def strides(shape):
    """Packed row-major strides of shape."""
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= int(shape[d])
    return st


_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


class Desc:
    """What decides one plan of a family's pass. Subclasses set family, pass_, dtype (the
    data's: 'float32', 'float16', 'bfloat16' or 'float64'), workspace_limit (bytes, 0: any)
    and implement fields() (everything else that decides the plan, JSON-able), build(cudnn,
    graph, io, compute) (the graph's tensors, with their uids, and operations) and buffers()
    ({uid: bytes}, for the scratch arrays plans are timed on)."""
    family = ""
    tf32 = False
    workspace_limit = 0
    device = version = ""

    def fields(self):
        raise NotImplementedError

    def build(self, cudnn, g, io, comp):
        raise NotImplementedError

    def buffers(self):
        raise NotImplementedError

    def excluded_notes(self, cudnn):
        """Numerical notes of engines this plan must not use."""
        return []

    def key(self, autotune):
        f = dict(self.fields(), family=self.family, dtype=self.dtype, device=self.device,
                 cudnn=self.version, autotune=autotune, workspace_limit=self.workspace_limit)
        text = json.dumps(f, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def tensor(self, g, name, shape, uid, data_type, stride=None):
        t = g.tensor(name=name, dim=list(shape), stride=list(stride or strides(shape)),
                     data_type=data_type)
        t.set_uid(uid)
        return t

    @staticmethod
    def output(t, shape, uid, data_type, stride=None):
        t.set_output(True).set_dim(list(shape)).set_stride(list(stride or strides(shape)))
        t.set_data_type(data_type)
        t.set_uid(uid)
        return t


class Plans:
    """Plans per descriptor: in memory, then on disk, then built. cudnn: the frontend module
    (or a stand-in with the same calls); timer(graph, index) -> seconds measures plan `index`
    of a graph for autotuning (None: heuristics only)."""

    def __init__(self, cudnn, directory=None, timer=None):
        self.cudnn = cudnn
        self.directory = directory or default_dir()
        self.timer = timer
        self._mem = {}
        self._lock = threading.Lock()
        self.stats = {"memory": 0, "disk": 0, "built": 0, "bad_files": 0}

    # ---- the frontend graph of one pass -----------------------------------------------------
    def types(self, dtype):
        """(io, compute) frontend data types of data of `dtype`."""
        dt = self.cudnn.data_type
        io = {"float32": dt.FLOAT, "float16": dt.HALF, "bfloat16": dt.BFLOAT16,
              "float64": dt.DOUBLE}.get(dtype)
        if io is None:
            raise ValueError("cuDNN: no plans for dtype %s" % dtype)
        comp = dt.DOUBLE if dtype == "float64" else dt.FLOAT
        return io, comp

    def _graph(self, desc, handle):
        """A validated operation graph of desc's pass."""
        io, comp = self.types(desc.dtype)
        g = self.cudnn.pygraph(io_data_type=io, intermediate_data_type=comp,
                               compute_data_type=comp, handle=handle)
        desc.build(self.cudnn, g, io, comp)
        g.validate()
        g.build_operation_graph()
        return g

    def _select(self, g, desc):
        notes = desc.excluded_notes(self.cudnn)
        if notes:
            g.deselect_numeric_notes(notes)
        if desc.workspace_limit:
            g.deselect_workspace_greater_than(desc.workspace_limit)

    def _build(self, desc, handle, autotune, timer):
        cd = self.cudnn
        g = self._graph(desc, handle)
        g.create_execution_plans([cd.heur_mode.A, cd.heur_mode.FALLBACK])
        self._select(g, desc)
        g.check_support()
        if not autotune:
            g.build_plans(cd.build_plan_policy.HEURISTICS_CHOICE)
            return g
        g.build_plans(cd.build_plan_policy.ALL)
        n = g.get_execution_plan_count()
        times = [timer(g, i) for i in range(n)]
        best = min(range(n), key=lambda i: times[i])
        engine, knobs = g.get_engine_and_knobs_at_index(best)
        # the winner alone, so that the stored graph holds one plan
        g1 = self._graph(desc, handle)
        g1.create_execution_plan(engine, knobs)
        self._select(g1, desc)
        g1.check_support()
        g1.build_plans()
        return g1

    # ---- the cache ----------------------------------------------------------------------------
    def _path(self, key):
        return os.path.join(self.directory, key + ".plan")

    def _load(self, key, handle):
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        try:
            g = self.cudnn.pygraph(handle=handle)
            g.deserialize(handle, data)
            return g
        except Exception:           # a truncated file, another cuDNN: rebuild and replace it
            self.stats["bad_files"] += 1
            return None

    def _store(self, key, g):
        data = bytes(g.serialize())
        os.makedirs(self.directory, exist_ok=True)
        tmp = "%s.%d.%d.tmp" % (self._path(key), os.getpid(), threading.get_ident())
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, self._path(key))

    def plan(self, desc, handle, autotune=None, timer=None):
        """The built graph for desc: memory, disk, or built (and stored) now. timer: measures
        plans for this call (default: the cache's)."""
        autotune = autotune_mode() if autotune is None else autotune
        timer = timer or self.timer
        if timer is None:           # nothing can measure: the heuristic plan, keyed as such
            autotune = 0
        key = desc.key(autotune)
        with self._lock:
            g = self._mem.get(key)
            if g is not None:
                self.stats["memory"] += 1
                return g
            g = self._load(key, handle)
            if g is not None:
                self.stats["disk"] += 1
            else:
                t0 = time.perf_counter()
                g = self._build(desc, handle, autotune, timer)
                self.stats["built"] += 1
                self.stats["build_seconds"] = time.perf_counter() - t0
                try:
                    self._store(key, g)
                except OSError:     # a read-only cache directory: keep it in memory only
                    pass
            self._mem[key] = g
            return g

    def execute(self, desc, handle, pointers, workspace):
        """Run desc's pass: pointers {uid: device address}, workspace a device address of at
        least workspace_size(desc) bytes."""
        g = self.plan(desc, handle)
        g.execute(pointers, workspace, handle=handle)

    def workspace_size(self, desc, handle):
        return int(self.plan(desc, handle).get_workspace_size())


# ---- the process's frontend, handles and plans ---------------------------------------------------
_state = {"module": None, "probed": False, "plans": None}
_handles = {}               # (device id, thread) -> cuDNN handle bound to the engine's stream
_idents = {}                # device id -> (device name and arch, cuDNN version) of plan keys
_specs = {}                 # a family's memo: everything a spec depends on -> the spec or None
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
    the next use); forgets handles, plans and specs."""
    _state["module"], _state["probed"], _state["plans"] = module, not probe, None
    _handles.clear()
    _idents.clear()
    _specs.clear()


def enabled(attrs):
    """Whether an operator call may use cuDNN: not with its cudnn_off (as in MXNet), not under
    MXC_CUDNN_ENABLED=0 (every operator; MXNet only had its build flag), not without the
    module."""
    if attrs.get("cudnn_off") or os.environ.get("MXC_CUDNN_ENABLED", "1") == "0":
        return False
    return frontend() is not None


def plans():
    if _state["plans"] is None:
        _state["plans"] = Plans(frontend())
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


def ident(dev):
    """(device name and arch, cuDNN version) of gpu(dev), for plan keys."""
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
            version = str(frontend().backend_version())
        except Exception:
            version = ""
        got = _idents[dev] = (name, version)
    return got


def tune(attrs):
    """(autotune 0/1, workspace limit in bytes or 0) as MXNet: the operator's cudnn_tune, else
    MXNET_CUDNN_AUTOTUNE_DEFAULT (0 'off', 1 'limited_workspace', 2 'fastest'); all but
    'fastest' keep a plan's workspace within the operator's ``workspace`` (MB; none for
    operators without that parameter)."""
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
    """timer(graph, index) -> seconds of plan `index` on scratch arrays of desc's tensors, on
    the engine's stream (drained first), best of 3 after a warm-up; a plan that fails is never
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
                for uid, nbytes in desc.buffers().items():
                    bufs[uid] = cupy.zeros(max(1, int(nbytes)), np.uint8)
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


def itemsize(dtype):
    return _ITEMSIZE[str(dtype)]


def graphs(descs, dev, autotune):
    """The plans of descs on gpu(dev), built on this thread, or None where cuDNN supports one
    of them with no engine (the caller keeps None: not tried again)."""
    fe = frontend()
    h = handle(dev)
    not_supported = (getattr(fe, "cudnnGraphNotSupportedError", RuntimeError), RuntimeError,
                     ValueError)
    out = []
    for d in descs:
        try:
            out.append(plans().plan(d, h, autotune=autotune, timer=_timer(d, dev, h)))
        except not_supported:
            return None
    return out


def memo(key, make):
    """A family's spec for `key` (plain data made for those shapes and switches), made once by
    make(): a later call costs a lookup (measured with the fake frontend: 106-117 -> 21-23 us
    of CPU per Convolution spec; im2col takes 20)."""
    got = _specs.get(key, False)
    if got is not False:
        return got
    got = make()
    if len(_specs) >= _SPEC_LIMIT:
        _specs.clear()
    _specs[key] = got
    return got


def device_of(outputs):
    """The device of the outputs (the tests' emulation builds specs from numpy arrays:
    gpu(0))."""
    ctx = getattr(outputs[0], "_ctx", None)
    return ctx.device_id if ctx is not None else 0


def runner(step, dev):
    """run(cupy_inputs, cupy_outputs) of one plan step on the engine's stream (the device
    worker calls it; the spec's workspace is the last output)."""
    g, tensors, ws_at = step["graph"], step["tensors"], int(step.get("ws_at", 0))

    def run(cin, cout):
        ws = cout[-1].data.ptr

        def ptr(ref):
            kind, i = ref
            if kind == "ws":
                return ws + int(i)
            return (cin if kind == "in" else cout)[i].data.ptr
        pointers = {uid: ptr(ref) for uid, ref in tensors.items()}
        g.execute(pointers, ws + ws_at, handle=handle(dev))
    return run
