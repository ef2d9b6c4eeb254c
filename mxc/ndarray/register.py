"""Builds ``mx.nd.<op>`` functions from the operator registry and runs them (imperative invoke).

One function per operator name and alias, with MXNet's calling convention: tensor inputs
positionally (or by their input names), parameters as keywords, ``out=`` to write into an
existing array, ``name=`` accepted and ignored (for symmetry with ``mx.sym``)."""
import inspect

from .._core import handle as _h
from .._core.api_calls import STATE as _API, timed as _api_timed
from .._core.modes import _M
from .._core.tape import record as _record
from ..base import MXNetError, OperatorInputError
from ..context import Context, current_context, check_available
from ..ops import registry
from .ndarray import NDArray, _nd
from . import sparse


def invoke(op, inputs, kwargs, out=None, attrs=None):
    """Run operator `op` on NDArray `inputs`; returns one NDArray or a list. `attrs`: the
    parameters already parsed from `kwargs` (which then only holds ctx and name)."""
    if _API.on:     # the profiler records API calls (profile_api)
        return _api_timed("MXImperativeInvokeEx", _invoke, op, inputs, kwargs, out, attrs)
    return _invoke(op, inputs, kwargs, out, attrs)


def _invoke(op, inputs, kwargs, out, attrs):
    ctx = kwargs.pop("ctx", None) if kwargs else None
    if kwargs:
        kwargs.pop("name", None)
    for x in inputs:
        if not isinstance(x, NDArray):
            raise TypeError(f"{op.name}: inputs must be NDArrays, got {type(x).__name__}")
    return run(op, inputs, op.parse(kwargs) if attrs is None else attrs, out, ctx)


def run(op, inputs, attrs, out=None, ctx=None):
    """Run `op` with already-typed `attrs` (the fast path for Python operators)."""
    kind = op.fast_kind
    if kind and (out is None or isinstance(out, NDArray)):
        fk = op._fast_kernel or op.fast_kernel()
        if kind == 1:
            r = _h.fast_unary(fk, inputs[0], out)
        elif kind == 2:
            r = _h.fast_binary(fk, inputs[0], inputs[1], out)
        else:
            r = _h.fast_scalar(fk, inputs[0], attrs["scalar"], out)
        if r is not None:
            return r
    # sparse storage (mxc/ndarray/sparse.py): the C fast path declines sparse arrays, and so
    # does everything below; dispatch runs the sparse implementation or the storage fallback
    for x in inputs:
        if x._sparse:
            return _sparse().dispatch(op, inputs, attrs, out, ctx)
    if out is not None and (out._sparse if isinstance(out, NDArray)
                            else any(o._sparse for o in out)):
        return _sparse().dispatch(op, inputs, attrs, out, ctx)
    if op.composite is not None:
        try:
            return _composite(op, attrs, inputs, out)
        except ValueError as e:     # a composite's own argument check: MXNet's error too
            if isinstance(e, MXNetError):
                raise
            raise OperatorInputError(str(e)) from None
    if inputs:
        ctx = inputs[0].context
        for x in inputs[1:]:
            c = x.context
            if c is not ctx and c != ctx:       # mostly one Context object: no __eq__ call
                raise ValueError(f"{op.name}: inputs are on different devices ({ctx} and {x.context})")
    else:
        if isinstance(ctx, str):
            ctx = Context(ctx.split("(")[0], int(ctx.split("(")[1].rstrip(")")) if "(" in ctx else 0)
        ctx = current_context() if ctx is None else ctx
        check_available(ctx)
    if _M.recording and op.train_attrs is not None:
        attrs = op.train_attrs(attrs)
    try:
        oshapes, odtypes = op.infer(attrs, [x._shape for x in inputs], [x._dtype for x in inputs])
    except ValueError as e:
        if isinstance(e, MXNetError):
            raise
        raise OperatorInputError(str(e)) from None
    if out is None:
        try:
            outputs = [_h.empty(NDArray, s, d, ctx) for s, d in zip(oshapes, odtypes)]
        except ValueError as e:         # a negative dimension the operator's infer let through
            raise OperatorInputError(f"{op.name}: {e}") from None
        _forward(op, attrs, inputs, outputs)
        nvis = len(outputs) if op.num_visible_outputs is None else op.n_visible(attrs)
        if nvis == 1:
            return outputs[0]
        return outputs if nvis == len(outputs) else outputs[:nvis]
    outputs = [out] if isinstance(out, NDArray) else list(out)
    nvis = len(oshapes) if op.num_visible_outputs is None else op.n_visible(attrs)
    if len(outputs) != nvis:
        raise OperatorInputError(f"{op.name}: out= needs {nvis} arrays, got {len(outputs)}")
    # hidden outputs (kept for the gradient, as MXNet's) get fresh arrays
    outputs += [_h.empty(NDArray, s, d, ctx) for s, d in zip(oshapes[nvis:], odtypes[nvis:])]
    for o, s, d in zip(outputs, oshapes, odtypes):
        if o.shape != tuple(s):
            raise OperatorInputError(f"{op.name}: out= has shape {o.shape}, the result has shape {tuple(s)}")
        if o._dtype != d:
            raise OperatorInputError(f"{op.name}: out= has dtype {o._dtype}, the result has dtype {d}")
    # writing over an input is safe only for operators that declare it (elementwise ones), and
    # only when input and output start at the same element (not x[1:] += x[:-1])
    aliased = [(i, j, x._offset == o._offset) for i, x in enumerate(inputs)
               for j, o in enumerate(outputs) if x._chunk is o._chunk]
    if aliased and not all(same and (i, j) in op.inplace for i, j, same in aliased):
        _forward(op, attrs, inputs, outputs,
                 staged=[_h.empty(NDArray, o.shape, o._dtype, ctx) for o in outputs])
    else:
        _forward(op, attrs, inputs, outputs)
    return out


