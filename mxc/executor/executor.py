"""The executor: a Symbol bound to arrays (``sym.bind``/``simple_bind``), MXNet 1.9.1's API.

``forward``/``backward`` run a plan (``graph.py``): the forward and backward graphs traced once
per (training, gradients wanted) from the registry's gradient definitions, storage assigned by
liveness with in-place reuse, every step one pre-resolved kernel push on the bound arrays.
Outputs are written into ``outputs``, gradients straight into the bound gradient arrays
(``grad_req='add'`` adds into them). With a monitor callback, with
``MXNET_EXEC_BULK_EXEC_TRAIN``/``MXNET_EXEC_BULK_EXEC_INFERENCE`` = 0, or for a graph that
cannot be planned (Custom operators), the graph is evaluated node by node through the
imperative invoke under autograd (``_run_graph``), with the same results.
"""
import numpy as np

from .. import autograd
from .. import ndarray as nd
from .._core import engine as _engine
from .._core.api_calls import api_call
from .._core import handle as _h
from .._core import tape as _tape
from ..base import MXNetError
from ..context import Context, current_context
from ..ndarray import NDArray
from ..ndarray.register import run as _run
from ..ops import registry
from ..symbol.symbol import _topo, Symbol
from . import cse as _cse
from . import cuda_graphs as _cuda_graphs
from . import fold as _fold
from . import graph as _g
from . import sparse_bind as _sb  # storage types
from .nograd import refuse_nondifferentiable
from ..symbol.infer import infer_graph

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


def _run_graph(plan, args, aux, monitor=None, monitor_all=False, tape_nodes=None,
               node_ctx=None):
    """Evaluate the graph; args/aux: arrays in list_arguments/list_auxiliary_states order.
    tape_nodes: filled with {id(autograd tape node): graph node} (the monitor's backward names).
    node_ctx: {id(node): context} from group2ctx placement: an input on another context
    crosses to the node's (``_cross``; autograd carries the gradient back)."""
    prev_g = _engine.profile_graph(True)     # the profiler's "symbolic" operations
    try:
        return _run_nodes(plan, args, aux, monitor, monitor_all, tape_nodes, node_ctx)
    finally:
        _engine.profile_graph(prev_g)


def _run_nodes(plan, args, aux, monitor, monitor_all, tape_nodes, node_ctx):
    vals = [None] * len(plan.nodes)
    for s, a in zip(plan.arg_slots, args):
        vals[s] = [a]
    for s, a in zip(plan.aux_slots, aux):
        vals[s] = [a]
    # creation operators with unknown dims (an unrolled RNN's begin state zeros((0, H))) take
    # the shape the graph infers from the inputs, as in the planned path (graph.build)
    completed = _g._completed_creation_shapes(
        plan.sym, plan.nodes, [plan.nodes[s] for s in plan.arg_slots + plan.aux_slots],
        [a.shape for a in list(args) + list(aux)])
    for slot, node, op, attrs, ins in plan.steps:
        inputs = [vals[j][k] for j, k in ins]
        if id(node) in completed:
            attrs = dict(attrs, shape=completed[id(node)])
        nctx = None
        if node_ctx is not None:
            nctx = node_ctx[id(node)]
            inputs = [x if x.context == nctx else _cross(x, nctx, k not in op.mutate)
                      for k, x in enumerate(inputs)]
        try:
            res = _run(op, inputs, attrs, None, nctx)
        except MXNetError as e:
            raise MXNetError(f"Error in operator {node.name} ({op.name}): {e}") from None
        except (ValueError, TypeError, IndexError) as e:
            raise MXNetError(f"Error in operator {node.name} ({op.name}): {e}") from None
        vals[slot] = [res] if isinstance(res, NDArray) else list(res)
        if tape_nodes is not None:
            for x in vals[slot]:
                info = x._ag
                if info is not None and info.node is not None:
                    tape_nodes[id(info.node)] = node
        if monitor is not None:
            names = node.output_names()
            if monitor_all:
                # as MXNet (ExecuteMonInputCallback): per input, a variable's own name, then
                # "<node>_<argument name>" (an operator's output is reported once, as an output)
                arg_names = _monitor_arg_names(node, len(inputs))
                for (j, k), an, x in zip(ins, arg_names, inputs):
                    src = plan.nodes[j]
                    if src.op is None:
                        monitor(src.name, x)
                    monitor(f"{node.name}_{an}", x)
            for nm, x in zip(names, vals[slot]):
                monitor(nm, x)
    return [vals[j][k] for j, k in plan.heads]


