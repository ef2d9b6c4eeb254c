"""SqueezeNet 1.0 and 1.1 (Iandola et al., 2016)."""

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1']

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .... import base
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation('relu'))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """Fire module: 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix='')
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` '1.0' or '1.1'."""

    def __init__(self, version, classes=1000, **kwargs):
        super(SqueezeNet, self).__init__(**kwargs)
        assert version in ['1.0', '1.1'], \
            "Unsupported SqueezeNet version {version}:1.0 or 1.1 expected".format(
                version=version)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            feats = self.features
            if version == '1.0':
                feats.add(nn.Conv2D(96, kernel_size=7, strides=2))
                feats.add(nn.Activation('relu'))
                feats.add(_pool())
                feats.add(_make_fire(16, 64, 64))
                feats.add(_make_fire(16, 64, 64))
                feats.add(_make_fire(32, 128, 128))
                feats.add(_pool())
                feats.add(_make_fire(32, 128, 128))
                feats.add(_make_fire(48, 192, 192))
                feats.add(_make_fire(48, 192, 192))
                feats.add(_make_fire(64, 256, 256))
                feats.add(_pool())
                feats.add(_make_fire(64, 256, 256))
            else:
                feats.add(nn.Conv2D(64, kernel_size=3, strides=2))
                feats.add(nn.Activation('relu'))
                feats.add(_pool())
                feats.add(_make_fire(16, 64, 64))
                feats.add(_make_fire(16, 64, 64))
                feats.add(_pool())
                feats.add(_make_fire(32, 128, 128))
                feats.add(_make_fire(32, 128, 128))
                feats.add(_pool())
                feats.add(_make_fire(48, 192, 192))
                feats.add(_make_fire(48, 192, 192))
                feats.add(_make_fire(64, 256, 256))
                feats.add(_make_fire(64, 256, 256))
            feats.add(nn.Dropout(0.5))

            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation('relu'))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(),
                   root=os.path.join(base.data_dir(), 'models'), **kwargs):
    """SqueezeNet of ``version`` '1.0' or '1.1'."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('squeezenet%s' % version, root=root), ctx=ctx)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0."""
    return get_squeezenet('1.0', **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1."""
    return get_squeezenet('1.1', **kwargs)
