"""mx.model.FeedForward (legacy) against MXNet 1.9.1's numbers for a fixed MLP
(tests/data/model/make_feedforward_golden.py made the literals)."""
import logging

import numpy as np
import pytest

import mxc as mx

rng = np.random.RandomState(0)
X = rng.uniform(-1, 1, (20, 3)).astype(np.float32)
Y = (X.sum(axis=1) > 0).astype(np.float32)
W1 = rng.uniform(-0.5, 0.5, (4, 3)).astype(np.float32)
W2 = rng.uniform(-0.5, 0.5, (2, 4)).astype(np.float32)

FC1_WEIGHT = [-0.786824107170105, -1.1349767446517944, -0.47785258293151855, -0.7234177589416504,
              -0.9325786828994751, -0.5629234313964844, 0.08404386043548584, -0.8372373580932617,
              0.014676950871944427, -0.3035581409931183, 0.6240536570549011, 0.07822275906801224]
FC2_BIAS = [-0.06605911999940872, 0.06605911999940872]
PREDICT = [0.10177019983530045, 0.8982298374176025, 0.5598700642585754, 0.44012996554374695,
           0.02406754344701767, 0.9759324789047241, 0.14044269919395447, 0.8595573306083679,
           0.1076546385884285, 0.8923453688621521]


def _net():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc1")
    net = mx.sym.Activation(net, act_type="tanh")
    net = mx.sym.FullyConnected(net, num_hidden=2, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _model(**kw):
    args = {"fc1_weight": mx.nd.array(W1), "fc1_bias": mx.nd.zeros((4,)),
            "fc2_weight": mx.nd.array(W2), "fc2_bias": mx.nd.zeros((2,))}
    with pytest.warns(DeprecationWarning):
        return mx.model.FeedForward(_net(), arg_params=args, learning_rate=0.5, momentum=0.9,
                                    wd=0.0, **kw)


def test_fit_predict_score_match_mxnet():
    model = _model(num_epoch=3, epoch_size=2)
    seen = []
    model.fit(mx.io.NDArrayIter(X, Y, batch_size=8, shuffle=False),
              batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
              epoch_end_callback=lambda e, s, a, x: seen.append(("end", e)))
    # epoch_size=2 of a 3-batch iterator: batches are numbered from 1, the iterator is not reset
    # between epochs until it runs out
    assert seen == [(0, 1), (0, 2), ("end", 0), (1, 1), (1, 2), ("end", 1), (2, 1), (2, 2),
                    ("end", 2)]
    np.testing.assert_allclose(model.arg_params["fc1_weight"].asnumpy().ravel(), FC1_WEIGHT,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.arg_params["fc2_bias"].asnumpy(), FC2_BIAS, atol=1e-6)
    np.testing.assert_allclose(model.predict(X[:5]).ravel(), PREDICT, rtol=1e-5, atol=1e-6)
    assert model.score(mx.io.NDArrayIter(X, Y, batch_size=8)) == 0.875


def test_predict_is_the_numpy_forward_and_returns_data():
    model = _model()  # no training: predict uses the given parameters
    out, data, label = model.predict(mx.io.NDArrayIter(X, Y, batch_size=8), return_data=True)
    logits = np.tanh(X @ W1.T) @ W2.T
    ref = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(data, X)
    np.testing.assert_array_equal(label, Y)
    assert model.predict(X, num_batch=1).shape == (20, 2)  # numpy X: one batch of 20


def test_save_load_and_errors(tmp_path):
    model = _model(num_epoch=1)
    model.fit(X, Y, logger=logging.getLogger("ff"))
    prefix = str(tmp_path / "ff")
    model.save(prefix)
    with pytest.warns(DeprecationWarning):
        loaded = mx.model.FeedForward.load(prefix, 1)
    assert loaded.begin_epoch == 1
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="y must be specified"):
        model.fit(X)
    with pytest.raises(ValueError, match="not equal"):
        model.fit(X, Y[:5])
    with pytest.raises(TypeError):
        model.predict([1, 2, 3])


def test_callback_and_lr_scheduler_names(tmp_path):
    assert mx.callback.save_checkpoint is mx.model.save_checkpoint
    assert mx.lr_scheduler.cos(mx.lr_scheduler.pi) == -1.0


def test_sym_gen_trains_every_bucket():
    sentences = [[1, 2, 3], [2, 3, 4, 5], [1, 3], [4, 5, 1, 2], [3, 3, 3], [5, 4, 3, 2]] * 4
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=4, buckets=[3, 5], invalid_label=0)
    keys = []

    def sym_gen(seq_len):
        keys.append(seq_len)
        emb = mx.sym.Embedding(mx.sym.Variable("data"), input_dim=6, output_dim=4, name="embed")
        out = mx.sym.FullyConnected(mx.sym.Reshape(emb, shape=(-1, 4)), num_hidden=6,
                                    name="pred")
        label = mx.sym.Reshape(mx.sym.Variable("softmax_label"), shape=(-1,))
        return mx.sym.SoftmaxOutput(out, label, name="softmax")

    with pytest.warns(DeprecationWarning):
        model = mx.model.FeedForward(sym_gen, num_epoch=2, learning_rate=0.1)
    model.fit(it, eval_metric=mx.metric.Perplexity(0))
    assert set(keys) == {3, 5}
    assert sorted(model.arg_params) == ["embed_weight", "pred_bias", "pred_weight"]
    assert model.arg_params["pred_weight"].shape == (6, 4)
    assert np.isfinite(model.arg_params["embed_weight"].asnumpy()).all()
