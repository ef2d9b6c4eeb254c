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
    int rio_bus_install()
    int rio_map_peek(const unsigned char* m, int64_t msize, int64_t off, int64_t* length,
                     int64_t* end)
    int rio_map_copy(unsigned char* dst, const unsigned char* src, int64_t n)
    void rio_prefetch_after(const unsigned char* src, int64_t n)
    const unsigned char* rio_map_open(int fd, int64_t size)
    void rio_map_close(const unsigned char* m, int64_t size)
    int64_t rio_page_floor(int64_t off)
    void rio_map_advise(const unsigned char* m, int64_t msize, int64_t start, int64_t stop,
                        int64_t ahead, int64_t forget_lo, int64_t forget_hi)
    ctypedef struct rio_advisor:
        pass
    rio_advisor* rio_adv_new()
    int rio_adv_post(rio_advisor* a, const unsigned char* m, int64_t msize, int64_t start,
                     int64_t stop, int64_t ahead, int64_t forget_lo, int64_t forget_hi)
    void rio_adv_quiesce(rio_advisor* a)
    void rio_adv_free(rio_advisor* a, int foreign)


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

# Mapped sequential reading makes this many bytes resident at a time (without the GIL) and asks the
# kernel to read twice as much ahead.  Process CPU per 1 KiB record, fresh reader over a 96 MiB
# file, best of 4 on the 2-core dev machine: 1 MiB windows 204-235 ns, 4 MiB 199-227, 16 MiB
# 185-216 (fewer madvise calls and TLB flushes).
cdef int64_t MAP_WINDOW = 16 << 20
# The page-table entries of what lies more than a window behind the reader are dropped in steps of
# this many bytes, so that a long sequential read does not grow the process's resident size to the
# file's (the pages stay in the page cache); each step costs a TLB flush, hence the large step.
cdef int64_t MAP_FORGET_STRIDE = 64 << 20
# read() and read_at() read a record at least this large with pread straight into its bytes,
# without the GIL, instead of copying it out of the mapping: mapping a page costs about half what
# copying it does (1 MiB records, against plain Python in the same run: 0.62-0.65x copied out of
# the mapping, 0.95x with pread).  Smaller records cost less to copy than to release and take back
# the GIL.
cdef int64_t LARGE_RECORD = 256 * 1024

