"""Automatic mixed precision (MXNet 1.9.1's ``mxnet.contrib.amp``).

``init()`` wraps the operator functions of ``mx.nd`` and ``mx.sym`` by the op lists
(``lists/``): low-precision operators get their float inputs cast to the target dtype,
float32-only operators get theirs cast to float32 (some only for given parameter values), and
operators that combine several inputs cast them to the widest one. ``init_trainer`` +
``scale_loss`` add dynamic loss scaling to a gluon Trainer (a step whose gradients overflow is
skipped and the scale halved). ``convert_symbol`` / ``convert_model`` / ``convert_hybrid_block``
rewrite a float32 graph for low-precision inference by inserting ``amp_cast`` and
``amp_multicast`` nodes, named and placed as MXNet's ReducePrecision pass does.

float16 uses MXNet's float16 lists (``lists/symbol_fp16.py``, the lists of MXNet's GPU AMP) on
every device: on a GPU the listed layer operators run float16 kernels (mxc/ops/cuda), and on the
CPU float16 operators run too (more slowly than float32). bfloat16 uses MXNet's bfloat16 lists
(``lists/symbol_bf16.py``, those of its CPU AMP; BatchNorm keeps float32 parameters): on the CPU
the operators compute in float32 and round to bfloat16 (mxc/ops/bfloat16.py), on a GPU they run
the bfloat16 CUDA kernels. bfloat16 arrays hold ml_dtypes' dtype (``amp.bfloat16``); MXNet's
stand-in, ``np.dtype([('bfloat16', np.uint16)])``, is accepted wherever a dtype is.
"""
import contextlib
import logging

import numpy as np

from ...base import MXNetError, bfloat16, np_dtype
from . import lists
from .loss_scaler import LossScaler
from ...ops import registry
from ...ndarray import NDArray
from ...symbol import Symbol
from ... import ndarray as nd, symbol as sym
from ...gluon.trainer import Trainer
from ...optimizer import Optimizer
from ...symbol.symbol import _Node, _topo, DTYPE_NP_TO_MX, DTYPE_MX_TO_NP
from ...context import cpu
from ...gluon import HybridBlock, SymbolBlock
from ...module import BucketingModule

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops",
           "list_conditional_fp32_ops", "list_widest_type_cast", "list_loss_output_functions",
           "list_lp16_use_fp32_params", "convert_symbol", "convert_bucketing_module"]

# amp.bfloat16: the dtype of bfloat16 arrays (MXNet's was a structured-uint16 stand-in, which
# np_dtype maps to this one)
_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), bfloat16)
_PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None
_wrapped = []          # (module, attribute, original function): undone by _restore()


# ---- dtypes and op lists --------------------------------------------------------------------

def _is_bf16(dt):
    try:
        return np_dtype(dt) is bfloat16
    except TypeError:
        return False


def _is_fp16(dt):
    try:
        return np.dtype(dt) == np.float16
    except TypeError:
        return False


def _list_module(target_dtype, fn):
    if _is_fp16(target_dtype):
        return lists.symbol_fp16
    if _is_bf16(target_dtype):
        return lists.symbol_bf16
    raise ValueError(f"amp.{fn}: target_dtype must be 'float16' or 'bfloat16', got {target_dtype!r}")


def _registered(names):
    known = registry.names()
    return [n for n in names if (n[0] if isinstance(n, tuple) else n) in known]


def list_lp16_ops(target_dtype):
    """Operators that run in the low-precision target dtype."""
    m = _list_module(target_dtype, "list_lp16_ops")
    return _registered(m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS)


def list_fp32_ops(target_dtype):
    """Operators that must run in float32."""
    return _registered(_list_module(target_dtype, "list_fp32_ops").FP32_FUNCS)


def list_lp16_fp32_ops(target_dtype):
    """Operators that run in whichever of the two dtypes they get."""
    m = _list_module(target_dtype, "list_lp16_fp32_ops")
    return _registered(m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS)


def list_conditional_fp32_ops(target_dtype):
    """(operator, parameter, values): float32 only for those parameter values."""
    return _registered(_list_module(target_dtype, "list_conditional_fp32_ops").CONDITIONAL_FP32_FUNCS)


def list_widest_type_cast(target_dtype):
    """Operators whose inputs are cast to the widest dtype among them."""
    return _registered(_list_module(target_dtype, "list_widest_type_cast").WIDEST_TYPE_CASTS)


