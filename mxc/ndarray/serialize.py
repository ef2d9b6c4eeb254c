"""MXNet's binary NDArray list format (``.params``, ``mx.nd.save`` / ``mx.nd.load``).

Pure numpy; the NDArray front end wraps these functions. The layout, all integers
little-endian, as MXNet 1.9.1 writes it (src/ndarray/ndarray.cc, NDArray::Save)::

    file    := u64 0x112 (list magic) | u64 reserved (0)
               | u64 n | entry * n
               | u64 m (0, or n when names were saved) | (u64 len | utf-8 bytes) * m
    entry   := u32 0xF993FAC9 (V2) | i32 stype (0 dense) | shape | ctx | i32 type flag | data
    shape   := i32 ndim | i64 dim * ndim
    ctx     := i32 dev_type | i32 dev_id
    data    := itemsize * prod(shape) bytes, C order

Readers also accept what earlier and later MXNet 1.x wrote:

* V3 (0xF993FACA, np-shape semantics, mx.npx.save): as V2; ndim -1 or a dim of -1
  means "unknown shape", which ends the entry (an uninitialised array).
* V1 (0xF993FAC8): no stype field; ``shape | ctx | type flag | data``.
* pre-V1: no magic at all; the first u32 is ndim, followed by u32 dims.
  In both legacy layouts ndim 0 was an uninitialised array with nothing after it.

Sparse entries (stype 1 row_sparse, 2 csr) carry a storage shape and aux arrays::

    entry   := u32 magic | i32 stype | sshape (the values' shape) | shape | ctx | i32 type flag
               | (i32 aux type flag | aux shape) * naux | values | aux data * naux

with aux = (indices) for row_sparse and (indptr, indices) for csr, int64. They load as
:class:`SparseEntry` (and save from one); every size is checked against the bytes left and
the shapes against each other before anything is allocated, and the indices are checked
(in range, sorted, indptr monotonic) before the entry is returned.

Uninitialised ("none") entries load as ``None``: MXNet loads them as an NDArray
without shape or data, and 1.9.1 itself can no longer write them.

A 0-d array is written the way mx.nd.save in MXNet 1.9.1 writes it with np shape
off: V2 magic, ndim 0, then the context, type flag and one element. (MXNet 1.9.1
itself reads that back only with np shape globally on; mxc always reads it as 0-d.)
"""
import os
import struct

import numpy as np

from ..base import MXNetError, bfloat16, np_dtype
from .._core import atomic_write
from .._core.api_calls import api_call

__all__ = ["save_bytes", "load_bytes", "save", "load"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

_STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}

# mshadow's TypeFlag -> little-endian numpy dtype. 8..11 cannot be created from the
# Python API of MXNet 1.9.1 but are defined in its type enum, so we read them.
_FLAG_TO_DTYPE = {
    0: np.dtype("<f4"), 1: np.dtype("<f8"), 2: np.dtype("<f2"), 3: np.dtype("u1"),
    4: np.dtype("<i4"), 5: np.dtype("i1"), 6: np.dtype("<i8"), 7: np.dtype("?"),
    8: np.dtype("<i2"), 9: np.dtype("<u2"), 10: np.dtype("<u4"), 11: np.dtype("<u8"),
    12: bfloat16,       # ml_dtypes' (native order: mxc runs on little-endian hosts only)
}

# Only what MXNet 1.9.1 can hold in an NDArray is written, so every file we write
# loads in real MXNet.
# Keyed by (kind, itemsize) so that any byte order ('>f4') and aliases with the same
# layout (np.longlong next to np.int64) are accepted.
_SAVE_DTYPES = {
    ("f", 4): 0, ("f", 8): 1, ("f", 2): 2, ("u", 1): 3,
    ("i", 4): 4, ("i", 1): 5, ("i", 8): 6, ("b", 1): 7,
}


def _save_layout(dtype):
    """(type flag, little-endian dtype) an array of `dtype` is written with; (None, None) when
    MXNet 1.9 cannot hold it. bfloat16 (ml_dtypes' or MXNet's stand-in) is flag 12."""
    if dtype.kind == "V":
        if dtype.itemsize == 2 and np_dtype(dtype) is bfloat16:
            return 12, bfloat16
        return None, None
    flag = _SAVE_DTYPES.get((dtype.kind, dtype.itemsize))
    if flag is None:
        return None, None
    return flag, (dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype)

