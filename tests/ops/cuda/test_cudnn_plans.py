"""cuDNN convolution plans (mxc/ops/cuda/cudnn_plans.py) against a fake of the frontend's
Python module that records every call (tests/ops/cuda/_fake_cudnn.py): the graphs each pass
would build, heuristic and measured (autotuned) plans, and the cache: a plan is built once per
descriptor, found in memory after that, found on disk by another cache and by another process
(no build there), rebuilt when its file is damaged, and keyed by everything that decides it."""
import os
import subprocess
import sys
import textwrap

import pytest

from mxc.ops.cuda import cudnn_plans as P
from mxc.ops.cuda.cudnn_conv import UID_W, UID_X, UID_Y, ConvDesc

from . import _fake_cudnn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def conv3x3(pass_="fprop", n=32, dtype="float32"):
    return ConvDesc(pass_, dtype, (n, 64, 32, 32), (64, 64, 3, 3), (n, 64, 32, 32), (1, 1),
                      (1, 1), (1, 1), device="NVIDIA H200 sm_90", version="9.10.0")


def names(calls):
    return [c[0] for c in calls]


def test_heuristic_fprop_plan_is_built_once_then_found_in_memory(tmp_path):
    fake = _fake_cudnn.make()
    plans = P.Plans(fake, str(tmp_path))
    g = plans.plan(conv3x3(), "h0", autotune=0)
    assert names(fake.calls) == [
        "pygraph", "tensor", "tensor", "conv_fprop", "validate", "build_operation_graph",
        "create_execution_plans", "deselect_numeric_notes", "check_support", "build_plans",
        "serialize"]
    assert fake.calls[0][1]["io_data_type"] == "data_type.FLOAT"
    assert fake.calls[1][1:] == ("X", [32, 64, 32, 32], [65536, 1024, 32, 1], "data_type.FLOAT")
    assert fake.calls[2][1:3] == ("W", [64, 64, 3, 3])
    assert fake.calls[3][1] == {"image": "X", "weight": "W", "padding": [1, 1],
                                "stride": [1, 1], "dilation": [1, 1],
                                "compute_data_type": "data_type.FLOAT"}
    assert fake.calls[6][1] == ["heur_mode.A", "heur_mode.FALLBACK"]
    assert fake.calls[7][1] == ["numerical_note.TENSOR_CORE"]       # float32 stays float32
    assert fake.calls[9][1] == "build_plan_policy.HEURISTICS_CHOICE"
    # the output: uid 3, dims and strides set
    out = [e for e in g.log if e[0].startswith("tensor.") and e[1] == "conv_fprop_out"]
    assert ("tensor.uid", "conv_fprop_out", UID_Y) in out
    assert ("tensor.dim", "conv_fprop_out", [32, 64, 32, 32]) in out
    assert len(os.listdir(tmp_path)) == 1 and os.listdir(tmp_path)[0].endswith(".plan")
    n = len(fake.calls)
    assert plans.plan(conv3x3(), "h0", autotune=0) is g
    assert len(fake.calls) == n and plans.stats["memory"] == 1 and plans.stats["built"] == 1


def test_dgrad_and_wgrad_graphs():
    fake = _fake_cudnn.make()
    plans = P.Plans(fake, None)
    plans.directory = os.devnull + "/nowhere"     # storing fails: memory only, no error
    g = plans.plan(conv3x3("dgrad"), "h", autotune=0)
    conv = [c for c in fake.calls if c[0] == "conv_dgrad"][0]
    assert conv[1]["loss"] == "DY" and conv[1]["filter"] == "W"
    assert ("tensor.dim", "conv_dgrad_out", [32, 64, 32, 32]) in g.log
    assert ("tensor.uid", "conv_dgrad_out", UID_X) in g.log
    g = plans.plan(conv3x3("wgrad"), "h", autotune=0)
    conv = [c for c in fake.calls if c[0] == "conv_wgrad"][0]
    assert conv[1]["image"] == "X" and conv[1]["loss"] == "DY"
    assert ("tensor.dim", "conv_wgrad_out", [64, 64, 3, 3]) in g.log
    assert ("tensor.uid", "conv_wgrad_out", UID_W) in g.log
    with pytest.raises(ValueError, match="pass must be one of"):
        ConvDesc("bprop", "float32", (1,), (1,), (1,), (), (), ())
    with pytest.raises(ValueError, match="no plans for dtype int8"):
        plans.plan(conv3x3(dtype="int8"), "h", autotune=0)


