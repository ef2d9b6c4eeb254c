"""Train a hybridized CNN with Gluon on handwritten digits, end to end, on the CPU or a GPU.

The data ship with scikit-learn (no network): 1,797 8x8 images are written as an image folder,
packed into RecordIO with ``mxc-im2rec`` and read back by ``mx.io.ImageRecordIter``. The network
is trained with a ``gluon.Trainer``, exported as ``-symbol.json`` + ``.params`` (the files MXNet
1.9 reads), re-imported with ``SymbolBlock.imports`` and scored again to the same accuracy.

Run: python examples/train_digits_gluon.py [--epochs N] [--workdir DIR] [--gpu]
(--gpu: on gpu(0), the batches copied there; without a GPU it says why and trains on the CPU)
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
from tqdm import tqdm

import mxc as mx
from mxc import autograd, gluon
from mxc.gluon import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_data  # noqa: E402
from device import add_gpu_flag, pick_context  # noqa: E402


def record_iter(path, batch_size, train):
    # held-out data: every epoch the same samples, the last batch padded (round_batch=False)
    # rather than rolled over into the next epoch as training batches are
    return mx.io.ImageRecordIter(path_imgrec=path, data_shape=(1, 8, 8), batch_size=batch_size,
                                 shuffle=train, round_batch=train, scale=1.0 / 255,
                                 preprocess_threads=2, seed=7)


def build_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                nn.Conv2D(64, kernel_size=3, padding=1),
                nn.BatchNorm(),
                nn.Activation("relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Flatten(),
                nn.Dense(128, activation="relu"),
                nn.Dropout(0.25),
                nn.Dense(10))
    return net


def accuracy(net, data_iter, ctx=None):
    """Held-out accuracy on ctx (the CPU by default); the padding ImageRecordIter adds to the
    last batch is not counted."""
    ctx = ctx or mx.cpu()
    metric = mx.metric.Accuracy()
    data_iter.reset()
    for batch in data_iter:
        n = batch.data[0].shape[0] - batch.pad
        out = net(batch.data[0].as_in_context(ctx))
        metric.update([batch.label[0][:n]], [out[:n]])
    return metric.get()[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workdir", default=None, help="where the images, .rec and model go")
    add_gpu_flag(parser)
    args = parser.parse_args(argv)
    ctx = pick_context(args.gpu)
    print(f"training on {ctx}")
    workdir = args.workdir or tempfile.mkdtemp(prefix="mxc-digits-")
    os.makedirs(workdir, exist_ok=True)
    mx.random.seed(42)
    np.random.seed(42)
    t_start = time.perf_counter()

    train_rec, val_rec = digits_data.prepare(workdir)
    train_iter = record_iter(train_rec, args.batch_size, train=True)
    val_iter = record_iter(val_rec, 120, train=False)  # 360 images: 3 full batches

    net = build_net()
    net.initialize(mx.init.Xavier(magnitude=2.24), ctx=ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 2e-3})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    train_metric = mx.metric.Accuracy()

    for epoch in range(args.epochs):
        train_iter.reset()
        train_metric.reset()
        tic = time.perf_counter()
        bar = tqdm(train_iter, desc=f"epoch {epoch + 1}/{args.epochs}", unit="batch",
                   leave=False, file=sys.stderr, mininterval=0.5)
        for batch in bar:
            data, label = batch.data[0].as_in_context(ctx), batch.label[0].as_in_context(ctx)
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0])
            train_metric.update([label], [out])
        val_acc = accuracy(net, val_iter, ctx)
        print(f"epoch {epoch + 1}: train accuracy {train_metric.get()[1]:.4f}, "
              f"held-out accuracy {val_acc:.4f}, {time.perf_counter() - tic:.1f} s")

    prefix = os.path.join(workdir, "digits-cnn")
    net.export(prefix, epoch=args.epochs)
    print(f"exported {prefix}-symbol.json and {prefix}-{args.epochs:04d}.params")

    imported = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                         f"{prefix}-{args.epochs:04d}.params", ctx=ctx)
    re_acc = accuracy(imported, val_iter, ctx)
    total = time.perf_counter() - t_start
    print(f"re-imported model: held-out accuracy {re_acc:.4f} (trained model {val_acc:.4f}); "
          f"total {total:.1f} s")
    assert abs(re_acc - val_acc) < 1e-9, "the exported model does not score like the trained one"
    assert val_acc >= 0.97, f"held-out accuracy {val_acc:.4f} is below 0.97"
    print("train_digits_gluon OK")
    return val_acc


if __name__ == "__main__":
    main()
