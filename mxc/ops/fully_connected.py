"""FullyConnected: out = data . weight^T + bias, with MXNet 1.9.1's shapes.

flatten=True: data (batch, x1, ..., xn) is used as (batch, x1*...*xn); out (batch, num_hidden).
flatten=False: the product runs over the last axis of data; out (x1, ..., xn-1, num_hidden).
weight is (num_hidden, in_units); bias (num_hidden,) or (num_hidden, 1); no_bias=True takes the
inputs (data, weight) only. The forward is one GEMM kernel call (BLAS, bias rows written first);
the gradient is written with dot/reshape/sum, so it is differentiable again.
"""
from .dot import check_float, prod, push_gemm
from .params import Param
from ._partial_shape import complete, probe_partial
from .registry import OpDef, register


def _in_units(op, attrs, dshape):
    if len(dshape) == 0:
        raise ValueError(f"{op}: data must have at least one dimension")
    return dshape[-1] if not attrs["flatten"] else prod(dshape[1:])


def _check_num_inputs(op, attrs, n):
    want = 2 if attrs["no_bias"] else 3
    if n != want:
        raise ValueError(f"{op}: expects {want} inputs ({'data, weight' if want == 2 else 'data, weight, bias'}) "
                         f"with no_bias={attrs['no_bias']}, got {n}")


def _fc_infer_inputs(attrs, shapes):
    op = "FullyConnected"
    shapes = list(shapes)
    _check_num_inputs(op, attrs, len(shapes))
    if shapes[0] is None:
        return shapes
    nh = attrs["num_hidden"]
    if shapes[1] is None:
        shapes[1] = (nh, _in_units(op, attrs, shapes[0]))
    if not attrs["no_bias"] and shapes[2] is None:
        shapes[2] = (nh,)
    return shapes


def _fc_infer(attrs, shapes, dtypes):
    op = "FullyConnected"
    _check_num_inputs(op, attrs, len(shapes))
    d = check_float(op, dtypes)
    nh = attrs["num_hidden"]
    if nh < 1:
        raise ValueError(f"{op}: num_hidden must be >= 1, got {nh}")
    dshape = tuple(shapes[0])
    k = _in_units(op, attrs, dshape)
    if tuple(shapes[1]) != (nh, k):
        raise ValueError(f"{op}: weight has shape {tuple(shapes[1])}, expected {(nh, k)} for data "
                         f"{dshape} (num_hidden={nh}, flatten={attrs['flatten']})")
    if not attrs["no_bias"] and tuple(shapes[2]) not in ((nh,), (nh, 1)):
        raise ValueError(f"{op}: bias has shape {tuple(shapes[2])}, expected {(nh,)}")
    oshape = dshape[:-1] + (nh,) if not attrs["flatten"] else (dshape[0], nh)
    return [oshape], [d]


def _fc_forward(attrs, inputs, outputs):
    x, w = inputs[0], inputs[1]
    nh = attrs["num_hidden"]
    k = _in_units("FullyConnected", attrs, x.shape)
    m = x.shape[0] if attrs["flatten"] else prod(x.shape[:-1])
    if attrs["no_bias"]:
        push_gemm("FullyConnected", x, w, None, outputs[0], 1, m, nh, k, tb=True)
    else:
        push_gemm("FullyConnected", x, w, inputs[2], outputs[0], 1, m, nh, k, tb=True, cmode=1)


def _fc_grad(F, attrs, inputs, outputs, out_grads):
    x, w = inputs[0], inputs[1]
    nh = attrs["num_hidden"]
    k = w.shape[1]
    g2 = F.reshape(out_grads[0], shape=(-1, nh))
    x2 = F.reshape(x, shape=(-1, k))
    dx = F.reshape(F.dot(g2, w), shape=x.shape)
    dw = F.dot(g2, x2, transpose_a=True)
    grads = [dx, dw]
    if not attrs["no_bias"]:
        grads.append(F.reshape(F.sum(g2, axis=0), shape=inputs[2].shape))
    return grads


def _fc_infer_back(attrs, in_s, outs):
    """data's unknown leading dims from the output (an unrolled RNN's begin state)."""
    d, o = in_s[0], outs[0]
    if d is None or complete(d) or not complete(o):
        return None
    d = list(d)
    if attrs["flatten"]:
        if d[0] == 0:
            d[0] = o[0]
    else:
        for i in range(min(len(d), len(o)) - 1):
            if d[i] == 0:
                d[i] = o[i]
    return [tuple(d)] + [None] * (len(in_s) - 1)


register(OpDef(
    "FullyConnected", inputs=("data", "weight", "bias"),
    params=(Param("num_hidden", int, required=True), Param("no_bias", bool, False),
            Param("flatten", bool, True)),
    infer=_fc_infer, infer_inputs=_fc_infer_inputs, infer_back=_fc_infer_back,
    infer_partial=probe_partial(_fc_infer),
    forward=_fc_forward, grad=_fc_grad,
    input_names=lambda a: ("data", "weight") if a["no_bias"] else ("data", "weight", "bias"),
    doc="Applies a linear transformation: Y = X W^T + b. flatten=True collapses all but the "
        "first axis of data; flatten=False applies to the last axis of N-d data. With "
        "no_bias=True the inputs are (data, weight)."))
