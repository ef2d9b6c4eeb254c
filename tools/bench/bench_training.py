"""Training throughput: samples/s of full SGD-with-momentum steps on synthetic data.

Models: MLP 784-512-512-10 (batch 128), LeNet on 1x28x28 (batch 64), ResNet-18 v1 from the model
zoo on 3x32x32 with 10 classes (batch 32), and on request (--models ...,lstm,transformer) a
2-layer LSTM of 256 units over 35 steps of 200 features (the RNN operator, as a word language
model's body) and 2 post-norm transformer encoder layers (width 256, 4 heads, GELU feed-forward
of 1024; PyTorch's nn.TransformerEncoderLayer) over 128 positions, each then a Dense layer to 10
classes (batch 32 and 16). Implementations, one after another in one run, each
in a process of its own (in one process the library that ran first leaves its thread pools
behind, and they slowed the second by up to 25%), the order reversed on every --repeat:
  mxc-hybrid (Gluon, hybridize(static_alloc, static_shape)), mxc-imperative (Gluon, not
  hybridized), torch-eager (the same architectures written in PyTorch), torch-compile (those
  under torch.compile's inductor; its compile time is a line of its own), and with --peer-python
  MXNet 1.9.1's Gluon hybridized (this same script run under MXNet's interpreter: the Gluon code
  below is written once against the MXNet API and runs on both).
One JSON line per (model, implementation, repeat): best of --rounds timings of --steps steps each;
and, with --sustain S (seconds, default 3; 0 for none), a "sustained" line: the median of the
same rounds run back to back for S seconds after those (an MLP round is ~0.1 s, and windows that
short swing by 30% on a shared 2-core machine, where training runs for minutes). Then per model
and figure the ratios that the targets name (mxc imperative / torch eager, mxc hybrid / torch
compile, mxc hybrid / MXNet hybrid), one per repeat, and their median (the figure to quote on a
noisy machine).
With --interleave S, the implementations' processes (the peer's too) are all set up at once and
take rounds in turn for S seconds per model; the ratios are then of adjacent rounds, each
median with its quartiles: the spells in which a shared machine slows for a second or so fall
on both sides of most of them.

    python tools/bench/bench_training.py [--models mlp,lenet,resnet18] [--repeat N] [--peer-python PY]
    python tools/bench/bench_training.py --interleave 20 [--models ...] [--peer-python PY]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import _runs      # tools/bench/_runs.py: this script's directory is on sys.path

BATCH = {"mlp": 128, "lenet": 64, "resnet18": 32, "lstm": 32, "transformer": 16}
IN_SHAPE = {"mlp": (784,), "lenet": (1, 28, 28), "resnet18": (3, 32, 32), "lstm": (35, 200),
            "transformer": (128, 256)}


def gluon_net(mx, model):
    nn = mx.gluon.nn
    if model == "mlp":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(512, activation="relu"), nn.Dense(512, activation="relu"),
                    nn.Dense(10))
        return net
    if model == "lenet":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(20, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
                    nn.Conv2D(50, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
                    nn.Flatten(), nn.Dense(500, activation="relu"), nn.Dense(10))
        return net
    if model == "lstm":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.rnn.LSTM(256, num_layers=2, layout="NTC", input_size=200),
                    nn.Dense(10))
        return net
    if model == "transformer":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(gluon_encoder_layer(mx), gluon_encoder_layer(mx), nn.Dense(10))
        return net
    return mx.gluon.model_zoo.vision.resnet18_v1(classes=10)


def gluon_encoder_layer(mx, T=128, D=256, NH=4, FF=1024):
    """A post-norm transformer encoder layer on (N, T, D), written against the MXNet 1.x API."""
    nn = mx.gluon.nn

    class Layer(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.qkv = nn.Dense(3 * D, flatten=False, in_units=D)
                self.proj = nn.Dense(D, flatten=False, in_units=D)
                self.ln1, self.ln2 = nn.LayerNorm(in_channels=D), nn.LayerNorm(in_channels=D)
                self.ff1 = nn.Dense(FF, flatten=False, in_units=D)
                self.ff2 = nn.Dense(D, flatten=False, in_units=FF)

        def hybrid_forward(self, F, x):
            # (N, T, 3D) -> (3, N*NH, T, D/NH): queries, keys, values per head
            qkv = F.reshape(self.qkv(x), shape=(0, T, 3, NH, D // NH))
            qkv = F.reshape(F.transpose(qkv, axes=(2, 0, 3, 1, 4)), shape=(3, -1, T, D // NH))
            q, k, v = F.split(qkv, num_outputs=3, axis=0, squeeze_axis=True)
            att = F.softmax(F.batch_dot(q, k, transpose_b=True) / (D // NH) ** 0.5, axis=-1)
            o = F.reshape(F.batch_dot(att, v), shape=(-1, NH, T, D // NH))
            o = F.reshape(F.transpose(o, axes=(0, 2, 1, 3)), shape=(0, T, D))
            x = self.ln1(x + self.proj(o))
            return self.ln2(x + self.ff2(F.LeakyReLU(self.ff1(x), act_type="gelu")))
    return Layer()


def gluon_setup(mx, model, hybrid):
    """(net, trainer, loss_fn, x, y, batch) of one model's step (bench_step_phases.py too)."""
    import numpy as np
    rng = np.random.RandomState(0)
    bs = BATCH[model]
    x = mx.nd.array(rng.rand(bs, *IN_SHAPE[model]).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 10, bs).astype(np.float32))
    net = gluon_net(mx, model)
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9})
    return net, trainer, mx.gluon.loss.SoftmaxCrossEntropyLoss(), x, y, bs


