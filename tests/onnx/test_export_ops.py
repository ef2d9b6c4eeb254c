"""Operator by operator: a small symbol exported by mxc computes in onnxruntime what mxc
computes, and importing the file back gives mxc's outputs again."""
import numpy as np
import pytest

import mxc as mx

from .common import assert_close, mx_forward, random_params, run_onnx

S = mx.sym
X = S.var("data")


def check(sym, shapes, rng, tmp_path, dynamic=False, other_shapes=None, roundtrip=True,
          feeds=None, rtol=1e-4):
    """Export `sym` (data inputs and their shapes in `shapes`), compare onnxruntime with mxc,
    then (optionally) at `other_shapes` with a dynamic export, then the import round trip."""
    params = random_params(sym, shapes, rng)
    feeds = feeds or {}
    feeds = {n: feeds[n] if n in feeds else rng.uniform(-2, 2, s).astype(np.float32)
             for n, s in shapes.items()}
    names = [n for n in sym.list_arguments() if n in shapes]
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(sym, params, [shapes[n] for n in names], onnx_file_path=path,
                         dynamic=dynamic)
    expected = mx_forward(sym, params, feeds)
    for got, want in zip(run_onnx(path, feeds), expected):
        assert_close(got, want, rtol)
    if other_shapes:
        other = {n: rng.uniform(-2, 2, s).astype(np.float32) for n, s in other_shapes.items()}
        for got, want in zip(run_onnx(path, other), mx_forward(sym, params, other)):
            assert_close(got, want, rtol)
    if roundtrip:
        sym2, arg, aux = mx.contrib.onnx.import_model(path)
        for got, want in zip(mx_forward(sym2, {**arg, **aux}, feeds), expected):
            assert_close(got, want, 1e-5)


def conv_net():
    c = S.Convolution(X, num_filter=8, kernel=(3, 3), pad=(1, 1), name="c1")
    c = S.Convolution(c, num_filter=8, kernel=(3, 3), num_group=4, dilate=(2, 2), pad=(2, 2),
                      stride=(2, 2), no_bias=True, name="c2")
    return S.BatchNorm(c, fix_gamma=True, eps=1e-4, name="bn")


