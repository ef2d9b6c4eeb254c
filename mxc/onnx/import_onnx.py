"""ONNX model -> (Symbol, arg_params, aux_params): ``import_model`` and ``get_model_metadata``.

Initializers (and Constant nodes) are constants; one becomes a parameter Variable only where an
operator takes it as a tensor, so shape tensors, axes and scalars stay attributes."""
import os

from .. import ndarray as nd
from .. import symbol as S
from ..base import MXNetError
from .export import _onnx
from . import import_shapes
from .import_ops import IMPORTERS, OnnxNode


class _Importer:
    def __init__(self, model):
        onnx = _onnx()
        from onnx import numpy_helper
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:   # noqa: BLE001  ranks then come only from declared value infos
            pass
        graph = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.ranks = {}
        self.dims = {}          # tensor -> its dimensions shape inference knows (None: unknown)
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            if vi.type.tensor_type.HasField("shape"):
                dims = vi.type.tensor_type.shape.dim
                self.ranks[vi.name] = len(dims)
                self.dims[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                                           for d in dims)
        self.shape_exprs = {}   # shape tensors computed in the graph (import_shapes)
        self.tensors = {}
        self.params = {}
        for vi in graph.input:
            if vi.name not in self.consts:
                self.tensors[vi.name] = S.var(vi.name)
        self.graph = graph

    def is_const(self, name):
        return name in self.consts

    def is_scalar(self, name):
        return name in self.consts and self.consts[name].ndim == 0

    def const(self, name):
        if name in self.shape_exprs:       # computed from shapes shape inference knows
            value = import_shapes.static_value(self, name)
            if value is not None:
                return value
        if name not in self.consts:
            raise MXNetError(f"ONNX import: tensor '{name}' must be a constant (an initializer)")
        return self.consts[name]

    def shape(self, name):
        return self.const(name).shape

    def ints(self, node, i, what):
        """Input i of `node` as integers: a constant, or a shape computed in the graph whose
        dimensions are all known."""
        try:
            return import_shapes.static_ints(self, node.inputs[i], what)
        except ValueError as e:
            node.fail(str(e))

    def rank(self, name):
        if name in self.consts:
            return self.consts[name].ndim
        return self.ranks.get(name)

    def sym(self, name):
        """The Symbol for a tensor; a constant becomes a parameter Variable on first use."""
        if name not in self.tensors:
            if name in self.shape_exprs and import_shapes.static_value(self, name) is not None:
                self.consts[name] = import_shapes.static_value(self, name)
            elif name in self.shape_exprs:
                raise MXNetError(f"ONNX import: the shape tensor '{name}' (computed from the "
                                 "dimensions of graph tensors) is used as data; only shape "
                                 "inputs (Reshape, Expand, Tile, ConstantOfShape, Resize) "
                                 "take it")
            if name not in self.consts:
                raise MXNetError(f"ONNX import: tensor '{name}' is used before it is produced")
            self.tensors[name] = S.var(name, shape=self.consts[name].shape,
                                       dtype=self.consts[name].dtype)
            self.params[name] = self.consts[name]
        return self.tensors[name]

    def run(self):
        from onnx import helper, numpy_helper
        for proto in self.graph.node:
            if proto.op_type == "Constant":
                value = helper.get_attribute_value(proto.attribute[0])
                self.consts[proto.output[0]] = numpy_helper.to_array(value)
                continue
            node = OnnxNode(proto, helper)
            try:
                if import_shapes.evaluate(self, node):   # constants and shape arithmetic
                    continue
            except ValueError as e:
                node.fail(str(e))
            importer = IMPORTERS.get(node.op)
            if importer is None:
                raise MXNetError(f"ONNX import: operator '{node.op}' (node '{node.name}') has no "
                                 "MXNet converter")
            out = importer(self, node)
            if len(node.outputs) > 1:   # Split: one Symbol per output
                for j, name in enumerate(node.outputs):
                    self.tensors[name] = out[j]
            else:
                self.tensors[node.outputs[0]] = out
        outs = [self.sym(o.name) for o in self.graph.output]
        sym = outs[0] if len(outs) == 1 else S.Group(outs)
        used_args = set(sym.list_arguments())
        used_aux = set(sym.list_auxiliary_states())
        arg = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items() if k in used_args}
        aux = {k: nd.array(v, dtype=v.dtype) for k, v in self.params.items() if k in used_aux}
        return sym, arg, aux


def _load(model_file):
    onnx = _onnx()
    if not os.path.exists(model_file):
        raise MXNetError(f"ONNX import: no such file '{model_file}'")
    return onnx.load_model(model_file)


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` for the ONNX file ``model_file``."""
    return _Importer(_load(model_file)).run()


def _dims(vi):
    return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)


def get_model_metadata(model_file):
    """``{'input_tensor_data': [(name, shape, onnx elem type)], 'output_tensor_data':
    [(name, shape)]}`` of the model's data inputs (not initializers) and outputs; a dynamic
    dimension is 0, as in MXNet."""
    graph = _load(model_file).graph
    params = {t.name for t in graph.initializer}
    return {"input_tensor_data": [(vi.name, _dims(vi), vi.type.tensor_type.elem_type)
                                  for vi in graph.input if vi.name not in params],
            "output_tensor_data": [(vi.name, _dims(vi)) for vi in graph.output]}
