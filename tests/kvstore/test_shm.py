"""The native passes of the shared-memory sums (mxc/kvstore/_shm.pyx): against numpy, bit for
bit, at sizes and alignments that cross the kernels' thresholds and blocks."""
import numpy as np
import pytest

from mxc.kvstore import _shm


@pytest.mark.parametrize("nbytes", [0, 1, 15, 4095, 4096, 4097, 100003, 1 << 20])
@pytest.mark.parametrize("offset", [0, 1, 7, 16])
def test_publish_copies_every_byte(nbytes, offset):
    rs = np.random.RandomState(nbytes + offset)
    src = rs.randint(0, 256, nbytes + 32).astype(np.uint8)
    dst = np.full(nbytes + 64, 0xAB, np.uint8)
    _shm.publish(dst[offset:offset + nbytes], src[3:3 + nbytes])
    np.testing.assert_array_equal(dst[offset:offset + nbytes], src[3:3 + nbytes])
    assert (dst[:offset] == 0xAB).all() and (dst[offset + nbytes:] == 0xAB).all()


@pytest.mark.parametrize("dtype", _shm.DTYPES)
@pytest.mark.parametrize("nothers", [1, 3])
@pytest.mark.parametrize("size", [0, 1, 2047, 2048, 2049, 70001])
def test_sum_into_matches_numpy_in_order(dtype, nothers, size):
    rs = np.random.RandomState(size * 7 + nothers)
    def draw():
        if np.dtype(dtype).kind == "f":
            return (rs.randn(size) * 10.0 ** rs.randint(-3, 4, size)).astype(dtype)
        return rs.randint(-2 ** 30, 2 ** 30, size).astype(dtype)
    send = draw()
    others = [draw() for _ in range(nothers)]
    want = send + others[0]
    for o in others[1:]:
        want = want + o                 # the order the kernel must keep
    out = np.zeros(size, dtype)
    assert _shm.sum_into(send, out, others)
    np.testing.assert_array_equal(out, want)
    for o in others:
        np.testing.assert_array_equal(o, want)


def test_sum_into_adds_in_rank_order():
    # (1 + 1e8) - 1e8 is 0 in float32; summing the others first would give 1
    send = np.ones(3, np.float32)
    others = [np.full(3, 1e8, np.float32), np.full(3, -1e8, np.float32)]
    out = np.empty(3, np.float32)
    assert _shm.sum_into(send, out, others)
    np.testing.assert_array_equal(out, np.zeros(3, np.float32))


def test_sum_into_other_dtypes_and_bad_input():
    a = np.ones(5, np.float16)
    out = np.zeros(5, np.float16)
    assert not _shm.sum_into(a, out, [a.copy()])
    assert (out == 0).all()              # untouched: the caller sums with numpy
    f = np.ones(6, np.float32)
    with pytest.raises(ValueError, match="float32\\[6\\] with float32\\[5\\]"):
        _shm.sum_into(f, np.zeros(6, np.float32), [np.ones(5, np.float32)])
    with pytest.raises(ValueError, match="not contiguous"):
        _shm.sum_into(f[::2], np.zeros(3, np.float32), [np.ones(3, np.float32)])
    ro = np.zeros(6, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _shm.sum_into(f, np.zeros(6, np.float32), [ro])
    with pytest.raises(ValueError, match="other ranks"):
        _shm.sum_into(f, np.zeros(6, np.float32), [])
    with pytest.raises(ValueError, match="publish of float32\\[6\\] into float32\\[5\\]"):
        _shm.publish(np.zeros(5, np.float32), f)
