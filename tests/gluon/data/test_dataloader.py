"""gluon.data.DataLoader (mxc/gluon/data/dataloader.py): batching semantics, worker processes
and threads, errors and timeouts."""
import os
import time

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.gluon import data as gdata
from mxc.gluon.data.dataloader import DataLoaderTimeoutError


class NDSquares(gdata.Dataset):
    """Samples built with mx.nd operators (engine work inside the workers)."""

    def __len__(self):
        return 23

    def __getitem__(self, i):
        x = mx.nd.full((3, 4), i)
        return mx.nd.dot(x, x.T) + 1, i


class Failing(gdata.Dataset):
    def __init__(self, bad, how):
        self.bad, self.how = bad, how

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == "raise":
                raise ValueError(f"sample {i} is corrupt")
            if self.how == "exit":
                os._exit(3)
            time.sleep(30)
        return np.full((2,), i, np.float32)


def as_lists(loader):
    out = []
    for batch in loader:
        parts = batch if isinstance(batch, list) else [batch]
        out.append([p.asnumpy() for p in parts])
    return out


def test_batches_and_last_batch_modes():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    ds = gdata.ArrayDataset(x, np.arange(10))
    dl = gdata.DataLoader(ds, batch_size=4)
    assert len(dl) == 3
    got = as_lists(dl)
    assert [b[1].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    np.testing.assert_array_equal(got[1][0], x[4:8])
    again = as_lists(dl)
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(got, again))
    assert [len(b[1]) for b in as_lists(gdata.DataLoader(ds, 4, last_batch="discard"))] == [4, 4]
    roll = gdata.DataLoader(ds, 4, last_batch="rollover")
    assert [b[1].tolist() for b in as_lists(roll)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b[1].tolist() for b in as_lists(roll)] == [[8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    # plain numpy arrays and NDArrays are datasets; dtype is kept
    b = next(iter(gdata.DataLoader(np.arange(6, dtype=np.int32), batch_size=6)))
    assert b.dtype == np.int32 and b.asnumpy().tolist() == list(range(6))
    b = next(iter(gdata.DataLoader(mx.nd.ones((5, 2)), batch_size=5)))
    assert b.shape == (5, 2)


def test_shuffle_covers_everything_and_sampler_rules():
    np.random.seed(1)
    dl = gdata.DataLoader(np.arange(50), batch_size=7, shuffle=True)
    e1 = np.concatenate([b.asnumpy() for b in dl])
    e2 = np.concatenate([b.asnumpy() for b in dl])
    assert sorted(e1.tolist()) == list(range(50)) and sorted(e2.tolist()) == list(range(50))
    assert e1.tolist() != e2.tolist()
    bs = gdata.BatchSampler(gdata.SequentialSampler(5, 2), 2, "keep")
    assert [b.asnumpy().tolist() for b in gdata.DataLoader(np.arange(10), batch_sampler=bs)] == \
        [[2, 3], [4, 5], [6]]
    with pytest.raises(ValueError, match="batch_size must be specified"):
        gdata.DataLoader(np.arange(4))
    with pytest.raises(ValueError, match="shuffle must not be specified"):
        gdata.DataLoader(np.arange(4), 2, shuffle=True, sampler=gdata.SequentialSampler(4))
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        gdata.DataLoader(np.arange(4), 2, batch_sampler=bs)
    with pytest.raises(ValueError, match="timeout must be positive"):
        gdata.DataLoader(np.arange(4), 2, timeout=0)


def test_custom_batchify_and_pin_memory():
    ds = gdata.SimpleDataset([np.ones(i + 1) for i in range(5)])
    dl = gdata.DataLoader(ds, batch_size=2, batchify_fn=lambda items: [len(a) for a in items])
    assert list(dl) == [[1, 2], [3, 4], [5]]
    b = next(iter(gdata.DataLoader(np.ones((4, 2)), batch_size=2, pin_memory=True)))
    assert b.context == mx.cpu_pinned(0)


@pytest.mark.parametrize("thread_pool", [False, True])
def test_workers_give_the_same_batches(thread_pool):
    a = mx.nd.dot(mx.nd.ones((200, 200)), mx.nd.ones((200, 200)))   # the parent uses its pools
    a.wait_to_read()
    ds = NDSquares()
    ref = as_lists(gdata.DataLoader(ds, batch_size=5))
    dl = gdata.DataLoader(ds, batch_size=5, num_workers=2, thread_pool=thread_pool, timeout=60)
    for _ in range(2):         # twice: the loader can be iterated again
        got = as_lists(dl)
        assert len(got) == len(ref) == len(dl) == 5
        for g, r in zip(got, ref):
            for gp, rp in zip(g, r):
                np.testing.assert_array_equal(gp, rp)
    tr = gdata.ArrayDataset(np.arange(8, dtype=np.float32), np.arange(8)).transform_first(
        lambda v: v * 2)
    got = as_lists(gdata.DataLoader(tr, batch_size=3, num_workers=2, prefetch=1,
                                    thread_pool=thread_pool))
    assert [g[0].tolist() for g in got] == [[0, 2, 4], [6, 8, 10], [12, 14]]


def test_worker_exception_surfaces_with_its_traceback():
    dl = gdata.DataLoader(Failing(7, "raise"), batch_size=2, num_workers=2, timeout=60)
    seen = []
    with pytest.raises(ValueError, match="sample 7 is corrupt") as info:
        for b in dl:
            seen.append(b.asnumpy()[:, 0].tolist())
    assert seen == [[0, 1], [2, 3], [4, 5]]
    assert "__getitem__" in str(info.value.__cause__)          # the worker's traceback
    tdl = gdata.DataLoader(Failing(3, "raise"), batch_size=2, num_workers=2, thread_pool=True)
    with pytest.raises(ValueError, match="sample 3 is corrupt"):
        list(tdl)


def test_worker_death_and_timeout_raise_instead_of_hanging():
    dl = gdata.DataLoader(Failing(4, "exit"), batch_size=2, num_workers=2, timeout=60)
    t = time.monotonic()
    with pytest.raises(MXNetError, match="exited with code 3"):
        list(dl)
    assert time.monotonic() - t < 30
    # the loader recovers with fresh workers on the next pass (batches before the bad one)
    it = iter(dl)
    assert next(it).asnumpy()[:, 0].tolist() == [0, 1]
    del it
    slow = gdata.DataLoader(Failing(2, "sleep"), batch_size=2, num_workers=1, timeout=1)
    t = time.monotonic()
    with pytest.raises(DataLoaderTimeoutError, match="timeout=1"):
        list(slow)
    assert time.monotonic() - t < 15
    tslow = gdata.DataLoader(Failing(0, "sleep"), batch_size=2, num_workers=1, thread_pool=True,
                             timeout=0.5)
    with pytest.raises(DataLoaderTimeoutError):
        next(iter(tslow))


def test_abandoned_iterators_and_auto_reload():
    dl = gdata.DataLoader(np.arange(40, dtype=np.float32), batch_size=4, num_workers=2)
    for _ in range(3):
        it = iter(dl)
        assert next(it).asnumpy().tolist() == [0, 1, 2, 3]
        del it
    assert [b.asnumpy()[0] for b in dl] == [float(4 * i) for i in range(10)]
    ar = gdata.DataLoader(np.arange(6, dtype=np.float32), batch_size=3, num_workers=1,
                          auto_reload=True)
    assert [b.asnumpy().tolist() for b in ar] == [[0, 1, 2], [3, 4, 5]]
    assert [b.asnumpy().tolist() for b in ar] == [[0, 1, 2], [3, 4, 5]]
