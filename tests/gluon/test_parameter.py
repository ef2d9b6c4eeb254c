"""Parameter, Constant and ParameterDict (MXNet 1.9.1's behaviour and messages)."""
import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from mxc.gluon import Constant, DeferredInitializationError, Parameter, ParameterDict


def test_initialize_data_grad_and_contexts():
    p = Parameter("w", shape=(3, 4))
    assert p.shape == (3, 4) and p.dtype == np.float32 and p.grad_req == "write"
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    assert len(p.list_data()) == 2 and len(p.list_grad()) == 2
    np.testing.assert_array_equal(p.data(mx.cpu(0)).asnumpy(), p.data(mx.cpu(1)).asnumpy())
    assert p.data(mx.cpu(1)).context == mx.cpu(1)
    vals = p.data(mx.cpu(0)).asnumpy()
    assert np.abs(vals).max() <= 0.07 and vals.std() > 0      # default Uniform(0.07)
    with pytest.raises(RuntimeError, match="was not initialized on context cpu\\(2\\)"):
        p.data(mx.cpu(2))
    with pytest.warns(UserWarning, match="Parameter 'w' is already initialized"):
        p.initialize()
    p.initialize(init="ones", force_reinit=True, ctx=mx.cpu(0))
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((3, 4)))


def test_uninitialized_and_deferred_errors():
    p = Parameter("w", shape=(3, 4))
    with pytest.raises(RuntimeError, match="Parameter 'w' has not been initialized"):
        p.data()
    with pytest.raises(ValueError, match="invalid shape"):
        Parameter("v", shape=(0, 4)).initialize()
    q = Parameter("q", shape=(0, 4), allow_deferred_init=True)
    q.initialize(init="zeros", ctx=mx.cpu(0))
    assert q.list_ctx() == [mx.cpu(0)]
    with pytest.raises(DeferredInitializationError, match="initialization was deferred"):
        q.data()
    assert isinstance(DeferredInitializationError("x"), mx.MXNetError)
    q.shape = (5, 4)
    q._finish_deferred_init()
    np.testing.assert_array_equal(q.data().asnumpy(), np.zeros((5, 4)))
    with pytest.raises(AssertionError, match="incompatible"):
        q.shape = (6, 4)


def test_set_data_before_deferred_init_finishes():
    q = Parameter("q", shape=(0,), allow_deferred_init=True)
    q.initialize()
    q.set_data(mx.nd.array([1, 2, 3]))
    assert q.shape == (3,)
    q._finish_deferred_init()
    np.testing.assert_array_equal(q.data().asnumpy(), [1, 2, 3])


def test_grad_req_switching_and_autograd():
    p = Parameter("w", shape=(2,))
    p.initialize(init="ones")
    with autograd.record():
        y = (p.data() * mx.nd.array([3, 4])).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [3, 4])
    p.grad_req = "add"
    for _ in range(2):
        with autograd.record():
            y = (p.data() * mx.nd.array([1, 1])).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [2, 2])   # fresh buffer, accumulated
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0])
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="because grad_req='null'"):
        p.grad()
    with pytest.raises(AssertionError, match="grad_req must be one of"):
        p.grad_req = "bad"
    assert Parameter("nd", shape=(1,), differentiable=False).grad_req == "null"


def test_cast_and_reset_ctx():
    p = Parameter("w", shape=(2, 2))
    p.initialize(init="ones")
    p.cast("float64")
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    with autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.full((2, 2), 2.0))
    p.reset_ctx([mx.cpu(1), mx.cpu(2)])
    assert p.list_ctx() == [mx.cpu(1), mx.cpu(2)]
    np.testing.assert_array_equal(p.data(mx.cpu(2)).asnumpy(), np.ones((2, 2)))
    with pytest.raises(ValueError, match="Cannot reset context for Parameter 'x'"):
        Parameter("x", shape=(1,)).reset_ctx(mx.cpu())


