"""gluon.data samplers (mxc/gluon/data/sampler.py)."""
import numpy as np
import pytest

from mxc.gluon import data as gdata


def test_sequential_and_random_samplers():
    assert list(gdata.SequentialSampler(5)) == [0, 1, 2, 3, 4]
    assert list(gdata.SequentialSampler(3, start=4)) == [4, 5, 6]
    assert len(gdata.SequentialSampler(3, 4)) == 3
    np.random.seed(0)
    rs = gdata.RandomSampler(50)
    a, b = list(rs), list(rs)
    assert sorted(a) == list(range(50)) and sorted(b) == list(range(50))
    assert a != b and len(rs) == 50


def test_filter_and_interval_samplers():
    fs = gdata.FilterSampler(lambda x: x % 3 == 0, list(range(10)))
    assert list(fs) == [0, 3, 6, 9] and len(fs) == 4
    assert list(gdata.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    assert list(gdata.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
    assert len(gdata.IntervalSampler(7, 3)) == 7 and len(gdata.IntervalSampler(7, 3, False)) == 3
    with pytest.raises(ValueError):
        gdata.IntervalSampler(3, 5)


def test_batch_sampler_last_batch_modes():
    seq = gdata.SequentialSampler(10)
    keep = gdata.BatchSampler(seq, 3, "keep")
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(keep) == 4
    disc = gdata.BatchSampler(seq, 3, "discard")
    assert list(disc) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(disc) == 3
    roll = gdata.BatchSampler(seq, 3, "rollover")
    assert len(roll) == 3
    assert list(roll) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(roll) == 3          # (1 carried + 10) // 3
    assert list(roll) == [[9, 0, 1], [2, 3, 4], [5, 6, 7]]
    assert list(roll)[0] == [8, 9, 0]
    bad = gdata.BatchSampler(seq, 3, "pad")
    with pytest.raises(ValueError, match="last_batch must be one of"):
        list(bad)
    with pytest.raises(ValueError, match="last_batch must be one of"):
        len(bad)