def _host(ctx):
    return ctx.device_type.startswith("cpu")


def _one_memory(node_ctx, ctx):
    """Whether every placed context addresses the memory of `ctx` (all host contexts do), so
    one planned arena can serve the whole graph."""
    return node_ctx is None or all(c == ctx or (_host(c) and _host(ctx))
                                   for c in node_ctx.values())


def _relabel(x, ctx):
    """`x` on context `ctx`: CPU contexts share one address space, so a view of the same
    storage (a state updated in place stays one array); anything else is copied."""
    if x._sparse or not (_host(x.context) and _host(ctx)):
        return x.copyto(ctx)
    return _h.make_array(NDArray, x._chunk, x._offset, x.shape, x._dtype, ctx)


class _CrossDeviceCopy(autograd.Function):
    """A value crossing from one placed context to another (MXNet's _CrossDeviceCopy node):
    its gradient crosses back."""

    def __init__(self, src, dst):
        super().__init__()
        self.src, self.dst = src, dst

    def forward(self, x):
        return _relabel(x, self.dst)

    def backward(self, dy):
        return _relabel(dy, self.src)


def _cross(x, ctx, differentiable):
    if differentiable and x._ag is not None and autograd.is_recording():
        return _CrossDeviceCopy(x.context, ctx)(x)
    return _relabel(x, ctx)


# operators MXNet registers without FListInputNames: the monitor calls their inputs input<i>
_UNNAMED_INPUTS = frozenset(("Activation", "SoftmaxActivation"))


def _monitor_arg_names(node, n):
    if node.op.name in _UNNAMED_INPUTS:
        return [f"input{i}" for i in range(n)]
    names = node.input_names()
    return list(names) + [f"input{i}" for i in range(len(names), n)]


def place(nodes, default_ctx, group2ctx, input_ctx):
    """{id(node): context} for every node under group2ctx, as MXNet's PlaceDevice pass: a node
    with a ``__ctx_group__`` attribute goes to its group's context, a variable stays where its
    bound array is (`input_ctx`: {id(node): context}), any other node goes where its first
    placed input is, then nodes still unplaced (creation operators) go where their first placed
    consumer is, and the rest to `default_ctx`. Returns None without group2ctx."""
    if not group2ctx:
        return None
    where = {}
    for n in nodes:
        if n.op is None:
            where[id(n)] = input_ctx[id(n)]
            continue
        group = n.attrs.get("__ctx_group__")
        if group is not None:
            if group not in group2ctx:
                raise MXNetError(f"bind: node {n.name!r} is in ctx_group {group!r}, which "
                                 f"group2ctx does not map (groups given: {sorted(group2ctx)})")
            where[id(n)] = _ctx(group2ctx[group])
            continue
        for e in n.inputs:
            c = where.get(id(e[0]))
            if c is not None:
                where[id(n)] = c
                break
    for n in reversed(nodes):
        c = where.get(id(n))
        if c is None:
            continue
        for e in n.inputs:
            where.setdefault(id(e[0]), c)
    for n in nodes:
        where.setdefault(id(n), default_ctx)
    return where


def _var_ctx(sym, names, ctx, group2ctx):
    """Contexts of simple_bind's arrays for variables `names`: the context of the variable's
    ctx_group under group2ctx, else `ctx` (MXNet's simple_bind)."""
    if not group2ctx:
        return [ctx] * len(names)
    attrs = sym.attr_dict()
    out = []
    for n in names:
        group = attrs.get(n, {}).get("__ctx_group__")
        out.append(_ctx(group2ctx[group]) if group in group2ctx else ctx)
    return out


