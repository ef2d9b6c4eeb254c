"""Convolution and Deconvolution (ops/convolution.py's "conv:*" / "deconv:*" kernels, also
UpSampling's bilinear mode) on the GPU: through cuDNN's plans where the frontend imports and the
operator allows it (cudnn_conv.py), otherwise as im2col + cuBLAS: convolution.cu moves the data,
strided-batched GEMMs (one per chunk of samples, batched over the groups) multiply. That path
needs nothing beyond CuPy.

A spec here is {"steps": [...], "workspace": bytes}: in order on the engine's stream, each step
a kernel launch (a launch dict) or a GEMM ({"gemm": cuBLAS column-major call in dot.py's
format, "a"/"b"/"c": the buffers, ("in", i) / ("out", i) / ("ws", byte offset), "alpha",
"beta"}) that mxc/ops/_gpu.py runs through cuBLAS (``gemm_step``). Tests run the same steps on
the CPU (the kernels compiled with g++, the GEMMs in numpy).

Every operator is one of three convolution passes on a geometry whose "input" is the
convolution's (a Deconvolution's output) and "output" the convolution's (a Deconvolution's
data):
- forward:      y = W * x           im2col(x); tmp[g] = W[g] col[g]; permute tmp into y (+ bias)
- data grad:    dx = W^T * dy       permute dy; dcol[g] = W[g]^T dyp[g]; col2im (+ bias)
- weight grad:  dW = dy * x^T       im2col(x); permute dy; dW[g] (+)= dyp[g] col[g]^T
Convolution's backward is weight grad + data grad; Deconvolution's forward is a data grad (its
bias added by col2im) and its backward a forward (data) and a weight grad with the roles of
data and output gradient swapped.
"""
import numpy as np

from . import cudnn_conv, cudnn_plans
from ._launch import TRAIN_FLOATS, NoKernel, ctype, ctypes_of, i64s, launch
from .dot import OP_N, OP_T

# elements of the lowered matrices (col and tmp) per chunk of samples: 2^26 (256 MiB float32)
COL_BUDGET = 1 << 26


def instantiations():
    """Every name expression of convolution.cu."""
    out = []
    for t in ctypes_of(TRAIN_FLOATS):
        out += ["mxc_im2col<%s>" % t, "mxc_col2im<%s>" % t, "mxc_conv_permute_out<%s>" % t,
                "mxc_conv_permute_in<%s>" % t, "mxc_conv_bias_grad<%s>" % t,
                "mxc_conv_add_bias<%s>" % t]
    return out


