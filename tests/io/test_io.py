"""mx.io iterators: NDArrayIter, CSVIter, MNISTIter, ResizeIter, PrefetchingIter.

Expected batch sequences of CSVIter and MNISTIter are what MXNet 1.9.1 produced for the same
inputs (run by hand with the oracle; recorded in the comments)."""
import gzip
import struct
import subprocess
import sys

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.io import (CSVIter, DataBatch, DataDesc, DataIter, MNISTIter, NDArrayIter,
                    PrefetchingIter, ResizeIter)


def _collect(it):
    return [(b.data[0].asnumpy(), b.label[0].asnumpy() if b.label else None, b.pad) for b in it]


def test_datadesc_and_batch():
    d = DataDesc("data", (4, 3), np.float32, "NC")
    assert d == ("data", (4, 3)) and d.dtype is np.float32 and d.layout == "NC"
    assert repr(d) == "DataDesc[data,(4, 3),<class 'numpy.float32'>,NC]"
    assert DataDesc.get_batch_axis("TNC") == 1 and DataDesc.get_batch_axis(None) == 0
    descs = DataDesc.get_list([("a", (1,)), ("b", (2,))], [("a", np.int32), ("b", np.float16)])
    assert [x.dtype for x in descs] == [np.int32, np.float16]
    b = DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=1)
    assert str(b) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    with pytest.raises(TypeError):
        DataBatch(mx.nd.zeros((2, 3)))


def test_ndarrayiter_pad_discard():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    it = NDArrayIter(x, y, batch_size=4)
    assert it.provide_data == [("data", (4, 2))] and it.provide_label == [("softmax_label", (4,))]
    out = _collect(it)
    assert [o[2] for o in out] == [0, 0, 2]
    np.testing.assert_array_equal(out[2][0], x[[8, 9, 0, 1]])
    np.testing.assert_array_equal(out[2][1], [8, 9, 0, 1])
    assert out[0][1].dtype == np.float32  # numpy labels become float32, as MXNet
    it.reset()
    assert len(_collect(it)) == 3
    it = NDArrayIter(x, y, batch_size=4, last_batch_handle="discard")
    assert [o[2] for o in _collect(it)] == [0, 0]
    # a batch larger than the data repeats it
    out = _collect(NDArrayIter(x[:3], y[:3], batch_size=7))
    np.testing.assert_array_equal(out[0][1], [0, 1, 2, 0, 1, 2, 0])
    assert out[0][2] == 4


def test_ndarrayiter_roll_over():
    x = np.arange(10, dtype=np.float32)
    it = NDArrayIter(x, batch_size=4, last_batch_handle="roll_over")
    first = _collect(it)
    assert [o[0].tolist() for o in first] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    it.reset()
    second = _collect(it)
    # the remainder [8, 9] opens the next epoch (MXNet 1.9.1 gives exactly this)
    assert [o[0].tolist() for o in second] == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    assert [o[2] for o in second] == [2, 0, 0]
    it.hard_reset()
    assert _collect(it)[0][0].tolist() == [0, 1, 2, 3]


def test_ndarrayiter_shuffle_dict_and_ndarray_inputs():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    np.random.seed(7)
    it = NDArrayIter({"a": x, "b": mx.nd.array(x * 10, dtype=np.int32)}, np.arange(6),
                     batch_size=3, shuffle=True)
    descs = it.provide_data
    assert [d.name for d in descs] == ["a", "b"] and descs[1].dtype == np.int32
    b = _collect_all(it)
    lab = np.concatenate([bb.label[0].asnumpy() for bb in b])
    assert sorted(lab.tolist()) == list(range(6))
    a = np.concatenate([bb.data[0].asnumpy() for bb in b])
    bcol = np.concatenate([bb.data[1].asnumpy() for bb in b])
    np.testing.assert_array_equal(a, x[lab.astype(int)])
    np.testing.assert_array_equal(bcol, (x * 10)[lab.astype(int)])
    assert bcol.dtype == np.int32
    np.random.seed(7)
    it2 = NDArrayIter({"a": x, "b": x}, np.arange(6), batch_size=3, shuffle=True)
    lab2 = np.concatenate([bb.label[0].asnumpy() for bb in _collect_all(it2)])
    np.testing.assert_array_equal(lab, lab2)  # same seed, same order
    lists = NDArrayIter([x, x + 1], batch_size=2)
    assert [d.name for d in lists.provide_data] == ["_0_data", "_1_data"]
    with pytest.raises(ValueError, match="last_batch_handle"):
        NDArrayIter(x, batch_size=2, last_batch_handle="wrap")
    with pytest.raises(ValueError, match="samples"):
        NDArrayIter(x, np.arange(5), batch_size=2)


def _collect_all(it):
    return list(it)


def test_csviter_matches_mxnet(tmp_path):
    np.savetxt(tmp_path / "d.csv", np.arange(30).reshape(10, 3), delimiter=",", fmt="%d")
    np.savetxt(tmp_path / "l.csv", np.arange(10), delimiter=",", fmt="%d")
    it = CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(3,),
                 label_csv=str(tmp_path / "l.csv"), batch_size=4)
    assert it.provide_data == [("data", (4, 3))] and it.provide_label == [("softmax_label", (4,))]
    e1 = _collect(it)
    it.reset()
    e2 = _collect(it)
    # MXNet 1.9.1: epoch 1 labels [0..3] [4..7] [8 9 0 1] pad 2; epoch 2 resumes: [2..5] [6..9]
    assert [o[1].tolist() for o in e1] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    assert [o[2] for o in e1] == [0, 0, 2]
    assert [o[1].tolist() for o in e2] == [[2, 3, 4, 5], [6, 7, 8, 9]]
    np.testing.assert_array_equal(e1[2][0], np.arange(30).reshape(10, 3)[[8, 9, 0, 1]])
    it = CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(3,), batch_size=4,
                 round_batch=False)
    out = _collect(it)
    assert out[2][2] == 2 and (out[2][1] == 0).all()
    np.testing.assert_array_equal(out[2][0][:2], [[24, 25, 26], [27, 28, 29]])
    with pytest.raises(MXNetError, match="data_shape"):
        CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(4,), batch_size=2)
    with pytest.raises(MXNetError, match="nope.csv"):
        CSVIter(data_csv=str(tmp_path / "nope.csv"), data_shape=(3,), batch_size=2)


