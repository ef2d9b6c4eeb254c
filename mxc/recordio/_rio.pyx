"""Native RecordIO core: record framing, a prefetching sequential reader, random reads, the writer
and an index scan.

The framing and the prefetch thread live in ``csrc/recordio/rio.h`` (plain C, no GIL, no Python
API).  This module owns file descriptors and buffers and turns records into ``bytes``.  The Python
API users see is ``mxc.recordio``.
"""
import os

import numpy as np

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.errno cimport errno
from libc.string cimport memcpy
from posix.unistd cimport close as c_close
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from mxc.base import MXNetError


cdef extern from "recordio/rio.h" nogil:
    int RIO_NSLOT
    int RIO_ST_MORE, RIO_ST_EOF, RIO_ST_ERR
    int RIO_E_NONE, RIO_E_MAGIC, RIO_E_FLAG, RIO_E_TRUNC_HEADER, RIO_E_TRUNC_PAYLOAD, RIO_E_IO, RIO_E_NOMEM

    ctypedef struct rio_err:
        int kind
        int64_t off
        int64_t a
        int64_t b
        int err_no

    ctypedef struct rio_batch:
        unsigned char* buf
        int64_t* recs
        int64_t nrec
        int64_t start
        int64_t next
        int status
        rio_err err

    ctypedef struct rio_prefetch:
        rio_batch* slots

    rio_prefetch* rio_pf_new(int fd, int64_t chunk)
    int rio_pf_restart(rio_prefetch* s, int64_t pos, int held)
    int rio_pf_next(rio_prefetch* s, int held)
    void rio_pf_free(rio_prefetch* s, int foreign)
    int rio_read_at(int fd, int64_t pos, int64_t hint, unsigned char** buf, int64_t* cap,
                    int64_t* plen, int64_t* next, rio_err* e)
    int rio_scan(int fd, int64_t** offs, int64_t* n, int64_t* ncap, rio_err* e)
    int64_t rio_encoded_size(const unsigned char* data, int64_t length)
    int64_t rio_encode(const unsigned char* data, int64_t length, unsigned char* out)
    int rio_write_all(int fd, const unsigned char* buf, int64_t n)
    int64_t rio_pread_full(int fd, unsigned char* dst, int64_t n, int64_t off)


# A forked child inherits readers whose prefetch thread does not exist there.  Counting forks lets
# every reader know, with one integer compare, whether it was opened in this process.
cdef int _fork_gen = 0


def _after_fork_in_child():
    global _fork_gen
    _fork_gen += 1


os.register_at_fork(after_in_child=_after_fork_in_child)

# Bytes the prefetch thread reads per batch (RIO_NSLOT batches in flight). Process CPU per
# record, 1 KiB records, best of 6 alternated runs on the 2-core dev machine: 512 KiB 250 ns,
# 1 MiB 249, 2 MiB 298 (the batch the consumer copies from stays in cache); 16 KiB, 100 KiB and
# 1 MiB records also read 5-15% faster with 1 MiB than with 2 MiB, and 100 KiB ones 20% slower
# with 512 KiB.
DEFAULT_CHUNK = 1 << 20


class ForkedError(RuntimeError):
    """A reader or writer opened in a parent process was used in a forked child."""
# Reads after a seek stay synchronous until this many follow in a row; then prefetching resumes.
cdef int SEQUENTIAL_AFTER_SEEK = 2


cdef str _describe(rio_err* e, str path):
    if e.kind == RIO_E_MAGIC:
        return (f"{path}: invalid RecordIO magic 0x{<unsigned int>e.a:08x} at byte offset {e.off} "
                f"(expected 0xced7230a; not a RecordIO file, corrupt data, or an index entry that "
                f"does not point at a record)")
    if e.kind == RIO_E_FLAG:
        return (f"{path}: record header at byte offset {e.off} has continuation flag {e.a}, which "
                f"cannot follow the previous part (corrupt file)")
    if e.kind == RIO_E_TRUNC_HEADER:
        return (f"{path}: truncated record header at byte offset {e.off}: {e.b} bytes before the "
                f"end of the file, 8 needed (file cut short?)")
    if e.kind == RIO_E_TRUNC_PAYLOAD:
        return (f"{path}: record at byte offset {e.off} needs {e.a} bytes but only {e.b} remain "
                f"before the end of the file (truncated file or corrupt length)")
    if e.kind == RIO_E_IO:
        return f"{path}: read error at byte offset {e.off}: {os.strerror(e.err_no)}"
    if e.kind == RIO_E_NOMEM:
        return f"{path}: out of memory reading the record at byte offset {e.off} ({e.a} bytes)"
    return f"{path}: unknown RecordIO error at byte offset {e.off}"


