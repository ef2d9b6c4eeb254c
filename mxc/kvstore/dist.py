"""The distributed KVStore over MPI: ``dist_sync`` (``dist_device_sync``, ``dist_sync_device``),
``dist_async`` and ``horovod``.

Every worker is one MPI rank (started by ``mxc-launch`` or ``mpiexec -n N``); there are no
server processes. mpi4py is imported when the first such store is created.

dist_sync. ``init`` broadcasts rank 0's value, so all ranks start identical. A push sums the
values given for a key on this worker, then across workers (an MPI allreduce, MXNet's two
levels); without an optimizer the stored value, and so ``pull``, is that sum; with
``set_optimizer`` every rank runs the same update on the same sum (a replicated update, see
``_push_sync``), so every worker pulls identical weights. Keys are int or str.

Overlap. A push is two engine operations: *stage* (reads the gradients; marks the request
ready for the communication thread of ``_mpi``) and *finish* (writes the receive buffer; waits,
GIL released, until the communication thread has reduced into it). Later operations that read
the result wait for *finish* like for any operator, while operations independent of it (the
backward of the remaining layers) run: the allreduce proceeds on the communication thread.
*finish* runs at the lowest priority so that an engine worker only blocks on it when nothing
else is ready. The communication thread sums the pushes that became ready together as one
(through a shared-memory window when all ranks share the host, see ``_mpi``); over MPI, large
arrays are reduced in chunks of ``MXC_KVSTORE_CHUNK_BYTES`` (64 MiB). A Trainer step's pushes
(``_pushpull_updates``) go out in buckets of keys, one request each (``_flush_pushes``), and
when all ranks share the host their receive arrays live in a shared block that every rank
writes its share of the sums into (``_shared_recv``).

dist_async. Rank 0 holds the one copy of the weights, and its communication thread serves
them (rank 0 is also a worker; there are no server processes): a push sends the worker's
(locally summed, optionally 2-bit compressed) gradient to rank 0, whose communication thread
hands it to the optimizer as soon as it arrives, without waiting for the other workers; a
pull asks rank 0 for its current copy, which an engine operation ordered after the updates
queued so far snapshots and sends back. Rank 0's own pushes and pulls use its copy directly.
Updates are serialized on rank 0 (one lock around the updater). Consistency: each push is
applied exactly once; a worker's own push is applied before its own later pull of that key
(MPI keeps the order of one sender's messages); a pull sees whatever other workers' pushes
arrived before it, so workers generally hold different, stale-by-a-few-updates weights
(MXNet's dist_async semantics); ``barrier`` first waits until rank 0 has taken every push of
this worker, so after a barrier every pull sees every push made before it. An optimizer is
required (as in MXNet). Values are dense. Once its script ends, rank 0 keeps serving until
every other rank has ended (or sent nothing for ``MXC_KVSTORE_TIMEOUT``); a worker whose
request rank 0 does not answer within the timeout (+5 s) fails naming rank 0. In async mode
``init`` and the collectives wait in the calling thread instead of in engine operations, so
no engine worker of rank 0 ever blocks on the network and rank 0's answers always run.

horovod. ``pushpull`` sums over ranks (horovod's allreduce with ``average=False``), and
``broadcast`` copies rank 0's value; nothing is stored and no optimizer runs in the store.
"""
import hashlib
import os
import threading

import numpy as np

from .._core import engine
from ..base import MXNetError
from . import _mpi
from .base import KVStoreBase
from .compression import dequantize_2bit, quantize_2bit
from .kvstore import KVStore, _check_compression_params, _is_sparse, _pairs

__all__ = ["DistKVStore", "DistAsyncKVStore", "HorovodStore"]

_lock = threading.Lock()    # one store at a time takes the communicator
_STAGE_PRIO = 1 << 24
_MAX_BLOCKS = 4           # shared receive blocks per store (one per set of keys a step pushes)
_BUCKET_BYTES = int(os.environ.get("MXC_KVSTORE_BUCKET_BYTES", str(32 << 20)))
_FINISH_PRIO = -(1 << 24)


def _flat(arr):
    """Flat numpy view of a dense NDArray's memory (inside an operation that holds it)."""
    return arr._numpy_view().reshape(-1)


_DTYPE_NAMES = {}


def _header(arr):
    # (numpy's dtype.name is computed in Python: cached, as every push of a step asks for it)
    dt = arr.dtype
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = np.dtype(dt).name
    return (tuple(arr.shape), name)


