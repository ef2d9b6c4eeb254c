"""WikiText-2 and WikiText-103 (Merity et al. 2016) for word-level language models, read from
the tokenised files under `root` (wiki.train.tokens, wiki.valid.tokens, wiki.test.tokens; when
missing, MXNet's archive of them is downloaded and its files unpacked there, as MXNet does).
Each line's tokens are followed by '<eos>'; the token
stream is cut into rows of `seq_len` (data) and the same stream shifted by one (label); a
trailing part shorter than `seq_len` is dropped, as MXNet 1.9.1 does."""
import os
import zipfile

import numpy as np

from ...data import dataset
from ...data.vision.datasets import _fetch
from .... import base, ndarray as nd
from ...._core import atomic_write as _atomic

__all__ = ["WikiText2", "WikiText103"]

# mx.contrib.text (counting and Vocabulary), handed over by the package face (mxc/__init__.py):
# mx.contrib builds on gluon, so gluon may not import it
_contrib_text = None

EOS_TOKEN = "<eos>"
_SEGMENT_FILES = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
                  "test": "wiki.test.tokens"}


class _WikiText(dataset._DownloadedDataset):
    _source = "the WikiText archive, unpacked"

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in _SEGMENT_FILES:
            raise ValueError("%s: segment must be one of %s, got %r"
                             % (type(self).__name__, sorted(_SEGMENT_FILES), segment))
        self._segment = segment
        self._seq_len = int(seq_len)
        self._vocab = vocab
        self._counter = None
        super().__init__(root, None)

    @property
    def vocabulary(self):
        """contrib.text.vocab.Vocabulary: the given one, or one built from this segment."""
        return self._vocab

    @property
    def frequencies(self):
        """collections.Counter of this segment's tokens (without '<eos>')."""
        return self._counter

    def _get_data(self):
        name = _SEGMENT_FILES[self._segment]
        if not os.path.isfile(os.path.join(self._root, name)):
            (archive,) = self._sha1
            _fetch(self, [archive], [name])
            # every file of the archive into root by its base name (no path of the archive
            # is used), each written whole
            with zipfile.ZipFile(os.path.join(self._root, archive)) as zf:
                for member in zf.infolist():
                    base_name = os.path.basename(member.filename)
                    if base_name and not member.is_dir():
                        with zf.open(member) as src:
                            _atomic.write_from(os.path.join(self._root, base_name), src)
            if not os.path.isfile(os.path.join(self._root, name)):
                raise FileNotFoundError("%s: %s does not hold %s"
                                        % (type(self).__name__, archive, name))
        with open(os.path.join(self._root, name), "r", encoding="utf8") as fin:
            content = fin.read()
        text = _contrib_text()
        self._counter = text.utils.count_tokens_from_str(content)
        if self._vocab is None:
            self._vocab = text.vocab.Vocabulary(counter=self._counter,
                                                reserved_tokens=[EOS_TOKEN])
        tokens = []
        for line in content.splitlines():
            words = line.split()
            if words:
                tokens.extend(words)
                tokens.append(EOS_TOKEN)
        ids = np.array(self._vocab.to_indices(tokens), dtype=np.int32)
        rows = (len(ids) - 1) // self._seq_len
        n = rows * self._seq_len
        self._data = nd.array(ids[:n], dtype=np.int32).reshape((rows, self._seq_len))
        self._label = nd.array(ids[1:n + 1], dtype=np.int32).reshape((rows, self._seq_len))


class WikiText2(_WikiText):
    """WikiText-2: samples are (data, label) int32 rows of `seq_len` token indices.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/wikitext-2
    segment : 'train', 'validation' or 'test'
    vocab : contrib.text.vocab.Vocabulary, optional (built from the segment when None)
    seq_len : int, default 35
    """

    _namespace = "wikitext-2"
    _sha1 = {"wikitext-2-v1.zip": "3c914d17d80b1459be871a5039ac23e752a53cbe"}

    def __init__(self, root=os.path.join(base.data_dir(), "datasets", "wikitext-2"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103, same files and samples as WikiText2."""

    _namespace = "wikitext-103"
    _sha1 = {"wikitext-103-v1.zip": "0aec09a7537b58d4bb65362fee27650eeaba625a"}

    def __init__(self, root=os.path.join(base.data_dir(), "datasets", "wikitext-103"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)
