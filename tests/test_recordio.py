"""mxc.recordio against files written by real MXNet 1.9.1 (tests/data/recordio, made by
tests/data/make_recordio_fixtures.py) and against an independent pure-Python framer."""
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mxc import recordio
from mxc.base import MXNetError
from mxc.recordio import _rio

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recordio")
MAGIC = 0xCED7230A
MAGIC_B = struct.pack("<I", MAGIC)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fixture_records():
    with open(os.path.join(DATA, "basic_expected.json")) as f:
        return [(e["key"], bytes.fromhex(e["hex"])) for e in json.load(f)]


def ref_read_all(path):
    """dmlc::RecordIOReader::NextRecord, written plainly: the independent reference."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        rec = b""
        while True:
            magic, lrec = struct.unpack_from("<II", data, pos)
            assert magic == MAGIC
            cflag, n = lrec >> 29, lrec & ((1 << 29) - 1)
            rec += data[pos + 8:pos + 8 + n]
            pos += 8 + ((n + 3) & ~3)
            if cflag in (0, 3):
                break
            rec += MAGIC_B
        out.append(rec)
    return out


def read_all(r):
    out = []
    while True:
        x = r.read()
        if x is None:
            return out
        out.append(x)


def raw_headers(path):
    """(offset, cflag, length) of every part in the file."""
    with open(path, "rb") as f:
        data = f.read()
    pos, parts = 0, []
    while pos < len(data):
        magic, lrec = struct.unpack_from("<II", data, pos)
        parts.append((pos, lrec >> 29, lrec & ((1 << 29) - 1)))
        pos += 8 + (((lrec & ((1 << 29) - 1)) + 3) & ~3)
    return parts


# ------------------------------------------------------------------ MXNet fixtures, both ways

def test_read_mxnet_file_sequentially():
    expected = [s for _, s in fixture_records()]
    r = recordio.MXRecordIO(os.path.join(DATA, "basic.rec"), "r")
    assert read_all(r) == expected
    assert r.read() is None          # the end stays the end
    r.reset()
    assert r.read() == expected[0]
    r.close()


def test_fixture_contains_split_records():
    # record 1 has the magic at aligned offsets 4, 12, 16: MXNet wrote four parts, flags 1,2,2,3
    parts = raw_headers(os.path.join(DATA, "basic.rec"))
    flags = [c for _, c, _ in parts]
    assert flags[1:5] == [1, 2, 2, 3]
    assert [n for _, _, n in parts[1:5]] == [4, 4, 0, 4]


def test_read_idx_mxnet_file():
    recs = fixture_records()
    r = recordio.MXIndexedRecordIO(os.path.join(DATA, "basic.idx"), os.path.join(DATA, "basic.rec"), "r")
    assert r.keys == [k for k, _ in recs]
    with open(os.path.join(DATA, "basic.idx")) as f:
        assert r.idx == {int(a): int(b) for a, b in (line.split("\t") for line in f)}
    for k in [5, 1, 8, 0, 3, 7, 2, 6, 4, 1]:
        assert r.read_idx(k) == dict(recs)[k]
    # MXNet semantics: after read_idx, read() continues with the following record
    r.read_idx(2)
    assert r.read() == dict(recs)[3]
    r.seek(6)
    assert r.read() == dict(recs)[6]
    assert r.read() == dict(recs)[7]
    assert r.read() == dict(recs)[8]   # third sequential read: prefetching resumed here
    assert r.read() is None
    r.close()


def test_write_is_byte_identical_to_mxnet(tmp_path):
    w = recordio.MXIndexedRecordIO(str(tmp_path / "a.idx"), str(tmp_path / "a.rec"), "w")
    for k, s in fixture_records():
        w.write_idx(k, s)
    w.close()
    for ext in (".rec", ".idx"):
        with open(tmp_path / ("a" + ext), "rb") as a, open(os.path.join(DATA, "basic" + ext), "rb") as b:
            assert a.read() == b.read()


def test_scan_offsets_matches_mxnet_index():
    with open(os.path.join(DATA, "basic.idx")) as f:
        offsets = [int(line.split("\t")[1]) for line in f]
    np.testing.assert_array_equal(recordio.scan_offsets(os.path.join(DATA, "basic.rec")), offsets)


def test_unpack_mxnet_records():
    recs = dict(fixture_records())
    h, s = recordio.unpack(recs[0])
    assert h == recordio.IRHeader(0, 1.5, 7, 0) and s == b"plain payload"
    h, s = recordio.unpack(recs[2])
    assert h.flag == 3 and (h.id, h.id2) == (9, 0) and s == b"multi-label"
    np.testing.assert_array_equal(h.label, np.array([1.0, 2.0, 3.5], np.float32))
    assert recordio.pack(recordio.IRHeader(0, 1.5, 7, 0), b"plain payload") == recs[0]
    assert recordio.pack(recordio.IRHeader(0, [1.0, 2.0, 3.5], 9, 0), b"multi-label") == recs[2]
    # a numpy scalar label is a Number: flag forced to 0, as in MXNet
    assert recordio.pack((5, np.float32(1.5), 7, 0), b"plain payload") == recs[0]
    with pytest.raises(ValueError, match="shorter than the 24-byte IRHeader"):
        recordio.unpack(b"short")


def test_pack_img_unpack_img_match_mxnet():
    img = np.load(os.path.join(DATA, "img_src.npy"))
    r = recordio.MXIndexedRecordIO(os.path.join(DATA, "img.idx"), os.path.join(DATA, "img.rec"), "r")
    rec = r.read_idx(0)
    r.close()
    # Pillow's JPEG encoder with the same settings produces OpenCV's bytes exactly
    assert recordio.pack_img(recordio.IRHeader(0, 3.0, 11, 0), img, quality=90) == rec
    for flag, tag in ((-1, "m1"), (1, "1"), (0, "0")):
        header, dec = recordio.unpack_img(rec, flag)
        ref = np.load(os.path.join(DATA, "img_dec_%s.npy" % tag))
        assert header == recordio.IRHeader(0, 3.0, 11, 0)
        assert dec.dtype == ref.dtype and dec.shape == ref.shape
        np.testing.assert_array_equal(dec, ref)   # BGR order, like cv2.imdecode
    # BGR in, BGR out: the decoded image is close to the source in the same channel order
    _, dec = recordio.unpack_img(rec, 1)
    assert np.abs(dec.astype(int) - img).mean() < 4


def test_png_gray_record_from_mxnet():
    gray = np.load(os.path.join(DATA, "img_gray_src.npy"))
    r = recordio.MXRecordIO(os.path.join(DATA, "img_png.rec"), "r")
    header, img = recordio.unpack_img(r.read())
    r.close()
    assert header.flag == 2 and header.id == 5
    np.testing.assert_array_equal(header.label, [1, 2])
    np.testing.assert_array_equal(img, gray)      # PNG is lossless
    s = recordio.pack_img(recordio.IRHeader(0, [1, 2], 5, 0), gray, quality=3, img_fmt=".png")
    np.testing.assert_array_equal(recordio.unpack_img(s, -1)[1], gray)


def test_pack_img_bgr_png_roundtrip_and_errors(rng):
    img = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    s = recordio.pack_img(recordio.IRHeader(0, 1, 2, 0), img, img_fmt=".png")
    np.testing.assert_array_equal(recordio.unpack_img(s, 1)[1], img)
    gray = recordio.unpack_img(s, 0)[1]
    assert gray.shape == (5, 7)
    # luma of the BGR image, as OpenCV computes it (within rounding)
    luma = img[:, :, 2] * 0.299 + img[:, :, 1] * 0.587 + img[:, :, 0] * 0.114
    assert np.abs(gray - luma).max() <= 1
    bgra = np.concatenate([img, rng.integers(0, 256, size=(5, 7, 1), dtype=np.uint8)], axis=2)
    s = recordio.pack_img(recordio.IRHeader(0, 1, 2, 0), bgra, img_fmt=".png")
    np.testing.assert_array_equal(recordio.unpack_img(s, -1)[1], bgra)
    with pytest.raises(ValueError, match="cannot decode image"):
        recordio.unpack_img(recordio.pack(recordio.IRHeader(0, 1, 2, 0), b"not an image"))
    with pytest.raises(ValueError, match="unsupported image format"):
        recordio.pack_img(recordio.IRHeader(0, 1, 2, 0), img, img_fmt=".bmp")


# ------------------------------------------------------------------ round trips on many records

def random_payloads(rng, n):
    out = []
    for i in range(n):
        size = int(rng.choice([0, 1, 3, 4, 7, 64, 1000, 5000]))
        b = bytearray(rng.integers(0, 256, size=size, dtype=np.uint8).tobytes())
        for _ in range(int(rng.integers(0, 3))):      # plant magics, aligned or not
            if size >= 4:
                at = int(rng.integers(0, size - 3))
                b[at:at + 4] = MAGIC_B
        out.append(bytes(b))
    return out


def test_roundtrip_against_reference(tmp_path, rng):
    payloads = random_payloads(rng, 1500)
    payloads.insert(700, bytes(rng.integers(0, 256, size=300_000, dtype=np.uint8)))  # > chunk
    path = str(tmp_path / "r.rec")
    w = recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), path, "w")
    for i, p in enumerate(payloads):
        w.write_idx(i, p)
    w.close()
    assert ref_read_all(path) == payloads
    # the prefetch thread (files that cannot be mapped) with small batches: records straddle
    # batch ends, one record is larger than the buffer
    r = _rio.RecordReader(path, chunk=4096, mapped=False)
    assert read_all(r) == payloads
    r.close()
    with recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), path, "r") as r:
        assert read_all(r) == payloads
        order = rng.permutation(len(payloads))
        for k in order[:300]:
            assert r.read_idx(int(k)) == payloads[k]
    offsets = recordio.scan_offsets(path)
    assert len(offsets) == len(payloads)


def test_string_keys_and_tell(tmp_path):
    w = recordio.MXIndexedRecordIO(str(tmp_path / "s.idx"), str(tmp_path / "s.rec"), "w", key_type=str)
    assert w.tell() == 0
    for i, k in enumerate(["a", "b", "c"]):
        w.write_idx(k, b"record_%d" % i)
        assert w.tell() == 16 * (i + 1)       # 8-byte header + 8-byte payload
    w.close()
    r = recordio.MXIndexedRecordIO(str(tmp_path / "s.idx"), str(tmp_path / "s.rec"), "r", key_type=str)
    assert r.keys == ["a", "b", "c"] and r.read_idx("b") == b"record_1"
    with pytest.raises(KeyError):
        r.read_idx("zz")
    r.close()


def test_writer_reset_truncates_and_flags(tmp_path):
    path = str(tmp_path / "w.rec")
    w = recordio.MXRecordIO(path, "w")
    w.write(b"abc")
    w.reset()
    w.write(bytearray(b"xy"))
    w.write(memoryview(b"zz"))
    w.close()
    assert ref_read_all(path) == [b"xy", b"zz"]
    with pytest.raises(ValueError, match="Invalid flag"):
        recordio.MXRecordIO(path, "a")
    r = recordio.MXRecordIO(path, "r")
    r.close()
    r.close()                                  # idempotent
    with pytest.raises(MXNetError, match="closed"):
        r.read()


def test_record_size_limit(tmp_path):
    w = recordio.MXRecordIO(str(tmp_path / "big.rec"), "w")
    huge = np.empty(1 << 29, dtype=np.uint8)     # never touched, so never really allocated
    with pytest.raises(MXNetError, match="smaller than 2\\*\\*29"):
        w.write(huge)
    w.close()


def test_pickle_reopens(tmp_path):
    path = os.path.join(DATA, "basic.rec")
    expected = [s for _, s in fixture_records()]
    r = recordio.MXRecordIO(path, "r")
    r.read()
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.is_open and r2.read() == expected[0]   # reopened, from the start (as MXNet)
    closed = recordio.MXRecordIO(path, "r")
    closed.close()
    assert not pickle.loads(pickle.dumps(closed)).is_open
    ir = recordio.MXIndexedRecordIO(os.path.join(DATA, "basic.idx"), path, "r")
    ir2 = pickle.loads(pickle.dumps(ir))
    assert ir2.read_idx(8) == expected[8] and ir2.keys == ir.keys


# ------------------------------------------------------------------ bad input

def write_recs(path, payloads):
    w = recordio.MXRecordIO(path, "w")
    for p in payloads:
        w.write(p)
    w.close()


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_wrong_magic(tmp_path):
    path = str(tmp_path / "bad.rec")
    with open(path, "wb") as f:
        f.write(b"GIF89a not a record file at all")
    with pytest.raises(MXNetError, match=r"bad\.rec: invalid RecordIO magic 0x38464947 at byte offset 0"):
        recordio.MXRecordIO(path, "r").read()
    write_recs(path, [b"a" * 8, b"b" * 8, b"c" * 8])
    patch(path, 32, b"\0\0\0\0")
    r = recordio.MXRecordIO(path, "r")
    assert r.read() == b"a" * 8 and r.read() == b"b" * 8
    for _ in range(2):                       # the error repeats; no endless loop, no skipping
        with pytest.raises(MXNetError, match="bad.rec: invalid RecordIO magic 0x00000000 at byte offset 32"):
            r.read()
    with pytest.raises(MXNetError, match="at byte offset 32"):
        recordio.scan_offsets(path)


def test_length_past_eof(tmp_path):
    path = str(tmp_path / "len.rec")
    write_recs(path, [b"a" * 8, b"b" * 8])
    patch(path, 20, struct.pack("<I", 100_000_000))    # length field of record 2
    r = recordio.MXRecordIO(path, "r")
    assert r.read() == b"a" * 8
    with pytest.raises(MXNetError, match=r"len\.rec: record at byte offset 16 needs 100000008 bytes "
                                         r"but only 16 remain"):
        r.read()
    r.close()
    w = recordio.MXIndexedRecordIO(str(tmp_path / "len.idx"), str(tmp_path / "l2.rec"), "w")
    w.write_idx(0, b"a" * 8)
    w.write_idx(1, b"b" * 8)
    w.close()
    patch(str(tmp_path / "l2.rec"), 20, struct.pack("<I", 100_000_000))
    ir = recordio.MXIndexedRecordIO(str(tmp_path / "len.idx"), str(tmp_path / "l2.rec"), "r")
    with pytest.raises(MXNetError, match="byte offset 16 needs 100000008"):
        ir.read_idx(1)
    with pytest.raises(MXNetError, match="byte offset 16"):
        recordio.scan_offsets(str(tmp_path / "l2.rec"))


def test_truncated_last_record_and_header(tmp_path):
    path = str(tmp_path / "t.rec")
    write_recs(path, [b"x" * 100, b"y" * 100, b"z" * 100])
    size = os.path.getsize(path)
    os.truncate(path, size - 10)
    r = recordio.MXRecordIO(path, "r")
    assert read_all_until_error(r) == [b"x" * 100, b"y" * 100]
    with pytest.raises(MXNetError, match=r"t\.rec: record at byte offset 216 needs 108 bytes but only 98 remain"):
        r.read()
    write_recs(path, [b"x" * 100])
    with open(path, "ab") as f:
        f.write(MAGIC_B + b"\x01")             # 5 bytes of a header
    r = recordio.MXRecordIO(path, "r")
    assert r.read() == b"x" * 100
    with pytest.raises(MXNetError, match="truncated record header at byte offset 108"):
        r.read()


def read_all_until_error(r):
    out = []
    try:
        while True:
            x = r.read()
            if x is None:
                return out
            out.append(x)
    except MXNetError:
        return out


def test_bad_continuation_flag(tmp_path):
    path = str(tmp_path / "f.rec")
    write_recs(path, [b"a" * 8, b"b" * 8])
    patch(path, 20, struct.pack("<I", (2 << 29) | 8))
    r = recordio.MXRecordIO(path, "r")
    assert r.read() == b"a" * 8
    with pytest.raises(MXNetError, match="byte offset 16 has continuation flag 2"):
        r.read()


def test_missing_and_inconsistent_index(tmp_path):
    rec = str(tmp_path / "i.rec")
    idx = str(tmp_path / "i.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(3):
        w.write_idx(i, b"p%d" % i)
    w.close()
    # MXNet opens the index with Python's open(): FileNotFoundError, naming the index
    with pytest.raises(FileNotFoundError, match="cannot open index file.*nope.idx"):
        recordio.MXIndexedRecordIO(str(tmp_path / "nope.idx"), rec, "r")
    with pytest.raises(MXNetError, match="cannot open RecordIO file .*nope.rec"):
        recordio.MXRecordIO(str(tmp_path / "nope.rec"), "r")
    with open(idx, "w") as f:
        f.write("0\t0\n1\t4\n")                 # 4 is inside record 0
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.read_idx(0) == b"p0"
    with pytest.raises(MXNetError, match=r"i\.rec: invalid RecordIO magic .* at byte offset 4"):
        r.read_idx(1)
    with open(idx, "w") as f:
        f.write("0\t0\n1\t9999\n")
    with pytest.raises(MXNetError, match=r"i\.idx, line 2: key 1 points at byte offset 9999, outside"):
        recordio.MXIndexedRecordIO(idx, rec, "r")
    with open(idx, "w") as f:
        f.write("0\t0\nbroken line\n")
    with pytest.raises(MXNetError, match=r"i\.idx, line 2: malformed index entry"):
        recordio.MXIndexedRecordIO(idx, rec, "r")


def _kill_midway(code):
    """Run `code` in a child that SIGKILLs itself when it reaches KILL (mid-write)."""
    code = textwrap.dedent(code).replace("KILL", "os.kill(os.getpid(), signal.SIGKILL)")
    p = subprocess.run([sys.executable, "-c", "import os, signal\n" + code], cwd=ROOT,
                       timeout=60)
    assert p.returncode == -9


def _temporaries(directory):
    return sorted(n for n in os.listdir(directory) if ".tmp-" in n)


def test_killed_writer_leaves_the_old_database_whole(tmp_path):
    """A packer killed midway (after 50 of 100 records) leaves the previous .rec/.idx exactly as
    they were (MXNet truncates the .rec at open: a cut file beside a stale index); the next
    writer of the same files removes the dead one's temporaries."""
    rec, idx = str(tmp_path / "k.rec"), str(tmp_path / "k.idx")
    old = [b"old %d " % i * 10 for i in range(7)]
    with recordio.MXIndexedRecordIO(idx, rec, "w") as w:
        for i, r in enumerate(old):
            w.write_idx(i, r)
    before = (open(rec, "rb").read(), open(idx, "rb").read())
    _kill_midway(f"""
        from mxc import recordio
        w = recordio.MXIndexedRecordIO({idx!r}, {rec!r}, "w")
        for i in range(100):
            w.write_idx(i, b"new %d " % i * 20)
            if i == 49:
                KILL
    """)
    assert (open(rec, "rb").read(), open(idx, "rb").read()) == before
    left = _temporaries(tmp_path)
    assert len(left) == 2 and left[0].startswith(".k.idx.tmp-") and left[1].startswith(".k.rec.tmp-")
    assert os.path.getsize(tmp_path / left[1]) >= 50 * 140     # the dead writer's 50 records
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert [r.read_idx(i) for i in range(7)] == old
    r.close()
    w = recordio.MXIndexedRecordIO(idx, rec, "w")     # a new writer of the same files
    assert len(_temporaries(tmp_path)) == 2           # its own two, the dead ones are gone
    assert not set(_temporaries(tmp_path)) & set(left)
    w.write_idx(5, b"five")
    w.close()
    assert _temporaries(tmp_path) == []
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.keys == [5] and r.read_idx(5) == b"five"


