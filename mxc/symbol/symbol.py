"""``mx.sym.Symbol``: a graph of operator nodes, with MXNet 1.9.1's API and semantics.

A graph is made of ``_Node`` objects: a variable (``op`` None) or an operator (an OpDef of the
registry) with its attribute strings (everything MXNet keeps in ``attrs.dict``: the operator's
parameters as the user gave them and the ``__hidden__`` attributes) and its input entries
``(node, output index, version)``. A Symbol is a list of output entries. Nodes are never
changed once a Symbol refers to them except by ``_set_attr``/``_compose`` on a fresh copy, as
in MXNet (``__call__`` copies first).
"""
import os
import sys
import warnings
from numbers import Number

import numpy as _np

from ..attribute import AttrScope
from ..base import MXNetError, NotImplementedForSymbol, np_dtype
from .._core import atomic_write
from ..name import NameManager
from ..ops.custom import _prop
from ..ops.registry import METHODS
from ..context import current_context
from .. import util as _util

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "pow", "power", "maximum",
           "minimum", "hypot", "zeros", "ones", "full", "arange", "linspace", "eye", "histogram"]

# attributes MXNet stores as "__key__" and also lists under "key"
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")

# MXNet's dtype codes (``__dtype__`` of variables, mshadow's type flags)
DTYPE_NP_TO_MX = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
                  "int64": 6, "bool": 7, "bfloat16": 12}
DTYPE_MX_TO_NP = {v: k for k, v in DTYPE_NP_TO_MX.items()}
STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}

_bool_hook = None   # bool(Symbol) while gluon traces hybrid_forward: set by mxc.gluon.block


def _is_hidden(k):
    return len(k) > 4 and k.startswith("__") and k.endswith("__")


def _hidden_key(key, value):
    """MXNet's C API renames ``ctx_group`` to ``__ctx_group__`` and rejects ``x_lr_mult``."""
    for k in HIDDEN_KEYS:
        if key == k:
            return f"__{k}__"
        if key.endswith(k) and not _is_hidden(key):
            raise MXNetError(f"setting variable attributes with {key} is deprecated. please "
                             f"instead use\nw = Variable({k}={value})\nsym = YourSymbolName("
                             f"{key[:len(key) - len(k) - 1]}=w)")
    return key


class _Node:
    """One node of a graph: a variable (op None) or an operator."""

    __slots__ = ("op", "name", "attrs", "inputs", "version", "_parsed", "subgraphs", "__weakref__")

    def __init__(self, op, name, attrs=None, inputs=None, subgraphs=()):
        self.op = op
        # Symbols run by a control-flow operator (_foreach, _while_loop, _cond): its operator
        # sees them in its typed attributes as "_subgraphs"
        self.subgraphs = subgraphs
        self.name = name
        self.attrs = attrs if attrs is not None else {}
        self.inputs = inputs if inputs is not None else []
        self.version = 0
        self._parsed = None

    def is_variable(self):
        return self.op is None

    @property
    def parsed(self):
        """The operator's typed parameters from the attribute strings (hidden ones left out)."""
        if self._parsed is None:
            p = self.op.parse({k: v for k, v in self.attrs.items() if not _is_hidden(k)})
            self._parsed = dict(p, _subgraphs=self.subgraphs) if self.subgraphs else p
        return self._parsed

    def custom_prop(self):
        return _prop(self.parsed)

    def num_outputs(self):
        """All outputs (hidden ones included)."""
        if self.op is None:
            return 1
        if self.op.name == "Custom":
            return len(self.custom_prop().list_outputs())
        return self.op.n_out(self.parsed)

    def num_visible(self):
        if self.op is None:
            return 1
        if self.op.name == "Custom":
            return len(self.custom_prop().list_outputs())
        return self.op.n_visible(self.parsed)

    def output_names(self):
        if self.op is None:
            return [self.name]
        n = self.num_outputs()
        if self.op.name == "Custom":
            names = list(self.custom_prop().list_outputs())
        elif self.op.output_names is not None:
            on = self.op.output_names
            names = list(on(self.parsed) if callable(on) else on)[:n]
        elif n == 1 or self.num_visible() == 1:
            names = ["output"] + [f"output{i}" for i in range(1, n)]
        else:
            names = [f"output{i}" for i in range(n)]
        return [f"{self.name}_{s}" for s in names]

    def input_names(self):
        """Names of the operator's inputs with these parameters (for variables it creates)."""
        op = self.op
        if op.name == "Custom":
            prop = self.custom_prop()
            return list(prop.list_arguments()) + list(prop.list_auxiliary_states())
        if op.variadic:
            n = len(self.inputs) if self.inputs else int(self.parsed.get(op.variadic) or 0)
            if op.inputs and len(op.inputs) == 1 and op.variadic == "num_args" and op.name != "Concat":
                return [f"arg{i}" for i in range(n)]
            return [f"arg{i}" for i in range(n)]
        if op.input_names is not None:
            return list(op.input_names(self.parsed))
        return list(op.inputs)

    def aux_indices(self):
        if self.op is None:
            return ()
        if self.op.name == "Custom":
            prop = self.custom_prop()
            na = len(prop.list_arguments())
            return tuple(range(na, na + len(prop.list_auxiliary_states())))
        return tuple(self.op.mutate)


