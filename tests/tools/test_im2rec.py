"""The im2rec command end to end: against MXNet 1.9.1's tools/im2rec.py output (fixtures made by
tests/data/make_recordio_fixtures.py) and on image folders generated here with Pillow."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from mxc import recordio
from mxc.tools import im2rec

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "recordio")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def records(prefix):
    r = recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    out = {k: r.read_idx(k) for k in r.keys}
    r.close()
    return out


@pytest.fixture
def mx_images(tmp_path):
    """The image folder MXNet's im2rec packed for the fixtures (one file is not an image)."""
    root = tmp_path / "images"
    shutil.copytree(os.path.join(DATA, "images"), root)
    return str(root)


def test_list_matches_mxnet(tmp_path, mx_images, capsys):
    assert im2rec.main(["--list", "--recursive", str(tmp_path / "data"), mx_images]) == 0
    assert read_bytes(tmp_path / "data.lst") == read_bytes(os.path.join(DATA, "im2rec.lst"))
    assert capsys.readouterr().out.splitlines()[:2] == ["cat 0", "dog 1"]


@pytest.mark.parametrize("extra,fixture", [([], "im2rec"), (["--pass-through"], "im2rec_pt")])
@pytest.mark.parametrize("threads", ["1", "3"])
def test_pack_byte_identical_to_mxnet(tmp_path, mx_images, capsys, extra, fixture, threads):
    shutil.copy(os.path.join(DATA, "im2rec.lst"), tmp_path / "data.lst")
    assert im2rec.main(extra + ["--num-thread", threads, str(tmp_path / "data"), mx_images]) == 0
    for ext in (".rec", ".idx"):
        assert read_bytes(tmp_path / ("data" + ext)) == read_bytes(os.path.join(DATA, fixture + ext))
    err = capsys.readouterr().err
    if extra:
        assert "skipping" not in err                     # pass-through packs the bytes as they are
    else:
        assert "skipping %s" % os.path.join(mx_images, "dog", "e.jpg") in err


def test_pack_decodes_like_mxnet(tmp_path, mx_images):
    shutil.copy(os.path.join(DATA, "im2rec.lst"), tmp_path / "data.lst")
    assert im2rec.main([str(tmp_path / "data"), mx_images]) == 0
    recs = records(str(tmp_path / "data"))
    assert sorted(recs) == [0, 1, 2, 3]
    for k, s in recs.items():
        header, img = recordio.unpack_img(s, 1)
        assert header.id == k
        np.testing.assert_array_equal(img, np.load(os.path.join(DATA, "im2rec_dec", "%d.npy" % k)))


def test_resize_center_crop_png_like_mxnet(tmp_path, mx_images):
    shutil.copy(os.path.join(DATA, "im2rec.lst"), tmp_path / "data.lst")
    args = ["--resize", "8", "--center-crop", "--encoding", ".png", str(tmp_path / "data"), mx_images]
    assert im2rec.main(args) == 0
    ours = records(str(tmp_path / "data"))
    theirs = records(os.path.join(DATA, "im2rec_r8"))
    assert sorted(ours) == sorted(theirs)
    for k in ours:
        h1, a = recordio.unpack_img(ours[k])
        h2, b = recordio.unpack_img(theirs[k])
        assert h1 == h2
        assert a.shape == b.shape == (8, 8, 3)
        # Pillow's bilinear resize is not OpenCV's, pixels differ a little (docs/recordio.md)
        assert np.abs(a.astype(int) - b).mean() < 25


def make_folder(root, rng):
    """Two class folders and two root images, PNG and JPEG, plus a broken file."""
    files = {"x0.png": (9, 13), "x1.jpg": (12, 8), "a/p.png": (10, 10), "a/q.jpeg": (6, 11),
             "b/r.png": (7, 7), "b/s.jpg": (15, 9), "b/t.PNG": (8, 12)}
    for name, (h, w) in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        # smooth content, so that JPEG keeps it close to the source
        small = Image.fromarray(rng.integers(0, 256, size=(3, 3, 3), dtype=np.uint8))
        small.resize((w, h), Image.BILINEAR).save(os.path.join(root, name), "JPEG" if name.endswith(("jpg", "jpeg")) else "PNG")
    with open(os.path.join(root, "b", "zz.png"), "wb") as f:
        f.write(b"\x89PNG broken")
    with open(os.path.join(root, "notes.txt"), "w") as f:
        f.write("not listed")
    return files


def read_lst(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f]