class Geometry:
    """A convolution from C channels of spatial size I to M channels of size O (3-D, leading
    1s), N samples, G groups, kernel k, stride s, dilation d, pad p."""

    def __init__(self, N, C, I, M, O, k, s, d, p, G):
        self.N, self.C, self.I, self.M, self.O = N, C, tuple(I), M, tuple(O)
        self.k, self.s, self.d, self.p, self.G = tuple(k), tuple(s), tuple(d), tuple(p), G
        self.kp = k[0] * k[1] * k[2]
        self.osz = O[0] * O[1] * O[2]
        self.Cg, self.Mg = C // G, M // G
        self.CK = self.Cg * self.kp
        per_sample = self.C * self.kp * self.osz + self.M * self.osz
        self.nc = max(1, min(N, COL_BUDGET // max(1, per_sample)))
        self.col_elems = self.C * self.kp * self.nc * self.osz
        self.tmp_elems = self.M * self.nc * self.osz

    def chunks(self):
        return [(n0, min(self.nc, self.N - n0)) for n0 in range(0, self.N, self.nc)]

    def args(self, n0, nc):
        return i64s(n0, nc, self.C, self.M, *self.I, *self.O, *self.k, *self.s, *self.d,
                    *self.p)


def _spatial3(shape):
    sp = [int(d) for d in shape[2:]]
    return [1] * (3 - len(sp)) + sp


def _rm_gemm(A, a_off, lda, sa, ta, B, b_off, ldb, sb, tb, C, c_off, ldc, sc, M, N, K, batch,
             beta):
    """One row-major strided-batched GEMM C[b] = op(A[b]) op(B[b]) (+ beta C[b]), M x N x K,
    offsets and strides in elements: as cuBLAS's column-major call with the operands swapped
    (dot.py's mapping: C^T = op(B)^T op(A)^T)."""
    return {"gemm": {"transa": OP_T if tb else OP_N, "transb": OP_T if ta else OP_N,
                     "m": N, "n": M, "k": K, "a_off": b_off, "lda": ldb, "stride_a": sb,
                     "b_off": a_off, "ldb": lda, "stride_b": sa, "c_off": c_off, "ldc": ldc,
                     "stride_c": sc, "batch": batch},
            "a": B, "b": A, "c": C, "alpha": 1.0, "beta": float(beta)}


class _Planner:
    def __init__(self, geo, t, esize):
        self.g, self.t = geo, t
        # workspace: col (C*Kp x nc*O) then tmp / dyp (M x nc*O), 256-byte aligned
        self.col = ("ws", 0)
        tmp_at = -(-geo.col_elems * esize // 256) * 256
        self.tmp = ("ws", tmp_at)
        self.workspace = tmp_at + geo.tmp_elems * esize

    def _k(self, name, n, args):
        L = launch("convolution", "%s<%s>" % (name, self.t), n, args)
        if L is None:
            raise NoKernel("convolution: %s<%s> is not instantiated" % (name, self.t))
        return L

    def im2col(self, x, n0, nc):
        g = self.g
        return self._k("mxc_im2col", g.C * g.kp * nc * g.osz, [x, self.col, g.args(n0, nc)])

    def permute_in(self, dy, n0, nc):
        g = self.g
        return self._k("mxc_conv_permute_in", nc * g.M * g.osz,
                       [dy, self.tmp, ("i64", n0), ("i64", nc), ("i64", g.M), ("i64", g.osz)])

    def forward(self, x, w, y, bias):
        g, steps = self.g, []
        for n0, nc in g.chunks():
            ncO = nc * g.osz
            steps.append(self.im2col(x, n0, nc))
            # tmp[g] (Mg x ncO) = W[g] (Mg x CK) col[g] (CK x ncO)
            steps.append(_rm_gemm(w, 0, g.CK, g.Mg * g.CK, False, self.col, 0, ncO,
                                  g.CK * ncO, False, self.tmp, 0, ncO, g.Mg * ncO,
                                  g.Mg, ncO, g.CK, g.G, 0.0))
            steps.append(self._k("mxc_conv_permute_out", nc * g.M * g.osz,
                                 [self.tmp, bias or ("ptr", 0), y, ("i64", n0), ("i64", nc),
                                  ("i64", g.M), ("i64", g.osz)]))
        return steps

    def data_grad(self, dy, w, dx, bias):
        g, steps = self.g, []
        for n0, nc in g.chunks():
            ncO = nc * g.osz
            steps.append(self.permute_in(dy, n0, nc))
            # dcol[g] (CK x ncO) = W[g]^T (CK x Mg) dyp[g] (Mg x ncO)
            steps.append(_rm_gemm(w, 0, g.CK, g.Mg * g.CK, True, self.tmp, 0, ncO, g.Mg * ncO,
                                  False, self.col, 0, ncO, g.CK * ncO, g.CK, ncO, g.Mg, g.G,
                                  0.0))
            steps.append(self._k("mxc_col2im", nc * g.C * g.I[0] * g.I[1] * g.I[2],
                                 [self.col, bias or ("ptr", 0), dx, g.args(n0, nc)]))
        return steps

    def weight_grad(self, dy, x, dw):
        g, steps = self.g, []
        for j, (n0, nc) in enumerate(g.chunks()):
            ncO = nc * g.osz
            steps.append(self.im2col(x, n0, nc))
            steps.append(self.permute_in(dy, n0, nc))
            # dW[g] (Mg x CK) (+)= dyp[g] (Mg x ncO) col[g]^T (ncO x CK)
            steps.append(_rm_gemm(self.tmp, 0, ncO, g.Mg * ncO, False, self.col, 0, ncO,
                                  g.CK * ncO, True, dw, 0, g.CK, g.Mg * g.CK, g.Mg, g.CK, ncO,
                                  g.G, 0.0 if j == 0 else 1.0))
        return steps

    def bias_grad(self, dy, db, channels, spatial):
        return self._k("mxc_conv_bias_grad", channels,
                       [dy, db, ("i64", self.g.N), ("i64", channels), ("i64", spatial)])


def _geometry(kernel, inputs, outputs, iattr):
    v = [int(a) for a in tuple(iattr)]
    k, s, d, p, G = v[0:3], v[3:6], v[6:9], v[9:12], v[12]
    if kernel.startswith("conv"):
        # the convolution's input: the data (conv:forward in 0, conv:backward in 1)
        x = inputs[0] if kernel == "conv:forward" else inputs[1]
        w = inputs[1] if kernel == "conv:forward" else inputs[2]
        y_shape = outputs[0].shape if kernel == "conv:forward" else inputs[0].shape
        x_shape = x.shape
    else:
        # a Deconvolution's output is the convolution's input, its data the convolution's output
        w = inputs[1] if kernel == "deconv:forward" else inputs[2]
        x_shape = outputs[0].shape if kernel == "deconv:forward" else inputs[0].shape
        y_shape = inputs[0].shape if kernel == "deconv:forward" else inputs[1].shape
    if len(x_shape) not in (3, 4, 5) or len(y_shape) != len(x_shape):
        raise NoKernel("convolution: data must be 3-D, 4-D or 5-D")
    if int(x_shape[1]) % G or int(y_shape[1]) % G:
        raise NoKernel("convolution: channels do not divide into groups")
    return Geometry(int(x_shape[0]), int(x_shape[1]), _spatial3(x_shape), int(y_shape[1]),
                    _spatial3(y_shape), k, s, d, p, G), w


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    if kernel not in ("conv:forward", "conv:backward", "deconv:forward", "deconv:backward"):
        return None
    dt = np.dtype(outputs[0].dtype)
    if dt.name not in TRAIN_FLOATS:
        raise NoKernel("convolution kernels are bfloat16 and float16/32/64 only")
    geo, _ = _geometry(kernel, inputs, outputs, iattr)
    skip = len(tuple(iattr)) > 13 and int(tuple(iattr)[13]) != 0
    if cudnn_plans.enabled(attrs):
        nsp = len(inputs[0].shape) - 2
        spec = cudnn_conv.spec(kernel, geo, nsp, dt.name, attrs, inputs, outputs, skip,
                               ctype(dt))
        if spec is not None:
            return spec
    P = _Planner(geo, ctype(dt), dt.itemsize)
    bias_in = ("in", 2) if len(inputs) > 2 else None
    if kernel == "conv:forward":            # in x, w[, b]; out y
        steps = P.forward(("in", 0), ("in", 1), ("out", 0), bias_in)
    elif kernel == "deconv:forward":        # in x, w[, b]; out y: a data gradient
        steps = P.data_grad(("in", 0), ("in", 1), ("out", 0), bias_in)
    elif kernel == "conv:backward":         # in dy, x, w; out dx, dw[, db]
        steps = P.weight_grad(("in", 0), ("in", 1), ("out", 1))
        if not skip:
            steps += P.data_grad(("in", 0), ("in", 2), ("out", 0), None)
        if len(outputs) > 2:
            steps.append(P.bias_grad(("in", 0), ("out", 2), geo.M, geo.osz))
    else:                                   # deconv:backward: in dy, x, w; out dx, dw[, db]
        steps = [] if skip else P.forward(("in", 0), ("in", 2), ("out", 0), None)
        steps += P.weight_grad(("in", 1), ("in", 0), ("out", 1))
        if len(outputs) > 2:
            isz = geo.I[0] * geo.I[1] * geo.I[2]
            steps.append(P.bias_grad(("in", 0), ("out", 2), geo.C, isz))
    return {"steps": steps, "workspace": P.workspace}


def gemm_step(step, dtype):
    """run(cupy_inputs, cupy_outputs) of one GEMM step on the engine's stream; the workspace
    is the last output."""
    from .dot import cublas_module, cublas_types
    dt = np.dtype(dtype)
    c = step["gemm"]

    def run(cin, cout):
        from cupy.cuda import device
        cublas = cublas_module()
        ctype_, comp, scal = cublas_types(dt)

        def ptr(ref, off):
            kind, v = ref
            base = (cin[v] if kind == "in" else cout[v] if kind == "out" else cout[-1]).data.ptr
            return base + (int(v) if kind == "ws" else 0) + dt.itemsize * off
        alpha = np.array(step["alpha"], dtype=scal)
        beta = np.array(step["beta"], dtype=scal)
        cublas.gemmStridedBatchedEx(
            device.get_cublas_handle(), c["transa"], c["transb"], c["m"], c["n"], c["k"],
            alpha.ctypes.data, ptr(step["a"], c["a_off"]), ctype_, c["lda"], c["stride_a"],
            ptr(step["b"], c["b_off"]), ctype_, c["ldb"], c["stride_b"], beta.ctypes.data,
            ptr(step["c"], c["c_off"]), ctype_, c["ldc"], c["stride_c"], c["batch"], comp,
            -1)
    return run
