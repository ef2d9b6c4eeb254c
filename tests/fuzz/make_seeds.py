"""Writes the seed corpora tests/fuzz/corpus/<target>/ from files real MXNet 1.9.1 wrote
(tests/data: .params, .rec/.idx, image records, -symbol.json, im2rec .lst; see the make_*
scripts there), plus one npx file written here (a 0-d and a zero-size array). Run from the
repository root: ``PYTHONPATH=. python tests/fuzz/make_seeds.py``."""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def read(*path):
    with open(os.path.join(DATA, *path), "rb") as f:
        return f.read()


def joined(a, b):
    """Two inputs as one (targets.py's _split): a 2-byte length, a, then b."""
    return struct.pack("<H", len(a)) + a + b


def records(rec):
    """The records of a .rec file (magic, length word, payload padded to 4 bytes)."""
    out, pos = [], 0
    while pos + 8 <= len(rec):
        n = struct.unpack("<I", rec[pos + 4:pos + 8])[0] & ((1 << 29) - 1)
        out.append(rec[pos + 8:pos + 8 + n])
        pos += 8 + (n + 3) // 4 * 4
    return out


def seeds():
    p = {name: read("params", name) for name in ("single.params", "list_mixed.params",
                                                 "dict_dtypes.params", "empty_list.params",
                                                 "sparse_csr.params", "sparse_rsp.params",
                                                 "gluon_dense.params", "scalar_v2.params")}
    yield "params", p
    import numpy as np
    from mxc.ndarray import serialize
    zero_d_and_empty = b"".join(serialize._encode_parts({"s": np.float32(2.5).reshape(()),
                                                         "e": np.zeros((0, 3), np.int64)}, True))
    yield "npx", {"np_v3.params": read("params", "np_v3.params"),
                  "scalar_and_empty.params": zero_d_and_empty}
    yield "recordio", {"basic": joined(read("recordio", "basic.idx"), read("recordio", "basic.rec")),
                       "im2rec_r8": joined(read("recordio", "im2rec_r8.idx"),
                                           read("recordio", "im2rec_r8.rec"))}
    imgs = records(read("recordio", "im2rec_r8.rec")) + records(read("recordio", "img.rec"))
    yield "unpack_img", {f"record{i}": r for i, r in enumerate(imgs)}
    yield "symbol_json", {n: read("symbol", n) for n in ("mlp-symbol.json", "convbn-symbol.json",
                                                         "legacy_000800-symbol.json")}
    jpg = read("recordio", "images", "cat", "a.jpg")
    png = read("recordio", "images", "cat", "b.png")
    yield "image_record_iter", {"jpg_png": joined(jpg, png)}
    yield "lst", {"im2rec.lst": read("recordio", "im2rec.lst"),
                  "labels.lst": b"0\t1.000000\t2.500000\tcat/a.jpg\n7\t0.000000\t0\tdog/c.jpg\n"}


def main():
    for target, files in seeds():
        d = os.path.join(HERE, "corpus", target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print(target, len(files), "seeds,", sum(map(len, files.values())), "bytes")


if __name__ == "__main__":
    main()
