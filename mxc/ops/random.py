"""Random sampling operators, with MXNet 1.9.1's names, aliases and parameters
(src/operator/random/*.cc):

- ``_random_<dist>`` (no inputs; scalar parameters, ``shape``, ``ctx``, ``dtype``): uniform, normal,
  gamma, exponential, poisson, negative_binomial, generalized_negative_binomial, randint;
- ``_random_<dist>_like`` (the shape and dtype of ``data``);
- ``_sample_<dist>`` (one distribution per element of the parameter arrays, ``shape`` samples
  from each), ``_sample_multinomial`` (with ``get_prob``) and its backward;
- ``_shuffle`` (rows along axis 0).

Numbers come from each device's counter-based generator (mxc._core.resource): every operator
reserves its blocks when it is pushed, so results follow push order and the seed, never the
thread count. Kernels: mxc/ops/cpu/random.pyx (csrc/kernels/random.h).

Deliberate differences from MXNet: the streams are mxc's own (MXNet's differ per build anyway);
bad parameter values fail when the operator runs, as MXNet's kernels do: the call returns and
the next wait on the outputs raises MXNetError (mxc/ops/held_error.py);
``randint`` with low == high gives low (MXNet divides by zero); a multinomial draw past a row's
cumulative sum (probabilities summing to less than 1) gives the row's last category with a
non-zero probability (MXNet reads past the row).
"""
import numpy as np

from .._core import engine as _engine, resource
from .params import Param
from .registry import OpDef, register, kernel_forward, declared_kernel
from .held_error import hold_error

_FLOATS = ("float16", "float32", "float64")
_FLOAT_DT = frozenset(np.dtype(d) for d in _FLOATS)


def _ctx_of(outputs):
    return outputs[0].context


def _blocks_fixed(n, dtype):
    """Generator blocks a fixed-consumption kernel uses for n elements of `dtype`."""
    per = 2 if np.dtype(dtype).itemsize == 8 else 4
    return (n + per - 1) // per


def _rng_forward(kname, name, blocks, ints=(), floats=(), fill=None, key=None):
    """A forward pushing random kernel `kname` keyed by the output dtype. Its slots: the
    generator's key and first counter (`blocks(a, inputs, outputs)` blocks are reserved at push
    time), then `ints`; `floats` (csrc/kernels/random.h); fill as kernel_forward's."""
    def key_counter(a, inputs, outputs):
        return resource.request_random(_ctx_of(outputs), blocks(a, inputs, outputs))
    fill = dict(fill or {})
    fill[("key", "counter")] = key_counter
    # the first forward of a kernel declares its slots; the others (_like, _sample_) reuse them
    slots = {} if declared_kernel("random", kname) is not None else \
        {"ints": ("key", "counter") + tuple(ints), "floats": tuple(floats)}
    return kernel_forward("random", kname, key=key or (lambda a, i, o: o[0]._dcode), fill=fill,
                          name=name, **slots)


def _rounded(n):
    return lambda a, i, o: _f32(a[n])


def _ignored(a, i, o):
    return 0.0


def _fixed_blocks(a, inputs, outputs):
    o = outputs[0]
    return _blocks_fixed(o.size, o.dtype)


def _per_element_blocks(a, inputs, outputs):
    return outputs[0].size


# ---- distributions: (name, MXNet kernel, parameters (name, default, kind), check, rejection) ----
def _check_uniform(op, v):
    if not v[1] >= v[0]:
        raise ValueError(f"{op}: low must be less or equal to high in uniform distribution "
                         f"(low={v[0]}, high={v[1]})")


def _check_pos(what):
    def check(op, v):
        for name, x in zip(what, v):
            if not x > 0:
                raise ValueError(f"{op}: {name} parameter has to be positive, got {x}")
    return check


def _check_nonneg(what):
    def check(op, v):
        for name, x in zip(what, v):
            if not x >= 0:
                raise ValueError(f"{op}: {name} parameter has to be non-negative, got {x}")
    return check


_DISTS = [
    # name, kernel, [(param, default, kind)], check, per-element (rejection) sampler
    ("uniform", "uniform", [("low", 0.0, float), ("high", 1.0, float)], _check_uniform, False),
    ("normal", "normal", [("loc", 0.0, float), ("scale", 1.0, float)],
     lambda op, v: _check_pos(("scale",))(op, v[1:]), False),
    ("gamma", "gamma", [("alpha", 1.0, float), ("beta", 1.0, float)],
     _check_pos(("alpha", "beta")), True),
    ("exponential", "exponential", [("lam", 1.0, float)], _check_pos(("lam",)), False),
    ("poisson", "poisson", [("lam", 1.0, float)], _check_nonneg(("lam",)), True),
    ("negative_binomial", "negative_binomial", [("k", 1, int), ("p", 1.0, float)],
     _check_nonneg(("k", "p")), True),
    ("generalized_negative_binomial", "generalized_negative_binomial",
     [("mu", 1.0, float), ("alpha", 1.0, float)], _check_nonneg(("mu", "alpha")), True),
]

