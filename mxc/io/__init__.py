"""``mx.io``: data iterators (MXNet 1.9.1 API)."""
from .io import (DataDesc, DataBatch, DataIter, ResizeIter, PrefetchingIter,  # noqa: F401
                 NDArrayIter, CSVIter, MNISTIter)
from .libsvm_iter import LibSVMIter  # noqa: F401
# ImageRecordIter, ImageRecordUInt8Iter and ImageRecordInt8Iter live in mxc/image/record_iter.py (they decode images;
# mx.image builds on mx.io's DataIter) and join this namespace from the package face
