"""Autograd's tape: graph nodes, recording, and the backward walk (mx.autograd is the API).

An array in a graph carries an AGInfo in ``_ag``: a variable (``node`` None; gradient buffer and
grad_req) or output ``index`` of a recorded Node. A Node keeps its operator, typed attributes,
the AGInfo of each input, and views of its inputs and outputs: new array objects on the same
storage without autograd state, so arrays and nodes form no reference cycles and a graph is
freed with its last output. Recording is on the per-operator hot path, hence Cython.
"""
from mxc._core.handle cimport NDArrayBase, copy_layout
from mxc._core.engine cimport profile_recording
from mxc._core.engine import ProfileScope
from mxc.base import MXNetError
from mxc._core import modes as _modes_mod
from mxc._core.handle import (make_array as _make_array, empty as _empty,
                              fast_unary as _fast_unary, fast_binary as _fast_binary,
                              fast_scalar as _fast_scalar)

cdef object _M = _modes_mod._M
# called as hook(node, grads) after each node's gradient is computed (the executor's monitor
# names backward values with it); None almost always
cdef object _grad_hook = None


# called as runner(node, in_views, out_views, out_grads) -> gradients or None, for every node of
# a backward that does not record (mxc.autograd's prepared gradients); None: take OpDef.grad
cdef object _grad_runner = None


cdef class GradPlans:
    """A grad runner that replays prepared gradients (mxc.autograd builds them): per node, a
    plan is looked up by (operator, attributes, context, shapes, dtype codes, which inputs need
    a gradient, training flag), made by ``trace(op, attrs, ins, outs, ogs, needs, ctx)`` (a
    plan, or False: take OpDef.grad) on a miss, and its steps pushed. The per-node work of a
    backward is this lookup and a push per kernel, so it is here in C.

    A plan has ``nvals``, ``consts`` ((slot, array) pairs), ``steps`` and ``results``; slots
    0.. hold the inputs, outputs and output gradients. A step is (op or None for a reshape
    view, attrs, input slots, output slots, shapes, dtypes, fast), where fast is None or
    (kind, FastKernel, scalar) for a kernel handle's elementwise fast path runs (1 unary,
    2 binary, 3 array-scalar); ``reads`` holds the slots of the inputs, outputs and output
    gradients that a step or a result reads.

    An output gradient may be None (no gradient flows into that output: its value is zeros);
    the zeros are made, by ``zeros_like(output)``, only where the plan reads them (a hidden
    argmax's gradient never is, so a backward does not fill an array nobody reads)."""
    cdef public dict plans
    cdef public object trace
    cdef public type op_type        # only nodes of this operator class are prepared
    cdef public type array_type     # the class of the gradients made
    cdef public Py_ssize_t max_plans
    cdef public object zeros_like   # makes the zeros of an output gradient that is None

    def __init__(self, trace, type op_type, type array_type, Py_ssize_t max_plans=4096,
                 zeros_like=None):
        self.plans = {}
        self.trace = trace
        self.op_type = op_type
        self.array_type = array_type
        self.max_plans = max_plans
        self.zeros_like = zeros_like

    def __call__(self, node, list ins, list outs, list ogs, list dests=None):
        return self.run(<Node?>node, ins, outs, ogs, dests)

    cdef object run(self, Node node, list ins, list outs, list ogs, list dests=None):
        """`dests`: None, or per input the array its gradient may be written into (a
        variable's .grad that this gradient alone sets); the kernel making that result
        writes there, so the result is that array (or a view of it) and needs no copy."""
        cdef object op = node.op
        cdef NDArrayBase a, src, dst
        cdef list arrs, vals, res
        cdef dict into = None
        cdef tuple step, fast
        cdef object sins, souts
        cdef Py_ssize_t i, n, og0
        cdef int kind
        cdef bint absent = False
        if type(op) is not self.op_type or op.grad is None:
            return None
        attrs = node.attrs
        og0 = len(ins) + len(outs)
        arrs = ins + outs + ogs
        n = len(arrs)
        ctx = (<NDArrayBase?>arrs[0])._ctx
        shapes = [None] * n
        codes = [None] * n
        for i in range(n):
            if arrs[i] is None:      # an absent output gradient: zeros of its output's kind
                if self.zeros_like is None:
                    return None
                absent = True
                a = <NDArrayBase?>outs[i - og0]
            else:
                a = <NDArrayBase?>arrs[i]
            if (<object>a)._sparse or (a._ctx is not ctx and a._ctx != ctx):
                return None
            shapes[i] = a._shape
            codes[i] = a._dcode
        needs = tuple([info is not None for info in node.in_info])
        key = (op, () if attrs is None else tuple(attrs.items()), ctx, tuple(shapes),
               tuple(codes), needs, _M.training)
        try:
            plan = self.plans.get(key)
        except TypeError:            # an unhashable attribute value (a list)
            return None
        if plan is None:
            if len(self.plans) >= self.max_plans:
                self.plans.clear()
            # the trace reads shapes and dtypes only: an output stands for its absent gradient
            plan = self.trace(op, attrs, list(ins), list(outs),
                              [outs[k] if ogs[k] is None else ogs[k] for k in range(len(ogs))],
                              needs, ctx)
            self.plans[key] = plan
        if plan is False:
            return None
        if absent:
            reads = plan.reads
            for i in range(og0, n):
                if arrs[i] is None and i in reads:
                    arrs[i] = self.zeros_like(outs[i - og0])
        if dests is not None:
            into = _redirect(plan, dests, arrs, ctx)
        vals = arrs + [None] * (<Py_ssize_t>plan.nvals - n)    # external values come first
        for v, c in plan.consts:
            vals[v] = c
        cls = self.array_type
        for step in plan.steps:
            sins = step[2]
            souts = step[3]
            if step[0] is None:          # a reshape view
                src = <NDArrayBase>vals[sins[0]]
                vals[souts[0]] = _make_array(cls, src._chunk, src._offset, step[4][0],
                                             step[5][0], ctx)
                continue
            if step[6] is not None and type(vals[sins[0]]) is cls:
                fast = <tuple>step[6]
                kind = fast[0]
                if kind == 2:
                    r = _fast_binary(fast[1], vals[sins[0]], vals[sins[1]])
                elif kind == 1:
                    r = _fast_unary(fast[1], vals[sins[0]])
                else:
                    r = _fast_scalar(fast[1], vals[sins[0]], fast[2])
                if r is not None:        # None: nothing was pushed (no kernel for the dtype)
                    vals[souts[0]] = r
                    continue
            res = [_empty(cls, s, d, ctx) for s, d in zip(step[4], step[5])]
            if into is not None:
                for i in range(len(souts)):
                    dst_o = into.get(souts[i])
                    if dst_o is not None:
                        dst = <NDArrayBase>dst_o
                        a = <NDArrayBase>res[i]
                        if dst._dtype == a._dtype and dst._size == a._size:
                            res[i] = _make_array(cls, dst._chunk, dst._offset, a._shape,
                                                 a._dtype, ctx)
            step[0].forward(step[1], [vals[k] for k in sins], res)
            for k in range(len(souts)):
                vals[souts[k]] = res[k]
        return [None if v is None else vals[v] for v in plan.results]


