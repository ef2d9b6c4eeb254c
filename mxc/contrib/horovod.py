"""``mxc.contrib.horovod``: what scripts written against ``horovod.mxnet`` use, over MPI.

    import mxc.contrib.horovod as hvd      # in place of: import horovod.mxnet as hvd
    hvd.init()
    net.initialize(ctx=mx.cpu(hvd.local_rank()))
    hvd.broadcast_parameters(net.collect_params(), root_rank=0)
    trainer = hvd.DistributedTrainer(net.collect_params(), "sgd", {"learning_rate": 0.1})

Start the ranks with ``mxc-launch -n N python script.py`` (or ``mpiexec -n N``).

Semantics follow horovod.mxnet: ``allreduce`` averages by default (``average=False`` sums;
``prescale_factor``/``postscale_factor`` multiply before/after the sum); the ``*_`` forms work in
place; ``broadcast`` copies ``root_rank``'s value; ``allgather`` concatenates along the first
axis (first dimensions may differ between ranks). ``DistributedTrainer`` is a gluon Trainer
without a KVStore whose gradients are summed over the ranks before every update, with the
optimizer's ``rescale_grad`` divided by ``size()`` (so the update sees the average);
``DistributedOptimizer`` wraps an optimizer the same way for Module or a Trainer.

Collectives run on the distributed KVStore's communication thread (``mxc/kvstore/_mpi.py``):
allreduce and broadcast are engine operations (the call returns at once; reading the result
waits), ranks agree on the order of collectives even when they issue them in different orders,
shapes/dtypes that differ between ranks raise an error naming them, and a rank that died or
hangs turns into an MXNetError on the others after ``MXC_KVSTORE_TIMEOUT`` seconds instead of a
hang. Not provided: process sets other than the global one, timelines, alltoall, compression
other than ``Compression.none``/``Compression.fp16``.
"""
import collections
import os
import pickle
import types
import warnings

import numpy as np

from .. import ndarray as nd
from .. import optimizer as _optimizer
from .._core import engine
from ..base import MXNetError
from ..gluon import parameter as _parameter
from ..gluon.trainer import Trainer as _Trainer

__all__ = ["init", "shutdown", "is_initialized", "size", "local_size", "cross_size", "rank",
           "local_rank", "cross_rank", "mpi_threads_supported", "mpi_enabled", "mpi_built",
           "gloo_enabled", "gloo_built", "nccl_built", "ddl_built", "ccl_built", "cuda_built",
           "rocm_built", "allreduce", "allreduce_", "grouped_allreduce", "grouped_allreduce_",
           "allgather", "broadcast", "broadcast_", "broadcast_object", "allgather_object",
           "broadcast_parameters", "DistributedOptimizer", "DistributedTrainer", "Compression"]

_STATE = {"comm": None}
_STAGE_PRIO = 1 << 24
_FINISH_PRIO = -(1 << 24)
_CHUNK_BYTES = 64 << 20


# ---- basics ---------------------------------------------------------------------------------

def _mpi():
    from ..kvstore import _mpi as mod
    return mod


def init(comm=None, process_sets=None):
    """Start (or join) the job's MPI communication. ``comm`` other than None/all ranks is not
    supported (horovod's sub-communicator form)."""
    if comm is not None:
        try:
            ranks = list(comm)
        except TypeError:
            ranks = None
        mod = _mpi()
        world = mod.get_comm()
        if ranks is None or sorted(ranks) != list(range(world.size)):
            raise MXNetError("mxc.contrib.horovod.init: only the whole job is supported "
                             "(comm=None), got %r" % (comm,))
    if process_sets:
        raise MXNetError("mxc.contrib.horovod.init: process sets are not supported")
    _STATE["comm"] = _mpi().get_comm()


def shutdown():
    """Stop using horovod calls (MPI itself stays up until the process exits)."""
    if _STATE["comm"] is not None:
        engine.wait_for_all()
    _STATE["comm"] = None


