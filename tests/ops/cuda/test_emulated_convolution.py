"""Convolution, Deconvolution and bilinear UpSampling on the GPU without cuDNN (im2col + cuBLAS,
mxc/ops/cuda/convolution.py), run on the CPU: the steps that launch_spec builds from the
operator's own kernel call (tests/ops/cuda/_gpucall.py) run in order, the data-moving kernels
compiled from convolution.cu with g++ (tests/ops/cuda/_emu.py Launcher) and every GEMM executed
as cuBLAS defines its column-major call (tests/ops/cuda/test_gemm_mapping.py colmajor_gemm) on
the buffers' flat memory; the results must match the CPU operators (1-3-D, groups, dilation,
stride, pad, bias, Deconvolution's adj and target_shape, several chunks of samples).

The same operators through cuDNN (mxc/ops/cuda/cudnn_conv.py, the ``path`` fixture's "cudnn"):
the fake frontend builds the plans, and each cuDNN step is computed here in numpy from its
descriptor (the pass, shapes, pad, stride, dilation) on the buffers its uids name, so the
passes each operator asks for, their operands and the bias steps are checked against the CPU."""
import itertools
import shutil

import numpy as np
import pytest

import mxc as mx

from . import _fake_cudnn
from ._emu import Launcher
from ._gpucall import kernel_calls
from .test_gemm_mapping import colmajor_gemm

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S  # noqa: E402
from mxc.ops.cuda import convolution as C  # noqa: E402
from mxc.ops.cuda._launch import instantiations  # noqa: E402

TOL = {"float64": dict(rtol=1e-10, atol=1e-10), "float32": dict(rtol=1e-4, atol=1e-4),
       "float16": dict(rtol=2e-2, atol=2e-2)}


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Launcher(tmp_path_factory, "convolution",
                    {"convolution": sorted(instantiations("convolution"))})


@pytest.fixture(params=["im2col", "cudnn"])
def path(request, monkeypatch, tmp_path):
    if request.param == "im2col":
        yield request.param
        return
    with _fake_cudnn.installed(monkeypatch, tmp_path):
        yield request.param


def cudnn_step(desc, bufs):
    """What cuDNN computes for one pass, in numpy (float64): bufs {uid: flat array}."""
    from mxc.ops.cuda.cudnn_conv import UID_W, UID_X, UID_Y
    shapes = {UID_X: desc.x, UID_W: desc.w, UID_Y: desc.y}
    for uid, b in bufs.items():
        assert b.size == np.prod(shapes[uid]), (desc.pass_, uid, b.size, shapes[uid])
    x, w, y = (bufs[u].reshape(shapes[u]).astype(np.float64) for u in (UID_X, UID_W, UID_Y))
    G, Cg = desc.x[1] // desc.w[1], desc.w[1]
    Mg = desc.w[0] // G
    pad = [(0, 0), (0, 0)] + [(p, p) for p in desc.pad]
    xp = np.pad(x, pad)
    out = np.zeros_like(xp if desc.pass_ == "dgrad" else w if desc.pass_ == "wgrad" else y)
    for k in itertools.product(*[range(n) for n in desc.w[2:]]):
        win = (slice(None), slice(None)) + tuple(
            slice(ki * d, ki * d + s * (o - 1) + 1, s)
            for ki, d, s, o in zip(k, desc.dilate, desc.stride, desc.y[2:]))
        for g in range(G):
            cs, ms = slice(g * Cg, (g + 1) * Cg), slice(g * Mg, (g + 1) * Mg)
            wk = w[(ms, slice(None)) + k]
            if desc.pass_ == "fprop":
                out[:, ms] += np.einsum("nc...,mc->nm...", xp[win][:, cs], wk)
            elif desc.pass_ == "wgrad":
                n = y.shape[0]
                dyg, xg = y[:, ms].reshape(n, Mg, -1), xp[win][:, cs].reshape(n, Cg, -1)
                out[(ms, slice(None)) + k] += np.einsum("nmo,nco->mc", dyg, xg)
            else:
                out[win][:, cs] += np.einsum("nm...,mc->nc...", y[:, ms], wk)
    if desc.pass_ == "dgrad":
        out = out[(slice(None), slice(None)) + tuple(
            slice(p, p + n) for p, n in zip(desc.pad, desc.x[2:]))]
    uid = {"fprop": UID_Y, "dgrad": UID_X, "wgrad": UID_W}[desc.pass_]
    bufs[uid][...] = out.reshape(-1)


