"""``mx.contrib.text``: vocabularies and token embeddings (MXNet 1.9.1's legacy text API).

``vocab.Vocabulary`` indexes tokens counted by ``utils.count_tokens_from_str``; ``embedding``
loads token vectors from local text files (``CustomEmbedding``, or the GloVe/fastText files
named in the registry when they are already on disk: mxc downloads nothing) and joins several
(``CompositeEmbedding``)."""
from . import utils  # noqa: F401
from . import vocab  # noqa: F401
from . import embedding  # noqa: F401
