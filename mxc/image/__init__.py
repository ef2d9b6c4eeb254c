"""``mx.image``: image decoding, resizing, cropping, augmenters (detection ones too) and
ImageIter (MXNet 1.9.1 API)."""
from .image import *  # noqa: F401,F403
from .detection import *  # noqa: F401,F403
from .image import _get_interp_method, decode_np, resize_np  # noqa: F401
from . import record_iter  # noqa: F401  (mx.io.ImageRecordIter, ImageRecordUInt8Iter)
from . import det_record_iter  # noqa: F401  (mx.io.ImageDetRecordIter)
