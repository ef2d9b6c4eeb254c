"""mxc.gluon.model_zoo.vision: every architecture of MXNet 1.9.1 builds with MXNet's parameter
names and shapes (tests/data/gluon_nn/model_zoo_params.json, written by real MXNet with
tests/data/make_gluon_nn_golden.py), before and after the deferred shapes are inferred; forward
runs imperatively and hybridized."""
import hashlib
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.gluon.model_zoo import vision
from mxc.gluon.model_zoo.vision import get_model

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "gluon_nn")

with open(os.path.join(DATA, "model_zoo_params.json")) as _f:
    REF = json.load(_f)


def _lines(net):
    """Sorted "name shape" lines without the net's own prefix (it carries a global counter)."""
    p = net.prefix
    return sorted("%s %s" % (n[len(p):] if n.startswith(p) else n, tuple(v.shape))
                  for n, v in net.collect_params().items())


def _sha1(lines):
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(REF["models"]))
def test_param_names_and_shapes(name):
    net = get_model(name)
    lines = _lines(net)
    if name in REF["full"]:
        assert lines == REF["full"][name]
    assert len(lines) == REF["models"][name]["n"]
    assert _sha1(lines) == REF["models"][name]["sha1"]


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenetv2_0.25", "squeezenet1.1"])
def test_shapes_after_forward(name):
    ref = REF["after_forward"][name]
    net = get_model(name, classes=1000)
    net.initialize()
    out = net(mx.nd.zeros(tuple(ref["shape"])))
    assert out.shape == (ref["shape"][0], 1000)
    assert _sha1(_lines(net)) == ref["sha1"]


def test_hybridized_equals_imperative(rng):
    net = get_model("mobilenet0.25", classes=7)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(rng.normal(size=(2, 3, 32, 32)).astype(np.float32))
    ref = net(x).asnumpy()
    assert ref.shape == (2, 7)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-4, atol=1e-5)


def test_resnet_thumbnail_and_classes():
    net = vision.resnet18_v2(classes=10, thumbnail=True)
    net.initialize()
    assert net(mx.nd.zeros((1, 3, 16, 16))).shape == (1, 10)
    assert net.output.weight.shape == (10, 512)


def test_get_model_errors():
    with pytest.raises(ValueError, match="not supported"):
        get_model("resnet19_v1")
    assert isinstance(get_model("ResNet18_V1"), vision.ResNetV1)
    with pytest.raises(AssertionError):
        vision.get_resnet(3, 18)
    with pytest.raises(AssertionError):
        vision.SqueezeNet('2.0')
