"""Shape operators: reshape (MXNet's special codes), expand_dims, squeeze, flatten, transpose,
swapaxes, broadcast_to/like, concat, stack, split, slice, slice_axis, tile, repeat, flip.
Kernels: mxc/ops/cpu/shape.pyx. Reshapes are copies here and views on NDArray.reshape."""
import math

import numpy as np

from .elemwise import sum_to
from ..base import MXNetError, OperatorInputError
from .params import Param
from ._partial_shape import complete, fill_unknown, probe_partial
from .registry import OpDef, register, kernel_forward, copy_then_inplace
from ..util import is_np_shape


def infer_reshape(src, target, reverse=False, op="reshape"):
    """MXNet's reshape codes: 0 copy a dim, -1 infer one, -2 copy the rest, -3 merge two,
    -4 split one into the next two (one of which may be -1). ``reverse`` matches from the right."""
    src, target = tuple(src), tuple(target)
    if reverse:
        rev = infer_reshape(src[::-1], _reverse_codes(target), False, op)
        return rev[::-1]
    out, i, j, infer_at = [], 0, 0, None
    while j < len(target):
        t = target[j]
        if t > 0:
            out.append(t); i += 1
        elif t == 0:
            if i >= len(src):
                raise ValueError(f"{op}: code 0 at position {j} has no input dimension in {src}")
            out.append(src[i]); i += 1
        elif t == -1:
            if infer_at is not None:
                raise ValueError(f"{op}: more than one -1 in {target}")
            infer_at = len(out); out.append(-1); i += 1
        elif t == -2:
            out.extend(src[i:]); i = len(src)
        elif t == -3:
            if i + 1 >= len(src):
                raise ValueError(f"{op}: -3 needs two input dimensions at position {i} of {src}")
            out.append(src[i] * src[i + 1]); i += 2
        elif t == -4:
            if j + 2 >= len(target) or i >= len(src):
                raise ValueError(f"{op}: -4 must be followed by two dimensions in {target}")
            d, a, b = src[i], target[j + 1], target[j + 2]
            if a == -1 and b == -1:
                raise ValueError(f"{op}: -4 split cannot infer both parts in {target}")
            if a == -1:
                a = d // b if b else 0
            if b == -1:
                b = d // a if a else 0
            if a * b != d:
                raise ValueError(f"{op}: cannot split dimension {d} into {a} x {b}")
            out.extend([a, b]); i += 1; j += 2
        else:
            raise ValueError(f"{op}: invalid shape code {t} in {target}")
        j += 1
    total = math.prod(src)        # math.prod: np.prod costs ~5 us on a short tuple
    if infer_at is not None:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"{op}: cannot reshape {src} into {target}")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise ValueError(f"{op}: cannot reshape array of shape {src} (size {total}) into {tuple(out)}")
    return tuple(int(d) for d in out)


def _reverse_codes(target):
    # -4 a b reads left to right; reversed it must stay "-4 b a" in front of the pair
    t = list(target)[::-1]
    out, k = [], 0
    while k < len(t):
        if k + 2 < len(t) and t[k + 2] == -4:
            out.extend([-4, t[k], t[k + 1]]); k += 3
        else:
            out.append(t[k]); k += 1
    return tuple(out)


def _copy_forward(name):
    """Forward for ops whose result is the input's elements in the same order (a reshape)."""
    fwd = kernel_forward("elemwise", "unary:copy", name=name)

    def forward(attrs, inputs, outputs):
        if 0 in outputs[0].shape:   # empty: nothing to copy (and reshape would read 0 as
            return                  # MXNet's "copy this dimension" code)
        fwd(attrs, [inputs[0].reshape(outputs[0].shape)], outputs)
    return forward


def _reshape_grad(F, a, i, o, g):
    if 0 in i[0].shape:     # an empty input: nothing to carry (and reshape would read 0 as
        return [F.zeros_like(i[0])]     # MXNet's "copy this dimension" code)
    if getattr(g[0], "_sparse", False):
        # a sparse head gradient (from a sparse dot) has no reshape view: the operator, which
        # falls back to dense storage as MXNet's
        return [F.reshape_like(g[0], i[0])]
    return [g[0].reshape(i[0].shape)]


