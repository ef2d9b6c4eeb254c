"""hard_sigmoid, _split_v2/split_v2, batch_take, amp_cast, amp_multicast, SVMOutput: numpy
references, central-difference gradients and MXNet 1.9.1 goldens (tests/data/misc_golden.npz)."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from .oputil import check_forward, check_grad

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "misc_golden.npz")


def golden_cases(prefix_ops):
    z = np.load(GOLDEN)
    names = sorted(k[:-3] for k in z.files if k.endswith(":op"))
    return [n for n in names if str(z[n + ":op"]) in prefix_ops]


def run_golden(name, rtol=1e-5, atol=1e-5):
    z = np.load(GOLDEN)
    op, kw = str(z[name + ":op"]), json.loads(str(z[name + ":kw"]))
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    ins = []
    i = 0
    while f"{name}:in{i}" in z.files:
        ins.append(z[f"{name}:in{i}"])
        i += 1
    nd_in = [mx.nd.array(x, dtype=x.dtype) for x in ins]
    grads = [f"{name}:grad{i}" in z.files for i in range(len(ins))]
    for x, g in zip(nd_in, grads):
        if g:
            x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd, op)(*nd_in, **kw)
    outs = out if isinstance(out, list) else [out]
    n_out = len([k for k in z.files if k.startswith(name + ":out")])
    assert len(outs) == n_out, name
    for i, o in enumerate(outs):
        e = z[f"{name}:out{i}"]
        assert o.shape == e.shape and o.dtype == e.dtype, (name, o.shape, e.shape, o.dtype, e.dtype)
        np.testing.assert_allclose(o.asnumpy().astype(np.float64), e.astype(np.float64),
                                   rtol=rtol, atol=atol, err_msg=name)
    if any(grads):
        mx.autograd.backward(outs, [mx.nd.array(z[f"{name}:head{i}"], dtype=z[f"{name}:head{i}"].dtype) for i in range(n_out)])
        for i, (x, g) in enumerate(zip(nd_in, grads)):
            if g:
                np.testing.assert_allclose(x.grad.asnumpy(), z[f"{name}:grad{i}"], rtol=rtol,
                                           atol=atol, err_msg=f"{name} grad{i}")


MISC = ("hard_sigmoid", "split_v2", "_split_v2", "batch_take", "amp_cast", "amp_multicast",
        "SVMOutput", "moments", "all_finite", "multi_all_finite", "_contrib_div_sqrt_dim",
        "_contrib_quadratic", "_contrib_index_array")


@pytest.mark.parametrize("name", golden_cases(MISC))
def test_golden(name):
    run_golden(name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hard_sigmoid(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 4)) * 4).astype(dtype)
    a, b = np.float32(0.2).astype(dtype), np.float32(0.5).astype(dtype)
    check_forward("hard_sigmoid", [x], {}, np.clip(a * x + b, 0, 1).astype(dtype))
    check_grad("hard_sigmoid", [x.astype(np.float64)], {"alpha": 0.3, "beta": 0.1}, rng)


def test_split_v2():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 7))
    check_forward("split_v2", [x], {"indices_or_sections": (2, 3), "axis": 1},
                  np.split(x, (2, 3), axis=1))
    check_forward("_split_v2", [x], {"indices": (0, 1, 3), "axis": 0}, np.split(x, (1, 3), axis=0))
    check_forward("_split_v2", [x], {"indices": (), "sections": 3, "axis": 1},
                  np.array_split(x, 3, axis=1))
    # empty sections, as MXNet 1.9.1's operator gives them: (0,), (2,), (1,)
    parts = mx.nd._split_v2(mx.nd.array([1., 2., 3.]), indices=(0, 0, 2), axis=0)
    assert [p.asnumpy().tolist() for p in parts] == [[], [1., 2.], [3.]]
    with pytest.raises(Exception, match="equal division"):
        mx.nd.split_v2(mx.nd.array(x), indices_or_sections=3, axis=1)
    with pytest.raises(Exception, match="squeeze_axis"):
        mx.nd.split_v2(mx.nd.array(x), indices_or_sections=2, axis=0, squeeze_axis=True)


def test_batch_take_amp():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([1, -3, 8], dtype=np.int32)
    check_forward("batch_take", [a, idx], {}, np.array([1, 4, 11], np.float32))
    with pytest.raises(Exception, match="batch_take"):
        mx.nd.batch_take(mx.nd.array(a), mx.nd.array([1, 2], dtype="int32"))
    assert mx.nd.amp_cast(mx.nd.array(a), dtype="float16").dtype == np.float16
    assert mx.nd.amp_cast(mx.nd.array(a, dtype="float64"), dtype="float16").dtype == np.float64
    outs = mx.nd.amp_multicast(mx.nd.array(a, dtype="float16"), mx.nd.array(a), num_outputs=2)
    assert [o.dtype for o in outs] == [np.float32, np.float32]
    outs = mx.nd.amp_multicast(mx.nd.array(a, dtype="float16"), mx.nd.array(a), num_outputs=2,
                               cast_narrow=True)
    assert [o.dtype for o in outs] == [np.float16, np.float16]


def test_svm_output_symbolic():
    x = mx.sym.var("x")
    s = mx.sym.SVMOutput(x, mx.sym.var("l"), margin=2.0)
    assert s.infer_shape(x=(3, 4), l=(3,))[1] == [(3, 4)]
    assert mx.sym.hard_sigmoid(x).infer_shape(x=(2, 5))[1] == [(2, 5)]


def test_moments_finite_contrib():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5))
    check_forward("moments", [x], {"axes": (0, 2)}, [x.mean(axis=(0, 2)), x.var(axis=(0, 2))])
    check_forward("moments", [x], {"axes": (1,), "keepdims": True},
                  [x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)])
    with pytest.raises(Exception, match="moments"):
        mx.nd.moments(mx.nd.array(x), axes=(3,))
    assert mx.nd.all_finite(mx.nd.array(x)).asnumpy().tolist() == [1.0]
    assert mx.nd.all_finite(mx.nd.array([np.nan])).asnumpy().tolist() == [0.0]
    assert mx.nd.multi_all_finite(mx.nd.array(x), mx.nd.array([1, 2], dtype="int32"),
                                  num_arrays=2).asnumpy().tolist() == [1.0]
    check_forward("_contrib_div_sqrt_dim", [x], {}, x / np.sqrt(5))
    check_forward("_contrib_quadratic", [x], {"a": 2.0, "b": 1.0, "c": -1.0},
                  2 * x * x + x - 1)
    idx = mx.nd.contrib.index_array(mx.nd.array(x), axes=(1,)).asnumpy()
    assert idx.dtype == np.int64 and idx.shape == (3, 4, 5, 1)
    assert (idx[:, 2] == 2).all()
    with pytest.raises(Exception, match="index_array"):
        mx.nd.contrib.index_array(mx.nd.array(x), axes=(5,))
