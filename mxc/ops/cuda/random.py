"""Launches of the samplers and Dropout (ops/random.py, ops/dropout.py, csrc/kernels/random.h)
on the GPU: random.cu."""
from ._launch import FLOATS, TRAIN_FLOATS, CTYPE, ctype, nelem, launch


MULTINOMIAL_SAMPLES = ("uint8", "int32", "int64", "float16", "float32", "float64")


def instantiations():
    """Every name expression of random.cu."""
    out = ["mxc_random64<%d>" % d for d in range(3)]
    for dt in ("float32", "float16"):
        out += ["mxc_random32<%s, %d>" % (CTYPE[dt], d) for d in range(3)]
    out += ["mxc_randint32", "mxc_randint64"]
    for dt in FLOATS:
        out += ["mxc_random_reject<%s, %d>" % (CTYPE[dt], d) for d in range(4)]
        for st in MULTINOMIAL_SAMPLES:
            out += ["mxc_multinomial<%s, %s>" % (CTYPE[dt], CTYPE[st]),
                    "mxc_multinomial_grad<%s, %s>" % (CTYPE[dt], CTYPE[st])]
    out += ["mxc_dropout<%s>" % CTYPE[dt] for dt in TRAIN_FLOATS]
    return out


_FIXED_DISTS = {"uniform": 0, "normal": 1, "exponential": 2}
_REJECT_DISTS = {"gamma": 0, "poisson": 1, "negative_binomial": 2,
                 "generalized_negative_binomial": 3}


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """Slots: key, counter (+ low, high for randint); floats: the distribution's parameters
    in order (ops/random.py), dropout's pkeep. The
    _sample_* forms pass one or two parameter arrays as inputs instead: they are cast to double
    into the workspace first (the kernels read double parameters, as the CPU's)."""
    if kernel == "multinomial_backward" and len(inputs) == 3:
        g, p, smp = inputs                 # (grad of log p (N * M), p (N, K), samples (N * M))
        K = int(p.shape[-1]) if p.ndim else 1
        N = nelem(p) // K if K else 0
        M = nelem(smp) // N if N else 0
        return launch("random", "mxc_multinomial_grad<%s, %s>" % (ctype(p.dtype),
                                                                   ctype(smp.dtype)), N,
                       [("in", 0), ("in", 1), ("in", 2), ("out", 0), ("i64", N), ("i64", K),
                        ("i64", M)])
    key, base = int(iattr.key) & (2**64 - 1), int(iattr.counter) & (2**64 - 1)
    y = outputs[-1]
    n, c = nelem(y), ctype(y.dtype)
    if kernel == "dropout":
        if len(inputs) == 1 and len(outputs) == 2:
            xs = [("in", 0), ("out", 0), ("out", 1)]
        elif not inputs and len(outputs) == 1:
            xs = [("ptr", 0), ("ptr", 0), ("out", 0)]
        else:
            return None
        return launch("random", "mxc_dropout<%s>" % c, -(-n // 4),
                       xs + [("i64", n), ("u64", key), ("u64", base), ("f32", float(fattr.pkeep))])
    if kernel in _FIXED_DISTS or kernel in _REJECT_DISTS:
        launches, ws = [], 0
        pargs = [("ptr", 0), ("ptr", 0)]
        nbatch = 1
        if inputs:
            if len(inputs) > 2:
                return None
            np_ = nelem(inputs[0])
            if np_ < 1 or any(nelem(t) != np_ for t in inputs):
                return None
            nbatch = max(1, n // np_)
            for j, t in enumerate(inputs):
                launches.append(launch("elemwise", "mxc_cast<%s, double>" % ctype(t.dtype), np_,
                                        [("in", j), ("ws", ws), ("i64", np_)]))
                pargs[j] = ("ws", ws)
                ws += 8 * np_
        p = [float(v) for v in fattr] + [0.0, 0.0]          # by position: names vary
        args = [("out", 0), ("i64", n), ("u64", key), ("u64", base)] + pargs + \
            [("f64", p[0]), ("f64", p[1]), ("i64", nbatch)]
        if kernel in _REJECT_DISTS:
            gen = launch("random", "mxc_random_reject<%s, %d>" % (c, _REJECT_DISTS[kernel]), n,
                          args)
        elif c == "double":
            gen = launch("random", "mxc_random64<%d>" % _FIXED_DISTS[kernel], -(-n // 2), args)
        else:
            gen = launch("random", "mxc_random32<%s, %d>" % (c, _FIXED_DISTS[kernel]),
                          -(-n // 4), args)
        if not launches:
            return gen
        return {"launches": launches + [gen], "workspace": ws}
    if kernel == "multinomial" and len(inputs) == 1:
        p = inputs[0]
        K = int(p.shape[-1]) if p.ndim else 1
        N = nelem(p) // K if K else 0
        M = nelem(outputs[0]) // N if N else 0
        logp = ("out", 1) if len(outputs) > 1 else ("ptr", 0)
        return launch("random", "mxc_multinomial<%s, %s>" % (ctype(p.dtype),
                                                              ctype(outputs[0].dtype)), N * M,
                       [("in", 0), ("out", 0), logp, ("i64", N), ("i64", K), ("i64", M),
                        ("u64", key), ("u64", base)])
    if kernel == "randint":
        low, rng = int(iattr.low), (int(iattr.high) - int(iattr.low)) & (2**64 - 1)
        if c == "int":
            return launch("random", "mxc_randint32", -(-n // 4),
                           [("out", 0), ("i64", n), ("u64", key), ("u64", base), ("i64", low), ("u64", rng)])
        if c == "long long":
            return launch("random", "mxc_randint64", -(-n // 2),
                           [("out", 0), ("i64", n), ("u64", key), ("u64", base), ("i64", low), ("u64", rng)])
    return None


