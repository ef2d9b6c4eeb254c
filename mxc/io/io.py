"""Data iterators with MXNet 1.9.1's interface: DataDesc, DataBatch, DataIter, NDArrayIter,
CSVIter, ResizeIter, PrefetchingIter and MNISTIter.

Batches hold NDArrays.  NDArrayIter follows MXNet's Python implementation (shuffling with numpy's
global generator, ``last_batch_handle`` pad / discard / roll_over).  CSVIter and MNISTIter follow
MXNet's C++ iterators: CSVIter's ``round_batch`` fills the last batch from the start of the file
and the next epoch resumes after the records used for filling; MNISTIter scales pixels by 1/256
and drops a last incomplete batch.  Where MXNet leaves stale memory in the padding of a batch
(``round_batch=False``), mxc writes zeros.
"""
import gzip
import numbers
import struct
import threading
import warnings
from collections import OrderedDict, namedtuple

import numpy as np

from ..base import MXNetError, OperatorInputError
from ..ndarray import ndarray as _nd, sparse
from ..ndarray.ndarray import NDArray

__all__ = ["DataDesc", "DataBatch", "DataIter", "ResizeIter", "PrefetchingIter", "NDArrayIter",
           "CSVIter", "MNISTIter"]

_REAL = np.float32


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input of a batch (a ``(name, shape)`` tuple).

    Parameters
    ----------
    name : str
    shape : tuple of int
    dtype : numpy dtype, default float32
    layout : str, default 'NCHW'
    """

    def __new__(cls, name, shape, dtype=_REAL, layout="NCHW"):
        ret = super().__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return "DataDesc[%s,%s,%s,%s]" % (self.name, self.shape, self.dtype, self.layout)

    def __getnewargs__(self):
        return (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """Index of 'N' in ``layout`` (0 when layout is None)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optional ``[(name, dtype)]``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """A batch: lists of data and label NDArrays, and the number of padding samples.

    Parameters
    ----------
    data : list of NDArray
    label : list of NDArray, optional
    pad : int, optional
        Number of samples at the end that only fill the batch.
    index : numpy.ndarray, optional
        Indices of the samples.
    bucket_key, provide_data, provide_label : optional
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError("Data must be list of NDArrays")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError("Label must be list of NDArrays")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [l.shape for l in self.label] if self.label else None
        return "{}: data shapes: {} label shapes: {}".format(
            self.__class__.__name__, data_shapes, label_shapes)


class DataIter:
    """Base class of data iterators: ``reset``, ``next`` and Python iteration."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Rewind to the beginning of the data."""

    def next(self):
        """The next DataBatch; StopIteration at the end of the epoch."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; False at the end."""

    def getdata(self):
        """Data of the current batch."""

    def getlabel(self):
        """Label of the current batch."""

    def getindex(self):
        """Indices of the current batch (None if unknown)."""
        return None

    def getpad(self):
        """Padding count of the current batch."""


class _CurrentBatchIter(DataIter):
    """An iterator that produces whole DataBatch objects: the getters read ``current_batch``."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_CurrentBatchIter):
    """Present ``data_iter`` as ``size`` batches per epoch (restarting it when it runs out).

    Parameters
    ----------
    data_iter : DataIter
    size : int
        Batches per epoch.
    reset_internal : bool
        Reset ``data_iter`` when this iterator is reset.
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True



