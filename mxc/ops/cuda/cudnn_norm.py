"""BatchNorm through cuDNN: the "bn_fwd" / "bn_bwd" kernel calls (ops/normalization.py) as
cuDNN frontend graphs (plans from cudnn_plans.py) beside a few of normalization.cu's kernels.
normalization.py asks ``spec`` first and keeps its own launches where it returns None: no
module, ``cudnn_off=True`` (as in MXNet), ``MXC_CUDNN_ENABLED=0``, float64 data, the
inference-formula backward (use_global_stats, or a backward outside training: MXNet ran its
own kernels there too, and cuDNN's batchnorm_backward is the batch-statistics gradient),
BatchNorm_v1's variance output, empty data, or a graph no cuDNN engine supports (remembered).

mxc's semantics stay those of its CPU operator (ops/normalization.py), which differ from
MXNet's cuDNN path in one respect: the moving statistics are updated by the *backward* with the
biased batch variance (MXNet's cuDNN forward updated them with cuDNN's unbiased one); cuDNN is
only asked for what does not depend on that choice:

- training forward:  batchnorm(x, gamma, beta, eps) -> y, batch mean and inverse std (the
  outputs with output_mean_var, else workspace);
- inference forward: normalization.cu's mxc_bn_moving turns the moving statistics into the
  mean and 1/sqrt(var + eps) (the outputs with output_mean_var), then
  batchnorm_inference(x, mean, invstd, gamma, beta);
- training backward: normalization.cu's statistics launches (the same double sums as the CUDA
  C path) give the batch mean and inverse std in float32, batchnorm_backward(dy, x, gamma,
  mean, invstd) -> dx, dgamma, dbeta, then mxc_bn_bwd_channel with no partial sums updates
  the moving statistics (moving * momentum + batch * (1 - momentum), biased variance).

fix_gamma: gamma is read as ones (a workspace row filled by init.cu's mxc_fill) and its
gradient is zeroed after the graph, as MXNet's cuDNN path did. The data is viewed as (A, K, B)
around the channel axis, as cuDNN's 4-D (A, K, B, 1) (channels-last data, B = 1, with NHWC
strides); gamma, beta and the statistics are float32 (1, K, 1, 1) beside float32, float16 or
bfloat16 data. eps is a compile-time constant of the graph (tensor_scalar), so it is part of
the plan's key. A ReLU the executor folded into an inference BatchNorm runs after it on a GPU
(ops/activation.py folded_relu), as after the CUDA C kernels.
"""
import numpy as np

from . import cudnn_plans
from ._launch import CTYPE, NoKernel, launch
from .cudnn_plans import Desc

# tensor uids of the three graphs (the data gradient has its own: the data is an input of the
# same graph)
(UID_X, UID_Y, UID_DY, UID_SCALE, UID_BIAS, UID_MEAN, UID_INVSTD, UID_DSCALE, UID_DBIAS,
 UID_DX) = range(1, 11)
PASSES = ("train", "infer", "bwd")
DTYPES = ("float32", "float16", "bfloat16")


