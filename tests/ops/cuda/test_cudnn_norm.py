"""BatchNorm through cuDNN (mxc/ops/cuda/cudnn_norm.py) with the fake frontend
(tests/ops/cuda/_fake_cudnn.py): the graph each kernel call builds (frontend calls, tensor
dims and uids), the launches around it, plans built once per shape, the runner's pointers into
the workspace, and the ways back to the CUDA C launches (cudnn_off, MXC_CUDNN_ENABLED=0, no
module, float64, the inference-formula backward, BatchNorm_v1's variance output, a graph no
engine supports). The numbers are checked in test_emulated_normalization.py; Pooling keeps its
CUDA C kernels whatever cuDNN is there."""
import types

import numpy as np
import pytest

import mxc as mx
from mxc.ops import cuda as S
from mxc.ops.cuda import cudnn_norm as N
from mxc.ops.cuda import cudnn_plans

from . import _fake_cudnn
from ._gpucall import kernel_calls


@pytest.fixture
def fake(monkeypatch, tmp_path):
    with _fake_cudnn.installed(monkeypatch, tmp_path / "plans") as f:
        yield f


def specs(opname, inputs, outputs, train=True, **kw):
    out = []
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        for name, a, ins, outs, fam, kern, ia, fa in kernel_calls(opname, inputs, outputs, **kw):
            out.append(S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia,
                                     fattr=fa))
    return out


def bn_args(shape=(4, 3, 5, 6), axis=1, dtype=np.float32):
    c = shape[axis]
    p = np.float64 if dtype == np.float64 else np.float32
    return [np.ones(shape, dtype)] + [np.ones(c, p) for _ in range(4)], c, p


def forward(train=True, shape=(4, 3, 5, 6), dtype=np.float32, mean_var=False, **kw):
    args, c, p = bn_args(shape, kw.get("axis", 1), dtype)
    outs = [np.zeros(shape, dtype)] + ([np.zeros(c, p), np.zeros(c, p)] if mean_var else [])
    (spec,) = specs("BatchNorm", args, outs, train=train, output_mean_var=mean_var, **kw)
    return spec


def backward(train=True, shape=(4, 3, 5, 6), dtype=np.float32, **kw):
    args, c, p = bn_args(shape, kw.get("axis", 1), dtype)
    (spec,) = specs("_backward_BatchNorm", [np.ones(shape, dtype)] + args,
                    [np.zeros(shape, dtype), np.zeros(c, p), np.zeros(c, p)], train=train, **kw)
    return spec


def cudnn_steps(spec):
    return [s for s in spec.get("steps", ()) if "cudnn" in s]


def names(spec):
    return [s["name"] if "name" in s else "cudnn:" + s["cudnn"].pass_ for s in spec["steps"]]


def count(fake, name):
    return sum(1 for c in fake.calls if c[0] == name)


def test_training_forward_is_one_batchnorm_graph(fake):
    spec = forward(fix_gamma=False, eps=1e-4)
    assert names(spec) == ["cudnn:train"]
    (st,) = cudnn_steps(spec)
    d = st["cudnn"]
    assert (d.pass_, d.dtype, d.A, d.K, d.B) == ("train", "float32", 4, 3, 30)
    assert d.eps == float(np.float32(1e-4))
    # mean / inverse std: workspace rows without output_mean_var, the outputs with it
    assert {u: r[0] for u, r in st["tensors"].items()} == {
        N.UID_X: "in", N.UID_SCALE: "in", N.UID_BIAS: "in", N.UID_Y: "out", N.UID_MEAN: "ws",
        N.UID_INVSTD: "ws"}
    assert st["ws_at"] % 256 == 0 and spec["workspace"] >= st["ws_at"] + 4096
    (st,) = cudnn_steps(forward(fix_gamma=False, mean_var=True))
    assert (st["tensors"][N.UID_MEAN], st["tensors"][N.UID_INVSTD]) == (("out", 1), ("out", 2))
    log = st["graph"].log
    assert ("tensor", "X", [4, 3, 30, 1], [90, 30, 1, 1], "data_type.FLOAT") in log
    assert ("tensor", "scale", [1, 3, 1, 1], [3, 1, 1, 1], "data_type.FLOAT") in log
    assert ("tensor_scalar", float(np.float32(1e-3)), "scalar_type.COMPILE_TIME_CONST") in log
    (bn,) = [e for e in log if e[0] == "batchnorm"]
    assert bn[1]["input"] == "X" and bn[1]["scale"] == "scale" and bn[1]["bias"] == "bias"
    for out, uid in (("batchnorm_Y", N.UID_Y), ("batchnorm_mean", N.UID_MEAN),
                     ("batchnorm_inv_var", N.UID_INVSTD)):
        assert ("tensor.uid", out, uid) in log and ("tensor.output", out, True) in log
    assert ("tensor.data_type", "batchnorm_mean", "data_type.FLOAT") in log
    # fix_gamma: gamma read as a row of ones that init.cu fills first
    spec = forward(fix_gamma=True)
    assert names(spec) == ["mxc_fill<float>", "cudnn:train"]
    ones = spec["steps"][0]["args"][0]
    assert ones[0] == "ws" and spec["steps"][1]["tensors"][N.UID_SCALE] == ones
    assert spec["steps"][0]["args"][1:] == [("i64", 3), ("f64", 1.0)]


