"""Binding refuses a gradient through an operator MXNet 1.9.1 registers without FGradient
(mxc/executor/nograd.py); the cases and the operator list are the oracle's (MXNet 1.9.1 run on
each case; tests/data/make_nograd_ops.py for the list)."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import registry

S = mx.sym
X, IDX, W = S.var("x"), S.var("idx"), S.var("w")
TYPES = {"x": np.float32, "idx": np.int32}


def _bind(sym, **kw):
    shapes = {k: v for k, v in dict(x=(3, 4), idx=(3,), w=(3,), a=(5, 2)).items()
              if k in sym.list_arguments()}
    return sym.simple_bind(mx.cpu(), type_dict=TYPES, **shapes, **kw)


@pytest.mark.parametrize("sym, grad_req", [
    (S.batch_take(X, IDX), "write"),
    (S.batch_take(X, IDX), {"x": "null", "idx": "write"}),
    # MXNet's pass visits every operator the outputs depend on: w asking is enough
    (S.batch_take(X, IDX) + W, {"x": "null", "idx": "null", "w": "write"}),
    (S.take(S.var("a"), S.batch_take(X, IDX)), "write"),
])
def test_refused_at_bind(sym, grad_req):
    with pytest.raises(MXNetError, match="batch_take is non-differentiable"):
        _bind(sym, grad_req=grad_req)


def test_bind_without_args_grad_refused_only_with_one():
    args = {"x": mx.nd.ones((3, 4)), "idx": mx.nd.array([0, 3, 1], dtype="int32")}
    ex = S.batch_take(X, IDX).bind(mx.cpu(), args)       # no gradient arrays: nothing asked
    assert ex.forward()[0].asnumpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(MXNetError, match="batch_take"):
        S.batch_take(X, IDX).bind(mx.cpu(), args, args_grad={"x": mx.nd.zeros((3, 4))})


def test_stop_gradient_or_null_binds_and_runs():
    """MXNet's test_zero_prop2, and the same graph beside a trainable w: gradient of w only."""
    ex = _bind(S.stop_gradient(S.batch_take(X, IDX)))
    ex.forward()
    ex.backward()
    ex = _bind(S.stop_gradient(S.batch_take(X, IDX)) + W)
    ex.arg_dict["x"][:] = np.arange(12, dtype=np.float32).reshape(3, 4)
    ex.arg_dict["idx"][:] = np.array([1, 0, 3])
    out = ex.forward(is_train=True)[0]
    assert out.asnumpy().tolist() == [1.0, 4.0, 11.0]
    ex.backward(mx.nd.array([1.0, 2.0, 3.0]))
    assert ex.grad_dict["w"].asnumpy().tolist() == [1.0, 2.0, 3.0]
    assert not ex.grad_dict["x"].asnumpy().any()
    ex = _bind(S.batch_take(X, IDX), grad_req="null")
    ex.forward()


def test_operators_marked_as_mxnet_registers_them():
    """Every operator the MXNet probe found without FGradient is marked, none found with one."""
    with open(os.path.join(os.path.dirname(__file__), "..", "data", "nograd", "ops.json")) as f:
        oracle = json.load(f)
    marked = {op.name for op in registry.all_ops() if not op.differentiable}
    assert set(oracle["no_fgradient"]) <= marked
    assert not marked & set(oracle["with_fgradient"])
    assert "batch_take" in marked and len(oracle["with_fgradient"]) > 250


class _ArgmaxPlusSum(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.argmax_channel(x) + F.sum(x, axis=1)


def test_recorded_cached_op_refuses_when_a_gradient_is_needed():
    """MXNet 1.9.1 raises "Operator argmax_channel is non-differentiable ..." at the recorded
    call of a hybridized block; without a gradient asked for (no attach_grad) mxc runs it (MXNet
    raises there too), and BlockGrad lets the rest be differentiated."""
    net = _ArgmaxPlusSum()
    net.hybridize()
    x = mx.nd.array([[1.0, 2.0], [4.0, 3.0]])
    with mx.autograd.record():
        y = net(x)                                   # nothing needs a gradient
    assert y.asnumpy().tolist() == [4.0, 7.0]
    x.attach_grad()
    with pytest.raises(MXNetError, match="argmax_channel is non-differentiable"):
        with mx.autograd.record():
            net(x)

    class Blocked(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.BlockGrad(F.argmax_channel(x)) + F.sum(x, axis=1)
    blocked = Blocked()
    blocked.hybridize()
    with mx.autograd.record():
        y = blocked(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
