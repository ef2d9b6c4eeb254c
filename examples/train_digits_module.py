"""Train the digits with MXNet's Module API: ``fit``, a checkpoint, and resuming from it.

The same data as train_digits_gluon.py (scikit-learn's digits packed with ``mxc-im2rec``). A
symbolic CNN is trained with ``Module.fit`` for a few epochs, saved with its optimizer state
(``prefix-symbol.json``, ``prefix-NNNN.params``, ``prefix-NNNN.states``), loaded back with
``Module.load`` and trained on from where it stopped, then scored.

Run: python examples/train_digits_module.py [--epochs N] [--workdir DIR]
"""
import argparse
import logging
import os
import sys
import tempfile

import numpy as np

import mxc as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_data  # noqa: E402


def record_iter(path, batch_size, train):
    # held-out data: every epoch the same samples, the last batch padded (round_batch=False)
    # rather than rolled over into the next epoch as training batches are
    return mx.io.ImageRecordIter(path_imgrec=path, data_shape=(1, 8, 8), batch_size=batch_size,
                                 shuffle=train, round_batch=train, scale=1.0 / 255,
                                 preprocess_threads=2, seed=7)


def build_symbol():
    data = mx.sym.var("data")
    x = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=32, name="conv1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=64, name="conv2")
    x = mx.sym.BatchNorm(x, name="bn2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool2")
    x = mx.sym.Flatten(x, name="flatten")
    x = mx.sym.FullyConnected(x, num_hidden=128, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu3")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6, help="epochs before the checkpoint")
    parser.add_argument("--more-epochs", type=int, default=4, help="epochs after resuming")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    workdir = args.workdir or tempfile.mkdtemp(prefix="mxc-digits-")
    os.makedirs(workdir, exist_ok=True)
    mx.random.seed(42)
    np.random.seed(42)

    train_rec, val_rec = digits_data.prepare(workdir)
    train_iter = record_iter(train_rec, args.batch_size, train=True)
    val_iter = record_iter(val_rec, 120, train=False)  # 360 images: 3 full batches
    prefix = os.path.join(workdir, "digits-module")
    opt_params = {"learning_rate": 2e-3}

    mod = mx.mod.Module(build_symbol(), data_names=["data"], label_names=["softmax_label"],
                        context=mx.cpu())
    mod.fit(train_iter, eval_data=val_iter, eval_metric="acc", optimizer="adam",
            optimizer_params=opt_params, initializer=mx.init.Xavier(magnitude=2.24),
            num_epoch=args.epochs,
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 20))
    first_acc = mod.score(val_iter, "acc")[0][1]
    mod.save_checkpoint(prefix, args.epochs, save_optimizer_states=True)
    print(f"checkpoint after {args.epochs} epochs: held-out accuracy {first_acc:.4f}")

    resumed = mx.mod.Module.load(prefix, args.epochs, load_optimizer_states=True,
                                 data_names=["data"], label_names=["softmax_label"])
    resumed.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
    same = resumed.score(val_iter, "acc")[0][1]
    assert abs(same - first_acc) < 1e-9, "the loaded checkpoint does not score like the saved one"
    resumed.fit(train_iter, eval_data=val_iter, eval_metric="acc", optimizer="adam",
                optimizer_params=opt_params, begin_epoch=args.epochs,
                num_epoch=args.epochs + args.more_epochs)
    final_acc = resumed.score(val_iter, "acc")[0][1]
    print(f"resumed to epoch {args.epochs + args.more_epochs}: held-out accuracy {final_acc:.4f}")
    assert final_acc >= 0.97, f"held-out accuracy {final_acc:.4f} is below 0.97"
    print("train_digits_module OK")
    return final_acc


if __name__ == "__main__":
    main()
