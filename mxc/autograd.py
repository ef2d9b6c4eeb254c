"""Automatic differentiation of imperative code, with MXNet 1.x's API and semantics.

Under ``record()`` every operator whose inputs take part in a graph (variables marked by
``attach_grad``/``mark_variables``, or outputs of recorded operators) is recorded as a node: the
operator, its typed attributes, its inputs and outputs. ``backward``/``grad`` walk the nodes in
reverse and call each operator's registry gradient, written with differentiable operators, so
running them while recording (``create_graph=True``) gives gradients that can be differentiated
again.

Memory: a node keeps views of its inputs and outputs (new array objects on the same storage
without autograd state), not the arrays themselves, so arrays and nodes form no reference
cycles and a graph is freed as soon as its last output is dropped. ``backward`` frees the graph it
walked unless ``retain_graph=True``; walking a freed graph raises MXNetError.
"""
from ._core import handle as _handle
from ._core import modes as _modes
from ._core import tape as _tape
from .base import MXNetError
from .ndarray import NDArray  # noqa: F401

# no __all__: as MXNet's module, `from mxnet.autograd import *` also brings NDArray

is_recording = _modes.is_recording
_M = _modes._M
# told when user code reads is_training() (set by mxc.gluon.block: a read while a HybridBlock
# is traced for hybridize() is frozen into the graph, which deserves a warning)
_read_hook = None


def is_training():
    """Whether operators run in training mode (Dropout, BatchNorm)."""
    value = _modes.is_training()
    if _read_hook is not None:
        _read_hook(value)
    return value


def set_recording(is_recording):  # noqa: F811  (MXNet's parameter name)
    """Set recording on or off; returns the previous state."""
    return _modes.set_recording(is_recording)


def set_training(train_mode):
    """Set training mode on or off; returns the previous state."""
    return _modes.set_training(train_mode)


class _RecordingStateScope:
    """Sets recording and/or training for a ``with`` block and restores them afterwards."""

    __slots__ = ("_enter_rec", "_enter_train", "_prev_rec", "_prev_train")

    def __init__(self, is_record, train_mode):
        self._enter_rec = is_record
        self._enter_train = train_mode
        self._prev_rec = None
        self._prev_train = None

    def __enter__(self):
        if self._enter_rec is not None:
            self._prev_rec = _modes.set_recording(self._enter_rec)
        if self._enter_train is not None:
            self._prev_train = _modes.set_training(self._enter_train)
        return self

    def __exit__(self, *exc):
        if self._enter_rec is not None:
            _M.recording = self._prev_rec
        if self._enter_train is not None:
            _M.training = self._prev_train
        return False


def record(train_mode=True):
    """Record operations for differentiation in a ``with`` block (training mode by default)."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):
    """Stop recording inside a ``with`` block (prediction mode by default)."""
    return _RecordingStateScope(False, train_mode)


def train_mode():
    """Training mode (Dropout, BatchNorm use batch statistics) without changing recording."""
    return _RecordingStateScope(None, True)


def predict_mode():
    """Prediction mode without changing recording."""
    return _RecordingStateScope(None, False)


# ---- the tape (mxc/_core/tape.pyx) -----------------------------------------------------------
AGInfo = _tape.AGInfo
Node = _tape.Node
_detach = _tape.detach
_record = _tape.record
_handle.install_recorder(_tape.record_fast, _M)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark arrays as variables whose gradients ``backward`` computes into `gradients`."""
    from .ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise ValueError("mark_variables: variables, gradients and grad_reqs differ in length")
    for v, g, r in zip(variables, gradients, grad_reqs):
        if r not in ("write", "add", "null", "inplace", "to"):
            raise ValueError(f"mark_variables: grad_req must be 'write', 'add' or 'null', got {r!r}")
        if r == "inplace" or r == "to":
            r = "write"
        if g is not None and g.shape != v.shape:
            raise ValueError(f"mark_variables: gradient shape {g.shape} != variable shape {v.shape}")
        v._ag = AGInfo(None, 0, g, r)