def _dense(arr):
    return arr.tostype("default") if _is_sparse(arr) else arr


class _Reducer(object):
    """Allreduce of (a list of) NDArrays into a receive NDArray as two engine operations."""

    def __init__(self, comm):
        self.comm = comm
        self.scratch = {}
        self.residual = {}
        self.threshold = None

    def reduce(self, kind, key, vals, recv, priority=0):
        """recv := the sum of ``vals`` over this worker, then over the ranks."""
        comm = self.comm
        comm.check()
        h0 = self._check_values(key, vals)
        t = self.threshold
        if t is None:
            self.reduce_bucket(kind, key, [(key, vals, recv)], h0, priority)
            return
        if np.dtype(vals[0].dtype) != np.float32:
            raise MXNetError("2bit gradient compression supports float32 values only; key %r "
                             "was pushed as %s" % (key, np.dtype(vals[0].dtype).name))
        name = comm.next_name(kind, key)
        box = {}
        size = int(np.prod(h0[0], dtype=np.int64))

        def run(c):
            parts = c.allgather(box["packed"], _mpi.describe(name))
            out = box["recv"]
            dequantize_2bit(parts[0], size, t, out=out)
            for p in parts[1:]:
                dequantize_2bit(p, size, t, out=out, accumulate=True)

        req = _mpi.Request(name, h0 + ("2bit", float(t)), priority, run)

        def stage():
            box["recv"] = _flat(recv)
            send = self._local_sum(key, vals)
            res = self.residual.get(key)
            if res is None or res.shape != send.shape:
                res = self.residual[key] = np.zeros(send.shape, np.float32)
            box["packed"] = quantize_2bit(send, res, t)
            comm.mark_ready(req)

        def finish():
            req.wait()
            box.clear()

        self._push_pair(req, stage, finish, vals, [recv], kind, priority)

    @staticmethod
    def _check_values(key, vals):
        h0 = _header(vals[0])
        for v in vals[1:]:
            if _header(v) != h0:
                raise MXNetError("push of key %r: the values of one key must share shape and "
                                 "dtype, got %s/%s and %s/%s" % (key, h0[0], h0[1],
                                                                 v.shape, np.dtype(v.dtype)))
        return h0

    def _local_sum(self, key, vals):
        """Flat numpy sum of a key's values on this worker (the value itself when one)."""
        views = [_flat(v) for v in vals]
        if len(views) == 1:
            return views[0]
        send = self.scratch.get(key)
        if send is None or send.shape != views[0].shape or send.dtype != views[0].dtype:
            send = self.scratch[key] = np.empty_like(views[0])
        np.add(views[0], views[1], out=send)
        for v in views[2:]:
            np.add(send, v, out=send)
        return send

    def reduce_bucket(self, kind, name_key, entries, header, priority=0):
        """For every (key, vals, recv[, peers]) of ``entries`` (one dtype): recv := the sum of
        vals over this worker, then over the ranks; as ONE request with one stage and one
        finish operation, so that a Trainer step's keys are summed in a few passes (fewer
        agreements, barriers and engine operations than one request per key). ``peers``,
        when given, are every rank's flat receive array of the key in shared memory
        (``_mpi._Comm._sum_shared``). ``header`` (the shapes and dtype) must be the same on
        every rank."""
        comm = self.comm
        name = comm.next_name(kind, name_key)
        entries = [e if len(e) == 4 else e + (None,) for e in entries]
        box = {}
        req = _mpi.Request(name, header, priority, None, sums=box)
        dtype = np.dtype(entries[0][1][0].dtype)

        def pairs(sends):
            plain = [(send, _flat(e[2])) for send, e in zip(sends, entries) if e[3] is None]
            shared = [(send, e[3][comm.node_rank], e[3])
                      for send, e in zip(sends, entries) if e[3] is not None]
            return plain + (comm.stage_shared(shared) if shared else [])

        def stage():
            box["pairs"] = pairs([self._local_sum(key, vals) for key, vals, _, _ in entries])
            comm.mark_ready(req)

        box["zeros"] = lambda: pairs([np.zeros(vals[0].size, dtype) for _, vals, _, _ in entries])

        def finish():
            comm.note("finish", name)
            req.wait()
            comm.note("finished", name)
            box.pop("pairs", None)

        self._push_pair(req, stage, finish, [v for _, vals, _, _ in entries for v in vals],
                        [recv for _, _, recv, _ in entries], kind, priority)

    def _push_pair(self, req, stage, finish, reads, writes, kind, priority):
        """Submit ``req`` and push its stage (ready: values staged) and finish (waits until
        the communication thread is done with it) operations."""
        comm = self.comm
        var = engine.Var()
        comm.submit(req)
        reads = [v._chunk for v in reads]
        writes = [w._chunk for w in writes]
        try:
            engine.push(stage, const_vars=reads, mutable_vars=[var] + writes,
                        priority=_STAGE_PRIO + priority, name="kvstore_stage")
        except BaseException:
            comm.mark_ready(req)      # never leave a submitted request unready
            raise
        engine.push(finish, const_vars=reads + [var], mutable_vars=writes,
                    priority=_FINISH_PRIO + priority, name="kvstore_%s" % kind)

    def bcast(self, key, src, dst, priority=0):
        """dst := rank 0's src (dense arrays of the same shape)."""
        comm = self.comm
        comm.check()
        name = comm.next_name("init", key)
        box = {}

        def run(c):
            c.bcast(box["dst"], _mpi.describe(name))

        req = _mpi.Request(name, _header(src), priority, run)

        def stage():
            box["dst"] = _flat(dst)
            if comm.rank == 0 and src is not dst:
                np.copyto(box["dst"], _flat(src).astype(box["dst"].dtype, copy=False))
            comm.mark_ready(req)

        def finish():
            req.wait()
            box.clear()

        self._push_pair(req, stage, finish, [src] if src._chunk is not dst._chunk else [],
                        [dst], "init", priority)


