"""``mx.contrib.io``: ``DataLoaderIter``, a Gluon DataLoader as a DataIter for the symbolic
Module API (MXNet 1.9.1's contrib/io.py)."""
from .. import ndarray as nd
from ..io import DataIter, DataDesc

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Batches of a ``gluon.data.DataLoader`` yielding (data, label) as DataBatch objects.

    The batch size and the shapes in provide_data / provide_label come from the loader's first
    batch; a shorter last batch (``last_batch='keep'``) is padded to the batch size with zeros
    and reports the padding in ``pad``. Data and label are cast to `dtype`.

    Parameters
    ----------
    loader : gluon.data.DataLoader
    data_name, label_name : str
        Names in provide_data / provide_label.
    dtype : str
        'float32' (default) or another dtype for both.
    """

    def __init__(self, loader, data_name="data", label_name="softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        try:
            data, label = next(iter(loader))
        except StopIteration:
            raise ValueError("DataLoaderIter: the loader yields no batch") from None
        except (TypeError, ValueError):
            raise ValueError("DataLoaderIter: the loader's batches must be (data, label) "
                             "pairs") from None
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        self._current_batch = next(self._iter, None)
        return self._current_batch is not None

    def _padded(self, x):
        x = x.astype(self.dtype)
        if x.shape[0] == self.batch_size:
            return [x]
        out = nd.zeros((self.batch_size,) + tuple(x.shape[1:]), ctx=x.context, dtype=self.dtype)
        out[:x.shape[0]] = x
        return [out]

    def getdata(self):
        return self._padded(self._current_batch[0])

    def getlabel(self):
        return self._padded(self._current_batch[1])

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