# _read_mapped's answer when the file cannot be mapped
cdef object _UNMAPPED = object()


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
    cdef const unsigned char* map   # the whole file mapped read-only (NULL: not mapped)
    cdef int64_t msize         # bytes mapped: the file size when it was mapped
    cdef int64_t ready         # read(): records ending before this offset are resident
    cdef int64_t dropped       # read(): page-table entries below this offset were dropped
    cdef int64_t advised       # read(): the helper thread was asked to map pages up to here
    cdef rio_advisor* adv      # read()'s helper thread (page tables), NULL until needed
    cdef int inflight          # copies out of the mapping running without the GIL
    cdef bint map_failed       # the file cannot be mapped: read() uses the prefetch thread
    cdef bint at_end           # read() returned None: it stays None until a seek or reset (MXNet)

    def __cinit__(self, str path, int64_t chunk=DEFAULT_CHUNK, bint mapped=True):
        self.fd = -1
        self.pf = NULL
        self.scratch = NULL
        self.map = NULL
        self.map_failed = not mapped
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
        if self.adv != NULL:
            with nogil:
                rio_adv_free(self.adv, foreign)     # joins it: it no longer touches the map
            self.adv = NULL
        rio_map_close(self.map, self.msize)
        self.map = NULL
        self.msize = 0
        self.ready = 0
        if self.fd >= 0:
            c_close(self.fd)
            self.fd = -1
        free(self.scratch)
        self.scratch = NULL
        self.held = -1

    def close(self):
        """Stop the prefetch thread (joining it) and close the file.  Idempotent."""
        # in a forked child the flags are the parent's threads', which do not exist there
        if (self.busy or self.scratch_busy or self.inflight) and self.fork_gen == _fork_gen:
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
        cdef int64_t n = 0, end = 0
        # the common case, a single-part record in the resident part of the mapping: two guarded
        # loads and one copy into the bytes object
        if rio_map_peek(self.map, self.ready, self.pos, &n, &end) == 0 and n < LARGE_RECORD:
            out = PyBytes_FromStringAndSize(NULL, n)
            if rio_map_copy(<unsigned char*>PyBytes_AS_STRING(out), self.map + self.pos + 8, n) == 0:
                rio_prefetch_after(self.map + self.pos + 8, n)
                self.pos = end
                return out
        return self._read_slow()

    cdef object _read_slow(self):
        cdef rio_batch* b
        cdef int64_t* r
        if not self.map_failed:
            if self.at_end:         # as MXNet's reader: records appended later are not seen
                return None
            # the slow path releases the GIL (fstat, madvise, pread): another thread's read()
            # must see the reader busy, not a position about to move
            self.busy = True
            try:
                out = self._read_mapped()
            finally:
                self.busy = False
            if out is not _UNMAPPED:
                self.at_end = out is None
                return out
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

    cdef int _ensure_map(self, int64_t need) except -1:
        """1 when the mapping covers [0, need); 0 when it cannot (file shorter, unmappable, or
        remapping blocked by copies running without the GIL): then read with pread."""
        if self.map != NULL and need <= self.msize:
            return 1
        if self.map_failed or self.inflight:
            return 0
        cdef int64_t size = os.fstat(self.fd).st_size
        # fstat released the GIL: another thread may have mapped the file or started a copy
        if self.map != NULL and need <= self.msize:
            return 1
        if size < need or self.inflight:
            return 0
        self._unmap()
        if rio_bus_install() != 0:
            self.map_failed = True
            return 0
        self.map = rio_map_open(self.fd, size)
        if self.map == NULL:
            self.map_failed = True
            return 0
        self.msize = size
        return 1

    cdef void _unmap(self):
        # only when no copy runs without the GIL (checked by the callers); the helper thread
        # finishes what it is doing first (it never waits for the GIL)
        rio_adv_quiesce(self.adv)
        rio_map_close(self.map, self.msize)
        self.map = NULL
        self.msize = 0
        self.ready = 0
        self.dropped = 0
        self.advised = 0

    cdef object _read_mapped(self):
        """read() through the mapping (called with ``busy`` set), making the next window resident
        first.  Returns _UNMAPPED when the file cannot be mapped; anything but a whole single-part
        record (a split record, the end of the file, corrupt or truncated data) is read by pread,
        which names errors."""
        cdef int64_t pos = self.pos, n = 0, end = 0, hi, fhi
        cdef int rc
        if not self._ensure_map(pos + 8):
            if self.map_failed:
                return _UNMAPPED
            return self._read_sync()
        rc = rio_map_peek(self.map, self.msize, pos, &n, &end)
        if rc != 0:
            if rc < 0 and not self.inflight:
                self._unmap()               # the file shrank: map it again at its new size
            return self._read_sync()
        if n >= LARGE_RECORD:
            out = self._pread_payload(pos, n)
            if out is None:
                return self._read_sync()
            self.pos = end
            return out
        if end > self.ready:
            if os.fstat(self.fd).st_size < self.msize and not self.inflight:
                self._unmap()               # the file shrank: what is left is read by pread
                return self._read_sync()
            hi = max(end, pos + MAP_WINDOW)
            fhi = rio_page_floor(pos) - MAP_WINDOW
            if fhi - self.dropped < MAP_FORGET_STRIDE:
                fhi = self.dropped
            self._advise(pos, end, hi, fhi)
            self.ready = min(hi, self.msize)
            self.dropped = fhi
        out = PyBytes_FromStringAndSize(NULL, n)
        rc = rio_map_copy(<unsigned char*>PyBytes_AS_STRING(out), self.map + pos + 8, n)
        if rc != 0:
            if not self.inflight:
                self._unmap()
            return self._read_sync()
        self.pos = end
        return out

    cdef object _pread_payload(self, int64_t pos, int64_t n):
        """The n-byte payload of the record at ``pos`` read straight into a bytes object without
        the GIL; None when the file ends first (the caller's pread path then names the error)."""
        out = PyBytes_FromStringAndSize(NULL, n)
        cdef unsigned char* dst = <unsigned char*>PyBytes_AS_STRING(out)
        cdef int64_t got
        with nogil:
            got = rio_pread_full(self.fd, dst, n, pos + 8)
        return out if got == n else None

    cdef void _advise(self, int64_t pos, int64_t end, int64_t hi, int64_t fhi):
        """Make this record resident now (without the GIL: it may come from the disk) and have
        the helper thread map the pages up to one window past ``hi``, read further ahead and
        drop the page tables below ``fhi``; without the thread, do it all here."""
        cdef int64_t lo = max(end, self.advised) if self.advised > pos else end
        cdef int64_t top = min(hi + MAP_WINDOW, self.msize)
        cdef int rc = -1
        self.inflight += 1          # the mapping stays while the GIL is released
        with nogil:
            rio_map_advise(self.map, self.msize, pos, end, 0, 0, 0)
        self.inflight -= 1
        if self.adv == NULL:
            self.adv = rio_adv_new()
        if self.adv != NULL:
            rc = rio_adv_post(self.adv, self.map, self.msize, lo, top, top + MAP_WINDOW,
                              self.dropped, fhi)
        if rc != 0:
            self.inflight += 1
            with nogil:
                rio_map_advise(self.map, self.msize, lo, top, top + MAP_WINDOW, self.dropped, fhi)
            self.inflight -= 1
        self.advised = top

    cdef object _read_sync(self):
        cdef int64_t nxt = 0
        out = self._read_record(self.pos, &nxt)
        if out is not None:
            self.pos = nxt
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
        out = self._map_read_at(pos, &nxt)
        if out is _UNMAPPED:
            out = self._read_record(pos, &nxt)
        if out is None:
            raise MXNetError(f"{self.path}: byte offset {pos} is at or past the end of the file; "
                             f"no record there (inconsistent .idx?)")
        if not self.busy:
            self._set_pos(nxt)
        return out

    cdef object _map_read_at(self, int64_t pos, int64_t* nxt):
        """The single-part record at ``pos`` copied out of the mapping, both steps without the GIL
        (a page may have to come from the disk); _UNMAPPED when the mapping cannot serve it."""
        cdef int64_t n = 0, end = 0
        cdef int rc
        cdef const unsigned char* m
        cdef unsigned char* dst
        cdef int64_t msize
        if not self._ensure_map(pos + 8):
            return _UNMAPPED
        m = self.map
        msize = self.msize
        self.inflight += 1          # keeps the mapping in place while the GIL is released
        with nogil:
            rc = rio_map_peek(m, msize, pos, &n, &end)
        out = _UNMAPPED
        if rc == 0 and n >= LARGE_RECORD:
            self.inflight -= 1
            out = self._pread_payload(pos, n)
            nxt[0] = end
            return _UNMAPPED if out is None else out
        if rc == 0:
            out = PyBytes_FromStringAndSize(NULL, n)
            dst = <unsigned char*>PyBytes_AS_STRING(out)
            with nogil:
                rc = rio_map_copy(dst, m + pos + 8, n)
            if rc != 0:
                out = _UNMAPPED
        self.inflight -= 1
        if rc < 0 and not self.inflight:
            self._unmap()           # the file shrank: map it again at its new size
        nxt[0] = end
        return out

    def read_many(self, offsets):
        """The records starting at each byte offset of ``offsets``, as a list of bytes.

        One call for a whole batch (ImageRecordIter's): the headers are read, then the payloads
        copied out of the mapping, each step for every record at once without the GIL.  Does not
        move the position of ``read()``.  Thread-safe, like ``read_at``."""
        self._check()
        cdef const int64_t[::1] offs = np.ascontiguousarray(offsets, dtype=np.int64)
        cdef Py_ssize_t k = offs.shape[0], i
        if k == 0:
            return []
        cdef int64_t hi = offs[0], lo = offs[0], nxt = 0, end = 0
        for i in range(k):
            hi = max(hi, offs[i])
            lo = min(lo, offs[i])
        if lo < 0:
            raise MXNetError(f"{self.path}: negative byte offset {lo}")
        # per record: payload length (-1: read it with pread) and where its bytes go
        cdef int64_t* lens = <int64_t*>malloc(k * sizeof(int64_t))
        cdef char** dst = <char**>malloc(k * sizeof(char*))
        cdef const unsigned char* m = NULL
        cdef int64_t msize = 0
        out = [None] * k
        try:
            if lens == NULL or dst == NULL:
                raise MemoryError("read_many: cannot allocate the batch table")
            for i in range(k):
                lens[i] = -1
            if self._ensure_map(hi + 8):
                m = self.map
                msize = self.msize
                self.inflight += 1
                try:
                    with nogil:
                        for i in range(k):
                            if rio_map_peek(m, msize, offs[i], &lens[i], &end) != 0:
                                lens[i] = -1
                    for i in range(k):
                        if lens[i] >= 0:
                            b = PyBytes_FromStringAndSize(NULL, lens[i])
                            out[i] = b
                            dst[i] = PyBytes_AS_STRING(b)
                    with nogil:
                        for i in range(k):
                            if lens[i] >= 0 and rio_map_copy(<unsigned char*>dst[i],
                                                             m + offs[i] + 8, lens[i]) != 0:
                                lens[i] = -1
                finally:
                    self.inflight -= 1
            for i in range(k):
                if lens[i] < 0:     # split, corrupt, past the end, or a page gone: pread names it
                    out[i] = self._read_record(offs[i], &nxt)
                    if out[i] is None:
                        raise MXNetError(f"{self.path}: byte offset {offs[i]} is at or past the "
                                         f"end of the file; no record there (inconsistent .idx?)")
        finally:
            free(lens)
            free(dst)
        return out

    cdef void _set_pos(self, int64_t pos):
        self.pos = pos
        self.ready = 0
        self.at_end = False
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
        self.ready = 0
        self.at_end = False
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
