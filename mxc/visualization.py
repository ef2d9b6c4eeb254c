"""``mx.viz`` / ``mx.visualization`` (MXNet 1.9.1): look at a network.

`print_summary` prints MXNet's layer table (output shape, parameter count, previous layers)
and `plot_network` returns a `graphviz.Digraph` of the graph; both take a Symbol or a
hybridized Gluon block that has run forward once. The numbers and the graph are MXNet 1.9.1's,
quirks included (see the comments), so that summaries of the same network agree line by line.
`plot_network` needs the ``graphviz`` Python package (``pip install graphviz``); rendering the
graph also needs the Graphviz programs (the system package ``graphviz``)."""
import copy
import json
import re
import warnings

import numpy as np

from .gluon.block import HybridBlock
from .symbol import Symbol

__all__ = ["print_summary", "plot_network"]


def _as_symbol(net, who):
    """The Symbol of `net`: a Symbol itself, or the graph a hybridized block recorded."""
    if isinstance(net, Symbol):
        return net
    if isinstance(net, HybridBlock):
        if not net._cached_graph:
            raise ValueError(f"{who}: the {type(net).__name__} block has no graph yet: call "
                             "hybridize() and run it forward once first")
        return net._cached_graph[1]
    raise TypeError(f"{who}: symbol must be a Symbol or a hybridized HybridBlock, "
                    f"got {type(net).__name__}")


def _digits(text):
    """'(3, 3)' -> ['3', '3']: the numbers of a shape-like attribute."""
    return re.findall(r"\d+", text)


def _internal_values(sym, infer, given, who, what):
    """{internal output name: inferred value} of every internal output of `sym`."""
    internals = sym.get_internals()
    _, values, _ = infer(internals, **given)
    if values is None:
        raise ValueError(f"{who}: input {what} is incomplete")
    return dict(zip(internals.list_outputs(), values))


def _output_key(node):
    """The name `list_outputs` gives a node's (first) output: variables keep their name."""
    return node["name"] if node["op"] == "null" else node["name"] + "_output"


