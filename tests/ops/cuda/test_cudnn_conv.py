"""Convolution through cuDNN (mxc/ops/cuda/cudnn_conv.py) with the fake frontend
(tests/ops/cuda/_fake_cudnn.py): the pass each kernel call asks for, plans built once per shape,
one handle per device and thread bound to the engine's stream, the workspace sized by the plans, the
runner's pointers, and the ways back to im2col + cuBLAS (cudnn_off, MXC_CUDNN_ENABLED=0, no
module, a graph no engine supports). The numbers are checked in test_emulated_convolution.py;
the engine, the storage pool and a second process in tests/ops/test_gpu_steps.py."""
import os
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

from mxc.ops import cuda as S
from mxc.ops.cuda import cudnn_conv, cudnn_plans

from . import _fake_cudnn
from ._gpucall import kernel_calls

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
KW = dict(kernel=(3, 3), num_filter=8, pad=(1, 1))


@pytest.fixture
def fake(monkeypatch, tmp_path):
    with _fake_cudnn.installed(monkeypatch, tmp_path / "plans") as f:
        yield f


def specs(opname, inputs, outputs, **kw):
    out = []
    for name, a, ins, outs, fam, kern, ia, fa in kernel_calls(opname, inputs, outputs, **kw):
        out.append(S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa))
    return out


def conv_forward(**kw):
    x, w, b = (np.ones(s, np.float32) for s in ((2, 4, 6, 6), (8, 4, 3, 3), (8,)))
    (spec,) = specs("Convolution", [x, w, b], [np.zeros((2, 8, 6, 6), np.float32)],
                    **dict(KW, **kw))
    return spec


def cudnn_steps(spec):
    return [s for s in spec["steps"] if "cudnn" in s]


def count(fake, name):
    return sum(1 for c in fake.calls if c[0] == name)


def test_each_kernel_call_runs_its_passes(fake):
    spec = conv_forward()
    (st,) = cudnn_steps(spec)
    d = st["cudnn"]
    assert (d.pass_, d.x, d.w, d.y, d.pad, d.stride, d.dilate) == (
        "fprop", (2, 4, 6, 6), (8, 4, 3, 3), (2, 8, 6, 6), (1, 1), (1, 1), (1, 1))
    assert st["tensors"] == {1: ("in", 0), 2: ("in", 1), 3: ("out", 0)}
    assert spec["steps"][1]["name"] == "mxc_conv_add_bias<float>"
    assert spec["steps"][1]["args"][:2] == [("out", 0), ("in", 2)]
    assert spec["workspace"] == 4096                    # the fake plan's workspace
    # backward: weight then data gradient, then the bias gradient kernel
    dy, x, w = np.ones((2, 8, 6, 6)), np.ones((2, 4, 6, 6)), np.ones((8, 4, 3, 3))
    (spec,) = specs("_backward_Convolution", [dy, x, w, np.ones(8)],
                    [np.zeros(x.shape), np.zeros(w.shape), np.zeros(8)], **KW)
    assert [(s["cudnn"].pass_, s["tensors"]) for s in cudnn_steps(spec)] == [
        ("wgrad", {1: ("in", 1), 3: ("in", 0), 2: ("out", 1)}),
        ("dgrad", {3: ("in", 0), 2: ("in", 2), 1: ("out", 0)})]
    assert cudnn_steps(spec)[0]["cudnn"].dtype == "float64"
    assert spec["steps"][-1]["name"] == "mxc_conv_bias_grad<double>"
    # a 1-D convolution is a 2-D one of height 1
    (spec,) = specs("Convolution", [np.ones((2, 3, 9)), np.ones((4, 3, 3))],
                    [np.zeros((2, 4, 4))], kernel=(3,), num_filter=4, stride=(2,), no_bias=True)
    d = cudnn_steps(spec)[0]["cudnn"]
    assert (d.x, d.w, d.y, d.pad, d.stride) == ((2, 3, 1, 9), (4, 3, 1, 3), (2, 4, 1, 4),
                                                 (0, 0), (1, 2))
    assert len(spec["steps"]) == 1


def test_plans_are_built_once_per_shape_and_handles_once_per_thread(fake):
    conv_forward()
    built = count(fake, "pygraph")
    assert built == 1 and count(fake, "build_plans") == 1
    spec = conv_forward()
    assert count(fake, "pygraph") == built and spec is conv_forward()    # the spec is kept
    # a spec made anew (another kernel call of the shape) finds the plan in memory
    cudnn_plans._specs.clear()
    assert cudnn_steps(conv_forward())[0]["graph"] is cudnn_steps(spec)[0]["graph"]
    assert cudnn_plans.plans().stats["memory"] == 1 and count(fake, "pygraph") == built
    assert [c for c in fake.calls if c[0] in ("create_handle", "set_stream")] == [
        ("create_handle", "handle0"), ("set_stream", "handle0", _fake_cudnn.STREAM)]
    # another batch size is another plan
    x, w = np.ones((3, 4, 6, 6), np.float32), np.ones((8, 4, 3, 3), np.float32)
    specs("Convolution", [x, w], [np.zeros((3, 8, 6, 6), np.float32)], no_bias=True, **KW)
    assert count(fake, "pygraph") == 2 and count(fake, "create_handle") == 1
    assert len(os.listdir(os.environ["MXC_CUDNN_PLAN_DIR"])) == 2


