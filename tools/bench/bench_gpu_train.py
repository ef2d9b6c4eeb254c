"""GPU training benchmarks (issue 24 section 3): ResNet training throughput, mxc beside PyTorch
eager in ONE process, one JSON line per figure in bench_gpu.py's format, and how much this
process compiled (the "no compile on the hot path" figure). Skips cleanly without a GPU.

    python tools/bench/bench_gpu_train.py [--precision fp32|amp_fp16|amp_bf16] [--quick] [--smoke]

Figures (samples/s of whole SGD-momentum training steps: forward, softmax cross-entropy,
backward, update; 2 warm-up steps, then N steps timed together):
- fp32 (TF32 off on both sides): resnet18_cifar_b128_train (Gluon model zoo resnet18_v1, 10
  classes, (128, 3, 32, 32)) and resnet50_224_b64_train (resnet50_v1, 1000 classes, (64, 3,
  224, 224)); mxc hybridized with static_alloc/static_shape, PyTorch eager with
  cudnn.benchmark (torchvision's resnet18/50 where installed, else the same architecture
  written out below: the GPU machines have no package registry).
- amp_fp16 / amp_bf16: the same two with the suffix _amp_fp16 / _amp_bf16 (mxc:
  mx.contrib.amp.init(dtype) before the nets are built, amp.init_trainer and scale_loss, dynamic
  loss scaling; PyTorch: autocast with a GradScaler for float16). AMP is initialised once per
  process, so each precision is a process of its own.
- process_compiles: NVRTC compiles this process made (CuPy's on-disk cache misses), kernels
  loaded, and cuDNN plans built vs loaded from disk. tools/gpu_check.sh runs the fp32 figures
  twice on one kernel cache and plan directory: in the second process the value must be 0.

--smoke shrinks the inputs (batch 2, 32 px): for a dry run on the fake driver
(tools/bench/_fake_gpu.py), where only the code paths are checked.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if ROOT not in sys.path:
    sys.path.append(ROOT)       # last: an installed mxc (tools/gpu_check.sh) wins
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_gpu import attempt, emit  # noqa: E402
from bench_training import one_round  # noqa: E402

# figure stem -> (mxc model zoo name, classes, batch, image size)
NETS = {"resnet18_cifar_b128": ("resnet18_v1", 10, 128, 32),
        "resnet50_224_b64": ("resnet50_v1", 1000, 64, 224)}


class CompileCounter:
    """NVRTC compiles (CuPy's cache misses: cupy.cuda.compiler's compile call) made by this
    process from now on."""

    def __init__(self):
        self.n = 0
        try:
            from cupy.cuda import compiler
        except ImportError:
            return
        inner = getattr(compiler, "_compile_using_nvrtc_no_warning", None)
        if inner is None:               # another CuPy: say so rather than report 0
            self.n = None
            return

        def counted(*a, **k):
            self.n += 1
            return inner(*a, **k)
        compiler._compile_using_nvrtc_no_warning = counted


def throughput(step, sync, batch, steps):
    """samples/s of `steps` calls of step() after two warm-up calls"""
    step()
    step()
    sync()
    return batch / one_round(step, sync, steps)


def mx_train(mx, stem, amp, steps, smoke):
    """samples/s of mxc training net `stem` (amp: the mx.contrib.amp module, initialised)"""
    from mxc import autograd, gluon
    name, classes, batch, size = NETS[stem]
    if smoke:
        batch, size = 2, 32
    g = mx.gpu(0)
    rng = np.random.default_rng(0)
    net = gluon.model_zoo.vision.get_model(name, classes=classes)
    net.initialize(mx.init.Xavier(), ctx=g)
    net.hybridize(static_alloc=True, static_shape=True)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
    if amp is not None:
        amp.init_trainer(tr)
    d = mx.nd.array(rng.standard_normal((batch, 3, size, size)).astype(np.float32), ctx=g)
    lab = mx.nd.array(rng.integers(0, classes, batch).astype(np.float32), ctx=g)

    def step():
        with autograd.record():
            L = loss(net(d), lab)
            if amp is not None:
                with amp.scale_loss(L, tr) as scaled:
                    autograd.backward(scaled)
        if amp is None:
            L.backward()
        tr.step(batch)
    return throughput(step, mx.nd.waitall, batch, steps)


def torch_resnet(torch, depth, classes):
    """torchvision's resnet18/50 (v1.5: the stride on the 3x3 of a bottleneck), else the same
    architecture written out: the GPU machines may lack torchvision."""
    try:
        import torchvision
        return getattr(torchvision.models, "resnet%d" % depth)(num_classes=classes)
    except ImportError:
        pass
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, width, stride, bottleneck):
            super().__init__()
            cout = width * (4 if bottleneck else 1)
            if bottleneck:
                convs = [nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width),
                         nn.ReLU(inplace=True),
                         nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                         nn.ReLU(inplace=True), nn.Conv2d(width, cout, 1, bias=False),
                         nn.BatchNorm2d(cout)]
            else:
                convs = [nn.Conv2d(cin, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                         nn.ReLU(inplace=True), nn.Conv2d(width, width, 3, 1, 1, bias=False),
                         nn.BatchNorm2d(width)]
            self.body = nn.Sequential(*convs)
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else None)

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            return torch.relu(self.body(x) + r)

    bottleneck = depth >= 50
    layers = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3)}[depth]
    mods = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, n in enumerate(layers):
        width = 64 << i
        for j in range(n):
            mods.append(Block(cin, width, 2 if (j == 0 and i > 0) else 1, bottleneck))
            cin = width * (4 if bottleneck else 1)
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*mods)


def torch_train(torch, stem, amp_dtype, steps, smoke):
    name, classes, batch, size = NETS[stem]
    if smoke:
        batch, size = 2, 32
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    net = torch_resnet(torch, int(name[6:8].rstrip("_")), classes).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(0)
    d = torch.randn((batch, 3, size, size), generator=gen).to(dev)
    lab = torch.randint(0, classes, (batch,), generator=gen).to(dev)
    scaler = None
    if amp_dtype is torch.float16:
        scaler = (torch.amp.GradScaler(dev) if hasattr(torch.amp, "GradScaler")
                  else torch.cuda.amp.GradScaler())

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            L = torch.nn.functional.cross_entropy(net(d), lab)
        if scaler is not None:
            scaler.scale(L).backward()
            scaler.step(opt)
            scaler.update()
        else:
            L.backward()
            opt.step()
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    return throughput(step, sync, batch, steps)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--precision", choices=("fp32", "amp_fp16", "amp_bf16"), default="fp32")
    ap.add_argument("--quick", action="store_true", help="fewer timed steps")
    ap.add_argument("--smoke", action="store_true", help="tiny inputs (dry runs)")
    ap.add_argument("--nets", default=",".join(NETS), help="comma list of " + ", ".join(NETS))
    args = ap.parse_args(argv)
    stems = [s for s in args.nets.split(",") if s]
    bad = [s for s in stems if s not in NETS]
    if bad:
        ap.error("unknown nets %s (known: %s)" % (bad, ", ".join(NETS)))
    steps = 2 if args.smoke else (5 if args.quick else 10)
    os.environ["MXNET_CUDA_ALLOW_TENSOR_CORE"] = "0"     # TF32 off unless a figure says so
    compiles = CompileCounter()
    import mxc as mx
    import _fake_gpu
    _fake_gpu.install_if_asked()       # --dry-run of tools/gpu_check.sh only
    from mxc._core import cuda
    if mx.context.num_gpus() == 0:
        emit("gpu_train", "mxc", unit="", skipped=f"no CUDA device: {cuda.status()}")
        return
    try:
        import torch
        if not torch.cuda.is_available() and not args.smoke:
            torch = None
    except ImportError:
        torch = None
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    dt = {"fp32": None, "amp_fp16": "float16", "amp_bf16": "bfloat16"}[args.precision]
    suffix = "" if dt is None else "_" + args.precision
    amp = None
    if dt is not None:
        from mxc.contrib import amp
        amp.init(dt)
    for stem in stems:
        fig = stem + "_train" + suffix
        attempt(fig, "mxc", "samples/s",
                lambda stem=stem: mx_train(mx, stem, amp, steps, args.smoke))
        if torch is not None:
            tdt = {None: None, "float16": torch.float16, "bfloat16": torch.bfloat16}[dt]
            attempt(fig, "torch", "samples/s",
                    lambda stem=stem, tdt=tdt: torch_train(torch, stem, tdt, steps, args.smoke))
    from mxc.ops.cuda import cudnn_plans, loader
    extra = dict(nvrtc=compiles.n, kernels=len(loader._functions))
    value = compiles.n if compiles.n is not None else float("nan")
    if cudnn_plans.frontend() is not None:
        st = cudnn_plans.plans().stats
        extra.update(plans_built=st["built"], plans_disk=st["disk"])
        value += st["built"]
    emit("process_compiles_" + args.precision, "mxc", value, "compiles + plan builds", **extra)


if __name__ == "__main__":
    main()