_SAMPLE_INPUTS = {"uniform": ("low", "high"), "normal": ("mu", "sigma"), "gamma": ("alpha", "beta"),
                  "exponential": ("lam",), "poisson": ("lam",), "negative_binomial": ("k", "p"),
                  "generalized_negative_binomial": ("mu", "alpha")}

_DOC = {"uniform": "a uniform distribution on [low, high)",
        "normal": "a normal distribution (loc: mean, scale: standard deviation)",
        "gamma": "a gamma distribution (alpha: shape, beta: scale)",
        "exponential": "an exponential distribution (lam: rate)",
        "poisson": "a Poisson distribution (lam: rate)",
        "negative_binomial": "a negative binomial distribution (k failures, p: success "
                             "probability of each trial)",
        "generalized_negative_binomial": "a generalized negative binomial distribution (mu: "
                                         "mean, alpha: dispersion)"}


def _f32(x):
    """MXNet keeps the scalar parameters as float32."""
    return float(np.float32(x))


def _out_dtype(op, dtype, default="float32"):
    return np.dtype(dtype if dtype is not None else default)


def _shape_of(op, a):
    shape = tuple(a["shape"])
    for d in shape:
        if d < 0:
            raise ValueError(f"{op}: shape {shape} has a negative dimension")
    if not shape:
        raise ValueError(f"{op}: give the output shape (shape=...)")
    return shape


# MXNet's samplers all write their device's random resource, an engine var: a sampler that
# fails leaves its error there, and every later sampler on the device is skipped and carries
# that same error until a wait delivers it (or waitall clears it). mxc's generator has no var
# (blocks are reserved at push), so a failed sampler's error sits on a var of its own per
# device, and later samplers first relay it to their outputs while it is undelivered.
_FAILED_RNG = {}        # Context -> engine Var holding a sampler's undelivered error


def _relay():
    pass


def _checked_forward(name, check, pnames, forward):
    """`forward` after the parameter check, which (as MXNet's kernel check) fails the operation
    when it runs rather than the call."""
    def checked(a, inputs, outputs):
        ctx = outputs[0].context
        failed = _FAILED_RNG.get(ctx)
        if failed is not None and not _engine.error_pending(failed):
            del _FAILED_RNG[ctx]
            failed = None
        try:
            check(name, [a[n] for n in pnames])
        except ValueError as e:
            if failed is None:
                failed = _FAILED_RNG[ctx] = _engine.Var()
            # writing a var that holds an earlier sampler's error, it is skipped and carries
            # that one instead, as MXNet's sampler would (it never ran)
            return hold_error(name, e, inputs, outputs, also_writes=[failed])
        if failed is not None:
            _engine.push(_relay, [failed], [o._chunk for o in outputs], name=name)
        return forward(a, inputs, outputs)
    return checked


def _random_op(dist, kname, pdefs, check, rejection):
    name = f"_random_{dist}"
    pnames = [p[0] for p in pdefs]
    params = tuple(Param(n, kind, d) for n, d, kind in pdefs) + (
        Param("shape", "shape", ()), Param("ctx", str, ""),
        Param("dtype", "dtype", None, choices=_FLOATS))

    def infer(a, shapes, dtypes):
        return [_shape_of(name, a)], [_out_dtype(name, a["dtype"])]

    # the distribution's parameters are the kernel's float slots (as float32, as MXNet keeps them)
    fwd = _rng_forward(kname, name, _per_element_blocks if rejection else _fixed_blocks,
                       floats=pnames, fill={n: _rounded(n) for n in pnames})
    register(OpDef(name, aliases=(f"random_{dist}",) + (("uniform",) if dist == "uniform" else ())
                   + (("normal",) if dist == "normal" else ()),
                   inputs=(), params=params, infer=infer,
                   forward=_checked_forward(name, check, pnames, fwd),
                   grad=lambda F, a, i, o, g: [], resources=("random",),
                   doc=f"Samples from {_DOC[dist]}; float32 unless dtype says otherwise."))

    lname = f"_random_{dist}_like"

    def infer_like(a, shapes, dtypes):
        if np.dtype(dtypes[0]) not in _FLOAT_DT:
            raise ValueError(f"{lname}: data must be float16, float32 or float64, got {dtypes[0]}")
        return [tuple(shapes[0])], [dtypes[0]]

    lfwd = _rng_forward(kname, lname, _per_element_blocks if rejection else _fixed_blocks,
                        fill={n: _rounded(n) for n in pnames})
    register(OpDef(lname, inputs=("data",),
                   params=tuple(Param(n, kind, d) for n, d, kind in pdefs),
                   infer=infer_like,
                   forward=_checked_forward(lname, check, pnames, lambda a, i, o: lfwd(a, [], o)),
                   grad=lambda F, a, i, o, g: [F.zeros_like(i[0])], resources=("random",),
                   doc=f"Samples from {_DOC[dist]} with the shape and dtype of data."))