def gluon_step_fn(mx, model, hybrid):
    net, trainer, loss_fn, x, y, bs = gluon_setup(mx, model, hybrid)

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(bs)

    def sync():
        mx.nd.waitall()
    return step, sync


def torch_step_fn(model, compile_=False):
    import numpy as np
    import torch
    from torch import nn
    rng = np.random.RandomState(0)
    bs = BATCH[model]
    x = torch.from_numpy(rng.rand(bs, *IN_SHAPE[model]).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 10, bs).astype(np.int64))
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
    elif model == "lenet":
        net = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                            nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                            nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
    elif model == "lstm":
        net = torch_lstm(nn)
    elif model == "transformer":
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu",
                                           batch_first=True)
        net = nn.Sequential(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                            nn.Flatten(), nn.Linear(128 * 256, 10))
    else:
        net = torch_resnet18(nn)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    # torch.compile (inductor) compiles the forward and, at the first backward, the backward
    fwd = torch.compile(lambda a, b: loss_fn(net(a), b)) if compile_ else (
        lambda a, b: loss_fn(net(a), b))

    def step():
        opt.zero_grad()
        loss = fwd(x, y)
        loss.backward()
        opt.step()
    return step, (lambda: None)


def torch_lstm(nn):
    """The lstm model in PyTorch: nn.LSTM keeps two biases per gate, as MXNet's RNN operator."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(200, 256, num_layers=2, batch_first=True)
            self.out = nn.Linear(35 * 256, 10)

        def forward(self, x):
            return self.out(self.rnn(x)[0].flatten(1))
    return Net()


def torch_resnet18(nn):
    """ResNet-18 v1 as MXNet's model zoo builds it (7x7/2 stem, 3x3/2 max pool, 4 stages)."""
    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))
            self.relu = nn.ReLU()

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            return self.relu(self.body(x) + r)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def one_round(step, sync, steps):
    """Seconds per step of `steps` steps, synced at the end (bench_gpu_train.py's too)."""
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    return (time.perf_counter() - t0) / steps


def time_steps(step, sync, steps, rounds, warmup=3, sustain=0.0):
    """(best, median) seconds per step: best of `rounds` rounds of `steps` steps; median of the
    rounds run after them for `sustain` seconds (None without)."""
    for _ in range(warmup):
        step()
    sync()
    best = min(one_round(step, sync, steps) for _ in range(rounds))
    if sustain <= 0:
        return best, None
    times, end = [], time.perf_counter() + sustain
    while time.perf_counter() < end or len(times) < 3:
        times.append(one_round(step, sync, steps))
    return best, statistics.median(times)