def test_the_runner_executes_on_the_arrays_and_the_workspace(fake):
    (st,) = cudnn_steps(conv_forward())

    def arr(ptr):
        return types.SimpleNamespace(data=types.SimpleNamespace(ptr=ptr))
    run = cudnn_plans.runner(st, 0)
    run([arr(0x1000), arr(0x2000), arr(0x3000)], [arr(0x4000), arr(0x9000)])
    assert fake.calls[-1] == ("execute", {1: 0x1000, 2: 0x2000, 3: 0x4000}, 0x9000, "handle0")
    # another thread (the device worker) gets a handle of its own, on the same stream
    t = threading.Thread(target=run, args=([arr(1), arr(2), arr(3)], [arr(4), arr(5)]))
    t.start()
    t.join()
    assert fake.calls[-3:] == [("create_handle", "handle1"),
                               ("set_stream", "handle1", _fake_cudnn.STREAM),
                               ("execute", {1: 1, 2: 2, 3: 4}, 5, "handle1")]


def test_the_ways_back_to_im2col(fake, monkeypatch):
    assert not cudnn_steps(conv_forward(cudnn_off=True))
    assert fake.calls == []
    monkeypatch.setenv("MXC_CUDNN_ENABLED", "0")
    assert not cudnn_steps(conv_forward())
    monkeypatch.delenv("MXC_CUDNN_ENABLED")
    assert cudnn_steps(conv_forward())
    # a graph no engine supports: im2col, and not tried again
    fake.unsupported.add((2, 4, 7, 7))
    x, w = np.ones((2, 4, 7, 7), np.float32), np.ones((8, 4, 3, 3), np.float32)
    for _ in range(2):
        (spec,) = specs("Convolution", [x, w], [np.zeros((2, 8, 7, 7), np.float32)],
                        no_bias=True, **KW)
        assert not cudnn_steps(spec) and any("gemm" in s for s in spec["steps"])
    assert count(fake, "check_support") == 2
    # no module
    cudnn_plans.use_frontend(None)
    assert not cudnn_steps(conv_forward())
    # a module that does not import
    monkeypatch.setitem(sys.modules, "cudnn", None)
    cudnn_plans.use_frontend(None, probe=True)
    assert cudnn_plans.frontend() is None and not cudnn_steps(conv_forward())

    # one that imports but finds no libcudnn (the frontend wheel alone: its backend_version
    # raises "Unable to find symbol cudnnGetVersion")
    def no_library():
        raise RuntimeError("Unable to find symbol cudnnGetVersion")
    monkeypatch.setitem(sys.modules, "cudnn", types.SimpleNamespace(backend_version=no_library))
    cudnn_plans.use_frontend(None, probe=True)
    assert cudnn_plans.frontend() is None and not cudnn_steps(conv_forward())
    monkeypatch.setitem(sys.modules, "cudnn", types.SimpleNamespace(backend_version=lambda: 91000))
    cudnn_plans.use_frontend(None, probe=True)
    assert cudnn_plans.frontend() is sys.modules["cudnn"]


def test_heuristic_or_measured_plans(fake, monkeypatch):
    timed = []

    def timer_for(desc, dev, handle):
        def timer(g, i):
            timed.append(i)
            return [2.0, 1.0, 3.0][i]
        return timer
    monkeypatch.setattr(cudnn_plans, "_timer", timer_for)
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "0")
    conv_forward()
    assert timed == [] and ("build_plans", "build_plan_policy.HEURISTICS_CHOICE") in fake.calls
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1")
    spec = conv_forward()
    assert timed == [0, 1, 2]
    assert ("create_execution_plan", "engine1", {"knob": 1}) in cudnn_steps(spec)[0]["graph"].log
    # the operator's cudnn_tune overrides the default, as in MXNet
    conv_forward(cudnn_tune="off")
    assert timed == [0, 1, 2]
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "0")
    conv_forward(cudnn_tune="limited_workspace")
    assert timed == [0, 1, 2]           # the measured plan of this shape is kept already
    assert cudnn_plans.plans().stats["built"] == 2
    # every plan so far kept to the operator's workspace (1024 MB); 'fastest' (2) does not
    assert [c[1] for c in fake.calls if c[0] == "deselect_workspace_greater_than"] == [
        1024 << 20] * 3                  # heuristic, measured (all plans, then the winner)
    conv_forward(cudnn_tune="fastest", workspace=64)
    assert timed == [0, 1, 2, 0, 1, 2] and count(fake, "deselect_workspace_greater_than") == 3
    monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1")
    conv_forward(workspace=64)
    assert [c[1] for c in fake.calls if c[0] == "deselect_workspace_greater_than"][-1] == 64 << 20


def test_tf32_only_with_mxnets_switches(fake, monkeypatch):
    (st,) = cudnn_steps(conv_forward())
    assert not st["cudnn"].tf32 and count(fake, "deselect_numeric_notes") == 1
    monkeypatch.setenv("MXNET_CUDA_ALLOW_TENSOR_CORE", "1")
    monkeypatch.setenv("MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION", "1")
    (st,) = cudnn_steps(conv_forward())
    assert st["cudnn"].tf32 and count(fake, "deselect_numeric_notes") == 1
    assert st["cudnn"].key(0) != cudnn_conv.ConvDesc(
        "fprop", "float32", st["cudnn"].x, st["cudnn"].w, st["cudnn"].y, (1, 1), (1, 1),
        (1, 1)).key(0)


def test_import_mxc_does_not_import_cudnn():
    code = "import sys, mxc; assert 'cudnn' not in sys.modules; print('ok')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.strip() == "ok", r.stderr
