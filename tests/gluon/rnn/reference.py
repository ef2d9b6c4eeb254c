"""Numpy (float64) references of the recurrent equations, shared by the gluon.rnn and the
legacy mx.rnn tests. Weights use MXNet's layouts: i2h (G*H, in), h2h (G*H, H), gates stacked
LSTM i, f, c, o; GRU r, z, n."""
import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def rnn_step(mode, x, states, wi, wh, bi, bh):
    """One step of `mode` ('lstm', 'gru', 'rnn_tanh', 'rnn_relu'); returns (out, new states)."""
    x, wi, wh, bi, bh = (np.asarray(a, np.float64) for a in (x, wi, wh, bi, bh))
    h = np.asarray(states[0], np.float64)
    gi = x @ wi.T + bi
    gh = h @ wh.T + bh
    if mode == "lstm":
        c = np.asarray(states[1], np.float64)
        i, f, g, o = np.split(gi + gh, 4, axis=-1)
        c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h2 = sigmoid(o) * np.tanh(c2)
        return h2, [h2, c2]
    if mode == "gru":
        ir, iz, in_ = np.split(gi, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r = sigmoid(ir + hr)
        z = sigmoid(iz + hz)
        n = np.tanh(in_ + r * hn)
        h2 = (1 - z) * n + z * h
        return h2, [h2]
    pre = gi + gh
    h2 = np.tanh(pre) if mode == "rnn_tanh" else np.maximum(pre, 0)
    return h2, [h2]


def run_cell(mode, xs, states, wi, wh, bi, bh):
    """Unroll one cell over xs (T, N, I); returns (outputs (T, N, H), final states)."""
    outs = []
    for t in range(xs.shape[0]):
        out, states = rnn_step(mode, xs[t], states, wi, wh, bi, bh)
        outs.append(out)
    return np.stack(outs), states


def run_layer(mode, xs, states, params, num_layers, bidirectional):
    """A fused layer in TNC: params "l0_i2h_weight"... ; states [(L*D, N, H)] (+ cell for LSTM).
    Returns (output (T, N, D*H), [final states like `states`])."""
    dirs = ("l", "r") if bidirectional else ("l",)
    nd = len(dirs)
    finals = [np.zeros_like(np.asarray(s, np.float64)) for s in states]
    inp = np.asarray(xs, np.float64)
    for layer in range(num_layers):
        outs = []
        for k, d in enumerate(dirs):
            idx = layer * nd + k
            st = [np.asarray(s[idx], np.float64) for s in states]
            w = [params["%s%d_%s" % (d, layer, n)] for n in
                 ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]
            seq = inp if d == "l" else inp[::-1]
            o, st = run_cell(mode, seq, st, *w)
            outs.append(o if d == "l" else o[::-1])
            for f, s in zip(finals, st):
                f[idx] = s
        inp = np.concatenate(outs, axis=-1)
    return inp, finals
