"""The operator registry: every operator is one OpDef, and every front end is built from it.

An OpDef says what MXNet users know about an operator (its name and aliases, its tensor inputs,
typed parameters) and what mxc needs to run it:

- ``infer(attrs, in_shapes, in_dtypes) -> (out_shapes, out_dtypes)``; raises ValueError naming the
  operator on bad shapes. The symbol front end and the executor call the same function.
- ``forward(attrs, inputs, outputs)``: queues the work on the engine (normally one kernel push,
  see ``kernel_forward``). Outputs are allocated by the caller from ``infer``.
- or ``composite(F, attrs, *inputs)``: an operator built from other operators through the
  namespace F (``mx.nd`` or, later, ``mx.sym``); it needs no kernel and inherits gradients.
- ``grad(F, attrs, inputs, outputs, out_grads) -> [grad or None per input]``, written with F's
  differentiable operators, so higher-order gradients come free (autograd calls it; the
  registry tests check it against central differences).

What the symbol front and the executor need beyond that:

- ``aux``: names of the inputs that are auxiliary states (BatchNorm's moving_mean, moving_var).
  They come last in ``inputs``, get no gradient, and the forward may update them in place.
- ``mutate``: indices of inputs the forward writes in place (aux states, optimizer states such as
  sgd_mom_update's mom). Pushed as mutable; never differentiated.
- ``resources``: what a kernel needs from the runtime: "random" (a seeded generator,
  mxc._core.resource) and/or "temp_space" (scratch memory).
- ``infer_inputs(attrs, in_shapes) -> in_shapes``: completes input shapes that are None
  (unknown) where the operator can tell them (FullyConnected's weight from data and
  num_hidden), as MXNet's backward shape inference does; ``infer`` is called afterwards.
- ``infer_back(attrs, in_shapes, out_shapes) -> in_shapes or None``: completes unknown input
  dimensions (0, or a None shape) from known output shapes, MXNet's shape functions run
  backwards (a begin state ``zeros((0, H))`` learns its batch size from the FullyConnected that
  consumes it). Partial-shape helpers: mxc/ops/_partial_shape.py.
- ``infer_partial(attrs, in_shapes) -> out_shapes``: output shapes with unknown dimensions (0)
  where inputs have some (every input shape known in rank), as MXNet's shape functions leave
  an unknown dimension unknown and compute the rest (slice of a (0, 20) array).
- ``output_names`` / ``input_init``: output names and initializers of created input variables,
  as the symbol front shows them.
- ``is_training()`` (mxc._core.modes): read by the forward of operators that behave differently
  in training (Dropout, BatchNorm); autograd and the executor set it.

`mx.nd.<name>` for every name and alias, NDArray methods and, later, `mx.sym.<name>` come from here.
"""
from operator import itemgetter

from ..base import MXNetError, OperatorInputError
from .._core.modes import is_training  # noqa: F401  (for forwards that depend on the mode)
from .._core.threads import omp_threads
from . import bfloat16
from .params import Param, parse_attrs

__all__ = ["OpDef", "Param", "register", "get", "all_ops", "names", "omp_threads", "kernel_forward",
           "copy_then_inplace", "is_training", "METHODS", "Kernel", "kernel", "kernels"]

# The operators that NDArray and Symbol also offer as methods (x.exp(), s.sum(axis=1)): one list
# for both fronts (mxc/ndarray/methods.py, mxc/symbol/symbol.py), MXNet 1.9.1's plus negative and
# softsign. A class that defines a name itself keeps its own (NDArray.reshape).
METHODS = (
    "negative abs sign round rint ceil floor trunc fix square sqrt rsqrt cbrt exp expm1 log log10 "
    "log2 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees "
    "radians sigmoid relu softsign reciprocal sum mean prod max min nansum nanprod norm argmax "
    "argmin clip transpose swapaxes flatten expand_dims squeeze broadcast_to broadcast_like split "
    "slice slice_axis take one_hot tile repeat flip zeros_like ones_like broadcast_axes "
    "pad diag sort argsort topk pick argmax_channel shape_array size_array depth_to_space "
    "space_to_depth softmax log_softmax softmin reshape_like slice_like rcbrt reshape astype"
).split()

