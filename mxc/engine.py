"""``mx.engine``: the dependency engine's Python surface (mxc/_core/engine.pyx) and MXNet's
bulk-execution switches.

Bulk size: MXNet groups up to `size` consecutive imperative operators into one engine operation.
mxc's imperative operators already cost a few microseconds each, so the imperative path does
not bundle; the size is kept (and returned as MXNet does) for the executor, which runs a bound
graph as few engine operations as its dependencies allow."""
from ._core.engine import (push, wait_for_var, wait_for_all, engine_type, num_workers,  # noqa: F401
                           pending, max_pending)

__all__ = ["set_bulk_size", "bulk", "push", "wait_for_var", "wait_for_all", "engine_type",
           "num_workers", "pending", "max_pending"]

_BULK_SIZE = [15]      # MXNet's default (MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD)


def set_bulk_size(size):
    """Set the bulk size; returns the previous one."""
    if int(size) < 0:
        raise ValueError(f"set_bulk_size: size must be non-negative, got {size}")
    prev, _BULK_SIZE[0] = _BULK_SIZE[0], int(size)
    return prev


def get_bulk_size():
    return _BULK_SIZE[0]


class _BulkScope:
    def __init__(self, size):
        self._size, self._old = size, None

    def __enter__(self):
        self._old = set_bulk_size(self._size)
        return self

    def __exit__(self, *exc):
        set_bulk_size(self._old)


def bulk(size):
    """A with-scope setting the bulk size (``with mx.engine.bulk(10): ...``)."""
    return _BulkScope(size)
