"""mx.model: checkpoints in MXNet's format (fixtures written by MXNet 1.9.1)."""
import os

import numpy as np
import pytest

import mxc as mx

FIX = os.path.join(os.path.dirname(__file__), "data", "module")


def test_save_load_checkpoint_roundtrip(tmp_path, rng):
    data = mx.sym.Variable("data")
    net = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="bn")
    arg = {"fc_weight": mx.nd.array(rng.standard_normal((3, 5))),
           "fc_bias": mx.nd.array(rng.standard_normal(3))}
    aux = {"bn_moving_mean": mx.nd.array(rng.standard_normal(3)),
           "bn_moving_var": mx.nd.array(rng.random(3))}
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 7, net, arg, aux)
    assert os.path.exists(prefix + "-symbol.json") and os.path.exists(prefix + "-0007.params")
    raw = mx.nd.load(prefix + "-0007.params")
    assert sorted(raw) == ["arg:fc_bias", "arg:fc_weight", "aux:bn_moving_mean",
                           "aux:bn_moving_var"]
    sym, arg2, aux2 = mx.model.load_checkpoint(prefix, 7)
    assert sym.tojson() == net.tojson()
    for src, dst in ((arg, arg2), (aux, aux2)):
        assert sorted(src) == sorted(dst)
        for k in src:
            np.testing.assert_array_equal(src[k].asnumpy(), dst[k].asnumpy())


def test_save_checkpoint_without_symbol(tmp_path):
    prefix = str(tmp_path / "p")
    mx.model.save_checkpoint(prefix, 0, None, {"w": mx.nd.ones((2,))}, {})
    assert not os.path.exists(prefix + "-symbol.json")
    arg, aux = mx.model.load_params(prefix, 0)
    assert list(arg) == ["w"] and aux == {}


def test_load_mxnet_checkpoint_and_resave_bytes(tmp_path):
    """A checkpoint MXNet wrote loads, and saving it again gives the same .params bytes."""
    sym, arg, aux = mx.model.load_checkpoint(os.path.join(FIX, "mlp"), 3)
    assert sym.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "softmax_label"]
    assert arg["fc1_weight"].shape == (8, 4) and aux == {}
    prefix = str(tmp_path / "mlp")
    mx.model.save_checkpoint(prefix, 3, sym, arg, aux)
    with open(os.path.join(FIX, "mlp-0003.params"), "rb") as f:
        theirs = f.read()
    with open(prefix + "-0003.params", "rb") as f:
        ours = f.read()
    assert ours == theirs
    with open(os.path.join(FIX, "mlp-symbol.json")) as f:
        assert mx.sym.load_json(f.read()).tojson() == sym.tojson()


def test_load_params_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope-0001.params"):
        mx.model.load_params(str(tmp_path / "nope"), 1)
    mx.nd.save(str(tmp_path / "lst-0001.params"), [mx.nd.ones((1,))])
    with pytest.raises(ValueError, match="unnamed list"):
        mx.model.load_params(str(tmp_path / "lst"), 1)


def test_batch_end_param_fields():
    p = mx.model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals={})
    assert (p.epoch, p.nbatch, p.eval_metric) == (1, 2, None)
    assert type(p).__name__ == "BatchEndParams"
