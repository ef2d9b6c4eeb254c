"""Launch specs (mxc/ops/cuda/<family>.py) without a GPU: every kernel a spec names is one the
family instantiates (so the offline compile check covers it), and the host-side index maths
(broadcast strides, dim collapsing, reduction maps) address the same elements numpy does."""
import struct

import numpy as np
import pytest

from mxc.ops.cuda import launch_spec
from mxc.ops.cuda._launch import bcast_strides, collapse, instantiations
from mxc.ops.cuda.reduce import reduce_map

from ._emu import cu_parameters


class Arr:
    def __init__(self, shape, dtype="float32"):
        self.shape, self.dtype, self.ndim = tuple(shape), np.dtype(dtype).type, len(shape)


CASES = [
    ("exp", {}, [Arr((4, 5))], [Arr((4, 5))], "elemwise", "unary:exp", None, None),
    ("sqrt", {}, [Arr((7,), "int8")], [Arr((7,), "int8")], "elemwise", "unary:sqrt", None, None),
    ("_copy", {}, [Arr((3,), "bool")], [Arr((3,), "bool")], "elemwise", "unary:copy", None, None),
    ("elemwise_add", {}, [Arr((4, 5))] * 2, [Arr((4, 5))], "elemwise", "binary:add", None, None),
    ("broadcast_mod", {}, [Arr((4, 1), "int64"), Arr((5,), "int64")], [Arr((4, 5), "int64")],
     "elemwise", "binary:mod", None, None),
    ("_rminus_scalar", {}, [Arr((4,), "float16")], [Arr((4,), "float16")], "elemwise",
     "rscalar:sub", (), (2.0,)),
    ("cast", {}, [Arr((4,))], [Arr((4,), "uint8")], "elemwise", "cast", None, None),
    ("clip", {}, [Arr((4,), "float64")], [Arr((4,), "float64")], "elemwise", "clip", (), (0.0, 1.0)),
    ("where", {}, [Arr((4, 5), "int32"), Arr((4, 5)), Arr((4, 5))], [Arr((4, 5))], "elemwise",
     "where", None, None),
    ("sum", {}, [Arr((64, 500))], [Arr((64, 1))], "reduce", "reduce:sum", (0, 1), ()),
    ("max", {}, [Arr((500, 3), "int32")], [Arr((1, 3), "int32")], "reduce", "reduce:max", (1, 0), ()),
    ("argmax", {}, [Arr((8, 9))], [Arr((8, 1))], "reduce", "reduce:argmax", (0, 1), ()),
    ("norm", {"ord": 2}, [Arr((8, 9))], [Arr((1, 1))], "reduce", "reduce:norm", (1, 1), (2.0,)),
    ("log_softmax", {}, [Arr((4, 5))], [Arr((4, 5))], "softmax", "softmax", (4, 5, 1, 1, 0, 0), (1.0,)),
    ("softmax", {}, [Arr((4, 5, 6))], [Arr((4, 5, 6))], "softmax", "softmax", (4, 5, 6, 0, 0, 0), (2.0,)),
    ("_backward_softmax", {}, [Arr((4, 5))] * 2, [Arr((4, 5))], "softmax", "softmax_bwd",
     (4, 5, 1, 0, 0, 0), (1.0,)),
    ("Activation", {}, [Arr((4,))], [Arr((4,))], "activation", "fwd:softrelu", None, None),
    ("_backward_Activation", {}, [Arr((4,))] * 2, [Arr((4,))], "activation", "bwd:softsign", None, None),
    ("adam_update", {}, [Arr((9,))] * 4, [Arr((9,))] * 3, "optimizer_ops", "opt:adam", (),
     (0.1, 0.9, 0.99, 1e-8, 0.0, 1.0, -1.0)),
    ("sgd_mom_update", {}, [Arr((9,), "float16")] * 3, [Arr((9,), "float16")] * 2,
     "optimizer_ops", "opt:msgd", (1, -1), (0.1, 0.0, 0.9, 1.0, -1.0)),
    ("_full", {}, [], [Arr((3, 3), "bool")], "init", "fill", (), (1.0,)),
    ("_arange", {}, [], [Arr((10,), "int64")], "init", "arange", (), (0.0, 2.0)),
    ("_eye", {}, [], [Arr((3, 4))], "init", "eye", (1,), ()),
    ("Dropout", {}, [Arr((4, 5))], [Arr((4, 5))] * 2, "random", "dropout", (7, 100), (0.5,)),
    ("_random_normal", {}, [], [Arr((9,), "float16")], "random", "normal", (7, 100), (0.0, 1.0)),
    ("_random_randint", {}, [], [Arr((9,), "int64")], "random", "randint", (7, 100, -3, 9), ()),
    ("take", {}, [Arr((4, 5)), Arr((3,), "int64")], [Arr((3, 5))], "shape", "take", (0, 1), ()),
    ("one_hot", {}, [Arr((3,), "int32")], [Arr((3, 5))], "shape", "one_hot", (5,), (1.0, 0.0)),
    ("transpose", {"axes": (1, 0)}, [Arr((4, 5))], [Arr((5, 4))], "shape", "transpose", (1, 0),
     None),
    ("reverse", {"axis": 1}, [Arr((4, 5), "int8")], [Arr((4, 5), "int8")], "shape", "flip", (0, 1),
     None),
    ("broadcast_to", {}, [Arr((1, 5))], [Arr((4, 5))], "shape", "broadcast_to", None, None),
    ("slice", {}, [Arr((6, 5))], [Arr((3, 5))], "shape", "slice", (1, 0, 2, 1), ()),
]