# numpy 2 allows 64 dimensions; anything above cannot become an array anyway.
_MAX_NDIM = 64

# Smallest number of bytes any entry can occupy (a pre-V1 entry with ndim 0), and a
# name (its u64 length); bounds counts before any list is built from them.
_MIN_ENTRY_BYTES = 4
_MIN_NAME_BYTES = 8

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_HEADER = struct.Struct("<QQQ")
_ENTRY_HEAD = struct.Struct("<Iii")      # magic, stype, ndim
_CTX_TYPE = struct.Struct("<iii")        # dev_type, dev_id, type flag
_CPU_CTX = (1, 0)                        # Context::CPU(): kCPU = 1, dev_id 0


_STYPE_IDS = {"row_sparse": 1, "csr": 2}


class SparseEntry:
    """A sparse array in numpy parts: stype 'row_sparse' (aux = [indices]) or 'csr'
    (aux = [indptr, indices]), in MXNet's aux order; `data` holds the stored values."""

    __slots__ = ("stype", "shape", "data", "aux")

    def __init__(self, stype, shape, data, aux):
        self.stype, self.shape, self.data, self.aux = stype, tuple(shape), data, list(aux)

    def __repr__(self):
        return f"SparseEntry({self.stype}, shape={self.shape}, nnz={self.data.shape[:1]})"


def _shape_bytes(shape):
    return _I32.pack(len(shape)) + struct.pack(f"<{len(shape)}q", *shape)


def _sparse_entry_parts(label, e, magic):
    if magic == V3_MAGIC:
        raise ValueError(f"entry {label}: only default storage can be saved with numpy shape "
                         "semantics (as MXNet)")
    data = np.asarray(e.data)
    flag, le = _save_layout(data.dtype)
    if flag is None:
        raise TypeError(f"entry {label} has dtype {data.dtype}, which .params cannot hold")
    body = np.ascontiguousarray(data).view(le) if le is bfloat16 else \
        np.ascontiguousarray(data, dtype=le)
    aux = [np.ascontiguousarray(a, dtype="<i8") for a in e.aux]
    head = [struct.pack("<Ii", magic, _STYPE_IDS[e.stype]), _shape_bytes(data.shape),
            _shape_bytes(e.shape), _CTX_TYPE.pack(_CPU_CTX[0], _CPU_CTX[1], flag)]
    for a in aux:
        head.append(_I32.pack(6) + _shape_bytes(a.shape))
    parts = [b"".join(head)]
    for arr in [body] + aux:
        if arr.size:
            parts.append(memoryview(arr.reshape(-1).view(np.uint8)))
    return parts


# --------------------------------------------------------------------------- writing

def _entries(data):
    """Normalise ``data`` to (names or None, [arrays]); raises before any I/O."""
    if isinstance(data, np.ndarray):
        return None, [data]            # mx.nd.save saves a single array as a list of one
    if isinstance(data, dict):
        names, arrays = [], []
        for key, value in data.items():
            if not isinstance(key, str):
                raise TypeError("save only accepts dict str->array or list of arrays; "
                                f"got key {key!r} of type {type(key).__name__}")
            if "\0" in key:
                # MXNet passes names as C strings and would cut them at the NUL.
                raise ValueError(f"array name {key!r} contains a NUL character")
            names.append(key)
            arrays.append(value)
        # An empty dict is written with no names, exactly as MXNet does (and loads as []).
        return (names if names else None), arrays
    if isinstance(data, (list, tuple)):
        return None, list(data)
    raise ValueError("data needs to be a numpy array, a list/tuple of numpy arrays or a "
                     f"dict of str -> numpy array, not {type(data).__name__}")


