"""Planned graphs: what the executor and CachedOp run.

A plan is built once per (input shapes, dtypes, which inputs want gradients, training mode):

1. **Trace.** The symbol's nodes are applied, in topological order, to *traced values* (shape
   and dtype only) through the same OpDefs as ``mx.nd``: ``infer`` gives every shape and dtype,
   composite operators are expanded into their parts. The backward graph is built the same way:
   each node's ``OpDef.grad(F, ...)`` is called with ``F`` a graph-building namespace, so the
   gradient definitions that serve ``mx.nd`` build the backward steps, and gradients of a value
   used several times are summed with ``elemwise_add``.
2. **Memory plan.** Lifetimes over the forward and backward sequence (a value is live from
   the step that writes it to the last step that reads it); an output may take the storage of
   an input that dies at its step where the OpDef declares the pair in ``inplace``
   (``MXNET_EXEC_ENABLE_INPLACE=0`` turns that off). Storage is then placed offline in one
   arena: values joined by in-place hand-overs form a group, groups go largest first, each at
   the lowest byte offset (best-fitting gap) that no group live at the same time occupies. Inputs, constants, head gradients, graph outputs and
   gradient results never share a slot ("own" storage). A second backward over the same
   forward (``retain_graph``) first recomputes the forward steps, unless the forward draws
   random numbers (Dropout): then forward values the backward reads stay live to the end.
3. **Run.** Every value becomes an NDArray view at its offset in the arena chunk once; a step is then one
   call of the OpDef's ``forward`` (a kernel push) on pre-built input/output lists, with
   recording off and the training flag set as autograd sets it. The engine orders reuse of a
   slot after earlier reads (a write waits for them), so reuse needs no synchronisation here.

What cannot be traced (a gradient that reads values on the host, Custom operators, operators
without ``infer``) raises ``Untraceable``; callers fall back to evaluating node by node.
"""
import os

import numpy as np

from .._core import engine as _engine
from .._core import handle as _h
from .._core.modes import _M
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.trace import EXT, INT, OWN, TVal, Trace, Untraceable, RESHAPES as _RESHAPES
from ..ops import registry
from ..symbol.infer import infer_graph

__all__ = ["Untraceable", "Plan", "build", "inplace_enabled", "bulk_enabled"]

def inplace_enabled():
    return os.environ.get("MXNET_EXEC_ENABLE_INPLACE", "1").strip().lower() not in ("0", "false")


def bulk_enabled(is_train):
    var = "MXNET_EXEC_BULK_EXEC_TRAIN" if is_train else "MXNET_EXEC_BULK_EXEC_INFERENCE"
    return os.environ.get(var, "1").strip().lower() not in ("0", "false")


# ---- the plan ------------------------------------------------------------------------------------
class Plan:
    """A traced forward (and backward) with storage assigned.

    inputs: value ids of the graph inputs (the caller's order); heads: value ids of the outputs;
    hgrads: value ids of the head gradients (EXT); grads: per input, the value id of its gradient
    (OWN) or None; fwd/bwd: steps (op, attrs, input ids, output ids, label); slot_of: value id ->
    slot; slot_bytes: size of each slot; first/last: step index (over fwd + bwd) defining and
    last reading each planned value; grad_add: per input, True where the backward ends by adding
    into the caller's gradient buffer (executor's grad_req='add')."""

    def __init__(self, t):
        self.t = t
        self.inputs = []
        self.heads = []
        self.hgrads = []
        self.grads = []
        self.fwd = []
        self.bwd = []
        self.slot_of = {}
        self.slot_bytes = []
        self.first = {}
        self.last = {}
        self.inplace_pairs = []
        self.grad_set = set()
        self.grad_bufs = {}
        self.alias = {}
        self.tight = False
        self.offset_of = {}
        self.need = []

    @property
    def planned_bytes(self):
        """Bytes of the slots (intermediates) plus own arrays (outputs and gradients)."""
        own = sum(self.t.nbytes(v) for v, k in enumerate(self.t.kinds) if k == OWN)
        return sum(self.slot_bytes) + own

    # -- running --
    def arena(self, ctx):
        """Fresh storage for the slots (allocated lazily by the first kernel that writes)."""
        return [_h.empty(NDArray, (max(b, 1),), np.uint8, ctx)._chunk for b in self.slot_bytes]

    def arrays(self, ctx, arena, inputs, own=None):
        """One NDArray per value: inputs as given, constants, views on the arena, own arrays
        (from `own` {vid: array} or new)."""
        t = self.t
        arrs = [None] * len(t.shapes)
        for v, a in zip(self.inputs, inputs):
            arrs[v] = a
        for v, a in t.const.items():
            arrs[v] = a
        make = _h.make_array
        shapes, dtypes, ctxs = t.shapes, t.dtypes, t.ctxs
        off = self.offset_of
        # every value carries its node's context (group2ctx); CPU contexts share one address
        # space, so one arena serves them all
        for v, s in self.slot_of.items():
            arrs[v] = make(NDArray, arena[s], off[v], shapes[v], dtypes[v], ctxs[v])
        own = own or {}
        for v, k in enumerate(t.kinds):
            if k == OWN and v not in self.grad_set:
                a = own.get(v)
                arrs[v] = a if a is not None else _h.empty(NDArray, shapes[v], dtypes[v],
                                                           ctxs[v])
        for v, r in self.alias.items():
            a = arrs[r]
            arrs[v] = make(NDArray, a._chunk, a._offset, shapes[v], dtypes[v], ctxs[v])
        return arrs

    def own_grads(self, arrs, ctx, own=None):
        t = self.t
        own = own or {}
        for v in self.grad_set:
            a = own.get(v)
            arrs[v] = a if a is not None else _h.empty(NDArray, t.shapes[v], t.dtypes[v],
                                                       t.ctxs[v])

    @staticmethod
    def resolve(steps, arrs):
        return Steps((op.forward, attrs, [arrs[i] for i in ins], [arrs[o] for o in outs],
                      label, op) for op, attrs, ins, outs, label in steps)


