"""Datasets (MXNet 1.9.1's gluon.data.dataset): Dataset with its lazy views (transform,
transform_first, filter, shard, take, sample), SimpleDataset, ArrayDataset, RecordFileDataset."""
import os

from ... import recordio
from ...ndarray import NDArray
from .sampler import FilterSampler, SequentialSampler, Sampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """A sized, indexable collection of samples. Subclasses define ``__getitem__`` and
    ``__len__``; NDArrays, numpy arrays and lists can stand in for a Dataset."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """A view of the samples for which ``fn(sample)`` is true (decided now, once)."""
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """The `index`-th of `num_shards` contiguous parts; sizes differ by at most one."""
        if num_shards <= 0:
            raise ValueError(f"Number of shards must be greater than 0, got {num_shards}")
        if not 0 <= index < num_shards:
            raise ValueError(f"Shard index out of bound: {index} out of {num_shards}")
        n = len(self)
        base, rest = divmod(n, num_shards)
        start = base * index + min(index, rest)
        size = base + (1 if index < rest else 0)
        return _SampledDataset(self, SequentialSampler(size, start))

    def take(self, count):
        """The first `count` samples (all of them when `count` is None or too large)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices `sampler` gives."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"Invalid sampler type: {type(sampler)}. "
                            "Expected gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample passed through ``fn`` (a tuple sample is unpacked into its arguments).
        lazy=False applies it to every sample now (a random `fn` is then frozen)."""
        view = _LazyTransformDataset(self, fn)
        if lazy:
            return view
        return SimpleDataset([view[i] for i in range(len(view))])

    def transform_first(self, fn, lazy=True):
        """Like :meth:`transform`, applied to the first element of each sample only."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """Any object with ``len()`` and ``[]`` as a Dataset."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A picklable closure (worker processes may need to pickle it)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Several dataset-like objects of one length side by side: sample i is
    ``(a[i], b[i], ...)`` (or ``a[i]`` for one). 1-D NDArrays are kept as numpy, so a sample
    of them is a scalar, as MXNet."""

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError(f"All arrays must have the same length; array[0] has length "
                                 f"{self._length} while array[{i}] has {len(data)}.")
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (its ``.idx`` next to it) as raw bytes samples."""

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        for f in (filename, self.idx_file):
            if not os.path.isfile(f):
                raise FileNotFoundError(f"RecordFileDataset: {f} does not exist")
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)


class _DownloadedDataset(Dataset):
    """Base of MNIST, CIFAR10, ...: `_get_data` fills ``_data`` and ``_label`` from `root`."""

    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._data = None
        self._label = None
        root = os.path.expanduser(root)
        self._root = root
        if not os.path.isdir(root):
            os.makedirs(root)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError
