"""Pointwise chains on the GPU as ONE generated CUDA kernel (MXNet 1.6+'s pointwise fusion).

A bound executor or static CachedOp records its GPU steps' calls once (mxc/ops/_gpu.py
``record_calls``); runs of consecutive pointwise calls over one element count are found by the
same rule the CPU's tiled chains use (``handle.find_runs``, pointwise kernels per
``ops._fusion.is_pointwise``) and each run becomes a ``FusedChain``: a kernel generated from the
chain's signature (operators, dtype, which value each call reads) that loads every input
element once, applies the calls in registers with the functors the per-operator kernels of
elemwise.cu apply (``apply1``/``apply2`` of elemwise_ops.cuh, the scalar cast to the dtype
first, clip as mxc_clip), and stores every array the calls write. Each intermediate is held in
the storage type between calls, as the unfused kernels store it, so the results are bit for
bit the unfused ones. The source is made once per signature (scalars are kernel arguments, so
they do not make new sources) and compiled through the loader (``generated_kernel``: in memory
per device, on disk by CuPy's cache); the chain is one packed launch on the engine's stream in
place of its calls' launches. ``MXNET_USE_FUSION=0`` turns it off (the executor does not ask).

Supported: the elemwise family's unary, binary (equal element counts), scalar/rscalar and clip
kernels, and activation.cu's Activation and LeakyReLU (leaky, elu, selu, gelu) forward and
backward kernels, on one dtype (bfloat16: the elemwise kernels only, as activation.cu has no
bfloat16 instances); anything else (prelu, rrelu, cast, broadcasting) ends a chain.
"""
import hashlib

import numpy as np

from .. import _fusion, registry
from ._launch import BLOCK, CTYPE, DTYPES, grid_for, instantiations

_SOURCES = {}        # signature -> (kernel name, source text)
# bfloat16 (ml_dtypes' arrays) too: its apply1/apply2 round the float result to nearest even
# after every operator, as its per-operator kernels do, so a chain held in __nv_bfloat16
# registers rounds at the same points and gives their bits
_DTYPES = DTYPES + ("bfloat16",)


def step_of(rec):
    """(kind, op, scalars) of a recorded GPU call the generator handles, else None. rec is
    ``_gpu.record_calls``'s (opname, attrs, inputs, outputs, family, kernel, iattr, fattr)."""
    _, _, inputs, outputs, family, kernel, _, fattr = rec
    if family not in ("elemwise", "activation") or kernel is None \
            or not _fusion.is_pointwise(family, kernel):
        return None
    if len(outputs) != 1:
        return None
    y = outputs[0]
    dt = np.dtype(y.dtype).name
    if dt not in _DTYPES:
        return None
    dev = (y._ctx.device_typeid, y._ctx.device_id)
    for a in inputs:
        if np.dtype(a.dtype).name != dt or (a._ctx.device_typeid, a._ctx.device_id) != dev:
            return None
    if dev[0] != 2:
        return None
    c = CTYPE[dt]
    kind, _, op = kernel.partition(":")
    sig = registry.declared_kernel(family, kernel)
    f = sig.floats_of(fattr) if sig is not None else None
    if family == "activation":
        return _activation_step(kind, op, c, len(inputs), f)
    names = instantiations("elemwise")
    if kind == "unary" and len(inputs) == 1:
        if op == "copy" or "mxc_unary<mxc::op_%s, %s>" % (op, c) in names:
            return ("unary", op, ())
    elif kind == "binary" and len(inputs) == 2:
        if "mxc_binary<mxc::op_%s, %s>" % (op, c) in names:
            return ("binary", op, ())
    elif kind in ("scalar", "rscalar") and len(inputs) == 1 and f is not None:
        if "mxc_scalar<mxc::op_%s, %s>" % (op, c) in names:
            return (kind, op, (float(f.scalar),))
    elif kernel == "clip" and len(inputs) == 1 and f is not None:
        return ("clip", "", (float(f.a_min), float(f.a_max)))
    return None


