"""mx.np's fallback functions (MXNet 1.9.1's mxnet.numpy.fallback: numpy on the host) against
numpy itself, and the names MXNet 1.9.1's mx.np / np.random / np.linalg have."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np

# MXNet 1.9.1's public names that mxc lacked before (dir() of the modules, set_np()); module
# names (fallback, io, utils ...) included. They must all stay.
MXNET_NP_NAMES = """NaN alltrue apply_along_axis apply_over_axes argpartition array_equiv arrayprint
blackman choose compress corrcoef correlate cov diag_indices_from digitize divmod extract fallback
fallback_linalg frexp function_base genfromtxt hamming hanning histogram2d histogram_bin_edges
histogramdd i0 in1d indices intersect1d io isin ix_ lexsort min_scalar_type mirr modf msort
nanargmax nanargmin nancumprod nancumsum nanmedian nanpercentile nanquantile npv packbits
partition piecewise poly polyadd polydiv polyfit polyint polymul polysub polyval ppmt product pv
rate real resize roots select set_printoptions setdiff1d setxor1d sometrue spacing stride_tricks
trapz tril_indices_from trim_zeros triu_indices_from union1d unpackbits unravel_index unwrap
utils vander""".split()
MXNET_RANDOM_NAMES = ("chisquare gumbel logistic lognormal multinomial multivariate_normal pareto "
                      "power rayleigh weibull").split()
MXNET_LINALG_NAMES = "cond eig eigvals fallback_linalg".split()


def test_mxnet_names_present():
    missing = [n for n in MXNET_NP_NAMES if not hasattr(np, n)]
    missing += ["random." + n for n in MXNET_RANDOM_NAMES if not hasattr(np.random, n)]
    missing += ["linalg." + n for n in MXNET_LINALG_NAMES
                if not hasattr(np.linalg, n) and n != "fallback_linalg"]
    assert not missing, missing
    assert set(np.fallback_linalg.__all__) == {"cond", "lstsq", "matrix_power", "matrix_rank",
                                               "multi_dot", "qr"}


_R = onp.random.RandomState(3)
_M = _R.uniform(-2, 2, (4, 5))
_V = _R.uniform(0, 10, 12)
_NAN = onp.array([[1.0, onp.nan, 3.0], [onp.nan, 5.0, -1.0]])
_SQ = onp.array([[2.0, 1.0], [1.0, 3.0]])

# name: (numpy reference, args, kwargs); numpy 1.x names numpy 2 dropped use numpy 2's spelling
TABLE = {
    "alltrue": (onp.all, (_M > -1,), {}),
    "apply_along_axis": (onp.apply_along_axis, (onp.sum, 1, _M), {}),
    "apply_over_axes": (onp.apply_over_axes, (onp.sum, _M, [0]), {}),
    "argpartition": (onp.argpartition, (_V, 4), {}),
    "array_equiv": (onp.array_equiv, (_M, _M), {}),
    "choose": (onp.choose, (onp.array([0, 1, 1]), [onp.arange(3), -onp.arange(3)]), {}),
    "compress": (onp.compress, (onp.array([True, False, True, True]), _M), {"axis": 0}),
    "corrcoef": (onp.corrcoef, (_M,), {}),
    "correlate": (onp.correlate, (_V, _V[:3]), {"mode": "same"}),
    "cov": (onp.cov, (_M,), {"ddof": 0}),
    "digitize": (onp.digitize, (_V, onp.array([2.0, 5.0, 7.5])), {"right": True}),
    "divmod": (onp.divmod, (_V, 3.0), {}),
    "extract": (onp.extract, (_M > 0, _M), {}),
    "frexp": (onp.frexp, (_V,), {}),
    "histogram2d": (onp.histogram2d, (_M[0], _M[1]), {"bins": 3}),
    "histogram_bin_edges": (onp.histogram_bin_edges, (_V,), {"bins": 4}),
    "histogramdd": (onp.histogramdd, (_M[:, :3],), {"bins": 2}),
    "i0": (onp.i0, (_V,), {}),
    "in1d": (lambda a, b: onp.isin(a, b).ravel(), (onp.arange(6).reshape(2, 3), [1, 4]), {}),
    "intersect1d": (onp.intersect1d, (onp.arange(6), onp.arange(3, 9)), {}),
    "isin": (onp.isin, (onp.arange(6), [1, 4]), {"invert": True}),
    "ix_": (onp.ix_, (onp.arange(2), onp.arange(3)), {}),
    "lexsort": (onp.lexsort, ((_V, onp.floor(_V / 3)),), {}),
    "modf": (onp.modf, (_M,), {}),
    "msort": (lambda a: onp.sort(a, axis=0), (_M,), {}),
    "nanargmax": (onp.nanargmax, (_NAN,), {"axis": 1}),
    "nanargmin": (onp.nanargmin, (_NAN,), {"axis": 0}),
    "nancumprod": (onp.nancumprod, (_NAN,), {"axis": 1}),
    "nancumsum": (onp.nancumsum, (_NAN,), {}),
    "nanmedian": (onp.nanmedian, (_NAN,), {"axis": 1}),
    "nanpercentile": (onp.nanpercentile, (_NAN, 30), {"axis": 1}),
    "nanquantile": (onp.nanquantile, (_NAN, [0.2, 0.9]), {}),
    "packbits": (onp.packbits, (onp.array([1, 0, 1, 1, 0, 0, 0, 1, 1], dtype=onp.uint8),), {}),
    "partition": (lambda a, k: onp.sort(onp.partition(a, k)), (_V, 5), {}),
    "piecewise": (onp.piecewise, (_V, [_V < 3, _V >= 3], [-1.0, 1.0]), {}),
    "poly": (onp.poly, (onp.array([1.0, 2.0, -3.0]),), {}),
    "polyadd": (onp.polyadd, (onp.array([1.0, 2.0]), onp.array([3.0, 4.0, 5.0])), {}),
    "polydiv": (onp.polydiv, (onp.array([1.0, 3.0, 2.0]), onp.array([1.0, 1.0])), {}),
    "polyfit": (onp.polyfit, (onp.arange(6.0), onp.arange(6.0) ** 2, 2), {}),
    "polyint": (onp.polyint, (onp.array([3.0, 2.0, 1.0]),), {}),
    "polymul": (onp.polymul, (onp.array([1.0, 2.0]), onp.array([3.0, 4.0])), {}),
    "polysub": (onp.polysub, (onp.array([1.0, 2.0]), onp.array([3.0, 4.0, 5.0])), {}),
    "real": (onp.real, (_M,), {}),
    "select": (onp.select, ([_V < 3, _V > 6], [_V, -_V]), {"default": 9.0}),
    "setdiff1d": (onp.setdiff1d, (onp.arange(8), onp.arange(3, 5)), {}),
    "setxor1d": (onp.setxor1d, (onp.arange(8), onp.arange(5, 11)), {}),
    "spacing": (onp.spacing, (_V,), {}),
    "trapz": (onp.trapezoid, (_M,), {"dx": 0.5, "axis": 0}),
    "tril_indices_from": (onp.tril_indices_from, (onp.ones((3, 3)),), {"k": -1}),
    "triu_indices_from": (onp.triu_indices_from, (onp.ones((3, 4)),), {}),
    "trim_zeros": (onp.trim_zeros, (onp.array([0.0, 0.0, 1.0, 2.0, 0.0]),), {}),
    "union1d": (onp.union1d, (onp.arange(4), onp.arange(2, 7)), {}),
    "unpackbits": (onp.unpackbits, (onp.array([[2], [7]], dtype=onp.uint8),), {"axis": 1}),
    "unwrap": (onp.unwrap, (onp.array([0.0, 3.0, 6.5, 0.2]),), {}),
    "vander": (onp.vander, (onp.array([1.0, 2.0, 3.0]), 3), {"increasing": True}),
}


def _to_mx(v):
    if isinstance(v, onp.ndarray):
        return np.array(v, dtype=v.dtype)
    if isinstance(v, (list, tuple)):
        return type(v)(_to_mx(x) for x in v)
    return v


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if isinstance(want, onp.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-9)
    else:
        assert got == want


def test_table_covers_every_host_fallback():
    host = [n for n in np.fallback.__all__
            if n not in np._op.__all__ and n not in ("mirr", "npv", "ppmt", "pv", "rate",
                                                      "min_scalar_type", "promote_types", "roots")]
    assert sorted(set(host) - set(TABLE)) == []


@pytest.mark.parametrize("name", sorted(TABLE))
def test_fallback_matches_numpy(name):
    ref, args, kwargs = TABLE[name]
    got = getattr(np, name)(*_to_mx(args), **_to_mx(kwargs))
    _same(got, ref(*args, **kwargs))


def test_fallback_results_on_input_device_and_dtype():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]])
    c = np.cov(x)
    assert isinstance(c, np.ndarray) and c.context == x.context
    assert c.dtype == onp.float64        # numpy's (and MXNet's) dtype, not float32
    assert np.min_scalar_type(10) == onp.uint8


@pytest.mark.parametrize("name", ["mirr", "npv", "ppmt", "pv", "rate"])
def test_financial_functions_raise_as_mxnet(name):
    with pytest.raises(RuntimeError, match=f"mx.np.{name}.*NEP 32"):
        getattr(np, name)(0.1, [1.0, 2.0])


def test_fallback_refused_under_autograd():
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        with pytest.raises(ValueError, match="mx.np.cov with autograd active"):
            np.cov(x)


def test_unrepresentable_result_is_refused():
    with pytest.raises(TypeError, match="mx.np.roots.*complex"):
        np.roots(np.array([1.0, 0.0, 1.0]))
    r = np.roots(np.array([1.0, -3.0, 2.0]))
    onp.testing.assert_allclose(sorted(r.asnumpy()), [1.0, 2.0])


def test_operator_versions_kept():
    # names MXNet runs on the host but mxc has as operators stay the operator versions
    assert np.fallback.argwhere is np._op.argwhere
    assert np.fallback.isclose is np._op.isclose
    assert np.fallback_linalg.qr is np.linalg.qr


def test_genfromtxt_and_printoptions(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("1,2\n3,4\n")
    a = np.genfromtxt(str(f), delimiter=",")
    assert isinstance(a, np.ndarray) and a.dtype == onp.float64
    onp.testing.assert_array_equal(a.asnumpy(), [[1, 2], [3, 4]])
    old = onp.get_printoptions()
    try:
        np.set_printoptions(precision=2)
        assert str(np.array([1.23456])) == "[1.23]"
        with pytest.raises(NotImplementedError, match="precision and threshold"):
            np.set_printoptions(linewidth=10)
    finally:
        onp.set_printoptions(**old)
    assert onp.isnan(np.NaN) and np.function_base.meshgrid is np.meshgrid
