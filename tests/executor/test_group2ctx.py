"""group2ctx placement: nodes of a ctx_group run on that group's context; arrays carry the
contexts MXNet 1.9.1 gives them (recorded from the oracle), values equal numpy's."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

G = {"stage1": mx.cpu(1), "stage2": mx.cpu(2)}


def _two_stage():
    with mx.AttrScope(ctx_group="stage1"):
        data = mx.sym.var("data")
        fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=8)
        act1 = mx.sym.Activation(fc1, name="relu1", act_type="relu")
    with mx.AttrScope(ctx_group="stage2"):
        fc2 = mx.sym.FullyConnected(act1, name="fc2", num_hidden=6)
        bn = mx.sym.BatchNorm(fc2, name="bn")
        out = mx.sym.SoftmaxOutput(bn, name="softmax")
    return act1, out


def _fill(ex, rng):
    for name, a in ex.arg_dict.items():
        if name == "softmax_label":
            a[:] = rng.randint(0, 6, a.shape)
        else:
            a[:] = rng.uniform(-1, 1, a.shape)


def test_simple_bind_places_arrays_as_mxnet():
    _, net = _two_stage()
    ex = net.simple_bind(mx.cpu(0), group2ctx=G, data=(4, 5))
    # MXNet 1.9.1 (oracle): stage1 arguments on cpu(1), the rest (label included) on cpu(2)
    want = {"data": 1, "fc1_weight": 1, "fc1_bias": 1, "fc2_weight": 2, "fc2_bias": 2,
            "bn_gamma": 2, "bn_beta": 2, "softmax_label": 2}
    assert {n: a.context.device_id for n, a in ex.arg_dict.items()} == want
    assert {n: g.context.device_id for n, g in ex.grad_dict.items()} == want
    assert [a.context for a in ex.aux_arrays] == [mx.cpu(2), mx.cpu(2)]
    assert [o.context for o in ex.outputs] == [mx.cpu(2)]


def test_outputs_of_each_group_and_ungrouped_nodes():
    act1, net = _two_stage()
    z = mx.sym.var("z") * 2          # no group: stays with its input on the default context
    ex = mx.sym.Group([act1, net, z]).simple_bind(mx.cpu(3), group2ctx=G, data=(4, 5), z=(2,))
    assert ex.arg_dict["z"].context == mx.cpu(3)
    assert [o.context for o in ex.outputs] == [mx.cpu(1), mx.cpu(2), mx.cpu(3)]
    ex.forward()
    assert [o.context for o in ex.outputs] == [mx.cpu(1), mx.cpu(2), mx.cpu(3)]


@pytest.mark.parametrize("bulk", ["1", "0"])
def test_placed_graph_equals_unplaced(bulk, monkeypatch):
    """Placed and unplaced executors give identical outputs, gradients and moving statistics,
    planned or node by node (where crossings are real copies)."""
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_TRAIN", bulk)
    _, net = _two_stage()
    rng = np.random.RandomState(0)
    placed = net.simple_bind(mx.cpu(0), group2ctx=G, data=(4, 5))
    plain = net.simple_bind(mx.cpu(0), data=(4, 5))
    _fill(placed, rng)
    for name, a in placed.arg_dict.items():
        plain.arg_dict[name][:] = a.asnumpy()
    for name, a in placed.aux_dict.items():
        a[:] = 1
        plain.aux_dict[name][:] = 1
    for _ in range(2):
        for ex in (placed, plain):
            ex.forward(is_train=True)
            ex.backward()
    np.testing.assert_array_equal(placed.outputs[0].asnumpy(), plain.outputs[0].asnumpy())
    for name in plain.grad_dict:
        np.testing.assert_array_equal(placed.grad_dict[name].asnumpy(),
                                      plain.grad_dict[name].asnumpy())
    for name in plain.aux_dict:
        np.testing.assert_array_equal(placed.aux_dict[name].asnumpy(),
                                      plain.aux_dict[name].asnumpy())
    assert placed.outputs[0].context == mx.cpu(2)


@pytest.mark.parametrize("monitor", [False, True])
def test_bind_with_arrays_on_their_groups(monitor):
    """MXNet's test_model_parallel chain: (a + b) * 3 on dev1, + c on dev2, arrays given on
    their contexts; values against numpy."""
    a, b, c = (mx.sym.var(n) for n in "abc")
    with mx.AttrScope(ctx_group="dev1"):
        net = (a + b) * 3
    with mx.AttrScope(ctx_group="dev2"):
        net = net + c
    ctxs = [mx.cpu(1), mx.cpu(1), mx.cpu(2)]
    vals = [np.full((4, 5), v, np.float32) for v in (1, 2, 3)]
    args = [mx.nd.array(v, ctx=x) for v, x in zip(vals, ctxs)]
    grads = [mx.nd.zeros((4, 5), ctx=x) for x in ctxs]
    ex = net.bind(mx.cpu(1), args=args, args_grad=grads,
                  group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)})
    seen = []
    if monitor:     # a monitor evaluates node by node: crossings are copies there
        ex.set_monitor_callback(lambda name, arr: seen.append(name))
    ex.forward(is_train=True)
    og = np.arange(20, dtype=np.float32).reshape(4, 5)
    ex.backward([mx.nd.array(og, ctx=mx.cpu(2))])
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), (vals[0] + vals[1]) * 3 + vals[2])
    assert ex.outputs[0].context == mx.cpu(2)
    for g, want, x in zip(grads, (3 * og, 3 * og, og), ctxs):
        np.testing.assert_array_equal(g.asnumpy(), want)
        assert g.context == x
    assert bool(seen) == monitor


def test_group_without_context_is_named():
    with mx.AttrScope(ctx_group="dev9"):
        net = mx.sym.var("x") * 2
    with pytest.raises(MXNetError, match="dev9"):
        net.simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(1)}, x=(2,))


def test_reshape_keeps_placement():
    _, net = _two_stage()
    ex = net.simple_bind(mx.cpu(0), group2ctx=G, data=(4, 5))
    ex2 = ex.reshape(data=(2, 5), softmax_label=(2,))
    assert ex2.arg_dict["data"].context == mx.cpu(1)
    assert ex2.outputs[0].context == mx.cpu(2)
    ex2.forward()
    assert ex2.outputs[0].shape == (2, 6)


def test_one_planned_arena_only_within_one_memory():
    """Host contexts share memory: a placed graph over them is planned; one that reaches a
    device memory runs node by node, where crossings are copies."""
    from mxc.executor.executor import _one_memory
    assert _one_memory(None, mx.cpu(0))
    assert _one_memory({1: mx.cpu(1), 2: mx.cpu(2)}, mx.cpu(0))
    assert _one_memory({1: mx.gpu(0)}, mx.gpu(0))
    assert not _one_memory({1: mx.cpu(1), 2: mx.gpu(0)}, mx.cpu(0))
    assert not _one_memory({1: mx.gpu(0), 2: mx.gpu(1)}, mx.gpu(0))