def run_steps(emu, spec, ins, outs):
    ws = np.zeros(max(256, int(spec["workspace"])) + 256, np.uint8)
    dt = outs[0].dtype

    def buf(ref):
        kind, v = ref
        if kind == "ws":
            return ws[int(v):].view(np.uint8)[: (ws.size - int(v)) // dt.itemsize * dt.itemsize].view(dt)
        return (ins if kind == "in" else outs)[v].reshape(-1)
    for step in spec["steps"]:
        if "gemm" in step:
            colmajor_gemm(step["gemm"], step["alpha"], step["beta"], buf(step["a"]),
                          buf(step["b"]), buf(step["c"]))
        elif "cudnn" in step:
            cudnn_step(step["cudnn"], {uid: buf(ref) for uid, ref in step["tensors"].items()})
        else:
            assert step["name"] in instantiations("convolution")
            emu.run(step, ins, outs, ws, grid=3, block=7)


def run_gpu(emu, opname, inputs, outputs, path="im2col", **kw):
    calls = kernel_calls(opname, inputs, outputs, **kw)
    assert calls
    for name, a, ins, outs, fam, kern, ia, fa in calls:
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None and spec.get("steps"), (opname, kern)
        assert any("cudnn" in st for st in spec["steps"]) == (path == "cudnn"), (path, kern)
        run_steps(emu, spec, ins, outs)
    return outputs


def _nd(v):
    return mx.nd.array(v, dtype=v.dtype)


def _close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               **TOL[dtype])