def test_killed_plain_writer_leaves_the_old_file(tmp_path):
    rec = str(tmp_path / "p.rec")
    write_recs(rec, [b"a", b"bb"])
    _kill_midway(f"""
        from mxc import recordio
        w = recordio.MXRecordIO({rec!r}, "w")
        w.write(b"partial")
        KILL
    """)
    assert read_all(recordio.MXRecordIO(rec, "r")) == [b"a", b"bb"]
    assert len(_temporaries(tmp_path)) == 1


def test_writer_files_appear_at_close_and_a_failed_block_leaves_none(tmp_path):
    rec, idx = str(tmp_path / "c.rec"), str(tmp_path / "c.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(0, b"x")
    assert not os.path.exists(rec) and not os.path.exists(idx)
    w.close()
    assert recordio.MXIndexedRecordIO(idx, rec, "r").read_idx(0) == b"x"
    with pytest.raises(KeyError):
        with recordio.MXIndexedRecordIO(idx, rec, "w") as w:
            w.write_idx(1, b"y")
            raise KeyError("stop")
    assert recordio.MXIndexedRecordIO(idx, rec, "r").read_idx(0) == b"x"
    assert _temporaries(tmp_path) == []


def test_index_that_is_not_utf8_names_file_and_line(tmp_path):
    rec, idx = str(tmp_path / "u.rec"), str(tmp_path / "u.idx")
    with recordio.MXIndexedRecordIO(idx, rec, "w") as w:
        w.write_idx(0, b"x")
        w.write_idx(1, b"y")
    with open(idx, "ab") as f:
        f.write(b"2\t\xff\xfe\n")
    with pytest.raises(MXNetError, match=r"u\.idx, line 3: not text \(byte 11 is not UTF-8\)"):
        recordio.MXIndexedRecordIO(idx, rec, "r")


# ------------------------------------------------------------------ the prefetch thread

def test_prefetch_stops_when_abandoned(tmp_path):
    path = str(tmp_path / "many.rec")
    write_recs(path, [b"%06d" % i * 200 for i in range(20000)])   # ~24 MB: the ring fills up
    code = textwrap.dedent(f"""
        import gc, sys
        from mxc import recordio
        from mxc.recordio import _rio
        a = recordio.MXRecordIO({path!r}, "r")
        assert a.read() == b"000000" * 200
        b = _rio.RecordReader({path!r}, chunk=4096, mapped=False)
        b.read()
        c = recordio.MXRecordIO({path!r}, "r")
        c.read()
        c.close()                       # explicit: joins the thread
        d = recordio.MXRecordIO({path!r}, "r")
        d.read()
        del d
        gc.collect()                    # collected: joins the thread
        mapped = []                     # past the first window: the page-table helper runs
        for i in range(3):
            m = _rio.RecordReader({path!r})
            for _ in range(15000):
                m.read()
            mapped.append(m)
        mapped.pop().close()
        del mapped[0]
        gc.collect()
        print("ok")
        # a, b and a mapped reader are still open (threads alive) when the interpreter exits
    """)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child(tmp_path):
    path = os.path.join(DATA, "basic.rec")
    expected = [s for _, s in fixture_records()]
    code = textwrap.dedent(f"""
        import os
        from mxc import recordio
        r = recordio.MXRecordIO({path!r}, "r")
        r.read()
        ir = recordio.MXIndexedRecordIO({os.path.join(DATA, "basic.idx")!r}, {path!r}, "r")
        ir.read()
        pid = os.fork()
        if pid == 0:
            try:
                r.read()
                os._exit(3)
            except RuntimeError as e:
                assert "multiple processes" in str(e)
            # read_idx reopens in the child, as MXNet's does
            os._exit(0 if ir.read_idx(8) == {expected[8]!r} else 4)
        _, status = os.waitpid(pid, 0)
        assert r.read() == {expected[1]!r}
        print(os.waitstatus_to_exitcode(status))
    """)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "0"


def test_prefetch_reader_threads(tmp_path):
    # several readers consumed from several Python threads at once
    import threading
    path = str(tmp_path / "t.rec")
    payloads = [b"%05d" % i * 50 for i in range(3000)]
    write_recs(path, payloads)
    results = [None] * 4

    def work(i):
        r = _rio.RecordReader(path, chunk=8192, mapped=(i % 2 == 0))
        results[i] = read_all(r)
        r.close()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert all(res == payloads for res in results)


def test_copy_of_fixture_dir_is_small():
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(DATA) for f in fs)
    assert total < 50_000


