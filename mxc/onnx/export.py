"""``mx.onnx.export_model``: an MXNet symbol and its parameters as an ONNX model (opset 17).

The symbol is read through its JSON (MXNet's graph format), shapes and dtypes of every node
output come from the symbol's own inference, and each operator node is handed to its converter
in :mod:`mxc.onnx.export_ops`."""
import collections
import json
import logging
import os

import numpy as np

from ..base import MXNetError
from .. import ndarray as nd
from .. import symbol as sym_mod
from ._graph import MxNode, OnnxGraph
from .export_ops import CONVERTERS

OPSET = 17   # LayerNormalization arrived in 17; everything else here is 13 or older


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("mx.onnx needs the 'onnx' package: pip install 'mxc[onnx]'") from None
    return onnx


def get_operator_support():
    """The MXNet operator names export_model converts."""
    return sorted(CONVERTERS)


def _as_numpy(value):
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def _load_params(params):
    """A params dict without 'arg:'/'aux:' prefixes, from a file, a dict or [arg, aux]."""
    if isinstance(params, (str, os.PathLike)):
        params = nd.load(os.fspath(params))
        if isinstance(params, list) and not params:   # a model without parameters
            params = {}
    elif isinstance(params, (list, tuple)) and len(params) == 2:
        merged = dict(params[0])
        merged.update(params[1])
        params = merged
    if not isinstance(params, dict):
        raise ValueError("params must be a .params file path, a dict or [arg_params, aux_params]")
    return {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: _as_numpy(v)
            for k, v in params.items()}


def _symbol_and_params(sym, params):
    """(Symbol, params dict) from a Symbol, a -symbol.json path or a hybridized block."""
    if hasattr(sym, "export") and hasattr(sym, "_cached_graph"):   # a hybridized HybridBlock
        if not sym._cached_graph:
            raise RuntimeError("export_model: first call block.hybridize() and run forward with "
                               "the block at least once")
        return sym._cached_graph[1], {p.name: p.data().asnumpy()
                                      for p in sym.collect_params().values()}
    if isinstance(sym, (str, os.PathLike)):
        sym = sym_mod.load(os.fspath(sym))
    if not isinstance(sym, sym_mod.Symbol):
        raise ValueError("sym must be a Symbol, a -symbol.json path or a hybridized HybridBlock")
    return sym, _load_params(params)


def _node_entries(sym, js, feed_shapes, feed_types):
    """Shapes and dtypes per (node id, output index), from inference over the internals."""
    internals = sym.get_internals()
    names = internals.list_outputs()
    _, out_shapes, _ = internals.infer_shape(**feed_shapes)
    _, out_types, _ = internals.infer_type(**feed_types)
    by_name = dict(zip(names, zip(out_shapes, out_types)))
    entries = {}
    for nid, node in enumerate(js["nodes"]):
        if node["op"] == "null":
            entries[(nid, 0)] = by_name.get(node["name"])
            continue
        outs = [n for n in names if n.startswith(node["name"] + "_")
                and n[len(node["name"]) + 1:].startswith("output")]
        for j, out in enumerate(outs):
            entries[(nid, j)] = by_name[out]
    return entries


def _tensor_name(node, j, num_outputs):
    return node["name"] if num_outputs == 1 or j == 0 else f"{node['name']}_output{j}"


def _data_inputs(sym, params, in_shapes, in_types):
    """{name: shape}, {name: dtype} of the data inputs (every argument not in params, a
    trailing '...label' left out when in_shapes has no shape for it) and of the params."""
    # MXNet's order: every input (auxiliary states too) in the graph's order
    data_names = [n for n in sym.list_inputs() if n not in params]
    if len(in_shapes) != len(data_names):
        unlabelled = [n for n in data_names if not n.endswith("label")]
        if len(in_shapes) != len(unlabelled):
            raise ValueError(f"export_model: {len(in_shapes)} input shapes for the inputs "
                             f"{data_names}")
        data_names = unlabelled
    if len(in_types) != len(in_shapes):
        raise ValueError("export_model: in_types and in_shapes must have the same length")
    shapes = dict(zip(data_names, (tuple(s) for s in in_shapes)))
    types = {n: np.dtype(t) for n, t in zip(data_names, in_types)}
    for name in sym.list_arguments() + sym.list_auxiliary_states():
        if name in params:
            shapes.setdefault(name, params[name].shape)
            types.setdefault(name, params[name].dtype)
    return data_names, shapes, types


def _declare_variables(graph, nodes, params, data_names, types, onnx_shapes):
    """Params become initializers, data inputs graph inputs (value infos, returned)."""
    helper = graph.helper
    inputs, declared = [], set()
    for node in nodes:
        name = node["name"]
        if node["op"] != "null" or name in declared:   # a variable may appear several times
            continue
        declared.add(name)
        if name in params:
            graph.param(name, params[name])
        elif name in data_names:
            inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(types[name]),
                list(onnx_shapes[data_names.index(name)])))
        elif not name.endswith("label"):
            raise MXNetError(f"ONNX export: no value for the argument '{name}' (give it in "
                             "params or as an input)")
    return inputs


