"""DataLoader (MXNet 1.9.1's gluon.data.dataloader): batches from a Dataset, in this process,
in worker threads (thread_pool=True) or in worker processes (num_workers > 0).

Worker processes are forked (Linux); a forked mxc runs every kernel on one thread (OpenMP's and
OpenBLAS's pools do not survive fork, and a child that entered them would hang: MXNet #15690;
see mxc/_core/opcall.pyx), and they send batches back as numpy buffers; the parent builds the
NDArrays. A batch that does not arrive within `timeout` seconds raises a clear error,
and so does a worker process that dies; an exception in a worker is raised in the parent with
the worker's traceback attached."""
import multiprocessing
import multiprocessing.pool
import os
import signal
import sys
import time
from multiprocessing.pool import ThreadPool
# MXNet's module exposes the pickler its workers use; client loaders (GluonNLP) import it from
# here and pickle batches of NDArrays with it (NDArray pickles by value)
from multiprocessing.reduction import ForkingPickler  # noqa: F401

import numpy as np

from ...base import MXNetError
from ... import context, util
from ... import ndarray as nd
from ...ndarray import NDArray
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn", "DataLoaderTimeoutError"]


class DataLoaderTimeoutError(MXNetError, multiprocessing.TimeoutError):
    """A DataLoader worker did not deliver a batch within the loader's `timeout`."""


def default_batchify_fn(data):
    """Stack samples into a batch: NDArrays with ``nd.stack``, tuples element-wise (a list of
    batches), anything else through ``numpy.asarray`` into an NDArray of its dtype."""
    first = data[0]
    if isinstance(first, NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(part)) for part in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


def default_mp_batchify_fn(data):
    """The batchify function of worker processes; the same batches as `default_batchify_fn`
    (mxc's workers hand numpy buffers to the parent, so no shared-memory context is needed)."""
    return default_batchify_fn(data)


# ---- worker processes ------------------------------------------------------------------------
class _Wire:
    """An array crossing the process boundary as numpy; the parent makes it an NDArray."""
    __slots__ = ("arr",)

    def __init__(self, arr):
        self.arr = arr

    def __reduce__(self):
        return _Wire, (self.arr,)


def _np_batchify(data):
    """default_batchify_fn for a worker process: stacks in numpy, no engine work."""
    first = data[0]
    if isinstance(first, NDArray):
        return _Wire(np.stack([x.asnumpy() for x in data]))
    if isinstance(first, tuple):
        return [_np_batchify(list(part)) for part in zip(*data)]
    if isinstance(first, np.ndarray):
        return _Wire(np.stack(data))
    return _Wire(np.asarray(data))


