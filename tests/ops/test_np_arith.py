"""numpy-semantics arithmetic in graphs (mxc/ops/np_arith.py): the _npi_* operators against numpy
with mxc's np dtype rules, hybridized blocks against the same code run imperatively, gradients
against their closed forms, and a block hybridized and exported by real MXNet 1.9.1
(tests/data/make_np_arith_golden.py)."""
import json
import os

import numpy as onp
import pytest

import mxc as mx
from mxc import autograd, gluon, npx, util
from mxc.gluon import HybridBlock
from mxc.numpy.multiarray import ndarray as np_ndarray, array as np_array

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "data", "np_arith")

# _npi name: numpy function of (lhs, rhs)
BINARY = {"_npi_add": onp.add, "_npi_subtract": onp.subtract, "_npi_multiply": onp.multiply,
          "_npi_true_divide": onp.true_divide, "_npi_mod": onp.mod, "_npi_power": onp.power}
SCALAR = {"_npi_add_scalar": onp.add, "_npi_subtract_scalar": onp.subtract,
          "_npi_multiply_scalar": onp.multiply, "_npi_true_divide_scalar": onp.true_divide,
          "_npi_mod_scalar": onp.mod, "_npi_power_scalar": onp.power}
RSCALAR = {"_npi_rsubtract_scalar": onp.subtract, "_npi_rtrue_divide_scalar": onp.true_divide,
           "_npi_rmod_scalar": onp.mod, "_npi_rpower_scalar": onp.power}


@pytest.fixture
def np_mode():
    util.set_np()
    yield
    util.reset_np()


def _operand(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("int"):
        return rng.integers(1, 5, shape).astype(dtype)
    return rng.uniform(0.5, 2.0, shape).astype(dtype)


def _promoted(d1, d2):
    """MXNet's np rule, written out: bool gives way, an integer meeting a float takes the float
    (numpy would widen int32 + float32 to float64), otherwise numpy's promotion."""
    k1, k2 = onp.dtype(d1).kind, onp.dtype(d2).kind
    if d1 == "bool" or (k1 in "iu" and k2 == "f"):
        return onp.dtype(d2)
    if d2 == "bool" or (k2 in "iu" and k1 == "f"):
        return onp.dtype(d1)
    return onp.result_type(d1, d2)


# (lhs dtype, rhs dtype, result dtype): mxc's np rules (float32 default, an int meeting a float
# takes the float, true_divide of integers is float32, two bools compute as int8)
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("d1,d2", [("float32", "float32"), ("int32", "float32"),
                                   ("bool", "float32"), ("bool", "int32"), ("int32", "int64"),
                                   ("float16", "float32")])
def test_binary_forms_promote_as_mx_np(name, d1, d2, rng):
    a, b = _operand(d1, (3, 4), rng), _operand(d2, (4,), rng)
    got = getattr(mx.nd, name)(mx.nd.array(a, dtype=d1), mx.nd.array(b, dtype=d2))
    want_dt = _promoted(d1, d2)
    if name == "_npi_true_divide" and onp.dtype(want_dt).kind != "f":
        want_dt = onp.float32
    assert got.dtype == onp.dtype(want_dt), (name, d1, d2, got.dtype)
    want = BINARY[name](a.astype(want_dt), b.astype(want_dt))
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), want.astype(onp.float64),
                                rtol=2e-3 if "float16" in (d1, d2) else 1e-6)
    # the mx.np function gives the same dtype and values
    npname = {"_npi_add": "add", "_npi_subtract": "subtract", "_npi_multiply": "multiply",
              "_npi_true_divide": "true_divide", "_npi_mod": "mod", "_npi_power": "power"}[name]
    ref = getattr(mx.np, npname)(np_array(a, dtype=d1), np_array(b, dtype=d2))
    assert ref.dtype == got.dtype
    onp.testing.assert_array_equal(ref.asnumpy(), got.asnumpy())


