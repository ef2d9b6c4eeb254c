"""Token embeddings: vectors for the tokens of a vocabulary, read from text files.

Each line of an embedding file is a token and its vector, separated by `elem_delim`. Index 0 is
the unknown token: its vector comes from the file when the file has a line for it, else from
`init_unknown_vec`. GloVe and fastText name the files MXNet 1.9.1 could download; mxc downloads
nothing and loads them only from ``embedding_root/<glove|fasttext>/`` (where MXNet keeps them).
"""
import hashlib
import logging
import os
import tarfile
import warnings
import zipfile

import numpy as np

from ... import ndarray as nd
from ...base import MXNetError, data_dir
from ...util import is_np_array
from . import _pretrained_files as _files
from . import vocab
from .vocab import UNKNOWN_IDX

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

# registered embedding classes by lower-cased class name
_REGISTRY = {}


def register(embedding_cls):
    """Class decorator: make `embedding_cls` (a ``_TokenEmbedding``) creatable by name."""
    if not (isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding)):
        raise AssertionError("Can only register subclass of _TokenEmbedding")
    name = embedding_cls.__name__.lower()
    if name in _REGISTRY:
        warnings.warn(f"New token embedding {embedding_cls.__module__}.{embedding_cls.__name__} "
                      f"is overriding existing token embedding {name}")
    _REGISTRY[name] = embedding_cls
    return embedding_cls