def _optimized(sym, arg_names, aux_names):
    """`sym` after common subexpression elimination, when enabled; merging never changes the
    inputs, but should their order change the plan would misread the bound arrays: keep `sym`."""
    if not _cse.enabled():
        return sym
    opt = _cse.eliminate_common_expr(sym)
    if opt is not sym and (opt.list_arguments() != arg_names
                           or opt.list_auxiliary_states() != aux_names):
        return sym
    return opt


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
                 group2ctx=None, shared_outputs=None):
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = group2ctx
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._out_names = symbol.list_outputs()
        self._opt_symbol = _optimized(symbol, self._arg_names, self._aux_names)
        self._plan = _Plan(self._opt_symbol)
        p = self._plan
        inputs = {id(p.nodes[s]): a.context
                  for s, a in zip(p.arg_slots + p.aux_slots, list(arg_arrays) + list(aux_arrays))}
        self._node_ctx = place(p.nodes, ctx, group2ctx, inputs)
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self._grad_req = list(grad_reqs)
        self.aux_arrays = list(aux_arrays)
        refuse_nondifferentiable(symbol, any(r != "null" and g is not None
                                             for r, g in zip(self._grad_req, self.grad_arrays)))
        self._heads = None
        self._infos = None
        self._monitor = None
        self._monitor_all = False
        self._tape_nodes = None     # {id(tape node): graph node} while monitoring a backward
        self._output_dirty = False
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update({n: a.shape for n, a in zip(self._aux_names, self.aux_arrays)})
        dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
        dtypes.update({n: a.dtype for n, a in zip(self._aux_names, self.aux_arrays)})
        # shapes and dtypes in one pass with the bound arrays' real dtypes (an operator that
        # checks an input's dtype, softmax's int length, must not see a float32 default)
        S, D = infer_graph(symbol, shapes, {k: np.dtype(v).name for k, v in dtypes.items()},
                           default_dtype="float32")
        out_shapes = [S.get((id(e[0]), e[1])) for e in symbol._outputs]
        out_types = [D.get((id(e[0]), e[1])) for e in symbol._outputs]
        out_ctx = [ctx if self._node_ctx is None else self._node_ctx[id(e[0])]
                   for e in self._opt_symbol._outputs]
        self.outputs = [nd.zeros(s if s else (1,), ctx=c, dtype=t or np.float32)
                        for s, t, c in zip(out_shapes, out_types, out_ctx)]
        if shared_outputs is not None:
            # a reshaped executor writes its outputs into the old one's storage where they fit
            for i, (o, old) in enumerate(zip(self.outputs, shared_outputs)):
                if o.dtype == old.dtype and o.size <= old.size:
                    self.outputs[i] = _h.make_array(NDArray, old._chunk, old._offset, o.shape,
                                                    o.dtype, o.context)
        self._arg_dict = self._grad_dict = self._aux_dict = None
        self._states = {}
        self._state = None
        # sparse arrays bound: run node by node through the storage dispatch (sparse_bind.py)
        self._sparse = _sb.any_sparse(self.arg_arrays, self.grad_arrays, self.aux_arrays)
        if self._sparse:
            _sb.check_bind(symbol, self.arg_dict, self.aux_dict)
        elif _sb.needs_dispatch(symbol):
            self._sparse = True

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
    @api_call("MXExecutorForward")
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
        # MXNet's backward may follow forward(is_train=False): gradients are planned whenever
        # an argument has a gradient buffer
        want_grad = any(r != "null" for r in self._grad_req)
        self._state = None
        if self._monitor is None and _g.bulk_enabled(is_train):
            # an inference forward of an executor without gradients runs the folded graph
            # (fold.py: Convolution + BatchNorm [+ ReLU]), as CachedOp's inference does
            st = self._get_state(want_grad, not want_grad and not is_train and _fold.enabled())
            if st is not None:
                _g.run_steps(st.fwd, is_train)
                st.fresh = st.ran = True
                st.is_train = is_train
                self._state = st if want_grad else None
                self._heads = None
                return self.outputs
        args = [_tape.detach(a) for a in self.arg_arrays]
        aux = [_tape.detach(a) for a in self.aux_arrays]
        self._infos = None
        if want_grad:
            infos = []
            for a, g, r in zip(args, self.grad_arrays, self._grad_req):
                if r != "null" and g is not None:
                    autograd.mark_variables([a], [g], r)
                    infos.append(a._ag)
            self._tape_nodes = {} if self._monitor is not None else None
            with autograd.record(train_mode=is_train):
                heads = _run_graph(self._plan, args, aux, self._monitor, self._monitor_all,
                                   self._tape_nodes, self._node_ctx)
            self._infos = infos
            self._heads = heads
        else:
            with autograd.pause(train_mode=is_train):
                heads = _run_graph(self._plan, args, aux, self._monitor, self._monitor_all,
                                   node_ctx=self._node_ctx)
            self._heads = None
        self._set_outputs(heads)
        return self.outputs

    def _get_state(self, want_grad, folded=False):
        if self._sparse or not _one_memory(self._node_ctx, self._ctx):
            # the planned graph is dense-only and lives in one memory space; otherwise node by
            # node, where crossings are real copies
            return None
        key = (want_grad, folded)
        if key in self._states:
            return self._states[key]
        try:
            st = _BoundPlan(self, want_grad, folded)
        except _g.Untraceable:
            st = None
        self._states[key] = st
        return st

    def _set_outputs(self, heads):
        with autograd.pause():
            for i, h in enumerate(heads):
                o = self.outputs[i]
                if h._sparse or o._sparse:      # a sparse output is handed out as is
                    self.outputs[i] = h.copy() if self._heads is not None else h
                elif o.shape == h.shape and o.dtype == h.dtype:
                    nd._copyto(h, out=o)
                else:
                    self.outputs[i] = h.copy() if self._heads is not None else h

    @api_call("MXExecutorBackwardEx")
    def backward(self, out_grads=None, is_train=True):
        if self._state is None and self._heads is None and self._monitor is None \
                and any(r != "null" for r in self._grad_req) and _g.bulk_enabled(is_train):
            # MXNet runs a backward without a forward (on whatever the forward left): here the
            # forward runs first
            self._state = self._get_state(True)
            if self._state is not None:
                self._state.is_train = is_train
        if self._state is not None:
            self._state.backward(out_grads, is_train)
            return
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
            # an empty head gradient of another empty shape carries nothing: MXNet accepts it
            ogs = [nd.zeros(h.shape, ctx=h.context, dtype=h.dtype)
                   if g.shape != h.shape and g.size == 0 and h.size == 0 else g
                   for g, h in zip(ogs, heads)]
        for info in self._infos:
            info.fresh = False
        # an output no gradient argument reaches (a control-flow loop counter) adds nothing
        keep = [i for i, h in enumerate(heads) if h._ag is not None]
        if len(keep) < len(heads):
            heads, ogs = [heads[i] for i in keep], [ogs[i] for i in keep]
        hooked = self._monitor is not None and bool(self._tape_nodes)
        prev_hook = _tape.set_grad_hook(self._backward_monitor_hook()) if hooked else None
        prev_g = _engine.profile_graph(True)     # the graph's backward: "symbolic" for the profiler
        try:
            if heads:
                autograd.backward(heads, ogs, retain_graph=True, train_mode=is_train)
        finally:
            _engine.profile_graph(prev_g)
            if hooked:
                _tape.set_grad_hook(prev_hook)
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
        """A new executor for new argument shapes, sharing memory with this one: arrays whose
        shape is unchanged are the same arrays, smaller ones are views on the old storage,
        larger ones (allow_up_sizing=True) are new (MXNet 1.9.1's rules)."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise ValueError("Insufficient argument shapes provided.")

        def fit(what, name, arr, shape):
            shape = tuple(shape)
            if arr is None or arr.shape == shape:
                return arr
            if not partial_shaping and name not in kwargs:
                raise AssertionError(
                    f"Shape of unspecified array {what}: {name} changed. This can cause the new "
                    "executor to not share parameters with the old one. Please check for error "
                    "in network. If this is intended, set partial_shaping=True to suppress this "
                    "warning.")
            size = int(np.prod(shape, dtype=np.int64))
            if size <= arr.size:
                return _h.make_array(NDArray, arr._chunk, arr._offset, shape, arr.dtype,
                                     arr.context)
            if not allow_up_sizing:
                raise AssertionError(
                    f"New shape of {what}: {name} {shape} larger than original {arr.shape}. "
                    "First making a big executor and then down sizing it is more efficient than "
                    "the reverse. If you really want to up size, set allow_up_sizing=True to "
                    "enable allocation of new arrays.")
            return nd.zeros(shape, ctx=arr.context, dtype=arr.dtype)

        new_args = [fit("arg", n, a, s) for n, a, s in zip(self._arg_names, self.arg_arrays,
                                                          arg_shapes)]
        new_grads = [fit("arg", n, g, s) for n, g, s in zip(self._arg_names, self.grad_arrays,
                                                           arg_shapes)]
        new_aux = [fit("aux", n, a, s) for n, a, s in zip(self._aux_names, self.aux_arrays,
                                                         aux_shapes)]
        reqs = [r if g is not None else "null" for r, g in zip(self._grad_req, new_grads)]
        return Executor(self._symbol, self._ctx, new_args, new_grads, reqs, new_aux,
                        self._group2ctx, shared_outputs=self.outputs)

    def _backward_monitor_hook(self):
        """The monitor sees each node's input gradients as MXNet names its backward node's
        outputs: <node>_backward_output (one input) or <node>_backward_output<i>."""
        names, monitor = self._tape_nodes, self._monitor

        def hook(tnode, grads):
            node = names.get(id(tnode))
            if node is None:
                return
            n = len(tnode.in_views)
            for k in range(n):
                g = grads[k] if k < len(grads) else None
                if g is None:
                    g = nd.zeros_like(tnode.in_views[k])
                monitor(f"{node.name}_backward_output" if n == 1
                        else f"{node.name}_backward_output{k}", g)
        return hook

    def get_optimized_symbol(self):
        """The graph this executor runs: the bound symbol after common subexpression
        elimination (MXNET_ELIMINATE_COMMON_EXPR, on by default)."""
        return Symbol(self._opt_symbol._outputs)

    def set_monitor_callback(self, callback, monitor_all=False):
        self._monitor = callback
        self._monitor_all = monitor_all

    def debug_str(self):
        """The symbol's description and the planned memory ("Total N MB allocated": the
        intermediates' arena plus outputs and gradient results, as MXNet reports its pool)."""
        st = None
        if self._monitor is None and _g.bulk_enabled(True):
            st = self._get_state(any(r != "null" for r in self._grad_req))
        mb = st.plan.planned_bytes // (1 << 20) if st is not None else 0
        return f"{self._symbol.debug_str()}Total {mb} MB allocated\n"