def _entry_parts(label, arr, magic):
    if isinstance(arr, SparseEntry):
        return _sparse_entry_parts(label, arr, magic)
    if isinstance(arr, np.generic):
        arr = np.asarray(arr)          # numpy scalars (e.g. from a reduction) save as 0-d
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"save only accepts numpy arrays; entry {label} is "
                        f"{type(arr).__name__}")
    flag, le = _save_layout(arr.dtype)
    if flag is None:
        supported = ", ".join(_FLAG_TO_DTYPE[f].name for f in list(_SAVE_DTYPES.values()) + [12])
        raise TypeError(f"entry {label} has dtype {arr.dtype}, which MXNet 1.9 .params "
                        f"files cannot hold (supported: {supported})")
    if arr.ndim > _MAX_NDIM:
        raise ValueError(f"entry {label} has {arr.ndim} dimensions (max {_MAX_NDIM})")
    body = np.ascontiguousarray(arr).view(le) if le is bfloat16 else \
        np.ascontiguousarray(arr, dtype=le)
    head = (_ENTRY_HEAD.pack(magic, 0, arr.ndim)
            + struct.pack(f"<{arr.ndim}q", *arr.shape)
            + _CTX_TYPE.pack(_CPU_CTX[0], _CPU_CTX[1], flag))
    if body.size == 0:
        return [head]
    return [head, memoryview(body.reshape(-1).view(np.uint8))]


def _encode_parts(data, np_shape=False):
    """The file as a list of bytes-like parts (array data is not copied).

    ``np_shape=True`` writes V3 entries, as mx.npx.save does under np-shape semantics;
    the byte layout is otherwise the same.
    """
    magic = V3_MAGIC if np_shape else V2_MAGIC
    names, arrays = _entries(data)
    parts = [_HEADER.pack(LIST_MAGIC, 0, len(arrays))]
    for i, arr in enumerate(arrays):
        label = repr(names[i]) if names is not None else str(i)
        parts.extend(_entry_parts(label, arr, magic))
    if names is None:
        parts.append(_U64.pack(0))
    else:
        parts.append(_U64.pack(len(names)))
        for name in names:
            raw = name.encode("utf-8")
            parts.append(_U64.pack(len(raw)))
            parts.append(raw)
    return parts


def save_bytes(data):
    """Serialize arrays to the bytes ``mx.nd.save`` writes.

    Parameters
    ----------
    data : numpy.ndarray, list or tuple of numpy.ndarray, or dict of str -> numpy.ndarray
        The arrays. A dict saves names (and loads back as a dict); a list, tuple or
        single array saves none. Supported dtypes: float32, float64, float16, uint8,
        int8, int32, int64, bool.

    Returns
    -------
    bytes
        Byte-identical to what MXNet 1.9.1 writes for the same dense CPU arrays.

    Raises
    ------
    TypeError
        A key is not a str, a value is not a numpy array, or a dtype cannot be saved.
    ValueError
        ``data`` is of an unsupported container type or a name contains NUL.
    """
    return b"".join(_encode_parts(data))


@api_call("MXNDArraySave")    # npx.save's front door (mx.nd.save records itself, outermost)
def save(fname, data, np_shape=False):
    """Save arrays to ``fname`` in MXNet's .params format, atomically.

    The file is written to a temporary file in the same directory and moved over
    ``fname`` with ``os.replace``, so a failure (bad data, full disk, a killed process) leaves
    any previous file untouched; a later save of the same file removes a dead writer's
    temporary (mxc/_core/atomic_write.py). An existing file's permission bits are kept.

    Parameters
    ----------
    fname : str or os.PathLike
        Destination file.
    data : numpy.ndarray, list or tuple of numpy.ndarray, or dict of str -> numpy.ndarray
        See :func:`save_bytes`.
    np_shape : bool
        Write V3 entries, as MXNet does with numpy shape semantics on (mx.np_shape()).
    """
    parts = _encode_parts(data, np_shape)          # every validation error is raised here, before I/O
    atomic_write.write_bytes(fname, parts)


# --------------------------------------------------------------------------- reading

