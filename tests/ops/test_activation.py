"""Activation and LeakyReLU: forward against numpy in every float dtype, gradients against
central differences (float64), MXNet 1.9.1 golden values and gradients
(tests/data/activation_golden.npz, written by tests/data/make_activation_golden.py; the softmax
and loss tests read the same file through `golden_cases`/`check_golden`)."""
import json
import math
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import registry
from mxc.ops.activation import gamma_view

from tests._core.test_cuda_fake import fake_lib, run as run_fake  # noqa: F401  (fake driver)

from .oputil import check_forward, check_grad

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "activation_golden.npz")
_G = None


def _golden():
    global _G
    if _G is None:
        _G = dict(np.load(GOLDEN))
    return _G


def golden_cases(ops):
    """Names of the golden cases whose operator is in `ops`."""
    g = _golden()
    return sorted(k[:-3] for k in g if k.endswith("/op") and str(g[k]) in ops)


def check_golden(name, rtol=1e-4, atol=1e-5, skip_outputs=()):
    """mxc's outputs and input gradients (op.grad with MXNet's head gradient) equal MXNet's."""
    g = _golden()
    opname = str(g[f"{name}/op"])
    kw = json.loads(str(g[f"{name}/kw"]))
    ins = []
    while f"{name}/in{len(ins)}" in g:
        ins.append(g[f"{name}/in{len(ins)}"])
    nd_in = [mx.nd.array(a, dtype=a.dtype) for a in ins]
    res = getattr(mx.nd, opname)(*nd_in, **kw)
    outs = res if isinstance(res, list) else [res]
    for j, o in enumerate(outs):
        if j in skip_outputs:
            continue
        np.testing.assert_allclose(o.asnumpy(), g[f"{name}/out{j}"], rtol=rtol, atol=atol,
                                   err_msg=f"{name} output {j}")
    wrt = [i for i in range(len(ins)) if f"{name}/grad{i}" in g]
    if not wrt:
        return
    op = registry.get(opname)
    heads = [mx.nd.array(g[f"{name}/head{j}"], dtype=outs[j].dtype) for j in range(len(outs))]
    grads = op.grad(mx.nd, op.parse(dict(kw)), nd_in, outs, heads)
    for i in wrt:
        np.testing.assert_allclose(grads[i].asnumpy(), g[f"{name}/grad{i}"], rtol=rtol, atol=atol,
                                   err_msg=f"{name} gradient of input {i}")


FLOATS = [np.float16, np.float32, np.float64]
SELU_A, SELU_L = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf)

ACT_REF = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20)))),
    "softsign": lambda x: x / (1 + np.abs(x)),
}


def _data(rng, shape, dtype):
    x = rng.uniform(-3, 3, size=shape)
    return x.astype(dtype)


@pytest.mark.parametrize("act", sorted(ACT_REF))
@pytest.mark.parametrize("dtype", FLOATS)
def test_activation_forward(act, dtype, rng):
    x = _data(rng, (3, 5, 2), dtype)
    check_forward("Activation", [x], {"act_type": act},
                  ACT_REF[act](x.astype(np.float64)).astype(dtype))


@pytest.mark.parametrize("act", sorted(ACT_REF))
def test_activation_grad(act, rng):
    x = rng.uniform(-3, 3, size=(2, 3))
    x[np.abs(x) < 0.05] = 0.5         # keep away from relu's kink
    check_grad("Activation", [x], {"act_type": act}, rng)


