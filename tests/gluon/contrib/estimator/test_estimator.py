"""Estimator.fit / evaluate: the optimisation against a numpy SGD loop, metrics against numpy,
the stop conditions, default handlers and argument errors."""
import io
import logging
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc import gluon
from mxc.gluon.contrib.estimator import (BatchEnd, BatchProcessor, EpochEnd, Estimator,
                                         GradientUpdateHandler, LoggingHandler, MetricHandler,
                                         ProgressBarHandler, StoppingHandler, ValidationHandler)
from mxc.gluon.contrib.estimator import estimator as estimator_module

from .common import classification_data, classifier, regression_data


def _linear_net(w, b):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    net.weight.set_data(mx.nd.array(w))
    net.bias.set_data(mx.nd.array(b))
    return net


def test_fit_is_minibatch_sgd_on_the_loss():
    loader, x, y = regression_data(n=12, batch_size=4)
    rng = np.random.RandomState(5)
    w, b = rng.randn(2, 3).astype(np.float32), rng.randn(2).astype(np.float32)
    net = _linear_net(w, b)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer, context=mx.cpu())
    est.fit(loader, epochs=3)

    # numpy: L2Loss = 0.5 * mean over targets of (pred - y)^2, the step divides by batch size
    w64, b64 = w.astype(np.float64), b.astype(np.float64)
    for _ in range(3):
        for i in range(0, 12, 4):
            xb, yb = x[i:i + 4], y[i:i + 4]
            err = (xb @ w64.T + b64 - yb) / 2  # d loss / d pred per sample (mean over 2)
            w64 -= 0.1 * (err.T @ xb) / 4
            b64 -= 0.1 * err.sum(0) / 4
    np.testing.assert_allclose(net.weight.data().asnumpy(), w64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b64, rtol=1e-5, atol=1e-6)

    # the default training metric is the loss of the last epoch (mean over its samples)
    names = [m.name for m in est.train_metrics]
    assert names == ["training l2loss"]
    assert [m.name for m in est.val_metrics] == ["validation l2loss"]


def test_fit_on_two_contexts_matches_one():
    loader, _, _ = classification_data()
    results = []
    for ctx in ([mx.cpu()], [mx.cpu(0), mx.cpu(1)]):
        net = classifier(seed=7)
        net.collect_params().reset_ctx(ctx)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, context=ctx)
        est.fit(loader, epochs=2)
        results.append([p.data(ctx[0]).asnumpy() for p in net.collect_params().values()])
    for one, two in zip(*results):
        np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-6)


def test_evaluate_metrics_equal_numpy():
    loader, x, y = classification_data(n=16)
    net = classifier()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd"))
    est.evaluate(loader)
    logits = net(mx.nd.array(x)).asnumpy().astype(np.float64)
    acc = (logits.argmax(1) == y).mean()
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    ce = -logp[np.arange(16), y.astype(int)].mean()
    values = dict(m.get() for m in est.val_metrics)
    assert values["validation accuracy"] == pytest.approx(acc)
    assert values["validation softmaxcrossentropyloss"] == pytest.approx(ce, rel=1e-5)


class _Counter(BatchEnd, EpochEnd):
    def __init__(self):
        self.batches = self.epochs = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.batches += 1

    def epoch_end(self, estimator, *args, **kwargs):
        self.epochs += 1


@pytest.mark.parametrize("kwargs, batches, epochs", [({"epochs": 2}, 8, 2),
                                                     ({"batches": 6}, 6, 2),
                                                     ({"batches": 4}, 4, 1)])
def test_stops_after_epochs_or_batches(kwargs, batches, epochs):
    loader, _, _ = classification_data(n=16, batch_size=4)
    net = classifier()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd"))
    counter = _Counter()
    est.fit(loader, event_handlers=[counter], **kwargs)
    assert (counter.batches, counter.epochs) == (batches, epochs)


