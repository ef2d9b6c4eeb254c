"""Train the digits CNN of train_digits_gluon.py data-parallel over several processes.

    mxc-launch -n 2 python examples/train_digits_dist.py

Every worker reads its own shard of the training records (``num_parts=kv.num_workers,
part_index=kv.rank``) and takes the same number of steps per epoch; the ``dist_sync``
KVStore sums the gradients of all workers each step and every worker applies the same
update, so all hold identical weights. Rank 0 prepares the dataset (mxc-im2rec) while the
others wait at a barrier. The held-out accuracy is checked to
reach the single-process example's bar (0.97), and the trained weights to be identical on
every worker.

Run: mxc-launch -n N python examples/train_digits_dist.py [--epochs E] [--workdir DIR]
(with one process, ``python examples/train_digits_dist.py`` trains like the 1-process example).
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import mxc as mx
from mxc import autograd, gluon

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_data  # noqa: E402
from train_digits_gluon import accuracy, build_net  # noqa: E402


def shard_iter(path, batch_size, kv):
    """The training records of this worker: shard ``kv.rank`` of ``kv.num_workers``."""
    return mx.io.ImageRecordIter(path_imgrec=path, data_shape=(1, 8, 8), batch_size=batch_size,
                                 shuffle=True, round_batch=True, scale=1.0 / 255,
                                 preprocess_threads=1, seed=7 + kv.rank,
                                 num_parts=kv.num_workers, part_index=kv.rank)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32, help="per worker")
    parser.add_argument("--kvstore", default="dist_sync")
    parser.add_argument("--workdir", default=None,
                        help="where the dataset goes (shared by the workers; default: a folder "
                        "under the temp dir)")
    args = parser.parse_args(argv)

    kv = mx.kv.create(args.kvstore)
    rank, nworkers = kv.rank, kv.num_workers
    workdir = args.workdir or os.path.join(tempfile.gettempdir(), "mxc-digits-dist")
    os.makedirs(workdir, exist_ok=True)
    if rank == 0:
        train_rec, val_rec = digits_data.prepare(workdir)
    kv.barrier()                          # the others wait until rank 0 has written the data
    if rank != 0:
        train_rec, val_rec = digits_data.prepare(workdir)

    mx.random.seed(42 + rank)             # different initial weights: the store's init
    np.random.seed(42 + rank)             # broadcast makes every worker start from rank 0's
    train_iter = shard_iter(train_rec, args.batch_size, kv)
    val_iter = mx.io.ImageRecordIter(path_imgrec=val_rec, data_shape=(1, 8, 8), batch_size=120,
                                     round_batch=False, scale=1.0 / 255, preprocess_threads=1)

    # shards differ by at most one record, and round_batch moves the remainder of one epoch
    # into the next: so each worker runs the number of full batches of the smallest shard,
    # the same on every worker (a worker with fewer steps would leave the others waiting)
    with open(train_rec[:-len(".rec")] + ".lst") as f:
        n_train = sum(1 for line in f if line.strip())
    steps = (n_train // nworkers) // args.batch_size

    net = build_net()
    net.initialize(mx.init.Xavier(magnitude=2.24))
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 2e-3}, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    train_metric = mx.metric.Accuracy()
    t_start = time.perf_counter()
    for epoch in range(args.epochs):
        train_iter.reset()
        train_metric.reset()
        tic = time.perf_counter()
        nbatch = 0
        for batch in train_iter:
            if nbatch == steps:           # every worker takes the same number of steps
                break
            data, label = batch.data[0], batch.label[0]
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0] * nworkers)     # the gradient is summed over workers
            train_metric.update([label], [out])
            nbatch += 1
        val_acc = accuracy(net, val_iter)
        print(f"worker {rank}/{nworkers} epoch {epoch + 1}: {nbatch} batches, train accuracy "
              f"{train_metric.get()[1]:.4f}, held-out accuracy {val_acc:.4f}, "
              f"{time.perf_counter() - tic:.1f} s")

    # every worker holds the same trained weights: compare a checksum over the workers
    # (BatchNorm's running mean/variance are not trained but measured on each worker's own
    # batches, as in MXNet, so they and the held-out accuracy may differ slightly)
    w = sum(float(p.data().asnumpy().astype(np.float64).sum())
            for p in net.collect_params().values() if p.grad_req != "null")
    check = mx.kv.create("dist_sync") if nworkers > 1 else mx.kv.create("local")
    check.init("check", mx.nd.zeros((1, 2), dtype="float64"))     # a store without optimizer:
    check.push("check", mx.nd.array([[w, val_acc]], dtype="float64"))   # pull gives the sum
    total = mx.nd.zeros((1, 2), dtype="float64")
    check.pull("check", out=total)
    mean_w, mean_acc = (total.asnumpy()[0] / nworkers).tolist()
    assert abs(mean_w - w) <= 1e-9 * max(1.0, abs(w)), \
        f"worker {rank}: weights differ between workers ({w} vs mean {mean_w})"
    print(f"worker {rank}: held-out accuracy {val_acc:.4f} (mean over the {nworkers} "
          f"worker(s) {mean_acc:.4f}), {time.perf_counter() - t_start:.1f} s of training")
    assert val_acc >= 0.97, f"held-out accuracy {val_acc:.4f} is below 0.97"
    print("train_digits_dist OK")
    return val_acc


if __name__ == "__main__":
    main()
