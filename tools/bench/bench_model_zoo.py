"""Model-zoo speed: images/s of ImageNet networks (batch 8, 3x224x224) for inference and training,
side by side in one run, and per-layer convolution speed as a fraction of the GEMM peak.

Networks: resnet18_v1, resnet50_v1, mobilenetv2_1.0, densenet121, vgg11 (Gluon's model zoo).
Implementations, each (network, mode, implementation) in a fresh process (a library that ran
first leaves thread pools behind), the order reversed on every --repeat:
  mxc    Gluon, hybridize(static_alloc, static_shape)
  mxnet  MXNet 1.9.1's Gluon, hybridized, under --peer-python (its wheel uses oneDNN); the Gluon
         code below is written once against the MXNet API and runs on both
  torch  PyTorch eager, the same architectures written below (torchvision is not installed)
Inference runs with autograd off (torch: inference_mode; BatchNorm in inference mode);
training is a full SGD-momentum step (forward, backward, update) on random labels. Each figure
is the best of --rounds timings of --steps steps. Then per network and mode the ratios
mxc / mxnet and mxc / torch of each repeat (runs next to each other) and their median.

--layers: every distinct convolution of ResNet-50 and MobileNetV2 (shapes read from the
hybridized graph), timed alone in mxc at batch 8, forward and backward (data + weight
gradients), as GFLOP/s and as a fraction of the float32 GEMM peak (a 1024^3 sgemm through the
convolutions' own BLAS call) measured in the same process; then all of a network's
convolutions together (each distinct one times its count).

One JSON line per figure. The machine may be shared: quote the same-run ratios, not the rates.
With --threads N every implementation runs N threads (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
MKL_NUM_THREADS and MXNet's worker threads set in the children, torch.set_num_threads): on a
machine loaded by others, one thread each compares the kernels rather than how each library
copes with oversubscription (issue 28's item 4, measured apart).

    python tools/bench/bench_model_zoo.py [--models ...] [--modes infer,train] [--repeat N]
        [--peer-python /path/to/mxnet/bin/python] [--layers]
"""
import argparse
import json
import os
import sys
import time

import _runs      # tools/bench/_runs.py: this script's directory is on sys.path

MODELS = ("resnet18_v1", "resnet50_v1", "mobilenetv2_1.0", "densenet121", "vgg11")
BATCH = 8
SHAPE = (3, 224, 224)


# ---- Gluon (mxc and MXNet) ---------------------------------------------------------------------
def gluon_step_fn(mx, model, mode):
    import numpy as np
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.rand(BATCH, *SHAPE).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 1000, BATCH).astype(np.float32))
    net = mx.gluon.model_zoo.vision.get_model(model)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    if mode == "infer":
        def step():
            net(x).wait_to_read()
        return step
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(BATCH)
        mx.nd.waitall()
    return step


