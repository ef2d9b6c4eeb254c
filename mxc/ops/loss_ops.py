"""Output and loss operators as MXNet 1.9.1: LinearRegressionOutput, LogisticRegressionOutput,
MAERegressionOutput, smooth_l1, softmax_cross_entropy, BlockGrad (stop_gradient), make_loss,
MakeLoss, and the normalisations L2Normalization and LRN.

The *RegressionOutput, make_loss and MakeLoss operators are loss layers: their gradient ignores
the head gradient, as MXNet's. Kernels: mxc/ops/cpu/loss_ops.pyx (smooth_l1, LRN) and
mxc/ops/cpu/softmax.pyx (softmax_cross_entropy); the rest reuse the elementwise kernels.
"""
import numpy as np

from .elemwise import unary_infer
from .params import Param
from .registry import OpDef, register, kernel_forward
from .softmax import check_float, no_second_order



def _copy_forward(name):
    return kernel_forward("elemwise", "unary:copy", name=name)


def _first_only(fwd):
    """A forward that passes only input 0 to the (one-input) kernel."""
    return lambda a, i, o: fwd(a, i[:1], o)


def _f32(v):
    """A Python float rounded through float32, as MXNet's float parameters are."""
    return float(np.float32(v))


# ---- regression outputs ----------------------------------------------------------------------
def _reg_infer(name):
    def infer(attrs, shapes, dtypes):
        d, lab = tuple(shapes[0]), tuple(shapes[1])
        if not d:
            raise ValueError(f"{name}: data must have at least one dimension")
        check_float(name, dtypes[0])
        if np.dtype(dtypes[1]) != np.dtype(dtypes[0]):
            raise ValueError(f"{name}: label dtype {np.dtype(dtypes[1]).name} differs from the "
                             f"data's {np.dtype(dtypes[0]).name}")
        if not lab or lab[0] != d[0] or int(np.prod(lab)) != int(np.prod(d)):
            raise ValueError(f"{name}: label shape {lab} does not fit data {d} (same first "
                             f"dimension and size needed)")
        return [d], [np.dtype(dtypes[0])]
    return infer


def _reg_grad(kind):
    def grad(F, attrs, inputs, outputs, out_grads):
        data, label = inputs
        out = outputs[0]
        num_output = label.size // label.shape[0] if label.shape[0] else 1
        scale = float(np.float32(attrs["grad_scale"]) / np.float32(num_output))
        d = out - label.reshape(out.shape)
        if kind == "mae":
            d = F.sign(d)
        return [d * scale, F.zeros_like(label)]
    return grad


def _label_like_data(attrs, in_shapes):
    """The label of a regression output has the data's shape (MXNet infers it so)."""
    d = in_shapes[0]
    return [d, d] if d is not None else list(in_shapes)


for _name, _fwd, _kind, _what in [
        ("LinearRegressionOutput", "unary:copy", "linear", "identity; gradient (out - label)"),
        ("MAERegressionOutput", "unary:copy", "mae", "identity; gradient sign(out - label)"),
        ("LogisticRegressionOutput", "unary:sigmoid", "logistic",
         "sigmoid; gradient (out - label)")]:
    register(OpDef(_name, inputs=("data", "label"), params=(Param("grad_scale", float, 1.0),),
                   infer=_reg_infer(_name), infer_inputs=_label_like_data,
                   forward=_first_only(kernel_forward("elemwise", _fwd, name=_name)),
                   grad=_reg_grad(_kind),
                   doc=f"Regression output layer: forward {_what} * grad_scale / m "
                       f"(m = outputs per example), whatever the head gradient."))


# ---- smooth_l1 -------------------------------------------------------------------------------
_SL1_PARAMS = (Param("scalar", float, 1.0), Param("is_int", bool, True))


def _sigma(a, i, o):
    return a["scalar"]


