"""MXNet 1.9.1's symbolic control flow: ``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``.

The Python bodies are traced once into subgraphs (Symbols) held by one ``_foreach``,
``_while_loop`` or ``_cond`` node, in MXNet's layout: the node's inputs are the outer values the
subgraphs read, and the ``*_locs`` attributes say which subgraph input each one feeds; the
subgraphs travel in the node's ``subgraphs`` (and in ``-symbol.json``, as MXNet writes them).

Running such a node runs its subgraphs node by node on NDArrays (the executor's imperative
evaluator) as often as the loop needs, under the caller's autograd state, so gradients flow
through the recorded iterations. The planned (traced) executor cannot unroll a data-dependent
loop: the operators raise ``Untraceable`` there and the executor/CachedOp run the graph node by
node. The operators live at this layer because they evaluate Symbols."""
import copy as _copy

import numpy as _np

from ..attribute import AttrScope
from ..base import MXNetError
from ..name import NameManager
from .. import ndarray as _nd
from ..ndarray import NDArray, _internal as _nd_internal, register as _nd_register
from ..ndarray.control_flow import _flatten as _nd_flatten, _regroup
from ..ops.registry import OpDef, Param, Untraceable, register
from .infer import infer_graph
from . import symbol as _symbol_module
from .symbol import Symbol, _Node, _sym_module, var

__all__ = ["foreach", "while_loop", "cond"]

# ---- running subgraphs ---------------------------------------------------------------------------
class _SubgraphRunner:
    """A subgraph bound once for the node-by-node evaluator; called with its inputs in
    ``list_inputs()`` order."""

    def __init__(self, sym):
        # the executor's planner and node-by-node evaluator, installed into the symbol layer by
        # mxc.executor when it loads (symbol sits below executor: no import of it here)
        executor = _symbol_module._executor
        self._run_graph = executor._run_graph
        self.plan = executor._Plan(sym)
        where = {n: i for i, n in enumerate(sym.list_inputs())}
        self.arg_pos = [where[self.plan.nodes[s].name] for s in self.plan.arg_slots]
        self.aux_pos = [where[self.plan.nodes[s].name] for s in self.plan.aux_slots]

    def __call__(self, inputs):
        return self._run_graph(self.plan, [inputs[i] for i in self.arg_pos],
                               [inputs[i] for i in self.aux_pos])


def _eager(opname, inputs):
    """The planned executor traces shapes only: a loop decided by values cannot be planned."""
    if not all(isinstance(x, NDArray) for x in inputs):
        raise Untraceable(f"{opname} runs its subgraphs on values")


def _truth(p, opname):
    if p.size != 1:
        raise MXNetError(f"{opname}: the condition must be a scalar, got shape {p.shape}")
    return bool(p.asnumpy().reshape(-1)[0])


def _slice0(F, x, t):
    """Row t of x as the loop body sees it (a (1,) array for a 1-d x, as MXNet's ``x[t]``)."""
    s = F.slice_axis(x, axis=0, begin=t, end=t + 1)
    return s.reshape(x.shape[1:]) if x.ndim > 1 else s


def _foreach_run(F, attrs, *inputs):
    _eager("_foreach", inputs)
    run = _SubgraphRunner(attrs["_subgraphs"][0])
    dlocs, slocs, rlocs = attrs["in_data_locs"], attrs["in_state_locs"], attrs["remain_locs"]
    nd_, ns = len(dlocs), len(slocs)
    data, states, rest = inputs[:nd_], list(inputs[nd_:nd_ + ns]), inputs[nd_ + ns:]
    n_out = attrs["num_out_data"]
    sub_in = [None] * (nd_ + ns + len(rest))
    for loc, x in zip(rlocs, rest):
        sub_in[loc] = x
    steps = []
    for t in range(data[0].shape[0]):
        for loc, x in zip(dlocs, data):
            sub_in[loc] = _slice0(F, x, t)
        for loc, x in zip(slocs, states):
            sub_in[loc] = x
        res = run(sub_in)
        steps.append(res[:n_out])
        states = res[n_out:]
    if not steps:
        raise MXNetError("_foreach: the data has no rows (dimension 0 is 0)")
    outs = [F.stack(*col, axis=0) for col in zip(*steps)]
    return outs + list(states) if len(outs) + len(states) > 1 else (outs + list(states))[0]


