"""``Vocabulary``: a two-way map between tokens and indices (index 0 is the unknown token)."""
import collections

UNKNOWN_IDX = 0


class Vocabulary:
    """Index of the unknown token, the reserved tokens and the tokens of `counter`.

    Tokens of `counter` are indexed by decreasing frequency (ties in token order), at most
    `most_freq_count` of them, none rarer than `min_freq`.
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        if not min_freq > 0:
            raise AssertionError("`min_freq` must be set to a positive value.")
        if reserved_tokens is not None:
            reserved = set(reserved_tokens)
            if unknown_token in reserved:
                raise AssertionError("`reserved_token` cannot contain `unknown_token`.")
            if len(reserved) != len(reserved_tokens):
                raise AssertionError("`reserved_tokens` cannot contain duplicate reserved tokens.")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token] + list(reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter(counter, most_freq_count, min_freq)

    def _index_counter(self, counter, most_freq_count, min_freq):
        if not isinstance(counter, collections.Counter):
            raise AssertionError("`counter` must be an instance of collections.Counter.")
        special = set(self._idx_to_token)
        # by frequency, most frequent first; equal frequencies in token order
        by_freq = sorted(sorted(counter.items(), key=lambda kv: kv[0]),
                         key=lambda kv: kv[1], reverse=True)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in by_freq:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict: token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: index -> token."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """Index of a token, or list of indices of a list of tokens (unknown ones map to 0)."""
        if not isinstance(tokens, list):
            return self._token_to_idx.get(tokens, UNKNOWN_IDX)
        return [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]

    def to_tokens(self, indices):
        """Token of an index, or list of tokens of a list of indices."""
        single = not isinstance(indices, list)
        if single:
            indices = [indices]
        last = len(self._idx_to_token) - 1
        tokens = []
        for idx in indices:
            if not isinstance(idx, int) or idx > last:
                raise ValueError(f"Token index {idx} in the provided `indices` is invalid.")
            tokens.append(self._idx_to_token[idx])
        return tokens[0] if single else tokens
