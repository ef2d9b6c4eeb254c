"""Write the RecordIO / im2rec fixtures under tests/data/recordio/ with real MXNet 1.9.1.

Run with the oracle interpreter (MXNet 1.9.1 + OpenCV), never by the test suite:

    /work/mxnet-oracle/bin/python tests/data/make_recordio_fixtures.py \
        [--mxnet-src /work/.mirror/apache+mxnet/repo]

MXNet's tools/im2rec.py is not part of the pip package, so it is taken from the MXNet source
(git tag v1.9.1) and run as a script.

Outputs (all small):
  basic.rec / basic.idx      records written by MXIndexedRecordIO.write_idx (see RECORDS)
  basic_expected.json        each record's key and payload (hex), for the tests
  img_src.npy                the BGR image given to pack_img
  img_dec_{m1,1,0}.npy       cv2.imdecode of the pack_img record's payload with iscolor -1, 1, 0
  img_gray_src.npy, img_png.rec: a grayscale PNG record (pack_img(..., img_fmt='.png'))
  images/                    4 tiny images in two class folders (input of im2rec)
  im2rec.lst                 `im2rec.py --list --recursive` (shuffled with MXNet's seed)
  im2rec.rec / .idx          `im2rec.py` default (re-encode JPEG q95)
  im2rec_pt.rec / .idx       `im2rec.py --pass-through`
  im2rec_dec/<id>.npy        cv2.imdecode(..., 1) of each record of im2rec.rec
  im2rec_r8.rec / .idx       `im2rec.py --resize 8 --center-crop --encoding .png`
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import cv2
import mxnet as mx
import numpy as np

MAGIC = struct.pack("<I", 0xCED7230A)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "recordio")


def records():
    """(key, payload) pairs covering the framing cases."""
    R = mx.recordio
    return [
        (0, R.pack(R.IRHeader(0, 1.5, 7, 0), b"plain payload")),
        # magic at 4-byte aligned offsets 4, 12, 16 (two adjacent): split into four parts
        (1, b"ab\x00\x00" + MAGIC + b"xyz!" + MAGIC + MAGIC + b"tail"),
        (2, R.pack(R.IRHeader(0, [1.0, 2.0, 3.5], 9, 0), b"multi-label")),
        (3, b""),
        # magic at an unaligned offset: not split
        (4, b"x" + MAGIC + b"yy"),
        # the payload is exactly the magic / starts with it (empty first part)
        (5, MAGIC),
        (6, MAGIC + b"after"),
        (7, b"abc"),                      # needs padding
        (8, bytes(range(256)) * 3),       # a longer record
    ]


def image():
    h, w = 12, 16
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x * 15) % 256, (y * 20) % 256, ((x + y) * 9) % 256], axis=2)
    return img.astype(np.uint8)  # BGR as OpenCV sees it


def make_images(folder):
    rng = np.random.RandomState(0)
    os.makedirs(os.path.join(folder, "cat"), exist_ok=True)
    os.makedirs(os.path.join(folder, "dog"), exist_ok=True)
    specs = [("cat/a.jpg", (14, 20)), ("cat/b.png", (20, 14)), ("dog/c.jpg", (16, 16)),
             ("dog/d.png", (10, 24))]
    for name, (h, w) in specs:
        base = rng.randint(0, 256, size=(h // 2 + 1, w // 2 + 1, 3)).astype(np.uint8)
        img = cv2.resize(base, (w, h), interpolation=cv2.INTER_LINEAR)
        params = [cv2.IMWRITE_JPEG_QUALITY, 90] if name.endswith(".jpg") else []
        assert cv2.imwrite(os.path.join(folder, name), img, params)
    # not an image at all: im2rec must skip it (MXNet prints an error and goes on)
    with open(os.path.join(folder, "dog", "e.jpg"), "wb") as f:
        f.write(b"this is not a jpeg")


def run_im2rec(script, args, cwd):
    cmd = [sys.executable, script] + args
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mxnet-src", default="/work/.mirror/apache+mxnet/repo")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)

    # -- framing cases
    recs = records()
    w = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "basic.idx"),
                                      os.path.join(OUT, "basic.rec"), "w")
    for k, s in recs:
        w.write_idx(k, s)
    w.close()
    with open(os.path.join(OUT, "basic_expected.json"), "w") as f:
        json.dump([{"key": k, "hex": s.hex()} for k, s in recs], f, indent=0)

    # -- pack_img / unpack_img
    img = image()
    np.save(os.path.join(OUT, "img_src.npy"), img)
    w = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "img.idx"), os.path.join(OUT, "img.rec"), "w")
    w.write_idx(0, mx.recordio.pack_img(mx.recordio.IRHeader(0, 3.0, 11, 0), img, quality=90))
    w.close()
    r = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "img.idx"), os.path.join(OUT, "img.rec"), "r")
    rec = r.read_idx(0)
    for flag, tag in ((-1, "m1"), (1, "1"), (0, "0")):
        _, dec = mx.recordio.unpack_img(rec, flag)
        np.save(os.path.join(OUT, "img_dec_%s.npy" % tag), dec)
    r.close()
    gray = image()[:, :, 1].copy()
    np.save(os.path.join(OUT, "img_gray_src.npy"), gray)
    w = mx.recordio.MXRecordIO(os.path.join(OUT, "img_png.rec"), "w")
    w.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, [1, 2], 5, 0), gray, quality=3, img_fmt=".png"))
    w.close()

    # -- im2rec
    src = subprocess.run(["git", "-C", args.mxnet_src, "show", "v1.9.1:tools/im2rec.py"],
                         check=True, stdout=subprocess.PIPE).stdout
    img_dir = os.path.join(OUT, "images")
    shutil.rmtree(img_dir, ignore_errors=True)
    make_images(img_dir)
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "im2rec.py")
        with open(script, "wb") as f:
            f.write(src)
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        run_im2rec(script, ["--list", "--recursive", os.path.join(work, "data"), img_dir], tmp)
        shutil.copy(os.path.join(work, "data.lst"), os.path.join(OUT, "im2rec.lst"))

        def pack(extra, name):
            d = os.path.join(tmp, name)
            os.makedirs(d)
            shutil.copy(os.path.join(work, "data.lst"), os.path.join(d, "data.lst"))
            # MXNet's single-process path crashes on an unreadable image (it writes None);
            # its multi-process path skips it, which is the behaviour mxc keeps
            run_im2rec(script, extra + ["--num-thread", "2", os.path.join(d, "data"), img_dir], tmp)
            for ext in (".rec", ".idx"):
                shutil.copy(os.path.join(d, "data" + ext), os.path.join(OUT, name + ext))

        pack([], "im2rec")
        pack(["--pass-through"], "im2rec_pt")
        pack(["--resize", "8", "--center-crop", "--encoding", ".png"], "im2rec_r8")

    dec_dir = os.path.join(OUT, "im2rec_dec")
    shutil.rmtree(dec_dir, ignore_errors=True)
    os.makedirs(dec_dir)
    r = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "im2rec.idx"),
                                      os.path.join(OUT, "im2rec.rec"), "r")
    for k in r.keys:
        _, dec = mx.recordio.unpack_img(r.read_idx(k), 1)
        np.save(os.path.join(dec_dir, "%d.npy" % k), dec)
    r.close()
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print("fixtures written to", OUT, "total bytes", total)


if __name__ == "__main__":
    main()
