"""mx.contrib.tensorboard: the event files LogMetricsCallback and TensorBoardHandler write, read
back record by record (TFRecord framing with masked CRC-32C, checked here) and decoded with the
Event protobuf. Skipped without tensorboardX, except the error that names it."""
import glob
import os
import struct
import sys

import numpy as np
import pytest

import mxc as mx
from mxc import gluon


def _crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _masked(data):
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_scalars(logdir):
    """{tag: [(step, value), ...]} of every scalar in the event files under `logdir`."""
    from tensorboardX.proto import event_pb2
    files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    assert files, f"no event file in {logdir}"
    scalars = {}
    for path in files:
        with open(path, "rb") as f:
            blob = f.read()
        pos = 0
        while pos < len(blob):
            head = blob[pos:pos + 8]
            (length,) = struct.unpack("<Q", head)
            (head_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
            assert head_crc == _masked(head)
            body = blob[pos + 12:pos + 12 + length]
            (body_crc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
            assert body_crc == _masked(body)
            pos += 16 + length
            event = event_pb2.Event.FromString(body)
            for value in event.summary.value:
                scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    return scalars


def test_writer_error_names_the_package(monkeypatch, tmp_path):
    from mxc.contrib import tensorboard
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match="pip install tensorboardX"):
        tensorboard.LogMetricsCallback(str(tmp_path))


def test_log_metrics_callback_with_module_fit(tmp_path):
    pytest.importorskip("tensorboardX")
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (32, 4)).astype(np.float32)
    y = (x.sum(1) > 0).astype(np.float32)
    train = mx.io.NDArrayIter(x, y, batch_size=8, label_name="softmax_label")
    val = mx.io.NDArrayIter(x, y, batch_size=8, label_name="softmax_label")
    data = mx.sym.Variable("data")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2), name="softmax")
    mod = mx.mod.Module(out, context=mx.cpu())
    cb = mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path), prefix="eval")
    mod.fit(train, eval_data=val, num_epoch=3, eval_metric="acc", eval_end_callback=cb,
            optimizer_params={"learning_rate": 0.5}, initializer=mx.init.Xavier())
    cb.summary_writer.close()  # tensorboardX's flush leaves its queue
    scalars = read_scalars(str(tmp_path))
    assert list(scalars) == ["eval-accuracy"]
    steps = [s for s, _ in scalars["eval-accuracy"]]
    assert steps == [0, 1, 2]
    final = dict(mod.score(val, "acc"))["accuracy"]
    assert scalars["eval-accuracy"][-1][1] == pytest.approx(final)


def test_callback_skips_a_param_without_metric(tmp_path):
    pytest.importorskip("tensorboardX")
    cb = mx.contrib.tensorboard.LogMetricsCallback(str(tmp_path))
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array([0, 1, 1, 1])], [mx.nd.array([[1, 0], [0, 1], [1, 0], [0, 1]])])
    cb(mx.model.BatchEndParam(epoch=7, nbatch=0, eval_metric=None, locals=None))
    cb(mx.model.BatchEndParam(epoch=7, nbatch=0, eval_metric=metric, locals=None))
    cb.summary_writer.close()  # tensorboardX's flush leaves its queue
    assert read_scalars(str(tmp_path)) == {"accuracy": [(7, 0.75)]}


def test_estimator_handler(tmp_path):
    pytest.importorskip("tensorboardX")
    from mxc.contrib.tensorboard import TensorBoardHandler
    from mxc.gluon.contrib.estimator import Estimator
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (16, 5)).astype(np.float32)
    y = rng.randint(0, 3, 16).astype(np.float32)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)),
                                   batch_size=4)
    net = gluon.nn.Dense(3)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.3})
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=mx.cpu(), trainer=trainer)
    handler = TensorBoardHandler(str(tmp_path), log_interval=3)
    est.fit(loader, val_data=loader, epochs=2, event_handlers=[handler])
    assert handler.summary_writer is None  # closed at train end
    scalars = read_scalars(str(tmp_path))
    assert sorted(scalars) == sorted([
        "training/accuracy", "training/softmaxcrossentropyloss", "validation/accuracy",
        "validation/softmaxcrossentropyloss", "learning_rate", "batch/training/accuracy",
        "batch/training/softmaxcrossentropyloss"])
    for metric in est.train_metrics + est.val_metrics:
        name, value = metric.get()
        tag = name.replace(" ", "/", 1)
        assert [s for s, _ in scalars[tag]] == [0, 1]
        assert scalars[tag][-1][1] == pytest.approx(value)
    assert scalars["learning_rate"] == [(0, pytest.approx(0.3)), (1, pytest.approx(0.3))]
    assert [s for s, _ in scalars["batch/training/accuracy"]] == [3, 6]
    with pytest.raises(ValueError, match="log_interval must be an integer or 'epoch'"):
        TensorBoardHandler(str(tmp_path), log_interval="batch")
