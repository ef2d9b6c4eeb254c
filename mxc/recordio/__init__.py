"""Read and write MXNet's RecordIO files (``.rec`` with an optional ``.idx``), byte for byte.

The API is MXNet 1.x's ``mxnet.recordio``: :class:`MXRecordIO`, :class:`MXIndexedRecordIO`,
:data:`IRHeader`, :func:`pack`, :func:`unpack`, :func:`pack_img`, :func:`unpack_img`.  Record
framing, the prefetching reader thread and the writer run natively (``mxc/recordio/_rio.pyx`` over
``csrc/recordio/rio.h``).  Images are encoded and decoded with Pillow; like MXNet (which uses
OpenCV), color images travel as **BGR** numpy arrays.  See docs/recordio.md.
"""
import functools
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from ..base import MXNetError
from .._core import atomic_write
from . import _rio

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img", "scan_offsets"]


def _path_str(uri):
    uri = os.fspath(uri)
    return os.fsdecode(uri) if isinstance(uri, bytes) else uri


class MXRecordIO:
    """Reads/writes the RecordIO data format, supporting sequential read and write.

    Parameters
    ----------
    uri : str or os.PathLike
        Path to the record file.
    flag : str
        'w' for write or 'r' for read.

    Notes
    -----
    Reading prefetches: a background thread reads and frames records ahead of ``read()`` without
    holding the GIL.  ``close()`` (also called when the object is collected) stops and joins it.
    A writer ('w') writes a temporary file beside ``uri`` and renames it over ``uri`` at
    ``close()``: until then, and forever if the writer is killed or a ``with`` block raises, the
    old file stays as it was (MXNet truncates it at open). A later writer of the same file
    removes a dead writer's temporary (mxc/_core/atomic_write.py).

    Examples
    --------
    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write(b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'r')
    >>> record.read()
    b'record_0'
    """

    def __init__(self, uri, flag):
        self.uri = _path_str(uri)
        self._tmp = None            # a writer's temporary, renamed over uri at close()
        self.handle = None
        self.flag = flag
        self.pid = None
        self.is_open = False
        self.writable = None
        self.open()

    def open(self):
        """Opens the record file."""
        if self.flag == "w":
            tmp = atomic_write.temp_path(self.uri)
            try:
                self.handle = _rio.RecordWriter(tmp)
            except BaseException as e:
                atomic_write.discard(tmp)
                if isinstance(e, MXNetError):       # named after the file asked for
                    raise MXNetError(str(e).replace(tmp, self.uri)) from None
                raise
            self._tmp = tmp
            self.writable = True
        elif self.flag == "r":
            self.handle = _rio.RecordReader(self.uri)
            self.writable = False
            # read() is the native reader's own (it checks closed / forked child itself): a
            # record costs one C call, not a Python frame as well (~40% of a 1 KiB record)
            self.read = self.handle.read
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        self.pid = os.getpid()
        self.is_open = True

    def __del__(self):
        if getattr(self, "writable", None) is False:
            # a reader's native handle closes itself once its last user lets go of it (the
            # bound read() may outlive this object: MXRecordIO(path, "r").read())
            return
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is not None and self.writable:
            self._discard()         # a failed block leaves the old file, not a part
        else:
            self.close()

    def __getstate__(self):
        """Pickle as (path, flag, open or not): an open file is reopened when unpickled."""
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d["is_open"] = is_open
        del d["handle"]
        d.pop("read", None)         # the native reader's method, bound again by open()
        return d

    def __setstate__(self, d):
        self.__dict__ = d
        is_open = d["is_open"]
        self.is_open = False
        self.handle = None
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """Reopen (allow_reset) or refuse when used in another process than the one that opened."""
        if self.pid != os.getpid():
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes")

    def close(self):
        """Closes the record file (stops the prefetch thread of a reader); a writer's file
        replaces ``uri`` now."""
        if not getattr(self, "is_open", False):
            return
        self.handle.close()
        self.is_open = False
        self._finish(commit=self.pid == os.getpid())
        self.pid = None

    def _finish(self, commit):
        """A closed writer's temporary: renamed over uri, or removed. A forked child never
        commits its parent's file."""
        tmp, self._tmp = getattr(self, "_tmp", None), None
        if tmp is None:
            return
        if commit:
            atomic_write.commit(tmp, self.uri)
        elif self.pid == os.getpid():
            atomic_write.discard(tmp)

    def _discard(self):
        """Close a writer without writing its file (the old one, if any, stays)."""
        if not getattr(self, "is_open", False):
            return
        self.handle.close()
        self.is_open = False
        self._finish(commit=False)
        self.pid = None

    def reset(self):
        """Resets the pointer to the first item.

        A reader starts again from the first record; a writer ('w') truncates the file to empty,
        as in MXNet.
        """
        self.close()
        self.open()

    def _require_open(self):
        if not self.is_open:
            raise MXNetError(f"{self.uri}: the record file is closed")

    def write(self, buf):
        """Inserts a buffer as a record.

        Parameters
        ----------
        buf : bytes
            Record to write (any contiguous bytes-like object).
        """
        assert self.writable
        self._require_open()
        self._check_pid(allow_reset=False)
        self.handle.write(buf)

    def read(self):
        """Returns the next record as bytes, or None after the last record.

        Raises
        ------
        MXNetError
            On a malformed or truncated file, naming the file and the byte offset.
        """
        assert not self.writable
        # hot path: the native reader checks closed / forked-child itself
        try:
            return self.handle.read()
        except AttributeError:
            self._require_open()
            raise

    def tell(self):
        """Returns the current position: where the next record is written (or read)."""
        self._require_open()
        return self.handle.tell()


