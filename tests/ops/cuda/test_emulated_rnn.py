"""The RNN operator on the GPU, run on the CPU: its fused gate steps (rnn_cell.cu, compiled
with g++ against the emulation header) and its GEMMs (FullyConnected / dot as the cuBLAS
column-major calls of dot.py's gemm_plan, executed in numpy) take the place of the CPU kernels,
and RNN's forward and its gradients (LSTM with and without clipping or a projection, GRU,
vanilla, bidirectional, two layers, MXNet's packed weights) must match mxc's CPU operator.
The gate kernels alone are compared with the CPU's for every float dtype."""
import shutil

import numpy as np
import pytest

import mxc as mx
from mxc.ops import _gpu, registry
from mxc.ops import dot as dot_mod
from mxc.ops import cuda as S
from mxc.ops.cuda import dot as D
from mxc.ops.rnn import param_layout

from ._emu import Launcher
from ._gpucall import GpuStandIn
from .test_gemm_mapping import run_plan

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

CELLS = ("_rnn_lstm_cell", "_backward_rnn_lstm_cell", "_rnn_gru_cell", "_backward_rnn_gru_cell")
NAMES = ["mxc_%s<%s>" % (k, t) for t in ("float", "double", "__half")
         for k in ("lstm_cell", "lstm_cell_grad", "gru_cell", "gru_cell_grad")]


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Launcher(tmp_path_factory, "rnn_cell", {"rnn_cell": NAMES})


def gpu_outputs(emu, op, attrs, inputs, outputs, forward=None):
    """Run op's GPU launches (the kernel calls its own forward makes for gpu(0) arrays) on
    numpy inputs/outputs; returns the outputs."""
    calls = []

    def record(name, a, ins, outs, family=None, kernel=None, iattr=(), fattr=()):
        calls.append((name, a, [s.arr for s in ins], [s.arr for s in outs], family, kernel,
                      iattr, fattr))
    saved = _gpu.forward
    _gpu.forward = record
    try:
        (forward or op.forward)(attrs, [GpuStandIn(x) for x in inputs],
                                [GpuStandIn(y) for y in outputs])
    finally:
        _gpu.forward = saved
    assert calls, op.name
    for name, a, ins, outs, fam, kern, ia, fa in calls:
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (op.name, kern)
        assert emu.run_spec(spec, ins, outs, grid=3, block=7) is None
    return outputs


@pytest.fixture
def on_emulated_gpu(emu, monkeypatch):
    """The gate operators and the GEMMs run their GPU launches (emulated) instead of their CPU
    kernels, on the values of the CPU arrays they are given."""
    def cell_forward(op):
        own = op.forward

        def forward(attrs, inputs, outputs):
            ins = [x.asnumpy() for x in inputs]
            outs = [np.zeros(y.shape, y.dtype) for y in outputs]
            for y, v in zip(outputs, gpu_outputs(emu, op, attrs, ins, outs, own)):
                y[:] = mx.nd.array(v, dtype=v.dtype)
            used.append(op.name)
        return forward
    used = []
    for name in CELLS:
        op = registry.get(name)
        monkeypatch.setattr(op, "forward", cell_forward(op))

    def gemm(name):
        def forward(attrs, inputs, outputs):
            ins = [x.asnumpy() for x in inputs]
            y = outputs[0]
            plan = D.gemm_plan(attrs["_ints"], (attrs["alpha"], attrs["beta"]), y.dtype)
            assert plan is not None, name
            out = np.zeros(y.shape, np.float64)
            run_plan(plan, ins[0], ins[1], ins[2] if len(ins) > 2 else None, out)
            y[:] = mx.nd.array(out.astype(y.dtype), dtype=y.dtype)
            used.append(name)
        return forward
    for name in ("dot", "FullyConnected"):
        monkeypatch.setitem(dot_mod._GEMM, name, gemm(name))
    return used


def _sig(x):
    return 1 / (1 + np.exp(-x))


TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=2e-6, atol=2e-6),
       "float16": dict(rtol=2e-3, atol=2e-3)}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_gate_kernels_match_the_cpu(emu, dtype):
    rng = np.random.default_rng(5)
    N, H = 4, 6
    g = (rng.standard_normal((N, 4 * H)) * 2).astype(dtype)
    c = rng.standard_normal((N, H)).astype(dtype)
    dh, dc = (rng.standard_normal((N, H)).astype(dtype) for _ in range(2))
    nd = lambda v: mx.nd.array(v, dtype=v.dtype)   # noqa: E731
    for clip in ({}, {"clip_min": -0.4, "clip_max": 0.5}):
        op = registry.get("_rnn_lstm_cell")
        want = [w.asnumpy() for w in mx.nd._rnn_lstm_cell(nd(g), nd(c), **clip)]
        got = gpu_outputs(emu, op, op.parse(clip), [g, c], [np.zeros((N, H), dtype)] * 1
                          + [np.zeros((N, H), dtype)])
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.astype(np.float64), b, **TOL[dtype])
        op = registry.get("_backward_rnn_lstm_cell")
        want = [w.asnumpy() for w in mx.nd._backward_rnn_lstm_cell(nd(g), nd(c), nd(dh), nd(dc),
                                                                    **clip)]
        got = gpu_outputs(emu, op, op.parse(clip), [g, c, dh, dc],
                          [np.zeros((N, 4 * H), dtype), np.zeros((N, H), dtype)])
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.astype(np.float64), b, **TOL[dtype])
    xs, hh = (rng.standard_normal((N, 3 * H)).astype(dtype) for _ in range(2))
    op = registry.get("_rnn_gru_cell")
    want = mx.nd._rnn_gru_cell(nd(xs), nd(hh), nd(c)).asnumpy()
    got = gpu_outputs(emu, op, op.parse({}), [xs, hh, c], [np.zeros((N, H), dtype)])[0]
    np.testing.assert_allclose(got.astype(np.float64), want, **TOL[dtype])
    # and the CPU's (so both) against the formula, in float64
    if dtype == "float64":
        xr, xz, xn = np.split(xs, 3, axis=1)
        hr, hz, hn = np.split(hh, 3, axis=1)
        r, z = _sig(xr + hr), _sig(xz + hz)
        n = np.tanh(xn + r * hn)
        np.testing.assert_allclose(got, n + z * (c - n), rtol=1e-12)
    op = registry.get("_backward_rnn_gru_cell")
    want = [w.asnumpy() for w in mx.nd._backward_rnn_gru_cell(nd(xs), nd(hh), nd(c), nd(dh))]
    got = gpu_outputs(emu, op, op.parse({}), [xs, hh, c, dh],
                      [np.zeros((N, 3 * H), dtype), np.zeros((N, 3 * H), dtype),
                       np.zeros((N, H), dtype)])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.astype(np.float64), b, **TOL[dtype])


def _rnn_run(x, params, states, kw):
    """RNN's outputs and the gradients of (x, params, states) for fixed head gradients."""
    arrs = [mx.nd.array(v, dtype=v.dtype) for v in [x, params] + states]
    for a in arrs:
        a.attach_grad()
    with mx.autograd.record():
        outs = mx.nd.RNN(*arrs, state_outputs=True, **kw)
        rng = np.random.default_rng(9)
        loss = sum((o * mx.nd.array(rng.standard_normal(o.shape), dtype=o.dtype)).sum()
                   for o in outs)
    loss.backward()
    return [o.asnumpy() for o in outs], [a.grad.asnumpy() for a in arrs]


CASES = [
    dict(mode="lstm", state_size=5, num_layers=2, bidirectional=True),
    dict(mode="lstm", state_size=4, num_layers=1, lstm_state_clip_min=-0.3,
         lstm_state_clip_max=0.35),
    dict(mode="lstm", state_size=6, num_layers=1, projection_size=3),
    dict(mode="gru", state_size=5, num_layers=2, bidirectional=True),
    dict(mode="rnn_tanh", state_size=4, num_layers=2),
    dict(mode="rnn_relu", state_size=4, num_layers=1, bidirectional=True),
]


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_rnn_forward_and_gradients_match_the_cpu_operator(request, kw, dtype):
    T, N, I = 4, 3, 5
    attrs = registry.get("RNN").parse(dict(kw))
    _, size = param_layout(attrs, I)
    H, P = kw["state_size"], kw.get("projection_size")
    L, Dn = kw["num_layers"], 2 if kw.get("bidirectional") else 1
    rng = np.random.default_rng(11)
    x = rng.standard_normal((T, N, I)).astype(dtype)
    params = (rng.standard_normal(size) * 0.4).astype(dtype)
    states = [rng.standard_normal((L * Dn, N, P or H)).astype(dtype)]
    if kw["mode"] == "lstm":
        states.append(rng.standard_normal((L * Dn, N, H)).astype(dtype))
    want_out, want_grad = _rnn_run(x, params, states, kw)
    used = request.getfixturevalue("on_emulated_gpu")
    got_out, got_grad = _rnn_run(x, params, states, kw)
    want_used = {"lstm": {"FullyConnected", "dot", "_rnn_lstm_cell", "_backward_rnn_lstm_cell"},
                 "gru": {"FullyConnected", "_rnn_gru_cell", "_backward_rnn_gru_cell"}}.get(
                     kw["mode"], {"FullyConnected", "dot"})
    assert want_used <= set(used), used
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    for g, w in zip(got_out, want_out):
        np.testing.assert_allclose(g, w, **tol)
    for g, w in zip(got_grad, want_grad):
        np.testing.assert_allclose(g, w, **tol)
