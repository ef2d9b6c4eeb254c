"""CachedOp: a Symbol made callable on NDArrays, the engine room of Gluon's ``hybridize``.

``CachedOp(sym, flags=())(*inputs)`` takes one NDArray per ``sym.list_inputs()`` entry (arguments
and auxiliary states in graph order, as MXNet's CachedOp does) and returns the outputs: one
NDArray, or a list when the symbol has several. Flags are MXNet's (``static_alloc``,
``static_shape``, ``data_indices``, ``param_indices``...), given as a list of pairs or a dict.

Each call runs a plan (``graph.py``) chosen by the inputs' shapes and dtypes, which inputs are
in an autograd graph, and the training flag. Under ``autograd.record()`` the call is recorded
as ONE autograd node whose backward runs the plan's backward steps on the values the forward
left in the plan's storage; gradients reach the inputs and BatchNorm's moving statistics are
updated in place by its backward, as imperatively. ``static_alloc`` keeps the intermediate
storage across calls (as MXNet: a second forward before the first backward overwrites it).
With a higher-order backward (``create_graph=True``) the node's backward replays the planned
steps imperatively while recording, so gradients are differentiable. A graph that cannot be
planned (Custom operators, gradients that read values on the host) and
``MXNET_EXEC_BULK_EXEC_TRAIN/INFERENCE=0`` run node by node through the imperative invoke.
"""

from .._core import handle as _h
from .._core import tape as _tape
from .._core.modes import _M
from ..context import current_context
from ..ndarray import NDArray
from . import graph as _g
from .executor import _Plan, _run_graph

_FLAGS = ("static_alloc", "static_shape", "data_indices", "param_indices", "forward_bulk_size",
          "backward_bulk_size", "inline_limit", "is_dynamic")


def _flag(v):
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true")
    return bool(v)


class _CachedNode:
    """The autograd node operator of one recorded CachedOp call."""
    name = "_CachedOp"

    def __init__(self, plan, arrs, ctx, training):
        self.plan = plan
        self.arrs = arrs
        self.ctx = ctx
        self.training = training
        self.used = False

    def grad(self, F, attrs, inputs, outputs, out_grads):
        plan = self.plan
        if _M.recording:
            return self._replay(inputs, out_grads)
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

    def _replay(self, inputs, out_grads):
        """Forward and backward steps again, imperatively and recorded (create_graph)."""
        from ..ndarray.register import _forward
        plan = self.plan
        t = plan.t
        vals = [None] * len(t.shapes)
        for v, x in zip(plan.inputs, inputs):
            vals[v] = x
        for v, a in t.const.items():
            vals[v] = a
        for v, g in zip(plan.hgrads, out_grads):
            vals[v] = g
        from .. import ndarray as nd

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


class CachedOp:
    def __init__(self, sym, flags=()):
        flags = dict(flags.items() if isinstance(flags, dict) else flags)
        unknown = [k for k in flags if k not in _FLAGS]
        if unknown:
            raise ValueError(f"CachedOp: unknown flag(s) {unknown}; known: {list(_FLAGS)}")
        self.flags = flags
        self._static_alloc = _flag(flags.get("static_alloc", False))
        self._sym = sym
        self._plan = _Plan(sym)
        names = sym.list_inputs()
        self._input_names = names
        where = {n: i for i, n in enumerate(names)}
        self._arg_pos = [where[self._plan.nodes[s].name] for s in self._plan.arg_slots]
        self._aux_pos = [where[self._plan.nodes[s].name] for s in self._plan.aux_slots]
        by_name = {n.name: n for n in self._plan.nodes if n.op is None}
        self._input_nodes = [by_name[n] for n in names]
        self._aux_set = frozenset(self._aux_pos)
        self._num_outputs = len(self._plan.heads)
        self._plans = {}
        self._arenas = {}

    def _get_plan(self, key, args, need, ctx):
        if key in self._plans:
            return self._plans[key]
        try:
            plan = _g.build(self._sym, self._plan.nodes, self._input_nodes,
                            [a.shape for a in args], [a.dtype for a in args], ctx, need_grad=need)
        except _g.Untraceable:
            plan = None
        self._plans[key] = plan
        return plan

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._input_names):
            raise ValueError(f"CachedOp: expected {len(self._input_names)} inputs "
                             f"{self._input_names}, got {len(args)}")
        for name, a in zip(self._input_names, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"CachedOp: input {name!r} must be an NDArray, "
                                f"got {type(a).__name__}")
        training = _M.training
        plan = None
        if _g.bulk_enabled(training) and not any(a._sparse for a in args):
            rec = _M.recording
            aux = self._aux_set
            need = tuple(rec and a._ag is not None and i not in aux for i, a in enumerate(args))
            key = (tuple((a._shape, a._dtype) for a in args), need, training)
            ctx = args[0].context if args else (default_ctx or current_context())
            plan = self._get_plan(key, args, need, ctx)
        if plan is None:
            outs = _run_graph(self._plan, [args[i] for i in self._arg_pos],
                              [args[i] for i in self._aux_pos])
        else:
            if self._static_alloc:
                arena = self._arenas.get(key)
                if arena is None:
                    arena = self._arenas[key] = plan.arena(ctx)
            else:
                arena = plan.arena(ctx)
            arrs = plan.arrays(ctx, arena, args)
            _g.run_steps(_g.Plan.resolve(plan.fwd, arrs), training)
            outs = [arrs[h] for h in plan.heads]
            if any(need):
                _tape.record(_CachedNode(plan, arrs, ctx, training), None, list(args), outs,
                             tuple(self._aux_pos))
        if out is not None:
            dst = [out] if isinstance(out, NDArray) else list(out)
            if len(dst) != len(outs):
                raise ValueError(f"CachedOp: {len(dst)} out arrays for {len(outs)} outputs")
            for d, o in zip(dst, outs):
                o.copyto(d)
            return out
        return outs[0] if self._num_outputs == 1 else outs
