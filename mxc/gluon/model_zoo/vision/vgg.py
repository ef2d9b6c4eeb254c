"""VGG 11/13/16/19 (Simonyan & Zisserman, 2014), with or without BatchNorm."""

__all__ = ['VGG',
           'vgg11', 'vgg13', 'vgg16', 'vgg19',
           'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
           'get_vgg']

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .... import base
from ....initializer import Xavier
from ..model_store import get_model_file


class VGG(HybridBlock):
    """VGG with ``layers[i]`` 3x3 convolutions of ``filters[i]`` channels per stage."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super(VGG, self).__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu',
                                           weight_initializer='normal',
                                           bias_initializer='zeros'))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal',
                                   bias_initializer='zeros')

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix='')
        for num, channels in zip(layers, filters):
            for _ in range(num):
                featurizer.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type='gaussian',
                                                                   factor_type='out',
                                                                   magnitude=2),
                                         bias_initializer='zeros'))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation('relu'))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (convolutions per stage, channels per stage)
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(),
            root=os.path.join(base.data_dir(), 'models'), **kwargs):
    """VGG of depth ``num_layers`` (11, 13, 16, 19); ``batch_norm=True`` adds BatchNorm."""
    if num_layers not in vgg_spec:
        raise ValueError('Invalid number of layers: %d. Options are %s'
                         % (num_layers, sorted(vgg_spec)))
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        net.load_parameters(get_model_file('vgg%d%s' % (num_layers, suffix), root=root),
                            ctx=ctx)
    return net


def vgg11(**kwargs):
    """VGG-11."""
    return get_vgg(11, **kwargs)


def vgg13(**kwargs):
    """VGG-13."""
    return get_vgg(13, **kwargs)


def vgg16(**kwargs):
    """VGG-16."""
    return get_vgg(16, **kwargs)


def vgg19(**kwargs):
    """VGG-19."""
    return get_vgg(19, **kwargs)


def vgg11_bn(**kwargs):
    """VGG-11 with BatchNorm."""
    kwargs['batch_norm'] = True
    return get_vgg(11, **kwargs)


def vgg13_bn(**kwargs):
    """VGG-13 with BatchNorm."""
    kwargs['batch_norm'] = True
    return get_vgg(13, **kwargs)


def vgg16_bn(**kwargs):
    """VGG-16 with BatchNorm."""
    kwargs['batch_norm'] = True
    return get_vgg(16, **kwargs)


def vgg19_bn(**kwargs):
    """VGG-19 with BatchNorm."""
    kwargs['batch_norm'] = True
    return get_vgg(19, **kwargs)