def _while_run(F, attrs, *inputs):
    _eager("_while_loop", inputs)
    cond_g, func_g = attrs["_subgraphs"]
    run_cond, run_func = _SubgraphRunner(cond_g), _SubgraphRunner(func_g)
    clocs, flocs, vlocs = attrs["cond_input_locs"], attrs["func_input_locs"], attrs["func_var_locs"]
    n_out, max_it = attrs["num_out_data"], attrs["max_iterations"]
    cur = list(inputs)
    # the outer input each loop variable comes from
    var_outer = [flocs[v] for v in vlocs]
    steps = []
    while len(steps) < max_it:
        if not _truth(run_cond([cur[i] for i in clocs])[0], "_while_loop"):
            break
        res = run_func([cur[i] for i in flocs])
        steps.append(res[:n_out])
        for j, o in enumerate(res[n_out:]):
            cur[var_outer[j]] = o
    if steps:
        shapes = [(max_it,) + s.shape for s in steps[0]]
        dtypes = [s.dtype for s in steps[0]]
    elif n_out:
        shapes, dtypes = _while_infer(attrs, [x.shape for x in inputs], [x.dtype for x in inputs])
    outs = []
    for k in range(n_out):
        col = [s[k].expand_dims(0) for s in steps]
        if len(steps) < max_it:
            # MXNet's buffer has max_iterations rows; the rows past the last step are zeros here
            col.append(F.zeros((max_it - len(steps),) + tuple(shapes[k][1:]), ctx=inputs[0].context,
                               dtype=dtypes[k]))
        outs.append(F.concat(*col, dim=0) if len(col) > 1 else col[0])
    # a loop variable never written by a step is handed out as a copy (as MXNet's output)
    final = [cur[i] if len(steps) else F.identity(cur[i]) for i in var_outer]
    res = outs + final
    return res if len(res) > 1 else res[0]


def _cond_run(F, attrs, *inputs):
    _eager("_cond", inputs)
    cond_g, then_g, else_g = attrs["_subgraphs"]
    p = _SubgraphRunner(cond_g)([inputs[i] for i in attrs["cond_input_locs"]])[0]
    if _truth(p, "_cond"):
        g, locs = then_g, attrs["then_input_locs"]
    else:
        g, locs = else_g, attrs["else_input_locs"]
    res = _SubgraphRunner(g)([inputs[i] for i in locs])
    # an output that is an input of the node is handed out as a copy
    res = [F.identity(r) if any(r is x for x in inputs) else r for r in res]
    return res if len(res) > 1 else res[0]


# ---- shape and dtype inference through the subgraphs ------------------------------------------
def _sub_infer(sym, shapes, dtypes, partial=False):
    """Output shapes/dtypes of subgraph `sym` from its inputs' (list_inputs order); with
    partial, also the inputs' shapes as inferred (None where unknown)."""
    names = sym.list_inputs()
    ks = {n: s for n, s in zip(names, shapes) if s is not None}
    kd = {n: _np.dtype(d).name for n, d in zip(names, dtypes) if d is not None}
    S, D = infer_graph(sym, ks, kd, default_dtype="float32")
    outs = [(S.get((id(e[0]), e[1])), D.get((id(e[0]), e[1]))) for e in sym._outputs]
    if not partial:
        return [o[0] for o in outs], [o[1] for o in outs]
    by_name = {}
    for n in _sub_vars(sym):
        by_name[n.name] = S.get((id(n), 0))
    return [o[0] for o in outs], [by_name.get(n) for n in names]


def _sub_vars(sym):
    from .symbol import _topo
    return [n for n in _topo(sym._outputs) if n.op is None]


def _complete(shapes, what):
    for s in shapes:
        if s is None or any(int(x) <= 0 for x in s):
            raise ValueError(f"{what}: the subgraph's output shapes cannot be inferred")


def _foreach_sub_shapes(attrs, in_shapes):
    dlocs, slocs, rlocs = attrs["in_data_locs"], attrs["in_state_locs"], attrs["remain_locs"]
    nd_, ns = len(dlocs), len(slocs)
    sub = [None] * len(in_shapes)
    for i, loc in enumerate(dlocs):
        s = in_shapes[i]
        sub[loc] = None if s is None else (tuple(s[1:]) if len(s) > 1 else (1,))
    for i, loc in enumerate(slocs):
        sub[loc] = in_shapes[nd_ + i]
    for i, loc in enumerate(rlocs):
        sub[loc] = in_shapes[nd_ + ns + i]
    return sub


