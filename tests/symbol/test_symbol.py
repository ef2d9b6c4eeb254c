"""mx.sym: construction, naming, attributes, composition, inference, copies and pickling."""
import copy
import pickle

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError, NotImplementedForSymbol


def test_auto_named_inputs_and_lists():
    with mx.name.NameManager():
        data = mx.sym.Variable("data")
        fc = mx.sym.FullyConnected(data, num_hidden=10)
        bn = mx.sym.BatchNorm(fc)
    assert bn.list_arguments() == ["data", "fullyconnected0_weight", "fullyconnected0_bias",
                                   "batchnorm0_gamma", "batchnorm0_beta"]
    assert bn.list_auxiliary_states() == ["batchnorm0_moving_mean", "batchnorm0_moving_var"]
    assert bn.list_inputs()[-2:] == bn.list_auxiliary_states()
    assert bn.list_outputs() == ["batchnorm0_output"]
    assert mx.sym.FullyConnected(data, num_hidden=3, no_bias=True, name="f").list_arguments() \
        == ["data", "f_weight"]
    assert mx.sym.SoftmaxOutput(fc, name="softmax").list_arguments()[-1] == "softmax_label"


def test_operators_prefix_and_groups():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with mx.name.Prefix("net_"):
        c = a + b
        d = 2 - c
    assert c.name == "net__plus0" and d.name == "net__rminusscalar0"
    assert [n["op"] for n in __import__("json").loads(d.tojson())["nodes"][2:]] == \
        ["elemwise_add", "_rminus_scalar"]
    g = mx.sym.Group([c, d])
    assert g.name is None and len(g) == 2
    assert g[1].name == d.name and g["net__plus0_output"].name == c.name
    assert [s.name for s in g] == [c.name, d.name]
    assert g.get_internals().list_outputs() == ["a", "b", "net__plus0_output",
                                                "net__rminusscalar0_output"]
    assert d.get_children().list_outputs() == ["net__plus0_output"]
    assert a.get_children() is None
    with pytest.raises(NotImplementedForSymbol):
        bool(a)
    for expr in (a - b, a * b, a / b, a % b, a ** b, -a, a ** 2, 2 ** a, 3 / a, a == b, a < 1):
        assert isinstance(expr, mx.sym.Symbol)


def test_split_outputs_and_indexing():
    s = mx.sym.split(mx.sym.var("x"), num_outputs=3, name="sp")
    assert s.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"]
    assert s[1:].list_outputs() == ["sp_output1", "sp_output2"]
    with pytest.raises(ValueError):
        s["nope"]


def test_attributes_and_scope():
    with mx.AttrScope(ctx_group="stage1", mood="calm"):
        v = mx.sym.var("v", lr_mult=2, shape=(2, 3), dtype="float16", __layout__="NC")
    with mx.AttrScope(ctx_group="stage1"):
        fc = mx.sym.FullyConnected(v, num_hidden=4, name="fc", attr={"__x__": "y"})
    assert fc.attr("ctx_group") == "stage1"
    assert v.attr("lr_mult") == "2" and v.attr("__shape__") == "(2, 3)"
    assert v.attr("__dtype__") == "2" and v.attr("mood") == "calm"
    assert v.list_attr()["ctx_group"] == "stage1"
    assert fc.list_attr()["num_hidden"] == "4" and fc.attr("__x__") == "y"
    d = fc.attr_dict()
    assert d["fc_weight"]["num_hidden"] == "4" and d["v"]["__layout__"] == "NC"
    with pytest.raises(ValueError):
        mx.sym.var("w", foo=1)


def test_bad_parameters_raise_at_creation():
    with pytest.raises(MXNetError):
        mx.sym.FullyConnected(mx.sym.var("x"), num_hidden="many")
    with pytest.raises(MXNetError):
        mx.sym.Activation(mx.sym.var("x"), act_type="nope")


def test_compose_copy_pickle():
    data = mx.sym.var("data")
    net1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=10)
    net2 = mx.sym.FullyConnected(name="fc2", num_hidden=4)
    composed = net2(fc2_data=net1, name="composed")
    assert composed.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight",
                                         "fc2_bias"]
    assert net2.list_arguments() == ["fc2_data", "fc2_weight", "fc2_bias"]
    c2 = copy.deepcopy(composed)
    assert c2.tojson() == composed.tojson()
    c3 = pickle.loads(pickle.dumps(composed))
    assert c3.tojson() == composed.tojson()


