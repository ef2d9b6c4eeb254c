"""mx.contrib.text: vocabularies and embeddings from local files, against values worked out by
hand from the files written here (the order rules are MXNet 1.9.1's)."""
import collections
import os
import zipfile

import numpy as np
import pytest

import mxc as mx
from mxc.contrib import text


def _write(path, lines):
    with open(path, "w", encoding="utf8") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def test_count_tokens_and_vocabulary_order():
    counter = text.utils.count_tokens_from_str(" Life is great ! \n life is good . \n",
                                               to_lower=True)
    assert counter == collections.Counter({"life": 2, "is": 2, "great": 1, "!": 1, "good": 1,
                                           ".": 1})
    v = text.vocab.Vocabulary(counter, most_freq_count=4, reserved_tokens=["<pad>"])
    # by frequency, then token order; capped at 4 counted tokens after <unk>, <pad>
    assert v.idx_to_token == ["<unk>", "<pad>", "is", "life", "!", "."]
    assert v.to_indices(["life", "zzz"]) == [3, 0]
    assert v.to_tokens(2) == "is"
    with pytest.raises(ValueError):
        v.to_tokens(6)
    with pytest.raises(AssertionError):
        text.vocab.Vocabulary(counter, reserved_tokens=["<unk>"])
    assert len(text.vocab.Vocabulary(counter, min_freq=2)) == 3


def test_custom_embedding_with_vocabulary_and_update(tmp_path):
    path = _write(tmp_path / "e.txt", ["a 0.1 0.2", "b 0.3 0.4", "a 9 9", "<unk> 1 1", "hdr 3"])
    with pytest.warns(UserWarning):
        e = text.embedding.CustomEmbedding(path, init_unknown_vec=mx.nd.ones)
    assert e.idx_to_token == ["<unk>", "a", "b"] and e.vec_len == 2
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(),
                               np.array([[1, 1], [0.1, 0.2], [0.3, 0.4]], np.float32))
    np.testing.assert_allclose(e.get_vecs_by_tokens(["B", "x"], lower_case_backup=True).asnumpy(),
                               np.array([[0.3, 0.4], [1, 1]], np.float32))
    e.update_token_vectors("a", mx.nd.array([5, 6]))
    np.testing.assert_allclose(e.get_vecs_by_tokens("a").asnumpy(), [5, 6])
    with pytest.raises(ValueError):
        e.update_token_vectors("zzz", mx.nd.array([0, 0]))
    with pytest.raises(AssertionError):
        e.update_token_vectors("a", mx.nd.array([0, 0, 0]))

    vocab = text.vocab.Vocabulary(collections.Counter(["b", "c", "c"]))
    ev = text.embedding.CustomEmbedding(path, vocabulary=vocab)
    assert ev.idx_to_token == ["<unk>", "c", "b"]
    np.testing.assert_allclose(ev.idx_to_vec.asnumpy(), [[1, 1], [1, 1], [0.3, 0.4]])


def test_composite_embedding_joins_columns(tmp_path):
    p1 = _write(tmp_path / "1.txt", ["x 1 2", "y 3 4"])
    p2 = _write(tmp_path / "2.txt", ["y,7", "z,8", "q,9"])
    # 1-dimensional lines are read as headers, so the file has no vectors
    with pytest.raises(ValueError, match="no token embedding vector"), pytest.warns(UserWarning):
        text.embedding.CustomEmbedding(p2, elem_delim=",")
    p2 = _write(tmp_path / "2.txt", ["y,7,0", "z,8,1"])
    e1 = text.embedding.CustomEmbedding(p1)
    e2 = text.embedding.CustomEmbedding(p2, elem_delim=",", init_unknown_vec=mx.nd.ones)
    vocab = text.vocab.Vocabulary(collections.Counter({"y": 3, "z": 2, "w": 1}))
    ce = text.embedding.CompositeEmbedding(vocab, [e1, e2])
    assert ce.idx_to_token == ["<unk>", "y", "z", "w"] and ce.vec_len == 4
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy(),
                               [[0, 0, 1, 1], [3, 4, 7, 0], [0, 0, 8, 1], [0, 0, 1, 1]])


def test_pretrained_registry_is_local_only(tmp_path):
    names = text.embedding.get_pretrained_file_names()
    assert len(names["glove"]) == 10 and len(names["fasttext"]) == 327
    with pytest.raises(KeyError):
        text.embedding.get_pretrained_file_names("nope")
    with pytest.raises(KeyError):
        text.embedding.create("glove", pretrained_file_name="glove.1B.txt")
    with pytest.raises(mx.base.MXNetError, match="no network download"):
        text.embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                              embedding_root=str(tmp_path))


def test_registered_embedding_loads_from_archive(tmp_path):
    body = "tok 0.5 -0.5\n"
    import hashlib

    @text.embedding.register
    class LocalEmb(text.embedding._TokenEmbedding):
        pretrained_file_name_sha1 = {"v.txt": hashlib.sha1(body.encode()).hexdigest()}

        @classmethod
        def _get_download_file_name(cls, name):
            return "v.zip"

        def __init__(self, embedding_root, **kwargs):
            super().__init__(**kwargs)
            self._load_embedding(self._get_pretrained_file(embedding_root, "v.txt"), " ",
                                 mx.nd.zeros)

    os.makedirs(tmp_path / "localemb")
    with zipfile.ZipFile(tmp_path / "localemb" / "v.zip", "w") as zf:
        zf.writestr("v.txt", body)
    e = text.embedding.create("localemb", embedding_root=str(tmp_path))
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[0, 0], [0.5, -0.5]])
    (tmp_path / "localemb" / "v.txt").write_text("tok 1 1\n")
    with pytest.raises(mx.base.MXNetError, match="SHA-1"):
        text.embedding.create("localemb", embedding_root=str(tmp_path))


def test_numpy_semantics_give_mx_np_arrays(tmp_path):
    path = _write(tmp_path / "e.txt", ["a 1 2", "b 3 4"])
    with mx.util.np_shape(True), mx.util.np_array(True):
        e = text.embedding.CustomEmbedding(path, init_unknown_vec=mx.nd.ones)
        assert isinstance(e.idx_to_vec, mx.np.ndarray)
        vecs = e.get_vecs_by_tokens(["b", "zz"])
        assert isinstance(vecs, mx.np.ndarray)
        np.testing.assert_allclose(vecs.asnumpy(), [[3, 4], [1, 1]])
        e.update_token_vectors("a", mx.np.array([9, 9]))
        np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[1, 1], [9, 9], [3, 4]])