CASES = {
    "conv_groups_dilation_bn": (conv_net(), {"data": (2, 4, 9, 9)}),
    "deconvolution": (S.Deconvolution(X, num_filter=6, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                      adj=(1, 1), num_group=2, name="dc"), {"data": (1, 4, 5, 5)}),
    "conv1d": (S.Convolution(X, num_filter=3, kernel=(3,), name="c"), {"data": (2, 2, 7)}),
    "pool_max_full": (S.Pooling(X, kernel=(3, 3), stride=(2, 2), pool_type="max",
                                pooling_convention="full"), {"data": (1, 2, 8, 8)}),
    "pool_avg_pad_excluded": (S.Pooling(X, kernel=(3, 3), pad=(1, 1), pool_type="avg",
                                        count_include_pad=False), {"data": (1, 2, 6, 6)}),
    "pool_avg_pad_included": (S.Pooling(X, kernel=(3, 3), pad=(1, 1), stride=(2, 2),
                                        pool_type="avg"), {"data": (1, 2, 7, 7)}),
    "pool_sum": (S.Pooling(X, kernel=(2, 2), stride=(2, 2), pool_type="sum"),
                 {"data": (1, 2, 6, 6)}),
    "pool_global_max": (S.Pooling(X, kernel=(1, 1), global_pool=True, pool_type="max"),
                        {"data": (2, 3, 5, 4)}),
    "pool_global_avg": (S.Pooling(X, kernel=(1, 1), global_pool=True, pool_type="avg"),
                        {"data": (2, 3, 5, 4)}),
    "fc_flatten": (S.FullyConnected(X, num_hidden=5, name="fc"), {"data": (3, 2, 4)}),
    "fc_no_flatten_no_bias": (S.FullyConnected(X, num_hidden=5, flatten=False, no_bias=True,
                                               name="fc"), {"data": (3, 2, 4)}),
    "fc_no_flatten": (S.FullyConnected(X, num_hidden=5, flatten=False, name="fc"),
                      {"data": (3, 2, 4)}),
    "layernorm_softmax": (S.softmax(S.LayerNorm(X, eps=1e-5, name="ln"), axis=-1),
                          {"data": (2, 3, 8)}),
    "log_softmax_axis1": (S.log_softmax(X, axis=1), {"data": (2, 3, 4)}),
    "softmax_temperature": (S.softmax(X, temperature=2.0), {"data": (2, 5)}),
    "transpose_batch_dot": (S.batch_dot(X, S.transpose(S.var("k"), axes=(0, 2, 1)),
                                        transpose_b=True),
                            {"data": (2, 3, 4), "k": (2, 4, 5)}),
    "dot_transposed": (S.dot(X, S.var("w"), transpose_a=True, transpose_b=True),
                       {"data": (4, 3), "w": (5, 4)}),
    "dot_nd_by_2d": (S.dot(X, S.var("w")), {"data": (2, 3, 4), "w": (4, 5)}),
    "slice_axis_concat": (S.concat(S.slice_axis(X, axis=1, begin=1, end=3),
                                   S.slice_axis(X, axis=1, begin=-2, end=None), dim=2),
                          {"data": (2, 4, 3)}),
    "slice_steps": (S.slice(X, begin=(None, 1), end=(None, None), step=(1, 2)),
                    {"data": (2, 7)}),
    "arithmetic": (S.broadcast_div(S.broadcast_mul(X + 1.5, S.var("b")) - X * 2.0,
                                   S.abs(S.var("b")) + 1.0) ** 2.0,
                   {"data": (2, 3, 4), "b": (1, 3, 1)}),
    "scalars_reversed": (S.maximum(S.minimum(3.0 - X, 1.5), -0.5) + 1.0 / (S.abs(X) + 1.0)
                         + 2.0 ** S.clip(X, -1.0, 1.0), {"data": (3, 4)}),
    "elementwise": (S.elemwise_add(S.elemwise_sub(X, S.var("y")), S.elemwise_mul(X, S.var("y")))
                    + S.add_n(X, X, S.var("y")), {"data": (2, 3), "y": (2, 3)}),
    "unary": (S.exp(S.tanh(X)) + S.sqrt(S.abs(X) + 0.1) + S.log(S.abs(X) + 1.0)
              + S.negative(S.sigmoid(X)) + S.square(X) + S.rsqrt(S.abs(X) + 1.0)
              + S.erf(X) + S.floor(X) + S.relu(X), {"data": (3, 5)}),
    "activations": (S.concat(*[S.Activation(X, act_type=a)
                               for a in ("relu", "sigmoid", "tanh", "softrelu", "softsign")],
                             dim=1), {"data": (2, 3)}),
    "leaky_relus": (S.concat(S.LeakyReLU(X, act_type="leaky", slope=0.1),
                             S.LeakyReLU(X, act_type="elu", slope=0.7),
                             S.LeakyReLU(X, act_type="selu"), dim=1), {"data": (2, 3)}),
    "gelu": (S.LeakyReLU(X, act_type="gelu"), {"data": (2, 3)}),
    "prelu": (S.LeakyReLU(X, act_type="prelu", name="pr"), {"data": (2, 3, 4, 4)}),
    "compare": (S.broadcast_greater(X, S.var("y")) + S.broadcast_equal(X, X)
                + S.broadcast_lesser_equal(X, S.var("y")), {"data": (2, 3), "y": (2, 3)}),
    "reductions": (S.concat(S.mean(X, axis=1), S.sum(X, axis=(1, 2)).reshape((-1, 1)),
                            S.max(X, axis=2),
                            S.min(X, axis=0, exclude=True).reshape((-1, 1)), dim=1),
                   {"data": (2, 3, 3)}),
    "reduce_keepdims": (S.sum(X, axis=-1, keepdims=True) + S.mean(X, axis=-1, keepdims=True),
                        {"data": (2, 3, 4)}),
    "expand_squeeze_swap": (S.squeeze(S.expand_dims(S.SwapAxis(X, dim1=0, dim2=2), axis=1),
                                      axis=1), {"data": (2, 3, 4)}),
    "tile": (S.tile(X, reps=(2, 1, 3)), {"data": (2, 3)}),
    "flatten_dropout_cast": (S.Cast(S.Dropout(S.Flatten(X), p=0.5), dtype="float64"),
                             {"data": (2, 3, 4)}),
    "split_stack": (S.stack(*S.split(X, num_outputs=3, axis=1, squeeze_axis=True), axis=1)
                    + S.concat(*S.split(X, num_outputs=3, axis=1), dim=1).reshape((0, 3, -1)),
                    {"data": (2, 3, 4)}),
    "split_outputs": (S.split(X, num_outputs=2, axis=-1), {"data": (3, 4)}),
    "more_unary": (S.log1p(S.abs(X)) + S.expm1(X) + S.log2(S.abs(X) + 1.0)
                   + S.log10(S.abs(X) + 1.0) + S.arctan(X) + S.tan(S.clip(X, -1.0, 1.0))
                   + S.hard_sigmoid(X) + S.logical_not(S.floor(X)), {"data": (3, 4)}),
    "argmax_one_hot": (S.broadcast_add(S.one_hot(S.argmax(X, axis=1), depth=5, on_value=2.0,
                                                 off_value=-1.0),
                                       S.argmin(X, axis=1, keepdims=True)), {"data": (3, 5)}),
    "fill_like_broadcasts": (S.zeros_like(X) + S.broadcast_to(S.ones_like(S.slice_axis(
        X, axis=1, begin=0, end=1)), shape=(0, 4)) + S.broadcast_axis(
        S.sum(X, axis=0, keepdims=True), axis=0, size=3) + S.broadcast_like(
        S.mean(X, axis=1, keepdims=True), X), {"data": (3, 4)}),
    "pad_norms": (S.concat(S.pad(X, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1),
                                 constant_value=0.5).reshape((0, -1)),
                           S.pad(X, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
                           .reshape((0, -1)), S.norm(X, axis=(2, 3)).reshape((0, -1)),
                           S.norm(X, ord=1, axis=1).reshape((0, -1)),
                           S.L2Normalization(X, mode="channel").reshape((0, -1)), dim=1),
                  {"data": (2, 3, 4, 4)}),
    "upsampling": (S.UpSampling(X, scale=2, sample_type="nearest"), {"data": (1, 2, 3, 3)}),
    "lrn_depth_space": (S.space_to_depth(S.depth_to_space(S.LRN(X, nsize=3, alpha=0.1),
                                                          block_size=2), block_size=2),
                        {"data": (1, 8, 3, 3)}),
    "softmax_output_preserve_shape": (S.SoftmaxOutput(X, preserve_shape=True, name="softmax"),
                                      {"data": (2, 3, 4)}),
    "softmax_output_nd": (S.SoftmaxOutput(X, name="softmax"), {"data": (2, 3, 4)}),
    "layernorm_axis1": (S.LayerNorm(X, axis=1, name="ln"), {"data": (2, 3, 4)}),
    "scalar_compare_logical": (
        (X > 0.5) + (X <= -0.5) + S.broadcast_logical_xor(X > 0, S.var("y") > 0)
        + S.broadcast_logical_and(X, S.var("y") > 0) + (X != 1.0) + (X == 1.0),
        {"data": (3, 4), "y": (3, 4)}),
    "dot_nd": (S.dot(X, S.var("w")), {"data": (2, 3, 4), "w": (4, 2, 5)}),
    "dot_vector": (S.dot(X, S.var("w")), {"data": (3, 4), "w": (4,)}),
    "pool_max_full_window_in_padding": (
        S.Pooling(X, kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type="max",
                  pooling_convention="full"), {"data": (1, 2, 5, 5)}),
    "broadcast_like_axes": (S.broadcast_like(S.sum(X, axis=1, keepdims=True), S.var("y"),
                                             lhs_axes=(1,), rhs_axes=(0,)),
                            {"data": (2, 3), "y": (4, 5)}),
    "argmax_all": (S.argmax(X) + S.argmin(X), {"data": (3, 4)}),
    "zeros_ones": (S.broadcast_add(S.broadcast_add(X, S.zeros((3, 1))), S.ones((1, 4))), {"data": (3, 4)}),
    "softmax_output": (S.SoftmaxOutput(S.FullyConnected(X, num_hidden=4, name="fc"),
                                       name="softmax"), {"data": (3, 5)}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_operator_matches_onnxruntime(case, rng, tmp_path):
    sym, shapes = CASES[case]
    # no MXNet operator maps back PRelu, OneHot, ConstantOfShape, Resize, a computed Expand
    check(sym, shapes, rng, tmp_path, roundtrip=case not in (
        "prelu", "argmax_one_hot", "fill_like_broadcasts", "upsampling",
        "scalar_compare_logical", "pool_max_full_window_in_padding", "broadcast_like_axes",
        "argmax_all"))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take(mode, rng, tmp_path):
    sym = S.take(S.var("data"), S.var("idx"), axis=1, mode=mode)
    idx = np.array([[0, 4], [-2, 9]], np.float32)   # out of range: clipped or wrapped
    check(sym, {"data": (2, 5), "idx": (2, 2)}, rng, tmp_path, feeds={"idx": idx},
          roundtrip=False)


def test_batchnorm_statistics_as_inputs(rng, tmp_path):
    """Inputs are every non-parameter input in the graph's order, auxiliary states too."""
    sym = S.BatchNorm(X, S.var("g"), S.var("b"), S.var("m"), S.var("v"), fix_gamma=False)
    shapes = [(2, 3, 4), (3,), (3,), (3,), (3,)]
    path = mx.onnx.export_model(sym, {}, shapes, onnx_file_path=str(tmp_path / "bn.onnx"))
    feeds = {n: rng.uniform(0.5, 1.5, s).astype(np.float32)
             for n, s in zip(["data", "g", "b", "m", "v"], shapes)}
    expected = mx_forward(sym, {"m": mx.nd.array(feeds["m"]), "v": mx.nd.array(feeds["v"])},
                          {k: feeds[k] for k in ("data", "g", "b")})[0]
    assert_close(run_onnx(path, feeds)[0], expected)


def test_numpy_arithmetic_casts_to_the_promoted_dtype(rng, tmp_path):
    """_npi_* nodes (a hybridized numpy-style block's arithmetic): an int32 parameter meets
    float32 data and a float scalar; onnxruntime computes what mxc's graph does."""
    k = S.var("k", dtype="int32")
    y = S._npi_true_divide(S._npi_multiply_scalar(X, scalar=2.5, is_int=False), k)
    z = S._npi_rsubtract_scalar(S._npi_power(S._npi_add_scalar(y, scalar=3.0, is_int=True),
                                             S._npi_subtract(X, k)), scalar=1.0, is_int=False)
    sym = S.Group([z, S._npi_true_divide_scalar(k, scalar=2.0, is_int=True)])
    params = {"k": mx.nd.array(rng.integers(1, 4, (4,)), dtype="int32")}
    feeds = {"data": rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)}
    path = mx.onnx.export_model(sym, params, [(3, 4)], onnx_file_path=str(tmp_path / "np.onnx"))
    expected = mx_forward(sym, params, feeds)
    assert [e.dtype for e in expected] == [np.float32, np.float32]
    kv = params["k"].asnumpy()
    want_y = feeds["data"] * 2.5 / kv
    np.testing.assert_allclose(expected[0], 1.0 - (want_y + 3.0) ** (feeds["data"] - kv),
                               rtol=1e-5)
    np.testing.assert_allclose(expected[1], kv / 2.0)
    for got, want in zip(run_onnx(path, feeds), expected):
        assert got.dtype == want.dtype
        assert_close(got, want)


def test_embedding_layer(rng, tmp_path):
    tokens = S.Embedding(X, input_dim=11, output_dim=6, name="emb")
    sym = S.FullyConnected(S.LayerNorm(tokens, name="ln"), num_hidden=3, flatten=False,
                           name="fc")
    ids = rng.integers(0, 11, (2, 5)).astype(np.float32)
    check(sym, {"data": (2, 5)}, rng, tmp_path, feeds={"data": ids})


RESHAPES = [(0, -1), (-1, 12), (0, -3, 0), (-3, -2), (0, -4, -1, 1, 0, 0), (-4, 1, -1, -2),
            (0, 0, 2, -1)]


@pytest.mark.parametrize("codes", RESHAPES, ids=str)
@pytest.mark.parametrize("dynamic", [False, True])
def test_reshape_codes(codes, dynamic, rng, tmp_path):
    """MXNet's special codes 0/-1/-2/-3/-4; with a dynamic batch the target shape is computed
    in the graph, so the file also runs at batch 5."""
    sym = S.reshape(X, shape=codes) * 2.0
    other = {"data": (5, 3, 4, 2)} if dynamic and codes[0] in (0, -3, -4) else None
    check(sym, {"data": (2, 3, 4, 2)}, rng, tmp_path, dynamic=dynamic, other_shapes=other,
          roundtrip=not dynamic or all(c >= -1 for c in codes))


def test_dynamic_batch_nlp_block(rng, tmp_path):
    """An encoder-like block (embedding, attention scores, softmax, residual, LayerNorm)
    exported at batch 2 and run at batch 4."""
    emb = S.Embedding(X, input_dim=20, output_dim=8, name="emb")
    q = S.FullyConnected(emb, num_hidden=8, flatten=False, name="q")
    k = S.FullyConnected(emb, num_hidden=8, flatten=False, name="k")
    att = S.softmax(S.batch_dot(q, k, transpose_b=True) / np.sqrt(8.0), axis=-1)
    out = S.LayerNorm(S.batch_dot(att, emb) + emb, name="ln")
    sym = S.mean(S.reshape(out, shape=(0, -3)), axis=1)
    params = random_params(sym, {"data": (2, 6)}, rng)
    path = str(tmp_path / "enc.onnx")
    mx.onnx.export_model(sym, params, [(2, 6)], onnx_file_path=path, dynamic=True)
    for batch in (2, 4):
        ids = rng.integers(0, 20, (batch, 6)).astype(np.float32)
        assert_close(run_onnx(path, {"data": ids})[0],
                     mx_forward(sym, params, {"data": ids})[0])
