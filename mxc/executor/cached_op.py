"""CachedOp: a Symbol made callable on NDArrays, the engine room of Gluon's ``hybridize``.

``CachedOp(sym, flags=())(*inputs)`` takes one NDArray per ``sym.list_inputs()`` entry (arguments
and auxiliary states in graph order, as MXNet's CachedOp does) and returns the outputs: one
NDArray, or a list when the symbol has several. Under ``autograd.record()`` the run is recorded so
gradients reach the inputs. Flags are MXNet's (``static_alloc``, ``static_shape``,
``data_indices``, ``param_indices``...), given as a list of pairs or a dict; they are kept and
validated by name.

This version plans once (node order, parsed attributes) and evaluates node by node through the
imperative invoke; memory planning and a single-node backward replace ``__call__``'s body later
without changing the contract.
"""
from ..ndarray import NDArray
from .executor import _Plan, _run_graph

_FLAGS = ("static_alloc", "static_shape", "data_indices", "param_indices", "forward_bulk_size",
          "backward_bulk_size", "inline_limit", "is_dynamic")


class CachedOp:
    def __init__(self, sym, flags=()):
        flags = dict(flags.items() if isinstance(flags, dict) else flags)
        unknown = [k for k in flags if k not in _FLAGS]
        if unknown:
            raise ValueError(f"CachedOp: unknown flag(s) {unknown}; known: {list(_FLAGS)}")
        self.flags = flags
        self._sym = sym
        self._plan = _Plan(sym)
        names = sym.list_inputs()
        self._input_names = names
        where = {n: i for i, n in enumerate(names)}
        self._arg_pos = [where[self._plan.nodes[s].name] for s in self._plan.arg_slots]
        self._aux_pos = [where[self._plan.nodes[s].name] for s in self._plan.aux_slots]
        self._num_outputs = len(self._plan.heads)

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._input_names):
            raise ValueError(f"CachedOp: expected {len(self._input_names)} inputs "
                             f"{self._input_names}, got {len(args)}")
        for name, a in zip(self._input_names, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"CachedOp: input {name!r} must be an NDArray, "
                                f"got {type(a).__name__}")
        outs = _run_graph(self._plan, [args[i] for i in self._arg_pos],
                          [args[i] for i in self._aux_pos])
        if out is not None:
            dst = [out] if isinstance(out, NDArray) else list(out)
            if len(dst) != len(outs):
                raise ValueError(f"CachedOp: {len(dst)} out arrays for {len(outs)} outputs")
            for d, o in zip(dst, outs):
                o.copyto(d)
            return out
        return outs[0] if self._num_outputs == 1 else outs