def test_shared_reader_across_threads(tmp_path):
    # read_idx from many threads at once; read() from several threads never loses, duplicates or
    # crashes: a thread that collides gets a clear MXNetError and may retry
    import threading
    rec, idx = str(tmp_path / "m.rec"), str(tmp_path / "m.idx")
    payloads = [b"%05d" % i * (1 + i % 300) for i in range(4000)]
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, p in enumerate(payloads):
        w.write_idx(i, p)
    w.close()
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    bad = []

    def random_reads(seed):
        g = np.random.default_rng(seed)
        keys = g.integers(0, len(payloads), size=2000)
        if seed % 2:                # whole batches, as ImageRecordIter reads them
            for i in range(0, len(keys), 128):
                got = r.handle.read_many([r.idx[int(k)] for k in keys[i:i + 128]])
                bad.extend(int(k) for k, x in zip(keys[i:i + 128], got) if x != payloads[k])
            return
        for k in keys:
            if r.read_idx(int(k)) != payloads[k]:
                bad.append(int(k))

    ts = [threading.Thread(target=random_reads, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert bad == []
    r.close()

    seq = recordio.MXRecordIO(rec, "r")
    got = [[] for _ in range(3)]
    collisions = []

    def drain(i):
        while True:
            try:
                x = seq.read()
            except MXNetError as exc:
                assert "two threads" in str(exc)
                collisions.append(1)
                continue
            if x is None:
                return
            got[i].append(x)

    ts = [threading.Thread(target=drain, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert sorted(sum(got, [])) == sorted(payloads)
    seq.close()


# ------------------------------------------------------------------ reading through the mapping

WINDOW = 16 << 20        # _rio.MAP_WINDOW: records straddling it must come out whole


def test_mapped_reads_cross_windows_against_reference(tmp_path, rng):
    # small records with planted magics (split records), records copied without the GIL
    # (>= 256 KiB), one larger than the window, and records straddling the window's end
    payloads = random_payloads(rng, 800)
    payloads += [bytes(rng.integers(0, 256, size=300_000, dtype=np.uint8)) for _ in range(3)]
    big = bytearray(rng.integers(0, 256, size=WINDOW + 12345, dtype=np.uint8).tobytes())
    big[WINDOW // 2:WINDOW // 2 + 4] = MAGIC_B          # a split record larger than the window
    payloads.append(bytes(big))
    payloads += random_payloads(rng, 800)
    rec, idx = str(tmp_path / "w.rec"), str(tmp_path / "w.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, p in enumerate(payloads):
        w.write_idx(i, p)
    w.close()
    assert ref_read_all(rec) == payloads            # the pure-Python parse of the same bytes
    offsets = recordio.scan_offsets(rec)
    ends = list(offsets[1:]) + [os.path.getsize(rec)]
    assert any(o < WINDOW < e for o, e in zip(offsets, ends))
    assert any(o < 2 * WINDOW < e for o, e in zip(offsets, ends)) or os.path.getsize(rec) < 2 * WINDOW
    for mapped in (True, False):
        r = _rio.RecordReader(rec, mapped=mapped)
        assert read_all(r) == payloads
        assert r.read() is None
        r.close()
    with recordio.MXIndexedRecordIO(idx, rec, "r") as r:
        order = [int(k) for k in rng.permutation(len(payloads))]
        assert [r.read_idx(k) for k in order] == [payloads[k] for k in order]
        got = r.handle.read_many(offsets[order])
        assert got == [payloads[k] for k in order]
        assert r.handle.read_many([]) == []


def test_seek_tell_reset_read_many(tmp_path):
    payloads = [b"%04d" % i * (1 + i % 7) for i in range(50)]
    rec, idx = str(tmp_path / "s.rec"), str(tmp_path / "s.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, p in enumerate(payloads):
        w.write_idx(i, p)
    w.close()
    offsets = [o for o, _, _ in raw_headers(rec)]       # no split records here
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    h = r.handle
    assert [r.read() for _ in range(3)] == payloads[:3]
    assert h.tell() == offsets[3]
    r.seek(10)
    assert h.tell() == offsets[10]
    assert r.read() == payloads[10] and r.read() == payloads[11]
    assert r.read_idx(5) == payloads[5]
    assert r.read() == payloads[6]                      # read_idx moves read() after it
    assert h.read_many([offsets[40], offsets[1]]) == [payloads[40], payloads[1]]
    assert r.read() == payloads[7]                      # read_many does not move it
    r.seek(49)
    assert r.read() == payloads[49] and r.read() is None and r.read() is None
    r.seek(0)
    assert read_all(r) == payloads
    r.reset()                                           # a new native reader
    assert r.read() == payloads[0]
    h = r.handle
    h.seek(offsets[30])
    assert h.read() == payloads[30]
    with pytest.raises(MXNetError, match=r"s\.rec: invalid RecordIO magic .* at byte offset 3"):
        h.read_many([offsets[2], 3])
    with pytest.raises(MXNetError, match="at or past the end of the file"):
        h.read_many([os.path.getsize(rec)])
    r.close()


def corruptions(tmp_path):
    """(name, path) of damaged files: wrong magic, length past the end, bad flag, cut tail."""
    out = []
    for name, fix in [("magic", lambda p: patch(p, 32, b"\0\0\0\0")),
                      ("length", lambda p: patch(p, 20, struct.pack("<I", 100_000_000))),
                      ("flag", lambda p: patch(p, 20, struct.pack("<I", (2 << 29) | 8))),
                      ("cut", lambda p: os.truncate(p, os.path.getsize(p) - 3))]:
        path = str(tmp_path / f"{name}.rec")
        write_recs(path, [b"a" * 8, b"b" * 8, b"c" * 8])
        fix(path)
        out.append((name, path))
    return out


def test_mapped_and_pread_paths_raise_the_same_errors(tmp_path):
    for name, path in corruptions(tmp_path):
        msgs = []
        for mapped in (True, False):
            r = _rio.RecordReader(path, mapped=mapped)
            good = read_all_until_error(r)
            with pytest.raises(MXNetError) as e1:
                r.read()
            with pytest.raises(MXNetError) as e2:      # the error repeats
                r.read()
            assert str(e1.value) == str(e2.value)
            msgs.append((good, str(e1.value)))
            r.close()
        assert msgs[0] == msgs[1], name
        good, msg = msgs[0]
        assert msg.startswith(path + ": ") and "byte offset" in msg
        bad_at = 16 * (len(good))
        r = _rio.RecordReader(path)
        with pytest.raises(MXNetError) as e3:
            r.read_many([0, bad_at])
        assert str(e3.value) == msg
        with pytest.raises(MXNetError) as e4:
            r.read_at(bad_at)
        assert str(e4.value) == msg
        r.close()


@pytest.mark.parametrize("mapped", [True, False])
def test_file_grown_after_the_end_was_read(tmp_path, mapped):
    # as MXNet 1.9.1's reader (checked): once read() returned None it stays None, even when
    # records are appended; a seek (read_at) or reset sees them (the file is mapped again)
    path = str(tmp_path / "g.rec")
    write_recs(path, [b"a" * 5, b"b" * 6])
    r = _rio.RecordReader(path, mapped=mapped)
    assert read_all(r) == [b"a" * 5, b"b" * 6]
    with open(path, "ab") as f:                     # framed by hand: the writer renames
        for p in (b"c" * 7, b"d" * 300):
            f.write(struct.pack("<II", MAGIC, len(p)) + p + b"\0" * (-len(p) % 4))
    assert r.read() is None
    assert r.read_at(32) == b"c" * 7
    assert r.read() == b"d" * 300 and r.read() is None
    r.reset()
    assert read_all(r) == [b"a" * 5, b"b" * 6, b"c" * 7, b"d" * 300]
    r.close()


def test_large_record_cut_after_mapping(tmp_path, rng):
    # records of 256 KiB and more are read with pread into their bytes: a file cut under an open
    # reader gives the truncation error there too (the header page stays, no SIGBUS)
    path = str(tmp_path / "big.rec")
    big = bytes(rng.integers(0, 256, size=300_000, dtype=np.uint8))
    write_recs(path, [b"a" * 8, big, big])
    for read in ("read", "read_at"):
        write_recs(path, [b"a" * 8, big, big])
        r = _rio.RecordReader(path)
        assert r.read() == b"a" * 8
        assert r.read_at(16) == big                    # mapped, large record through pread
        r.seek(16)
        os.truncate(path, 100_000)
        with pytest.raises(MXNetError, match=r"big\.rec: record at byte offset 16 needs 300008 "
                                             r"bytes but only 99984 remain"):
            r.read() if read == "read" else r.read_at(16)
        r.close()


def _run(code, *args, **kw):
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)], cwd=ROOT,
                          timeout=60, capture_output=True, text=True, **kw)


@pytest.mark.parametrize("faulthandler_first", [False, True])
def test_file_truncated_under_the_mapping(tmp_path, faulthandler_first):
    # touching a page past the new end raises SIGBUS: the reader turns it into an MXNetError
    # naming the file and offset, for read(), read_idx() and read_many(), in a child process
    # (a crash there cannot take the test run down)
    rec, idx = str(tmp_path / "t.rec"), str(tmp_path / "t.idx")
    code = f"""
        import os, faulthandler
        if {faulthandler_first}:
            faulthandler.enable()
        from mxc import recordio
        from mxc.base import MXNetError
        w = recordio.MXIndexedRecordIO({idx!r}, {rec!r}, "w")
        for i in range(2000):
            w.write_idx(i, bytes([i % 256]) * 4096)
        w.close()
        r = recordio.MXIndexedRecordIO({idx!r}, {rec!r}, "r")
        for i in range(10):                     # the first window is mapped and resident
            assert r.read() == bytes([i % 256]) * 4096
        assert r.handle.read_many([r.idx[1500]]) == [bytes([1500 % 256]) * 4096]
        os.truncate({rec!r}, 1 << 20)           # page aligned: the cut record's tail faults
        n = 10
        try:
            while r.read() is not None:
                n += 1
        except MXNetError as e:
            print(n, e)
        assert r.read_idx(3) == bytes([3]) * 4096
        for k in (1500, 255):
            try:
                r.read_idx(k)
            except MXNetError as e:
                print(k, e)
        try:
            r.handle.read_many([r.idx[5], r.idx[1999]])
        except MXNetError as e:
            print("many", e)
        os.truncate({rec!r}, 0)                 # every page gone
        try:
            r.read_idx(2)
        except MXNetError as e:
            print("empty", e)
    """
    p = _run(code)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    # record 255 starts at 255 * 4104 = 1046520 and needs 4104 bytes; 2056 remain
    assert lines[0] == (f"255 {rec}: record at byte offset 1046520 needs 4104 bytes but only 2056 "
                        f"remain before the end of the file (truncated file or corrupt length)")
    assert lines[1].startswith(f"1500 {rec}: byte offset {1500 * 4104} is at or past the end")
    assert lines[2].startswith(f"255 {rec}: record at byte offset 1046520 needs 4104 bytes")
    assert lines[3].startswith(f"many {rec}: byte offset {1999 * 4104} is at or past the end")
    assert lines[4].startswith(f"empty {rec}: byte offset 8208 is at or past the end")
    assert "Fatal Python error" not in p.stderr


def test_other_bus_errors_still_end_the_process(tmp_path):
    # the handler only catches the reader's own accesses: any other SIGBUS reaches the handler
    # installed before it (faulthandler here) or the default action, as without mxc
    path = str(tmp_path / "f.bin")
    code = f"""
        import mmap, os
        with open({path!r}, "wb") as f:
            f.write(b"x" * 65536)
        from mxc import recordio
        w = recordio.MXRecordIO({path + ".rec"!r}, "w"); w.write(b"abc"); w.close()
        r = recordio.MXRecordIO({path + ".rec"!r}, "r"); assert r.read() == b"abc"
        f = open({path!r}, "rb")
        m = mmap.mmap(f.fileno(), 65536, access=mmap.ACCESS_READ)
        os.truncate({path!r}, 0)
        print(m[40000])
    """
    for args in ([], ["-X", "faulthandler"]):
        p = _run(code, *args)
        assert p.returncode == -signal.SIGBUS, (args, p.returncode, p.stderr)
        assert ("Fatal Python error: Bus error" in p.stderr) == bool(args)


def test_decode_follows_opencv_flags(tmp_path):
    # expectations measured with cv2.imdecode (OpenCV 4.8, the oracle's): EXIF orientation is
    # applied for iscolor 1 and 0 but not -1; 16-bit gray PNG stays uint16 only for -1 (>> 8 else)
    import io
    from PIL import Image
    a = np.zeros((10, 20, 3), np.uint8)
    a[:, :5] = 255                                   # white stripe on the left
    im = Image.fromarray(a)
    exif = im.getexif()
    exif[0x0112] = 6                                 # "rotate 90 degrees clockwise to display"
    buf = io.BytesIO()
    im.save(buf, "JPEG", exif=exif.tobytes(), quality=95)
    s = recordio.pack(recordio.IRHeader(0, 0, 0, 0), buf.getvalue())
    color = recordio.unpack_img(s, 1)[1]
    gray = recordio.unpack_img(s, 0)[1]
    raw = recordio.unpack_img(s, -1)[1]
    assert color.shape == (20, 10, 3) and gray.shape == (20, 10) and raw.shape == (10, 20, 3)
    assert color[:4].min() > 200 and color[6:].max() < 60    # the stripe is now on top
    buf = io.BytesIO()
    Image.fromarray(np.full((10, 20), 40000, np.uint16)).save(buf, "PNG")
    s = recordio.pack(recordio.IRHeader(0, 0, 0, 0), buf.getvalue())
    raw = recordio.unpack_img(s, -1)[1]
    assert raw.dtype == np.uint16 and raw.shape == (10, 20) and (raw == 40000).all()
    assert (recordio.unpack_img(s, 0)[1] == 156).all()
    c = recordio.unpack_img(s, 1)[1]
    assert c.shape == (10, 20, 3) and (c == 156).all()
