"""``mx.contrib.onnx``: MXNet 1.9's ONNX entry points (``import_model``, ``import_to_gluon``,
``get_model_metadata``, and ``export_model``, which MXNet moved to ``mx.onnx``)."""
from ...onnx import export_model, get_model_metadata, import_model  # noqa: F401


def import_to_gluon(model_file, ctx):
    """The ONNX model as a ``gluon.SymbolBlock`` with its parameters loaded on ``ctx`` (a
    Context or a list of them); the block's inputs are the model's data inputs."""
    from ...gluon import SymbolBlock
    from ... import symbol
    sym, arg_params, aux_params = import_model(model_file)
    inputs = [symbol.var(name) for name, _, _ in
              get_model_metadata(model_file)["input_tensor_data"]]
    net = SymbolBlock(sym, inputs)
    loaded = dict(arg_params)
    loaded.update(aux_params)
    for name, param in net.collect_params().items():
        if name not in loaded:
            raise ValueError(f"import_to_gluon: no value for parameter '{name}' in {model_file}")
        param._load_init(loaded[name], ctx)
    return net
