"""The executor: a Symbol bound to arrays (``sym.bind``/``simple_bind``), MXNet 1.9.1's API.

This first executor is simple and correct: ``forward`` evaluates the graph node by node in
topological order through the imperative invoke (every operator's CPU kernel runs as for
mx.nd), under autograd recording when gradients are wanted, with the bound argument arrays
marked as variables whose gradient buffers are the executor's; ``backward`` runs autograd on
the outputs. The plan (node order, typed attributes, where each input comes from) is built once
at bind; memory planning and bulk execution will replace ``_run_graph`` without changing the API.
"""
import numpy as np

from .. import autograd
from .. import ndarray as nd
from .._core import tape as _tape
from ..base import MXNetError
from ..context import Context, current_context
from ..ndarray import NDArray
from ..ndarray.register import run as _run
from ..symbol.symbol import _topo

_GRAD_REQS = ("write", "add", "null", "inplace", "to")


class _Plan:
    """The bound graph: operator nodes in order, each input as (node slot, output index)."""

    def __init__(self, sym):
        self.sym = sym
        nodes = _topo(sym._outputs)
        self.nodes = nodes
        self.slot = {id(n): i for i, n in enumerate(nodes)}
        aux = sym._aux_ids(nodes)
        self.arg_slots = [i for i, n in enumerate(nodes) if n.op is None and id(n) not in aux]
        self.aux_slots = [i for i, n in enumerate(nodes) if n.op is None and id(n) in aux]
        self.steps = []
        for i, n in enumerate(nodes):
            if n.op is None:
                continue
            ins = [(self.slot[id(e[0])], e[1]) for e in n.inputs]
            self.steps.append((i, n, n.op, n.parsed, ins))
        self.heads = [(self.slot[id(e[0])], e[1]) for e in sym._outputs]


def _run_graph(plan, args, aux, monitor=None, monitor_all=False):
    """Evaluate the graph; args/aux: arrays in list_arguments/list_auxiliary_states order."""
    vals = [None] * len(plan.nodes)
    for s, a in zip(plan.arg_slots, args):
        vals[s] = [a]
    for s, a in zip(plan.aux_slots, aux):
        vals[s] = [a]
    for slot, node, op, attrs, ins in plan.steps:
        inputs = [vals[j][k] for j, k in ins]
        try:
            res = _run(op, inputs, attrs)
        except MXNetError as e:
            raise MXNetError(f"Error in operator {node.name} ({op.name}): {e}") from None
        except (ValueError, TypeError, IndexError) as e:
            raise MXNetError(f"Error in operator {node.name} ({op.name}): {e}") from None
        vals[slot] = [res] if isinstance(res, NDArray) else list(res)
        if monitor is not None:
            names = node.output_names()
            if monitor_all:
                for j, x in enumerate(inputs):
                    monitor(f"{node.name}_input{j}", x)
            for nm, x in zip(names, vals[slot]):
                monitor(nm, x)
    return [vals[j][k] for j, k in plan.heads]


def _ctx(ctx):
    if ctx is None:
        return current_context()
    if isinstance(ctx, str):
        return Context(ctx)
    return ctx


def _arrays(what, given, names, allow_missing):
    if given is None:
        if allow_missing:
            return [None] * len(names)
        given = {}
    if isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise ValueError(f"Length of {what} does not match the number of arguments "
                             f"({len(given)} given, {len(names)} expected: {names})")
        for a in given:
            if a is not None and not isinstance(a, NDArray):
                raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
        return list(given)
    if isinstance(given, dict):
        out = []
        for n in names:
            if n in given:
                if not isinstance(given[n], NDArray):
                    raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
                out.append(given[n])
            elif allow_missing:
                out.append(None)
            else:
                raise ValueError(f"key `{n}` is missing in `{what}`")
        return out
    raise TypeError("Only accept list of NDArrays or dict of str to NDArray")


def _grad_reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ValueError("grad_req list must have one entry per argument")
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, "null") for n in names]
    else:
        raise TypeError("grad_req must be a string, a list or a dict")
    for r in reqs:
        if r not in _GRAD_REQS:
            raise ValueError(f"grad_req must be one of {_GRAD_REQS}, got {r!r}")
    return ["write" if r in ("inplace", "to") else r for r in reqs]


