"""Dropout, as MXNet 1.9.1 (src/operator/nn/dropout-inl.h).

``Dropout(data, p=0.5, mode='training', axes=(), cudnn_off=False)`` has two outputs: the result
and the mask (MXNet's hidden second output; NumVisibleOutputs is 1). When active (training, or
mode='always') and p > 0: keep = uniform <= 1 - p, mask = keep / (1 - p) (in float32, then the
data's dtype), out = data * mask; with ``axes`` the mask has size 1 on those axes and is shared
along them (variational dropout). Otherwise out = data and the mask is ones. The gradient is
out_grad * mask (broadcast along ``axes``), so it reuses the forward's mask.

Edge cases as MXNet: p = 0 (1 - p rounds to 1 in float32) is the identity; p = 1 in training
gives nan everywhere (MXNet's 0 * (1 / 0)).

Training is read with ``registry.is_training()`` when the operator is pushed.
Kernel: "dropout" of mxc/ops/cpu/random.pyx (csrc/kernels/random.h).
"""
import numpy as np

from .._core import resource
from .params import Param
from .registry import OpDef, register, kernel_forward, is_training, get

_FLOAT_DT = frozenset(np.dtype(d) for d in ("float16", "float32", "float64"))


def _axes(a, ndim):
    axes = []
    for ax in a["axes"]:
        if not -ndim <= ax < ndim:
            raise ValueError(f"Dropout: axis {ax} is out of range for an array of {ndim} dimensions")
        axes.append(ax % ndim)
    return sorted(set(axes))


def _mask_shape(a, shape):
    axes = _axes(a, len(shape))
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _pkeep(a):
    return np.float32(1.0) - np.float32(a["p"])


def _infer(a, shapes, dtypes):
    if not 0.0 <= a["p"] <= 1.0:
        raise ValueError(f"Dropout: p must be in [0, 1], got {a['p']}")
    if np.dtype(dtypes[0]) not in _FLOAT_DT:
        raise ValueError(f"Dropout: data must be float16, float32 or float64, got "
                         f"{np.dtype(dtypes[0]).name}")
    s = tuple(shapes[0])
    return [s, _mask_shape(a, s)], [dtypes[0], dtypes[0]]


def _key_counter(a, inputs, outputs):
    mask = outputs[-1]
    return resource.request_random(mask.context, (mask.size + 3) // 4)


# slots (csrc/kernels/random.h): the generator's key and counter, the keep probability
_dropout = kernel_forward("random", "dropout", key=lambda a, i, o: o[-1]._dcode,
                          ints=("key", "counter"), floats=("pkeep",),
                          fill={("key", "counter"): _key_counter,
                                "pkeep": lambda a, i, o: float(_pkeep(a))}, name="Dropout")
_copy = kernel_forward("elemwise", "unary:copy", name="Dropout")
_fill = kernel_forward("init", "fill", key=lambda a, i, o: o[0]._dcode,
                       fill={"value": lambda a, i, o: 1.0}, name="Dropout")


def _forward(a, inputs, outputs):
    x = inputs[0]
    out, mask = outputs
    active = (is_training() or a["mode"] == "always") and _pkeep(a) < 1
    if not active:
        _copy(a, [x], [out])
        _fill(a, [], [mask])
    elif not _axes(a, x.ndim) or mask.shape == x.shape:
        _dropout(a, [x], [out, mask])
    else:
        _dropout(a, [], [mask])
        bm = get("broadcast_mul")
        bm.forward(bm.parse({}), [x, mask], [out])


def _grad(F, a, i, o, g):
    mask = o[1]
    if mask.shape == i[0].shape:
        return [g[0] * mask]
    return [F.broadcast_mul(g[0], mask)]


register(OpDef("Dropout", inputs=("data",), output_names=("output", "mask"),
               params=(Param("p", float, 0.5),
                       Param("mode", str, "training", choices=("training", "always")),
                       Param("axes", "shape", ()),
                       Param("cudnn_off", bool, False, optional=True)),
               num_outputs=2, num_visible_outputs=1, infer=_infer, forward=_forward, grad=_grad,
               resources=("random",),
               doc="Sets elements of data to zero with probability p and scales the rest by "
                   "1 / (1 - p), in training (or always with mode='always'); the identity "
                   "otherwise. Outputs (output, mask); MXNet shows only the output."))
