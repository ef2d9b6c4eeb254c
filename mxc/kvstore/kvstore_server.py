"""The parameter-server side of MXNet's distributed KVStore.

mxc's single-machine build has no server role: a process started as a server or scheduler
(``DMLC_ROLE=server|scheduler``) gets a clear error instead of waiting for workers forever.
"""
from ..base import MXNetError, env_str

__all__ = ["KVStoreServer"]


class KVStoreServer(object):
    """The server of a distributed KVStore (not available in this build)."""

    def __init__(self, kvstore=None):
        raise MXNetError("KVStoreServer belongs to the distributed KVStore, which needs mxc's "
                         "'dist' extra (MPI); it is not available in this installation")


def _init_kvstore_server_module():
    role = env_str("DMLC_ROLE", "")
    if role in ("server", "scheduler"):
        raise MXNetError("DMLC_ROLE=%s: this process was started as a distributed KVStore "
                         "%s, which needs mxc's 'dist' extra (MPI)" % (role, role))


_init_kvstore_server_module()
