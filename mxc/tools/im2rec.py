"""Create an image list (.lst) or pack the images of a list into a RecordIO database (.rec/.idx).

Command-line compatible with MXNet 1.x's tools/im2rec.py::

    mxc-im2rec --list --recursive data/train /images    # writes data/train.lst
    mxc-im2rec --resize 256 --num-thread 4 data/train /images   # packs every data/train*.lst

Images are decoded, cropped, resized and encoded with Pillow on ``--num-thread`` threads (Pillow
releases the GIL while it works); records are written in list order.  Unreadable images are
reported by path and skipped.  See docs/recordio.md for the differences from MXNet's OpenCV path.
"""
import argparse
import collections
import concurrent.futures
import io
import os
import random
import sys

from .. import recordio
from .._core import atomic_write


def list_image(root, recursive, exts):
    """Yield ``(index, relative path, label)`` for the images under ``root``.

    Non-recursive: the files directly in ``root``, label 0.  Recursive: every folder that holds
    images gets its own label, in sorted walk order (the mapping is printed, as MXNet does).
    """
    i = 0
    if recursive:
        cat = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            files.sort()
            for fname in files:
                fpath = os.path.join(path, fname)
                suffix = os.path.splitext(fname)[1].lower()
                if os.path.isfile(fpath) and suffix in exts:
                    if path not in cat:
                        cat[path] = len(cat)
                    yield (i, os.path.relpath(fpath, root), cat[path])
                    i += 1
        for k, v in sorted(cat.items(), key=lambda x: x[1]):
            print(os.path.relpath(k, root), v)
    else:
        for fname in sorted(os.listdir(root)):
            fpath = os.path.join(root, fname)
            suffix = os.path.splitext(fname)[1].lower()
            if os.path.isfile(fpath) and suffix in exts:
                yield (i, os.path.relpath(fpath, root), 0)
                i += 1


def write_list(path_out, image_list):
    """Write items ``(index, path, label, ...)`` as ``index\\tlabel...\\tpath`` lines."""
    lines = []
    for item in image_list:
        line = "%d\t" % item[0]
        for j in item[2:]:
            line += "%f\t" % j
        lines.append(line + "%s\n" % item[1])
    atomic_write.write_bytes(path_out, ["".join(lines).encode("utf-8")])


def make_list(args):
    """Write ``<prefix>[_<chunk>][_train|_val|_test].lst`` for the images under ``args.root``."""
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        # MXNet seeds the global generator with 100; a private Random(100) gives the same order
        random.Random(100).shuffle(image_list)
    n = len(image_list)
    chunk_size = (n + args.chunks - 1) // args.chunks
    for i in range(args.chunks):
        chunk = image_list[i * chunk_size:(i + 1) * chunk_size]
        str_chunk = "_%d" % i if args.chunks > 1 else ""
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            write_list(args.prefix + str_chunk + ".lst", chunk)
        else:
            if args.test_ratio:
                write_list(args.prefix + str_chunk + "_test.lst", chunk[:sep_test])
            if args.train_ratio + args.test_ratio < 1.0:
                write_list(args.prefix + str_chunk + "_val.lst", chunk[sep_test + sep:])
            write_list(args.prefix + str_chunk + "_train.lst", chunk[sep_test:sep_test + sep])