class BnDesc(Desc):
    """What decides a BatchNorm plan: the pass ('train': batch statistics forward, 'infer':
    forward with given statistics, 'bwd': the batch-statistics gradient), the data's dtype and
    (A, K, B) view and eps (train)."""
    family = "batchnorm"

    def __init__(self, pass_, dtype, A, K, B, eps=0.0, device="", version=""):
        if pass_ not in PASSES:
            raise ValueError("cuDNN BatchNorm pass must be one of %s, got %r" % (PASSES, pass_))
        self.pass_, self.dtype = pass_, str(dtype)
        self.A, self.K, self.B = int(A), int(K), int(B)
        self.eps = float(eps) if pass_ == "train" else 0.0
        self.device, self.version = str(device), str(version)

    def fields(self):
        return {"pass": self.pass_, "akb": (self.A, self.K, self.B), "eps": self.eps}

    def data_dims(self):
        """cuDNN's dims and strides of the data: (A, K, B, 1), channels-last (B = 1) with
        NHWC strides."""
        A, K, B = self.A, self.K, self.B
        if B == 1:
            return [A, K, 1, 1], [K, 1, K, K]
        return [A, K, B, 1], [K * B, B, 1, 1]

    def buffers(self):
        data = cudnn_plans.itemsize(self.dtype) * self.A * self.K * self.B
        return {uid: data if uid in (UID_X, UID_Y, UID_DY, UID_DX) else 4 * self.K
                for uid in self.uids()}

    def uids(self):
        if self.pass_ == "train":
            return (UID_X, UID_SCALE, UID_BIAS, UID_Y, UID_MEAN, UID_INVSTD)
        if self.pass_ == "infer":
            return (UID_X, UID_MEAN, UID_INVSTD, UID_SCALE, UID_BIAS, UID_Y)
        return (UID_DY, UID_X, UID_SCALE, UID_MEAN, UID_INVSTD, UID_DX, UID_DSCALE, UID_DBIAS)

    def build(self, cudnn, g, io, comp):
        f32 = cudnn.data_type.FLOAT
        dims, st = self.data_dims()
        pdims, pst = [1, self.K, 1, 1], [self.K, 1, 1, 1]

        def param(name, uid):
            return self.tensor(g, name, pdims, uid, f32, pst)
        X = self.tensor(g, "X", dims, UID_X, io, st)
        if self.pass_ == "bwd":
            DY = self.tensor(g, "DY", dims, UID_DY, io, st)
            dx, dscale, dbias = g.batchnorm_backward(
                grad=DY, input=X, scale=param("scale", UID_SCALE), mean=param("mean", UID_MEAN),
                inv_variance=param("inv_variance", UID_INVSTD), compute_data_type=comp,
                name="bn_bwd")
            self.output(dx, dims, UID_DX, io, st)
            self.output(dscale, pdims, UID_DSCALE, f32, pst)
            self.output(dbias, pdims, UID_DBIAS, f32, pst)
            return
        if self.pass_ == "train":
            eps = g.tensor_scalar(self.eps, cudnn.scalar_type.COMPILE_TIME_CONST)
            out = g.batchnorm(input=X, scale=param("scale", UID_SCALE),
                              bias=param("bias", UID_BIAS), epsilon=eps,
                              compute_data_type=comp, name="bn")
            y, mean, invstd = out[0], out[1], out[2]
            self.output(mean, pdims, UID_MEAN, f32, pst)
            self.output(invstd, pdims, UID_INVSTD, f32, pst)
        else:
            y = g.batchnorm_inference(input=X, mean=param("mean", UID_MEAN),
                                      inv_variance=param("inv_variance", UID_INVSTD),
                                      scale=param("scale", UID_SCALE),
                                      bias=param("bias", UID_BIAS), compute_data_type=comp,
                                      name="bn_inference")
        self.output(y, dims, UID_Y, io, st)


def spec(kernel, inputs, outputs, iattr, fattr, attrs):
    """The steps of one BatchNorm kernel call through cuDNN, or None (normalization.cu's
    launches instead)."""
    A, K, B, train, fixg, third = (int(v) for v in tuple(iattr)[:6])
    data = inputs[0 if kernel == "bn_fwd" else 1]
    dtype = np.dtype(data.dtype).name
    has_mv = kernel == "bn_fwd" and len(outputs) >= 3
    if (dtype not in DTYPES or A * K * B == 0 or (kernel == "bn_bwd" and not train)
            or (has_mv and third)):
        return None
    eps = float(tuple(fattr)[0])
    mom = float(tuple(fattr)[1]) if kernel == "bn_bwd" else 0.0
    dev = cudnn_plans.device_of(outputs)
    autotune, _ = cudnn_plans.tune(attrs)
    key = ("batchnorm", kernel, dtype, A, K, B, train, fixg, third, eps, mom, has_mv,
           len(inputs), len(outputs), autotune, dev)
    return cudnn_plans.memo(key, lambda: _spec(kernel, dtype, A, K, B, train, fixg, third, eps,
                                               mom, has_mv, dev, autotune))


