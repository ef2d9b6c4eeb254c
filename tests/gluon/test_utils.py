"""gluon.utils: split_data, split_and_load, clip_global_norm, check_sha1, download, helpers."""
import collections
import hashlib
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.gluon import utils


def test_split_data_even_and_uneven(rng):
    x = rng.uniform(size=(10, 3)).astype(np.float32)
    parts = utils.split_data(mx.nd.array(x), 2)
    assert [p.shape for p in parts] == [(5, 3), (5, 3)]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x)
    with pytest.raises(ValueError, match="cannot be evenly split into 3 slices along axis 0"):
        utils.split_data(mx.nd.array(x), 3)
    parts = utils.split_data(mx.nd.array(x), 3, even_split=False)
    assert [p.shape[0] for p in parts] == [4, 3, 3]          # MXNet: extras go first
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x)
    parts = utils.split_data(mx.nd.array(x), 3, batch_axis=1)
    assert [p.shape for p in parts] == [(10, 1)] * 3
    np.testing.assert_array_equal(parts[2].asnumpy(), x[:, 2:3])


def test_split_and_load_contexts(rng):
    x = rng.uniform(size=(4, 2)).astype(np.float32)
    ctxs = [mx.cpu(0), mx.cpu(1)]
    parts = utils.split_and_load(x, ctxs)                  # numpy input is converted
    assert [p.context for p in parts] == ctxs
    np.testing.assert_array_equal(parts[1].asnumpy(), x[2:])
    one = utils.split_and_load(mx.nd.array(x), [mx.cpu(1)])
    assert len(one) == 1 and one[0].context == mx.cpu(1) and one[0].shape == (4, 2)


def test_clip_global_norm(rng):
    a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (5,)).astype(np.float32)
    norm = np.sqrt((a ** 2).sum() + (b ** 2).sum())
    arrs = [mx.nd.array(a), mx.nd.array(b)]
    total = utils.clip_global_norm(arrs, norm / 2)
    assert isinstance(total, (float, np.floating))
    np.testing.assert_allclose(total, norm, rtol=1e-5)
    np.testing.assert_allclose(arrs[0].asnumpy(), a * (norm / 2) / (norm + 1e-8), rtol=1e-5)
    np.testing.assert_allclose(arrs[1].asnumpy(), b * (norm / 2) / (norm + 1e-8), rtol=1e-5)
    arrs = [mx.nd.array(a)]
    total = utils.clip_global_norm(arrs, 1e6, check_isfinite=False)    # no clipping
    assert isinstance(total, mx.nd.NDArray) and total.shape == (1,)
    np.testing.assert_allclose(arrs[0].asnumpy(), a, rtol=1e-6)
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        utils.clip_global_norm([mx.nd.array([np.inf, 1.0])], 1.0)


def test_check_sha1_and_download(tmp_path):
    f = tmp_path / "blob.bin"
    f.write_bytes(b"mxc" * 1000)
    digest = hashlib.sha1(b"mxc" * 1000).hexdigest()
    assert utils.check_sha1(str(f), digest)
    assert not utils.check_sha1(str(f), "0" * 40)
    # an existing file with the right hash is returned, nothing is fetched
    assert utils.download("https://example.com/blob.bin", path=str(f), sha1_hash=digest) == str(f)
    assert utils.download("https://example.com/blob.bin", path=str(tmp_path)) == str(f)
    with pytest.raises(RuntimeError, match="mxc does not download files: .*missing.bin does not "
                                           "exist.*https://example.com/missing.bin"):
        utils.download("https://example.com/missing.bin", path=str(tmp_path))
    with pytest.raises(RuntimeError, match="different SHA-1"):
        utils.download("https://example.com/blob.bin", path=str(f), sha1_hash="0" * 40)


def test_indent_brief_print_and_shape_is_known():
    assert utils._indent("a\nb\nc", 2) == "a\n  b\n  c"
    assert utils._indent("single", 4) == "single"
    assert utils._brief_print_list(["a", "b"]) == "'a', 'b'"
    assert utils._brief_print_list(range(10)) == "'0', '1', '2', ..., '6', '7', '8', '9'"
    assert utils.shape_is_known((2, 3)) and not utils.shape_is_known((2, 0))
    assert not utils.shape_is_known(None) and not utils.shape_is_known(())
    with mx.np_shape(True):
        assert utils.shape_is_known(()) and utils.shape_is_known((2, 0))
        assert not utils.shape_is_known((2, -1))


def test_hook_handle_detach_and_context():
    hooks = collections.OrderedDict()
    h = utils.HookHandle()
    fn = lambda *a: None  # noqa: E731
    h.attach(hooks, fn)
    assert list(hooks.values()) == [fn]
    with pytest.raises(AssertionError, match="cannot be attached twice"):
        h.attach(hooks, fn)
    with h:
        pass
    assert not hooks
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h.detach()                        # detaching twice is harmless
