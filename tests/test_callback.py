"""mx.callback: Speedometer, ProgressBar, log_train_metric, checkpoints (MXNet 1.9.1 formats)."""
import logging
import os

import pytest

import mxc as mx
from mxc.model import BatchEndParam


class FakeMetric:
    def __init__(self, pairs):
        self.pairs = pairs
        self.resets = 0

    def get_name_value(self):
        return list(self.pairs)

    def reset_local(self):
        self.resets += 1


@pytest.fixture
def clock(monkeypatch):
    t = [100.0]
    monkeypatch.setattr(mx.callback.time, "time", lambda: t[0])
    return t


def messages(caplog):
    return [r.getMessage() for r in caplog.records]


def test_speedometer_auto_reset(caplog, clock):
    caplog.set_level(logging.INFO)
    metric = FakeMetric([("accuracy", 0.5), ("ce", 1.25)])
    sp = mx.callback.Speedometer(batch_size=32, frequent=2)
    for nbatch in range(5):
        sp(BatchEndParam(epoch=3, nbatch=nbatch, eval_metric=metric, locals=None))
        clock[0] += 0.5
    # first call starts the clock; nbatch 2 and 4 log, each after 2 batches of 0.5 s
    assert messages(caplog) == [
        "Epoch[3] Batch [0-2]\tSpeed: 64.00 samples/sec\taccuracy=0.500000\tce=1.250000",
        "Epoch[3] Batch [2-4]\tSpeed: 64.00 samples/sec\taccuracy=0.500000\tce=1.250000"]
    assert metric.resets == 2


def test_speedometer_no_reset_and_no_metric(caplog, clock):
    caplog.set_level(logging.INFO)
    metric = FakeMetric([("mse", 0.25)])
    sp = mx.callback.Speedometer(batch_size=10, frequent=1, auto_reset=False)
    for nbatch in range(2):
        sp(BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=metric, locals=None))
        clock[0] += 2.0
    sp2 = mx.callback.Speedometer(batch_size=10, frequent=1)
    for nbatch in range(2):
        sp2(BatchEndParam(epoch=1, nbatch=nbatch, eval_metric=None, locals=None))
        clock[0] += 4.0
    assert messages(caplog) == ["Epoch[0] Batch [0-1]\tSpeed: 5.00 samples/sec\tmse=0.250000",
                                "Iter[1] Batch [1]\tSpeed: 2.50 samples/sec"]
    assert metric.resets == 0


def test_speedometer_restarts_each_epoch(caplog, clock):
    caplog.set_level(logging.INFO)
    sp = mx.callback.Speedometer(batch_size=1, frequent=1)
    for epoch in range(2):
        for nbatch in range(2):
            sp(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=None, locals=None))
            clock[0] += 1.0
    # batch 0 of each epoch only restarts the clock
    assert messages(caplog) == ["Iter[0] Batch [1]\tSpeed: 1.00 samples/sec",
                                "Iter[1] Batch [1]\tSpeed: 1.00 samples/sec"]


def test_progress_bar(caplog):
    caplog.set_level(logging.INFO)
    bar = mx.callback.ProgressBar(total=3, length=6)
    bar(BatchEndParam(epoch=0, nbatch=1, eval_metric=None, locals=None))
    bar(BatchEndParam(epoch=0, nbatch=3, eval_metric=None, locals=None))
    assert messages(caplog) == ["[==----] 34%\r", "[======] 100%\r"]


def test_log_train_metric_and_validation(caplog):
    caplog.set_level(logging.INFO)
    metric = FakeMetric([("acc", 0.75)])
    cb = mx.callback.log_train_metric(period=2, auto_reset=True)
    for nbatch in range(3):
        cb(BatchEndParam(epoch=4, nbatch=nbatch, eval_metric=metric, locals=None))
    mx.callback.LogValidationMetricsCallback()(
        BatchEndParam(epoch=4, nbatch=9, eval_metric=metric, locals=None))
    mx.callback.LogValidationMetricsCallback()(
        BatchEndParam(epoch=4, nbatch=9, eval_metric=None, locals=None))
    assert messages(caplog) == ["Iter[4] Batch[0] Train-acc=0.750000",
                                "Iter[4] Batch[2] Train-acc=0.750000",
                                "Epoch[4] Validation-acc=0.750000"]
    assert metric.resets == 2


def test_do_checkpoint_period(tmp_path):
    prefix = str(tmp_path / "ck")
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    cb = mx.callback.do_checkpoint(prefix, period=2)
    for epoch in range(4):
        cb(epoch, sym, {"fc_weight": mx.nd.ones((2, 3)) * epoch}, {})
    names = sorted(os.listdir(tmp_path))
    assert names == ["ck-0002.params", "ck-0004.params", "ck-symbol.json"]
    _, arg, _ = mx.model.load_checkpoint(prefix, 4)
    assert float(arg["fc_weight"].asnumpy()[0, 0]) == 3.0


def test_module_checkpoint_calls_module():
    calls = []

    class M:
        def save_checkpoint(self, prefix, epoch, save_optimizer_states):
            calls.append((prefix, epoch, save_optimizer_states))

    cb = mx.callback.module_checkpoint(M(), "p", period=3, save_optimizer_states=True)
    for epoch in range(6):
        cb(epoch)
    assert calls == [("p", 3, True), ("p", 6, True)]
