"""The fused RNN operator (alias _npx_rnn) with MXNet 1.9.1's packed parameter vector.

RNN(data, parameters, state, state_cell, sequence_length; state_size, num_layers,
bidirectional=False, mode, p=0, state_outputs=False, projection_size=None,
lstm_state_clip_min/max=None, lstm_state_clip_nan=False, use_sequence_length=False).
Inputs as MXNet lists them: state_cell only for mode="lstm", sequence_length only with
use_sequence_length. Layout TNC: data (T, N, I) -> out (T, N, D*R) with D = 2 when
bidirectional, R = projection_size or state_size; with state_outputs also hy (L*D, N, R) and,
for LSTM, cy (L*D, N, H).

``parameters`` is MXNet's single 1-D vector (what Gluon's _rnn_param_concat builds and what
.params files saved by MXNet hold): every weight first, for each layer, for each direction
(left then right): i2h weight (G*H, in), h2h weight (G*H, R), and with a projection h2r weight
(P, H); then every bias in the same order: i2h bias (G*H,), h2h bias (G*H,). G gates per mode,
in cuDNN's order: LSTM i, f, g (c~), o; GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h +
b_hn)) and h' = (1 - z) * n + z * h; rnn_relu / rnn_tanh one gate.

Implementation: a composite of registered operators (autograd differentiates through the
parts). Per layer and direction the input projection of every time step is one GEMM
(FullyConnected on (T, N, in)); each step then adds one (N, R) x (R, G*H) product (on a GPU
both are cuBLAS GEMMs) and runs the gates as ONE fused operator: ``_rnn_lstm_cell`` (gates and
previous cell -> h, c) or ``_rnn_gru_cell`` (x- and h-side pre-activations and h -> h'), each
with a fused backward (``_backward_rnn_*_cell``); their arithmetic is
csrc/kernels/rnn_cell_math.h, shared by the CPU kernels and mxc/ops/cuda/rnn_cell.cu. The
vanilla modes' gate is the relu/tanh operator.

Beyond MXNet's CPU operator (which refuses them): use_sequence_length (cuDNN's semantics:
steps past an item's length give zero output and leave the state alone, the reverse direction
starts at the item's last valid step), LSTM state clipping (the cell state is clipped after each
update; NaNs follow ``clip``), and the gradient of an LSTM with a projection (MXNet's CPU code
runs projections in inference only). Dropout (p > 0) between layers in training uses the Dropout
operator, applied to the outputs of every layer but the last.
"""
import numpy as np

from .._core.handle import make_array
from ..base import MXNetError
from .dot import push_gemm
from .params import Param
from .registry import OpDef, register, get, is_training, kernel_forward

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_FLOATS = ("float16", "float32", "float64")

_PARAMS = (
    Param("state_size", int, required=True),
    Param("num_layers", int, required=True),
    Param("bidirectional", bool, False),
    Param("mode", str, required=True, choices=tuple(_GATES)),
    Param("p", float, 0.0),
    Param("state_outputs", bool, False),
    Param("projection_size", int, None, optional=True),
    Param("lstm_state_clip_min", float, None, optional=True),
    Param("lstm_state_clip_max", float, None, optional=True),
    Param("lstm_state_clip_nan", bool, False),
    Param("use_sequence_length", bool, False),
)


def input_names(attrs):
    """The inputs this configuration takes, as MXNet's ListRnnInputNames."""
    names = ["data", "parameters", "state"]
    if attrs["mode"] == "lstm":
        names.append("state_cell")
    if attrs["use_sequence_length"]:
        names.append("sequence_length")
    return names


def _num_outputs(attrs):
    if not attrs["state_outputs"]:
        return 1
    return 3 if attrs["mode"] == "lstm" else 2


def _dims(attrs):
    H = attrs["state_size"]
    P = attrs["projection_size"]
    return H, P, (P if P else H), attrs["num_layers"], 2 if attrs["bidirectional"] else 1


def param_layout(attrs, input_size):
    """Offsets into the packed vector: a list (layer-major, direction-minor) of dicts
    name -> (offset, shape) for "wi", "wh", ("wr",) "bi", "bh"; and the vector's length."""
    H, P, R, L, D = _dims(attrs)
    G = _GATES[attrs["mode"]] * H
    off, entries = 0, []
    for layer in range(L):
        ni = input_size if layer == 0 else R * D
        for _ in range(D):
            e = {"wi": (off, (G, ni))}
            off += G * ni
            e["wh"] = (off, (G, R))
            off += G * R
            if P:
                e["wr"] = (off, (P, H))
                off += P * H
            entries.append(e)
    for e in entries:
        e["bi"] = (off, (G,))
        e["bh"] = (off + G, (G,))
        off += 2 * G
    return entries, off