def _sample_op(dist, kname, rejection):
    name = f"_sample_{dist}"
    inputs = _SAMPLE_INPUTS[dist]

    def infer(a, shapes, dtypes):
        s0 = tuple(shapes[0])
        for s in shapes[1:]:
            if tuple(s) != s0:
                raise ValueError(f"{name}: the parameter arrays must have one shape, got "
                                 f"{[tuple(x) for x in shapes]}")
        for d in dtypes[1:]:
            if np.dtype(d) != np.dtype(dtypes[0]):
                raise ValueError(f"{name}: the parameter arrays must have one dtype, got "
                                 f"{[np.dtype(x).name for x in dtypes]}")
        if not s0 or int(np.prod(s0)) == 0:
            raise ValueError(f"{name}: the parameter arrays are empty (shape {s0})")
        for d in a["shape"]:
            if d <= 0:
                raise ValueError(f"{name}: shape parameter must be non-zero within each dimension, "
                                 f"got {a['shape']}")
        return [s0 + tuple(a["shape"])], [_out_dtype(name, a["dtype"])]

    # the parameters come from the input arrays: the kernel ignores its float slots then
    pnames = declared_kernel("random", kname).floats
    fwd = _rng_forward(kname, name, _per_element_blocks if rejection else _fixed_blocks,
                       fill={n: _ignored for n in pnames})
    register(OpDef(name, aliases=(f"sample_{dist}",), inputs=inputs,
                   params=(Param("shape", "shape", ()),
                           Param("dtype", "dtype", None, choices=_FLOATS)),
                   infer=infer, forward=fwd,
                   grad=lambda F, a, i, o, g: [F.zeros_like(x) for x in i], resources=("random",),
                   doc=f"Samples from {_DOC[dist]}, one distribution per element of the parameter "
                       f"arrays ({', '.join(inputs)}); `shape` samples from each."))


for _d in _DISTS:
    _random_op(*_d)
    _sample_op(_d[0], _d[1], _d[4])


# ---- randint ------------------------------------------------------------------------------
_I32 = (-(1 << 31), (1 << 31) - 1)


def _check_randint(op, v):
    if not v[1] >= v[0]:
        raise ValueError(f"{op}: low must be less or equal to high in uniform "
                         f"distribution (low={v[0]}, high={v[1]})")


def _randint_infer(a, shapes, dtypes):
    lo, hi = a["low"], a["high"]
    dt = _out_dtype("_random_randint", a["dtype"], "int32")
    if dt == np.int32 and not (_I32[0] <= lo and hi <= _I32[1] + 1):
        raise ValueError(f"_random_randint: [low, high) = [{lo}, {hi}) does not fit int32; "
                         f"use dtype='int64'")
    return [_shape_of("_random_randint", a)], [dt]


register(OpDef("_random_randint", aliases=("random_randint", "_npi_random_randint"), inputs=(),
               params=(Param("low", int, required=True), Param("high", int, required=True),
                       Param("shape", "shape", ()), Param("ctx", str, ""),
                       Param("dtype", "dtype", None, choices=("int32", "int64"))),
               infer=_randint_infer,
               forward=_checked_forward("_random_randint", _check_randint, ("low", "high"),
                                        _rng_forward("randint", "_random_randint",
                                                     _fixed_blocks, ints=("low", "high"))),
               grad=lambda F, a, i, o, g: [], resources=("random",),
               doc="Integers drawn uniformly from [low, high); int32 unless dtype says otherwise."))


