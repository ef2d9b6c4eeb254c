"""mxc.ndarray.serialize against files written by real MXNet 1.9.1.

The fixtures in tests/data/params/ were written by MXNet (tests/data/make_params_fixtures.py);
each dense one has a numpy .npz with the values MXNet was given. Layouts MXNet 1.9.1 can no
longer write (V1, pre-V1, unknown shapes) are built here by hand from the layout in MXNet's
src/ndarray/ndarray.cc.
"""
import os
import re
import struct

import numpy as np
import pytest

from mxc.base import MXNetError
from mxc.ndarray import serialize as ser
from mxc.ndarray.serialize import load, load_bytes, save, save_bytes

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "params")

DENSE = ["dict_dtypes", "list_mixed", "single", "scalar_v2", "np_v3", "gluon_dense"]
V2_FILES = ["dict_dtypes", "list_mixed", "single", "scalar_v2", "gluon_dense", "empty_list"]
ALL_FILES = sorted(f[:-7] for f in os.listdir(DATA) if f.endswith(".params"))

V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
DTYPES = [np.float32, np.float64, np.float16, np.uint8, np.int8, np.int32, np.int64, np.bool_]


def fixture_path(name):
    return os.path.join(DATA, name + ".params")


def fixture_bytes(name):
    with open(fixture_path(name), "rb") as f:
        return f.read()


def expected(name):
    """The values MXNet was given: a dict, or a list for files saved without names."""
    with np.load(os.path.join(DATA, name + ".npz"), allow_pickle=False) as z:
        items = [(k, z[k]) for k in z.files]
    if all(re.fullmatch(r"arr_\d+", k) for k, _ in items):
        return [v for _, v in sorted(items, key=lambda kv: int(kv[0][4:]))]
    return dict(items)


def assert_same(got, want):
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        pairs = [(got[k], want[k]) for k in want]
    else:
        assert len(got) == len(want)
        pairs = list(zip(got, want))
    for g, w in pairs:
        assert isinstance(g, np.ndarray)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        assert g.flags.writeable and g.flags.c_contiguous and g.dtype.isnative


# Hand-built pieces, from the layout in MXNet's source (independent of mxc's writer).
def header(count):
    return struct.pack("<QQQ", 0x112, 0, count)


def names_block(names):
    out = struct.pack("<Q", len(names))
    for n in names:
        raw = n.encode("utf-8")
        out += struct.pack("<Q", len(raw)) + raw
    return out