def _check_attrs(attrs):
    H, P, R, L, D = _dims(attrs)
    mode = attrs["mode"]
    if H < 1 or L < 1:
        raise ValueError(f"RNN: state_size and num_layers must be positive, got {H} and {L}")
    if not 0.0 <= attrs["p"] < 1.0:
        raise ValueError(f"RNN: dropout p must be in [0, 1), got {attrs['p']}")
    if P is not None:
        if mode != "lstm":
            raise ValueError("RNN: projection_size is only supported for mode='lstm'")
        if not 0 < P <= H:
            raise ValueError(f"RNN: projection_size must be in [1, state_size={H}], got {P}")
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if lo is not None or hi is not None:
        if mode != "lstm":
            raise ValueError("RNN: state clipping is only supported for mode='lstm'")
        if lo is None or hi is None:
            raise ValueError("RNN: lstm_state_clip_min and lstm_state_clip_max must be given together")
        if hi < lo:
            raise ValueError(f"RNN: lstm_state_clip_max ({hi}) must be >= lstm_state_clip_min ({lo})")


def _expected_shapes(attrs, dshape):
    H, P, R, L, D = _dims(attrs)
    T, N, I = dshape
    _, size = param_layout(attrs, I)
    exp = {"parameters": (size,), "state": (L * D, N, R), "state_cell": (L * D, N, H),
           "sequence_length": (N,)}
    return exp


def _infer_inputs(attrs, shapes):
    _check_attrs(attrs)
    names = input_names(attrs)
    shapes = list(shapes)
    if len(shapes) != len(names):
        raise ValueError(f"RNN: expected {len(names)} inputs ({', '.join(names)}), got {len(shapes)}")
    if shapes[0] is None:
        return shapes
    if len(shapes[0]) != 3:
        raise ValueError(f"RNN: data must be 3-D (sequence length, batch, input size), got "
                         f"shape {tuple(shapes[0])}")
    exp = _expected_shapes(attrs, tuple(shapes[0]))
    for i, n in enumerate(names[1:], 1):
        if shapes[i] is None:
            shapes[i] = exp[n]
    return shapes


def _infer(attrs, shapes, dtypes):
    _check_attrs(attrs)
    names = input_names(attrs)
    if len(shapes) != len(names):
        raise ValueError(f"RNN: expected {len(names)} inputs ({', '.join(names)}) for mode="
                         f"{attrs['mode']!r}, use_sequence_length={attrs['use_sequence_length']}; "
                         f"got {len(shapes)}")
    d = tuple(shapes[0])
    if len(d) != 3:
        raise ValueError(f"RNN: data must be 3-D (sequence length, batch, input size), got shape {d}")
    if min(d) < 1:
        raise ValueError(f"RNN: data shape {d} has an empty axis")
    exp = _expected_shapes(attrs, d)
    for i, n in enumerate(names[1:], 1):
        if tuple(shapes[i]) != exp[n]:
            extra = " (the packed weights then biases of every layer and direction)" \
                if n == "parameters" else ""
            raise ValueError(f"RNN: {n} must have shape {exp[n]}{extra} for data {d}, "
                             f"state_size={attrs['state_size']}, num_layers={attrs['num_layers']}, "
                             f"bidirectional={attrs['bidirectional']}, mode={attrs['mode']!r}; "
                             f"got {tuple(shapes[i])}")
    dt = [np.dtype(t).name for t in dtypes]
    if dt[0] not in _FLOATS:
        raise ValueError(f"RNN: data must be float16, float32 or float64, got {dt[0]}")
    for i, n in enumerate(names[1:], 1):
        if n != "sequence_length" and dt[i] != dt[0]:
            raise ValueError(f"RNN: {n} has dtype {dt[i]}, data has {dt[0]}; they must agree")
    H, P, R, L, D = _dims(attrs)
    T, N, _ = d
    out = [(T, N, D * R)]
    if attrs["state_outputs"]:
        out.append((L * D, N, R))
        if attrs["mode"] == "lstm":
            out.append((L * D, N, H))
    return out, [dtypes[0]] * len(out)