class MXIndexedRecordIO(MXRecordIO):
    """Reads/writes the RecordIO data format, supporting random access through a ``.idx`` file.

    Parameters
    ----------
    idx_path : str or os.PathLike
        Path to the index file (lines ``key\\toffset``).
    uri : str or os.PathLike
        Path to the record file. Only supports seekable file types.
    flag : str
        'w' for write or 'r' for read.
    key_type : type
        Data type for keys.

    Examples
    --------
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write_idx(i, b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'r')
    >>> record.read_idx(3)
    b'record_3'
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = _path_str(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        self._idx_tmp = None        # a writer's index, renamed over idx_path after the records
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        if self.writable:
            self._idx_tmp = atomic_write.temp_path(self.idx_path)
            try:
                self.fidx = open(self._idx_tmp, "w", encoding="utf-8")
            except OSError as e:        # named after the index asked for
                self._discard()
                raise type(e)(e.errno, e.strerror, self.idx_path) from None
            return
        try:
            with open(self.idx_path, "rb") as f:
                data = f.read()
        except OSError as exc:          # MXNet's open() error: FileNotFoundError, ...
            self.handle.close()
            self.is_open = False
            raise type(exc)(exc.errno, f"cannot open index file for {self.uri}: {exc.strerror}",
                            self.idx_path) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.handle.close()
            self.is_open = False
            line = data.count(b"\n", 0, exc.start) + 1
            raise MXNetError(f"{self.idx_path}, line {line}: not text (byte {exc.start} is not "
                             f"UTF-8); is it the index of {self.uri}?") from None
        self.fidx = None
        size = self.handle.file_size()
        try:
            self._parse_index(text, size)
        except Exception:
            self.handle.close()
            self.is_open = False
            raise
        starts = np.unique(np.fromiter(self.idx.values(), dtype=np.int64, count=len(self.idx)))
        self.handle.set_starts(np.append(starts, size))

    def _parse_index(self, text, size):
        idx, keys, key_type = self.idx, self.keys, self.key_type
        for lineno, line in enumerate(text.splitlines(), 1):
            parts = line.strip().split("\t")
            if parts == [""]:
                continue
            try:
                if len(parts) != 2:
                    raise ValueError("expected 'key<TAB>offset'")
                key = key_type(parts[0])
                pos = int(parts[1])
            except ValueError as exc:
                raise MXNetError(f"{self.idx_path}, line {lineno}: malformed index entry "
                                 f"{line!r} ({exc})") from None
            if pos < 0 or pos >= size:
                raise MXNetError(f"{self.idx_path}, line {lineno}: key {parts[0]} points at byte "
                                 f"offset {pos}, outside {self.uri} ({size} bytes); the index "
                                 f"does not belong to this file")
            idx[key] = pos
            keys.append(key)

    def close(self):
        """Closes the record file and the index (a writer's .rec, then its .idx, replace the
        old ones now)."""
        if not getattr(self, "is_open", False):
            return
        if self.fidx is not None:
            self.fidx.close()
            self.fidx = None
        super().close()

    def _discard(self):
        if self.fidx is not None:
            self.fidx.close()
            self.fidx = None
        super()._discard()

    def _finish(self, commit):
        super()._finish(commit)
        tmp, self._idx_tmp = getattr(self, "_idx_tmp", None), None
        if tmp is None:
            return
        if commit:
            atomic_write.commit(tmp, self.idx_path)
        elif self.pid == os.getpid():
            atomic_write.discard(tmp)

    def __getstate__(self):
        d = super().__getstate__()
        d["fidx"] = None
        return d

    def seek(self, idx):
        """Sets the read position to the record with key ``idx``; ``read()`` then returns it."""
        assert not self.writable
        self._require_open()
        self._check_pid(allow_reset=True)
        self.handle.seek(self._offset(idx))

    def _offset(self, idx):
        try:
            return self.idx[idx]
        except KeyError:
            raise KeyError(f"key {idx!r} is not in the index {self.idx_path}") from None

    def tell(self):
        """Returns the current position of the write head (byte offset of the next record)."""
        assert self.writable
        return super().tell()

    def read_idx(self, idx):
        """Returns the record with key ``idx``.

        Raises MXNetError (naming file and offset) when the index entry does not point at a record.
        """
        assert not self.writable
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError(f"key {idx!r} is not in the index {self.idx_path}") from None
        # hot path: the native reader checks closed / forked child itself (no getpid here)
        try:
            return self.handle.read_at(pos)
        except _rio.ForkedError:
            self.reset()                 # in a forked child: reopen, as MXNet's seek does
            return self.handle.read_at(pos)
        except AttributeError:
            self._require_open()
            raise

    def write_idx(self, idx, buf):
        """Inserts a record with key ``idx`` (the index line is flushed with it)."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.fidx.flush()
        self.idx[key] = pos
        self.keys.append(key)