def _optimizer_cases():
    """One launch of every optimizer kernel (its slots with distinct values)."""
    from mxc.ops import registry
    out = []
    for k in registry.kernels():
        if k.family != "optimizer_ops" or not k.declared():
            continue
        ints = {"has_mom": 1, "preloaded": -1, "multi": 0, "bias_correction": 1}
        w = "float16" if k.name.startswith("opt:mp_") else "float32"
        ins = [Arr((9,), w), Arr((9,), w)] + [Arr((9,))] * 4
        out.append((k.name, {}, ins, [Arr((9,), w)] + [Arr((9,))] * 3, "optimizer_ops", k.name,
                    tuple(ints[n] for n in k.ints), tuple(0.5 + j for j in range(len(k.floats)))))
    return out


CASES += _optimizer_cases() + [
    ("_random_normal", {}, [], [Arr((9,), "float64")], "random", "normal", (7, 100), (0.0, 1.0)),
    ("_random_randint", {}, [], [Arr((9,), "int32")], "random", "randint", (7, 100, -3, 9), ()),
    ("_sample_multinomial", {}, [Arr((4, 5))], [Arr((4, 3), "int32"), Arr((4, 3))], "random",
     "multinomial", (7, 100), ()),
    ("_backward_sample_multinomial", {}, [Arr((4, 3)), Arr((4, 5)), Arr((4, 3), "int32")],
     [Arr((4, 5))], "random", "multinomial_backward", (), ()),
    ("where", {}, [Arr((4, 1), "int32"), Arr((4, 5)), Arr((4, 5))], [Arr((4, 5))], "elemwise",
     "where", (), ()),
    ("sum", {}, [Arr((1 << 20,))], [Arr((1,))], "reduce", "reduce:sum", (1,), ()),
    ("topk", {}, [Arr((3, 100))], [Arr((3, 5)), Arr((3, 5), "int32")], "ordering", "topk",
     (3, 100, 1, 5, 3, 0), ()),
]