_OPS = {}        # every name and alias -> OpDef
_DEFS = []       # each OpDef once, in registration order


class OpDef:
    __slots__ = ("name", "aliases", "inputs", "params", "infer", "forward", "composite", "grad",
                 "num_outputs", "variadic", "inplace", "doc", "_param_names", "_defaults", "_parsed",
                 "fast", "fast_kind", "_fast_kernel", "aux", "mutate", "resources",
                 "infer_inputs", "infer_back", "open_params", "input_names", "num_visible_outputs",
                 "output_names", "input_init", "infer_input_dtypes", "infer_partial", "skippable",
                 "infer_dtypes", "train_attrs", "differentiable")

    def __init__(self, name, *, inputs=("data",), params=(), infer=None, forward=None,
                 composite=None, grad=None, aliases=(), num_outputs=1, variadic=None,
                 inplace=(), doc="", fast=None, aux=(), mutate=(), resources=(),
                 infer_inputs=None, infer_back=None, open_params=False, input_names=None,
                 num_visible_outputs=None, output_names=None, input_init=None,
                 infer_input_dtypes=None, infer_partial=None, skippable=(), infer_dtypes=None,
                 train_attrs=None, differentiable=True):
        if (forward is None) == (composite is None):
            raise TypeError(f"{name}: give exactly one of forward= (a kernel) or composite=")
        if forward is not None and infer is None:
            raise TypeError(f"{name}: a kernel operator needs infer=")
        self.name, self.aliases, self.inputs = name, tuple(aliases), tuple(inputs)
        self.params = tuple(params)
        self.infer, self.forward, self.composite, self.grad = infer, forward, composite, grad
        self.num_outputs = num_outputs      # int, or callable(attrs) -> int
        self.variadic = variadic            # name of the count parameter (concat's num_args) or None
        self.inplace = tuple(inplace)       # (input index, output index) pairs that may share memory
        self.doc = doc
        self.aux = tuple(aux)
        if self.aux and tuple(self.inputs[len(self.inputs) - len(self.aux):]) != self.aux:
            raise TypeError(f"{name}: aux states {self.aux} must be the last inputs")
        self.mutate = tuple(mutate)         # input indices written in place by the forward
        # output indices the forward leaves unwritten when attrs["_skip_outputs"] names them
        # (a backward's data gradient that no one reads: see skip_unneeded_outputs)
        self.skippable = tuple(skippable)
        self.resources = tuple(resources)
        for r in self.resources:
            if r not in ("random", "temp_space"):
                raise TypeError(f"{name}: unknown resource {r!r}")
        self.infer_inputs = infer_inputs
        self.infer_back = infer_back
        # open_params: keyword arguments beyond `params` are kept as strings (Custom passes
        # them to the user's CustomOpProp, as MXNet does)
        self.open_params = open_params
        # input_names(attrs) -> the inputs used with these parameters (FullyConnected without
        # bias takes (data, weight)); None: always all of `inputs`
        self.input_names = input_names
        # outputs beyond the visible ones are kept for the gradient and not returned (Dropout's
        # mask); int or callable(attrs); None: all outputs are visible
        self.num_visible_outputs = num_visible_outputs
        # output_names: MXNet's FListOutputNames ("output", "mean", "var"), a tuple or
        # callable(attrs); None: "output" / "output<i>". input_init: {input index: initializer
        # JSON} given to variables the symbol front creates for those inputs (BatchNorm's
        # moving_var starts at one), MXNet's FSetInputVarAttrOnCompose.
        self.output_names = output_names
        self.input_init = input_init or {}
        # infer_input_dtypes(attrs, in_dtypes) -> a dtype (or None) per input: what the symbol
        # front gives inputs whose dtype is unknown (BatchNorm's float32 gamma and statistics
        # beside float16 data); None: the first known float dtype, as MXNet's ElemwiseType
        self.infer_input_dtypes = infer_input_dtypes
        self.infer_partial = infer_partial
        # infer_dtypes(attrs, in_dtypes) -> a dtype per output, for the symbol front while the
        # shapes are unknown (MXNet's FInferType), where the outputs' dtype is not the first
        # input's or the "dtype" parameter's (where: x's; shape_array: int64)
        self.infer_dtypes = infer_dtypes
        # train_attrs(attrs) -> attrs: the attributes a forward runs with where its gradient may
        # be asked for (autograd recording, a planned graph with a backward), so that it keeps
        # what the backward reads (max Pooling's argmax); None: the same attributes
        self.train_attrs = train_attrs
        # differentiable=False: MXNet 1.9.1 registers no FGradient for this operator (batch_take,
        # the multi-tensor optimizer updates...): binding a graph whose gradient flows through it
        # is refused (mxc/executor/nograd.py), even where `grad` or a composite could give one
        self.differentiable = differentiable
        self._param_names = frozenset(p.name for p in self.params)
        self._defaults = None
        self._parsed = {}         # parse() results by the call's keyword items (see parse)
        # fast=(family, kernel name, kind): an elementwise kernel the C fast path may call
        # directly (kind 1 unary, 2 binary on equal shapes, 3 array-scalar); see handle.pyx
        self.fast = fast
        self.fast_kind = fast[2] if fast else 0
        self._fast_kernel = None
        if infer is not None and variadic is None and not open_params:
            self.infer = _arity_checked(self, infer)

    def parse(self, kwargs):
        """Typed attributes from Python values or MXNet attribute strings."""
        if not kwargs:
            if self._defaults is None:
                self._defaults = parse_attrs(self.name, self.params, {})
            return self._defaults
        if self.open_params:
            extra = {k: v for k, v in kwargs.items() if k not in self._param_names}
            known = {k: v for k, v in kwargs.items() if k in self._param_names}
            out = parse_attrs(self.name, self.params, known)
            out.update((k, v if isinstance(v, str) else str(v)) for k, v in extra.items())
            return out
        # A training loop calls each layer's operator with the same keywords every step:
        # typing them again costs 10-40 us a call (Convolution's ten parameters). The result
        # is shared like the defaults above: callers read attrs, never write them.
        key = tuple(kwargs.items())
        try:
            hit = self._parsed.get(key)
        except TypeError:          # an unhashable value (a list): typed every time
            return parse_attrs(self.name, self.params, kwargs)
        if hit is None:
            hit = parse_attrs(self.name, self.params, kwargs)
            if len(self._parsed) >= 512:
                self._parsed.clear()
            self._parsed[key] = hit
        return hit

    def fast_kernel(self):
        """The FastKernel (addresses by dtype) for this op's fast path, built on first use."""
        if self._fast_kernel is None:
            import importlib
            from .._core.handle import FastKernel
            family, kname, _ = self.fast
            table = importlib.import_module(f"mxc.ops.cpu.{family}").KERNELS[kname]
            self._fast_kernel = FastKernel(self.name, table, KERNEL_THREADS, self, self.parse({}))
        return self._fast_kernel

    def n_out(self, attrs):
        return self.num_outputs(attrs) if callable(self.num_outputs) else self.num_outputs

    def n_visible(self, attrs):
        v = self.num_visible_outputs
        if v is None:
            return self.n_out(attrs)
        return v(attrs) if callable(v) else v

    def __repr__(self):
        return f"<OpDef {self.name}>"


