"""mx.mod.BucketingModule: buckets share the default bucket's parameters."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc import nd

H = 4


def sym_gen(seq_len):
    data = mx.sym.Variable("data")
    w, b = mx.sym.Variable("fc_weight"), mx.sym.Variable("fc_bias")
    x = data
    for i in range(seq_len):
        x = mx.sym.FullyConnected(x, weight=w, bias=b, num_hidden=H, name=f"fc{i}")
        x = mx.sym.Activation(x, act_type="tanh")
    out = mx.sym.LinearRegressionOutput(x, mx.sym.Variable("label"), name="out")
    return out, ("data",), ("label",)


def np_forward(x, w, b, seq_len):
    for _ in range(seq_len):
        x = np.tanh(x @ w.T + b)
    return x


def make(rng, bs=3, grad_req="write"):
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=3)
    mod.bind([("data", (bs, H))], [("label", (bs, H))], grad_req=grad_req)
    w = rng.standard_normal((H, H)).astype(np.float32) * 0.5
    b = rng.standard_normal(H).astype(np.float32) * 0.1
    mod.init_params(arg_params={"fc_weight": nd.array(w), "fc_bias": nd.array(b)})
    return mod, w, b


def batch(x, y, key):
    return mx.io.DataBatch([nd.array(x)], [nd.array(y)], bucket_key=key,
                           provide_data=[mx.io.DataDesc("data", x.shape)],
                           provide_label=[mx.io.DataDesc("label", y.shape)])


def test_buckets_share_parameters_and_compute(rng):
    mod, w, b = make(rng)
    x = rng.standard_normal((3, H)).astype(np.float32)
    y = np.zeros((3, H), np.float32)
    for key in (3, 1, 5):
        mod.forward(batch(x, y, key), is_train=False)
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(x, w, b, key),
                                   rtol=1e-5, atol=1e-6)
    assert sorted(mod._buckets) == [1, 3, 5]
    default = mod._buckets[3]._exec_group.execs[0]
    for key in (1, 5):
        other = mod._buckets[key]._exec_group.execs[0]
        assert mx.test_utils.same_array(default.arg_dict["fc_weight"],
                                        other.arg_dict["fc_weight"])
        assert mx.test_utils.same_array(default.grad_dict["fc_weight"],
                                        other.grad_dict["fc_weight"])
    assert mod.symbol.list_arguments() == ["data", "fc_weight", "fc_bias", "label"]


def test_training_in_one_bucket_moves_all(rng):
    mod, w, b = make(rng)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    x = rng.standard_normal((3, H)).astype(np.float32)
    y = rng.standard_normal((3, H)).astype(np.float32) * 0.1
    mod.forward_backward(batch(x, y, 2))
    mod.update()
    # reference: gradient of the 2-step network through a fresh executor
    exe = sym_gen(2)[0].simple_bind(mx.cpu(), data=(3, H), label=(3, H))
    exe.arg_dict["data"][:] = x
    exe.arg_dict["label"][:] = y
    exe.arg_dict["fc_weight"][:] = w
    exe.arg_dict["fc_bias"][:] = b
    exe.forward(is_train=True)
    exe.backward()
    w_new = w - 0.5 / 3 * exe.grad_dict["fc_weight"].asnumpy()
    arg, _ = mod.get_params()
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), w_new, rtol=1e-5, atol=1e-6)
    mod.forward(batch(x, y, 4), is_train=False)
    b_new = arg["fc_bias"].asnumpy()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(x, w_new, b_new, 4),
                               rtol=1e-5, atol=1e-6)
    assert mod._buckets[4]._optimizer is mod._buckets[3]._optimizer


@pytest.mark.parametrize("req,factor", [("write", 1), ("add", 2)])
def test_grad_req_across_buckets(req, factor):
    def gen(_):
        data = mx.sym.Variable("data")
        a = mx.sym.Variable("a", shape=(1,), init=mx.init.One())
        return mx.sym.make_loss(mx.sym.broadcast_mul(data, a)), ("data",), None

    mod = mx.mod.BucketingModule(sym_gen=gen, default_bucket_key=10)
    mod.bind(data_shapes=[["data", (2,)]], grad_req=req)
    mod.init_params()
    for key in (10, 5):
        mod.forward_backward(mx.io.DataBatch(
            [nd.ones((2,))], None, bucket_key=key,
            provide_data=[mx.io.DataDesc("data", (2,), layout="N")]))
    grad = mod._curr_module._exec_group.execs[0].grad_dict["a"].asscalar()
    assert grad == 2 * factor
    assert mod._curr_module._grad_req == req


def test_bucketing_checkpoint(tmp_path, rng):
    mod, w, b = make(rng)
    x = rng.standard_normal((3, H)).astype(np.float32)
    mod.forward(batch(x, x, 2), is_train=False)
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 1)
    assert sorted(os.listdir(tmp_path)) == ["bk-0001.params", "bk-2-symbol.json",
                                            "bk-3-symbol.json", "bk.buckets"]
    mod2 = mx.mod.BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=3)
    mod2.bind([("data", (3, H))], [("label", (3, H))], for_training=False)
    mod2.forward(batch(x, x, 2), is_train=False)
    np.testing.assert_allclose(mod2.get_outputs()[0].asnumpy(), np_forward(x, w, b, 2),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="sym_gen is required"):
        mx.mod.BucketingModule.load(prefix, 1, default_bucket_key=3)


def test_group2ctxs_in_every_bucket(rng):
    """The shared layer's parameters in ctx_group dev1, the output's in dev2: each bucket's
    executor keeps them on the groups' contexts, and results equal numpy's."""
    def gen(seq_len):
        with mx.AttrScope(ctx_group="dev1"):
            out, dn, ln = sym_gen(seq_len)
        return out, dn, ln
    mod = mx.mod.BucketingModule(gen, default_bucket_key=3, context=[mx.cpu(0)],
                                 group2ctxs=[{"dev1": mx.cpu(1)}])
    mod.bind([("data", (3, H))], [("label", (3, H))])
    w = rng.standard_normal((H, H)).astype(np.float32) * 0.5
    b = rng.standard_normal(H).astype(np.float32) * 0.1
    mod.init_params(arg_params={"fc_weight": nd.array(w), "fc_bias": nd.array(b)})
    x = rng.standard_normal((3, H)).astype(np.float32)
    for key in (3, 2):
        mod.forward(batch(x, x, key), is_train=True)
        mod.backward()
        ex = mod._curr_module._exec_group.execs[0]
        assert ex.arg_dict["fc_weight"].context == mx.cpu(1)
        assert ex.grad_dict["fc_weight"].context == mx.cpu(1)
        assert ex.outputs[0].context == mx.cpu(1)
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(x, w, b, key),
                                   rtol=1e-5, atol=1e-6)
