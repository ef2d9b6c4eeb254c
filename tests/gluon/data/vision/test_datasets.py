"""gluon.data.vision datasets (mxc/gluon/data/vision/datasets.py) on tiny files written here in
the standard formats, and ImageRecordDataset on tests/data/recordio's MXNet-made fixture."""
import gzip
import os
import struct

import numpy as np
import pytest

import mxc as mx
from mxc.gluon.data import vision, DataLoader

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "data")


def write_idx(root, prefix, images, labels, gz=True):
    op = gzip.open if gz else open
    ext = ".gz" if gz else ""
    with op(os.path.join(root, f"{prefix}-images-idx3-ubyte{ext}"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, len(images), images.shape[1], images.shape[2]))
        f.write(images.tobytes())
    with op(os.path.join(root, f"{prefix}-labels-idx1-ubyte{ext}"), "wb") as f:
        f.write(struct.pack(">II", 2049, len(labels)))
        f.write(labels.astype(np.uint8).tobytes())


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_reads_idx_files(tmp_path, rng, cls):
    tr = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    te = rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)
    write_idx(tmp_path, "train", tr, np.arange(5))
    write_idx(tmp_path, "t10k", te, np.array([9, 8, 7]), gz=False)
    ds = cls(root=str(tmp_path))
    assert len(ds) == 5
    img, label = ds[3]
    assert img.shape == (28, 28, 1) and img.dtype == np.uint8 and label == 3
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], tr[3])
    test = cls(root=str(tmp_path), train=False, transform=lambda d, l: (d.astype("float32") / 255, l + 1))
    d, l = test[1]
    np.testing.assert_allclose(d.asnumpy()[:, :, 0], te[1] / 255.0, rtol=1e-6)
    assert l == 9 and test._label.dtype == np.int32


def test_missing_files_raise_a_clear_error(tmp_path):
    """nothing there and the repository unreachable (tests/conftest.py): the files to get"""
    for cls, names in ((vision.MNIST, "train-images-idx3-ubyte.gz"),
                       (vision.CIFAR10, "data_batch_1.bin"), (vision.CIFAR100, "train.bin")):
        with pytest.raises(FileNotFoundError) as info:
            cls(root=str(tmp_path / cls.__name__))
        msg = str(info.value)
        assert names in msg and cls.__name__ in msg and "could not be downloaded" in msg


@pytest.fixture
def repo(served, monkeypatch):
    """MXNet's repository layout served over HTTP from 127.0.0.1 (MXNET_GLUON_REPO)"""
    monkeypatch.setenv("MXNET_GLUON_REPO", served.url)
    return served.root


def _sha1(path):
    import hashlib
    return hashlib.sha1(open(path, "rb").read()).hexdigest()


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_downloads_from_the_repository(tmp_path, rng, repo, monkeypatch, cls):
    """each in its own namespace (gluon/dataset/<mnist|fashion-mnist>/), SHA-1 checked"""
    src = repo / "gluon" / "dataset" / cls._namespace
    src.mkdir(parents=True)
    tr = rng.integers(0, 256, (4, 28, 28), dtype=np.uint8)
    write_idx(str(src), "train", tr, np.arange(4))
    monkeypatch.setattr(cls, "_sha1", {n: _sha1(src / n) for n in os.listdir(src)})
    ds = cls(root=str(tmp_path / "root"))
    assert len(ds) == 4
    np.testing.assert_array_equal(ds[2][0].asnumpy()[:, :, 0], tr[2])
    assert sorted(os.listdir(tmp_path / "root")) == ["train-images-idx3-ubyte.gz",
                                                     "train-labels-idx1-ubyte.gz"]
    # a file that is not the published one is refused
    monkeypatch.setattr(cls, "_sha1", dict(cls._sha1, **{"train-labels-idx1-ubyte.gz": "0" * 40}))
    with pytest.raises(FileNotFoundError, match="content hash does not match"):
        cls(root=str(tmp_path / "other"))


def test_cifar10_downloads_and_extracts_its_archive(tmp_path, rng, repo, monkeypatch):
    import tarfile
    imgs = rng.integers(0, 256, (3, 3, 32, 32), dtype=np.uint8)
    batches = tmp_path / "cifar-10-batches-bin"
    batches.mkdir()
    for i, name in enumerate([f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]):
        rows = np.concatenate([np.full((3, 1), i, np.uint8), imgs.reshape(3, -1)], axis=1)
        (batches / name).write_bytes(rows.tobytes())
    src = repo / "gluon" / "dataset" / "cifar10"
    src.mkdir(parents=True)
    with tarfile.open(src / "cifar-10-binary.tar.gz", "w:gz") as tar:
        tar.add(batches, arcname="cifar-10-batches-bin")
    monkeypatch.setattr(vision.CIFAR10, "_sha1",
                        {"cifar-10-binary.tar.gz": _sha1(src / "cifar-10-binary.tar.gz")})
    test = vision.CIFAR10(root=str(tmp_path / "root"), train=False)
    assert len(test) == 3 and test[1][1] == 5
    np.testing.assert_array_equal(test[1][0].asnumpy(), imgs[1].transpose(1, 2, 0))
    assert len(vision.CIFAR10(root=str(tmp_path / "root"))) == 15