def _reg_reshape_like(name, infer, params=(), aliases=(), doc="", infer_back=None):
    register(OpDef(name, aliases=aliases, params=params, infer=infer, forward=_copy_forward(name),
                   grad=_reshape_grad, inplace=((0, 0),), doc=doc, infer_back=infer_back))


def _reshape_infer_back(attrs, in_s, outs):
    """One unknown input dimension from the output's element count."""
    d, o = in_s[0], outs[0]
    if d is None or complete(d) or not complete(o) or list(d).count(0) != 1:
        return None
    known = int(np.prod([x for x in d if x != 0], dtype=np.int64))
    total = int(np.prod(o, dtype=np.int64))
    if known == 0 or total % known:
        return None
    return [tuple(total // known if x == 0 else x for x in d)]


def _legacy_target(src, a):
    """MXNet's deprecated ``target_shape`` (0 marks the one inferred dimension;
    ``keep_highest`` keeps the first input dimension)."""
    out = list(a["target_shape"])
    start = 1 if a["keep_highest"] else 0
    if a["keep_highest"] and out:
        out[0] = src[0]
    zeros = [i for i in range(start, len(out)) if out[i] == 0]
    total = math.prod(src)
    if len(zeros) == 1:
        known = math.prod(d for i, d in enumerate(out) if i != zeros[0])
        if known == 0 or total % known:
            raise ValueError(f"Reshape: cannot reshape {tuple(src)} into target_shape "
                             f"{a['target_shape']}")
        out[zeros[0]] = total // known
    if math.prod(out) != total:
        raise ValueError(f"Reshape: cannot reshape array of shape {tuple(src)} (size {total}) "
                         f"into {tuple(out)}")
    return tuple(int(d) for d in out)


def _reshape_infer(a, s, d):
    if not a["shape"] and a["target_shape"]:
        return [_legacy_target(tuple(s[0]), a)], [d[0]]
    return [infer_reshape(s[0], a["shape"], a["reverse"])], [d[0]]


_reg_reshape_like(
    "Reshape", _reshape_infer,
    params=(Param("shape", "shape", ()), Param("reverse", bool, False),
            Param("target_shape", "shape", None, optional=True),
            Param("keep_highest", bool, False)), aliases=("reshape",),
    doc="Reshape with MXNet's codes 0, -1, -2, -3, -4 (or the deprecated target_shape, "
        "where 0 marks the inferred dimension).", infer_back=_reshape_infer_back)


def _expand_infer(a, s, d):
    nd = len(s[0])
    ax = a["axis"]
    if not -nd - 1 <= ax <= nd:
        raise ValueError(f"expand_dims: axis {ax} out of range for {nd} dimensions")
    ax = ax % (nd + 1)
    return [s[0][:ax] + (1,) + s[0][ax:]], [d[0]]


_reg_reshape_like("expand_dims", _expand_infer, params=(Param("axis", int, required=True),),
                  doc="Insert a dimension of size 1 at `axis`.")


def _squeeze_infer(a, s, d):
    shp = s[0]
    if a["axis"] is None:
        out = tuple(x for x in shp if x != 1)
    else:
        axes = {x % len(shp) for x in a["axis"]}
        for x in axes:
            if shp[x] != 1:
                raise ValueError(f"squeeze: axis {x} has size {shp[x]}, not 1")
        out = tuple(x for k, x in enumerate(shp) if k not in axes)
    return [out if out else (1,)], [d[0]]


_reg_reshape_like("squeeze", _squeeze_infer, params=(Param("axis", "shape", None, optional=True),),
                  doc="Remove dimensions of size 1.")


def _flatten_infer(a, s, d):
    shp = s[0]
    if not shp:
        return [(1, 1)], [d[0]]
    return [(shp[0], math.prod(shp[1:]))], [d[0]]


_reg_reshape_like("Flatten", _flatten_infer, aliases=("flatten",),
                  doc="Collapse all but the first dimension.")


# ---- transpose / swapaxes ----------------------------------------------------------------------
def _axes(a, nd):
    axes = a["axes"]
    if not axes:
        return tuple(range(nd))[::-1]
    if sorted(x % nd for x in axes) != list(range(nd)) or len(axes) != nd:
        raise ValueError(f"transpose: axes {axes} is not a permutation of {nd} dimensions")
    return tuple(x % nd for x in axes)


def _transpose_infer(a, s, d):
    ax = _axes(a, len(s[0]))
    return [tuple(s[0][x] for x in ax)], [d[0]]


def _transpose_grad(F, a, i, o, g):
    ax = _axes(a, i[0].ndim)
    inv = tuple(int(x) for x in np.argsort(ax))
    return [F.transpose(g[0], axes=inv)]


def _transpose_infer_back(a, in_s, outs):
    """The input's unknown dimensions from the output's (inverse permutation)."""
    o = outs[0]
    if o is None:
        return None
    ax = _axes(a, len(o))
    back = [0] * len(o)
    for i, x in enumerate(ax):
        back[x] = o[i]
    d = in_s[0]
    if d is None:
        return [tuple(back)]
    if len(d) != len(back):
        return None
    return [tuple(x if x > 0 else b for x, b in zip(d, back))]


register(OpDef("transpose", params=(Param("axes", "shape", ()),), infer=_transpose_infer,
               infer_back=_transpose_infer_back, infer_partial=probe_partial(_transpose_infer),
               forward=kernel_forward("shape", "transpose", ints=("axes*",),
                                      fill={"axes": lambda a, i, o: _axes(a, i[0].ndim)}),
               grad=_transpose_grad, doc="Permute the axes (reverse them by default)."))


def _swap_composite(F, a, x):
    ax = list(range(x.ndim))
    d1, d2 = axis_in("SwapAxis", a["dim1"], x.ndim), axis_in("SwapAxis", a["dim2"], x.ndim)
    ax[d1], ax[d2] = ax[d2], ax[d1]
    return F.transpose(x, axes=tuple(ax))


register(OpDef("SwapAxis", aliases=("swapaxes",), params=(Param("dim1", int, 0), Param("dim2", int, 0)),
               composite=_swap_composite, doc="Swap two axes."))


# ---- broadcast_to / like -------------------------------------------------------------------------
def _bto_infer(a, s, d):
    src, tgt = s[0], a["shape"]
    if len(tgt) < len(src):
        raise ValueError(f"broadcast_to: target {tgt} has fewer dimensions than {src}")
    src2 = (1,) * (len(tgt) - len(src)) + tuple(src)
    out = []
    for x, t in zip(src2, tgt):
        t = x if t == 0 else t
        if t < 0:
            raise ValueError(f"broadcast_to: target {tgt} has a negative dimension")
        if x != t and x != 1:
            raise ValueError(f"broadcast_to: cannot broadcast {src} to {tgt}")
        out.append(t)
    return [tuple(out)], [d[0]]


def _bto_forward():
    fwd = kernel_forward("shape", "broadcast_to", ints=(), floats=())

    def forward(a, inputs, outputs):
        x, n = inputs[0], outputs[0].ndim
        xv = x if x.ndim == n else x.reshape((1,) * (n - x.ndim) + x.shape)
        fwd(a, [xv], outputs)
    return forward


register(OpDef("broadcast_to", params=(Param("shape", "shape", ()),), infer=_bto_infer,
               forward=_bto_forward(), grad=lambda F, a, i, o, g: [sum_to(F, g[0], i[0].shape)],
               doc="Broadcast to `shape` (0 keeps the input's dimension)."))


def _blike_composite(F, a, lhs, rhs):
    if a["lhs_axes"] is None:
        return F.broadcast_to(lhs, shape=rhs.shape)
    if not a["lhs_axes"] or len(a["lhs_axes"]) != len(a["rhs_axes"] or ()):
        raise MXNetError(f"broadcast_like: lhs_axes {a['lhs_axes']} and rhs_axes {a['rhs_axes']} "
                         "must be non-empty and of equal length")
    shape = list(lhs.shape)
    for la, ra in zip(a["lhs_axes"], a["rhs_axes"]):
        shape[la % lhs.ndim] = rhs.shape[ra % rhs.ndim]
    return F.broadcast_to(lhs, shape=tuple(shape))


register(OpDef("broadcast_like", inputs=("lhs", "rhs"),
               params=(Param("lhs_axes", "shape", None, optional=True),
                       Param("rhs_axes", "shape", None, optional=True)),
               composite=_blike_composite, doc="Broadcast lhs to the shape of rhs."))


def _baxis_composite(F, a, x):
    shape = list(x.shape)
    axes, sizes = a["axis"], a["size"]
    if len(axes) != len(sizes):
        raise ValueError(f"broadcast_axis: axis {axes} and size {sizes} differ in length")
    for ax, n in zip(axes, sizes):
        ax %= x.ndim
        if shape[ax] != 1:
            raise ValueError(f"broadcast_axis: axis {ax} has size {shape[ax]}, not 1")
        shape[ax] = n
    return F.broadcast_to(x, shape=tuple(shape))


register(OpDef("broadcast_axis", aliases=("broadcast_axes",),
               params=(Param("axis", "shape", ()), Param("size", "shape", ())),
               composite=_baxis_composite, doc="Broadcast axes of size 1 to `size`."))


# ---- concat / stack / split ---------------------------------------------------------------------
def _concat_infer(a, s, d):
    if not s:
        raise ValueError("concat: needs at least one input")
    nd = len(s[0])
    ax = a["dim"]
    if not -nd <= ax < nd:
        raise ValueError(f"concat: dim {ax} out of range for {nd} dimensions")
    ax %= nd
    total = 0
    for k, (shp, dt) in enumerate(zip(s, d)):
        if len(shp) != nd or any(shp[i] != s[0][i] for i in range(nd) if i != ax):
            raise ValueError(f"concat: input {k} has shape {shp}, incompatible with {s[0]} on dim {ax}")
        if dt != d[0]:
            raise ValueError(f"concat: input {k} has dtype {dt}, expected {d[0]}")
        total += shp[ax]
    return [s[0][:ax] + (total,) + s[0][ax + 1:]], [d[0]]


def _concat_grad(F, a, i, o, g):
    ax = a["dim"] % i[0].ndim
    out, start = [], 0
    for x in i:
        out.append(F.slice_axis(g[0], axis=ax, begin=start, end=start + x.shape[ax]))
        start += x.shape[ax]
    return out


def _concat_common(attrs, shapes):
    """(axis, the dimensions off the axis merged over shapes (0 where no shape knows one)), or
    None when ranks or known dimensions disagree."""
    nd = len(shapes[0])
    if nd == 0 or any(len(s) != nd for s in shapes):
        return None
    ax = attrs["dim"] % nd
    merged = [0] * nd
    for s in shapes:
        for j, x in enumerate(s):
            if j == ax or x == 0:
                continue
            if merged[j] not in (0, x):
                return None
            merged[j] = x
    return ax, merged


def _concat_infer_partial(attrs, in_s):
    """MXNet's ConcatShape on partial shapes: the dimensions off the axis from whichever input
    knows them, the axis the sum when every input knows its size there (else 0)."""
    common = _concat_common(attrs, in_s)
    if common is None:
        return [None]
    ax, out = common
    out[ax] = 0 if any(s[ax] == 0 for s in in_s) else sum(s[ax] for s in in_s)
    return [tuple(out)]


def _concat_infer_back(attrs, in_s, outs):
    """Inputs learn the dimensions off the axis from the other inputs and the output (MXNet's
    ConcatShape fills them both ways), and, as MXNet's RNNParamConcatShape, inputs whose size
    on the concat axis is unknown (one or two: the first layer's i2h weights of each direction
    in a fused RNN's packed parameters) share what the output has left."""
    o = outs[0]
    if not complete(o):
        known = [s for s in list(in_s) + [o] if s is not None]
        common = _concat_common(attrs, known) if known else None
        if common is None:
            return None
        ax, merged = common
        return [None if s is None or len(s) != len(merged) else
                tuple(s[j] if j == ax else merged[j] or s[j] for j in range(len(s)))
                for s in in_s]
    ax = attrs["dim"] % len(o)
    if any(s is not None and len(s) != len(o) for s in in_s):
        return None
    # unknown dimensions off the axis are the output's
    in_s = [tuple(0 if j == ax else x for j, x in enumerate(o)) if s is None else
            tuple(x if j == ax or x else o[j] for j, x in enumerate(s)) for s in in_s]
    filled = [s if complete(s) else None for s in in_s]
    unknown = [i for i, s in enumerate(in_s) if not complete(s)]
    if not unknown or len(unknown) > 2:
        return filled
    rest = o[ax] - sum(s[ax] for i, s in enumerate(in_s) if i not in unknown)
    if rest < 0 or rest % len(unknown):
        return filled
    for i in unknown:
        filled[i] = tuple(rest // len(unknown) if j == ax else x for j, x in enumerate(in_s[i]))
    return filled


# _rnn_param_concat: what Gluon's fused RNN layers concatenate their parameters with; the same
# operator as Concat, under the name MXNet writes into their exported graphs
for _name, _aliases in (("Concat", ("concat",)), ("_rnn_param_concat", ())):
    register(OpDef(_name, aliases=_aliases, inputs=(), variadic="num_args",
                   params=(Param("num_args", int, required=True), Param("dim", int, 1)),
                   infer=_concat_infer, infer_back=_concat_infer_back,
                   infer_partial=_concat_infer_partial,
                   forward=kernel_forward("shape", "concat", ints=("axis",),
                                          fill={"axis": lambda a, i, o: a["dim"] % i[0].ndim}),
                   grad=_concat_grad, doc="Join arrays along `dim`."))
del _name, _aliases


def _stack_composite(F, a, *xs):
    ax = axis_in("stack", a["axis"], xs[0].ndim + 1)     # the new axis may come last
    return F.concat(*[F.expand_dims(x, axis=ax) for x in xs], dim=ax)


register(OpDef("stack", inputs=(), variadic="num_args",
               params=(Param("axis", int, 0), Param("num_args", int, required=True)),
               composite=_stack_composite, doc="Join arrays along a new axis."))


def _split_n(a):
    return a["num_outputs"]


def _split_infer(a, s, d):
    shp, n = s[0], a["num_outputs"]
    ax = axis_in("split", a["axis"], len(shp))
    if n <= 0 or shp[ax] % n:
        raise ValueError(f"split: axis {ax} of size {shp[ax]} cannot be split into {n} equal parts")
    part = shp[:ax] + (shp[ax] // n,) + shp[ax + 1:]
    if a["squeeze_axis"]:
        if shp[ax] // n != 1:
            raise ValueError("split: squeeze_axis needs parts of size 1")
        part = (shp[:ax] + shp[ax + 1:]) or (1,)
    return [part] * n, [d[0]] * n


def _split_forward():
    fwd = kernel_forward("shape", "split", ints=("axis",),
                         fill={"axis": lambda a, i, o: a["axis"] % i[0].ndim})

    def forward(a, inputs, outputs):
        # the kernel writes parts with the split axis kept; squeezed outputs are viewed so
        x = inputs[0]
        ax = a["axis"] % x.ndim
        part = x.shape[:ax] + (x.shape[ax] // a["num_outputs"],) + x.shape[ax + 1:]
        fwd(a, inputs, [o if o.shape == part else o.reshape(part) for o in outputs])
    return forward


def _split_grad(F, a, i, o, g):
    ax = a["axis"] % i[0].ndim
    if a["squeeze_axis"]:
        g = [F.expand_dims(x.reshape(i[0].shape[:ax] + i[0].shape[ax + 1:]), axis=ax) for x in g]
    return [F.concat(*list(g), dim=ax)]


def _split_infer_back(attrs, in_s, outs):
    part = next((o for o in outs if complete(o)), None)
    if part is None:
        return None
    n, sq = attrs["num_outputs"], attrs["squeeze_axis"]
    rank = len(part) + (1 if sq else 0)
    ax = attrs["axis"] % rank
    full = part[:ax] + (n,) + part[ax:] if sq else part[:ax] + (part[ax] * n,) + part[ax + 1:]
    return [fill_unknown(in_s[0], full)]


register(OpDef("SliceChannel", aliases=("split",), infer_back=_split_infer_back,
               params=(Param("num_outputs", int, required=True), Param("axis", int, 1),
                       Param("squeeze_axis", bool, False)),
               infer=_split_infer, forward=_split_forward(), grad=_split_grad,
               num_outputs=_split_n, doc="Split into `num_outputs` equal parts along `axis`."))


# ---- slice ------------------------------------------------------------------------------------------
def axis_in(op, axis, ndim):
    """`axis` of an `ndim`-D array counted from 0: it must lie in [-ndim, ndim), as MXNet checks
    (never wrapped around as `axis % ndim` would: axis 3 of a 2-D array is an error)."""
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim:
        raise OperatorInputError(f"{op}: axis {axis} is out of range for a {ndim}-D input")
    return ax


def slice_plan(op, shape, begin, end, step):
    """Normalised per-axis (start, step, length) as numpy slicing, for the slice kernels."""
    nd = len(shape)
    if len(begin) > nd or len(end) > nd or (step and len(step) > nd):
        raise ValueError(f"{op}: begin/end/step longer than the {nd} dimensions of {shape}")
    starts, steps, lens = [], [], []
    for k in range(nd):
        b = begin[k] if k < len(begin) else None
        e = end[k] if k < len(end) else None
        st = step[k] if step and k < len(step) and step[k] is not None else 1
        if st == 0:
            raise ValueError(f"{op}: step 0 on axis {k}")
        r = range(shape[k])[slice(b, e, st)]
        starts.append(r.start if len(r) else 0)
        steps.append(st)
        lens.append(len(r))
    return starts, steps, lens


# the slice kernels' slots (csrc/kernels/shape.h): per-axis begin, then per-axis step (then,
# for a scalar assignment, per-axis lengths of the region)
def _slice_starts_steps(a, i, o):
    starts, steps, _ = slice_plan("slice", i[0].shape, a["begin"], a["end"], a["step"])
    return tuple(starts) + tuple(steps)


def _slice_infer(a, s, d):
    if any(x < 0 for x in s[0]):        # numpy shape semantics' unknown dimensions stay unknown
        return _slice_infer_partial(a, s), [d[0]]
    _, _, lens = slice_plan("slice", s[0], a["begin"], a["end"], a["step"])
    from ..util import is_np_shape
    empty = [k for k, (n, dim) in enumerate(zip(lens, s[0])) if n == 0 and dim > 0]
    if empty and not is_np_shape():
        # MXNet 1.9.1 without numpy shape semantics refuses an empty slice (a begin outside the
        # shape, begin == end): 0 is an unknown dimension there, not a size
        k = empty[0]
        raise ValueError(f"slice: axis {k} of size {s[0][k]} sliced from begin="
                         f"{a['begin'][k] if k < len(a['begin']) else None} to end="
                         f"{a['end'][k] if k < len(a['end']) else None} is empty (allowed only "
                         "with numpy shape semantics, mx.np_shape())")
    return [tuple(lens)], [d[0]]


def _slice_infer_partial(a, s):
    # an unknown dimension (0, or -1 with numpy shape semantics) stays as it is; the others
    # are sliced as usual
    shape = s[0]
    _, _, lens = slice_plan("slice", tuple(max(d, 1) for d in shape), a["begin"], a["end"],
                            a["step"])
    return [tuple(n if d > 0 else d for n, d in zip(lens, shape))]


def _slice_axis_range(a, shape):
    """(axis, begin, end) of slice_axis on `shape`, checked as MXNet's GetSliceAxisParams: an
    axis in [-ndim, ndim), negative begin/end counted from the end, end within the axis and
    begin before end (an empty or out-of-range slice is an error, not an empty array)."""
    ax = axis_in("slice_axis", a["axis"], len(shape))
    size = shape[ax]
    if size <= 0:               # unknown (partial shapes): nothing to check yet
        return ax, None, None
    begin = a["begin"] + size if a["begin"] < 0 else a["begin"]
    end = size if a["end"] is None else (a["end"] + size if a["end"] < 0 else a["end"])
    if end > size:
        raise OperatorInputError(f"slice_axis: end={a['end']} is past axis {ax} of size {size}")
    if not begin < end:
        raise OperatorInputError(f"slice_axis: begin={a['begin']}, end={a['end']} select nothing of "
                         f"axis {ax} of size {size}")
    if begin < 0:
        raise OperatorInputError(f"slice_axis: begin={a['begin']} is before axis {ax} of size {size}")
    return ax, begin, end


def _slice_axis_infer_partial(a, s):
    shape = tuple(s[0])
    ax, begin, end = _slice_axis_range(a, shape)
    if begin is None:
        return [shape]
    return [shape[:ax] + (end - begin,) + shape[ax + 1:]]


_SLICE_PARAMS = (Param("begin", "shape_opt", required=True), Param("end", "shape_opt", required=True),
                 Param("step", "shape_opt", ()))


def _slice_grad(F, a, i, o, g):
    return [F._slice_assign(F.zeros_like(i[0]), g[0], begin=a["begin"], end=a["end"], step=a["step"])]


register(OpDef("slice", aliases=("crop",), params=_SLICE_PARAMS, infer=_slice_infer,
               infer_partial=_slice_infer_partial,
               forward=kernel_forward("shape", "slice", ints=("begin*", "step*"),
                                      fill={("begin", "step"): _slice_starts_steps}),
               grad=_slice_grad,
               doc="Slice with begin/end/step per axis (None keeps numpy's default)."))


def _slice_region(scalar):
    def region(a, i, o):
        starts, steps, lens = slice_plan("_slice_assign", i[0].shape, a["begin"], a["end"], a["step"])
        if scalar:   # no value tensor to take the region's lengths from
            return tuple(starts) + tuple(steps) + tuple(lens)
        return tuple(starts) + tuple(steps)
    return region


def _slice_assign_forward(kname, scalar=False):
    if scalar:
        fwd = kernel_forward("shape", kname, ints=("begin*", "step*", "length*"),
                             floats=("scalar",), name="_slice_assign",
                             fill={("begin", "step", "length"): _slice_region(True)})
    else:
        fwd = kernel_forward("shape", kname, ints=("begin*", "step*"), name="_slice_assign",
                             fill={("begin", "step"): _slice_region(False)})
    return copy_then_inplace(fwd, "_slice_assign")


def _slice_assign_infer(a, s, d):
    _, _, lens = slice_plan("_slice_assign", s[0], a["begin"], a["end"], a["step"])
    if len(s) > 1 and tuple(s[1]) != tuple(lens):
        raise ValueError(f"_slice_assign: value of shape {s[1]} does not fit the slice {tuple(lens)}")
    return [s[0]], [d[0]]


register(OpDef("_slice_assign", aliases=("_crop_assign",), inputs=("lhs", "rhs"),
               differentiable=False,
               params=_SLICE_PARAMS, infer=_slice_assign_infer,
               forward=_slice_assign_forward("slice_assign"), inplace=((0, 0),),
               grad=lambda F, a, i, o, g: [
                   F._slice_assign_scalar(g[0], scalar=0.0, begin=a["begin"], end=a["end"], step=a["step"]),
                   F.slice(g[0], begin=a["begin"], end=a["end"], step=a["step"])],
               doc="lhs with the slice replaced by rhs."))
register(OpDef("_slice_assign_scalar", aliases=("_crop_assign_scalar",), differentiable=False,
               params=(Param("scalar", float, 0.0),) + _SLICE_PARAMS, infer=_slice_assign_infer,
               forward=_slice_assign_forward("slice_assign_scalar", scalar=True), inplace=((0, 0),),
               grad=lambda F, a, i, o, g: [
                   F._slice_assign_scalar(g[0], scalar=0.0, begin=a["begin"], end=a["end"], step=a["step"])],
               doc="data with the slice set to a scalar."))


def empty_along(F, x, axis):
    """`x` with nothing left along `axis` (an empty split section): slice refuses an empty
    result outside numpy shape semantics, as MXNet's operator does, so it is asked under them."""
    from ..util import np_shape
    begin, end = [None] * x.ndim, [None] * x.ndim
    begin[axis] = end[axis] = 0
    with np_shape(True):
        return F.slice(x, begin=tuple(begin), end=tuple(end))


def _slice_axis_composite(F, a, x):
    ax, b, e = _slice_axis_range(a, x.shape)
    begin = [None] * x.ndim
    end = [None] * x.ndim
    begin[ax], end[ax] = b, e
    return F.slice(x, begin=tuple(begin), end=tuple(end))


register(OpDef("slice_axis", params=(Param("axis", int, required=True), Param("begin", int, required=True),
                                     Param("end", int, None, optional=True)),
               composite=_slice_axis_composite, infer_partial=_slice_axis_infer_partial,
               infer=lambda a, s, d: (_slice_axis_infer_partial(a, s), [d[0]]),
               doc="Slice along one axis."))


# ---- tile / repeat / flip ----------------------------------------------------------------------------
def _tile_composite(F, a, x):
    reps = tuple(a["reps"])
    if any(r < 0 for r in reps) or (0 in reps and not is_np_shape()):
        # without numpy shape semantics a 0 means "unknown", as in MXNet
        raise OperatorInputError(f"tile: reps {reps} must be positive"
                                 + ("" if is_np_shape() else " (0 needs mx.np_shape())"))
    nd = max(x.ndim, len(reps))
    shp = (1,) * (nd - x.ndim) + x.shape
    reps = (1,) * (nd - len(reps)) + reps
    out_shape = tuple(r * d for r, d in zip(reps, shp))
    if 0 in out_shape:          # nothing to copy, and reshape would read 0 as "keep"
        ctx = getattr(x, "context", None)
        return F._zeros(shape=out_shape, dtype=x.dtype, **({"ctx": ctx} if ctx else {}))
    # the result is x viewed as (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...); size-1
    # entries go, and neighbours of the same kind (both repeats or both data) merge, so the
    # view stays within the 8 dimensions arrays have for every rank up to 4 and most beyond
    inter, target = [], []
    for r, d in zip(reps, shp):
        for size, rep in ((1, r), (d, d)):
            if rep == 1:
                continue
            kind = size == 1
            if target and (inter[-1] == 1) == kind:
                inter[-1] *= size
                target[-1] *= rep
            else:
                inter.append(size)
                target.append(rep)
    if len(target) <= 8:
        y = F.broadcast_to(x.reshape(tuple(inter) or (1,)), shape=tuple(target) or (1,))
        return y.reshape(out_shape)
    # too many alternations for one view: tile one axis at a time, each as a 3-d broadcast
    y = x.reshape(shp)
    for k in range(nd):
        if reps[k] == 1:
            continue
        cur = y.shape
        pre = int(np.prod(cur[:k], dtype=np.int64))
        post = int(np.prod(cur[k:], dtype=np.int64))
        y = F.broadcast_to(y.reshape((pre, 1, post)), shape=(pre, reps[k], post))
        y = y.reshape(cur[:k] + (cur[k] * reps[k],) + cur[k + 1:])
    return y.reshape(out_shape)


register(OpDef("tile", params=(Param("reps", "shape", required=True),), composite=_tile_composite,
               doc="Repeat the whole array `reps` times along each axis."))


def _repeat_composite(F, a, x):
    r = a["repeats"]
    if r < 0:
        raise OperatorInputError(f"repeat: repeats={r} must not be negative")
    if a["axis"] is None:
        x = x.reshape((-1,))
        ax = 0
    else:
        ax = axis_in("repeat", a["axis"], x.ndim)
    shp = x.shape
    y = F.broadcast_to(x.reshape(shp[:ax + 1] + (1,) + shp[ax + 1:]),
                       shape=shp[:ax + 1] + (r,) + shp[ax + 1:])
    return y.reshape(shp[:ax] + (shp[ax] * r,) + shp[ax + 1:])


register(OpDef("repeat", params=(Param("repeats", int, required=True),
                                 Param("axis", int, None, optional=True)),
               composite=_repeat_composite, doc="Repeat each element `repeats` times."))


def _reverse_infer(a, s, d):
    for x in a["axis"]:
        axis_in("reverse", x, len(s[0]))
    return [s[0]], [d[0]]


def _flip_mask(a, i, o):
    nd = i[0].ndim
    axes = {x % nd for x in a["axis"]}
    return tuple(1 if k in axes else 0 for k in range(nd))


register(OpDef("reverse", aliases=("flip",), params=(Param("axis", "shape", required=True),),
               infer=_reverse_infer,
               forward=kernel_forward("shape", "flip", ints=("mask*",), fill={"mask": _flip_mask},
                                      name="reverse"),
               grad=lambda F, a, i, o, g: [F.reverse(g[0], axis=a["axis"])],
               doc="Reverse the order of elements along `axis`."))
