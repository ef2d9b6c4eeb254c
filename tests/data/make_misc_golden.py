"""Golden fixtures for misc_ops, linalg_extra and spatial from real MXNet 1.9.1.

Run with the MXNet interpreter: /work/mxnet-oracle/bin/python tests/data/make_misc_golden.py
Writes tests/data/misc_golden.npz: for each case <c>, "<c>:op" (operator name), "<c>:kw" (JSON
keyword arguments), "<c>:in<i>" inputs, "<c>:out<i>" outputs, "<c>:head<i>" head gradients and
"<c>:grad<i>" input gradients (float inputs only) from mx.autograd.
"""
import json
import os

import numpy as np
import mxnet as mx

rng = np.random.default_rng(14)
CASES = {}


def case(name, op, inputs, kw, grad=True, fn=None):
    nd_in = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    floats = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    if grad:
        for i in floats:
            nd_in[i].attach_grad()
    call = fn or getattr(mx.nd, op)
    if grad:
        with mx.autograd.record():
            out = call(*nd_in, **kw)
    else:
        out = call(*nd_in, **kw)
    outs = out if isinstance(out, (list, tuple)) else [out]
    heads = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
    if grad:
        mx.autograd.backward(list(outs), [mx.nd.array(h, dtype=h.dtype) for h in heads])
    CASES[name + ":op"] = np.array(op)
    CASES[name + ":kw"] = np.array(json.dumps(kw))
    for i, x in enumerate(inputs):
        CASES[f"{name}:in{i}"] = x
    for i, (o, h) in enumerate(zip(outs, heads)):
        CASES[f"{name}:out{i}"] = o.asnumpy()
        CASES[f"{name}:head{i}"] = h
    if grad:
        for i in floats:
            CASES[f"{name}:grad{i}"] = nd_in[i].grad.asnumpy()