class _Reader:
    """Bounds-checked cursor; every failure names the file and the byte offset.

    Subclasses supply ``_get(nbytes)`` (small reads for headers and names) and
    ``_fill(arr)`` (the raw bytes of one array, written into ``arr``); ``need`` has
    already checked that the bytes exist, so sizes are never trusted before that.
    """

    def __init__(self, end, source):
        self.pos = 0
        self.end = end
        self.source = source

    def fail(self, what, offset=None):
        off = self.pos if offset is None else offset
        raise MXNetError(f"invalid NDArray file {self.source}: {what} (at byte offset {off})")

    def need(self, nbytes, what):
        remaining = self.end - self.pos
        if nbytes > remaining:
            self.fail(f"truncated file: {what} needs {nbytes} bytes, only {remaining} remain")

    def take(self, nbytes, what):
        self.need(nbytes, what)
        raw = self._get(nbytes)
        self.pos += nbytes
        return raw

    def unpack(self, st, what):
        return st.unpack(self.take(st.size, what))

    def u32(self, what):
        return self.unpack(_U32, what)[0]

    def i32(self, what):
        return self.unpack(_I32, what)[0]

    def u64(self, what):
        return self.unpack(_U64, what)[0]

    def dims(self, ndim, itemsize, what):
        start = self.pos
        raw = self.take(ndim * itemsize, what)
        return struct.unpack("<%d%s" % (ndim, "q" if itemsize == 8 else "I"), raw), start

    def array(self, dtype, shape, count, what):
        """An owning, writable, native-order array of ``shape`` read from the file."""
        nbytes = count * dtype.itemsize
        self.need(nbytes, what)
        if count == 0 and shape:
            # numpy refuses shapes like (0, 2**62) even though they hold nothing.
            try:
                np.empty(shape, dtype=dtype)
            except ValueError:
                self.fail(f"{what}: shape {shape} is too large for numpy")
        if dtype.kind == "b":
            # Normalise whatever bytes the file holds to 0/1, as a C++ bool read would.
            raw = np.empty(shape, dtype=np.uint8)
            self._fill(raw, nbytes, what)
            arr = np.empty(shape, dtype=np.bool_)
            np.not_equal(raw, 0, out=arr)
        else:
            arr = np.empty(shape, dtype=dtype)
            self._fill(arr, nbytes, what)
            if not arr.dtype.isnative:      # big-endian hosts only
                arr = arr.astype(arr.dtype.newbyteorder("="))
        self.pos += nbytes
        return arr


class _BufferReader(_Reader):
    def __init__(self, view, source):
        super().__init__(len(view), source)
        self.buf = view

    def _get(self, nbytes):
        return self.buf[self.pos:self.pos + nbytes]

    def _fill(self, arr, nbytes, what):
        if nbytes:
            # One memcpy out of the source buffer into memory the array owns.
            np.copyto(arr.reshape(-1).view(np.uint8),
                      np.frombuffer(self.buf, dtype=np.uint8, count=nbytes, offset=self.pos))


class _FileReader(_Reader):
    """Reads straight from the file into each array's memory (no intermediate buffer)."""

    def __init__(self, f, size, source):
        super().__init__(size, source)
        self.f = f

    def _get(self, nbytes):
        raw = self.f.read(nbytes)
        if len(raw) != nbytes:
            self.fail(f"file shrank while being read: expected {nbytes} more bytes")
        return raw

    def _fill(self, arr, nbytes, what):
        if nbytes and self.f.readinto(memoryview(arr.reshape(-1).view(np.uint8))) != nbytes:
            self.fail(f"file shrank while being read: {what} incomplete")


def _read_ndim(r, label, allow_unknown):
    off = r.pos
    ndim = r.i32(f"{label} ndim")
    if ndim == -1 and allow_unknown:
        return ndim
    if ndim < 0 or ndim > _MAX_NDIM:
        r.fail(f"{label} has ndim {ndim} (must be 0..{_MAX_NDIM})", off)
    return ndim


def _read_shape(r, label, np_semantics):
    """A TShape (i32 ndim, i64 dims). Returns the shape, or None if unknown (V3 only)."""
    ndim = _read_ndim(r, label, np_semantics)
    if ndim == -1:
        return None
    shape, start = r.dims(ndim, 8, f"{label} shape")
    if any(d < 0 for d in shape):
        if np_semantics and all(d >= -1 for d in shape):
            return None
        r.fail(f"{label} has a negative dimension in shape {shape}", start)
    return shape


def _read_data(r, label, shape):
    """Context, type flag and data of a dense entry; returns an owning numpy array."""
    r.unpack(_U64, f"{label} context")     # dev_type, dev_id: ignored, we load to cpu
    flag_off = r.pos
    flag = r.i32(f"{label} type flag")
    dtype = _FLAG_TO_DTYPE.get(flag)
    if dtype is None:
        r.fail(f"{label} has unknown dtype flag {flag}", flag_off)
    count = 1
    for d in shape:
        count *= d
    return r.array(dtype, shape, count, f"{label} data ({count} x {dtype.name})")


