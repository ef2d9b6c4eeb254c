"""RecordIO throughput: mxc vs a plain-Python reader, ``readinto`` of the file, and MXNet.

Prints one JSON line per figure: {"bench": ..., "impl": ..., "value": ..., "unit": ...}.

    python tools/bench/bench_recordio.py                  # mxc + plain Python (+ MXNet if importable)
    /path/to/mxnet-python tools/bench/bench_recordio.py   # MXNet's figures (mxc skipped if absent)
    python tools/bench/bench_recordio.py --mxnet-im2rec /path/to/mxnet/tools/im2rec.py
    python tools/bench/bench_recordio.py --peer-python /path/to/mxnet-python   # + MXNet, same files

``mxc_unmapped`` is mxc's reader on a file it cannot map (its prefetch thread, the design before
the memory map), timed beside the mapped one.

Every reader figure is followed by a same-run ratio line ({"bench": ..., "ratio": "mxc/plain_python"})
for each implementation against the plain-Python reader timed beside it, in rotation, in the
same process; with --peer-python MXNet's readers run in that interpreter on the same files, with
their own plain-Python reader beside them, so the ratios compare across the two processes even
when the machine's load changes between them. The per-record cost (ns/record) of sequential
1 KiB reads is printed too, against one ``bytes`` copy of 1 KiB (the memcpy floor). The
ImageRecordIter figure decodes 32x32 JPEGs (CIFAR-sized: decoding is cheap, so the iterator's
own per-record batching cost shows) in batches of 128 with 2 threads. Both also come as process
CPU time (``seq_read_1KiB_cpu_per_record``, ``..._cpu`` in us/image, every thread counted): on a
loaded shared machine the wall-clock figures follow the load, the CPU figures the code.

Figures: sequential reads of 1 KiB and 1 MiB records (MB/s of payload; for ``readinto``, the time
to read the whole file divided into the same payload bytes; the 1 KiB file also ``_from_disk``:
evicted from the page cache and read back once, cached as a dataset read from disk is), random
reads through the
index (records/s), and im2rec packing (images/s).  Files live in a temporary directory and are read
from the page cache (written just before), so this measures the software, not the disk.
"""
import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

MAGIC = 0xCED7230A
MASK = (1 << 29) - 1


def emit(bench, impl, value, unit):
    print(json.dumps({"bench": bench, "impl": impl, "value": round(value, 1), "unit": unit}), flush=True)