def test_channels_last_data_has_nhwc_strides(fake):
    (st,) = cudnn_steps(forward(shape=(2, 5, 4, 3), axis=-1, dtype=np.float16, fix_gamma=False))
    d = st["cudnn"]
    assert (d.A, d.K, d.B, d.dtype) == (40, 3, 1, "float16")
    assert ("tensor", "X", [40, 3, 1, 1], [3, 1, 3, 3], "data_type.HALF") in st["graph"].log
    assert fake.calls[[c[0] for c in fake.calls].index("pygraph")][1]["io_data_type"] == \
        "data_type.HALF"


def test_inference_forward_normalises_with_the_moving_statistics(fake):
    spec = forward(train=False, fix_gamma=False, mean_var=True)
    assert names(spec) == ["mxc_bn_moving<float>", "cudnn:infer"]
    moving, st = spec["steps"]
    # mm, mv in; the outputs mean and inverse std out, which the graph reads
    assert moving["args"][:2] == [("in", 3), ("in", 4)]
    assert moving["args"][4:6] == [("out", 1), ("out", 2)]
    assert moving["args"][-2:] == [("f64", float(np.float32(1e-3))), ("i32", 0)]
    assert (st["tensors"][N.UID_MEAN], st["tensors"][N.UID_INVSTD]) == (("out", 1), ("out", 2))
    assert [e[0] for e in st["graph"].log].count("batchnorm_inference") == 1
    # use_global_stats in training is the same inference forward
    assert names(forward(use_global_stats=True, fix_gamma=False)) == [
        "mxc_bn_moving<float>", "cudnn:infer"]


def test_training_backward(fake):
    spec = backward(fix_gamma=True, momentum=0.8)
    assert names(spec) == ["mxc_bn_partial<float>", "mxc_bn_mean", "mxc_bn_partial<float>",
                           "mxc_bn_var<float>", "mxc_fill<float>", "cudnn:bwd",
                           "mxc_fill<float>", "mxc_bn_bwd_channel<float>"]
    steps = spec["steps"]
    var, ones, st, zero, moving = steps[3], steps[4], steps[5], steps[6], steps[7]
    # the statistics' float rows feed the graph; gamma's ones; dgamma zeroed after it
    assert st["tensors"][N.UID_MEAN] == var["args"][4]
    assert st["tensors"][N.UID_INVSTD] == var["args"][5] and var["args"][-1] == ("i32", 0)
    assert st["tensors"][N.UID_SCALE] == ones["args"][0]
    assert {u: st["tensors"][u] for u in (N.UID_DY, N.UID_X, N.UID_DX, N.UID_DSCALE,
                                          N.UID_DBIAS)} == {
        N.UID_DY: ("in", 0), N.UID_X: ("in", 1), N.UID_DX: ("out", 0),
        N.UID_DSCALE: ("out", 1), N.UID_DBIAS: ("out", 2)}
    assert zero["args"] == [("out", 1), ("i64", 3), ("f64", 0.0)]
    # the moving statistics (outputs 3, 4): no partial sums, training, update, momentum
    assert moving["args"][8:10] == [("out", 3), ("out", 4)]
    assert moving["args"][11:] == [("i64", 3), ("i64", 0), ("i64", 120), ("i32", 1),
                                   ("i32", 1), ("i32", 1), ("f64", float(np.float32(0.8)))]
    log = st["graph"].log
    (bwd,) = [e for e in log if e[0] == "batchnorm_backward"]
    assert bwd[1]["grad"] == "DY" and bwd[1]["input"] == "X"
    assert ("tensor.uid", "batchnorm_backward_DX", N.UID_DX) in log
    assert names(backward(fix_gamma=False))[4:] == ["cudnn:bwd", "mxc_bn_bwd_channel<float>"]


def test_plans_once_per_shape_and_the_runner(fake):
    spec = forward(fix_gamma=False)
    assert count(fake, "pygraph") == 1 and forward(fix_gamma=False) is spec
    cudnn_plans._specs.clear()              # a spec made anew finds the plan in memory
    assert cudnn_steps(forward(fix_gamma=False))[0]["graph"] is cudnn_steps(spec)[0]["graph"]
    assert count(fake, "pygraph") == 1 and cudnn_plans.plans().stats["memory"] == 1
    forward(fix_gamma=False, eps=1e-5)      # eps is part of the graph: another plan
    forward(fix_gamma=False, shape=(2, 3, 5, 6))
    assert cudnn_plans.plans().stats["built"] == 3
    (st,) = cudnn_steps(spec)

    def arr(ptr):
        return types.SimpleNamespace(data=types.SimpleNamespace(ptr=ptr))
    cudnn_plans.runner(st, 0)([arr(0x100 * i) for i in range(1, 6)], [arr(0x1000), arr(0x9000)])
    ex = fake.calls[-1]
    assert ex[0] == "execute" and ex[2] == 0x9000 + st["ws_at"]
    assert ex[1][N.UID_X] == 0x100 and ex[1][N.UID_Y] == 0x1000
    assert ex[1][N.UID_MEAN] == 0x9000 + st["tensors"][N.UID_MEAN][1]


