"""Token counting for :mod:`mxc.contrib.text`."""
import collections
import re


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """Count the tokens of `source_str`, split on `token_delim` and `seq_delim` (both regular
    expressions, as in MXNet); empty tokens are dropped. Updates and returns
    `counter_to_update` when given, else a new ``collections.Counter``."""
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