def test_list_options(tmp_path, rng, capsys):
    root = str(tmp_path / "img")
    make_folder(root, rng)
    p = str(tmp_path / "flat")
    assert im2rec.main(["--list", "--no-shuffle", p, root]) == 0
    assert read_lst(p + ".lst") == [["0", "0.000000", "x0.png"], ["1", "0.000000", "x1.jpg"]]
    p = str(tmp_path / "rec")
    assert im2rec.main(["--list", "--recursive", "--no-shuffle", p, root]) == 0
    lines = read_lst(p + ".lst")
    # os.walk order with sorted names; suffixes compared lower-case; one label per folder
    assert [(l[0], l[1], l[2]) for l in lines] == [
        ("0", "0.000000", "x0.png"), ("1", "0.000000", "x1.jpg"),
        ("2", "1.000000", "a/p.png"), ("3", "1.000000", "a/q.jpeg"),
        ("4", "2.000000", "b/r.png"), ("5", "2.000000", "b/s.jpg"), ("6", "2.000000", "b/t.PNG"),
        ("7", "2.000000", "b/zz.png")]
    # shuffled with MXNet's fixed seed: deterministic, a permutation of the unshuffled list
    q = str(tmp_path / "shuf")
    assert im2rec.main(["--list", "--recursive", q, root]) == 0
    shuffled = read_lst(q + ".lst")
    assert sorted(shuffled) == sorted(lines) and shuffled != lines
    assert im2rec.main(["--list", "--recursive", str(tmp_path / "shuf2"), root]) == 0
    assert read_lst(str(tmp_path / "shuf2.lst")) == shuffled
    # chunks and ratios, as MXNet splits them
    c = str(tmp_path / "c")
    assert im2rec.main(["--list", "--recursive", "--no-shuffle", "--chunks", "2", "--train-ratio", "0.5",
                        "--test-ratio", "0.25", c, root]) == 0
    for i in range(2):
        assert [l[0] for l in read_lst(c + "_%d_test.lst" % i)] == [str(4 * i)]
        assert [l[0] for l in read_lst(c + "_%d_train.lst" % i)] == [str(4 * i + 1), str(4 * i + 2)]
        assert [l[0] for l in read_lst(c + "_%d_val.lst" % i)] == [str(4 * i + 3)]
    capsys.readouterr()


def test_pack_generated_folder(tmp_path, rng, capsys):
    root = str(tmp_path / "img")
    files = make_folder(root, rng)
    prefix = str(tmp_path / "out" / "set")
    os.makedirs(os.path.dirname(prefix))
    assert im2rec.main(["--list", "--recursive", prefix, root]) == 0
    with open(prefix + ".lst") as f:
        order = [int(line.split("\t")[0]) for line in f]
    assert im2rec.main(["--num-thread", "4", "--quality", "80", prefix, root]) == 0
    err = capsys.readouterr().err
    assert "skipping %s" % os.path.join(root, "b", "zz.png") in err
    r = recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    # written in list order, the broken image left out
    assert r.keys == [k for k in order if k != 7]
    lst = {int(l[0]): l[2] for l in read_lst(prefix + ".lst")}
    for k in r.keys:
        header, img = recordio.unpack_img(r.read_idx(k), 1)
        h, w = files[lst[k]]
        assert header.id == k and img.shape == (h, w, 3)
        payload = recordio.unpack(r.read_idx(k))[1]
        assert payload[:2] == b"\xff\xd8"                  # re-encoded as JPEG
        src = np.asarray(Image.open(os.path.join(root, lst[k])).convert("RGB"))[:, :, ::-1]
        err_bgr = np.abs(img.astype(int) - src).mean()
        err_rgb = np.abs(img.astype(int) - src[:, :, ::-1]).mean()
        assert err_bgr < 30 and err_bgr < err_rgb           # tiny JPEG q80, in BGR order
    r.close()
    # --num-thread 1 writes the same bytes
    single = str(tmp_path / "one" / "set")
    os.makedirs(os.path.dirname(single))
    shutil.copy(prefix + ".lst", single + ".lst")
    assert im2rec.main(["--quality", "80", single, root]) == 0
    assert read_bytes(single + ".rec") == read_bytes(prefix + ".rec")