cdef int _open_fd(str path, int flags) except -1:
    try:
        return os.open(path, flags | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise MXNetError(f"cannot open RecordIO file {path}: {exc.strerror}") from exc


cdef class RecordReader:
    """Reads records of one ``.rec`` file.

    Sequential ``read()`` takes records from batches that a background pthread reads and frames
    ahead of the consumer (bounded: at most ``RIO_NSLOT`` batches of ``chunk`` bytes).  ``read_at``
    reads one record synchronously at a byte offset; ``seek`` moves the sequential position.
    """
    cdef rio_prefetch* pf
    cdef int fd
    cdef readonly str path
    cdef int held              # slot held by the consumer, -1 for none
    cdef int64_t ri            # next record within the held batch
    cdef int64_t pos           # file offset of the next sequential record
    cdef bint prefetching      # sequential reads come from the thread (else: synchronous)
    cdef int direct_reads      # synchronous sequential reads since the last seek
    cdef int fork_gen
    cdef int64_t chunk
    cdef unsigned char* scratch   # read_at's buffer, lent to one caller at a time
    cdef int64_t scap
    cdef bint scratch_busy
    cdef bint busy                # a thread is inside read() with the GIL released
    cdef int64_t[::1] starts   # sorted known record starts + file size: read-size hints for read_at
    cdef bint has_starts

    def __cinit__(self, str path, int64_t chunk=DEFAULT_CHUNK):
        self.fd = -1
        self.pf = NULL
        self.scratch = NULL
        self.held = -1
        self.path = path
        self.chunk = chunk if chunk >= 4096 else 4096
        self.fd = _open_fd(path, os.O_RDONLY)
        self.fork_gen = _fork_gen
        self.pos = 0
        self.prefetching = True
        self.direct_reads = 0

    def __dealloc__(self):
        self._release()

    cdef void _release(self) noexcept:
        cdef bint foreign = self.fork_gen != _fork_gen
        if self.pf != NULL:
            with nogil:
                rio_pf_free(self.pf, foreign)
            self.pf = NULL
        if self.fd >= 0:
            c_close(self.fd)
            self.fd = -1
        free(self.scratch)
        self.scratch = NULL
        self.held = -1

    def close(self):
        """Stop the prefetch thread (joining it) and close the file.  Idempotent."""
        if self.busy or self.scratch_busy:
            raise MXNetError(f"{self.path}: cannot close a RecordIO reader while another thread "
                             f"is reading from it")
        self._release()

    @property
    def closed(self):
        return self.fd < 0

    cdef int _check_seq(self) except -1:
        # the sequential state (held batch, position) belongs to one thread at a time
        if self.busy:
            raise MXNetError(f"{self.path}: read()/seek() used from two threads at once; use one "
                             f"reader per thread (read_at / read_idx may be shared)")
        return self._check()

    cdef int _check(self) except -1:
        if self.fd < 0:
            raise MXNetError(f"{self.path}: read on a closed RecordIO reader")
        if self.fork_gen != _fork_gen:
            raise ForkedError("Forbidden operation in multiple processes")
        return 0

    cdef object _next_batch(self):
        """Move to the next prefetched batch; None when records follow, else the end marker."""
        cdef int slot
        cdef int rc
        if self.pf == NULL:
            self.pf = rio_pf_new(self.fd, self.chunk)
            if self.pf == NULL:
                raise MemoryError("cannot allocate the RecordIO prefetch state")
            rc = rio_pf_restart(self.pf, self.pos, -1)
            if rc != 0:
                raise MXNetError(f"{self.path}: cannot start the prefetch thread: {os.strerror(rc)}")
        self.busy = True
        with nogil:
            slot = rio_pf_next(self.pf, self.held)
        self.busy = False
        self.held = slot
        self.ri = 0

    def read(self):
        """Return the next record as bytes, or None at the end of the file."""
        self._check_seq()
        cdef rio_batch* b
        cdef int64_t* r
        if not self.prefetching:
            return self._read_direct()
        while True:
            if self.held >= 0:
                b = &self.pf.slots[self.held]
                if self.ri < b.nrec:
                    r = b.recs + 3 * self.ri
                    if r[0] < 0:
                        return self._read_deferred(r)
                    self.ri += 1
                    self.pos = r[2]
                    return PyBytes_FromStringAndSize(<char*>b.buf + r[0], r[1])
                if b.status == RIO_ST_EOF:
                    return None
                if b.status == RIO_ST_ERR:
                    raise MXNetError(_describe(&b.err, self.path))
            self._next_batch()

    cdef object _read_deferred(self, int64_t* r):
        """A large record the producer framed but left to the kernel's read-ahead: read it
        straight into the bytes object (payload offset stored as -1 - file offset)."""
        cdef int64_t n = r[1], at = -1 - r[0], got
        out = PyBytes_FromStringAndSize(NULL, n)
        cdef char* dst = PyBytes_AS_STRING(out)
        self.busy = True
        with nogil:
            got = rio_pread_full(self.fd, <unsigned char*>dst, n, at)
        self.busy = False
        if got != n:
            if got < 0:
                raise MXNetError(f"{self.path}: read error at byte offset {at}")
            raise MXNetError(f"{self.path}: record at byte offset {at - 8} needs {n + 8} bytes but "
                             f"only {got + 8} remain before the end of the file (file shrank?)")
        self.ri += 1
        self.pos = r[2]
        return out

    cdef object _read_direct(self):
        cdef int64_t nxt = 0
        out = self._read_record(self.pos, &nxt)
        if out is None:
            return None
        self.pos = nxt
        self.direct_reads += 1
        if self.direct_reads >= SEQUENTIAL_AFTER_SEEK:
            self._resume_prefetch()
        return out

    cdef void _resume_prefetch(self):
        self.prefetching = True
        self.ri = 0
        if self.pf != NULL:
            # the generation bump discards batches read for the old position
            rio_pf_restart(self.pf, self.pos, self.held)
            self.held = -1

    cdef object _read_record(self, int64_t pos, int64_t* nxt):
        """The record at ``pos`` as bytes (None at the end of the file), read synchronously.

        Safe to call from several threads: the first borrows the reader's buffer, others use a
        buffer of their own; pread needs no shared file position."""
        cdef int64_t hint = 0, plen = 0, cap
        cdef Py_ssize_t lo, hi, mid, n
        cdef unsigned char* buf
        cdef rio_err e
        cdef int st
        cdef bint own = not self.scratch_busy
        if self.has_starts:
            # the distance to the next known record start bounds this record's size
            n = self.starts.shape[0]
            lo = 0
            hi = n
            while lo < hi:
                mid = (lo + hi) >> 1
                if self.starts[mid] <= pos:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < n:
                hint = self.starts[lo] - pos
        if own:
            self.scratch_busy = True
            buf = self.scratch
            cap = self.scap
        else:
            buf = NULL
            cap = 0
        try:
            with nogil:
                st = rio_read_at(self.fd, pos, hint, &buf, &cap, &plen, nxt, &e)
            if st == RIO_ST_EOF:
                return None
            if st == RIO_ST_ERR:
                raise MXNetError(_describe(&e, self.path))
            return PyBytes_FromStringAndSize(<char*>buf + 8, plen)
        finally:
            if own:
                self.scratch = buf
                self.scap = cap
                self.scratch_busy = False
            else:
                free(buf)

    def read_at(self, int64_t pos):
        """Read the record that starts at byte offset ``pos``; the next ``read()`` continues after it.

        Thread-safe.  Raises MXNetError when ``pos`` is not the start of a record or is past the
        end of the file.
        """
        self._check()
        cdef int64_t nxt = 0
        if pos < 0:
            raise MXNetError(f"{self.path}: negative byte offset {pos}")
        out = self._read_record(pos, &nxt)
        if out is None:
            raise MXNetError(f"{self.path}: byte offset {pos} is at or past the end of the file; "
                             f"no record there (inconsistent .idx?)")
        if not self.busy:
            self._set_pos(nxt)
        return out

    cdef void _set_pos(self, int64_t pos):
        self.pos = pos
        self.direct_reads = 0
        if self.prefetching:
            self.prefetching = False

    def seek(self, int64_t pos):
        """Move the sequential read position to byte offset ``pos`` (a record start)."""
        self._check_seq()
        if pos < 0:
            raise MXNetError(f"{self.path}: negative byte offset {pos}")
        self._set_pos(pos)

    def tell(self):
        """Byte offset of the next record ``read()`` returns."""
        return self.pos

    def reset(self):
        """Restart sequential reading at offset 0 (prefetching from there)."""
        self._check_seq()
        self.pos = 0
        self.prefetching = False
        self.direct_reads = SEQUENTIAL_AFTER_SEEK
        self._resume_prefetch()

    def set_starts(self, starts):
        """Give known record starts (sorted int64, ending with the file size) as read-size hints."""
        arr = np.ascontiguousarray(starts, dtype=np.int64)
        self.starts = arr
        self.has_starts = arr.shape[0] > 0

    def file_size(self):
        return os.fstat(self.fd).st_size


cdef class RecordWriter:
    """Appends records to a ``.rec`` file opened for writing (truncated on open).

    Each record is framed in memory and handed to the kernel with one ``write`` call, so a writer
    that is killed leaves every record it returned from complete on disk.
    """
    cdef int fd
    cdef readonly str path
    cdef int64_t pos
    cdef unsigned char* scratch
    cdef int64_t scap
    cdef int fork_gen

    def __cinit__(self, str path):
        self.fd = -1
        self.scratch = NULL
        self.path = path
        self.fd = _open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        self.pos = 0
        self.fork_gen = _fork_gen

    def __dealloc__(self):
        self.close()

    def close(self):
        """Close the file.  Idempotent."""
        if self.fd >= 0:
            c_close(self.fd)
            self.fd = -1
        free(self.scratch)
        self.scratch = NULL

    @property
    def closed(self):
        return self.fd < 0

    def write(self, const unsigned char[::1] buf not None):
        """Append one record holding the bytes of ``buf``."""
        cdef int64_t n = buf.shape[0], need, written
        cdef const unsigned char* src = &buf[0] if n > 0 else <const unsigned char*>b""
        cdef unsigned char* nb
        cdef int rc, err_no = 0
        if self.fd < 0:
            raise MXNetError(f"{self.path}: write on a closed RecordIO writer")
        if self.fork_gen != _fork_gen:
            raise ForkedError("Forbidden operation in multiple processes")
        if n >= (1 << 29):
            raise MXNetError(f"{self.path}: RecordIO records must be smaller than 2**29 bytes, "
                             f"got {n}")
        with nogil:
            need = rio_encoded_size(src, n)
        if need > self.scap:
            nb = <unsigned char*>malloc(need)
            if nb == NULL:
                raise MemoryError(f"cannot allocate {need} bytes to frame a record")
            free(self.scratch)
            self.scratch = nb
            self.scap = need
        with nogil:
            written = rio_encode(src, n, self.scratch)
            rc = rio_write_all(self.fd, self.scratch, written)
            if rc != 0:
                err_no = errno
        if rc != 0:
            raise MXNetError(f"{self.path}: cannot write the record at byte offset {self.pos}: "
                             f"{os.strerror(err_no)}")
        self.pos += written

    def tell(self):
        """Byte offset the next record will start at."""
        return self.pos


def scan(str path):
    """Return the start offsets (int64 array) of every record of a .rec file, in file order.

    Reads only the record headers; raises MXNetError at the first malformed header.
    """
    cdef int fd = _open_fd(path, os.O_RDONLY)
    cdef int64_t* offs = NULL
    cdef int64_t n = 0, ncap = 0
    cdef rio_err e
    cdef int st
    try:
        with nogil:
            st = rio_scan(fd, &offs, &n, &ncap, &e)
        if st == RIO_ST_ERR:
            raise MXNetError(_describe(&e, path))
        out = np.empty(n, dtype=np.int64)
        if n > 0:
            memcpy(<void*><size_t>out.ctypes.data, offs, n * sizeof(int64_t))
        return out
    finally:
        free(offs)
        os.close(fd)