def _activation_step(kind, t, c, n_in, f):
    """activation.cu's kernels without a per-element parameter array (not prelu, rrelu):
    ("act_fwd"/"act_bwd", code, ()) or ("leaky_fwd"/"leaky_bwd", code, (slope,))."""
    from .activation import ACT_TYPES, LEAKY_TYPES
    if "mxc_activation<%s>" % c not in instantiations("activation"):
        return None
    if t in ACT_TYPES and (kind, n_in) in (("fwd", 1), ("bwd", 2), ("bwd", 3)):
        return ("act_" + kind, "%d%s" % (ACT_TYPES[t], "s" if t == "softsign" else ""), ())
    if t in ("xelu", "elu", "selu", "gelu") and (kind, n_in) in (("fwd", 1), ("bwd", 2)):
        slope = float(f.slope) if t in ("xelu", "elu") and f is not None else 0.0
        return ("leaky_" + kind, "%d%s" % (LEAKY_TYPES[t], "v" if t in ("elu", "selu") else ""),
                (slope,))
    return None


def _key(a):
    return (id(a._chunk), a._offset)


def signature(records):
    """(ctype, steps, inputs, outputs, scalars): what the generated kernel depends on. steps:
    (kind, op, argument values, result value); values are "x<k>" (input k, loaded once) or
    "v<j>" (call j's result, a register); outputs: (array, value) per array written (its last
    value); scalars: the floats passed as kernel arguments, in order."""
    val, ins, writes, steps, scalars = {}, [], {}, [], []
    ct = None
    for j, rec in enumerate(records):
        kind, op, params = step_of(rec)
        inputs, y = rec[2], rec[3][0]
        ct = CTYPE[np.dtype(y.dtype).name]
        args = []
        for a in inputs:
            k = _key(a)
            if k not in val:
                val[k] = "x%d" % len(ins)
                ins.append(a)
            args.append(val[k])
        first = len(scalars)
        scalars.extend(params)
        steps.append((kind, op, tuple(args), tuple(range(first, len(scalars)))))
        val[_key(y)] = "v%d" % j
        writes[_key(y)] = (y, "v%d" % j)
    return ct, tuple(steps), ins, list(writes.values()), scalars


def _expr(kind, op, args, sc):
    if kind == "unary":
        return args[0] if op == "copy" else "apply1(op_%s(), %s)" % (op, args[0])
    if kind == "binary":
        return "apply2(op_%s(), %s, %s)" % (op, args[0], args[1])
    if kind == "scalar":
        return "apply2(op_%s(), %s, c%d)" % (op, args[0], sc[0])
    if kind == "rscalar":
        return "apply2(op_%s(), c%d, %s)" % (op, sc[0], args[0])
    if kind == "clip":    # mxc_clip's arithmetic (elemwise_ops.cuh; bounds cast to the dtype)
        return "clip_value<T>(load(%s), load(c%d), load(c%d))" % (args[0], sc[0], sc[1])
    # activation.cu's kernels, op = the act code (+ "s": softsign's gradient reads the input
    # slot 1 as x; "v": elu/selu's gradient reads slot 1 as the output value too)
    code = op.rstrip("sv")
    if kind == "act_fwd":
        return "store<T>(act_fwd(%s, load(%s)))" % (code, args[0])
    if kind == "act_bwd":
        x = "load(%s)" % args[1] if op.endswith("s") else "(A)0"
        return "store<T>(act_bwd(%s, load(%s), load(%s), %s))" % (code, args[0], args[1], x)
    if kind == "leaky_fwd":
        return "store<T>(leaky_fwd(%s, load(%s), (A)s%d))" % (code, args[0], sc[0])
    y = "load(%s)" % args[1] if op.endswith("v") else "(A)0"
    return "store<T>(leaky_bwd(%s, load(%s), load(%s), %s, (A)s%d))" % (code, args[0], args[1],
                                                                        y, sc[0])