def _check_semantics(r, label, magic, np_shape, start):
    """MXNet's NDArray::Load check: V3 entries need numpy shape semantics on, and every other
    entry needs them off. ``np_shape=None`` skips the check."""
    if np_shape is None:
        return
    if magic == V3_MAGIC and not np_shape:
        raise MXNetError(f"cannot load {r.source}: {label} was saved in np shape semantics, "
                         f"must be loaded in the same semantics. Please turn on np shape "
                         f"semantics with `with mx.np_shape(True)` (at byte offset {start})")
    if magic != V3_MAGIC and np_shape:
        raise MXNetError(f"cannot load {r.source}: {label} was not saved in np shape "
                         f"semantics, but is being loaded in np shape semantics. Please turn "
                         f"them off with `with mx.np_shape(False)` (at byte offset {start})")


def _read_entry(r, index, np_shape=None):
    label = f"entry {index}"
    start = r.pos
    magic = r.u32(f"{label} magic")
    _check_semantics(r, label, magic, np_shape, start)
    if magic in (V2_MAGIC, V3_MAGIC):
        np_semantics = magic == V3_MAGIC
        stype_off = r.pos
        stype = r.i32(f"{label} storage type")
        if stype != 0:
            if stype not in (1, 2):
                r.fail(f"{label} has unknown storage type {stype}", stype_off)
            if np_semantics:
                r.fail(f"{label}: sparse storage cannot be saved in np shape semantics",
                       stype_off)
            return _read_sparse(r, label, stype)
        shape = _read_shape(r, label, np_semantics)
        if shape is None:
            return None
        # ndim 0 in V2 is what MXNet 1.9.1 writes for a 0-d array (data follows).
        return _read_data(r, label, shape)
    if magic == V1_MAGIC:
        shape = _read_shape(r, label, False)
    else:
        # pre-V1: the "magic" is ndim, dims are u32.
        ndim = magic
        if ndim > _MAX_NDIM:
            r.fail(f"{label} starts with {magic:#010x}, neither an NDArray magic nor a "
                   f"plausible legacy ndim", start)
        shape, _ = r.dims(ndim, 4, f"{label} shape")
    if len(shape) == 0:
        return None                         # legacy "none" array: nothing follows
    return _read_data(r, label, shape)


def _read_sparse(r, label, stype):
    """The rest of a V2 sparse entry (after the stype); see the module doc."""
    name = _STYPE_NAMES[stype]
    off = r.pos
    sshape = _read_shape(r, f"{label} storage", False)
    shape = _read_shape(r, label, False)
    if len(shape) == 0:
        return None                         # an uninitialised sparse array: nothing follows
    r.unpack(_U64, f"{label} context")
    flag_off = r.pos
    flag = r.i32(f"{label} type flag")
    dtype = _FLAG_TO_DTYPE.get(flag)
    if dtype is None:
        r.fail(f"{label} has unsupported dtype flag {flag}", flag_off)
    naux = 2 if stype == 2 else 1
    aux_meta = []
    for i in range(naux):
        aoff = r.pos
        aflag = r.i32(f"{label} aux {i} type flag")
        if aflag not in (4, 6):
            r.fail(f"{label} aux {i} has dtype flag {aflag}; indices must be int32 or int64",
                   aoff)
        aux_meta.append((_FLAG_TO_DTYPE[aflag], _read_shape(r, f"{label} aux {i}", False)))
    # shapes must agree before anything is allocated
    if stype == 2:
        ok = (len(shape) == 2 and len(sshape) == 1 and aux_meta[0][1] == (shape[0] + 1,)
              and aux_meta[1][1] == sshape)
    else:
        ok = (len(shape) >= 1 and len(sshape) == len(shape) and sshape[1:] == shape[1:]
              and sshape[0] <= shape[0] and aux_meta[0][1] == sshape[:1])
    if not ok:
        r.fail(f"{label}: inconsistent {name} shapes (shape {shape}, storage shape {sshape}, "
               f"aux shapes {[m[1] for m in aux_meta]})", off)
    count = 1
    for d in sshape:
        count *= d
    need = count * dtype.itemsize + sum(int(np.prod(s)) * dt.itemsize for dt, s in aux_meta)
    r.need(need, f"{label} {name} values and indices")
    data = r.array(dtype, sshape, count, f"{label} values ({count} x {dtype.name})")
    aux = [r.array(dt, s, int(np.prod(s)), f"{label} aux {i}").astype(np.int64, copy=False)
           for i, (dt, s) in enumerate(aux_meta)]
    if stype == 2:
        ptr, idx = aux
        if ptr[0] != 0 or ptr[-1] != idx.size or np.any(np.diff(ptr) < 0):
            r.fail(f"{label}: csr indptr is not monotonic from 0 to nnz")
        if idx.size and (idx.min() < 0 or idx.max() >= shape[1]):
            r.fail(f"{label}: csr column index out of range for shape {shape}")
    else:
        idx = aux[0]
        if idx.size and (idx.min() < 0 or idx.max() >= shape[0]):
            r.fail(f"{label}: row_sparse index out of range for shape {shape}")
        if idx.size > 1 and np.any(np.diff(idx) <= 0):
            r.fail(f"{label}: row_sparse indices are not strictly increasing")
    return SparseEntry(name, shape, data, aux)