def _composite(op, attrs, inputs, out):
    """An operator built from other operators (OpDef.composite), through mx.nd."""
    if _M.recording and op.grad is not None:
        # a composite with its own gradient is one node: its parts are not recorded
        _M.recording = False
        try:
            res = op.composite(_nd(), attrs, *inputs)
        finally:
            _M.recording = True
        _record(op, attrs, inputs, [res] if isinstance(res, NDArray) else list(res), op.mutate)
    else:
        res = op.composite(_nd(), attrs, *inputs)
    if out is not None:
        outs = [out] if isinstance(out, NDArray) else list(out)
        ress = [res] if isinstance(res, NDArray) else list(res)
        for o, r in zip(outs, ress):
            r.copyto(o)
        return out
    return res


def _sparse():
    return sparse


def _forward(op, attrs, inputs, outputs, staged=None):
    """op.forward with recording off (a forward's own reshapes and views are not graph nodes),
    then the operation is recorded if recording was on. With `staged` the forward writes those
    temporaries, which are then copied into `outputs` (outputs that alias inputs)."""
    rec, _M.recording = _M.recording, False
    try:
        if staged is None:
            op.forward(attrs, inputs, outputs)
        else:
            op.forward(attrs, inputs, staged)
            for t, o in zip(staged, outputs):
                invoke(registry.get("_copyto"), [t], {}, out=o)
    finally:
        _M.recording = rec
    if rec:
        _record(op, attrs, inputs, outputs, op.mutate)


