"""CTCLoss (aliases ctc_loss, _contrib_CTCLoss, _contrib_ctc_loss), MXNet 1.9.1's operator.

data (T, N, alphabet) holds activations (the softmax is taken inside), label (N, L) class
indices padded at the end (with 0 when blank_label="first", -1 when "last", unless
use_label_lengths gives the lengths), optional data_lengths (N,) and label_lengths (N,) inputs
when use_data_lengths / use_label_lengths. The output is the loss per batch item (N,).

MXNet computes the gradient w.r.t. data in the forward (alpha-beta recursion) and keeps it as a
hidden second output for the backward; so does mxc (kernel: mxc/ops/cpu/ctc_loss.pyx,
csrc/kernels/ctc_loss.h, loss and gradient in one pass).
"""
import numpy as np

from .._core.modes import is_recording
from ..base import MXNetError
from .params import Param
from .registry import OpDef, register, kernel_forward

_FLOATS = ("float16", "float32", "float64")
_PARAMS = (Param("use_data_lengths", bool, False), Param("use_label_lengths", bool, False),
           Param("blank_label", str, "first", choices=("first", "last")))

def _num_inputs(attrs):
    return 2 + int(attrs["use_data_lengths"]) + int(attrs["use_label_lengths"])


def _check(name, attrs, shapes, dtypes):
    n = _num_inputs(attrs)
    if len(shapes) != n:
        want = ["data", "label"] + (["data_lengths"] if attrs["use_data_lengths"] else []) + \
            (["label_lengths"] if attrs["use_label_lengths"] else [])
        raise ValueError(f"{name}: expected {n} inputs ({', '.join(want)}) with use_data_lengths="
                         f"{attrs['use_data_lengths']}, use_label_lengths="
                         f"{attrs['use_label_lengths']}; got {len(shapes)}")
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 3:
        raise ValueError(f"{name}: data must have 3 dimensions (sequence length, batch size, "
                         f"alphabet size), got shape {d}")
    if len(lab) != 2:
        raise ValueError(f"{name}: label must have 2 dimensions (batch size, label length), "
                         f"got shape {lab}")
    if d[1] != lab[0]:
        raise ValueError(f"{name}: the batch size of data {d} and label {lab} differ")
    if d[2] < 1:
        raise ValueError(f"{name}: the alphabet (data's last axis) is empty")
    k = 2
    for flag, what in (("use_data_lengths", "data_lengths"), ("use_label_lengths", "label_lengths")):
        if attrs[flag]:
            s = tuple(shapes[k])
            if s != (d[1],):
                raise ValueError(f"{name}: {what} must have shape ({d[1]},) (one length per batch "
                                 f"item), got {s}")
            k += 1
    if lab[1] > d[0]:
        raise ValueError(f"{name}: the label length {lab[1]} exceeds the sequence length {d[0]}")
    dt = np.dtype(dtypes[0]).name if dtypes[0] is not None else None
    if dt is not None and dt not in _FLOATS:
        raise ValueError(f"{name}: data must be float16, float32 or float64, got {dt}")


def _infer(attrs, shapes, dtypes):
    _check("CTCLoss", attrs, shapes, dtypes)
    return [(shapes[0][1],), tuple(shapes[0])], [dtypes[0], dtypes[0]]


def _input_names(attrs):
    return (("data", "label") + (("data_lengths",) if attrs["use_data_lengths"] else ())
            + (("label_lengths",) if attrs["use_label_lengths"] else ()))


# slots (csrc/kernels/ctc_loss.h): which lengths are given, whether the blank is the last class,
# whether to write the gradient too
_forward = kernel_forward(
    "ctc_loss", "ctc_loss", name="CTCLoss",
    ints=("use_data_lengths", "use_label_lengths", "blank_last", "want_grad"), floats=(),
    fill={"use_data_lengths": lambda a, i, o: int(a["use_data_lengths"]),
          "use_label_lengths": lambda a, i, o: int(a["use_label_lengths"]),
          "blank_last": lambda a, i, o: int(a["blank_label"] == "last"),
          "want_grad": lambda a, i, o: 1})


def _grad(F, attrs, inputs, outputs, out_grads):
    if is_recording():
        raise MXNetError("CTCLoss: the gradient of its gradient is not defined (as in MXNet); "
                         "differentiate it without create_graph")
    if len(outputs) < 2:
        raise MXNetError("CTCLoss: the gradient needs the hidden gradient output")
    og = F.reshape(out_grads[0], shape=(1, -1, 1))
    return [F.broadcast_mul(outputs[1], og)] + [None] * (len(inputs) - 1)


register(OpDef("CTCLoss", aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
               inputs=("data", "label", "data_lengths", "label_lengths"), params=_PARAMS,
               infer=_infer, forward=_forward, grad=_grad, input_names=_input_names,
               num_outputs=2, num_visible_outputs=1,
               doc="Connectionist Temporal Classification loss per batch item, softmax applied "
                   "to `data` (T, N, alphabet) inside; `label` (N, L) padded with 0 "
                   "(blank_label='first') or -1 ('last') unless use_label_lengths."))
