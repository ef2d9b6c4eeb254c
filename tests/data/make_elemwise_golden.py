"""Write elemwise_golden.npz: outputs of real MXNet 1.9.1 for the elementwise kernels' tests.

Run with the oracle interpreter (MXNet 1.9.1, numpy 1.23):
    /work/mxnet-oracle/bin/python tests/data/make_elemwise_golden.py
Records (kind, op, dtype, parameter, a, b, out) are packed per (input dtype, output dtype) into
"<in>-><out>/{names,offsets,a,b,out}": names[i] = "<kind>|<op>|<param>" owns the slice
offsets[i]:offsets[i+1] of a, b (zeros where the op is unary) and out. `load` in the tests reads it.
Integer division by zero and INT_MIN / -1 are left out: MXNet dies of SIGFPE on them (the
kernels' answers for those are pinned in the tests instead).
"""
import os

import mxnet as mx
import numpy as np

UNARY = ("negative abs sign round rint ceil floor trunc fix square sqrt rsqrt cbrt exp expm1 log "
         "log10 log2 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh "
         "arctanh degrees radians sigmoid relu softsign erf gamma gammaln reciprocal "
         "logical_not").split()
BINARY = ("add sub mul div mod power maximum minimum hypot equal not_equal greater greater_equal "
          "lesser lesser_equal logical_and logical_or logical_xor").split()
BCAST = {"add": "broadcast_add", "sub": "broadcast_sub", "mul": "broadcast_mul",
         "div": "broadcast_div", "mod": "broadcast_mod", "power": "broadcast_power"}
SCALAR = {"add": "_plus_scalar", "sub": "_minus_scalar", "mul": "_mul_scalar",
          "div": "_div_scalar", "mod": "_mod_scalar", "power": "_power_scalar"}
RSCALAR = {"sub": "_rminus_scalar", "div": "_rdiv_scalar", "mod": "_rmod_scalar",
           "power": "_rpower_scalar"}
DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64"]
INTS = {"uint8", "int8", "int32", "int64"}


def unary_input(dt):
    if dt in INTS:
        info = np.iinfo(dt)
        v = [0, 1, 2, 3, 5, 7, 9, 10, 100, 127, info.max, info.min, -1, -2, -7, -100]
        return np.array([x for x in v if info.min <= x <= info.max], dtype=dt)
    v = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, 2.5, -2.5, 3.5, -3.5, 0.99, -0.99, 2.0, 7.3,
         -7.3, 100.0, -100.0, 1e-3, np.nan, np.inf, -np.inf]
    return np.array(v, dtype=dt)


def binary_inputs(dt):
    if dt in INTS:
        info = np.iinfo(dt)
        vals = [x for x in [0, 1, 2, 3, -1, -2, -3, 7, -7, 10, 100, info.max, info.min]
                if info.min <= x <= info.max]
        a, b = np.meshgrid(vals, vals)
        return a.ravel().astype(dt), b.ravel().astype(dt)
    vals = [0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -7.0, 0.4, 100.0, np.nan, np.inf, -np.inf]
    a, b = np.meshgrid(vals, vals)
    return a.ravel().astype(dt), b.ravel().astype(dt)


def nd(x, dt):
    return mx.nd.array(x, dtype=dt)


def main():
    out = {}
    for dt in DTYPES:
        x = unary_input(dt)
        for op in UNARY:
            out[f"unary|{op}|{dt}/a"] = x
            out[f"unary|{op}|{dt}/out"] = getattr(mx.nd, op)(nd(x, dt)).asnumpy()
        a, b = binary_inputs(dt)
        for op in BINARY:
            aa, bb = a, b
            if dt in INTS and op == "div":
                keep = (b != 0) & ~((a == np.iinfo(dt).min) & (b == -1))
                aa, bb = a[keep], b[keep]
            name = BCAST.get(op, "broadcast_" + op)
            out[f"binary|{op}|{dt}/a"] = aa
            out[f"binary|{op}|{dt}/b"] = bb
            out[f"binary|{op}|{dt}/out"] = getattr(mx.nd, name)(nd(aa, dt), nd(bb, dt)).asnumpy()
            for s in (2.5, -2.5, 0.4, 3.0, -1.0):
                for kind, table in (("scalar", SCALAR), ("rscalar", RSCALAR)):
                    if kind == "rscalar" and op not in RSCALAR:
                        continue
                    xa = aa[:13] if dt in INTS else aa[:12]
                    if dt in INTS and kind == "scalar" and op == "div" and int(s) == 0:
                        continue
                    if dt in INTS and kind == "rscalar" and op == "div":
                        xa = xa[xa != 0]
                        if int(s) == np.iinfo(dt).min:
                            xa = xa[xa != -1]
                    if dt in INTS and kind == "scalar" and op == "div" and int(s) == -1:
                        xa = xa[xa != np.iinfo(dt).min]
                    fn = getattr(mx.nd._internal, table.get(op, f"_{op}_scalar"))
                    key = f"{kind}|{op}|{dt}|{s}"
                    out[key + "/a"] = xa
                    out[key + "/out"] = fn(nd(xa, dt), scalar=s).asnumpy()
        c = unary_input(dt)
        for lo, hi in ((-2.5, 5.5), (0.0, 100.0), (-1e3, 1e3)):
            key = f"clip|clip|{dt}|{lo},{hi}"
            out[key + "/a"] = c
            out[key + "/out"] = mx.nd.clip(nd(c, dt), a_min=lo, a_max=hi).asnumpy()
    src = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 3e5, 300.0, -300.0, 255.9, -1.7, 1.7,
                    -0.9, 0.0, 127.5, -128.5, 65504.0, 1e-8], dtype=np.float64)
    for si in ["float16", "float32", "float64"]:
        x = src.astype(si)
        for do in DTYPES + ["bool"]:
            key = f"cast|cast|{si}|{do}"
            out[key + "/a"] = x
            out[key + "/out"] = mx.nd.cast(nd(x, si), dtype=do).asnumpy()
    groups = {}
    for key in sorted(k[:-2] for k in out if k.endswith("/a")):
        kind, op, dt = key.split("|")[:3]
        param = key.split("|")[3] if key.count("|") >= 3 else ""
        a, y = out[key + "/a"], out[key + "/out"]
        b = out.get(key + "/b", np.zeros_like(a))
        if kind == "cast":
            dt = param
            param = ""
        groups.setdefault((str(a.dtype), str(y.dtype)), []).append((f"{kind}|{op}|{param}", a, b, y))
    packed = {}
    for (di, do), recs in groups.items():
        g = f"{di}->{do}/"
        packed[g + "names"] = np.array([r[0] for r in recs])
        packed[g + "offsets"] = np.cumsum([0] + [len(r[1]) for r in recs]).astype(np.int64)
        packed[g + "a"] = np.concatenate([r[1] for r in recs])
        packed[g + "b"] = np.concatenate([r[2] for r in recs])
        packed[g + "out"] = np.concatenate([r[3] for r in recs])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elemwise_golden.npz")
    np.savez_compressed(path, **packed)
    print(path, sum(k.endswith("/a") for k in out), "records")


if __name__ == "__main__":
    main()