def f(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---- misc ----
case("hard_sigmoid", "hard_sigmoid", [f(4, 5) * 3], {})
case("hard_sigmoid_ab", "hard_sigmoid", [f(3, 4, dtype=np.float64) * 3], {"alpha": 0.3, "beta": 0.4})
case("split_v2_idx", "split_v2", [f(3, 7, 2)], {"indices_or_sections": (2, 5), "axis": 1})
case("split_v2_sec", "split_v2", [f(6, 3)], {"indices_or_sections": 3, "axis": 0})
case("split_v2_sq", "split_v2", [f(2, 3, 4)], {"indices_or_sections": 3, "axis": 1,
                                               "squeeze_axis": True})
case("_split_v2_sections", "_split_v2", [f(3, 7)], {"sections": 3, "axis": 1, "indices": ()},
     fn=mx.nd._internal._split_v2)
case("batch_take", "batch_take", [f(4, 5), np.array([0, 4, 7, -2], dtype=np.int32)], {},
     grad=False)
case("amp_cast", "amp_cast", [f(3, 4)], {"dtype": "float16"})
case("amp_cast_int", "amp_cast", [np.arange(6, dtype=np.int32)], {"dtype": "float16"},
     grad=False)
case("amp_multicast", "amp_multicast", [f(3, 2), f(2, 2)],
     {"num_outputs": 2}, grad=False)
case("amp_multicast_narrow", "amp_multicast", [f(3, 2), f(2, 2)],
     {"num_outputs": 2, "cast_narrow": True}, grad=False)
case("svm_l2", "SVMOutput", [f(5, 4) * 2, np.array([0, 3, 1, 2, 3], np.float32)],
     {"margin": 1.5, "regularization_coefficient": 0.7})
case("svm_l1", "SVMOutput", [f(5, 4) * 2, np.array([0, 3, 1, 2, 3], np.float32)],
     {"use_linear": True})

_m = f(3, 4, 5)
case("moments", "moments", [_m], {"axes": (0, 2)}, fn=lambda x, **kw: list(mx.nd.moments(x, **kw)))
case("moments_keep", "moments", [_m.astype(np.float64)], {"axes": (1,), "keepdims": True},
     fn=lambda x, **kw: list(mx.nd.moments(x, **kw)))
case("all_finite", "all_finite", [f(3, 4)], {}, grad=False)
case("all_finite_inf", "all_finite", [np.array([1, np.inf, 2], np.float32)], {}, grad=False)
case("all_finite_big64", "all_finite", [np.array([1e300, 2], np.float64)], {}, grad=False)
case("multi_all_finite", "multi_all_finite",
     [f(2, 2), np.array([np.nan], np.float32)], {"num_arrays": 2}, grad=False)
case("div_sqrt_dim", "_contrib_div_sqrt_dim", [f(2, 3, 8)], {}, fn=mx.nd.contrib.div_sqrt_dim)
case("quadratic", "_contrib_quadratic", [f(3, 4)], {"a": 0.5, "b": -1.5, "c": 2.0},
     fn=mx.nd.contrib.quadratic)
case("index_array", "_contrib_index_array", [f(2, 3, 4)], {"axes": (2, 0)}, grad=False,
     fn=mx.nd.contrib.index_array)
case("index_array_all", "_contrib_index_array", [f(2, 3)], {}, grad=False,
     fn=mx.nd.contrib.index_array)

# ---- linalg_extra ----
_a = f(2, 4, 4, dtype=np.float64)
case("syevd", "_linalg_syevd", [_a + _a.transpose(0, 2, 1)], {}, fn=mx.nd.linalg.syevd)
case("syevd32", "_linalg_syevd", [(_a[0] + _a[0].T).astype(np.float32)], {},
     fn=mx.nd.linalg.syevd)
case("gelqf", "_linalg_gelqf", [f(2, 3, 5, dtype=np.float64)], {}, fn=mx.nd.linalg.gelqf)
case("gelqf_sq", "_linalg_gelqf", [f(3, 3)], {}, fn=mx.nd.linalg.gelqf)
case("inverse", "_linalg_inverse", [f(2, 3, 3, dtype=np.float64)], {}, fn=mx.nd.linalg.inverse)
case("det", "_linalg_det", [f(2, 3, 3, dtype=np.float64)], {}, fn=mx.nd.linalg.det)
case("det2d", "_linalg_det", [f(4, 4)], {}, fn=mx.nd.linalg.det)
case("slogdet", "_linalg_slogdet", [f(3, 3, 3, dtype=np.float64)], {}, fn=mx.nd.linalg.slogdet)
case("extractdiag", "_linalg_extractdiag", [f(2, 4, 4)], {"offset": -1},
     fn=mx.nd.linalg.extractdiag)
case("makediag", "_linalg_makediag", [f(2, 3)], {"offset": 2}, fn=mx.nd.linalg.makediag)
case("extracttrian", "_linalg_extracttrian", [f(2, 4, 4)], {"offset": 1},
     fn=mx.nd.linalg.extracttrian)
case("extracttrian_up", "_linalg_extracttrian", [f(4, 4)], {"lower": False},
     fn=mx.nd.linalg.extracttrian)
case("maketrian", "_linalg_maketrian", [f(2, 6)], {"offset": -1}, fn=mx.nd.linalg.maketrian)
case("maketrian_up", "_linalg_maketrian", [f(10)], {"lower": False},
     fn=mx.nd.linalg.maketrian)

# ---- spatial ----
_x = f(2, 3, 6, 7)
_rois = np.array([[0, 0, 0, 4, 4], [1, 2, 1, 12, 10], [0, 3, 3, 3, 3]], np.float32)
case("roipool", "ROIPooling", [_x, _rois], {"pooled_size": (2, 3), "spatial_scale": 0.5})
_loc = np.array([[0.9, 0.1, 0.05, -0.1, 1.1, 0.02], [0.6, -0.3, 0.2, 0.25, 0.7, -0.1]],
                np.float32)
case("gridgen_affine", "GridGenerator", [_loc], {"transform_type": "affine",
                                                 "target_shape": (4, 5)})
case("gridgen_warp", "GridGenerator", [f(2, 2, 3, 4)], {"transform_type": "warp"})
_grid = (rng.uniform(-1.2, 1.2, (2, 2, 4, 5))).astype(np.float32)
case("bilinear", "BilinearSampler", [_x, _grid], {})
case("bilinear64", "BilinearSampler", [_x.astype(np.float64), _grid.astype(np.float64)], {})
case("spatial_transformer", "SpatialTransformer", [_x, _loc],
     {"target_shape": (5, 4), "transform_type": "affine", "sampler_type": "bilinear"})
_c1, _c2 = f(2, 3, 7, 8), f(2, 3, 7, 8)
case("corr_mul", "Correlation", [_c1, _c2], {"kernel_size": 3, "max_displacement": 2,
                                             "pad_size": 2, "stride2": 2})
case("corr_sub", "Correlation", [_c1, _c2], {"kernel_size": 1, "max_displacement": 1,
                                             "stride1": 2, "is_multiply": False})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "misc_golden.npz")
np.savez_compressed(out, **CASES)
print(out, os.path.getsize(out), "bytes,", len([k for k in CASES if k.endswith(":op")]), "cases")
