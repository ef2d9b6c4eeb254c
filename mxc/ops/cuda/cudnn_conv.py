"""Convolution and Deconvolution through cuDNN: the operators' kernel calls as cuDNN plans
(cudnn_plans.py: the frontend, handles, plan cache and runner) run on the engine's stream,
where the frontend's Python module (``cudnn``, the ``nvidia-cudnn-frontend`` wheel of the gpu
extra) imports. convolution.py asks ``spec`` first
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
mxc/ops/_gpu.py runs through ``cudnn_plans.runner`` on the device worker (the pointers of
mxc's arrays, the workspace from the storage pool; every step reads it from offset 0, they run
in stream order). Plans are built at the first call of a shape (the workspace size comes from
them), on the pushing thread; MXNET_CUDNN_AUTOTUNE_DEFAULT, or the operator's cudnn_tune
('off': heuristics; 'limited_workspace'/'fastest': measured), chooses; all but 'fastest' (2)
keep to the operator's ``workspace`` (MB), as in MXNet.
"""
import numpy as np

from . import cudnn_plans
from ._launch import NoKernel, launch
from .cudnn_plans import Desc

# the convolution's tensors, by role: data (X), filter (W), output (Y); their gradients use
# the same uids in the dgrad (dX = 1, W = 2, dY = 3) and wgrad (X = 1, dW = 2, dY = 3) graphs
UID_X, UID_W, UID_Y = 1, 2, 3
PASSES = ("fprop", "dgrad", "wgrad")


class ConvDesc(Desc):
    """What decides a convolution plan. x, w, y: the shapes of data (N, C, *spatial), filter
    (M, C/groups, *kernel) and output (N, M, *out) in NC* layout; dtype: 'float32', 'float16',
    'bfloat16' or 'float64'; tf32: whether float32 may use TF32 tensor cores (float32 plans
    leave out the engines whose numerical note is TENSOR_CORE otherwise: MXNet's
    MXNET_CUDA_ALLOW_TENSOR_CORE and MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION, as for the
    cuBLAS GEMMs); workspace_limit: bytes a plan's workspace may take (0: any)."""
    family = "conv"

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

    def fields(self):
        return {"pass": self.pass_, "tf32": self.tf32, "x": self.x, "w": self.w, "y": self.y,
                "pad": self.pad, "stride": self.stride, "dilate": self.dilate}

    def excluded_notes(self, cudnn):
        if self.dtype == "float32" and not self.tf32:
            return [cudnn.numerical_note.TENSOR_CORE]
        return []

    def buffers(self):
        isz = cudnn_plans.itemsize(self.dtype)
        return {uid: isz * int(np.prod(s))
                for uid, s in ((UID_X, self.x), (UID_W, self.w), (UID_Y, self.y))}

    def build(self, cudnn, g, io, comp):
        """The pass's graph with uids X 1, W 2, Y 3."""
        conv = dict(padding=list(self.pad), stride=list(self.stride),
                    dilation=list(self.dilate), compute_data_type=comp)
        if self.pass_ == "fprop":
            X, W = self.tensor(g, "X", self.x, UID_X, io), self.tensor(g, "W", self.w, UID_W, io)
            out = g.conv_fprop(image=X, weight=W, **conv)
            shape, uid = self.y, UID_Y
        elif self.pass_ == "dgrad":
            DY = self.tensor(g, "DY", self.y, UID_Y, io)
            W = self.tensor(g, "W", self.w, UID_W, io)
            out = g.conv_dgrad(loss=DY, filter=W, **conv)
            shape, uid = self.x, UID_X
        else:
            X = self.tensor(g, "X", self.x, UID_X, io)
            DY = self.tensor(g, "DY", self.y, UID_Y, io)
            out = g.conv_wgrad(image=X, loss=DY, **conv)
            shape, uid = self.w, UID_W
        self.output(out, shape, uid, io)


def _promote(geo, nd):
    """(x, w, y, pad, stride, dilate) of geometry `geo` for cuDNN: nd spatial dims (2 or 3)."""
    sp = slice(3 - nd, 3)
    x = (geo.N, geo.C) + geo.I[sp]
    w = (geo.M, geo.Cg) + geo.k[sp]
    y = (geo.N, geo.M) + geo.O[sp]
    return x, w, y, geo.p[sp], geo.s[sp], geo.d[sp]


def spec(kernel, geo, nsp, dtype, attrs, inputs, outputs, skip, ctype):
    """The cuDNN steps of one convolution kernel call, or None (im2col + cuBLAS instead)."""
    dev = cudnn_plans.device_of(outputs)
    dtype = str(dtype)
    if dtype not in ("float32", "float16", "float64", "bfloat16"):
        return None
    from .dot import CUBLAS_COMPUTE_32F_FAST_TF32, float32_compute
    tf32 = dtype == "float32" and float32_compute() == CUBLAS_COMPUTE_32F_FAST_TF32
    x, w, y, pad, stride, dilate = _promote(geo, 3 if nsp == 3 else 2)
    if 0 in x or 0 in y:
        return None             # nothing to compute: im2col's steps cover empty arrays
    autotune, limit = cudnn_plans.tune(attrs)
    key = ("conv", kernel, x, w, y, pad, stride, dilate, dtype, tf32, autotune, limit,
           bool(skip), len(inputs), len(outputs), dev)
    return cudnn_plans.memo(key, lambda: _spec(kernel, geo, dtype, inputs, outputs, skip, ctype,
                                               dev, x, w, y, pad, stride, dilate, tf32,
                                               autotune, limit))


def _spec(kernel, geo, dtype, inputs, outputs, skip, ctype, dev, x, w, y, pad, stride, dilate,
          tf32, autotune, limit):
    device, version = cudnn_plans.ident(dev)

    def desc(pass_):
        return ConvDesc(pass_, dtype, x, w, y, pad, stride, dilate, tf32=tf32, device=device,
                        version=version, workspace_limit=limit)
    X, W, Y = UID_X, UID_W, UID_Y
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
    descs = [desc(pass_) for pass_, _ in passes]
    gs = cudnn_plans.graphs(descs, dev, autotune)
    if gs is None:
        return None
    steps, workspace = [], 256
    for d, g, (_, tensors) in zip(descs, gs, passes):
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