register(OpDef("smooth_l1", params=_SL1_PARAMS, infer=lambda a, s, d: _float_infer("smooth_l1", s, d),
               forward=kernel_forward("loss_ops", "smooth_l1", ints=(), floats=("sigma",),
                                      fill={"sigma": _sigma}, name="smooth_l1"),
               grad=lambda F, a, i, o, g: [F._backward_smooth_l1(g[0], i[0], scalar=a["scalar"])],
               inplace=((0, 0),),
               doc="Smooth L1 with sigma = scalar: 0.5 (sigma x)^2 where |x| < 1/sigma^2, "
                   "|x| - 0.5/sigma^2 elsewhere."))


def _float_infer(name, shapes, dtypes):
    check_float(name, dtypes[0])
    for s, d in zip(shapes[1:], dtypes[1:]):
        if tuple(s) != tuple(shapes[0]) or np.dtype(d) != np.dtype(dtypes[0]):
            raise ValueError(f"{name}: inputs differ in shape or dtype ({tuple(shapes[0])} "
                             f"{np.dtype(dtypes[0]).name}, {tuple(s)} {np.dtype(d).name})")
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


register(OpDef("_backward_smooth_l1", inputs=("ograd", "data"), params=_SL1_PARAMS,
               infer=lambda a, s, d: _float_infer("_backward_smooth_l1", s, d),
               forward=kernel_forward("loss_ops", "smooth_l1_bwd", ints=(), floats=("sigma",),
                                      fill={"sigma": _sigma}, name="_backward_smooth_l1"),
               grad=no_second_order("_backward_smooth_l1"),
               doc="Gradient of smooth_l1."))


# ---- softmax_cross_entropy ---------------------------------------------------------------------
def _sce_infer(attrs, shapes, dtypes):
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 2:
        raise ValueError(f"softmax_cross_entropy: data must be 2-D, got shape {d}")
    if len(lab) != 1:
        raise ValueError(f"softmax_cross_entropy: label must be 1-D, got shape {lab}")
    if d[0] != lab[0]:
        raise ValueError(f"softmax_cross_entropy: data {d} and label {lab} differ in batch size")
    check_float("softmax_cross_entropy", dtypes[0])
    if np.dtype(dtypes[1]) != np.dtype(dtypes[0]):
        raise ValueError(f"softmax_cross_entropy: label dtype {np.dtype(dtypes[1]).name} differs "
                         f"from the data's {np.dtype(dtypes[0]).name}")
    return [(1,)], [np.dtype(dtypes[0])]


def _sce_grad(F, attrs, inputs, outputs, out_grads):
    data, label = inputs
    d = F._backward_SoftmaxOutput(F.softmax(data), label)
    return [F.broadcast_mul(d, out_grads[0].reshape((1, 1))), F.zeros_like(label)]


register(OpDef("softmax_cross_entropy", inputs=("data", "label"), infer=_sce_infer,
               forward=kernel_forward("softmax", "softmax_ce", name="softmax_cross_entropy",
                                      ints=(), floats=()),
               grad=_sce_grad,
               doc="sum over rows of -log(softmax(data)[label]) (probabilities below 1e-8 are "
                   "clipped), as a 1-element array."))


# ---- _softmax_ce_rows: Gluon's SoftmaxCrossEntropyLoss as one operator ----------------------------
# Not an MXNet operator: gluon.loss uses it only imperatively (a hybridized loss keeps MXNet's
# log_softmax/pick/mean graph, so exported symbols stay loadable by MXNet). It replaces four
# operators and six backward ones per step with one each.
def _ce_rows_check(op, d, lab, dtypes):
    if len(d) != 2:
        raise ValueError(f"{op}: data must be 2-D (batch, classes), got shape {d}")
    n = 1
    for v in lab:
        n *= v
    if n != d[0]:
        raise ValueError(f"{op}: label of shape {lab} does not hold one class per row of data {d}")
    check_float(op, dtypes[0])
    if any(np.dtype(t) != np.dtype(dtypes[0]) for t in dtypes[1:]):
        raise ValueError(f"{op}: inputs must share one dtype, got "
                         f"{', '.join(np.dtype(t).name for t in dtypes)}")