def list_loss_output_functions(target_dtype):
    """Loss layers whose ``grad_scale`` carries the dynamic loss scale."""
    return _registered(_list_module(target_dtype, "list_loss_output_functions").LOSS_OUTPUT_FUNCTIONS)


def list_lp16_use_fp32_params(target_dtype):
    """{operator: input names kept in float32} for the target dtype (None for float16)."""
    m = _list_module(target_dtype, "list_lp16_use_fp32_params")
    if m is lists.symbol_fp16:
        return None
    return dict(m.BF16_USE_FP32_PARAMS)


# ---- wrapping mx.nd / mx.sym ----------------------------------------------------------------

def _cast(x, dtype):
    """x cast to `dtype` with amp_cast when it is a float16/bfloat16/float32 Symbol or NDArray."""
    if isinstance(x, Symbol):
        return sym.amp_cast(x, dtype=np.dtype(dtype).name)
    if isinstance(x, NDArray) and x.stype == "default":
        if x.dtype != np.dtype(dtype) and np.dtype(x.dtype) in _FLOATS:
            return nd.amp_cast(x, dtype=np.dtype(dtype).name)
    return x


def _locations(module, name):
    """(namespace, attribute) pairs under which `module` offers operator `name`."""
    out = []
    if hasattr(module, name):
        out.append((module, name))
    for p in _PREFIXES:
        if name.startswith(p):
            sub = getattr(module, p[1:-1], None)
            if sub is not None and hasattr(sub, name[len(p):]):
                out.append((sub, name[len(p):]))
    internal = getattr(module, "_internal", None)
    if name.startswith("_") and internal is not None and hasattr(internal, name) \
            and internal is not module:
        out.append((internal, name))
    op = getattr(module, "op", None)
    if op is not None and not isinstance(op, type(lambda: 0)) and hasattr(op, name):
        out.append((op, name))
    return out


def _rewrap(module, name, make):
    """Replace every location of operator `name` in `module` by make(original). The originals
    are all read first: a namespace that looks its operators up in another on access
    (mx.nd.sparse's module __getattr__) would otherwise hand out the wrapper just installed."""
    found = [(ns, attr, getattr(ns, attr)) for ns, attr in _locations(module, name)]
    for ns, attr, f in found:
        if not callable(f):
            continue
        w = make(f)
        for a in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(w, a, getattr(f, a))
            except (AttributeError, TypeError):
                pass
        # an attribute that only a module __getattr__ provided is deleted again at _restore
        _wrapped.append((ns, attr, f if attr in getattr(ns, "__dict__", {attr: f}) else None))
        setattr(ns, attr, w)


def _nd_wrapper(target, fp32_params=None, cond=None):
    def make(f):
        def wrapped(*args, **kwargs):
            if cond is not None and kwargs.get(cond[0]) not in cond[1]:
                return f(*args, **kwargs)
            if fp32_params:
                args = tuple(x if (i < len(fp32_params) and fp32_params[i]) else _cast(x, target)
                             for i, x in enumerate(args))
                kwargs = {k: (v if k in fp32_params[1:] else _cast(v, target))
                          for k, v in kwargs.items()}
            else:
                args = tuple(_cast(x, target) for x in args)
                kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
            return f(*args, **kwargs)
        return wrapped
    return make


def _sym_wrapper(target, fp32_params=None, cond=None):
    def make(f):
        def wrapped(*args, **kwargs):
            s = f(*args, **kwargs)
            if cond is not None and kwargs.get(cond[0]) not in cond[1]:
                return s
            node = s._outputs[0][0]
            if node.op is None:
                return s
            aux = set(node.aux_indices())
            new_inputs = []
            for i, e in enumerate(node.inputs):
                keep = i in aux or bool(fp32_params and i < len(fp32_params) and fp32_params[i])
                if keep:
                    new_inputs.append(e)
                else:
                    new_inputs.append(_cast(Symbol([e]), target)._outputs[0])
            node.inputs = new_inputs
            return s
        return wrapped
    return make


