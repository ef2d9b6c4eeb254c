"""mx.np.random: shapes, dtypes, ranges, rough moments, seeding through mx.random.seed."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np


def test_seeded_and_shapes():
    mx.random.seed(7)
    a = np.random.uniform(-1, 2, size=(200, 50))
    mx.random.seed(7)
    b = np.random.uniform(-1, 2, size=(200, 50))
    assert onp.array_equal(a.asnumpy(), b.asnumpy())
    v = a.asnumpy()
    assert a.dtype == onp.float32 and v.min() >= -1 and v.max() < 2
    assert abs(v.mean() - 0.5) < 0.05
    assert np.random.uniform().shape == ()
    n = np.random.normal(1.0, 2.0, size=(20000,)).asnumpy()
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    r = np.random.randint(3, 9, size=(1000,))
    assert r.dtype == onp.int64
    rv = r.asnumpy()
    assert rv.min() == 3 and rv.max() == 8
    assert np.random.rand(2, 3).shape == (2, 3) and np.random.randn(4).shape == (4,)
    u = np.random.uniform(np.zeros(3), np.array([1.0, 10.0, 100.0]), size=(500, 3)).asnumpy()
    assert (u.max(axis=0) > [0.5, 5, 50]).all() and (u <= [1, 10, 100]).all()


def test_choice_and_shuffle():
    c = np.random.choice(10, 10, replace=False).asnumpy()
    assert sorted(c.tolist()) == list(range(10))
    p = np.random.choice(np.array([1.0, 2.0, 3.0]), 3000, p=[0.0, 0.2, 0.8]).asnumpy()
    assert set(onp.unique(p)) <= {2.0, 3.0} and abs((p == 3.0).mean() - 0.8) < 0.05
    w = np.random.choice(5, 5, replace=False, p=[0.1, 0.1, 0.2, 0.3, 0.3]).asnumpy()
    assert sorted(w.tolist()) == list(range(5))
    x = np.arange(20).reshape(10, 2)
    np.random.shuffle(x)
    xs = x.asnumpy()
    assert sorted(xs[:, 0].tolist()) == list(range(0, 20, 2))
    assert (xs[:, 1] - xs[:, 0] == 1).all()
    with pytest.raises(ValueError):
        np.random.choice(3, 5, replace=False)
