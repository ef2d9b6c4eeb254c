"""mx.monitor.Monitor on an executor: interval, pattern, sort, the default statistic."""
import logging

import numpy as np

import mxc as mx


def _net():
    x = mx.sym.Variable("data")
    x = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    return mx.sym.Activation(x, act_type="relu", name="act")


def _bind(rng):
    exe = _net().simple_bind(mx.cpu(), data=(2, 4))
    exe.arg_dict["data"][:] = rng.standard_normal((2, 4))
    exe.arg_dict["fc_weight"][:] = rng.standard_normal((3, 4))
    exe.arg_dict["fc_bias"][:] = rng.standard_normal(3)
    return exe


def test_monitor_collects_outputs_and_args(rng):
    exe = _bind(rng)
    mon = mx.monitor.Monitor(1, sort=True)
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=False)
    res = mon.toc()
    names = [k for _, k, _ in res]
    assert names == sorted(names)
    assert {"fc_output", "act_output", "data", "fc_weight", "fc_bias"} <= set(names)
    assert all(step == 1 for step, _, _ in res)
    value = dict((k, v) for _, k, v in res)
    w = exe.arg_dict["fc_weight"].asnumpy()
    rms = np.sqrt((w.astype(np.float64) ** 2).mean())
    assert abs(float(value["fc_weight"].strip()) - rms) < 1e-5
    act = exe.outputs[0].asnumpy()
    assert abs(float(value["act_output"].strip()) - np.sqrt((act ** 2).mean())) < 1e-5


def test_monitor_interval_pattern_and_stat(rng, caplog):
    exe = _bind(rng)
    mon = mx.monitor.Monitor(2, stat_func=lambda x: [mx.nd.max(x), mx.nd.min(x)],
                             pattern="fc_.*")
    mon.install(exe)
    got = []
    for _ in range(4):
        mon.tic()
        exe.forward()
        got.append(mon.toc())
    assert [len(r) > 0 for r in got] == [True, False, True, False]
    names = {k for _, k, _ in got[0]}
    assert names == {"fc_output", "fc_weight", "fc_bias"}
    for _, k, text in got[0]:
        parts = text.split("\t")
        assert len(parts) == 3 and parts[2] == ""
        assert float(parts[0]) >= float(parts[1])
    caplog.set_level(logging.INFO)
    mon.tic()
    exe.forward()
    mon.toc_print()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and all(line.startswith("Batch:       5 fc_") for line in lines)
