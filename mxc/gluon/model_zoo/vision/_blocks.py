"""Small container blocks the model zoo needs (MXNet keeps them in gluon.contrib.nn as
HybridConcurrent and Identity; the same classes, private here)."""

from ... import nn
from ...block import HybridBlock


class HybridConcurrent(nn.HybridSequential):
    """Feeds the same input to every child and concatenates their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super(HybridConcurrent, self).__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        outs = [blk(x) for blk in self._children.values()]
        return F.concat(*outs, dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (a branch of HybridConcurrent that passes features through)."""

    def __init__(self, prefix=None, params=None):
        super(Identity, self).__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x