def _foreach_infer(attrs, in_shapes, in_dtypes):
    sub = attrs["_subgraphs"][0]
    dlocs = attrs["in_data_locs"]
    sub_d = [None] * len(in_dtypes)
    order = list(dlocs) + list(attrs["in_state_locs"]) + list(attrs["remain_locs"])
    for loc, d in zip(order, in_dtypes):
        sub_d[loc] = d
    oshapes, odtypes = _sub_infer(sub, _foreach_sub_shapes(attrs, in_shapes), sub_d)
    _complete(oshapes, "_foreach")
    n_out = attrs["num_out_data"]
    T = in_shapes[0][0]
    return ([(T,) + tuple(s) for s in oshapes[:n_out]] + [tuple(s) for s in oshapes[n_out:]],
            odtypes)


def _foreach_infer_inputs(attrs, in_shapes):
    """Unknown state shapes from what the body does with the known ones (MXNet's backward
    shape inference through the subgraph)."""
    sub = attrs["_subgraphs"][0]
    order = list(attrs["in_data_locs"]) + list(attrs["in_state_locs"]) + list(attrs["remain_locs"])
    sub_s = [s if s is not None and all(int(x) > 0 for x in s) else None
             for s in _foreach_sub_shapes(attrs, in_shapes)]
    _, sub_in = _sub_infer(sub, sub_s, [None] * len(sub_s), partial=True)
    nd_ = len(attrs["in_data_locs"])
    out = list(in_shapes)
    for i, loc in enumerate(order):
        if i >= nd_ and out[i] is None and sub_in[loc] is not None:
            out[i] = sub_in[loc]
    return out


def _foreach_infer_partial(attrs, in_shapes):
    """Output shapes when dimension 0 of the data is unknown (0): the body's shapes are known."""
    sub = attrs["_subgraphs"][0]
    sub_s = _foreach_sub_shapes(attrs, in_shapes)
    if not all(s is not None and all(int(x) > 0 for x in s) for s in sub_s):
        return None
    oshapes, _ = _sub_infer(sub, sub_s, [None] * len(sub_s))
    n_out = attrs["num_out_data"]
    T = in_shapes[0][0]
    return ([None if s is None else (T,) + tuple(s) for s in oshapes[:n_out]]
            + list(oshapes[n_out:]))


def _while_infer(attrs, in_shapes, in_dtypes):
    func = attrs["_subgraphs"][1]
    flocs = attrs["func_input_locs"]
    oshapes, odtypes = _sub_infer(func, [in_shapes[i] for i in flocs],
                                  [in_dtypes[i] for i in flocs])
    _complete(oshapes, "_while_loop")
    n_out = attrs["num_out_data"]
    return ([(attrs["max_iterations"],) + tuple(s) for s in oshapes[:n_out]]
            + [tuple(s) for s in oshapes[n_out:]], odtypes)


def _cond_infer(attrs, in_shapes, in_dtypes):
    then_g = attrs["_subgraphs"][1]
    locs = attrs["then_input_locs"]
    oshapes, odtypes = _sub_infer(then_g, [in_shapes[i] for i in locs],
                                  [in_dtypes[i] for i in locs])
    _complete(oshapes, "_cond")
    return [tuple(s) for s in oshapes], odtypes


def _locs(name):
    return Param(name, "shape", ())


_COUNT = (Param("num_args", int, required=True), Param("num_outputs", int, required=True))

register(OpDef("_foreach", inputs=(), variadic="num_args", composite=_foreach_run,
               infer=_foreach_infer, infer_inputs=_foreach_infer_inputs,
               infer_partial=_foreach_infer_partial,
               params=_COUNT + (Param("num_out_data", int, 0), _locs("in_state_locs"),
                                _locs("in_data_locs"), _locs("remain_locs")),
               num_outputs=lambda a: a["num_outputs"],
               doc="Run a subgraph over the rows of its data inputs (MXNet's foreach)."))
register(OpDef("_while_loop", inputs=(), variadic="num_args", composite=_while_run,
               infer=_while_infer,
               params=_COUNT + (Param("num_out_data", int, 0), Param("max_iterations", int, 0),
                                _locs("cond_input_locs"), _locs("func_input_locs"),
                                _locs("func_var_locs")),
               num_outputs=lambda a: a["num_outputs"],
               doc="Run a body subgraph while a condition subgraph holds (MXNet's while_loop)."))
