"""Make golden.json: the output dtypes MXNet 1.9.1's ``Symbol.infer_type`` gives a set of
operators (tests/symbol/test_infer_dtype_table.py checks mxc against it).

Run with real MXNet: /work/mxnet-oracle/bin/python tests/data/infer_dtype/make_golden.py
Each case is a symbol expression over variables a, b, c (``mx`` is the package) and the
dtypes given to them; MXNet's answer is the list of output dtype names (or the error).
"""
import json
import os

import mxnet as mx
import numpy as np

F32, F16, F64, I32, I64, U8, I8 = "float32", "float16", "float64", "int32", "int64", "uint8", "int8"
CASES = [
    ("mx.sym.where(c, a, b)", {"c": I32, "a": F32, "b": F32}),
    ("mx.sym.where(c, a, b)", {"c": F32, "a": F16, "b": F16}),
    ("mx.sym.where(c, a, b)", {"c": U8, "a": I64, "b": I64}),
    ("mx.sym.shape_array(a)", {"a": F32}),
    ("mx.sym.shape_array(a)", {"a": F16}),
    ("mx.sym.size_array(a)", {"a": F32}),
    ("mx.sym.size_array(a)", {"a": I32}),
    ("mx.sym.argmax(a, axis=0)", {"a": F16}),
    ("mx.sym.argmax(a, axis=0)", {"a": I32}),
    ("mx.sym.argmin(a, axis=0)", {"a": F64}),
    ("mx.sym.argmax_channel(a)", {"a": F16}),
    ("mx.sym.argsort(a)", {"a": F16}),
    ("mx.sym.argsort(a, dtype='int64')", {"a": F32}),
    ("mx.sym.topk(a, k=2)", {"a": F16}),
    ("mx.sym.topk(a, k=2, ret_typ='both')", {"a": F64}),
    ("mx.sym.topk(a, k=2, ret_typ='value')", {"a": F16}),
    ("mx.sym.topk(a, k=2, dtype='int32')", {"a": F32}),
    ("mx.sym.sort(a)", {"a": I32}),
    ("mx.sym.one_hot(a, depth=4)", {"a": I32}),
    ("mx.sym.one_hot(a, depth=4, dtype='int64')", {"a": F32}),
    ("mx.sym.Cast(a, dtype='int8')", {"a": F32}),
    ("mx.sym.sum(a)", {"a": I32}),
    ("mx.sym.mean(a)", {"a": I32}),
    ("mx.sym.prod(a)", {"a": F16}),
    ("mx.sym.norm(a)", {"a": F16}),
    ("mx.sym.dot(a, b)", {"a": F16, "b": F16}),
    ("mx.sym.batch_dot(a, b)", {"a": F64, "b": F64}),
    ("mx.sym.broadcast_equal(a, b)", {"a": I32, "b": I32}),
    ("mx.sym.broadcast_logical_and(a, b)", {"a": F16, "b": F16}),
    ("mx.sym.broadcast_add(a, b)", {"a": U8, "b": U8}),
    ("mx.sym.elemwise_add(a, b)", {"a": I64, "b": I64}),
    ("mx.sym.sign(a)", {"a": I32}),
    ("mx.sym.round(a)", {"a": F16}),
    ("mx.sym.sqrt(a)", {"a": F64}),
    ("mx.sym.relu(a)", {"a": I32}),
    ("mx.sym.softmax(a)", {"a": F16}),
    ("mx.sym.softmax(a, dtype='float32')", {"a": F16}),
    ("mx.sym.log_softmax(a)", {"a": F64}),
    ("mx.sym.zeros_like(a)", {"a": I8}),
    ("mx.sym.ones_like(a)", {"a": F16}),
    ("mx.sym.take(a, b)", {"a": F16, "b": I32}),
    ("mx.sym.pick(a, b)", {"a": F64, "b": F64}),
    ("mx.sym.gather_nd(a, b)", {"a": F16, "b": I32}),
    ("mx.sym.Embedding(a, b, input_dim=5, output_dim=3)", {"a": F32, "b": F16}),
    ("mx.sym.FullyConnected(a, b, num_hidden=3, no_bias=True)", {"a": F16, "b": F16}),
    ("mx.sym.Concat(a, b)", {"a": I32, "b": I32}),
    ("mx.sym.stack(a, b)", {"a": U8, "b": U8}),
    ("mx.sym.reshape(a, shape=(-1,))", {"a": I64}),
    ("mx.sym.transpose(a)", {"a": F16}),
    ("mx.sym.tile(a, reps=(2,))", {"a": I8}),
    ("mx.sym.clip(a, 0, 1)", {"a": I32}),
    ("mx.sym.SequenceMask(a)", {"a": F16}),
    ("mx.sym.L2Normalization(a)", {"a": F64}),
    ("mx.sym.LayerNorm(a, b, c)", {"a": F16, "b": F16, "c": F16}),
    ("mx.sym.amp_cast(a, dtype='float16')", {"a": F32}),
    ("mx.sym.square(a)", {"a": I32}),
    ("mx.sym.abs(a)", {"a": I8}),
    ("mx.sym.smooth_l1(a, scalar=1.0)", {"a": F16}),
    ("mx.sym.broadcast_to(a, shape=(2, 3))", {"a": U8}),
    ("mx.sym.diag(a)", {"a": I64}),
    ("mx.sym.flip(a, axis=0)", {"a": F16}),
    ("mx.sym.max(a)", {"a": U8}),
    ("mx.sym.contrib.boolean_mask(a, b)", {"a": F16, "b": I32}),
    ("mx.sym.contrib.index_copy(a, b, c)", {"a": F64, "b": I64, "c": F64}),
    ("mx.sym.contrib.arange_like(a)", {"a": F16}),
    ("mx.sym.histogram(a, bins=4, range=(0, 1))", {"a": F32}),
    ("mx.sym.random.uniform_like(a)", {"a": F16}),
    ("mx.sym.sample_multinomial(a)", {"a": F32}),
    ("mx.sym.sample_multinomial(a, dtype='float16')", {"a": F32}),
]


def main():
    out = []
    for case in CASES:
        if case is None:
            continue
        expr, dtypes = case
        a, b, c = (mx.sym.Variable(n) for n in "abc")
        sym = eval(expr, {"mx": mx, "a": a, "b": b, "c": c})
        given = {k: np.dtype(v) for k, v in dtypes.items() if k in sym.list_arguments()}
        try:
            _, outs, _ = sym.infer_type(**given)
            got = [np.dtype(t).name for t in outs] if outs is not None else None
        except mx.base.MXNetError as e:
            got = "error: " + str(e).splitlines()[0][:200]
        out.append({"expr": expr, "dtypes": dtypes, "outputs": got})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": out}, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