def _list(x):
    return x if isinstance(x, (list, tuple)) else [x]


# ---- the fused gate steps -----------------------------------------------------------------
def _clip_kw(a):
    return {} if a["clip_min"] is None else {"clip_min": a["clip_min"], "clip_max": a["clip_max"]}


_CLIP = (Param("clip_min", float, None, optional=True), Param("clip_max", float, None, optional=True))
_CLIP_FILL = {"clip": lambda a, i, o: int(a["clip_min"] is not None),
              ("lo", "hi"): lambda a, i, o: ((a["clip_min"] or 0.0, a["clip_max"] or 0.0))}


def _cell_check(name, shapes, dtypes, widths):
    """(N, H) of a gate step whose inputs are (N, w * H) for w in widths (H: the last one's)."""
    if any(len(s) != 2 for s in shapes):
        raise ValueError(f"{name}: inputs must be 2-D (batch, units), got {[tuple(s) for s in shapes]}")
    N, H = shapes[-1]
    for s, w in zip(shapes, widths):
        if tuple(s) != (N, w * H):
            raise ValueError(f"{name}: input shapes {[tuple(s) for s in shapes]} do not fit "
                             f"{N} rows of {H} units (widths {widths} x units)")
    if len({np.dtype(d) for d in dtypes}) != 1 or np.dtype(dtypes[0]).name not in _FLOATS:
        raise ValueError(f"{name}: inputs must share one float dtype, got "
                         f"{[np.dtype(d).name for d in dtypes]}")
    if N < 1 or H < 1:
        raise ValueError(f"{name}: empty input shapes {[tuple(s) for s in shapes]}")
    return N, H


def _lstm_infer(a, shapes, dtypes):
    N, H = _cell_check("_rnn_lstm_cell", shapes, dtypes, (4, 1))
    return [(N, H), (N, H)], [dtypes[0]] * 2


def _lstm_bwd_infer(a, shapes, dtypes):
    N, H = _cell_check("_backward_rnn_lstm_cell", shapes, dtypes, (4, 1, 1, 1))
    return [(N, 4 * H), (N, H)], [dtypes[0]] * 2


def _gru_infer(a, shapes, dtypes):
    N, H = _cell_check("_rnn_gru_cell", shapes, dtypes, (3, 3, 1))
    return [(N, H)], [dtypes[0]]


def _gru_bwd_infer(a, shapes, dtypes):
    N, H = _cell_check("_backward_rnn_gru_cell", shapes, dtypes, (3, 3, 1, 1))
    return [(N, 3 * H), (N, 3 * H), (N, H)], [dtypes[0]] * 3


def _no_second_order(name):
    def grad(F, a, i, o, g):
        raise MXNetError(f"{name}: no second-order gradient (the RNN operator's fused gate "
                         f"backward is not differentiable again)")
    return grad


register(OpDef("_rnn_lstm_cell", inputs=("gates", "cell"), output_names=("h", "c"),
               params=_CLIP, num_outputs=2, infer=_lstm_infer,
               forward=kernel_forward("rnn_cell", "lstm", ints=("clip",), floats=("lo", "hi"),
                                      fill=_CLIP_FILL, name="_rnn_lstm_cell"),
               grad=lambda F, a, i, o, g: list(F._backward_rnn_lstm_cell(
                   i[0], i[1], g[0], g[1], **_clip_kw(a))),
               doc="RNN's LSTM gate step: gates (N, 4H) in the order i, f, g, o (every "
                   "pre-activation summed) and the previous cell (N, H) -> (h, c); the cell is "
                   "clipped to [clip_min, clip_max] when given."))
register(OpDef("_backward_rnn_lstm_cell", inputs=("gates", "cell", "dh", "dc"),
               params=_CLIP, num_outputs=2, infer=_lstm_bwd_infer,
               forward=kernel_forward("rnn_cell", "lstm_bwd", ints=("clip",),
                                      floats=("lo", "hi"), fill=_CLIP_FILL,
                                      name="_backward_rnn_lstm_cell"),
               grad=_no_second_order("_backward_rnn_lstm_cell"),
               doc="Gradients of _rnn_lstm_cell's gates and previous cell."))