def v2_entry(arr, magic=V2, stype=0, ctx=(1, 0), flag=None, shape=None):
    flags = {np.dtype(t): i for i, t in enumerate(
        [np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64, np.bool_])}
    shape = arr.shape if shape is None else shape
    flag = flags[arr.dtype] if flag is None else flag
    return (struct.pack("<Iii", magic, stype, len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
            + struct.pack("<iii", ctx[0], ctx[1], flag)
            + arr.astype(arr.dtype.newbyteorder("<")).tobytes())


def err(buf, match, source="corrupt.params"):
    with pytest.raises(MXNetError, match=match) as info:
        load_bytes(buf, source=source)
    assert source in str(info.value)
    return str(info.value)


# ----------------------------------------------------------------------------- fixtures

@pytest.mark.parametrize("name", DENSE)
def test_load_mxnet_fixture(name):
    assert_same(load(fixture_path(name)), expected(name))
    assert_same(load_bytes(fixture_bytes(name)), expected(name))


def test_fixture_contents_cover_the_brief():
    d = expected("dict_dtypes")
    assert {v.dtype for v in d.values()} == {np.dtype(t) for t in DTYPES}
    assert d["empty_0x3"].shape == (0, 3) and d["one"].shape == (1,) and d["rank5"].ndim == 5
    assert expected("scalar_v2")[0].shape == ()
    v3 = expected("np_v3")
    assert v3["scalar"].shape == () and v3["zero_size"].shape == (0, 2, 3)


@pytest.mark.parametrize("name", [n for n in V2_FILES if n != "empty_list"])
def test_save_bytes_identical_to_mxnet(name):
    want = expected(name)
    data = want[0] if name == "single" else want    # mx.nd.save(fname, one_array)
    assert save_bytes(data) == fixture_bytes(name)
    if isinstance(want, list):
        assert save_bytes(tuple(want)) == fixture_bytes(name)


def test_v3_fixture_bytes():
    data, raw = expected("np_v3"), fixture_bytes("np_v3")
    # mx.npx.save writes V3 entries; mxc's writer produces them on request ...
    assert b"".join(ser._encode_parts(data, np_shape=True)) == raw
    # ... and otherwise the same bytes with the V2 magic, as mx.nd.save would.
    v3, v2 = struct.pack("<I", V3), struct.pack("<I", V2)
    assert raw.count(v3) == len(data)
    assert save_bytes(data) == raw.replace(v3, v2)


def test_empty_list_and_dict():
    raw = fixture_bytes("empty_list")
    assert raw == header(0) + names_block([])
    assert load(fixture_path("empty_list")) == []
    assert save_bytes([]) == raw and save_bytes(()) == raw
    assert save_bytes({}) == raw          # MXNet writes an empty dict without names
    assert load_bytes(save_bytes({})) == []


def test_scalar_v2_layout():
    # MXNet 1.9.1 (np shape off) writes a 0-d array as ndim 0 followed by ctx, flag, data.
    raw = fixture_bytes("scalar_v2")
    assert raw == header(1) + v2_entry(np.array(2.5, np.float32)) + names_block([])
    out = load_bytes(raw)[0]
    assert out.shape == () and out.dtype == np.float32 and out == 2.5


@pytest.mark.parametrize("name,index,kind",
                         [("sparse_rsp", 1, "row_sparse"), ("sparse_csr", 0, "csr")])
def test_sparse_entries_load(name, index, kind):
    # sparse entries load as SparseEntry (mxc/ndarray/sparse.py wraps them; more checks in
    # tests/ndarray/test_sparse.py) and save back byte-identically
    from mxc.ndarray.serialize import SparseEntry, save_bytes
    out = load(fixture_path(name))
    e = out[index] if isinstance(out, list) else list(out.values())[index]
    assert isinstance(e, SparseEntry) and e.stype == kind
    if kind == "row_sparse":
        np.testing.assert_array_equal(e.data, [[1, 2], [3, 4]])
        np.testing.assert_array_equal(e.aux[0], [0, 2])
    else:
        np.testing.assert_array_equal(e.aux[0], [0, 1, 2])
        np.testing.assert_array_equal(e.aux[1], [0, 1])
    assert save_bytes(out) == fixture_bytes(name)


def test_context_is_ignored():
    a = np.arange(3, dtype=np.float32)
    raw = header(1) + v2_entry(a, ctx=(2, 3)) + names_block(["gpu_param"])   # gpu(3)
    out = load_bytes(raw)
    np.testing.assert_array_equal(out["gpu_param"], a)


# ----------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype, tmp_path):
    rng = np.random.default_rng(7)
    shapes = [(), (1,), (0,), (3, 0, 2), (2, 3), (2, 1, 3, 1, 2)]
    arrays = []
    for shape in shapes:
        if dtype is np.bool_:
            arrays.append(rng.random(shape) < 0.5)
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            arrays.append(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
        else:
            arrays.append(np.asarray(rng.standard_normal(shape) * 100).astype(dtype))
    named = {f"p{i}:{a.shape}": a for i, a in enumerate(arrays)}
    for data in (arrays, named):
        raw = save_bytes(data)
        assert_same(load_bytes(raw), data)
        fname = tmp_path / "x.params"
        save(fname, data)
        assert fname.read_bytes() == raw
        assert_same(load(fname), data)
        assert_same(load(str(fname)), data)


def test_special_float_values_bitwise():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324], dtype=np.float64)
    b = load_bytes(save_bytes([a]))[0]
    assert b.tobytes() == a.tobytes()


def test_save_normalises_layout_and_byte_order():
    base = np.arange(24, dtype=np.int64).reshape(4, 6)
    views = [base.T, base[::2, 1::3], base.astype(">i8"), np.asfortranarray(base),
             base.astype(np.longlong), base.astype(np.intc),
             base.astype(">f4"), np.arange(5, dtype=">f2")]
    for v in views:
        want = np.ascontiguousarray(v, dtype=np.dtype(v.dtype.str.replace(">", "<")))
        assert save_bytes([v]) == save_bytes([want])
        got = load_bytes(save_bytes([v]))[0]
        assert got.dtype == want.dtype and got.dtype.isnative
        np.testing.assert_array_equal(got, want)