def _widest_wrapper(target):
    def make(f):
        def wrapped(*args, **kwargs):
            args = list(args)
            slots = [(args, i, a) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
            slots += [(kwargs, k, a) for k, a in kwargs.items() if isinstance(a, (Symbol, NDArray))]
            if any(isinstance(a, Symbol) for _, _, a in slots):
                syms = [a for _, _, a in slots]
                cast = sym.amp_multicast(*syms, num_outputs=len(syms))
                cast = [cast] if len(syms) == 1 else list(cast)
                for (box, key, _), c in zip(slots, cast):
                    box[key] = c
            else:
                widest = np.dtype(np.float32) if any(np.dtype(a.dtype) == np.float32
                                                     for _, _, a in slots) else np.dtype(target)
                for box, key, a in slots:
                    if np.dtype(a.dtype) != widest and np.dtype(a.dtype) == np.dtype(target):
                        box[key] = _cast(a, widest)
            return f(*args, **kwargs)
        return wrapped
    return make


# The bfloat16 lists have Cast among the float32 operators. mx.nd's cast is what amp_cast runs
# (a composite here, MXNet's own kernel there): wrapped, it would cast through itself forever;
# and a cast's input taken to float32 first changes no value. mx.sym's is wrapped as MXNet's.
_CASTS = ("Cast", "cast")


def _wrap_module(module, is_symbol, target, target_ops, cond_ops, fp32_ops):
    fp32_param_list = list_lp16_use_fp32_params(target) or {}
    mk = _sym_wrapper if is_symbol else _nd_wrapper
    for name in (target_ops if target_ops is not None else list_lp16_ops(target)):
        _rewrap(module, name, mk(target, fp32_params=fp32_param_list.get(name)))
    for name in (fp32_ops if fp32_ops is not None else list_fp32_ops(target)):
        if not is_symbol and name in _CASTS:
            continue
        _rewrap(module, name, mk(np.float32))
    for name, arg, values in (cond_ops if cond_ops is not None
                              else list_conditional_fp32_ops(target)):
        _rewrap(module, name, mk(np.float32, cond=(arg, tuple(values))))
    for name in list_widest_type_cast(target):
        _rewrap(module, name, _widest_wrapper(target))


def _wrap_loss_outputs(module, is_symbol, scaler, target):
    def make(f):
        if is_symbol:
            def wrapped(*args, **kwargs):
                logging.warning("%s does not support dynamic loss scaling in symbolic and "
                                "hybridized execution.", getattr(f, "__name__", "loss"))
                return f(*args, **kwargs)
        else:
            def wrapped(*args, **kwargs):
                kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
                return f(*args, **kwargs)
        return wrapped
    for name in list_loss_output_functions(target):
        if hasattr(module, name):
            _rewrap(module, name, make)


def _restore():
    """mxc: undo init() (every wrapped function back, AMP uninitialized); for tests."""
    global _amp_initialized, _amp_loss_scale_initialized, _loss_scaler
    while _wrapped:
        ns, attr, f = _wrapped.pop()
        if f is None:
            delattr(ns, attr)
        else:
            setattr(ns, attr, f)
    _amp_initialized = False
    _amp_loss_scale_initialized = False
    _loss_scaler = None


# ---- public API -------------------------------------------------------------------------------

def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Turn AMP on (before building the model): wraps mx.nd and mx.sym operators by the op
    lists, or by the lists given here (names of operators to run in target_dtype, to run in
    float32, and (operator, parameter, values) to run in float32 for those values)."""
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    if not (_is_fp16(target_dtype) or _is_bf16(target_dtype)):
        raise AssertionError("AMP currently supports only float16 or bfloat16 as a target_dtype")
    target = bfloat16 if _is_bf16(target_dtype) else np.dtype(np.float16)
    logging.info("Using AMP")
    try:
        _wrap_module(sym, True, target, target_precision_ops, conditional_fp32_ops, fp32_ops)
        _wrap_module(nd, False, target, target_precision_ops, conditional_fp32_ops, fp32_ops)
        _loss_scaler = LossScaler()
        _wrap_loss_outputs(nd, False, _loss_scaler, target)
        _wrap_loss_outputs(sym, True, _loss_scaler, target)
    except BaseException:
        _restore()
        raise
    _amp_initialized = True


def init_trainer(optimizer_or_trainer):
    """Give a gluon Trainer dynamic loss scaling (use with ``scale_loss``)."""
    global _amp_loss_scale_initialized
    if not _amp_initialized:
        raise AssertionError("AMP not initialized, did you forget to call amp.init()?")
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        scaler = _loss_scaler
    else:
        scaler = LossScaler()
    if isinstance(optimizer_or_trainer, Trainer):
        optimizer_or_trainer._amp_loss_scaler = scaler
        optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale
    elif isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                        f"instead is {type(optimizer_or_trainer)}")


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """``with amp.scale_loss(loss, trainer) as scaled: scaled.backward()``: the loss times the
    current loss scale; the trainer divides the gradients by it again in ``step``."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise AssertionError("Loss scaler is not initialized, did you forget to call "
                             "amp.init_trainer()?")
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer):
    """Divide the gradients by the loss scale now (to read or clip them before ``step``)."""
    if isinstance(optimizer_or_trainer, Trainer):
        for p in optimizer_or_trainer._params:
            for g in (getattr(p, "_grad", None) or ()):
                g[:] *= optimizer_or_trainer._scale
        optimizer_or_trainer._scale = 1.0
    elif isinstance(optimizer_or_trainer, Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                        f"instead is {type(optimizer_or_trainer)}")


