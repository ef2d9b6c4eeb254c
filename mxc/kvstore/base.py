"""The KVStore interface, its registry of Python-level stores, and ``create``."""
import warnings

from ..base import MXNetError, string_types
from ..ndarray.ndarray import NDArray

__all__ = ["create", "KVStoreBase"]


class KVStoreBase(object):
    """The interface of a key-value store for data-parallel training.

    Stores written in Python register with ``KVStoreBase.register`` and are then built by
    ``mx.kv.create(<lower-cased class name>)``.
    """

    OPTIMIZER = "optimizer"

    kv_registry = {}

    def broadcast(self, key, value, out, priority=0):
        """Initialize ``key`` with ``value`` (rank 0's) and pull it into ``out``."""
        raise NotImplementedError()

    def _broadcast_shared(self, key, arr):
        """``broadcast(key, arr, [arr])`` for a Trainer that updates on the store (one dense
        array per key): a store may then keep ``arr`` itself as the key's value, so that the
        update writes the weight in place and the pull after it copies nothing."""
        self.broadcast(key, arr, [arr])

    def _pushpull_updates(self, items):
        """``pushpull(key, grads, out=weights, priority=p)`` for each (key, grads, weights, p)
        of a Trainer step that updates on the store; a store may update the keys together."""
        for key, grads, outs, priority in items:
            self.pushpull(key, grads, out=outs, priority=priority)

    def _pushpull_sums(self, items):
        """``pushpull(key, grads, priority=p)`` (sum into the gradients themselves) for each
        (key, grads, p) of a Trainer step that updates locally; a store may sum the keys
        together."""
        for key, grads, priority in items:
            self.pushpull(key, grads, priority=priority)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` (summed over a list) and pull the result into ``out``
        (into ``value`` itself when ``out`` is None)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` inside the store on every push."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states (and the optimizer with ``dump_optimizer``) to fname."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Read the updater's states from fname."""
        raise NotImplementedError()

    @property
    def type(self):
        """The store's type name."""
        raise NotImplementedError()

    @property
    def rank(self):
        """This worker's rank, in [0, num_workers)."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Class decorator: make ``klass`` creatable as ``mx.kv.create(klass.__name__.lower())``."""
        if not isinstance(klass, type):
            raise TypeError("KVStoreBase.register takes a class, got %r" % (klass,))
        name = klass.__name__.lower()
        old = KVStoreBase.kv_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn("WARNING: New kvstore %s.%s is overriding existing kvstore %s.%s"
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A store without state for tests: pushpull sums its values, broadcast copies."""

    def broadcast(self, key, value, out, priority=0):
        for o in (out if isinstance(out, list) else [out]):
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        if isinstance(value, NDArray):
            if out is not None:
                for o in (out if isinstance(out, list) else [out]):
                    o[:] = value
            return
        ctx = value[0].context
        total = value[0].as_in_context(ctx).copy()
        for v in value[1:]:
            total += v.as_in_context(ctx)
        targets = value if out is None else (out if isinstance(out, list) else [out])
        for o in targets:
            o[:] = total

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError("Unknown capability: {}".format(capability))

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()


# store types built on the local store; any other 'local*' name is local as in MXNet
_LOCAL_TYPES = ("local", "device", "nccl", "local_update_cpu", "local_allreduce_cpu",
                "local_allreduce_device")


def create(name="local"):
    """Create a KVStore.

    ``'local'`` (and ``'local_update_cpu'``, ``'local_allreduce_cpu'``) sums pushed values and
    runs the updater on the CPU; ``'device'``, ``'local_allreduce_device'`` and ``'nccl'`` are
    accepted and behave as the local store here, since mxc computes on the CPU (a warning
    says so once). ``'dist_sync'``, ``'dist_device_sync'``, ``'dist_sync_device'``,
    ``'dist_async'`` and ``'horovod'`` build the distributed store over MPI
    (``mxc/kvstore/dist.py``; mpi4py from the 'dist' extra). Names registered with
    ``KVStoreBase.register`` create those classes.
    """
    if not isinstance(name, string_types):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if "dist" in name or name == "horovod":
        from .dist import create_dist      # imports mpi4py only now
        return create_dist(name)
    if name == "byteps":
        raise MXNetError("KVStore type 'byteps' needs the byteps package, which mxc does not "
                         "support; use 'dist_sync' or 'horovod'")
    if name not in _LOCAL_TYPES and not name.startswith("local"):
        raise MXNetError("Unknown KVStore type '%s'; valid types are %s, 'dist_*' and the "
                         "registered %s" % (name, ", ".join(repr(t) for t in _LOCAL_TYPES),
                                            sorted(KVStoreBase.kv_registry)))
    from .kvstore import KVStore
    return KVStore(name)