# ---- PyTorch equivalents -----------------------------------------------------------------------
def torch_net(model):
    from torch import nn

    def cbr(cin, cout, k, s=1, p=0, groups=1, act=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, k, s, p, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        return layers + ([act()] if act else [])

    class Residual(nn.Module):
        def __init__(self, body, down, relu=True):
            super().__init__()
            self.body, self.down = nn.Sequential(*body), down
            self.relu = nn.ReLU() if relu else None

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            out = self.body(x) + r
            return self.relu(out) if self.relu else out

    def down(cin, cout, s):
        if s == 1 and cin == cout:
            return None
        return nn.Sequential(*cbr(cin, cout, 1, s, act=None))

    if model.startswith("resnet"):
        bottleneck = model == "resnet50_v1"
        layers, chans = (([3, 4, 6, 3], [256, 512, 1024, 2048]) if bottleneck else
                         ([2, 2, 2, 2], [64, 128, 256, 512]))
        feats = cbr(3, 64, 7, 2, 3) + [nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for i, (n, c) in enumerate(zip(layers, chans)):
            for j in range(n):
                s = 2 if i > 0 and j == 0 else 1
                if bottleneck:      # MXNet's BottleneckV1: the stride on the first 1x1
                    body = (cbr(cin, c // 4, 1, s) + cbr(c // 4, c // 4, 3, 1, 1) +
                            cbr(c // 4, c, 1, act=None))
                else:
                    body = cbr(cin, c, 3, s, 1) + cbr(c, c, 3, 1, 1, act=None)
                feats.append(Residual(body, down(cin, c, s)))
                cin = c
        return nn.Sequential(*feats, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000))
    if model == "vgg11":
        feats, cin = [], 3
        for n, c in zip([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]):
            for _ in range(n):
                feats += [nn.Conv2d(cin, c, 3, 1, 1), nn.ReLU()]
                cin = c
            feats.append(nn.MaxPool2d(2, 2))
        return nn.Sequential(*feats, nn.Flatten(), nn.Linear(512 * 49, 4096), nn.ReLU(),
                             nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(0.5),
                             nn.Linear(4096, 1000))
    if model == "mobilenetv2_1.0":
        feats = cbr(3, 32, 3, 2, 1, act=nn.ReLU6)
        ins = [32, 16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160]
        outs = ins[1:] + [320]
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        for k, (cin, c, s) in enumerate(zip(ins, outs, strides)):
            h = cin * (1 if k == 0 else 6)
            body = (cbr(cin, h, 1, act=nn.ReLU6) + cbr(h, h, 3, s, 1, groups=h, act=nn.ReLU6) +
                    cbr(h, c, 1, act=None))
            if s == 1 and cin == c:
                feats.append(Residual(body, None, relu=False))
            else:
                feats += body
        feats += cbr(320, 1280, 1, act=nn.ReLU6)
        return nn.Sequential(*feats, nn.AdaptiveAvgPool2d(1), nn.Conv2d(1280, 1000, 1, bias=False),
                             nn.Flatten())
    if model == "densenet121":
        import torch

        def brc(cin, cout, k, p=0):
            return [nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, cout, k, 1, p, bias=False)]

        class Dense(nn.Module):
            def __init__(self, cin):
                super().__init__()
                self.f = nn.Sequential(*(brc(cin, 128, 1) + brc(128, 32, 3, 1)))

            def forward(self, x):
                return torch.cat([x, self.f(x)], 1)

        feats, c = cbr(3, 64, 7, 2, 3) + [nn.MaxPool2d(3, 2, 1)], 64
        for i, n in enumerate([6, 12, 24, 16]):
            for _ in range(n):
                feats.append(Dense(c))
                c += 32
            if i != 3:
                feats += brc(c, c // 2, 1) + [nn.AvgPool2d(2, 2)]
                c //= 2
        feats += [nn.BatchNorm2d(c), nn.ReLU(), nn.AvgPool2d(7), nn.Flatten(),
                  nn.Linear(c, 1000)]
        return nn.Sequential(*feats)
    raise ValueError(model)


def torch_step_fn(model, mode):
    import numpy as np
    import torch
    from torch import nn
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.rand(BATCH, *SHAPE).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 1000, BATCH).astype(np.int64))
    net = torch_net(model)
    if mode == "infer":
        net.eval()

        def step():
            with torch.inference_mode():
                net(x)
        return step
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    return step


# ---- timing and orchestration ------------------------------------------------------------------
def time_steps(step, steps, rounds, warmup=2):
    for _ in range(warmup):
        step()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, time.perf_counter() - t0)
    return best / steps


def emit(model, mode, impl, ips):
    print(json.dumps({"figure": f"{mode} {model} b{BATCH}", "impl": impl,
                      "value": round(ips, 2), "unit": "images/s"}), flush=True)


def run_one(model, mode, impl, steps, rounds):
    if impl == "torch":
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", 0)) or os.cpu_count() or 1)
        step = torch_step_fn(model, mode)
    else:
        if impl == "mxnet":
            import mxnet as mx
        else:
            import mxc as mx
        step = gluon_step_fn(mx, model, mode)
    emit(model, mode, impl, BATCH / time_steps(step, steps, rounds))


def run_child(argv, python, results, threads=0):
    env = dict(os.environ)
    if threads:
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                  "MXNET_CPU_WORKER_NTHREADS"):
            env[k] = str(threads)
    _runs.run_child(os.path.abspath(__file__), argv, python, results, " ".join(argv), env)