register(OpDef("_cond", inputs=(), variadic="num_args", composite=_cond_run, infer=_cond_infer,
               params=_COUNT + (_locs("cond_input_locs"), _locs("then_input_locs"),
                                _locs("else_input_locs")),
               num_outputs=lambda a: a["num_outputs"],
               doc="Run one of two subgraphs by a scalar condition subgraph (MXNet's cond)."))
# mx.nd has a function for every operator (mx.nd._foreach, mx.nd._internal._foreach as MXNet);
# mx.nd was built before these were registered
_nd_register.populate(vars(_nd))
_nd_internal._populate()


# ---- building the subgraphs (the Python front) -------------------------------------------------
def _outputs_width(sym):
    n = len(sym.list_outputs())
    return int(n if n > 1 else 0)


def _flatten(args, what):
    return _nd_flatten(args, what, Symbol, _outputs_width)


def _check(items, what):
    if not all(isinstance(x, Symbol) for x in items):
        raise AssertionError(what)


def _uniq_name(sym):
    """The name of the variable standing for an outer symbol inside a subgraph ("data-0")."""
    return f"{sym.name}-{sym._outputs[0][1]}"


def _subgraph_name(name):
    outer = AttrScope._current.value._attr.get("__subgraph_name__", "")
    if outer:
        name = f"{outer}${name}"
    AttrScope._subgraph_names[name] += 1
    return name + str(AttrScope._subgraph_names[name] - 1)


def _in_graph(sym, name):
    return sym._outputs[0][0].attrs.get("__subgraph_name__", "") == name


def _group_outputs(syms, name, n_data=None):
    """The subgraph's outputs: a symbol that is one of its inputs or comes from outside the
    subgraph goes through an identity, as MXNet's; so does (foreach) a state that repeats one
    of the first `n_data` outputs."""
    S = _sym_module()
    inputs = set(S.Group(list(syms)).list_inputs()) if syms else set()
    data_names = {o.name for o in syms[:n_data]} if n_data is not None else set()
    out = []
    for i, s in enumerate(syms):
        repeated = n_data is not None and i >= n_data and s.name in data_names
        if s.name in inputs or not _in_graph(s, name) or repeated:
            out.append(S.identity(s))
        else:
            out.append(s)
    return S.Group(out)


def _cut(graph, name):
    """Subgraph `graph` with every entry from outside it (no ``__subgraph_name__`` == name)
    replaced by a variable, MXNet's CutGraph: a variable keeps its name, an operator output is
    named as its output ("_mulscalar0_output"). Returns the new Symbol and {variable name:
    outer Symbol}."""
    memo, cut, outer = {}, {}, {}

    def inside(node):
        return node.attrs.get("__subgraph_name__", "") == name

    def entry(e):
        node, idx = e[0], e[1]
        if inside(node):
            return (memo[id(node)], idx, e[2])
        key = (id(node), idx)
        if key not in cut:
            vname = node.name if node.op is None else node.output_names()[idx]
            cut[key] = _Node(None, vname)
            outer[vname] = Symbol([(node, idx, e[2] if node.op is None else 0)])
        return (cut[key], 0, 0)

    # nodes of the subgraph, inputs first, not descending into outer nodes
    order, seen = [], set()
    for head in graph._outputs:
        stack = [(head[0], 0)]
        if id(head[0]) in seen or not inside(head[0]):
            continue
        seen.add(id(head[0]))
        while stack:
            node, i = stack.pop()
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i][0]
                if id(child) not in seen and inside(child):
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    for node in order:
        new = _Node(node.op, node.name, dict(node.attrs), [entry(e) for e in node.inputs],
                    node.subgraphs)
        new.version = node.version
        memo[id(node)] = new
    return Symbol([entry(e) for e in graph._outputs]), outer


def _make_node(opname, subgraphs, inputs, attrs, nout):
    from ..ops import registry
    op = registry.get(opname)
    attrs = {k: (str(list(v)) if isinstance(v, (list, tuple)) else str(v))
             for k, v in attrs.items()}
    attrs["num_args"] = str(len(inputs) + len(subgraphs))
    attrs["num_outputs"] = str(nout)
    attrs.update(AttrScope._current.value.get(None))
    node = _Node(op, NameManager._current.value.get(None, opname), attrs,
                 [s._entry(f"{opname}: input") for s in inputs], tuple(subgraphs))
    return [Symbol([(node, i, 0)]) for i in range(nout)]