# ---- multinomial ------------------------------------------------------------------------------
def _mn_infer(a, shapes, dtypes):
    name = "_sample_multinomial"
    s = tuple(shapes[0])
    if np.dtype(dtypes[0]) not in _FLOAT_DT:
        raise ValueError(f"{name}: data must hold float16, float32 or float64 probabilities, "
                         f"got {np.dtype(dtypes[0]).name}")
    if not s or s[-1] == 0:
        raise ValueError(f"{name}: data must have a non-empty last axis (the categories), got {s}")
    shape = tuple(a["shape"])
    if len(s) == 1:
        out = shape if shape else (1,)
    else:
        out = s[:-1] + shape
    dts = [np.dtype(a["dtype"])] + ([np.dtype(dtypes[0])] if a["get_prob"] else [])
    return [out] * len(dts), dts


def _mn_blocks(a, inputs, outputs):
    return (outputs[0].size + 3) // 4


_mn_fwd = _rng_forward("multinomial", "_sample_multinomial", _mn_blocks,
                       key=lambda a, i, o: i[0]._dcode)


def _mn_grad(F, a, i, o, g):
    if a["get_prob"]:
        return [F._backward_sample_multinomial(g[1], i[0], o[0])]
    return [F.zeros_like(i[0])]


register(OpDef("_sample_multinomial", aliases=("sample_multinomial",), inputs=("data",),
               params=(Param("shape", "shape", ()), Param("get_prob", bool, False),
                       Param("dtype", "dtype", "int32",
                             choices=("uint8", "int32", "float16", "float32", "float64"))),
               num_outputs=lambda a: 2 if a["get_prob"] else 1,
               infer=_mn_infer, forward=lambda a, i, o: _mn_fwd(a, i, o), grad=_mn_grad,
               resources=("random", "temp_space"),
               doc="Samples categories from the distributions in data's last axis (probabilities "
                   "summing to one); get_prob=True also returns the log probability of each "
                   "sample (its gradient is the REINFORCE one: d log p / d p)."))


def _mnb_infer(a, shapes, dtypes):
    return [tuple(shapes[1])], [dtypes[1]]


register(OpDef("_backward_sample_multinomial", inputs=("ograd", "data", "sample"),
               infer=_mnb_infer,
               forward=kernel_forward("random", "multinomial_backward",
                                      key=lambda a, i, o: i[1]._dcode, ints=(), floats=(),
                                      name="_backward_sample_multinomial"),
               grad=lambda F, a, i, o, g: [None, None, None],
               doc="Gradient of sample_multinomial's log probabilities with respect to data."))


# ---- shuffle ----------------------------------------------------------------------------------
def _shuffle_blocks(a, inputs, outputs):
    x = inputs[0]
    n = x.shape[0] if x.ndim else 1
    return (n + 1) // 2


register(OpDef("_shuffle", aliases=("shuffle", "_npi_shuffle"), inputs=("data",),
               differentiable=False,
               infer=lambda a, s, d: ([tuple(s[0])], [d[0]]),
               forward=_rng_forward("shuffle", "_shuffle", _shuffle_blocks),
               grad=lambda F, a, i, o, g: [None], resources=("random",),
               doc="The rows of data (along axis 0) in a random order."))


# ---- unique Zipfian candidates (sampled softmax: GluonNLP's LogUniformCandidateSampler) -------
def _uz_infer(a, shapes, dtypes):
    name = "_sample_unique_zipfian"
    shape = tuple(a["shape"])
    if len(shape) != 2 or min(shape) < 0:
        raise ValueError(f"{name}: shape must be 2-D (batch_size, num_sampled), got {shape}")
    if a["range_max"] < 1:
        raise ValueError(f"{name}: range_max must be >= 1, got {a['range_max']}")
    if shape[1] > a["range_max"]:
        raise ValueError(f"{name}: Number of samples cannot exceed the number of possible classes "
                         f"(num_sampled={shape[1]}, range_max={a['range_max']})")
    return [shape, (shape[0],)], [np.dtype(np.int64)] * 2


register(OpDef("_sample_unique_zipfian", inputs=(), num_outputs=2,
               params=(Param("range_max", int, required=True), Param("shape", "shape", ()),
                       Param("ctx", str, "")),
               infer=_uz_infer,
               forward=_rng_forward("unique_zipfian", "_sample_unique_zipfian",
                                    lambda a, i, o: o[0].shape[0], ints=("range_max",)),
               grad=lambda F, a, i, o, g: [], resources=("random",),
               doc="Per row of shape (batch_size, num_sampled): num_sampled distinct classes of "
                   "[0, range_max), each draw round(exp(u log(range_max))) - 1 for u uniform in "
                   "[0, 1) (approximately log-uniform), and how many draws that took (both "
                   "int64), as MXNet's operator."))