def test_default_handlers_and_their_order(monkeypatch):
    monkeypatch.setenv("MXC_PROGRESS", "0")  # the list without a terminal's progress bar
    loader, _, _ = classification_data()
    net = classifier()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd"))
    est.max_epoch, est.max_batch = 1, None
    handlers = est._prepare_default_handlers(loader, None)
    assert [type(h) for h in handlers] == [GradientUpdateHandler, MetricHandler,
                                           ValidationHandler, StoppingHandler, LoggingHandler]
    # a handler of a default kind replaces the default one
    mine = LoggingHandler(log_interval=2, metrics=est.train_metrics)
    handlers = est._prepare_default_handlers(None, [mine])
    assert [h for h in handlers if isinstance(h, LoggingHandler)] == [mine]
    # on a terminal a progress bar comes too, before the logging handler
    monkeypatch.setattr(estimator_module.sys, "stderr", _Tty())
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("MXC_PROGRESS")
    handlers = est._prepare_default_handlers(None, None)
    assert [type(h) for h in handlers][-2:] == [ProgressBarHandler, LoggingHandler]
    monkeypatch.setenv("MXC_PROGRESS", "0")
    assert not any(isinstance(h, ProgressBarHandler)
                   for h in est._prepare_default_handlers(None, None))
    # the default metrics are accuracy and the loss for softmax cross-entropy
    assert [type(m) for m in est.train_metrics] == [mx.metric.Accuracy, mx.metric.Loss]


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_logging_handler_lines():
    loader, _, _ = classification_data(n=16, batch_size=4)
    net = classifier()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.25})
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(), trainer=trainer)
    out = io.StringIO()
    est.logger.handlers = [logging.StreamHandler(out)]
    est.fit(loader, epochs=2,
            event_handlers=[LoggingHandler(log_interval=2, metrics=est.train_metrics)])
    lines = out.getvalue().splitlines()
    assert lines[0] == ("Training begin: using optimizer SGD with current learning rate "
                        "0.2500 ")
    assert lines[1] == "Train for 2 epochs."
    assert lines[2] == "[Epoch 0] Begin, current learning rate: 0.2500"
    batch_lines = [ln for ln in lines if ln.startswith("[Epoch 1][Batch")]
    assert [ln.split(" time")[0] for ln in batch_lines] == ["[Epoch 1][Batch 0][Samples 20]",
                                                            "[Epoch 1][Batch 2][Samples 28]"]
    acc, loss = (m.get()[1] for m in est.train_metrics)
    assert lines[-2].startswith("[Epoch 1] Finished in ")
    assert lines[-2].endswith(f"s, training accuracy: {acc:.4f}, "
                              f"training softmaxcrossentropyloss: {loss:.4f}")
    assert lines[-1].startswith("Train finished using total ")
    assert lines[-1].endswith(f"with 2 epochs. training accuracy: {acc:.4f}, "
                              f"training softmaxcrossentropyloss: {loss:.4f}")


def test_validation_every_few_batches():
    loader, _, _ = classification_data(n=16, batch_size=4)
    net = classifier()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd"))
    calls = []

    def eval_fn(val_data, batch_axis, event_handlers):
        calls.append(val_data)
        est.evaluate(val_data, batch_axis, event_handlers)

    est.fit(loader, epochs=2, event_handlers=[
        ValidationHandler(loader, eval_fn, epoch_period=2, batch_period=3)])
    assert len(calls) == 8 // 3 + 1
    assert not np.isnan(est.val_metrics[0].get()[1])


def test_custom_batch_processor():
    class Halved(BatchProcessor):
        """Trains on the first half of each batch only."""

        def fit_batch(self, estimator, train_batch, batch_axis=0):
            data, label = train_batch
            self.sizes.append(data.shape[0] // 2)
            return super().fit_batch(estimator, (data[:data.shape[0] // 2],
                                                 label[:data.shape[0] // 2]), batch_axis)

    processor = Halved()
    processor.sizes = []
    loader, _, _ = classification_data(n=16, batch_size=4)
    net = classifier()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(),
                    trainer=gluon.Trainer(net.collect_params(), "sgd"), batch_processor=processor)
    est.fit(loader, epochs=1)
    assert processor.sizes == [2, 2, 2, 2]
    with pytest.raises(ValueError, match="fit_batch\\(\\) and evaluate_batch\\(\\)"):
        Estimator(net, gluon.loss.L2Loss(), context=mx.cpu(), batch_processor=object(),
                  trainer=gluon.Trainer(net.collect_params(), "sgd"))


def test_bad_arguments():
    loader, x, _ = classification_data()
    net = classifier()
    trainer = gluon.Trainer(net.collect_params(), "sgd")
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(), trainer=trainer)
    with pytest.raises(ValueError, match="only support input as Gluon DataLoader"):
        est.fit(mx.io.NDArrayIter(x, batch_size=4), epochs=1)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(loader, epochs=1, batches=2)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(loader)
    with pytest.raises(ValueError, match="must be an EventHandler"):
        est.fit(loader, epochs=1, event_handlers=["logging"])
    with pytest.raises(ValueError, match="outside of the known training and validation"):
        est.fit(loader, epochs=1, event_handlers=[LoggingHandler(metrics=[mx.metric.MAE()])])
    with pytest.raises(ValueError, match="loss must be a Loss"):
        Estimator(net, "l2", context=mx.cpu(), trainer=trainer)
    with pytest.raises(ValueError, match="metrics must be a Metric"):
        Estimator(net, gluon.loss.L2Loss(), train_metrics="acc", trainer=trainer)
    with pytest.raises(ValueError, match="context must be a Context"):
        Estimator(net, gluon.loss.L2Loss(), context="cpu", trainer=trainer)
    with pytest.raises(ValueError, match="Trainer must be a Gluon Trainer"):
        Estimator(net, gluon.loss.L2Loss(), context=mx.cpu(), trainer="sgd")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Estimator(net, gluon.loss.L2Loss(), context=mx.cpu())
        Estimator(net, gluon.loss.L2Loss(), context=mx.cpu(), trainer=trainer,
                  initializer=mx.init.Zero())
    messages = [str(w.message) for w in caught]
    assert any("No trainer specified" in m for m in messages)
    assert any("Network already fully initialized" in m for m in messages)


def test_initializes_only_what_has_no_values():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
    net[0].initialize(mx.init.One())
    Estimator(net, gluon.loss.L2Loss(), context=mx.cpu(), initializer=mx.init.Constant(3),
              trainer=None)
    assert (net[0].weight.data().asnumpy() == 1).all()
    assert (net[1].weight.data().asnumpy() == 3).all()