def test_cifar10_and_cifar100_binary_batches(tmp_path, rng):
    imgs = rng.integers(0, 256, (6, 3, 32, 32), dtype=np.uint8)
    for i in range(1, 6):
        rows = np.concatenate([np.full((6, 1), i, np.uint8), imgs.reshape(6, -1)], axis=1)
        (tmp_path / f"data_batch_{i}.bin").write_bytes(rows.tobytes())
    rows = np.concatenate([np.full((6, 1), 9, np.uint8), imgs.reshape(6, -1)], axis=1)
    (tmp_path / "test_batch.bin").write_bytes(rows.tobytes())
    ds = vision.CIFAR10(root=str(tmp_path))
    assert len(ds) == 30
    img, label = ds[8]
    assert img.shape == (32, 32, 3) and label == 2
    np.testing.assert_array_equal(img.asnumpy(), imgs[2].transpose(1, 2, 0))
    assert vision.CIFAR10(root=str(tmp_path), train=False)[0][1] == 9
    c100 = tmp_path / "c100"
    c100.mkdir()
    rows = np.concatenate([np.full((6, 1), 4, np.uint8), np.arange(6, dtype=np.uint8)[:, None] + 50,
                           imgs.reshape(6, -1)], axis=1)
    (c100 / "train.bin").write_bytes(rows.tobytes())
    coarse = vision.CIFAR100(root=str(c100))
    fine = vision.CIFAR100(root=str(c100), fine_label=True)
    assert coarse[5][1] == 4 and fine[5][1] == 55
    np.testing.assert_array_equal(fine[5][0].asnumpy(), imgs[5].transpose(1, 2, 0))
    # test.bin missing: the archive is fetched (refused in the tests)
    with pytest.raises(FileNotFoundError, match="test.bin not found in .*, and "
                                                "cifar-100-binary.tar.gz holding them could not"):
        vision.CIFAR100(root=str(c100), train=False)


def test_image_record_dataset_decodes_like_mxnet():
    ds = vision.ImageRecordDataset(os.path.join(DATA, "recordio", "img.rec"))
    img, label = ds[0]
    # img_dec_1.npy is OpenCV's BGR decode; mx.image.imdecode gives RGB, as in MXNet
    np.testing.assert_array_equal(img.asnumpy(), np.load(os.path.join(DATA, "recordio", "img_dec_1.npy"))[:, :, ::-1])
    assert label == 3.0
    gray = vision.ImageRecordDataset(os.path.join(DATA, "recordio", "img.rec"), flag=0)[0][0]
    np.testing.assert_array_equal(gray.asnumpy()[:, :, 0], np.load(os.path.join(DATA, "recordio", "img_dec_0.npy")))
    t = vision.ImageRecordDataset(os.path.join(DATA, "recordio", "img.rec"),
                                  transform=lambda d, l: (d.shape, l * 2))
    assert t[0] == ((12, 16, 3), 6.0)
    # through a multi-worker loader
    multi = vision.ImageRecordDataset(os.path.join(DATA, "image_iter", "multi.rec"))
    loader = DataLoader(multi.transform_first(lambda d: mx.nd.image.resize(d, size=(8, 8))),
                        batch_size=2, num_workers=2, timeout=60)
    n = 0
    for data, label in loader:
        assert data.shape[1:] == (8, 8, 3) and data.dtype == np.uint8
        n += data.shape[0]
    assert n == len(multi)


def test_image_folder_and_list_datasets(tmp_path, rng):
    from PIL import Image
    arrays = {}
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for k in range(2):
            a = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
            Image.fromarray(a).save(tmp_path / cls / f"{k}.png")
            arrays[f"{cls}/{k}.png"] = a
    (tmp_path / "dog" / "notes.txt").write_text("x")
    (tmp_path / "README").write_text("x")
    with pytest.warns(UserWarning):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 4
    img, label = ds[2]
    assert label == 1
    np.testing.assert_array_equal(img.asnumpy(), arrays["dog/0.png"])
    with pytest.warns(UserWarning):
        g = vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0]
    assert g.shape == (5, 7, 1)
    with pytest.raises(FileNotFoundError):
        vision.ImageFolderDataset(str(tmp_path / "nothere"))
    lst = tmp_path / "pics.lst"
    lst.write_text("0\t1\tcat/1.png\n1\t0.5\t2.5\tdog/1.png\n")
    ld = vision.ImageListDataset(root=str(tmp_path), imglist=str(lst))
    assert len(ld) == 2 and ld[0][1] == 1.0
    np.testing.assert_array_equal(ld[0][0].asnumpy(), arrays["cat/1.png"])
    np.testing.assert_array_equal(ld[1][1], np.array([0.5, 2.5], np.float32))
    ld2 = vision.ImageListDataset(root=str(tmp_path), imglist=[[3, "dog/0.png"], ("cat/0.png", 7)])
    assert ld2[0][1] == 3.0 and ld2[1][1] == 7.0
    np.testing.assert_array_equal(ld2[1][0].asnumpy(), arrays["cat/0.png"])
