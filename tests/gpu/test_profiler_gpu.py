"""The profiler on a real device (skipped without one, see conftest.py): GPU operations are
timed by CUDA events on their stream and copies carry MXNet's names."""
import json

import numpy as np

import mxc as mx
from mxc import profiler


def test_gpu_operations_timed_on_the_stream(tmp_path):
    fname = str(tmp_path / "gpu.json")
    profiler.set_config(profile_imperative=True, profile_symbolic=False, profile_api=False,
                        profile_memory=False, continuous_dump=False, aggregate_stats=True,
                        filename=fname)
    x = mx.nd.array(np.random.default_rng(0).standard_normal((1024, 1024)), ctx=mx.gpu(0))
    mx.nd.dot(x, x).wait_to_read()                  # compiled and warm before the run
    profiler.set_state("run")
    y = x
    for _ in range(4):
        y = mx.nd.dot(y, x) / 1024
    back = y.copyto(mx.cpu())
    again = back.copyto(mx.gpu(0))
    again.wait_to_read()
    profiler.set_state("stop")
    table = profiler.dumps(reset=True)
    profiler.dump()
    with open(fname) as f:
        events = json.load(f)["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    gpu = [e for e in events if e["ph"] == "X" and procs.get(e["pid"]) == "gpu/0"]
    dots = sorted((e for e in gpu if e["name"] == "dot"), key=lambda e: e["ts"])
    assert len(dots) == 4, [e["name"] for e in gpu]
    # a 1024^3 GEMM takes microseconds on the device; one after the other on the stream
    assert all(e["dur"] > 0 for e in dots)
    for a, b in zip(dots, dots[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 0.5
    names = {e["name"] for e in gpu}
    assert {"CopyGPU2CPU", "CopyCPU2GPU"} <= names, names
    assert "dot" in table
    profiler.set_config(profile_memory=False, continuous_dump=False,
                        filename=str(tmp_path / "profile.json"))
