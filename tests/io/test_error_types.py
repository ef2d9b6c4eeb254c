"""Data iterators, image decoding and record files raise the exception types MXNet 1.9.1
raises for the same mistakes (observed with the oracle), so code written for MXNet catches
them; mxc's types are subclasses, so ValueError-catching code works too."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError


def test_image_decoding_errors_are_mxnet_errors():
    with pytest.raises(MXNetError):
        mx.image.imdecode(b"clearly not image content")
    with pytest.raises(MXNetError):
        mx.image.imdecode(b"")
    with pytest.raises(MXNetError):
        mx.img.image.imread("/nonexistent-dir-mxc/blah.jpg")     # mx.img: MXNet's alias
    with pytest.raises(MXNetError):
        mx.image.imresize(mx.nd.ones((10, 10, 3)), 5, 5, interp=-1)


def test_record_iterator_parameter_errors_are_mxnet_errors(tmp_path):
    rec = tmp_path / "x.rec"
    rec.write_bytes(b"")
    with pytest.raises(MXNetError):                       # missing file
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "no.rec"), data_shape=(3, 8, 8),
                              batch_size=1)
    for bad in (dict(batch_size=1), dict(data_shape=(3, 8, 8), batch_size=1, nope=1),
                dict(data_shape=(3, 8), batch_size=1)):
        with pytest.raises(MXNetError) as info:
            mx.io.ImageRecordIter(path_imgrec=str(rec), **bad)
        assert isinstance(info.value, ValueError)


def test_ndarray_iter_and_image_iter_errors():
    with pytest.raises(MXNetError):
        mx.io.NDArrayIter(np.ones((4, 2)), batch_size=0)
    # MXNet asserts in ImageIter's constructor
    with pytest.raises(AssertionError):
        mx.image.ImageIter(1, (3, 8, 8))
    with pytest.raises(AssertionError):
        mx.image.ImageDetIter(1, (3, 8, 8))
    with pytest.raises(AssertionError):
        mx.image.ImageIter(1, (3, 8, 8), imglist=[], dtype="uint8")


def test_record_file_errors(tmp_path):
    rec = tmp_path / "g.rec"
    rec.write_bytes(b"garbage bytes here" * 4)
    with pytest.raises(MXNetError):
        mx.recordio.MXRecordIO(str(tmp_path / "missing.rec"), "r")
    with pytest.raises(MXNetError):
        mx.recordio.MXRecordIO(str(rec), "r").read()
    with pytest.raises(ValueError):
        mx.recordio.MXRecordIO(str(rec), "x")
    with pytest.raises(FileNotFoundError):                 # MXNet's open() of the index
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "missing.idx"), str(rec), "r")
