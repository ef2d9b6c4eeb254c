"""Initialisation operators (no inputs): _zeros, _ones, _full, _arange, _linspace, _eye.
Kernels: mxc/ops/cpu/init.pyx ("fill", "arange", "eye")."""
import math

import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward



def _fill_infer(a, s, d):
    # -1 marks a dimension the graph must infer (MXNet's partial shapes); held as 0 (unknown)
    # until the symbol front's inference completes it from the consumers
    if any(x < -1 for x in a["shape"]):
        raise ValueError(f"shape {a['shape']}: a dimension must be >= -1 (-1: unknown)")
    return [tuple(0 if x < 0 else x for x in a["shape"])], [np.dtype(a["dtype"])]


def _fill_forward(name, value):
    # the engine names the operation after the operator (_zeros, _ones, _full), as MXNet does
    fwd = kernel_forward("init", "fill", key=lambda a, i, o: o[0]._dcode, floats=("value",),
                         fill={"value": lambda a, i, o: value(a)}, name=name)
    return fwd


for _name, _value in [("_zeros", lambda a: 0.0), ("_ones", lambda a: 1.0), ("_full", lambda a: a["value"])]:
    _params = (Param("shape", "shape", ()), Param("dtype", "dtype", "float32"))
    if _name == "_full":
        _params += (Param("value", float, required=True),)
    register(OpDef(_name, inputs=(), params=_params, infer=_fill_infer, forward=_fill_forward(_name, _value),
                   doc=f"A new array filled with {_name.strip('_')}."))


def _arange_len(a):
    start, stop, step = a["start"], a["stop"], a["step"]
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    return max(0, int(math.ceil((stop - start) / step))), start


def _arange_infer(a, s, d):
    n, _ = _arange_len(a)
    return [(n * a["repeat"],) if a["repeat"] > 1 else (n,)], [np.dtype(a["dtype"])]


def _arange_start_step(a):
    """An integer dtype takes start and step as integers (truncated), as MXNet's kernel does
    (np.arange(1.3, 10, 1.3, dtype=int) is 1, 2, 3, ...); the length comes from the floats."""
    start, step = _arange_len(a)[1], a["step"]
    if np.dtype(a["dtype"]).kind in "iub":
        start, step = float(math.trunc(start)), float(math.trunc(step))
    return start, step


def _arange_forward():
    fwd = kernel_forward("init", "arange", key=lambda a, i, o: o[0]._dcode,
                         floats=("start", "step"), name="_arange",
                         fill={"start": lambda a, i, o: _arange_start_step(a)[0],
                               "step": lambda a, i, o: _arange_start_step(a)[1]})

    def forward(a, inputs, outputs):
        if a["repeat"] > 1:
            raise ValueError("_arange: use repeat via mx.nd.arange(repeat=...)")
        fwd(a, inputs, outputs)
    return forward


register(OpDef("_arange", inputs=(), params=(Param("start", float, required=True),
                                             Param("stop", float, None, optional=True),
                                             Param("step", float, 1.0), Param("repeat", int, 1),
                                             Param("infer_range", bool, False),
                                             Param("dtype", "dtype", "float32")),
               infer=_arange_infer, forward=_arange_forward(),
               doc="Evenly spaced values in [start, stop)."))


def _linspace_step(a):
    n = a["num"]
    div = (n - 1) if a["endpoint"] else n
    return (a["stop"] - a["start"]) / div if div > 0 else 0.0


register(OpDef("_linspace", inputs=(), params=(Param("start", float, required=True),
                                               Param("stop", float, required=True),
                                               Param("num", int, required=True),
                                               Param("endpoint", bool, True),
                                               Param("dtype", "dtype", "float32")),
               infer=lambda a, s, d: ([(a["num"],)], [np.dtype(a["dtype"])]),
               forward=kernel_forward("init", "arange", key=lambda a, i, o: o[0]._dcode,
                                      fill={"step": lambda a, i, o: _linspace_step(a)},
                                      name="_linspace"),
               doc="`num` evenly spaced values from start to stop."))


register(OpDef("_eye", inputs=(), params=(Param("N", int, required=True), Param("M", int, 0),
                                          Param("k", int, 0), Param("dtype", "dtype", "float32")),
               infer=lambda a, s, d: ([(a["N"], a["M"] or a["N"])], [np.dtype(a["dtype"])]),
               forward=kernel_forward("init", "eye", key=lambda a, i, o: o[0]._dcode,
                                      ints=("k",), name="_eye"),
               doc="A 2-D array with ones on diagonal k."))
