"""Check by hand that real MXNet 1.9.1 imports what mxc's HybridBlock.export writes.

From the repository root::

    PYTHONPATH=. python tests/data/gluon/check_export_in_mxnet.py [/work/mxnet-oracle/bin/python]

mxc builds a conv-BatchNorm-pool-dense net from plain HybridBlocks (F operators), gives it
non-trivial weights and running statistics, hybridizes it, runs it once, exports it and records
an input and mxc's output; then the oracle interpreter (MXNet 1.9.1) runs this same file with
``--check DIR``: it loads the files with ``gluon.SymbolBlock.imports`` and with
``mx.mod.Module`` (``load_checkpoint``) and compares the outputs. The suite never imports MXNet;
this script is the record of the check (last run: both loaders agree to 1e-5).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def export_with_mxc(out_dir):
    import mxc as mx
    from mxc import gluon

    class ConvBN(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.weight = self.params.get("weight", shape=(4, 2, 3, 3))
                self.bias = self.params.get("bias", shape=(4,))
                self.gamma = self.params.get("gamma", shape=(4,))
                self.beta = self.params.get("beta", shape=(4,))
                self.running_mean = self.params.get("running_mean", shape=(4,),
                                                    grad_req="null")
                self.running_var = self.params.get("running_var", shape=(4,), grad_req="null")

        def hybrid_forward(self, F, x, weight, bias, gamma, beta, running_mean, running_var):
            y = F.Convolution(x, weight, bias, kernel=(3, 3), pad=(1, 1), num_filter=4,
                              name="conv")
            y = F.BatchNorm(y, gamma, beta, running_mean, running_var, name="bn")
            y = F.Activation(y, act_type="relu")
            return F.Pooling(y, kernel=(2, 2), stride=(2, 2), pool_type="max")

    class Head(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.body = ConvBN()
                self.weight = self.params.get("weight", shape=(5, 36))
                self.bias = self.params.get("bias", shape=(5,))

        def hybrid_forward(self, F, x, weight, bias):
            return F.FullyConnected(self.body(x), weight, bias, num_hidden=5, name="fc")

    rng = np.random.RandomState(11)
    net = Head(prefix="exp_")
    net.initialize()
    for p in net.collect_params().values():
        lo, hi = (0.5, 1.5) if p.name.endswith(("running_var", "gamma")) else (-0.5, 0.5)
        p.set_data(mx.nd.array(rng.uniform(lo, hi, p.shape)))
    net.hybridize()
    x = rng.uniform(-1, 1, (2, 2, 6, 6)).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(out_dir, "exp")
    net.export(prefix, epoch=3)
    np.savez(os.path.join(out_dir, "io.npz"), x=x, y=y)
    return prefix


def check_with_mxnet(out_dir):
    import mxnet as mx
    io = np.load(os.path.join(out_dir, "io.npz"))
    prefix = os.path.join(out_dir, "exp")
    blk = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                       prefix + "-0003.params")
    y1 = blk(mx.nd.array(io["x"])).asnumpy()
    sym, arg, aux = mx.model.load_checkpoint(prefix, 3)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=None)
    mod.bind([("data", io["x"].shape)], for_training=False)
    mod.set_params(arg, aux)
    mod.forward(mx.io.DataBatch([mx.nd.array(io["x"])]), is_train=False)
    y2 = mod.get_outputs()[0].asnumpy()
    for what, y in (("SymbolBlock.imports", y1), ("Module", y2)):
        err = np.abs(y - io["y"]).max()
        print(f"MXNet {mx.__version__} {what}: max |diff| = {err:.2e}")
        assert err < 1e-5, what
    print("OK: MXNet loads mxc's export")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        check_with_mxnet(sys.argv[2])
    else:
        oracle = sys.argv[1] if len(sys.argv) > 1 else "/work/mxnet-oracle/bin/python"
        with tempfile.TemporaryDirectory() as d:
            export_with_mxc(d)
            subprocess.run([oracle, os.path.abspath(__file__), "--check", d], check=True,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
