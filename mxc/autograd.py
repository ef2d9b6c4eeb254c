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
import os

from ._core import handle as _handle
from ._core import modes as _modes
from ._core import tape as _tape
from .base import MXNetError
from .ndarray import NDArray  # noqa: F401
from .ndarray import trace as _trace
from .ndarray.ndarray import mark_variables, backward, run_backward as _run_backward  # noqa: F401
from . import ndarray as nd
from .ops.registry import skip_unneeded_outputs, OpDef

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


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of `heads` w.r.t. `variables`, returned (not stored in ``.grad``).

    With ``create_graph=True`` the gradients are themselves recorded, so they can be
    differentiated again (second order)."""
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


# get_symbol builds a Symbol, which sits a layer above; mxc.symbol installs the builder
_symbol_builder = None


def install_symbol_builder(build):
    """Called by mxc.symbol with build(x) -> the Symbol of x's recorded graph."""
    global _symbol_builder
    _symbol_builder = build


def get_symbol(x):
    """The recorded graph of `x` as a Symbol: recorded operators become operator nodes,
    marked variables and arrays outside the graph become variables ``var0``, ``var1``..."""
    if _symbol_builder is None:
        raise MXNetError("autograd.get_symbol: mxc.symbol is not loaded")
    return _symbol_builder(x)


# ---- prepared gradients: each node's backward traced once, replayed as kernel pushes ----------
# The backward walk (tape.pyx) hands every node to _prepared_grad when it does not record. The
# node's OpDef.grad is traced once per (operator, attributes, shapes, dtypes, which inputs need a
# gradient, training flag) with the tracer's graph-building F (mxc/ndarray/trace.py), steps no
# needed gradient reads are dropped (the data gradient of a first layer: a whole GEMM), reshapes
# of intermediates become views, and later calls push the remaining steps' kernels directly: no
# attribute parsing or shape inference per backward operator; elementwise steps go through the
# C fast path (one call makes the output and pushes). Results equal the eager walk's bit
# for bit (same kernels, same attributes, same order). A gradient that cannot be traced (reads
# values on the host, runs Python, draws random numbers, writes state) takes the eager walk.
_GRAD_PLANS_MAX = 4096
_VIEW = None           # marks a step that is a reshape view instead of a kernel


class _GradPlan:
    __slots__ = ("nvals", "ext", "consts", "steps", "results", "reads")

    def __init__(self, nvals, ext, consts, steps, results):
        self.nvals = nvals        # value slots of one replay
        self.ext = ext            # slot of each (input view, output view, out-grad), in that order
        self.consts = consts      # (slot, NDArray) made while tracing, only read
        self.steps = steps        # (op or _VIEW, attrs, input slots, output slots, shapes, dtypes,
                                  #  fast path or None: see _fast_step)
        self.results = results    # slot of each input's gradient, or None
        # the external slots a replay reads: an absent output gradient outside them is never
        # made (tape.GradPlans)
        self.reads = frozenset(v for v in ext if v in results or
                               any(v in st[2] for st in steps))


def _trace_grad(op, attrs, ins, outs, ogs, needs, ctx):
    """A _GradPlan for this call of op.grad, or False when it cannot be prepared."""
    G = _trace
    t = G.Trace(ctx)
    ext = [t.new(a.shape, a._dtype, G.EXT) for a in ins + outs + ogs]
    nin, nout = len(ins), len(outs)
    try:
        res = list(op.grad(t.F, attrs, ext[:nin], ext[nin:nin + nout], ext[nin + nout:]))
    except Exception:       # noqa: BLE001 (untraceable, or an error the eager walk will raise)
        return False
    results = []
    for k, r in enumerate(res):
        if r is None or k >= nin or not needs[k]:
            results.append(None)
        elif isinstance(r, G.TVal) and r.t is t and t.kinds[r.vid] in (G.EXT, G.INT):
            results.append(r.vid)
        else:
            return False       # a constant (it would be shared between calls) or a foreign value
    needed = {v for v in results if v is not None}
    kept = []
    for st in reversed(t.steps):
        sop, sattrs, sins, souts, label = st
        if any(o in needed for o in souts):
            # a step writing one of its inputs in place (BatchNorm's backward updates the
            # moving statistics) replays as the eager walk runs it only when what it writes is
            # the node's own array (EXT) or a fresh intermediate, never a constant shared
            # between replays
            if "random" in sop.resources or any(
                    k >= len(sins) or t.kinds[sins[k]] == G.CONST for k in sop.mutate):
                return False
            kept.append((sop, skip_unneeded_outputs(sop, sattrs, souts, needed), sins, souts,
                         label))
            needed.update(sins)
        elif sop.mutate:
            return False       # dropping it would drop its in-place write too
    kept.reverse()
    # reshapes become views when their result is not a returned gradient, or is one whose
    # storage is fresh (an intermediate) and no other returned gradient shares it
    root = {}
    res_count = {}
    for op_, _, sins, souts, _ in kept:
        if op_.name in G.RESHAPES:
            root[souts[0]] = root.get(sins[0], sins[0])
    for v in results:
        if v is not None:
            r = root.get(v, v)
            res_count[r] = res_count.get(r, 0) + 1
    steps = []
    for op_, sattrs, sins, souts, _ in kept:
        shapes = tuple(t.shapes[v] for v in souts)
        dtypes = tuple(t.dtypes[v] for v in souts)
        if op_.name in G.RESHAPES:
            o = souts[0]
            r = root[o]
            is_result = o in results
            if not is_result or (t.kinds[r] == G.INT and r not in results
                                 and res_count.get(r, 0) == 1):
                steps.append((_VIEW, None, sins, souts, shapes, dtypes, None))
                continue
        steps.append((op_, sattrs, sins, souts, shapes, dtypes, _fast_step(op_, sattrs, t, sins,
                                                                            souts)))
    consts = tuple((v, a) for v, a in t.const.items())
    return _GradPlan(len(t.shapes), tuple(range(len(ext))), consts, tuple(steps), tuple(results))


def _fast_step(op, attrs, t, sins, souts):
    """(kind, FastKernel, scalar) when this step is an elementwise kernel the C fast path runs
    (as mxc.ndarray's invoke would: same kernel, same attributes), all its values of one shape
    and dtype; else None. The fast path makes the output and pushes in one C call."""
    kind = op.fast_kind
    if not kind or op.mutate or len(souts) != 1 or len(sins) != (2 if kind == 2 else 1):
        return None
    shape, dtype = t.shapes[souts[0]], t.dtypes[souts[0]]
    if any(t.shapes[v] != shape or t.dtypes[v] != dtype for v in sins):
        return None
    if kind == 3:
        scalar = attrs.get("scalar") if attrs else None
        if not isinstance(scalar, (int, float)) or isinstance(scalar, bool):
            return None
        return (3, op._fast_kernel or op.fast_kernel(), float(scalar))
    return (kind, op._fast_kernel or op.fast_kernel(), 0.0)


# the replay runs in C (tape.GradPlans): the lookup and pushes are a backward's per-node cost
_prepared_grad = _tape.GradPlans(_trace_grad, OpDef, NDArray, _GRAD_PLANS_MAX, nd.zeros_like)
_GRAD_PLANS = _prepared_grad.plans


if os.environ.get("MXC_PREPARED_GRAD", "1") != "0":     # 0: every node through OpDef.grad
    _tape.set_grad_runner(_prepared_grad)


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