def test_two_bools_add_and_multiply_as_logical_ops_and_refuse_subtract(rng):
    a, b = _operand("bool", (5,), rng), _operand("bool", (5,), rng)
    x, y = mx.nd.array(a, dtype="bool"), mx.nd.array(b, dtype="bool")
    s, p = mx.nd._npi_add(x, y), mx.nd._npi_multiply(x, y)
    assert s.dtype == onp.bool_ and p.dtype == onp.bool_
    onp.testing.assert_array_equal(s.asnumpy(), a | b)
    onp.testing.assert_array_equal(p.asnumpy(), a & b)
    assert mx.nd._npi_power(x, y).dtype == onp.int8
    with pytest.raises((TypeError, mx.MXNetError), match="boolean subtract"):
        mx.nd._npi_subtract(x, y)


@pytest.mark.parametrize("name", sorted(SCALAR) + sorted(RSCALAR))
@pytest.mark.parametrize("dtype,scalar", [("float32", 1.5), ("float32", 3), ("int32", 3),
                                          ("int32", 1.5), ("bool", 2), ("bool", 0.5),
                                          ("int64", 2)])
def test_scalar_forms_promote_as_mx_np(name, dtype, scalar, rng):
    a = _operand(dtype, (2, 3), rng)
    is_int = isinstance(scalar, int)
    got = getattr(mx.nd, name)(mx.nd.array(a, dtype=dtype), scalar=scalar, is_int=is_int)
    want_dt = onp.dtype(dtype)
    if dtype == "bool":
        want_dt = onp.dtype("int64") if is_int else onp.dtype("float32")
    elif want_dt.kind != "f" and not is_int:
        want_dt = onp.dtype("float32")
    if "true_divide" in name and want_dt.kind != "f":
        want_dt = onp.dtype("float32")
    assert got.dtype == want_dt, (name, dtype, scalar, got.dtype)
    fn = SCALAR.get(name) or RSCALAR[name]
    s = onp.asarray(scalar, dtype=want_dt)
    x = a.astype(want_dt)
    with onp.errstate(divide="ignore", invalid="ignore"):
        want = fn(s, x) if name in RSCALAR else fn(x, s)
    if name == "_npi_rmod_scalar":      # MXNet's x % 0 is 0 (numpy: nan)
        want = onp.where(x == 0, 0, want)
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), want.astype(onp.float64),
                                rtol=1e-6)


def test_gradients_flow_through_the_parts(rng):
    a = rng.uniform(0.5, 2, (3, 4)).astype("float32")
    b = rng.uniform(0.5, 2, (4,)).astype("float32")
    x, w = mx.nd.array(a), mx.nd.array(b)
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = mx.nd._npi_true_divide(mx.nd._npi_multiply(x, w), mx.nd._npi_add_scalar(
            x, scalar=1.0, is_int=True))
        z = mx.nd._npi_rpower_scalar(y, scalar=2.0, is_int=False)
    z.backward()
    yv = a * b / (a + 1)
    dz_dy = 2.0 ** yv * onp.log(2.0)
    onp.testing.assert_allclose(x.grad.asnumpy(), dz_dy * b / (a + 1) ** 2, rtol=1e-5)
    onp.testing.assert_allclose(w.grad.asnumpy(), (dz_dy * a / (a + 1)).sum(0), rtol=1e-5)


class _Mixed(HybridBlock):
    """numpy-style arithmetic on bool, int and float operands."""

    def hybrid_forward(self, F, a, b, i):
        gt = a > b
        return (gt * 10, 10 * gt, gt + 1.5, gt - 1, gt / 2, gt ** 2, gt * a, i * 1.5, i / 2,
                i + 2, 7 - i, i % 3, F.np.multiply(i, a), F.np.add(2, gt), F.np.true_divide(i, i),
                gt.astype("float32") * a)


