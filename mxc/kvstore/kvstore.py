"""The single-machine key-value store (MXNet's KVStoreLocal semantics).

Keys are all ints or all strs (a store takes the type of the first key it sees). ``init``
stores a copy of each value; ``push`` sums the list of values given for a key (on the
store's device) and either replaces the stored value with the sum or, once an updater is
set (``set_optimizer``/``_set_updater``), calls ``updater(key, summed, stored)``, which
updates the stored array in place; ``pull`` copies the stored value into every output.
Everything is expressed with NDArray operations, so a push or pull returns at once and
later reads of the outputs wait for it like for any operator.
"""
import numbers
import warnings

import numpy as np

from .._core import engine as _engine
from .._core.api_calls import api_call
from ..base import MXNetError, string_types
from .._core import atomic_write
from ..ndarray.ndarray import NDArray
from .base import KVStoreBase

__all__ = ["KVStore"]

def _is_sparse(x):
    return getattr(x, "stype", "default") != "default"


_HOST_DEVICES = ("cpu", "cpu_pinned", "cpu_shared")


def _on(ctx, arr):
    """``arr`` as an array on ``ctx``. Every CPU context of mxc is the same host memory, so a
    dense array moves between them as a view of the same storage (the engine orders it by the
    storage, as any view); other moves copy."""
    if arr.context == ctx:
        return arr
    if (not _is_sparse(arr) and arr.context.device_type in _HOST_DEVICES
            and ctx.device_type in _HOST_DEVICES):
        from .._core import handle as _h
        return _h.make_array(NDArray, arr._chunk, arr._offset, arr.shape, arr._dtype, ctx)
    return arr.as_in_context(ctx)


def _key_kind(key):
    if isinstance(key, string_types):
        return "str"
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        return "int"
    raise MXNetError("unexpected type for keys: %s (KVStore keys are int or str)"
                     % type(key).__name__)


def _pairs(keys, vals, what):
    """Flatten (key or list of keys, value or list(s) of values) into [(key, value)], as
    MXNet's key/value packing does: a list of keys takes one entry per key, each entry an
    array or a list of arrays. Returns (pairs, key kind)."""
    if isinstance(keys, (list, tuple)):
        if not isinstance(vals, (list, tuple)) or len(keys) != len(vals):
            raise MXNetError("%s: %d keys need a list of %d values (one array or list of "
                             "arrays per key), got %s" % (
                                 what, len(keys), len(keys),
                                 ("%d" % len(vals)) if isinstance(vals, (list, tuple))
                                 else type(vals).__name__))
        out, kind = [], None
        for k, v in zip(keys, vals):
            sub, sub_kind = _pairs(k, v, what)
            if kind is None:
                kind = sub_kind
            elif sub_kind is not None and sub_kind != kind:
                raise MXNetError("%s: inconsistent types of keys detected (int and str keys "
                                 "in one call)" % what)
            out.extend(sub)
        return out, kind
    kind = _key_kind(keys)
    key = keys if kind == "str" else int(keys)
    if isinstance(vals, NDArray):
        return [(key, vals)], kind
    if not isinstance(vals, (list, tuple)):
        raise MXNetError("%s: the value of key %r must be an NDArray or a list of NDArrays, "
                         "got %s" % (what, key, type(vals).__name__))
    for v in vals:
        if not isinstance(v, NDArray):
            raise MXNetError("%s: the values of key %r must be NDArrays, got %s"
                             % (what, key, type(v).__name__))
    return [(key, v) for v in vals], kind


def _check_compression_params(params):
    if not isinstance(params, dict):
        raise MXNetError("unexpected type for compression_params: %s (a dict such as "
                         "{'type': '2bit', 'threshold': 0.5} is expected)"
                         % type(params).__name__)
    if "type" not in params:
        raise MXNetError("gradient compression: the required parameter 'type' is missing "
                         "(only '2bit' is supported)")
    try:
        threshold = float(params.get("threshold", 0.5))
    except (TypeError, ValueError):
        raise MXNetError("gradient compression: threshold must be a number, got %r"
                         % (params["threshold"],)) from None
    if not threshold > 0:
        raise MXNetError("threshold must be greater than 0, got %r" % (params.get("threshold"),))
    ctype = str(params["type"])
    if ctype != "2bit":
        raise MXNetError("Unknown type for gradient compression %s (only '2bit' is supported)"
                         % ctype)
    return threshold


