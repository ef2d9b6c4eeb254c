"""Activation layers of Gluon (as mxnet.gluon.nn.activations of MXNet 1.9.1).

Each layer is a parameter-free HybridBlock around one operator, except PReLU, which learns its
negative-side slope (``alpha``, one value or one per channel)."""

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']

from ..block import HybridBlock
from ... import initializer


class Activation(HybridBlock):
    """Elementwise activation by name: 'relu', 'sigmoid', 'tanh', 'softrelu' or 'softsign'
    (those of ``mx.nd.Activation``). The block's prefix is the activation's name
    (``relu0_``), as in MXNet."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super(Activation, self).__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, self._act_type)


class LeakyReLU(HybridBlock):
    """``x`` where ``x >= 0``, ``alpha * x`` elsewhere; ``alpha`` must not be negative."""

    def __init__(self, alpha, **kwargs):
        assert alpha >= 0, "Slope coefficient for LeakyReLU must be no less than 0."
        super(LeakyReLU, self).__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, self._alpha)


def _default_prelu_init():
    return initializer.Constant(0.25)


class PReLU(HybridBlock):
    """Leaky ReLU whose slope ``alpha`` is a learned parameter of shape ``(in_channels,)``:
    1 shares one slope everywhere, C gives one slope per channel (axis 1).
    ``alpha_initializer`` defaults to ``mx.init.Constant(0.25)``."""

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super(PReLU, self).__init__(**kwargs)
        if alpha_initializer is None:
            alpha_initializer = _default_prelu_init()
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,),
                                         init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha=1.0, **kwargs):
        super(ELU, self).__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    """Scaled exponential linear unit (Klambauer et al., 2017) with its fixed constants."""

    def __init__(self, **kwargs):
        super(SELU, self).__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    """Gaussian error linear unit, ``x * Phi(x)`` (the erf form)."""

    def __init__(self, **kwargs):
        super(GELU, self).__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)`` with a fixed ``beta`` (default 1)."""

    def __init__(self, beta=1.0, **kwargs):
        super(Swish, self).__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')
