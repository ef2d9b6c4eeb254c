"""``Updater``: applies an optimizer to (index, grad, weight) triples, keeping per-index state,
and reads/writes that state in MXNet's ``.states`` format (a pickle).

Writing: the pickle MXNet 1.9.1 writes, so MXNet loads our files: NDArrays appear as
``mxnet.ndarray.ndarray.NDArray`` (``mxnet.ndarray.sparse.*NDArray`` for sparse ones) rebuilt
from the raw NDArray bytes of ``__getstate__``, optimizers as ``mxnet.optimizer.optimizer.<Name>``
and learning-rate schedulers as ``mxnet.lr_scheduler.<Name>``; the output is byte for byte
what MXNet's ``pickle.dumps`` writes for the same objects.

Reading: never a blind ``pickle.loads``. A restricted unpickler resolves only builtin containers
and numbers, the NDArray classes above (mapped to mxc's), registered optimizer classes, mxc's
LR schedulers, and Optimizer/LRScheduler subclasses of modules the program has already imported;
anything else (a function, ``os.system``, an unknown class) is refused with an MXNetError
naming it, and no module is ever imported to resolve a name.
"""
import copyreg
import io
import pickle
import sys

import numpy

from ..base import MXNetError
from ..ndarray import NDArray

_PROTOCOL = 4        # what Python 3.8-3.13's pickle.dumps (MXNet's call) writes

_MX_NDARRAY = ("mxnet.ndarray.ndarray", "NDArray")
_MX_SPARSE = {"row_sparse": ("mxnet.ndarray.sparse", "RowSparseNDArray"),
              "csr": ("mxnet.ndarray.sparse", "CSRNDArray")}


def _nd_state_bytes(arr):
    """The bytes MXNet's NDArray.__getstate__ holds: NDArray::Save of the one array."""
    from ..ndarray import serialize
    from ..ndarray.serialize_nd import _np_or_sparse
    parts = serialize._entry_parts("0", _np_or_sparse(arr), serialize.V2_MAGIC)
    return bytearray(b"".join(bytes(p) for p in parts))


def _nd_from_state_bytes(handle):
    from ..ndarray import serialize
    from ..ndarray.serialize_nd import _wrap
    if handle is None:
        return None
    r = serialize._BufferReader(memoryview(bytes(handle)), "<optimizer state NDArray>")
    v = serialize._read_entry(r, 0)
    if r.pos != r.end:
        r.fail(f"{r.end - r.pos} trailing bytes after the array")
    return _wrap([v])[0]


def _mxnet_path(obj):
    """(module, name) MXNet gives class `obj`, or None when it is not one we translate."""
    mod = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", getattr(obj, "__name__", ""))
    if mod.startswith("mxc.optimizer"):
        from .optimizer import Optimizer
        if isinstance(obj, type) and issubclass(obj, Optimizer):
            sub = "contrib" if mod.endswith("contrib") else "optimizer"
            return f"mxnet.optimizer.{sub}", name
    if mod == "mxc.lr_scheduler":
        return "mxnet.lr_scheduler", name
    return None


class _MXNetPickler(pickle._Pickler):
    """pickle's Python pickler, writing mxc objects under MXNet's class paths."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._globals = {}          # (module, name) -> a stand-in object for the memo
        self._none_args = {}

    def save_global(self, obj, name=None):
        path = _mxnet_path(obj)
        if path is None:
            return super().save_global(obj, name)
        self._write_global(*path)

    def _write_global(self, module, name):
        key = self._globals.setdefault((module, name), [module, name])
        x = self.memo.get(id(key))
        if x is not None:
            self.write(self.get(x[0]))
            return
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n"
                       + name.encode("utf-8") + b"\n")
        self.memoize(key)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, NDArray):
            x = self.memo.get(id(obj))
            if x is not None:
                self.write(self.get(x[0]))
                return
            # as MXNet's NDArray.__reduce__: cls(None), then BUILD with {'handle': bytes}
            path = _MX_SPARSE.get(getattr(obj, "stype", "default"), _MX_NDARRAY)
            self._write_global(*path)
            # MXNet's (None,) is one constant per class (dense and sparse __reduce__)
            none_args = self._none_args.setdefault(path, [None])
            x = self.memo.get(id(none_args))
            if x is not None:
                self.write(self.get(x[0]))
            else:
                self.write(pickle.NONE + pickle.TUPLE1)
                self.memoize(none_args)
            self.write(pickle.REDUCE)
            self.memoize(obj)
            self.save({"handle": _nd_state_bytes(obj)})
            self.write(pickle.BUILD)
            return
        return super().save(obj, save_persistent_id)


def dumps_states(obj):
    """Pickle `obj` (optimizer states, optionally with the optimizer) as MXNet writes it."""
    buf = io.BytesIO()
    _MXNetPickler(buf, protocol=_PROTOCOL).dump(obj)
    return buf.getvalue()


class _PendingNDArray:
    """Stand-in the unpickler builds for MXNet's NDArray (replaced after loading)."""
    __slots__ = ("handle",)

    def __init__(self, handle=None):
        self.handle = handle

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and state[0] is None:
            state = state[1]             # (dict, slots) form
        if not isinstance(state, dict) or "handle" not in state:
            raise MXNetError("optimizer states: an NDArray entry has no 'handle' bytes")
        self.handle = state["handle"]


_SAFE_BUILTINS = {"dict", "list", "tuple", "set", "frozenset", "int", "float", "complex",
                  "bool", "str", "bytes", "bytearray", "slice", "range", "NoneType"}


