"""The KVStore interface, its registry of Python-level stores, and ``create``."""
import warnings

from ..base import MXNetError, string_types
from ..ndarray.ndarray import NDArray

__all__ = ["create", "KVStoreBase", "store_class"]


class KVStoreBase(object):
    """The interface of a key-value store for data-parallel training.

    Stores register with ``KVStoreBase.register`` and are then built by ``mx.kv.create``: a
    plugin under its lower-cased class name (as in MXNet), a built-in store under the MXNet type
    names it declares in ``type_names``.

    What kind of store it is, the class declares; the Trainer, Module and model read these
    attributes (a plugin inherits the defaults: one process, synchronous, no compression).
    """

    OPTIMIZER = "optimizer"

    kv_registry = {}

    #: the MXNet type names a built-in store serves (``create(name)`` calls ``klass(name)``)
    type_names = ()
    #: workers are separate processes (MPI ranks): each holds its own copy of the data and
    #: the weights start as rank 0's
    is_distributed = False
    #: pushes are applied as they arrive, without waiting for the other workers: the
    #: optimizer must run in the store
    is_async = False
    #: ``set_gradient_compression`` ('2bit') is available
    supports_compression = False

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
        """Class decorator: make ``klass`` creatable as ``mx.kv.create(klass.__name__.lower())``,
        or by each of the ``type_names`` it declares itself (the built-in stores)."""
        if not isinstance(klass, type):
            raise TypeError("KVStoreBase.register takes a class, got %r" % (klass,))
        for name in vars(klass).get("type_names") or (klass.__name__.lower(),):
            old = KVStoreBase.kv_registry.get(name)
            if old is not None and old is not klass:
                warnings.warn("WARNING: New kvstore %s.%s is overriding existing kvstore %s.%s"
                              % (klass.__module__, klass.__name__, old.__module__,
                                 old.__name__))
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


def store_class(name):
    """The registered class ``create(name)`` would build, or None for an unknown name. MXNet
    takes any other 'local*' name as the local store."""
    name = name.lower()
    klass = KVStoreBase.kv_registry.get(name)
    if klass is None and name.startswith("local"):
        klass = KVStoreBase.kv_registry.get("local")
    return klass


def create(name="local"):
    """Create a KVStore of a registered type name.

    ``'local'`` (and ``'local_update_cpu'``, ``'local_allreduce_cpu'``, ``'nccl'``, any other
    ``'local*'`` name), ``'device'`` and ``'local_allreduce_device'`` are the one-machine store
    (``mxc/kvstore/kvstore.py``): each key lives on the device of its init value and pushes are
    summed there (on the GPU for arrays on one); the 'device' kinds also take 2-bit gradient
    compression. ``'dist_sync'``, ``'dist_device_sync'``, ``'dist_sync_device'``,
    ``'dist_async'`` (and its 'device' spellings) and ``'horovod'`` are the distributed stores
    over MPI (``mxc/kvstore/dist.py``; mpi4py from the 'dist' extra, imported when one is
    built). Classes registered with ``KVStoreBase.register`` are built by their name.
    """
    if not isinstance(name, string_types):
        raise TypeError("name must be a string")
    name = name.lower()
    if name == "byteps":
        raise MXNetError("KVStore type 'byteps' needs the byteps package, which mxc does not "
                         "support; use 'dist_sync' or 'horovod'")
    klass = store_class(name)
    if klass is None:
        raise MXNetError("Unknown KVStore type '%s'; valid types are %s" % (
            name, ", ".join(repr(t) for t in sorted(KVStoreBase.kv_registry))))
    return klass(name) if "type_names" in vars(klass) else klass()
