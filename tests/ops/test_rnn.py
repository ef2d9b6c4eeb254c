"""The fused RNN operator: MXNet 1.9.1 goldens (forward and gradients through autograd, packed
parameters as MXNet lays them out), a numpy reference for what MXNet's CPU operator does not run
(sequence lengths, state clipping), gradients against central differences in float64, shape
inference and errors."""
import ast
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ndarray.register import invoke
from mxc.ops import registry

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "rnn_golden.npz")
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
NAMES = ("data", "parameters", "state", "state_cell", "sequence_length")


def _nd(a):
    a = np.asarray(a)
    return mx.nd.array(a, dtype=a.dtype)


def rnn(*arrays, **kw):
    """RNN through the registry (its optional inputs left out, as MXNet's front end allows)."""
    r = invoke(registry.get("RNN"), [a if isinstance(a, mx.nd.NDArray) else _nd(a)
                                     for a in arrays], dict(kw))
    return r if isinstance(r, list) else [r]


def psize(mode, I, H, L, D, P=None):
    g, r, n = GATES[mode], P or H, 0
    for layer in range(L):
        ni = I if layer == 0 else r * D
        n += D * (g * H * ni + g * H * r + (P * H if P else 0) + 2 * g * H)
    return n


def _sig(v):
    return 1 / (1 + np.exp(-v))


def reference(x, params, h0, c0=None, seqlen=None, *, mode, state_size, num_layers,
              bidirectional=False, projection_size=None, lstm_state_clip_min=None,
              lstm_state_clip_max=None, **_):
    """A plain numpy RNN reading MXNet's packed layout (weights of every layer/direction, then
    biases), with cuDNN's sequence-length semantics."""
    T, N, I = x.shape
    H, P, L, D = state_size, projection_size, num_layers, 2 if bidirectional else 1
    R, G = P or H, GATES[mode] * H
    pos = [0]

    def take(*shape):
        n = int(np.prod(shape))
        v = params[pos[0]:pos[0] + n].reshape(shape)
        pos[0] += n
        return v
    ws = []
    for layer in range(L):
        for _ in range(D):
            wi = take(G, I if layer == 0 else R * D)
            wh = take(G, R)
            ws.append((wi, wh, take(P, H) if P else None))
    bs = [(take(G), take(G)) for _ in range(L * D)]
    assert pos[0] == params.size
    lens = np.full(N, T) if seqlen is None else np.asarray(seqlen).astype(int)
    inp, hy, cy = x, [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            (wi, wh, wr), (bi, bh) = ws[k], bs[k]
            h, c = h0[k].copy(), None if c0 is None else c0[k].copy()
            y = np.zeros((T, N, R))
            for t in (range(T) if d == 0 else range(T - 1, -1, -1)):
                m = (t < lens)[:, None]
                a, b = inp[t] @ wi.T + bi, h @ wh.T + bh
                if mode == "lstm":
                    i, f, g, o = np.split(a + b, 4, axis=1)
                    cn = _sig(f) * c + _sig(i) * np.tanh(g)
                    if lstm_state_clip_min is not None:
                        cn = np.clip(cn, lstm_state_clip_min, lstm_state_clip_max)
                    hn = _sig(o) * np.tanh(cn)
                    if P:
                        hn = hn @ wr.T
                    c = np.where(m, cn, c)
                elif mode == "gru":
                    ar, az, an = np.split(a, 3, axis=1)
                    br, bz, bn = np.split(b, 3, axis=1)
                    r, z = _sig(ar + br), _sig(az + bz)
                    n = np.tanh(an + r * bn)
                    hn = (1 - z) * n + z * h
                else:
                    hn = np.maximum(a + b, 0) if mode == "rnn_relu" else np.tanh(a + b)
                y[t] = np.where(m, hn, 0)
                h = np.where(m, hn, h)
            outs.append(y)
            hy.append(h)
            cy.append(c)
        inp = np.concatenate(outs, axis=2)
    return inp, np.stack(hy), (np.stack(cy) if c0 is not None else None)


def _golden_cases():
    if not os.path.exists(GOLDEN):
        return []
    return sorted({k.split("/")[0] for k in np.load(GOLDEN).files})


@pytest.mark.parametrize("case", _golden_cases())
def test_golden_mxnet(case):
    z = np.load(GOLDEN)
    f = {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(case + "/")}
    kw = ast.literal_eval(str(f["kwargs"]))
    ins = [mx.nd.array(f[k]) for k in NAMES if k in f]
    for a in ins:
        a.attach_grad()
    with mx.autograd.record():
        res = rnn(*ins, **kw)
    outs = [k for k in ("out", "hy", "cy") if k in f]
    assert len(res) == len(outs)
    for r, k in zip(res, outs):
        assert r.shape == f[k].shape and r.dtype == np.float32
        np.testing.assert_allclose(r.asnumpy(), f[k], rtol=1e-4, atol=2e-5, err_msg=f"{case} {k}")
    if "grad_data" not in f:
        return
    mx.autograd.backward(res, [mx.nd.array(f["head_" + k]) for k in outs])
    for a, k in zip(ins, NAMES):
        np.testing.assert_allclose(a.grad.asnumpy(), f["grad_" + k], rtol=1e-4, atol=2e-5,
                                   err_msg=f"{case} d/d{k}")


def _make(rng, mode, T, N, I, H, L, D, P=None, dtype=np.float64):
    x = rng.uniform(-1, 1, (T, N, I))
    p = rng.uniform(-0.6, 0.6, psize(mode, I, H, L, D, P))
    h0 = rng.uniform(-0.5, 0.5, (L * D, N, P or H))
    ins = [x, p, h0]
    if mode == "lstm":
        ins.append(rng.uniform(-0.5, 0.5, (L * D, N, H)))
    return [a.astype(dtype) for a in ins]


@pytest.mark.parametrize("mode", sorted(GATES))
def test_reference_with_sequence_length(mode, rng):
    T, N, I, H, L = 5, 3, 3, 4, 2
    ins = _make(rng, mode, T, N, I, H, L, 2)
    lens = np.array([5, 2, 3], np.int32)
    kw = dict(mode=mode, state_size=H, num_layers=L, bidirectional=True, state_outputs=True,
              use_sequence_length=True)
    got = rnn(*ins, lens, **kw)
    ref = reference(*ins, *([None] if mode != "lstm" else []), lens, **kw)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g.asnumpy(), r, rtol=1e-10, atol=1e-12)
    assert np.all(got[0].asnumpy()[2:, 1] == 0) and np.all(got[0].asnumpy()[3:, 2] == 0)
    # lengths equal to T change nothing
    full = rnn(*ins, np.full(N, T, np.float32), **kw)
    plain = rnn(*ins, **dict(kw, use_sequence_length=False))
    for a, b in zip(full, plain):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-12)