cdef dict _redirect(object plan, list dests, list arrs, object ctx):
    """{value slot: destination array} for the plan's results that may be written straight
    into `dests` (see GradPlans.run): a result made by a step of the plan (not one of the
    values `arrs` passed in, none of which may share the destination's storage), the result of
    one input only; through a reshape view, the step making its source."""
    cdef dict into = {}
    cdef list results = list(plan.results)
    cdef Py_ssize_t k, n = len(arrs)
    for k in range(min(len(dests), len(results))):
        d = dests[k]
        v = results[k]
        if d is None or v is None or v < n or results.count(v) != 1:
            continue
        if (<NDArrayBase>d)._ctx is not ctx and (<NDArrayBase>d)._ctx != ctx:
            continue
        if _shares_storage(<NDArrayBase>d, arrs):
            continue
        into[v] = d
    if not into:
        return None
    for step in reversed(plan.steps):
        if step[0] is None and step[3][0] in into:
            v = step[2][0]
            if v >= n and v not in into and v not in results:
                into[v] = into[step[3][0]]
    return into


cdef bint _shares_storage(NDArrayBase d, list arrs):
    """Whether `d` is the storage of one of `arrs` (a .grad array that the recorded
    computation read: writing it early would change what a later step reads)."""
    for a in arrs:
        if a is not None and (<NDArrayBase>a)._chunk is d._chunk:
            return True
    return False


