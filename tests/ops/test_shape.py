"""Shape, indexing and init operators: forward vs numpy, inference, gradients."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops.shape import infer_reshape

from .oputil import check_forward, check_grad

DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32, np.int64, np.bool_]


def _x(rng, shape, dtype):
    return (rng.uniform(0, 50, size=shape)).astype(dtype)


@pytest.mark.parametrize("src,code,reverse,expected", [
    ((2, 3, 4), (4, 0, 2), False, (4, 3, 2)), ((2, 3, 4), (2, 0, 0), False, (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), False, (6, 1, 4)), ((2, 3, 4), (3, -1, 8), False, (3, 1, 8)),
    ((2, 3, 4), (-1,), False, (24,)), ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (2, -2), False, (2, 3, 4)), ((2, 3, 4), (-2, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), False, (6, 4)), ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4), (0, -3), False, (2, 12)), ((2, 3, 4), (-3, -2), False, (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)), ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)), ((10, 5, 4), (-1, 0), True, (50, 4)),
])
def test_reshape_codes(src, code, reverse, expected):
    # the examples of MXNet 1.9.1's reshape documentation
    assert infer_reshape(src, code, reverse) == expected
    x = np.arange(np.prod(src), dtype=np.float32).reshape(src)
    check_forward("reshape", [x], {"shape": code, "reverse": reverse}, x.reshape(expected))


def test_reshape_errors():
    with pytest.raises(ValueError, match="reshape"):
        infer_reshape((2, 3), (4, -1))
    with pytest.raises(ValueError, match="reshape"):
        infer_reshape((2, 3), (-1, -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_data_movement_all_dtypes(dtype, rng):
    x = _x(rng, (2, 3, 4), dtype)
    check_forward("transpose", [x], {}, x.transpose())
    check_forward("transpose", [x], {"axes": (1, 0, 2)}, x.transpose(1, 0, 2))
    check_forward("expand_dims", [x], {"axis": 1}, x[:, None])
    check_forward("flatten", [x], {}, x.reshape(2, 12))
    check_forward("swapaxes", [x], {"dim1": 0, "dim2": 2}, x.swapaxes(0, 2))
    check_forward("concat", [x, x[:, :1]], {"dim": 1}, np.concatenate([x, x[:, :1]], axis=1))
    check_forward("stack", [x, x], {"axis": 1}, np.stack([x, x], axis=1))
    check_forward("split", [x], {"num_outputs": 3, "axis": 1}, np.split(x, 3, axis=1))
    check_forward("split", [x], {"num_outputs": 3, "axis": 1, "squeeze_axis": True},
                  [p[:, 0] for p in np.split(x, 3, axis=1)])
    check_forward("slice", [x], {"begin": (1, None, 3), "end": (None, 0, 0), "step": (1, -1, -2)},
                  x[1:, :0:-1, 3:0:-2])
    check_forward("slice", [x], {"begin": (0, 1), "end": (2, 3)}, x[0:2, 1:3])
    check_forward("slice_axis", [x], {"axis": 2, "begin": 1, "end": 3}, x[:, :, 1:3])
    check_forward("slice_axis", [x], {"axis": -1, "begin": -2, "end": None}, x[:, :, -2:])
    check_forward("tile", [x], {"reps": (2, 1, 2)}, np.tile(x, (2, 1, 2)))
    check_forward("tile", [x[0]], {"reps": (2, 1, 2)}, np.tile(x[0], (2, 1, 2)))
    check_forward("repeat", [x], {"repeats": 2, "axis": 1}, np.repeat(x, 2, axis=1))
    check_forward("repeat", [x], {"repeats": 2}, np.repeat(x, 2))
    check_forward("flip", [x], {"axis": (0, 2)}, x[::-1, :, ::-1])
    check_forward("broadcast_to", [x[:, :1]], {"shape": (2, 3, 4)}, np.broadcast_to(x[:, :1], (2, 3, 4)))
    check_forward("broadcast_to", [x[0, :1]], {"shape": (5, 0, 4)}, np.broadcast_to(x[0, :1], (5, 1, 4)))
    check_forward("squeeze", [x[:, :1]], {}, x[:, 0])
    check_forward("broadcast_like", [x[:1, :1, :1], x], {}, np.broadcast_to(x[:1, :1, :1], x.shape))


def test_shape_grads(rng):
    x = rng.standard_normal((2, 3, 4))
    check_grad("transpose", [x], {"axes": (2, 0, 1)}, rng)
    check_grad("reshape", [x], {"shape": (4, -1)}, rng)
    check_grad("expand_dims", [x], {"axis": 0}, rng)
    check_grad("flatten", [x], {}, rng)
    check_grad("concat", [x, x[:, :2]], {"dim": 1}, rng)
    check_grad("split", [x], {"num_outputs": 2, "axis": 2}, rng)
    check_grad("split", [x[:, :1]], {"num_outputs": 1, "axis": 1, "squeeze_axis": True}, rng)
    check_grad("slice", [x], {"begin": (0, 2, None), "end": (1, 0, None), "step": (1, -1, 2)}, rng)
    check_grad("broadcast_to", [x[:, :1]], {"shape": (2, 3, 4)}, rng)
    check_grad("flip", [x], {"axis": (1,)}, rng)
    check_grad("_slice_assign", [x, x[:1, :2, :3].copy()], {"begin": (0, 0, 0), "end": (1, 2, 3)}, rng)
    check_grad("_slice_assign_scalar", [x], {"scalar": 2.0, "begin": (0, 1), "end": (2, 3)}, rng)


@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_take(mode, dtype, rng):
    x = _x(rng, (4, 3), dtype)
    idx = np.array([[0, 3], [1, 1]], np.int32) if mode == "raise" else np.array([[0, 5], [-1, 2]], np.int32)
    ref = np.take(x, idx, axis=0, mode=mode)
    check_forward("take", [x, idx], {"mode": mode}, ref)
    check_forward("take", [x, np.array([2, 0], np.float32)], {"axis": 1, "mode": mode},
                  np.take(x, [2, 0], axis=1))


def test_take_raise_and_grad(rng):
    with pytest.raises(MXNetError, match="take"):
        mx.nd.take(mx.nd.ones((3, 2)), mx.nd.array([5], dtype="int32"), mode="raise").asnumpy()
    x = rng.standard_normal((4, 3))
    check_grad("take", [x, np.array([[0, 3], [1, 1]], np.int64)], {}, rng, wrt=[0])
    check_grad("take", [x, np.array([2, 0, 2], np.int64)], {"axis": 1}, rng, wrt=[0])


def test_one_hot(rng):
    idx = np.array([[0, 2], [5, 1]], np.int32)
    ref = np.zeros((2, 2, 3), np.float32) + 0.5
    for (i, j), v in np.ndenumerate(idx):
        if 0 <= v < 3:
            ref[i, j, v] = 3.0
    check_forward("one_hot", [idx], {"depth": 3, "on_value": 3.0, "off_value": 0.5}, ref)
    check_forward("one_hot", [idx.astype(np.float32)], {"depth": 3, "dtype": "int32"},
                  np.eye(3, dtype=np.int32)[np.clip(idx, 0, 2)] * (idx < 3)[..., None])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16", "int64"])
def test_init_ops(dtype):
    assert mx.nd.zeros((2, 3), dtype=dtype).asnumpy().tolist() == np.zeros((2, 3), dtype).tolist()
    assert mx.nd.ones((2,), dtype=dtype).dtype == np.dtype(dtype).type
    assert mx.nd.full((2, 2), 7, dtype=dtype).asnumpy().tolist() == [[7, 7], [7, 7]]
    np.testing.assert_array_equal(mx.nd.arange(2, 11, 3, dtype=dtype).asnumpy(),
                                  np.arange(2, 11, 3, dtype=dtype))
    np.testing.assert_array_equal(mx.nd.eye(3, 4, 1, dtype=dtype).asnumpy(), np.eye(3, 4, 1, dtype=dtype))


def test_arange_linspace():
    np.testing.assert_allclose(mx.nd.arange(0, 1, 0.1).asnumpy(), np.arange(0, 1, 0.1, dtype=np.float32),
                               rtol=1e-6)
    assert mx.nd.arange(3, repeat=2).asnumpy().tolist() == [0, 0, 1, 1, 2, 2]
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5), rtol=1e-6)
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5, endpoint=False).asnumpy(),
                               np.linspace(0, 1, 5, endpoint=False), rtol=1e-6)
    assert mx.nd.arange(5).dtype == np.float32


def test_every_registered_op_is_tested():
    """Each OpDef appears in one of the family tests (by any of its names)."""
    import pathlib
    from mxc.ops import registry
    text = "".join(p.read_text() for p in pathlib.Path(__file__).parent.parent.rglob("test_*.py"))
    missing = [op.name for op in registry.all_ops()
               if not any(f'"{n}"' in text or f"'{n}'" in text or f"nd.{n}(" in text
                          for n in (op.name,) + op.aliases
                          + tuple(n.replace("broadcast_", "") for n in (op.name,)))
               and not (op.name.startswith("_contrib_")
                        and f"nd.contrib.{op.name[len('_contrib_'):]}(" in text)]
    assert not missing, f"operators without a test: {missing}"


def test_internal_init_and_scatter_ops():
    assert mx.nd._zeros(shape=(2,), dtype="int32").asnumpy().tolist() == [0, 0]
    assert mx.nd._ones(shape=(2,)).asnumpy().tolist() == [1, 1]
    assert mx.nd._full(shape=(1, 2), value=3).asnumpy().tolist() == [[3, 3]]
    assert mx.nd._arange(start=1, stop=4).asnumpy().tolist() == [1, 2, 3]
    assert mx.nd._linspace(start=0, stop=1, num=3).asnumpy().tolist() == [0, 0.5, 1]
    assert mx.nd._eye(N=2).asnumpy().tolist() == [[1, 0], [0, 1]]
    d = np.zeros((4, 2), np.float32)
    v = np.array([[1, 2], [3, 4]], np.float32)
    idx = np.array([3, 1], np.int64)
    exp = d.copy()
    exp[idx] = v
    check_forward("_scatter_set_rows", [d, idx, v], {}, exp)
    rng = np.random.default_rng(0)
    check_grad("_scatter_set_rows", [rng.standard_normal((4, 2)), idx, rng.standard_normal((2, 2))], {},
               rng, wrt=[0, 2])
    with pytest.raises(MXNetError, match="_scatter_set_rows"):
        mx.nd._scatter_set_rows(mx.nd.array(d), mx.nd.array([4], dtype="int64"),
                                mx.nd.array(v[:1])).asnumpy()


def test_reshape_legacy_target_shape():
    """MXNet's deprecated target_shape: 0 marks the one inferred dimension; keep_highest keeps
    the first input dimension; the symbol survives a JSON round trip."""
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert mx.nd.Reshape(x, target_shape=(4, 0)).shape == (4, 6)
    assert mx.nd.Reshape(x, target_shape=(0, 0), keep_highest=True).shape == (2, 12)
    np.testing.assert_array_equal(mx.nd.Reshape(x, target_shape=(0, 2)).asnumpy(),
                                  np.arange(24).reshape(12, 2))
    s = mx.sym.load_json(mx.sym.Reshape(mx.sym.var("data"), target_shape=(2, 0)).tojson())
    assert s.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 75)]
    with pytest.raises(mx.base.MXNetError):
        mx.nd.Reshape(x, target_shape=(5, 0))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_arange_integer_dtypes_truncate_start_and_step(dtype):
    for cfg in [(1.3, 456.6, 1.3), (50, -50, -2), (5, 100, 4)]:
        want = np.arange(*cfg, dtype=dtype)
        got = mx.nd.arange(*cfg, dtype=dtype).asnumpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape,reps", [
    ((7, 9, 10, 7, 8), (2, 3, 2, 2, 2)),        # (1, d, 1, d, ...) would need 10 dimensions
    ((2, 2, 2, 2, 2), (2, 2, 2, 2, 2)),         # 10 alternating repeat/data axes: axis by axis
    ((2, 1, 3), (1, 4, 1)), ((3,), (2, 2, 2)), ((), (3,)), ((2, 3), ()),
])
def test_tile_high_rank_matches_numpy(shape, reps):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    check_forward("tile", [x], {"reps": reps}, np.tile(x, reps))


def test_tile_high_rank_gradient():
    # each input element receives the sum of the head over its copies
    rng = np.random.default_rng(8)
    shape, reps = (2, 3, 2, 2, 2), (2, 1, 2, 3, 2)
    x = mx.nd.array(rng.standard_normal(shape))
    head = rng.standard_normal(tuple(r * d for r, d in zip(reps, shape)))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.tile(x, reps=reps)
    y.backward(mx.nd.array(head))
    split = head.reshape(tuple(v for r, d in zip(reps, shape) for v in (r, d)))
    expected = split.sum(axis=tuple(range(0, 2 * len(shape), 2)))
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_tile_reps_checks_and_empty_results():
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    with pytest.raises(MXNetError, match="reps"):
        mx.nd.tile(x, reps=(1, -2))
    with pytest.raises(MXNetError, match="np_shape"):
        mx.nd.tile(x, reps=(1, 0))              # a 0 means "unknown" without numpy shapes
    with mx.np_shape():
        a = np.zeros((2, 3, 0, 4), dtype=np.int32)
        got = mx.nd.tile(mx.nd.array(a, dtype=a.dtype), reps=(2, 4, 6))
        assert got.shape == np.tile(a, (2, 4, 6)).shape and got.dtype == np.int32
        assert mx.nd.tile(x, reps=(0, 2)).shape == np.tile(x.asnumpy(), (0, 2)).shape
