"""Builds ``mx.sym.<op>`` for every registered operator from the same OpDefs as ``mx.nd``.

Signatures follow mx.nd's (inputs positionally or by name, parameters as keywords) plus
``name=`` and ``attr=``; inputs left out become variables named ``<node name>_<input name>``
(``fullyconnected0_weight``), as MXNet's composition does."""
import inspect

from ..ops import registry
from .symbol import Symbol, create


def make_function(op, fname):
    nin = len(op.inputs)
    input_names = op.inputs

    if op.variadic or op.name == "Custom":
        def fn(*args, name=None, attr=None, **kwargs):
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = tuple(args[0])
            for a in args:
                if not isinstance(a, Symbol):
                    raise TypeError(f"Positional arguments must be Symbol instances, but got {a}")
            return create(op, fname, list(args), kwargs, name, attr)
    else:
        def fn(*args, name=None, attr=None, **kwargs):
            if len(args) > nin:
                extra = args[nin:]
                free = [p.name for p in op.params if p.name not in kwargs]
                if len(extra) > len(free):
                    raise TypeError(f"{fname}: takes {nin} input(s) ({', '.join(input_names)}) "
                                    f"and {len(op.params)} parameter(s), got {len(args)} "
                                    "positional")
                kwargs.update(zip(free, extra))
                args = args[:nin]
            for n, a in zip(input_names, args):
                if a is None:
                    continue
                if not isinstance(a, Symbol):
                    raise TypeError(f"{fname}: argument {n} must be a Symbol, got "
                                    f"{type(a).__name__}")
                if n in kwargs:
                    raise TypeError(f"{fname}: got multiple values for input '{n}'")
                kwargs[n] = a
            return create(op, fname, [], kwargs, name, attr)

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
              for n in input_names]
    if op.variadic or op.name == "Custom":
        params = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    params += [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY,
                                 default=inspect.Parameter.empty if p.required else p.default)
               for p in op.params if not (op.variadic and p.name == op.variadic)]
    params += [inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None),
               inspect.Parameter("attr", inspect.Parameter.KEYWORD_ONLY, default=None)]
    if op.variadic or op.name == "Custom" or op.open_params:
        params.append(inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD))
    try:
        fn.__signature__ = inspect.Signature(params)
    except ValueError:
        pass
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = op.doc or f"MXNet operator {op.name}."
    fn.__module__ = "mxc.symbol"
    return fn


def populate(namespace):
    for name, op in registry.names().items():
        if name not in namespace:
            namespace[name] = make_function(op, name)
