"""mx.npx.image: nd.image operators on np arrays, and mx.image's other names (as MXNet)."""
import numpy as onp

import mxc as mx
from mxc import npx
from mxc.numpy.multiarray import ndarray as np_ndarray, array as np_array


def test_operators_return_np_arrays_and_image_names_are_there():
    img = np_array(onp.arange(2 * 3 * 3, dtype=onp.uint8).reshape(2, 3, 3))
    t = npx.image.to_tensor(img)
    assert type(t) is np_ndarray and t.shape == (3, 2, 3)
    onp.testing.assert_allclose(t.asnumpy(), img.asnumpy().transpose(2, 0, 1) / 255.0,
                                rtol=1e-6)
    assert npx.image.imread is mx.image.imread
    assert npx.image.CreateAugmenter is mx.image.CreateAugmenter
    names = dir(npx.image)
    assert {"to_tensor", "normalize", "ImageIter", "imdecode", "resize_short"} <= set(names)
    assert mx.np.linalg.fallback_linalg.cond is mx.np.linalg.cond
