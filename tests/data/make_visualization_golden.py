"""Write the fixtures of tests/test_visualization.py with real MXNet 1.9.1. Run with the oracle's
interpreter (it has the graphviz Python package) from the repository root::

    /work/mxnet-oracle/bin/python tests/data/make_visualization_golden.py

For every network of tests/data/visualization/nets.py, in tests/data/visualization/:
- <net>-symbol.json: the symbol as MXNet saves it;
- <net>-summary.txt: what mx.viz.print_summary prints for it with its input shapes, and
  <case>-summary.txt for the other cases of nets.SUMMARIES;
and plots.json: for every case of nets.PLOTS, the graphviz.Digraph's name and format and the
sequence of node(name, label, attributes) and edge(tail, head, attributes) calls
mx.viz.plot_network makes (recorded, so the graphviz package versions do not matter).
The suite never imports MXNet.
"""
import contextlib
import io
import json
import os
import sys

import graphviz
import mxnet as mx
import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "visualization")
sys.path.insert(0, HERE)
import nets  # noqa: E402


def plot_kwargs(kwargs, shapes):
    out = dict(kwargs)
    if out.get("shape"):
        out["shape"] = shapes
    if out.get("dtype"):
        out["dtype"] = {k: np.float32 for k in shapes}
    return out


class Recorder(graphviz.Digraph):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def node(self, name, label=None, **attrs):
        self.calls.append(["node", name, label, attrs])
        super().node(name, label=label, **attrs)

    def edge(self, tail_name, head_name, label=None, **attrs):
        if label is not None:
            attrs["label"] = label
        self.calls.append(["edge", tail_name, head_name, attrs])
        super().edge(tail_name, head_name, **attrs)


def main():
    built = {name: build(mx) for name, build in nets.NETS.items()}
    summaries = {name: (name, {}, True) for name in nets.NETS}
    summaries.update(nets.SUMMARIES)
    for name, (sym, _) in built.items():
        sym.save(os.path.join(HERE, name + "-symbol.json"))
    for case, (net, kwargs, with_shape) in summaries.items():
        sym, shapes = built[net]
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            mx.viz.print_summary(sym, shape=shapes if with_shape else None, **kwargs)
        with open(os.path.join(HERE, case + "-summary.txt"), "w") as f:
            f.write(text.getvalue())
    graphviz.Digraph = Recorder  # plot_network imports Digraph from the module at each call
    plots = {}
    for case, (net, kwargs) in nets.PLOTS.items():
        sym, shapes = built[net]
        dot = mx.viz.plot_network(sym, **plot_kwargs(kwargs, shapes))
        plots[case] = {"name": dot.name, "format": dot.format, "calls": dot.calls}
    with open(os.path.join(HERE, "plots.json"), "w") as f:
        json.dump(plots, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