def _convert_nodes(graph, nodes, entries, n_outputs, dynamic, verbose):
    """Each operator node through its converter, in the JSON's (topological) order."""
    for nid, node in enumerate(nodes):
        op = node["op"]
        if op == "null":
            continue
        converter = CONVERTERS.get(op)
        if converter is None:
            raise MXNetError(f"ONNX export: operator '{op}' (node '{node['name']}') has no ONNX "
                             "converter; supported operators: mx.onnx.get_operator_support()")
        ins = [(i[0], i[1]) for i in node["inputs"]]
        outs = [(nid, j) for j in range(n_outputs[nid])]
        if verbose:
            logging.info("ONNX export: %s (%s)", node["name"], op)
        converter(MxNode(
            graph, op, node["name"], node.get("attrs", {}),
            inputs=[_tensor_name(nodes[i], j, n_outputs[i]) for i, j in ins],
            outputs=[_tensor_name(node, j, n_outputs[nid]) for _, j in outs],
            in_shapes=[(entries.get(k) or (None, None))[0] for k in ins],
            in_dtypes=[(entries.get(k) or (None, None))[1] for k in ins],
            out_shapes=[entries[k][0] for k in outs if k in entries], dynamic=dynamic))


def convert(sym, params, in_shapes, in_types, dynamic=False, dynamic_input_shapes=None,
            verbose=False):
    """The ONNX ModelProto for `sym` with `params` (a dict of numpy arrays)."""
    onnx = _onnx()
    from onnx import helper, numpy_helper
    js = json.loads(sym.tojson())
    nodes = js["nodes"]
    data_names, shapes, types = _data_inputs(sym, params, in_shapes, in_types)
    entries = _node_entries(sym, js, shapes, types)
    counts = collections.Counter(nid for nid, _ in entries)
    n_outputs = {nid: counts[nid] or 1 for nid in range(len(nodes))}

    graph = OnnxGraph(helper, numpy_helper)
    for node in nodes:
        graph.reserve(node["name"])
    if dynamic:
        onnx_shapes = dynamic_input_shapes or [[None] * len(s) for s in in_shapes]
    else:
        onnx_shapes = in_shapes
    inputs = _declare_variables(graph, nodes, params, data_names, types, onnx_shapes)
    _convert_nodes(graph, nodes, entries, n_outputs, dynamic, verbose)
    outputs = []
    for nid, j, _ in js["heads"]:
        shape, dtype = entries[(nid, j)]
        outputs.append(helper.make_tensor_value_info(
            _tensor_name(nodes[nid], j, n_outputs[nid]),
            helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
            [None] * len(shape) if dynamic else list(shape)))
    used = {name for n in graph.nodes for name in n.input}   # e.g. gamma under fix_gamma
    onnx_graph = helper.make_graph(graph.nodes, "mxnet_converted_model", inputs, outputs,
                                   [t for t in graph.initializers if t.name in used])
    model = helper.make_model(onnx_graph, producer_name="mxc",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = min(model.ir_version, 8)   # readable by runtimes of the opset-17 era
    onnx.checker.check_model(model)
    return model


def export_model(sym, params, in_shapes=None, in_types=np.float32, onnx_file_path="model.onnx",
                 verbose=False, dynamic=False, dynamic_input_shapes=None,
                 run_shape_inference=False, input_type=None, input_shape=None):
    """Export an MXNet model to an ONNX file; returns ``onnx_file_path``.

    ``sym``: a Symbol, a ``-symbol.json`` path or a hybridized HybridBlock (run once);
    ``params``: a ``.params`` path, a dict (arg and aux params, 'arg:'/'aux:' prefixes allowed)
    or ``[arg_params, aux_params]`` (ignored for a block). ``in_shapes``/``in_types``: one per
    data input. ``dynamic``: input dimensions become symbolic (all of them unless
    ``dynamic_input_shapes`` gives the shapes with None where a dimension may vary).
    ``input_type``/``input_shape`` are the old names of in_types/in_shapes."""
    onnx = _onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("export_model needs in_shapes, one shape per data input")
    if in_shapes and isinstance(in_shapes[0], int):
        in_shapes = [in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if dynamic_input_shapes is not None and len(dynamic_input_shapes) != len(in_shapes):
        raise ValueError("dynamic_input_shapes needs one shape per input")
    sym, params = _symbol_and_params(sym, params)
    model = convert(sym, params, in_shapes, in_types, dynamic, dynamic_input_shapes, verbose)
    if run_shape_inference:
        model = onnx.shape_inference.infer_shapes(model)
    path = os.fspath(onnx_file_path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, path)
    return path