def _layer_params(node, pre_channels, shapes):
    """Parameter count MXNet prints for a node. `pre_channels` is the summed first dimension
    (after the batch) of the previous layers' outputs, which MXNet uses as the input width of
    Convolution and FullyConnected, whatever the rank."""
    op, attrs = node["op"], node.get("attrs", {})
    with_bias = attrs.get("no_bias") != "True"
    if op == "Convolution":
        count = pre_channels * int(attrs["num_filter"]) // int(attrs.get("num_group", "1"))
        for k in _digits(attrs["kernel"]):
            count *= int(k)
        return count + (int(attrs["num_filter"]) if with_bias else 0)
    if op == "FullyConnected":
        return (pre_channels + with_bias) * int(attrs["num_hidden"])
    if op == "BatchNorm":
        # gamma and beta (the moving statistics are not counted); needs the shapes
        return int(shapes[_output_key(node)][1]) * 2 if shapes is not None else 0
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Print the layer table of `symbol` (a Symbol or a hybridized block) and its total
    parameter count. `shape` ({input name: shape}) adds output shapes and the counts that need
    them; `positions` are the column ends, as fractions of `line_length` when the last is <= 1."""
    sym = _as_symbol(symbol, "print_summary")
    shapes = None
    if shape is not None:
        shapes = _internal_values(sym, Symbol.infer_shape, shape, "print_summary", "shape")
    conf = json.loads(sym.tojson())
    nodes = conf["nodes"]
    # MXNet takes the entries [node, index, version] of the first head as node ids: node 0 (the
    # first input) and the first output's node count as heads; other variables are not layers
    heads = set(conf["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def row(fields):
        line = ""
        for field, end in zip(fields, positions):
            line = (line + str(field))[:end]
            line += " " * (end - len(line))
        print(line)

    def out_shape(node):
        if shapes is None:
            return []
        return shapes.get(_output_key(node), [None])[1:]

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        if node["op"] == "null" and i > 0:
            continue
        previous, pre_channels = [], 0
        if node["op"] != "null":
            for entry in node["inputs"]:
                src = nodes[entry[0]]
                if src["op"] == "null" and entry[0] not in heads:
                    continue
                previous.append(src["name"])
                if shapes is not None and _output_key(src) in shapes:
                    pre_channels += int(shapes[_output_key(src)][1])
        params = _layer_params(node, pre_channels, shapes)
        total += params
        row([f"{node['name']}({node['op']})", "x".join(str(d) for d in out_shape(node)),
             params, previous[0] if previous else ""])
        for name in previous[1:]:
            row(["", "", "", name])
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                    "_running_var", "_running_mean")
# MXNet's fill colours, by kind of node
_INPUT, _LINEAR, _ACTIVATION, _NORM, _POOL, _SHAPE, _SOFTMAX, _OTHER = (
    "#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")


def _node_label_and_colour(node):
    op, name, attrs = node["op"], node["name"], node.get("attrs") or {}
    if op == "Convolution":
        stride = "x".join(_digits(attrs["stride"])) if "stride" in attrs else "1"
        kernel = "x".join(_digits(attrs["kernel"]))
        return f"Convolution\n{kernel}/{stride}, {attrs['num_filter']}", _LINEAR
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs['num_hidden']}", _LINEAR
    if op == "BatchNorm":
        return name, _NORM
    if op == "Activation":
        return f"Activation\n{attrs['act_type']}", _ACTIVATION
    if op == "LeakyReLU":
        return f"LeakyReLU\n{attrs.get('act_type', 'Leaky')}", _ACTIVATION
    if op == "Pooling":
        kernel = "x".join(_digits(attrs["kernel"])) if "kernel" in attrs else "[]"
        stride = "x".join(_digits(attrs["stride"])) if "stride" in attrs else "1"
        return f"Pooling\n{attrs['pool_type']}, {kernel}/{stride}", _POOL
    if op in ("Concat", "Flatten", "Reshape"):
        return name, _SHAPE
    if op == "Softmax":
        return name, _SOFTMAX
    return (attrs["op_type"] if op == "Custom" else name), _OTHER


def _edge_key(src):
    """The internal output whose shape/type labels an edge from `src`: MXNet takes the last
    output of a node with a ``num_outputs`` attribute."""
    if src["op"] == "null":
        return src["name"]
    key = src["name"] + "_output"
    if "num_outputs" in (src.get("attrs") or {}):
        key += str(int(src["attrs"]["num_outputs"]) - 1)
    return key


_digraph_class = None


def _digraph():
    """graphviz.Digraph, subclassed so that rendering without the Graphviz programs says what
    is missing (created on first use: graphviz is an optional dependency)."""
    global _digraph_class
    if _digraph_class is None:
        try:
            import graphviz
        except ImportError:
            raise ImportError("plot_network needs the graphviz Python package: "
                              "pip install graphviz (or mxc[viz])") from None

        class GraphvizNotFound(graphviz.ExecutableNotFound):
            """graphviz's error, with what to install."""

            def __init__(self, err):
                RuntimeError.__init__(
                    self, f"{err}. Rendering a network plot needs the Graphviz programs (dot) "
                    "from the system package 'graphviz' (e.g. apt-get install graphviz, brew "
                    "install graphviz, conda install graphviz); without them the graph is still "
                    "built and its DOT text is in .source")

        class Digraph(graphviz.Digraph):
            __doc__ = graphviz.Digraph.__doc__

            def render(self, *args, **kwargs):
                try:
                    return super().render(*args, **kwargs)
                except GraphvizNotFound:
                    raise
                except graphviz.ExecutableNotFound as err:
                    raise GraphvizNotFound(err) from err

            def pipe(self, *args, **kwargs):
                try:
                    return super().pipe(*args, **kwargs)
                except GraphvizNotFound:
                    raise
                except graphviz.ExecutableNotFound as err:
                    raise GraphvizNotFound(err) from err

        _digraph_class = Digraph
    return _digraph_class


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None,
                 node_attrs=None, hide_weights=True):
    """A `graphviz.Digraph` named `title` (rendered as `save_format`) of the graph of `symbol`
    (a Symbol or a hybridized block): one box per operator, ovals for inputs, an edge from each
    node to each of its inputs (drawn pointing back), labelled with the input's shape (when
    `shape` is given: {input name: shape}) and type (`dtype`: {input name: numpy type}).
    `node_attrs` updates the Graphviz node attributes; `hide_weights` leaves out the
    parameters' nodes and edges (with False their edges go to unlabelled ovals, as in MXNet)."""
    Digraph = _digraph()
    sym = _as_symbol(symbol, "plot_network")
    shapes = types = None
    if shape is not None:
        shapes = _internal_values(sym, Symbol.infer_shape, shape, "plot_network", "shape")
    if dtype is not None:
        types = _internal_values(sym, Symbol.infer_type, dtype, "plot_network", "type")
    nodes = json.loads(sym.tojson())["nodes"]
    names = [node["name"] for node in nodes]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this may "
                      "result in cyclic graph. Repeated names: " + ",".join(repeated),
                      RuntimeWarning)
    base_attr = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
                 "style": "filled"}
    base_attr.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)

    hidden = set()
    for node in nodes:
        attr = copy.deepcopy(base_attr)
        if node["op"] == "null":
            if node["name"].endswith(_WEIGHT_SUFFIXES):
                # never drawn; with hide_weights=False its edges still are
                if hide_weights:
                    hidden.add(node["name"])
                continue
            label, attr["shape"], attr["fillcolor"] = node["name"], "oval", _INPUT
        else:
            label, attr["fillcolor"] = _node_label_and_colour(node)
        dot.node(name=node["name"], label=label, **attr)

    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"]
        if node["op"] == "_contrib_BilinearResize2D":
            inputs = inputs[:1]  # its second input only lends a shape
        for entry in inputs:
            src = nodes[entry[0]]
            if src["name"] in hidden:
                continue
            label = ""
            if shapes is not None:
                label = "x".join(str(d) for d in shapes[_edge_key(src)][1:])
            if types is not None:
                label += f"({np.dtype(types[_edge_key(src)]).name})"
            dot.edge(tail_name=node["name"], head_name=src["name"], dir="back",
                     arrowtail="open", label=label)
    return dot
