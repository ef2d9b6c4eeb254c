"""gluon.contrib.data: WikiText2 on a small tokens file against real MXNet 1.9.1's vocabulary
and rows (tests/data/make_gluon_contrib_golden.py), and IntervalSampler."""
import os

import numpy as np
import pytest

from mxc.gluon import contrib

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "data", "gluon_contrib")
GOLD = np.load(os.path.join(HERE, "golden.npz"))


def test_wikitext2_matches_mxnet():
    wiki = contrib.data.text.WikiText2(root=HERE, segment="test", seq_len=4)
    assert wiki.vocabulary.idx_to_token == str(GOLD["wiki/vocab"]).split("\n")
    data = np.stack([wiki[i][0].asnumpy() for i in range(len(wiki))])
    label = np.stack([wiki[i][1].asnumpy() for i in range(len(wiki))])
    np.testing.assert_array_equal(data, GOLD["wiki/data"])
    np.testing.assert_array_equal(label, GOLD["wiki/label"])
    assert wiki.frequencies["the"] == 4 and "<eos>" not in wiki.frequencies
    # a vocabulary passed in is used as is
    again = contrib.data.text.WikiText2(root=HERE, segment="test", seq_len=3,
                                        vocab=wiki.vocabulary)
    assert again.vocabulary is wiki.vocabulary and again[0][0].shape == (3,)


def test_wikitext_missing_file_and_segment(tmp_path):
    # the archive cannot be fetched from the tests' repository (tests/conftest.py)
    with pytest.raises(FileNotFoundError, match="wiki.valid.tokens not found .*, and "
                                                "wikitext-103-v1.zip holding them could not"):
        contrib.data.text.WikiText103(root=str(tmp_path), segment="validation")
    with pytest.raises(ValueError, match="segment"):
        contrib.data.text.WikiText2(root=str(tmp_path), segment="dev")


def test_wikitext2_downloads_and_unpacks_its_archive(tmp_path, monkeypatch, served):
    """MXNet's archive from the repository (here served on 127.0.0.1): its files land in root
    under their base names, and read as the local file does"""
    import hashlib
    import zipfile
    src = served.root / "gluon" / "dataset" / "wikitext-2"
    src.mkdir(parents=True)
    with zipfile.ZipFile(src / "wikitext-2-v1.zip", "w") as zf:
        zf.write(os.path.join(HERE, "wiki.test.tokens"), "wikitext-2/wiki.test.tokens")
        zf.writestr("../../escape.tokens", "not outside root")
    digest = hashlib.sha1((src / "wikitext-2-v1.zip").read_bytes()).hexdigest()
    monkeypatch.setattr(contrib.data.text.WikiText2, "_sha1", {"wikitext-2-v1.zip": digest})
    monkeypatch.setenv("MXNET_GLUON_REPO", served.url)
    root = tmp_path / "root"
    wiki = contrib.data.text.WikiText2(root=str(root), segment="test", seq_len=4)
    local = contrib.data.text.WikiText2(root=HERE, segment="test", seq_len=4)
    assert wiki.vocabulary.idx_to_token == local.vocabulary.idx_to_token
    np.testing.assert_array_equal(wiki[1][0].asnumpy(), local[1][0].asnumpy())
    assert sorted(os.listdir(root)) == ["escape.tokens", "wiki.test.tokens", "wikitext-2-v1.zip"]
    assert not (tmp_path / "escape.tokens").exists()
    with pytest.raises(FileNotFoundError, match="does not hold wiki.train.tokens"):
        contrib.data.text.WikiText2(root=str(root), segment="train")


def test_interval_sampler():
    assert list(contrib.data.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    assert list(contrib.data.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