class Executor:
    """A bound symbol: ``forward``, ``backward`` and the bound arrays."""

    def __init__(self, symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays,
                 group2ctx=None):
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = group2ctx
        self._plan = _Plan(symbol)
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._out_names = symbol.list_outputs()
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self._grad_req = list(grad_reqs)
        self.aux_arrays = list(aux_arrays)
        self._heads = None
        self._infos = None
        self._monitor = None
        self._monitor_all = False
        self._output_dirty = False
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update({n: a.shape for n, a in zip(self._aux_names, self.aux_arrays)})
        dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
        dtypes.update({n: a.dtype for n, a in zip(self._aux_names, self.aux_arrays)})
        _, out_shapes, _ = symbol._infer_shape_impl(True, **shapes)
        _, out_types, _ = symbol._infer_type_impl(True, **dtypes)
        self.outputs = [nd.zeros(s if s else (1,), ctx=ctx, dtype=t or np.float32)
                        for s, t in zip(out_shapes, out_types)]
        self._arg_dict = self._grad_dict = self._aux_dict = None

    # ---- dictionaries ------------------------------------------------------------------------
    @property
    def arg_dict(self):
        if self._arg_dict is None:
            self._arg_dict = dict(zip(self._arg_names, self.arg_arrays))
        return self._arg_dict

    @property
    def grad_dict(self):
        if self._grad_dict is None:
            self._grad_dict = {n: g for n, g in zip(self._arg_names, self.grad_arrays)
                               if g is not None}
        return self._grad_dict

    @property
    def aux_dict(self):
        if self._aux_dict is None:
            self._aux_dict = dict(zip(self._aux_names, self.aux_arrays))
        return self._aux_dict

    @property
    def output_dict(self):
        return dict(zip(self._out_names, self.outputs))

    # ---- running ------------------------------------------------------------------------------
    def forward(self, is_train=False, **kwargs):
        arg_dict = self.arg_dict
        for name, value in kwargs.items():
            if name not in arg_dict:
                raise ValueError(f"Find name {name} that is not in the arguments")
            dst = arg_dict[name]
            if isinstance(value, NDArray):
                if value.shape != dst.shape:
                    raise ValueError(f"Shape not match! Argument {name}, need: {dst.shape}, "
                                     f"received: {value.shape}")
                value.copyto(dst)
            else:
                dst[:] = value
        want_grad = is_train and any(r != "null" for r in self._grad_req)
        args = [_tape.detach(a) for a in self.arg_arrays]
        aux = [_tape.detach(a) for a in self.aux_arrays]
        self._infos = None
        if want_grad:
            infos = []
            for a, g, r in zip(args, self.grad_arrays, self._grad_req):
                if r != "null" and g is not None:
                    autograd.mark_variables([a], [g], r)
                    infos.append(a._ag)
            with autograd.record(train_mode=True):
                heads = _run_graph(self._plan, args, aux, self._monitor, self._monitor_all)
            self._infos = infos
            self._heads = heads
        else:
            with autograd.pause(train_mode=is_train):
                heads = _run_graph(self._plan, args, aux, self._monitor, self._monitor_all)
            self._heads = None
        self._set_outputs(heads)
        return self.outputs

    def _set_outputs(self, heads):
        with autograd.pause():
            for i, h in enumerate(heads):
                o = self.outputs[i]
                if o.shape == h.shape and o.dtype == h.dtype:
                    nd._copyto(h, out=o)
                else:
                    self.outputs[i] = h.copy() if self._heads is not None else h

    def backward(self, out_grads=None, is_train=True):
        if self._heads is None:
            if not any(r != "null" for r in self._grad_req):
                return
            raise MXNetError("Executor.backward: call forward(is_train=True) first")
        heads = self._heads
        if out_grads is None:
            ogs = [nd.ones(h.shape, ctx=h.context, dtype=h.dtype) for h in heads]
        else:
            if isinstance(out_grads, NDArray):
                out_grads = [out_grads]
            elif isinstance(out_grads, dict):
                out_grads = [out_grads[n] for n in self._out_names]
            ogs = [g if isinstance(g, NDArray) else nd.array(g, ctx=h.context, dtype=h.dtype)
                   for g, h in zip(out_grads, heads)]
            if len(ogs) != len(heads):
                raise ValueError(f"backward: {len(ogs)} head gradients for {len(heads)} outputs")
        for info in self._infos:
            info.fresh = False
        autograd.backward(heads, ogs, retain_graph=True, train_mode=is_train)
        for info in self._infos:
            if not info.fresh and info.grad_req == "write":
                info.grad[:] = 0

    # ---- parameters ---------------------------------------------------------------------------
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        for name, array in arg_params.items():
            if name in self.arg_dict:
                dst = self.arg_dict[name]
                array.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ValueError(f"Find name \"{name}\" that is not in the arguments")
        if aux_params is None:
            return
        for name, array in aux_params.items():
            if name in self.aux_dict:
                dst = self.aux_dict[name]
                array.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ValueError(f"Find name {name} that is not in the auxiliary states")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise ValueError("Insufficient argument shapes provided.")
        new_args, new_grads = [], []
        for name, arr, grad, shape in zip(self._arg_names, self.arg_arrays, self.grad_arrays,
                                          arg_shapes):
            if arr.shape == tuple(shape):
                new_args.append(arr)
                new_grads.append(grad)
                continue
            if not partial_shaping and name not in kwargs:
                raise AssertionError(f"Shape of unspecified array arg:{name} changed. This can "
                                     "cause the new executor to not share parameters with the "
                                     "old one. Please check for error in network. If this is "
                                     "intended, set partial_shaping=True to suppress this "
                                     "warning.")
            new_args.append(nd.zeros(shape, ctx=arr.context, dtype=arr.dtype))
            new_grads.append(None if grad is None else
                             nd.zeros(shape, ctx=grad.context, dtype=grad.dtype))
        new_aux = []
        for name, arr, shape in zip(self._aux_names, self.aux_arrays, aux_shapes):
            if arr.shape == tuple(shape):
                new_aux.append(arr)
            else:
                if not partial_shaping:
                    raise AssertionError(f"Shape of unspecified array aux:{name} changed. "
                                         "Set partial_shaping=True to allow it.")
                new_aux.append(nd.zeros(shape, ctx=arr.context, dtype=arr.dtype))
        reqs = [r if g is not None else "null" for r, g in zip(self._grad_req, new_grads)]
        return Executor(self._symbol, self._ctx, new_args,
                        [g if g is not None else None for g in new_grads], reqs, new_aux,
                        self._group2ctx)

    def set_monitor_callback(self, callback, monitor_all=False):
        self._monitor = callback
        self._monitor_all = monitor_all

    def debug_str(self):
        return self._symbol.debug_str()