def _outer_inputs(sub, outer):
    """For each input of `sub` (list_inputs order), the outer Symbol feeding it: a cut entry,
    or a copy of a variable made inside the body (a subgraph shares no node with its parent)."""
    by_name = {n.name: n for n in _sub_vars(sub)}
    res = []
    for n in sub.list_inputs():
        if n in outer:
            res.append(outer[n])
        else:
            v = by_name[n]
            res.append(Symbol([(_Node(None, v.name, dict(v.attrs)), 0, 0)]))
    return res


def _unique_inputs(sub):
    names = sub.list_inputs()
    if len(set(names)) != len(names):
        raise AssertionError(f"The inputs of the subgraph don't have unique names: {names}")
    return names


def foreach(body, data, init_states, name="foreach"):
    """Run `body(data_slice, states) -> (outputs, new_states)` over dimension 0 of `data`
    (a Symbol or nested list); returns (stacked outputs, final states), as MXNet."""
    flat_data, data_fmt = _flatten(data, "foreach input")
    _check(flat_data, "data should be a symbol or a nested list of symbols")
    flat_states, state_fmt = _flatten(init_states, "foreach states")
    _check(flat_states, "init_states should be a symbol or a nested list of symbols")
    name = _subgraph_name(name)
    with AttrScope(__subgraph_name__=name):
        eles, _ = _regroup([var(_uniq_name(s)) for s in flat_data], data_fmt)
        states, _ = _regroup([var(_uniq_name(s)) for s in flat_states], _copy.deepcopy(state_fmt))
        outs, new_states = body(eles, states)
        outs, out_fmt = _flatten(outs, "foreach output")
        new_states, new_fmt = _flatten(new_states, "foreach loop_vars")
        if new_fmt != state_fmt:
            raise AssertionError("The input and output loop_vars have different format")
        _check(outs, "the output should be an NDArray or a nested list of NDArrays")
        _check(new_states, "the output states should be an NDArray or a nested list of NDArrays")
        g = _group_outputs(list(outs) + list(new_states), name, n_data=len(outs))
    sub, outer = _cut(g, name)
    names = _unique_inputs(sub)
    data_names = [_uniq_name(s) for s in flat_data]
    state_names = [_uniq_name(s) for s in flat_states]
    for n in data_names:
        if n not in names:
            raise AssertionError("the data arrays have to be used in the loop body")
    for n in state_names:
        if n not in names:
            raise AssertionError("the state arrays have to be used in the loop body")
    feeds = _outer_inputs(sub, outer)
    remain = [i for i, n in enumerate(names) if n not in data_names and n not in state_names]
    ins = list(flat_data) + list(flat_states) + [feeds[i] for i in remain]
    res = _make_node("_foreach", [sub], ins, {
        "in_data_locs": [names.index(n) for n in data_names],
        "in_state_locs": [names.index(n) for n in state_names],
        "num_out_data": len(outs), "remain_locs": remain}, len(outs) + len(new_states))
    o, _ = _regroup(res[:len(outs)], out_fmt)
    s, _ = _regroup(res[len(outs):], state_fmt)
    return o, s