def _topo(entries):
    """Nodes reachable from `entries`, inputs before users, in DFS post-order (nnvm's order)."""
    order, seen = [], set()
    for head in entries:
        if id(head[0]) in seen:
            continue
        stack = [(head[0], 0)]
        seen.add(id(head[0]))
        while stack:
            node, i = stack.pop()
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


def _copy_graph(entries):
    """A deep copy of the graph behind `entries`; returns the new entries."""
    memo = {}
    for node in _topo(entries):
        new = _Node(node.op, node.name, dict(node.attrs),
                    [(memo[id(e[0])], e[1], e[2]) for e in node.inputs], node.subgraphs)
        new.version = node.version
        memo[id(node)] = new
    return [(memo[id(e[0])], e[1], e[2]) for e in entries]


def _without_amp_casts(entries):
    """A copy of the graph behind `entries` where every input that reads an amp_cast or
    amp_multicast reads that node's own input instead (output i of a multicast -> its input
    i). Casts that are graph outputs stay. MXNet's RemoveAmpCast pass, applied when a
    converted model is saved."""
    memo, repl = {}, {}

    def resolve(e):
        r = repl.get((id(e[0]), e[1]))
        return r if r is not None else (memo[id(e[0])], e[1], e[2])

    for node in _topo(entries):
        ins = [resolve(e) for e in node.inputs]
        new = _Node(node.op, node.name, dict(node.attrs), ins, node.subgraphs)
        new.version = node.version
        memo[id(node)] = new
        if node.op is not None and node.op.name in ("amp_cast", "amp_multicast"):
            for i, src in enumerate(ins):
                repl[(id(node), i)] = src
    return [(memo[id(e[0])], e[1], e[2]) for e in entries]


def _sym_module():
    return sys.modules["mxc.symbol"]


def _call(_opname, *args, **kwargs):
    return getattr(_sym_module(), _opname)(*args, **kwargs)



class _NoExecutor:
    def __getattr__(self, name):
        raise MXNetError(f"Symbol.{name}: mxc.executor is not loaded")


# bind, simple_bind and evaluate build an Executor, which sits above Symbol (it imports this
# module); mxc.executor installs itself here when it loads
_executor = _NoExecutor()


def install_executor(executor):
    """Called by mxc.executor with an object holding bind, simple_bind and evaluate."""
    global _executor
    _executor = executor

