"""_contrib_quantized_batch_norm, _contrib_quantized_elemwise_mul and _contrib_quantized_embedding
against MXNet 1.9.1's outputs (tests/data/quantized_ops_golden.npz, made by
tests/data/make_quantized_ops_golden.py), through mx.nd and mx.sym, and their input checks."""
import json
import os

import numpy as np
import pytest

import mxc as mx

_G = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "quantized_ops_golden.npz"))
CASES = sorted({k.split("/")[0] for k in _G.files})
# MXNet's calibrated elemwise_mul wraps products past the calibrated range (a C cast); mxc
# saturates them: test_calibrated_mul_saturates holds these cases to that
WRAPS = ("mul_calib", "mul_calib_wrap")


def _case(name):
    spec = json.loads(str(_G[f"{name}/attrs"]))
    ins = [_G[f"{name}/in{i}"] for i in range(sum(k.startswith(f"{name}/in") for k in _G.files))]
    outs = [_G[f"{name}/out{i}"] for i in range(sum(k.startswith(f"{name}/out")
                                                     for k in _G.files))]
    return spec["op"], spec["kw"], ins, outs


def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=0)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", [c for c in CASES if c not in WRAPS])
def test_matches_mxnet_nd(name):
    op, kw, ins, outs = _case(name)
    res = getattr(mx.nd.contrib, op)(*[mx.nd.array(a, dtype=a.dtype) for a in ins], **kw)
    res = res if isinstance(res, (list, tuple)) else [res]
    _check([r.asnumpy() for r in res], outs)


@pytest.mark.parametrize("name", ["bn_uint8", "mul_int32", "emb_f32"])
def test_matches_mxnet_sym(name):
    op, kw, ins, outs = _case(name)
    names = [f"in{i}" for i in range(len(ins))]
    s = getattr(mx.sym.contrib, op)(*[mx.sym.var(n) for n in names], **kw)
    arrays = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, ins)}
    ex = s.bind(mx.cpu(), {n: arrays[n] for n in s.list_arguments()},
                aux_states={n: arrays[n] for n in s.list_auxiliary_states()})
    _check([o.asnumpy() for o in ex.forward()], outs)
    if op == "quantized_batch_norm":      # the statistics are auxiliary states, as BatchNorm's
        assert s.list_auxiliary_states() == ["in3", "in4"]
    _, out_types, _ = s.infer_type(**{n: a.dtype for n, a in zip(names, ins)
                                      if n in s.list_arguments()})
    assert [np.dtype(t) for t in out_types] == [o.dtype for o in outs]


def test_elemwise_mul_float_output_has_one_output():
    s = mx.sym.contrib.quantized_elemwise_mul(*[mx.sym.var(n) for n in "abcdef"],
                                              enable_float_output=True, name="m")
    assert s.list_outputs() == ["m_output"]


def test_bad_inputs_are_refused():
    f = lambda v: mx.nd.array([v])                                      # noqa: E731
    s8 = mx.nd.array(np.arange(6).reshape(2, 3), dtype="int8")
    with pytest.raises(mx.MXNetError, match="quantized_elemwise_mul.*rhs"):
        mx.nd.contrib.quantized_elemwise_mul(s8, s8.astype("uint8"), f(-1), f(1), f(-1), f(1))
    with pytest.raises(mx.MXNetError, match="no broadcasting"):
        mx.nd.contrib.quantized_elemwise_mul(s8, s8.reshape(3, 2), f(-1), f(1), f(-1), f(1))
    with pytest.raises(mx.MXNetError, match="quantized_embedding.*weight"):
        mx.nd.contrib.quantized_embedding(mx.nd.array([0, 1]), s8, f(-1), f(1),
                                          input_dim=3, output_dim=2)
    x = mx.nd.array(np.zeros((1, 2, 2, 2)), dtype="int8")
    stats = [mx.nd.ones(2)] * 4
    with pytest.raises(mx.MXNetError, match="min_calib_range and max_calib_range"):
        mx.nd.contrib.quantized_batch_norm(x, *stats, f(-1), f(1)).asnumpy()
    with pytest.raises(mx.MXNetError, match="gamma has shape"):
        mx.nd.contrib.quantized_batch_norm(x, mx.nd.ones(3), *stats[1:], f(-1), f(1),
                                           min_calib_range=-1, max_calib_range=1)


