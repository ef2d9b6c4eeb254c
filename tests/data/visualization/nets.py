"""The networks of the visualization fixtures, built the same way by MXNet 1.9.1 (in
tests/data/make_visualization_golden.py) and by mxc (in tests/test_visualization.py): each
function takes the framework module (``mxnet`` or ``mxc``) and returns (symbol, input shapes)."""


def mlp(mx):
    x = mx.sym.Variable("data")
    x = mx.sym.FullyConnected(x, num_hidden=128, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.FullyConnected(x, num_hidden=64, name="fc2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(x, name="softmax"), {"data": (32, 784)}


def convnet(mx):
    """Every branch of print_summary and plot_network: grouped and bias-free convolutions,
    BatchNorm, LeakyReLU, pooling with and without kernel/stride, Concat, a multi-output
    SliceChannel, Flatten, Reshape, Dropout, Embedding on a second input, elementwise ops."""
    data = mx.sym.Variable("data")
    c1 = mx.sym.Convolution(data, kernel=(3, 3), num_filter=16, pad=(1, 1), name="conv1")
    b1 = mx.sym.BatchNorm(c1, name="bn1")
    a1 = mx.sym.LeakyReLU(b1, act_type="leaky", slope=0.1, name="lrelu1")
    c2 = mx.sym.Convolution(a1, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16,
                            num_group=4, no_bias=True, name="conv2")
    c3 = mx.sym.Convolution(a1, kernel=(1, 1), stride=(2, 2), num_filter=8, name="conv3")
    cat = mx.sym.Concat(c2, c3, dim=1, name="concat")
    p1 = mx.sym.Pooling(cat, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    halves = mx.sym.SliceChannel(p1, num_outputs=2, axis=1, name="split")
    s = mx.sym.elemwise_add(halves[0], halves[1], name="add")
    act = mx.sym.Activation(s, act_type="tanh", name="tanh")
    p2 = mx.sym.Pooling(act, global_pool=True, kernel=(1, 1), pool_type="avg", name="gpool")
    flat = mx.sym.Flatten(p2, name="flatten")
    drop = mx.sym.Dropout(flat, p=0.5, name="drop")
    fc = mx.sym.FullyConnected(drop, num_hidden=10, no_bias=True, name="fc")
    words = mx.sym.Variable("words")
    emb = mx.sym.Embedding(words, input_dim=50, output_dim=10, name="embed")
    pooled = mx.sym.mean(emb, axis=1, name="embmean")
    both = mx.sym.broadcast_add(fc, pooled, name="sum")
    out = mx.sym.Reshape(both, shape=(-1, 5, 2), name="reshape")
    return out, {"data": (2, 3, 16, 16), "words": (2, 7)}


def _zoo(mx, name, prefix):
    net = mx.gluon.model_zoo.vision.get_model(name, prefix=prefix)
    return net(mx.sym.var("data")), {"data": (1, 3, 224, 224)}


def resnet18_v1(mx):
    return _zoo(mx, "resnet18_v1", "resnetv10_")


def mobilenet1_0(mx):
    return _zoo(mx, "mobilenet1.0", "mobilenet0_")


def squeezenet1_0(mx):
    return _zoo(mx, "squeezenet1.0", "squeezenet0_")


NETS = {"mlp": mlp, "convnet": convnet, "resnet18_v1": resnet18_v1,
        "mobilenet1.0": mobilenet1_0, "squeezenet1.0": squeezenet1_0}

# extra print_summary cases: (net, keyword arguments besides the symbol and the shapes, whether
# the shapes are passed)
SUMMARIES = {
    "mlp-noshape": ("mlp", {}, False),
    "convnet-noshape": ("convnet", {}, False),
    "mlp-narrow": ("mlp", {"line_length": 80, "positions": [30, 50, 62, 80]}, True),
    "convnet-fractions": ("convnet", {"line_length": 100, "positions": [.3, .6, .7, 1.]}, True),
}

# plot_network cases: (net, keyword arguments besides the symbol; "shape" True means the net's
# input shapes, "dtype" True float32 for each input)
PLOTS = {
    "mlp": ("mlp", {"shape": True, "dtype": True, "title": "mlp", "save_format": "png"}),
    "mlp-bare": ("mlp", {}),
    "convnet": ("convnet", {"shape": True}),
    "convnet-weights": ("convnet", {"shape": True, "hide_weights": False,
                                    "node_attrs": {"shape": "oval", "fixedsize": "false"}}),
    "resnet18_v1": ("resnet18_v1", {"shape": True}),
}
