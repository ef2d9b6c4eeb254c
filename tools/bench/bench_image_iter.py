"""ImageRecordIter throughput: mxc against MXNet 1.9.1 on the same .rec file.

Dataset: ``--images`` (default 500) random-ish 256x256 RGB images (smooth gradients plus noise,
so JPEG sizes are realistic), JPEG quality 90, packed as a .rec/.idx.  Settings (the issue's):
data_shape 3x224x224, rand_crop, rand_mirror, batch 32, preprocess_threads 2.

One JSON line per figure: {"bench", "impl", "value", "unit": "images/s", ...}.

    python tools/bench/bench_image_iter.py                       # mxc
    python tools/bench/bench_image_iter.py --peer /path/to/mxnet/python   # + MXNet, same file
    /path/to/mxnet/python tools/bench/bench_image_iter.py --impl mxnet    # MXNet alone

Under a Python where mxc does not import but mxnet does, ``--impl auto`` picks MXNet.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# run from a checkout without installing: the repository root holds the mxc package
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.isdir(os.path.join(_ROOT, "mxc")) and _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

BENCH = "image_record_iter_256jpg_to_224_crop_mirror_b32_t2"


def _encode_jpeg(rgb, quality):
    try:
        from PIL import Image
        import io
        out = io.BytesIO()
        Image.fromarray(rgb).save(out, "JPEG", quality=quality)
        return out.getvalue()
    except ImportError:
        import cv2
        ok, buf = cv2.imencode(".jpg", rgb[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, quality])
        return buf.tobytes()


def make_dataset(folder, n, size=256, quality=90):
    """Write ``n`` JPEG records into folder/bench.rec (+ .idx); returns the .rec path."""
    rng = np.random.RandomState(0)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    try:
        from mxc import recordio
    except Exception:
        from mxnet import recordio
    rec = os.path.join(folder, "bench.rec")
    w = recordio.MXIndexedRecordIO(os.path.join(folder, "bench.idx"), rec, "w")
    for i in range(n):
        a, b, c = rng.uniform(0.2, 1.0, 3)
        base = np.stack([xx * a, yy * b, (xx + yy) * c / 2], axis=2)
        img = np.clip(base + rng.normal(0, 12, (size, size, 3)), 0, 255).astype(np.uint8)
        w.write_idx(i, recordio.pack(recordio.IRHeader(0, float(i % 10), i, 0),
                                     _encode_jpeg(img, quality)))
    w.close()
    return rec


def run(impl, rec, epochs):
    if impl == "mxc":
        from mxc.io import ImageRecordIter
    else:
        from mxnet.io import ImageRecordIter
    it = ImageRecordIter(path_imgrec=rec, path_imgidx=rec[:-4] + ".idx", data_shape=(3, 224, 224),
                         batch_size=32, rand_crop=True, rand_mirror=True, preprocess_threads=2,
                         shuffle=False)
    next(it).data[0].asnumpy()  # warm up threads and caches
    n = 0
    t0 = time.perf_counter()
    for ep in range(epochs):
        it.reset()
        for b in it:
            b.data[0].wait_to_read()
            n += b.data[0].shape[0] - b.pad
    dt = time.perf_counter() - t0
    if hasattr(it, "close"):
        it.close()
    return n / dt, n


def _pick_impl():
    try:
        import mxc.io  # noqa: F401
        return "mxc"
    except Exception:  # not built, or built for another numpy
        import mxnet  # noqa: F401
        return "mxnet"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", choices=["auto", "mxc", "mxnet"], default="auto")
    ap.add_argument("--rec", help="existing .rec (with .idx beside it); else one is generated")
    ap.add_argument("--images", type=int, default=500)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--peer", help="python of an MXNet install to measure on the same file")
    ap.add_argument("--repeat", type=int, default=3,
                    help="alternate the implementations this many times and report the best run "
                         "of each (the machine is shared: alternating evens out load changes)")
    args = ap.parse_args()
    impl = _pick_impl() if args.impl == "auto" else args.impl
    with tempfile.TemporaryDirectory() as tmp:
        rec = args.rec or make_dataset(tmp, args.images)
        best = {}
        for _ in range(max(args.repeat, 1)):
            value, n = run(impl, rec, args.epochs)
            sys.stderr.write(f"{impl}: {value:.1f} images/s\n")
            best[impl] = max(best.get(impl, (0, 0)), (value, n))
            if args.peer:
                r = subprocess.run([args.peer, os.path.abspath(__file__), "--impl", "mxnet",
                                    "--rec", rec, "--epochs", str(args.epochs), "--repeat", "1"],
                                   capture_output=True, text=True)
                lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
                if r.returncode != 0 or not lines:
                    sys.stderr.write(r.stderr[-2000:])
                    raise SystemExit("peer run failed")
                rec_ = json.loads(lines[-1])
                sys.stderr.write(f"mxnet: {rec_['value']:.1f} images/s\n")
                best["mxnet"] = max(best.get("mxnet", (0, 0)), (rec_["value"], rec_["images"]))
        for name, (value, n) in best.items():
            print(json.dumps({"bench": BENCH, "impl": name, "value": round(value, 1),
                              "unit": "images/s", "images": n,
                              "runs": max(args.repeat, 1)}), flush=True)


if __name__ == "__main__":
    main()