register(OpDef("_rnn_gru_cell", inputs=("xs", "hh", "h"), params=(), infer=_gru_infer,
               forward=kernel_forward("rnn_cell", "gru", ints=(), floats=(),
                                      name="_rnn_gru_cell"),
               grad=lambda F, a, i, o, g: list(F._backward_rnn_gru_cell(i[0], i[1], i[2], g[0])),
               doc="RNN's GRU gate step: x-side (N, 3H) and h-side (N, 3H) pre-activations in "
                   "the order r, z, n (biases included) and h (N, H) -> h'."))
register(OpDef("_backward_rnn_gru_cell", inputs=("xs", "hh", "h", "dh"), params=(),
               num_outputs=3, infer=_gru_bwd_infer,
               forward=kernel_forward("rnn_cell", "gru_bwd", ints=(), floats=(),
                                      name="_backward_rnn_gru_cell"),
               grad=_no_second_order("_backward_rnn_gru_cell"),
               doc="Gradients of _rnn_gru_cell's x-side, h-side pre-activations and h."))


# ---- an LSTM layer's recurrence as one operator -------------------------------------------
# Per step the recurrence is a GEMM (gates[t] = xp[t] + h W_h^T) and the gate kernel. As one
# operator, its backward runs the steps in reverse, each the fused gate backward and one GEMM
# for the previous step's dh (dgates[t] W_h + dout[t-1]), and then the weight's gradient as ONE
# product over every step, dW_h = dgates^T [h_0; out[:-1]] (K = T*N). Differentiated step by step
# (the composite), every step added a rank-N product into the 4H x H weight gradient and autograd
# summed T of them. gates and cells (each step's pre-activations and cell state) are hidden
# outputs for the backward; the last cell is the visible cT (so the gradient of a final cell
# reaches the backward without a (T, N, H) gradient of cells).
def _rows(x, lo, hi=None):
    """A view of x[lo:hi] of an array whose first axis is time; x[lo] when hi is None."""
    n = 1
    for d in x._shape[1:]:
        n *= d
    shape = x._shape[1:] if hi is None else (hi - lo,) + x._shape[1:]
    return make_array(type(x), x._chunk, x._offset + lo * n * x._itemsize, shape, x._dtype,
                      x._ctx)


_step = _rows       # x[t]


def _layer_order(a, T):
    """the steps in the order the forward runs them"""
    return list(range(T - 1, -1, -1)) if a["reverse"] else list(range(T))


def _layer_dims(name, shapes, dtypes, n):
    if len(shapes) != n or len(shapes[0]) != 3:
        raise ValueError(f"{name}: takes {n} inputs, the first (T, N, units), got "
                         f"{[tuple(s) for s in shapes]}")
    if len({np.dtype(d) for d in dtypes}) != 1 or np.dtype(dtypes[0]).name not in _FLOATS:
        raise ValueError(f"{name}: inputs must share one float dtype, got "
                         f"{[np.dtype(d).name for d in dtypes]}")


def _layer_infer(a, shapes, dtypes):
    _layer_dims("_rnn_lstm_layer", shapes, dtypes, 4)
    T, N, G = shapes[0]
    H = G // 4
    if G != 4 * H or H < 1 or N < 1 or T < 1 or tuple(shapes[1]) != (G, H) \
            or tuple(shapes[2]) != (N, H) or tuple(shapes[3]) != (N, H):
        raise ValueError(f"_rnn_lstm_layer: input shapes {[tuple(s) for s in shapes]} do not fit "
                         f"xp (T, N, 4H), W_h (4H, H), h0 and c0 (N, H)")
    return [(T, N, H), (N, H), (T, N, G), (T, N, H)], [dtypes[0]] * 4


def _layer_forward(a, inputs, outputs):
    xp, wh, h0, c0 = inputs
    out, cT, gates, cells = outputs
    T, N, G = xp._shape
    H = G // 4
    cell = get("_rnn_lstm_cell").forward
    h, c = h0, c0
    order = _layer_order(a, T)
    for p, t in enumerate(order):
        g = _step(gates, t)
        push_gemm("_rnn_lstm_layer", h, wh, _step(xp, t), g, 1, N, G, H, tb=True, cmode=2,
                  beta=1.0)
        h, c_new = _step(out, t), (cT if p == T - 1 else _step(cells, t))
        cell(a, [g, c], [h, c_new])
        c = c_new


