"""``mx.init`` / ``mx.initializer``: how parameters get their first values (MXNet 1.9.1's API).

An :class:`Initializer` is called with an :class:`InitDesc` (a parameter name carrying the
variable's attributes) and the NDArray to fill. It picks a rule from the name's suffix
(``weight``, ``bias``, ``gamma``, ``beta``, ``min``, ``max``, ...) unless the variable's
``__init__`` attribute names an initializer of its own. Random initializers draw through
``mx.random`` so ``mx.random.seed`` makes them reproducible.
"""
import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from . import ndarray as _nd
from . import random as _random
from .base import MXNetError
from .ndarray import NDArray

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
           "Bilinear", "LSTMBias", "FusedRNN"]


class InitDesc(str):
    """A parameter's name (it *is* the name string) plus what initialisation needs to know.

    Parameters
    ----------
    name : str
        The parameter's name.
    attrs : dict of str to str, optional
        The variable's attributes (``__init__`` among them).
    global_init : Initializer, optional
        The initializer in charge of the whole model, for initializers that delegate parts.
    """

    def __new__(cls, name, attrs=None, global_init=None):
        desc = super().__new__(cls, name)
        desc.attrs = attrs or {}
        desc.global_init = global_init
        return desc


def _fill_random(kind, a, b, arr):
    # draw straight into `arr`; the draw's dtype follows arr's floating dtype
    fn = _random.uniform if kind == "uniform" else _random.normal
    kw = {}
    if np.dtype(arr.dtype) in (np.float16, np.float64):
        kw["dtype"] = np.dtype(arr.dtype).name
    fn(a, b, arr.shape, out=arr, **kw)


class Initializer:
    """Base class of initializers: subclasses implement ``_init_weight`` (and may override the
    other ``_init_*`` rules)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log every initialised parameter (with ``print_func(arr)``, by default its
        root-mean-square) when `verbose`. Returns self."""
        self._verbose = verbose
        if print_func is None:
            def rms(x):
                return str((_nd.norm(x) / sqrt(x.size)).asscalar())
            print_func = rms
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self):
        """This initializer as the JSON string ``create`` accepts: ``'["name", {kwargs}]'``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    _SUFFIX_RULES = (("weight", "_init_weight"), ("bias", "_init_bias"),
                     ("gamma", "_init_gamma"), ("beta", "_init_beta"),
                     ("min", "_init_zero"), ("max", "_init_one"),
                     ("weight_quantize", "_init_quantized_weight"),
                     ("bias_quantize", "_init_quantized_bias"))

    def __call__(self, desc, arr):
        """Fill `arr` for the parameter `desc` (an InitDesc; a plain str is the deprecated
        legacy form)."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            # the variable named its own initializer (mx.sym.Variable(init=...))
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, rule in self._SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, rule)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. "
                      "Please use init(mx.init.InitDesc(...), NDArray) instead.",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if not isinstance(arr, NDArray):
            raise TypeError("arr must be NDArray")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        elif name.endswith("bias"):
            self._init_bias(name, arr)
        elif name.endswith("gamma"):
            self._init_gamma(name, arr)
        elif name.endswith("beta"):
            self._init_beta(name, arr)
        elif name.endswith("weight"):
            self._init_weight(name, arr)
        elif name.endswith("moving_mean") or name.endswith("moving_inv_var") \
                or name.endswith("moving_avg") or name.endswith("min"):
            self._init_zero(name, arr)
        elif name.endswith("moving_var") or name.endswith("max"):
            self._init_one(name, arr)
        else:
            self._init_default(name, arr)

    @staticmethod
    def _bilinear_values(shape):
        if len(shape) != 4:
            raise ValueError(f"bilinear initialisation needs a 4-d (num_filter, channels, "
                             f"height, width) array, got shape {tuple(shape)}")
        f = np.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        x = np.arange(shape[3], dtype=np.float64)
        y = np.arange(shape[2], dtype=np.float64)
        kernel = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c)).astype(np.float32)
        return np.broadcast_to(kernel, tuple(shape))

    def _init_bilinear(self, _, arr):
        arr[:] = self._bilinear_values(arr.shape)

    def _init_loc_bias(self, _, arr):
        if arr.shape[0] != 6:
            raise ValueError(f"stn_loc bias must have 6 entries, got shape {arr.shape}")
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_quantized_bias(self, _, arr):
        arr[:] = 0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__} must override _init_weight")

    def _init_quantized_weight(self, _, arr):
        vals = _random.randint(-127, 127, shape=arr.shape, dtype="int32").asnumpy()
        arr[:] = vals.astype(np.int8)

    def _init_default(self, name, _):
        raise ValueError(
            f"Unknown initialization pattern for {name}. Default initialization is now limited "
            f'to "weight", "bias", "gamma" (1.0), and "beta" (0.0). Please use '
            f"mx.sym.Variable(init=mx.init.*) to set initialization pattern")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._kwargs})"


# ---------------------------------------------------------------------------------- registry
_REGISTRY = {}


