"""Gluon blocks: Block (imperative), HybridBlock (imperative or traced into a Symbol and run
through CachedOp after ``hybridize()``) and SymbolBlock (a Block around an existing Symbol),
named exactly as MXNet 1.9.1 names them (``dense0_weight``, ``hybridsequential0_dense0_weight``).

Tracing: the first call after ``hybridize()`` runs ``hybrid_forward`` with ``F=mx.sym`` on
``mx.sym.var`` inputs. Python control flow then runs once: a branch on an array value
(``if x.sum() > 0``) or on ``autograd.is_training()`` is frozen into the graph. MXNet froze
``is_training`` silently and rejected ``bool(Symbol)``; mxc takes the branch the current inputs
take and warns, naming the block, in both cases."""
import copy
import json
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .. import autograd, name as _name, ndarray, symbol
from .._core import modes as _modes
from .._core import atomic_write
from .._core.api_calls import api_call
from ..base import MXNetError
from ..ndarray import NDArray
from ..symbol import Symbol, load_json
from ..symbol import symbol as _symmod
from .parameter import DeferredInitializationError, Parameter, ParameterDict, _default_init
from .utils import HookHandle, _brief_print_list, _indent
from ..util import is_np_array, np_array, np_shape  # np semantics

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


def _npg():
    """numpy_extension's Gluon helpers (np semantics), loaded on first use: mx.np and mx.npx
    are not imported with mxc."""
    from ..numpy_extension import _gluon
    return _gluon


class _BlockScope:
    """The ``with block.name_scope():`` scope: children created inside get ``block.prefix`` plus
    ``<alias><n>_`` with a counter per alias kept by this block."""

    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """(prefix, ParameterDict) for a new block of kind `hint`."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                if not hasattr(_name.NameManager._current, "value"):
                    _name.NameManager._current.value = _name.NameManager()
                prefix = _name.NameManager._current.value.get(None, hint) + "_"
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


# ---- nested inputs/outputs ------------------------------------------------------------------
def _gather_type_ctx_info(args):
    """(has_symbol, has_ndarray, set of contexts, first context) of nested `args`."""
    if isinstance(args, NDArray):
        return False, True, {args.context}, args.context
    if isinstance(args, Symbol):
        return True, False, set(), None
    if isinstance(args, (list, tuple)):
        has_sym = has_nd = False
        ctxs, first = set(), None
        for a in args:
            s, n, c, f = _gather_type_ctx_info(a)
            has_sym, has_nd = has_sym or s, has_nd or n
            if first is None and f is not None:
                first = f
            ctxs |= c
            if has_sym and has_nd:
                break
        return has_sym, has_nd, ctxs, first
    return False, False, set(), None


def _flatten(args, inout_str):
    """Flat list of arrays/symbols and the format that ``_regroup`` rebuilds the nesting from."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], (n if n > 1 else 0)
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the input of HybridBlock {inout_str} must be (nested) "
                         f"list of Symbol or NDArray, but got {args} of type {type(args)}")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    def merge(args, fmt):
        if isinstance(fmt, int):
            if fmt < -1:
                raise ValueError(f"Unsupported encoded format {fmt}.")
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                if args[0] is not None:
                    raise ValueError("We do not support passing types that are not None when the "
                                     "initial HybridBlock has received NoneType and has been "
                                     f"hybridized. Received arg = {args[0]}, fmt = {fmt}.")
                return None, args[1:]
            return args[:fmt], args[fmt:]
        if not isinstance(args, (list, tuple)):
            raise ValueError("When hybridized, the output of HybridBlock must be (nested) list of "
                             f"Symbol or NDArray, but got {args} of type {type(args)}")
        ret = []
        for f in fmt:
            r, args = merge(args, f)
            ret.append(r)
        return ret, args
    return merge(args, fmt)[0]


# ---- frozen branches while tracing ----------------------------------------------------------
class _Trace(threading.local):
    def __init__(self):
        self.stack = []      # [(root HybridBlock, {var name: NDArray} or None)]
        self.blocks = []     # blocks whose hybrid_forward runs symbolically, innermost last


