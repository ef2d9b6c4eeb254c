"""DenseNet (Huang et al., 2017): densenet121/161/169/201."""

__all__ = ['DenseNet', 'densenet121', 'densenet161', 'densenet169', 'densenet201']

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .... import base
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import get_model_file


def _bn_relu_conv(seq, channels, kernel_size, padding=0):
    seq.add(nn.BatchNorm())
    seq.add(nn.Activation('relu'))
    seq.add(nn.Conv2D(channels, kernel_size=kernel_size, padding=padding, use_bias=False))


def _make_dense_layer(growth_rate, bn_size, dropout):
    new_features = nn.HybridSequential(prefix='')
    _bn_relu_conv(new_features, bn_size * growth_rate, 1)
    _bn_relu_conv(new_features, growth_rate, 3, padding=1)
    if dropout:
        new_features.add(nn.Dropout(dropout))
    # Output = input concatenated with the new features along channels.
    out = HybridConcurrent(axis=1, prefix='')
    out.add(Identity())
    out.add(new_features)
    return out


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    block = nn.HybridSequential(prefix='stage%d_' % stage_index)
    with block.name_scope():
        for _ in range(num_layers):
            block.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return block


def _make_transition(num_output_features):
    out = nn.HybridSequential(prefix='')
    _bn_relu_conv(out, num_output_features, 1)
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet with ``num_init_features`` stem channels, ``growth_rate`` channels added per
    layer and ``block_config`` layers per dense block."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super(DenseNet, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            feats = self.features
            feats.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                use_bias=False))
            feats.add(nn.BatchNorm())
            feats.add(nn.Activation('relu'))
            feats.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            last = len(block_config) - 1
            for i, num_layers in enumerate(block_config):
                feats.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout, i + 1))
                num_features += num_layers * growth_rate
                if i != last:
                    num_features //= 2
                    feats.add(_make_transition(num_features))
            feats.add(nn.BatchNorm())
            feats.add(nn.Activation('relu'))
            feats.add(nn.AvgPool2D(pool_size=7))
            feats.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (num_init_features, growth_rate, block_config)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=cpu(),
                 root=os.path.join(base.data_dir(), 'models'), **kwargs):
    """DenseNet of depth ``num_layers`` (121, 161, 169 or 201)."""
    if num_layers not in densenet_spec:
        raise ValueError('Invalid number of layers: %d. Options are %s'
                         % (num_layers, sorted(densenet_spec)))
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('densenet%d' % num_layers, root=root), ctx=ctx)
    return net


def densenet121(**kwargs):
    """DenseNet-121."""
    return get_densenet(121, **kwargs)


def densenet161(**kwargs):
    """DenseNet-161."""
    return get_densenet(161, **kwargs)


def densenet169(**kwargs):
    """DenseNet-169."""
    return get_densenet(169, **kwargs)


def densenet201(**kwargs):
    """DenseNet-201."""
    return get_densenet(201, **kwargs)
