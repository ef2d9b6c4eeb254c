"""Sequence operators: SequenceMask, SequenceLast (+ _backward_SequenceLast), SequenceReverse.

data is (T, B, ...) for axis 0 or (B, T, ...) for axis 1; sequence_length (B,) of any numeric
dtype is used when use_sequence_length is True (its values truncated toward zero and clipped
into [0, T]). Kernels: mxc/ops/cpu/sequence.pyx (csrc/kernels/sequence.h).

The sequence_length input exists only when use_sequence_length is True (``input_names``), as
in MXNet."""
import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward


def _prod(shape):
    return int(np.prod(shape, dtype=np.int64))


def _plan(op, a, s):
    """(axis, T, B, R, has_len) after checking data and lengths."""
    data = tuple(s[0])
    axis = a["axis"]
    if axis not in (0, 1):
        raise ValueError(f"{op}: axis must be 0 or 1, got {axis}")
    if len(data) < 2:
        raise ValueError(f"{op}: data must have at least 2 dimensions (time and batch), got {data}")
    T, B = (data[0], data[1]) if axis == 0 else (data[1], data[0])
    has_len = bool(a["use_sequence_length"])
    if has_len:
        if len(s) < 2:
            raise ValueError(f"{op}: use_sequence_length=True needs the sequence_length input")
        if tuple(s[1]) != (B,):
            raise ValueError(f"{op}: sequence_length must have shape ({B},), got {tuple(s[1])}")
    return axis, T, B, _prod(data[2:]), has_len


# the sequence kernels' slots (csrc/kernels/sequence.h): the time axis, the data as (T, B, R)
# around it, whether lengths are given; SequenceMask's fill value
SEQ_INTS = ("axis", "T", "B", "R", "has_len")


def _view(op):
    def view(a, i, o):
        axis, T, B, R, has_len = _plan(op, a, [x.shape for x in i])
        return axis, T, B, R, int(has_len)
    return view


def _view_of_data(op, data_at):
    """For ops whose data is input `data_at` (gradients): lengths are the last input when used."""
    def view(a, i, o):
        shapes = [i[data_at].shape] + ([i[-1].shape] if len(i) > data_at + 1 else [])
        axis, T, B, R, has_len = _plan(op, a, shapes)
        return axis, T, B, R, int(has_len)
    return view


def _forward(kname, op, view):
    fwd = kernel_forward("sequence", kname, name=op, ints=SEQ_INTS,
                         floats=("value",) if kname == "seq_mask" else (), fill={SEQ_INTS: view})

    def forward(a, inputs, outputs):
        # the lengths are read only when used (no needless dependency otherwise)
        fwd(a, list(inputs[:2]) if a["use_sequence_length"] else [inputs[0]], outputs)
    return forward


def _with_lengths(first, i, at):
    """`first` followed by the lengths input (i[at]) when the op was given one."""
    return list(first) + list(i[at:at + 1])


def _input_names(*names):
    return lambda a: names if a["use_sequence_length"] else names[:-1]


def _len_grad(i):
    return [None] if len(i) > 1 else []


_PARAMS = (Param("use_sequence_length", bool, False), Param("axis", int, 0))


# ---- SequenceMask ------------------------------------------------------------------------------
def _mask_infer(a, s, d):
    _plan("SequenceMask", a, s)
    return [tuple(s[0])], [d[0]]


def _mask_grad(F, a, i, o, g):
    return [F.SequenceMask(*_with_lengths([g[0]], i, 1), use_sequence_length=a["use_sequence_length"],
                           value=0.0, axis=a["axis"])] + _len_grad(i)


register(OpDef("SequenceMask", inputs=("data", "sequence_length"),
               input_names=_input_names("data", "sequence_length"),
               params=_PARAMS[:1] + (Param("value", float, 0.0),) + _PARAMS[1:],
               infer=_mask_infer,
               forward=_forward("seq_mask", "SequenceMask", _view("SequenceMask")),
               grad=_mask_grad,
               doc="data with the steps at and beyond each sequence's length set to `value`."))


# ---- SequenceLast ------------------------------------------------------------------------------
def _last_infer(a, s, d):
    axis = _plan("SequenceLast", a, s)[0]
    data = tuple(s[0])
    return [data[:axis] + data[axis + 1:]], [d[0]]


def _last_grad(F, a, i, o, g):
    return [F._backward_SequenceLast(*_with_lengths([g[0], i[0]], i, 1),
                                     use_sequence_length=a["use_sequence_length"],
                                     axis=a["axis"])] + _len_grad(i)


register(OpDef("SequenceLast", inputs=("data", "sequence_length"), params=_PARAMS,
               input_names=_input_names("data", "sequence_length"),
               infer=_last_infer,
               forward=_forward("seq_last", "SequenceLast", _view("SequenceLast")),
               grad=_last_grad,
               doc="The last step of each sequence (step length - 1, or T - 1 without lengths)."))


def _blast_infer(a, s, d):
    og, data = tuple(s[0]), tuple(s[1])
    axis = _plan("_backward_SequenceLast", a, [data] + list(s[2:]))[0]
    if og != data[:axis] + data[axis + 1:]:
        raise ValueError(f"_backward_SequenceLast: gradient {og} does not fit data {data}")
    return [data], [d[0]]


def _blast_forward():
    fwd = kernel_forward("sequence", "seq_last_grad", name="_backward_SequenceLast",
                         ints=SEQ_INTS, floats=(),
                         fill={SEQ_INTS: _view_of_data("_backward_SequenceLast", 1)})

    def forward(a, inputs, outputs):
        ins = [inputs[0], inputs[1]] + ([inputs[2]] if a["use_sequence_length"] and len(inputs) > 2 else [])
        fwd(a, ins, outputs)
    return forward


def _blast_grad(F, a, i, o, g):
    return [F.SequenceLast(*_with_lengths([g[0]], i, 2), use_sequence_length=a["use_sequence_length"],
                           axis=a["axis"]), F.zeros_like(i[1])] + ([None] if len(i) > 2 else [])


register(OpDef("_backward_SequenceLast", inputs=("ograd", "data", "sequence_length"),
               input_names=_input_names("ograd", "data", "sequence_length"),
               params=_PARAMS, infer=_blast_infer, forward=_blast_forward(), grad=_blast_grad,
               doc="SequenceLast's gradient: zeros shaped like `data` (which gives only the "
                   "shape) with `ograd` at each sequence's last step."))


# ---- SequenceReverse ---------------------------------------------------------------------------
def _rev_infer(a, s, d):
    if a["axis"] != 0:
        raise ValueError(f"SequenceReverse: only axis 0 is supported (as MXNet), got {a['axis']}")
    _plan("SequenceReverse", a, s)
    return [tuple(s[0])], [d[0]]


def _rev_grad(F, a, i, o, g):
    return [F.SequenceReverse(*_with_lengths([g[0]], i, 1), use_sequence_length=a["use_sequence_length"],
                              axis=a["axis"])] + _len_grad(i)


register(OpDef("SequenceReverse", inputs=("data", "sequence_length"), params=_PARAMS,
               input_names=_input_names("data", "sequence_length"),
               infer=_rev_infer,
               forward=_forward("seq_reverse", "SequenceReverse", _view("SequenceReverse")),
               grad=_rev_grad,
               doc="Each sequence's first `length` steps reversed; the padding stays in place."))