def _union_inputs(graphs, loop_syms, share_by_name=False):
    """The outer inputs of several subgraphs (each once) and, per subgraph, where each of its
    inputs is in that list."""
    inputs, where, locs = [], {}, []
    for gi, (sub, outer) in enumerate(graphs):
        by_name = {n.name: n for n in _sub_vars(sub)}
        il = []
        for n in _unique_inputs(sub):
            if n in loop_syms:
                s = loop_syms[n]
                key = ("loop", n)
            elif n in outer:
                # as MXNet: a cut entry is shared between subgraphs only where cond's
                # lookup by name finds it (an outer variable of the same name)
                s = outer[n]
                key = ("name", n) if share_by_name and s.name == n else ("cut", gi, n)
            else:
                v = by_name[n]
                s = Symbol([(_Node(None, v.name, dict(v.attrs)), 0, 0)])
                key = ("var", gi, n)
            if key not in where:
                where[key] = len(inputs)
                inputs.append(s)
            il.append(where[key])
        locs.append(il)
    return inputs, locs


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run `func(*loop_vars) -> (step_output, new_loop_vars)` while `cond(*loop_vars)` holds,
    at most `max_iterations` times; outputs have `max_iterations` rows, as MXNet's."""
    flat_vars, var_fmt = _flatten(loop_vars, "while loop_vars")
    _check(flat_vars, "loop_vars should be a symbol or a nested list of symbols")
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    try:
        max_iterations = int(max_iterations.asscalar() if hasattr(max_iterations, "asscalar")
                             else max_iterations)
    except (TypeError, ValueError):
        raise ValueError("Cannot convert max_iteration to python int") from None
    if len(loop_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")

    def make(fn, sub_name):
        sub_name = _subgraph_name(sub_name)
        with AttrScope(__subgraph_name__=sub_name):
            new_vars, _ = _regroup([var(_uniq_name(s)) for s in flat_vars], var_fmt)
            outs, states, out_fmt = fn(new_vars)
            g = _group_outputs(list(outs) + list(states), sub_name)
        sub, outer = _cut(g, sub_name)
        return sub, outer, len(outs), out_fmt

    def cond_fn(vs):
        r = cond(*vs)
        if not isinstance(r, Symbol):
            raise ValueError("Return of cond must be a Symbol")
        return [], [r], None

    def func_fn(vs):
        step, new = func(*vs)
        step = [] if step is None else (list(step) if isinstance(step, tuple) else step)
        new = [] if new is None else (list(new) if isinstance(new, tuple) else new)
        step, out_fmt = _flatten(step, "while output")
        new, _ = _flatten(new, "while loop_vars")
        if len(vs) != len(new):
            raise ValueError("The number of loop_vars should be consistent during the loop")
        return step, new, out_fmt

    cond_sub, cond_outer, _, _ = make(cond_fn, name + "_cond")
    func_sub, func_outer, n_out, out_fmt = make(func_fn, name + "_func")
    loop_syms = {_uniq_name(s): s for s in flat_vars}
    inputs, (clocs, flocs) = _union_inputs([(cond_sub, cond_outer), (func_sub, func_outer)],
                                           loop_syms)
    fnames = func_sub.list_inputs()
    var_locs = []
    for i, s in enumerate(flat_vars, 1):
        n = _uniq_name(s)
        if n not in fnames:
            raise ValueError(f"The {i}-th loop_var doesn't involve into the computation")
        var_locs.append(fnames.index(n))
    res = _make_node("_while_loop", [cond_sub, func_sub], inputs, {
        "cond_input_locs": clocs, "func_input_locs": flocs, "func_var_locs": var_locs,
        "max_iterations": max_iterations, "num_out_data": n_out}, n_out + len(flat_vars))
    outs, _ = _regroup(res[:n_out], out_fmt) if n_out else ([], None)
    final, _ = _regroup(res[n_out:], var_fmt)
    return outs, final


def cond(pred, then_func, else_func, name="cond"):
    """`then_func()` if the scalar Symbol `pred` is true, else `else_func()`, as MXNet's."""

    def make(fn, sub_name):
        sub_name = _subgraph_name(sub_name)
        with AttrScope(__subgraph_name__=sub_name):
            outs, fmt = _flatten(fn(), "cond outputs")
            g = _group_outputs(list(outs), sub_name)
        sub, outer = _cut(g, sub_name)
        return sub, outer, len(outs), fmt

    cond_sub, cond_outer, n_pred, _ = make(lambda: pred, name + "_pred")
    if n_pred != 1:
        raise ValueError("pred should always be a single output")
    then_sub, then_outer, n_then, then_fmt = make(then_func, name + "_then")
    else_sub, else_outer, n_else, _ = make(else_func, name + "_else")
    if n_then != n_else:
        raise ValueError("Number of outputs differs between then-branch and else-branch")
    inputs, (clocs, tlocs, elocs) = _union_inputs(
        [(cond_sub, cond_outer), (then_sub, then_outer), (else_sub, else_outer)], {}, True)
    res = _make_node("_cond", [cond_sub, then_sub, else_sub], inputs, {
        "cond_input_locs": clocs, "then_input_locs": tlocs, "else_input_locs": elocs}, n_then)
    out, _ = _regroup(res, then_fmt)
    return out