def scan_offsets(uri):
    """Byte offsets of every record of a ``.rec`` file, in order (an mxc addition).

    Reads only record headers, so it is cheap even for large files; useful to rebuild a lost
    ``.idx`` (``key = position``) or to shard a file without one.

    Returns
    -------
    numpy.ndarray of int64
    """
    return _rio.scan(_path_str(uri))


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""Header of an image record: ``flag`` (number of float labels that follow, 0 for one scalar
label), ``label`` (float or array of floats), ``id`` and ``id2`` (64-bit record ids)."""

_IR_FORMAT = "IfQQ"
# IRHeader from a 4-tuple without the namedtuple's Python-level __new__ (a third of unpack())
_new_header = functools.partial(tuple.__new__, IRHeader)
_IR_STRUCT = struct.Struct(_IR_FORMAT)
_IR_SIZE = _IR_STRUCT.size


def pack(header, s):
    """Pack a byte string into an MXImageRecord.

    Parameters
    ----------
    header : IRHeader
        Header of the record.  ``header.label`` may be a number or an array; an array is stored
        as float32 after the header and ``flag`` is set to its size.
    s : bytes
        Payload (e.g. an encoded image).

    Returns
    -------
    bytes
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """Unpack an MXImageRecord into ``(IRHeader, payload bytes)``.

    With ``flag > 0`` the header's label is a float32 array of ``flag`` values.
    """
    if len(s) < _IR_SIZE:
        raise ValueError(f"record of {len(s)} bytes is shorter than the {_IR_SIZE}-byte IRHeader")
    # one precompiled unpack_from and one slice: no copy of the header bytes, no _replace
    flag, label, id_, id2 = _IR_STRUCT.unpack_from(s)
    if flag > 0:
        if len(s) - _IR_SIZE < 4 * flag:
            raise ValueError(f"IRHeader announces {flag} float labels but the record holds "
                             f"only {len(s) - _IR_SIZE} bytes after the header")
        label = np.frombuffer(s, np.float32, flag, _IR_SIZE)
        return _new_header((flag, label, id_, id2)), s[_IR_SIZE + 4 * flag:]
    return _new_header((flag, label, id_, id2)), s[_IR_SIZE:]


def _pil():
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is a dependency of the image extra
        raise ImportError("pack_img/unpack_img need Pillow (pip install Pillow)") from exc
    return Image


