"""CachedOp with static_alloc: one set of arrays and resolved steps per plan, run as bulk
operations from the second call; results equal the plain CachedOp's and numpy's whatever
the caller keeps or swaps between calls."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxc as mx

S = mx.sym


def _mlp_bn():
    x = S.var("x")
    h = S.FullyConnected(x, num_hidden=5, name="fc1")
    h = S.BatchNorm(S.relu(h), name="bn", fix_gamma=False)
    return S.FullyConnected(h, num_hidden=3, name="fc2")


def _inputs(sym, rng):
    shapes, _, aux_shapes = sym.infer_shape(x=(4, 6))
    vals = {n: rng.uniform(-1, 1, s).astype(np.float32)
            for n, s in zip(sym.list_arguments(), shapes)}
    vals.update({n: np.full(s, 1.0 if n.endswith("var") else 0.0, np.float32)
                 for n, s in zip(sym.list_auxiliary_states(), aux_shapes)})
    return vals


def _train(static, rng_seed=0, steps=4):
    sym = _mlp_bn()
    names = sym.list_inputs()
    rng = np.random.RandomState(rng_seed)
    vals = _inputs(sym, rng)
    arrays = {n: mx.nd.array(v) for n, v in vals.items()}
    params = [n for n in sym.list_arguments() if n != "x"]
    for n in params:
        arrays[n].attach_grad()
    flags = [("data_indices", [names.index("x")])]
    if static:
        flags += [("static_alloc", True), ("static_shape", True)]
    op = mx.nd.CachedOp(sym, flags)
    outs, grads = [], []
    for _ in range(steps):
        x = mx.nd.array(rng.uniform(-1, 1, (4, 6)))       # a new data array every call
        args = [x if n == "x" else arrays[n] for n in names]
        with mx.autograd.record():
            out = op(*args)
            loss = (out * out).sum()
        loss.backward()
        outs.append(out)                                   # kept across calls
        grads.append([arrays[n].grad.asnumpy() for n in params])
        for n in params:                                   # an SGD step, in place
            arrays[n][:] = arrays[n] - 0.1 * arrays[n].grad
    return op, [o.asnumpy() for o in outs], grads, {n: a.asnumpy() for n, a in arrays.items()}


def test_static_equals_plain_and_runs_bulk():
    op_p, outs_p, grads_p, final_p = _train(False)
    op_s, outs_s, grads_s, final_s = _train(True)
    for a, b in zip(outs_p, outs_s):
        np.testing.assert_array_equal(a, b)
    for ga, gb in zip(grads_p, grads_s):
        for a, b in zip(ga, gb):
            np.testing.assert_array_equal(a, b)
    for n in final_p:           # parameters and BatchNorm's moving statistics
        np.testing.assert_array_equal(final_p[n], final_s[n])
    (st,) = op_s._statics.values()
    assert st.fwd.bulks and st.bwd.bulks
    assert st.copy_in == tuple(n == "x" for n in _mlp_bn().list_inputs())


@pytest.mark.parametrize("flags,copied", [([], (True, True)),
                                          ([("param_indices", [1])], (True, False))])
def test_swapped_parameter_and_changing_input(flags, copied):
    """Without flags every input starts read in place and one that changes is copied from
    then on; a parameter (param_indices) replaced by another array is read from the new one."""
    x, w = S.var("x"), S.var("w")
    op = mx.nd.CachedOp(S.tanh(S.dot(x, w)), [("static_alloc", True)] + flags)
    rng = np.random.RandomState(2)
    wv = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    w_arr = mx.nd.array(wv)
    for i in range(4):
        xv = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
        if i == 2:
            wv = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
            w_arr = mx.nd.array(wv)
        out = op(mx.nd.array(xv), w_arr)
        np.testing.assert_allclose(out.asnumpy(), np.tanh(xv @ wv), rtol=1e-5, atol=1e-6)
    (st,) = op._statics.values()
    assert st.copy_in == copied
    assert (st.inputs[1] is w_arr) == (not copied[1])


def test_gradients_kept_by_the_caller_are_not_overwritten():
    x = S.var("x")
    op = mx.nd.CachedOp(S.sin(x) * 2, [("static_alloc", True)])
    a = mx.nd.array(np.linspace(-1, 1, 5).astype(np.float32))
    a.attach_grad()
    kept = []
    for k in range(3):
        with mx.autograd.record():
            y = op(a * (k + 1))
        kept.append(mx.autograd.grad([y], [a])[0])
    v = np.linspace(-1, 1, 5)
    for k, g in enumerate(kept):
        np.testing.assert_allclose(g.asnumpy(), 2 * (k + 1) * np.cos((k + 1) * v), rtol=1e-5,
                                   atol=1e-6)


def test_backward_writes_into_the_parameters_grad_arrays():
    """Under backward() a static plan writes parameter gradients straight into the parameters'
    .grad arrays (no copy); autograd.grad in between gets arrays of its own and leaves .grad
    as the last backward wrote it."""
    x, w = S.var("x"), S.var("w")
    op = mx.nd.CachedOp(S.tanh(S.dot(x, w)), [("static_alloc", True), ("data_indices", [0])])
    rng = np.random.RandomState(3)
    wv = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    w_arr = mx.nd.array(wv)
    w_arr.attach_grad()
    grad_arr = w_arr.grad

    def expected(xv):
        return xv.T @ (1 - np.tanh(xv @ wv) ** 2)

    for k in range(4):
        xv = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
        with mx.autograd.record():
            y = op(mx.nd.array(xv), w_arr)
        if k == 2:
            last = w_arr.grad.asnumpy()
            (g,) = mx.autograd.grad([y], [w_arr])
            np.testing.assert_allclose(g.asnumpy(), expected(xv), rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(w_arr.grad.asnumpy(), last)
            del g                   # (one still held would move the plan to new arrays)
            continue
        y.backward()
        (st,) = op._statics.values()
        assert list(st.bound.values()) == [grad_arr]
        assert w_arr.grad is grad_arr
        np.testing.assert_allclose(w_arr.grad.asnumpy(), expected(xv), rtol=1e-5, atol=1e-6)


_WAITED_FORWARD = r"""
import json, sys, threading
import numpy as np
import mxc as mx
from mxc.gluon import nn
net = nn.HybridSequential()
net.add(nn.Dense(512, activation="relu"), nn.Dense(512, activation="relu"), nn.Dense(10))
net.initialize()
net.hybridize(static_alloc=True, static_shape=True)
x = mx.nd.array(np.random.RandomState(0).rand(128, 784).astype(np.float32))
net(x).wait_to_read()
mx.profiler.set_config(profile_symbolic=True, filename=sys.argv[1])
mx.profiler.set_state("run")
for _ in range(30):           # run, then wait at once: the worker may still be asleep
    net(x).wait_to_read()
mx.profiler.set_state("stop")
mx.profiler.dump()
main = threading.get_native_id()
events = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
          if e.get("ph") == "X" and e.get("name") == "FullyConnected"]
print(len(events), sum(e.get("tid") == main for e in events))
"""


def test_a_waited_forward_with_products_runs_on_the_worker(tmp_path):
    # the MLP's forward is one bulk operation on ~3.6 MB of arrays, under the 4 MiB from which
    # a waiting thread leaves a bulk to a worker, but it holds GEMMs (a team op from 256 KiB):
    # the waiter never runs it itself, where its products would compute on one thread
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root, MXNET_CPU_WORKER_NTHREADS="1")
    out = subprocess.run([sys.executable, "-c", _WAITED_FORWARD, str(tmp_path / "t.json")],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    total, on_main = map(int, out.stdout.split())
    assert total == 90 and on_main == 0, out.stdout