def test_var_attributes():
    p = Parameter("fc_weight", shape=(3, 0), lr_mult=2.0, wd_mult=0.5, init="zeros")
    v = p.var()
    attrs = v.list_attr()
    assert v.name == "fc_weight"
    assert attrs["__shape__"] == "(3, 0)" and attrs["__lr_mult__"] == "2.0"
    assert attrs["__wd_mult__"] == "0.5" and attrs["__dtype__"] == "0"
    assert attrs["__init__"] == "zeros"
    assert p.var() is v


def test_repr_and_sparse_stypes():
    assert repr(Parameter("w", shape=(2, 3))) == \
        "Parameter w (shape=(2, 3), dtype=<class 'numpy.float32'>)"
    with pytest.raises(AssertionError, match="stype for Parameter 'w' must be one of"):
        Parameter("w", stype="dense")
    p = Parameter("e", shape=(4, 2), grad_stype="row_sparse")
    p.initialize(init="ones")
    assert p.grad().stype == "row_sparse"
    s = Parameter("s", shape=(4, 2), stype="row_sparse")
    s.initialize(init="zeros")
    with pytest.raises(RuntimeError, match="Please use row_sparse_data\\(\\) instead"):
        s.data()
    with pytest.raises(RuntimeError, match="no Trainer is created"):
        s.row_sparse_data(mx.nd.array([0, 1]))


def test_constant():
    c = Constant("c", [[1, 2], [3, 4]])
    assert c.grad_req == "null" and c.shape == (2, 2)
    with pytest.warns(UserWarning, match="does not support grad_req"):
        c.grad_req = "write"
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    assert repr(c).startswith("Constant c (shape=(2, 2)")
    c.set_data(mx.nd.array([[0, 0], [0, 1]]))
    np.testing.assert_array_equal(c.data().asnumpy(), [[0, 0], [0, 1]])


def test_parameter_dict_get_consistency():
    pd = ParameterDict("net_")
    w = pd.get("weight", shape=(3, 0))
    assert w.name == "net_weight" and pd.get("weight") is w
    assert pd.get("weight", shape=(3, 5)) is w and w.shape == (3, 5)
    assert pd.get("weight", dtype="float32") is w
    with pytest.raises(AssertionError, match="desired attribute does not match with stored for "
                                             "attribute 'shape'"):
        pd.get("weight", shape=(4, 5))
    with pytest.raises(AssertionError, match="attribute 'lr_mult'"):
        pd.get("weight", lr_mult=3.0)
    shared = ParameterDict("net_", shared=pd)
    assert shared.get("weight") is w
    assert list(shared.keys()) == ["net_weight"]
    assert "net_weight" in repr(pd) and repr(pd).startswith("net_ (\n")


def test_parameter_dict_constant_update_setattr():
    pd = ParameterDict("p_")
    c = pd.get_constant("const", [1.0, 2.0])
    assert pd.get_constant("const") is c
    assert pd.get_constant("const", [1.0, 2.0]) is c
    with pytest.raises(AssertionError, match="value doesn't match"):
        pd.get_constant("const", [1.0, 3.0])
    with pytest.raises(KeyError, match="No constant named 'p_other'"):
        pd.get_constant("other")
    pd.get("w", shape=(2,))
    with pytest.raises(AssertionError, match="already exists but it is not a constant"):
        pd.get_constant("w", [1.0, 1.0])
    other = ParameterDict("p_")
    other.get("w", shape=(2,))
    with pytest.raises(AssertionError, match="different Parameters with the same name 'p_w'"):
        pd.update(other)
    pd.setattr("lr_mult", 0.25)
    assert all(p.lr_mult == 0.25 for p in pd.values())