def load_bytes(buf, source="<buffer>", np_shape=None):
    """Parse MXNet .params bytes.

    Parameters
    ----------
    buf : bytes-like
        The file contents (bytes, bytearray, memoryview, mmap, uint8 array).
    source : str
        Name used in error messages (the file name).

    Returns
    -------
    list of numpy.ndarray, or dict of str -> numpy.ndarray
        A dict when the file holds names, else a list (an empty dict saves as an
        empty list). Arrays own their memory and are writable. Uninitialised entries
        (legacy or V3 unknown shape) are ``None``.

    Raises
    ------
    MXNetError
        Wrong magic, truncation, impossible sizes, unknown dtype or storage type,
        sparse entries, trailing bytes, or names not matching the arrays; the message
        names ``source``, the problem and the byte offset.
    """
    with memoryview(buf) as view:
        flat = view.cast("B") if (view.ndim != 1 or view.itemsize != 1) else view
        r = _BufferReader(flat, source)
        try:
            return _parse(r, np_shape)
        finally:
            r.buf = None
            if flat is not view:
                flat.release()


def _parse(r, np_shape=None):
    magic, _reserved, count = r.unpack(_HEADER, "header")
    if magic != LIST_MAGIC:
        r.fail(f"bad magic {magic:#x}, expected {LIST_MAGIC:#x} (not an MXNet NDArray file)", 0)
    if count * _MIN_ENTRY_BYTES > r.end - r.pos:
        r.fail(f"truncated or corrupt file: array count {count} needs at least "
               f"{count * _MIN_ENTRY_BYTES} bytes, only {r.end - r.pos} remain", 16)
    arrays = [_read_entry(r, i, np_shape) for i in range(count)]
    names_off = r.pos
    n_names = r.u64("names count")
    if n_names != 0 and n_names != count:
        r.fail(f"{n_names} names for {count} arrays", names_off)
    if n_names * _MIN_NAME_BYTES > r.end - r.pos:
        r.fail(f"truncated or corrupt file: names count {n_names} needs at least "
               f"{n_names * _MIN_NAME_BYTES} bytes, only {r.end - r.pos} remain", names_off)
    names = []
    for i in range(n_names):
        off = r.pos
        length = r.u64(f"name {i} length")
        raw = bytes(r.take(length, f"name {i} ({length} bytes)"))
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            r.fail(f"name {i} is not valid UTF-8 ({e.reason})", off)
    if r.pos != r.end:
        r.fail(f"{r.end - r.pos} trailing bytes after the last name")
    if n_names == 0:
        return arrays
    # Like MXNet's Python front end: a repeated name keeps the last array.
    return dict(zip(names, arrays))


@api_call("MXNDArrayLoad")    # npx.load's front door (mx.nd.load records itself, outermost)
def load(fname, np_shape=None):
    """Load arrays saved by ``mx.nd.save`` (or :func:`save`) from ``fname``.

    Parameters
    ----------
    fname : str or os.PathLike
        The file.
    np_shape : bool or None
        When a bool, check the entries as MXNet's NDArray::Load does: V3 entries (saved with
        numpy shape semantics) load only with np_shape True, others only with it False;
        MXNetError otherwise. None (the default) accepts both.

    Returns
    -------
    list of numpy.ndarray, or dict of str -> numpy.ndarray
        See :func:`load_bytes`.
    """
    fname = os.fspath(fname)
    with open(fname, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        r = _FileReader(f, size, fname)
        result = _parse(r, np_shape)
        if f.read(1):
            r.fail("file grew while being read")
    return result
