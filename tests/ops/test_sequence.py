"""Sequence operators (SequenceMask, SequenceLast, SequenceReverse): forward against a numpy
reference for both axes, with and without lengths, every dtype; gradients against central
differences; MXNet 1.9.1 golden cases; errors naming the operator."""
import numpy as np
import pytest

import mxc as mx
from mxc.ndarray.register import invoke
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_gather import golden_cases, replay_golden


@pytest.mark.parametrize("n,m", golden_cases(("SequenceMask", "SequenceLast", "SequenceReverse")))
def test_golden(n, m):
    replay_golden(n, m)


def _tb(x, axis):
    """View as (T, B, ...)."""
    return x if axis == 0 else np.swapaxes(x, 0, 1)


def _lens(L, T):
    return np.clip(np.trunc(L).astype(np.int64), 0, T)


def ref_mask(x, L, axis, value):
    y = _tb(x, axis).copy()
    for b, n in enumerate(_lens(L, y.shape[0])):
        y[n:, b] = value
    return _tb(y, axis)


def ref_last(x, L, axis):
    y = _tb(x, axis)
    return np.stack([y[max(n - 1, 0), b] for b, n in enumerate(_lens(L, y.shape[0]))])


def ref_reverse(x, L):
    y = x.copy()
    for b, n in enumerate(_lens(L, x.shape[0])):
        y[:n, b] = x[:n, b][::-1]
    return y


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8])
def test_forward(dtype, rng):
    x = rng.integers(0, 100, size=(5, 3, 2)).astype(dtype)
    L = np.array([2, 5, 0], np.float32)
    for axis in (0, 1):
        xa = x if axis == 0 else np.ascontiguousarray(np.swapaxes(x, 0, 1))
        kw = {"use_sequence_length": True, "axis": axis}
        check_forward("SequenceMask", [xa, L], dict(kw, value=3.0), ref_mask(xa, L, axis, 3))
        check_forward("SequenceLast", [xa, L], kw, ref_last(xa, L, axis))
    check_forward("SequenceReverse", [x, L], {"use_sequence_length": True}, ref_reverse(x, L))
    check_forward("SequenceReverse", [x, np.array([1.9, 9, 3], np.float64)], {"use_sequence_length": True},
                  ref_reverse(x, np.array([1, 5, 3])))


def test_without_lengths(rng):
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    for name, exp in [("SequenceMask", x), ("SequenceLast", x[-1]), ("SequenceReverse", x[::-1])]:
        got = getattr(mx.nd, name)(mx.nd.array(x)).asnumpy()
        np.testing.assert_array_equal(got, exp)
        with pytest.raises((TypeError, ValueError), match=name):   # the lengths are no input then
            getattr(mx.nd, name)(mx.nd.array(x), mx.nd.ones((3,)))
    got = invoke(registry.get("SequenceLast"), [mx.nd.array(x)], {"axis": 1}).asnumpy()
    np.testing.assert_array_equal(got, x[:, -1])


def test_threads(rng):
    x = rng.standard_normal((50, 40, 30)).astype(np.float32)
    L = rng.integers(0, 51, size=40).astype(np.float32)
    check_forward("SequenceMask", [x, L], {"use_sequence_length": True}, ref_mask(x, L, 0, 0))
    check_forward("SequenceReverse", [x, L], {"use_sequence_length": True}, ref_reverse(x, L))


def test_gradients(rng):
    x = rng.standard_normal((4, 3, 2))
    L = np.array([1.0, 4.0, 2.0])
    for axis in (0, 1):
        kw = {"use_sequence_length": True, "axis": axis}
        xa = x if axis == 0 else np.ascontiguousarray(np.swapaxes(x, 0, 1))
        check_grad("SequenceMask", [xa, L], dict(kw, value=-2.0), rng, wrt=[0])
        check_grad("SequenceLast", [xa, L], kw, rng, wrt=[0])
    check_grad("SequenceReverse", [x, L], {"use_sequence_length": True}, rng, wrt=[0])
    g = rng.standard_normal((3, 2))
    exp = np.zeros_like(x)
    for b, n in enumerate(L.astype(int)):
        exp[n - 1, b] = g[b]
    check_forward("_backward_SequenceLast", [g, x, L], {"use_sequence_length": True}, exp)
    check_grad("_backward_SequenceLast", [g, x, L], {"use_sequence_length": True}, rng, wrt=[0])


def test_errors():
    x = mx.nd.ones((4, 3))
    with pytest.raises(ValueError, match="SequenceMask.*sequence_length"):
        mx.nd.SequenceMask(x, mx.nd.ones((4,)), use_sequence_length=True)
    with pytest.raises(ValueError, match="SequenceLast.*axis"):
        mx.nd.SequenceLast(x, axis=2)
    with pytest.raises(ValueError, match="SequenceReverse.*axis"):
        mx.nd.SequenceReverse(x, axis=1)
    with pytest.raises(ValueError, match="SequenceMask.*2 dimensions"):
        mx.nd.SequenceMask(mx.nd.ones((4,)))
