"""gluon.data datasets (mxc/gluon/data/dataset.py)."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc.gluon import data as gdata


def test_array_dataset_and_simple_dataset():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = mx.nd.array(np.arange(6))
    ds = gdata.ArrayDataset(x, y, list("abcdef"))
    assert len(ds) == 6
    a, b, c = ds[4]
    np.testing.assert_array_equal(a, x[4])
    assert b == 4.0 and isinstance(b, np.float32) and c == "e"    # 1-D NDArray kept as numpy
    one = gdata.ArrayDataset(mx.nd.array(x))
    np.testing.assert_array_equal(one[2].asnumpy(), x[2])
    with pytest.raises(ValueError, match="same length"):
        gdata.ArrayDataset(x, np.arange(5))
    s = gdata.SimpleDataset([1, 2, 3])
    assert len(s) == 3 and s[1] == 2


def test_transform_and_transform_first_are_lazy_unless_asked():
    calls = []

    def double(v):
        calls.append(v)
        return v * 2
    ds = gdata.SimpleDataset([1, 2, 3])
    t = ds.transform(double)
    assert calls == [] and t[2] == 6 and calls == [3] and len(t) == 3
    eager = ds.transform(double, lazy=False)
    assert isinstance(eager, gdata.SimpleDataset) and list(eager) == [2, 4, 6]
    pairs = gdata.ArrayDataset([1, 2, 3], [10, 20, 30])
    assert pairs.transform(lambda a, b: a + b)[1] == 22
    assert pairs.transform_first(lambda a: -a)[2] == (-3, 30)
    assert gdata.SimpleDataset([5]).transform_first(lambda a: a + 1)[0] == 6


def test_filter_shard_take_sample():
    ds = gdata.SimpleDataset(list(range(10)))
    f = ds.filter(lambda v: v % 2 == 1)
    assert [f[i] for i in range(len(f))] == [1, 3, 5, 7, 9]
    shards = [ds.shard(3, i) for i in range(3)]
    assert [len(s) for s in shards] == [4, 3, 3]
    assert sum(([s[i] for i in range(len(s))] for s in shards), []) == list(range(10))
    with pytest.raises(ValueError):
        ds.shard(3, 3)
    assert [ds.take(3)[i] for i in range(3)] == [0, 1, 2] and len(ds.take(3)) == 3
    assert len(ds.take(None)) == 10 and len(ds.take(100)) == 10
    s = ds.sample(gdata.SequentialSampler(3, 5))
    assert [s[i] for i in range(3)] == [5, 6, 7]
    with pytest.raises(TypeError, match="Invalid sampler"):
        ds.sample([1, 2])
    # chaining: transform after filter
    assert ds.filter(lambda v: v > 7).transform(lambda v: v * 10)[1] == 90


def test_record_file_dataset():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "data", "recordio")
    ds = gdata.RecordFileDataset(os.path.join(root, "basic.rec"))
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(root, "basic.idx"),
                                        os.path.join(root, "basic.rec"), "r")
    assert len(ds) == len(rec.keys) > 0
    for i in range(len(ds)):
        assert ds[i] == rec.read_idx(rec.keys[i])
    with pytest.raises(FileNotFoundError, match="nothere.rec"):
        gdata.RecordFileDataset(os.path.join(root, "nothere.rec"))