def source(ct, steps, n_in, outs, n_scalars):
    """(kernel name, CUDA C source) of a chain's signature, made once per signature."""
    key = (ct, steps, n_in, tuple(v for _, v in outs), n_scalars)
    hit = _SOURCES.get(key)
    if hit is not None:
        return hit
    params = (["const %s *p_x%d" % (ct, k) for k in range(n_in)]
              + ["%s *p_y%d" % (ct, k) for k in range(len(outs))] + ["i64 n"]
              + ["double s%d" % k for k in range(n_scalars)])
    ys = ["p_y%d" % k for k in range(len(outs))]
    ptrs = ["p_x%d" % k for k in range(n_in)] + ys

    def element(indent, load, store):
        """The chain on one element: load(k) gives input k, store(k, v) writes output k."""
        out = [indent + "const T x%d = %s;" % (k, load(k)) for k in range(n_in)]
        out += [indent + "const T v%d = %s;" % (j, _expr(kind, op, args, sc))
                for j, (kind, op, args, sc) in enumerate(steps)]
        out += [indent + store(k, v) for k, (_, v) in enumerate(outs)]
        return out

    scalar = ["for (i64 i = i0; i < n; i += nt) {"] + element(
        "  ", lambda k: "p_x%d[i]" % k, lambda k, v: "p_y%d[i] = %s;" % (k, v)) + ["}"]
    body = ["typedef %s T;" % ct, "typedef typename acc<T>::type A;", "(void)sizeof(A);"]
    body += ["const T c%d = from_double<T>(s%d);" % (k, k) for k in range(n_scalars)]
    body += ["const i64 t0 = global_tid(), nt = global_threads();",
             # as the per-operator kernels: vectors of up to 16 bytes where every pointer is
             # 16-byte aligned (the pool's blocks are), element by element after them
             "i64 i0 = t0;",
             "if (%s) {" % " && ".join("aligned16(%s)" % p for p in ptrs),
             "  constexpr int V = vec4<T>::N;",
             "  const i64 nv = n / V;",
             "  for (i64 j = t0; j < nv; j += nt) {"]
    body += ["    const vec4<T> X%d = reinterpret_cast<const vec4<T> *>(p_x%d)[j];" % (k, k)
             for k in range(n_in)]
    body += ["    vec4<T> %s;" % ", ".join("Y%d" % k for k in range(len(outs))),
             "#pragma unroll", "    for (int e = 0; e < V; ++e) {"]
    body += element("      ", lambda k: "X%d.v[e]" % k, lambda k, v: "Y%d.v[e] = %s;" % (k, v))
    body += ["    }"]
    body += ["    reinterpret_cast<vec4<T> *>(p_y%d)[j] = Y%d;" % (k, k) for k in range(len(outs))]
    body += ["  }", "  i0 = nv * V + t0;", "}"] + scalar
    body = ["  " + b if not b.startswith("#") else b for b in body]
    text = "(%s) {\n%s\n}\n" % (", ".join(params), "\n".join(body))
    name = "mxc_fused_" + hashlib.sha1(text.encode()).hexdigest()[:16]
    src = ('// generated by mxc/ops/cuda/fusion.py: a fused pointwise chain\n'
           '#include "mxc/common.cuh"\n#include "mxc/elemwise_ops.cuh"\n'
           '#include "mxc/activation_ops.cuh"\nusing namespace mxc;\n'
           'extern "C" __global__ void ' + name + text)
    _SOURCES[key] = (name, src)
    return name, src


def chain_launch(records):
    """The launch of a chain of recorded calls (each ``step_of`` not None, over one element
    count): (kernel name, source, inputs, outputs, (kind, value) args, grid, block)."""
    ct, steps, ins, outs, scalars = signature(records)
    name, src = source(ct, steps, len(ins), outs, len(scalars))
    n = int(np.prod(records[0][3][0].shape))
    args = ([("in", k) for k in range(len(ins))] + [("out", k) for k in range(len(outs))]
            + [("i64", n)] + [("f64", s) for s in scalars])
    return name, src, ins, [a for a, _ in outs], args, grid_for(n), (BLOCK,)


class FusedChain:
    """A chain of pointwise GPU calls run as one launch (an executor's segment: ``run()``)."""

    def __init__(self, records, label):
        from . import loader
        from ..._core import cuda
        name, src, self.inputs, self.outputs, args, grid, block = chain_launch(records)
        dev = self.outputs[0]._ctx.device_id
        self.name, self.source, self.ncalls = name, src, len(records)
        self.packed = cuda.pack_launch(loader.generated_kernel(name, src, dev), grid, block, 0,
                                       args, len(self.inputs), len(self.outputs), label, dev)

    def run(self, priority=0):
        from ..._core import cuda
        cuda.push_packed(self.packed, self.inputs, self.outputs)
