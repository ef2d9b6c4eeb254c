"""AlexNet (Krizhevsky et al., 2012), the single-tower variant of MXNet's model zoo."""

__all__ = ['AlexNet', 'alexnet']

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .... import base
from ..model_store import get_model_file


class AlexNet(HybridBlock):
    """AlexNet for 224x224 input; ``classes`` outputs."""

    def __init__(self, classes=1000, **kwargs):
        super(AlexNet, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                feats = self.features
                feats.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation='relu'))
                feats.add(nn.MaxPool2D(pool_size=3, strides=2))
                feats.add(nn.Conv2D(192, kernel_size=5, padding=2, activation='relu'))
                feats.add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    feats.add(nn.Conv2D(channels, kernel_size=3, padding=1, activation='relu'))
                feats.add(nn.MaxPool2D(pool_size=3, strides=2))
                feats.add(nn.Flatten())
                for _ in range(2):
                    feats.add(nn.Dense(4096, activation='relu'))
                    feats.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), 'models'),
            **kwargs):
    """AlexNet; ``pretrained=True`` loads ``alexnet-*.params`` from ``root``."""
    net = AlexNet(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file('alexnet', root=root), ctx=ctx)
    return net