def test_autotune_keeps_the_fastest_plan_alone(tmp_path):
    fake = _fake_cudnn.make()
    timed = []

    def timer(g, i):
        timed.append(i)
        return [3.0, 1.0, 2.0][i]
    plans = P.Plans(fake, str(tmp_path), timer=timer)
    g = plans.plan(conv3x3(), "h", autotune=1)
    assert timed == [0, 1, 2]
    assert ("build_plans", "build_plan_policy.ALL") in fake.calls
    # the winner (index 1) rebuilt alone: that graph is the one kept and stored
    assert g.log[-3:] == [("check_support",), ("build_plans", None), ("serialize",)]
    assert ("create_execution_plan", "engine1", {"knob": 1}) in g.log
    assert g.get_execution_plan_count() == 1
    # heuristic and measured plans are different entries
    plans.plan(conv3x3(), "h", autotune=0)
    assert plans.stats["built"] == 2 and len(os.listdir(tmp_path)) == 2


def test_disk_cache_across_caches_and_a_damaged_file(tmp_path):
    P.Plans(_fake_cudnn.make(), str(tmp_path)).plan(conv3x3(), "h", autotune=0)
    fake = _fake_cudnn.make()
    plans = P.Plans(fake, str(tmp_path))
    g = plans.plan(conv3x3(), "h2", autotune=0)
    assert names(fake.calls) == ["pygraph", "deserialize"] and plans.stats["disk"] == 1
    assert g.deserialized[-1] == ["serialize"]        # what the first cache stored
    plans.execute(conv3x3(), "h2", {1: 0x100, 2: 0x200, 3: 0x300}, 0x400)
    assert fake.calls[-1] == ("execute", {1: 0x100, 2: 0x200, 3: 0x300}, 0x400, "h2")
    assert plans.workspace_size(conv3x3(), "h2") == 4096
    # another shape is another plan
    plans.plan(conv3x3(n=16), "h2", autotune=0)
    assert plans.stats["built"] == 1
    # a damaged file is rebuilt and replaced
    (f,) = [p for p in os.listdir(tmp_path) if p.endswith(".plan")
            and p.startswith(conv3x3().key(0))]
    (tmp_path / f).write_bytes(b"\x00garbage")
    fake2 = _fake_cudnn.make()
    plans2 = P.Plans(fake2, str(tmp_path))
    plans2.plan(conv3x3(), "h", autotune=0)
    assert plans2.stats == {"memory": 0, "disk": 0, "built": 1, "bad_files": 1,
                            "build_seconds": plans2.stats["build_seconds"]}
    assert P.Plans(_fake_cudnn.make(), str(tmp_path)).plan(conv3x3(), "h", autotune=0)


def test_a_second_process_finds_the_plan_on_disk(tmp_path):
    code = textwrap.dedent('''
        import sys
        sys.path.insert(0, %r)
        from mxc.ops.cuda import cudnn_plans as P
        from mxc.ops.cuda.cudnn_conv import ConvDesc
        from tests.ops.cuda import _fake_cudnn
        fake = _fake_cudnn.make()
        plans = P.Plans(fake)
        plans.plan(ConvDesc("fprop", "float16", (8, 3, 32, 32), (16, 3, 3, 3), (8, 16, 30, 30),
                            (0, 0), (1, 1), (1, 1)), "h", autotune=0)
        print(plans.stats["built"], plans.stats["disk"], [c[0] for c in fake.calls][-1])
    ''' % ROOT)
    env = dict(os.environ, MXC_CUDNN_PLAN_DIR=str(tmp_path / "plans"),
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=60)
    assert first.stdout.split() == ["1", "0", "serialize"], first.stderr
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=60)
    assert second.stdout.split() == ["0", "1", "deserialize"], second.stderr


def test_the_key_covers_what_decides_a_plan(monkeypatch):
    base = conv3x3()
    keys = {base.key(0), base.key(1), conv3x3(n=16).key(0), conv3x3(dtype="float16").key(0),
            ConvDesc("fprop", "float32", base.x, base.w, base.y, (1, 1), (1, 1), (1, 1),
                       tf32=True, device=base.device, version=base.version).key(0),
            ConvDesc("fprop", "float32", base.x, base.w, base.y, (1, 1), (1, 1), (1, 1),
                       device=base.device, version="9.11.0").key(0)}
    assert len(keys) == 6 and base.key(0) == conv3x3().key(0)
    for v, want in (("0", 0), ("1", 1), ("2", 1), ("x", 1)):
        monkeypatch.setenv("MXNET_CUDNN_AUTOTUNE_DEFAULT", v)
        assert P.autotune_mode() == want
    monkeypatch.delenv("MXNET_CUDNN_AUTOTUNE_DEFAULT")
    assert P.autotune_mode() == 1