def is_initialized():
    return _STATE["comm"] is not None


def _comm():
    comm = _STATE["comm"]
    if comm is None:
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    return comm


def rank():
    return _comm().rank


def size():
    return _comm().size


def _env_int(names, default):
    for name in names:
        val = os.environ.get(name, "")
        if val.isdigit():
            return int(val)
    return default


def local_rank():
    """This process's index among the ranks on its machine."""
    c = _comm()
    return _env_int(("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                     "MXC_LAUNCH_LOCAL_RANK"), c.rank if c.size == 1 else _node_layout()[0])


def local_size():
    """Number of ranks on this machine."""
    c = _comm()
    return _env_int(("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE"),
                    1 if c.size == 1 else _node_layout()[1])


def cross_rank():
    """Index of this machine among the machines of the job."""
    return 0 if _comm().size == 1 else _node_layout()[2]


def cross_size():
    """Number of machines in the job."""
    return 1 if _comm().size == 1 else _node_layout()[3]


def _node_layout():
    """(local rank, local size, node index, node count) from the ranks' host names."""
    if "layout" not in _STATE or _STATE.get("layout_comm") is not _comm():
        import socket
        hosts = allgather_object(socket.gethostname())
        me = _comm().rank
        nodes = list(collections.OrderedDict.fromkeys(hosts))
        mine = [r for r, h in enumerate(hosts) if h == hosts[me]]
        _STATE["layout"] = (mine.index(me), len(mine), nodes.index(hosts[me]), len(nodes))
        _STATE["layout_comm"] = _comm()
    return _STATE["layout"]


def mpi_threads_supported():
    return True


def mpi_enabled():
    return True


def mpi_built():
    return True


def gloo_enabled():
    return False


def gloo_built():
    return False


def nccl_built():
    return False


def ddl_built():
    return False


def ccl_built():
    return False


def cuda_built():
    return False


def rocm_built():
    return False


# ---- collectives ----------------------------------------------------------------------------

def _flat(arr):
    return arr._numpy_view().reshape(-1)


def _check_nd(tensor, what):
    if not isinstance(tensor, nd.NDArray):
        raise TypeError("hvd.%s expects an NDArray, got %s" % (what, type(tensor).__name__))
    if tensor.stype != "default":
        raise MXNetError("hvd.%s: %s storage is not supported; use a dense array"
                         % (what, tensor.stype))


def _submit(kind, name, header, priority, reads, writes, stage, run, finish=None, sums=None):
    """One collective as two engine operations (as the distributed KVStore's): *stage* reads
    the inputs and marks the request ready for the communication thread, which runs ``run``
    once every rank has it ready; *finish* waits for that (GIL released) and writes results."""
    mod = _mpi()
    comm = _comm()
    comm.check()
    rname = comm.next_name("hvd." + kind, name)
    req = mod.Request(rname, header, priority, run, sums=sums)
    var = engine.Var()
    comm.submit(req)

    def do_stage():
        try:
            stage()
        finally:
            comm.mark_ready(req)

    def do_finish():
        req.wait()
        if finish is not None:
            finish()

    try:
        engine.push(do_stage, const_vars=reads, mutable_vars=[var] + writes,
                    priority=_STAGE_PRIO + priority, name="hvd_%s_stage" % kind)
    except BaseException:
        comm.mark_ready(req)
        raise
    engine.push(do_finish, const_vars=reads + [var], mutable_vars=writes,
                priority=_FINISH_PRIO + priority, name="hvd_%s" % kind)
    return mod.describe(rname)


def _allreduce_into(tensor, out, average, name, priority, prescale_factor, postscale_factor):
    _check_nd(tensor, "allreduce")
    if average is None:
        average = True
    header = (tuple(tensor.shape), np.dtype(tensor.dtype).name)
    size, dtype = int(np.prod(tensor.shape, dtype=np.int64)), np.dtype(tensor.dtype)
    box = {"zeros": lambda: [(np.zeros(size, dtype),) * 2]}

    def stage():
        src = _flat(tensor)
        if prescale_factor != 1.0:
            send = (src * prescale_factor).astype(src.dtype, copy=False)
        else:
            send = src       # (the communication layer copies where MPI needs it: in place)
        box["pairs"] = [(send, _flat(out))]

    def run(c):
        send, recv = box["pairs"][0]
        c.allreduce(send, recv, "hvd.allreduce %r" % (name,))

    def finish():
        recv = box.pop("pairs")[0][1]
        scale = postscale_factor / (_comm().size if average else 1)
        if scale != 1.0:
            if np.issubdtype(recv.dtype, np.integer):
                recv[...] = (recv * scale).astype(recv.dtype)
            else:
                np.multiply(recv, recv.dtype.type(scale), out=recv)

    reads = [] if out is tensor else [tensor._chunk]
    _submit("allreduce", name, header, priority, reads, [out._chunk], stage, run, finish,
            sums=box)
    return out


def allreduce(tensor, average=None, name=None, priority=0, prescale_factor=1.0,
              postscale_factor=1.0, process_set=None, op=None):
    """The sum (``average=False``) or average (default) of ``tensor`` over all ranks, as a
    new array; ``tensor`` is not modified."""
    _check_process_set(process_set)
    average = _average(average, op)
    out = nd.empty(tensor.shape, ctx=tensor.context, dtype=tensor.dtype)
    return _allreduce_into(tensor, out, average, name, priority, prescale_factor,
                           postscale_factor)


def allreduce_(tensor, average=None, name=None, priority=0, prescale_factor=1.0,
               postscale_factor=1.0, process_set=None, op=None):
    """In-place ``allreduce``: ``tensor`` receives the result (and is returned)."""
    _check_process_set(process_set)
    average = _average(average, op)
    return _allreduce_into(tensor, tensor, average, name, priority, prescale_factor,
                           postscale_factor)


def grouped_allreduce(tensors, average=None, name=None, priority=0, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None, op=None):
    """``allreduce`` of each array of a list (new arrays)."""
    return [allreduce(t, average, None if name is None else "%s.%d" % (name, i), priority,
                      prescale_factor, postscale_factor, process_set, op)
            for i, t in enumerate(tensors)]


def grouped_allreduce_(tensors, average=None, name=None, priority=0, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=None, op=None):
    """In-place ``allreduce`` of each array of a list."""
    for i, t in enumerate(tensors):
        allreduce_(t, average, None if name is None else "%s.%d" % (name, i), priority,
                   prescale_factor, postscale_factor, process_set, op)
    return tensors


def _average(average, op):
    if op is not None:
        if op in ("sum", "Sum", Sum):
            return False
        if op in ("average", "Average", Average):
            return True
        raise MXNetError("hvd.allreduce: op %r is not supported (Average or Sum)" % (op,))
    return True if average is None else bool(average)


Average = "Average"
Sum = "Sum"


def _check_process_set(process_set):
    if process_set is not None and process_set is not global_process_set:
        raise MXNetError("mxc.contrib.horovod supports the global process set only")


class _GlobalProcessSet(object):
    process_set_id = 0

    def size(self):
        return size()

    def rank(self):
        return rank()

    def included(self):
        return True


global_process_set = _GlobalProcessSet()


def _bcast_chunks(c, buf, root, what):
    flat = buf.reshape(-1)
    step = max(1, _CHUNK_BYTES // max(1, flat.itemsize))
    for i in range(0, max(1, flat.size), step):
        c.wait_all([c.data.Ibcast(flat[i:i + step], root=root)], what)


def _broadcast_into(tensor, out, root_rank, name, priority):
    _check_nd(tensor, "broadcast")
    n = size()
    if not 0 <= int(root_rank) < n:
        raise MXNetError("hvd.broadcast: root_rank %d is not a rank of this job (size %d)"
                         % (root_rank, n))
    root_rank = int(root_rank)
    box = {}
    header = (tuple(tensor.shape), np.dtype(tensor.dtype).name, root_rank)

    def stage():
        dst = _flat(out)
        if out is not tensor and rank() == root_rank:
            np.copyto(dst, _flat(tensor))
        box["buf"] = dst

    def run(c):
        if c.size > 1:
            _bcast_chunks(c, box["buf"], root_rank, "hvd.broadcast %r" % (name,))

    def finish():
        box.clear()

    reads = [] if out is tensor else [tensor._chunk]
    _submit("broadcast", name, header, priority, reads, [out._chunk], stage, run, finish)
    return out


def broadcast(tensor, root_rank, name=None, priority=0, process_set=None):
    """``root_rank``'s ``tensor`` on every rank, as a new array."""
    _check_process_set(process_set)
    out = nd.empty(tensor.shape, ctx=tensor.context, dtype=tensor.dtype)
    return _broadcast_into(tensor, out, root_rank, name, priority)


def broadcast_(tensor, root_rank, name=None, priority=0, process_set=None):
    """In-place ``broadcast``: every rank's ``tensor`` becomes ``root_rank``'s."""
    _check_process_set(process_set)
    return _broadcast_into(tensor, tensor, root_rank, name, priority)


def _run_now(kind, name, header, run):
    """A collective that returns a host value: submitted ready and waited for."""
    mod = _mpi()
    comm = _comm()
    comm.check()
    box = {}
    req = mod.Request(comm.next_name("hvd." + kind, name), header, 0,
                      lambda c: box.__setitem__("out", run(c)))
    comm.submit(req, ready=True)
    req.wait()
    return box["out"]


def _gatherv(c, data, what):
    """Concatenation over ranks of 1-D arrays of one dtype and any lengths (numpy)."""
    counts = np.empty(c.size, np.int64)
    c.wait_all([c.data.Iallgather(np.array([data.size], np.int64), counts)], what)
    out = np.empty(int(counts.sum()), data.dtype)
    if c.size == 1:
        out[...] = data
        return out, counts
    c.wait_all([c.data.Iallgatherv(data, [out, counts.tolist()])], what)
    return out, counts


def allgather(tensor, name=None, priority=0, process_set=None):
    """The arrays of all ranks concatenated along axis 0 (their first dimensions may
    differ, the other dimensions and the dtype must agree)."""
    _check_process_set(process_set)
    _check_nd(tensor, "allgather")
    if tensor.ndim == 0:
        raise MXNetError("hvd.allgather needs arrays of at least one dimension")
    host = tensor.asnumpy()
    flat = np.ascontiguousarray(host).reshape(-1)
    if flat.dtype == np.bool_:
        flat = flat.view(np.uint8)
    header = (tuple(tensor.shape[1:]), np.dtype(tensor.dtype).name)
    out = _run_now("allgather", name, header,
                   lambda c: _gatherv(c, flat, "hvd.allgather %r" % (name,))[0])
    out = out.view(host.dtype).reshape((-1,) + tuple(tensor.shape[1:]))
    return nd.array(out, ctx=tensor.context, dtype=tensor.dtype)


def allgather_object(obj, name=None):
    """The list of every rank's (picklable) ``obj``, in rank order."""
    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    flat, counts = _run_now("allgather_object", name, None,
                            lambda c: _gatherv(c, data, "hvd.allgather_object %r" % (name,)))
    out, pos = [], 0
    for n in counts.tolist():
        out.append(pickle.loads(flat[pos:pos + n].tobytes()))
        pos += n
    return out


def broadcast_object(obj, root_rank=0, name=None):
    """``root_rank``'s (picklable) ``obj`` on every rank."""
    root_rank = int(root_rank)
    me = rank()
    data = np.frombuffer(pickle.dumps(obj), np.uint8) if me == root_rank else None

    def run(c):
        what = "hvd.broadcast_object %r" % (name,)
        if c.size == 1:
            return obj
        n = np.array([data.size if data is not None else 0], np.int64)
        c.wait_all([c.data.Ibcast(n, root=root_rank)], what)
        buf = data.copy() if data is not None else np.empty(int(n[0]), np.uint8)
        _bcast_chunks(c, buf, root_rank, what)
        return obj if data is not None else pickle.loads(buf.tobytes())

    return _run_now("broadcast_object", name, (root_rank,), run)


# ---- parameters, optimizer, trainer ---------------------------------------------------------

def _broadcast_after_init(param, root_rank, name):
    init_impl = param._init_impl

    def wrapped(self, *args, **kwargs):
        init_impl(*args, **kwargs)
        for arr in self._check_and_get(self._data, list):
            broadcast_(arr, root_rank=root_rank, name=name)
    return wrapped


def broadcast_parameters(params, root_rank=0, prefix=None):
    """Copy ``root_rank``'s parameters to every rank: ``params`` is a dict of name ->
    NDArray (``Module.get_params()[0]``) or a ParameterDict / dict of Parameters
    (``Block.collect_params()``). Parameters whose initialization is deferred are broadcast
    right after it happens."""
    if size() == 1:
        return
    if prefix is not None and not isinstance(prefix, str):
        raise ValueError("prefix must be a str, got %r" % (prefix,))
    prefix = prefix or ""
    if not isinstance(params, (dict, _parameter.ParameterDict)):
        raise ValueError("invalid params of type: %s" % type(params))
    for name, p in sorted(params.items()):
        key = prefix + str(name)
        if isinstance(p, _parameter.Parameter):
            try:
                arrays = p._check_and_get(p._data, list)
            except _parameter.DeferredInitializationError:
                p._init_impl = types.MethodType(_broadcast_after_init(p, root_rank, key), p)
                continue
            for arr in arrays:
                broadcast_(arr, root_rank, name=key)
        else:
            broadcast_(p, root_rank, name=key)


class Compression(object):
    """Gradient compression for ``DistributedTrainer`` (horovod's ``Compression``)."""

    class none(object):
        @staticmethod
        def compress(tensor):
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor

    class fp16(object):
        @staticmethod
        def compress(tensor):
            if np.dtype(tensor.dtype).kind == "f" and tensor.dtype != np.float16:
                return tensor.astype(np.float16), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor.astype(ctx) if ctx is not None else tensor


def _split_list(items, n):
    k, m = divmod(len(items), n)
    return [items[i * k + min(i, m):(i + 1) * k + min(i + 1, m)] for i in range(n)]


class DistributedOptimizer(_optimizer.Optimizer):
    """Wraps ``optimizer`` so that every update first sums the gradient over the ranks; the
    optimizer's ``rescale_grad`` is multiplied by ``gradient_predivide_factor / size()`` (so
    it applies the average). Attributes not defined here are the wrapped optimizer's."""

    def __init__(self, optimizer, gradient_predivide_factor=1.0, num_groups=0,
                 process_set=None):
        _check_process_set(process_set)
        object.__setattr__(self, "_optimizer", optimizer)
        object.__setattr__(self, "_gradient_predivide_factor", float(gradient_predivide_factor))
        object.__setattr__(self, "_num_groups", int(num_groups))
        optimizer.rescale_grad *= gradient_predivide_factor / size()

    def __getattr__(self, item):
        if item == "_optimizer":
            raise AttributeError(item)
        return getattr(self._optimizer, item)

    def __setattr__(self, key, value):
        # the Trainer sets rescale_grad/param_dict...: they belong to the wrapped optimizer
        setattr(self._optimizer, key, value)

    def create_state(self, index, weight):
        return self._optimizer.create_state(index, weight)

    def create_state_multi_precision(self, index, weight):
        return self._optimizer.create_state_multi_precision(index, weight)

    def _do_allreduce(self, index, grad):
        if size() == 1:
            return
        pre = 1.0 / self._gradient_predivide_factor
        if isinstance(index, (tuple, list)):
            if self._num_groups > 0:
                groups = zip(_split_list(list(index), self._num_groups),
                             _split_list(list(grad), self._num_groups))
                for i, (idx, grads) in enumerate(groups):
                    if idx:
                        grouped_allreduce_(grads, average=False,
                                           name="%s:%s" % (idx[0], idx[-1]), priority=-i,
                                           prescale_factor=pre)
            else:
                for i in range(len(index)):
                    allreduce_(grad[i], average=False, name=str(index[i]), priority=-i,
                               prescale_factor=pre)
        else:
            allreduce_(grad, average=False, name=str(index), prescale_factor=pre)

    def update(self, index, weight, grad, state):
        self._do_allreduce(index, grad)
        self._optimizer.update(index, weight, grad, state)

    def update_multi_precision(self, index, weight, grad, state):
        self._do_allreduce(index, grad)
        self._optimizer.update_multi_precision(index, weight, grad, state)

    def set_learning_rate(self, lr):
        self._optimizer.set_learning_rate(lr)

    def set_lr_mult(self, args_lr_mult):
        self._optimizer.set_lr_mult(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        self._optimizer.set_wd_mult(args_wd_mult)

    def __getstate__(self):
        return {"_optimizer": self._optimizer,
                "_gradient_predivide_factor": self._gradient_predivide_factor,
                "_num_groups": self._num_groups}

    def __setstate__(self, state):
        for k, v in state.items():
            object.__setattr__(self, k, v)

    def __repr__(self):
        return "DistributedOptimizer(%r)" % (self._optimizer,)


class DistributedTrainer(_Trainer):
    """A gluon Trainer for data-parallel training over the ranks: no KVStore; ``step`` sums
    every gradient over the ranks (horovod allreduce) and the optimizer applies the average
    (``rescale_grad`` divided by ``size()``, times ``gradient_predivide_factor`` split before
    and after the sum)."""

    def __init__(self, params, optimizer, optimizer_params=None, compression=Compression.none,
                 gradient_predivide_factor=1.0, prefix=None, num_groups=0, process_set=None):
        _check_process_set(process_set)
        self._compression = compression
        if isinstance(optimizer, DistributedOptimizer):
            optimizer = optimizer._optimizer
            warnings.warn("DistributedTrainer does not take DistributedOptimizer as its "
                          "optimizer. We have unwrapped it for you.")
        if isinstance(params, dict):
            params = collections.OrderedDict(params)
        elif isinstance(params, (list, tuple)):
            params = sorted(params, key=lambda p: p.name)
        super(DistributedTrainer, self).__init__(params, optimizer,
                                                 optimizer_params=optimizer_params,
                                                 kvstore=None)
        self._scale *= gradient_predivide_factor / size()
        self._gradient_predivide_factor = float(gradient_predivide_factor)
        if prefix is not None and not isinstance(prefix, str):
            raise ValueError("prefix must be a str, got %r" % (prefix,))
        self._prefix = prefix or ""
        self._num_groups = int(num_groups)

    def _allreduce_grads(self):
        if size() == 1:
            return
        pre = 1.0 / self._gradient_predivide_factor
        entries = []
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grads = param.list_grad()
            if len(grads) > 1:             # several devices: sum them here first
                total = grads[0].copy()
                for g in grads[1:]:
                    total += g.as_in_context(total.context)
            else:
                total = grads[0]
            entries.append((i, param, grads, total))
        groups = ([entries] if self._num_groups <= 0 else
                  _split_list(entries, min(self._num_groups, max(1, len(entries)))))
        for gi, group in enumerate(groups):
            for i, param, grads, total in group:
                packed, ctx = self._compression.compress(total)
                allreduce_(packed, average=False, name=self._prefix + str(i),
                           priority=-i if self._num_groups <= 0 else -gi,
                           prescale_factor=pre)
                result = self._compression.decompress(packed, ctx)
                for g in grads:
                    if g is not result:
                        result.copyto(g)