def test_reference_clip_and_projection(rng):
    T, N, I, H, P = 4, 2, 3, 5, 2
    ins = _make(rng, "lstm", T, N, I, H, 2, 2, P)
    kw = dict(mode="lstm", state_size=H, num_layers=2, bidirectional=True, state_outputs=True,
              projection_size=P, lstm_state_clip_min=-0.3125, lstm_state_clip_max=0.25)
    got = rnn(*ins, **kw)
    ref = reference(*ins, **kw)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g.asnumpy(), r, rtol=1e-10, atol=1e-12)
    assert np.abs(got[2].asnumpy()).max() <= 0.3125


def _central_check(rng, ins, kw, n_check=8, eps=1e-6):
    nd_in = [_nd(a) for a in ins]
    for a in nd_in:
        a.attach_grad()
    with mx.autograd.record():
        res = rnn(*nd_in, **kw)
    heads = [rng.standard_normal(r.shape) for r in res]
    mx.autograd.backward(res, [_nd(h) for h in heads])

    def f(xs):
        return sum(float(np.sum(r.asnumpy() * h)) for r, h in zip(rnn(*xs, **kw), heads))
    for k, a in enumerate(ins):
        if not np.issubdtype(a.dtype, np.floating) or k == 4:
            continue
        g = nd_in[k].grad.asnumpy()
        for i in rng.choice(a.size, size=min(n_check, a.size), replace=False):
            xp = [v.copy() for v in ins]
            xm = [v.copy() for v in ins]
            xp[k].reshape(-1)[i] += eps
            xm[k].reshape(-1)[i] -= eps
            num = (f(xp) - f(xm)) / (2 * eps)
            np.testing.assert_allclose(g.reshape(-1)[i], num, rtol=1e-5, atol=1e-7,
                                       err_msg=f"d/d{NAMES[k]}[{i}]")


