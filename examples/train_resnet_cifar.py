"""Train ResNet-18 (the model zoo's, with the 3x3 stem for 32x32 images) on CIFAR-shaped data, on
a GPU when asked for (``--gpu``) and there is one, else on the CPU.

The data are synthetic and CIFAR-shaped (3x32x32, 10 classes): each class is a fixed random
image, each sample that image under noise, so the network has something to learn and no
download is needed. The block is hybridized with static_alloc and static_shape (on a GPU with
MXNET_ENABLE_CUDA_GRAPHS=1 its steps then replay as CUDA graphs). Prints the loss, the accuracy
on the last batches and samples per second.

Run: python examples/train_resnet_cifar.py [--gpu] [--steps N] [--batch-size B] [--model NAME]
"""
import argparse
import os
import sys
import time

import numpy as np

import mxc as mx
from mxc import autograd, gluon
from mxc.gluon.model_zoo import vision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from device import add_gpu_flag, pick_context  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_gpu_flag(p)
    p.add_argument("--steps", type=int, default=100, help="training steps")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--model", default="resnet18_v1", help="a model zoo ResNet (resnet*_v1/v2)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--noise", type=float, default=1.0, help="noise over the class images")
    args = p.parse_args(argv)
    if args.steps < 1 or args.batch_size < 1:
        p.error("--steps and --batch-size must be positive")
    if not args.model.startswith("resnet"):
        p.error(f"--model {args.model}: this example trains the model zoo's ResNets")
    return args


class CifarShaped:
    """Batches of (B, 3, 32, 32) images and labels 0-9: class image + noise."""

    def __init__(self, batch_size, noise, seed=0):
        self.rng = np.random.default_rng(seed)
        self.protos = self.rng.standard_normal((10, 3, 32, 32)).astype(np.float32)
        self.batch_size, self.noise = batch_size, noise

    def batch(self):
        y = self.rng.integers(0, 10, self.batch_size)
        x = self.protos[y] + self.noise * self.rng.standard_normal(
            (self.batch_size, 3, 32, 32)).astype(np.float32)
        return x, y.astype(np.float32)


def main(argv=None):
    args = parse_args(argv)
    ctx = pick_context(args.gpu)
    print(f"training {args.model} on {ctx}, batch {args.batch_size}, {args.steps} steps")
    mx.random.seed(1)
    net = vision.get_model(args.model, classes=10, thumbnail=True)
    net.initialize(mx.init.Xavier(magnitude=2), ctx=ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": args.lr, "momentum": 0.9, "wd": 1e-4})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    data = CifarShaped(args.batch_size, args.noise)
    losses, correct, seen = [], 0, 0
    tic = None
    for step in range(args.steps):
        if step == 1:                      # the first step compiles and plans: not timed
            mx.nd.waitall()
            tic = time.perf_counter()
        xb, yb = data.batch()
        x, y = mx.nd.array(xb, ctx=ctx), mx.nd.array(yb, ctx=ctx)
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
        loss.backward()
        trainer.step(args.batch_size)
        losses.append(float(loss.mean().asscalar()))
        if step >= args.steps - max(1, args.steps // 5):     # accuracy on the last fifth
            correct += int((out.argmax(axis=1) == y).sum().asscalar())
            seen += args.batch_size
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step + 1}: loss {losses[-1]:.4f}")
    mx.nd.waitall()
    if tic is not None:
        rate = (args.steps - 1) * args.batch_size / (time.perf_counter() - tic)
        print(f"{rate:.1f} samples/s on {ctx}")
    first, last = losses[0], float(np.mean(losses[-max(1, len(losses) // 5):]))
    print(f"loss {first:.4f} -> {last:.4f}, accuracy on the last steps {correct / seen:.3f}")
    assert np.isfinite(losses).all(), "the loss is not finite"
    print("train_resnet_cifar OK")
    return first, last, correct / seen


if __name__ == "__main__":
    main()
