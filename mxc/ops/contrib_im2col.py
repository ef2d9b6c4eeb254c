"""``im2col`` and ``col2im`` (MXNet 1.9.1, src/operator/nn/im2col.cc): sliding blocks of
(N, C, *spatial) data as columns (N, C * prod(kernel), L) -- rows ordered channel first, then
kernel positions; L the output positions in row-major order, as Convolution's weight
(num_filter, C, *kernel) reshaped to (num_filter, -1) expects -- and the adjoint that sums
columns back into an image of ``output_size``. Each one's gradient is the other.

Runs numpy on the host (``_host``).
"""
import itertools

import numpy as np

from ._host import host_forward
from .params import Param
from .registry import OpDef, register

_GEOM = (Param("kernel", "shape", required=True), Param("stride", "shape", ()),
         Param("dilate", "shape", ()), Param("pad", "shape", ()))


def _geom(name, a):
    k = tuple(a["kernel"])
    d = len(k)
    if not 1 <= d <= 3:
        raise ValueError(f"{name}: kernel must have 1 to 3 dimensions, got {k}")
    st = tuple(a["stride"]) or (1,) * d
    dl = tuple(a["dilate"]) or (1,) * d
    pd = tuple(a["pad"]) or (0,) * d
    if len(st) != d or len(dl) != d or len(pd) != d:
        raise ValueError(f"{name}: stride {st}, dilate {dl} and pad {pd} need {d} entries like "
                         f"kernel {k}")
    if min(k) < 1 or min(st) < 1 or min(dl) < 1 or min(pd) < 0:
        raise ValueError(f"{name}: kernel, stride and dilate must be positive, pad >= 0")
    return k, st, dl, pd


def _out_spatial(name, a, spatial):
    k, st, dl, pd = _geom(name, a)
    if len(spatial) != len(k):
        raise ValueError(f"{name}: a {len(k)}-D kernel needs {len(k)} spatial dimensions, got "
                         f"{tuple(spatial)}")
    out = []
    for s, kk, ss, dd, pp in zip(spatial, k, st, dl, pd):
        span = s + 2 * pp - (dd * (kk - 1) + 1)
        if span < 0:
            raise ValueError(f"{name}: kernel {k} (dilate {dl}) does not fit spatial size "
                             f"{tuple(spatial)} padded by {pd}")
        out.append(span // ss + 1)
    return tuple(out)


def _windows(a, spatial_out):
    k, st, dl, pd = _geom("im2col", a)
    for pos in itertools.product(*[range(x) for x in k]):
        yield tuple(slice(p * d, p * d + s * (o - 1) + 1, s)
                    for p, d, s, o in zip(pos, dl, st, spatial_out))


def _im2col_infer(a, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) < 3:
        raise ValueError(f"im2col: data must be (N, C, *spatial), got {d}")
    out = _out_spatial("im2col", a, d[2:])
    return [(d[0], d[1] * int(np.prod(a["kernel"])), int(np.prod(out)))], [dtypes[0]]


def _im2col(a, x):
    _, _, _, pd = _geom("im2col", a)
    out = _out_spatial("im2col", a, x.shape[2:])
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pd])
    cols = np.stack([xp[(slice(None), slice(None)) + w] for w in _windows(a, out)], axis=2)
    return cols.reshape(x.shape[0], -1, int(np.prod(out)))


def _col2im_core(a, cols, spatial, dtype):
    _, _, _, pd = _geom("col2im", a)
    out = _out_spatial("col2im", a, spatial)
    n = cols.shape[0]
    kk = int(np.prod(a["kernel"]))
    c = cols.shape[1] // kk
    cols = cols.reshape((n, c, kk) + out)
    buf = np.zeros((n, c) + tuple(s + 2 * p for s, p in zip(spatial, pd)), np.float64)
    for i, w in enumerate(_windows(a, out)):
        buf[(slice(None), slice(None)) + w] += cols[:, :, i]
    crop = tuple(slice(p, p + s) for p, s in zip(pd, spatial))
    return buf[(slice(None), slice(None)) + crop].astype(dtype)


def _im2col_grad(F, a, inputs, outputs, out_grads):
    return [F.col2im(out_grads[0], output_size=inputs[0].shape[2:], **a)]


register(OpDef("im2col", params=_GEOM, infer=_im2col_infer,
               forward=host_forward("im2col", _im2col), grad=_im2col_grad,
               doc="Sliding blocks of (N, C, *spatial) as columns (N, C*prod(kernel), L)."))


_C2I = (Param("output_size", "shape", required=True),) + _GEOM


def _col2im_infer(a, shapes, dtypes):
    d = tuple(shapes[0])
    size = tuple(a["output_size"])
    kk = int(np.prod(a["kernel"]))
    if len(d) != 3 or d[1] % kk:
        raise ValueError(f"col2im: data must be (N, C*prod(kernel), L) with prod(kernel) = {kk}, "
                         f"got {d}")
    out = _out_spatial("col2im", a, size)
    if d[2] != int(np.prod(out)):
        raise ValueError(f"col2im: data has {d[2]} blocks, output_size {size} gives "
                         f"{int(np.prod(out))}")
    return [(d[0], d[1] // kk) + size], [dtypes[0]]


def _col2im(a, cols):
    return _col2im_core(a, cols, tuple(a["output_size"]), cols.dtype)


def _col2im_grad(F, a, inputs, outputs, out_grads):
    kw = {k: v for k, v in a.items() if k != "output_size"}
    return [F.im2col(out_grads[0], **kw)]


register(OpDef("col2im", params=_C2I, infer=_col2im_infer,
               forward=host_forward("col2im", _col2im), grad=_col2im_grad,
               doc="Sum columns (N, C*prod(kernel), L) back into (N, C, *output_size)."))