class Steps(list):
    """Resolved steps (forward function, attrs, input and output arrays, label, OpDef). When
    the same resolved steps run again (a bound executor), their kernel calls are captured once
    into bulk operations (``bulks``, per training flag) that later runs queue instead."""

    def __init__(self, items=()):
        super().__init__(items)
        self.runs = 0
        self.bulks = {}
        self.graphs = None       # cuda_graphs.Graphed: these steps run as CUDA graphs


def _max_bulk_nodes(training):
    """Steps per bulk operation: MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN (training) when set, else
    the whole plan (mxc has no reason to split a plan nothing outside reads midway)."""
    if not training:
        return None
    raw = os.environ.get("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "").strip()
    if not raw:
        return None
    n = int(raw)
    return n if n > 0 else None


def _capture_segments(resolved, training):
    """[KernelSeq, FusedChain or step]: runs of steps whose forwards only queue kernels become
    one bulk operation; a step that draws random numbers (its seed is taken when it is queued)
    or that queues anything else runs on its own, in its place. GPU steps that each make one
    pointwise call are recorded too: chains of them run as one generated kernel
    (``_fuse_gpu_chains``)."""
    from ..ops import _gpu
    limit = _max_bulk_nodes(training)
    fuse = _h.fusion_enabled()
    segs, calls, labels, nsteps, ops = [], [], [], 0, []
    gpu_calls = {}               # id(step) -> its one recorded pointwise GPU call

    def flush():
        nonlocal calls, labels, nsteps, ops
        if calls:
            # MXNet's name of a bulked segment (the profiler shows it): "[op,op,...]"
            segs.append(_h.KernelSeq(calls, labels, f"[{','.join(ops)}]".encode()))
        calls, labels, nsteps, ops = [], [], 0, []

    for st in resolved:
        op = st[5]
        if "random" in op.resources:
            flush()
            segs.append(st)
            continue
        _h.capture_begin()
        rec = _gpu.record_calls() if fuse else None
        try:
            st[0](st[1], st[2], st[3])
        except Exception:           # noqa: BLE001  refused or failing: runs alone (and names
            _h.capture_end(keep=False)      # itself if it fails there)
            flush()
            segs.append(st)
            continue
        finally:
            if rec is not None:
                _gpu.record_calls(False)
        if rec:                     # recorded, not queued: the step runs itself (or fused)
            _h.capture_end(keep=False)
            flush()
            segs.append(st)
            if len(rec) == 1:
                gpu_calls[id(st)] = rec[0]
            continue
        got = _h.capture_end()
        calls += got
        labels += [f"{st[4]} ({op.name})"] * len(got)
        ops.append(op.name)
        nsteps += 1
        if limit is not None and nsteps >= limit:
            flush()
    flush()
    return _fuse_gpu_chains(segs, gpu_calls) if gpu_calls else segs


def _fuse_gpu_chains(segs, gpu_calls):
    """segs with each chain of GPU steps that the CPU's chain rule (``handle.find_runs``, no
    minimum size: a launch saved is worth it at any size) joins replaced by one
    ``fusion.FusedChain``, the steps' calls generated into one kernel."""
    from ..ops.cuda import fusion
    sizes, arrays = [], []
    for st in segs:
        rec = gpu_calls.get(id(st)) if type(st) is tuple else None
        ok = rec is not None and fusion.step_of(rec) is not None
        sizes.append(int(np.prod(rec[3][0].shape)) if ok else -1)
        arrays.append(rec[2] + rec[3] if ok else [])
    out, i = [], 0
    for i0, m, _ in _h.find_runs(sizes, arrays, 1):
        out += segs[i:i0]
        run = segs[i0:i0 + m]
        out.append(fusion.FusedChain([gpu_calls[id(st)] for st in run],
                                     "FusedOp[" + ",".join(st[5].name for st in run) + "]"))
        i = i0 + m
    return out + segs[i:]


def run_steps(resolved, training):
    """Push every step; errors raised while pushing name the node. Steps resolved once and run
    again are captured into bulk operations (one engine push for the whole plan), or on a GPU
    into CUDA graphs (cuda_graphs.py)."""
    if type(resolved) is Steps and resolved.graphs is not None:
        resolved.graphs.run(resolved, training)
        return
    prev_r, prev_t = _M.recording, _M.training
    _M.recording = False
    _M.training = training
    prev_g = _engine.profile_graph(True)     # the profiler's "symbolic" operations
    st = None
    try:
        segs = None
        if isinstance(resolved, Steps):
            segs = resolved.bulks.get(training)
            if segs is None:
                resolved.runs += 1
                if resolved.runs >= 2:
                    segs = resolved.bulks[training] = _capture_segments(resolved, training)
        for st in (resolved if segs is None else segs):
            if type(st) is tuple:
                st[0](st[1], st[2], st[3])
            else:
                st.run()
    except Exception as e:      # noqa: BLE001  (re-raised with the node's name)
        if st is None or type(st) is not tuple:
            raise
        raise MXNetError(f"Error in operator {st[4]} ({st[5].name}): "
                         f"{type(e).__name__}: {e}") from e
    finally:
        _M.recording = prev_r
        _M.training = prev_t
        _engine.profile_graph(prev_g)


def _completed_creation_shapes(sym, nodes, input_nodes, shapes):
    """Creation operators (zeros, ones, full...) whose ``shape`` has unknown (0) dims, with the
    shape the graph's inference completes (an RNN's begin state zeros((0, H)) takes the batch
    size from its consumers, as in MXNet): {id(node): shape}."""
    todo = [n for n in nodes if n.op is not None and not n.inputs
            and any(d <= 0 for d in tuple(n.parsed.get("shape", ()) or ()))]   # -1 too
    if not todo:
        return {}
    known = {n.name: tuple(s) for n, s in zip(input_nodes, shapes)}
    S, _ = infer_graph(sym, known, {}, default_dtype="float32")
    done = {}
    for n in todo:
        s = S.get((id(n), 0))
        if s is not None and 0 not in s:
            done[id(n)] = tuple(s)
    return done


def build(sym, nodes, input_nodes, shapes, dtypes, ctx, need_grad=(), grad_add=(),
          extra_own=(), node_ctx=None):
    """Plan `sym`. nodes: topological order; input_nodes: the variable nodes in the caller's
    input order, with their shapes and dtypes; need_grad: per input, whether it wants a
    gradient (any True builds the backward); grad_add: per input, end with an add into an EXT
    gradient buffer instead of an own result; node_ctx: {id(node): context} where group2ctx
    placed nodes (values of a node get its context; its backward steps too)."""
    t = Trace(ctx)
    node_ctx = node_ctx or {}
    plan = Plan(t)
    vals = {}
    completed = _completed_creation_shapes(sym, nodes, input_nodes, shapes)
    for node, s, d in zip(input_nodes, shapes, dtypes):
        t.cur = node_ctx.get(id(node), ctx)
        v = t.new(s, d, EXT)
        vals[id(node)] = [v]
        plan.inputs.append(v.vid)
    for node in nodes:
        if node.op is None:
            if id(node) not in vals:
                raise MXNetError(f"bind: the variable {node.name!r} has no array")
            continue
        op = node.op
        ins = [vals[id(e[0])][e[1]] for e in node.inputs]
        t.label = node.name
        t.cur = node_ctx.get(id(node), ctx)
        attrs = node.parsed
        if id(node) in completed:
            attrs = dict(attrs, shape=completed[id(node)])
        if op.train_attrs is not None and any(need_grad):
            attrs = op.train_attrs(attrs)
        try:
            if op.composite is not None:
                if op.grad is not None and any(need_grad):
                    # a composite with its own gradient (SVMOutput, hard_sigmoid) is one
                    # node under autograd; expanded here, its parts' gradients would be used
                    raise Untraceable(f"{op.name} has its own gradient")
                res = t.composite(op, attrs, ins)
                outs = [res] if isinstance(res, TVal) else [t.lift(r) for r in res]
            else:
                outs = t.apply(op, attrs, ins)
        except Untraceable:
            raise
        except (ValueError, TypeError, IndexError, KeyError, MXNetError) as e:
            seen = [tuple(t.shapes[x.vid]) for x in ins]
            types = [t.dtypes[x.vid].name for x in ins]
            raise MXNetError(f"Error in operator {node.name} ({op.name}): cannot infer its "
                             f"outputs from input shapes {seen} (dtypes {types}): {e}") from None
        vals[id(node)] = outs
    heads = [vals[id(e[0])][e[1]] for e in sym._outputs]
    # graph outputs get their own arrays; an output that is an input, a constant or another
    # output is copied
    copy = registry.get("_copyto")
    seen = set()
    for h in heads:
        v = h.vid
        if t.kinds[v] != INT or v in seen:
            t.label = "_head_copy"
            t.cur = t.ctxs[v]
            v = t.apply1(copy, copy.parse({}), [h]).vid
        t.kinds[v] = OWN
        seen.add(v)
        plan.heads.append(v)
    plan.fwd = t.steps[:]
    need = list(need_grad) or [False] * len(plan.inputs)
    if any(need):
        _backward(t, plan, need, list(grad_add) or [False] * len(need), len(plan.fwd))
    _prune(plan)
    _alias_reshapes(t, plan)
    plan.nf = len(plan.fwd)
    _plan_memory(t, plan, len(plan.fwd), inplace_enabled())
    plan.grad_set = {g for g in plan.grads if g is not None and t.kinds[g] == OWN}
    return plan


def _backward(t, plan, need, grad_add, nf):
    F = t.F
    needs = {v for v, w in zip(plan.inputs, need) if w}
    for op, attrs, ins, outs, _ in t.steps[:nf]:
        mut = op.mutate
        if any(i in needs for k, i in enumerate(ins) if k not in mut):
            needs.update(outs)
    grads = {}

    def acc(v, g):
        g = t.lift(g)
        if g.vid in t.zeros:
            return          # a zero gradient (BlockGrad's) adds nothing: nothing upstream runs
        prev = grads.get(v)
        if prev is None:
            grads[v] = g
        else:
            t.label = "_grad_sum"
            grads[v] = F._call("elemwise_add", (prev, g), {})
    for h in plan.heads:
        t.cur = t.ctxs[h]
        hv = t.new(t.shapes[h], t.dtypes[h], EXT)
        plan.hgrads.append(hv.vid)
        acc(h, hv)
    fwd = t.steps[:nf]
    start = len(t.steps)
    for op, attrs, ins, outs, label in _autograd_order(fwd, plan.heads, needs):
        if not any(o in grads for o in outs):
            continue
        mut = op.mutate
        wanted = [k for k, i in enumerate(ins) if i in needs and k not in mut]
        if not wanted:
            continue
        if op.grad is None:
            raise MXNetError(f"Error in operator {label}: {op.name} has no gradient")
        t.label = f"{label}_backward"
        if outs:
            t.cur = t.ctxs[outs[0]]     # a node's backward runs where the node ran
        ogs = []
        for o in outs:
            g = grads.get(o)
            ogs.append(g if g is not None else F._call("zeros_like", (TVal(t, o),), {}))
        gl = op.grad(F, attrs, [TVal(t, i) for i in ins], [TVal(t, o) for o in outs], ogs)
        for k in wanted:
            if k < len(gl) and gl[k] is not None:
                acc(ins[k], gl[k])
    copy = registry.get("_copyto")
    add = registry.get("elemwise_add")
    t.label = "_grad_out"
    buf_for = {}
    fwd_vals = {o for st in fwd for o in st[3]}
    for v, w, a in zip(plan.inputs, need, grad_add):
        g = grads.get(v) if w else None
        if g is None:
            plan.grads.append(None)
            continue
        t.cur = t.ctxs[v]
        if a:
            # executor grad_req='add': buffer (EXT) += g
            buf = t.new(t.shapes[v], t.dtypes[v], EXT)
            buf_for[v] = buf.vid
            t.steps.append((add, add.parse({}), [buf.vid, g.vid], [buf.vid], "_grad_add"))
            plan.grads.append(buf.vid)
            continue
        gv = g.vid
        if t.kinds[gv] != INT or gv in fwd_vals:
            gv = t.apply1(copy, copy.parse({}), [g]).vid
        t.kinds[gv] = OWN
        plan.grads.append(gv)
    plan.grad_bufs = buf_for
    plan.need = list(need)
    plan.bwd = t.steps[start:]


def _prune(plan):
    """Drop backward steps whose results no gradient needs (the data gradient of a first
    layer); steps that update state in place (BatchNorm's moving statistics) stay."""
    needed = {g for g in plan.grads if g is not None}
    keep = []
    for op, attrs, ins, outs, label in reversed(plan.bwd):
        if op.mutate or any(o in needed for o in outs):
            keep.append((op, registry.skip_unneeded_outputs(op, attrs, outs, needed), ins, outs,
                         label))
            needed.update(ins)
    keep.reverse()
    plan.bwd = keep




def _alias_reshapes(t, plan):
    """A reshape whose result is an intermediate becomes a view of its input (no step): the
    memory plan treats a value and its views as one (liveness over all of them)."""
    mutated = set()
    for op, _, ins, _, _ in plan.fwd + plan.bwd:
        mutated.update(ins[k] for k in op.mutate if k < len(ins))
    rootable = set(plan.inputs) | set(t.const)
    alias = {}
    for steps in (plan.fwd, plan.bwd):
        kept = []
        for st in steps:
            op, _, ins, outs, _ = st
            if op.name in _RESHAPES and t.kinds[outs[0]] == INT:
                r = alias.get(ins[0], ins[0])
                if (t.kinds[r] == INT or r in rootable) and r not in mutated \
                        and ins[0] not in mutated:
                    alias[outs[0]] = r
                    continue
            kept.append(st)
        steps[:] = kept
    plan.alias = alias


def _autograd_order(fwd, heads, needs):
    """The recorded steps in the order autograd's backward walks them (tape.pyx's _topo), so
    that gradients are summed in the same order and planned results equal autograd's bit for
    bit."""
    producer = {}
    recorded = set()
    for si, (op, _, ins, outs, _) in enumerate(fwd):
        for o in outs:
            producer[o] = si
        if any(i in needs for k, i in enumerate(ins) if k not in op.mutate):
            recorded.add(si)

    def parents(si):
        op, _, ins, _, _ = fwd[si]
        return [producer[i] for k, i in enumerate(ins)
                if k not in op.mutate and producer.get(i) in recorded]
    order, seen = [], set()
    for h in heads:
        root = producer.get(h)
        if root is None or root not in recorded or root in seen:
            continue
        stack = [(root, False)]
        while stack:
            si, done = stack.pop()
            if done:
                order.append(si)
                continue
            if si in seen:
                continue
            seen.add(si)
            stack.append((si, True))
            for p in parents(si):
                if p not in seen:
                    stack.append((p, False))
    order.reverse()
    return [fwd[si] for si in order]


def _plan_memory(t, plan, nf, inplace):
    seq = plan.fwd + plan.bwd
    end = len(seq)
    alias = plan.alias
    last, first = {}, {}
    for si, (_, _, ins, outs, _) in enumerate(seq):
        for o in outs:
            first.setdefault(o, si)
        for i in ins:
            last[alias.get(i, i)] = si
    # with random operators in the forward (Dropout) a second backward (retain_graph) cannot
    # recompute the forward, so forward values the backward reads stay live to the end;
    # otherwise the backward reuses their storage and a second backward recomputes them first
    plan.tight = not any("random" in op.resources for op, _, _, _, _ in plan.fwd)
    if not plan.tight:
        for v, si in list(last.items()):
            if si >= nf and first.get(v, -1) < nf:
                last[v] = end
    kinds = t.kinds
    slot_of, sizes, refs, free = {}, [], [], []
    pairs = []
    for si, (op, _, ins, outs, _) in enumerate(seq):
        mut = op.mutate
        ins = [alias.get(i, i) for i in ins]
        for j, o in enumerate(outs):
            if kinds[o] != INT or o in slot_of:
                continue
            nb = t.nbytes(o)
            s = None
            if inplace:
                for a, b in op.inplace:
                    if b != j or a >= len(ins) or a in mut:
                        continue
                    i = ins[a]
                    si_ = slot_of.get(i)
                    if si_ is None or last.get(i) != si or ins.count(i) != 1 \
                            or refs[si_] != 1 or t.nbytes(i) != nb:
                        continue
                    s = si_
                    pairs.append((i, o))
                    break
            if s is None:
                fit = [f for f in free if sizes[f] >= nb]
                if fit:
                    s = min(fit, key=lambda f: sizes[f])
                    free.remove(s)
                elif free:
                    s = max(free, key=lambda f: sizes[f])
                    free.remove(s)
                    sizes[s] = nb
                else:
                    s = len(sizes)
                    sizes.append(nb)
                    refs.append(0)
            slot_of[o] = s
            refs[s] += 1
        done = set(i for i in ins if last.get(i) == si)
        done.update(o for o in outs if o not in last)
        for v in done:
            s = slot_of.get(v)
            if s is None:
                continue
            refs[s] -= 1
            if refs[s] == 0:
                free.append(s)
    plan.first = first
    plan.last = {v: last.get(v, first[v]) for v in slot_of}
    plan.inplace_pairs = pairs
    # the pass above decided the in-place hand-overs; place storage offline now that every
    # lifetime is known: values joined by hand-overs form a group, groups go largest first
    # into the first slot whose groups are all dead before it starts or born after it ends
    plan.slot_of, plan.slot_bytes = _place(t, plan, list(slot_of))


_ALIGN = 64


def _place(t, plan, values):
    """Byte offsets in one arena. Values joined by in-place hand-overs form a group; groups go
    largest first, each at the lowest offset where it overlaps no already placed group that is
    live at the same time (offset-based greedy by size). Returns ({value: 0}, [arena bytes])
    and sets plan.offset_of."""
    parent = {v: v for v in values}

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v
    for a, b in plan.inplace_pairs:
        parent[find(b)] = find(a)
    groups = {}
    for v in values:
        groups.setdefault(find(v), []).append(v)
    items = []
    for members in groups.values():
        lo = min(plan.first[v] for v in members)
        hi = max(plan.last[v] for v in members)
        nb = max(t.nbytes(v) for v in members)
        nb = (nb + _ALIGN - 1) // _ALIGN * _ALIGN
        items.append((nb, lo, hi, members))
    items.sort(key=lambda x: (-x[0], x[1]))
    # placed groups as arrays (offset, end, lo, hi): the search below is a few vector operations
    # per group instead of a Python loop over every placed group (an unrolled LSTM has ~1,000)
    n_items = len(items)
    p_off = np.zeros(n_items, np.int64)
    p_end = np.zeros(n_items, np.int64)
    p_lo = np.zeros(n_items, np.int64)
    p_hi = np.zeros(n_items, np.int64)
    offset_of = {}
    total = 0
    for k, (nb, lo, hi, members) in enumerate(items):
        live = (p_hi[:k] >= lo) & (p_lo[:k] <= hi)
        b0, b1 = p_off[:k][live], p_end[:k][live]
        off = 0
        if b0.size:
            order = np.lexsort((b1, b0))
            b0, b1 = b0[order], b1[order]
            # the gap before each busy range starts where every earlier range has ended;
            # best fit: the smallest gap that holds nb, the lowest of equal ones
            starts = np.concatenate(([0], np.maximum.accumulate(b1)[:-1]))
            np.maximum(starts, 0, out=starts)
            gaps = b0 - starts
            fits = np.nonzero(gaps >= nb)[0]
            if fits.size:
                off = int(starts[fits[np.argmin(gaps[fits])]])
            else:
                off = max(int(b1.max()), 0)
        p_off[k], p_end[k], p_lo[k], p_hi[k] = off, off + nb, lo, hi
        total = max(total, off + nb)
        for v in members:
            offset_of[v] = off
    plan.offset_of = offset_of
    return {v: 0 for v in values}, [total]
