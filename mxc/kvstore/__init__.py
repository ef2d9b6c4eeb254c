"""Key-value stores for synchronizing parameters across devices (``mx.kv``, ``mx.kvstore``)."""
from .base import KVStoreBase, create  # noqa: F401  (TestStore registers itself in base)
from .kvstore import KVStore  # noqa: F401
from .kvstore_server import KVStoreServer  # noqa: F401

__all__ = ["create", "KVStoreBase", "KVStore", "KVStoreServer"]
