"""Key-value stores for synchronizing parameters across devices (``mx.kv``, ``mx.kvstore``)."""
from .base import KVStoreBase, create  # noqa: F401  (TestStore registers itself in base)
# the built-in stores register their type names on import (mpi4py waits for the first
# distributed store)
from .kvstore import KVStore  # noqa: F401
from . import dist  # noqa: F401
from .kvstore_server import KVStoreServer  # noqa: F401

__all__ = ["create", "KVStoreBase", "KVStore", "KVStoreServer"]