def test_infer_shape_and_type():
    data = mx.sym.var("data")
    prev = mx.sym.var("prev")
    x = mx.sym.FullyConnected(data, num_hidden=8, name="x")
    h = mx.sym.FullyConnected(prev, num_hidden=8, name="h")
    out = mx.sym.Activation(x + h, act_type="relu")
    with pytest.warns(UserWarning):
        assert out.infer_shape(data=(4, 3)) == (None, None, None)
    args, outs, _ = out.infer_shape_partial(data=(4, 3))
    assert dict(zip(out.list_arguments(), args))["h_weight"] == ()
    args, outs, aux = out.infer_shape(data=(4, 3), prev=(4, 5))
    assert args == [(4, 3), (8, 3), (8,), (4, 5), (8, 5), (8,)] and outs == [(4, 8)]
    c = mx.sym.Cast(data, dtype="float32")
    m = mx.sym.FullyConnected(c, num_hidden=3)
    arg, out_t, _ = m.infer_type(data=np.float16)
    assert arg == [np.float16, np.float32, np.float32] and out_t == [np.float32]
    assert m.infer_type_partial()[0] == [None, np.float32, np.float32]


def test_infer_error_names_the_node():
    a = mx.sym.var("a")
    s = mx.sym.transpose(a, name="tr") + a
    with pytest.raises(MXNetError, match="_plus"):
        s.infer_shape(a=(2, 3))


def test_custom_op_symbol():
    class Twice(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * 2)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 2)

    @mx.operator.register("test_sym_twice")
    class TwiceProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ["data"]

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Twice()

    y = mx.sym.Custom(mx.sym.var("x"), op_type="test_sym_twice", name="tw")
    assert y.list_outputs() == ["tw_output"]
    assert y.infer_shape(x=(2, 2))[1] == [(2, 2)]
    ex = y.bind(mx.cpu(), {"x": mx.nd.ones((2, 2))}, args_grad={"x": mx.nd.zeros((2, 2))})
    assert (ex.forward(is_train=True)[0].asnumpy() == 2).all()
    ex.backward(mx.nd.ones((2, 2)))
    assert (ex.grad_dict["x"].asnumpy() == 2).all()


def test_autograd_get_symbol():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x * 2 + 1).sum(axis=1)
    s = mx.autograd.get_symbol(y)
    assert len(s.list_arguments()) == 1
    out = s.eval(**{s.list_arguments()[0]: x})[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy())


def test_creation_ops_take_a_name():
    """An operator whose own parameters include 'name'-like keywords still takes name= (arange)."""
    s = mx.sym.arange(0, 5, name="steps")
    assert s.list_outputs() == ["steps_output"]
    assert s.name == "steps"


def test_sym_random_exponential_with_symbol_scale_draws_at_that_scale():
    # the sampler takes the rate: a Symbol scale must be inverted as a number scale is
    mx.random.seed(3)
    s = mx.sym.random.exponential(mx.sym.var("scale"), shape=(40000,))
    got = s.eval(scale=mx.nd.array([0.125, 2.0]))[0].asnumpy()
    np.testing.assert_allclose(got.mean(axis=1), [0.125, 2.0], rtol=0.03)
    num = mx.sym.random.exponential(scale=0.125, shape=(40000,)).eval()[0].asnumpy()
    np.testing.assert_allclose(num.mean(), 0.125, rtol=0.03)


def test_sym_random_randn_and_like_samplers():
    mx.random.seed(4)
    out = mx.sym.random.randn(300, 200, loc=1.0, scale=2.0).eval()[0].asnumpy()
    assert out.shape == (300, 200)
    assert abs(out.mean() - 1.0) < 0.05 and abs(out.std() - 2.0) < 0.05
    like = mx.sym.random.randn(data=mx.sym.ones((4, 5)), dtype="float16").eval()[0]
    assert like.shape == (4, 5) and like.dtype == np.float16
    assert mx.sym.random.uniform_like(mx.sym.ones((3, 2)), low=2, high=3).eval()[0].shape == (3, 2)
