"""mx.viz against MXNet 1.9.1: print_summary's text and plot_network's graph for the networks of
tests/data/visualization/nets.py (fixtures from tests/data/make_visualization_golden.py)."""
import contextlib
import io
import json
import os
import sys

import numpy as np
import pytest

import mxc as mx
from mxc import visualization

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "visualization")
sys.path.insert(0, HERE)
import nets  # noqa: E402

try:
    import graphviz  # noqa: F401
    HAS_GRAPHVIZ = True
except ImportError:
    HAS_GRAPHVIZ = False
needs_graphviz = pytest.mark.skipif(not HAS_GRAPHVIZ, reason="the graphviz package is absent")


def _golden(case):
    with open(os.path.join(HERE, case + "-summary.txt")) as f:
        return f.read()


def _summary(sym, **kwargs):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        mx.viz.print_summary(sym, **kwargs)
    return text.getvalue()


@pytest.mark.parametrize("source", ["mxnet-json", "mxc-built"])
@pytest.mark.parametrize("net", sorted(nets.NETS))
def test_print_summary_matches_mxnet(net, source):
    built, shapes = nets.NETS[net](mx)
    sym = mx.sym.load(os.path.join(HERE, net + "-symbol.json")) if source == "mxnet-json" \
        else built
    assert _summary(sym, shape=shapes) == _golden(net)


@pytest.mark.parametrize("case", sorted(nets.SUMMARIES))
def test_print_summary_options_match_mxnet(case):
    net, kwargs, with_shape = nets.SUMMARIES[case]
    sym, shapes = nets.NETS[net](mx)
    assert _summary(sym, shape=shapes if with_shape else None, **kwargs) == _golden(case)


def test_print_summary_totals_are_the_parameter_counts():
    # MXNet's table counts weights and biases, and gamma/beta of BatchNorm (not its running
    # statistics): for resnet18_v1 that is the block's parameter count minus the running stats
    net = mx.gluon.model_zoo.vision.resnet18_v1(prefix="resnetv10_")
    net.initialize()
    net(mx.nd.zeros((1, 3, 32, 32)))
    params = net.collect_params()
    total = sum(int(np.prod(p.shape)) for p in params.values())
    stats = sum(int(np.prod(p.shape)) for n, p in params.items() if "running" in n)
    assert f"Total params: {total - stats}\n" in _golden("resnet18_v1")


def _hybridized_resnet():
    net = mx.gluon.model_zoo.vision.resnet18_v1(prefix="resnetv10_")
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224)))
    return net


def test_print_summary_of_a_hybridized_block():
    net = _hybridized_resnet()
    assert _summary(net, shape={"data": (1, 3, 224, 224)}) == _golden("resnet18_v1")


def test_errors_name_the_function_and_the_problem():
    with pytest.raises(TypeError, match="print_summary: symbol must be a Symbol"):
        mx.viz.print_summary("not a symbol")
    net = mx.gluon.nn.Dense(3)
    with pytest.raises(ValueError, match="print_summary: the Dense block has no graph yet"):
        mx.viz.print_summary(net)
    sym, _ = nets.mlp(mx)
    with pytest.raises(mx.base.MXNetError, match="SoftmaxOutput: label shape"):
        mx.viz.print_summary(sym, shape={"data": (4, 5), "softmax_label": (3, 2)})
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="input shape is incomplete"):
        mx.viz.print_summary(sym, shape={})


# ---- plot_network -------------------------------------------------------------------------------
@pytest.fixture
def recorded(monkeypatch):
    """The node and edge calls made on graphviz.Digraph, as the fixture script records them."""
    import graphviz
    calls = []
    node, edge = graphviz.Digraph.node, graphviz.Digraph.edge

    def rec_node(self, name, label=None, **attrs):
        calls.append(["node", name, label, attrs])
        return node(self, name, label=label, **attrs)

    def rec_edge(self, tail_name, head_name, label=None, **attrs):
        if label is not None:
            attrs["label"] = label
        calls.append(["edge", tail_name, head_name, attrs])
        return edge(self, tail_name, head_name, **attrs)

    monkeypatch.setattr(graphviz.Digraph, "node", rec_node)
    monkeypatch.setattr(graphviz.Digraph, "edge", rec_edge)
    return calls


with open(os.path.join(HERE, "plots.json")) as _f:
    PLOTS = json.load(_f)


def _plot_kwargs(kwargs, shapes):
    out = dict(kwargs)
    if out.get("shape"):
        out["shape"] = shapes
    if out.get("dtype"):
        out["dtype"] = {k: np.float32 for k in shapes}
    return out


@needs_graphviz
@pytest.mark.parametrize("case", sorted(nets.PLOTS))
def test_plot_network_matches_mxnet(case, recorded):
    import graphviz
    net, kwargs = nets.PLOTS[case]
    sym, shapes = nets.NETS[net](mx)
    dot = mx.viz.plot_network(sym, **_plot_kwargs(kwargs, shapes))
    assert isinstance(dot, graphviz.Digraph)
    want = PLOTS[case]
    assert (dot.name, dot.format) == (want["name"], want["format"])
    assert recorded == want["calls"]
    # the DOT text names every drawn node and edge
    for kind, a, b, _ in want["calls"]:
        assert (f"{a} -> {b}" if kind == "edge" else a) in dot.source


@needs_graphviz
def test_plot_network_of_a_hybridized_block(recorded):
    net = _hybridized_resnet()
    mx.viz.plot_network(net, shape={"data": (1, 3, 224, 224)})
    assert recorded == PLOTS["resnet18_v1"]["calls"]


@needs_graphviz
def test_rendering_without_the_graphviz_programs_says_what_to_install(monkeypatch, tmp_path):
    import graphviz
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    dot = mx.viz.plot_network(nets.mlp(mx)[0])
    with pytest.raises(graphviz.ExecutableNotFound, match="system package 'graphviz'"):
        dot.render(str(tmp_path / "plot"))
    with pytest.raises(graphviz.ExecutableNotFound, match="apt-get install graphviz"):
        dot.pipe()


def test_plot_network_without_the_graphviz_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    monkeypatch.setattr(visualization, "_digraph_class", None)
    with pytest.raises(ImportError, match="pip install graphviz"):
        mx.viz.plot_network(nets.mlp(mx)[0])


def test_package_names():
    assert mx.viz is mx.visualization
    assert mx.viz.print_summary is visualization.print_summary