def _numpy_whitelist():
    import numpy.core.multiarray as ma
    ok = {("numpy", "ndarray"): numpy.ndarray, ("numpy", "dtype"): numpy.dtype,
          ("numpy.core.multiarray", "_reconstruct"): ma._reconstruct,
          ("numpy.core.multiarray", "scalar"): ma.scalar,
          ("numpy._core.multiarray", "_reconstruct"): ma._reconstruct,
          ("numpy._core.multiarray", "scalar"): ma.scalar}
    return ok


class _StatesUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "builtins" and name in _SAFE_BUILTINS:
            import builtins
            return getattr(builtins, name)
        if (module, name) == ("copyreg", "_reconstructor"):
            return copyreg._reconstructor
        if (module, name) in (_MX_NDARRAY, ("mxc.ndarray.ndarray", "NDArray")) \
                or (module, name) in _MX_SPARSE.values():
            return _PendingNDArray
        np_ok = _numpy_whitelist().get((module, name))
        if np_ok is not None:
            return np_ok
        # mxnet.optimizer.optimizer (1.9.1), mxnet.optimizer.<name> (2.0's layout, mxc's)
        if module.split(".")[:2] in (["mxnet", "optimizer"], ["mxc", "optimizer"]):
            from .optimizer import Optimizer
            for klass in Optimizer.opt_registry.values():
                if klass.__name__ == name:
                    return klass
        if module in ("mxnet.lr_scheduler", "mxc.lr_scheduler"):
            from .. import lr_scheduler
            klass = getattr(lr_scheduler, name, None)
            if isinstance(klass, type) and issubclass(klass, lr_scheduler.LRScheduler):
                return klass
        # an optimizer or scheduler subclass the program itself defined (its module is
        # already imported: nothing is imported or run to resolve it)
        mod = sys.modules.get(module)
        klass = getattr(mod, name, None) if mod is not None and "." not in name else None
        if isinstance(klass, type):
            from .optimizer import Optimizer
            from .. import lr_scheduler
            if issubclass(klass, (Optimizer, lr_scheduler.LRScheduler)):
                return klass
        raise MXNetError(f"refusing to load optimizer states: they reference {module}.{name}, "
                         "which is not an NDArray, an optimizer, an LR scheduler or a builtin "
                         "container (a .states file should hold nothing else)")


def _resolve(obj, seen=None):
    """Replace the _PendingNDArray stand-ins by mxc NDArrays, in containers and objects."""
    if seen is None:
        seen = {}
    key = id(obj)
    if key in seen:
        return seen[key]
    if isinstance(obj, _PendingNDArray):
        res = _nd_from_state_bytes(obj.handle)
    elif isinstance(obj, dict):
        res = obj
        seen[key] = res
        for k in list(obj.keys()):
            obj[k] = _resolve(obj[k], seen)
        return res
    elif isinstance(obj, list):
        seen[key] = obj
        obj[:] = [_resolve(v, seen) for v in obj]
        return obj
    elif isinstance(obj, tuple):
        res = tuple(_resolve(v, seen) for v in obj)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        seen[key] = obj
        d = vars(obj)
        for k in list(d.keys()):
            d[k] = _resolve(d[k], seen)
        return obj
    else:
        res = obj
    seen[key] = res
    return res


def loads_states(data):
    """Unpickle a ``.states`` payload written by MXNet or mxc, safely (see module doc)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"optimizer states must be bytes, got {type(data).__name__}")
    try:
        obj = _StatesUnpickler(io.BytesIO(bytes(data))).load()
    except MXNetError:
        raise
    except Exception as e:
        raise MXNetError(f"could not read optimizer states: {type(e).__name__}: {e}") from e
    return _resolve(obj)


class Updater:
    """Applies `optimizer` to (index, grad, weight), creating each index's state on first use.
    With ``optimizer.aggregate_num > 0`` parameters of one dtype are updated together."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode("utf-8")
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        if self.aggregate_updates and self.optimizer.aggregate_num > 0:
            by_dtype = {}
            for i, w, g in zip(indices, weights, grads):
                by_dtype.setdefault(w.dtype, []).append((i, w, g))
            num = self.optimizer.aggregate_num
            for group in by_dtype.values():
                idxs, ws, gs = zip(*group)
                for start in range(0, len(idxs), num):
                    sl = slice(start, start + num)
                    states = [self.states[k] for k in idxs[sl]]
                    self.optimizer.update_multi_precision(idxs[sl], ws[sl], gs[sl], states)
        else:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def sync_state_context(self, state, context):
        """`state` (NDArrays, nested in tuples/lists) moved to `context`."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states):
        """Load states (and the optimizer, when it was dumped with them) from the bytes
        ``get_states`` wrote, here or in MXNet."""
        states = loads_states(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        if not isinstance(self.states, dict):
            raise MXNetError(f"optimizer states must be a dict, got {type(self.states).__name__}")
        self.states_synced = dict.fromkeys(self.states.keys(), False)
        # (MXNet keeps the old optimizer's setting here, and loops forever when the loaded
        # optimizer does not aggregate)
        self.aggregate_updates = self.optimizer.aggregate_num > 0

    def get_states(self, dump_optimizer=False):
        """The states as bytes in MXNet's format: a pickle of the dict index -> state, or of
        ``(states, optimizer)`` with `dump_optimizer`."""
        return dumps_states((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An Updater (callable ``(index, grad, weight)``) for `optimizer`."""
    return Updater(optimizer)