class Symbol:
    """A symbolic graph: one or several outputs of operator and variable nodes."""

    __slots__ = ("_outputs", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, outputs=None):
        self._outputs = list(outputs) if outputs is not None else []

    # ---- identity -----------------------------------------------------------------------------
    @property
    def handle(self):
        return self

    def as_nd_ndarray(self):
        return self

    def __repr__(self):
        name = self.name
        if name is None:
            return "<%s group [%s]>" % (type(self).__name__, ", ".join(s.name for s in self))
        return "<%s %s>" % (type(self).__name__, name)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __len__(self):
        return len(self._outputs)

    def __bool__(self):
        if _bool_hook is not None:      # a HybridBlock being traced decides (mxc.gluon.block)
            decided = _bool_hook(self)
            if decided is not None:
                return decided
        raise NotImplementedForSymbol(self.__bool__, "bool")

    __hash__ = object.__hash__

    def _entry(self, what="input"):
        if len(self._outputs) != 1:
            raise MXNetError(f"{what} must be a single-output symbol, got a group of "
                             f"{len(self._outputs)} outputs ({self.list_outputs()})")
        return self._outputs[0]

    # ---- Python operators ---------------------------------------------------------------------
    def _binary(self, other, sym_op, scalar_op, what):
        if isinstance(other, Symbol):
            return _call(sym_op, self, other)
        if isinstance(other, (Number, _np.generic)):
            return _call(scalar_op, self, scalar=other)
        raise TypeError("type %s not supported" % str(type(other)))

    def __add__(self, other):
        return self._binary(other, "_Plus", "_PlusScalar", "+")

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        return self._binary(other, "_Minus", "_MinusScalar", "-")

    def __rsub__(self, other):
        if isinstance(other, (Number, _np.generic)):
            return _call("_RMinusScalar", self, scalar=other)
        raise TypeError("type %s not supported" % str(type(other)))

    def __mul__(self, other):
        return self._binary(other, "_Mul", "_MulScalar", "*")

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        return self._binary(other, "_Div", "_DivScalar", "/")

    __div__ = __truediv__

    def __rtruediv__(self, other):
        if isinstance(other, (Number, _np.generic)):
            return _call("_RDivScalar", self, scalar=other)
        raise TypeError("type %s not supported" % str(type(other)))

    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return self._binary(other, "_Mod", "_ModScalar", "%")

    def __rmod__(self, other):
        if isinstance(other, (Number, _np.generic)):
            return _call("_RModScalar", self, scalar=other)
        raise TypeError("type %s not supported" % str(type(other)))

    def __pow__(self, other):
        return self._binary(other, "_Power", "_PowerScalar", "**")

    def __rpow__(self, other):
        if isinstance(other, (Number, _np.generic)):
            return _call("_RPowerScalar", self, scalar=other)
        raise TypeError("type %s not supported" % str(type(other)))

    def __neg__(self):
        return self.__mul__(-1.0)

    def __abs__(self):
        return self.abs()

    def __eq__(self, other):
        return self._binary(other, "_equal", "_equal_scalar", "==")

    def __ne__(self, other):
        return self._binary(other, "_not_equal", "_not_equal_scalar", "!=")

    def __gt__(self, other):
        return self._binary(other, "_greater", "_greater_scalar", ">")

    def __ge__(self, other):
        return self._binary(other, "_greater_equal", "_greater_equal_scalar", ">=")

    def __lt__(self, other):
        return self._binary(other, "_lesser", "_lesser_scalar", "<")

    def __le__(self, other):
        return self._binary(other, "_lesser_equal", "_lesser_equal_scalar", "<=")

    def _inplace(self, *a):
        raise NotImplementedError("in-place operators are not supported for Symbol")

    __iadd__ = __isub__ = __imul__ = __idiv__ = __itruediv__ = _inplace

    # ---- copies and pickling ------------------------------------------------------------------
    def __copy__(self):
        return Symbol(_copy_graph(self._outputs))

    def __deepcopy__(self, _memo):
        return Symbol(_copy_graph(self._outputs))

    def __getstate__(self):
        return {"handle": self.tojson() if self._outputs else None}

    def __setstate__(self, state):
        h = state.get("handle") if isinstance(state, dict) else None
        self._outputs = load_json(h)._outputs if h is not None else []

    # ---- composition --------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        name = kwargs.pop("name", None)
        if args and kwargs:
            raise TypeError("compose only accept input Symbols either as positional or keyword "
                            "arguments, not both")
        for a in list(args) + list(kwargs.values()):
            if not isinstance(a, Symbol):
                raise TypeError("Compose expect `Symbol` as arguments")
        nodes = _topo(self._outputs)
        variables = [n for n in nodes if n.op is None]
        args_names = [n.name for n in variables]
        repl = {}
        if args:
            argv = [n for n in variables if n.name in set(self.list_arguments())]
            if len(args) > len(argv):
                raise MXNetError(f"compose: {len(args)} positional inputs given, the symbol has "
                                 f"{len(argv)} arguments ({[n.name for n in argv]})")
            for n, a in zip(argv, args):
                repl[id(n)] = a._entry("compose argument")
        else:
            for k, a in kwargs.items():
                hits = [n for n in variables if n.name == k]
                if not hits:
                    raise MXNetError(f"compose: no argument named {k!r}; the symbol has "
                                     f"{args_names}")
                for n in hits:
                    repl[id(n)] = a._entry("compose argument")
        for node in nodes:
            node.inputs = [repl.get(id(e[0]), e) if e[0].op is None else e for e in node.inputs]
        self._outputs = [repl.get(id(e[0]), e) if e[0].op is None else e for e in self._outputs]
        if name and len(self._outputs) == 1 and self._outputs[0][0].op is not None:
            self._outputs[0][0].name = name

    # ---- outputs ------------------------------------------------------------------------------
    def __getitem__(self, index):
        output_count = len(self)
        if isinstance(index, slice):
            start = 0 if index.start is None else index.start
            stop = output_count if index.stop is None else index.stop
            step = 1 if index.step is None else index.step
            return Group([self[i] for i in range(start, stop, step)])
        if isinstance(index, str):
            idx = None
            for i, name in enumerate(self.list_outputs()):
                if name == index:
                    if idx is not None:
                        raise ValueError('There are multiple outputs with name "%s"' % index)
                    idx = i
            if idx is None:
                raise ValueError('Cannot find output that matches name "%s"' % index)
            index = idx
        if not isinstance(index, (int, _np.integer)):
            raise TypeError("Symbol only support integer index to fetch i-th output")
        if index < 0:
            index += output_count
        if index >= output_count or index < 0:
            raise IndexError
        return Symbol([self._outputs[int(index)]])

    @property
    def name(self):
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def attr(self, key):
        if len(self._outputs) != 1:
            return None
        node = self._outputs[0][0]
        if key == "name":
            return node.name
        if key in node.attrs:
            return node.attrs[key]
        if key in HIDDEN_KEYS:
            return node.attrs.get(f"__{key}__")
        return None

    @staticmethod
    def _with_hidden(d):
        out = dict(d)
        for k in HIDDEN_KEYS:
            if f"__{k}__" in d:
                out[k] = d[f"__{k}__"]
        return out

    def list_attr(self, recursive=False):
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        if not self._outputs:
            return {}
        return self._with_hidden(self._outputs[0][0].attrs)

    def attr_dict(self):
        ret = {}
        for node in _topo(self._outputs):
            if node.attrs:
                ret[node.name] = self._with_hidden(node.attrs)
        return ret

    def _set_attr(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError("Set Attr only accepts string values")
        if len(self._outputs) != 1:
            raise MXNetError("Symbol._set_attr: only works for non-grouped symbols")
        node = self._outputs[0][0]
        for key, value in kwargs.items():
            node.attrs[_hidden_key(key, value)] = str(value)
        node._parsed = None
        if node.op is not None:
            node.parsed     # noqa: B018  (validates the new parameters)

    def get_internals(self):
        outs = []
        for node in _topo(self._outputs):
            outs.extend((node, i, 0) for i in range(node.num_visible()))
        return Symbol(outs)

    def get_children(self):
        outs, seen = [], set()
        for e in self._outputs:
            if id(e[0]) in seen:
                continue
            seen.add(id(e[0]))
            outs.extend(e[0].inputs)
        if not outs:
            return None
        return Symbol(outs)

    def list_arguments(self):
        nodes = _topo(self._outputs)
        aux = self._aux_ids(nodes)
        return [n.name for n in nodes if n.op is None and id(n) not in aux]

    def list_auxiliary_states(self):
        nodes = _topo(self._outputs)
        aux = self._aux_ids(nodes)
        return [n.name for n in nodes if n.op is None and id(n) in aux]

    def list_inputs(self):
        return [n.name for n in _topo(self._outputs) if n.op is None]

    @staticmethod
    def _aux_ids(nodes):
        aux = set()
        for n in nodes:
            for i in n.aux_indices():
                if i < len(n.inputs) and n.inputs[i][0].op is None:
                    aux.add(id(n.inputs[i][0]))
        return aux

    def list_outputs(self):
        out = []
        for node, i, _ in self._outputs:
            out.append(node.output_names()[i])
        return out

    # ---- inference ----------------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        res = self._infer_shape_impl(False, *args, **kwargs)
        if res[1] is None:
            arg_shapes, _, _ = self._infer_shape_impl(True, *args, **kwargs)
            unknowns = ["%s: %s" % (n, str(s)) for n, s in zip(self.list_arguments(), arg_shapes)
                        if not s or 0 in s][:10]
            warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                          "unknown dimensions). Consider providing them as input:\n\t"
                          + "\n\t".join(unknowns), stacklevel=2)
        return res

    def infer_shape_partial(self, *args, **kwargs):
        return self._infer_shape_impl(True, *args, **kwargs)

    def _known(self, args, kwargs, what):
        if args and kwargs:
            raise ValueError(f"Can only specify known argument {what}s either by positional or "
                             "kwargs way.")
        if args:
            names = self.list_arguments()
            if len(args) > len(names):
                raise ValueError(f"infer_{what}: {len(args)} positional {what}s for "
                                 f"{len(names)} arguments")
            return {n: v for n, v in zip(names, args) if v is not None}
        return dict(kwargs)

    def _infer_shape_impl(self, partial, *args, **kwargs):
        from .infer import infer_graph
        known = self._known(args, kwargs, "shape")
        for k, v in known.items():
            if not isinstance(v, tuple):
                raise TypeError("Arguments need to be shapes (tuple), but '%s' is %s."
                                % (k, type(v)))
        if not _util.is_np_shape():
            shapes, _ = infer_graph(self, known, {}, default_dtype="float32")
            return self._collect(shapes, partial, lambda s: s is not None and 0 not in s, ())
        # numpy shape semantics: -1 is an unknown dimension and None an unknown shape (the
        # inference holds them as 0 and None, as in legacy mode)
        known = {k: tuple(0 if x == -1 else x for x in v) for k, v in known.items()}
        shapes, _ = infer_graph(self, known, {}, default_dtype="float32")
        res = self._collect(shapes, partial, lambda s: s is not None and 0 not in s, None)
        return tuple(None if r is None else
                     [None if v is None else tuple(-1 if x == 0 else x for x in v) for v in r]
                     for r in res)

    def infer_type(self, *args, **kwargs):
        res = self._infer_type_impl(False, *args, **kwargs)
        if res[1] is None:
            warnings.warn("Cannot decide type for the following arguments. Consider providing "
                          "them as input", stacklevel=2)
        return res

    def infer_type_partial(self, *args, **kwargs):
        return self._infer_type_impl(True, *args, **kwargs)

    def _infer_type_impl(self, partial, *args, **kwargs):
        from .infer import infer_graph
        known = self._known(args, kwargs, "type")
        known = {k: np_dtype(v).name for k, v in known.items() if v is not None}
        _, dtypes = infer_graph(self, {}, known, default_dtype=None)
        res = self._collect(dtypes, partial, lambda d: d is not None, None)
        return tuple(None if r is None else [None if d is None else _np.dtype(d).type for d in r]
                     for r in res)

    def _collect(self, values, partial, ok, unknown):
        nodes = _topo(self._outputs)
        aux = self._aux_ids(nodes)
        args_v = [values.get((id(n), 0)) for n in nodes if n.op is None and id(n) not in aux]
        aux_v = [values.get((id(n), 0)) for n in nodes if n.op is None and id(n) in aux]
        outs = [values.get((id(e[0]), e[1])) for e in self._outputs]
        complete = all(ok(v) for v in args_v + aux_v + outs)
        if not complete and not partial:
            return (None, None, None)
        fix = (lambda v: v if v is not None else unknown)
        return ([fix(v) for v in args_v], [fix(v) for v in outs], [fix(v) for v in aux_v])

    # ---- serialization ------------------------------------------------------------------------
    def debug_str(self):
        lines = []
        for node in _topo(self._outputs):
            if node.op is None:
                lines.append(f"Variable:{node.name}")
                continue
            lines.append("-" * 40)
            lines.append(f"Op:{node.op.name}, Name={node.name}")
            lines.append("Inputs:")
            for i, (n, k, v) in enumerate(node.inputs):
                lines.append(f"\targ[{i}]={n.name}({k}) version={v}")
            if node.attrs:
                lines.append("Attrs:")
                for k, v in sorted(node.attrs.items()):
                    lines.append(f"\t{k}={v}")
        return "\n".join(lines) + "\n"

    def tojson(self, remove_amp_cast=True):
        """The graph as MXNet 1.9.1's JSON; amp_cast/amp_multicast nodes (mx.contrib.amp's
        conversion) are left out unless ``remove_amp_cast=False``, as in MXNet."""
        from .json import to_json
        if remove_amp_cast:
            return to_json(Symbol(_without_amp_casts(self._outputs)))
        return to_json(self)

    def save(self, fname, remove_amp_cast=True):
        if not isinstance(fname, str):
            raise TypeError("fname need to be string")
        # written whole, then renamed: an old file is never lost, a killed writer's temporary
        # is removed by the next save (mxc/_core/atomic_write.py)
        atomic_write.write_bytes(fname, [self.tojson(remove_amp_cast).encode("utf-8")])

    # ---- execution ----------------------------------------------------------------------------
    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        return _executor.simple_bind(self, ctx, grad_req, type_dict, stype_dict, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, kwargs)

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        return _executor.bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)

    def _bind(self, *a, **k):
        return self.bind(*a, **k)

    def eval(self, ctx=None, **kwargs):
        ctx = current_context() if ctx is None else ctx
        return self.bind(ctx, kwargs).forward()

    def eval_imperative(self, arrays):
        """mxc: evaluate with a dict of NDArrays by argument name (used by older test helpers)."""
        return _executor.evaluate(self, arrays)

    def _gen_atomic_symbol(self):
        """A symbol of the head node's operator and attributes with fresh inputs."""
        node = self._outputs[0][0]
        if node.op is None:
            return Symbol([(_Node(None, node.name, dict(node.attrs)), 0, 0)])
        new = _Node(node.op, node.name, dict(node.attrs))
        new.inputs = [(_Node(None, f"{node.name}_{n}"), 0, 0) for n in node.input_names()]
        return Symbol([(new, i, 0) for i in range(new.num_visible())])

    def gradient(self, wrt):
        raise NotImplementedError("Symbol.gradient is not implemented (as in MXNet 1.x)")

    def optimize_for(self, backend, *args, **kwargs):
        raise MXNetError(f"optimize_for: backend {backend!r} is not available in mxc")


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(_sym_module(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


for _m in METHODS:           # the one list of operator methods, shared with NDArray
    if _m not in Symbol.__dict__:
        setattr(Symbol, _m, _method(_m))
del _m


def _astype_method(self, dtype, copy=True):
    """A Cast node to dtype (MXNet's Symbol.astype is op.cast; `copy`, kept for code written
    for both NDArray and Symbol, changes nothing: a graph node is always new)."""
    return _sym_module().cast(self, dtype=dtype)


Symbol.astype = _astype_method


def _split_v2_method(self, *args, **kwargs):
    return split_v2(self, *args, **kwargs)


Symbol.split_v2 = _split_v2_method


# ---- creation ---------------------------------------------------------------------------------
def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A symbolic variable (an argument of the graph) with optional attributes."""
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    attr = AttrScope._current.value.get(attr)
    attr = {} if attr is None else dict(attr)
    if shape is not None:
        attr["__shape__"] = str(shape)
    if lr_mult is not None:
        attr["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attr["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attr["__dtype__"] = str(DTYPE_NP_TO_MX[np_dtype(dtype).name])
    if init is not None:
        if not isinstance(init, str):
            init = init.dumps()
        attr["__init__"] = init
    if stype is not None:
        attr["__storage_type__"] = str(STORAGE_TYPE_STR_TO_ID[stype])
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attr[k] = str(v)
        else:
            raise ValueError("Attribute name=%s is not supported. Additional attributes must "
                             "start and end with double underscores, e.g, __yourattr__" % k)
    ret = Symbol([(_Node(None, name), 0, 0)])
    ret._set_attr(**attr)
    return ret


Variable = var


def Group(symbols, create_fn=Symbol):
    """One symbol whose outputs are the outputs of `symbols`, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


def load(fname):
    if not isinstance(fname, str):
        raise TypeError("fname need to be string")
    with open(fname, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise MXNetError(f"{fname}: not a symbol JSON (line {line}: byte {e.start} is not "
                         "UTF-8)") from None
    try:
        return load_json(text)
    except MXNetError as e:
        raise MXNetError(f"{fname}: {e}") from None


def load_json(json_str):
    if not isinstance(json_str, str):
        raise TypeError("fname required to be string")
    from .json import from_json
    return from_json(json_str)


class _Shown(str):
    """A string that reprs as itself: a numpy scalar inside a tuple shows as numpy 1.x (MXNet
    1.9.1's numpy) printed it, ``(2, 0.1)``, not numpy 2's ``(np.int64(2), np.float32(0.1))``."""

    def __repr__(self):
        return str(self)


def _plain(v):
    """v with numpy scalars (inside tuples and lists too) replaced so that str() reads as
    MXNet's str() of the value: a numpy scalar prints its shortest form (np.float32(0.1) is
    "0.1", as numpy's own str, not float's "0.10000000149011612")."""
    if isinstance(v, _np.generic):
        return _Shown(str(v))
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def create(op, hint, args, kwargs, name=None, attr=None):
    """A new operator node for `op` (called by the generated mx.sym functions).

    args: Symbols given positionally (variadic operators); kwargs: Symbols (inputs by name)
    and parameters (any Python value, stored as ``str(value)`` as MXNet does)."""
    scope = AttrScope._current.value.get(attr)
    kwargs = dict(kwargs)
    if scope:
        kwargs.update(scope)
    kwargs.pop("out", None)
    sym_kwargs, attrs = {}, {}
    for k, v in kwargs.items():
        if isinstance(v, Symbol):
            sym_kwargs[k] = v
        elif v is None:
            # an explicit None for a parameter is kept as "None": MXNet writes str() of every
            # parameter given (slice_axis's end=None; MXNet refuses the file without it). None
            # for an input (bias=None) is no parameter, and dtype=None means the default
            if k != "dtype" and any(p.name == k for p in op.params):
                attrs[k] = "None"
            continue
        else:
            if k == "dtype" and v is not None and not isinstance(v, str):
                v = np_dtype(v).name
            elif k == "dtype" and isinstance(v, str) and v != "None":
                try:
                    v = np_dtype(v).name
                except TypeError:
                    pass
            attrs[_hidden_key(k, v)] = str(_plain(v))
    if op.variadic and op.variadic not in attrs and op.name != "Custom":
        attrs[op.variadic] = str(len(args) + len(sym_kwargs))
    name = NameManager._current.value.get(name, hint.lower())
    node = _Node(op, name, attrs)
    try:
        node.parsed     # noqa: B018  (checks the parameters now, as MXNet does)
    except (ValueError, TypeError) as e:
        raise MXNetError(str(e)) from None
    in_names = node.input_names()
    if op.variadic and len(args) > len(in_names):
        # the count parameter is not always the number of inputs (multi_sgd_update's
        # num_weights counts weights, each with its gradient and states): take every input given
        in_names = [f"arg{i}" for i in range(len(args))]
    if args and sym_kwargs:
        if op.variadic:
            raise TypeError("Operators with variable length input can only accept input "
                            "Symbols either as positional or keyword arguments, not both")
    if len(args) > len(in_names) and not op.variadic:
        raise MXNetError(f"{hint}: takes {len(in_names)} input(s) {in_names}, got {len(args)}")
    entries = []
    given = dict(sym_kwargs)
    for i, iname in enumerate(in_names):
        if i < len(args):
            s = args[i]
        else:
            s = given.pop(iname, None)
        if s is None:
            v = _Node(None, f"{name}_{iname}", dict(attrs))
            entries.append((v, 0, 0))
        else:
            entries.append(s._entry(f"{hint}: input '{iname}'"))
    if given:
        raise MXNetError(f"{hint}: unknown input(s) {sorted(given)}; it takes {in_names}")
    init = op.input_init
    if init:
        for i, val in init.items():
            if i < len(entries) and entries[i][0].op is None and "__init__" not in entries[i][0].attrs:
                entries[i][0].attrs["__init__"] = val
    for i in node.aux_indices():
        if i < len(entries) and entries[i][0].op is None:
            v = entries[i][0]
            v.version += 1
            entries[i] = (v, entries[i][1], v.version)
    node.inputs = entries
    n = node.num_visible()
    return Symbol([(node, i, 0) for i in range(n)])


# ---- module-level functions of mx.sym --------------------------------------------------------
def _scalar_or_sym(name, a, b, sym_op, scalar_op, rscalar_op, pyop):
    if isinstance(a, Symbol) and isinstance(b, Symbol):
        return _call(sym_op, a, b)
    if isinstance(a, Symbol) and isinstance(b, Number):
        return _call(scalar_op, a, scalar=b)
    if isinstance(a, Number) and isinstance(b, Symbol):
        return _call(rscalar_op, b, scalar=a)
    if isinstance(a, Number) and isinstance(b, Number):
        return pyop(a, b)
    raise TypeError("types (%s, %s) not supported" % (str(type(a)), str(type(b))))


def pow(base, exp):  # noqa: A001
    return _scalar_or_sym("pow", base, exp, "_Power", "_PowerScalar", "_RPowerScalar",
                          lambda a, b: a ** b)


def power(base, exp):
    return pow(base, exp)


def maximum(left, right):
    return _scalar_or_sym("maximum", left, right, "_Maximum", "_MaximumScalar", "_MaximumScalar",
                          lambda a, b: a if a > b else b)


def minimum(left, right):
    return _scalar_or_sym("minimum", left, right, "_Minimum", "_MinimumScalar", "_MinimumScalar",
                          lambda a, b: a if a < b else b)


def hypot(left, right):
    return _scalar_or_sym("hypot", left, right, "_Hypot", "_HypotScalar", "_HypotScalar",
                          lambda a, b: _np.hypot(a, b))


def eye(N, M=0, k=0, dtype=None, **kwargs):
    return _call("_eye", N=N, M=M, k=k, dtype=_np.float32 if dtype is None else dtype, **kwargs)


def zeros(shape, dtype=None, **kwargs):
    return _call("_zeros", shape=shape, dtype=_np.float32 if dtype is None else dtype, **kwargs)


def ones(shape, dtype=None, **kwargs):
    return _call("_ones", shape=shape, dtype=_np.float32 if dtype is None else dtype, **kwargs)


def full(shape, val, dtype=None, **kwargs):
    return _call("_full", shape=shape, dtype=_np.float32 if dtype is None else dtype,
                 value=float(val), **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    return _call("_arange", start=start, stop=stop, step=step, repeat=repeat,
                 infer_range=infer_range, name=name, dtype=_np.float32 if dtype is None else dtype)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    return _call("_linspace", start=start, stop=stop, num=num, endpoint=endpoint, name=name,
                 dtype=_np.float32 if dtype is None else dtype)


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002
    if isinstance(bins, Symbol):
        return _call("_histogram", data=a, bins=bins, **kwargs)
    if isinstance(bins, int):
        if range is None:
            raise ValueError("null range is not supported in symbol mode")
        return _call("_histogram", data=a, bin_cnt=bins, range=range, **kwargs)
    raise ValueError("bins argument should be either an integer or an NDArray")


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    indices, sections = [], 0
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return _call("_split_v2", ary, indices=tuple(indices), axis=axis, squeeze_axis=squeeze_axis,
                 sections=sections)

