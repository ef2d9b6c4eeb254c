"""SoftmaxOutput's backward (normalization null/batch/valid, ignore_label, smooth_alpha,
multi_output, out_grad), softmax_cross_entropy (with its label check) and Gluon's per-row
softmax cross-entropy (_softmax_ce_rows and its backward) on the GPU, run on the CPU: the launch
sequence mxc.ops.cuda.launch_spec builds from the operator's own kernel call
(tests/ops/cuda/_gpucall.py) runs on g++-compiled softmax.cu and must match the CPU operator
(SoftmaxOutput's gradient bit for bit; the losses to a few ulp: exp/log are libm's here, mxc's
own expf on the CPU)."""
import shutil

import numpy as np
import pytest

import mxc as mx

from ._emu import Launcher
from ._gpucall import kernel_calls

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S  # noqa: E402

NAMES = ["mxc_%s<%s>" % (k, t) for t in ("float", "double", "__half")
         for k in ("so_scale", "so_bwd", "ce_row_lse", "ce_rows", "ce_rows_bwd",
                   "ce_total_rows", "ce_total")]
TOL = {"float64": dict(rtol=1e-13, atol=1e-13), "float32": dict(rtol=3e-6, atol=3e-6),
       "float16": dict(rtol=1e-3, atol=1e-3)}


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Launcher(tmp_path_factory, "losses", {"softmax": NAMES})


def run_gpu(emu, opname, inputs, outputs, **kw):
    """the outputs, or the message of the spec's device-side check"""
    for name, a, ins, outs, fam, kern, ia, fa in kernel_calls(opname, inputs, outputs, **kw):
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (opname, kern)
        msg = emu.run_spec(spec, ins, outs, grid=3, block=5)
        if msg:
            return msg
    return outputs


def _nd(v):
    return mx.nd.array(v, dtype=v.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw", [
    dict(),
    dict(normalization="batch", grad_scale=2.0),
    dict(normalization="valid", use_ignore=True, ignore_label=2),
    dict(use_ignore=True, ignore_label=1, smooth_alpha=0.1, normalization="batch"),
    dict(out_grad=True, grad_scale=0.5),
    dict(multi_output=True, normalization="valid", use_ignore=True, ignore_label=0),
    dict(multi_output=True, normalization="batch"),
])
def test_softmax_output_backward_matches_the_cpu(emu, dtype, kw):
    rng = np.random.RandomState(0)
    multi = kw.get("multi_output", False)
    x = rng.randn(*((4, 5, 3) if multi else (6, 5))).astype(dtype)
    lab = rng.randint(0, 5, (4, 3) if multi else (6,)).astype(dtype)
    y = mx.nd.SoftmaxOutput(_nd(x), _nd(lab), **kw).asnumpy()
    want = mx.nd._backward_SoftmaxOutput(_nd(y), _nd(lab), **kw).asnumpy()
    got = run_gpu(emu, "_backward_SoftmaxOutput", [y, lab], [np.zeros_like(y)], **kw)[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softmax_ce_rows_match_the_cpu(emu, dtype):
    rng = np.random.RandomState(1)
    x = (rng.randn(7, 6) * 3).astype(dtype)
    lab = np.array([0, 5, 2.7, -1, 9, np.nan, 3], dtype)      # truncated and clipped
    want = mx.nd._softmax_ce_rows(_nd(x), _nd(lab)).asnumpy()
    got = run_gpu(emu, "_softmax_ce_rows", [x, lab], [np.zeros(7, dtype)])[0]
    np.testing.assert_allclose(got.astype(np.float64), want, **TOL[dtype])
    g = rng.rand(7).astype(dtype)
    want = mx.nd._backward_softmax_ce_rows(_nd(g), _nd(x), _nd(lab)).asnumpy()
    got = run_gpu(emu, "_backward_softmax_ce_rows", [g, x, lab], [np.zeros_like(x)])[0]
    np.testing.assert_allclose(got.astype(np.float64), want, **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_cross_entropy_matches_the_cpu(emu, dtype):
    rng = np.random.RandomState(2)
    x = (rng.randn(5, 4) * 4).astype(dtype)
    x[1, 2] = -40                                  # its probability is clipped at 1e-8
    lab = np.array([0, 2, 3, 1.5, 2], dtype)
    want = mx.nd.softmax_cross_entropy(_nd(x), _nd(lab)).asnumpy()
    got = run_gpu(emu, "softmax_cross_entropy", [x, lab], [np.zeros(1, dtype)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13)
    bad = np.array([0, 2, 4, 1, 2], dtype)
    msg = run_gpu(emu, "softmax_cross_entropy", [x, bad], [np.zeros(1, dtype)])
    assert msg == "softmax_cross_entropy: label 4 of row 2 is outside [0, 4)"
    with pytest.raises(mx.MXNetError, match="label 4 of row 2 is outside"):
        mx.nd.softmax_cross_entropy(_nd(x), _nd(bad)).asnumpy()


@pytest.fixture(scope="module")
def emu_softmax(tmp_path_factory):
    t = ("float", "double", "__half")
    return Launcher(tmp_path_factory, "so_fwd", {"softmax": [
        "mxc_softmax_%s<false, %s, %s, int>" % (k, c, c) for k in ("rows", "cols") for c in t]})


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape, kw", [((6, 5), {}), ((4, 5, 3), dict(multi_output=True)),
                                       ((2, 3, 4), dict(preserve_shape=True)),
                                       ((3, 2, 2, 2), {})])
def test_softmax_output_forward_matches_the_cpu(emu_softmax, dtype, shape, kw):
    """SoftmaxOutput's forward is the softmax kernel over (n, K, inner); its label input is not
    the kernel's (the spec once wanted exactly one input, so the operator had no GPU kernel
    and Module training on gpu(0) stopped at it)."""
    rng = np.random.RandomState(1)
    x = rng.randn(*shape).astype(dtype)
    lab_shape = (shape[0],) + shape[2:] if kw.get("multi_output") else shape[:-1]
    lab = rng.randint(0, shape[1] if kw.get("multi_output") else shape[-1],
                      lab_shape).astype(dtype)
    want = mx.nd.SoftmaxOutput(_nd(x), _nd(lab), **kw).asnumpy()
    got = np.zeros_like(x)
    (call,) = kernel_calls("SoftmaxOutput", [x, lab], [got], **kw)
    spec = S.launch_spec(call[0], call[1], call[2], call[3], family=call[4], kernel=call[5],
                         iattr=call[6], fattr=call[7])
    assert spec is not None
    if "_rows<" in spec["name"]:
        # the rows kernel's block reductions need barriers the emulation lacks: run its
        # arguments through the cols kernel with inner = 1 (what rows computes, thread-wise)
        spec = dict(spec, name=spec["name"].replace("_rows<", "_cols<"),
                    args=spec["args"][:5] + [("i64", 1)] + spec["args"][5:])
    emu_softmax.run_spec(spec, call[2], call[3], grid=3, block=5)
    np.testing.assert_allclose(got, want, **TOL[dtype])