def best_of(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def best_of_each(fns, repeat=5, cpu=None):
    """Best time of each function, run in rotation so that load from other processes on a shared
    machine falls on all of them alike. With a dict `cpu`, also the best process CPU time of
    each (all threads: a reader's prefetch thread counts), which load from other processes
    barely moves."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            c = time.process_time()
            t = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t)
            if cpu is not None:
                cpu[k] = min(cpu.get(k, float("inf")), time.process_time() - c)
    return best


# ---------------------------------------------------------------- the plain-Python peer

def write_plain(path, payloads):
    """dmlc framing in plain Python (payloads here never contain the magic)."""
    with open(path, "wb") as f:
        for p in payloads:
            n = len(p)
            f.write(struct.pack("<II", MAGIC, n))
            f.write(p)
            f.write(b"\0" * (((n + 3) & ~3) - n))


def py_read_all(path):
    """A careful plain-Python sequential reader (buffered file, continuation records handled)."""
    n_bytes = 0
    with open(path, "rb") as f:
        read, unpack = f.read, struct.unpack
        while True:
            h = read(8)
            if not h:
                break
            magic, lrec = unpack("<II", h)
            if magic != MAGIC:
                raise ValueError("bad magic")
            n = lrec & MASK
            data = read((n + 3) & ~3)
            rec = data if n & 3 == 0 else data[:n]
            while lrec >> 29 not in (0, 3):
                magic, lrec = unpack("<II", read(8))
                n = lrec & MASK
                rec += struct.pack("<I", MAGIC) + read((n + 3) & ~3)[:n]
            n_bytes += len(rec)
    return n_bytes


def py_read_at(f, pos):
    f.seek(pos)
    magic, lrec = struct.unpack("<II", f.read(8))
    if magic != MAGIC:
        raise ValueError("bad magic")
    n = lrec & MASK
    return f.read(n)


def readinto_all(path, bufsize=1 << 20):
    buf = bytearray(bufsize)
    n = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            k = f.readinto(buf)
            if not k:
                return n
            n += k


# ---------------------------------------------------------------- implementations under test

def load_impls():
    impls = {}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isdir(os.path.join(root, "mxc")) and root not in sys.path:
        sys.path.insert(0, root)   # run from a source checkout
    try:
        from mxc import recordio as mxc_recordio
        impls["mxc"] = mxc_recordio
    except Exception as exc:  # e.g. running under MXNet's interpreter
        print("# mxc not importable here: %s" % exc, file=sys.stderr)
    try:
        import mxnet
        impls["mxnet"] = mxnet.recordio
    except Exception:
        pass
    return impls


def seq_read(mod, path):
    return _drain(mod.MXRecordIO(path, "r"))


def seq_read_unmapped(mod, path):
    """mxc's reader on a file it may not map: the prefetch thread (the design before the map)."""
    return _drain(mod._rio.RecordReader(path, mapped=False))


def _drain(r):
    """Bytes of every record read() returns, then close."""
    n = 0
    read = r.read
    while True:
        x = read()
        if x is None:
            break
        n += len(x)
    r.close()
    return n


def copy_bytes(src, count):
    for _ in range(count):
        bytes(src)


def emit_ratios(bench, values):
    """Same-run ratios of each implementation to the plain-Python reader timed beside it."""
    base = values.get("plain_python")
    for k, v in values.items():
        if base and k not in ("plain_python", "readinto"):
            print(json.dumps({"bench": bench, "ratio": f"{k}/plain_python",
                              "value": round(v / base, 2)}), flush=True)


def read_back(path):
    """Drop the file's pages from the page cache and read it once: cached as a dataset read from
    disk is (the kernel's readahead holds it in large folios; a file just written is held in the
    folios its writes made, a few KiB each, which costs a memory-mapped reader a page-table
    entry and a folio lookup per page)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    readinto_all(path)


def bench_sequential(tmp, impls, rec_size, total, from_disk=False):
    count = max(1, total // rec_size)
    rng = np.random.default_rng(0)
    block = rng.integers(0, 255, size=rec_size + 64, dtype=np.uint8).tobytes()
    payloads = [block[i % 64:i % 64 + rec_size] for i in range(count)]
    path = os.path.join(tmp, "seq_%d.rec" % rec_size)
    write_plain(path, payloads)
    del payloads, block       # keep the heap as a reading program would have it
    if from_disk:
        read_back(path)
    mb = count * rec_size / 1e6
    name = "seq_read_%s%s" % ("1KiB" if rec_size == 1024 else "1MiB", "_from_disk" if from_disk else "")
    fns = {"plain_python": lambda: py_read_all(path), "readinto": lambda: readinto_all(path)}
    for impl, mod in impls.items():
        fns[impl] = lambda mod=mod: seq_read(mod, path)
    if "mxc" in impls:
        fns["mxc_unmapped"] = lambda: seq_read_unmapped(impls["mxc"], path)
    for k, fn in fns.items():   # readinto delivers the whole file, the readers the payloads
        assert fn() == (os.path.getsize(path) if k == "readinto" else count * rec_size), k
    if rec_size == 1024:      # the floor: one bytes object of 1 KiB per record
        fns["bytes_copy"] = lambda: copy_bytes(memoryview(bytes(rec_size)), count)
    values, cpu = {}, {}
    for k, t in best_of_each(fns, cpu=cpu).items():
        emit(name, k, mb / t, "MB/s")
        values[k] = mb / t
        if rec_size == 1024 and k != "readinto":
            emit(name + "_per_record", k, t / count * 1e9, "ns/record")
    if rec_size == 1024:      # the same in CPU time of the process (the figure a loaded machine
        for k, t in cpu.items():  # leaves alone; the reader's prefetch thread included)
            emit(name + "_cpu_per_record", k, t / count * 1e9, "ns/record")
        emit_ratios(name + "_cpu", {k: 1 / t for k, t in cpu.items()
                                          if k not in ("bytes_copy", "readinto")})
    values.pop("bytes_copy", None)
    emit_ratios(name, values)


def bench_random(tmp, impls, rec_size=1024, count=40000, reads=100000):
    rng = np.random.default_rng(1)
    block = rng.integers(0, 255, size=rec_size, dtype=np.uint8).tobytes()
    path = os.path.join(tmp, "rand.rec")
    write_plain(path, [block] * count)
    idx_path = os.path.join(tmp, "rand.idx")
    stride = 8 + rec_size
    with open(idx_path, "w") as f:
        for i in range(count):
            f.write("%d\t%d\n" % (i, i * stride))
    keys = [int(k) for k in rng.integers(0, count, size=reads)]
    offsets = {i: i * stride for i in range(count)}

    def plain():
        with open(path, "rb") as f:
            for k in keys:
                py_read_at(f, offsets[k])

    fns = {"plain_python": plain}
    readers = []
    for impl, mod in impls.items():
        r = mod.MXIndexedRecordIO(idx_path, path, "r")
        assert r.read_idx(keys[0]) == block
        readers.append(r)

        def run(read_idx=r.read_idx):
            for k in keys:
                read_idx(k)
        fns[impl] = run
    values = {}
    for k, t in best_of_each(fns, 3).items():
        emit("random_read_1KiB", k, reads / t, "records/s")
        values[k] = reads / t
    emit_ratios("random_read_1KiB", values)
    for r in readers:
        r.close()


def bench_im2rec(tmp, impls, mxnet_script, n_images=120):
    """Pack n 256x256 JPEGs (re-encoded at q95) with 2 threads (mxc) / processes (MXNet)."""
    folder = os.path.join(tmp, "imgs")
    os.makedirs(folder)
    rng = np.random.default_rng(2)
    y, x = np.mgrid[0:256, 0:256]
    try:
        from PIL import Image

        def save(path, arr):
            Image.fromarray(arr[:, :, ::-1]).save(path, "JPEG", quality=90)
    except ImportError:
        import cv2

        def save(path, arr):
            cv2.imwrite(path, arr, [cv2.IMWRITE_JPEG_QUALITY, 90])
    for i in range(n_images):
        f = rng.uniform(0.01, 0.1, size=3)
        arr = np.stack([(np.sin(x * f[c] + y * f[(c + 1) % 3]) * 120 + 128) for c in range(3)], axis=2)
        arr = (arr + rng.integers(0, 20, size=arr.shape)).clip(0, 255).astype(np.uint8)
        save(os.path.join(folder, "%04d.jpg" % i), arr)
    with open(os.path.join(tmp, "pack.lst"), "w") as f:
        for i in range(n_images):
            f.write("%d\t%f\t%04d.jpg\n" % (i, float(i % 10), i))
    try:
        import PIL  # noqa: F401  (mxc's im2rec needs Pillow)
        have_pil = True
    except ImportError:
        have_pil = False
    if "mxc" in impls and have_pil:
        from mxc.tools import im2rec
        sys_stdout = sys.stdout
        sys.stdout = io.StringIO()
        try:
            t = best_of(lambda: im2rec.main(["--num-thread", "2", os.path.join(tmp, "pack"), folder]), 2)
        finally:
            sys.stdout = sys_stdout
        emit("im2rec_pack_256px_jpeg", "mxc", n_images / t, "images/s")
    if mxnet_script and "mxnet" in impls:
        # MXNet's im2rec is a script: time it on n and on 4n images and take the difference, so
        # interpreter start and `import mxnet, cv2` (seconds) cancel out
        times = []
        for reps in (1, 4):
            d = os.path.join(tmp, "mx%d" % reps)
            os.makedirs(d)
            with open(os.path.join(d, "pack.lst"), "w") as f:
                for j in range(reps * n_images):
                    f.write("%d\t%f\t%04d.jpg\n" % (j, float(j % 10), j % n_images))
            cmd = [sys.executable, mxnet_script, "--num-thread", "2", os.path.join(d, "pack"), folder]
            times.append(best_of(lambda c=cmd: subprocess.run(
                c, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), 1))
        print("# mxnet im2rec seconds for n, 4n images: %.2f %.2f" % tuple(times), file=sys.stderr)
        if times[1] > times[0]:
            emit("im2rec_pack_256px_jpeg", "mxnet", 3 * n_images / (times[1] - times[0]), "images/s")


def make_small_images(tmp, impls, n=2048):
    """n 32x32 JPEG records (CIFAR-sized) as small.rec/.idx; returns the .rec path."""
    rec = os.path.join(tmp, "small.rec")
    if os.path.exists(rec):
        return rec
    mod = next(iter(impls.values()))
    rng = np.random.default_rng(3)
    y, x = np.mgrid[0:32, 0:32]
    w = mod.MXIndexedRecordIO(os.path.join(tmp, "small.idx"), rec, "w")
    from PIL import Image
    for i in range(n):
        f = rng.uniform(0.05, 0.4, size=3)
        arr = np.stack([(np.sin(x * f[c] + y * f[(c + 1) % 3]) * 100 + 128) for c in range(3)], 2)
        arr = (arr + rng.integers(0, 30, size=arr.shape)).clip(0, 255).astype(np.uint8)
        out = io.BytesIO()
        Image.fromarray(arr).save(out, "JPEG", quality=90)
        w.write_idx(i, mod.pack(mod.IRHeader(0, float(i % 10), i, 0), out.getvalue()))
    w.close()
    return rec


def bench_image_iter_small(tmp, impls, epochs=3):
    """ImageRecordIter on 32x32 JPEGs, batch 128, 2 threads: images/s."""
    rec = make_small_images(tmp, impls)
    for impl, mod in impls.items():
        io_mod = sys.modules[mod.__name__.rsplit(".", 1)[0] + ".io"]
        it = io_mod.ImageRecordIter(path_imgrec=rec, path_imgidx=rec[:-4] + ".idx",
                                    data_shape=(3, 32, 32), batch_size=128, rand_mirror=True,
                                    preprocess_threads=2, shuffle=False)
        best, best_cpu = 0.0, float("inf")
        for _ in range(epochs):
            it.reset()
            n = 0
            c = time.process_time()
            t = time.perf_counter()
            for b in it:
                b.data[0].wait_to_read()
                n += b.data[0].shape[0] - b.pad
            best = max(best, n / (time.perf_counter() - t))
            best_cpu = min(best_cpu, (time.process_time() - c) / n)
        if hasattr(it, "close"):
            it.close()
        emit("image_record_iter_32px_jpeg_b128_t2", impl, best, "images/s")
        # process CPU per image (all threads): what the pipeline costs, whatever else runs
        emit("image_record_iter_32px_jpeg_b128_t2_cpu", impl, best_cpu * 1e6, "us/image")


def run_peer(python, tmp, args):
    """This script's reader figures under `python` (an MXNet install), on the files in tmp."""
    cmd = [python, os.path.abspath(__file__), "--only-mxnet", "--dir", tmp]
    if args.quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        raise SystemExit("the peer run failed")
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("impl") == "plain_python":
                rec["impl"] = "plain_python(peer)"
            print(json.dumps(rec), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mxnet-im2rec", help="path to MXNet's tools/im2rec.py (run when mxnet imports)")
    ap.add_argument("--quick", action="store_true", help="smaller files (smoke test)")
    ap.add_argument("--peer-python", help="python of an MXNet install: its readers on the same files")
    ap.add_argument("--only-mxnet", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    impls = load_impls()
    if args.only_mxnet:
        impls = {k: v for k, v in impls.items() if k == "mxnet"}
    scale = 8 if args.quick else 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = args.dir or tmp
        bench_sequential(tmp, impls, 1024, (96 << 20) // scale)
        bench_sequential(tmp, impls, 1024, (96 << 20) // scale, from_disk=True)
        if not args.only_mxnet:
            bench_sequential(tmp, impls, 1 << 20, (256 << 20) // scale)
        bench_random(tmp, impls, reads=100000 // scale)
        bench_image_iter_small(tmp, impls)
        if args.peer_python:
            run_peer(args.peer_python, tmp, args)
        if not args.only_mxnet:
            bench_im2rec(tmp, impls, args.mxnet_im2rec, n_images=120 // scale)


if __name__ == "__main__":
    main()
