"""The estimator's event handlers: checkpoint files and resuming (against one uninterrupted run),
early stopping on scripted metric values, the progress bar."""
import io
import os

import numpy as np
import pytest

import mxc as mx
from mxc import gluon
from mxc.gluon.contrib.estimator import (CheckpointHandler, EarlyStoppingHandler, EpochEnd,
                                         Estimator, ProgressBarHandler)

from .common import classification_data, classifier


def _estimator(seed=3, momentum=0.9):
    net = classifier(seed=seed)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.2, "momentum": momentum})
    return Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(),
                     trainer=trainer)


def _params(est):
    return [p.data().asnumpy() for p in est.net.collect_params().values()]


def _files(path):
    return sorted(os.listdir(path))


def test_checkpoints_every_epoch_keep_the_newest(tmp_path):
    loader, _, _ = classification_data(n=16, batch_size=4)
    est = _estimator()
    est.net.hybridize()
    handler = CheckpointHandler(str(tmp_path), model_prefix="m", max_checkpoints=2)
    est.fit(loader, epochs=3, event_handlers=[handler])
    assert _files(tmp_path) == ["m-epoch1batch8.params", "m-epoch1batch8.states",
                                "m-epoch2batch12.params", "m-epoch2batch12.states",
                                "m-symbol.json"]
    # the last checkpoint holds the trained parameters
    net = classifier(seed=99)
    net.load_parameters(str(tmp_path / "m-epoch2batch12.params"))
    for mine, saved in zip(_params(est), [p.data().asnumpy()
                                          for p in net.collect_params().values()]):
        np.testing.assert_array_equal(mine, saved)
    # the symbol file is the hybridized graph
    sym = mx.sym.load(str(tmp_path / "m-symbol.json"))
    assert sym.list_arguments()[0] == "data" and len(sym.list_arguments()) == 5


def test_checkpoints_every_few_batches(tmp_path):
    loader, _, _ = classification_data(n=16, batch_size=4)
    est = _estimator()
    handler = CheckpointHandler(str(tmp_path), model_prefix="b", epoch_period=None,
                                batch_period=3, max_checkpoints=10)
    est.fit(loader, batches=10, event_handlers=[handler])
    # batch numbers are the 0-based index of the batch just trained
    assert [f for f in _files(tmp_path) if f.endswith(".params")] == [
        "b-epoch0batch2.params", "b-epoch1batch5.params", "b-epoch2batch8.params"]
    # the stop inside the third epoch still ends that epoch
    assert (handler.current_batch, handler.current_epoch) == (10, 3)


