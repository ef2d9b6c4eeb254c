"""Gluon parameters: Parameter (a weight with one copy per context and its gradient buffers),
Constant, and ParameterDict (named collection with prefixes, sharing, save/load), with MXNet
1.9.1's behaviour, names and messages."""
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, context, ndarray, symbol, initializer
from ..base import MXNetError
from ..context import Context, cpu
from ..util import is_np_shape
from ..util import is_np_array  # np semantics
from .utils import _brief_print_list, _indent, shape_is_known

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]

tensor_types = (symbol.Symbol, ndarray.NDArray)

_NAMING_URL = "https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html"


class DeferredInitializationError(MXNetError):
    """A Parameter whose initialization waits for its shape (known at the first forward)."""


# ---- initializers (mx.init), imported lazily (mxc.initializer imports gluon-free modules) --
def _init_module():
    return initializer


def _default_init():
    return _init_module().Uniform()


def _run_initializer(name, init, default_init, arr):
    """Fill `arr` as MXNet does: default_init(InitDesc(name, {'__init__': init}), arr)."""
    mod = _init_module()
    mod.create(default_init)(mod.InitDesc(name, {"__init__": init}), arr)


def _same_dtype(a, b):
    try:
        return np.dtype(a) == np.dtype(b)
    except TypeError:
        return False


class Parameter:
    """A weight of a Block: one NDArray per context after ``initialize`` (plus a gradient buffer
    per context unless ``grad_req='null'``); shape dims of 0 (-1 with numpy shapes) are unknown
    and completed at the first forward when ``allow_deferred_init`` is set."""

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32,
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = shape
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        valid = ("default", "row_sparse", "csr")
        if grad_stype not in valid:
            raise AssertionError(f"grad_stype for Parameter '{name}' must be one of 'default', "
                                 f"'row_sparse', or 'csr', but got '{grad_stype}'")
        if stype not in valid:
            raise AssertionError(f"stype for Parameter '{name}' must be one of 'default', "
                                 f"'row_sparse', or 'csr', but got '{stype}'")
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # ---- attributes ---------------------------------------------------------------------------
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ("write", "add", "null"):
            raise AssertionError(f"grad_req must be one of 'write', 'add', or 'null', "
                                 f"but got '{req}'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        if self._shape is None:
            return None
        if is_np_shape():
            return tuple(d if d != 0 else -1 for d in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        if self._shape is None:
            self._shape = new_shape
            return
        if not (len(self._shape) == len(new_shape)
                and all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape))):
            raise AssertionError(f"Expected shape {new_shape} is incompatible with given shape "
                                 f"{self._shape}.")
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    @property
    def grad_stype(self):
        return self._grad_stype

    def _set_trainer(self, trainer):
        if (self._stype != "default" and self._trainer and trainer
                and self._trainer is not trainer):
            raise RuntimeError(
                f"Failed to set the trainer for Parameter '{self.name}' because it was already "
                f"set. More than one trainers for a {self._stype} Parameter is not supported.")
        self._trainer = trainer

    # ---- access -------------------------------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = context.current_context()
            row = self._ctx_map[ctx.device_typeid & 1]
            if ctx.device_id < len(row) and row[ctx.device_id] is not None:
                return arr_list[row[ctx.device_id]]
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                               f"It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                "was deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers.")
        raise RuntimeError(
            f"Parameter '{self.name}' has not been initialized. Note that you should initialize "
            "parameters and create Trainer with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of nested child Blocks")

    def _get_row_sparse(self, arr_list, ctx, row_id):
        if not isinstance(row_id, ndarray.NDArray):
            raise TypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        if not self._trainer:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when no "
                               "Trainer is created with it.")
        results = self._check_and_get(arr_list, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def row_sparse_data(self, row_id):
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name} via "
                               f"row_sparse_data() because its storage type is {self._stype}. "
                               "Please use data() instead.")
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                               f"via list_row_sparse_data() because its storage type is "
                               f"{self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, list, row_id)

    def data(self, ctx=None):
        """This parameter's array on `ctx` (the only one when a single context was used)."""
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via "
                               f"data() because its storage type is {self._stype}. Please use "
                               "row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        if self._stype != "default":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                               f"via list_data() because its storage type is {self._stype}. "
                               "Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                               "because grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                               "because grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    # ---- initialization -----------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Create the arrays (and gradient buffers) on `ctx` filled by `init` (else this
        parameter's ``init``, else `default_init`, by default ``mx.init.Uniform()``)."""
        if default_init is None:
            default_init = _default_init()
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. "
                          "Set force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [context.current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not shape_is_known(self.shape):
            raise AssertionError(f"Cannot initialize Parameter '{self.name}' because it has "
                                 f"invalid shape: {self.shape}. Please specify in_units, "
                                 "in_channels, etc for `Block`s.")
        if is_np_array() and self._stype != "default":  # np semantics
            raise ValueError(f"mxnet.numpy.zeros does not support stype = {self._stype}")
        with autograd.pause():
            if data is None:
                # initializers write dense values: fill a dense array, then convert (mxc's
                # sparse arrays take no scalar fills)
                data = ndarray.zeros(shape=self.shape, dtype=self.dtype, ctx=cpu())
                _run_initializer(self.name, init, default_init, data)
                if self._stype != "default":
                    data = data.tostype(self._stype)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._ctx_map = [[], []]
        for i, c in enumerate(self._ctx_list):
            row = self._ctx_map[c.device_typeid & 1]
            while len(row) <= c.device_id:
                row.append(None)
            row[c.device_id] = i
        self._data = [data.copyto(c) for c in self._ctx_list]
        if is_np_array():  # np semantics: mx.np.ndarray views of the copies
            from ..numpy_extension._op import as_np
            self._data = [as_np(d) for d in self._data]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [ndarray.zeros(shape=d.shape, dtype=d.dtype, ctx=d.context,
                                    stype=self._grad_stype) for d in self._data]
        if is_np_array():  # np semantics: gradients are mx.np.ndarray too
            if self._grad_stype != "default":
                raise ValueError("mxnet.numpy.zeros does not support stype = "
                                 f"{self._grad_stype}")
            from ..numpy_extension._op import as_np
            self._grad = [as_np(g) for g in self._grad]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad,
                                self.grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """(Re)initialize from loaded `data` (checks shape and dtype as MXNet does)."""
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise AssertionError(f"dtype_source must be 'current' or 'saved', got "
                                 f"{dtype_source!r}")
        if self.shape:
            unknown = -1 if is_np_shape() else 0
            for mine, theirs in zip(self.shape, data.shape):
                if mine not in (unknown, theirs):
                    raise AssertionError(
                        f"Failed loading Parameter '{self.name}' from saved params: shape "
                        f"incompatible expected {self.shape} vs saved {data.shape}")
            self.shape = tuple(t if m == unknown else m for m, t in zip(self.shape, data.shape))
        if self.dtype:
            if cast_dtype and not _same_dtype(self.dtype, data.dtype):
                if dtype_source == "current":
                    data = data.astype(self.dtype, copy=False)
                else:
                    self.dtype = data.dtype
            elif not _same_dtype(self.dtype, data.dtype):
                raise AssertionError(
                    f"Failed loading Parameter '{self.name}' from saved params: dtype "
                    f"incompatible expected {self.dtype} vs saved {data.dtype}. Set "
                    "cast_dtype=True to cast the dtype of saved params.")
        if self._stype != data.stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise AssertionError(f"Failed to load Parameter '{self.name}' on {ctx} "
                                         "because it was previous initialized on "
                                         f"{self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise AssertionError(f"Failed to load Parameter '{self.name}' on {ctx} because "
                                     f"it was previous initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def _reduce(self):
        """The value on cpu (the mean over contexts)."""
        ctx = cpu()
        if self._stype == "default":
            block = self.list_data()
            if len(block) > 1:
                return ndarray.add_n(*(w.copyto(ctx) for w in block)) / len(block)
            return self.data().copyto(ctx)
        if self._trainer is None:
            return self._data[0].copyto(ctx)
        rows = ndarray.arange(0, self.shape[0], dtype="int64", ctx=ctx)
        data = ndarray.zeros(self.shape, stype="row_sparse", ctx=ctx)
        self._trainer._row_sparse_pull(self, data, rows, full_idx=True)
        return data

    def reset_ctx(self, ctx):
        """Move this parameter to `ctx` (a Context or a list of them)."""
        if ctx is None:
            ctx = [context.current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it "
                             "has not been initialized.")

    def set_data(self, data):
        """Set the value on every context (kept for later when initialization is deferred)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise AssertionError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if (trainer is not None and getattr(trainer, "_kv_initialized", False)
                and getattr(trainer, "_update_on_kvstore", False)):
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()
        for arr in self._check_and_get(self._data, list):
            arr[:] = data

    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing when uninitialized or grad_req='null')."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def var(self):
        """The Symbol variable of this parameter (shape, dtype, lr/wd multipliers, init)."""
        if self._var is None:
            init = self.init
            if init is not None and not isinstance(init, str) and not hasattr(init, "dumps"):
                init = None
            # unknown dims as 0 (what mxc's shape inference completes, also with np_shape on)
            self._var = symbol.var(self.name, shape=self._shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=init,
                                   stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Cast the data and gradients to `dtype`."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is None:
                return
            self._grad = [g.astype(dtype) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A Parameter that autograd and Trainer leave alone (grad_req is always 'null'); its value
    can still be changed with ``set_data``."""

    def __init__(self, name, value):
        if not isinstance(value, ndarray.NDArray):
            value = ndarray.array(value)
            if is_np_array():  # np semantics
                from ..numpy_extension._op import as_np
                value = as_np(value)
        self.value = value
        init_name = f"Constant_{name}_{id(self)}"
        mod = _init_module()
        captured = value

        class _Init(mod.Initializer):
            def _init_weight(self, _, arr):
                captured.copyto(arr)
        mod.alias(init_name)(_Init)
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.')

    def _finish_deferred_init(self):
        if self._deferred_init and self._deferred_init[3] is None:
            init, ctx, default_init, _ = self._deferred_init
            self._deferred_init = (init, ctx, default_init, self.value.astype(self.dtype))
        super()._finish_deferred_init()


class ParameterDict:
    """An ordered name -> Parameter dict whose ``get`` creates ``prefix + name`` parameters
    (taken from `shared` first when given)."""

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter ``prefix + name`` (from here or `shared`), created with `kwargs` when
        missing; an existing one must agree with the attributes given."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if hasattr(param, k) and getattr(param, k) is not None:
                existing = getattr(param, k)
                if k == "shape" and v is not None and len(v) == len(existing):
                    merged, ok = [], True
                    for d1, d2 in zip(v, existing):
                        if d1 != d2 and d1 > 0 and d2 > 0:
                            ok = False
                            break
                        merged.append(d2 if d1 in (0, -1) else d1)
                    if ok:
                        param._shape = tuple(merged)
                        continue
                elif k == "dtype" and v is not None and _same_dtype(v, existing):
                    continue
                if not (v is None or v == existing):
                    raise AssertionError(
                        f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                        f"match with stored for attribute '{k}': desired '{v}' vs stored "
                        f"'{getattr(param, k)}'.")
            else:
                setattr(param, k, v)
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created from `value` when missing."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               "to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise AssertionError(f"Parameter '{name}' already exists but it is not a "
                                     "constant.")
            if isinstance(value, ndarray.NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if not (param.shape == value.shape and (param.value.asnumpy() == value).all()):
                raise AssertionError(f"Constant '{name}' already exists but it's value doesn't "
                                     "match new value")
        return param

    def update(self, other):
        """Add every Parameter of `other` (a name may not map to two different Parameters)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise AssertionError("Cannot update self with other because they have "
                                     f"different Parameters with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every Parameter (`init` is the default for those without their own)."""
        if init is None:
            init = _default_init()
        if verbose and hasattr(init, "set_verbosity"):
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.values():
            if p.grad_req == "null" or p._grad is None:
                continue
            for g in p.list_grad():
                g[:] = 0

    def reset_ctx(self, ctx):
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        s = set()
        for p in self.values():
            s.update(p.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Set attribute `name` to `value` on every Parameter."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=""):
        """Save every Parameter's value (names with `strip_prefix` removed)."""
        arg_dict = {}
        for p in self.values():
            weight = p._reduce()
            if not p.name.startswith(strip_prefix):
                raise ValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{p.name}' does not start with '{strip_prefix}'. this may be due to "
                    "your Block shares parameters from other Blocks or you forgot to use "
                    "'with name_scope()' when creating child blocks. For more info on naming, "
                    f"please see {_NAMING_URL}")
            arg_dict[p.name[len(strip_prefix):]] = weight
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by ``save`` (or MXNet's 'arg:'/'aux:' files)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise AssertionError(
                        f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' "
                        f"does not start with '{restore_prefix}'. For more info on naming, "
                        f"please see {_NAMING_URL}")
        loaded = ndarray.load(filename)
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load from a dict name -> NDArray ('arg:'/'aux:' prefixes are dropped)."""
        lprefix = len(restore_prefix)
        if isinstance(param_dict, dict):
            pairs = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v)
                     for k, v in param_dict.items()]
        else:
            pairs = param_dict
        arg_dict = {restore_prefix + k: v for k, v in pairs}
        where = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise AssertionError(
                        f"Parameter '{name[lprefix:]}' is missing in {where}, which contains "
                        f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure "
                        "source and target networks have the same prefix.For more info on "
                        f"naming, please see {_NAMING_URL}")
        for name in arg_dict:
            if name not in self._params:
                if not ignore_extra:
                    raise AssertionError(
                        f"Parameter '{name[lprefix:]}' loaded from {where} is not present in "
                        f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}. "
                        "Set ignore_extra to True to ignore. Please make sure source and target "
                        "networks have the same prefix.For more info on naming, please see "
                        f"{_NAMING_URL}")
                continue
            self[name]._load_init(arg_dict[name], ctx, cast_dtype=cast_dtype,
                                  dtype_source=dtype_source)
