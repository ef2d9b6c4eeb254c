"""The parameter-server side of MXNet's distributed KVStore.

mxc's distributed KVStore (``mxc/kvstore/dist.py``) runs over MPI without server or scheduler
processes: every rank is a worker, and rank 0's communication thread serves ``dist_async``.
A process started as a server or scheduler (``DMLC_ROLE=server|scheduler``, as MXNet's
launcher started them) gets a clear error instead of waiting for workers forever.
"""
from ..base import MXNetError, env_str

__all__ = ["KVStoreServer"]

_NO_SERVERS = ("mxc's distributed KVStore has no server or scheduler processes: every MPI "
               "rank is a worker (rank 0 also serves dist_async); start only the workers, "
               "e.g. mxc-launch -n N python train.py")


class KVStoreServer(object):
    """The server of a distributed KVStore; mxc has none (see the module docstring)."""

    def __init__(self, kvstore=None):
        raise MXNetError("KVStoreServer: " + _NO_SERVERS)


def _init_kvstore_server_module():
    role = env_str("DMLC_ROLE", "")
    if role in ("server", "scheduler"):
        raise MXNetError("DMLC_ROLE=%s: this process was started as a distributed KVStore "
                         "%s; %s" % (role, role, _NO_SERVERS))


_init_kvstore_server_module()
