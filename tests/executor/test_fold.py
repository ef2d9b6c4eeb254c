"""Convolution + BatchNorm folded in inference graphs (mxc/executor/fold.py): hybridized
outputs against the unfolded imperative run (float rounding only), which pairs fold, and that
training and MXNET_USE_FUSION=0 leave the graph alone."""
import numpy as np
import pytest

import mxc as mx
from mxc.executor import fold
from mxc.symbol.symbol import _topo

nn = mx.gluon.nn


def _ops(sym):
    return [n.op.name for n in _topo(sym._outputs) if n.op is not None]


class _Branches(nn.HybridBlock):
    """conv -> BN -> relu; a biased conv -> BN(fix_gamma) with 1-D-style depthwise groups; and a
    conv whose output is also read by the sum (not foldable)."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.c1 = nn.Conv2D(6, 3, padding=1, use_bias=False)
            self.b1 = nn.BatchNorm()
            self.c2 = nn.Conv2D(6, 3, padding=1, groups=6, use_bias=True)
            self.b2 = nn.BatchNorm(scale=False)
            self.c3 = nn.Conv2D(6, 1)
            self.b3 = nn.BatchNorm()

    def hybrid_forward(self, F, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        z = self.c3(y)
        return self.b3(z) + z


def _net(rng):
    net = _Branches()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 3, 8, 8)))
    for p in net.collect_params().values():      # statistics far from the defaults
        base = 1.0 if p.name.endswith(("gamma", "running_var")) else 0.0
        v = rng.standard_normal(p.shape) * 0.5 + base
        if p.name.endswith("running_var"):
            v = np.abs(v) + 0.1
        p.set_data(mx.nd.array(v))
    return net


def test_inference_output_matches_the_unfolded_run(rng):
    net = _net(rng)
    x = mx.nd.array(rng.standard_normal((2, 3, 8, 8)))
    ref = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    got = net(x).asnumpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5 * np.abs(ref).max())
    assert not np.array_equal(got, ref)      # the folded graph ran (rounding differs)
    # new parameters are picked up by the next run of the same plan
    g = net.b1.gamma
    g.set_data(g.data() * 2)
    np.testing.assert_allclose(net(x).asnumpy(), _imperative(net, x), rtol=0,
                               atol=1e-5 * np.abs(ref).max())


def _imperative(net, x):
    net.hybridize(active=False)
    out = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    return out


def test_which_pairs_fold():
    net = _Branches()
    net.initialize()
    sym = net(mx.sym.var("data"))
    folded = fold.fold_conv_bn(sym)
    # b1 and b2 fold into their convolutions; b3's convolution is also read by the sum
    assert _ops(sym).count("BatchNorm") == 3
    assert _ops(folded).count("BatchNorm") == 1
    assert _ops(folded).count("Convolution") == 3
    # the same variables (the fixed gamma is not read any more); the statistics become plain
    # inputs, which the CachedOp binds by node, not by position
    assert set(folded.list_inputs()) == set(sym.list_inputs()) - {net.b2.gamma.name}
    assert _ops(sym).count("BatchNorm") == 3                # the user's symbol is untouched


def test_training_and_gradients_are_not_folded(rng):
    net = _net(rng)
    x = mx.nd.array(rng.standard_normal((2, 3, 8, 8)))
    with mx.autograd.record():
        ref = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    with mx.autograd.record():
        got = net(x).asnumpy()
    np.testing.assert_array_equal(got, ref)     # batch statistics: nothing folded, same sums


def test_fusion_switch(rng, monkeypatch):
    net = _net(rng)
    x = mx.nd.array(rng.standard_normal((2, 3, 8, 8)))
    ref = net(x).asnumpy()
    monkeypatch.setenv("MXNET_USE_FUSION", "0")
    assert not fold.enabled()
    net.hybridize(static_alloc=True, static_shape=True)
    np.testing.assert_array_equal(net(x).asnumpy(), ref)


@pytest.mark.parametrize("no_bias", [True, False])
def test_fold_in_float64_differs_by_rounding_only(no_bias, rng):
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3,), num_filter=4, no_bias=no_bias, name="c")
    out = mx.sym.BatchNorm(conv, fix_gamma=False, eps=1e-3, name="bn")
    folded = fold.fold_conv_bn(out)
    assert "BatchNorm" not in _ops(folded)
    args = {"data": rng.standard_normal((2, 3, 9)), "c_weight": rng.standard_normal((4, 3, 3)),
            "c_bias": rng.standard_normal(4), "bn_gamma": rng.standard_normal(4),
            "bn_beta": rng.standard_normal(4), "bn_moving_mean": rng.standard_normal(4),
            "bn_moving_var": rng.random(4) + 0.5}
    feed = {k: mx.nd.array(v, dtype=np.float64) for k, v in args.items()
            if k in out.list_inputs()}
    ex = out.bind(mx.cpu(), args={k: feed[k] for k in out.list_arguments()},
                  aux_states={k: feed[k] for k in out.list_auxiliary_states()})
    ref = ex.forward(is_train=False)[0].asnumpy()
    got = folded.eval(**{k: feed[k] for k in folded.list_inputs()})[0].asnumpy()
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


def test_mixed_precision_convolutions_are_not_folded(rng):
    # AMP's graphs feed Convolution float16 casts while BatchNorm keeps float32 statistics: the
    # folded weight would multiply the two dtypes, so such pairs stay apart; the converted
    # block then runs (it failed at bind with "broadcast_mul: dtypes ... differ")
    from mxc.contrib import amp
    net = _net(rng)
    net.hybridize()
    x = mx.nd.array(rng.standard_normal((2, 3, 7, 7)))
    want = net(x).asnumpy()
    lp = amp.convert_hybrid_block(net, target_dtype="float16")
    _, sym = lp._cached_graph
    assert fold.fold_conv_bn(sym) is sym
    got = lp(x).asnumpy()
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=3e-2,
                               atol=3e-2 * float(np.abs(want).max()))