def _arity_checked(op, infer):
    """`infer` behind a count of the inputs: every path to a kernel (mx.nd, a bound symbol, a
    loaded JSON, CachedOp) infers shapes first, so a node with fewer inputs than the operator
    takes (a BatchNorm without gamma/beta) is refused here and never reaches a kernel that
    would read past its input list. Variadic operators count their own inputs."""
    fixed = len(op.inputs) if op.input_names is None else None

    def checked(attrs, in_shapes, in_dtypes):
        need = fixed if fixed is not None else len(op.input_names(attrs))
        if len(in_shapes) < need:
            names = op.inputs if fixed is not None else op.input_names(attrs)
            raise OperatorInputError(f"Operator {op.name} expects {need} inputs "
                                     f"({', '.join(names)}), but got {len(in_shapes)} instead")
        return infer(attrs, in_shapes, in_dtypes)
    checked.__wrapped__ = infer
    return checked


def register(op):
    bfloat16.wrap(op)      # bfloat16 arrays on the CPU compute in float32 (mxc/ops/bfloat16.py)
    for n in (op.name,) + op.aliases:
        if n in _OPS:
            raise MXNetError(f"operator {n} registered twice")
        _OPS[n] = op
    _DEFS.append(op)
    return op


def get(name):
    try:
        return _OPS[name]
    except KeyError:
        raise MXNetError(f"operator {name} is not registered") from None