# ---- graph conversion (MXNet's ReducePrecision pass) -----------------------------------------

_BN_OPS = ("BatchNorm", "BatchNorm_v1", "_npx_batch_norm", "_contrib_SyncBatchNorm")


def _out_types(node, in0):
    """Output dtypes of an operator node knowing only its first input's dtype (None: unknown)."""
    name = node.op.name
    n = node.num_outputs()
    if name in ("Cast", "cast"):
        return [np.dtype(node.parsed["dtype"]).name] * n
    if name == "amp_cast":
        return [node.parsed["dtype"] if in0 in ("float16", "bfloat16", "float32") else in0] * n
    if name == "amp_multicast":
        return None
    if name in _BN_OPS:
        side = "float32" if in0 in ("float16", "bfloat16") else in0
        return [in0] + [side] * (n - 1)
    return [in0] * n


# operators with output names in MXNet 1.9.1 (FListOutputNames, or an OperatorProperty):
# cast nodes after them are named "<node>_<output name>_amp_cast_..."; others "<node>_<index>_..."
_NAMED_OUTPUTS = frozenset("""
    Activation _npx_activation LeakyReLU _npx_leaky_relu BatchNorm _npx_batch_norm BatchNorm_v1
    Concat concat _npi_concatenate _npi_hstack _npi_dstack Convolution _npx_convolution
    Convolution_v1 CTCLoss ctc_loss _contrib_CTCLoss _contrib_ctc_loss Deconvolution
    _npx_deconvolution Dropout _npx_dropout FullyConnected _npx_fully_connected GroupNorm
    LayerNorm _npx_layer_norm LRN Pooling _npx_pooling Pooling_v1 softmax _npx_softmax softmin
    SoftmaxActivation UpSampling RNN _npx_rnn SoftmaxOutput Softmax im2col col2im
    _contrib_ROIAlign _contrib_RROIAlign _contrib_interleaved_matmul_selfatt_qk
    _contrib_interleaved_matmul_selfatt_valatt _contrib_interleaved_matmul_encdec_qk
    _contrib_interleaved_matmul_encdec_valatt _npi_matmul _npi_std _npi_var BilinearSampler
    Correlation Crop GridGenerator IdentityAttachKLSparseReg InstanceNorm L2Normalization
    MakeLoss Pad ROIPooling SequenceLast SequenceMask SequenceReverse SliceChannel split
    SpatialTransformer SVMOutput SwapAxis _contrib_count_sketch _contrib_DeformableConvolution
    _contrib_DeformablePSROIPooling _contrib_fft _contrib_ifft _contrib_MultiProposal
    _contrib_MultiBoxDetection _contrib_MultiBoxPrior _contrib_MultiBoxTarget _contrib_Proposal
    _contrib_PSROIPooling _contrib_SyncBatchNorm Custom elemwise_add _add _plus _Plus make_loss""".split())


def _suffix(entry, mirror):
    node, idx = entry[0], entry[1]
    if mirror[id(node)].op is None:
        return ""
    if node.op.name in _NAMED_OUTPUTS or node.op.output_names is not None:
        names = node.output_names()
        if idx < len(names):
            return names[idx][len(node.name):]
    return f"_{idx}"


