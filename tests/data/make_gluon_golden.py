"""Write the Gluon fixtures in tests/data/gluon/ with real MXNet 1.9.1.

Run with the oracle's interpreter from the repository root::

    /work/mxnet-oracle/bin/python tests/data/make_gluon_golden.py

Files (all small):
- names.json: parameter names (and block names/prefixes) MXNet gives nested blocks built from
  the plain HybridBlock/Block classes below (structures ``s_*``; the same classes are defined in
  tests/gluon/test_block.py, so the suite compares mxc's names with these).
- cbd-symbol.json, cbd-0000.params, cbd_io.npz: a conv-BatchNorm-dense net built with
  mxnet.gluon.nn, hybridized, run once and exported; cbd_io.npz holds an input and MXNet's
  outputs for it (inference mode), for SymbolBlock.imports.
- twolayer_new.params (save_parameters: structural names "d0.weight"), twolayer_old.params
  (save_params: prefixed names), twolayer_io.npz (input and output of that net).
- trainer_golden.npz: weights of a small net after several Trainer steps (sgd with momentum
  and weight decay, adam), with the data and initial weights.
The suite never imports MXNet.
"""
import json
import os
import warnings

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon")


# ---- blocks shared with tests/gluon/test_block.py (keep in sync) ---------------------------
class Dense(gluon.HybridBlock):
    def __init__(self, units, in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._units = units
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get("bias", shape=(units,), init="zeros",
                                        allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units, name="fwd")


class Seq(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def add(self, *blocks):
        for b in blocks:
            self.register_child(b)

    def hybrid_forward(self, F, x):
        for b in self._children.values():
            x = b(x)
        return x


class TwoLayer(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.d0 = Dense(6)
            self.d1 = Dense(3)

    def hybrid_forward(self, F, x):
        return self.d1(F.relu(self.d0(x)))


class NoScope(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.d0 = Dense(2)          # created outside name_scope: a top-level name
        with self.name_scope():
            self.d1 = Dense(2)

    def hybrid_forward(self, F, x):
        return self.d1(self.d0(x))


class Outer(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.a = TwoLayer()
            self.b = TwoLayer()
            self.seq = Seq()
            with self.seq.name_scope():
                self.seq.add(Dense(4), Dense(4), TwoLayer())

    def forward(self, x):
        return self.seq(self.b(self.a(x)))


def structures():
    """name -> builder; each builder runs inside a fresh NameManager."""
    def s_dense():
        return [Dense(3), Dense(3), Dense(2, prefix="mine_")]

    def s_twolayer():
        return [TwoLayer(), TwoLayer()]

    def s_noscope():
        return [NoScope()]

    def s_outer():
        return [Outer()]

    def s_seq():
        s = Seq()
        with s.name_scope():
            s.add(Dense(3), TwoLayer(), Dense(1))
        return [s]

    def s_shared():
        a = Dense(3)
        b = Dense(3, params=a.collect_params())
        c = TwoLayer(prefix="tl_")
        return [a, b, c]

    def s_empty_prefix():
        return [TwoLayer(prefix=""), Dense(2)]

    return {k: v for k, v in locals().items() if k.startswith("s_")}


def make_names():
    out = {}
    for key, build in structures().items():
        with mx.name.NameManager():
            blocks = build()
        out[key] = [{"name": b.name, "prefix": b.prefix,
                     "params": list(b.collect_params().keys()),
                     "structural": sorted(b._collect_params_with_prefix().keys())}
                    for b in blocks]
    with open(os.path.join(HERE, "names.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


def make_cbd():
    mx.random.seed(3)
    rng = np.random.RandomState(3)
    net = gluon.nn.HybridSequential(prefix="cbd_")
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3, padding=1, in_channels=2))
        net.add(gluon.nn.BatchNorm(in_channels=4))
        net.add(gluon.nn.Activation("relu"))
        net.add(gluon.nn.MaxPool2D(2))
        net.add(gluon.nn.Dense(5, in_units=4 * 3 * 3))
    net.initialize(mx.init.Xavier())
    # non-trivial running statistics
    bn = net[1]
    bn.running_mean.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, (4,))))
    bn.running_var.set_data(mx.nd.array(rng.uniform(0.5, 1.5, (4,))))
    bn.gamma.set_data(mx.nd.array(rng.uniform(0.5, 1.5, (4,))))
    bn.beta.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, (4,))))
    net.hybridize()
    x = rng.uniform(-1, 1, (2, 2, 6, 6)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    net.export(os.path.join(HERE, "cbd"), epoch=0)
    np.savez_compressed(os.path.join(HERE, "cbd_io.npz"), x=x, y=y)


def make_twolayer():
    rng = np.random.RandomState(5)
    with mx.name.NameManager():
        net = TwoLayer()
    net.initialize(mx.init.Uniform(0.5))
    x = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    net.save_parameters(os.path.join(HERE, "twolayer_new.params"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.save_params(os.path.join(HERE, "twolayer_old.params"))
    np.savez_compressed(os.path.join(HERE, "twolayer_io.npz"), x=x, y=y)


def make_trainer():
    rng = np.random.RandomState(7)
    x = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    t = rng.uniform(-1, 1, (8, 3)).astype(np.float32)
    w0 = rng.uniform(-0.5, 0.5, (6, 4)).astype(np.float32)
    w1 = rng.uniform(-0.5, 0.5, (3, 6)).astype(np.float32)
    out = {"x": x, "t": t, "w0": w0, "w1": w1}
    runs = {"sgd": ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
            "adam": ("adam", {"learning_rate": 0.01})}
    for key, (opt, params) in runs.items():
        with mx.name.NameManager():
            net = TwoLayer()
        net.initialize()
        net.d0.weight.set_data(mx.nd.array(w0))
        net.d1.weight.set_data(mx.nd.array(w1))
        net.d1.weight.lr_mult = 0.5
        trainer = gluon.Trainer(net.collect_params(), opt, params)
        for _ in range(4):
            with autograd.record():
                loss = ((net(mx.nd.array(x)) - mx.nd.array(t)) ** 2).sum()
            loss.backward()
            trainer.step(8)
        for name, p in net.collect_params().items():
            out[f"{key}/{name}"] = p.data().asnumpy()
    np.savez_compressed(os.path.join(HERE, "trainer_golden.npz"), **out)


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    make_names()
    make_cbd()
    make_twolayer()
    make_trainer()
    print("wrote", sorted(os.listdir(HERE)))
