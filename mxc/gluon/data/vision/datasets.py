"""Image datasets (MXNet 1.9.1's gluon.data.vision.datasets): MNIST, FashionMNIST, CIFAR10,
CIFAR100 read from the standard files under `root`, which are downloaded as MXNet does when
missing (from ``gluon/dataset/<namespace>/`` of the repository MXNET_GLUON_REPO names, their
SHA-1 checked; when that fails FileNotFoundError names the files, the root and where to get
them), ImageRecordDataset, ImageFolderDataset and ImageListDataset."""
import gzip
import os
import struct
import warnings

import numpy as np

from .. import dataset
from ...utils import download, _get_repo_file_url
from .... import base, image, ndarray as nd, recordio

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset", "ImageListDataset"]


def _fetch(ds, names, wanted=None):
    """Download `names` (files of MXNet's repository for the data set, with their SHA-1) into
    the data set's root, for the files `wanted` (default: the same); FileNotFoundError naming
    them and where to get them if that fails."""
    try:
        for n in names:
            download(_get_repo_file_url("gluon/dataset/" + ds._namespace, n), path=ds._root,
                     sha1_hash=ds._sha1[n])
    except Exception as e:      # noqa: BLE001  a download failure of any kind
        what = ", ".join(wanted or names)
        via = "" if wanted is None else f" {', '.join(names)} holding them"
        raise FileNotFoundError(
            f"{type(ds).__name__}: {what} not found in {ds._root}, and{via} could not be "
            f"downloaded ({e}); put the standard files ({ds._source}) in that folder, or pass "
            f"root= where they are.") from None


class MNIST(dataset._DownloadedDataset):
    """MNIST handwritten digits from the four idx files (gz or not) in `root`: samples are
    ``(uint8 NDArray (28, 28, 1), int32 label)``."""

    _source = "http://yann.lecun.com/exdb/mnist/"
    _namespace = "mnist"
    _sha1 = {"train-images-idx3-ubyte.gz": "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d",
             "train-labels-idx1-ubyte.gz": "2a80914081dc54586dbdf242f9805a6b8d2a15fc",
             "t10k-images-idx3-ubyte.gz": "c3a25af1f52dad7f726cce8cacb138654b760d48",
             "t10k-labels-idx1-ubyte.gz": "763e7fa3757d93b0cdec073cef058b2004252c17"}

    def __init__(self, root=os.path.join(base.data_dir(), "datasets", "mnist"),
                 train=True, transform=None):
        self._train = train
        self._train_data = "train-images-idx3-ubyte.gz"
        self._train_label = "train-labels-idx1-ubyte.gz"
        self._test_data = "t10k-images-idx3-ubyte.gz"
        self._test_label = "t10k-labels-idx1-ubyte.gz"
        super().__init__(root, transform)

    def _find(self, name):
        for cand in (name, name[:-3] if name.endswith(".gz") else name + ".gz"):
            if os.path.isfile(os.path.join(self._root, cand)):
                return os.path.join(self._root, cand)
        return None

    @staticmethod
    def _open(path):
        return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")

    def _get_data(self):
        names = (self._train_data, self._train_label) if self._train else \
            (self._test_data, self._test_label)
        paths = [self._find(n) for n in names]
        if None in paths:
            _fetch(self, [n for n, p in zip(names, paths) if p is None])
            paths = [self._find(n) for n in names]
        data_file, label_file = paths
        with self._open(label_file) as fin:
            magic, n = struct.unpack(">II", fin.read(8))
            if magic != 2049:
                raise ValueError(f"{label_file}: not an idx1 label file (magic {magic})")
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        with self._open(data_file) as fin:
            magic, n, rows, cols = struct.unpack(">IIII", fin.read(16))
            if magic != 2051:
                raise ValueError(f"{data_file}: not an idx3 image file (magic {magic})")
            data = np.frombuffer(fin.read(), dtype=np.uint8)
        if n != len(label) or data.size != n * rows * cols:
            raise ValueError(f"{type(self).__name__}: {data_file} holds {n} images of "
                             f"{rows}x{cols} but {label_file} has {len(label)} labels")
        data = data.reshape(n, rows, cols, 1)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Fashion-MNIST (same files and layout as MNIST)."""

    _source = "https://github.com/zalandoresearch/fashion-mnist"
    _namespace = "fashion-mnist"
    _sha1 = {"train-images-idx3-ubyte.gz": "0cf37b0d40ed5169c6b3aba31069a9770ac9043d",
             "train-labels-idx1-ubyte.gz": "236021d52f1e40852b06a4c3008d8de8aef1e40b",
             "t10k-images-idx3-ubyte.gz": "626ed6a7c06dd17c0eec72fa3be1740f146a2863",
             "t10k-labels-idx1-ubyte.gz": "17f9ab60e7257a1620f4ad76bbbaf857c3920701"}

    def __init__(self, root=os.path.join(base.data_dir(), "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)


class CIFAR10(dataset._DownloadedDataset):
    """CIFAR-10 from the binary batches (data_batch_1..5.bin, test_batch.bin) in `root` (or the
    cifar-10-binary.tar.gz archive there, which is extracted): ``(uint8 (32, 32, 3), int32)``."""

    _archive = "cifar-10-binary.tar.gz"
    _source = "https://www.cs.toronto.edu/~kriz/cifar.html, binary version"
    _namespace = "cifar10"
    _sha1 = {"cifar-10-binary.tar.gz": "fab780a1e191a7eda0f345501ccd62d20f7ed891"}

    def __init__(self, root=os.path.join(base.data_dir(), "datasets", "cifar10"),
                 train=True, transform=None):
        self._train = train
        self._train_data = [f"data_batch_{i}.bin" for i in range(1, 6)]
        self._test_data = ["test_batch.bin"]
        super().__init__(root, transform)

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            raw = np.frombuffer(fin.read(), dtype=np.uint8)
        if raw.size % 3073:
            raise ValueError(f"{filename}: size {raw.size} is not a multiple of 3073 bytes")
        raw = raw.reshape(-1, 3073)
        return raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), raw[:, 0].astype(np.int32)

    def _locate(self, names):
        """Paths of `names` under root (or root/<archive folder>), extracting the archive
        when it is there and they are not."""
        import tarfile
        subdirs = ("", "cifar-10-batches-bin", "cifar-100-binary")
        def find(n):
            for d in subdirs:
                p = os.path.join(self._root, d, n)
                if os.path.isfile(p):
                    return p
            return None
        paths = [find(n) for n in names]
        archive = os.path.join(self._root, self._archive)
        if None in paths and not os.path.isfile(archive):
            _fetch(self, [self._archive], [n for n, p in zip(names, paths) if p is None])
        if None in paths:
            with tarfile.open(archive) as tar:
                tar.extractall(self._root, filter="data") if hasattr(tarfile, "data_filter") \
                    else tar.extractall(self._root)
            paths = [find(n) for n in names]
        if None in paths:
            raise FileNotFoundError(
                f"{type(self).__name__}: {archive} does not hold "
                f"{', '.join(n for n, p in zip(names, paths) if p is None)}")
        return paths

    def _get_data(self):
        names = self._train_data if self._train else self._test_data
        data, label = zip(*(self._read_batch(p) for p in self._locate(names)))
        data = np.concatenate(data)
        label = np.concatenate(label)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class CIFAR100(CIFAR10):
    """CIFAR-100 from train.bin / test.bin in `root`; `fine_label` picks the 100-class label."""

    _archive = "cifar-100-binary.tar.gz"
    _namespace = "cifar100"
    _sha1 = {"cifar-100-binary.tar.gz": "a0bb982c76b83111308126cc779a992fa506b90b"}

    def __init__(self, root=os.path.join(base.data_dir(), "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._train = train
        self._train_data = ["train.bin"]
        self._test_data = ["test.bin"]
        self._fine_label = fine_label
        dataset._DownloadedDataset.__init__(self, root, transform)

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            raw = np.frombuffer(fin.read(), dtype=np.uint8)
        if raw.size % 3074:
            raise ValueError(f"{filename}: size {raw.size} is not a multiple of 3074 bytes")
        raw = raw.reshape(-1, 3074)
        return (raw[:, 2:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1),
                raw[:, int(bool(self._fine_label))].astype(np.int32))


class ImageRecordDataset(dataset.RecordFileDataset):
    """Images packed in a RecordIO file: samples ``(decoded image NDArray, label)``; flag 0 gray,
    1 color."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, img = recordio.unpack(super().__getitem__(idx))
        img = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