def register(klass, name=None):
    """Register an Initializer subclass under its lower-cased class name (or `name`), so that
    ``create('name')`` and ``init=...`` strings find it. Returns the class (usable as a
    decorator)."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"Can only register subclass of Initializer, got {klass!r}")
    key = (name or klass.__name__).lower()
    if key in _REGISTRY:
        old = _REGISTRY[key]
        warnings.warn(f"New initializer {klass.__module__}.{klass.__name__} registered with "
                      f"name {key} is overriding existing initializer "
                      f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
    _REGISTRY[key] = klass
    return klass


def alias(*aliases):
    """Decorator: register the class under extra names too."""
    def reg(klass):
        for a in aliases:
            register(klass, a)
        return klass
    return reg


def create(*args, **kwargs):
    """An Initializer from an instance (returned as is), a registered name plus constructor
    arguments, a dict ``{'initializer': name, **kwargs}`` or a JSON string from ``dumps()``."""
    if args:
        name, args = args[0], args[1:]
    else:
        if "initializer" not in kwargs:
            raise TypeError("create() needs an initializer name or instance")
        name = kwargs.pop("initializer")
    if isinstance(name, Initializer):
        if args or kwargs:
            raise ValueError("initializer is already an instance. Additional arguments are "
                             "invalid")
        return name
    if isinstance(name, dict):
        return create(**name)
    if not isinstance(name, str):
        raise TypeError(f"initializer must be of string type, got {type(name).__name__}")
    if name.startswith("["):
        if args or kwargs:
            raise ValueError("a JSON initializer spec takes no extra arguments")
        name, kw = json.loads(name)
        return create(name, **kw)
    if name.startswith("{"):
        if args or kwargs:
            raise ValueError("a JSON initializer spec takes no extra arguments")
        return create(**json.loads(name))
    key = name.lower()
    if key not in _REGISTRY:
        raise ValueError(f"{name} is not registered. Please register with "
                         f"initializer.register first (known: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[key](*args, **kwargs)


# ------------------------------------------------------------------------ composite helpers
class Load:
    """Initialise from saved arrays (a dict name -> NDArray, or a ``.params`` file name);
    ``arg:``/``aux:`` prefixes are dropped. Names not found go to `default_init`."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = _nd.load(param)
        if not isinstance(param, dict):
            raise TypeError("Load needs a dict of name -> NDArray or the name of a file that "
                            f"holds one, got {type(param).__name__}")
        self.param = {}
        for name, arr in param.items():
            if name.startswith("arg:") or name.startswith("aux:"):
                name = name[4:]
            self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            src = self.param[name]
            if tuple(arr.shape) != tuple(src.shape):
                raise AssertionError(
                    f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                    f"target {tuple(arr.shape)} vs loaded {tuple(src.shape)}")
            arr[:] = src
            if self.verbose:
                logging.info("Initialized %s by loading", name)
        else:
            if self.default_init is None:
                raise AssertionError(f"Cannot Initialize {name}. Not found in loaded param "
                                     "and no default Initializer is provided.")
            self.default_init(name, arr)
            if self.verbose:
                logging.info("Initialized %s by default", name)


class Mixed:
    """Initialise each parameter with the first initializer whose regex matches its name."""

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed: {len(patterns)} patterns but {len(initializers)} "
                             "initializers")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError(f"Parameter name {name} did not match any pattern. Consider adding "
                         'a ".*" pattern at the end with a default Initializer.')


# ------------------------------------------------------------------------- the initializers
@register
@alias("zeros")
class Zero(Initializer):
    """Weights to 0."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Weights to 1."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Weights to `value` (a scalar, or an array broadcast to the weight's shape)."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        val = self._kwargs["value"]
        if isinstance(val, np.ndarray):
            self._kwargs["value"] = val.tolist()
        elif isinstance(val, NDArray):
            self._kwargs["value"] = val.asnumpy().tolist()
        return json.dumps([type(self).__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Weights drawn uniformly from [-scale, scale]."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _fill_random("uniform", -self.scale, self.scale, arr)


@register
class Normal(Initializer):
    """Weights drawn from N(0, sigma^2)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _fill_random("normal", 0, self.sigma, arr)


@register
class Orthogonal(Initializer):
    """An orthogonal matrix times `scale` (Saxe et al. 2013), from the SVD of a random
    (uniform or normal, `rand_type`) matrix of shape (shape[0], prod(shape[1:]))."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == "normal":
            tmp = _random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            raise ValueError(f"Orthogonal: unknown rand_type {self.rand_type!r} "
                             "(use 'uniform' or 'normal')")
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """Glorot/Xavier: uniform in [-s, s] (rnd_type 'uniform') or N(0, s^2) ('gaussian') with
    s = sqrt(magnitude / factor), factor the average ('avg'), fan-in ('in') or fan-out ('out')."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It "
                             "requires at least 2D.")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError("Incorrect factor type")
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _fill_random("uniform", -scale, scale, arr)
        elif self.rnd_type == "gaussian":
            _fill_random("normal", 0, scale, arr)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialisation for PReLU nets: Gaussian Xavier with magnitude
    2 / (1 + slope^2)."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Bilinear-interpolation kernels (for Deconvolution upsampling)."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        self._init_bilinear(_, arr)


@register
class LSTMBias(Initializer):
    """LSTM biases: zeros except the forget gate's block (the second quarter), which gets
    `forget_bias`."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


@register
class FusedRNN(Initializer):
    """Initialise the packed parameter vector of a fused RNN layer piece by piece with `init`
    (or the global initializer), LSTM forget-gate biases set to `forget_bias`."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            klass, kwargs = json.loads(init)
            init = _REGISTRY[klass.lower()](**kwargs)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        try:
            from .rnn import rnn_cell
        except ImportError as e:  # pragma: no cover - depends on the legacy mx.rnn package
            raise MXNetError("FusedRNN initializer needs mx.rnn.FusedRNNCell, which could not "
                             f"be imported: {e}") from e
        cell = rnn_cell.FusedRNNCell(self._num_hidden, self._num_layers, self._mode,
                                     self._bidirectional, forget_bias=self._forget_bias,
                                     prefix="")
        args = cell.unpack_weights({"parameters": arr})
        for name in args:
            arg_desc = InitDesc(name, global_init=desc.global_init)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                args[name][:] = self._forget_bias
            elif self._init is None:
                desc.global_init(arg_desc, args[name])
            else:
                self._init(arg_desc, args[name])
        arr[:] = cell.pack_weights(args)["parameters"]