CONV = [
    ((2, 4, 7, 6), dict(kernel=(3, 3), num_filter=6, pad=(1, 1))),
    ((2, 4, 9, 8), dict(kernel=(3, 2), num_filter=4, stride=(2, 1), dilate=(2, 1), pad=(1, 0),
                        num_group=2)),
    ((3, 3, 11), dict(kernel=(3,), num_filter=5, stride=(2,), pad=(1,))),
    ((1, 2, 4, 5, 4), dict(kernel=(2, 3, 2), num_filter=4, stride=(1, 2, 1), pad=(1, 1, 0),
                           num_group=2)),
    ((2, 6, 5, 5), dict(kernel=(1, 1), num_filter=3, no_bias=True)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape,kw", CONV)
def test_convolution_matches_the_cpu(emu, path, shape, kw, dtype):
    rng = np.random.RandomState(0)
    x = rng.randn(*shape).astype(dtype)
    w = (rng.randn(kw["num_filter"], shape[1] // kw.get("num_group", 1), *kw["kernel"])
         * 0.3).astype(dtype)
    args = [x, w] + ([] if kw.get("no_bias") else [rng.randn(kw["num_filter"]).astype(dtype)])
    want = mx.nd.Convolution(*[_nd(a) for a in args], **kw).asnumpy()
    got = run_gpu(emu, "Convolution", args, [np.zeros(want.shape, dtype)], path=path, **kw)[0]
    _close(got, want, dtype)
    dy = rng.randn(*want.shape).astype(dtype)
    wants = [g.asnumpy() for g in mx.nd._backward_Convolution(_nd(dy), *[_nd(a) for a in args],
                                                               **kw)]
    gots = run_gpu(emu, "_backward_Convolution", [dy] + args,
                   [np.full(g.shape, 9, dtype) for g in wants], path=path, **kw)
    for g, w_ in zip(gots, wants):
        _close(g, w_, dtype)


def test_several_chunks_of_samples(emu, monkeypatch):
    # a budget for two samples per chunk: three chunks, the weight gradient accumulated
    shape, kw = (5, 3, 6, 6), dict(kernel=(3, 3), num_filter=4, pad=(1, 1), num_group=1)
    monkeypatch.setattr(C, "COL_BUDGET", 2 * (3 * 9 * 36 + 4 * 36))
    rng = np.random.RandomState(1)
    x, w, b = rng.randn(*shape), rng.randn(4, 3, 3, 3), rng.randn(4)
    want = mx.nd.Convolution(_nd(x), _nd(w), _nd(b), **kw).asnumpy()
    calls = kernel_calls("Convolution", [x, w, b], [np.zeros(want.shape)], **kw)
    spec = S.launch_spec(*calls[0][:4], family="convolution", kernel="conv:forward",
                         iattr=calls[0][6], fattr=calls[0][7])
    assert sum("gemm" in s for s in spec["steps"]) == 3
    got = run_gpu(emu, "Convolution", [x, w, b], [np.zeros(want.shape)], **kw)[0]
    _close(got, want, "float64")
    dy = rng.randn(*want.shape)
    wants = [g.asnumpy() for g in mx.nd._backward_Convolution(_nd(dy), _nd(x), _nd(w), _nd(b),
                                                               **kw)]
    gots = run_gpu(emu, "_backward_Convolution", [dy, x, w, b],
                   [np.zeros(g.shape) for g in wants], **kw)
    for g, w_ in zip(gots, wants):
        _close(g, w_, "float64")


DECONV = [
    ((2, 4, 5, 4), dict(kernel=(3, 3), num_filter=6, stride=(2, 2), pad=(1, 1), adj=(1, 0))),
    ((2, 4, 5, 5), dict(kernel=(4, 4), num_filter=4, stride=(2, 2), num_group=2,
                        target_shape=(10, 10), no_bias=False)),
    ((2, 3, 7), dict(kernel=(3,), num_filter=2, stride=(3,), dilate=(2,))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,kw", DECONV)
def test_deconvolution_matches_the_cpu(emu, path, shape, kw, dtype):
    rng = np.random.RandomState(2)
    x = rng.randn(*shape).astype(dtype)
    w = (rng.randn(shape[1], kw["num_filter"] // kw.get("num_group", 1), *kw["kernel"])
         * 0.3).astype(dtype)
    args = [x, w] + ([] if kw.get("no_bias", True) else [rng.randn(kw["num_filter"]).astype(dtype)])
    want = mx.nd.Deconvolution(*[_nd(a) for a in args], **kw).asnumpy()
    got = run_gpu(emu, "Deconvolution", args, [np.zeros(want.shape, dtype)], path=path, **kw)[0]
    _close(got, want, dtype)
    dy = rng.randn(*want.shape).astype(dtype)
    wants = [g.asnumpy() for g in mx.nd._backward_Deconvolution(_nd(dy),
                                                                 *[_nd(a) for a in args], **kw)]
    gots = run_gpu(emu, "_backward_Deconvolution", [dy] + args,
                   [np.full(g.shape, 9, dtype) for g in wants], path=path, **kw)
    for g, w_ in zip(gots, wants):
        _close(g, w_, dtype)


def test_bilinear_upsampling_matches_the_cpu(emu, path):
    rng = np.random.RandomState(3)
    x = rng.randn(2, 3, 4, 5).astype(np.float32)
    kw = dict(scale=2, sample_type="bilinear", num_filter=3, num_args=2)
    w = rng.rand(3, 1, 4, 4).astype(np.float32)
    want = mx.nd.UpSampling(_nd(x), _nd(w), **kw).asnumpy()
    got = run_gpu(emu, "UpSampling", [x, w], [np.zeros(want.shape, np.float32)], path=path, **kw)[0]
    _close(got, want, "float32")
    dy = rng.randn(*want.shape).astype(np.float32)
    wants = [g.asnumpy() for g in mx.nd._backward_UpSampling(_nd(dy), _nd(x), _nd(w), **kw)]
    gots = run_gpu(emu, "_backward_UpSampling", [dy, x, w],
                   [np.zeros(g.shape, np.float32) for g in wants], path=path, **kw)
    for g, w_ in zip(gots, wants):
        _close(g, w_, "float32")