def test_unicode_names_and_duplicates():
    data = {"arg:conv0_weight": np.ones(2, np.float32),
            "gewicht_äöü_权重": np.zeros(1, np.int8)}
    assert_same(load_bytes(save_bytes(data)), data)
    # A repeated name keeps the last array, like MXNet's Python front end.
    raw = header(2) + v2_entry(np.array([1], np.int32)) + v2_entry(np.array([2], np.int32)) \
        + names_block(["w", "w"])
    out = load_bytes(raw)
    assert list(out) == ["w"] and out["w"][0] == 2


def test_load_accepts_buffers_and_copies_out():
    data = {"a": np.arange(10, dtype=np.float32), "b": np.array([True, False])}
    raw = save_bytes(data)
    for buf in (raw, bytearray(raw), memoryview(raw), np.frombuffer(raw, np.uint8).copy()):
        out = load_bytes(buf)
        assert_same(out, data)
        if isinstance(buf, (bytearray, np.ndarray)):
            buf[:] = b"\0" * len(raw) if isinstance(buf, bytearray) else 0
            assert_same(out, data)        # results do not alias the input buffer
        for v in out.values():
            assert v.flags.owndata


def test_bool_bytes_are_normalised():
    raw = bytearray(save_bytes([np.array([True, False, True])]))
    data_off = 24 + 12 + 8 + 12
    raw[data_off] = 7
    out = load_bytes(bytes(raw))[0]
    assert out.tolist() == [True, False, True]
    assert out.view(np.uint8).tolist() == [1, 0, 1]


# ----------------------------------------------------------------------------- legacy layouts

def test_legacy_v1_entry():
    # V1: magic, TShape (i32 ndim, i64 dims), ctx, type flag, data: no storage type.
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    entry = struct.pack("<Ii2q", V1, 2, 2, 3) + struct.pack("<iii", 1, 0, 1) + a.tobytes()
    none = struct.pack("<Ii", V1, 0)       # ndim 0: an uninitialised array, nothing follows
    out = load_bytes(header(2) + entry + none + names_block(["w", "empty"]))
    np.testing.assert_array_equal(out["w"], a)
    assert out["empty"] is None


def test_legacy_pre_v1_entry():
    # Before V1: no magic; the first u32 is ndim, dims are u32.
    a = np.array([[1, -2]], dtype=np.int32)
    entry = struct.pack("<3I", 2, 1, 2) + struct.pack("<iii", 2, 0, 4) + a.tobytes()
    none = struct.pack("<I", 0)
    out = load_bytes(header(2) + entry + none + names_block([]))
    np.testing.assert_array_equal(out[0], a)
    assert out[0].dtype == np.int32 and out[1] is None


def test_v3_unknown_shapes_are_none():
    unknown_ndim = struct.pack("<Iii", V3, 0, -1)
    unknown_dim = struct.pack("<Iii2q", V3, 0, 2, 3, -1)
    scalar = v2_entry(np.array(1.5, np.float64), magic=V3)
    out = load_bytes(header(3) + unknown_ndim + unknown_dim + scalar + names_block([]))
    assert out[0] is None and out[1] is None and out[2] == 1.5 and out[2].shape == ()


def test_extra_mshadow_dtypes_load():
    # Flags 8..11 (int16, uint16, uint32, uint64) exist in MXNet's type enum.
    for flag, dt in [(8, "<i2"), (9, "<u2"), (10, "<u4"), (11, "<u8")]:
        a = np.array([1, 2, 3], dtype=dt)
        entry = (struct.pack("<Iiiq", V2, 0, 1, 3) + struct.pack("<iii", 1, 0, flag)
                 + a.tobytes())
        out = load_bytes(header(1) + entry + names_block([]))[0]
        assert out.dtype == np.dtype(dt).newbyteorder("=") and out.tolist() == [1, 2, 3]


# ----------------------------------------------------------------------------- corruption

@pytest.mark.parametrize("name", ALL_FILES)
def test_every_prefix_raises_mxnet_error(name):
    raw = fixture_bytes(name)
    for cut in range(len(raw)):
        with pytest.raises(MXNetError, match=r"prefix\.params.*byte offset \d+"):
            load_bytes(raw[:cut], source="prefix.params")


def test_truncated_files_on_disk(tmp_path):
    raw = fixture_bytes("dict_dtypes")
    fname = tmp_path / "cut.params"
    for cut in range(0, len(raw), 37):
        fname.write_bytes(raw[:cut])
        with pytest.raises(MXNetError, match="truncated"):
            load(fname)
    fname.write_bytes(raw + b"\0")
    with pytest.raises(MXNetError, match=r"1 trailing bytes .*byte offset %d" % len(raw)):
        load(fname)