def _ce_rows_infer(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    _ce_rows_check("_softmax_ce_rows", d, tuple(shapes[1]), dtypes)
    return [(d[0],)], [np.dtype(dtypes[0])]


def _ce_rows_bwd_infer(attrs, shapes, dtypes):
    g, d = tuple(shapes[0]), tuple(shapes[1])
    _ce_rows_check("_backward_softmax_ce_rows", d, tuple(shapes[2]), dtypes)
    if g != (d[0],):
        raise ValueError(f"_backward_softmax_ce_rows: out_grad has shape {g}, expected {(d[0],)}")
    return [d], [np.dtype(dtypes[1])]


def _ce_rows_grad(F, attrs, inputs, outputs, out_grads):
    data, label = inputs
    return [F._backward_softmax_ce_rows(out_grads[0], data, label), F.zeros_like(label)]


register(OpDef("_softmax_ce_rows", inputs=("data", "label"), infer=_ce_rows_infer,
               forward=kernel_forward("softmax", "softmax_ce_rows", name="_softmax_ce_rows",
                                      ints=(), floats=()),
               grad=_ce_rows_grad,
               doc="-log_softmax(data)[i, label[i]] per row of 2-D data (label truncated and "
                   "clipped to [0, classes), as pick's 'clip' mode), shape (batch,)."))
register(OpDef("_backward_softmax_ce_rows", inputs=("out_grad", "data", "label"),
               infer=_ce_rows_bwd_infer,
               forward=kernel_forward("softmax", "softmax_ce_rows_bwd",
                                      name="_backward_softmax_ce_rows", ints=(), floats=()),
               grad=no_second_order("_backward_softmax_ce_rows"),
               doc="Gradient of _softmax_ce_rows: out_grad[i] (softmax(data[i]) - onehot)."))


# ---- BlockGrad, make_loss, MakeLoss ---------------------------------------------------------------
register(OpDef("BlockGrad", aliases=("stop_gradient",), infer=unary_infer,
               forward=_copy_forward("BlockGrad"),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0])], inplace=((0, 0),),
               doc="Identity whose gradient is zero."))

register(OpDef("make_loss", infer=unary_infer, forward=_copy_forward("make_loss"),
               grad=lambda F, a, i, o, g: [F.ones_like(i[0])], inplace=((0, 0),),
               doc="Identity marking a loss: its gradient is 1 whatever the head gradient."))


def _makeloss_grad(F, attrs, inputs, outputs, out_grads):
    x = inputs[0]
    norm = attrs["normalization"]
    if norm == "valid":
        cnt = F.sum(x > attrs["valid_thresh"])
        cnt = F.maximum(cnt, 1.0)
        v = attrs["grad_scale"] / cnt
        return [F.broadcast_to(v.reshape((1,) * x.ndim), shape=x.shape)]
    scale = np.float32(attrs["grad_scale"])
    if norm == "batch":
        scale = scale / np.float32(x.shape[0])
    return [F.ones_like(x) * float(scale)]


register(OpDef("MakeLoss", infer=unary_infer, forward=_copy_forward("MakeLoss"),
               params=(Param("grad_scale", float, 1.0), Param("valid_thresh", float, 0.0),
                       Param("normalization", str, "null", choices=("null", "batch", "valid"))),
               grad=_makeloss_grad, inplace=((0, 0),),
               doc="Identity marking a loss: its gradient is grad_scale (divided by the batch "
                   "size or by the number of elements above valid_thresh), whatever the head "
                   "gradient."))


# ---- L2Normalization ---------------------------------------------------------------------------
_L2_MODES = ("instance", "channel", "spatial")


def _l2_axes(attrs, shape):
    mode = attrs["mode"]
    if mode != "instance" and len(shape) < 3:
        raise ValueError(f"L2Normalization: mode={mode!r} needs at least 3 dimensions, got "
                         f"shape {tuple(shape)}")
    if mode == "instance":
        return tuple(range(1, len(shape)))
    if mode == "channel":
        return (1,)
    return tuple(range(2, len(shape)))


def _l2_infer(attrs, shapes, dtypes):
    if not shapes[0]:
        raise ValueError("L2Normalization: data must have at least one dimension")
    check_float("L2Normalization", dtypes[0])
    _l2_axes(attrs, shapes[0])
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


