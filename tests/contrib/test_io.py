"""mx.contrib.io.DataLoaderIter: a Gluon DataLoader as a DataIter, batches counted and padded
as MXNet's (test_contrib_io's MNIST counts, on a small in-memory data set)."""
import numpy as np
import pytest

import mxc as mx
from mxc.contrib.io import DataLoaderIter
from mxc.gluon.data import ArrayDataset, DataLoader


def _loader(n, batch_size, last_batch):
    x = np.arange(n * 6, dtype=np.uint8).reshape(n, 2, 3)
    y = np.arange(n, dtype=np.int32)
    return x, y, DataLoader(ArrayDataset(x, y), batch_size, last_batch=last_batch)


@pytest.mark.parametrize("batch_size,last_batch,expected",
                         [(5, "discard", 20), (7, "discard", 14), (7, "rollover", 14),
                          (7, "keep", 15)])
def test_batches_counted_as_mxnet(batch_size, last_batch, expected):
    x, y, loader = _loader(100, batch_size, last_batch)
    it = DataLoaderIter(loader)
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (batch_size, 2, 3)
    assert it.provide_label[0].name == "softmax_label"
    batch = next(it)
    assert batch.data[0].shape == (batch_size, 2, 3) and batch.data[0].dtype == np.float32
    np.testing.assert_array_equal(batch.label[0].asnumpy(), y[:batch_size])
    it.reset()
    batches = list(it)
    assert len(batches) == expected
    if last_batch == "keep":      # 100 = 14 * 7 + 2: two rows, five zero rows of padding
        last = batches[-1]
        assert last.pad == 5 and last.data[0].shape == (7, 2, 3)
        np.testing.assert_array_equal(last.data[0].asnumpy()[:2], x[98:].astype(np.float32))
        np.testing.assert_array_equal(last.data[0].asnumpy()[2:], 0)
        np.testing.assert_array_equal(last.label[0].asnumpy(), [98, 99, 0, 0, 0, 0, 0])
    else:
        assert all(b.pad == 0 for b in batches)


def test_dtype_names_and_module_fit():
    x, y, loader = _loader(40, 8, "keep")
    it = DataLoaderIter(loader, data_name="img", label_name="lab", dtype="float16")
    b = next(it)
    assert b.data[0].dtype == np.float16 and it.provide_data[0].name == "img"
    # the Module API trains from it
    data = mx.sym.var("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.flatten(data), num_hidden=40),
                               name="softmax")
    mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
    mod.fit(DataLoaderIter(loader), num_epoch=1, optimizer_params={"learning_rate": 0.01})
    with pytest.raises(ValueError, match="yields no batch"):
        DataLoaderIter([])