def test_hybridized_block_gives_the_imperative_dtypes_and_values(np_mode, rng):
    a = np_array(rng.uniform(-1, 1, (4, 3)).astype("float32"))
    b = np_array(rng.uniform(-1, 1, (4, 3)).astype("float32"))
    i = np_array(rng.integers(-5, 6, (4, 3)).astype("int32"), dtype="int32")
    blk = _Mixed()
    want = blk(a, b, i)
    blk.hybridize()
    got = blk(a, b, i)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert type(g) is np_ndarray
        assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
        onp.testing.assert_array_equal(g.asnumpy(), w.asnumpy(), err_msg=str(k))
    # numpy's own answers where mxc's rules agree with numpy's
    av, bv, iv = a.asnumpy(), b.asnumpy(), i.asnumpy()
    gt = av > bv
    assert got[0].dtype == onp.int64
    onp.testing.assert_array_equal(got[0].asnumpy(), gt * 10)
    onp.testing.assert_array_equal(got[3].asnumpy(), gt.astype("int64") - 1)
    assert got[7].dtype == onp.float32           # int32 * 1.5 (the legacy op gave int32)
    onp.testing.assert_allclose(got[7].asnumpy(), iv * 1.5)
    onp.testing.assert_allclose(got[8].asnumpy(), iv / 2)
    assert got[9].dtype == onp.int32
    onp.testing.assert_array_equal(got[11].asnumpy(), iv % 3)


def test_exported_graph_holds_mxnets_operators(np_mode, tmp_path, rng):
    blk = _Mixed()
    blk.hybridize()
    a = np_array(rng.uniform(-1, 1, (2, 3)).astype("float32"))
    i = np_array(onp.arange(6).reshape(2, 3).astype("int32"), dtype="int32")
    blk(a, a, i)
    blk.export(str(tmp_path / "m"))
    nodes = json.load(open(tmp_path / "m-symbol.json"))["nodes"]
    attrs = {(n["op"], n.get("attrs", {}).get("scalar"), n.get("attrs", {}).get("is_int"))
             for n in nodes}
    assert ("_npi_multiply_scalar", "10.0", "True") in attrs or \
        ("_npi_multiply_scalar", "10", "True") in attrs, sorted(map(str, attrs))
    assert any(op == "_npi_add_scalar" and is_int == "False" for op, _, is_int in attrs)
    assert any(op == "_npi_rsubtract_scalar" for op, _, _ in attrs)


def test_a_block_mxnet_exported_loads_and_matches_mxnets_outputs(np_mode):
    ref = onp.load(os.path.join(DATA, "outputs.npz"))
    sb = gluon.SymbolBlock.imports(os.path.join(DATA, "block-symbol.json"), ["data"],
                                   os.path.join(DATA, "block-0000.params"))
    ops = {n["op"] for n in json.load(open(os.path.join(DATA, "block-symbol.json")))["nodes"]}
    assert "_npi_rsubtract_scalar" in ops and "_npi_power" in ops
    outs = sb(np_array(ref["x"]))
    n = len([k for k in ref.files if k.startswith("out_")])
    assert len(outs) == n
    for k in range(n):
        want = ref[f"out_{k}"]
        assert outs[k].dtype == want.dtype
        onp.testing.assert_allclose(outs[k].asnumpy(), want, rtol=1e-5, atol=1e-6,
                                    err_msg=f"output {k}")


def test_bad_operands_name_the_operator():
    with pytest.raises(mx.MXNetError, match="_npi_add"):
        mx.nd._npi_add(mx.nd.ones((2, 3)), mx.nd.ones((4,)))
    x = mx.sym.var("x")
    s = mx.sym._npi_multiply(x, mx.sym.var("y"))
    with pytest.raises(mx.MXNetError, match="_npi_multiply"):
        s.infer_shape(x=(2, 3), y=(3, 2))
    assert npx.is_np_array() is False
