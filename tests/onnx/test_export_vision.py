"""Every gluon.model_zoo.vision network exported by mxc runs in onnxruntime and gives mxc's
outputs; a dynamic batch runs at another batch size; importing the file back gives the same.

A representative subset (one of each family) always runs; MXC_ONNX_ALL_ZOO=1 runs all 34
networks (minutes: densenet and inception need 224/299 pixels)."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc.gluon.model_zoo import vision

from .common import assert_close, random_params, run_onnx

# the smallest input each family accepts (their last pooling windows fix 224 and 299)
SIZES = {"resnet": 32, "mobilenet": 32, "vgg": 32, "alexnet": 64, "squeezenet": 224,
         "densenet": 224, "inception": 299}
# vgg and alexnet (61-133 M parameters, the same operators) take 8-12 s each: opt-in
ALWAYS = ["resnet18_v1", "resnet18_v2", "mobilenet0.25", "mobilenetv2_0.25", "squeezenet1.1"]
ALL = ["resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
       "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
       "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
       "alexnet", "densenet121", "densenet161", "densenet169", "densenet201",
       "squeezenet1.0", "squeezenet1.1", "inceptionv3",
       "mobilenet1.0", "mobilenet0.75", "mobilenet0.5", "mobilenet0.25",
       "mobilenetv2_1.0", "mobilenetv2_0.75", "mobilenetv2_0.5", "mobilenetv2_0.25"]
HEAVY = pytest.mark.skipif(not os.environ.get("MXC_ONNX_ALL_ZOO"),
                           reason="set MXC_ONNX_ALL_ZOO=1 to export every model zoo network")
NETWORKS = ALWAYS + [pytest.param(n, marks=HEAVY) for n in ALL if n not in ALWAYS]


def _size(name):
    return next(v for k, v in SIZES.items() if name.startswith(k))


def _net(name, rng):
    """The hybridized network with random weights, BatchNorm statistics included."""
    net = vision.get_model(name)
    net.initialize()
    net.hybridize()
    size = _size(name)
    net(mx.nd.zeros((1, 3, size, size)))
    sym = net._cached_graph[1]
    values = random_params(sym, {"data": (1, 3, size, size)}, rng)
    for p in net.collect_params().values():
        p.set_data(values[p.name] * (0.1 if p.name.endswith("weight") else 1.0))
    return net, size


@pytest.mark.parametrize("name", NETWORKS)
def test_zoo_network_matches_onnxruntime(name, rng, tmp_path):
    net, size = _net(name, rng)
    x = rng.uniform(-1, 1, (2, 3, size, size)).astype(np.float32)
    expected = net(mx.nd.array(x)).asnumpy()
    path = mx.onnx.export_model(net, None, [(2, 3, size, size)],
                                onnx_file_path=str(tmp_path / f"{name}.onnx"), dynamic=True)
    assert_close(run_onnx(path, {"data": x})[0], expected)
    # dynamic batch: the same file at batch 1
    assert_close(run_onnx(path, {"data": x[:1]})[0], expected[:1])


@pytest.mark.parametrize("name", ["resnet18_v2", "mobilenetv2_0.25", "squeezenet1.1"])
def test_zoo_network_import_round_trip(name, rng, tmp_path):
    net, size = _net(name, rng)
    x = rng.uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    expected = net(mx.nd.array(x)).asnumpy()
    path = mx.onnx.export_model(net, None, [(1, 3, size, size)],
                                onnx_file_path=str(tmp_path / "m.onnx"))
    block = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    assert isinstance(block, mx.gluon.SymbolBlock)
    np.testing.assert_allclose(block(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