def set_grad_runner(runner):
    """Install the prepared-gradient runner; returns the old one."""
    global _grad_runner
    prev, _grad_runner = _grad_runner, runner
    return prev


def set_grad_hook(hook):
    """Install `hook(node, grads)` for the backward passes that follow; returns the old one."""
    global _grad_hook
    prev, _grad_hook = _grad_hook, hook
    return prev


cdef class AGInfo:
    """An array's place in a graph: a variable or output `index` of `node`."""
    cdef public object node
    cdef public int index
    cdef public object grad
    cdef public object grad_req
    cdef public bint fresh          # a backward wrote the gradient (MXNet's _fresh_grad)
    cdef object __weakref__

    def __init__(self, node=None, int index=0, grad=None, grad_req="write"):
        self.fresh = False
        self.node = node
        self.index = index
        self.grad = grad
        self.grad_req = grad_req


cdef class Node:
    """One recorded operation. ``op`` has ``name`` and ``grad(F, attrs, inputs, outputs,
    out_grads)``."""
    cdef public object op
    cdef public object attrs
    cdef public list in_info
    cdef public list in_views
    cdef public list out_views
    cdef public bint freed
    # the training flag the forward ran with; the backward of this node runs in training
    # mode only when both the forward and backward(train_mode=...) are (BatchNorm recorded
    # with train_mode=False differentiates the inference formula, moving stats untouched)
    cdef public bint training
    cdef object __weakref__

    def free(self):
        self.in_views = None
        self.out_views = None
        self.freed = True


cpdef NDArrayBase detach(NDArrayBase x):
    """A new array object on x's storage, without autograd state."""
    cdef type cls = type(x)
    cdef NDArrayBase a = cls.__new__(cls)
    a._chunk = x._chunk
    a._offset = x._offset
    copy_layout(a, x)
    a._ag = None
    return a


cdef NDArrayBase _attached(NDArrayBase view, object info):
    cdef NDArrayBase v = detach(view)
    v._ag = info
    return v


cdef Node _new_node(object op, object attrs, list inputs, list outputs):
    cdef Node node = Node.__new__(Node)
    cdef NDArrayBase x
    cdef Py_ssize_t i, n = len(inputs)
    node.op = op
    node.attrs = attrs
    node.in_info = [None] * n
    node.in_views = [None] * n
    for i in range(n):
        x = <NDArrayBase?>inputs[i]
        info = x._ag
        # an output of a graph an earlier backward freed is a constant here, as in MXNet (its
        # history is gone; differentiating that freed graph itself still raises, in _topo)
        if info is not None:
            prev = (<AGInfo>info).node
            if isinstance(prev, Node) and (<Node>prev).freed:
                info = None
        node.in_info[i] = info
        node.in_views[i] = detach(x)
    node.out_views = [detach(<NDArrayBase?>y) for y in outputs]
    node.freed = False
    node.training = _M.training    # the forward's mode reaches the backward
    return node


cpdef record_fast(object op, object attrs, list inputs, list outputs):
    """Record `op` (the caller checked that recording is on, that an input is in a graph and
    that the outputs are new arrays)."""
    cdef Node node = _new_node(op, attrs, inputs, outputs)
    cdef Py_ssize_t k
    cdef AGInfo info
    for k in range(len(outputs)):
        info = AGInfo.__new__(AGInfo)
        info.node = node
        info.index = <int>k
        info.grad = None
        info.grad_req = "write"
        (<NDArrayBase>outputs[k])._ag = info


INPLACE_MSG = ("Assigning to NDArrays that are already in a computational graph will cause "
               "undefined behavior when evaluating gradients. Please call backward first to "
               "clear the graph or do this out side of a record section. Also note that you "
               "cannot use inplace operations like +=, *=, relu(x, out=x), y[idx]=x, etc inside "
               "a record section.")


cpdef record(object op, object attrs, list inputs, list outputs, tuple skip=()):
    """Record `op` if recording is on and an input (other than the `skip` indices, mutated
    states that are never differentiated) is in a graph."""
    cdef Py_ssize_t i
    cdef NDArrayBase x
    cdef bint found = False
    for i in range(len(inputs)):
        x = <NDArrayBase?>inputs[i]
        if x._ag is not None and (not skip or i not in skip):
            found = True
            break
    if not found:
        return
    for y in outputs:
        if (<NDArrayBase?>y)._ag is not None:
            raise MXNetError(f"{op.name}: {INPLACE_MSG}")
    record_fast(op, attrs, inputs, outputs)
    if skip:
        node = (<NDArrayBase>outputs[0])._ag.node
        for i in skip:
            node.in_info[i] = None


