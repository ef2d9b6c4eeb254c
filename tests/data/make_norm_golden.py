"""Writes tests/data/norm_golden.npz from real MXNet 1.9.1 (run with the oracle's python):
outputs, input gradients (for a random head gradient) and, for BatchNorm, the moving statistics
after a training forward and after the backward, for BatchNorm, BatchNorm_v1, LayerNorm,
InstanceNorm and GroupNorm over several axis / fix_gamma / mode settings.

    /work/mxnet-oracle/bin/python tests/data/make_norm_golden.py

Layout: "cases" is a JSON list of {"name", "op", "kwargs", "mode", "nout"}; arrays are stored as
"<name>/in<i>", "<name>/out<i>", "<name>/head", "<name>/grad<i>", "<name>/mm_fwd", "<name>/mv_fwd",
"<name>/mm_bwd", "<name>/mv_bwd". mode: "train" (autograd.record()), "predict"
(record(train_mode=False) and backward(train_mode=False)).
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "norm_golden.npz")
rng = np.random.default_rng(20240601)
arrays = {}
cases = []


def _bn_inputs(shape, axis, dtype):
    c = shape[axis]
    pdt = np.float32 if dtype == np.float16 else dtype
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, c).astype(pdt)
    beta = rng.standard_normal(c).astype(pdt)
    mm = (rng.standard_normal(c) * 0.3).astype(pdt)
    mv = rng.uniform(0.5, 2.0, c).astype(pdt)
    return [x, gamma, beta, mm, mv]


def add_nd(name, op, inputs, kwargs, mode="train", nvar=3):
    """Run mx.nd.<op> under autograd; gradients for the first `nvar` inputs."""
    nds = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for a in nds[:nvar]:
        a.attach_grad()
    train = mode == "train"
    with mx.autograd.record(train_mode=train):
        out = getattr(mx.nd, op)(*nds, **kwargs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    for i, a in enumerate(inputs):
        arrays[f"{name}/in{i}"] = a
    for i, o in enumerate(outs):
        arrays[f"{name}/out{i}"] = o.asnumpy()
    if op == "BatchNorm":
        arrays[f"{name}/mm_fwd"] = nds[3].asnumpy()
        arrays[f"{name}/mv_fwd"] = nds[4].asnumpy()
    head = rng.standard_normal(outs[0].shape).astype(inputs[0].dtype)
    arrays[f"{name}/head"] = head
    outs[0].backward(mx.nd.array(head, dtype=head.dtype), train_mode=train)
    for i in range(nvar):
        arrays[f"{name}/grad{i}"] = nds[i].grad.asnumpy()
    if op == "BatchNorm":
        arrays[f"{name}/mm_bwd"] = nds[3].asnumpy()
        arrays[f"{name}/mv_bwd"] = nds[4].asnumpy()
    cases.append({"name": name, "op": op, "kwargs": kwargs, "mode": mode, "nout": len(outs)})


def add_bn_v1(name, inputs, kwargs, mode="train"):
    """BatchNorm_v1 through a symbol executor (MXNet's imperative BatchNorm_v1 cannot take its
    auxiliary states)."""
    sym = mx.sym.BatchNorm_v1(mx.sym.var("data"), name="bn", **kwargs)
    if kwargs.get("output_mean_var"):
        sym = mx.sym.Group([sym[0], mx.sym.BlockGrad(sym[1]), mx.sym.BlockGrad(sym[2])])
    x, gamma, beta, mm, mv = inputs
    ex = sym.simple_bind(mx.cpu(), data=x.shape)
    ex.arg_dict["data"][:] = x
    ex.arg_dict["bn_gamma"][:] = gamma
    ex.arg_dict["bn_beta"][:] = beta
    ex.aux_dict["bn_moving_mean"][:] = mm
    ex.aux_dict["bn_moving_var"][:] = mv
    train = mode == "train"
    outs = ex.forward(is_train=train)
    for i, a in enumerate(inputs):
        arrays[f"{name}/in{i}"] = a
    for i, o in enumerate(outs):
        arrays[f"{name}/out{i}"] = o.asnumpy()
    arrays[f"{name}/mm_fwd"] = ex.aux_dict["bn_moving_mean"].asnumpy()
    arrays[f"{name}/mv_fwd"] = ex.aux_dict["bn_moving_var"].asnumpy()
    head = rng.standard_normal(outs[0].shape).astype(x.dtype)
    arrays[f"{name}/head"] = head
    if train:
        heads = [mx.nd.array(head)] + [mx.nd.zeros(o.shape) for o in outs[1:]]
        ex.backward(heads)
        for i, k in enumerate(("data", "bn_gamma", "bn_beta")):
            arrays[f"{name}/grad{i}"] = ex.grad_dict[k].asnumpy()
        arrays[f"{name}/mm_bwd"] = ex.aux_dict["bn_moving_mean"].asnumpy()
        arrays[f"{name}/mv_bwd"] = ex.aux_dict["bn_moving_var"].asnumpy()
    cases.append({"name": name, "op": "BatchNorm_v1", "kwargs": kwargs, "mode": mode,
                  "nout": len(outs), "has_grad": train})


# ---- BatchNorm ---------------------------------------------------------------------------
add_nd("bn_train_f32", "BatchNorm", _bn_inputs((2, 3, 4, 5), 1, np.float32),
       {"fix_gamma": False, "output_mean_var": True})
add_nd("bn_train_fixg_f64", "BatchNorm", _bn_inputs((3, 4, 5), 1, np.float64), {})
add_nd("bn_train_last_f32", "BatchNorm", _bn_inputs((4, 5, 3), 2, np.float32),
       {"fix_gamma": False, "axis": -1, "momentum": 0.8, "eps": 1e-5})
add_nd("bn_train_axis0_f64", "BatchNorm", _bn_inputs((3, 7), 0, np.float64),
       {"fix_gamma": False, "axis": 0})
add_nd("bn_train_2d_f32", "BatchNorm", _bn_inputs((6, 4), 1, np.float32),
       {"fix_gamma": False, "output_mean_var": True, "eps": 2e-3})
add_nd("bn_predict_f32", "BatchNorm", _bn_inputs((2, 3, 4, 5), 1, np.float32),
       {"fix_gamma": False, "output_mean_var": True}, mode="predict")
add_nd("bn_predict_fixg_f64", "BatchNorm", _bn_inputs((2, 3, 4), 1, np.float64), {},
       mode="predict")
add_nd("bn_global_f64", "BatchNorm", _bn_inputs((2, 3, 4, 5), 1, np.float64),
       {"fix_gamma": False, "use_global_stats": True})
add_nd("bn_train_f16", "BatchNorm", _bn_inputs((2, 3, 4, 5), 1, np.float16),
       {"fix_gamma": False, "output_mean_var": True})

# ---- BatchNorm_v1 (legacy) -----------------------------------------------------------------
add_bn_v1("bn1_train_f32", _bn_inputs((2, 3, 4, 5), 1, np.float32),
          {"fix_gamma": False, "output_mean_var": True})
add_bn_v1("bn1_train_fixg_2d_f32", _bn_inputs((5, 4), 1, np.float32), {})
add_bn_v1("bn1_predict_f32", _bn_inputs((2, 3, 2, 2), 1, np.float32),
          {"fix_gamma": False, "output_mean_var": True}, mode="predict")


# ---- LayerNorm, InstanceNorm, GroupNorm ----------------------------------------------------
def _row_inputs(shape, pshape, dtype):
    x = (rng.standard_normal(shape) * 1.5 + 0.3).astype(dtype)
    return [x, rng.uniform(0.5, 1.5, pshape).astype(dtype),
            rng.standard_normal(pshape).astype(dtype)]


add_nd("ln_last_f32", "LayerNorm", _row_inputs((3, 4, 6), (6,), np.float32),
       {"output_mean_var": True})
add_nd("ln_axis1_f64", "LayerNorm", _row_inputs((2, 5, 3), (5,), np.float64), {"axis": 1})
add_nd("ln_axis0_f32", "LayerNorm", _row_inputs((4, 3), (4,), np.float32),
       {"axis": 0, "eps": 1e-3, "output_mean_var": True})
add_nd("ln_f16", "LayerNorm", _row_inputs((3, 8), (8,), np.float16), {})
add_nd("in_f32", "InstanceNorm", _row_inputs((2, 3, 5), (3,), np.float32), {})
add_nd("in_4d_f32", "InstanceNorm", _row_inputs((2, 2, 3, 3), (2,), np.float32), {"eps": 1e-5})
add_nd("gn_f32", "GroupNorm", _row_inputs((2, 6, 3), (3,), np.float32),
       {"num_groups": 3, "output_mean_var": True})
add_nd("gn_4d_f64", "GroupNorm", _row_inputs((2, 4, 2, 2), (2,), np.float64), {"num_groups": 2})
add_nd("gn_one_f32", "GroupNorm", _row_inputs((3, 2, 4), (1,), np.float32), {"eps": 1e-3})

arrays["cases"] = np.array(json.dumps(cases))
np.savez_compressed(OUT, **arrays)
print(f"wrote {OUT}: {len(cases)} cases, {os.path.getsize(OUT)} bytes")