_EXTS = [".jpg", ".jpeg", ".png"]


class ImageFolderDataset(dataset.Dataset):
    """root/<class name>/<image files>: label = index of the class folder in sorted order
    (``synsets`` lists the names); ``items`` is the list of (path, label)."""

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f"ImageFolderDataset: {self._root} is not a directory")
        self._flag = flag
        self._transform = transform
        self._exts = list(_EXTS)
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. "
                                  f"Only support {', '.join(self._exts)}")
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = image.imread(path, self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)


class ImageListDataset(dataset.Dataset):
    """Images listed in a .lst file (``index<TAB>label(s)<TAB>relative path`` per line, as im2rec
    writes) or a Python list of ``[label(s)..., path]`` / ``(path, label)`` entries, relative to
    `root`. A single label is a float scalar, several a float32 numpy array."""

    def __init__(self, root=".", imglist=None, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self.items = []
        if imglist is None:
            raise ValueError("ImageListDataset: give imglist (a .lst file or a list)")
        if isinstance(imglist, str):
            lst = imglist if os.path.isabs(imglist) or os.path.isfile(imglist) \
                else os.path.join(self._root, imglist)
            if not os.path.isfile(lst):
                raise FileNotFoundError(f"ImageListDataset: list file {imglist} not found")
            with open(lst) as f:
                for n, line in enumerate(f, 1):
                    parts = line.strip().split("\t")
                    if not parts or parts == [""]:
                        continue
                    if len(parts) < 3:
                        raise ValueError(f"ImageListDataset: {lst} line {n}: expected "
                                         "index, label(s) and path separated by tabs")
                    self.items.append((parts[-1], self._label([float(v) for v in parts[1:-1]])))
        else:
            for entry in imglist:
                entry = list(entry) if isinstance(entry, (list, tuple)) else [entry]
                if isinstance(entry[0], str) and len(entry) == 2:
                    path, labels = entry[0], entry[1]
                    labels = list(np.ravel(labels))
                elif isinstance(entry[-1], str):
                    path, labels = entry[-1], list(np.ravel(entry[:-1]))
                else:
                    raise ValueError(f"ImageListDataset: entry {entry!r} names no image path")
                self.items.append((path, self._label([float(v) for v in labels])))

    @staticmethod
    def _label(values):
        return values[0] if len(values) == 1 else np.array(values, dtype=np.float32)

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = image.imread(os.path.join(self._root, path), self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
