"""CachedOp: a Symbol made callable on NDArrays, the engine room of Gluon's ``hybridize``.

``CachedOp(sym, flags=())(*inputs)`` takes one NDArray per ``sym.list_inputs()`` entry (arguments
and auxiliary states in graph order, as MXNet's CachedOp does) and returns the outputs: one
NDArray, or a list when the symbol has several. Flags are MXNet's (``static_alloc``,
``static_shape``, ``data_indices``, ``param_indices``...), given as a list of pairs or a dict.

Each call runs a plan (``graph.py``) chosen by the inputs' shapes and dtypes, which inputs are in
an autograd graph, and the training flag. Under ``autograd.record()`` a graph of at most
``inline_limit`` operators (default 2, as MXNet; not with ``static_alloc``) runs operator by
operator, each recorded on its own; a larger one is recorded as ONE autograd node
(``autograd.get_symbol`` shows a ``_CachedOp`` node) whose backward runs the plan's backward steps
on the values the forward left in the plan's storage; gradients reach the inputs and BatchNorm's
moving statistics are updated in place by its backward, as imperatively. ``static_alloc`` keeps the
intermediate storage across calls (as MXNet: a second forward before the first backward overwrites
it) and more: each plan's arrays and resolved steps are made once (``_Static``), so from the second
call on the forward and the backward each run as one bulk engine operation, as a bound executor's
(on a GPU with ``static_shape`` too and MXNET_ENABLE_CUDA_GRAPHS=1: as CUDA graphs,
cuda_graphs.py); parameters are read where they are, data inputs are copied into the plan's own
buffers, outputs are copied out into fresh arrays.
With a higher-order backward (``create_graph=True``) the node's backward replays the planned
steps imperatively while recording, so gradients are differentiable. A graph that cannot be
planned (Custom operators, gradients that read values on the host) and
``MXNET_EXEC_BULK_EXEC_TRAIN/INFERENCE=0`` run node by node through the imperative invoke.
"""

import weakref

from .._core import handle as _h
from .._core import tape as _tape
from .._core.modes import _M
from ..context import current_context
from ..ndarray import NDArray
from ..ops import registry
from . import cuda_graphs as _cuda_graphs
from . import graph as _g
from .executor import _Plan, _optimized, _run_graph
from ..symbol.infer import infer_graph
from ..symbol.symbol import _topo
from . import fold as _fold
from .nograd import refuse_nondifferentiable
from ..ndarray.register import _forward
from .. import ndarray as nd

_FLAGS = ("static_alloc", "static_shape", "data_indices", "param_indices", "forward_bulk_size",
          "backward_bulk_size", "inline_limit", "is_dynamic")


def _flag(v):
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true")
    return bool(v)


class _CachedNode:
    """The autograd node operator of one recorded CachedOp call."""
    name = "_CachedOp"

    def __init__(self, cached_op, plan, arrs, ctx, training, static=None):
        self.cached_op = cached_op
        self.plan = plan
        self.arrs = arrs
        self.ctx = ctx
        self.training = training
        self.used = False
        self.static = static

    def grad(self, F, attrs, inputs, outputs, out_grads):
        return self.grad_into(F, attrs, inputs, outputs, out_grads, None)

    def grad_into(self, F, attrs, inputs, outputs, out_grads, dests):
        """grad; with `dests` (tape.run_backward's), a static plan writes the gradient of
        input k into dests[k] where that is given."""
        plan = self.plan
        if _M.recording:
            return self._replay(inputs, out_grads)
        if self.static is not None:
            rerun = self.used and plan.tight
            self.used = True
            if dests is not None:     # a .grad the call read is not written early
                read = {x._chunk for x in inputs}
                dests = [d if d is not None and d._chunk not in read else None for d in dests]
            grads = self.static.backward(out_grads, _M.training, rerun, self.training, dests)
            return [g if g is not None else (F.zeros_like(x) if w else None)
                    for g, w, x in zip(grads, plan.need, inputs)]
        arrs = self.arrs
        t = plan.t
        if self.used and plan.tight:
            # the first backward reused the forward's storage: recompute it (same inputs)
            _g.run_steps(_g.Plan.resolve(plan.fwd, arrs), self.training)
        self.used = True
        for v, g in zip(plan.hgrads, out_grads):
            if g.dtype != t.dtypes[v]:
                g = g.astype(t.dtypes[v])
            arrs[v] = g
        plan.own_grads(arrs, self.ctx)
        _g.run_steps(_g.Plan.resolve(plan.bwd, arrs), _M.training)
        # an input that wants a gradient but gets none (behind BlockGrad) gets zeros, as
        # autograd gives it imperatively
        return [arrs[g] if g is not None else
                (F.zeros_like(x) if w else None)
                for g, w, x in zip(plan.grads, plan.need, inputs)]

    def opdef(self):
        """The call as one graph operator (``autograd.get_symbol``)."""
        return self.cached_op.opdef()

    def _replay(self, inputs, out_grads):
        """Forward and backward steps again, imperatively and recorded (create_graph)."""
        plan = self.plan
        t = plan.t
        vals = [None] * len(t.shapes)
        for v, x in zip(plan.inputs, inputs):
            vals[v] = x
        for v, a in t.const.items():
            vals[v] = a
        for v, g in zip(plan.hgrads, out_grads):
            vals[v] = g

        def get(v):
            if vals[v] is None and v in plan.alias:
                vals[v] = nd.reshape(get(plan.alias[v]), shape=t.shapes[v])
            return vals[v]
        for op, attrs, ins, outs, _ in plan.fwd + plan.bwd:
            oa = [_h.empty(NDArray, t.shapes[o], t.dtypes[o], self.ctx) for o in outs]
            _forward(op, attrs, [get(i) for i in ins], oa)
            for o, a in zip(outs, oa):
                vals[o] = a
        return [get(g) if g is not None else None for g in plan.grads]


def _same(a, b):
    """The same storage seen the same way (np views of one array are new objects per call)."""
    return a is b or (a._chunk is b._chunk and a._offset == b._offset and a.shape == b.shape
                      and a._dtype == b._dtype)


class _Static:
    """One plan under static_alloc: every value's array and the resolved forward and backward
    steps, made once and run again and again (so ``run_steps`` captures them into bulk
    operations from their second run).

    Inputs: a parameter (or aux state, which the forward updates in place) is read where it is
    as long as the caller passes the same array; a data input (``data_indices``, or any input
    seen to change) is copied into a buffer of the plan's own at each call. Graph outputs are
    copied into fresh arrays at each call, since callers keep outputs across calls. Gradients
    are handed out as views of the plan's gradient arrays; should a caller still hold one at
    the next backward (``autograd.grad``'s results), the plan moves to new gradient arrays
    rather than overwrite it."""

    def __init__(self, plan, ctx, args, copy_in, graphs=False):
        self.plan = plan
        self.ctx = ctx
        self.graphs = graphs        # static_shape too: the steps run as CUDA graphs on a GPU
        t = plan.t
        self.copy_in = tuple(copy_in)
        self.inputs = [_h.empty(NDArray, a.shape, a._dtype, t.ctxs[v]) if c else a
                       for a, c, v in zip(args, copy_in, plan.inputs)]
        arrs = plan.arrays(ctx, plan.arena(ctx), self.inputs)
        self.arrs = arrs
        self.fwd = _g.Plan.resolve(plan.fwd, arrs)
        if graphs:
            _cuda_graphs.attach(self.fwd, ctx, "CachedOp forward")
        self.outs = [arrs[h] for h in plan.heads]
        self.bwd = None
        self.handed = []
        self.bound = {}         # gradient value id -> the caller's array it is written into
        if any(plan.need):
            self.hg = [_h.empty(NDArray, t.shapes[v], t.dtypes[v], t.ctxs[v])
                       for v in plan.hgrads]
            for v, b in zip(plan.hgrads, self.hg):
                arrs[v] = b
            read = {i for st in plan.bwd for i in st[2]}
            self.hg_used = [v in read for v in plan.hgrads]
            self._resolve_bwd()

    def _resolve_bwd(self, bound=None):
        self.bound = bound or {}
        self.plan.own_grads(self.arrs, self.ctx, self.bound)
        self.bwd = _g.Plan.resolve(self.plan.bwd, self.arrs)
        if self.graphs:
            _cuda_graphs.attach(self.bwd, self.ctx, "CachedOp backward")

    def _bound(self, dests):
        """{gradient value id: array} of the `dests` (variables' .grad arrays) that the
        backward can write into: shape, dtype and context of the planned gradient."""
        plan = self.plan
        t = plan.t
        bound = {}
        for g, d in zip(plan.grads, dests):
            if g is not None and d is not None and d.shape == t.shapes[g] \
                    and d.dtype == t.dtypes[g] and d.context == t.ctxs[g]:
                bound[g] = d
        return bound

    def fits(self, args):
        """Whether every input read in place is still the caller's array."""
        return all(c or _same(a, b) for a, b, c in zip(args, self.inputs, self.copy_in))

    def forward(self, args, training):
        copy = _COPY
        for a, b, c in zip(args, self.inputs, self.copy_in):
            if c:
                copy.forward(_COPY_ATTRS, [a], [b])
        _g.run_steps(self.fwd, training)
        outs = []
        for o in self.outs:
            r = _h.empty(NDArray, o.shape, o._dtype, o.context)
            copy.forward(_COPY_ATTRS, [o], [r])
            outs.append(r)
        return outs

    def backward(self, out_grads, training, rerun_forward, fwd_training, dests=None):
        """Gradients per input; with `dests`, those that fit are written into the given
        arrays (the plan's steps are resolved again when the arrays change)."""
        plan = self.plan
        t = plan.t
        if any(r() is not None for r in self.handed):
            self._resolve_bwd()             # a caller kept last backward's gradients
        elif dests is not None or self.bound:
            bound = self._bound(dests) if dests is not None else {}
            if bound.keys() != self.bound.keys() or \
                    any(a is not self.bound[v] for v, a in bound.items()):
                self._resolve_bwd(bound)
        for g, b, used, v in zip(out_grads, self.hg, self.hg_used, plan.hgrads):
            if used:
                if g.dtype != t.dtypes[v]:
                    g = g.astype(t.dtypes[v])
                _COPY.forward(_COPY_ATTRS, [g], [b])
        if rerun_forward:
            _g.run_steps(self.fwd, fwd_training)
        _g.run_steps(self.bwd, training)
        arrs = self.arrs
        out = []
        for g in plan.grads:
            if g is None:
                out.append(None)
                continue
            a = arrs[g]
            out.append(_h.make_array(NDArray, a._chunk, a._offset, a.shape, a._dtype, a.context))
        self.handed = [weakref.ref(x) for x in out if x is not None]
        return out