def bind(sym, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
         shared_exec=None):
    ctx = _ctx(ctx)
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    arg_arrays = _arrays("args", args, arg_names, False)
    if args_grad is None:
        grads = [None] * len(arg_names)
        reqs = ["null"] * len(arg_names)
    else:
        grads = _arrays("args_grad", args_grad, arg_names, True)
        reqs = _grad_reqs(grad_req, arg_names)
        reqs = [r if g is not None else "null" for r, g in zip(reqs, grads)]
    if aux_states is None:
        aux_states = [] if not aux_names else None
    if aux_states is None:
        raise ValueError(f"bind: the symbol has auxiliary states {aux_names}: give aux_states")
    aux_arrays = _arrays("aux_states", aux_states, aux_names, False)
    return Executor(sym, ctx, arg_arrays, grads, reqs, aux_arrays, group2ctx)


def simple_bind(sym, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, shapes=None):
    ctx = _ctx(ctx)
    shapes = dict(shapes or {})
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    if type_dict is None:
        attrs = sym.attr_dict()
        type_dict = {k: np.float32 for k in arg_names
                     if k not in attrs or "__dtype__" not in attrs[k]}
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    if arg_shapes is None:
        arg_shapes, _, _ = sym.infer_shape_partial(**shapes)
        missing = [n for n, s in zip(arg_names, arg_shapes) if not s or 0 in s]
        raise MXNetError(f"simple_bind: cannot infer the shapes of {missing} from {shapes}")
    arg_types, _, aux_types = sym.infer_type(**type_dict)
    if arg_types is None:
        arg_types, _, aux_types = sym.infer_type_partial(**type_dict)
        arg_types = [t or np.float32 for t in arg_types]
        aux_types = [t or np.float32 for t in aux_types]
    reqs = _grad_reqs(grad_req, arg_names)
    shared_names = set(shared_arg_names or ())
    args, grads = [], []
    for name, shape, dtype, req in zip(arg_names, arg_shapes, arg_types, reqs):
        arr = None
        if shared_exec is not None and name in shared_names and name in shared_exec.arg_dict:
            arr = shared_exec.arg_dict[name]
            g = shared_exec.grad_dict.get(name)
            if arr.shape == tuple(shape):
                args.append(arr)
                grads.append(g if g is not None or req == "null" else
                             nd.zeros(shape, ctx=ctx, dtype=dtype))
                continue
        if shared_buffer is not None and name in shared_buffer and \
                shared_buffer[name].shape == tuple(shape):
            arr = shared_buffer[name]
        if arr is None:
            arr = nd.zeros(shape, ctx=ctx, dtype=dtype)
            if shared_buffer is not None:
                shared_buffer[name] = arr
        args.append(arr)
        grads.append(nd.zeros(shape, ctx=ctx, dtype=dtype) if req != "null" else None)
    aux = []
    for name, shape, dtype in zip(aux_names, aux_shapes, aux_types):
        if shared_exec is not None and name in shared_exec.aux_dict and \
                shared_exec.aux_dict[name].shape == tuple(shape):
            aux.append(shared_exec.aux_dict[name])
        else:
            aux.append(nd.zeros(shape, ctx=ctx, dtype=dtype))
    return Executor(sym, ctx, args, grads, reqs, aux, group2ctx)


def evaluate(sym, arrays):
    """Outputs of `sym` with NDArrays by argument name, run imperatively (recorded by autograd
    when recording is on, so gradients flow to the given arrays)."""
    plan = _Plan(sym)
    names = [plan.nodes[s].name for s in plan.arg_slots]
    aux_names = [plan.nodes[s].name for s in plan.aux_slots]
    missing = [n for n in names + aux_names if n not in arrays]
    if missing:
        raise ValueError(f"evaluate: missing input(s) {missing}")
    outs = _run_graph(plan, [arrays[n] for n in names], [arrays[n] for n in aux_names])
    return outs[0] if len(outs) == 1 else outs

