"""npx.save / npx.load against files real MXNet 1.9.1 wrote (tests/data/npx/, values in
tests/data/npx_golden.npz; see tests/data/make_npx_golden.py): byte-identical files, loads of
MXNet's files, and MXNet's semantics checks (np shape on/off)."""
import os

import numpy as onp
import pytest

import mxc as mx
from mxc import npx, util
from mxc.base import MXNetError
from mxc.numpy.multiarray import ndarray as np_ndarray, array as np_array

HERE = os.path.join(os.path.dirname(__file__), "..", "data")
G = onp.load(os.path.join(HERE, "npx_golden.npz"))


def fixture(name):
    return os.path.join(HERE, "npx", name)


def values(prefix):
    keys = [k for k in G.files if k.startswith(prefix)]
    return keys, [G[k] for k in keys]


def list_values():
    n = len([k for k in G.files if k.startswith("save_list_")])
    return [G[f"save_list_{i}"] for i in range(n)]


DICT_KEYS = ["weight", "scalar", "empty", "bias"]     # the order MXNet saved them in


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_save_list_bytes_identical(np_mode, tmp_path):
    vals = list_values()
    assert any(v.ndim == 0 for v in vals) and any(v.size == 0 for v in vals)
    out = tmp_path / "list.params"
    npx.save(str(out), [np_array(v, dtype=v.dtype) for v in vals])
    assert read(out) == read(fixture("list.params"))


def test_save_dict_and_single_bytes_identical(np_mode, tmp_path):
    d = {k: np_array(G[f"save_dict_{k}"], dtype=G[f"save_dict_{k}"].dtype) for k in DICT_KEYS}
    npx.save(str(tmp_path / "d.params"), d)
    assert read(tmp_path / "d.params") == read(fixture("dict.params"))
    s = G["save_single_0"]
    npx.save(str(tmp_path / "s.params"), np_array(s, dtype=s.dtype))
    assert read(tmp_path / "s.params") == read(fixture("single.params"))
    npx.save(str(tmp_path / "e.params"), {})
    assert read(tmp_path / "e.params") == read(fixture("empty_dict.params"))


def test_load_mxnet_files(np_mode):
    got = npx.load(fixture("list.params"))
    want = list_values()
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is np_ndarray
        assert g.shape == w.shape and g.asnumpy().dtype == w.dtype
        onp.testing.assert_array_equal(g.asnumpy(), w)
    d = npx.load(fixture("dict.params"))
    assert list(d) == DICT_KEYS
    for k in DICT_KEYS:
        onp.testing.assert_array_equal(d[k].asnumpy(), G[f"save_dict_{k}"])
    assert d["scalar"].shape == () and d["empty"].shape == (0,)
    (single,) = npx.load(fixture("single.params"))
    onp.testing.assert_array_equal(single.asnumpy(), G["save_single_0"])


def test_nd_save_under_np_shape_matches_mxnet(tmp_path):
    vals = [G["save_nd_0"], G["save_nd_1"]]
    with mx.np_shape(True):
        mx.nd.save(str(tmp_path / "a.params"), [mx.nd.array(v) for v in vals])
    assert read(tmp_path / "a.params") == read(fixture("nd_np_shape.params"))
    # and MXNet's own file loads with mx.nd.load under np shape, not without
    with mx.np_shape(True):
        back = mx.nd.load(fixture("nd_np_shape.params"))
    assert [b.shape for b in back] == [(2, 3), (0, 2)]
    with pytest.raises(MXNetError, match="np shape semantics"):
        mx.nd.load(fixture("nd_np_shape.params"))


def test_semantics_checks(tmp_path):
    # npx.save/load need numpy semantics (ValueError, as MXNet)
    with pytest.raises(ValueError, match="legacy mode"):
        npx.load(fixture("list.params"))
    # a V3 file outside np shape: MXNetError naming the file and the fix
    with pytest.raises(MXNetError, match="saved in np shape semantics"):
        mx.nd.load(fixture("list.params"))
    util.set_np()
    try:
        with pytest.raises(ValueError, match="legacy mode"):
            with mx.np_array(False):
                npx.save(str(tmp_path / "x.params"), [np_array(onp.ones(2))])
        # a legacy (V2) file in np mode: MXNetError, as MXNet
        with pytest.raises(MXNetError, match="not saved in np shape"):
            npx.load(fixture("nd_legacy.params"))
        with pytest.raises(TypeError, match="Only accepts"):
            npx.save(str(tmp_path / "x.params"), [mx.nd.ones((2,))])
        with pytest.raises(TypeError, match="Only accepts"):
            npx.save(str(tmp_path / "x.params"), {1: np_array(onp.ones(2))})
        with pytest.raises(ValueError, match="data needs to"):
            npx.save(str(tmp_path / "x.params"), (np_array(onp.ones(2)),))
        with pytest.raises(TypeError, match="string"):
            npx.load(123)
        assert not os.path.exists(tmp_path / "x.params")
    finally:
        util.reset_np()
    legacy = mx.nd.load(fixture("nd_legacy.params"))
    assert sorted(legacy) == ["a", "b"] and legacy["b"].shape == (0, 2)


def test_round_trip(np_mode, tmp_path, rng):
    d = {"x": np_array(rng.normal(size=(3, 0, 2)).astype("float32")),
         "s": np_array(onp.array(5, dtype="int64"), dtype="int64"),
         "h": np_array(rng.normal(size=(4,)).astype("float16"), dtype="float16")}
    npx.save(str(tmp_path / "r.params"), d)
    back = npx.load(str(tmp_path / "r.params"))
    for k in d:
        assert back[k].shape == d[k].shape and back[k].dtype == d[k].dtype
        onp.testing.assert_array_equal(back[k].asnumpy(), d[k].asnumpy())
