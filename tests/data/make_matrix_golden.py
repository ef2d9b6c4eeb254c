"""Write tests/data/matrix_golden.npz from real MXNet 1.9.1 (run with the oracle's python):
FullyConnected, dot, batch_dot, linalg_* and khatri_rao: inputs, parameters, outputs and the
input gradients from mx.autograd for a random head gradient.

    /work/mxnet-oracle/bin/python tests/data/make_matrix_golden.py

Keys: "<case>/op" (operator name), "<case>/kw" (JSON parameters), "<case>/in<i>", "<case>/head",
"<case>/out", "<case>/grad<i>" (absent when MXNet gives no gradient)."""
import json
import os

import mxnet as mx
import numpy as np

rng = np.random.RandomState(1234)


def spd(batch, n, dtype):
    s = rng.standard_normal(batch + (n, n))
    return (s @ np.swapaxes(s, -1, -2) + n * np.eye(n)).astype(dtype)


def lower_tri(batch, n, dtype):
    m = np.tril(rng.standard_normal(batch + (n, n)))
    idx = np.arange(n)
    m[..., idx, idx] = np.abs(m[..., idx, idx]) + 1.0
    return m.astype(dtype)


def r(*shape, dtype="float64"):
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    ("fc_flat", "FullyConnected", [r(4, 3, 2, dtype="float32"), r(5, 6, dtype="float32"),
                                   r(5, dtype="float32")], {"num_hidden": 5}, True),
    ("fc_noflat", "FullyConnected", [r(2, 3, 4), r(6, 4), r(6)],
     {"num_hidden": 6, "flatten": False}, True),
    ("fc_nobias", "FullyConnected", [r(3, 7), r(2, 7)], {"num_hidden": 2, "no_bias": True}, True),
    ("dot_2d", "dot", [r(3, 4), r(4, 5)], {}, True),
    ("dot_ta", "dot", [r(4, 3), r(4, 5)], {"transpose_a": True}, True),
    ("dot_tb", "dot", [r(3, 4), r(5, 4)], {"transpose_b": True}, True),
    ("dot_nd", "dot", [r(2, 3, 4), r(4, 2, 5)], {}, True),
    ("dot_nd_tatb", "dot", [r(4, 2, 3), r(5, 2, 4)], {"transpose_a": True, "transpose_b": True},
     True),
    ("dot_vec", "dot", [r(4), r(4)], {}, True),
    ("dot_vec_mat", "dot", [r(4), r(4, 3)], {}, True),
    ("dot_f32", "dot", [r(6, 5, dtype="float32"), r(5, 7, dtype="float32")], {}, True),
    ("batch_dot", "batch_dot", [r(3, 2, 4), r(3, 4, 5)], {}, True),
    ("batch_dot_tatb", "batch_dot", [r(3, 4, 2), r(3, 5, 4)],
     {"transpose_a": True, "transpose_b": True}, True),
    ("batch_dot_4d", "batch_dot", [r(2, 3, 2, 4), r(2, 3, 5, 4)], {"transpose_b": True}, True),
    ("gemm", "linalg_gemm", [r(2, 3, 4), r(2, 4, 5), r(2, 3, 5)],
     {"alpha": 1.5, "beta": 0.5}, True),
    ("gemm_t", "linalg_gemm", [r(4, 3), r(5, 4), r(3, 5)],
     {"transpose_a": True, "transpose_b": True, "alpha": -0.5, "beta": 2.0}, True),
    ("gemm_axis", "linalg_gemm", [r(3, 2, 4), r(4, 2, 5), r(3, 2, 5)], {"axis": 0}, True),
    ("gemm2", "linalg_gemm2", [r(2, 3, 4), r(2, 5, 4)], {"transpose_b": True, "alpha": 2.0},
     True),
    ("gemm2_axis", "linalg_gemm2", [r(2, 4, 3, 3), r(2, 4, 3, 5)],
     {"axis": 1, "transpose_a": True}, True),
    ("gemm2_f32", "linalg_gemm2", [r(3, 4, dtype="float32"), r(4, 2, dtype="float32")], {}, True),
    ("potrf", "linalg_potrf", [spd((2,), 4, "float64")], {}, True),
    ("potrf_upper", "linalg_potrf", [spd((), 3, "float64")], {"lower": False}, True),
    ("potri", "linalg_potri", [lower_tri((2,), 4, "float64")], {}, True),
    ("potri_upper", "linalg_potri", [np.swapaxes(lower_tri((), 3, "float64"), -1, -2).copy()],
     {"lower": False}, True),
    ("trsm", "linalg_trsm", [lower_tri((2,), 3, "float64"), r(2, 3, 4)], {"alpha": 2.0}, True),
    ("trsm_rt", "linalg_trsm", [lower_tri((), 4, "float64"), r(3, 4)],
     {"rightside": True, "transpose": True}, True),
    ("trsm_up", "linalg_trsm", [np.swapaxes(lower_tri((), 3, "float64"), -1, -2).copy(),
                                r(3, 2)], {"lower": False, "transpose": True}, True),
    ("trmm", "linalg_trmm", [lower_tri((2,), 3, "float64"), r(2, 3, 4)], {"alpha": -1.5}, True),
    ("trmm_rt", "linalg_trmm", [lower_tri((), 4, "float64"), r(3, 4)],
     {"rightside": True, "transpose": True}, True),
    ("trmm_up", "linalg_trmm", [np.swapaxes(lower_tri((), 3, "float64"), -1, -2).copy(),
                                r(2, 3)], {"lower": False, "rightside": True}, True),
    ("syrk", "linalg_syrk", [r(2, 3, 4)], {"alpha": 0.5}, True),
    ("syrk_t", "linalg_syrk", [r(3, 4)], {"transpose": True}, True),
    ("sumlogdiag", "linalg_sumlogdiag", [spd((2,), 3, "float64")], {}, True),
    ("sumlogdiag_2d", "linalg_sumlogdiag", [spd((), 4, "float32")], {}, True),
    ("khatri_rao", "khatri_rao", [r(2, 3), r(3, 3), r(2, 3)], {}, False),
    ("khatri_rao_1", "khatri_rao", [r(4, 2, dtype="float32")], {}, False),
]


def run(op, inputs, kw, grad):
    fn = getattr(mx.nd, op)
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    if not grad:
        out = fn(*xs, **kw)
        return out.asnumpy(), None, None
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = fn(*xs, **kw)
    head = rng.standard_normal(out.shape).astype(inputs[0].dtype)
    out.backward(mx.nd.array(head, dtype=head.dtype))
    return out.asnumpy(), head, [x.grad.asnumpy() for x in xs]


def main():
    data = {}
    for case, op, inputs, kw, grad in CASES:
        out, head, grads = run(op, inputs, kw, grad)
        data[f"{case}/op"] = np.array(op)
        data[f"{case}/kw"] = np.array(json.dumps(kw))
        for i, x in enumerate(inputs):
            data[f"{case}/in{i}"] = x
        data[f"{case}/out"] = out
        if grads is not None:
            data[f"{case}/head"] = head
            for i, g in enumerate(grads):
                data[f"{case}/grad{i}"] = g
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matrix_golden.npz")
    np.savez_compressed(path, **data)
    print(f"wrote {path}: {len(CASES)} cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
