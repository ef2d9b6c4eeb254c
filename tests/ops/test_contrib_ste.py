"""Straight-through estimators (mxc/ops/contrib_ste.py): round / sign forward, the head gradient
passed through unchanged."""
import numpy as np
import pytest

import mxc as mx
from .oputil import check_forward


def _round_half_away(v):          # MXNet's round: halves away from zero
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


@pytest.mark.parametrize("name,f", [("_contrib_round_ste", _round_half_away),
                                    ("_contrib_sign_ste", np.sign)])
def test_ste_forward_and_straight_through_gradient(name, f):
    x = np.array([[-2.5, -1.4, -0.5, 0.0], [0.49, 0.5, 1.5, 3.7]], np.float32)
    check_forward(name, [x], {}, f(x))
    head = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    v = mx.nd.array(x)
    v.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name[len("_contrib_"):])(v)
    y.backward(mx.nd.array(head))
    np.testing.assert_array_equal(v.grad.asnumpy(), head)
    s = getattr(mx.sym.contrib, name[len("_contrib_"):])(mx.sym.var("x"))
    out = s.bind(mx.cpu(), args={"x": mx.nd.array(x)}).forward()[0]
    np.testing.assert_array_equal(out.asnumpy(), f(x))
