"""gluon.utils: split_data, split_and_load, clip_global_norm, check_sha1, download, helpers."""
import collections
import hashlib
import os
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


def test_check_sha1():
    import tempfile
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(b"mxc" * 1000)
    digest = hashlib.sha1(b"mxc" * 1000).hexdigest()
    assert utils.check_sha1(f.name, digest)
    assert not utils.check_sha1(f.name, "0" * 40)
    os.unlink(f.name)


@pytest.mark.parametrize("through", ["requests", "urllib"])
def test_download_from_a_server(served, tmp_path, monkeypatch, through):
    """as MXNet's download: to a file or into a directory, an existing file kept unless the hash
    differs or overwrite, retries, a hash mismatch raised after the download, nothing but the
    file left beside it; through requests where it is installed, else urllib"""
    import sys
    if through == "urllib":
        monkeypatch.setitem(sys.modules, "requests", None)       # import requests fails
    else:
        pytest.importorskip("requests")
    body = os.urandom(200_000)
    (served.root / "blob.bin").write_bytes(body)
    digest = hashlib.sha1(body).hexdigest()
    out = tmp_path / "out"
    got = utils.download(served.url + "blob.bin", path=str(out / "a.bin"), sha1_hash=digest)
    assert got == str(out / "a.bin") and (out / "a.bin").read_bytes() == body
    assert os.listdir(out) == ["a.bin"]               # the temporary was renamed, none is left
    # kept: same hash, or no hash given; fetched again: another hash on disk, or overwrite
    assert utils.download(served.url + "blob.bin", path=str(out / "a.bin"), sha1_hash=digest)
    assert utils.download(served.url + "blob.bin", path=str(out / "a.bin"))
    assert served.hits["/blob.bin"] == 1
    (out / "a.bin").write_bytes(b"stale")
    utils.download(served.url + "blob.bin", path=str(out / "a.bin"), sha1_hash=digest)
    utils.download(served.url + "blob.bin", path=str(out / "a.bin"), overwrite=True)
    assert served.hits["/blob.bin"] == 3 and (out / "a.bin").read_bytes() == body
    # into a directory under the URL's name; 2 failures then success within retries=3
    served.fail_first["/blob.bin"] = 2
    assert utils.download(served.url + "blob.bin", path=str(out), retries=3) == str(
        out / "blob.bin")
    assert served.hits["/blob.bin"] == 6 and (out / "blob.bin").read_bytes() == body
    # retries=2: two attempts, both refused; the old file stays as it was
    served.fail_first["/blob.bin"] = 2
    with pytest.raises(Exception):
        utils.download(served.url + "blob.bin", path=str(out / "a.bin"), overwrite=True,
                       retries=2)
    assert served.hits["/blob.bin"] == 8 and (out / "a.bin").read_bytes() == body
    with pytest.raises(Exception):
        utils.download(served.url + "missing.bin", path=str(out), retries=1)
    assert not (out / "missing.bin").exists()
    with pytest.raises(UserWarning, match="content hash does not match"):
        utils.download(served.url + "blob.bin", path=str(out / "c.bin"), sha1_hash="0" * 40)
    with pytest.warns(UserWarning, match="Unverified HTTPS request"):
        utils.download(served.url + "blob.bin", path=str(out / "d.bin"), verify_ssl=False)
    assert sorted(os.listdir(out)) == ["a.bin", "blob.bin", "c.bin", "d.bin"]
    with pytest.raises(ValueError, match="retries"):
        utils.download(served.url + "blob.bin", path=str(out), retries=-1)


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