def _spec(kernel, dtype, A, K, B, train, fixg, update, eps, mom, has_mv, dev, autotune):
    from . import normalization as N     # its workspace layout and statistics launches
    t = CTYPE[dtype]
    device, version = cudnn_plans.ident(dev)
    pass_ = "bwd" if kernel == "bn_bwd" else "train" if train else "infer"
    desc = BnDesc(pass_, dtype, A, K, B, eps=eps, device=device, version=version)
    gs = cudnn_plans.graphs([desc], dev, autotune)
    if gs is None:
        return None
    g = gs[0]
    n = A * B
    P = N.bn_parts(n)
    # double rows of normalization.cu's statistics, float32 rows (one double slot per channel
    # each) of the graph's statistics, gamma's ones and the unused parameter gradients
    w = N.Workspace(part=K * P, mean=K, invstd=K, var=K, coef=4 * K, fmean=K, finvstd=K,
                    ones=K, sgamma=K, sbeta=K)
    ws_at = -(-w.size // 256) * 256
    steps = []
    scale = ("in", 1 if kernel == "bn_fwd" else 2)
    if fixg:
        steps.append(_launch("init", "mxc_fill<float>", K,
                             [w["ones"], ("i64", K), ("f64", 1.0)]))
        scale = w["ones"]
    if pass_ == "bwd":          # in dy, x, gamma; out dx, dgamma, dbeta, mm, mv
        steps[:0] = N.bn_stats(t, ("in", 1), w, A, K, B, P, eps, w["fmean"], w["finvstd"], 0)
        tensors = {UID_DY: ("in", 0), UID_X: ("in", 1), UID_SCALE: scale,
                   UID_MEAN: w["fmean"], UID_INVSTD: w["finvstd"], UID_DX: ("out", 0),
                   UID_DSCALE: ("out", 1), UID_DBIAS: ("out", 2)}
    else:                       # in x, gamma, beta, mm, mv; out y[, mean, invstd]
        om = ("out", 1) if has_mv else w["fmean"]
        ov = ("out", 2) if has_mv else w["finvstd"]
        if pass_ == "infer":
            steps.insert(0, _launch("normalization", "mxc_bn_moving<%s>" % t, K,
                                    [("in", 3), ("in", 4), w["mean"], w["invstd"], om, ov,
                                     ("i64", K), ("f64", eps), ("i32", 0)]))
        tensors = {UID_X: ("in", 0), UID_SCALE: scale, UID_BIAS: ("in", 2), UID_Y: ("out", 0),
                   UID_MEAN: om, UID_INVSTD: ov}
    steps.append({"cudnn": desc, "graph": g, "tensors": tensors, "ws_at": ws_at})
    if pass_ == "bwd":
        if fixg:                # MXNet's cuDNN path: gamma's gradient is zero
            steps.append(_launch("init", "mxc_fill<float>", K,
                                 [("out", 1), ("i64", K), ("f64", 0.0)]))
        if update:              # the moving statistics, from the same double statistics
            steps.append(_launch("normalization", "mxc_bn_bwd_channel<%s>" % t, K,
                                 [w["part"], w["part"], w["mean"], w["invstd"], w["var"],
                                  scale, w["sgamma"], w["sbeta"], ("out", 3), ("out", 4),
                                  w["coef"], ("i64", K), ("i64", 0), ("i64", n), ("i32", 1),
                                  ("i32", fixg), ("i32", 1), ("f64", mom)]))
    return {"steps": steps, "workspace": ws_at + max(256, int(g.get_workspace_size()))}


def _launch(family, name, n, args):
    L = launch(family, name, n, args)
    if L is None:
        raise NoKernel("BatchNorm: %s is not instantiated" % name)
    return L
