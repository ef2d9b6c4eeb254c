"""Writes tests/data/indexing_golden.npz from real MXNet 1.9.1 (run with the oracle's python):
ordering, sequence, gather/scatter, Embedding and the extra shape operators.

For every case: the inputs, the parameters (JSON), MXNet's outputs and, for the cases that list
differentiable inputs, the gradients of sum(out0 * head) (autograd) with a fixed random head.
The mxc test (tests/ops/test_gather.py::test_golden and friends) replays each case."""
import json
import os

import numpy as np
import mxnet as mx

rng = np.random.default_rng(7)


def distinct(shape, dtype=np.float32):
    """Values without ties (ordering ops are then unambiguous)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) * 0.5 - n / 4).astype(dtype)


def normal(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


x34 = distinct((3, 4))
x234 = distinct((2, 3, 4))
img = normal((2, 3, 4, 5))
img5 = normal((1, 2, 3, 4, 5))

# (mxnet callable path, mxc op name, inputs, kwargs, indices of inputs to differentiate)
CASES = [
    ("sort", "sort", [x234], {"axis": -1}, [0]),  # the default axis cannot be recorded in MXNet
    ("sort", "sort", [x234], {"axis": 0, "is_ascend": False}, [0]),
    ("sort", "sort", [x234], {"axis": None}, []),     # MXNet cannot record axis=None
    ("argsort", "argsort", [x234], {"axis": 1}, []),
    ("argsort", "argsort", [x234], {"axis": None, "is_ascend": False, "dtype": "int64"}, []),
    ("topk", "topk", [x234], {"k": 2}, []),
    ("topk", "topk", [x234], {"k": 2, "axis": 1, "ret_typ": "value"}, [0]),
    ("topk", "topk", [x234], {"k": 3, "axis": 2, "ret_typ": "both", "is_ascend": True,
                              "dtype": "int32"}, [0]),
    ("topk", "topk", [x234], {"k": 2, "axis": 1, "ret_typ": "mask"}, []),
    ("topk", "topk", [x234], {"k": 5, "axis": None, "ret_typ": "value"}, []),
    ("topk", "topk", [distinct((2, 40))], {"k": 3, "ret_typ": "both"}, [0]),
    ("pick", "pick", [x34, np.array([0, 3, 7], np.float32)], {"axis": 1}, [0]),
    ("pick", "pick", [x34, np.array([-1, 5, 2, 1], np.float32)], {"axis": 0, "mode": "wrap",
                                                                   "keepdims": True}, [0]),
    ("pick", "pick", [x234, np.array([[0, 2, 1], [1, 1, 0]], np.int32)], {"axis": -1}, [0]),
    # MXNet's gradient does not wrap negative indices (it adds into the previous row): forward only
    ("gather_nd", "gather_nd", [x234, np.array([[0, 1, 1], [2, 0, -1]], np.int32)], {}, []),
    ("gather_nd", "gather_nd", [x234, np.array([[0, 1, 1, 0], [2, 0, 2, 2]], np.int32)], {}, [0]),
    ("gather_nd", "gather_nd", [x234, np.array([[1, 0, 1]], np.float32)], {}, [0]),
    ("scatter_nd", "scatter_nd", [normal((2, 4)), np.array([[0, 2], [1, 0]], np.int32)],
     {"shape": (3, 3, 4)}, [0]),
    ("scatter_nd", "scatter_nd", [normal((3,)), np.array([[0, 1, 2], [2, 0, 1]], np.int64)],
     {"shape": (3, 3)}, [0]),
    ("contrib.boolean_mask", "_contrib_boolean_mask", [x34, np.array([1, 0, 1], np.float32)], {}, [0]),
    ("contrib.boolean_mask", "_contrib_boolean_mask", [x234, np.array([0, 0], np.int32)], {}, []),
    ("ravel_multi_index", "_ravel_multi_index", [np.array([[1, 2, 0], [3, 1, 2]], np.float32)],
     {"shape": (3, 4)}, []),
    ("unravel_index", "_unravel_index", [np.array([7, 0, 11, 5], np.float32)], {"shape": (3, 4)}, []),
    ("_internal._histogram", "_histogram", [normal((50,))], {"bin_cnt": 5, "range": (-1.5, 2.0)}, []),
    ("_internal._histogram", "_histogram", [normal((50,)), np.array([-2, -0.5, 0, 0.3, 2.5], np.float32)],
     {}, []),
    ("argmax_channel", "argmax_channel", [x34], {}, []),
    ("Embedding", "Embedding", [np.array([[0, 3], [4, 1], [3, 3]], np.float32), normal((5, 3))],
     {"input_dim": 5, "output_dim": 3}, [1]),
    ("SequenceMask", "SequenceMask", [normal((4, 3, 2)), np.array([1, 4, 2], np.float32)],
     {"use_sequence_length": True, "value": -1.0}, [0]),
    ("SequenceMask", "SequenceMask", [normal((3, 4, 2)), np.array([1, 4, 2], np.float32)],
     {"use_sequence_length": True, "axis": 1}, [0]),
    ("SequenceLast", "SequenceLast", [normal((4, 3, 2)), np.array([1, 4, 2], np.float32)],
     {"use_sequence_length": True}, [0]),
    ("SequenceLast", "SequenceLast", [normal((3, 4, 2)), np.array([2, 1, 4], np.float32)],
     {"use_sequence_length": True, "axis": 1}, [0]),
    ("SequenceLast", "SequenceLast", [normal((4, 3))], {}, []),  # MXNet crashes recording it
    ("SequenceReverse", "SequenceReverse", [normal((4, 3, 2)), np.array([1, 4, 2], np.float32)],
     {"use_sequence_length": True}, [0]),
    ("SequenceReverse", "SequenceReverse", [normal((4, 3, 2))], {}, [0]),
    ("slice_like", "slice_like", [x234, np.zeros((1, 2, 3), np.float32)], {}, [0]),
    ("slice_like", "slice_like", [x234, np.zeros((1, 2, 3), np.float32)], {"axes": (0, -1)}, [0]),
    ("Crop", "Crop", [img], {"num_args": 1, "h_w": (2, 3), "offset": (1, 1)}, [0]),
    ("Crop", "Crop", [img, np.zeros((1, 1, 3, 2), np.float32)], {"num_args": 2, "center_crop": True}, [0]),
    ("Pad", "Pad", [img], {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 0, 1),
                           "constant_value": 1.5}, [0]),
    ("pad", "pad", [img], {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 1, 3, 1)}, [0]),
    ("pad", "pad", [img], {"mode": "reflect", "pad_width": (0, 0, 0, 0, 2, 1, 3, 1)}, [0]),
    ("pad", "pad", [img5], {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 0, 0, 2, 1, 1)}, [0]),
    ("pad", "pad", [img5], {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 1, 2, 0, 1, 2)}, [0]),
    ("diag", "diag", [x34], {}, [0]),
    ("diag", "diag", [x34], {"k": -1}, [0]),
    ("diag", "diag", [normal((3,))], {"k": 2}, [0]),
    ("diag", "diag", [x234], {"k": 1, "axis1": 2, "axis2": 0}, [0]),
    ("space_to_depth", "space_to_depth", [normal((1, 2, 4, 6))], {"block_size": 2}, [0]),
    ("depth_to_space", "depth_to_space", [normal((1, 8, 2, 3))], {"block_size": 2}, [0]),
    ("shape_array", "shape_array", [x234], {}, []),
    ("size_array", "size_array", [x234], {}, []),
    ("zeros_like", "zeros_like", [x34], {}, []),
    ("ones_like", "ones_like", [x34], {}, []),
    ("add_n", "add_n", [x34, normal((3, 4)), normal((3, 4))], {}, [0, 1, 2]),
    ("ElementWiseSum", "ElementWiseSum", [x34, normal((3, 4))], {}, [0, 1]),
    ("reshape_like", "reshape_like", [x234, np.zeros((6, 4), np.float32)], {}, [0]),
    ("reshape_like", "reshape_like", [x234, np.zeros((2, 12), np.float32)],
     {"lhs_begin": 1, "rhs_begin": 1}, [0]),
]


def resolve(path):
    obj = mx.nd
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def main():
    out = {}
    meta = []
    for n, (mxname, name, inputs, kwargs, wrt) in enumerate(CASES):
        fn = resolve(mxname)
        arrs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
        for k in wrt:
            arrs[k].attach_grad()
        with mx.autograd.record():
            res = fn(*arrs, **kwargs)
        outs = res if isinstance(res, (list, tuple)) else [res]
        if wrt:
            head = rng.standard_normal(outs[0].shape).astype(np.float32)
            mx.autograd.backward([outs[0]], [mx.nd.array(head)])
            out[f"{n}/head"] = head
            for k in wrt:
                out[f"{n}/grad{k}"] = arrs[k].grad.asnumpy()
        for k, x in enumerate(inputs):
            out[f"{n}/in{k}"] = x
        for k, o in enumerate(outs):
            out[f"{n}/out{k}"] = o.asnumpy()
        kw = {k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()}
        meta.append({"op": name, "kwargs": kw, "nin": len(inputs), "nout": len(outs), "wrt": wrt})
    out["meta"] = np.array(json.dumps(meta))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "indexing_golden.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {len(CASES)} cases to {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