def _layer_bwd_infer(a, shapes, dtypes):
    _layer_dims("_backward_rnn_lstm_layer", shapes, dtypes, 8)
    T, N, H = shapes[0]
    G = 4 * H
    want = [(T, N, H), (N, H), (G, H), (N, H), (N, H), (T, N, H), (T, N, G), (T, N, H)]
    if [tuple(s) for s in shapes] != want:
        raise ValueError(f"_backward_rnn_lstm_layer: input shapes {[tuple(s) for s in shapes]}, "
                         f"expected {want}")
    # dxp, dW_h, dh0, dc0; hidden: [h_0; out] in step order, dh, and two cell gradients
    return [(T, N, G), (G, H), (N, H), (N, H), (T, N, H), (3, N, H)], [dtypes[0]] * 6


def _layer_backward(a, inputs, outputs):
    dout, dcT, wh, h0, c0, out, gates, cells = inputs
    dxp, dwh, dh0, dc0, hprev, work = outputs
    T, N, H = dout._shape
    G = 4 * H
    cellb = get("_backward_rnn_lstm_cell").forward
    order = _layer_order(a, T)
    dh_buf, dc_bufs = _step(work, 0), (_step(work, 1), _step(work, 2))
    dc = dcT
    dg = None
    for q in range(T):               # the steps backwards: order[T - 1] first
        p = T - 1 - q
        t = order[p]
        if dg is None:
            dh = _step(dout, t)
        else:                        # dh = dgates[later step] W_h + dout[t]
            push_gemm("_backward_rnn_lstm_layer", dg, wh, _step(dout, t), dh_buf, 1, N, H, G,
                      cmode=2, beta=1.0)
            dh = dh_buf
        cprev = c0 if p == 0 else _step(cells, order[p - 1])
        dc_next = dc0 if p == 0 else dc_bufs[q % 2]
        dg = _step(dxp, t)
        cellb(a, [_step(gates, t), cprev, dh, dc], [dg, dc_next])
        dc = dc_next
    push_gemm("_backward_rnn_lstm_layer", dg, wh, None, dh0, 1, N, H, G)
    # h_{t-1} of every step t, in time order: the forward's h0 then its outputs, shifted
    copy = get("_copyto").forward
    first = order[0]
    copy({}, [h0], [_step(hprev, first)])
    if T > 1:
        if a["reverse"]:
            copy({}, [_rows(out, 1, T)], [_rows(hprev, 0, T - 1)])
        else:
            copy({}, [_rows(out, 0, T - 1)], [_rows(hprev, 1, T)])
    push_gemm("_backward_rnn_lstm_layer", dxp, hprev, None, dwh, 1, G, H, T * N, ta=True)


_LAYER_PARAMS = (Param("reverse", bool, False),) + _CLIP
register(OpDef("_rnn_lstm_layer", inputs=("xp", "wh", "h0", "c0"),
               output_names=("hs", "cT", "gates", "cells"), params=_LAYER_PARAMS,
               num_outputs=4, num_visible_outputs=2, infer=_layer_infer, forward=_layer_forward,
               grad=lambda F, a, i, o, g: list(F._backward_rnn_lstm_layer(
                   g[0], g[1], i[1], i[2], i[3], o[0], o[2], o[3], **_layer_kw(a)))[:4],
               doc="An LSTM layer's recurrence: xp (T, N, 4H) the input projections (biases "
                   "included), W_h (4H, H), h0, c0 (N, H) -> out (T, N, H), the last cell cT; "
                   "reverse runs the steps from T-1 down."))
register(OpDef("_backward_rnn_lstm_layer",
               inputs=("dout", "dcT", "wh", "h0", "c0", "hs", "gates", "cells"),
               params=_LAYER_PARAMS, num_outputs=6, num_visible_outputs=4,
               infer=_layer_bwd_infer, forward=_layer_backward,
               grad=_no_second_order("_backward_rnn_lstm_layer"),
               doc="Gradients of _rnn_lstm_layer's xp, W_h, h0 and c0."))


def _layer_kw(a):
    return dict(_clip_kw(a), reverse=a["reverse"])