def decode_image(buf, iscolor=-1):
    """Decode an encoded image into a numpy array the way ``cv2.imdecode(buf, iscolor)`` does.

    ``iscolor`` 1: 3 channels BGR; 0: one channel, shape (h, w); -1: as stored (gray (h, w), BGR,
    BGRA, uint16 for 16-bit grayscale PNG).  For 1 and 0 the EXIF orientation is applied, as
    OpenCV does.  Raises ValueError when the bytes are not a decodable image.
    """
    import io
    Image = _pil()
    from PIL import ImageOps
    try:
        im = Image.open(io.BytesIO(buf))
        if iscolor == 0 and im.format == "JPEG":
            # let libjpeg produce luma directly, as OpenCV does for grayscale JPEG reads
            im.draft("L", im.size)
        im.load()
    except Exception as exc:
        raise ValueError(f"cannot decode image ({len(buf)} bytes): {exc}") from None
    if iscolor >= 0:
        im = ImageOps.exif_transpose(im)
    mode = im.mode
    if iscolor == 0:
        if mode in ("I;16", "I;16B", "I;16L", "I"):
            arr = np.asarray(im)
            return (arr.astype(np.uint32) >> 8).astype(np.uint8) if arr.dtype != np.uint8 else arr
        return np.asarray(im if mode == "L" else im.convert("L"))
    if iscolor > 0:
        if mode in ("I;16", "I;16B", "I;16L", "I"):
            g = (np.asarray(im).astype(np.uint32) >> 8).astype(np.uint8)
            return np.repeat(g[:, :, None], 3, axis=2)
        rgb = np.asarray(im if mode == "RGB" else im.convert("RGB"))
        return np.ascontiguousarray(rgb[:, :, ::-1])
    # iscolor < 0: unchanged
    if mode in ("L", "1"):
        return np.asarray(im.convert("L"))
    if mode in ("I;16", "I;16B", "I;16L"):
        return np.asarray(im).astype(np.uint16)
    if mode == "I":
        return np.asarray(im).astype(np.uint16)
    if mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in im.info):
        rgba = np.asarray(im.convert("RGBA"))
        return np.ascontiguousarray(rgba[:, :, [2, 1, 0, 3]])
    rgb = np.asarray(im if mode == "RGB" else im.convert("RGB"))
    return np.ascontiguousarray(rgb[:, :, ::-1])


def encode_image(img, quality=95, img_fmt=".jpg"):
    """Encode a numpy image (BGR / BGRA / gray, as OpenCV expects) to JPEG or PNG bytes.

    ``quality`` is the JPEG quality (1-100) or the PNG compression level (0-9), as in
    ``cv2.imencode`` with IMWRITE_JPEG_QUALITY / IMWRITE_PNG_COMPRESSION.
    """
    import io
    Image = _pil()
    fmt = img_fmt.upper()
    if fmt in (".JPG", ".JPEG"):
        kind = "JPEG"
    elif fmt == ".PNG":
        kind = "PNG"
    else:
        raise ValueError(f"unsupported image format {img_fmt!r}: use '.jpg' or '.png'")
    arr = np.asarray(img)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.ndim == 2:
        if arr.dtype == np.uint16 and kind == "PNG":
            im = Image.fromarray(np.ascontiguousarray(arr), mode="I;16")
        else:
            im = Image.fromarray(np.ascontiguousarray(arr.astype(np.uint8, copy=False)), "L")
    elif arr.ndim == 3 and arr.shape[2] in (3, 4):
        if arr.dtype != np.uint8:
            raise ValueError(f"can only encode uint8 color images, got {arr.dtype}")
        if arr.shape[2] == 4 and kind == "PNG":
            im = Image.fromarray(np.ascontiguousarray(arr[:, :, [2, 1, 0, 3]]), "RGBA")
        else:
            im = Image.fromarray(np.ascontiguousarray(arr[:, :, 2::-1]), "RGB")
    else:
        raise ValueError(f"cannot encode an image of shape {arr.shape}: expected (h, w), "
                         f"(h, w, 1), (h, w, 3) or (h, w, 4)")
    out = io.BytesIO()
    # OpenCV clamps both settings into range rather than failing; so do we
    if kind == "JPEG":
        im.save(out, "JPEG", quality=min(max(int(quality), 1), 100))
    else:
        im.save(out, "PNG", compress_level=min(max(int(quality), 0), 9))
    return out.getvalue()


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Pack an image into an MXImageRecord.

    Parameters
    ----------
    header : IRHeader
        Header of the image record; ``header.label`` may be a number or an array.
    img : numpy.ndarray
        Image to pack, uint8, in OpenCV's channel order: (h, w) gray, (h, w, 3) **BGR**, or
        (h, w, 4) BGRA (PNG only keeps alpha).
    quality : int
        Quality for JPEG encoding in range 1-100, or compression for PNG encoding in range 0-9.
    img_fmt : str
        Encoding of the image ('.jpg' for JPEG, '.png' for PNG).

    Returns
    -------
    bytes
    """
    return pack(header, encode_image(img, quality=quality, img_fmt=img_fmt))


def unpack_img(s, iscolor=-1):
    """Unpack an MXImageRecord into ``(IRHeader, image)``.

    Parameters
    ----------
    s : bytes
        A record from ``MXRecordIO.read``.
    iscolor : int
        As OpenCV's imdecode flag: 1 color (**BGR**, 3 channels), 0 grayscale (h, w), -1 as
        stored.

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray
        uint8 image in BGR order for color images, like MXNet's ``unpack_img``.

    Raises
    ------
    ValueError
        When the payload is not a decodable image (MXNet returned None there).
    """
    header, s = unpack(s)
    return header, decode_image(s, iscolor)