@pytest.mark.parametrize("mode", sorted(GATES))
def test_grad_central_differences(mode, rng):
    ins = _make(rng, mode, 3, 2, 2, 3, 2, 2)
    kw = dict(mode=mode, state_size=3, num_layers=2, bidirectional=True, state_outputs=True)
    _central_check(rng, ins, kw)


def test_grad_sequence_length_projection(rng):
    ins = _make(rng, "lstm", 4, 2, 2, 3, 1, 2, 2)
    kw = dict(mode="lstm", state_size=3, num_layers=1, bidirectional=True, state_outputs=True,
              projection_size=2, use_sequence_length=True)
    _central_check(rng, ins + [np.array([4, 2], np.int32)], kw)


def test_float16_and_float32(rng):
    ins = _make(rng, "lstm", 4, 3, 5, 6, 2, 2, dtype=np.float32)
    kw = dict(mode="lstm", state_size=6, num_layers=2, bidirectional=True, state_outputs=True)
    ref = reference(*[a.astype(np.float64) for a in ins], **kw)
    got32 = rnn(*ins, **kw)
    got16 = rnn(*[a.astype(np.float16) for a in ins], **kw)
    for a, b, r in zip(got32, got16, ref):
        assert a.dtype == np.float32 and b.dtype == np.float16
        np.testing.assert_allclose(a.asnumpy(), r, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(b.asnumpy().astype(np.float64), r, rtol=2e-2, atol=2e-2)


def test_outputs_infer_and_single_step(rng):
    op = registry.get("RNN")
    for mode in sorted(GATES):
        ins = _make(rng, mode, 1, 2, 3, 4, 1, 1, dtype=np.float32)
        kw = dict(mode=mode, state_size=4, num_layers=1)
        out = rnn(*ins, **kw)
        assert len(out) == 1 and out[0].shape == (1, 2, 4)
        np.testing.assert_allclose(out[0].asnumpy(), reference(*ins, **kw)[0], rtol=1e-5,
                                   atol=1e-6)
        attrs = op.parse(dict(kw, state_outputs=True, bidirectional=True, num_layers=3))
        shapes, dtypes = op.infer(attrs, op.infer_inputs(
            attrs, [(7, 2, 3)] + [None] * (3 if mode == "lstm" else 2)), [np.float32] *
            (4 if mode == "lstm" else 3))
        assert shapes[0] == (7, 2, 8) and shapes[1] == (6, 2, 4)
        assert len(shapes) == (3 if mode == "lstm" else 2)
    attrs = op.parse(dict(mode="lstm", state_size=5, num_layers=2, bidirectional=True,
                          projection_size=3))
    full = op.infer_inputs(attrs, [(4, 2, 7), None, None, None])
    assert full[1] == (psize("lstm", 7, 5, 2, 2, 3),) and full[2] == (4, 2, 3) and \
        full[3] == (4, 2, 5)


def test_public_functions(rng):
    ins = _make(rng, "lstm", 3, 2, 3, 4, 1, 1, dtype=np.float32)
    lens = np.array([3, 1], np.float32)
    kw = dict(mode="lstm", state_size=4, num_layers=1, state_outputs=True,
              use_sequence_length=True)
    ref = reference(*ins, lens, **kw)
    for fn in (mx.nd.RNN, mx.nd._npx_rnn):
        got = fn(*[_nd(a) for a in ins + [lens]], **kw)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g.asnumpy(), r, rtol=1e-5, atol=1e-6)


def test_dropout_between_layers(rng):
    ins = _make(rng, "gru", 3, 2, 3, 4, 2, 1, dtype=np.float32)
    kw = dict(mode="gru", state_size=4, num_layers=2)
    # outside training, p changes nothing
    np.testing.assert_allclose(rnn(*ins, p=0.5, **kw)[0].asnumpy(), rnn(*ins, **kw)[0].asnumpy())
    if not hasattr(mx.nd, "Dropout"):
        pytest.skip("the Dropout operator is not registered yet")
    with mx.autograd.train_mode():
        a = rnn(*ins, p=0.5, **kw)[0].asnumpy()
    assert a.shape == (3, 2, 4) and np.all(np.isfinite(a))


