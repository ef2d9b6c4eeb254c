"""Model definitions of the Gluon vision model zoo (``mx.gluon.model_zoo.vision``): AlexNet,
DenseNet, Inception v3, ResNet v1/v2, SqueezeNet, VGG, MobileNet v1/v2, as MXNet 1.9.1
(same parameter names, so MXNet's pretrained files load).

    net = mx.gluon.model_zoo.vision.get_model('resnet18_v1', classes=10)
"""
# pylint: disable=wildcard-import
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403

_MODELS = {
    'resnet18_v1': resnet18_v1, 'resnet34_v1': resnet34_v1,  # noqa: F405
    'resnet50_v1': resnet50_v1, 'resnet101_v1': resnet101_v1,  # noqa: F405
    'resnet152_v1': resnet152_v1,  # noqa: F405
    'resnet18_v2': resnet18_v2, 'resnet34_v2': resnet34_v2,  # noqa: F405
    'resnet50_v2': resnet50_v2, 'resnet101_v2': resnet101_v2,  # noqa: F405
    'resnet152_v2': resnet152_v2,  # noqa: F405
    'vgg11': vgg11, 'vgg13': vgg13, 'vgg16': vgg16, 'vgg19': vgg19,  # noqa: F405
    'vgg11_bn': vgg11_bn, 'vgg13_bn': vgg13_bn,  # noqa: F405
    'vgg16_bn': vgg16_bn, 'vgg19_bn': vgg19_bn,  # noqa: F405
    'alexnet': alexnet,  # noqa: F405
    'densenet121': densenet121, 'densenet161': densenet161,  # noqa: F405
    'densenet169': densenet169, 'densenet201': densenet201,  # noqa: F405
    'squeezenet1.0': squeezenet1_0, 'squeezenet1.1': squeezenet1_1,  # noqa: F405
    'inceptionv3': inception_v3,  # noqa: F405
    'mobilenet1.0': mobilenet1_0, 'mobilenet0.75': mobilenet0_75,  # noqa: F405
    'mobilenet0.5': mobilenet0_5, 'mobilenet0.25': mobilenet0_25,  # noqa: F405
    'mobilenetv2_1.0': mobilenet_v2_1_0, 'mobilenetv2_0.75': mobilenet_v2_0_75,  # noqa: F405
    'mobilenetv2_0.5': mobilenet_v2_0_5, 'mobilenetv2_0.25': mobilenet_v2_0_25,  # noqa: F405
}


def get_model(name, **kwargs):
    """A model of the zoo by name ('resnet18_v1', 'mobilenet0.25', 'inceptionv3', ...); the
    keyword arguments go to the model's constructor function (classes=, pretrained=, ctx=,
    root=)."""
    key = name.lower()
    if key not in _MODELS:
        raise ValueError('Model %s is not supported. Available options are\n\t%s'
                         % (name, '\n\t'.join(sorted(_MODELS))))
    return _MODELS[key](**kwargs)