_COPY = registry.get("_copyto")
_COPY_ATTRS = _COPY.parse({})


class CachedOp:
    def __init__(self, sym, flags=()):
        flags = dict(flags.items() if isinstance(flags, dict) else flags)
        unknown = [k for k in flags if k not in _FLAGS]
        if unknown:
            raise ValueError(f"CachedOp: unknown flag(s) {unknown}; known: {list(_FLAGS)}")
        self.flags = flags
        self._static_alloc = _flag(flags.get("static_alloc", False))
        self._static_shape = _flag(flags.get("static_shape", False))
        self._data_indices = frozenset(int(i) for i in flags.get("data_indices", ()) or ())
        self._param_indices = frozenset(int(i) for i in flags.get("param_indices", ()) or ())
        self._sym = sym
        self._plan = _Plan(_optimized(sym, sym.list_arguments(), sym.list_auxiliary_states()))
        names = sym.list_inputs()
        self._input_names = names
        where = {n: i for i, n in enumerate(names)}
        self._arg_pos = [where[self._plan.nodes[s].name] for s in self._plan.arg_slots]
        self._aux_pos = [where[self._plan.nodes[s].name] for s in self._plan.aux_slots]
        by_name = {n.name: n for n in self._plan.nodes if n.op is None}
        self._input_nodes = [by_name[n] for n in names]
        self._aux_set = frozenset(self._aux_pos)
        self._num_outputs = len(self._plan.heads)
        # MXNet's inlining: a small graph recorded operator by operator (recording is the only
        # case where it differs: a graph run without recording is one bulk run either way)
        self._inlining = (not self._static_alloc
                          and len(self._plan.steps) <= int(flags.get("inline_limit", 2)))
        self._opdef = None
        self._plans = {}
        self._statics = {}
        self._folded = {}       # input dtypes -> (symbol, nodes) with Conv + BN (+ ReLU) folded

    def _inference_graph(self, dtypes):
        """The graph that inference plans run: Convolution + BatchNorm (+ ReLU) folded (fold.py)
        where the inputs' dtypes allow."""
        got = self._folded.get(dtypes)
        if got is None:
            sym = _fold.fold_inference(self._plan.sym, {id(n): d for n, d in
                                                        zip(self._input_nodes, dtypes)})
            got = (sym, self._plan.nodes if sym is self._plan.sym else _topo(sym._outputs))
            self._folded[dtypes] = got
        return got

    def _get_plan(self, key, args, need, ctx):
        if key in self._plans:
            return self._plans[key]
        sym, nodes = self._plan.sym, self._plan.nodes
        # as MXNet's CachedOp, a recorded call that needs a gradient fails at once when one would
        # reach an operator without one (MXNet also fails when no input needs a gradient)
        refuse_nondifferentiable(sym, any(need))
        if not key[2] and not any(need) and _fold.enabled():    # inference, no gradient
            sym, nodes = self._inference_graph(tuple(a.dtype for a in args))
        try:
            plan = _g.build(sym, nodes, self._input_nodes,
                            [a.shape for a in args], [a.dtype for a in args], ctx, need_grad=need)
        except _g.Untraceable:
            plan = None
        self._plans[key] = plan
        return plan

    def _static(self, key, plan, args, ctx):
        """The static state of `plan` for these inputs: made at the first call; remade when a
        bound input is not the caller's array any more (a parameter, by ``param_indices``, or a
        state the forward mutates is rebound; any other input is copied from then on)."""
        st = self._statics.get(key)
        if st is not None and st.fits(args):
            return st
        rebind = self._param_indices.union(self._aux_pos)
        if st is None:
            copy_in = [i in self._data_indices for i in range(len(args))]
        else:
            copy_in = [c or (i not in rebind and not _same(a, b))
                       for i, (a, b, c) in enumerate(zip(args, st.inputs, st.copy_in))]
        st = self._statics[key] = _Static(plan, ctx, args, copy_in, self._static_shape)
        return st

    def opdef(self):
        """This CachedOp as one graph operator, as MXNet's ``_CachedOp`` node holds it: inputs and
        outputs named by the graph's, shapes inferred through the graph, run by this CachedOp.
        Not registered and not serialised (the JSON names the operator, as MXNet's does), so a
        graph holding it binds and runs in this process only."""
        if self._opdef is None:
            sym = self._sym

            def run(F, attrs, *inputs):
                if not all(isinstance(x, NDArray) for x in inputs):
                    raise _g.Untraceable("_CachedOp runs its graph as a CachedOp")
                return self(*inputs)

            def infer(attrs, in_shapes, in_dtypes):
                S, D = infer_graph(sym, dict(zip(self._input_names, in_shapes)),
                                   {n: d for n, d in zip(self._input_names, in_dtypes) if d},
                                   default_dtype="float32")
                heads = [(id(e[0]), e[1]) for e in sym._outputs]
                return [S.get(k) for k in heads], [D.get(k) for k in heads]

            self._opdef = registry.OpDef(
                "_CachedOp", inputs=tuple(self._input_names), composite=run, infer=infer,
                num_outputs=self._num_outputs, output_names=tuple(sym.list_outputs()),
                doc="A CachedOp's graph as one operator.")
        return self._opdef

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._input_names):
            raise ValueError(f"CachedOp: expected {len(self._input_names)} inputs "
                             f"{self._input_names}, got {len(args)}")
        for name, a in zip(self._input_names, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"CachedOp: input {name!r} must be an NDArray, "
                                f"got {type(a).__name__}")
        outs = self._run(args, default_ctx)
        if out is not None:
            dst = [out] if isinstance(out, NDArray) else list(out)
            if len(dst) != len(outs):
                raise ValueError(f"CachedOp: {len(dst)} out arrays for {len(outs)} outputs")
            for d, o in zip(dst, outs):
                o.copyto(d)
            return out
        return outs[0] if self._num_outputs == 1 else outs

    def _run(self, args, default_ctx):
        """The outputs of one call, recorded when autograd records (see the module doc)."""
        training = _M.training
        plan = None
        if _g.bulk_enabled(training) and not any(a._sparse for a in args) \
                and not (self._inlining and _M.recording):
            rec = _M.recording
            aux = self._aux_set
            need = tuple(rec and a._ag is not None and i not in aux for i, a in enumerate(args))
            key = (tuple((a._shape, a._dtype) for a in args), need, training)
            ctx = args[0].context if args else (default_ctx or current_context())
            plan = self._get_plan(key, args, need, ctx)
        if plan is None:
            return _run_graph(self._plan, [args[i] for i in self._arg_pos],
                              [args[i] for i in self._aux_pos])
        if self._static_alloc:
            st = self._static(key, plan, args, ctx)
            outs = st.forward(args, training)
            if any(need):
                _tape.record(_CachedNode(self, plan, st.arrs, ctx, training, st), None,
                             list(args), outs, tuple(self._aux_pos))
            return outs
        arrs = plan.arrays(ctx, plan.arena(ctx), args)
        _g.run_steps(_g.Plan.resolve(plan.fwd, arrs), training)
        outs = [arrs[h] for h in plan.heads]
        if any(need):
            _tape.record(_CachedNode(self, plan, arrs, ctx, training), None, list(args), outs,
                         tuple(self._aux_pos))
        return outs