def test_errors(rng):
    ins = _make(rng, "gru", 3, 2, 3, 4, 1, 1, dtype=np.float32)
    kw = dict(mode="gru", state_size=4, num_layers=1)
    with pytest.raises(ValueError, match=r"RNN: parameters must have shape \(108,\)"):
        rnn(ins[0], ins[1][:-1], ins[2], **kw)
    with pytest.raises(ValueError, match="RNN: state must have shape"):
        rnn(ins[0], ins[1], ins[2][:, :1], **kw)
    with pytest.raises(ValueError, match="RNN: expected 4 inputs"):
        rnn(*ins, **dict(kw, mode="lstm"))
    with pytest.raises(ValueError, match="RNN: data must be 3-D"):
        rnn(ins[0][0], ins[1], ins[2], **kw)
    with pytest.raises(ValueError, match="projection_size is only supported for mode='lstm'"):
        rnn(*ins, projection_size=2, **kw)
    with pytest.raises(ValueError, match="must be given together"):
        rnn(*_make(rng, "lstm", 3, 2, 3, 4, 1, 1), mode="lstm", state_size=4, num_layers=1,
            lstm_state_clip_min=-1.0)
    with pytest.raises(ValueError, match="mode"):
        rnn(*ins, mode="elman", state_size=4, num_layers=1)
    with pytest.raises(ValueError, match="RNN: data must be float16, float32 or float64"):
        rnn(ins[0].astype(np.int32), ins[1].astype(np.int32), ins[2].astype(np.int32), **kw)
    with pytest.raises(ValueError, match="RNN: state has dtype float64"):
        rnn(ins[0], ins[1], ins[2].astype(np.float64), **kw)


# ---- the fused gate steps (_rnn_lstm_cell, _rnn_gru_cell and their backward kernels) ----------
def _sig(x):
    return 1 / (1 + np.exp(-x))


def lstm_cell_ref(gates, c, lo=None, hi=None):
    gi, gf, gg, go = np.split(gates, 4, axis=1)
    cn = _sig(gf) * c + _sig(gi) * np.tanh(gg)
    if lo is not None:
        cn = np.clip(cn, lo, hi)
    return _sig(go) * np.tanh(cn), cn


def gru_cell_ref(xs, hh, h):
    xr, xz, xn = np.split(xs, 3, axis=1)
    hr, hz, hn = np.split(hh, 3, axis=1)
    r, z = _sig(xr + hr), _sig(xz + hz)
    n = np.tanh(xn + r * hn)
    return n + z * (h - n)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_lstm_and_gru_cells_forward(dtype):
    from .oputil import check_forward
    rng = np.random.default_rng(3)
    N, H = 3, 5
    g, c = rng.standard_normal((N, 4 * H)).astype(dtype), rng.standard_normal((N, H)).astype(dtype)
    ref = [r.astype(dtype) for r in lstm_cell_ref(g.astype(np.float64), c.astype(np.float64))]
    check_forward("_rnn_lstm_cell", [g, c], {}, ref)
    ref = [r.astype(dtype) for r in lstm_cell_ref(g.astype(np.float64), c.astype(np.float64),
                                                   -0.3, 0.4)]
    check_forward("_rnn_lstm_cell", [g, c], {"clip_min": -0.3, "clip_max": 0.4}, ref)
    xs, hh = (rng.standard_normal((N, 3 * H)).astype(dtype) for _ in range(2))
    ref = gru_cell_ref(*(a.astype(np.float64) for a in (xs, hh, c))).astype(dtype)
    check_forward("_rnn_gru_cell", [xs, hh, c], {}, ref)


def test_lstm_and_gru_cells_gradients():
    from .oputil import check_grad
    rng = np.random.default_rng(4)
    N, H = 2, 3
    g, c = rng.standard_normal((N, 4 * H)), rng.standard_normal((N, H))
    check_grad("_rnn_lstm_cell", [g, c], {}, rng)
    # clipped: bounds away from the values, so central differences do not straddle a kink
    _, cn = lstm_cell_ref(g, c)
    lo, hi = np.sort(cn.ravel())[[1, -2]] + np.array([0.01, -0.01])
    check_grad("_rnn_lstm_cell", [g, c], {"clip_min": float(lo), "clip_max": float(hi)}, rng)
    xs, hh = rng.standard_normal((N, 3 * H)), rng.standard_normal((N, 3 * H))
    check_grad("_rnn_gru_cell", [xs, hh, c], {}, rng)