class PrefetchingIter(_CurrentBatchIter):
    """Fetch the next batch of one or more iterators on background threads.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        Iterators advanced together; their batches are concatenated.
    rename_data, rename_label : list of dict, optional
        Per iterator, ``{old name: new name}`` for provide_data / provide_label.

    Notes
    -----
    The threads are daemons and are stopped and joined by :meth:`close` (also on garbage
    collection), so a consumer that stops early does not block interpreter exit.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        if not iters:
            raise ValueError("PrefetchingIter needs at least one iterator")
        self.n_iter = len(iters)
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for e in self.data_taken:
            e.set()
        self.started = True
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self.next_error = [None] * self.n_iter
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True,
                                                  name=f"mxc-PrefetchingIter-{i}")
                                 for i in range(self.n_iter)]
        for t in self.prefetch_threads:
            t.start()

    def _prefetch(self, i):
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
                self.next_error[i] = None
            except StopIteration:
                self.next_batch[i] = None
            except BaseException as exc:  # handed to the consumer, raised in iter_next
                self.next_batch[i] = None
                self.next_error[i] = exc
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def close(self):
        """Stop and join the prefetch threads."""
        if not getattr(self, "started", False):
            return
        self.started = False
        for e in self.data_taken:
            e.set()
        for t in self.prefetch_threads:
            if t is not threading.current_thread():
                t.join()

    def __del__(self):
        self.close()

    @property
    def provide_data(self):
        if self.rename_data is None:
            return sum([i.provide_data for i in self.iters], [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
                     else DataDesc(*x) for x in i.provide_data]
                    for r, i in zip(self.rename_data, self.iters)], [])

    @property
    def provide_label(self):
        if self.rename_label is None:
            return sum([i.provide_label for i in self.iters], [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
                     else DataDesc(*x) for x in i.provide_label]
                    for r, i in zip(self.rename_label, self.iters)], [])

    def reset(self):
        for e in self.data_ready:
            e.wait()
        for it in self.iters:
            it.reset()
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()

    def iter_next(self):
        for e in self.data_ready:
            e.wait()
        for err in self.next_error:
            if err is not None:
                self.next_error = [None] * self.n_iter
                for e in self.data_ready:
                    e.clear()
                for e in self.data_taken:
                    e.set()
                raise err
        if self.next_batch[0] is None:
            if any(b is not None for b in self.next_batch):
                raise MXNetError("PrefetchingIter: number of entries mismatches between iterators")
            return False
        for batch in self.next_batch:
            if batch is None or batch.pad != self.next_batch[0].pad:
                raise MXNetError("PrefetchingIter: number of entries mismatches between iterators")
        self.current_batch = DataBatch(sum([b.data for b in self.next_batch], []),
                                       sum([b.label for b in self.next_batch], []),
                                       self.next_batch[0].pad, self.next_batch[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for e in self.data_ready:
            e.clear()
        for e in self.data_taken:
            e.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration



# ---- NDArrayIter ----------------------------------------------------------------------------
def _init_data(data, allow_empty, default_name):
    """Normalise arrays / lists / dicts into ``[(name, numpy array)]`` (float32 unless NDArray)."""
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)) or np.isscalar(data):
        data = [data]
    if isinstance(data, list):
        if not allow_empty and not data:
            raise ValueError("NDArrayIter: data must not be empty")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([("_%d_%s" % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, a list of them or dict with them "
                        "as values")
    out = []
    for k, v in data.items():
        if getattr(v, "stype", None) == "csr" or _is_scipy_csr(v):
            # CSR inputs stay sparse: held as a scipy.sparse.csr_matrix, batches as CSRNDArray
            out.append((k, v.asscipy() if isinstance(v, NDArray) else v.tocsr()))
            continue
        if isinstance(v, NDArray):
            arr = v.asnumpy()
        else:
            try:
                arr = np.asarray(v, dtype=_REAL)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"NDArrayIter: invalid type {type(v)} for {k}: {exc}") from None
        if arr.ndim == 0:
            raise ValueError(f"NDArrayIter: {k} must have a batch axis, got a scalar")
        out.append((k, np.ascontiguousarray(arr)))
    return out


def _is_scipy_csr(x):
    import sys
    m = sys.modules.get("scipy.sparse")
    return m is not None and m.issparse(x) and x.format == "csr"


class NDArrayIter(DataIter):
    """Iterate over in-memory arrays (numpy arrays, NDArrays, lists or dicts of them).

    Parameters
    ----------
    data : array, list of arrays or dict of name -> array
    label : same, optional
    batch_size : int
    shuffle : bool
        Shuffle the samples at every reset (numpy's global generator, as MXNet).
    last_batch_handle : str
        'pad' (fill the last batch from the start, reporting ``pad``), 'discard' (drop it) or
        'roll_over' (carry the remainder into the next epoch's first batch).
    data_name, label_name : str
        Names used when ``data`` / ``label`` are not dicts.
    layout : str
        Position of the batch axis ('N') in the arrays' layout.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"NDArrayIter: last_batch_handle must be 'pad', 'discard' or "
                             f"'roll_over', got {last_batch_handle!r}")
        if batch_size <= 0:
            # MXNet fails slicing the first batch with MXNetError; this is that and a ValueError
            raise OperatorInputError(f"NDArrayIter: batch_size must be positive, got {batch_size}")
        self.layout = layout
        self._axis = max(layout.find("N"), 0) if layout else 0
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        if any(_is_scipy_csr(v) for _, v in self.data + self.label):
            if last_batch_handle != "discard":
                raise NotImplementedError("NDArrayIter: `last_batch_handle` must be 'discard' "
                                          "when the data or label is in CSR storage")
            if self._axis != 0:
                raise NotImplementedError("NDArrayIter: CSR data needs the batch axis first")
        n = self.data[0][1].shape[self._axis]
        for k, v in self.data + self.label:
            if v.shape[self._axis] < n:
                raise ValueError(f"NDArrayIter: {k} has {v.shape[self._axis]} samples, "
                                 f"{self.data[0][0]} has {n}")
            if v.shape[self._axis] > n:
                # MXNet iterates over the first data array's samples and ignores the rest
                warnings.warn(f"NDArrayIter: {k} has {v.shape[self._axis]} samples, "
                              f"{self.data[0][0]} has {n}: only the first {n} are used",
                              stacklevel=2)
        self.idx = np.arange(n)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = n
        self._cache_data = None
        self._cache_label = None
        self.reset()
        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)

    def _desc(self, pairs):
        return [DataDesc(k, tuple(v.shape[:self._axis]) + (self.batch_size,)
                         + tuple(v.shape[self._axis + 1:]), v.dtype.type, layout=self.layout)
                for k, v in pairs]

    @property
    def provide_data(self):
        return self._desc(self.data)

    @property
    def provide_label(self):
        return self._desc(self.label)

    def hard_reset(self):
        """Rewind and drop any rolled-over samples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # the unfinished batch of the last epoch is completed from the new epoch
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self._axis] != self.batch_size:
            # roll_over: keep the remainder for the next epoch
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=[self._out(d) for d in data], label=[self._out(l) for l in label],
                         pad=self.getpad(), index=None)

    @staticmethod
    def _out(a):
        if _is_scipy_csr(a):
            return sparse.csr_matrix(a, dtype=a.dtype)
        return _nd.array(a, dtype=a.dtype)

    def _take(self, arr, start, end):
        if _is_scipy_csr(arr):
            return arr[start:end]
        sl = [slice(None)] * arr.ndim
        sl[self._axis] = slice(start, end)
        return arr[tuple(sl)]

    def _getdata(self, data_source, start=None, end=None):
        start = 0 if start is None else start
        if end is None:
            end = data_source[0][1].shape[self._axis] if data_source else 0
        return [self._take(x[1], start, end) for x in data_source]

    def _concat(self, first, second):
        if not first or not second:
            return first if first else second
        return [np.concatenate([a, b], axis=self._axis) for a, b in zip(first, second)]

    def _batchify(self, data_source):
        if not self.cursor < self.num_data:
            raise MXNetError("NDArrayIter needs reset.")
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            cache = self._cache_data if self._cache_data is not None else self._cache_label
            if cache is None:
                raise MXNetError("NDArrayIter: next epoch should have cached data")
            second = self._getdata(data_source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache, second)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first = self._getdata(data_source, start=self.cursor)
            if pad > self.num_data:
                # tiny data sets: repeat the whole set as often as needed
                reps = [self._getdata(data_source, end=self.num_data)] * (pad // self.num_data)
                second = []
                for r in reps:
                    second = self._concat(second, r)
                if pad % self.num_data:
                    second = self._concat(second,
                                          self._getdata(data_source, end=pad % self.num_data))
            else:
                second = self._getdata(data_source, end=pad)
            return self._concat(first, second)
        end = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(data_source, self.cursor, end)

    def getdata(self):
        return self._batchify(self.data)

    def getlabel(self):
        return self._batchify(self.label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        self.data = [(k, self._rows(v)) for k, v in self.data]
        self.label = [(k, self._rows(v)) for k, v in self.label]

    def _rows(self, v):
        return v[self.idx] if _is_scipy_csr(v) else np.take(v, self.idx, axis=self._axis)


# ---- C++-style iterators over a sample table (CSVIter, MNISTIter) --------------------------
class _TableIter(DataIter):
    """Batches over in-memory sample tables with MXNet's C++ ``round_batch`` semantics."""

    def __init__(self, data, label, batch_size, round_batch, data_name, label_name, dtype):
        super().__init__(batch_size)
        self._data = data
        self._label = label
        self._n = data.shape[0]
        if batch_size <= 0:
            raise ValueError(f"{type(self).__name__}: batch_size must be positive")
        self.round_batch = bool(round_batch)
        self._order = np.arange(self._n)
        self._pos = 0
        self._overflow = False
        self._ended = False
        self.provide_data = [DataDesc(data_name, (batch_size,) + data.shape[1:], dtype)]
        self.provide_label = [DataDesc(label_name, (batch_size,) + label.shape[1:], _REAL)]
        self._batch = None

    def reset(self):
        if self._overflow:
            # the last batch wrapped round: the new epoch resumes after the samples it used
            self._overflow = False
        else:
            self._pos = 0
        self._ended = False

    def iter_next(self):
        bs = self.batch_size
        if self._ended or self._pos >= self._n:
            return False
        take = self._order[self._pos:self._pos + bs]
        self._pos += len(take)
        pad = bs - len(take)
        if pad and self.round_batch:
            if self._n < pad:
                raise MXNetError(f"{type(self).__name__}: number of input samples must be bigger "
                                 f"than the batch size")
            take = np.concatenate([take, self._order[:pad]])
            self._pos = pad
            self._overflow = True
            self._ended = True
        elif pad:
            take = np.concatenate([take, np.full(pad, -1)])
        self._batch = (take, pad)
        return True

    def _gather(self, table, take, dtype):
        out = np.zeros((len(take),) + table.shape[1:], dtype)
        valid = take >= 0
        out[valid] = table[take[valid]]
        return _nd.from_numpy(out)

    # MXNet's C++ iterators (CSVIter, LibSVMIter, MNISTIter) return one array from
    # getdata/getlabel, and lists of one in their batches
    def getdata(self):
        return self._gather(self._data, self._batch[0], self.provide_data[0].dtype)

    def getlabel(self):
        return self._gather(self._label, self._batch[0], _REAL)

    def next(self):
        if self.iter_next():
            return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def getpad(self):
        return self._batch[1]

    def getindex(self):
        take = self._batch[0]
        return np.where(take >= 0, take, 0).astype(np.uint64)


