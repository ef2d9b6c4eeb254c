"""The NMS kernel of MultiBoxDetection (mxc/ops/cpu/_multibox.pyx) against a plain Python
rendering of MXNet's loop over all pairs (same class unless force, IoU >= threshold)."""
import numpy as np
import pytest

from mxc.ops.cpu import _multibox


def _reference(rows, keep, thresh, force):
    rows = rows.copy()
    for b in range(rows.shape[0]):
        r = rows[b]
        for i in range(keep[b]):
            if r[i, 0] < 0:
                continue
            for j in range(i + 1, keep[b]):
                if r[j, 0] < 0 or not (force or r[i, 0] == r[j, 0]):
                    continue
                w = max(0, min(r[i, 4], r[j, 4]) - max(r[i, 2], r[j, 2]))
                h = max(0, min(r[i, 5], r[j, 5]) - max(r[i, 3], r[j, 3]))
                inter = w * h
                u = ((r[i, 4] - r[i, 2]) * (r[i, 5] - r[i, 3])
                     + (r[j, 4] - r[j, 2]) * (r[j, 5] - r[j, 3]) - inter)
                if (inter / u if u > 0 else 0) >= thresh:
                    r[j, 0] = -1
    return rows


def _rows(rng, batch, n, dtype):
    rows = np.full((batch, n, 6), -1, dtype)
    rows[:, :, 0] = rng.integers(0, 4, (batch, n))
    rows[:, :, 1] = -np.sort(-rng.random((batch, n)), axis=1)
    xy = rng.uniform(0, 0.7, (batch, n, 2))
    rows[:, :, 2:4] = xy
    rows[:, :, 4:6] = xy + rng.uniform(0.05, 0.4, (batch, n, 2))
    return rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("force", [False, True])
def test_suppress_matches_the_pairwise_loop(dtype, force):
    rng = np.random.default_rng(2)
    rows = _rows(rng, 3, 40, dtype)
    keep = np.array([40, 25, 0], np.int64)          # past keep: left alone
    got = rows.copy()
    _multibox.suppress(got, keep, 0.45, force)
    want = _reference(rows, keep, dtype(0.45), force)
    np.testing.assert_array_equal(got, want)
    assert (got[:, :, 0] == -1).sum() > (rows[:, :, 0] == -1).sum()   # something suppressed


def test_suppress_checks_its_arguments():
    rows = np.zeros((2, 3, 6), np.float32)
    with pytest.raises(ValueError, match="counts for 2 images"):
        _multibox.suppress(rows, np.array([3], np.int64), 0.5, False)
    with pytest.raises(ValueError, match="out of range"):
        _multibox.suppress(rows, np.array([3, 4], np.int64), 0.5, False)
    rows[0, 1, 0] = 1.5
    with pytest.raises(ValueError, match="not an integer"):
        _multibox.suppress(rows, np.array([3, 3], np.int64), 0.5, False)
    with pytest.raises(ValueError, match="width"):
        _multibox.suppress(np.zeros((1, 2, 5), np.float32), np.array([2], np.int64), 0.5, False)