def test_pack_label_color_resize(tmp_path, rng, capsys):
    root = str(tmp_path / "img")
    make_folder(root, rng)
    prefix = str(tmp_path / "ml")
    with open(prefix + ".lst", "w") as f:
        f.write("10\t1.5\t2.5\t-1\tx0.png\n")
        f.write("11\t3\t4\t5\tb/s.jpg\n")
        f.write("bad line\n")
        f.write("x\t1\tb/r.png\n")
    assert im2rec.main(["--pack-label", "--color", "0", "--resize", "4", "--encoding", ".png",
                        prefix, root]) == 0
    err = capsys.readouterr().err
    assert "bad line" in err and "cannot parse" in err
    r = recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    assert r.keys == [10, 11]
    h, img = recordio.unpack_img(r.read_idx(10), -1)
    np.testing.assert_array_equal(h.label, np.array([1.5, 2.5, -1], np.float32))
    assert img.shape == (4, 13 * 4 // 9)              # gray, shorter edge resized to 4
    h, img = recordio.unpack_img(r.read_idx(11), -1)
    assert h.flag == 3 and img.shape == (15 * 4 // 9, 4)
    r.close()
    # without --pack-label only the first label is kept, as a scalar
    assert im2rec.main(["--resize", "4", prefix, root]) == 0
    capsys.readouterr()
    r = recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    h, img = recordio.unpack_img(r.read_idx(10), -1)
    assert h.flag == 0 and h.label == 1.5 and img.shape == (4, 5, 3)
    r.close()


def test_errors_and_module_entry(tmp_path, capsys):
    assert im2rec.main([str(tmp_path / "none"), str(tmp_path)]) == 1
    assert "did not find any list file" in capsys.readouterr().err
    assert im2rec.main([str(tmp_path / "x"), str(tmp_path / "missing")]) == 2
    p = subprocess.run([sys.executable, "-m", "mxc.tools.im2rec", "--help"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "--pass-through" in p.stdout and "--pack-label" in p.stdout


def _lst(path, lines):
    with open(path, "wb") as f:
        f.write(b"".join(lines))


@pytest.mark.parametrize("bad,says", [
    (b"-1\t0.000000\ta.png\n", "index -1 is outside 0..2^64-1"),
    (b"18446744073709551616\t0\ta.png\n", "index 18446744073709551616 is outside"),
    (b"3\t0\t\xff.png\n", "not UTF-8 text"),
])
def test_bad_list_line_is_an_error_naming_file_and_line(tmp_path, mx_images, capsys, bad, says):
    """MXNet prints a struct.error traceback and leaves 0-byte .rec/.idx; mxc names the line and
    leaves the previous .rec/.idx as they were."""
    prefix = str(tmp_path / "set")
    _lst(prefix + ".lst", [b"0\t0.000000\tcat/a.jpg\n"])
    assert im2rec.main([prefix, mx_images]) == 0
    before = read_bytes(prefix + ".rec"), read_bytes(prefix + ".idx")
    _lst(prefix + ".lst", [b"0\t0.000000\tcat/a.jpg\n", bad])
    capsys.readouterr()
    assert im2rec.main([prefix, mx_images]) == 2
    assert "im2rec: %s.lst:2: %s" % (prefix, says) in capsys.readouterr().err
    assert (read_bytes(prefix + ".rec"), read_bytes(prefix + ".idx")) == before
    assert [n for n in os.listdir(tmp_path) if ".tmp-" in n] == []


def test_killed_packer_leaves_the_old_files(tmp_path, mx_images):
    """im2rec killed (SIGKILL) after packing 2 images: the previous .rec/.idx stay whole."""
    prefix = str(tmp_path / "set")
    _lst(prefix + ".lst", [b"0\t0.000000\tcat/a.jpg\n"])
    assert im2rec.main([prefix, mx_images]) == 0
    before = read_bytes(prefix + ".rec"), read_bytes(prefix + ".idx")
    names = ["cat/a.jpg", "cat/b.png", "dog/c.jpg", "dog/d.png", "dog/e.jpg"]
    _lst(prefix + ".lst", [b"%d\t0\t%s\n" % (i, n.encode()) for i, n in enumerate(names)])
    code = f"""
import os, signal
from mxc import recordio
from mxc.tools import im2rec
write_idx = recordio.MXIndexedRecordIO.write_idx
def dying(self, idx, buf):
    if idx == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    write_idx(self, idx, buf)
recordio.MXIndexedRecordIO.write_idx = dying
im2rec.main(["--num-thread", "1", {prefix!r}, {mx_images!r}])
"""
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120)
    assert p.returncode == -9
    assert (read_bytes(prefix + ".rec"), read_bytes(prefix + ".idx")) == before
    assert im2rec.main([prefix, mx_images]) == 0        # the next run packs all, cleans up
    readable = []
    for i, n in enumerate(names):
        try:
            Image.open(os.path.join(mx_images, n)).load()
            readable.append(i)
        except OSError:         # the fixture's one file that is not an image is skipped
            pass
    assert sorted(records(prefix)) == readable and len(readable) == 4
    assert [n for n in os.listdir(tmp_path) if ".tmp-" in n] == []
