"""``_contrib_hawkesll``: the log likelihood of K independent univariate Hawkes processes with
exponential kernels, for a batch of ragged sequences of points, and its gradient in the
background intensity, branching ratio and decay (MXNet 1.9.1's operator, src/operator/contrib/
hawkes_ll-inl.h; the loops: csrc/kernels/contrib_hawkesll.h).

Inputs: lda (N, K), alpha (K,), beta (K,), state (N, K), lags (N, T), marks (N, T) int32,
valid_length (N,), max_time (N,); outputs: the log likelihood (N,) and the state at max_time
(N, K). As MXNet, the gradient flows from the log likelihood only, into lda, alpha and beta
(the state gets zeros; lags, marks, lengths and times none)."""
import numpy as np

from .registry import OpDef, register, kernel_forward

_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check(op, shapes, dtypes):
    mu, alpha, beta, state, lags, marks, vlen, tmax = (tuple(s) for s in shapes)
    if len(lags) != 2 or len(mu) != 2:
        raise ValueError(f"{op}: lags must be (N, T) and lda (N, K), got {lags} and {mu}")
    (n, t), k = lags, mu[1]
    want = {"lda": (n, k), "alpha": (k,), "beta": (k,), "state": (n, k), "marks": (n, t),
            "valid_length": (n,), "max_time": (n,)}
    for name, s in zip(_INPUTS, (mu, alpha, beta, state, lags, marks, vlen, tmax)):
        if name in want and s != want[name]:
            raise ValueError(f"{op}: {name} has shape {s}, expected {want[name]} "
                             f"(N={n} samples, T={t} points, K={k} marks)")
    dt = np.dtype(dtypes[0])
    if dt not in _FLOATS:
        raise ValueError(f"{op}: lda must be float32 or float64, got {dt.name}")
    for name, d in zip(_INPUTS, dtypes):
        want_dt = np.dtype(np.int32) if name == "marks" else dt
        if np.dtype(d) != want_dt:
            raise ValueError(f"{op}: {name} must be {want_dt.name} (lda's dtype; marks int32), "
                             f"got {np.dtype(d).name}")
    return n, k, dt


def _infer(a, shapes, dtypes):
    n, k, dt = _check("_contrib_hawkesll", shapes, dtypes)
    return [(n,), (n, k)], [dt, dt]


def _grad(F, a, inputs, outputs, out_grads):
    dmu, dalpha, dbeta = F._contrib_backward_hawkesll(out_grads[0], *inputs)
    return [dmu, dalpha, dbeta, F.zeros_like(inputs[3])] + [None] * 4


register(OpDef("_contrib_hawkesll", inputs=_INPUTS, num_outputs=2,
               output_names=("output", "out_state"), infer=_infer,
               forward=kernel_forward("contrib_hawkesll", "hawkesll:forward", ints=(), floats=(),
                                      name="_contrib_hawkesll"),
               grad=_grad,
               doc="Log likelihood of a batch of marked point sequences under K independent "
                   "Hawkes processes (MXNet's contrib.hawkesll)."))


def _bwd_infer(a, shapes, dtypes):
    n, k, dt = _check("_contrib_backward_hawkesll", shapes[1:], dtypes[1:])
    if tuple(shapes[0]) != (n,):
        raise ValueError(f"_contrib_backward_hawkesll: the output gradient has shape "
                         f"{tuple(shapes[0])}, expected ({n},)")
    return [(n, k), (k,), (k,)], [dt] * 3


register(OpDef("_contrib_backward_hawkesll", inputs=("ograd",) + _INPUTS, num_outputs=3,
               infer=_bwd_infer,
               forward=kernel_forward("contrib_hawkesll", "hawkesll:backward", ints=(),
                                      floats=(), name="_contrib_backward_hawkesll",
                                      key=lambda a, i, o: i[1]._dcode),
               doc="Gradient of _contrib_hawkesll's log likelihood in lda, alpha and beta."))
