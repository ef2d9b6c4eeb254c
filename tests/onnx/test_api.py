"""export_model's ways of taking a model (files, dicts, [arg, aux], blocks), its errors, and
mx.contrib.onnx's MXNet 1.9 names."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

from .common import assert_close, mx_forward, onnx, random_params, run_onnx

S = mx.sym


def small_net():
    x = S.var("data")
    c = S.Convolution(x, num_filter=4, kernel=(3, 3), name="conv")
    b = S.BatchNorm(c, fix_gamma=False, name="bn")
    return S.FullyConnected(S.Activation(b, act_type="relu"), num_hidden=3, name="fc")


def test_export_from_files_and_arg_aux_lists(rng, tmp_path):
    sym = small_net()
    params = random_params(sym, {"data": (1, 2, 5, 5)}, rng)
    aux_names = sym.list_auxiliary_states()
    prefix = str(tmp_path / "net")
    sym.save(f"{prefix}-symbol.json")
    mx.nd.save(f"{prefix}-0000.params",
               {("aux:" if k in aux_names else "arg:") + k: v for k, v in params.items()})
    x = rng.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)
    expected = mx_forward(sym, params, {"data": x})[0]
    from_files = mx.onnx.export_model(f"{prefix}-symbol.json", f"{prefix}-0000.params",
                                      [(1, 2, 5, 5)], np.float32,
                                      onnx_file_path=str(tmp_path / "files.onnx"))
    arg = {k: v for k, v in params.items() if k not in aux_names}
    aux = {k: v for k, v in params.items() if k in aux_names}
    from_lists = mx.onnx.export_model(sym, [arg, aux], input_shape=[(1, 2, 5, 5)],
                                      input_type=np.float32,
                                      onnx_file_path=str(tmp_path / "lists.onnx"))
    for path in (from_files, from_lists):
        assert_close(run_onnx(path, {"data": x})[0], expected)
    assert not list(tmp_path.glob("*.tmp*"))   # written under a temporary name, then renamed


def test_metadata_and_shape_inference(rng, tmp_path):
    sym = small_net()
    params = random_params(sym, {"data": (2, 2, 5, 5)}, rng)
    static = mx.onnx.export_model(sym, params, [(2, 2, 5, 5)],
                                  onnx_file_path=str(tmp_path / "s.onnx"),
                                  run_shape_inference=True)
    meta = mx.contrib.onnx.get_model_metadata(static)
    assert meta == {"input_tensor_data": [("data", (2, 2, 5, 5), onnx.TensorProto.FLOAT)],
                    "output_tensor_data": [("fc", (2, 3))]}
    model = onnx.load(static)
    assert model.opset_import[0].version >= 13
    assert {vi.name for vi in model.graph.value_info} >= {"conv", "bn"}   # inferred shapes
    dyn = mx.onnx.export_model(sym, params, [(2, 2, 5, 5)], dynamic=True,
                               dynamic_input_shapes=[(None, 2, 5, 5)],
                               onnx_file_path=str(tmp_path / "d.onnx"))
    meta = mx.contrib.onnx.get_model_metadata(dyn)
    assert meta["input_tensor_data"] == [("data", (0, 2, 5, 5), onnx.TensorProto.FLOAT)]
    x = rng.uniform(-1, 1, (3, 2, 5, 5)).astype(np.float32)
    assert_close(run_onnx(dyn, {"data": x})[0], mx_forward(sym, params, {"data": x})[0])


def test_contrib_export_alias_and_gluon_import(rng, tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation="tanh"), mx.gluon.nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    expected = net(mx.nd.array(x)).asnumpy()
    path = mx.contrib.onnx.export_model(net, None, [(3, 5)],
                                        onnx_file_path=str(tmp_path / "dense.onnx"))
    assert_close(run_onnx(path, {"data": x})[0], expected)
    block = mx.contrib.onnx.import_to_gluon(path, ctx=mx.cpu())
    np.testing.assert_allclose(block(mx.nd.array(x)).asnumpy(), expected, rtol=1e-6)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    assert sorted(arg) == sorted(p.name for p in net.collect_params().values()) and aux == {}


def test_block_must_have_run(tmp_path):
    net = mx.gluon.nn.Dense(2)
    net.initialize()
    net.hybridize()
    with pytest.raises(RuntimeError, match="hybridize"):
        mx.onnx.export_model(net, None, [(1, 3)], onnx_file_path=str(tmp_path / "x.onnx"))


def test_unsupported_operator_is_named(rng, tmp_path):
    sym = S.sort(S.var("data"), axis=-1, name="my_sort")
    with pytest.raises(MXNetError, match=r"operator 'sort' \(node 'my_sort'\)"):
        mx.onnx.export_model(sym, {}, [(2, 3)], onnx_file_path=str(tmp_path / "x.onnx"))
    assert not (tmp_path / "x.onnx").exists()
    assert "Convolution" in mx.onnx.get_operator_support()


def test_unsupported_attributes_are_named(rng, tmp_path):
    pool = S.Pooling(S.var("data"), kernel=(3,), stride=(2,), pooling_convention="same",
                     name="pl")
    with pytest.raises(MXNetError, match="Pooling.*'pl'.*pooling_convention 'same'"):
        mx.onnx.export_model(pool, {}, [(1, 2, 7)], onnx_file_path=str(tmp_path / "x"))
    deconv = S.Deconvolution(S.var("data"), num_filter=2, kernel=(3, 3), stride=(2, 2),
                             target_shape=(8, 8), name="dc")
    with pytest.raises(MXNetError, match="Deconvolution.*'dc'.*target_shape"):
        mx.onnx.export_model(deconv, {"dc_weight": mx.nd.ones((3, 2, 3, 3))}, [(1, 3, 4, 4)],
                             onnx_file_path=str(tmp_path / "x"))


def test_bad_arguments(tmp_path):
    sym = small_net()
    with pytest.raises(ValueError, match="in_shapes"):
        mx.onnx.export_model(sym, {}, None, onnx_file_path=str(tmp_path / "x"))
    with pytest.raises(ValueError, match="params"):
        mx.onnx.export_model(sym, 3, [(1, 2, 5, 5)], onnx_file_path=str(tmp_path / "x"))
    with pytest.raises(ValueError, match="input shapes"):
        mx.onnx.export_model(sym, {}, [(1, 2, 5, 5), (1, 2)], onnx_file_path=str(tmp_path / "x"))
    with pytest.raises(MXNetError, match="no such file"):
        mx.contrib.onnx.import_model(str(tmp_path / "missing.onnx"))