def _reduce_precision(outputs, target, target_ops, fp32_ops, widest_ops, cond_ops, excluded,
                      data_names, cast_optional_params):
    amp_cast_op, multicast_op = registry.get("amp_cast"), registry.get("amp_multicast")
    mirror = {}         # id(old node) -> new node
    fp32_map = {}       # (id(old node), index) -> new entry
    lp_map = {}
    keep = []           # old nodes stay alive while their ids are keys

    def key(e):
        return (id(e[0]), e[1])

    def mirror_entry(e):
        return (mirror[id(e[0])], e[1], e[2])

    def add_cast(e, dtype, store, curr):
        n = _Node(amp_cast_op, f"{e[0].name}{_suffix(e, mirror)}_amp_cast_{dtype}",
                  {"dtype": dtype}, [mirror_entry(e)])
        store[key(e)] = (n, 0, e[2])
        if curr is not None:
            curr.inputs.append((n, 0, e[2]))

    def cond_fp32(node):
        if node.op is None or node.name in excluded or node.op.name not in cond_ops:
            return False
        for param, values in cond_ops[node.op.name].items():
            if param in node.attrs and node.attrs[param] in values:
                return True
        return False

    for node in _topo(outputs):
        keep.append(node)
        new = _Node(node.op, node.name, dict(node.attrs), [])
        new.version = node.version
        mutable = set(node.op.mutate) if node.op is not None else set()
        opname = node.op.name if node.op is not None else None
        if (node.op is not None and opname in fp32_ops) or node.name in excluded:
            for i in range(node.num_outputs()):
                fp32_map[(id(node), i)] = (new, i, 0)
            for e in node.inputs:
                if key(e) in fp32_map:
                    new.inputs.append(fp32_map[key(e)])
                elif e[0].op is None:
                    new.inputs.append(mirror_entry(e))
                else:
                    add_cast(e, "float32", fp32_map, new)
        elif node.op is not None and opname in target_ops:
            outs = _out_types(node, target)
            for i, t in enumerate(outs or ()):
                if t == target:
                    lp_map[(id(node), i)] = (new, i, 0)
                elif t == "float32":
                    fp32_map[(id(node), i)] = (new, i, 0)
            in_types = [target] * len(node.inputs)
            if opname in _BN_OPS:
                in_types[1:] = ["float32"] * (len(in_types) - 1)
            for i, e in enumerate(node.inputs):
                if key(e) in lp_map:
                    new.inputs.append(lp_map[key(e)])
                elif ((cast_optional_params and e[0].op is None and e[0].name not in data_names)
                      or i in mutable or in_types[i] not in (target, None)):
                    me = mirror_entry(e)
                    new.inputs.append(me)
                    if cast_optional_params and e[0].op is None:
                        lp_map[key(e)] = me
                else:
                    add_cast(e, target, lp_map, new)
        elif node.op is not None and opname in widest_ops and node.name not in excluded:
            if not node.inputs:
                raise MXNetError(f"amp.convert_symbol: node {node.name} ({opname}) has no inputs")
            out_dtype, unknown = target, False
            for e in node.inputs:
                if key(e) not in lp_map and key(e) not in fp32_map:
                    unknown = True
                    break
                if key(e) in fp32_map:
                    out_dtype = "float32"
            if unknown:
                suffix = _suffix(node.inputs[0], mirror)
                mc = _Node(multicast_op, f"{node.inputs[0][0].name}{suffix}_amp_multicast",
                           {"num_outputs": str(len(node.inputs))},
                           [mirror_entry(e) for e in node.inputs])
                new.inputs = [(mc, i, e[2]) for i, e in enumerate(node.inputs)]
            else:
                store = lp_map if out_dtype == target else fp32_map
                for i in range(node.num_outputs()):
                    store[(id(node), i)] = (new, i, 0)
                for e in node.inputs:
                    if key(e) in store:
                        new.inputs.append(store[key(e)])
                    else:
                        add_cast(e, out_dtype, store, new)
        elif cond_fp32(node):
            for i in range(node.num_outputs()):
                fp32_map[(id(node), i)] = (new, i, 0)
            for i, e in enumerate(node.inputs):
                if key(e) in fp32_map:
                    new.inputs.append(fp32_map[key(e)])
                elif i in mutable:
                    new.inputs.append(mirror_entry(e))
                else:
                    add_cast(e, "float32", fp32_map, new)
        else:
            if node.inputs and (key(node.inputs[0]) in fp32_map or key(node.inputs[0]) in lp_map):
                in0 = target if key(node.inputs[0]) in lp_map else "float32"
                outs = _out_types(node, in0)
                for i, t in enumerate(outs or ()):
                    if t == target:
                        lp_map[(id(node), i)] = (new, i, 0)
                    elif t == "float32":
                        fp32_map[(id(node), i)] = (new, i, 0)
            new.inputs = [mirror_entry(e) for e in node.inputs]
        mirror[id(node)] = new
    result = []
    for e in outputs:
        if key(e) not in fp32_map:
            add_cast(e, "float32", fp32_map, None)
        result.append(fp32_map[key(e)])
    return result


