"""Non-maximum suppression of MultiBoxDetection (mxc/ops/contrib_multibox.py): the greedy loop
over one image's score-sorted detections, without the GIL and one image per OpenMP thread.
Shapes are checked once here; the arithmetic is MXNet's CalculateOverlap in the rows' dtype
(float32 or float64).

Without force_suppress a detection only suppresses detections of its own class, so the rows are
bucketed by class (a stable counting sort keeps the score order inside a bucket) and each
bucket runs the greedy loop alone: the same decisions as MXNet's loop over all pairs, for about
1/num_classes of its work.
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t
from libc.string cimport memset

import numpy as np

ctypedef fused real_t:
    float
    double


cdef inline real_t _iou(real_t *a, real_t *b) noexcept nogil:
    cdef real_t zero = 0
    cdef real_t w = min(a[2], b[2]) - max(a[0], b[0])
    cdef real_t h = min(a[3], b[3]) - max(a[1], b[1])
    if w < zero:
        w = zero
    if h < zero:
        h = zero
    cdef real_t i = w * h
    cdef real_t u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i
    if u <= zero:
        return zero
    return i / u


cdef void _suppress_one(real_t *rows, int64_t keep, real_t thresh, bint force, int64_t ncls,
                        int64_t *order, int64_t *start) noexcept nogil:
    # rows: (keep, 6) of (class >= 0, score, xmin, ymin, xmax, ymax), sorted by score;
    # order: keep scratch, start: ncls + 1 scratch
    cdef int64_t i, j, a, b, c, lo, hi
    cdef int64_t nb = 1 if force else ncls
    memset(start, 0, (nb + 1) * sizeof(int64_t))
    for i in range(keep):
        c = 0 if force else <int64_t>rows[i * 6]
        start[c + 1] += 1
    for c in range(nb):
        start[c + 1] += start[c]
    for i in range(keep):                       # stable: a bucket keeps the score order
        c = 0 if force else <int64_t>rows[i * 6]
        order[start[c]] = i
        start[c] += 1
    lo = 0
    for c in range(nb):                         # start[c] is now bucket c's end
        hi = start[c]
        for a in range(lo, hi):
            i = order[a]
            if rows[i * 6] < 0:
                continue
            for b in range(a + 1, hi):
                j = order[b]
                if rows[j * 6] >= 0 and _iou(rows + i * 6 + 2, rows + j * 6 + 2) >= thresh:
                    rows[j * 6] = -1
        lo = hi


def suppress(real_t[:, :, ::1] rows, int64_t[::1] keep, double thresh, bint force,
             int nthreads=1):
    """Set the class of every detection suppressed by a kept, higher-scored one (of the same
    class unless `force`) to -1, in place: image b's first keep[b] rows of `rows` (batch,
    num_rows, 6), whose classes are integers >= 0; IoU >= thresh suppresses. Images run on
    nthreads OpenMP threads (the caller's kernel_threads: only an engine worker forks a team)."""
    cdef Py_ssize_t nb = rows.shape[0], n = rows.shape[1], b, i
    if rows.shape[2] != 6:
        raise ValueError(f"suppress: rows must be (batch, num_rows, 6), got width {rows.shape[2]}")
    if keep.shape[0] != nb:
        raise ValueError(f"suppress: {keep.shape[0]} counts for {nb} images")
    cdef double top = 0
    for b in range(nb):
        if not 0 <= keep[b] <= n:
            raise ValueError(f"suppress: count {keep[b]} out of range for {n} rows")
        for i in range(keep[b]):
            if not (rows[b, i, 0] >= 0 and rows[b, i, 0] == <int64_t>rows[b, i, 0]):
                raise ValueError(f"suppress: class {rows[b, i, 0]} is not an integer >= 0")
            top = max(top, rows[b, i, 0])
    cdef int64_t ncls = <int64_t>top + 1
    cdef real_t t = <real_t>thresh
    if nb == 0 or n == 0:
        return
    # each image's scratch: the bucketed order (n) and the bucket bounds (ncls + 1)
    cdef int64_t[:, ::1] scratch = np.empty((nb, n + ncls + 1), np.int64)
    for b in prange(nb, nogil=True, schedule="dynamic", num_threads=max(1, nthreads)):
        _suppress_one(&rows[b, 0, 0], keep[b], t, force, ncls, &scratch[b, 0], &scratch[b, n])
