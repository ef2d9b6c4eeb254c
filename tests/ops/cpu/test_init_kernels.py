"""Init CPU kernels (mxc/ops/cpu/init.pyx): fill, arange, eye, against numpy."""
import numpy as np
import pytest

from mxc._core.opcall import DTYPE_CODE, run_on_numpy
from mxc.base import MXNetError
from mxc.ops.cpu.init import KERNELS

ALL8 = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32, np.int64, np.bool_]
BIG = 70000


def code(dt):
    return DTYPE_CODE[np.dtype(dt)]


def call(name, dt, out, fattr=(), iattr=(), nthreads=1):
    run_on_numpy(KERNELS[name][code(dt)], [], [out], iattr=iattr, fattr=fattr, nthreads=nthreads)
    return out


def test_names_and_keys():
    assert set(KERNELS) == {"fill", "arange", "eye"}
    assert set(KERNELS["fill"]) == set(KERNELS["eye"]) == {code(d) for d in ALL8}
    assert set(KERNELS["arange"]) == {code(d) for d in ALL8 if d is not np.bool_}


@pytest.mark.parametrize("dt", ALL8)
def test_fill(dt):
    for shape, nt in (((), 1), ((3, 4), 1), ((BIG + 5,), 2), ((0,), 1)):
        for v in (0.0, 1.0, 7.25, -3.0):
            got = call("fill", dt, np.full(shape, 99, dt), fattr=(v,), nthreads=nt)
            if np.dtype(dt).kind == "u" and v < 0:
                exp = np.full(shape, np.int64(v), np.int64).astype(dt)
            else:
                exp = np.full(shape, v).astype(dt)
            np.testing.assert_array_equal(got, exp, err_msg=f"{v}")


def test_fill_conversions_from_mxnet():
    # mx.nd.full in MXNet 1.9.1: uint8 -2.5 -> 254, 300.7 -> 44; float16 300.7 -> 300.75;
    # bool: any non-zero value is True
    assert call("fill", np.uint8, np.empty(2, np.uint8), fattr=(-2.5,)).tolist() == [254, 254]
    assert call("fill", np.uint8, np.empty(2, np.uint8), fattr=(300.7,)).tolist() == [44, 44]
    assert call("fill", np.int8, np.empty(1, np.int8), fattr=(-300.7,)).tolist() == [-44]
    assert call("fill", np.float16, np.empty(1, np.float16), fattr=(300.7,)).tolist() == [300.75]
    assert call("fill", np.bool_, np.empty(2, np.bool_), fattr=(-0.5,)).tolist() == [True, True]
    assert call("fill", np.int32, np.empty(1, np.int32), fattr=(np.nan,)).tolist() == [-2 ** 31]


@pytest.mark.parametrize("dt", [d for d in ALL8 if d is not np.bool_])
def test_arange(dt):
    for start, step, n, nt in ((0.0, 1.0, 10, 1), (-1.5, 0.7, 7, 1), (5.0, -1.0, 6, 1),
                               (2.0, 3.0, 40, 1), (0.0, 1.0, BIG, 2), (-3.0, 0.25, BIG + 3, 2)):
        got = call("arange", dt, np.empty(n, dt), fattr=(start, step), nthreads=nt)
        vals = start + np.arange(n, dtype=np.float64) * step     # numpy's rule, in double
        info = np.iinfo(dt) if np.dtype(dt).kind in "iu" else None
        if info is not None:
            ok = (vals >= info.min) & (vals <= info.max)
            got, vals = got[ok], vals[ok]           # out-of-range ints are MXNet's x86 cast
            exp = np.trunc(vals).astype(dt)
        elif dt == np.float16:
            with np.errstate(over="ignore"):
                exp = vals.astype(np.float32).astype(np.float16)
        else:
            exp = vals.astype(dt)
        np.testing.assert_array_equal(got, exp, err_msg=f"{start} {step} {n}")


@pytest.mark.parametrize("dt", ALL8)
def test_eye(dt):
    for n, m in ((1, 1), (3, 3), (2, 5), (5, 2), (4, 0), (300, 280)):
        for k in (0, 1, -1, 2, -3, 7, -7, 2 ** 62, -2 ** 63):
            got = call("eye", dt, np.full((n, m), 5, dt), iattr=(k,))
            exp = np.eye(n, m, max(min(k, m), -n), dtype=dt)   # numpy's eye cannot take huge k
            np.testing.assert_array_equal(got, exp, err_msg=f"{n} {m} {k}")


def test_errors():
    with pytest.raises(MXNetError, match="eye"):
        call("eye", np.float32, np.empty(4, np.float32), iattr=(0,))
    with pytest.raises(MXNetError, match="arange"):
        call("arange", np.float32, np.empty(4, np.float32), fattr=(1.0,))
    with pytest.raises(MXNetError, match="fill"):
        call("fill", np.float32, np.empty(4, np.float32))