_TRACE = _Trace()


def _tracing_block():
    if _TRACE.blocks:
        return _TRACE.blocks[-1]
    return _TRACE.stack[-1][0] if _TRACE.stack else None


def _frozen_warning(what, value):
    blk = _tracing_block()
    root = _TRACE.stack[-1][0] if _TRACE.stack else blk
    if root is None or not root._active:
        return      # a trace for shape inference only: the imperative code runs for real later
    where = f"'{blk.name}'" if blk is root else f"'{blk.name}' (inside '{root.name}')"
    warnings.warn(
        f"HybridBlock {where}: hybrid_forward {what} while being traced for hybridize(); "
        f"the branch taken now ({value}) is frozen into the cached graph and will not be "
        "re-evaluated for later inputs or modes. Use F.where/F.contrib.cond, or call the block "
        "without hybridize(), if the branch must follow the data.", UserWarning, stacklevel=4)


def _symbol_bool(sym):
    """bool(Symbol) while a HybridBlock is traced: evaluate on the real inputs and warn."""
    if not _TRACE.stack:
        return None
    values = _TRACE.stack[-1][1]
    if values is None:
        return None
    feed = {}
    for n in sym.list_inputs():
        if n not in values:
            return None
        v = values[n]
        if callable(v):
            try:
                v = v()
            except (DeferredInitializationError, RuntimeError):
                return None
        feed[n] = v
    with autograd.pause(train_mode=_modes.is_training()):
        out = sym.eval_imperative(feed)
    out = out[0] if isinstance(out, (list, tuple)) else out
    result = bool(out.asnumpy().any()) if out.size != 1 else bool(out.asscalar())
    _frozen_warning("branches on an array value (bool(Symbol))", result)
    return result


def _is_training_read(value):
    if _TRACE.stack:
        _frozen_warning("reads autograd.is_training()", value)


_symmod._bool_hook = _symbol_bool
autograd._read_hook = _is_training_read