def _shape_tuple(shape, who, name):
    if isinstance(shape, numbers.Integral):
        shape = (int(shape),)
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: {name} must be a tuple of ints, got {shape!r}") from None
    if not shape or any(d <= 0 for d in shape):
        raise ValueError(f"{who}: {name} must be a non-empty tuple of positive ints, got {shape}")
    return shape


def _read_csv(path, shape, dtype, who, name):
    try:
        table = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    except OSError as exc:
        raise MXNetError(f"{who}: cannot open {name} {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise MXNetError(f"{who}: {name} {path} is not a numeric CSV file: {exc}") from None
    size = int(np.prod(shape))
    if table.shape[1] != size:
        raise MXNetError(f"{who}: {path} has {table.shape[1]} columns per row, but {name[:-4]}"
                         f"_shape {shape} needs {size}")
    return table.astype(dtype).reshape((table.shape[0],) + shape)


class CSVIter(_TableIter):
    """Iterate over a CSV file of samples (and optionally one of labels), as MXNet's CSVIter.

    Parameters
    ----------
    data_csv : str
        CSV file; every row is one sample of ``data_shape``.
    data_shape : tuple
    label_csv : str, optional
        CSV file of labels (one row per sample); zeros when absent.
    label_shape : tuple, default (1,)
    batch_size : int
    round_batch : bool, default True
        Fill the last batch from the start of the file (the next epoch then resumes after the
        samples used); else pad with zeros.  ``pad`` counts the filler samples either way.
    dtype : str, default 'float32'
        Data type of the data ('float32', 'int32' or 'int64').
    data_name, label_name : str
    prefetch_buffer : int
        Accepted for compatibility (the whole file is parsed up front).
    """

    def __init__(self, data_csv, data_shape, batch_size, label_csv=None, label_shape=(1,),
                 round_batch=True, dtype="float32", data_name="data", label_name="softmax_label",
                 prefetch_buffer=4, **kwargs):
        if kwargs:
            raise ValueError(f"CSVIter: unknown parameters {sorted(kwargs)}")
        if dtype not in ("float32", "int32", "int64"):
            raise ValueError(f"CSVIter: dtype must be float32, int32 or int64, got {dtype!r}")
        data_shape = _shape_tuple(data_shape, "CSVIter", "data_shape")
        label_shape = _shape_tuple(label_shape, "CSVIter", "label_shape")
        data = _read_csv(data_csv, data_shape, np.dtype(dtype), "CSVIter", "data_csv")
        if label_csv is not None:
            label = _read_csv(label_csv, label_shape, _REAL, "CSVIter", "label_csv")
            if label.shape[0] != data.shape[0]:
                raise MXNetError(f"CSVIter: {label_csv} has {label.shape[0]} rows, {data_csv} "
                                 f"has {data.shape[0]}")
        else:
            label = np.zeros((data.shape[0],) + label_shape, _REAL)
        if label_shape == (1,):
            label = label.reshape(-1)  # MXNet reports (batch_size,) labels for label_shape (1,)
        super().__init__(data, label, int(batch_size), round_batch, data_name, label_name,
                         np.dtype(dtype).type)


def _open_maybe_gz(path):
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")


def _read_idx(path, who, name, magic_expected):
    try:
        with _open_maybe_gz(path) as f:
            raw = f.read()
    except OSError as exc:
        raise MXNetError(f"{who}: cannot open {name} file {path}: {exc.strerror or exc}") from None
    if len(raw) < 8:
        raise MXNetError(f"{who}: {path} is too short for an IDX header")
    magic, = struct.unpack(">I", raw[:4])
    if magic != magic_expected:
        raise MXNetError(f"{who}: {path} has IDX magic {magic:#x}, expected "
                         f"{magic_expected:#x} for {name} data")
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    body = raw[4 + 4 * ndim:]
    count = int(np.prod(dims))
    if len(body) < count:
        raise MXNetError(f"{who}: {path} is truncated: {len(body)} bytes of data for dims {dims}")
    return np.frombuffer(body, np.uint8, count).reshape(dims)


class MNISTIter(_TableIter):
    """Iterate over MNIST IDX files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``).

    Parameters
    ----------
    image, label : str
        IDX image file (magic 2051) and label file (magic 2049); ``.gz`` files are read too.
    batch_size : int, default 128
    shuffle : bool, default True
        Shuffle the sample order at every epoch (reproducible for a given ``seed``).
    flat : bool, default False
        Samples as (784,) instead of (1, 28, 28).
    seed : int, default 0
    silent : bool
        Accepted for compatibility.
    num_parts, part_index : int
        Take the ``part_index``-th of ``num_parts`` contiguous shards of the samples.
    prefetch_buffer, ctx, dtype : accepted for compatibility (data is float32 on cpu).

    Notes
    -----
    Pixels are scaled by 1/256 (as MXNet's MNISTIter); a last incomplete batch is dropped.
    """

    def __init__(self, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx="gpu", dtype=None, data_name="data",
                 label_name="softmax_label", **kwargs):
        if kwargs:
            raise ValueError(f"MNISTIter: unknown parameters {sorted(kwargs)}")
        if not 0 <= part_index < num_parts:
            raise ValueError(f"MNISTIter: part_index {part_index} not in [0, num_parts="
                             f"{num_parts})")
        imgs = _read_idx(image, "MNISTIter", "image", 0x803)
        labs = _read_idx(label, "MNISTIter", "label", 0x801)
        if imgs.shape[0] != labs.shape[0]:
            raise MXNetError(f"MNISTIter: {image} has {imgs.shape[0]} images but {label} has "
                             f"{labs.shape[0]} labels")
        n = imgs.shape[0]
        lo, hi = part_index * n // num_parts, (part_index + 1) * n // num_parts
        imgs, labs = imgs[lo:hi], labs[lo:hi]
        data = imgs.astype(_REAL) * _REAL(1.0 / 256.0)
        if flat:
            data = data.reshape(len(data), -1)
        else:
            data = data.reshape((len(data), 1) + imgs.shape[1:])
        super().__init__(np.ascontiguousarray(data), labs.astype(_REAL), int(batch_size), False,
                         data_name, label_name, _REAL)
        self.shuffle = shuffle
        self._rng = np.random.RandomState(seed)
        self._epoch_start()

    def _epoch_start(self):
        if self.shuffle:
            self._order = self._rng.permutation(self._n)
        self._pos = 0

    def reset(self):
        self._epoch_start()

    def iter_next(self):
        # MXNet's MNISTIter drops the last incomplete batch
        if self._pos + self.batch_size > self._n:
            return False
        return super().iter_next()
