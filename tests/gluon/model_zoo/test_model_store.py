"""mxc.gluon.model_zoo.model_store: pretrained weights load from a local root, or are fetched
from the repository MXNET_GLUON_REPO names (a directory, or a URL: here a server on 127.0.0.1);
what cannot be fetched gives a clear error naming the path."""
import hashlib
import os
import zipfile

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.gluon.model_zoo import model_store
from mxc.gluon.model_zoo.vision import get_model


def test_short_hash_and_unknown():
    assert model_store.short_hash("resnet18_v1") == "a0666292"
    with pytest.raises(ValueError, match="not available"):
        model_store.short_hash("resnet19_v1")


def test_pretrained_missing_file_names_the_path(tmp_path):
    with pytest.raises(MXNetError) as err:
        get_model("squeezenet1.1", pretrained=True, root=str(tmp_path))
    msg = str(err.value)     # the tests' repository refuses connections (tests/conftest.py)
    assert os.path.join(str(tmp_path), "squeezenet1.1-33ba0f93.params") in msg
    assert "could not be fetched" in msg and "gluon/models/squeezenet1.1-33ba0f93.zip" in msg


def _fake_store(monkeypatch, tmp_path, name):
    """Save a freshly initialized model as <name>-<hash8>.params with a matching store entry."""
    src = get_model(name)
    src.initialize(mx.init.Xavier())
    src(mx.nd.zeros((1, 3, 32, 32)))
    tmp_file = tmp_path / "tmp.params"
    src.save_parameters(str(tmp_file))
    sha1 = hashlib.sha1(tmp_file.read_bytes()).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, name, sha1)
    return src, tmp_file, sha1


def test_pretrained_loads_from_root(monkeypatch, tmp_path):
    src, tmp_file, sha1 = _fake_store(monkeypatch, tmp_path, "mobilenet0.25")
    root = tmp_path / "models"
    root.mkdir()
    os.replace(tmp_file, root / ("mobilenet0.25-%s.params" % sha1[:8]))
    net = get_model("mobilenet0.25", pretrained=True, root=str(root))
    x = mx.nd.ones((1, 3, 32, 32))
    np.testing.assert_allclose(net(x).asnumpy(), src(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_pretrained_wrong_content(monkeypatch, tmp_path):
    monkeypatch.setitem(model_store._model_sha1, "alexnet", "0" * 40)
    (tmp_path / "alexnet-00000000.params").write_bytes(b"not the file")
    with pytest.warns(UserWarning, match="Mismatch in the content"):
        with pytest.raises(MXNetError, match="could not be fetched"):
            model_store.get_model_file("alexnet", root=str(tmp_path))


def test_local_repo_archive(monkeypatch, tmp_path):
    src, tmp_file, sha1 = _fake_store(monkeypatch, tmp_path, "mobilenet0.5")
    fname = "mobilenet0.5-%s" % sha1[:8]
    repo = tmp_path / "repo" / "gluon" / "models"
    repo.mkdir(parents=True)
    with zipfile.ZipFile(repo / (fname + ".zip"), "w") as zf:
        zf.write(tmp_file, fname + ".params")
    monkeypatch.setenv("MXNET_GLUON_REPO", str(tmp_path / "repo"))
    root = tmp_path / "cache"
    path = model_store.get_model_file("mobilenet0.5", root=str(root))
    assert path == os.path.join(str(root), fname + ".params")
    assert os.path.exists(path)
    model_store.purge(str(root))
    assert not os.listdir(root)


def test_repo_over_http_and_archive_checks(monkeypatch, tmp_path, served):
    """the archive is downloaded from an http repository (MXNet's layout), only its .params
    member unpacked, checked and the archive removed; a stale file is fetched again"""
    src, tmp_file, sha1 = _fake_store(monkeypatch, tmp_path, "mobilenet0.75")
    fname = "mobilenet0.75-%s" % sha1[:8]
    (served.root / "gluon" / "models").mkdir(parents=True)
    with zipfile.ZipFile(served.root / "gluon" / "models" / (fname + ".zip"), "w") as zf:
        zf.write(tmp_file, fname + ".params")
        zf.writestr("../outside.txt", "never extracted")
    monkeypatch.setenv("MXNET_GLUON_REPO", served.url.rstrip("/"))   # no slash: one is added
    root = tmp_path / "cache"
    net = get_model("mobilenet0.75", pretrained=True, root=str(root))
    x = mx.nd.ones((1, 3, 32, 32))
    np.testing.assert_allclose(net(x).asnumpy(), src(x).asnumpy(), rtol=1e-5, atol=1e-6)
    assert os.listdir(root) == [fname + ".params"]
    assert not (tmp_path / "outside.txt").exists()
    (root / (fname + ".params")).write_bytes(b"stale")
    with pytest.warns(UserWarning, match="Mismatch"):
        path = model_store.get_model_file("mobilenet0.75", root=str(root))
    assert hashlib.sha1(open(path, "rb").read()).hexdigest() == sha1
    monkeypatch.setitem(model_store._model_sha1, "mobilenet0.75", sha1[:8] + "0" * 32)
    (root / (fname + ".params")).unlink()
    with pytest.raises(MXNetError, match="SHA-1 is not"):
        model_store.get_model_file("mobilenet0.75", root=str(root))
    assert os.listdir(root) == []