def _check_list(name, v):
    if not isinstance(v, list):
        raise AssertionError(f"{name} should be a list of strs")


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of float32 graph `sym` with amp_cast/amp_multicast nodes inserted so that the
    target-dtype operators run in float16 (bfloat16) and the float32 ones in float32 (MXNet's
    ReducePrecision pass: same node names, same placement)."""
    if not isinstance(sym, Symbol):
        raise AssertionError("First argument to convert_symbol should be Symbol")
    if target_dtype not in ("float16", "bfloat16"):
        raise AssertionError("Only target_dtype float16 and bfloat16 are supported currently")
    if target_dtype_ops is not None:
        _check_list("target_dtype_ops", target_dtype_ops)
    else:
        target_dtype_ops = list_lp16_ops(target_dtype)
    if fp32_ops is not None:
        _check_list("fp32_ops", fp32_ops)
    else:
        fp32_ops = list_fp32_ops(target_dtype)
    if conditional_fp32_ops is not None:
        if not isinstance(conditional_fp32_ops, list):
            raise AssertionError("conditional_fp32_ops should be a list")
    else:
        conditional_fp32_ops = list_conditional_fp32_ops(target_dtype)
    cond = {}
    for c in conditional_fp32_ops:
        if not (isinstance(c[0], str) and isinstance(c[1], str) and isinstance(c[2], list)):
            raise AssertionError("conditional_fp32_ops should be a list of (str, str, list of str)")
        cond.setdefault(c[0], {}).setdefault(c[1], []).extend(c[2])
    if excluded_sym_names is None:
        excluded_sym_names = []
    _check_list("excluded_sym_names", excluded_sym_names)
    cond_names = list(cond)
    for a, b, what in ((target_dtype_ops, fp32_ops, "target_dtype_ops and fp32_ops"),
                       (target_dtype_ops, cond_names, "target_dtype_ops and conditional_fp32_ops"),
                       (cond_names, fp32_ops, "fp32_ops and conditional_fp32_ops")):
        common = set(a) & set(b)
        if common:
            raise AssertionError(f"Ops cannot be in two or more lists. Common ops in {what} {common}")
    legal = set(list_lp16_ops(target_dtype) + list_fp32_ops(target_dtype)
                + list_lp16_fp32_ops(target_dtype)
                + [c[0] for c in list_conditional_fp32_ops(target_dtype)])
    illegal = set(target_dtype_ops + fp32_ops + cond_names) - legal
    if illegal:
        raise AssertionError("Can only choose ops from one of the lists amp.list_lp16_ops, "
                             "amp.list_fp32_ops, amp.list_lp16_fp32_ops and "
                             f"amp.list_conditional_fp32_ops(target_dtype); op(s) {illegal} are "
                             "in none of them")
    attr_dict = sym.attr_dict()
    if data_names is None:
        data_names = [n for n in sym.list_inputs()
                      if n not in attr_dict or "__dtype__" not in attr_dict[n]]
    model_params = set(sym.list_inputs()) - set(data_names)
    outs = _reduce_precision(list(sym._outputs), target_dtype, set(target_dtype_ops), set(fp32_ops),
                             set(list_widest_type_cast(target_dtype)), cond,
                             set(excluded_sym_names), set(data_names), cast_optional_params)
    # dtypes of the graph's inputs: float32, or the target dtype where a variable feeds a
    # target-dtype operator directly (cast_optional_params); written to __dtype__ as MXNet does
    f16 = set()
    for node in _topo(outs):
        if node.op is None:
            continue
        for i, e in enumerate(node.inputs):
            if e[0].op is None and node.op.name in target_dtype_ops \
                    and e[0].name not in data_names and cast_optional_params \
                    and i not in set(node.op.mutate):
                f16.add(e[0].name)
    for node in _topo(outs):
        if node.op is not None:
            continue
        code = str(DTYPE_NP_TO_MX[target_dtype if node.name in f16 else "float32"])
        if model_params:
            if node.name in model_params:
                node.attrs["__dtype__"] = code
        elif "__dtype__" in node.attrs:
            node.attrs["__dtype__"] = code
    return Symbol(outs)


def _cast_params(sym, params):
    attr_dict = sym.attr_dict()
    for name in list(params):
        code = attr_dict.get(name, {}).get("__dtype__")
        if code is not None and code != "-1":
            params[name] = params[name].astype(DTYPE_MX_TO_NP[int(code)])


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """convert_symbol for a model, and its parameters cast to the dtypes the new graph gives
    them. Returns (symbol, arg_params, aux_params)."""
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, list):
        raise ValueError("excluded_sym_names must be a list of strings representing the names "
                         "of the symbols that should not be casted, while received type "
                         f"{type(excluded_sym_names)}")
    if target_dtype not in ("float16", "bfloat16"):
        raise AssertionError("Only target_dtype float16 and bfloat16 are supported currently")
    if not isinstance(sym, Symbol):
        raise AssertionError("First argument to convert_model should be Symbol")
    if not isinstance(arg_params, dict):
        raise AssertionError("Second argument to convert_model should be a dict of name to ndarray")
    if not isinstance(aux_params, dict):
        raise AssertionError("Third argument to convert_model should be a dict of name to ndarray")
    param_names = set(arg_params) | set(aux_params)
    data_names = [n for n in sym.list_inputs() if n not in param_names]
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    arg_params, aux_params = dict(arg_params), dict(aux_params)
    _cast_params(sym, arg_params)
    _cast_params(sym, aux_params)
    return sym, arg_params, aux_params


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=None,
                         cast_optional_params=False):
    """A SymbolBlock running hybridized `block` (called once already) in mixed precision, its
    parameters on `ctx` (default: where the block's parameters are; MXNet defaulted to gpu(0))."""
    if not isinstance(block, HybridBlock):
        raise AssertionError("block input should be a HybridBlock")
    if not block._cached_graph:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this "
                           "block at least once before calling export.")
    if ctx is None:
        ctxs = [p.list_ctx() for p in block.collect_params().values() if p._data is not None]
        ctx = ctxs[0] if ctxs else cpu()
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=[i.name for i in inputs],
                               cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    aux_names = set(converted.list_auxiliary_states())
    attr_dict = converted.attr_dict()
    values = {}
    for name, param in block.collect_params().items():
        kind = "arg" if name in arg_names else "aux" if name in aux_names else None
        if kind is None:
            continue
        v = param._reduce()
        code = attr_dict.get(name, {}).get("__dtype__")
        if code is not None and code != "-1":
            v = v.astype(DTYPE_MX_TO_NP[int(code)])
        values[f"{kind}:{name}"] = v
    ret = SymbolBlock(converted, inputs)
    for name, param in ret.collect_params().items():
        for kind in ("arg", "aux"):
            v = values.get(f"{kind}:{name}")
            if v is not None and np.dtype(param.dtype) != np.dtype(v.dtype):
                param.cast(v.dtype)
    ret.collect_params().load_dict(values, ctx=ctx)
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                             cast_optional_params=False):
    """A BucketingModule whose bucket symbols (and parameters) are converted with convert_model."""
    if not isinstance(bucketing_mod, BucketingModule):
        raise AssertionError("module should be instance of bucketing module")
    if not bucketing_mod._buckets:
        raise AssertionError("Bucketing Module should not be empty")
    if not bucketing_mod.params_initialized:
        raise AssertionError("bucketing_mod params should be initialized for mixed precision "
                             "conversion")
    cur = bucketing_mod._curr_module
    arg_params, aux_params = cur._arg_params, cur._aux_params
    syms = {}
    res_arg, res_aux = arg_params, aux_params
    for k, mod in bucketing_mod._buckets.items():
        syms[k], res_arg, res_aux = convert_model(
            mod._symbol, arg_params, aux_params, target_dtype=target_dtype,
            target_dtype_ops=target_dtype_ops, fp32_ops=fp32_ops,
            conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(
        syms, sym_gen=bucketing_mod._sym_gen, arg_params=res_arg, aux_params=res_aux,
        default_bucket_key=bucketing_mod._default_bucket_key, logger=bucketing_mod.logger,
        context=bucketing_mod._context, work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names,
        state_names=bucketing_mod._state_names, group2ctxs=bucketing_mod._group2ctxs,
        compression_params=bucketing_mod._compression_params)
