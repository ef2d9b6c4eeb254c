"""The optimizer update kernels of mxc/ops/cuda/optimizer_ops.cu, compiled by g++ against the
CUDA emulation header and called with the arguments specs.launch_spec builds, give bit for bit
what mxc's CPU kernels give through mx.nd (both use csrc/kernels/hd_math.h's step functions)."""
import ctypes
import shutil

import numpy as np
import pytest

from ._emu import build, cuda_loader


pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
# ---- optimizer updates: the GPU kernels' arithmetic against mxc's CPU kernels, bit for bit ----
OPT_WRAPPERS = r"""
thread_local dim3 blockIdx, threadIdx, blockDim, gridDim;
template <class F> static void run(F f) {
  gridDim.x = 3; blockDim.x = 5;
  for (unsigned b = 0; b < 3; ++b) for (unsigned t = 0; t < 5; ++t) {
    blockIdx.x = b; threadIdx.x = t; f(); } }
extern "C" void adam(const float *w, const float *g, float *m, float *v, float *o, i64 n,
                     double lr, double b1, double b2, double eps, double wd, double rs, double cg) {
  run([&] { mxc_adam_update<float>(w, g, m, v, o, n, lr, b1, b2, eps, wd, rs, cg); }); }
extern "C" void sgd_mom(const float *w, const float *g, float *m, float *o, i64 n, double lr,
                        double wd, double mo, double rs, double cg) {
  run([&] { mxc_sgd_mom_update<float>(w, g, m, o, n, lr, wd, mo, rs, cg); }); }
extern "C" void rmsprop(const float *w, const float *g, float *s, float *o, i64 n, double lr,
                        double g1, double eps, double wd, double rs, double cg, double cw) {
  run([&] { mxc_rmsprop_update<float>(w, g, s, o, n, lr, g1, eps, wd, rs, cg, cw); }); }
"""
_OPT_FN = {"mxc_adam_update<float>": "adam", "mxc_sgd_mom_update<float>": "sgd_mom",
           "mxc_rmsprop_update<float>": "rmsprop"}


@pytest.fixture(scope="module")
def optlib(tmp_path_factory):
    L = cuda_loader()
    return build(tmp_path_factory, "opt", L.source("optimizer_ops") + OPT_WRAPPERS), L._specs()


def _run_opt(lib, spec, inputs, outputs):
    args = []
    for kind, v in spec["args"]:
        if kind == "in":
            args.append(ctypes.c_void_p(inputs[v].ctypes.data))
        elif kind == "out":
            args.append(ctypes.c_void_p(outputs[v].ctypes.data))
        elif kind == "i64":
            args.append(ctypes.c_longlong(v))
        else:
            args.append(ctypes.c_double(v))
    getattr(lib, _OPT_FN[spec["name"]])(*args)


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
    _run_opt(lib, spec, ins, outs)
    np.testing.assert_array_equal(outs[0], ref_w)
    for s, r in zip(st, nd_st):
        np.testing.assert_array_equal(s, r.asnumpy())