# the launches added with the indexing, LeakyReLU, sampling, optimizer and slice-assignment
# specs (their values are checked by test_emulated_gpu_ops.py)
CASES += [
    ("topk", {}, [Arr((3, 100), "float16")], [Arr((3, 100), "float16")], "ordering", "topk",
     (3, 100, 1, 5, 2, 1), ()),
    ("pick", {}, [Arr((4, 5)), Arr((4, 1), "int64")], [Arr((4, 1))], "gather", "take_along",
     (4, 5, 1, 1, 0), ()),
    ("_backward_pick", {}, [Arr((4, 1), "float16"), Arr((4, 1)), Arr((4, 5), "float16")],
     [Arr((4, 5), "float16")], "gather", "put_along", (4, 5, 1, 1, 1), ()),
    ("gather_nd", {}, [Arr((4, 5, 6), "int8"), Arr((2, 7), "int32")], [Arr((7, 6), "int8")],
     "gather", "gather_nd", (2,), ()),
    ("scatter_nd", {}, [Arr((7, 6)), Arr((2, 7), "int64")], [Arr((4, 5, 6))], "gather",
     "scatter_nd", (2, 0, 0, 0), ()),
    ("_backward_gather_nd", {}, [Arr((7, 6), "float16"), Arr((2, 7))], [Arr((4, 5, 6), "float16")],
     "gather", "scatter_nd", (2, 1, 0, 0), ()),
    ("_backward_Embedding", {}, [Arr((12, 8)), Arr((1, 12))], [Arr((50, 8))], "gather",
     "scatter_nd", (1, 1, 0, 1), ()),
    ("Embedding", {}, [Arr((50, 8)), Arr((3, 4))], [Arr((3, 4, 8))], "shape", "take", (0, 0), ()),
    ("_slice_assign", {}, [Arr((6, 5)), Arr((3, 5))], [Arr((6, 5))], "shape", "slice_assign",
     (0, 0, 2, 1), ()),
    ("_slice_assign_scalar", {}, [Arr((6, 5), "int8")], [Arr((6, 5), "int8")], "shape",
     "slice_assign_scalar", (0, 0, 2, 1, 3, 5), (7.0,)),
    ("add_n", {}, [Arr((9,))] * 10, [Arr((9,))], "shape_extra", "add_n", (), ()),
    ("LeakyReLU", {}, [Arr((4, 3, 2)), Arr((3,))], [Arr((4, 3, 2))], "activation",
     "fwd:prelu", (4, 3, 2, 1, 3), ()),
    ("_backward_LeakyReLU", {}, [Arr((4, 3, 2), "float16")] * 2 + [Arr((3,), "float16")],
     [Arr((4, 3, 2), "float16"), Arr((3,), "float16")], "activation", "bwd:prelu",
     (4, 3, 2, 1, 3), ()),
    ("LeakyReLU", {}, [Arr((4,), "float64")], [Arr((4,), "float64")], "activation", "fwd:selu",
     (), ()),
    ("_sample_poisson", {}, [Arr((3,))], [Arr((3, 4), "float16")], "random", "poisson",
     (7, 100), ()),
    ("_random_gamma", {}, [], [Arr((9,))], "random", "gamma", (7, 100), (2.0, 1.0)),
    ("softmax", {}, [Arr((4, 5), "float16"), Arr((4,), "int64")], [Arr((4, 5))], "softmax",
     "softmax", (4, 5, 1, 0, 0, 1), (1.0,)),
    ("_backward_softmax", {}, [Arr((4, 5))] * 2, [Arr((4, 5), "float16")], "softmax",
     "softmax_bwd", (4, 5, 1, 0, 0, 0), (1.0,)),
    ("mp_sgd_mom_update", {}, [Arr((9,), "float16"), Arr((9,), "float16"), Arr((9,)), Arr((9,))],
     [Arr((9,), "float16"), Arr((9,)), Arr((9,))], "optimizer_ops", "opt:mp_msgd", (1, -1),
     (0.1, 0.0, 0.9, 1.0, -1.0)),
    ("_mp_adamw_update", {}, [Arr((9,), "float16")] * 2 + [Arr((9,))] * 4,
     [Arr((9,), "float16")] + [Arr((9,))] * 3, "optimizer_ops", "opt:mp_adamw", (1,),
     (0.1, 0.9, 0.99, 1e-8, 0.0, 1.0, -1.0)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] + ":" + c[5] for c in CASES])
