"""Shape inference over symbol graphs: partial shapes completed from outputs (infer_back)."""
import numpy as np
import pytest

import mxc as mx


def test_shapes_flow_back_from_outputs_into_unknown_dims():
    # an unrolled RNN's begin state zeros((0, H)) learns the batch size from the FullyConnected
    # that consumes it (MXNet runs shape functions both ways)
    x = mx.sym.var("x")
    h0 = mx.sym.zeros(shape=(0, 4))
    i2h = mx.sym.FullyConnected(x, num_hidden=4, name="i2h")
    h2h = mx.sym.FullyConnected(h0, num_hidden=4, name="h2h")
    out = i2h + h2h
    args, outs, _ = out.infer_shape(x=(5, 3))
    assert dict(zip(out.list_arguments(), args))["h2h_weight"] == (4, 4)
    assert outs == [(5, 4)]
    internals = out.get_internals()
    _, shapes, _ = internals.infer_shape(x=(5, 3))
    assert dict(zip(internals.list_outputs(), shapes))[h0.list_outputs()[0]] == (5, 4)


def test_reshape_split_concat_complete_an_input_from_the_output():
    a = mx.sym.var("a", shape=(0, 6))
    r = mx.sym.Reshape(a, shape=(-1, 3))
    b = mx.sym.var("b")
    s = mx.sym.where(mx.sym.var("c"), r, b)
    args, outs, _ = s.infer_shape_partial(c=(8, 3), b=(8, 3))
    assert dict(zip(s.list_arguments(), args))["a"] == (4, 6)
    parts = mx.sym.split(mx.sym.var("d", shape=(2, 0)), num_outputs=2, axis=1)
    total = mx.sym.elemwise_add(parts[0], mx.sym.var("e"))
    args, _, _ = total.infer_shape_partial(e=(2, 5))
    assert dict(zip(total.list_arguments(), args))["d"] == (2, 10)
    cat = mx.sym.concat(mx.sym.var("p", shape=(3, 0)), mx.sym.var("q", shape=(3, 2)), dim=1)
    y = mx.sym.elemwise_add(cat, mx.sym.var("z"))
    args, _, _ = y.infer_shape_partial(z=(3, 7))
    assert dict(zip(y.list_arguments(), args))["p"] == (3, 5)


def test_float16_batchnorm_takes_float32_parameters_and_statistics():
    # MXNet 1.9.1's infer_type (checked with it): BatchNorm's gamma, beta and moving statistics
    # are float32 beside float16 data; LayerNorm's parameters follow the data
    import numpy as np
    y = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    args, outs, aux = y.infer_type(data="float16")
    assert args == [np.float16, np.float32, np.float32] and outs == [np.float16]
    assert aux == [np.float32, np.float32]
    e = y.simple_bind(mx.cpu(), data=(2, 3, 4), type_dict={"data": "float16"})
    out = e.forward(is_train=True, data=mx.nd.array(np.arange(24).reshape(2, 3, 4), dtype="float16"))
    with mx.autograd.train_mode():        # batch statistics, as forward(is_train=True)
        ref = mx.nd.BatchNorm(mx.nd.array(np.arange(24).reshape(2, 3, 4)), mx.nd.ones(3),
                              mx.nd.zeros(3), mx.nd.zeros(3), mx.nd.ones(3))
    np.testing.assert_allclose(out[0].asnumpy(), ref.asnumpy(), rtol=2e-3, atol=2e-3)
    args, _, _ = mx.sym.LayerNorm(mx.sym.var("data"), name="ln").infer_type(data="float16")
    assert args == [np.float16, np.float16, np.float16]


def test_creation_shapes_with_minus_one_inferred_through_transpose():
    """ones(shape=[-1, -1]) learns its shape from its consumers, through transpose's backward
    shape rule and the partial-shape merge of elementwise operators (MXNet's test_operator)."""
    o1 = mx.sym.ones(shape=[2, 3])
    b = o1 + mx.sym.transpose(mx.sym.ones(shape=[-1, -1]))
    assert b.bind(mx.cpu(), args={}).forward()[0].shape == (2, 3)
    o1 = mx.sym.ones(shape=[2, -1])
    b = o1 + mx.sym.transpose(mx.sym.ones(shape=[3, -1]))
    out = b.bind(mx.cpu(), args={}).forward()[0]
    assert out.shape == (2, 3) and out.asnumpy().tolist() == [[2.0] * 3] * 2
    t = mx.sym.transpose(mx.sym.var("x"), axes=(1, 2, 0))
    y = mx.sym.elemwise_add(t, mx.sym.var("y"))
    assert y.infer_shape_partial(y=(3, 4, 2))[0] == [(2, 3, 4), (3, 4, 2)]