def make_step(model, impl):
    """(step, sync) of one (model, implementation) in this process: torch's thread count set,
    torch.compile's compile run and reported apart, MXNet imported under the peer's interpreter."""
    if impl in ("torch-eager", "torch-compile"):
        import torch
        n = os.environ.get("OMP_NUM_THREADS", "")   # bench_load's "+one" runs
        torch.set_num_threads(int(n) if n.isdigit() else os.cpu_count() or 1)
        step, sync = torch_step_fn(model, compile_=(impl == "torch-compile"))
        if impl == "torch-compile":     # the compile, reported apart from the steps
            t0 = time.perf_counter()
            step()
            print(json.dumps({"figure": f"compile {model}", "impl": impl,
                              "seconds": round(time.perf_counter() - t0, 2)}), flush=True)
        return step, sync
    if impl == "mxnet-hybrid":
        import mxnet as mx
    else:
        import mxc as mx
    return gluon_step_fn(mx, model, hybrid=impl.endswith("-hybrid"))


def run_one(model, impl, steps, rounds, sustain=0.0):
    """One (model, implementation) in this process; prints its JSON lines."""
    step, sync = make_step(model, impl)
    emit_times(model, impl, *time_steps(step, sync, steps[model], rounds, sustain=sustain))


def emit_times(model, impl, best, median):
    """The best round's line first (bench_load.py reads that one), then the sustained one."""
    emit(model, impl, BATCH[model] / best)
    if median is not None:
        emit(model, impl, BATCH[model] / median, " sustained")


def run_local(models, impls, args, results):
    """Each (model, implementation) in a fresh interpreter, so no thread pool carries over;
    the figures go to results[(figure, impl)] in run order."""
    if any(i.startswith("torch-") for i in impls):
        try:
            import torch  # noqa: F401
        except ImportError:
            impls = [i for i in impls if not i.startswith("torch-")]
    for model in models:
        for r in range(args.repeat):
            for impl in (impls if r % 2 == 0 else impls[::-1]):
                run_child(["--only", f"{model}:{impl}"] + _common(args), sys.executable, impl,
                          results)


def _common(args):
    """The timing options every child gets."""
    return ["--rounds", str(args.rounds), "--scale", str(args.scale),
            "--sustain", str(args.sustain)]


def run_child(argv, python, what, results):
    _runs.run_child(os.path.abspath(__file__), argv, python, results, what)


# (numerator, denominator) of the ratio lines: the two targets
RATIOS = (("mxc-imperative", "torch-eager"), ("mxc-hybrid", "torch-compile"),
          ("mxc-hybrid", "mxnet-hybrid"))


def emit_ratios(results):
    """Per figure and pair of implementations: the ratio of each repeat (run r of one against
    run r of the other, which ran next to it; a peer that ran once divides every repeat) and
    their median. On a noisy machine single pairs swing widely; the median is the figure."""
    for figure in sorted({f for f, _ in results}):
        for num, den in RATIOS:
            a, b = results.get((figure, num)), results.get((figure, den))
            if a and b:
                _runs.print_ratio(f"{figure} {num} / {den}", a, b)


def run_as_peer(models, steps, rounds, sustain):
    """Under MXNet's interpreter: MXNet's Gluon, hybridized."""
    for model in models:
        run_one(model, "mxnet-hybrid", steps, rounds, sustain)


