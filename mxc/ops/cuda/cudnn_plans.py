"""cuDNN execution plans for Convolution (forward, data gradient, weight gradient) through the
cuDNN frontend's Python API (the ``nvidia-cudnn-frontend`` wheel, module ``cudnn``), built once
per shape and kept in memory and on disk across processes.

Building a plan costs 0.5-0.9 s (MXNet's autotune delay was a standing complaint), so a plan is
keyed by everything that decides it (the pass, dtype and math mode, shapes and strides, pad,
stride, dilation, groups, the device and the cuDNN version, the autotune mode) and stored as
the frontend's serialized graph under ``MXC_CUDNN_PLAN_DIR`` (default
``~/.cache/mxc/cudnn-plans``), written to a temporary name and renamed: a second process
deserializes it instead of building. A file that does not load is rebuilt and replaced.

``MXNET_CUDNN_AUTOTUNE_DEFAULT`` (as MXNet): 0 takes cuDNN's heuristic choice; 1 or 2 (the
default is 1) builds every plan the heuristics offer, times each (``timer(graph, index)``,
seconds) and keeps the fastest, rebuilt alone so that only it is stored.

Tensors get fixed uids (X 1, W 2, Y 3 in the convolution's own roles), so a deserialized graph
is executed by uid: ``execute(graph, {uid: device pointer}, workspace pointer, handle)``.

float32 plans leave out the engines whose numerical note is TENSOR_CORE (TF32) unless the
descriptor allows TF32 (MXNet's MXNET_CUDA_ALLOW_TENSOR_CORE and
MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION, as for the cuBLAS GEMMs): float32 stays float32.

This module builds, caches and runs plans through whatever object stands for the ``cudnn``
module (the tests drive it with a fake that records every frontend call); cudnn_conv.py turns
the convolution operators' calls into its passes.
"""
import hashlib
import json
import os
import threading
import time

# the convolution's tensors, by role: data (X), filter (W), output (Y); their gradients use
# the same uids in the dgrad (dX = 1, W = 2, dY = 3) and wgrad (X = 1, dW = 2, dY = 3) graphs
UID_X, UID_W, UID_Y = 1, 2, 3
PASSES = ("fprop", "dgrad", "wgrad")


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


def _strides(shape):
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= int(shape[d])
    return st


class ConvDesc:
    """What decides a convolution plan. x, w, y: the shapes of data (N, C, *spatial), filter
    (M, C/groups, *kernel) and output (N, M, *out) in NC* layout; dtype: 'float32', 'float16',
    'bfloat16' or 'float64'; tf32: whether float32 may use TF32 tensor cores; workspace_limit:
    bytes a plan's workspace may take (0: any)."""

    def __init__(self, pass_, dtype, x, w, y, pad, stride, dilate, tf32=False, device="",
                 version="", workspace_limit=0):
        if pass_ not in PASSES:
            raise ValueError("cuDNN convolution pass must be one of %s, got %r" % (PASSES, pass_))
        self.pass_, self.dtype, self.tf32 = pass_, str(dtype), bool(tf32)
        self.x, self.w, self.y = (tuple(int(d) for d in s) for s in (x, w, y))
        self.pad, self.stride, self.dilate = (tuple(int(v) for v in s)
                                              for s in (pad, stride, dilate))
        self.device, self.version = str(device), str(version)
        self.workspace_limit = int(workspace_limit or 0)

    def fields(self, autotune):
        return {"pass": self.pass_, "dtype": self.dtype, "tf32": self.tf32, "x": self.x,
                "w": self.w, "y": self.y, "pad": self.pad, "stride": self.stride,
                "dilate": self.dilate, "device": self.device, "cudnn": self.version,
                "autotune": autotune, "workspace_limit": self.workspace_limit}

    def key(self, autotune):
        text = json.dumps(self.fields(autotune), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


class ConvPlans:
    """Plans of convolution passes, per descriptor: in memory, then on disk, then built.
    cudnn: the frontend module (or a stand-in with the same calls); timer(graph, index) ->
    seconds measures plan `index` of a graph for autotuning (None: heuristics only)."""

    def __init__(self, cudnn, directory=None, timer=None):
        self.cudnn = cudnn
        self.directory = directory or default_dir()
        self.timer = timer
        self._mem = {}
        self._lock = threading.Lock()
        self.stats = {"memory": 0, "disk": 0, "built": 0, "bad_files": 0}

    # ---- the frontend graph of one pass -----------------------------------------------------
    def _types(self, dtype, tf32):
        dt = self.cudnn.data_type
        io = {"float32": dt.FLOAT, "float16": dt.HALF, "bfloat16": dt.BFLOAT16,
              "float64": dt.DOUBLE}.get(dtype)
        if io is None:
            raise ValueError("cuDNN convolution: no plans for dtype %s" % dtype)
        comp = dt.DOUBLE if dtype == "float64" else dt.FLOAT
        return io, comp

    def _graph(self, desc, handle):
        """A validated operation graph of desc's pass with uids X 1, W 2, Y 3."""
        io, comp = self._types(desc.dtype, desc.tf32)
        g = self.cudnn.pygraph(io_data_type=io, intermediate_data_type=comp,
                               compute_data_type=comp, handle=handle)

        def tensor(name, shape, uid):
            t = g.tensor(name=name, dim=list(shape), stride=_strides(shape), data_type=io)
            t.set_uid(uid)
            return t
        conv = dict(padding=list(desc.pad), stride=list(desc.stride),
                    dilation=list(desc.dilate), compute_data_type=comp)
        if desc.pass_ == "fprop":
            X, W = tensor("X", desc.x, UID_X), tensor("W", desc.w, UID_W)
            out = g.conv_fprop(image=X, weight=W, **conv)
            shape, uid = desc.y, UID_Y
        elif desc.pass_ == "dgrad":
            DY, W = tensor("DY", desc.y, UID_Y), tensor("W", desc.w, UID_W)
            out = g.conv_dgrad(loss=DY, filter=W, **conv)
            shape, uid = desc.x, UID_X
        else:
            X, DY = tensor("X", desc.x, UID_X), tensor("DY", desc.y, UID_Y)
            out = g.conv_wgrad(image=X, loss=DY, **conv)
            shape, uid = desc.w, UID_W
        out.set_output(True).set_dim(list(shape)).set_stride(_strides(shape)).set_data_type(io)
        out.set_uid(uid)
        g.validate()
        g.build_operation_graph()
        return g

    def _select(self, g, desc):
        if desc.dtype == "float32" and not desc.tf32:
            g.deselect_numeric_notes([self.cudnn.numerical_note.TENSOR_CORE])
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
        """Run desc's pass: pointers {uid: device address} (UID_X, UID_W, UID_Y), workspace a
        device address of at least workspace_size(desc) bytes."""
        g = self.plan(desc, handle)
        g.execute(pointers, workspace, handle=handle)

    def workspace_size(self, desc, handle):
        return int(self.plan(desc, handle).get_workspace_size())
