"""Inception v3 (Szegedy et al., 2016) for 299x299 input."""

__all__ = ['Inception3', 'inception_v3']

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .... import base
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file


def _make_basic_conv(**kwargs):
    """Conv (no bias) -> BatchNorm(eps 1e-3) -> ReLU."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation('relu'))
    return out


_SETTING_NAMES = ('channels', 'kernel_size', 'strides', 'padding')


def _make_branch(use_pool, *conv_settings):
    """Optional pooling then one basic conv per (channels, kernel, strides, padding) tuple
    (None entries keep Conv2D's defaults)."""
    out = nn.HybridSequential(prefix='')
    if use_pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {k: v for k, v in zip(_SETTING_NAMES, setting) if v is not None}
        out.add(_make_basic_conv(**kwargs))
    return out


def _concurrent(prefix, *branches):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _make_A(pool_features, prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (64, 1, None, None)),
        lambda: _make_branch(None, (48, 1, None, None), (64, 5, None, 2)),
        lambda: _make_branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
        lambda: _make_branch('avg', (pool_features, 1, None, None)))


def _make_B(prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (384, 3, 2, None)),
        lambda: _make_branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
        lambda: _make_branch('max'))


def _make_C(channels_7x7, prefix):
    c7 = channels_7x7
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (192, 1, None, None)),
        lambda: _make_branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                             (192, (7, 1), None, (3, 0))),
        lambda: _make_branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                             (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                             (192, (1, 7), None, (0, 3))),
        lambda: _make_branch('avg', (192, 1, None, None)))


def _make_D(prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (192, 1, None, None), (320, 3, 2, None)),
        lambda: _make_branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                             (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        lambda: _make_branch('max'))


def _split_1x3_3x1():
    split = HybridConcurrent(axis=1, prefix='')
    split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
    return split


def _make_E(prefix):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (320, 1, None, None)))
        # The order of creation below fixes the parameter names (as MXNet builds it).
        branch_3x3 = nn.HybridSequential(prefix='')
        out.add(branch_3x3)
        branch_3x3.add(_make_branch(None, (384, 1, None, None)))
        branch_3x3.add(_split_1x3_3x1())
        branch_3x3dbl = nn.HybridSequential(prefix='')
        out.add(branch_3x3dbl)
        branch_3x3dbl.add(_make_branch(None, (448, 1, None, None), (384, 3, None, 1)))
        branch_3x3dbl.add(_split_1x3_3x1())
        out.add(_make_branch('avg', (192, 1, None, None)))
    return out


def make_aux(classes):
    """The auxiliary classifier head (not used by Inception3's forward, as in MXNet)."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_make_basic_conv(channels=128, kernel_size=1))
    out.add(_make_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception v3; expects 299x299 input."""

    def __init__(self, classes=1000, **kwargs):
        super(Inception3, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            feats = self.features
            feats.add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            feats.add(_make_basic_conv(channels=32, kernel_size=3))
            feats.add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            feats.add(nn.MaxPool2D(pool_size=3, strides=2))
            feats.add(_make_basic_conv(channels=80, kernel_size=1))
            feats.add(_make_basic_conv(channels=192, kernel_size=3))
            feats.add(nn.MaxPool2D(pool_size=3, strides=2))
            feats.add(_make_A(32, 'A1_'))
            feats.add(_make_A(64, 'A2_'))
            feats.add(_make_A(64, 'A3_'))
            feats.add(_make_B('B_'))
            for i, c7 in enumerate((128, 160, 160, 192)):
                feats.add(_make_C(c7, 'C%d_' % (i + 1)))
            feats.add(_make_D('D_'))
            feats.add(_make_E('E1_'))
            feats.add(_make_E('E2_'))
            feats.add(nn.AvgPool2D(pool_size=8))
            feats.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=os.path.join(base.data_dir(), 'models'),
                 **kwargs):
    """Inception v3; ``pretrained=True`` loads ``inceptionv3-*.params`` from ``root``."""
    net = Inception3(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file('inceptionv3', root=root), ctx=ctx)
    return net
