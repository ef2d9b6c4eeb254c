"""The registry contract: one OpDef feeds mx.nd; parameters parse from Python values and from
MXNet attribute strings (what -symbol.json stores) to the same typed values."""
import inspect

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import registry
from mxc.ops.params import attrs_to_strings


def test_every_name_and_alias_is_an_nd_function():
    for name, op in registry.names().items():
        fn = getattr(mx.nd, name)
        assert callable(fn), name
        if fn.__module__ == "mxc.ndarray":      # generated (not a hand-written creation function)
            sig = inspect.signature(fn)
            for p in op.params:
                assert p.name in sig.parameters, (name, p.name)


@pytest.mark.parametrize("opname,strings,typed", [
    ("transpose", {"axes": "(1, 0)"}, {"axes": (1, 0)}),
    ("sum", {"axis": "(0,)", "keepdims": "True", "exclude": "false"},
     {"axis": (0,), "keepdims": True, "exclude": False}),
    ("sum", {"axis": "1"}, {"axis": (1,), "keepdims": False, "exclude": False}),
    ("sum", {"axis": "None"}, {"axis": None, "keepdims": False, "exclude": False}),
    ("slice", {"begin": "(0, None)", "end": "(2, 3)", "step": "()"},
     {"begin": (0, None), "end": (2, 3), "step": ()}),
    ("clip", {"a_min": "-1", "a_max": "inf"}, {"a_min": -1.0, "a_max": float("inf")}),
    ("cast", {"dtype": "float16"}, {"dtype": "float16"}),
    ("Reshape", {"shape": "[2,-1]", "reverse": "0"}, {"shape": (2, -1), "reverse": False,
                                                      "target_shape": None, "keep_highest": False}),
    ("take", {"axis": "0", "mode": "wrap"}, {"axis": 0, "mode": "wrap"}),
])
def test_params_parse_from_strings(opname, strings, typed):
    op = registry.get(opname)
    assert op.parse(strings) == typed
    # and back: the typed values print as MXNet attribute strings that parse to the same
    assert op.parse(attrs_to_strings(typed)) == typed


def test_bad_parameters_name_the_operator():
    with pytest.raises(ValueError, match="take.*mode"):
        mx.nd.take(mx.nd.ones(2), mx.nd.ones(1), mode="bogus")
    with pytest.raises(ValueError, match="sum.*unknown"):
        mx.nd.sum(mx.nd.ones(2), axes=1)
    with pytest.raises(ValueError, match="clip.*a_min"):
        mx.nd.clip(mx.nd.ones(2), a_max=1)
    with pytest.raises(ValueError, match="transpose"):
        mx.nd.transpose(mx.nd.ones((2, 3)), axes=(0, 0))
    with pytest.raises(TypeError, match="exp"):
        mx.nd.exp(np.ones(2))
    with pytest.raises(MXNetError, match="not registered"):
        registry.get("no_such_op")


def test_positional_parameters_as_mxnet():
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    assert mx.nd.sum(x, 1).asnumpy().tolist() == [3, 12]        # axis positionally
    assert x.sum(0).asnumpy().tolist() == [3, 5, 7]
    assert mx.nd.clip(x, 1, 4).asnumpy().tolist() == [[1, 1, 2], [3, 4, 4]]


def test_aliases_share_one_definition():
    assert registry.get("Concat") is registry.get("concat")
    assert registry.get("broadcast_plus") is registry.get("broadcast_add")
    assert registry.get("_Plus") is registry.get("elemwise_add")
    assert mx.nd.Flatten(mx.nd.ones((2, 3, 4))).shape == (2, 12)


def test_gradient_definitions_are_present():
    """Every kernel operator has a gradient, except those MXNet does not differentiate either:
    creation ops, backward kernels (`_backward_*`), optimizer updates and counts (histogram,
    a CSR array's stored-value count, the entropy calibration of a histogram)."""
    exempt_prefix = ("_zeros", "_ones", "_full", "_arange", "_linspace", "_eye", "_backward_",
                     "_contrib_backward_", "_histogram", "_contrib_getnnz",
                     "_contrib_calibrate_entropy")
    exempt_suffix = ("_update", "_update_phase1", "_update_phase2")
    missing = [op.name for op in registry.all_ops()
               if op.grad is None and op.composite is None
               and not op.name.startswith(exempt_prefix) and not op.name.endswith(exempt_suffix)]
    assert not missing, missing


def test_float16_kernels_exist_where_mxnet_runs_float16():
    """Every CPU kernel with a float32 variant has a float16 one (computing in float32), except
    the LAPACK-style linear algebra MXNet runs in float32/float64 only, INT8 quantization,
    whose float side MXNet takes in float32 only, and hawkesll, a sequential likelihood (MXNet
    summed it in half precision: float16 is refused, naming the operator)."""
    import importlib
    import pkgutil
    import mxc.ops.cpu as cpu
    float32_only = {"linalg", "quantization", "contrib_hawkesll"}
    missing = []
    for m in pkgutil.iter_modules(cpu.__path__):
        if m.name in float32_only or m.name.startswith("_"):
            continue
        table = importlib.import_module(f"mxc.ops.cpu.{m.name}").KERNELS
        missing += [f"{m.name}:{k}" for k, by_dtype in table.items()
                    if isinstance(by_dtype, dict) and 0 in by_dtype and 2 not in by_dtype]
    assert not missing, missing


def test_registry_metadata_is_consistent():
    """What the symbol front and executor will rely on: aux states are inputs, mutated inputs
    exist, input_names pick among the declared inputs, resources are known kinds."""
    for op in registry.all_ops():
        assert set(op.aux) <= set(op.inputs), op.name
        assert all(0 <= i < max(1, len(op.inputs)) or op.variadic for i in op.mutate), op.name
        assert set(op.resources) <= {"random", "temp_space"}, op.name
        if op.aux:
            idx = [op.inputs.index(a) for a in op.aux]
            assert all(i in op.mutate for i in idx), f"{op.name}: aux states are updated in place"


def test_keywords_of_an_operator_without_parameters_are_ignored_with_one_warning():
    # MXNet parses no attributes for such operators: broadcast_maximum(a, b, axis=1) runs
    a, b = mx.nd.array([0.0]), mx.nd.array([-1.0, 2.0])
    with pytest.warns(UserWarning, match="broadcast_maximum: takes no parameters; \\['axis'\\]"):
        out = mx.nd.broadcast_maximum(a, b, axis=1)
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 2.0])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.nd.broadcast_maximum(a, b, axis=1)          # warned once per operator and names
    with pytest.raises(ValueError, match="FullyConnected: unknown parameter"):
        mx.nd.FullyConnected(mx.nd.ones((1, 2)), num_hidden=2, axis=1)


def test_ndarray_and_symbol_methods_come_from_one_list():
    import mxc as mx
    from mxc.ops.registry import METHODS
    a, s = mx.nd.array([[1.0, 4.0]]), mx.sym.var("x")
    for name in METHODS:
        assert callable(getattr(mx.nd.NDArray, name)), name
        assert callable(getattr(mx.sym.Symbol, name)), name
        assert name in ("astype",) or mx.ops.registry.get(name)   # operators, but astype
    assert a.sqrt().asnumpy().tolist() == [[1.0, 2.0]]
    assert s.negative().list_arguments() == ["x"]