def _to_wire(obj):
    if isinstance(obj, NDArray):
        return _Wire(obj.asnumpy())
    if isinstance(obj, list):
        return [_to_wire(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_to_wire(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_wire(v) for k, v in obj.items()}
    return obj


def _from_wire(obj):
    if isinstance(obj, _Wire):
        arr = obj.arr
        return nd.array(arr, dtype=arr.dtype)
    if isinstance(obj, list):
        return [_from_wire(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_from_wire(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _from_wire(v) for k, v in obj.items()}
    return obj


class _WorkerError:
    """An exception raised in a worker, with its traceback as text."""
    __slots__ = ("exc", "tb")

    def __init__(self, exc, tb):
        self.exc, self.tb = exc, tb


class _RemoteTraceback(Exception):
    def __str__(self):
        return self.args[0]


def _worker_loop(conn, dataset, batchify_fn, np_shape):
    """A worker process: (task id, sample indices) in, (task id, batch or error) out."""
    import traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    util.set_np_shape(np_shape)
    use_np = batchify_fn is default_batchify_fn or batchify_fn is default_mp_batchify_fn
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        tid, samples = task
        try:
            items = [dataset[i] for i in samples]
            out = _np_batchify(items) if use_np else _to_wire(batchify_fn(items))
        except BaseException as e:          # noqa: BLE001  (sent to the parent)
            out = _WorkerError(e, traceback.format_exc())
        try:
            conn.send((tid, out))
        except Exception as e:              # noqa: BLE001  (unpicklable result or error)
            msg = f"{type(e).__name__}: {e}"
            if isinstance(out, _WorkerError):
                msg = f"{type(out.exc).__name__}: {out.exc} (not picklable: {msg})"
                conn.send((tid, _WorkerError(RuntimeError(msg), out.tb)))
            else:
                conn.send((tid, _WorkerError(RuntimeError(
                    f"the batch could not be sent to the parent process: {msg}"), "")))


class _ProcessPool:
    """Worker processes, each with its own pipe: no lock is shared between processes, so a
    worker that dies or is killed can never block the others or the parent (multiprocessing.Pool
    can hang in terminate() while a worker holds its result queue's lock)."""

    def __init__(self, num_workers, dataset, batchify_fn):
        forked = "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"
        ctx = multiprocessing.get_context("fork" if forked else "spawn")
        nd.waitall()
        self._workers = []
        for i in range(num_workers):
            parent, child = ctx.Pipe(duplex=True)
            p = ctx.Process(target=_worker_loop, name=f"DataLoaderWorker-{i}",
                            args=(child, dataset, batchify_fn, util.is_np_shape()),
                            daemon=True)
            p.start()
            child.close()
            self._workers.append((p, parent))
        self._next_task = 0
        self._owner = {}        # task id -> worker index
        self._done = {}         # task id -> result
        self._rr = 0
        self._abandoned = set()  # task ids whose iterator is gone: dropped when they arrive
        self.closed = False

    def submit(self, samples):
        tid = self._next_task
        self._next_task += 1
        w = self._rr % len(self._workers)
        self._rr += 1
        self._workers[w][1].send((tid, list(samples)))
        self._owner[tid] = w
        return tid

    def _drain(self, timeout):
        from multiprocessing.connection import wait
        conns = [c for _, c in self._workers]
        for c in wait(conns, timeout):
            try:
                tid, out = c.recv()
            except (EOFError, OSError):
                continue
            if tid in self._abandoned:
                self._abandoned.discard(tid)
                self._owner.pop(tid, None)
            else:
                self._done[tid] = out

    def abandon(self, tids):
        """Forget tasks nobody will ask for (an iterator dropped before its end)."""
        for tid in tids:
            if self._done.pop(tid, None) is None and tid in self._owner:
                self._abandoned.add(tid)
            else:
                self._owner.pop(tid, None)

    def result(self, tid, timeout, what):
        """The result of task `tid`; raises on a worker error, death or timeout."""
        deadline = time.monotonic() + timeout
        while tid not in self._done:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise DataLoaderTimeoutError(
                    f"DataLoader worker process did not deliver {what} within timeout={timeout} s."
                    " The dataset or its transform may be too slow (raise `timeout`) or stuck.")
            self._drain(min(left, 0.2))
            if tid in self._done:
                break
            p = self._workers[self._owner[tid]][0]
            if p.exitcode is not None:
                self._drain(0)          # it may have answered just before it ended
                if tid in self._done:
                    break
                code = p.exitcode
                how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
                self.close()
                raise MXNetError(f"DataLoader worker process {p.name} (pid {p.pid}) {how} while "
                                 f"loading {what}. Running out of memory or a crash in the "
                                 "dataset's code are the usual causes.")
        self._owner.pop(tid, None)
        out = self._done.pop(tid)
        if isinstance(out, _WorkerError):
            exc = out.exc
            if out.tb:
                exc.__cause__ = _RemoteTraceback(f"\n\"\"\"\n{out.tb}\"\"\"")
            if hasattr(exc, "add_note"):
                exc.add_note(f"(raised in a DataLoader worker process while loading {what})")
            raise exc
        return out

    def close(self):
        if self.closed:
            return
        self.closed = True
        for p, c in self._workers:
            try:
                if p.exitcode is None:
                    p.kill()
            except Exception:          # noqa: BLE001  (interpreter shutdown)
                pass
        for p, c in self._workers:
            try:
                p.join(1.0)
                c.close()
            except Exception:          # noqa: BLE001
                pass
        self._workers = []


def _thread_worker_fn(samples, batchify_fn, dataset):
    return batchify_fn([dataset[i] for i in samples])


def _as_in_context(data, ctx):
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class _MultiWorkerIter:
    """One pass over the batches, `prefetch` batches ahead, results in order."""

    def __init__(self, pool, batchify_fn, batch_sampler, pin_memory, pin_device_id, prefetch,
                 dataset, timeout):
        self._pool = pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._pending = {}          # batch number -> task id or AsyncResult
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(batch_sampler)
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset     # set: a thread pool
        self._timeout = timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def _push_next(self):
        r = next(self._iter, None)
        if r is None:
            return
        if self._dataset is None:
            task = self._pool.submit(r)
        else:
            task = self._pool.apply_async(_thread_worker_fn, (r, self._batchify_fn, self._dataset))
        self._pending[self._sent_idx] = task
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            raise StopIteration
        k = self._rcvd_idx
        task = self._pending.pop(k)
        if self._dataset is None:
            batch = _from_wire(self._pool.result(task, self._timeout, f"batch {k}"))
        else:
            try:
                batch = task.get(self._timeout)
            except multiprocessing.TimeoutError:
                raise DataLoaderTimeoutError(
                    f"DataLoader worker thread did not deliver batch {k} within "
                    f"timeout={self._timeout} s. The dataset or its transform may be too slow "
                    "(raise `timeout`) or stuck.") from None
        if self._pin_memory:
            batch = _as_in_context(batch, context.cpu_pinned(self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    next = __next__

    def __iter__(self):
        return self

    def __del__(self):
        pending = getattr(self, "_pending", None)
        if pending and self._dataset is None and not self._pool.closed:
            try:
                self._pool.abandon(list(pending.values()))
            except Exception:      # noqa: BLE001  (interpreter shutdown)
                pass


class DataLoader:
    """Loads a Dataset in mini-batches.

    Parameters as MXNet 1.9.1: dataset, batch_size, shuffle, sampler, last_batch ('keep',
    'discard', 'rollover'), batch_sampler (excludes the four before), batchify_fn, num_workers
    (worker processes; 0 loads in this process), pin_memory, pin_device_id, prefetch (batches in
    flight, default 2 * num_workers), thread_pool (threads instead of processes), timeout
    (seconds to wait for one batch), auto_reload (start prefetching the next pass at once)."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, given {timeout}")
        self._timeout = timeout

        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                if shuffle:
                    sampler = _sampler.RandomSampler(len(dataset))
                else:
                    sampler = _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size,
                                                  last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must "
                             "not be specified if batch_sampler is specified.")

        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._worker_pool = None
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn
        if self._num_workers > 0:
            self._make_pool()
        self.auto_reload = auto_reload
        self._iter = None
        if self.auto_reload:
            self.refresh()

    # -- worker pool
    def _make_pool(self):
        if self._thread_pool:
            self._worker_pool = ThreadPool(self._num_workers)
        else:
            self._worker_pool = _ProcessPool(self._num_workers, self._dataset, self._batchify_fn)

    def _pool(self):
        pool = self._worker_pool
        if pool is None or getattr(pool, "closed", False):
            self._make_pool()
        return self._worker_pool

    # -- iteration
    def __iter__(self):
        if self._iter is None:
            self.refresh()
        t = self._iter
        self._iter = None          # an iterator is used once
        yield from t
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self):
        if self._num_workers == 0:
            def same_process_iter():
                for batch in self._batch_sampler:
                    ret = self._batchify_fn([self._dataset[idx] for idx in batch])
                    if self._pin_memory:
                        ret = _as_in_context(ret, context.cpu_pinned(self._pin_device_id))
                    yield ret
            return same_process_iter()
        return _MultiWorkerIter(self._pool(), self._batchify_fn, self._batch_sampler,
                                self._pin_memory, self._pin_device_id, self._prefetch,
                                self._dataset if self._thread_pool else None, self._timeout)

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        pool = getattr(self, "_worker_pool", None)
        if pool is not None:
            try:
                pool.close() if isinstance(pool, _ProcessPool) else pool.terminate()
            except Exception:      # noqa: BLE001  (interpreter shutdown)
                pass

    def refresh(self):
        """Start a new pass now (prefetching begins)."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop the prefetched pass; the next ``iter()`` starts a new one."""
        self._iter = None


del os
