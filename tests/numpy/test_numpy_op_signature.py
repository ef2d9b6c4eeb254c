"""mx.numpy_op_signature._get_builtin_op (MXNet's test_numpy_op imports it): operator names of
the numpy fronts map to their mx.np / mx.npx functions, submodules by MXNet's naming."""
import pytest

import mxc as mx
from mxc.numpy_op_signature import _get_builtin_op


def test_operator_names_map_to_front_functions():
    assert _get_builtin_op("_np_sum") is mx.np.sum
    assert _get_builtin_op("_np__linalg_norm") is mx.np.linalg.norm
    assert _get_builtin_op("_np__random_shuffle") is mx.np.random.shuffle
    assert _get_builtin_op("_npx_relu") is mx.npx.relu
    assert _get_builtin_op("_npx__image_resize") is mx.npx.image.resize
    assert _get_builtin_op("relu") is None and _get_builtin_op("_npi_add") is None
    with pytest.raises(ValueError, match="Cannot find operator nosuch in module mxc.numpy"):
        _get_builtin_op("_np_nosuch")
