"""Writes mxc/contrib/text/_pretrained_files.py: the names (and SHA-1 hashes) of the pretrained
GloVe and fastText files MXNet 1.9.1's mx.contrib.text registry knows.

Run with real MXNet 1.9.1:
    /work/mxnet-oracle/bin/python tests/data/contrib/text/make_pretrained_files.py
"""
import os
import pprint

from mxnet.contrib.text import _constants as C

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..",
                   "mxc", "contrib", "text", "_pretrained_files.py")

TABLES = [
    ("GLOVE_ARCHIVES", "GloVe archives (what MXNet downloads) -> SHA-1",
     C.GLOVE_PRETRAINED_FILE_SHA1),
    ("GLOVE_FILES", "GloVe embedding files (inside the archives) -> SHA-1",
     C.GLOVE_PRETRAINED_ARCHIVE_SHA1),
    ("FASTTEXT_ARCHIVES", "fastText archives -> SHA-1", C.FAST_TEXT_ARCHIVE_SHA1),
    ("FASTTEXT_FILES", "fastText embedding files -> SHA-1", C.FAST_TEXT_FILE_SHA1),
]

with open(OUT + ".tmp", "w") as f:
    f.write('"""Pretrained token embedding files known to MXNet 1.9.1\'s mx.contrib.text '
            '(data only;\nmade by tests/data/contrib/text/make_pretrained_files.py)."""\n')
    for name, what, table in TABLES:
        f.write(f"\n# {what}\n{name} = ")
        f.write(pprint.pformat(dict(table), width=100, sort_dicts=False))
        f.write("\n")
os.replace(OUT + ".tmp", OUT)