@KVStoreBase.register
class DistKVStore(KVStore):
    """A KVStore whose workers are MPI ranks; build it with ``mx.kv.create('dist_sync')``."""

    type_names = ("dist_sync", "dist_device_sync", "dist_sync_device")
    is_distributed = True
    supports_compression = True

    def __init__(self, kvtype="dist_sync"):
        with _lock:
            super(DistKVStore, self).__init__(kvtype)
            self._comm = _mpi.get_comm()
            self._red = _Reducer(self._comm)
            self._recv = {}
            self._shared = set()      # keys whose stored value is the caller's array
            self._held = []           # a Trainer step's pushes, for _flush_pushes
            self._holding = False     # inside _pushpull_sums: pushes are held
            self._blocks = {}         # the keys of a Trainer step -> their shared receive arrays
            self._server = _AsyncServer(self._comm) if self.is_async else None

    def __repr__(self):
        return "<DistKVStore %s: rank %d of %d, %d keys>" % (
            self._type, self.rank, self.num_workers, len(self._store))

    @property
    def rank(self):
        return self._comm.rank

    @property
    def num_workers(self):
        return self._comm.size

    def init(self, key, value):
        """Initialize keys with rank 0's values (broadcast; every rank must call it)."""
        pairs, kind = _pairs(key, value, "init")
        self._use_kind(kind)
        for k, v in pairs:
            if self.is_async and _is_sparse(v):
                raise MXNetError("dist_async: key %r has %s storage; mxc's dist_async store "
                                 "holds dense values only (use dist_sync for sparse ones)"
                                 % (k, v.stype))
            self._check_new_key(k)
            dense = _dense(v)
            buf = dense.copy() if self.rank == 0 else _empty_like(dense)
            if self.is_async:
                self._server.init_key(k, buf)
                self._store[k] = buf
                continue
            self._red.bcast(k, buf, buf, priority=0)
            self._store[k] = buf.tostype(v.stype) if _is_sparse(v) else buf

    def _broadcast_shared(self, key, arr):
        """dist_sync: the weight array itself becomes the stored value (rank 0's value is
        broadcast into it). The updater then writes it in place, and the Trainer's pull after
        each push copies nothing: for ResNet-18 that is 62 engine operations and 45 MB of
        copying per step, on a core that each rank shares with its compute. A change the
        script makes to the weight between steps (clipping it, say) is then kept, where
        MXNet's separate copy in the store overwrote it at the next pull."""
        if self.is_async or _is_sparse(arr):
            return super(DistKVStore, self)._broadcast_shared(key, arr)
        ((key, _),), kind = _pairs(key, arr, "init")
        self._use_kind(kind)
        self._check_new_key(key)
        self._red.bcast(key, arr, arr, priority=0)
        self._store[key] = arr
        self._shared.add(key)

    def _push_one(self, key, vals, priority=0):
        stored = self._store[key]
        for v in vals:
            if v.shape != stored.shape:
                raise MXNetError("push of key %r: value shape %s does not match the stored "
                                 "shape %s" % (key, v.shape, stored.shape))
        vals = [_dense(v) for v in vals]
        if self.is_async:
            if self._updater is None:
                raise MXNetError("dist_async: push of key %r without an optimizer: the "
                                 "asynchronous store applies pushes with the optimizer of "
                                 "set_optimizer (Trainer(update_on_kvstore=True))" % (key,))
            self._server.push(key, vals, priority)
            return
        self._push_sync(key, vals, priority)

    def _push_sync(self, key, vals, priority):
        # Replicated update: every rank applies the optimizer to the same reduced gradient.
        # Sharding keys over ranks and broadcasting the updated weights would move the same
        # bytes again (a second collective per key); an SGD/Adam update of 25M floats costs
        # 15-40 ms here against 100-280 ms for the allreduce, so the replica is cheaper.
        stored = self._store[key]
        if ((self._deferred is not None or self._holding) and self._red.threshold is None
                and not _is_sparse(stored)):
            # a Trainer step (_pushpull_updates, _pushpull_sums): summed with the step's
            # other keys in buckets by _flush_pushes, which then queues the update
            self._held.append((key, vals, priority, self._red._check_values(key, vals)))
            return
        recv = self._recv.get(key)
        if recv is None or recv.dtype != vals[0].dtype:
            recv = self._recv[key] = _empty_like(vals[0])
        self._red.reduce("push", key, vals, recv, priority)
        if self._updater is not None:
            grad = recv.tostype(stored.stype) if _is_sparse(stored) else recv
            self._apply_update(key, grad, stored)
        elif _is_sparse(stored):
            self._store[key] = recv.tostype(stored.stype)
        else:
            self._store[key] = recv
            if key in self._shared:
                self._shared.discard(key)     # a Trainer's weight: never a receive buffer
            elif stored is not recv and stored.dtype == recv.dtype:
                self._recv[key] = stored      # two buffers per key alternate

    def _pushpull_updates(self, items):
        # (pushes are held while KVStore defers the updates, i.e. for mxc's Updater)
        self._held = []
        try:
            super(DistKVStore, self)._pushpull_updates(items)
        finally:
            self._held = []       # (a push that failed midway leaves nothing for later)

    def _pushpull_sums(self, items):
        """A Trainer step that updates locally (update_on_kvstore=False): its keys are summed
        in buckets as ``_pushpull_updates``'s are, each sum becomes the key's stored value
        and is pulled into the gradients."""
        if self.is_async or self._updater is not None:
            return super(DistKVStore, self)._pushpull_sums(items)
        self._held, self._holding = [], True
        try:
            for key, grads, priority in items:
                self.push(key, grads, priority=priority)
            self._flush_pushes()
        finally:
            self._held, self._holding = [], False
        for key, grads, priority in items:
            self.pull(key, out=grads, priority=priority)

    def _flush_pushes(self):
        """The held pushes of a Trainer step go out in buckets of up to
        ``MXC_KVSTORE_BUCKET_BYTES`` (default 32 MiB) of one dtype, the last keys first (a
        backward pass makes their gradients first): one request, stage and finish operation
        per bucket instead of per key; for ResNet-18's 62 keys (45 MB) 2 requests a step. The
        sums land in receive arrays that every rank on the host can write (``_shared_recv``),
        so each rank writes its share of the sums straight into the others' arrays. Then the
        step's updates are queued, in push order."""
        held, self._held = self._held, []
        if not held:
            return
        shared = self._shared_recv(held)
        recvs = []
        for key, vals, _, _ in held:
            if shared is not None:
                recvs.append(shared[key])
                continue
            recv = self._recv.get(key)
            if recv is None or recv.dtype != vals[0].dtype:
                recv = self._recv[key] = _empty_like(vals[0])
            recvs.append((recv, None))
        bucket, nbytes = [], 0

        def flush():
            if not bucket:
                return
            entries = [(h[0], h[1], r, peers) for h, (r, peers) in bucket]
            if len(bucket) == 1:
                key, _, prio, header = bucket[0][0]
            else:
                key = tuple(h[0] for h, _ in bucket)
                header = (tuple(h[3][0] for h, _ in bucket), bucket[0][0][3][1])
                prio = max(h[2] for h, _ in bucket)
            self._red.reduce_bucket("push", key, entries, header, prio)
            del bucket[:]

        for h, r in reversed(list(zip(held, recvs))):
            size = h[1][0].size * np.dtype(h[1][0].dtype).itemsize
            if bucket and (h[3][1] != bucket[0][0][3][1] or nbytes + size > _BUCKET_BYTES):
                flush()
                nbytes = 0
            bucket.append((h, r))
            nbytes += size
        flush()
        for (key, _, _, _), (recv, _) in zip(held, recvs):
            if self._updater is not None:
                self._apply_update(key, recv, self._store[key])
            else:           # the sum is the stored value (push without an optimizer)
                self._store[key] = recv
                self._shared.discard(key)

    def _shared_recv(self, held):
        """{key: (receive NDArray, [every rank's receive array, flat numpy])} for the keys of
        a Trainer step, in one shared-memory block per set of keys (made once, by all ranks
        together, the first time the set is pushed); None when the ranks do not all share
        this host (or lack room in /dev/shm): the sums then go through _ShmSum or MPI."""
        sig = tuple((h[0], h[3]) for h in held)
        if sig in self._blocks:
            return self._blocks[sig]
        if len(self._blocks) >= _MAX_BLOCKS:
            # a block lives as long as the process (freeing a window is collective): a script
            # whose steps push ever new sets of keys keeps its later sets in private arrays
            # (every rank counts the same sets, so every rank decides the same)
            self._blocks[sig] = None
            return None
        layout, nbytes = [], 0
        for key, (shape, dtype) in sig:
            size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            layout.append((key, shape, np.dtype(dtype), nbytes, size))
            nbytes += (size + 63) // 64 * 64
        comm = self._comm
        box = {}

        def run(c):
            box["parts"] = c.shared_block(nbytes, "the shared receive block")

        # (the header names the layout: ranks that push other keys fail with both named)
        digest = hashlib.sha256(repr(sig).encode()).hexdigest()[:16]
        req = _mpi.Request(comm.next_name("shared buffers", None),
                           ("%d keys, %d bytes, layout %s" % (len(sig), nbytes, digest),
                            "uint8"), 0, run)
        comm.submit(req, ready=True)
        req.wait()
        parts = box.get("parts")
        out = None
        if parts is not None:
            from ..ndarray.ndarray import NDArray
            from .._core import handle as _h
            from ..context import Context
            out = {}
            for key, shape, dtype, off, size in layout:
                peers = [p[off:off + size].view(dtype) for p in parts]
                arr = _h.wrap_numpy(NDArray, peers[comm.node_rank].reshape(shape),
                                    Context("cpu", 0))
                out[key] = (arr, peers)
        self._blocks[sig] = out
        return out

    def push(self, key, value, priority=0):
        """Push values: summed on this worker, then across workers; stored or given to the
        optimizer (``set_optimizer``)."""
        pairs, kind = _pairs(key, value, "push")
        self._use_kind(kind)
        for k, vals in self._grouped(pairs):
            self._push_one(k, vals, priority)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored (reduced / updated) values into ``out``."""
        if self.is_async:
            if out is None:
                raise MXNetError("pull needs out= (the arrays to copy the stored values into)")
            pairs, kind = _pairs(key, out, "pull")
            self._use_kind(kind)
            dense = []
            for k, o in pairs:
                if _is_sparse(o):
                    if ignore_sparse:
                        continue
                    raise MXNetError("dist_async: pull of key %r into a %s array; mxc's "
                                     "dist_async store holds dense values only"
                                     % (k, o.stype))
                dense.append((k, o))
            for k, outs in self._grouped(dense):
                for o in outs:
                    if o.shape != self._store[k].shape:
                        raise MXNetError("pull of key %r: output shape %s does not match the "
                                         "stored shape %s" % (k, o.shape, self._store[k].shape))
                self._server.pull(k, outs, priority)
            return
        super(DistKVStore, self).pull(key, out=out, priority=priority,
                                      ignore_sparse=ignore_sparse)

    def pushpull(self, key, value, out=None, priority=0):
        """push(key, value) then pull(key, out); ``out=None`` pulls into ``value``."""
        self.push(key, value, priority)
        self.pull(key, out=value if out is None else out, priority=priority)

    def broadcast(self, key, value, out, priority=0):
        """init(key, value) (rank 0's value) then pull(key, out)."""
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """The rows ``row_ids`` of the (reduced, identical on every rank) stored values."""
        if self.is_async:
            raise MXNetError("row_sparse_pull is not supported by dist_async in mxc; use "
                             "dist_sync")
        super(DistKVStore, self).row_sparse_pull(key, out=out, priority=priority,
                                                 row_ids=row_ids)

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` in the store: on every rank after each reduction (dist_sync),
        on rank 0 as pushes arrive (dist_async)."""
        from .. import optimizer as opt
        # every rank must hold the same optimizer (its class and main hyper-parameters)
        sig = repr((type(optimizer).__name__, getattr(optimizer, "lr", None),
                    getattr(optimizer, "wd", None), getattr(optimizer, "rescale_grad", None)))
        self._check_same("set_optimizer", sig.encode())
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        super(DistKVStore, self)._set_updater(updater)
        if self.is_async:
            self._server.updater = updater

    def _check_same(self, what, blob):
        digest = np.frombuffer(hashlib.sha256(blob).digest(), np.uint8)
        allg = self._comm_object_gather(digest)
        bad = [r for r in range(len(allg)) if not np.array_equal(allg[r], allg[0])]
        if bad:
            raise MXNetError("%s: rank(s) %s passed a different optimizer than rank 0" %
                             (what, bad))

    def _comm_object_gather(self, arr):
        comm = self._comm
        box = {}

        def run(c):
            box["out"] = c.allgather(arr, "check")
        req = _mpi.Request(comm.next_name("check", None), (arr.shape, arr.dtype.str), 0, run)
        comm.submit(req, ready=True)
        req.wait()
        return box["out"]

    def set_gradient_compression(self, compression_params):
        """2-bit compression with error feedback ({'type': '2bit', 'threshold': t}) of what
        each worker sends (after its local sum), as MXNet's dist stores."""
        t = _check_compression_params(compression_params)
        self._red.threshold = t
        self._red.residual = {}
        if self.is_async:
            self._server.threshold = t
            self._server.residual = {}

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states (identical on every rank in dist_sync; rank 0's in
        dist_async) to fname."""
        if self.is_async:
            if self.rank != 0:
                raise MXNetError("dist_async: the optimizer states live on rank 0 (the "
                                 "server); call save_optimizer_states on rank 0 (this is rank "
                                 "%d)" % self.rank)
            with self._server.lock:
                self._server.flush()
                super(DistKVStore, self).save_optimizer_states(fname, dump_optimizer)
            return
        super(DistKVStore, self).save_optimizer_states(fname, dump_optimizer)

    def load_optimizer_states(self, fname):
        """Read the updater's states from fname (on every rank; in dist_async rank 0's are
        the ones used)."""
        if self.is_async:
            with self._server.lock:
                self._server.flush()
                super(DistKVStore, self).load_optimizer_states(fname)
            return
        super(DistKVStore, self).load_optimizer_states(fname)

    def _barrier(self):
        """Wait until every worker reached its barrier (in dist_async, once rank 0 has taken
        every push this worker made before it)."""
        comm = self._comm
        if self.is_async:
            self._server.flush()
        req = comm.barrier_request()
        comm.submit(req, ready=True)
        req.wait()

    barrier = _barrier

    def _send_command_to_servers(self, head, body):
        """mxc's dist stores have no server processes; nothing to send."""


@KVStoreBase.register
class DistAsyncKVStore(DistKVStore):
    """``mx.kv.create('dist_async')``: the asynchronous kind of DistKVStore (see the module's
    docstring); its methods branch on ``is_async``."""

    type_names = ("dist_async", "dist_device_async", "dist_async_device")
    is_async = True

    def __init__(self, kvtype="dist_async"):
        super(DistAsyncKVStore, self).__init__(kvtype)


@KVStoreBase.register
class HorovodStore(KVStoreBase):
    """``mx.kv.create('horovod')``: allreduce (sum) and broadcast over MPI ranks."""

    type_names = ("horovod",)
    is_distributed = True

    def __init__(self, kvtype="horovod"):
        self._comm = _mpi.get_comm()
        self._red = _Reducer(self._comm)
        self._recv = {}

    def broadcast(self, key, value, out, priority=0):
        """``out`` := rank 0's ``value`` on every rank."""
        outs = out if isinstance(out, (list, tuple)) else [out]
        src = value[0] if isinstance(value, (list, tuple)) else value
        buf = src.copy() if self._comm.rank == 0 else _empty_like(src)
        self._red.bcast(key, buf, buf, priority)
        for o in outs:
            buf.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (an array or a list summed locally) over ranks into ``out``
        (into the values themselves when ``out`` is None)."""
        if isinstance(key, (list, tuple)):
            outs = out if out is not None else [None] * len(key)
            for k, v, o in zip(key, value, outs):
                self.pushpull(k, v, o, priority)
            return
        vals = [_dense(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
        recv = self._recv.get(key)
        if recv is None or recv.shape != vals[0].shape or recv.dtype != vals[0].dtype:
            recv = self._recv[key] = _empty_like(vals[0])
        self._red.reduce("pushpull", key, vals, recv, priority)
        targets = vals if out is None else (out if isinstance(out, (list, tuple)) else [out])
        for o in targets:
            recv.copyto(o)

    def set_optimizer(self, optimizer):
        raise MXNetError("the horovod KVStore does not run optimizers; use "
                         "Trainer(update_on_kvstore=False)")

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError("Unknown capability: {}".format(capability))

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise MXNetError("the horovod KVStore has no optimizer states")

    def load_optimizer_states(self, fname):
        raise MXNetError("the horovod KVStore has no optimizer states")

    @property
    def type(self):
        return "horovod"

    @property
    def rank(self):
        return self._comm.rank

    @property
    def local_rank(self):
        import os
        for var in ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK"):
            if var in os.environ:
                return int(os.environ[var])
        return self._comm.rank

    @property
    def num_workers(self):
        return self._comm.size

    def _barrier(self):
        req = self._comm.barrier_request()
        self._comm.submit(req, ready=True)
        req.wait()

    barrier = _barrier


class _AsyncServer(object):
    """The dist_async side of one DistKVStore: on rank 0 the served copy of every key and
    the handler of the other ranks' requests; on the others the requests themselves."""

    def __init__(self, comm):
        self.comm = comm
        # same id on every rank when ranks create their stores in the same order
        self.sid = comm.next_name("async_store", None)[2]
        self.lock = threading.RLock()       # serializes updates (and state saves) on rank 0
        self.updater = None
        self.keys = {}                      # key -> served NDArray (rank 0) / a shape holder
        self.vars = {}                      # key -> engine var ordering this rank's requests
        self.recv = {}                      # rank 0: key -> buffer of its own summed pushes
        self.threshold = None
        self.residual = {}
        self.sent = []                      # pushes not yet acknowledged by rank 0
        if comm.rank == 0:
            comm.serve(self.sid, self._handle)

    # ---- every rank --------------------------------------------------------------------------
    def init_key(self, key, buf):
        """Make rank 0's ``buf`` the served value of ``key`` (a broadcast, waited for here)."""
        comm = self.comm
        comm.check()
        if comm.rank == 0:
            with self.lock:
                self.keys[key] = buf        # served from now on; the broadcast only reads it
        else:
            self.keys[key] = buf
        buf.wait_to_read()
        name = comm.next_name("init", key)
        flat = _flat(buf)
        req = _mpi.Request(name, _header(buf), 0,
                           lambda c: c.bcast(flat, _mpi.describe(name)))
        comm.submit(req, ready=True)
        req.wait()

    def _var(self, key):
        var = self.vars.get(key)
        if var is None:
            var = self.vars[key] = engine.Var()
        return var

    def _staged_sum(self, key, vals):
        """This worker's sum of the values of ``key`` (flat numpy, a new array), compressed
        with error feedback when 2-bit compression is on: (array to send, 2-bit threshold)."""
        views = [_flat(v) for v in vals]
        send = views[0].copy()
        for v in views[1:]:
            np.add(send, v, out=send)
        t = self.threshold
        if t is None:
            return send, None
        if send.dtype != np.float32:
            raise MXNetError("2bit gradient compression supports float32 values only; key %r "
                             "was pushed as %s" % (key, send.dtype.name))
        res = self.residual.get(key)
        if res is None or res.shape != send.shape:
            res = self.residual[key] = np.zeros(send.shape, np.float32)
        return quantize_2bit(send, res, t), t

    def push(self, key, vals, priority):
        self._raise_failed_pushes()
        comm = self.comm
        if comm.rank == 0:
            self._push_local(key, vals, priority)
            return
        size = int(np.prod(vals[0].shape, dtype=np.int64))

        def stage():
            data, t = self._staged_sum(key, vals)
            req = _mpi.Request(comm.next_async_name("async push", key), None, 0, None,
                               peer=0)
            comm.submit_async(req, 0, ("srv", self.sid, "push", key, req.name, (t, size)),
                              data)
            with self.lock:
                self.sent.append(req)

        engine.push(stage, const_vars=[v._chunk for v in vals], mutable_vars=[self._var(key)],
                    priority=_STAGE_PRIO + priority, name="kvstore_async_push")

    def pull(self, key, outs, priority):
        self._raise_failed_pushes()
        comm = self.comm
        if comm.rank == 0:
            stored = self.keys[key]
            for o in outs:
                KVStore._copy_into(key, stored, o)
            return
        box = {}
        done = engine.Var()

        def stage():
            req = _mpi.Request(comm.next_async_name("async pull", key), None, 0, None,
                               peer=0)
            box["req"] = req
            comm.submit_async(req, 0, ("srv", self.sid, "pull", key, req.name, None))

        def finish():
            req = box.pop("req")
            req.wait()
            val = req.value.reshape(-1)
            for o in outs:
                np.copyto(_flat(o), val, casting="unsafe")

        engine.push(stage, mutable_vars=[self._var(key), done],
                    priority=_STAGE_PRIO + priority, name="kvstore_async_pull_stage")
        engine.push(finish, const_vars=[done], mutable_vars=[o._chunk for o in outs],
                    priority=_FINISH_PRIO + priority, name="kvstore_async_pull")

    def flush(self):
        """Wait until this rank's pushes so far were taken by rank 0 (there: applied)."""
        comm = self.comm
        for var in list(self.vars.values()):
            var.wait()
        if comm.rank == 0:
            for stored in list(self.keys.values()):
                stored.wait_to_read()
            return
        with self.lock:
            sent = list(self.sent)
        for req in sent:
            req.wait()
        self._raise_failed_pushes()

    def _raise_failed_pushes(self):
        with self.lock:
            failed = [r for r in self.sent if r.done.is_set() and r.error is not None]
            self.sent = [r for r in self.sent if not r.done.is_set()]
        if failed:
            raise MXNetError(failed[0].error)

    # ---- rank 0 ------------------------------------------------------------------------------
    def _apply(self, key, grad):
        stored = self.keys.get(key)
        if stored is None:
            raise MXNetError("key %r has not been initialized on rank 0" % (key,))
        if self.updater is None:
            raise MXNetError("dist_async: no optimizer on rank 0 (call set_optimizer on "
                             "every rank)")
        self.updater(key, grad, stored)

    def _push_local(self, key, vals, priority):
        recv = self.recv.get(key)
        if recv is None or recv.dtype != vals[0].dtype:
            recv = self.recv[key] = _empty_like(vals[0])

        def stage():
            data, t = self._staged_sum(key, vals)
            out = _flat(recv)
            if t is None:
                np.copyto(out, data)
            else:
                dequantize_2bit(data, out.size, t, out=out)

        engine.push(stage, const_vars=[v._chunk for v in vals],
                    mutable_vars=[recv._chunk, self._var(key)],
                    priority=_STAGE_PRIO + priority, name="kvstore_async_push")
        with self.lock:
            self._apply(key, recv)

    def _handle(self, src, header, arr):
        """A request of rank ``src`` (on rank 0's communication thread)."""
        kind, key, name, extra = header[2], header[3], header[4], header[5]
        comm = self.comm
        if kind == "push":
            t, size = extra
            with self.lock:
                stored = self.keys.get(key)
                if stored is None:
                    raise MXNetError("key %r has not been initialized on rank 0" % (key,))
                if t is not None:
                    arr = dequantize_2bit(arr, size, t)
                if arr.size != int(np.prod(stored.shape, dtype=np.int64)):
                    raise MXNetError("push of key %r: rank %d sent %d values, the stored "
                                     "shape is %s" % (key, src, arr.size, stored.shape))
                from .. import ndarray as nd
                grad = nd.array(arr.reshape(stored.shape), ctx=stored.context, dtype=arr.dtype)
                self._apply(key, grad)
            comm.send_async(src, ("ack", name))
            return
        if kind == "pull":
            stored = self.keys.get(key)
            if stored is None:
                raise MXNetError("key %r has not been initialized on rank 0" % (key,))

            def answer():
                comm.send_async(src, ("val", name), _flat(stored).copy())

            engine.push(answer, const_vars=[stored._chunk], priority=_STAGE_PRIO,
                        name="kvstore_async_answer")
            return
        raise MXNetError("unknown dist_async request %r" % (kind,))


def _empty_like(arr):
    from .. import ndarray as nd
    return nd.empty(arr.shape, ctx=arr.context, dtype=arr.dtype)