def _lstm_cell_bwd_ref(gates, c, dh, dc, lo=None, hi=None):
    gi, gf, gg, go = np.split(gates, 4, axis=1)
    i, f, g, o = _sig(gi), _sig(gf), np.tanh(gg), _sig(go)
    raw = f * c + i * g
    tc = np.tanh(raw if lo is None else np.clip(raw, lo, hi))
    d = dc + dh * o * (1 - tc * tc)
    if lo is not None:      # the clip passes the gradient where lo <= raw <= hi
        d = np.where((raw >= lo) & (raw <= hi), d, 0.0)
    da = np.concatenate([d * g * i * (1 - i), d * c * f * (1 - f), d * i * (1 - g * g),
                         dh * tc * o * (1 - o)], axis=1)
    return da, d * f


def _gru_cell_bwd_ref(xs, hh, h, dh):
    xr, xz, xn = np.split(xs, 3, axis=1)
    hr, hz, hn = np.split(hh, 3, axis=1)
    r, z = _sig(xr + hr), _sig(xz + hz)
    n = np.tanh(xn + r * hn)
    dn = dh * (1 - z) * (1 - n * n)
    dr, dz = dn * hn * r * (1 - r), dh * (h - n) * z * (1 - z)
    return (np.concatenate([dr, dz, dn], axis=1), np.concatenate([dr, dz, dn * r], axis=1),
            dh * z)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cells_on_many_units_split_mid_row(dtype):
    """37 x 301 units: enough for the kernels' threads, whose ranges start inside a row, and
    rows whose vectorised loops end in a remainder; forward and backward against numpy"""
    rng = np.random.default_rng(5)
    N, H = 37, 301
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    g = rng.standard_normal((N, 4 * H)) * 2
    c, dh, dc = (rng.standard_normal((N, H)) for _ in range(3))
    g, c, dh, dc = (a.astype(dtype) for a in (g, c, dh, dc))
    ga, ca = mx.nd.array(g, dtype=dtype), mx.nd.array(c, dtype=dtype)
    ga.attach_grad()
    ca.attach_grad()
    with mx.autograd.record():
        h, cn = mx.nd._rnn_lstm_cell(ga, ca)
    mx.autograd.backward([h, cn], [mx.nd.array(dh, dtype=dtype), mx.nd.array(dc, dtype=dtype)])
    g64, c64, dh64, dc64 = (a.astype(np.float64) for a in (g, c, dh, dc))
    for got, want in zip((h, cn), lstm_cell_ref(g64, c64)):
        np.testing.assert_allclose(got.asnumpy(), want, **tol)
    for got, want in zip((ga.grad, ca.grad), _lstm_cell_bwd_ref(g64, c64, dh64, dc64)):
        np.testing.assert_allclose(got.asnumpy(), want, **tol)
    xs, hh = (rng.standard_normal((N, 3 * H)).astype(dtype) for _ in range(2))
    arrs = [mx.nd.array(a, dtype=dtype) for a in (xs, hh, c)]
    for a in arrs:
        a.attach_grad()
    with mx.autograd.record():
        hn = mx.nd._rnn_gru_cell(*arrs)
    hn.backward(mx.nd.array(dh, dtype=dtype))
    xs64, hh64 = xs.astype(np.float64), hh.astype(np.float64)
    np.testing.assert_allclose(hn.asnumpy(), gru_cell_ref(xs64, hh64, c64), **tol)
    for a, want in zip(arrs, _gru_cell_bwd_ref(xs64, hh64, c64, dh64)):
        np.testing.assert_allclose(a.grad.asnumpy(), want, **tol)