def test_activation_large_parallel(rng):
    x = _data(rng, (300, 1000), np.float32)
    y = mx.nd.Activation(mx.nd.array(x), act_type="softrelu").asnumpy()
    np.testing.assert_allclose(y, ACT_REF["softrelu"](x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_activation_errors():
    with pytest.raises(ValueError, match="Activation.*act_type"):
        mx.nd.Activation(mx.nd.ones((2, 2)), act_type="swish")
    with pytest.raises(ValueError, match="Activation.*float"):
        mx.nd.Activation(mx.nd.ones((2, 2), dtype="int32"), act_type="relu")
    with pytest.raises(ValueError, match="Activation.*act_type"):
        mx.nd.Activation(mx.nd.ones((2, 2)))


def _leaky_ref(x, t, slope=0.25, gamma=None):
    if t == "leaky":
        return np.where(x > 0, x, x * slope)
    if t == "elu":
        return np.where(x > 0, x, slope * np.expm1(x))
    if t == "selu":
        return SELU_L * np.where(x > 0, x, SELU_A * np.expm1(x))
    if t == "gelu":
        return 0.5 * x * (1 + _erf(x / math.sqrt(2)))
    if t == "prelu":
        return np.where(x > 0, x, x * gamma)
    raise AssertionError(t)


@pytest.mark.parametrize("t", ["leaky", "elu", "selu", "gelu"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_forward(t, dtype, rng):
    x = _data(rng, (2, 3, 4), dtype)
    check_forward("LeakyReLU", [x], {"act_type": t, "slope": 0.3},
                  _leaky_ref(x.astype(np.float64), t, 0.3).astype(dtype))


@pytest.mark.parametrize("t", ["leaky", "elu", "gelu"])
def test_leaky_grad(t, rng):
    x = rng.uniform(-2, 2, size=(2, 3))
    x[np.abs(x) < 0.05] = 0.5
    check_grad("LeakyReLU", [x], {"act_type": t, "slope": 0.3}, rng)


def test_gelu_float32_within_a_few_ulps_and_its_gradient():
    """float32 gelu runs on a vectorising erfc (csrc/kernels/elemwise_common.h): within 2.5 ulps
    of x/2 erfc(-x/sqrt2) in double everywhere, the negative tail included (where MXNet's
    1 + erff(x/sqrt2) cancels), its gradient within 1e-7; the specials as MXNet's formula"""
    erfc = np.frompyfunc(math.erfc, 1, 1)
    x = np.concatenate([np.linspace(-16, 16, 160001), np.geomspace(1e-38, 1e-3, 2000),
                        -np.geomspace(1e-38, 1e-3, 2000)]).astype(np.float32)
    xd = x.astype(np.float64)
    c = erfc(-xd / math.sqrt(2)).astype(np.float64)
    want = 0.5 * xd * c
    want_g = 0.5 * c + xd * np.exp(-xd * xd / 2) / math.sqrt(2 * math.pi)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(a, act_type="gelu")
    y.backward(mx.nd.ones_like(y))
    got, got_g = y.asnumpy().astype(np.float64), a.grad.asnumpy().astype(np.float64)
    nz = want.astype(np.float32) != 0
    ulps = np.abs(got[nz] - want[nz]) / np.spacing(np.abs(want[nz]).astype(np.float32))
    assert ulps.max() <= 2.5, (ulps.max(), x[nz][np.argmax(ulps)])
    assert np.all(got[~nz] == 0)
    assert np.abs(got_g - want_g).max() <= 1e-7
    sp = mx.nd.LeakyReLU(mx.nd.array([np.inf, -np.inf, np.nan, -30.0]), act_type="gelu").asnumpy()
    assert sp[0] == np.inf and np.isnan(sp[1]) and np.isnan(sp[2]) and sp[3] == 0


def test_selu_grad_is_mxnet_formula(rng):
    # MXNet 1.9.1 differentiates selu as L * (A + y) for y <= 0 (not L * A * exp(x)); the true
    # derivative holds on the positive side
    x = np.array([[-1.0, -0.2, 0.5, 2.0]])
    y = SELU_L * np.where(x > 0, x, SELU_A * np.expm1(x))
    g = registry.get("LeakyReLU").grad(mx.nd, registry.get("LeakyReLU").parse({"act_type": "selu"}),
                                       [mx.nd.array(x, dtype=np.float64)],
                                       [mx.nd.array(y, dtype=np.float64)],
                                       [mx.nd.ones((1, 4), dtype=np.float64)])[0].asnumpy()
    np.testing.assert_allclose(g, SELU_L * np.where(y > 0, 1, SELU_A + y), rtol=1e-12)
    check_grad("LeakyReLU", [np.abs(rng.standard_normal((2, 3))) + 0.1], {"act_type": "selu"}, rng)


@pytest.mark.parametrize("dshape,gshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((2, 3, 2, 2), (2, 3)),
                                           ((4,), (4,))])
def test_prelu(dshape, gshape, rng):
    x = _data(rng, dshape, np.float32)
    gam = rng.uniform(0.1, 0.5, size=gshape).astype(np.float32)
    g0, g1 = gamma_view(dshape, gshape)[3:]
    full = gam.reshape((g0, g1) + (1,) * (len(dshape) - 2)) if len(dshape) > 1 else gam
    check_forward("LeakyReLU", [x, gam], {"act_type": "prelu"},
                  _leaky_ref(x, "prelu", gamma=full).astype(np.float32))
    x64 = rng.uniform(-2, 2, size=dshape)
    x64[np.abs(x64) < 0.05] = 0.5
    check_grad("LeakyReLU", [x64, gam.astype(np.float64)], {"act_type": "prelu"}, rng)


def test_prelu_gamma_keyword_and_infer_inputs():
    x = mx.nd.array([[-1.0, 2.0], [-3.0, 4.0]])
    y = mx.nd.LeakyReLU(x, gamma=mx.nd.array([0.5, 0.1]), act_type="prelu")
    assert y.asnumpy().tolist() == [[-0.5, 2.0], [-1.5, 4.0]]      # gamma runs along axis 1
    op = registry.get("LeakyReLU")
    assert op.infer_inputs(op.parse({"act_type": "prelu"}), [(5, 7, 3), None]) == [(5, 7, 3), (7,)]


def test_leaky_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match="LeakyReLU.*gamma"):
        mx.nd.LeakyReLU(x, act_type="prelu")
    with pytest.raises(ValueError, match="LeakyReLU.*gamma"):
        mx.nd.LeakyReLU(x, mx.nd.ones((3, 3)), act_type="prelu")
    with pytest.raises(ValueError, match="LeakyReLU.*gamma"):
        mx.nd.LeakyReLU(x, mx.nd.ones((3,)), act_type="leaky")
    with pytest.raises(ValueError, match="LeakyReLU.*act_type"):
        mx.nd.LeakyReLU(x, act_type="swish")


def test_rrelu_inference(rng):
    x = _data(rng, (3, 4), np.float32)
    out, mask = mx.nd.LeakyReLU(mx.nd.array(x), act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    s = np.float32(0.2)
    np.testing.assert_allclose(out.asnumpy(), np.where(x > 0, x, x * s), rtol=1e-6)
    np.testing.assert_allclose(mask.asnumpy(), np.full((3, 4), s), rtol=1e-6)
    xd = rng.uniform(-2, 2, size=(2, 3))
    xd[np.abs(xd) < 0.05] = 0.5
    check_grad("LeakyReLU", [xd], {"act_type": "rrelu"}, rng)


def test_rrelu_training_uses_random_slopes(rng):
    try:
        registry.get("_random_uniform")
    except MXNetError:
        pytest.skip("_random_uniform is not registered yet")
    from mxc._core import modes
    x = -np.abs(_data(rng, (50, 40), np.float32)) - 0.1
    prev = modes.set_training(True)
    try:
        out, mask = mx.nd.LeakyReLU(mx.nd.array(x), act_type="rrelu")
    finally:
        modes.set_training(prev)
    m = mask.asnumpy()
    assert m.min() >= 0.125 and m.max() < 0.334 and m.std() > 0.01
    np.testing.assert_allclose(out.asnumpy(), x * m, rtol=1e-6)
    op = registry.get("LeakyReLU")
    g = op.grad(mx.nd, op.parse({"act_type": "rrelu"}), [mx.nd.array(x)], [out, mask],
                [mx.nd.ones(x.shape), mx.nd.zeros(x.shape)])[0]
    np.testing.assert_allclose(g.asnumpy(), m, rtol=1e-6)


def test_backward_ops_have_no_second_order():
    op = registry.get("_backward_Activation")
    with pytest.raises(MXNetError, match="_backward_Activation"):
        op.grad(mx.nd, op.parse({"act_type": "relu"}), [], [], [])


@pytest.mark.parametrize("name", golden_cases({"Activation", "LeakyReLU"}))
def test_golden(name):
    check_golden(name, skip_outputs=(1,) if name == "rrelu_infer" else ())


def test_backward_kernels_direct(rng):
    x = _data(rng, (2, 3), np.float32)
    g = _data(rng, (2, 3), np.float32)
    y = mx.nd._backward_Activation(mx.nd.array(g), mx.nd.array(x), act_type="softsign")
    np.testing.assert_allclose(y.asnumpy(), g / (1 + np.abs(x)) ** 2, rtol=1e-6)
    d, dg = mx.nd._backward_LeakyReLU(mx.nd.array(g), mx.nd.array(x), mx.nd.array([0.2, 0.3]),
                                      act_type="prelu")
    assert d.shape == (2, 3) and dg.shape == (2,)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_vector_clone_backward_kernels_exact(dtype, rng):
    """relu/sigmoid/leaky gradients (kernels with AVX2/AVX-512 clones, activation.h) against
    numpy bit for bit, on a length that leaves a vector tail, with NaN, zeros and both signs."""
    n = 16 * 37 + 13
    x = rng.standard_normal(n).astype(dtype)
    x[:4] = [np.nan, 0.0, -0.0, np.inf]
    g = rng.standard_normal(n).astype(dtype)
    g[4] = np.nan
    xs, gs = mx.nd.array(x, dtype=dtype), mx.nd.array(g, dtype=dtype)
    f = np.float64 if dtype == "float64" else np.float32
    xf, gf = x.astype(f), g.astype(f)
    with np.errstate(invalid="ignore"):
        relu = gf * np.where(xf > 0, f(1), np.where(np.isnan(xf), xf, f(0)))
        sig = gf * xf * (f(1) - xf)
        leaky = gf * np.where(xf > 0, f(1), f(np.float32(0.25)))
    got = mx.nd._backward_Activation(gs, xs, act_type="relu").asnumpy()
    np.testing.assert_array_equal(got, relu.astype(dtype))
    got = mx.nd._backward_Activation(gs, xs, act_type="sigmoid").asnumpy()
    np.testing.assert_array_equal(got, sig.astype(dtype))
    got = mx.nd._backward_LeakyReLU(gs, xs, act_type="leaky", slope=0.25)
    got = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_array_equal(got.asnumpy(), leaky.astype(dtype))
    fwd = mx.nd.LeakyReLU(xs, act_type="leaky", slope=0.25).asnumpy()
    with np.errstate(invalid="ignore"):
        ref = np.where(xf > 0, xf, xf * f(np.float32(0.25)))
    np.testing.assert_array_equal(fwd, ref.astype(dtype))


# ---- a ReLU folded into Convolution / BatchNorm (attrs["_relu"], mxc/executor/fold.py) ---------
def _relu_np(y):
    return np.where((y > 0) | np.isnan(y), y, np.zeros_like(y))


def _run(opname, inputs, kw, relu):
    op = registry.get(opname)
    a = op.parse(kw)
    if relu:
        a = dict(a, _relu=True)
    shapes, dtypes = op.infer(a, [x.shape for x in inputs], [x.dtype for x in inputs])
    outs = [mx.nd.empty(s, dtype=d) for s, d in zip(shapes, dtypes)]
    op.forward(a, inputs, outs)
    return outs[0].asnumpy()


# (data shape, weight shape, params): the kernel's paths, each must apply the ReLU
FOLDED_CONV = [
    ((2, 3, 20, 20), (8, 3, 3, 3), dict(kernel=(3, 3), pad=(1, 1))),            # winograd/per sample
    ((4, 3, 5, 5), (6, 3, 3, 3), dict(kernel=(3, 3), pad=(1, 1))),              # sample blocks
    ((4, 16, 3, 3), (2, 16, 1, 1), dict(kernel=(1, 1))),                        # blocks, transposed
    ((2, 8, 12, 12), (8, 8, 1, 1), dict(kernel=(1, 1))),                        # direct 1x1
    ((2, 6, 9, 9), (6, 1, 3, 3), dict(kernel=(3, 3), stride=(2, 2), num_group=6)),  # grouped
    ((2, 3, 2, 2), (4, 3, 3, 3), dict(kernel=(3, 3), pad=(1, 1))),              # dense
    ((2, 3, 11), (5, 3, 3), dict(kernel=(3,), stride=(2,))),                    # 1-D
    ((1, 2, 4, 5, 5), (3, 2, 2, 2, 2), dict(kernel=(2, 2, 2))),                 # 3-D
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("case", range(len(FOLDED_CONV)))
def test_convolution_with_folded_relu_is_relu_of_it_bit_for_bit(case, dtype, rng):
    dshape, wshape, kw = FOLDED_CONV[case]
    kw = dict(kw, num_filter=wshape[0], no_bias=False)
    ins = [mx.nd.array(rng.standard_normal(s), dtype=dtype)
           for s in (dshape, wshape, (wshape[0],))]
    plain = _run("Convolution", ins, kw, False)
    got = _run("Convolution", ins, kw, True)
    assert (plain < 0).any() and (plain > 0).any()
    np.testing.assert_array_equal(got, _relu_np(plain))
    assert not np.signbit(got[got == 0]).any()          # -0 becomes 0, as the relu operator


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("axis", [1, -1])
def test_batchnorm_with_folded_relu_is_relu_of_it_bit_for_bit(dtype, axis, rng):
    x = rng.standard_normal((2, 4, 3, 5))
    x[0, 0, 0, :2] = np.nan
    c = x.shape[axis]
    pdt = "float32" if dtype == "float16" else dtype       # float16 data, float32 parameters
    ins = [mx.nd.array(x, dtype=dtype)] + [mx.nd.array(v, dtype=pdt) for v in
                                           (rng.standard_normal(c), rng.standard_normal(c),
                                            rng.standard_normal(c), rng.random(c) + 0.5)]
    kw = dict(fix_gamma=False, axis=axis, eps=1e-3)
    plain = _run("BatchNorm", ins, kw, False)
    got = _run("BatchNorm", ins, kw, True)
    assert np.isnan(got).any()
    np.testing.assert_array_equal(got, _relu_np(plain))


def test_folded_relu_on_the_gpu_runs_after_the_forward(fake_lib):  # noqa: F811
    # the GPU kernels do not fold the ReLU: the relu kernel runs after the convolution's
    out = run_fake('''
        from mxc.ops import _gpu, registry
        from mxc.ops.cuda import loader
        launched = []
        def kernel(family, name, dev=0):
            launched.append(name)
            return kfn("fake_noop")
        loader.kernel = kernel
        _gpu._push_cupy = lambda fn, opname, ins, outs, dev: None
        x = gpu_array(np.ones((2, 3, 6, 6), np.float32))
        w = gpu_array(np.ones((4, 3, 3, 3), np.float32))
        op = registry.get("Convolution")
        a = dict(op.parse(dict(kernel=(3, 3), num_filter=4, no_bias=True)), _relu=True)
        y = mx.nd.empty((2, 4, 4, 4), ctx=mx.gpu(0))
        op.forward(a, [x, w], [y])
        mx.nd.waitall()
        assert any("relu" in k for k in launched[-1:]), launched
        print("ok")
    ''', fake_lib)
    assert out.strip().endswith("ok")