# ---- Block ----------------------------------------------------------------------------------
class Block:
    """Base class of layers and models: children assigned as attributes are registered, their
    Parameters collected by ``collect_params()``; subclasses implement ``forward``."""

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError(
                    f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                    "parameters between blocks, please set 'params' at Block construction "
                    "instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        children = set(id(c) for c in self._children.values())

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(e) for e in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            if isinstance(data, Block):
                return id(data) not in children
            return False

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if unregistered(v):
                    warnings.warn(
                        f'"{self.__class__.__name__}.{k}" is an unregistered container with '
                        "Blocks. Note that Blocks inside the list, tuple or dict will not be "
                        "registered automatically. Make sure to register them using "
                        "register_child() or switching to nn.Sequential/nn.HybridSequential "
                        "instead. ", stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return self._name

    def name_scope(self):
        """``with self.name_scope():`` makes children and parameters created inside carry this
        block's prefix."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's parameters not included)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this block's and every descendant's Parameters, optionally only
        those whose name matches the regular expression `select`."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({n: v for n, v in self.params.items() if pattern.match(n)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + k: v for k, v in self._reg_params.items()}
        for n, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + n))
        return ret

    # ---- save / load ----------------------------------------------------------------------
    def save_parameters(self, filename, deduplicate=False):
        """Save parameters under their structural names ("0.weight", "dense0.bias"...)."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            inverse = {}
            for k, v in params.items():
                inverse[v] = k
            params = {k: v for v, k in inverse.items()}
        if is_np_array():  # np semantics: npx.save, as MXNet
            from .. import numpy_extension as _npx
            _npx.save(filename, {k: _npg().as_np(v._reduce()) for k, v in params.items()})
            return
        ndarray.save(filename, {k: v._reduce() for k, v in params.items()})

    def save_params(self, filename):
        """Deprecated: save under prefixed parameter names (the pre-1.3 scheme)."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead. For "
                      "details, see https://mxnet.apache.org/tutorials/gluon/save_load_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may resolve "
                             "this error.") from e

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by ``save_parameters`` (or, for files without structural
        names, by ``save_params``/``ParameterDict.save``)."""
        if is_np_array():  # np semantics: npx.load, legacy files through mx.nd.load
            loaded = _np_load_params(filename)
        else:
            loaded = ndarray.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError(f"load_parameters: {filename} holds a list of arrays, not a dict of "
                             "named parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded.keys()):
            if is_np_array():  # np semantics: the file is read already (either variant)
                self.collect_params().load_dict(loaded, ctx, allow_missing, ignore_extra,
                                                self.prefix, filename, cast_dtype, dtype_source)
                return
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            names_of = defaultdict(list)
            for k, v in params.items():
                names_of[v].append(k)
            for k, p in params.items():
                if not any(n in loaded for n in names_of[p]):
                    raise AssertionError(
                        f"Parameter '{k}' is missing in file '{filename}', which contains "
                        f"parameters: {_brief_print_list(loaded.keys())}. Set "
                        "allow_missing=True to ignore missing parameters.")
        for k in loaded:
            if not ignore_extra and k not in params:
                raise ValueError(
                    f"Parameter '{k}' loaded from file '{filename}' is not present in "
                    f"ParameterDict, which contains parameters "
                    f"{_brief_print_list(self._params.keys())}. Set ignore_extra=True to ignore. ")
            if k in params:
                params[k]._load_init(loaded[k], ctx, cast_dtype=cast_dtype,
                                     dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated name of ``load_parameters``."""
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # ---- structure ------------------------------------------------------------------------
    def register_child(self, block, name=None):
        """Register `block` as a child (attribute assignment does this automatically)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant (children first) and on self; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """``collect_params().initialize(...)``; `init` defaults to ``mx.init.Uniform()``."""
        if init is None:
            init = _default_init()
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock descendants (a plain Block itself stays imperative)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def save(self, prefix):
        """Save the structure (``prefix-model.json``) and parameters (``prefix-model.params``)."""
        model = {}

        def walk(blk, index, structure):
            mdl = {"orig_name": blk.name}
            structure[type(blk).__name__.lower() + str(index[0])] = mdl
            if isinstance(blk, HybridBlock):
                if blk._cached_graph:
                    mdl["in_format"] = blk._in_format
                    mdl["out_format"] = blk._out_format
                    syms, out = blk._cached_graph
                    mdl["inputs"] = [s.tojson() for s in syms]
                    mdl["symbol"] = out.tojson()
                    mdl["hybridized"] = True
                else:
                    mdl["hybridized"] = False
            children = {}
            mdl["children"] = children
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                walk(child, index, mdl)

        walk(self, [0], model)
        atomic_write.write_bytes(prefix + "-model.json", [json.dumps(model).encode("utf-8")])
        self.save_parameters(prefix + "-model.params")

    def load(self, prefix):
        """Load what ``save`` wrote into a block built the same way."""
        with open(prefix + "-model.json") as fp:
            model = json.load(fp)

        def walk(blk, index, structure):
            mdl = structure[type(blk).__name__.lower() + str(index[0])]
            blk._name = mdl["orig_name"]
            if isinstance(blk, HybridBlock) and mdl["hybridized"]:
                blk._in_format = mdl["in_format"]
                blk._out_format = mdl["out_format"]
                blk._cached_graph = ([load_json(s) for s in mdl["inputs"]],
                                     load_json(mdl["symbol"]))
                blk._active = True
            for p in list(blk.params.keys()):
                param = blk.params._params.pop(p)
                blk.params._params[blk.name + "_" + p[len(blk.params._prefix):]] = param
            for child in blk._children.values():
                index[0] += 1
                walk(child, index, mdl)
            children = mdl["children"]
            for ch_name in list(blk._children.keys()):
                child = blk._children.pop(ch_name)
                blk._children[children[child.name]] = child

        walk(self, [0], model)
        self.load_parameters(prefix + "-model.params")

    def cast(self, dtype):
        """Cast every Parameter (children included) to `dtype`."""
        for child in self._children.values():
            child.cast(dtype)
        for _, p in self.params.items():
            p.cast(dtype)

    def zero_grad(self):
        """Set every Parameter's gradient to 0 (``collect_params().zero_grad()``)."""
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx):
        """Move every Parameter to `ctx` (``collect_params().reset_ctx(ctx)``)."""
        self.collect_params().reset_ctx(ctx)

    def __call__(self, *args):
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args):
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print each layer's output shape and parameter counts for one forward on `inputs`
        (the block must be initialized and not hybridized)."""
        summary = OrderedDict()
        seen = set()
        hooks = []

        def shape_str(args):
            def flat(a):
                if not isinstance(a, (list, tuple)):
                    return [a], 0
                f, fm = [], []
                for x in a:
                    y, m = flat(x)
                    f.extend(y)
                    fm.append(m)
                return f, fm

            def regroup(a, fm):
                if isinstance(fm, int):
                    return (a[0], a[1:]) if fm == 0 else (a[:fm], a[fm:])
                ret = []
                for m in fm:
                    r, a = regroup(a, m)
                    ret.append(r)
                return ret, a
            f, fm = flat(args)
            shapes = regroup([x.shape if isinstance(x, NDArray) else x for x in f], fm)[0]
            s = str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)
            return s.replace("L", "")

        try:
            from .nn.basic_layers import HybridSequential, Sequential
            containers = (Sequential, HybridSequential)
        except ImportError:
            containers = ()

        def register(block):
            if isinstance(block, HybridBlock) and block._active:
                raise AssertionError(f'"{block.name}" must not be hybridized to print summary.')

            def hook(block, _, outputs):
                if _gather_type_ctx_info(outputs)[0]:
                    return      # a symbolic pass (deferred shape inference), not a layer run
                key = f"{block.__class__.__name__}-{len(summary)}"
                entry = summary[key] = OrderedDict()
                entry["output_shape"] = shape_str(outputs)
                n = 0
                entry["trainable"] = 0
                entry["shared"] = 0
                for p in block.params.values():
                    size = p.data().size
                    n += size
                    entry["trainable"] += 0 if p.grad_req == "null" else size
                    if p in seen:
                        entry["shared"] += size
                    else:
                        seen.add(p)
                entry["n_params"] = n
            if not isinstance(block, containers):
                hooks.append(block.register_forward_hook(hook))

        summary["Input"] = OrderedDict(output_shape=shape_str(inputs), n_params=0, trainable=0,
                                       shared=0)
        try:
            self.apply(register)
            self(*inputs)
            fmt = "{:>20}  {:>42} {:>15}"
            print("-" * 80)
            print(fmt.format("Layer (type)", "Output Shape", "Param #"))
            print("=" * 80)
            total = trainable = shared = 0
            for layer, e in summary.items():
                print(fmt.format(layer, str(e["output_shape"]), e["n_params"]))
                total += e["n_params"]
                trainable += e["trainable"]
                shared += e["shared"]
            print("=" * 80)
            print("Parameters in forward computation graph, duplicate included")
            print("   Total params: " + str(total))
            print("   Trainable params: " + str(trainable))
            print("   Non-trainable params: " + str(total - trainable))
            print("Shared params in forward computation graph: " + str(shared))
            print("Unique parameters in model: " + str(total - shared))
            print("-" * 80)
        finally:
            for h in hooks:
                h.detach()


# ---- HybridBlock ----------------------------------------------------------------------------
class HybridBlock(Block):
    """A Block written once as ``hybrid_forward(F, x, *args, **params)``: run with ``F=mx.nd``
    imperatively, or traced with ``F=mx.sym`` into a graph run by CachedOp after
    ``hybridize()``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False
        self._backend = None
        self._backend_opts = {}

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _get_graph(self, *args):
        if not self._cached_graph:
            flat_args, self._in_format = _flatten(args, "input")
            real = sum(a is not None for a in flat_args)
            if real == 0:
                raise ValueError("All args are None and we do not support such a case. "
                                 f"Received args={args}")
            inputs, sym_inputs, values = [], [], {}
            cnt = 0
            for a in flat_args:
                if a is None:
                    inputs.append(None)
                    continue
                s = symbol.var(f"data{cnt}" if real > 1 else "data")
                if isinstance(a, NDArray):
                    values[s.name] = a
                cnt += 1
                inputs.append(s)
                sym_inputs.append(s)
            grouped = _regroup(inputs, self._in_format)
            params = {k: v.var() for k, v in self._reg_params.items()}
            F = symbol
            if is_np_array():  # np semantics: numpy-style symbols and F.np / F.npx
                F, grouped, params = _npg().traced_args(self, grouped, params)
            for p in self.collect_params().values():
                values.setdefault(p.name, p.data)
            concrete = any(isinstance(a, NDArray) for a in flat_args)
            _TRACE.stack.append((self, values if concrete else None))
            _TRACE.blocks.append(self)
            try:
                with self.name_scope():
                    out = self.hybrid_forward(F, *grouped, **params)
            finally:
                _TRACE.blocks.pop()
                _TRACE.stack.pop()
            out, self._out_format = _flatten(out, "output")
            if is_np_array() and not _npg().legacy_block(self):  # np semantics
                _npg().check_same_symbol_type(self, out)
            for o in out:
                if not isinstance(o, Symbol):
                    raise ValueError(f"HybridBlock '{self.name}': hybrid_forward must return "
                                     f"Symbols (or nested lists of them) when traced, got "
                                     f"{type(o).__name__}")
            self._cached_graph = sym_inputs, symbol.Group(out)
        return self._cached_graph

    def _build_cache(self, *args):
        data, out = self._get_graph(*args)
        data_names = {d.name: i for i, d in enumerate(data)}
        input_names = out.list_inputs()
        expected = set(input_names)
        if self._cached_op_args:
            params = {p.name: p for is_arg, p in self._cached_op_args
                      if isinstance(p, Parameter)}
        else:
            params = self.collect_params()
        param_names = set(params.keys())
        for n in expected:
            if n not in param_names and n not in data_names:
                raise AssertionError(f"Unknown input to HybridBlock: {n}")
        used = [n for n in data_names if n in expected]
        if len(used) != len(data_names):
            unused = ", ".join(f"{i}-th" for n, i in data_names.items() if n not in expected)
            warnings.warn(f"The {unused} input to HybridBlock is not used by any computation. "
                          "Is this intended?", stacklevel=4)
        used_params = [n for n in param_names if n in expected]
        if len(used_params) != len(param_names):
            unused = ", ".join(sorted(param_names - set(used_params)))
            warnings.warn(f"Parameter {unused} is not used by any computation. Is this intended?",
                          stacklevel=4)
        flat, _ = _flatten(args, "input")
        try:
            for n in input_names:
                if n in params:
                    params[n].data()
        except DeferredInitializationError:
            self._deferred_infer_shape(*flat)
            for n in input_names:
                if n in params:
                    params[n]._finish_deferred_init()
        data_indices, param_indices = [], []
        self._cached_op_args = []
        for i, n in enumerate(input_names):
            if n in data_names:
                data_indices.append(i)
                self._cached_op_args.append((True, data_names[n]))
            else:
                param_indices.append(i)
                self._cached_op_args.append((False, params[n]))
        flags = [("data_indices", data_indices), ("param_indices", param_indices)] + self._flags
        self._cached_op = ndarray.CachedOp(out, flags)

    def _deferred_infer_shape(self, *args):
        try:
            if is_np_array() and _npg().legacy_block(self):  # np semantics: mxc's layers
                with np_array(False):                        # infer in their own semantics
                    with np_shape(False):
                        self.infer_shape(*_npg().to_nd(args))
                return
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError("Deferred initialization failed because shape cannot be inferred. "
                             f"{e}") from e

    @api_call("MXInvokeCachedOpEx")
    def _call_cached_op(self, *args):
        if self._cached_op is None:
            self._build_cache(*args)
        args, fmt = _flatten(args, "input")
        if fmt != self._in_format:
            valid = False
            if isinstance(fmt, list) and isinstance(self._in_format, list):
                if len(self._in_format) > len(fmt):
                    valid = (all(f == -1 for f in self._in_format[len(fmt):])
                             and fmt == self._in_format[:len(fmt)])
                elif len(self._in_format) < len(fmt):
                    valid = (all(f == -1 for f in fmt[len(self._in_format):])
                             and fmt[:len(self._in_format)] == self._in_format)
            if not valid:
                raise ValueError("The argument structure of HybridBlock does not match the "
                                 f"cached version. Stored format = {fmt}, input format = "
                                 f"{self._in_format}")
        real = [a for a in args if a is not None]
        cargs = [real[i] if is_arg else i.data() for is_arg, i in self._cached_op_args]
        if is_np_array():  # np semantics: CachedOp runs on NDArray views, returns np
            out = self._cached_op(*_npg().to_nd(cargs))
            out = _npg().to_np([out] if isinstance(out, NDArray) else out)
            return _regroup(out, self._out_format)
        out = self._cached_op(*cargs)
        if isinstance(out, NDArray):
            out = [out]
        return _regroup(out, self._out_format)

    def optimize_for(self, x, *args, backend=None, clear=False, static_alloc=False,
                     static_shape=False, inline_limit=2, forward_bulk_size=None,
                     backward_bulk_size=None, **kwargs):
        """Subgraph backends are not part of mxc: any backend raises MXNetError."""
        if not backend:
            raise ValueError('Must specify "backend" to optimize_for')
        raise MXNetError(f"optimize_for: backend {backend!r} is not available in mxc (no "
                         "subgraph backends are registered)")

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(
                f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                f"{type(block)}. If you are using Sequential, please try HybridSequential "
                "instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Turn tracing + CachedOp on (or off) for this block and its descendants."""
        if backend is not None:
            raise MXNetError(f"hybridize: backend {backend!r} is not available in mxc (no "
                             "subgraph backends are registered)")
        if kwargs:
            self._backend_opts = kwargs
        self._backend = backend
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if (active and self._forward_hooks) or self._forward_pre_hooks:
            warnings.warn(f'"{self}" is being hybridized while still having forward '
                          f'hook/pre-hook. If "{self}" is a child of HybridBlock, the hooks will '
                          "not take effect.")
        for child in self._children.values():
            child.hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                            inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                            backward_bulk_size=backward_bulk_size)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        flat, _ = _flatten(args, "input")
        real = [a for a in flat if a is not None]
        known = {i.name: getattr(j, attr) for i, j in zip(inputs, real)}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(**known)
        if arg_attrs is None:
            raise ValueError(str(w[0].message) if w else
                             f"{infer_fn} of HybridBlock '{self.name}' failed for inputs {known}")
        table = dict(zip(out.list_arguments(), arg_attrs))
        table.update(zip(out.list_auxiliary_states(), aux_attrs))
        for p in self.collect_params().values():
            if p.name in table:
                setattr(p, attr, table[p.name])

    def infer_shape(self, *args):
        """Complete the Parameters' shapes from the inputs' shapes."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args):
        """Complete the Parameters' dtypes from the inputs' dtypes."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (names 'arg:...'/'aux:...'),
        loadable by ``SymbolBlock.imports``, the Module API and MXNet itself."""
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with "
                               "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym.save(f"{path}-symbol.json", remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        op_params = [p for is_arg, p in self._cached_op_args if not is_arg]
        if not op_params:   # traced (e.g. via infer_shape) but never run through CachedOp
            op_params = list(self.collect_params().values())
        for p in op_params:
            if p.name in arg_names:
                arg_dict[f"arg:{p.name}"] = p._reduce()
            elif p.name in aux_names:
                arg_dict[f"aux:{p.name}"] = p._reduce()
            else:
                warnings.warn(f'Parameter "{p.name}" is not found in the graph. ', stacklevel=3)
        if is_np_array():  # np semantics: npx.save, as MXNet
            from .. import numpy_extension as _npx
            _npx.save("%s-%04d.params" % (path, epoch),
                      {k: _npg().as_np(v) for k, v in arg_dict.items()})
            return
        ndarray.save("%s-%04d.params" % (path, epoch), arg_dict)

    def register_op_hook(self, callback, monitor_all=False):
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = monitor_all

    def forward(self, x, *args):
        """Run on NDArrays (through the cached graph when hybridized) or on Symbols."""
        if not args and isinstance(x, NDArray):      # the common call: one array
            has_sym, has_nd, first_ctx = False, True, x.context
            ctxs = (first_ctx,)
        else:
            has_sym, has_nd, ctxs, first_ctx = _gather_type_ctx_info([x] + list(args))
        if has_sym and has_nd:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types "
                             "for the input. Please check the type of the args.\n")
        if not has_sym and not has_nd:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.\n")
        if has_nd:
            if self._active:
                if len(ctxs) > 1:
                    raise ValueError("Find multiple contexts in the input, After hybridized, the "
                                     "HybridBlock only supports one input context. You can print "
                                     "the ele.ctx in the input arguments to inspect their "
                                     f"contexts. Find all contexts = {ctxs}")
                with first_ctx:
                    return self._call_cached_op(x, *args)
            with first_ctx:
                try:
                    params = {k: v.data(first_ctx) for k, v in self._reg_params.items()}
                except DeferredInitializationError:
                    self._deferred_infer_shape(x, *args)
                    for _, v in self.params.items():
                        v._finish_deferred_init()
                    params = {k: v.data(first_ctx) for k, v in self._reg_params.items()}
                if is_np_array():  # np semantics
                    return self._np_hybrid_forward(x, args, params)
                return self.hybrid_forward(ndarray, x, *args, **params)
        params = {k: v.var() for k, v in self._reg_params.items()}
        F = symbol
        if is_np_array():  # np semantics: numpy-style symbols and F.np / F.npx
            F, (x, *args), params = _npg().traced_args(self, [x, *args], params)
        _TRACE.blocks.append(self)
        try:
            with self.name_scope():
                return self.hybrid_forward(F, x, *args, **params)
        finally:
            _TRACE.blocks.pop()

    def _np_hybrid_forward(self, x, args, params):
        """np semantics: mxc's own layers (legacy code) run on NDArray views of the np
        inputs and parameters; user blocks get np arrays. F is mx.nd with F.np and F.npx.
        Results come back as mx.np.ndarray (views, no copies)."""
        F = _npg().nd_namespace()
        if _npg().legacy_block(self):
            out = self.hybrid_forward(F, _npg().to_nd(x), *_npg().to_nd(args),
                                      **{k: _npg().as_nd(v) for k, v in params.items()})
        else:
            out = self.hybrid_forward(F, _npg().as_np(x), *_npg().to_np(args),
                                      **{k: _npg().as_np(v) for k, v in params.items()})
            _npg().check_np_outputs(self, out)
        return _npg().to_np(out)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _np_load_params(filename):
    """np semantics: npx.load; a file saved without numpy shape semantics is loaded
    with them off (as MXNet does) and its arrays viewed as mx.np.ndarray."""
    from .. import numpy_extension as _npx
    try:
        return _npx.load(filename)
    except MXNetError as e:
        if "np shape semantics" not in str(e):
            raise ValueError(str(e)) from e
    with np_array(False):
        with np_shape(False):
            loaded = ndarray.load(filename)
    if isinstance(loaded, dict):
        return {k: _npg().as_np(v) for k, v in loaded.items()}
    return [_npg().as_np(v) for v in loaded]


# ---- SymbolBlock ----------------------------------------------------------------------------
def _common_prefix(names):
    if not names:
        return ""
    prefix = names[0]
    for n in names:
        i = 0
        while i < len(prefix) and i < len(n) and prefix[i] == n[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _infer_param_types(in_params, out_params, arg_params, aux_params, default_dtype=np.float32):
    """dtypes of the graph's arguments and auxiliary states from the inputs' ``__dtype__``
    (float32 where they cannot be inferred)."""
    arg_types = aux_types = None
    known = {}
    for p in in_params:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = p.infer_type()[0]
        except MXNetError:
            t = None
        if not t or t[0] is None:
            known = None
            break
        known[p.name] = t[0]
    if known is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arg_types, _, aux_types = out_params.infer_type(**known)
        except MXNetError:
            arg_types = aux_types = None
    if arg_types is None or len(arg_types) != len(arg_params):
        arg_types = [default_dtype] * len(arg_params)
    if aux_types is None or len(aux_types) != len(aux_params):
        aux_types = [default_dtype] * len(aux_params)
    arg_types = [default_dtype if t is None else t for t in arg_types]
    aux_types = [default_dtype if t is None else t for t in aux_types]
    return arg_types, aux_types


class SymbolBlock(HybridBlock):
    """A HybridBlock around an existing Symbol: `inputs` are its data variables, every other
    argument and auxiliary state becomes a Parameter (shared from `params` when given)."""

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """Load a model written by ``HybridBlock.export`` or ``Module.save_checkpoint``."""
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(n, dtype=np.float32) for n in input_names]
        else:
            inputs = [symbol.var(n) for n in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __repr__(self):
        out = self._cached_graph[1]
        return (f"{self.__class__.__name__}(\n{out} : {len(self._cached_graph[0])} -> "
                f"{len(out.list_outputs())}\n)")

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        input_names = set()
        for s in syms:
            if len(s.get_internals().list_outputs()) != 1:
                raise AssertionError(f"Input symbols must be variable, but {s} is an output of "
                                     "operators")
            input_names.add(s.name)
        for o in out:
            for j in o.get_internals():
                if j.attr("__storage_type__") == "1":
                    raise AssertionError(f"SymbolBlock doesn't support Parameter '{j.name}' "
                                         "because its storage type is 'row_sparse'.")
        out = symbol.Group(out) if len(out) > 1 else out[0]
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_params, aux_params)
        for i, arg in enumerate(arg_params):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=arg_types[i])
        for i, aux in enumerate(aux_params):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True,
                                dtype=aux_types[i])
        self._cached_graph = syms, out
        n = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {k[n:]: v for k, v in self._params.items()}

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise AssertionError("HybridBlock requires the first argument to forward be either "
                                 f"Symbol or NDArray, but got {type(x)}")
        flat, in_fmt = _flatten([x] + list(args), "input")
        if in_fmt != self._in_format:
            raise AssertionError("Invalid input format")
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        keep = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = keep

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)
        if np.dtype(dtype).name == "float16":
            names = self._cached_graph[1].get_internals().list_inputs()
            for node in names:
                for stat, rest in (("running_var", ("running_mean", "gamma", "beta")),
                                   ("moving_var", ("moving_mean", "gamma", "beta"))):
                    if node.endswith(stat):
                        base = node[:-len(stat)]
                        sibs = [base + t for t in rest]
                        if all(s in names for s in sibs):
                            self.params.get(node).cast("float32")
                            for s in sibs:
                                self.params.get(s).cast("float32")

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def reset_ctx(self, ctx):
        params = self.collect_params()
        if self._cached_op:
            for is_arg, p in self._cached_op_args:
                if not is_arg and p.name not in params:
                    p.reset_ctx(ctx)
        for p in params.values():
            p.reset_ctx(ctx)