def emit_ratios(results):
    """mxc / each peer per figure: the ratio of each repeat (runs next to each other) and the
    median, the figure to quote on a shared machine."""
    for figure in sorted({f for f, _ in results}):
        a = results.get((figure, "mxc"))
        for peer in ("mxnet", "torch"):
            b = results.get((figure, peer))
            if a and b:
                _runs.print_ratio(f"{figure} mxc / {peer}", a, b)


# ---- per-layer convolutions against the GEMM peak ----------------------------------------------
def conv_layers(mx, model):
    """[(data shape, Convolution attrs)] of every distinct convolution in the network."""
    net = mx.gluon.model_zoo.vision.get_model(model)
    net.initialize()
    sym = net(mx.sym.var("data"))
    internals = sym.get_internals()
    _, out_shapes, _ = internals.infer_shape(data=(BATCH,) + SHAPE)
    shape_of = dict(zip(internals.list_outputs(), out_shapes))
    graph = json.loads(sym.tojson())
    nodes = graph["nodes"]
    counts, layers = {}, []
    for nd in nodes:
        if nd["op"] != "Convolution":
            continue
        src = nodes[nd["inputs"][0][0]]
        name = src["name"] if src["op"] == "null" else f"{src['name']}_output"
        dshape = tuple(shape_of.get(name, (BATCH,) + SHAPE))
        attrs = nd.get("attrs", nd.get("param", {}))
        key = (dshape, tuple(sorted(attrs.items())))
        if key not in counts:
            layers.append((key, dshape, attrs))
        counts[key] = counts.get(key, 0) + 1
    return [(dshape, attrs, counts[key]) for key, dshape, attrs in layers]


def _tuple(s):
    return tuple(int(v) for v in s.strip("()").split(",") if v.strip())


