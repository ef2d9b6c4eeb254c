"""mxc.gluon.nn.activations against numpy formulas and real MXNet 1.9.1 (fixture)."""
import math

import numpy as np
import pytest

import mxc as mx
from mxc import autograd
from mxc.gluon import nn

from .golden_util import check_case

ACT_CASES = ["act_softrelu", "act_softsign", "leaky", "prelu", "prelu_shared", "elu", "selu",
             "gelu", "swish"]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("case", ACT_CASES)
def test_against_mxnet(case, hybridize):
    check_case(case, hybridize)


_erf = np.vectorize(math.erf)
_SELU_A, _SELU_L = 1.6732632423543772, 1.0507009873554805


@pytest.mark.parametrize("block,ref", [
    (lambda: nn.Activation('relu'), lambda x: np.maximum(x, 0)),
    (lambda: nn.Activation('sigmoid'), lambda x: 1 / (1 + np.exp(-x))),
    (lambda: nn.Activation('tanh'), np.tanh),
    (lambda: nn.Activation('softrelu'), lambda x: np.log1p(np.exp(x))),
    (lambda: nn.Activation('softsign'), lambda x: x / (1 + np.abs(x))),
    (lambda: nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda: nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (lambda: nn.SELU(), lambda x: _SELU_L * np.where(x > 0, x, _SELU_A * (np.exp(x) - 1))),
    (lambda: nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    (lambda: nn.Swish(2.0), lambda x: x / (1 + np.exp(-2.0 * x))),
])
def test_numpy_reference(block, ref, rng):
    x = rng.normal(size=(3, 7)).astype(np.float32) * 2
    layer = block()
    np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(), ref(x.astype(np.float64)),
                               rtol=1e-4, atol=1e-5)


def test_prelu_numpy_and_grad(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    layer = nn.PReLU(in_channels=3)
    layer.initialize()
    np.testing.assert_allclose(layer.alpha.data().asnumpy(), [0.25] * 3)
    xn = mx.nd.array(x)
    with autograd.record():
        y = layer(xn)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    np.testing.assert_allclose(layer.alpha.grad().asnumpy(),
                               np.where(x > 0, 0, x).sum(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    assert sorted(layer.collect_params().keys()) == [layer.prefix + 'alpha']


def test_activation_prefix_and_reprs():
    act = nn.Activation('tanh')
    assert act.name.startswith('tanh')
    assert repr(act) == 'Activation(tanh)'
    assert repr(nn.LeakyReLU(0.1)) == 'LeakyReLU(0.1)'
    with pytest.raises(AssertionError):
        nn.LeakyReLU(-1)
