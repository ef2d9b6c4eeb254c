"""Golden fixtures for the fused RNN operator and CTCLoss, from real MXNet 1.9.1.

Run with the oracle's interpreter (MXNet 1.9.1, numpy 1.23):
    /work/mxnet-oracle/bin/python tests/data/make_rnn_golden.py
Writes tests/data/rnn_golden.npz and tests/data/ctc_golden.npz next to this file. Each case is
stored under keys "<case>/<field>"; the case's parameters are a repr'd dict in "<case>/kwargs".
"""
import os

import numpy as np
import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))


def param_size(mode, I, H, L, D, P=None):
    g = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
    r = P if P else H
    n = 0
    for layer in range(L):
        ni = I if layer == 0 else r * D
        n += D * (g * H * ni + g * H * r + (P * H if P else 0) + 2 * g * H)
    return n


def rnn_cases():
    rng = np.random.RandomState(7)
    out = {}
    T, N, I, H = 4, 2, 3, 4
    for mode in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
        for L, bidir in ((1, False), (2, True)):
            D = 2 if bidir else 1
            name = f"{mode}_L{L}_D{D}"
            kw = dict(state_size=H, num_layers=L, bidirectional=bidir, mode=mode,
                      state_outputs=True)
            x = rng.uniform(-1, 1, (T, N, I)).astype(np.float32)
            p = rng.uniform(-0.5, 0.5, param_size(mode, I, H, L, D)).astype(np.float32)
            h0 = rng.uniform(-0.5, 0.5, (L * D, N, H)).astype(np.float32)
            ins = [x, p, h0]
            if mode == "lstm":
                ins.append(rng.uniform(-0.5, 0.5, (L * D, N, H)).astype(np.float32))
            nds = [mx.nd.array(a) for a in ins]
            for a in nds:
                a.attach_grad()
            with mx.autograd.record():
                res = mx.nd.RNN(*nds, **kw)
            heads = [rng.uniform(-1, 1, r.shape).astype(np.float32) for r in res]
            mx.autograd.backward(res, [mx.nd.array(h) for h in heads])
            case = {"kwargs": repr(kw)}
            for k, a in zip(("data", "parameters", "state", "state_cell"), ins):
                case[k] = a
            for k, r in zip(("out", "hy", "cy"), res):
                case[k] = r.asnumpy()
            for k, h in zip(("head_out", "head_hy", "head_cy"), heads):
                case[k] = h
            for k, a in zip(("grad_data", "grad_parameters", "grad_state", "grad_state_cell"),
                            nds):
                case[k] = a.grad.asnumpy()
            out[name] = case
    # LSTM with a projection (LSTMP): MXNet's CPU code runs it in inference only
    L, D, P = 2, 2, 3
    kw = dict(state_size=H, num_layers=L, bidirectional=True, mode="lstm", state_outputs=True,
              projection_size=P)
    x = rng.uniform(-1, 1, (T, N, I)).astype(np.float32)
    p = rng.uniform(-0.5, 0.5, param_size("lstm", I, H, L, D, P)).astype(np.float32)
    h0 = rng.uniform(-0.5, 0.5, (L * D, N, P)).astype(np.float32)
    c0 = rng.uniform(-0.5, 0.5, (L * D, N, H)).astype(np.float32)
    res = mx.nd.RNN(mx.nd.array(x), mx.nd.array(p), mx.nd.array(h0), mx.nd.array(c0), **kw)
    out["lstmp_L2_D2"] = {"kwargs": repr(kw), "data": x, "parameters": p, "state": h0,
                          "state_cell": c0, "out": res[0].asnumpy(), "hy": res[1].asnumpy(),
                          "cy": res[2].asnumpy()}
    # state_outputs=False: one output
    kw = dict(state_size=H, num_layers=1, mode="gru")
    x = rng.uniform(-1, 1, (T, N, I)).astype(np.float32)
    p = rng.uniform(-0.5, 0.5, param_size("gru", I, H, 1, 1)).astype(np.float32)
    h0 = rng.uniform(-0.5, 0.5, (1, N, H)).astype(np.float32)
    res = mx.nd.RNN(mx.nd.array(x), mx.nd.array(p), mx.nd.array(h0), **kw)
    out["gru_nostate"] = {"kwargs": repr(kw), "data": x, "parameters": p, "state": h0,
                          "out": res.asnumpy()}
    return out


def ctc_cases():
    rng = np.random.RandomState(11)
    out = {}
    T, N, A = 6, 3, 5
    specs = [
        ("first_padded", dict(), np.array([[1, 2, 0], [3, 3, 1], [4, 0, 0]], np.float32), None,
         None),
        ("last_padded", dict(blank_label="last"),
         np.array([[0, 1, -1], [2, 2, 3], [-1, -1, -1]], np.float32), None, None),
        ("lengths", dict(use_data_lengths=True, use_label_lengths=True),
         np.array([[1, 2, 3], [2, 2, 0], [4, 1, 2]], np.int32),
         np.array([6, 4, 5], np.float32), np.array([3, 2, 1], np.int32)),
        ("data_lengths_last", dict(use_data_lengths=True, blank_label="last"),
         np.array([[0, 3, -1], [1, -1, -1], [2, 2, 2]], np.float32),
         np.array([3, 2, 6], np.float32), None),
    ]
    for name, kw, label, dlen, llen in specs:
        x = rng.standard_normal((T, N, A)).astype(np.float32)
        d = mx.nd.array(x)
        d.attach_grad()
        ins = [d, mx.nd.array(label, dtype=label.dtype)]
        if dlen is not None:
            ins.append(mx.nd.array(dlen, dtype=dlen.dtype))
        if llen is not None:
            ins.append(mx.nd.array(llen, dtype=llen.dtype))
        head = rng.uniform(0.5, 1.5, (N,)).astype(np.float32)
        with mx.autograd.record():
            loss = mx.nd.CTCLoss(*ins, **kw)
        loss.backward(mx.nd.array(head))
        case = {"kwargs": repr(kw), "data": x, "label": label, "loss": loss.asnumpy(),
                "head": head, "grad_data": d.grad.asnumpy()}
        if dlen is not None:
            case["data_lengths"] = dlen
        if llen is not None:
            case["label_lengths"] = llen
        out[name] = case
    return out


def save(path, cases):
    flat = {f"{c}/{k}": v for c, fields in cases.items() for k, v in fields.items()}
    np.savez_compressed(path, **flat)
    print(path, os.path.getsize(path), "bytes,", len(cases), "cases")


if __name__ == "__main__":
    save(os.path.join(HERE, "rnn_golden.npz"), rnn_cases())
    save(os.path.join(HERE, "ctc_golden.npz"), ctc_cases())