def test_bad_list_magic():
    raw = bytearray(fixture_bytes("list_mixed"))
    raw[0] ^= 0xFF
    err(bytes(raw), r"bad magic 0x1ed.*not an MXNet NDArray file.*byte offset 0\)")
    err(b"PK\x03\x04" + bytes(40), "bad magic")        # e.g. an .npz handed to load


def test_bad_entry_magic():
    raw = bytearray(fixture_bytes("list_mixed"))
    raw[24:28] = struct.pack("<I", 0xDEADBEEF)
    err(bytes(raw), r"entry 0 starts with 0xdeadbeef.*byte offset 24\)")


@pytest.mark.parametrize("ndim", [65, 1000, 2 ** 31 - 1, -2, -(2 ** 31)])
def test_absurd_ndim(ndim):
    raw = header(1) + struct.pack("<Iii", V2, 0, ndim) + bytes(64)
    err(raw, rf"entry 0 has ndim {ndim} .*byte offset 32\)")


def test_unknown_ndim_outside_np_semantics():
    err(header(1) + struct.pack("<Iii", V2, 0, -1) + bytes(32), r"ndim -1 .*byte offset 32")


@pytest.mark.parametrize("count", [2, 10 ** 6, 2 ** 63, 2 ** 64 - 1])
def test_huge_array_count(count):
    raw = bytearray(fixture_bytes("single"))
    raw[16:24] = struct.pack("<Q", count)
    msg = err(bytes(raw), "corrupt")
    if count > 100:
        assert f"array count {count} needs at least" in msg and "byte offset 16" in msg


def test_huge_dims_and_data():
    # Dims whose data cannot be in the file: refused before any allocation.
    raw = (header(1) + struct.pack("<Iii2q", V2, 0, 2, 2 ** 40, 2 ** 20)
           + struct.pack("<iii", 1, 0, 0))
    err(raw + names_block([]), r"entry 0 data .* needs 4611686018427387904 bytes.*byte offset 64")
    # Zero-size but with a dimension numpy cannot represent.
    raw = header(1) + struct.pack("<Iii2q", V2, 0, 2, 0, 2 ** 62) + struct.pack("<iii", 1, 0, 1)
    err(raw + names_block([]), r"too large for numpy")
    raw = header(1) + struct.pack("<Iii2q", V2, 0, 2, 3, -4) + struct.pack("<iii", 1, 0, 0)
    err(raw + names_block([]), r"negative dimension in shape \(3, -4\).*byte offset 36")


@pytest.mark.parametrize("flag,match", [(99, "unknown dtype flag 99"),
                                        (-1, "unknown dtype flag -1"), (13, "unknown dtype flag 13")])
def test_unknown_dtype_flag(flag, match):
    raw = header(1) + v2_entry(np.zeros(2, np.float32), flag=flag) + names_block([])
    err(raw, match + r".*byte offset 52\)")


def test_unknown_storage_type():
    raw = header(1) + v2_entry(np.zeros(2, np.float32), stype=5) + names_block([])
    err(raw, r"unknown storage type 5 .*byte offset 28\)")
    raw = header(1) + v2_entry(np.zeros(2, np.float32), stype=-1) + names_block([])
    err(raw, r"unknown storage type -1")


def test_names_do_not_match_arrays():
    body = header(2) + v2_entry(np.zeros(1, np.int8)) + v2_entry(np.ones(1, np.int8))
    off = len(body)
    err(body + names_block(["only_one"]), rf"1 names for 2 arrays .*byte offset {off}\)")
    err(body + names_block(["a", "b", "c"]), "3 names for 2 arrays")
    err(body + struct.pack("<Q", 2 ** 63), "names for 2 arrays")
    err(body + struct.pack("<QQ", 2, 2 ** 62) + bytes(8), r"name 0 \(4611686018427387904 bytes\)")
    err(body + struct.pack("<QQ", 2, 1), r"names count 2 needs at least 16 bytes")
    err(body + struct.pack("<QQ", 2, 1) + b"\xff" + struct.pack("<Q", 1) + b"b",
        rf"name 0 is not valid UTF-8 .*byte offset {off + 8}\)")


def test_trailing_garbage():
    raw = fixture_bytes("gluon_dense")
    err(raw + b"junk", rf"4 trailing bytes after the last name .*byte offset {len(raw)}\)")


