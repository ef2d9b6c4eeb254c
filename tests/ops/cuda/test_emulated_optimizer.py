"""The optimizer update kernels of mxc/ops/cuda/optimizer_ops.cu, compiled by g++ against the
CUDA emulation header and called with the arguments mxc.ops.cuda.launch_spec builds, give bit for bit
what mxc's CPU kernels give through mx.nd (both use csrc/kernels/hd_math.h's step functions)."""
import shutil

import numpy as np
import pytest

from mxc.ops import cuda

from ._emu import Launcher


pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
# ---- optimizer updates: the GPU kernels' arithmetic against mxc's CPU kernels, bit for bit ----
_NAMES = ("mxc_adam_update<float>", "mxc_sgd_mom_update<float>", "mxc_rmsprop_update<float>")


@pytest.fixture(scope="module")
def optlib(tmp_path_factory):
    return Launcher(tmp_path_factory, "opt", {"optimizer_ops": _NAMES}), cuda


@pytest.mark.parametrize("op,kernel,states,kw,fnames", [
    ("adam_update", "opt:adam", 2, dict(lr=0.1, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.01,
                                        rescale_grad=0.5, clip_gradient=2.0),
     ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient")),
    ("sgd_mom_update", "opt:msgd", 1, dict(lr=0.05, wd=0.001, momentum=0.9, rescale_grad=1.0,
                                           clip_gradient=-1.0),
     ("lr", "wd", "momentum", "rescale_grad", "clip_gradient")),
    ("rmsprop_update", "opt:rmsprop", 1, dict(lr=0.01, gamma1=0.95, epsilon=1e-8, wd=0.0,
                                              rescale_grad=1.0, clip_gradient=0.5,
                                              clip_weights=1.5),
     ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights")),
])
def test_optimizer_matches_cpu_kernel(optlib, op, kernel, states, kw, fnames):
    import mxc as mx
    lib, S = optlib
    rng = np.random.RandomState(4)
    n = 41
    w = rng.randn(n).astype(np.float32)
    g = (3 * rng.randn(n)).astype(np.float32)
    st = [np.abs(rng.randn(n)).astype(np.float32) for _ in range(states)]
    # the CPU reference: mxc's own CPU kernel through mx.nd
    nd_st = [mx.nd.array(s) for s in st]
    ref_w = getattr(mx.nd, op)(mx.nd.array(w), mx.nd.array(g), *nd_st, **kw).asnumpy()
    # the GPU kernel's arithmetic: fattr in the CPU kernel's order, float32-rounded as Python does
    fattr = tuple(float(np.float32(kw[k])) for k in fnames)
    class Arr:
        def __init__(self, a):
            self.shape, self.dtype, self.ndim = a.shape, a.dtype.type, a.ndim
    ins = [w, g] + st
    outs = [np.zeros_like(w)] + st            # states are updated in place
    spec = S.launch_spec(op, kw, [Arr(a) for a in ins], [Arr(a) for a in outs],
                         family="optimizer_ops", kernel=kernel, iattr=(1, -1), fattr=fattr)
    lib.run(spec, ins, outs, grid=3, block=5)
    np.testing.assert_array_equal(outs[0], ref_w)
    for s, r in zip(st, nd_st):
        np.testing.assert_array_equal(s, r.asnumpy())