def test_embedding_of_int32_indices_binds_a_float32_weight_and_quantizes_exactly():
    # MXNet's test_quantized_embedding: int32 indices; the float Embedding's weight is float32
    # (its dtype parameter), the quantized one's int8, and both look up the same rows
    d = mx.sym.Variable("data", shape=(5,), dtype="int32")
    fp = mx.sym.Embedding(d, input_dim=7, output_dim=3)
    ex = fp.simple_bind(mx.cpu(), grad_req="null")
    assert ex.arg_dict[fp.list_arguments()[1]].dtype == np.float32
    w = np.random.RandomState(0).randint(-127, 128, (7, 3))
    idx = np.array([6, 0, 3, 3, 1], np.int32)
    ex.arg_dict["data"][:] = idx
    ex.arg_dict[fp.list_arguments()[1]][:] = w
    qs = mx.sym.contrib.quantized_embedding(data=d, input_dim=7, output_dim=3)
    qex = qs.simple_bind(mx.cpu(), grad_req="null")
    names = qs.list_arguments()
    assert qex.arg_dict[names[1]].dtype == np.int8
    qex.arg_dict[names[0]][:] = idx
    qex.arg_dict[names[1]][:] = w.astype(np.int8)
    qex.arg_dict[names[2]][:] = -127.0
    qex.arg_dict[names[3]][:] = 127.0
    q, lo, hi = qex.forward()
    np.testing.assert_array_equal(q.asnumpy(), ex.forward()[0].asnumpy())
    np.testing.assert_array_equal(q.asnumpy(), w[idx])
    assert (lo.asscalar(), hi.asscalar()) == (-127.0, 127.0)


@pytest.mark.parametrize("name", WRAPS)
def test_calibrated_mul_saturates(name):
    op, kw, ins, outs = _case(name)
    got = getattr(mx.nd.contrib, op)(*[mx.nd.array(a, dtype=a.dtype) for a in ins], **kw)
    a, b, amin, amax, bmin, bmax = ins
    f32 = np.float32
    sa = f32(127.5) / max(abs(amin[0]), abs(amax[0]))
    sb = f32(127.5) / max(abs(bmin[0]), abs(bmax[0]))
    calib = max(abs(f32(kw["min_calib_range"])), abs(f32(kw["max_calib_range"])))
    scale = f32(f32(f32(127.5) / calib) / sa) / sb
    raw = np.trunc((a.astype(np.int32) * b).astype(np.float32) * scale)
    want = np.clip(raw, -127, 127).astype(np.int8)
    np.testing.assert_array_equal(got[0].asnumpy(), want)
    inside = np.abs(raw) <= 127
    assert 0 < inside.sum() < inside.size           # some products are past the range
    np.testing.assert_array_equal(want[inside], outs[0][inside])     # MXNet's, where in range
    assert (outs[0][~inside] != want[~inside]).any()                 # MXNet wraps the rest
    assert (got[1].asscalar(), got[2].asscalar()) == (f32(kw["min_calib_range"]),
                                                      f32(kw["max_calib_range"]))


def test_threaded_sizes_match_the_serial_results():
    # above 32768 elements the kernels split the work over threads: the results are those of
    # numpy (products, lookups) and of the same operator on small (serial) slices (BatchNorm)
    rng = np.random.RandomState(3)
    f = lambda v: mx.nd.array([v])                                      # noqa: E731
    a = rng.randint(-128, 128, (200, 300)).astype(np.int8)
    b = rng.randint(-128, 128, (200, 300)).astype(np.int8)
    got = mx.nd.contrib.quantized_elemwise_mul(mx.nd.array(a, dtype="int8"),
                                               mx.nd.array(b, dtype="int8"),
                                               f(-1), f(1), f(-1), f(1))[0].asnumpy()
    np.testing.assert_array_equal(got, a.astype(np.int32) * b)
    w = rng.randint(-128, 128, (40, 500)).astype(np.int8)
    idx = rng.randint(0, 40, 300)
    got = mx.nd.contrib.quantized_embedding(mx.nd.array(idx, dtype="int32"),
                                            mx.nd.array(w, dtype="int8"), f(-1), f(1),
                                            input_dim=40, output_dim=500)[0].asnumpy()
    np.testing.assert_array_equal(got, w[idx])
    x = mx.nd.array(rng.randint(0, 256, (8, 16, 32, 32)), dtype="uint8")
    stats = [mx.nd.array(rng.uniform(0.5, 1.5, 16)) for _ in range(4)]
    kw = dict(min_calib_range=-2.0, max_calib_range=3.0, eps=0.01)
    whole = mx.nd.contrib.quantized_batch_norm(x, *stats, f(0.0), f(2.0), **kw)[0].asnumpy()
    for i in range(8):
        part = mx.nd.contrib.quantized_batch_norm(x[i:i + 1], *stats, f(0.0), f(2.0), **kw)[0]
        np.testing.assert_array_equal(whole[i:i + 1], part.asnumpy())