def _run_backward(heads, head_grads, retain_graph, create_graph, train_mode):
    """{id: (AGInfo of a variable, its gradient)} for every variable the heads reach."""
    from . import ndarray as nd
    from .ndarray import NDArray
    heads = [heads] if isinstance(heads, NDArray) else list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    else:
        head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError("backward: heads and head_grads differ in length")
    return _tape.run_backward(nd, heads, head_grads, retain_graph, create_graph, train_mode)


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of `heads` and store them in the marked variables' ``.grad``
    (overwritten for grad_req 'write', accumulated for 'add', skipped for 'null')."""
    from . import ndarray as nd
    for info, g in _run_backward(heads, head_grads, retain_graph, False, train_mode).values():
        if info.grad_req == "null" or info.grad is None:
            continue
        if g.dtype != info.grad.dtype:
            g = g.astype(info.grad.dtype)
        if info.grad_req == "add":
            nd.elemwise_add(info.grad, g, out=info.grad)
        else:
            nd._copyto(g, out=info.grad)
        info.fresh = True


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of `heads` w.r.t. `variables`, returned (not stored in ``.grad``).

    With ``create_graph=True`` the gradients are themselves recorded, so they can be
    differentiated again (second order)."""
    from . import ndarray as nd
    from .ndarray import NDArray
    single = isinstance(variables, NDArray)
    if single:
        variables = [variables]
    for v in variables:
        if v._ag is None or v._ag.node is not None:
            raise MXNetError("autograd.grad: every variable must be marked with attach_grad() or "
                             "mark_variables() before recording")
    if retain_graph is None:
        retain_graph = create_graph
    var_grads = _run_backward(heads, head_grads, retain_graph, create_graph, train_mode)
    out = []
    for v in variables:
        g = var_grads.get(id(v._ag))
        out.append(g[1] if g is not None else nd.zeros_like(_detach(v)))
    return out


def get_symbol(x):
    """The recorded graph of `x` as a Symbol: recorded operators become operator nodes,
    marked variables and arrays outside the graph become variables ``var0``, ``var1``..."""
    from .ops import registry
    from .ops.params import attrs_to_strings
    from .symbol.symbol import Symbol, _Node
    if x._ag is None:
        raise MXNetError("autograd.get_symbol: the array is not in a recorded graph")
    nodes, variables, counters = {}, {}, {}

    def var_for(key):
        if key not in variables:
            variables[key] = _Node(None, f"var{len(variables)}")
        return variables[key]

    def entry(info, fallback_key):
        if info is None:
            return (var_for(fallback_key), 0, 0)
        if info.node is None:
            return (var_for(id(info)), 0, 0)
        return (build(info.node), info.index, 0)

    def build(tn):
        if id(tn) in nodes:
            return nodes[id(tn)]
        op = tn.op
        if not isinstance(op, registry.OpDef):
            raise MXNetError(f"autograd.get_symbol: {getattr(op, 'name', op)} (a custom "
                             "Function) cannot be expressed as a symbol")
        hint = op.name.lower()
        k = counters.get(hint, 0)
        counters[hint] = k + 1
        attrs = {key: v for key, v in attrs_to_strings(tn.attrs or {}).items()}
        n = _Node(op, f"{hint}{k}", attrs)
        nodes[id(tn)] = n
        n.inputs = [entry(info, (id(tn), i)) for i, info in enumerate(tn.in_info)]
        return n

    return Symbol([entry(x._ag, id(x))])


# ---- custom functions ------------------------------------------------------------------------
class _FunctionOp:
    """The node operator of a custom Function: its backward is the user's."""

    __slots__ = ("fn", "name")

    def __init__(self, fn):
        self.fn = fn
        self.name = type(fn).__name__

    def grad(self, F, attrs, inputs, outputs, out_grads):
        with pause(train_mode=_M.training):
            res = self.fn.backward(*out_grads)
        from .ndarray import NDArray
        res = [res] if isinstance(res, NDArray) else list(res)
        if len(res) != len(inputs):
            raise MXNetError(f"{self.name}.backward returned {len(res)} gradient(s) for "
                             f"{len(inputs)} input(s)")
        for x, g in zip(inputs, res):
            if g is not None and g.shape != x.shape:
                raise MXNetError(f"{self.name}.backward: gradient shape {g.shape} does not match "
                                 f"input shape {x.shape}")
        return res


class Function:
    """A differentiable operation with a hand-written backward, as ``mx.autograd.Function``::

        class sigmoid(mx.autograd.Function):
            def forward(self, x):
                y = 1 / (1 + mx.nd.exp(-x))
                self.save_for_backward(y)
                return y
            def backward(self, dy):
                y, = self.saved_tensors
                return dy * y * (1 - y)

    An instance is used once per forward (it holds what it saved)."""

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        from .ndarray import NDArray
        if self._used:
            raise MXNetError(f"{type(self).__name__}: each Function instance can be called once; "
                             "create a new one per forward")
        self._used = True
        with pause(train_mode=_M.training):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if _M.recording:
            # outputs must be fresh arrays: detach any that alias an input or carry state
            outs = [_detach(o) if o._ag is not None else o for o in outs]
            _record(_FunctionOp(self), None, list(inputs), outs)
        return outs[0] if single else tuple(outs) if isinstance(outputs, tuple) else outs