def test_parameter_dict_initialize_zero_grad_reset_ctx():
    pd = ParameterDict("m_")
    pd.get("a", shape=(2,))
    pd.get("b", shape=(3,), init="ones")
    pd.initialize(init="zeros")
    np.testing.assert_array_equal(pd["m_a"].data().asnumpy(), [0, 0])
    np.testing.assert_array_equal(pd["m_b"].data().asnumpy(), [1, 1, 1])   # own init wins
    for p in pd.values():
        p.grad()[:] = 5
    pd.zero_grad()
    assert all((p.grad().asnumpy() == 0).all() for p in pd.values())
    pd.reset_ctx(mx.cpu(3))
    assert pd.list_ctx() == [mx.cpu(3)]


def test_parameter_dict_save_load(tmp_path):
    pd = ParameterDict("net_")
    pd.get("w", shape=(2, 2), init="ones")
    pd.get("b", shape=(2,), init="zeros")
    pd.initialize()
    f = str(tmp_path / "p.params")
    pd.save(f, strip_prefix="net_")
    assert sorted(mx.nd.load(f)) == ["b", "w"]
    with pytest.raises(ValueError, match="Prefix 'zz_' is to be striped before saving"):
        pd.save(f + "x", strip_prefix="zz_")
    pd2 = ParameterDict("net_")
    pd2.get("w", shape=(2, 0), allow_deferred_init=True)
    pd2.get("b", shape=(2,))
    pd2.load(f, restore_prefix="net_")
    assert pd2["net_w"].shape == (2, 2)
    np.testing.assert_array_equal(pd2["net_w"].data().asnumpy(), np.ones((2, 2)))
    pd3 = ParameterDict("net_")
    pd3.get("w", shape=(2, 2))
    pd3.get("c", shape=(2, 2))
    with pytest.raises(AssertionError, match="Parameter 'c' is missing in file: "):
        pd3.load(f, restore_prefix="net_")
    with pytest.raises(AssertionError, match="Parameter 'b' loaded from file: .* is not present"):
        pd3.load(f, restore_prefix="net_", allow_missing=True)
    pd3.load(f, restore_prefix="net_", allow_missing=True, ignore_extra=True)
    with pytest.raises(AssertionError, match="restore_prefix is 'q_'"):
        pd3.load(f, restore_prefix="q_")
    # MXNet's 'arg:'/'aux:' names (Module checkpoints, export) load too
    mx.nd.save(f, {"arg:net_w": mx.nd.full((2, 2), 3), "aux:net_c": mx.nd.full((2, 2), 4)})
    pd3.load(f)
    np.testing.assert_array_equal(pd3["net_c"].data().asnumpy(), np.full((2, 2), 4))


def test_load_shape_mismatch_message(tmp_path):
    f = str(tmp_path / "p.params")
    mx.nd.save(f, {"w": mx.nd.ones((3,))})
    pd = ParameterDict()
    pd.get("w", shape=(2,))
    with pytest.raises(AssertionError, match="shape incompatible expected \\(2,\\) vs saved"):
        pd.load(f)


def test_initializer_object_and_default_init():
    from mxc import initializer
    p = Parameter("w", shape=(2,), init=initializer.Constant(7))
    p.initialize(init=None, default_init=initializer.Zero())
    np.testing.assert_array_equal(p.data().asnumpy(), [7, 7])
    q = Parameter("fc_bias", shape=(3,))
    q.initialize(default_init=initializer.Uniform(1.0))    # as MXNet: uniform, even a bias
    v = q.data().asnumpy()
    assert np.abs(v).max() <= 1.0 and np.abs(v).min() > 0
    r = Parameter("w2", shape=(50,))
    r.initialize(init=initializer.Constant(2), default_init=initializer.Zero())
    np.testing.assert_array_equal(r.data().asnumpy(), np.full(50, 2))


def test_block_params_via_gluon_namespace():
    assert gluon.Parameter is Parameter and gluon.ParameterDict is ParameterDict
    assert gluon.tensor_types == (mx.sym.Symbol, mx.nd.NDArray)