def serve(model, impl, steps):
    """--serve: one (model, implementation) set up and warmed, then one round per 'round' line
    on stdin, its seconds per step printed; --interleave drives these. A round starts with one
    untimed step, which refills the caches that the process run before it left cold."""
    step, sync = make_step(model, impl)
    for _ in range(3):
        step()
    sync()
    print(json.dumps({"ready": impl}), flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        step()
        sync()
        print(json.dumps({"seconds": one_round(step, sync, steps)}), flush=True)


# between two rounds of different processes: the spin-waits of the last one's threads end
# (libgomp's default spin is ~1 ms; mxc's and MXNet's threads sleep sooner)
HANDOFF_S = 0.02


def run_interleaved(models, impls, args):
    """Per model, every implementation in a process of its own, all set up at once, then one
    round each in turn (the order reversed every cycle) for --interleave seconds: adjacent rounds
    ran within a fraction of a second of each other, so the spells in which this shared machine
    runs slower for 0.5-1.5 s mostly fall on both sides of a ratio. Prints each implementation's
    median round and, per target pair, the median, p25 and p75 of the per-cycle ratios."""
    here = os.path.abspath(__file__)
    for model in models:
        procs = {}
        for impl in impls:
            python = args.peer_python if impl == "mxnet-hybrid" else sys.executable
            # stderr to a file: a pipe nobody reads fills and stops the child
            p = subprocess.Popen([python, here, "--serve", f"{model}:{impl}"] + _common(args),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=tempfile.TemporaryFile("w+"), text=True)
            if _await_ready(p, impl):
                procs[impl] = p
        times = {impl: [] for impl in procs}
        cycle, end = 0, time.perf_counter() + args.interleave
        try:
            while procs and (time.perf_counter() < end or cycle < 3):
                for impl in (list(procs) if cycle % 2 == 0 else list(procs)[::-1]):
                    time.sleep(HANDOFF_S)
                    p = procs[impl]
                    p.stdin.write("round\n")
                    p.stdin.flush()
                    line = p.stdout.readline()
                    if not line:
                        raise RuntimeError(_died(p, impl))
                    times[impl].append(json.loads(line)["seconds"])
                cycle += 1
        finally:
            for p in procs.values():
                p.stdin.close()
                p.wait()
        rates = {impl: [BATCH[model] / t for t in ts] for impl, ts in times.items()}
        for impl, r in rates.items():
            emit(model, impl, statistics.median(r), " interleaved")
        for num, den in RATIOS:
            if num in rates and den in rates:
                q = statistics.quantiles([a / b for a, b in zip(rates[num], rates[den])], n=4)
                print(json.dumps({"figure": f"train {model} b{BATCH[model]} interleaved "
                                            f"{num} / {den}", "impl": "ratio",
                                  "value": round(q[1], 3), "p25": round(q[0], 3),
                                  "p75": round(q[2], 3), "cycles": cycle,
                                  "unit": "median ratio of adjacent rounds"}), flush=True)


def _await_ready(p, impl):
    """Echo a serving child's lines until it is ready; False (and an error line) if it died."""
    for line in p.stdout:
        if line.startswith('{"ready"'):
            return True
        sys.stdout.write(line)
    print(_died(p, impl), flush=True)
    return False


def _died(p, impl):
    """The error line of a serving child that exited: the end of its stderr."""
    p.wait()
    p.stderr.seek(0)
    return json.dumps({"figure": impl, "error": p.stderr.read()[-800:]})


def emit(model, impl, samples_per_s, what=""):
    print(json.dumps({"figure": f"train {model} b{BATCH[model]}{what}", "impl": impl,
                      "value": round(samples_per_s, 1), "unit": "samples/s"}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mlp,lenet,resnet18")
    ap.add_argument("--impls", default="mxc-hybrid,mxc-imperative,torch-eager,torch-compile")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the steps per round")
    ap.add_argument("--sustain", type=float, default=3.0,
                    help="seconds of rounds whose median is the sustained figure (0: none)")
    ap.add_argument("--peer-python", default=None, help="an interpreter with mxnet 1.9.1")
    ap.add_argument("--as-peer", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of every implementation, in reversed order every other time")
    ap.add_argument("--interleave", type=float, default=0.0,
                    help="seconds per model of rounds taken in turn by processes all alive at "
                         "once (the peer's too), in place of the runs one after another")
    ap.add_argument("--only", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    models = args.models.split(",")
    steps = {m: max(2, int(n * args.scale)) for m, n in
             {"mlp": 40, "lenet": 20, "resnet18": 8, "lstm": 8,
              "transformer": 4}.items()}
    if args.only:
        model, impl = args.only.split(":")
        run_one(model, impl, steps, args.rounds, args.sustain)
        return
    if args.serve:
        model, impl = args.serve.split(":")
        serve(model, impl, steps[model])
        return
    if args.interleave > 0:
        impls = args.impls.split(",") + (["mxnet-hybrid"] if args.peer_python else [])
        run_interleaved(models, impls, args)
        return
    if args.as_peer:
        run_as_peer(models, steps, args.rounds, args.sustain)
        return
    results = {}
    if args.peer_python:
        # the peer runs first and alone, so the two do not share the 2 cores
        run_child(["--as-peer", "--models", args.models] + _common(args), args.peer_python,
                  "peer", results)
    run_local(models, args.impls.split(","), args, results)
    emit_ratios(results)

if __name__ == "__main__":
    main()