def test_spec_names_an_instantiated_kernel(case):
    op, attrs, ins, outs, fam, kern, ia, fa = case
    spec = launch_spec(op, attrs, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
    assert spec is not None
    for launch in spec.get("launches", [spec]):
        _check_launch(launch, ins, outs, spec.get("workspace", 0))


# the parameter types each kind of launch argument may fill (common.cuh's structs by value;
# a template type T takes the raw bits of slice_assign_scalar's value)
_KIND_TYPES = {"i32": {"int"}, "i64": {"i64", "long long"}, "u64": {"u64", "T"},
               "u8": {"T"}, "u16": {"T"}, "u32": {"T"}, "f32": {"float"}, "f64": {"double"},
               "bytes": {"bcast2", "bcast3", "index_map", "reduce_map"}}


def _check_launch(spec, ins, outs, workspace):
    assert spec["name"] in instantiations(spec["family"])
    # every argument fills the .cu kernel's parameter at its place, pointer for pointer
    params = cu_parameters(spec["family"], spec["name"].split("<")[0])
    assert len(params) == len(spec["args"]), (spec["name"], params, spec["args"])
    for (kind, _), (ptype, pname) in zip(spec["args"], params):
        if kind in ("in", "out", "ptr", "ws"):
            assert ptype.endswith("*"), (spec["name"], pname, kind)
        else:
            assert ptype in _KIND_TYPES[kind], (spec["name"], pname, ptype, kind)
    assert all(g >= 1 for g in spec["grid"]) and spec["block"][0] % 32 == 0
    for kind, v in spec["args"]:
        assert kind in ("in", "out", "ptr", "bytes", "i32", "i64", "u8", "u16", "u32", "u64",
                        "f32", "f64", "ws")
        if kind == "in":
            assert 0 <= v < len(ins)
        if kind == "out":
            assert 0 <= v < len(outs)
        if kind == "ws":
            assert 0 <= v < workspace and v % 8 == 0


def test_unsupported_gives_none():
    # no GPU kernel: the caller raises naming the operator and "gpu"
    assert launch_spec("Convolution", {}, [], [], family="convolution", kernel="conv") is None
    assert launch_spec("smooth_l1", {}, [Arr((4, 3))], [Arr((4, 3))], family="loss_ops",
                       kernel="smooth_l1") is None
    # integer data for a float-only kernel
    assert launch_spec("softmax_cross_entropy", {}, [Arr((4, 3), "int32"), Arr((4,), "int32")],
                       [Arr((1,), "int32")], family="softmax", kernel="softmax_ce") is None
    # integer GEMMs, and index maps past 8 dims
    assert launch_spec("dot", ((), ()), [Arr((2, 2), "int32")] * 2, [Arr((2, 2), "int32")],
                         family="dot", kernel="gemm", iattr=(1, 1, 2, 2, 2, 0, 0, 0) + (4, 0, 2) * 4,
                         fattr=(1.0, 0.0)) is None
    assert launch_spec("transpose", {}, [Arr((1,) * 9)], [Arr((1,) * 9)], family="shape",
                       kernel="transpose", iattr=tuple(range(9))[::-1]) is None


def test_a_builder_error_is_an_error():
    # a bug in a builder (here: no output array) must surface, not read as "no GPU kernel"
    with pytest.raises(IndexError):
        launch_spec("exp", {}, [Arr((4,))], [], family="elemwise", kernel="unary:exp")
    with pytest.raises(TypeError):
        launch_spec("clip", {}, [Arr((4,))], [Arr((4,))], family="elemwise", kernel="clip",
                    iattr=(), fattr=(None, 1.0))


def test_name_lists_come_from_the_registry():
    from mxc.ops import registry
    unary = [n for n in registry.kernel_names("elemwise", "unary") if n != "copy"]
    names = instantiations("elemwise")
    assert "exp" in unary and "erf" in unary
    for op in unary:
        assert "mxc_unary<mxc::op_%s, float>" % op in names
    assert "mxc_unary<mxc::op_copy, float>" not in names
    for op in registry.kernel_names("elemwise", "binary"):
        assert "mxc_bcast_binary<mxc::op_%s, double>" % op in instantiations("broadcast")
    assert "mxc_reduce_cols<mxc::r_norm2, float, float>" in instantiations("reduce")
    assert "mxc_sgd_mom_update<__half>" in instantiations("optimizer_ops")


def test_take_raise_carries_a_device_check():
    spec = launch_spec("take", {}, [Arr((4,)), Arr((2,), "int32")], [Arr((2,))],
                         family="shape", kernel="take", iattr=(0, 2), fattr=())
    (launch,) = spec["launches"]
    assert launch["args"][-1] == ("i32", 0)            # taken with clip once checked
    assert spec["check"](np, [np.zeros(4), np.array([0, 3], np.int32)]) is None
    assert "index 4 is out of bounds" in spec["check"](np, [np.zeros(4), np.array([4, 0])])


def _gather_offsets(shape, strides, out_shape):
    """flat input offsets the broadcast kernel reads, by unravelling as the kernel does"""
    offs = []
    for i in range(int(np.prod(out_shape))):
        r, off = i, 0
        for d in range(len(shape) - 1, -1, -1):
            off += (r % shape[d]) * strides[d]
            r //= shape[d]
        offs.append(off)
    return np.array(offs)


@pytest.mark.parametrize("ashape,bshape", [((4, 1, 3), (1, 5, 3)), ((2, 3, 4), (4,)),
                                           ((6, 1), (1, 7)), ((3, 5), (3, 5)), ((1,), (2, 2))])
def test_broadcast_maps_match_numpy(ashape, bshape):
    out = np.broadcast_shapes(ashape, bshape)
    shp, (sa, sb) = collapse(out, bcast_strides(ashape, out), bcast_strides(bshape, out))
    a = np.arange(int(np.prod(ashape))).reshape(ashape)
    b = np.arange(int(np.prod(bshape))).reshape(bshape)
    np.testing.assert_array_equal(a.ravel()[_gather_offsets(shp, sa, out)],
                                  np.broadcast_to(a, out).ravel())
    np.testing.assert_array_equal(b.ravel()[_gather_offsets(shp, sb, out)],
                                  np.broadcast_to(b, out).ravel())


@pytest.mark.parametrize("shape,mask", [((4, 5, 6), (0, 1, 0)), ((4, 5, 6), (1, 0, 1)),
                                        ((3, 1, 7), (1, 1, 1)), ((2, 3), (0, 0))])
def test_reduce_map_matches_numpy(shape, mask):
    nout, count, packed, _ = reduce_map(shape, mask)
    v = struct.unpack("<34q", packed[1])
    nk, ks, kst = v[0], v[1:9], v[9:17]
    nr, rs, rst = v[17], v[18:26], v[26:34]
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    got = []
    for k in range(nout):
        base = _gather_offsets(ks[:nk], kst[:nk], ks[:nk])[k] if nk else 0
        reds = _gather_offsets(rs[:nr], rst[:nr], rs[:nr]) if nr else np.array([0])
        got.append(x.ravel()[base + reds].sum())
    axes = tuple(i for i, m in enumerate(mask) if m)
    np.testing.assert_array_equal(got, x.sum(axis=axes).ravel() if axes else x.ravel())
    assert count == (int(np.prod([shape[a] for a in axes])) if axes else 1)


def _index_map_offsets(packed):
    v = struct.unpack("<34q", packed)
    nd, begin = v[0], v[1]
    shape, stride, div, mod = v[2:10], v[10:18], v[18:26], v[26:34]
    n = int(np.prod(shape[:nd]))
    offs = []
    for i in range(n):
        r, off = i, begin
        for d in range(nd - 1, -1, -1):
            o = r % shape[d]
            r //= shape[d]
            off += ((o // div[d]) % mod[d]) * stride[d]
        offs.append(off)
    return np.array(offs, dtype=np.int64)


def test_index_maps_match_numpy():
    x = np.arange(6 * 5).reshape(6, 5)
    cases = [("slice", {}, (6, 5), (3, 5), (1, 0, 2, 1), x[1::2]),
             ("transpose", {"axes": (1, 0)}, (6, 5), (5, 6), (1, 0), x.T),
             ("flip", {"axis": 1}, (6, 5), (6, 5), (0, 1), x[:, ::-1]),
             ("broadcast_to", {}, (1, 5), (4, 5), None, np.broadcast_to(x[:1], (4, 5)))]
    for kern, attrs, xs, ys, ia, want in cases:
        src = x if xs == x.shape else x[:1]
        spec = launch_spec(kern, attrs, [Arr(xs, "int64")], [Arr(ys, "int64")], family="shape",
                             kernel=kern, iattr=ia, fattr=())
        np.testing.assert_array_equal(src.ravel()[_index_map_offsets(spec["args"][3][1])],
                                      want.ravel())


def test_concat_split_launches():
    a, b = np.arange(12).reshape(3, 4), 100 + np.arange(6).reshape(3, 2)
    out = np.concatenate([a, b], axis=1)
    spec = launch_spec("concat", {}, [Arr(a.shape, "int64"), Arr(b.shape, "int64")],
                         [Arr(out.shape, "int64")], family="shape", kernel="concat", iattr=(1,))
    y = np.zeros(out.size, np.int64)
    for launch, part in zip(spec["launches"], (a, b)):
        assert launch["name"] == "mxc_scatter_map<unsigned long long>"
        y[_index_map_offsets(launch["args"][3][1])] = part.ravel()
    np.testing.assert_array_equal(y, out.ravel())
    spec = launch_spec("split", {}, [Arr(out.shape, "int64")],
                         [Arr(a.shape, "int64"), Arr(b.shape, "int64")], family="shape",
                         kernel="split", iattr=(1,))
    for launch, part in zip(spec["launches"], (a, b)):
        np.testing.assert_array_equal(out.ravel()[_index_map_offsets(launch["args"][3][1])],
                                      part.ravel())
