"""GPU layer benchmarks (issue 24 section 3): one JSON line per figure, mxc beside PyTorch in ONE
run, in the format of bench_gpu.py (whose emit/timed/attempt it uses); skips cleanly without a
GPU. A figure mxc cannot produce yet (an operator without a GPU kernel) is printed with "error".

    python tools/bench/bench_gpu_layers.py [--quick]

Figures (fp32, TF32 off on both sides):
- conv3x3_64_32x32_b32_fwdbwd: Convolution 3x3 64->64 on (32, 64, 32, 32), pad 1, forward and
  backward (data and weight gradients), ms per step;
- maxpool3x3s2_b32_fwdbwd: max Pooling 3x3 stride 2 pad 1 on (32, 64, 32, 32), ms;
- batchnorm_train_b32_fwdbwd and layernorm_512_fwdbwd: BatchNorm in training on (32, 64, 32, 32),
  LayerNorm over 512 on (4096, 512), ms;
- mlp_784_512_512_10_b128_step: one SGD training step of a 784-512-512-10 MLP, batch 128 (mxc:
  a Gluon block hybridized with static_alloc/static_shape, its steps as CUDA graphs:
  MXNET_ENABLE_CUDA_GRAPHS=1), us.
Whole networks' training (ResNet-18/50, fp32 and AMP) is bench_gpu_train.py's.
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if ROOT not in sys.path:
    sys.path.append(ROOT)       # last: an installed mxc (tools/gpu_check.sh) wins
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_gpu import attempt, emit, timed  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rep = 3 if args.quick else 10
    os.environ["MXNET_CUDA_ALLOW_TENSOR_CORE"] = "0"
    import mxc as mx
    import _fake_gpu
    _fake_gpu.install_if_asked()       # --dry-run of tools/gpu_check.sh only
    from mxc._core import cuda
    if mx.context.num_gpus() == 0:
        emit("gpu_layers", "mxc", unit="", skipped=f"no CUDA device: {cuda.status()}")
        return
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
        else:
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cudnn.benchmark = True
    except ImportError:
        torch = None
    g = mx.gpu(0)
    mxsync = mx.nd.waitall
    tsync = torch.cuda.synchronize if torch else None
    rng = np.random.default_rng(0)

    def mx_step(fn, *arrays):
        """forward+backward of fn on GPU copies of `arrays` (all get gradients), ms"""
        xs = [mx.nd.array(a, ctx=g) for a in arrays]
        for x in xs:
            x.attach_grad()

        def run():
            with mx.autograd.record():
                y = fn(*xs)
            y.backward()
        return timed(run, mxsync, rep) * 1e3

    def t_step(fn, *arrays):
        xs = [torch.from_numpy(a).cuda().requires_grad_() for a in arrays]

        def run():
            y = fn(*xs)
            y.backward(torch.ones_like(y))
        return timed(run, tsync, rep) * 1e3

    x = rng.standard_normal((32, 64, 32, 32)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    cases = [
        ("conv3x3_64_32x32_b32_fwdbwd", (x, w),
         lambda d, k: mx.nd.Convolution(d, k, kernel=(3, 3), pad=(1, 1), num_filter=64,
                                        no_bias=True),
         lambda d, k: torch.nn.functional.conv2d(d, k, padding=1)),
        ("maxpool3x3s2_b32_fwdbwd", (x,),
         lambda d: mx.nd.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
         lambda d: torch.nn.functional.max_pool2d(d, 3, 2, 1)),
        ("batchnorm_train_b32_fwdbwd",
         (x, np.ones(64, np.float32), np.zeros(64, np.float32)),
         lambda d, ga, be: mx.nd.BatchNorm(d, ga, be, mx.nd.zeros(64, ctx=g),
                                           mx.nd.ones(64, ctx=g), fix_gamma=False),
         lambda d, ga, be: torch.nn.functional.batch_norm(
             d, torch.zeros(64, device="cuda"), torch.ones(64, device="cuda"), ga, be,
             training=True)),
        ("layernorm_512_fwdbwd",
         (rng.standard_normal((4096, 512)).astype(np.float32), np.ones(512, np.float32),
          np.zeros(512, np.float32)),
         lambda d, ga, be: mx.nd.LayerNorm(d, ga, be),
         lambda d, ga, be: torch.nn.functional.layer_norm(d, (512,), ga, be)),
    ]
    for name, arrays, mfn, tfn in cases:
        attempt(name, "mxc", "ms", lambda: mx_step(mfn, *arrays))
        if torch:
            attempt(name, "torch", "ms", lambda: t_step(tfn, *arrays))

    # ---- MLP step, hybridized with static alloc/shape (CUDA graphs where mxc has them)
    xb = rng.standard_normal((128, 784)).astype(np.float32)
    yb = rng.integers(0, 10, 128).astype(np.float32)

    def mx_mlp():
        from mxc import gluon
        os.environ["MXNET_ENABLE_CUDA_GRAPHS"] = "1"     # read when the block first runs
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(512, activation="relu"), gluon.nn.Dense(512, activation="relu"),
                gluon.nn.Dense(10))
        net.initialize(ctx=g)
        net.hybridize(static_alloc=True, static_shape=True)
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
        d, lab = mx.nd.array(xb, ctx=g), mx.nd.array(yb, ctx=g)

        def run():
            with mx.autograd.record():
                L = loss(net(d), lab)
            L.backward()
            tr.step(128)
        try:
            return timed(run, mxsync, rep * 5) * 1e6
        finally:
            os.environ.pop("MXNET_ENABLE_CUDA_GRAPHS", None)
    attempt("mlp_784_512_512_10_b128_step", "mxc", "us", mx_mlp)
    if torch:
        def t_mlp():
            net = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                      torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                      torch.nn.Linear(512, 10)).cuda()
            opt = torch.optim.SGD(net.parameters(), lr=0.01)
            d = torch.from_numpy(xb).cuda()
            lab = torch.from_numpy(yb).long().cuda()

            def run():
                opt.zero_grad()
                torch.nn.functional.cross_entropy(net(d), lab).backward()
                opt.step()
            return timed(run, tsync, rep * 5) * 1e6
        attempt("mlp_784_512_512_10_b128_step", "torch", "us", t_mlp)


if __name__ == "__main__":
    main()