def _l2_norm(F, attrs, x):
    axes = _l2_axes(attrs, x.shape)
    sq = F.square(x)
    s = F.sum(sq, axis=axes, keepdims=True) if axes else sq
    return F.sqrt(s + _f32(attrs["eps"])), axes


def _l2_composite(F, attrs, x):
    _l2_infer(attrs, [x.shape], [x._dtype])
    n, _ = _l2_norm(F, attrs, x)
    return F.broadcast_div(x, n)


def _l2_grad(F, attrs, inputs, outputs, out_grads):
    x, y, g = inputs[0], outputs[0], out_grads[0]
    n, axes = _l2_norm(F, attrs, x)
    gy = g * y
    t = F.sum(gy, axis=axes, keepdims=True) if axes else gy
    return [F.broadcast_div(g - F.broadcast_mul(y, t), n)]


register(OpDef("L2Normalization",
               params=(Param("eps", float, 1e-10),
                       Param("mode", str, "instance", choices=_L2_MODES)),
               infer=_l2_infer, composite=_l2_composite, grad=_l2_grad,
               doc="x / sqrt(sum(x^2) + eps) over all but axis 0 (instance), over axis 1 "
                   "(channel) or over axes 2.. (spatial)."))


# ---- LRN -------------------------------------------------------------------------------------
_LRN_PARAMS = (Param("alpha", float, 1e-4), Param("beta", float, 0.75), Param("knorm", float, 2.0),
               Param("nsize", int, required=True))


def _lrn_check(name, attrs, shape, dtype):
    if len(shape) < 2:
        raise ValueError(f"{name}: data needs at least 2 dimensions (N, C, ...), got {tuple(shape)}")
    check_float(name, dtype)
    if attrs["nsize"] < 1 or attrs["nsize"] % 2 == 0:
        raise ValueError(f"{name}: nsize must be a positive odd number, got {attrs['nsize']}")


def _lrn_infer(attrs, shapes, dtypes):
    _lrn_check("LRN", attrs, shapes[0], dtypes[0])
    return [tuple(shapes[0])], [np.dtype(dtypes[0])]


# LRN's slots (csrc/kernels/loss_ops.h): the data as (n, C, rest), the window; alpha, beta,
# knorm (float32 in MXNet)
LRN_INTS = ("n", "C", "rest", "nsize")
LRN_FLOATS = ("alpha", "beta", "knorm")


def _lrn_view(a, i, o):
    s = o[0].shape
    rest = int(np.prod(s[2:], dtype=np.int64)) if len(s) > 2 else 1
    return s[0], s[1], rest


def _lrn_floats(a, i, o):
    return [_f32(a[n]) for n in LRN_FLOATS]


_LRN_FILL = {("n", "C", "rest"): _lrn_view, LRN_FLOATS: _lrn_floats}


register(OpDef("LRN", params=_LRN_PARAMS, infer=_lrn_infer, output_names=("output", "tmp_norm"),
               forward=kernel_forward("loss_ops", "lrn", ints=LRN_INTS, floats=LRN_FLOATS,
                                      fill=_LRN_FILL, name="LRN"),
               grad=lambda F, a, i, o, g: [F._backward_LRN(g[0], i[0], **a)],
               doc="Local response normalisation across channels: x * (knorm + alpha/nsize * "
                   "sum of x^2 over nsize neighbouring channels)^-beta."))


def _lrnb_infer(attrs, shapes, dtypes):
    _lrn_check("_backward_LRN", attrs, shapes[1], dtypes[1])
    if tuple(shapes[0]) != tuple(shapes[1]) or np.dtype(dtypes[0]) != np.dtype(dtypes[1]):
        raise ValueError("_backward_LRN: head gradient and data differ in shape or dtype")
    return [tuple(shapes[1])], [np.dtype(dtypes[1])]


register(OpDef("_backward_LRN", inputs=("ograd", "data"), params=_LRN_PARAMS, infer=_lrnb_infer,
               forward=kernel_forward("loss_ops", "lrn_bwd", ints=LRN_INTS, floats=LRN_FLOATS,
                                      fill=_LRN_FILL, name="_backward_LRN"),
               grad=no_second_order("_backward_LRN"), doc="Gradient of LRN."))