def test_random_corruption_only_raises_mxnet_error():
    raw = fixture_bytes("dict_dtypes")
    rng = np.random.default_rng(3)
    for _ in range(300):
        buf = bytearray(raw)
        for pos in rng.integers(0, len(raw), size=rng.integers(1, 4)):
            buf[pos] = int(rng.integers(0, 256))
        try:
            load_bytes(bytes(buf))
        except MXNetError:
            pass


# ----------------------------------------------------------------------------- saving

@pytest.mark.parametrize("data,exc,match", [
    ([np.zeros(2, np.int16)], TypeError, "int16"),
    ([np.zeros(2, np.complex64)], TypeError, "complex64"),
    ([np.array(["a"], dtype=object)], TypeError, "object"),
    ([np.zeros(2, "U3")], TypeError, "cannot hold"),
    ([[1.0, 2.0]], TypeError, "entry 0 is list"),
    ({"w": 3.0}, TypeError, "entry 'w' is float"),
    ({1: np.zeros(1)}, TypeError, "got key 1"),
    ({"a\0b": np.zeros(1)}, ValueError, "NUL"),
    ({np.zeros(1).tobytes(): np.zeros(1)}, TypeError, "key"),
    (None, ValueError, "data needs to be"),
    ({"a", "b"}, ValueError, "data needs to be"),
])
def test_save_rejects_bad_data(data, exc, match):
    with pytest.raises(exc, match=match):
        save_bytes(data)


def test_failed_save_leaves_previous_file(tmp_path, monkeypatch):
    fname = tmp_path / "model.params"
    good = {"w": np.arange(4, dtype=np.float32)}
    save(fname, good)
    before = fname.read_bytes()
    with pytest.raises(TypeError):
        save(fname, {"w": np.arange(4, dtype=np.float32), "bad": object()})
    assert fname.read_bytes() == before
    # A failure during the write itself (e.g. disk full at rename time) also keeps it.
    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save(fname, {"w": np.zeros(1000, np.float64)})
    monkeypatch.undo()
    assert fname.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.params"]      # no temp file left behind
    assert_same(load(fname), good)


def test_save_replaces_and_keeps_mode(tmp_path):
    fname = tmp_path / "m.params"
    save(fname, [np.zeros(3, np.float32)])
    os.chmod(fname, 0o640)
    save(fname, [np.ones(2, np.int64)])
    assert os.stat(fname).st_mode & 0o777 == 0o640
    assert_same(load(fname), [np.ones(2, np.int64)])
    assert sorted(os.listdir(tmp_path)) == ["m.params"]


# ---- bfloat16 (type flag 12) ------------------------------------------------------------------
BF16_DATA = os.path.join(os.path.dirname(DATA), "bfloat16", "arrays.params")


def test_bfloat16_file_written_by_mxnet_loads_and_saves_byte_for_byte(tmp_path):
    import ml_dtypes
    d = load(BF16_DATA)
    assert d["x_bf16"].dtype == np.dtype(ml_dtypes.bfloat16)
    assert d["x_f32"].dtype == np.float32
    # MXNet's cast truncated x_f32 to bfloat16: the loaded bits are those top halves
    np.testing.assert_array_equal(d["x_bf16"].view(np.uint16),
                                  (d["x_f32"].view(np.uint32) >> 16).astype(np.uint16))
    out = tmp_path / "again.params"
    save(str(out), d)
    with open(BF16_DATA, "rb") as f:
        assert out.read_bytes() == f.read()


def test_bfloat16_round_trip_and_mxnet_stand_in():
    import ml_dtypes
    bf = np.dtype(ml_dtypes.bfloat16)
    x = np.array([[1.5, -0.0, np.nan], [np.inf, 3.1, 1e-40]], np.float32).astype(bf)
    raw = save_bytes({"w": x, "s": x.view(np.uint16).view([("bfloat16", np.uint16)])})
    back = load_bytes(raw)
    for k in ("w", "s"):
        assert back[k].dtype == bf
        np.testing.assert_array_equal(back[k].view(np.uint16), x.view(np.uint16))
    assert raw.count(struct.pack("<iii", 1, 0, 12)) == 2          # cpu context, flag 12
    sp = ser.SparseEntry("row_sparse", (4, 3), x, [np.array([0, 2], np.int64)])
    got = load_bytes(save_bytes({"r": sp}))["r"]
    np.testing.assert_array_equal(got.data.view(np.uint16), x.view(np.uint16))
    with pytest.raises(TypeError, match="V2"):
        save_bytes({"v": np.zeros(2, "V2")})
