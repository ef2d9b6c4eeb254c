"""LibSVMIter: MXNet 1.9.1's iterator over LibSVM text files, batches of CSR data.

Each line is ``label idx:value idx:value ...`` with 0-based feature indices. A batch's data is
a CSR NDArray of (batch_size, data_shape[0]); its label is the lines' first numbers, or, with
``label_libsvm``, a CSR NDArray of (batch_size, label_shape[0]) from that file's pairs (its
first numbers unused). The last batch wraps round to the start (``round_batch``, MXNet's only
mode here) and the next epoch resumes after the samples it took. ``num_parts``/``part_index``
split the file by bytes at line boundaries, as dmlc's input splits do, so every line belongs to
exactly one part.
"""
import numpy as np

from ..base import MXNetError
from ..ndarray import sparse as _sparse
from .io import DataDesc, _TableIter, _REAL, _shape_tuple

__all__ = ["LibSVMIter"]


def _part_bytes(raw, num_parts, part_index):
    """The bytes of part ``part_index`` of ``num_parts``: the file cut into equal steps, each
    cut moved past the end of the line it falls in (dmlc's LineSplitter)."""
    step = -(-len(raw) // num_parts)

    def cut(offset):
        if offset <= 0:
            return 0
        if offset >= len(raw):
            return len(raw)
        nl = [p for p in (raw.find(b"\n", offset), raw.find(b"\r", offset)) if p >= 0]
        if not nl:
            return len(raw)
        pos = min(nl) + 1
        while pos < len(raw) and raw[pos:pos + 1] in (b"\n", b"\r"):
            pos += 1
        return pos
    return raw[cut(step * part_index):cut(step * (part_index + 1))]


def _read_libsvm(path, dim, num_parts, part_index, who, name):
    """(labels float32 array, rows: list of (sorted int64 indices, float32 values))."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise MXNetError(f"{who}: cannot open {name} {path}: {exc.strerror or exc}") from None
    labels, rows = [], []
    for lineno, line in enumerate(_part_bytes(raw, num_parts, part_index).splitlines(), 1):
        tokens = line.split()
        if not tokens:
            continue
        try:
            labels.append(float(tokens[0]))
            pairs = [t.split(b":") for t in tokens[1:]]
            idx = np.array([int(p[0]) for p in pairs], np.int64)
            val = np.array([float(p[1]) for p in pairs], _REAL)
            if any(len(p) != 2 for p in pairs):
                raise ValueError("expected idx:value pairs")
        except (ValueError, IndexError) as exc:
            raise MXNetError(f"{who}: {name} {path}: line {lineno} of the part is not "
                             f"'label idx:value ...': {line[:80]!r} ({exc})") from None
        if idx.size and (idx.min() < 0 or idx.max() >= dim):
            raise MXNetError(f"{who}: {name} {path}: line {lineno} of the part has feature "
                             f"index {int(idx.min() if idx.min() < 0 else idx.max())} outside "
                             f"[0, {dim})")
        order = np.argsort(idx, kind="stable")
        rows.append((idx[order], val[order]))
    return np.array(labels, _REAL), rows


def _csr(rows, take, dim):
    picked = [rows[i] for i in take]
    indptr = np.zeros(len(picked) + 1, np.int64)
    indptr[1:] = np.cumsum([len(r[0]) for r in picked])
    idx = np.concatenate([r[0] for r in picked]) if picked else np.zeros(0, np.int64)
    val = np.concatenate([r[1] for r in picked]) if picked else np.zeros(0, _REAL)
    return _sparse.csr_matrix((val, idx, indptr), shape=(len(picked), dim), dtype=_REAL)


class LibSVMIter(_TableIter):
    """Iterate over a LibSVM file in CSR batches, as MXNet's LibSVMIter (see the module doc).

    Parameters
    ----------
    data_libsvm : str
    data_shape : tuple of 1 int
        The number of features.
    batch_size : int
    label_libsvm : str, optional
        A LibSVM file of labels, one line per data line (CSR labels of ``label_shape``).
    label_shape : tuple of 1 int, default (1,)
    num_parts, part_index : int
        Read only this part of the file (distributed training).
    round_batch : bool, default True
        False is refused, as MXNet's sparse batch loader refuses it.
    data_name, label_name : str
    prefetch_buffer : int
        Accepted for compatibility (the part is parsed up front).
    """

    def __init__(self, data_libsvm, data_shape, batch_size, label_libsvm=None, label_shape=(1,),
                 num_parts=1, part_index=0, round_batch=True, data_name="data",
                 label_name="softmax_label", prefetch_buffer=4, **kwargs):
        who = "LibSVMIter"
        if kwargs:
            raise ValueError(f"{who}: unknown parameters {sorted(kwargs)}")
        if not round_batch:
            raise MXNetError(f"{who}: round_batch=False is not supported (MXNet's sparse batch "
                             "loader does not support it either)")
        data_shape = _shape_tuple(data_shape, who, "data_shape")
        label_shape = _shape_tuple(label_shape, who, "label_shape")
        if len(data_shape) != 1 or len(label_shape) != 1:
            raise ValueError(f"{who}: data_shape and label_shape must have one dimension, got "
                             f"{data_shape} and {label_shape}")
        num_parts, part_index = int(num_parts), int(part_index)
        if num_parts < 1 or not 0 <= part_index < num_parts:
            raise ValueError(f"{who}: part_index {part_index} must be in [0, num_parts="
                             f"{num_parts})")
        labels, self._rows = _read_libsvm(data_libsvm, data_shape[0], num_parts, part_index,
                                          who, "data_libsvm")
        self._label_rows = None
        if label_libsvm is not None:
            _, self._label_rows = _read_libsvm(label_libsvm, label_shape[0], num_parts,
                                               part_index, who, "label_libsvm")
            if len(self._label_rows) != len(self._rows):
                raise MXNetError(f"{who}: {label_libsvm} has {len(self._label_rows)} lines, "
                                 f"{data_libsvm} has {len(self._rows)}")
        n = len(self._rows)
        if n == 0:
            raise MXNetError(f"{who}: {data_libsvm} has no samples in part {part_index} of "
                             f"{num_parts}")
        super().__init__(np.zeros((n, 0), _REAL), labels, int(batch_size), True, data_name,
                         label_name, _REAL)
        self._dims = (data_shape[0], label_shape[0])
        bs = self.batch_size
        self.provide_data = [DataDesc(data_name, (bs,) + data_shape, _REAL)]
        self.provide_label = [DataDesc(label_name, (bs,) + (label_shape if label_libsvm else ()),
                                       _REAL)]

    def getdata(self):
        return _csr(self._rows, self._batch[0], self._dims[0])

    def getlabel(self):
        if self._label_rows is None:
            return super().getlabel()
        return _csr(self._label_rows, self._batch[0], self._dims[1])
