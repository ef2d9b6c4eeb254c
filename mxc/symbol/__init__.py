"""``mx.sym``: Symbol, Variable, Group, load/load_json and one function per registered operator
(the same OpDefs as ``mx.nd``), plus the ``_internal``, ``contrib``, ``linalg``, ``random``,
``sparse`` and ``op`` namespaces MXNet generates."""
import sys as _sys
import types as _types
from numbers import Number as _Number

from .. import ops as _ops  # noqa: F401  registers every operator family
from ..ops import registry as _registry
from .symbol import (Symbol, var, Variable, Group, load, load_json, pow, power,  # noqa: F401
                     maximum, minimum, hypot, zeros, ones, full, arange, linspace, eye,
                     histogram, split_v2)
from . import symbol  # noqa: F401
from . import recorded as _recorded  # noqa: F401  (mx.autograd.get_symbol)
from . import register as _register
from . import control_flow as _control_flow
from ..attribute import AttrScope  # noqa: F401
from ..ndarray.contrib import zipfian_candidates as _zipfian_candidates
from ..name import NameManager, Prefix  # noqa: F401

_register.populate(globals())


def _namespace(modname, prefix=None, startswith=None):
    mod = _types.ModuleType(f"mxc.symbol.{modname}")
    ns = globals()
    for name in _registry.names():
        if prefix is not None and name.startswith(prefix):
            setattr(mod, name[len(prefix):], ns[name])
        elif startswith is not None and name.startswith(startswith):
            setattr(mod, name, ns[name])
    _sys.modules[mod.__name__] = mod
    return mod


_internal = _namespace("_internal", startswith="_")
contrib = _namespace("contrib", prefix="_contrib_")
contrib.foreach = _control_flow.foreach
contrib.while_loop = _control_flow.while_loop
contrib.cond = _control_flow.cond


def _rand_zipfian(true_classes, num_sampled, range_max):
    return _zipfian_candidates(_sys.modules[__name__], true_classes, num_sampled, range_max)


_rand_zipfian.__name__ = "rand_zipfian"
_rand_zipfian.__doc__ = ("mx.nd.contrib.rand_zipfian's graph "
                         "(mxc.ndarray.contrib.zipfian_candidates).")
contrib.rand_zipfian = _rand_zipfian
linalg = _namespace("linalg", prefix="_linalg_")
image = _namespace("image", prefix="_image_")
from . import sparse  # noqa: E402,F401  the mx.sym.sparse namespace
op = _types.ModuleType("mxc.symbol.op")
for _n in _registry.names():
    setattr(op, _n, globals()[_n])
_sys.modules["mxc.symbol.op"] = op
random = _types.ModuleType("mxc.symbol.random")
_sys.modules["mxc.symbol.random"] = random


def _random_fn(dist, rname, sname, pnames):
    def fn(*params, shape=None, dtype=None, **kwargs):
        params = list(params) + [kwargs.pop(p) for p in pnames[len(params):] if p in kwargs]
        kw = dict(kwargs)
        if dtype is not None:
            kw["dtype"] = dtype
        if params and isinstance(params[0], Symbol):
            if shape is not None:
                kw["shape"] = shape
            if dist == "exponential":       # the sampler takes the rate, 1 / scale
                params = [1.0 / params[0]] + params[1:]
            return globals()[sname](*params, **kw)
        kw["shape"] = 1 if shape is None else shape
        rparams = [p.name for p in _registry.get(rname).params]
        defaults = {"uniform": (0.0, 1.0), "normal": (0.0, 1.0), "gamma": (1.0, 1.0),
                    "exponential": (1.0,), "poisson": (1.0,), "negative_binomial": (1, 1.0),
                    "generalized_negative_binomial": (1.0, 1.0), "randint": ()}.get(dist, ())
        vals = params + list(defaults[len(params):])
        if dist == "exponential" and vals:
            vals = [1.0 / vals[0]]
        for n, v in zip(rparams, vals):
            if isinstance(v, _Number):
                kw.setdefault(n, v)
        return globals()[rname](**kw)
    fn.__name__ = dist
    return fn


for _dist, _p in (("uniform", ("low", "high")), ("normal", ("loc", "scale")),
                  ("gamma", ("alpha", "beta")), ("exponential", ("scale",)),
                  ("poisson", ("lam",)), ("negative_binomial", ("k", "p")),
                  ("generalized_negative_binomial", ("mu", "alpha")), ("randint", ("low", "high"))):
    if f"_random_{_dist}" in _registry.names():
        setattr(random, _dist, _random_fn(_dist, f"_random_{_dist}", f"_sample_{_dist}", _p))
for _n in ("multinomial", "shuffle"):
    for _opname in (f"_sample_{_n}", f"_{_n}", _n):    # not `_full`: that is an operator here
        if _opname in _registry.names():
            setattr(random, _n, globals()[_opname])
            break
def _randn(*shape, **kwargs):
    """Normal samples of `shape` (loc, scale, dtype as keywords), as mx.sym.random.randn."""
    loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
    data = kwargs.pop("data", None)
    if data is not None:        # samples shaped like `data` (MXNet's test passes data=)
        dtype = kwargs.pop("dtype", None)
        if dtype is not None:
            data = globals()["cast"](data, dtype=dtype)
        return random.normal_like(data, loc=loc, scale=scale, **kwargs)
    return random.normal(loc, scale, shape=shape, **kwargs)


random.randn = _randn
for _opname in _registry.names():       # MXNet's generated random.<dist>_like and pdf_<dist>
    if _opname.startswith("_random_") and (_opname.endswith("_like")
                                           or _opname.startswith("_random_pdf_")):
        # under the short name, which automatic node names use (uniform_like0), as MXNet's
        setattr(random, _opname[len("_random_"):],
                _register.make_function(_registry.get(_opname), _opname[len("_random_"):]))
del _n, _dist, _p, _opname