class _BoundPlan:
    """A plan with the executor's arrays resolved into its steps once."""

    def __init__(self, ex, want_grad, folded=False):
        p = ex._plan
        nodes = [p.nodes[s] for s in p.arg_slots + p.aux_slots]
        sym, graph = ex._opt_symbol, p.nodes
        arrays = list(ex.arg_arrays) + list(ex.aux_arrays)
        if folded:      # the same variables around folded operator nodes (fold.py)
            sym = _fold.fold_inference(sym, {id(n): a.dtype for n, a in zip(nodes, arrays)})
            graph = graph if sym is ex._opt_symbol else _topo(sym._outputs)
        na = len(ex.arg_arrays)
        need = [want_grad and r != "null" and g is not None
                for r, g in zip(ex._grad_req, ex.grad_arrays)] + [False] * len(ex.aux_arrays)
        add = [r == "add" for r in ex._grad_req] + [False] * len(ex.aux_arrays)
        plan = _g.build(sym, graph, nodes, [a.shape for a in arrays],
                        [a.dtype for a in arrays], ex._ctx, need_grad=need, grad_add=add,
                        node_ctx=ex._node_ctx)
        self.plan = plan
        self.fresh = self.ran = False
        self.is_train = True
        own = {}
        for h, o in zip(plan.heads, ex.outputs):
            if o.shape == plan.t.shapes[h] and o.dtype == plan.t.dtypes[h]:
                own[h] = o
        arrs = plan.arrays(ex._ctx, plan.arena(ex._ctx), arrays, own)
        ex.outputs = [arrs[h] for h in plan.heads]
        self.fwd = _g.Plan.resolve(plan.fwd, arrs)
        _cuda_graphs.attach(self.fwd, ex._ctx, "executor forward")
        if not any(need):
            return
        gown = {}
        for k in range(na):
            g = plan.grads[k]
            if g is None:
                continue
            if add[k]:
                arrs[g] = ex.grad_arrays[k]
            else:
                gown[g] = ex.grad_arrays[k]
        plan.own_grads(arrs, ex._ctx, gown)
        # head gradients: buffers the backward copies the caller's into (ones by default)
        self.hg = [nd.empty(plan.t.shapes[v], ctx=plan.t.ctxs[v], dtype=plan.t.dtypes[v])
                   for v in plan.hgrads]
        for v, b in zip(plan.hgrads, self.hg):
            arrs[v] = b
        self.hg_ones = False
        read = {i for st in plan.bwd for i in st[2]}
        self.hg_used = [v in read for v in plan.hgrads]
        self.bwd = _g.Plan.resolve(plan.bwd, arrs)
        _cuda_graphs.attach(self.bwd, ex._ctx, "executor backward")
        self.zero = [ex.grad_arrays[k] for k in range(na)
                     if need[k] and plan.grads[k] is None and not add[k]]
        self.copy = registry.get("_copyto")
        self.copy_attrs = self.copy.parse({})
        self.out_names = ex._out_names

    def backward(self, out_grads, is_train):
        if out_grads is None:
            if not self.hg_ones:
                for b in self.hg:
                    b[:] = 1
                self.hg_ones = True
        else:
            if isinstance(out_grads, NDArray):
                out_grads = [out_grads]
            elif isinstance(out_grads, dict):
                out_grads = [out_grads[n] for n in self.out_names]
            if len(out_grads) < len(self.hg):
                raise ValueError(f"backward: {len(out_grads)} head gradients for "
                                 f"{len(self.hg)} outputs")
            self.hg_ones = False
            fwd = self.copy.forward
            for g, b, used in zip(out_grads, self.hg, self.hg_used):
                if not used:        # an output whose gradient nothing reads (MXNet ignores it)
                    continue
                if not isinstance(g, NDArray):
                    g = nd.array(g, ctx=b.context, dtype=b.dtype)
                if g.shape != b.shape:
                    if g.size == 0 and b.size == 0:     # nothing to copy (MXNet accepts it)
                        continue
                    raise ValueError(f"backward: head gradient shape {g.shape} != output shape "
                                     f"{b.shape}")
                if g.dtype != b.dtype:
                    g = g.astype(b.dtype)
                fwd(self.copy_attrs, [g], [b])
        if not self.fresh and (self.plan.tight or not self.ran):
            # a second backward: the first reused the forward's storage, recompute it
            _g.run_steps(self.fwd, self.is_train)
        self.fresh = False
        _g.run_steps(self.bwd, is_train)
        zero = registry.get("zeros_like")
        for z in self.zero:             # no path from the outputs: the gradient is zero
            zero.forward(zero.parse({}), [z], [z])


