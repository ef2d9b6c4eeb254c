"""The fuzz targets: each takes one input (bytes) and runs one parser of mxc over it.

A parser may refuse its input only with the errors bad input is promised to raise (MXNetError,
or ValueError where the API says so: unpack_img, im2rec's .lst); anything else (another
exception, a crash, a hang, a runaway allocation) is a bug the fuzzer reports.
"""
import os
import struct
import tempfile

# (nothing of mxc is imported here: the fuzzer instruments mxc's modules as it imports them)


# where a target writes its input as files; set by the caller (the fuzzer, a test)
SCRATCH = None


def _tmpdir():
    global SCRATCH
    if SCRATCH is None:
        SCRATCH = tempfile.mkdtemp(prefix="mxc-fuzz-")
    return SCRATCH


def _file(name, data):
    path = os.path.join(_tmpdir(), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _split(data):
    """Two inputs from one: a 2-byte length, that many bytes, then the rest."""
    n = struct.unpack("<H", data[:2])[0] if len(data) >= 2 else 0
    return data[2:2 + n], data[2 + n:]


def params(data):
    """MXNet's .params format (mx.nd.load)."""
    from mxc.ndarray import serialize
    serialize.load_bytes(data, "fuzz.params")


def npx(data):
    """The same format under numpy shape semantics (mx.npx.load: V3 entries, 0-d and
    zero-size arrays)."""
    from mxc.ndarray import serialize
    serialize.load_bytes(data, "fuzz.npx", np_shape=True)


def recordio(data):
    """A .rec and its .idx (the input split in two): the index parsed, every record read by key,
    as one batch (read_many) and in order."""
    from mxc import recordio as rio
    idx, rec = _split(data)
    rec_path, idx_path = _file("f.rec", rec), _file("f.idx", idx)
    r = rio.MXIndexedRecordIO(idx_path, rec_path, "r")
    try:
        keys = r.keys[:64][::-1]
        want = [r.read_idx(k) for k in keys]
        assert r.handle.read_many([r.idx[k] for k in keys]) == want
    finally:
        r.close()
    r = rio.MXRecordIO(rec_path, "r")
    try:
        for _ in range(64):
            if r.read() is None:
                break
    finally:
        r.close()


def unpack_img(data):
    """An image record: IRHeader, labels, then an encoded image (colour and as stored)."""
    from mxc import recordio as rio
    rio.unpack_img(data, 1)
    rio.unpack_img(data, -1)


def symbol_json(data):
    """A -symbol.json; a graph that loads also has its shapes inferred."""
    import mxc as mx
    sym = mx.sym.load_json(data.decode("utf-8", "replace"))
    sym.infer_shape_partial()


def image_record_iter(data):
    """ImageRecordIter over a .rec whose two records carry the input's bytes as images."""
    from mxc import recordio as rio
    from mxc.io import ImageRecordIter
    a, b = _split(data)
    path = os.path.join(_tmpdir(), "img.rec")
    with rio.MXRecordIO(path, "w") as w:
        for i, payload in enumerate((a, b)):
            w.write(rio.pack(rio.IRHeader(0, float(i), i, 0), payload))
    it = ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=2,
                         preprocess_threads=1, prefetch_buffer=1)
    try:
        for _ in it:
            pass
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


def lst(data):
    """An im2rec .lst file."""
    from mxc.tools import im2rec
    for _ in im2rec.read_list(_file("f.lst", data)):
        pass


TARGETS = {f.__name__: f for f in (params, npx, recordio, unpack_img, symbol_json,
                                   image_record_iter, lst)}

# the modules whose coverage guides each target (instrumenting all of mxc costs half a minute
# of start-up)
MODULES = {
    "params": ["mxc.ndarray.serialize"],
    "npx": ["mxc.ndarray.serialize"],
    "recordio": ["mxc.recordio"],
    "unpack_img": ["mxc.recordio"],
    "symbol_json": ["mxc.symbol.json", "mxc.symbol.infer"],
    "image_record_iter": ["mxc.image.record_iter"],
    "lst": ["mxc.tools.im2rec"],
}


def run(target, data):
    """Run one input; a refusal (MXNetError, ValueError) is fine, anything else propagates (the
    fuzzer's crash)."""
    from mxc.base import MXNetError
    try:
        TARGETS[target](data)
    except (MXNetError, ValueError):
        pass
