"""mx.rnn.encode_sentences and BucketSentenceIter (MXNet 1.9.1's behaviour)."""
import numpy as np
import pytest

import mxc as mx


def test_encode_sentences_with_vocab_and_unknown_token():
    res, vocab = mx.rnn.encode_sentences([["a", "b", "c"], ["b", "c", "d"]],
                                         vocab={"a": 1, "b": 2, "c": 3}, invalid_label=-1,
                                         invalid_key="\n", start_label=0, unknown_token="UNK")
    assert vocab == {"a": 1, "b": 2, "c": 3, "UNK": 0}
    assert res == [[1, 2, 3], [2, 3, 0]]


def test_encode_sentences_builds_vocab_skipping_invalid_label():
    res, vocab = mx.rnn.io.encode_sentences([["x", "y"], ["y", "z", "x"]], invalid_label=1,
                                            start_label=0)
    # index 1 is the invalid label: the second new token gets 2
    assert vocab == {"\n": 1, "x": 0, "y": 2, "z": 3}
    assert res == [[0, 2], [2, 3, 0]]


def test_encode_sentences_unknown_without_token_fails():
    with pytest.raises(AssertionError, match="Unknown token q"):
        mx.rnn.encode_sentences([["q"]], vocab={"a": 0})


def _sentences(rng, n, lengths):
    return [list(rng.integers(1, 50, size=int(rng.choice(lengths)))) for _ in range(n)]


def test_bucket_iter_batches_labels_and_buckets(rng, capsys):
    sents = _sentences(rng, 60, [3, 5, 8]) + [[1] * 20]   # one longer than every bucket
    it = mx.rnn.BucketSentenceIter(sents, batch_size=4, buckets=[8, 5, 3], invalid_label=0)
    assert "discarded 1 sentences" in capsys.readouterr().out
    assert it.buckets == [3, 5, 8] and it.default_bucket_key == 8
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (4, 8)
    assert it.provide_label[0].name == "softmax_label"
    by_len = {3: 0, 5: 0, 8: 0}
    for s in sents[:-1]:
        by_len[len(s)] += 1
    expected = sum(n // 4 for n in by_len.values())
    seen = {tuple(s) for s in sents}
    batches = list(it)
    assert len(batches) == expected
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert data.shape == (4, b.bucket_key) == label.shape
        assert b.provide_data[0].shape == data.shape and b.pad == 0
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        assert (label[:, -1] == 0).all()
        for row in data:
            assert tuple(int(v) for v in row) in seen
    it.reset()
    assert len(list(it)) == expected


def test_bucket_iter_pads_and_time_major(rng):
    sents = [[1, 2], [3, 4, 5], [6], [7, 8, 9]]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[3], invalid_label=-1,
                                   layout="TN", data_name="x", label_name="y")
    assert it.provide_data[0].shape == (3, 2) and it.provide_data[0].name == "x"
    rows = set()
    for b in it:
        d = b.data[0].asnumpy()
        assert d.shape == (3, 2)
        rows.update(tuple(col) for col in d.T)
    assert rows == {(1, 2, -1), (3, 4, 5), (6, -1, -1), (7, 8, 9)}


def test_bucket_iter_default_buckets_and_bad_layout(rng):
    sents = [[1, 2]] * 5 + [[1, 2, 3]] * 2
    it = mx.rnn.BucketSentenceIter(sents, batch_size=3)
    assert it.buckets == [2]          # only lengths with >= batch_size sentences
    assert len(list(it)) == 1
    with pytest.raises(ValueError, match="layout"):
        mx.rnn.BucketSentenceIter(sents, batch_size=3, layout="NC")