def make_function(op, name):
    """The ``mx.nd.<name>`` function for `op`."""
    nin = len(op.inputs)
    input_names = op.inputs

    if op.fast_kind == 1 and nin == 1:
        # elementwise unary: straight to the C fast path when called plainly (mx.nd.exp(x))
        # and no API call is recorded (invoke records them)
        def fn(*args, out=None, **kwargs):
            if len(args) == 1 and not kwargs and isinstance(args[0], NDArray) \
                    and not _API.on:
                r = _h.fast_unary(op._fast_kernel or op.fast_kernel(), args[0], out)
                if r is not None:
                    return r
            return _general(args, out, kwargs)
    elif op.fast_kind == 2 and nin == 2:
        # elementwise binary on one shape: straight to the C fast path when called plainly
        def fn(*args, out=None, **kwargs):
            if (len(args) == 2 and not kwargs and isinstance(args[0], NDArray)
                    and isinstance(args[1], NDArray) and not _API.on):
                r = _h.fast_binary(op._fast_kernel or op.fast_kernel(), args[0], args[1], out)
                if r is not None:
                    return r
            return _general(args, out, kwargs)
    elif op.variadic:
        def fn(*args, out=None, **kwargs):
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = tuple(args[0])
            kwargs.setdefault(op.variadic, len(args))
            return invoke(op, list(args), kwargs, out)
    else:
        fn = None

    def _general(args, out, kwargs):
        if len(args) > nin:
            # MXNet's generated functions take parameters positionally after the inputs
            extra = args[nin:]
            free = [p.name for p in op.params if p.name not in kwargs]
            if len(extra) > len(free):
                raise TypeError(f"{name}: takes {nin} input(s) ({', '.join(input_names)}) "
                                f"and {len(op.params)} parameter(s), got {len(args)} positional")
            kwargs.update(zip(free, extra))
            args = args[:nin]
        given = list(args) + [kwargs.pop(n, None) for n in input_names[len(args):]]
        if op.input_names is None:
            if len(given) < nin or any(g is None for g in given):
                missing = [n for n, g in zip(input_names, given + [None] * nin) if g is None]
                raise TypeError(f"{name}: missing input '{missing[0]}'")
            return invoke(op, given, kwargs, out)
        # inputs that depend on parameters (no_bias, use_sequence_length): None or left out
        # means absent, as in MXNet's generated functions
        attrs = op.parse({k: v for k, v in kwargs.items() if k not in ("ctx", "name")})
        wanted = op.input_names(attrs)
        if (len(args) == len(wanted) and all(a is not None for a in args)
                and not any(g is not None for g in given[len(args):])):
            # only positional inputs, as many as these parameters take: in order, as MXNet
            # passes them (quantized_conv(data, weight, min_data, ..., no_bias=True))
            return invoke(op, list(args), kwargs, out, attrs)
        by_name = dict(zip(input_names, given))
        for n in wanted:
            if by_name.get(n) is None:
                raise ValueError(f"{name}: missing input '{n}' (these parameters take "
                                 f"{list(wanted)})")
        extra = [n for n, g in by_name.items() if g is not None and n not in wanted]
        if extra:
            raise ValueError(f"{name}: input(s) {extra} given but not used with these parameters "
                            f"(it takes {list(wanted)})")
        return invoke(op, [by_name[n] for n in wanted], kwargs, out, attrs)

    if fn is None:
        def fn(*args, out=None, **kwargs):
            return _general(args, out, kwargs)

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in input_names]
    if op.variadic:
        params = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    params += [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                                 default=inspect.Parameter.empty if p.required else p.default)
               for p in op.params]
    params += [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None),
               inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None)]
    fn.__signature__ = inspect.Signature(params)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = op.doc or f"MXNet operator {op.name}."
    fn.__module__ = "mxc.ndarray"
    return fn


_MADE = {}      # (name, op) -> its function: mx.nd and mx.nd.op share them


def populate(namespace):
    """Put a function for every registered name into `namespace` (a module dict), the same
    function object for a name in every namespace that has it."""
    for name, op in registry.names().items():
        if name not in namespace:
            fn = _MADE.get((name, op))
            if fn is None:
                fn = _MADE[(name, op)] = make_function(op, name)
            namespace[name] = fn