def _numpy_sliced(shape, begin, end, step):
    # the reference: numpy's slicing of an array of that shape (unknown dimensions as 1)
    step = step or (None,) * len(begin)
    idx = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))
    return np.empty([max(d, 1) for d in shape])[idx].shape


@pytest.mark.parametrize("begin,end,step", [
    ((None, None), (None, 10), ()), ((None, None), (None, 10), (None, 2)),
    ((None, 3), (5, 10), ()), ((2, 3), (None, 10), (3, 3)), ((1, -2), (None, 1), (1, -3)),
])
def test_slice_of_an_unknown_dimension_keeps_it_unknown(begin, end, step):
    ref = _numpy_sliced((0, 20), begin, end, step)
    out = mx.sym.slice(mx.sym.var("data", shape=(0, 20)), begin=begin, end=end, step=step)
    assert out.infer_shape_partial()[1] == [(0, ref[1])]
    with mx.np_shape():
        out = mx.sym.slice(mx.sym.var("data", shape=(-1, 20)), begin=begin, end=end, step=step)
        assert out.infer_shape_partial()[1] == [(-1, ref[1])]


def test_slice_axis_of_an_unknown_dimension():
    data = mx.sym.var("data", shape=(10, 0))
    assert mx.sym.slice_axis(data, axis=0, begin=2, end=-3).infer_shape_partial()[1] == [(5, 0)]
    assert mx.sym.slice_axis(data, axis=1, begin=0, end=5).infer_shape_partial()[1] == [(10, 0)]
    with mx.np_shape():
        data = mx.sym.var("data", shape=(10, -1))
        assert mx.sym.slice_axis(data, axis=0, begin=0, end=5).infer_shape_partial()[1] == [(5, -1)]
        out = mx.sym.slice_axis(data, axis=1, begin=0, end=5)
        assert out.infer_shape_partial()[1] == [(10, -1)]


def test_partial_slice_feeds_the_next_operator():
    # the known dimension found by the slice reaches a consumer's partial inference
    data = mx.sym.var("data", shape=(0, 20))
    out = mx.sym.slice_axis(mx.sym.slice(data, begin=(None, 2), end=(None, 12)), axis=1,
                            begin=1, end=None)
    assert out.infer_shape_partial()[1] == [(0, 9)]
    assert out.infer_shape(data=(4, 20))[1] == [(4, 9)]


def test_bfloat16_variables_and_inference():
    """dtype flag 12 on variables (ml_dtypes' bfloat16 or MXNet's structured stand-in); BatchNorm
    keeps float32 parameters beside bfloat16 data (MXNet's BatchNormType); a bound graph runs."""
    import ml_dtypes
    bf = np.dtype(ml_dtypes.bfloat16)
    for dt in ("bfloat16", bf, np.dtype([("bfloat16", np.uint16)])):
        assert mx.sym.var("data", dtype=dt).attr_dict()["data"]["__dtype__"] == "12"
    d = mx.sym.var("data", dtype="bfloat16")
    f = mx.sym.FullyConnected(mx.sym.BatchNorm(d, name="bn"), num_hidden=3, name="fc")
    args, outs, aux = f.infer_type()
    got = dict(zip(f.list_arguments(), (np.dtype(t).name for t in args)))
    assert got == {"data": "bfloat16", "bn_gamma": "float32", "bn_beta": "float32",
                   "fc_weight": "bfloat16", "fc_bias": "bfloat16"}
    assert [np.dtype(t) for t in outs] == [bf] and [np.dtype(t) for t in aux] == [np.float32] * 2
    exe = f.simple_bind(mx.cpu(), data=(2, 4))
    x = np.arange(8, dtype=np.float32).reshape(2, 4).astype(bf)
    exe.arg_dict["data"][:] = mx.nd.array(x, dtype=bf)
    exe.arg_dict["bn_gamma"][:] = 1
    exe.arg_dict["fc_weight"][:] = mx.nd.ones((3, 4), dtype=bf)
    out = exe.forward(is_train=False)[0]
    assert out.dtype == bf
    # inference BatchNorm with moving mean 0 and var 0 (bound arrays start at zero): x/sqrt(eps)
    want = (x.astype(np.float32) / np.sqrt(np.float32(1e-3))).astype(bf).astype(np.float32)
    want = want.sum(axis=1, keepdims=True).repeat(3, axis=1).astype(bf)
    np.testing.assert_array_equal(out.asnumpy().view(np.uint16), want.view(np.uint16))