def _lstm_layer_ref(xp, wh, h0, c0, reverse, dout, dcT, lo=None, hi=None):
    """an LSTM layer's recurrence step by step in numpy, and its gradients by the chain rule"""
    T = xp.shape[0]
    order = list(range(T - 1, -1, -1)) if reverse else list(range(T))
    out, gates, cprev, hprev = np.zeros(xp.shape[:2] + h0.shape[1:]), {}, {}, {}
    h, c = h0, c0
    for t in order:
        gates[t], cprev[t], hprev[t] = xp[t] + h @ wh.T, c, h
        h, c = lstm_cell_ref(gates[t], c, lo, hi)
        out[t] = h
    cT = c
    dxp, dwh, dh_next, dc = np.zeros_like(xp), np.zeros_like(wh), np.zeros_like(h0), dcT
    for t in reversed(order):
        da, dc = _lstm_cell_bwd_ref(gates[t], cprev[t], dout[t] + dh_next, dc, lo, hi)
        dxp[t] = da
        dwh += da.T @ hprev[t]
        dh_next = da @ wh
    return out, cT, dxp, dwh, dh_next, dc


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("T", [1, 2, 6])
def test_lstm_layer_against_numpy(reverse, T):
    """_rnn_lstm_layer (the RNN operator's LSTM recurrence, one GEMM for W_h's gradient): outputs
    and the gradients of xp, W_h, h0 and c0, float64, with and without the cell clip"""
    rng = np.random.default_rng(6)
    N, H = 3, 5
    xp = rng.standard_normal((T, N, 4 * H))
    wh = rng.standard_normal((4 * H, H)) * 0.5
    h0, c0, dcT = (rng.standard_normal((N, H)) for _ in range(3))
    dout = rng.standard_normal((T, N, H))
    for clip in ({}, {"clip_min": -0.5, "clip_max": 0.6}):
        arrs = [mx.nd.array(a, dtype="float64") for a in (xp, wh, h0, c0)]
        for a in arrs:
            a.attach_grad()
        with mx.autograd.record():
            out, cT = mx.nd._rnn_lstm_layer(*arrs, reverse=reverse, **clip)
        mx.autograd.backward([out, cT], [mx.nd.array(dout, dtype="float64"),
                                         mx.nd.array(dcT, dtype="float64")])
        ref = _lstm_layer_ref(xp, wh, h0, c0, reverse, dout, dcT, clip.get("clip_min"),
                              clip.get("clip_max"))
        got = [out, cT] + [a.grad for a in arrs]
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g.asnumpy(), r, rtol=1e-10, atol=1e-12)


def test_lstm_layer_refuses_bad_shapes_and_second_order():
    x, w, s = mx.nd.ones((2, 3, 8)), mx.nd.ones((8, 2)), mx.nd.ones((3, 2))
    with pytest.raises((ValueError, MXNetError), match="_rnn_lstm_layer: input shapes"):
        mx.nd._rnn_lstm_layer(x, mx.nd.ones((8, 3)), s, s)
    with pytest.raises((ValueError, MXNetError), match="_rnn_lstm_layer: inputs must share"):
        mx.nd._rnn_lstm_layer(x, w.astype("float64"), s, s)
    with pytest.raises((ValueError, MXNetError), match="_backward_rnn_lstm_layer: input shapes"):
        mx.nd._backward_rnn_lstm_layer(mx.nd.ones((2, 3, 2)), s, w, s, s, mx.nd.ones((2, 3, 2)),
                                       mx.nd.ones((2, 3, 8)), mx.nd.ones((2, 3, 3)))
    x.attach_grad()
    with mx.autograd.record():
        out, _ = mx.nd._rnn_lstm_layer(x, w, s, s)
        d = mx.autograd.grad(out.sum(), [x], create_graph=True)[0]
        total = d.sum()
    with pytest.raises(MXNetError, match="second-order"):
        total.backward()


def test_cells_refuse_bad_shapes_and_second_order():
    g = mx.nd.ones((2, 8))
    with pytest.raises((ValueError, MXNetError), match="_rnn_lstm_cell"):
        mx.nd._rnn_lstm_cell(g, mx.nd.ones((2, 3)))
    with pytest.raises((ValueError, MXNetError), match="_rnn_gru_cell"):
        mx.nd._rnn_gru_cell(mx.nd.ones((2, 6)), mx.nd.ones((2, 9)), mx.nd.ones((2, 2)))
    x = mx.nd.ones((2, 8))
    x.attach_grad()
    with mx.autograd.record():
        h, cn = mx.nd._rnn_lstm_cell(x, mx.nd.ones((2, 2)))
        d = mx.autograd.grad(h.sum(), [x], create_graph=True)[0]
        s = d.sum()
    with pytest.raises(MXNetError, match="second-order"):
        s.backward()
