"""The ONNX graph a conversion builds, and the view of one MXNet node a converter works on.

Both directions share the attribute parsing of MXNet's string attributes (``"(3, 3)"``,
``"True"``, ``"None"``) and the unique-name bookkeeping of the ONNX side."""
import ast

import numpy as np

from ..base import MXNetError

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def parse_attr(text):
    """An MXNet attribute string as a Python value: numbers, tuples, True/False, None, words."""
    if not isinstance(text, str):
        return text
    low = text.strip()
    if low.lower() in ("true", "false"):
        return low.lower() == "true"
    if low in ("None", ""):
        return None
    try:
        return ast.literal_eval(low)
    except (ValueError, SyntaxError):
        return low   # a word: 'relu', 'NCHW', 'float32'


class OnnxGraph:
    """Nodes and initializers being collected for one ONNX GraphProto."""

    def __init__(self, helper, numpy_helper):
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes = []
        self.initializers = []
        self._used = set()

    def reserve(self, name):
        """Mark a tensor name taken (MXNet's own names keep their spelling)."""
        self._used.add(name)
        return name

    def fresh(self, base):
        """A name not used yet, derived from `base` (for the helper tensors a converter adds)."""
        name, k = base, 0
        while name in self._used:
            k += 1
            name = f"{base}_{k}"
        self._used.add(name)
        return name

    def node(self, op_type, inputs, outputs=None, name=None, **attrs):
        """Append one ONNX node; returns its first output name (fresh when not given)."""
        if outputs is None:
            outputs = [self.fresh(f"{name or op_type}_out")]
        elif isinstance(outputs, str):
            outputs = [outputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), list(outputs),
                                                name=self.fresh(name or op_type), **attrs))
        return outputs[0]

    def const(self, value, base="const", dtype=None):
        """An initializer holding `value` (a numpy array or a Python number/list)."""
        arr = np.asarray(value, dtype=dtype)
        name = self.fresh(base)
        self.initializers.append(self.numpy_helper.from_array(arr, name))
        return name

    def param(self, name, arr):
        """An initializer for an MXNet parameter, under its own name."""
        self.reserve(name)
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name


class MxNode:
    """One MXNet operator node as its converter sees it: attributes, the ONNX names of its
    inputs and outputs, and the shapes/dtypes inferred for them."""

    def __init__(self, graph, op, name, attrs, inputs, outputs, in_shapes, in_dtypes,
                 out_shapes, dynamic):
        self.g = graph
        self.op = op
        self.name = name
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = outputs
        self.in_shapes = in_shapes
        self.in_dtypes = in_dtypes
        self.out_shapes = out_shapes
        self.dynamic = dynamic

    def get(self, key, default=None):
        value = parse_attr(self.attrs.get(key))
        return default if value is None else value

    def ints(self, key, default=()):
        value = self.get(key, default)
        return [int(v) for v in (value if isinstance(value, (tuple, list)) else (value,))]

    def ndim(self, i=0):
        return len(self.in_shapes[i])

    def dtype(self, i=0):
        return np.dtype(self.in_dtypes[i])

    def scalar(self, value, i=0):
        """A 0-d constant in input i's dtype (MXNet's scalar operators keep the array's dtype)."""
        return self.g.const(np.array(value, dtype=self.dtype(i)), f"{self.name}_scalar")

    def ints_const(self, values, base="shape"):
        return self.g.const(np.array(list(values), dtype=np.int64), f"{self.name}_{base}")

    def emit(self, op_type, inputs=None, **attrs):
        """The node's main ONNX node: writes the node's first output."""
        return self.g.node(op_type, self.inputs if inputs is None else inputs, self.outputs[0],
                           name=self.name, **attrs)

    def step(self, op_type, inputs, **attrs):
        """A helper ONNX node on the way to the output (a fresh tensor name)."""
        return self.g.node(op_type, inputs, None, name=f"{self.name}_{op_type.lower()}", **attrs)

    def fail(self, what):
        raise MXNetError(f"ONNX export: operator {self.op} (node '{self.name}'): {what}")
