"""``mx.io``: data iterators (MXNet 1.9.1 API)."""
from .io import (DataDesc, DataBatch, DataIter, ResizeIter, PrefetchingIter,  # noqa: F401
                 NDArrayIter, CSVIter, MNISTIter)
from .image_record_iter import (ImageRecordIter, ImageRecordUInt8Iter,  # noqa: F401
                                ImageRecordInt8Iter)
from .libsvm_iter import LibSVMIter  # noqa: F401