def read_list(path_in):
    """Yield ``[index, path, label, ...]`` for each valid line of a .lst file.

    Malformed lines are reported on stderr and skipped, as MXNet does. An index that no record
    header can hold (below 0 or from 2^64 on) is an error naming the file and line, raised
    before anything is written.
    """
    with open(path_in, "rb") as fin:
        for lineno, raw in enumerate(fin, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError("%s:%d: not UTF-8 text (%s)" % (path_in, lineno, exc)) from None
            parts = [p.strip() for p in line.strip().split("\t")]
            if len(parts) < 3:
                print("%s:%d: a .lst line needs index, label(s) and path; skipping %r"
                      % (path_in, lineno, line.rstrip("\n")), file=sys.stderr)
                continue
            try:
                item = [int(parts[0])] + [parts[-1]] + [float(p) for p in parts[1:-1]]
            except ValueError as exc:
                print("%s:%d: cannot parse %r (%s); skipping" % (path_in, lineno, line.rstrip("\n"), exc),
                      file=sys.stderr)
                continue
            if not 0 <= item[0] < 1 << 64:
                raise ValueError("%s:%d: index %d is outside 0..2^64-1, the range of a record's "
                                 "id" % (path_in, lineno, item[0]))
            yield item


class SkipImage(Exception):
    """An image that cannot be packed; the message says why."""


def _load(fullpath, color):
    """Open an image as OpenCV's imread(path, color) would see it, as a Pillow image."""
    from PIL import Image, ImageOps
    try:
        im = Image.open(fullpath)
        if color == 0 and im.format == "JPEG":
            im.draft("L", im.size)   # luma straight from libjpeg, as OpenCV reads gray JPEGs
        im.load()
    except Exception as exc:
        raise SkipImage("cannot read image: %s" % exc) from None
    if color != -1:
        im = ImageOps.exif_transpose(im)   # OpenCV applies EXIF orientation unless 'unchanged'
    if color == 1:
        return im if im.mode == "RGB" else im.convert("RGB")
    if color == 0:
        return im if im.mode == "L" else im.convert("L")
    if im.mode in ("RGB", "RGBA", "L", "I;16"):
        return im
    if im.mode in ("LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        return im.convert("RGBA")
    return im.convert("RGB")


def image_encode(args, item):
    """Return the packed record for list item ``[index, path, label, ...]``.

    Raises SkipImage when the image cannot be read or encoded.
    """
    fullpath = os.path.join(args.root, item[1])
    if len(item) > 3 and args.pack_label:
        header = recordio.IRHeader(0, item[2:], item[0], 0)
    else:
        header = recordio.IRHeader(0, item[2], item[0], 0)

    if args.pass_through:
        try:
            with open(fullpath, "rb") as fin:
                return recordio.pack(header, fin.read())
        except OSError as exc:
            raise SkipImage("cannot read file: %s" % exc.strerror) from None

    from PIL import Image
    im = _load(fullpath, args.color)
    w, h = im.size
    if args.center_crop:
        if h > w:
            margin = (h - w) // 2
            im = im.crop((0, margin, w, margin + w))
        else:
            margin = (w - h) // 2
            im = im.crop((margin, 0, margin + h, h))
        w, h = im.size
    if args.resize:
        if h > w:
            newsize = (args.resize, h * args.resize // w)
        else:
            newsize = (w * args.resize // h, args.resize)
        im = im.resize(newsize, Image.BILINEAR)
    out = io.BytesIO()
    try:
        if args.encoding == ".jpg":
            if im.mode not in ("RGB", "L"):
                im = im.convert("L" if im.mode == "I;16" else "RGB")
            im.save(out, "JPEG", quality=min(max(args.quality, 1), 100))
        else:
            im.save(out, "PNG", compress_level=min(max(args.quality, 0), 9))
    except Exception as exc:
        raise SkipImage("cannot encode image: %s" % exc) from None
    return recordio.pack(header, out.getvalue())


def _progress(total, desc):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency of the image extra
        return None
    return tqdm(total=total, desc=desc, unit="img", file=sys.stderr, disable=None)


def _report(bar, msg):
    if bar is not None:
        bar.write(msg, file=sys.stderr)
    else:
        print(msg, file=sys.stderr)


def write_record(args, lst_path, working_dir):
    """Pack the images of ``lst_path`` into ``<working_dir>/<list name>.rec/.idx``.

    Returns ``(written, skipped)``.
    """
    items = list(read_list(lst_path))
    stem = os.path.splitext(os.path.basename(lst_path))[0]
    rec_path = os.path.join(working_dir, stem + ".rec")
    idx_path = os.path.join(working_dir, stem + ".idx")
    bar = _progress(len(items), stem)
    written = skipped = 0
    nthread = max(1, args.num_thread)

    def encode(item):
        try:
            return image_encode(args, item), None
        except SkipImage as exc:
            return None, str(exc)

    # the .rec/.idx replace the old ones only once every image is packed (recordio's close)
    record = recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=nthread) as pool:
            pending = collections.deque()
            window = 4 * nthread
            it = iter(items)

            def submit_one():
                item = next(it, None)
                if item is not None:
                    pending.append((item, pool.submit(encode, item)))

            for _ in range(window):
                submit_one()
            while pending:
                item, fut = pending.popleft()
                submit_one()
                s, why = fut.result()
                if s is None:
                    skipped += 1
                    _report(bar, "im2rec: skipping %s: %s" % (os.path.join(args.root, item[1]), why))
                else:
                    record.write_idx(item[0], s)
                    written += 1
                if bar is not None:
                    bar.update(1)
    except BaseException:
        record._discard()           # interrupted: the old files (if any) stay as they were
        raise
    else:
        record.close()
    finally:
        if bar is not None:
            bar.close()
    print("wrote %d records to %s (%d skipped)" % (written, rec_path, skipped))
    return written, skipped


def parse_args(argv=None):
    """Parse im2rec's command line (MXNet's options and defaults)."""
    parser = argparse.ArgumentParser(
        prog="mxc-im2rec",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Create an image list or make a record database by reading from an image list")
    parser.add_argument("prefix", help="prefix of input/output lst and rec files.")
    parser.add_argument("root", help="path to folder containing images.")

    cgroup = parser.add_argument_group("Options for creating image lists")
    cgroup.add_argument("--list", action="store_true",
                        help="If this is set im2rec will create image list(s) by traversing root "
                             "folder and output to <prefix>.lst. Otherwise im2rec will read "
                             "<prefix>.lst and create a database at <prefix>.rec")
    cgroup.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"],
                        help="list of acceptable image extensions.")
    cgroup.add_argument("--chunks", type=int, default=1, help="number of chunks.")
    cgroup.add_argument("--train-ratio", type=float, default=1.0,
                        help="Ratio of images to use for training.")
    cgroup.add_argument("--test-ratio", type=float, default=0,
                        help="Ratio of images to use for testing.")
    cgroup.add_argument("--recursive", action="store_true",
                        help="If true recursively walk through subdirs and assign an unique label "
                             "to images in each folder. Otherwise only include images in the root "
                             "folder and give them label 0.")
    cgroup.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                        help="If this is passed, im2rec will not randomize the image order in "
                             "<prefix>.lst")
    rgroup = parser.add_argument_group("Options for creating database")
    rgroup.add_argument("--pass-through", action="store_true",
                        help="whether to skip transformation and save image as is")
    rgroup.add_argument("--resize", type=int, default=0,
                        help="resize the shorter edge of image to the newsize, original images "
                             "will be packed by default.")
    rgroup.add_argument("--center-crop", action="store_true",
                        help="specify whether to crop the center image to make it rectangular.")
    rgroup.add_argument("--quality", type=int, default=95,
                        help="JPEG quality for encoding, 1-100; or PNG compression for encoding, 1-9")
    rgroup.add_argument("--num-thread", type=int, default=1,
                        help="number of threads to use for encoding; records are still written "
                             "in list order.")
    rgroup.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                        help="specify the color mode of the loaded image. 1: Loads a color image. "
                             "Any transparency of image will be neglected. It is the default "
                             "flag. 0: Loads image in grayscale mode. -1:Loads image as such "
                             "including alpha channel.")
    rgroup.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"],
                        help="specify the encoding of the images.")
    rgroup.add_argument("--pack-label", action="store_true",
                        help="Whether to also pack multi dimensional label in the record file")
    args = parser.parse_args(argv)
    if args.chunks < 1:
        parser.error("--chunks must be at least 1")
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    args.exts = [e.lower() for e in args.exts]
    return args


def main(argv=None):
    """Entry point of ``mxc-im2rec`` / ``python -m mxc.tools.im2rec``; returns the exit status."""
    args = parse_args(argv)
    if not os.path.isdir(args.root):
        print("im2rec: image root %s is not a directory" % args.root, file=sys.stderr)
        return 2
    if args.list:
        make_list(args)
        return 0
    working_dir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
    lists = sorted(os.path.join(working_dir, f) for f in os.listdir(working_dir)
                   if os.path.isfile(os.path.join(working_dir, f)))
    lists = [f for f in lists if f.startswith(args.prefix) and f.endswith(".lst")]
    if not lists:
        print("im2rec: did not find any list file with prefix %s" % args.prefix, file=sys.stderr)
        return 1
    for fname in lists:
        print("Creating .rec file from", fname, "in", working_dir)
        try:
            write_record(args, fname, working_dir)
        except ValueError as exc:       # a bad .lst line (read_list names file and line)
            print("im2rec: %s" % exc, file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
