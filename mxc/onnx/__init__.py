"""``mx.onnx``: MXNet models to ONNX (``export_model``) and back (``import_model``, also under
``mx.contrib.onnx`` as in MXNet 1.9). Needs the ``onnx`` package (the ``onnx`` extra), imported
only when a model is converted."""
from .export import export_model, get_operator_support  # noqa: F401
from .import_onnx import import_model, get_model_metadata  # noqa: F401