cdef list _topo(list heads_info):
    """Nodes reachable from the heads, consumers before producers (the backward order)."""
    cdef list order = []
    cdef set seen = set()
    cdef list stack
    cdef Node node
    cdef bint done
    for info in heads_info:
        if info is None or (<AGInfo>info).node is None or id((<AGInfo>info).node) in seen:
            continue
        stack = [((<AGInfo>info).node, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.freed:
                raise MXNetError(
                    f"autograd: the graph through {node.op.name} was freed by an earlier backward. "
                    "Pass retain_graph=True to the first backward to differentiate the same graph "
                    "twice, or record it again.")
            stack.append((node, True))
            for pi in node.in_info:
                if pi is not None and (<AGInfo>pi).node is not None \
                        and id((<AGInfo>pi).node) not in seen:
                    stack.append(((<AGInfo>pi).node, False))
    order.reverse()
    return order


cdef inline void _accumulate(dict store, object key, object g):
    prev = store.get(key)
    store[key] = g if prev is None else prev + g


cdef dict _leaf_uses(list order, list infos):
    """{id(AGInfo of a variable): how many gradients it receives} over this backward (a head
    that is a variable counts twice: its head gradient is never written in place)."""
    cdef dict uses = {}
    cdef Node node
    for pi in infos:
        if (<AGInfo>pi).node is None:
            uses[id(pi)] = uses.get(id(pi), 0) + 2
    for node in order:
        for pi in node.in_info:
            if pi is not None and (<AGInfo>pi).node is None:
                uses[id(pi)] = uses.get(id(pi), 0) + 1
    return uses


cdef bint _reached(list heads, Node target):
    """Whether a nonzero gradient flows from `heads` (their AGInfos) to `target`: a path of
    recorded operators that does not pass through BlockGrad, whose gradient is zeros (MXNet's
    Gradient pass treats those as absent). Run only for operators without a gradient."""
    cdef list stack = [(<AGInfo>h).node for h in heads if (<AGInfo>h).node is not None]
    cdef set seen = set()
    cdef Node node
    while stack:
        node = <Node>stack.pop()
        if node is target:
            return True
        if id(node) in seen or node.op.name == "BlockGrad":
            continue
        seen.add(id(node))
        for pi in node.in_info:
            if pi is not None and (<AGInfo>pi).node is not None:
                stack.append((<AGInfo>pi).node)
    return False


cdef list _dests(Node node, dict uses):
    """Per input of `node`: the .grad array of a variable whose gradient (grad_req 'write')
    comes from this input alone, which the gradient may be written into; None if none has."""
    cdef list d = None
    cdef AGInfo info
    cdef Py_ssize_t k, n = len(node.in_info)
    for k in range(n):
        pi = node.in_info[k]
        if pi is None:
            continue
        info = <AGInfo>pi
        if info.node is not None or info.grad is None or info.grad_req != "write" \
                or uses.get(id(info)) != 1 or info.grad._sparse:
            continue
        if d is None:
            d = [None] * n
        d[k] = info.grad
    return d


def run_backward(F, list heads, list head_grads, bint retain_graph, bint create_graph,
                 bint train_mode, bint into_grads=False):
    """Walk the graph of `heads` backwards. Returns {id(AGInfo of a variable): (AGInfo, grad)}.

    `into_grads` (backward(), which stores gradients in the variables' .grad): a gradient
    that alone sets a variable's .grad (grad_req 'write') is written into it by the kernel
    that makes it, so the returned gradient is that array (or a view of it) and the caller's
    copy is skipped; MXNet's backward writes such gradients in place (kWriteTo) too."""
    cdef list infos = []
    cdef NDArrayBase h
    for x in heads:
        h = <NDArrayBase?>x
        if h._ag is None:
            raise MXNetError(
                "autograd: cannot differentiate an array that is not in a computational graph. "
                "Record the computation under autograd.record() and mark inputs with attach_grad() "
                "(if this array's graph was freed by an earlier backward, pass retain_graph=True).")
        infos.append(h._ag)
    prev_rec = _M.recording
    prev_train = _M.training
    _M.recording = create_graph
    _M.training = train_mode
    cdef dict out_grads = {}
    cdef dict var_grads = {}
    cdef Node node
    cdef AGInfo info
    cdef list ogs, ins, outs, grads, dests = None
    cdef dict uses = None
    cdef Py_ssize_t k, n
    cdef bint absent
    try:
        order = _topo(infos)
        if into_grads and not create_graph:
            uses = _leaf_uses(order, infos)
        for x, info_o, hg in zip(heads, infos, head_grads):
            info = <AGInfo>info_o
            if hg is None:
                hg = F.ones_like(detach(x))
            elif hg.shape != x.shape:
                raise ValueError(f"backward: head gradient shape {hg.shape} != head shape {x.shape}")
            if info.node is None:
                _acc_var(var_grads, info, hg)
            else:
                _accumulate(out_grads, (id(info.node), info.index), hg)
        for node in order:
            outs = node.out_views
            n = len(outs)
            ogs = [None] * n
            absent = False
            for k in range(n):
                ogs[k] = out_grads.pop((id(node), k), None)
                absent = absent or ogs[k] is None
            _M.training = train_mode and node.training    # forward's mode AND backward's
            if not getattr(node.op, "differentiable", True) and _reached(infos, node):
                raise MXNetError(f"Operator {node.op.name} is non-differentiable because it "
                                 "didn't register FGradient attribute (record it without a "
                                 "gradient through it, or stop it with BlockGrad)")
            gfn = node.op.grad
            if gfn is None:
                for pi in node.in_info:
                    if pi is not None:
                        raise MXNetError(f"autograd: operator {node.op.name} has no gradient")
                continue
            if create_graph:
                ins = [_attached(v, i) for v, i in zip(node.in_views, node.in_info)]
                outs = [_attached(outs[k], _out_info(node, k)) for k in range(n)]
            else:
                ins = node.in_views
            # while the profiler records, the operations a gradient runs are named
            # "_backward_<op>::<op run>" (MXNet names the backward operator _backward_<op>)
            scope = ProfileScope("_backward_" + node.op.name.lstrip("_")) \
                if profile_recording() else None
            if scope is not None:
                scope.__enter__()
            try:
                grads = None
                dests = _dests(node, uses) if uses is not None and _grad_hook is None else None
                if not create_graph and _grad_runner is not None and _grad_hook is None:
                    if type(_grad_runner) is GradPlans:
                        grads = (<GradPlans>_grad_runner).run(node, ins, outs, ogs, dests)
                    else:
                        if absent:
                            _zero_absent(F, ogs, outs)
                        grads = _grad_runner(node, ins, outs, ogs)
                if grads is None:
                    if absent:
                        _zero_absent(F, ogs, outs)
                    # an operator that can write gradients in place (a CachedOp call)
                    gin = getattr(node.op, "grad_into", None) if dests is not None else None
                    if gin is not None:
                        grads = list(gin(F, node.attrs, ins, outs, ogs, dests))
                    else:
                        grads = list(gfn(F, node.attrs, ins, outs, ogs))
            finally:
                if scope is not None:
                    scope.__exit__(None, None, None)
            if _grad_hook is not None:
                _grad_hook(node, grads)
            for k in range(min(len(grads), len(node.in_info))):
                pi = node.in_info[k]
                g = grads[k]
                if pi is None or g is None:
                    continue
                info = <AGInfo>pi
                if info.node is None:
                    _acc_var(var_grads, info, g)
                else:
                    _accumulate(out_grads, (id(info.node), info.index), g)
            if not retain_graph:
                node.free()
        return var_grads
    finally:
        _M.recording = prev_rec
        _M.training = prev_train


cdef void _zero_absent(object F, list ogs, list outs):
    """Zeros for the output gradients that no gradient flowed into (None in `ogs`)."""
    cdef Py_ssize_t k
    for k in range(len(ogs)):
        if ogs[k] is None:
            ogs[k] = F.zeros_like(outs[k])


cdef inline void _acc_var(dict store, AGInfo info, object g):
    prev = store.get(id(info))
    store[id(info)] = (info, g) if prev is None else (info, prev[1] + g)


cdef AGInfo _out_info(Node node, Py_ssize_t k):
    cdef AGInfo info = AGInfo.__new__(AGInfo)
    info.node = node
    info.index = <int>k
    info.grad = None
    info.grad_req = "write"
    return info