def _composite(F, attrs, *inputs):
    _infer(attrs, [x.shape for x in inputs], [x.dtype for x in inputs])
    mode = attrs["mode"]
    H, P, R, L, D = _dims(attrs)
    G = _GATES[mode] * H
    x, params, h0 = inputs[0], inputs[1], inputs[2]
    c0 = inputs[3] if mode == "lstm" else None
    seqlen = inputs[-1] if attrs["use_sequence_length"] else None
    T, N, I = x.shape
    entries, _ = param_layout(attrs, I)
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    clip_kw = {"clip_min": lo, "clip_max": hi} if lo is not None else {}

    def piece(spec):
        off, shape = spec
        n = 1
        for s in shape:
            n *= s
        v = F.slice_axis(params, axis=0, begin=off, end=off + n)
        return F.reshape(v, shape=shape)

    h_init = _list(F.split(h0, num_outputs=L * D, axis=0, squeeze_axis=True))
    c_init = _list(F.split(c0, num_outputs=L * D, axis=0, squeeze_axis=True)) if c0 is not None \
        else None
    masks = None
    if seqlen is not None:
        masks = [seqlen > t for t in range(T)]        # (N,): step t is inside the item

    layer_in = x
    hy, cy = [], []
    for layer in range(L):
        if layer > 0 and attrs["p"] > 0 and is_training():
            layer_in = F.Dropout(layer_in, p=attrs["p"])
        dir_outs = []
        for d in range(D):
            idx = layer * D + d
            e = entries[idx]
            wi, wh, bi, bh = piece(e["wi"]), piece(e["wh"]), piece(e["bi"]), piece(e["bh"])
            wr = piece(e["wr"]) if P else None
            if mode == "gru":
                xp = F.FullyConnected(layer_in, wi, bi, num_hidden=G, flatten=False)
            else:       # both biases act on every step alike: fold them into the projection
                xp = F.FullyConnected(layer_in, wi, bi + bh, num_hidden=G, flatten=False)
            if mode == "lstm" and not P and masks is None:
                # the recurrence as one operator (above): one GEMM for W_h's gradient
                out, c = F._rnn_lstm_layer(xp, wh, h_init[idx], c_init[idx], reverse=d == 1,
                                           **clip_kw)
                last = T - 1 if d == 0 else 0
                hy.append(F.reshape(F.slice_axis(out, axis=0, begin=last, end=last + 1),
                                    shape=(N, H)))
                cy.append(c)
                dir_outs.append(out)
                continue
            xs = _list(F.split(xp, num_outputs=T, axis=0, squeeze_axis=True))
            h = h_init[idx]
            c = c_init[idx] if c_init is not None else None
            outs = [None] * T
            for t in (range(T) if d == 0 else range(T - 1, -1, -1)):
                if mode == "gru":
                    hh = F.FullyConnected(h, wh, bh, num_hidden=G)
                    h_new = F._rnn_gru_cell(xs[t], hh, h)
                    c_new = None
                else:
                    gates = xs[t] + F.dot(h, wh, transpose_b=True)
                    if mode == "lstm":
                        h_new, c_new = F._rnn_lstm_cell(gates, c, **clip_kw)
                        if P:
                            h_new = F.dot(h_new, wr, transpose_b=True)
                    else:
                        h_new = F.relu(gates) if mode == "rnn_relu" else F.tanh(gates)
                        c_new = None
                if masks is not None:
                    m = masks[t]
                    outs[t] = F.where(m, h_new, F.zeros_like(h_new))
                    h = F.where(m, h_new, h)
                    if c_new is not None:
                        c = F.where(m, c_new, c)
                else:
                    outs[t] = h = h_new
                    if c_new is not None:
                        c = c_new
            hy.append(h)
            if c is not None:
                cy.append(c)
            dir_outs.append(F.stack(*outs, axis=0) if T > 1 else F.expand_dims(outs[0], axis=0))
        layer_in = dir_outs[0] if D == 1 else F.concat(*dir_outs, dim=2)
    if not attrs["state_outputs"]:
        return layer_in
    res = [layer_in, F.stack(*hy, axis=0)]
    if mode == "lstm":
        res.append(F.stack(*cy, axis=0))
    return res


register(OpDef("RNN", aliases=("_npx_rnn",),
               output_names=("output", "state_output", "statecell_output"),
               inputs=("data", "parameters", "state", "state_cell", "sequence_length"),
               params=_PARAMS, infer=_infer, infer_inputs=_infer_inputs, composite=_composite,
               num_outputs=_num_outputs, input_names=input_names,
               doc="Multi-layer (bidirectional) rnn_relu / rnn_tanh / LSTM / GRU over data (T, N, "
                   "I) with MXNet's packed `parameters` vector; returns out (T, N, D*R) and with "
                   "state_outputs the final states."))