def test_the_ways_back_to_the_cuda_c_launches(fake, monkeypatch):
    assert not cudnn_steps(forward(cudnn_off=True)) and fake.calls == []
    monkeypatch.setenv("MXC_CUDNN_ENABLED", "0")
    assert not cudnn_steps(forward()) and not cudnn_steps(backward())
    monkeypatch.delenv("MXC_CUDNN_ENABLED")
    assert cudnn_steps(forward()) and cudnn_steps(backward())
    # float64; the inference-formula backward (as MXNet's use_global_stats); BatchNorm_v1's
    # variance output
    assert "launches" in forward(dtype=np.float64)
    assert "launches" in backward(use_global_stats=True)
    assert "launches" in backward(train=False)
    args, c, p = bn_args()
    (spec,) = specs("BatchNorm_v1", args, [np.zeros((4, 3, 5, 6), np.float32), np.zeros(c, p),
                                           np.zeros(c, p)], output_mean_var=True)
    assert "launches" in spec
    # a graph no engine supports: CUDA C, and not tried again
    fake.unsupported.add((4, 7, 30, 1))
    for _ in range(2):
        assert "launches" in forward(shape=(4, 7, 5, 6))
    assert sum(1 for c in fake.calls if c[0] == "check_support") == 3
    cudnn_plans.use_frontend(None)
    assert "launches" in forward() and "launches" in backward()


def test_pooling_keeps_its_cuda_c_kernels(fake):
    x = np.ones((2, 3, 6, 6), np.float32)
    for kw in (dict(kernel=(2, 2), stride=(2, 2), pool_type="max"),
               dict(kernel=(3, 3), pad=(1, 1), pool_type="avg")):
        (spec,) = specs("Pooling", [x], [np.zeros((2, 3, 3, 3) if kw["pool_type"] == "max"
                                                  else (2, 3, 6, 6), np.float32)], **kw)
        assert "steps" not in spec and spec["name"] == "mxc_pool_fwd<float>"
    assert fake.calls == []


def test_the_key_covers_what_decides_a_plan():
    base = N.BnDesc("train", "float32", 4, 3, 30, eps=1e-3)
    keys = {base.key(0), base.key(1), N.BnDesc("train", "float16", 4, 3, 30, eps=1e-3).key(0),
            N.BnDesc("train", "float32", 4, 3, 30, eps=1e-4).key(0),
            N.BnDesc("infer", "float32", 4, 3, 30).key(0),
            N.BnDesc("bwd", "float32", 4, 3, 30).key(0),
            N.BnDesc("train", "float32", 4, 3, 31, eps=1e-3).key(0),
            N.BnDesc("train", "float32", 4, 3, 30, eps=1e-3, version="9.11.0").key(0)}
    assert len(keys) == 8 and base.key(0) == N.BnDesc("train", "float32", 4, 3, 30,
                                                      eps=1e-3).key(0)
    # eps only decides the training graph (inference gets 1/sqrt(var + eps) from a kernel)
    assert N.BnDesc("infer", "float32", 4, 3, 30, eps=1.0).key(0) == \
        N.BnDesc("infer", "float32", 4, 3, 30).key(0)
    with pytest.raises(ValueError, match="pass must be one of"):
        N.BnDesc("forward", "float32", 1, 1, 1)


def test_heuristic_or_measured_plans(fake, monkeypatch):
    timed = []

    def timer_for(desc, dev, handle):
        assert desc.buffers() == {N.UID_X: 4 * 360, N.UID_SCALE: 12, N.UID_BIAS: 12,
                                  N.UID_Y: 4 * 360, N.UID_MEAN: 12, N.UID_INVSTD: 12}

        def timer(g, i):
            timed.append(i)
            return [2.0, 1.0, 3.0][i]
        return timer
    monkeypatch.setattr(cudnn_plans, "_timer", timer_for)
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "0")
    forward(fix_gamma=False)
    assert timed == [] and ("build_plans", "build_plan_policy.HEURISTICS_CHOICE") in fake.calls
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1")
    (st,) = cudnn_steps(forward(fix_gamma=False))
    assert timed == [0, 1, 2]
    assert ("create_execution_plan", "engine1", {"knob": 1}) in st["graph"].log
    # no workspace limit (BatchNorm has no workspace parameter) and no TF32 exclusion
    assert count(fake, "deselect_workspace_greater_than") == 0
    assert count(fake, "deselect_numeric_notes") == 0