@KVStoreBase.register
class KVStore(KVStoreBase):
    """A key-value store on one machine; build it with ``mx.kv.create(type)``."""

    type_names = ("local", "local_update_cpu", "local_allreduce_cpu", "nccl")

    def __init__(self, kvtype="local"):
        kvtype = str(kvtype).lower()
        self._type = kvtype
        self._store = {}            # key -> stored NDArray
        self._str_order = {}        # str key -> init order (MXNet processes str keys in it)
        self._key_kind = None
        self._updater = None
        self._deferred = None       # (key, grad, stored) held for one updater call
        self._updater_func = None
        self._str_updater_func = None
        self._compression = None    # 2bit threshold (supports_compression stores)
        self._residuals = {}
        self._pull_warned = set()

    def __repr__(self):
        return "<KVStore %s: %d keys>" % (self._type, len(self._store))

    # ---- keys ----------------------------------------------------------------------------
    def _use_kind(self, kind):
        if kind is None:
            return
        if self._key_kind is None:
            self._key_kind = kind
        elif self._key_kind != kind:
            raise MXNetError("Mixed key types are not allowed: this KVStore uses %s keys, "
                             "got %s keys" % (self._key_kind, kind))

    def _order(self, key):
        return self._str_order[key] if isinstance(key, str) else key

    def _grouped(self, pairs):
        """{key: [values]} in MXNet's processing order (int keys ascending, str keys in
        init order), every key checked to be initialized."""
        groups = {}
        for k, v in pairs:
            if k not in self._store:
                if isinstance(k, str):
                    raise MXNetError("key %s doesn't exist. Did you init?" % k)
                raise MXNetError("key %d has not been inited" % k)
            groups.setdefault(k, []).append(v)
        return sorted(groups.items(), key=lambda kv: self._order(kv[0]))

    def _check_new_key(self, k):
        """Refuse a key initialised before; remember a str key's order."""
        if k in self._store:
            raise MXNetError("duplicate init of key %s. Please double check if you called "
                             "kv.init or kv.broadcast with this key multiple times" % (k,))
        if isinstance(k, str):
            self._str_order[k] = len(self._str_order)

    # ---- API -----------------------------------------------------------------------------
    def init(self, key, value):
        """Initialize one key or a list of keys with a copy of the given value(s)."""
        pairs, kind = _pairs(key, value, "init")
        self._use_kind(kind)
        for k, v in pairs:
            self._check_new_key(k)
            self._store[k] = v.copy()

    @api_call("MXKVStorePushEx")
    def push(self, key, value, priority=0):
        """Push values: the list of values of a key is summed, then stored (no updater) or
        given to the updater with the stored value."""
        pairs, kind = _pairs(key, value, "push")
        self._use_kind(kind)
        for k, vals in self._grouped(pairs):
            self._push_one(k, vals)

    def _push_one(self, key, vals):
        # the profiler names this key's operations "KVStorePush[key]::<op>"
        with _engine.ProfileScope("KVStorePush", key):
            self._push_one_scoped(key, vals)

    def _push_one_scoped(self, key, vals):
        stored = self._store[key]
        for v in vals:
            if v.shape != stored.shape:
                raise MXNetError("push of key %r: value shape %s does not match the stored "
                                 "shape %s" % (key, v.shape, stored.shape))
        merged = self._reduce(key, vals, stored.context)
        if self._updater is not None:
            self._apply_update(key, _on(stored.context, merged), stored)
        else:
            if merged is vals[0]:            # a single value: keep a copy, not the caller's array
                merged = merged.copy()
            self._store[key] = merged

    def _apply_update(self, key, grad, stored):
        if self._deferred is not None:
            self._deferred.append((key, grad, stored))
        else:
            self._updater(key, grad, stored)

    def _pushpull_updates(self, items):
        """The pushes of a Trainer step reach the optimizer as one updater call, which updates
        the keys of one dtype together (``aggregate_num`` per fused operator, as the Trainer's
        own updates): for ResNet-18's 62 keys about 16 operators instead of 62, on the main
        thread. A user's updater (``_set_updater``) keeps one call per key."""
        from ..optimizer.updater import Updater
        if not isinstance(self._updater, Updater):
            return super(KVStore, self)._pushpull_updates(items)
        self._deferred = []
        try:
            for key, grads, outs, priority in items:
                self.push(key, grads, priority=priority)
            self._flush_pushes()
            held = self._deferred
        finally:
            self._deferred = None
        if held:
            keys, grads, stored = zip(*held)
            self._updater(list(keys), list(grads), list(stored))
        for key, grads, outs, priority in items:
            self.pull(key, out=outs, priority=priority)

    def _flush_pushes(self):
        """Queue what the pushes of ``_pushpull_updates`` held back (before their updates): a
        store may reduce a Trainer step's keys together."""

    def _reduce(self, key, vals, ctx):
        if self._compression is not None and not any(_is_sparse(v) for v in vals):
            return self._reduce_2bit(key, vals, ctx)
        if len(vals) == 1:
            return vals[0]
        vals = [_on(ctx, v) for v in vals]
        if all(_is_sparse(v) for v in vals):
            total = vals[0]
            for v in vals[1:]:
                total = total + v
            return total
        from .. import ndarray as nd
        return nd.add_n(*[v.tostype("default") if _is_sparse(v) else v for v in vals])

    def _reduce_2bit(self, key, vals, ctx):
        """MXNet's 2-bit compression: each source adds its gradient to its residual, sends
        +threshold / -threshold / 0 where the residual is >= t / <= -t / between, and keeps
        the rest as residual; the store sums what was sent."""
        from .. import ndarray as nd
        t = self._compression
        sent = []
        for i, v in enumerate(vals):
            if v.dtype != np.float32:
                raise MXNetError("2bit gradient compression supports float32 values only; "
                                 "key %r was pushed as %s" % (key, np.dtype(v.dtype).name))
            res = self._residuals.get((key, i))
            if res is None or res.shape != v.shape:
                res = nd.zeros(v.shape, ctx=ctx, dtype=v.dtype)
                self._residuals[(key, i)] = res
            res += _on(ctx, v)
            q = (res >= t) * t - (res <= -t) * t
            res -= q
            sent.append(q)
        return sent[0] if len(sent) == 1 else nd.add_n(*sent)

    @api_call("MXKVStorePullWithSparseEx")
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored values into ``out`` (an array, or a list to fill for one key, or
        one entry per key for a list of keys). Sparse outputs are skipped unless
        ``ignore_sparse=False``; use ``row_sparse_pull`` for row_sparse values."""
        if out is None:
            raise MXNetError("pull needs out= (the arrays to copy the stored values into)")
        pairs, kind = _pairs(key, out, "pull")
        self._use_kind(kind)
        self._pull_pairs(pairs, ignore_sparse)

    def _pull_pairs(self, pairs, ignore_sparse):
        kept = []
        for k, o in pairs:
            if ignore_sparse and _is_sparse(o):
                if k not in self._pull_warned:
                    self._pull_warned.add(k)
                    warnings.warn("non-default weights detected during kvstore pull of key "
                                  "%r. This call has been ignored. Please make sure to use "
                                  "kv.row_sparse_pull() or module.prepare() with row_ids."
                                  % (k,), stacklevel=3)
                continue
            kept.append((k, o))
        for k, outs in self._grouped(kept):
            stored = self._store[k]
            with _engine.ProfileScope("KVStorePull", k):
                for o in outs:
                    self._copy_into(k, stored, o)

    @staticmethod
    def _copy_into(key, src, dst):
        if dst.shape != src.shape:
            raise MXNetError("pull of key %r: output shape %s does not match the stored shape "
                             "%s" % (key, dst.shape, src.shape))
        if dst is src:
            return
        if src.dtype != dst.dtype:
            src = src.astype(dst.dtype)
        if _is_sparse(dst):
            dst[:] = src.as_in_context(dst.context)
        else:
            src.copyto(dst)

    @api_call("MXKVStorePushPullEx")
    def pushpull(self, key, value, out=None, priority=0):
        """push(key, value) then pull(key, out); ``out=None`` pulls into ``value``."""
        vpairs, kind = _pairs(key, value, "pushpull")
        self._use_kind(kind)
        opairs = vpairs if out is None else _pairs(key, out, "pushpull")[0]
        for k, vals in self._grouped(vpairs):
            self._push_one(k, vals)
        self._pull_pairs(opairs, True)

    def broadcast(self, key, value, out, priority=0):
        """init(key, value) then pull(key, out)."""
        self.init(key, value)
        self.pull(key, out=out)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` (an NDArray per output, or one for all outputs;
        any order, duplicates allowed) of row_sparse stored values into row_sparse outputs."""
        if out is None:
            raise MXNetError("row_sparse_pull needs out= (row_sparse arrays)")
        if row_ids is None:
            raise MXNetError("row_sparse_pull needs row_ids")
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        if not isinstance(row_ids, list):
            raise MXNetError("row_ids should be NDArray or list of NDArray")
        first_out, single = out, False
        if len(row_ids) == 1 and isinstance(out, list):
            single, first_out = True, [out[0]]
        pairs, kind = _pairs(key, first_out, "row_sparse_pull")
        self._use_kind(kind)
        rid_pairs = _pairs(key, row_ids, "row_sparse_pull")[0]
        if len(rid_pairs) != len(pairs):
            raise MXNetError("the number of row_ids doesn't match the number of values")
        groups = {}
        for (k, o), (_, rid) in zip(pairs, rid_pairs):
            if not _is_sparse(o) or o.stype != "row_sparse":
                raise MXNetError("Expected row_sparse storage type for row_sparse_pull "
                                 "values, but detected storage type %s" % o.stype)
            if _is_sparse(rid):
                raise MXNetError("Expected default storage type for row_sparse_pull rowids, "
                                 "but detected storage type %s" % rid.stype)
            groups.setdefault(k, []).append((o, rid))
        self._grouped([(k, None) for k in groups])          # checks every key was inited
        from ..ndarray import sparse
        from .. import ndarray as nd
        for k in sorted(groups, key=self._order):
            stored = self._store[k]
            if stored.stype != "row_sparse":
                raise MXNetError("PullRowSparse expects row_sparse src NDArray: key %r is "
                                 "stored as %s" % (k, stored.stype))
            for o, rid in groups[k]:
                ids = np.unique(rid.asnumpy().ravel().astype(np.int64))
                if ids.size and (ids[0] < 0 or ids[-1] >= stored.shape[0]):
                    raise MXNetError("row_sparse_pull of key %r: row id out of range [0, %d)"
                                     % (k, stored.shape[0]))
                picked = sparse.retain(stored, nd.array(ids, ctx=stored.context,
                                                        dtype=np.int64))
                self._copy_into(k, picked, o)
        if single:
            for o in out[1:]:
                out[0].copyto(o)

    # ---- optimizer -----------------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Update the stored values with ``optimizer`` on every push."""
        from .. import optimizer as opt
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """Call ``updater(key, pushed, stored)`` on every push (stored is updated in place).
        String keys reach the updater as str."""
        self._updater = updater
        self._updater_func = updater
        self._str_updater_func = updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states to ``fname``."""
        if self._updater is None:
            raise MXNetError("save_optimizer_states: this KVStore has no optimizer; call "
                             "set_optimizer first")
        atomic_write.write_bytes(fname, [self._updater.get_states(dump_optimizer)])

    def load_optimizer_states(self, fname):
        """Read the updater's states from ``fname``."""
        if self._updater is None:
            raise MXNetError("load_optimizer_states: this KVStore has no optimizer; call "
                             "set_optimizer first")
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    def set_gradient_compression(self, compression_params):
        """2-bit gradient compression ({'type': '2bit', 'threshold': t}) for 'device'-type
        and distributed stores, as MXNet; other local stores do not support it."""
        if not self.supports_compression:
            raise MXNetError("Gradient compression is not supported for this type of kvstore "
                             "(%s); use a 'device' store" % self._type)
        self._compression = _check_compression_params(compression_params)
        self._residuals = {}

    def is_capable(self, capability):
        """'optimizer': True (updates can run in the store)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError("Unknown capability: {}".format(capability))

    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def _barrier(self):
        """All workers wait here; with one worker there is nothing to wait for."""

    def _send_command_to_servers(self, head, body):
        """A local store has no servers."""


@KVStoreBase.register
class DeviceKVStore(KVStore):
    """The 'device' kinds: MXNet reduces them on the GPU rather than in pinned CPU memory; here
    every local store already sums where its keys live, so they differ from 'local' only in
    taking 2-bit gradient compression (as MXNet's do)."""

    type_names = ("device", "local_allreduce_device")
    supports_compression = True