class Untraceable(Exception):
    """A graph (or a gradient) cannot be traced into a plan (mxc/ndarray/trace.py); the caller
    runs it node by node instead. Operators that compute on the host raise it when traced."""


def all_ops():
    """Each OpDef once, in registration order."""
    return list(_DEFS)


def names():
    return dict(_OPS)


# the OpenMP threads every kernel asks for, decided once (each run is capped by
# mxc/_core/opcall.pyx's capped_threads: the load and the engine's team rule)
KERNEL_THREADS = omp_threads()
# kernel families whose work grows faster than their arrays (GEMMs): a waiting thread hands
# their calls to a worker's OpenMP team from fewer bytes (mxc/_core/handle.pyx, push_kernel)
COMPUTE_BOUND_FAMILIES = frozenset({"dot", "convolution", "linalg", "linalg_extra", "rnn_cell"})


def _dtype_name(key):
    from .._core.opcall import CODE_DTYPE
    if isinstance(key, tuple):
        return "(" + ", ".join(CODE_DTYPE[k].name for k in key) + ")"
    return CODE_DTYPE[key].name


def skip_unneeded_outputs(op, attrs, outs, needed):
    """attrs for one planned step of `op` with output value ids `outs`: where outputs that
    `op` may skip are in no one's `needed` set, a copy naming them in "_skip_outputs" (so a
    first layer's backward does not compute the data gradient nothing reads); else attrs."""
    if not op.skippable:
        return attrs
    skip = tuple(k for k in op.skippable if k < len(outs) and outs[k] not in needed)
    return dict(attrs, _skip_outputs=skip) if skip else attrs


