"""float16 <-> float32 in the CPU kernels (csrc/kernels/half.h, the conversions every float16
kernel uses), through mxc's cast against numpy's: every one of the 65,536 half values, and 2M
float32 bit patterns plus the rounding boundaries (ties, the subnormal range, 65504..65536)."""
import numpy as np

import mxc as mx


def _bits(a):
    return a.view(np.uint16 if a.dtype == np.float16 else np.uint32)


def test_every_half_value_widens_as_numpy():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = mx.nd.array(h, dtype="float16").astype("float32").asnumpy()
    want = h.astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(_bits(got)[~nan], _bits(want)[~nan])


def test_float32_rounds_to_half_as_numpy(rng):
    special = np.array([0.0, -0.0, 65504.0, 65519.996, 65520.0, 65535.0, 65536.0, 1e9, np.inf,
                        -np.inf, 2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 2.0 ** -25 * 1.0000001,
                        2.0 ** -26, 3 * 2.0 ** -25, 5 * 2.0 ** -25, 1 + 2.0 ** -11,
                        1 + 3 * 2.0 ** -11, 6.1e-5, 6.09e-5, np.nan], np.float32)
    # every float whose half is a tie or next to one: the half's bits, widened, plus and minus
    # half an ulp and one float ulp either side
    halves = np.arange(1 << 15, dtype=np.uint32).astype(np.uint16).view(np.float16)
    w = halves[np.isfinite(halves)].astype(np.float32)
    wb = w.view(np.uint32)
    around = np.concatenate([wb + d for d in (0, 1, 0xfff, 0x1000, 0x1001, 0x1fff)])
    pool = np.concatenate([special.view(np.uint32), around,
                           rng.integers(0, 1 << 32, 2_000_000, dtype=np.uint64).astype(np.uint32)])
    f = pool.view(np.float32)
    f = np.concatenate([f, -f])
    got = mx.nd.array(f, dtype="float32").astype("float16").asnumpy()
    with np.errstate(over="ignore", invalid="ignore"):
        want = f.astype(np.float16)
    nan = np.isnan(f)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(_bits(got)[~nan], _bits(want)[~nan])