def test_resume_continues_the_interrupted_run(tmp_path):
    loader, _, _ = classification_data(n=16, batch_size=4)
    straight = _estimator()
    straight.fit(loader, epochs=4)

    first = _estimator()
    first.fit(loader, epochs=2,
              event_handlers=[CheckpointHandler(str(tmp_path), model_prefix="r")])
    second = _estimator(seed=42)  # different start: everything comes from the checkpoint
    handler = CheckpointHandler(str(tmp_path), model_prefix="r", resume_from_checkpoint=True,
                                max_checkpoints=3)
    second.fit(loader, epochs=4, event_handlers=[handler])
    assert second.max_epoch == 2
    # parameters and the momentum states both came back: the result is the straight run's
    for a, b in zip(_params(straight), _params(second)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # numbering goes on from the checkpoint; older checkpoints count towards max_checkpoints
    assert [f for f in _files(tmp_path) if f.endswith(".params")] == [
        "r-epoch1batch8.params", "r-epoch2batch12.params", "r-epoch3batch16.params"]
    with pytest.raises(ValueError, match="maximum number of epoch 4 reached"):
        _estimator().fit(loader, epochs=4, event_handlers=[
            CheckpointHandler(str(tmp_path), model_prefix="r", resume_from_checkpoint=True)])
    with pytest.raises(AssertionError, match="same type of period"):
        _estimator().fit(loader, batches=4, event_handlers=[
            CheckpointHandler(str(tmp_path), model_prefix="r", resume_from_checkpoint=True)])


class _Record(EpochEnd):
    def __init__(self, metric):
        self.metric, self.values = metric, []

    def epoch_end(self, estimator, *args, **kwargs):
        self.values.append(self.metric.get()[1])


def test_save_best_keeps_the_best_epoch(tmp_path):
    loader, _, _ = classification_data(n=16, batch_size=4)
    est = _estimator(momentum=0.0)
    acc = est.train_metrics[0]
    record = _Record(acc)
    handler = CheckpointHandler(str(tmp_path), model_prefix="s", monitor=acc, save_best=True,
                                mode="max", max_checkpoints=1)
    est.fit(loader, epochs=4, event_handlers=[handler, record])
    assert handler.best == max(record.values)
    assert os.path.exists(tmp_path / "s-best.params")
    assert os.path.exists(tmp_path / "s-best.states")
    with pytest.raises(ValueError, match="provide one of the metric objects"):
        CheckpointHandler(str(tmp_path), save_best=True)


class _Scripted(mx.metric.EvalMetric):
    """A metric whose value at the n-th epoch end is values[n]."""

    def __init__(self, name, values):
        super().__init__(name)
        self.script, self.calls = list(values), 0

    def update(self, labels, preds):
        pass

    def reset(self):
        pass

    def get(self):
        return self.name, self.script[min(self.calls, len(self.script) - 1)]


class _Advance(EpochEnd):
    """Moves the scripted metric on after the early-stopping handler has read it."""
    priority = 10

    def __init__(self, scripted):
        self.scripted = scripted  # not named *metric*: the estimator does not know this one

    def epoch_end(self, estimator, *args, **kwargs):
        self.scripted.calls += 1


@pytest.mark.parametrize("mode, values, patience, min_delta, stopped, epochs", [
    ("max", [0.5, 0.6, 0.6, 0.55, 0.7], 2, 0, 3, 4),
    ("max", [0.5, 0.6, 0.65, 0.66, 0.9], 1, 0.02, 3, 4),
    ("min", [3.0, 2.0, 1.0, 0.5, 0.4, 0.3], 1, 0, 0, 6),   # improves each epoch: no stop
    ("auto", [3.0, 2.5, 2.6, 2.7], 2, 0, 3, 4),            # a loss: lower is better
])
def test_early_stopping(mode, values, patience, min_delta, stopped, epochs):
    loader, _, _ = classification_data(n=8, batch_size=4)
    est = _estimator()
    metric = _Scripted("training loss" if mode == "auto" else "score", values)
    with pytest.warns(UserWarning) if mode == "auto" else _nothing():
        early = EarlyStoppingHandler(metric, patience=patience, min_delta=min_delta, mode=mode)
    est.fit(loader, epochs=6, event_handlers=[early, _Advance(metric)])
    assert (early.stopped_epoch, early.current_epoch) == (stopped, epochs)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_early_stopping_baseline_and_errors():
    loader, _, _ = classification_data(n=8, batch_size=4)
    est = _estimator()
    metric = _Scripted("score", [0.5, 0.6, 0.7])
    early = EarlyStoppingHandler(metric, patience=1, mode="max", baseline=0.8)
    est.fit(loader, epochs=3, event_handlers=[early, _Advance(metric)])
    assert (early.stopped_epoch, early.current_epoch) == (0, 1)
    with pytest.raises(ValueError, match="provide one of the metric objects"):
        EarlyStoppingHandler("accuracy")
    with pytest.raises(ValueError, match="CompositeEvalMetric is not supported"):
        EarlyStoppingHandler(mx.metric.CompositeEvalMetric([mx.metric.Accuracy()]))


def test_progress_bar_on_a_long_epoch():
    loader, _, _ = classification_data(n=16, batch_size=4)
    est = _estimator()
    out = io.StringIO()
    bar = ProgressBarHandler(metrics=est.train_metrics, delay=0, file=out, mininterval=0,
                             leave=True)
    est.fit(loader, epochs=2, event_handlers=[bar])
    text = out.getvalue()
    assert "[Epoch 0]: 100%" in text and "[Epoch 1]: 100%" in text and "4/4" in text
    acc = est.train_metrics[0].get()[1]
    assert f"training accuracy: {acc:.4f}" in text
    # a bar that waits longer than the epoch lasts prints nothing
    quiet = io.StringIO()
    est.fit(loader, epochs=1, event_handlers=[ProgressBarHandler(delay=60, file=quiet)])
    assert quiet.getvalue() == ""