class Slots(tuple):
    """A kernel's integer or float attributes (the values in the CPU kernel's iattr / fattr
    order) read by slot name: ``fattr.lr``. A name declared with a trailing "*" is a run: the
    runs share the values after the named ones equally (a per-axis mask; a slice's starts then
    steps). Subclassed per signature (``Kernel``); a tuple, so plans can key on it."""
    __slots__ = ()
    _index = {}          # slot name -> position (a run: -1 - its run number)
    _nfixed = 0
    _nruns = 0

    def __getattr__(self, name):
        try:
            k = type(self)._index[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no slot {name!r}") from None
        if k >= 0:
            return self[k]
        n = (len(self) - self._nfixed) // self._nruns
        start = self._nfixed + (-1 - k) * n
        return self[start:start + n]


class Kernel:
    """The contract of one CPU kernel (``mxc.ops.cpu.<family>.KERNELS[name]``), declared once
    by the operator family that owns it: its integer and float attribute slots by name, in the
    order the C kernel reads ``iattr[k]`` / ``fattr[k]`` (and the GPU kernel takes them).
    ``kernel_forward`` fills them by name from the operator's attributes; the GPU launch builders
    read them by name (``Kernel.ints_of(iattr).axis``); tests/ops/test_kernel_signatures.py
    checks the C tables and the CUDA kernels against them."""
    __slots__ = ("family", "name", "ints", "floats", "Ints", "Floats")

    def __init__(self, family, name, ints=None, floats=None):
        self.family, self.name = family, name
        self.ints = None if ints is None else tuple(ints)
        self.floats = None if floats is None else tuple(floats)
        self.Ints = _slots_class(f"{name}:ints", self.ints or ())
        self.Floats = _slots_class(f"{name}:floats", self.floats or ())

    def declared(self):
        return self.ints is not None or self.floats is not None

    def ints_of(self, values):
        return values if isinstance(values, self.Ints) else self.Ints(values or ())

    def floats_of(self, values):
        return values if isinstance(values, self.Floats) else self.Floats(values or ())

    def __repr__(self):
        return f"<Kernel {self.family}/{self.name} ints={self.ints} floats={self.floats}>"


def _slots_class(label, names):
    fixed = [n for n in names if not n.endswith("*")]
    runs = [n[:-1] for n in names if n.endswith("*")]
    if names[:len(fixed)] != tuple(fixed):
        raise TypeError(f"{label}: runs (names ending in '*') come after the single slots")
    index = {n: k for k, n in enumerate(fixed)}
    index.update((n, -1 - r) for r, n in enumerate(runs))
    return type("Slots", (Slots,), {"__slots__": (), "_index": index, "_nfixed": len(fixed),
                                    "_nruns": len(runs)})


_KERNELS = {}    # (family, kernel name) -> Kernel, for every kernel an operator pushes


def kernel(family, name, ints=None, floats=None):
    """The Kernel (family, name), declaring its slots when ints / floats are given (once: a
    second, different declaration is an error); undeclared kernels are recorded as used."""
    k = _KERNELS.get((family, name))
    if k is None:
        k = _KERNELS[family, name] = Kernel(family, name, ints, floats)
    elif ints is not None or floats is not None:
        if not k.declared():
            k = _KERNELS[family, name] = Kernel(family, name, ints, floats)
        elif (k.ints, k.floats) != (None if ints is None else tuple(ints),
                                    None if floats is None else tuple(floats)):
            raise TypeError(f"kernel {family}/{name} declared twice with different slots: "
                            f"{k!r} and ints={ints} floats={floats}")
    return k


def declared_kernel(family, name):
    """The Kernel (family, name) if its slots are declared, else None."""
    k = _KERNELS.get((family, name))
    return k if k is not None and k.declared() else None


def kernels():
    """Every Kernel an operator pushes (declared or not)."""
    return list(_KERNELS.values())


def kernel_names(family, kind):
    """The <op> of every kernel "<kind>:<op>" of `family` that some operator's forward pushes,
    in the order they were first made (the GPU families instantiate these)."""
    prefix = kind + ":"
    return [k[len(prefix):] for f, k in _KERNELS if f == family and k.startswith(prefix)]


def _plain(names):
    """Values a[name] of consecutive plain slots, as a tuple (operator.itemgetter, in C)."""
    if len(names) == 1:
        name = names[0]
        return lambda a, i, o: (a[name],)
    get = itemgetter(*names)
    return lambda a, i, o: get(a)


def _computed(f, many):
    """The values of fill function f: one slot's value, or (many) those of a run or group."""
    if many:
        return lambda a, i, o: tuple(f(a, i, o))
    return lambda a, i, o: (f(a, i, o),)


def _slot_steps(kern, slots, fill):
    """Functions (a, i, o) -> tuple filling `slots` in order: fill[name](a, i, o), or
    fill[(name, next, ...)](a, i, o) for consecutive slots one function computes together (and
    for a run, "x*"), else a[name] (consecutive ones read together)."""
    steps, plain, k = [], [], 0

    def flush():
        if plain:
            steps.append(_plain(tuple(plain)))
            plain.clear()
    while k < len(slots):
        name = slots[k].rstrip("*")
        group = next((g for g in fill if isinstance(g, tuple) and g[0] == name), None)
        if group is not None:
            if tuple(s.rstrip("*") for s in slots[k:k + len(group)]) != group:
                raise TypeError(f"kernel {kern.family}/{kern.name}: fill group {group} is not "
                                f"a run of consecutive slots of {slots}")
            flush()
            steps.append(_computed(fill[group], True))
            k += len(group)
            continue
        f = fill.get(name)
        if f is None:
            if slots[k].endswith("*"):
                raise TypeError(f"kernel {kern.family}/{kern.name}: run slot {name!r} needs a "
                                f"fill function")
            plain.append(name)
        else:
            flush()
            steps.append(_computed(f, slots[k].endswith("*")))
        k += 1
    flush()
    return steps


def _joined(steps):
    if not steps:
        return lambda a, i, o: ()
    if len(steps) == 1:
        return steps[0]
    return lambda a, i, o: tuple(v for step in steps for v in step(a, i, o))


def _filler(kern, fill):
    """attrs(a, inputs, outputs) -> (iattr, fattr) filling kern's declared slots by name (see
    _slot_steps). It runs on every call of the operator (an optimizer update per weight per
    step): plain slots are read by one itemgetter, and a kernel whose slots are all plain makes
    no Python-level loop."""
    fill = fill or {}
    names = {s.rstrip("*") for s in (kern.ints or ()) + (kern.floats or ())}
    unknown = [k for k in fill if not set(k if isinstance(k, tuple) else (k,)) <= names]
    if unknown:
        raise TypeError(f"kernel {kern.family}/{kern.name}: fill names no slot: {unknown}")
    int_steps = _slot_steps(kern, kern.ints or (), fill)
    floats = _joined(_slot_steps(kern, kern.floats or (), fill))
    if not int_steps:             # the optimizer updates, clip, scalar ops: one call fewer
        return lambda a, i, o: ((), floats(a, i, o))
    ints = _joined(int_steps)
    return lambda a, i, o: (ints(a, i, o), floats(a, i, o))


def kernel_forward(family, kname, key=None, name=None, ints=None, floats=None, fill=None):
    """A ``forward`` that pushes kernel `kname` of ``mxc.ops.cpu.<family>.KERNELS``.

    key(attrs, inputs, outputs) picks the dtype key (default: the first input's dtype code).
    The kernel's attribute slots are declared by name (ints=, floats=; see Kernel), once per
    kernel: by the first forward made for it, which is its family's; later forwards of the same
    kernel name neither. They are filled from the operator's attributes by name, and
    fill={slot: f(attrs, inputs, outputs)} gives the slots whose values are computed (a tuple of
    consecutive slot names for several computed together)."""
    import importlib
    from .._core.handle import push_kernel
    kern = kernel(family, kname, ints, floats)
    compute_bound = family in COMPUTE_BOUND_FAMILIES
    if not kern.declared():
        raise TypeError(f"kernel {family}/{kname}: declare its slots (ints=, floats=; () for "
                        f"none) where its family first pushes it")
    attrs = _filler(kern, fill) if (kern.ints or kern.floats) else None
    bname = (name or kname.split(":")[-1]).encode()
    table = {}

    def forward(a, inputs, outputs):
        if ((outputs and outputs[0]._ctx.device_typeid == 2)
                or (inputs and inputs[0]._ctx.device_typeid == 2)):
            # on a GPU (or a copy to or from one): its kernels read the attributes the CPU
            # kernel would get (a CPU kernel never receives device memory: push_kernel refuses)
            ia, fa = attrs(a, inputs, outputs) if attrs is not None else ((), ())
            from . import _gpu
            return _gpu.forward(bname.decode(), a, inputs, outputs, family=family, kernel=kname,
                                iattr=ia, fattr=fa)
        if not table:
            table.update(importlib.import_module(f"mxc.ops.cpu.{family}").KERNELS)
        k = key(a, inputs, outputs) if key is not None else inputs[0]._dcode
        try:
            addr = table[kname][k]
        except KeyError:
            raise MXNetError(f"{bname.decode()}: no CPU kernel for dtype {_dtype_name(k)}") from None
        ia, fa = attrs(a, inputs, outputs) if attrs is not None else ((), ())
        push_kernel(addr, inputs, outputs, ia, fa, bname, KERNEL_THREADS, 1, compute_bound)
    forward.kernel = kern
    return forward


def copy_then_inplace(forward, name):
    """Forward of an op whose kernel updates input 0 in place (slice assignment, scatter): the
    output starts as a copy of input 0 unless it is input 0's buffer (``x[...] = v``)."""
    copy = kernel_forward("elemwise", "unary:copy", name=name)

    def wrapped(a, inputs, outputs):
        dst = outputs[0]
        if dst._chunk is not inputs[0]._chunk or dst._offset != inputs[0]._offset:
            copy(a, [inputs[0]], [dst])
        forward(a, [dst] + list(inputs[1:]), [dst])
    return wrapped
