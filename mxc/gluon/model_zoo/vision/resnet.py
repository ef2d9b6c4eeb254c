"""ResNet v1 (He et al., 2015) and v2 (pre-activation, He et al., 2016): 18, 34, 50, 101 and
152 layers."""

__all__ = ['ResNetV1', 'ResNetV2',
           'BasicBlockV1', 'BasicBlockV2',
           'BottleneckV1', 'BottleneckV2',
           'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
           'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
           'get_resnet']

import os

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .... import base
from ..model_store import get_model_file


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1,
                     use_bias=False, in_channels=in_channels)


def _projection_v1(channels, stride, in_channels):
    down = nn.HybridSequential(prefix='')
    down.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                       in_channels=in_channels))
    down.add(nn.BatchNorm())
    return down


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with BatchNorm; ReLU after the residual sum (ResNet-18/34)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BasicBlockV1, self).__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + self.body(x), act_type='relu')


class BottleneckV1(HybridBlock):
    """1x1 -> 3x3 -> 1x1 bottleneck with BatchNorm (ResNet-50/101/152)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BottleneckV1, self).__init__(**kwargs)
        mid = channels // 4
        self.body = nn.HybridSequential(prefix='')
        self.body.add(nn.Conv2D(mid, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(mid, 1, mid))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type='relu')


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN-ReLU-conv3x3 twice."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BasicBlockV2, self).__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type='relu')
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type='relu')
        x = self.conv2(x)
        return x + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck: BN-ReLU-conv1x1, BN-ReLU-conv3x3, BN-ReLU-conv1x1."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BottleneckV2, self).__init__(**kwargs)
        mid = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type='relu')
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type='relu')
        x = self.conv2(x)
        x = F.Activation(self.bn3(x), act_type='relu')
        x = self.conv3(x)
        return x + residual


def _make_stage(block, num_blocks, channels, stride, stage_index, in_channels):
    stage = nn.HybridSequential(prefix='stage%d_' % stage_index)
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=''))
        for _ in range(num_blocks - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=''))
    return stage


class ResNetV1(HybridBlock):
    """ResNet v1 from ``block`` (BasicBlockV1/BottleneckV1), blocks per stage ``layers`` and
    ``channels`` (stem then one per stage). ``thumbnail=True`` uses a 3x3 stem for small
    images (CIFAR)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super(ResNetV1, self).__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False))
                self.features.add(nn.BatchNorm())
                self.features.add(nn.Activation('relu'))
                self.features.add(nn.MaxPool2D(3, 2, 1))
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], stride,
                                                   i + 1, in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        return _make_stage(block, layers, channels, stride, stage_index, in_channels)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet v2 (pre-activation) from ``block`` (BasicBlockV2/BottleneckV2)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super(ResNetV2, self).__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.BatchNorm(scale=False, center=False))
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False))
                self.features.add(nn.BatchNorm())
                self.features.add(nn.Activation('relu'))
                self.features.add(nn.MaxPool2D(3, 2, 1))
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], stride,
                                                   i + 1, in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        return _make_stage(block, layers, channels, stride, stage_index, in_channels)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (block type, blocks per stage, channels)
resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}

resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(),
               root=os.path.join(base.data_dir(), 'models'), **kwargs):
    """ResNet ``version`` (1 or 2) of depth ``num_layers`` (18, 34, 50, 101, 152)."""
    assert num_layers in resnet_spec, \
        "Invalid number of layers: %d. Options are %s" % (num_layers, str(resnet_spec.keys()))
    assert 1 <= version <= 2, \
        "Invalid resnet version: %d. Options are 1 and 2." % version
    block_type, layers, channels = resnet_spec[num_layers]
    net_class = resnet_net_versions[version - 1]
    block_class = resnet_block_versions[version - 1][block_type]
    net = net_class(block_class, layers, channels, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('resnet%d_v%d' % (num_layers, version), root=root),
                            ctx=ctx)
    return net


def resnet18_v1(**kwargs):
    """ResNet-18 v1."""
    return get_resnet(1, 18, **kwargs)


def resnet34_v1(**kwargs):
    """ResNet-34 v1."""
    return get_resnet(1, 34, **kwargs)


def resnet50_v1(**kwargs):
    """ResNet-50 v1."""
    return get_resnet(1, 50, **kwargs)


def resnet101_v1(**kwargs):
    """ResNet-101 v1."""
    return get_resnet(1, 101, **kwargs)


def resnet152_v1(**kwargs):
    """ResNet-152 v1."""
    return get_resnet(1, 152, **kwargs)


def resnet18_v2(**kwargs):
    """ResNet-18 v2."""
    return get_resnet(2, 18, **kwargs)


def resnet34_v2(**kwargs):
    """ResNet-34 v2."""
    return get_resnet(2, 34, **kwargs)


def resnet50_v2(**kwargs):
    """ResNet-50 v2."""
    return get_resnet(2, 50, **kwargs)


def resnet101_v2(**kwargs):
    """ResNet-101 v2."""
    return get_resnet(2, 101, **kwargs)


def resnet152_v2(**kwargs):
    """ResNet-152 v2."""
    return get_resnet(2, 152, **kwargs)