def _write_mnist(tmp_path, n=7, gz=False):
    imgs = (np.arange(n * 28 * 28) % 251).astype(np.uint8).reshape(n, 28, 28)
    op = gzip.open if gz else open
    sfx = ".gz" if gz else ""
    with op(tmp_path / f"img{sfx}", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + imgs.tobytes())
    with op(tmp_path / f"lab{sfx}", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + np.arange(n, dtype=np.uint8).tobytes())
    return imgs, str(tmp_path / f"img{sfx}"), str(tmp_path / f"lab{sfx}")


@pytest.mark.parametrize("gz", [False, True])
def test_mnistiter(tmp_path, gz):
    imgs, img, lab = _write_mnist(tmp_path, gz=gz)
    it = MNISTIter(image=img, label=lab, batch_size=3, shuffle=False, flat=False)
    assert it.provide_data == [("data", (3, 1, 28, 28))]
    out = _collect(it)
    # MXNet 1.9.1: pixels / 256, the last incomplete batch (1 of 7) dropped
    assert len(out) == 2 and [o[1].tolist() for o in out] == [[0, 1, 2], [3, 4, 5]]
    np.testing.assert_array_equal(out[1][0], imgs[3:6, None].astype(np.float32) / 256)
    it = MNISTIter(image=img, label=lab, batch_size=3, shuffle=True, flat=True, seed=3)
    assert it.provide_data == [("data", (3, 784))]
    a = [o[1].tolist() for o in _collect(it)]
    b = [o[1].tolist() for o in _collect(MNISTIter(image=img, label=lab, batch_size=3,
                                                   shuffle=True, flat=True, seed=3))]
    assert a == b and len(set(sum(a, []))) == 6
    parts = [sum([o[1].tolist() for o in _collect(
        MNISTIter(image=img, label=lab, batch_size=1, shuffle=False, num_parts=2,
                  part_index=k))], []) for k in range(2)]
    assert sorted(parts[0] + parts[1]) == list(range(7))
    with pytest.raises(MXNetError, match="magic"):
        MNISTIter(image=lab, label=lab, batch_size=3)


def test_resize_iter():
    x = np.arange(10, dtype=np.float32)
    it = ResizeIter(NDArrayIter(x, batch_size=4), size=5)
    assert len(list(it)) == 5
    it.reset()
    assert len(list(it)) == 5


def test_prefetching_iter_and_rename():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    it = PrefetchingIter([NDArrayIter(x, batch_size=2), NDArrayIter(x * 2, batch_size=2)],
                         rename_data=[{"data": "a"}, {"data": "b"}])
    assert [d.name for d in it.provide_data] == ["a", "b"]
    batches = list(it)
    assert len(batches) == 3
    np.testing.assert_array_equal(batches[1].data[1].asnumpy(), x[2:4] * 2)
    it.reset()
    assert len(list(it)) == 3
    it.close()

    class Boom(DataIter):
        provide_data = [DataDesc("data", (1,))]
        provide_label = []

        def next(self):
            raise RuntimeError("bad sample")
    with pytest.raises(RuntimeError, match="bad sample"):
        next(PrefetchingIter(Boom()))


def test_prefetching_iter_early_stop_exits(tmp_path):
    code = ("import numpy as np, mxc.io as io\n"
            "it = io.PrefetchingIter(io.NDArrayIter(np.zeros((100, 3)), batch_size=2))\n"
            "next(it)\nprint('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_csv_iter_getdata_is_one_array_as_mxnet(tmp_path):
    # MXNet's C++ iterators hand out one NDArray from getdata/getlabel (lists of one in batches)
    data = tmp_path / "d.csv"
    data.write_text("\n".join(",".join(str(i * 4 + j) for j in range(4)) for i in range(6)))
    it = mx.io.CSVIter(data_csv=str(data), data_shape=(4,), batch_size=3, dtype="int32")
    batch = next(iter(it))
    assert isinstance(it.getdata(), mx.nd.NDArray) and isinstance(it.getlabel(), mx.nd.NDArray)
    assert len(batch.data) == 1 and len(batch.label) == 1
    np.testing.assert_array_equal(it.getdata().asnumpy(), np.arange(12).reshape(3, 4))
    assert it.getdata().dtype == np.int32


def test_ndarrayiter_sample_counts():
    x = np.arange(12.0).reshape(6, 2)
    # more labels than data: MXNet uses the first ones; mxc says so
    with pytest.warns(UserWarning, match="softmax_label has 9 samples, data has 6"):
        it = NDArrayIter(x, np.arange(9.0), batch_size=3)
    labels = np.concatenate([b.label[0].asnumpy() for b in it])
    np.testing.assert_array_equal(labels, np.arange(6.0))
    with pytest.raises(ValueError, match="softmax_label has 4 samples, data has 6"):
        NDArrayIter(x, np.arange(4.0), batch_size=3)