def bind(sym, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
         shared_exec=None):
    ctx = _ctx(ctx)
    if group2ctx:
        group2ctx = {k: _ctx(v) for k, v in group2ctx.items()}
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
    ctx = default_ctx = _ctx(ctx)
    # as MXNet: only tuple values are shapes; other keywords are ignored
    shapes = {k: v for k, v in (shapes or {}).items() if isinstance(v, tuple)}
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    if type_dict is None:
        # as MXNet: what the graph infers (a quantized operator's int8 weight beside int32
        # indices), float32 where it infers nothing
        attrs = sym.attr_dict()
        inferred = sym.infer_type_partial()[0] or [None] * len(arg_names)
        type_dict = {k: t or np.float32 for k, t in zip(arg_names, inferred)
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
    if group2ctx:
        group2ctx = {k: _ctx(v) for k, v in group2ctx.items()}
    arg_ctxs = _var_ctx(sym, arg_names, ctx, group2ctx)
    aux_ctxs = _var_ctx(sym, aux_names, ctx, group2ctx)
    args, grads = [], []
    stypes = _sb.arg_stypes(sym, stype_dict)       # storage types of arguments, gradients
    gstypes = _sb.grad_stypes(sym, stypes)
    for name, shape, dtype, req, st, gst, ctx in zip(arg_names, arg_shapes, arg_types, reqs,
                                                     stypes, gstypes, arg_ctxs):
        arr = None
        if shared_exec is not None and name in shared_names and name in shared_exec.arg_dict:
            arr = shared_exec.arg_dict[name]
            g = shared_exec.grad_dict.get(name)
            if arr.shape == tuple(shape):
                args.append(arr)
                grads.append(g if g is not None or req == "null" else
                             _sb.zeros(gst, shape, ctx, dtype))
                continue
        # as MXNet: the shared buffer holds the arguments that are not shared by name
        # (data and labels), never the parameters in shared_arg_names
        buffered = shared_buffer is not None and name not in shared_names
        if buffered and name in shared_buffer and \
                shared_buffer[name].shape == tuple(shape) and shared_buffer[name].stype == st:
            arr = shared_buffer[name]
        if arr is None:
            arr = _sb.zeros(st, shape, ctx, dtype)
            if buffered:
                shared_buffer[name] = arr
        args.append(arr)
        grads.append(_sb.zeros(gst, shape, ctx, dtype) if req != "null" else None)
    aux = []
    for name, shape, dtype, ctx in zip(aux_names, aux_shapes, aux_types, aux_ctxs):
        if shared_exec is not None and name in shared_exec.aux_dict and \
                shared_exec.aux_dict[name].shape == tuple(shape):
            aux.append(shared_exec.aux_dict[name])
        else:
            aux.append(nd.zeros(shape, ctx=ctx, dtype=dtype))
    return Executor(sym, default_ctx, args, grads, reqs, aux, group2ctx)


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