def run_layers(rounds):
    import numpy as np
    import mxc as mx
    # The GEMM peak: a 1x1 convolution of one 1024-channel 32x32 sample into 1024 channels is
    # one 1024^3 sgemm through the same BLAS call as every convolution, with no copies (one
    # GEMM per sample straight between X and Y). mx.nd.dot of two 1024^2 matrices is printed
    # beside it (it measured 20 GFLOP/s where the convolutions' GEMMs reached 90).
    px = mx.nd.array(np.random.rand(1, 1024, 32, 32).astype(np.float32))
    pw = mx.nd.array(np.random.rand(1024, 1024, 1, 1).astype(np.float32))
    a = mx.nd.array(np.random.rand(1024, 1024).astype(np.float32))
    peak = 0.0
    for model in ("resnet50_v1", "mobilenetv2_1.0"):
        # the best rate seen so far in this process (measured again before each network, so
        # that a burst of load during one measurement does not set it)
        peak_s = time_best(lambda: mx.nd.Convolution(px, pw, kernel=(1, 1), num_filter=1024,
                                                     no_bias=True).wait_to_read(), rounds + 5)
        peak = max(peak, 2 * 1024 ** 3 / peak_s / 1e9)
        dot_s = time_best(lambda: mx.nd.dot(a, a).wait_to_read(), rounds)
        print(json.dumps({"figure": "sgemm 1024^3 peak so far (1x1 convolution)", "impl": "mxc",
                          "value": round(peak, 2), "unit": "GFLOP/s",
                          "nd.dot": round(2 * 1024 ** 3 / dot_s / 1e9, 2)}), flush=True)
        total = {"fwd": [0.0, 0.0], "bwd": [0.0, 0.0]}     # flops, seconds over the network
        for dshape, attrs, count in conv_layers(mx, model):
            k, st = _tuple(attrs["kernel"]), _tuple(attrs.get("stride", "(1, 1)")) or (1, 1)
            pd = _tuple(attrs.get("pad", "(0, 0)")) or (0, 0)
            nf, ng = int(attrs["num_filter"]), int(attrs.get("num_group", "1"))
            nb = attrs.get("no_bias", "False") == "True"
            x = mx.nd.array(np.random.rand(*dshape).astype(np.float32))
            w = mx.nd.array(np.random.rand(nf, dshape[1] // ng, *k).astype(np.float32) * 0.1)
            ins = [x, w] if nb else [x, w, mx.nd.zeros((nf,))]
            kw = dict(kernel=k, stride=st, pad=pd, num_filter=nf, num_group=ng, no_bias=nb)
            y = mx.nd.Convolution(*ins, **kw)
            oh, ow = y.shape[2:]
            flops = 2 * BATCH * nf * oh * ow * (dshape[1] // ng) * k[0] * k[1]
            tf = time_best(lambda: mx.nd.Convolution(*ins, **kw).wait_to_read(), rounds)
            dy = mx.nd.ones(y.shape)

            def bwd():
                for g in mx.nd._backward_Convolution(dy, *ins, **kw):
                    g.wait_to_read()
            tb = time_best(bwd, rounds)
            desc = (f"{model} {dshape[1]}->{nf} {dshape[2]}x{dshape[3]} k{k[0]}x{k[1]} "
                    f"s{st[0]} g{ng} x{count}")
            for what, t, fl in (("fwd", tf, flops), ("bwd", tb, 2 * flops)):
                total[what][0] += count * fl
                total[what][1] += count * t
                print(json.dumps({"figure": f"layer {desc} {what}", "impl": "mxc",
                                  "value": round(fl / t / 1e9, 2), "unit": "GFLOP/s",
                                  "ms": round(t * 1e3, 3),
                                  "of_peak": round(fl / t / 1e9 / peak, 3)}), flush=True)
        for what, (fl, t) in total.items():
            print(json.dumps({"figure": f"layers {model} all convolutions {what}", "impl": "mxc",
                              "value": round(fl / t / 1e9, 2), "unit": "GFLOP/s",
                              "ms": round(t * 1e3, 2), "of_peak": round(fl / t / 1e9 / peak, 3)}),
                  flush=True)


def time_best(f, rounds):
    f()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--modes", default="infer,train")
    ap.add_argument("--impls", default="mxc,mxnet,torch")
    ap.add_argument("--peer-python", default="/work/mxnet-oracle/bin/python",
                    help="an interpreter with mxnet 1.9.1 (the mxnet implementation)")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--layers", action="store_true", help="per-layer figures instead")
    ap.add_argument("--threads", type=int, default=0, help="threads of every implementation")
    ap.add_argument("--only", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.only:
        model, mode, impl = args.only.split(":")
        run_one(model, mode, impl, args.steps, args.rounds)
        return
    if args.layers:
        run_layers(args.rounds)
        return
    impls = args.impls.split(",")
    if "mxnet" in impls and not os.path.exists(args.peer_python):
        impls.remove("mxnet")
    if "torch" in impls:
        try:
            import torch  # noqa: F401
        except ImportError:
            impls.remove("torch")
    python = {i: sys.executable for i in impls}
    python["mxnet"] = args.peer_python
    results = {}
    for model in args.models.split(","):
        for mode in args.modes.split(","):
            for r in range(args.repeat):
                for impl in (impls if r % 2 == 0 else impls[::-1]):
                    run_child(["--only", f"{model}:{mode}:{impl}", "--steps", str(args.steps),
                               "--rounds", str(args.rounds)], python[impl], results,
                              args.threads)
    emit_ratios(results)


if __name__ == "__main__":
    main()