def create(embedding_name, **kwargs):
    """A token embedding of the registered class `embedding_name` (e.g. 'glove')."""
    name = embedding_name.lower()
    if name not in _REGISTRY:
        raise ValueError(f"token embedding {embedding_name!r} is not registered; registered: "
                         f"{', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pretrained file names of `embedding_name`, or of every registered embedding as a
    dict {name: [file names]}."""
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in _REGISTRY.items()}
    if embedding_name not in _REGISTRY:
        raise KeyError(f"Cannot find `embedding_name` {embedding_name}. Use "
                       "`get_pretrained_file_names(embedding_name=None).keys()` to get all the "
                       "valid embedding names.")
    return list(_REGISTRY[embedding_name].pretrained_file_name_sha1)


def _sha1_of(path):
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _array(values):
    """An mx.np array under numpy semantics, else an NDArray (as MXNet picks)."""
    out = nd.array(values, dtype=values.dtype)
    return out.as_np_ndarray() if is_np_array() else out


class _TokenEmbedding(vocab.Vocabulary):
    """A vocabulary with one vector per token (``idx_to_vec``, shape (len, vec_len))."""

    # pretrained file name -> SHA-1 (subclasses that name pretrained files set it)
    pretrained_file_name_sha1 = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    # ---- pretrained files (local only) ----
    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        """The archive MXNet downloads that holds `pretrained_file_name`."""
        return pretrained_file_name

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError(f"Cannot find pretrained file {pretrained_file_name} for token "
                           f"embedding {name}. Valid pretrained files for embedding {name}: "
                           f"{', '.join(cls.pretrained_file_name_sha1)}")

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """Path of `pretrained_file_name` under ``embedding_root/<class name>/``, extracted from
        its archive there if need be. mxc never downloads: a missing file is an error."""
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        archive = os.path.join(embedding_dir, cls._get_download_file_name(pretrained_file_name))
        if not os.path.isfile(path) and archive != path and os.path.isfile(archive):
            if archive.endswith(".zip"):
                with zipfile.ZipFile(archive, "r") as zf:
                    zf.extractall(embedding_dir)
            elif archive.endswith(".gz"):
                with tarfile.open(archive, "r:gz") as tar:
                    tar.extractall(path=embedding_dir)
        if not os.path.isfile(path):
            raise MXNetError(
                f"{cls.__name__}: pretrained file {pretrained_file_name} is not at {path}, and mxc "
                "does no network download; put the file (or its archive "
                f"{os.path.basename(archive)}) there, or load any local file with "
                "CustomEmbedding(path)")
        expected = cls.pretrained_file_name_sha1[pretrained_file_name]
        if _sha1_of(path) != expected:
            raise MXNetError(f"{cls.__name__}: {path} does not have the SHA-1 of "
                             f"{pretrained_file_name} ({expected}); the file is damaged or another")
        return path

    # ---- loading ----
    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec, encoding="utf8"):
        """Index the tokens of an embedding file after the unknown and reserved tokens, and set
        their vectors."""
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise ValueError("`pretrained_file_path` must be a valid path to the pre-trained "
                             f"token embedding file (got {pretrained_file_path!r}).")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        vec_len = None
        rows = []
        seen = set()
        unknown_vec = None
        with open(path, "r", encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) <= 1:
                    raise AssertionError(
                        f"At line {line_num} of the pre-trained text embedding file: the data "
                        f"format of the pre-trained token embedding file {path} is unexpected.")
                token, vec = elems[0], [float(x) for x in elems[1:]]
                if token == self._unknown_token and unknown_vec is None:
                    unknown_vec = vec
                    seen.add(token)
                elif token in seen:
                    warnings.warn(f"At line {line_num} of the pre-trained token embedding file: "
                                  f"the embedding vector for token {token} has been loaded and a "
                                  "duplicate embedding for the same token is seen and skipped.")
                elif len(vec) == 1:
                    warnings.warn(f"At line {line_num} of the pre-trained text embedding file: "
                                  f"token {token} with 1-dimensional vector {vec} is likely a "
                                  "header and is skipped.")
                else:
                    if vec_len is None:
                        vec_len = len(vec)
                    elif len(vec) != vec_len:
                        raise AssertionError(
                            f"At line {line_num} of the pre-trained token embedding file: the "
                            f"dimension of token {token} is {len(vec)} but the dimension of "
                            f"previous tokens is {vec_len}. Dimensions of all the tokens must "
                            "be the same.")
                    rows.append(vec)
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                    seen.add(token)
        if vec_len is None:
            raise ValueError(f"{path}: no token embedding vector in the file")
        # the unknown token's row is 0; rows of reserved tokens (indexed before) stay zeros
        table = np.zeros((len(self._idx_to_token), vec_len), dtype=np.float32)
        table[len(self._idx_to_token) - len(rows):] = np.asarray(rows, dtype=np.float32)
        if unknown_vec is None:
            init = init_unknown_vec(shape=vec_len)
            table[UNKNOWN_IDX] = init.asnumpy() if hasattr(init, "asnumpy") else init
        else:
            table[UNKNOWN_IDX] = unknown_vec
        self._vec_len = vec_len
        self._idx_to_vec = _array(table)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = None if vocabulary.reserved_tokens is None \
            else list(vocabulary.reserved_tokens)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """Rows for `vocab_idx_to_token`: the embeddings' vectors side by side; row 0 joins the
        embeddings' own unknown vectors."""
        parts = []
        for embed in token_embeddings:
            part = np.empty((vocab_len, embed.vec_len), dtype=np.float32)
            part[0] = embed.idx_to_vec[0].asnumpy()
            if vocab_len > 1:
                part[1:] = embed.get_vecs_by_tokens(list(vocab_idx_to_token[1:])).asnumpy()
            parts.append(part)
        table = np.concatenate(parts, axis=1)
        self._vec_len = table.shape[1]
        self._idx_to_vec = _array(table)

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is not None:
            if not isinstance(vocabulary, vocab.Vocabulary):
                raise AssertionError("The argument `vocabulary` must be an instance of "
                                     "mxnet.contrib.text.vocab.Vocabulary.")
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        """Length of each token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """The vectors, row i for token i."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """Vector of a token (1-D) or of a list of tokens (2-D); unknown tokens get row 0.

        With `lower_case_backup`, a token not found as is is looked up in lower case."""
        single = not isinstance(tokens, list)
        if single:
            tokens = [tokens]
        if lower_case_backup:
            indices = [self._token_to_idx[t] if t in self._token_to_idx
                       else self._token_to_idx.get(t.lower(), UNKNOWN_IDX) for t in tokens]
        else:
            indices = [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]
        table = self._idx_to_vec
        if is_np_array():
            from ... import numpy as mnp
            from ... import numpy_extension as npx
            vecs = npx.embedding(mnp.array(indices), table, table.shape[0], table.shape[1])
        else:
            vecs = nd.Embedding(nd.array(indices), table, input_dim=table.shape[0],
                                output_dim=table.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Overwrite the vectors of known `tokens` (the unknown token only when named as such)."""
        if self._idx_to_vec is None:
            raise AssertionError("The property `idx_to_vec` has not been properly set.")
        is_array = hasattr(new_vectors, "asnumpy") and hasattr(new_vectors, "shape")
        if not isinstance(tokens, list) or len(tokens) == 1:
            if not (is_array and len(new_vectors.shape) in (1, 2)):
                raise AssertionError("`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is "
                                     "a singleton.")
            if not isinstance(tokens, list):
                tokens = [tokens]
            values = new_vectors.asnumpy().reshape(-1, new_vectors.shape[-1])
        else:
            if not (is_array and len(new_vectors.shape) == 2):
                raise AssertionError("`new_vectors` must be a 2-D NDArray if `tokens` is a list "
                                     "of multiple strings.")
            values = new_vectors.asnumpy()
        if values.shape != (len(tokens), self._vec_len):
            raise AssertionError("The length of new_vectors must be equal to the number of tokens "
                                 "and the width of new_vectors must be equal to the dimension of "
                                 "embeddings of the glossary.")
        indices = []
        for token in tokens:
            if token not in self._token_to_idx:
                raise ValueError(f"Token {token} is unknown. To update the embedding vector for "
                                 "an unknown token, please specify it explicitly as the "
                                 f"`unknown_token` {self._idx_to_token[UNKNOWN_IDX]} in "
                                 "`tokens`. This is to avoid unintended updates.")
            indices.append(self._token_to_idx[token])
        table = self._idx_to_vec.asnumpy()
        table[indices] = values
        self._idx_to_vec[:] = table


def _default_root():
    return os.path.join(data_dir(), "embeddings")


@register
class GloVe(_TokenEmbedding):
    """GloVe vectors (one of ``get_pretrained_file_names('glove')``) from a local file."""

    pretrained_archive_name_sha1 = _files.GLOVE_ARCHIVES
    pretrained_file_name_sha1 = _files.GLOVE_FILES

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        # glove.6B.50d.txt is in glove.6B.zip: the archive with the same second name part
        corpus = pretrained_file_name.split(".")[1]
        return next(a for a in cls.pretrained_archive_name_sha1 if a.split(".")[1] == corpus)

    def __init__(self, pretrained_file_name="glove.840B.300d.txt", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._get_pretrained_file(embedding_root or _default_root(), pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """fastText vectors (one of ``get_pretrained_file_names('fasttext')``) from a local file."""

    pretrained_archive_name_sha1 = _files.FASTTEXT_ARCHIVES
    pretrained_file_name_sha1 = _files.FASTTEXT_FILES

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name.rsplit(".", 1)[0] + ".zip"

    def __init__(self, pretrained_file_name="wiki.simple.vec", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        FastText._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = FastText._get_pretrained_file(embedding_root or _default_root(),
                                             pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Token vectors from any local file: one ``token<delim>v1<delim>v2...`` per line."""

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of `vocabulary` with the vectors of `token_embeddings` side by side."""

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise AssertionError("The argument `vocabulary` must be an instance of "
                                 "mxnet.contrib.text.vocab.Vocabulary.")
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            if not isinstance(embed, _TokenEmbedding):
                raise AssertionError("The argument `token_embeddings` must be an instance or a "
                                     "list of instances of token embeddings.")
        super().__init__()
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self._idx_to_token)
