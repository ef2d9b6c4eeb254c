"""The local KVStore: push/pull/aggregation/updater/row_sparse_pull/str+int keys/errors against
numpy, and MXNet 1.9.1's results for 2-bit compression and an in-store SGD optimizer
(tests/data/metric_golden.npz, made by tests/data/make_metric_golden.py)."""
import os
import pickle
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

SHAPE = (4, 3)
GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "metric_golden.npz")


def nd(a, **kw):
    return mx.nd.array(np.asarray(a, np.float32), **kw)


def fresh(kind="local", keys=(3, 5, 7), stype="default"):
    kv = mx.kv.create(kind)
    kv.init(list(keys), [mx.nd.zeros(SHAPE, stype=stype) for _ in keys])
    return kv


def pulled(kv, key, shape=SHAPE):
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()


# ---- init / push / pull ---------------------------------------------------------------------
@pytest.mark.parametrize("key", [3, "w"])
def test_init_push_pull_single(rng, key):
    kv = mx.kv.create()
    a = rng.standard_normal(SHAPE).astype(np.float32)
    kv.init(key, nd(a))
    np.testing.assert_array_equal(pulled(kv, key), a)
    b = rng.standard_normal(SHAPE).astype(np.float32)
    kv.push(key, nd(b))
    # no updater: the stored value is replaced by the pushed one (read without waitall)
    np.testing.assert_array_equal(pulled(kv, key), b)


def test_init_keeps_a_copy_and_push_does_not_alias():
    kv = mx.kv.create()
    a = mx.nd.ones(SHAPE)
    kv.init(0, a)
    a[:] = 5
    np.testing.assert_array_equal(pulled(kv, 0), 1)
    b = mx.nd.ones(SHAPE) * 2
    kv.push(0, b)
    b[:] = 7
    np.testing.assert_array_equal(pulled(kv, 0), 2)


@pytest.mark.parametrize("keys", [[5, 7, 11], ["b", "c", "d"]])
def test_list_of_keys(rng, keys):
    kv = mx.kv.create()
    vals = [rng.standard_normal(SHAPE).astype(np.float32) for _ in keys]
    kv.init(keys, [nd(v) for v in vals])
    outs = [mx.nd.zeros(SHAPE) for _ in keys]
    kv.pull(keys, out=outs)
    for o, v in zip(outs, vals):
        np.testing.assert_array_equal(o.asnumpy(), v)
    kv.push(keys, [nd(v * 2) for v in vals])
    kv.pull(keys, out=outs)
    for o, v in zip(outs, vals):
        np.testing.assert_array_equal(o.asnumpy(), v * 2)


@pytest.mark.parametrize("key,keys", [(3, [5, 7]), ("a", ["b", "c"])])
def test_aggregation_over_devices(rng, key, keys):
    kv = mx.kv.create()
    kv.init([key] + keys, [mx.nd.zeros(SHAPE)] * 3)
    devs = [mx.cpu(i) for i in range(4)]
    vals = [rng.standard_normal(SHAPE).astype(np.float32) for _ in devs]
    kv.push(key, [nd(v, ctx=d) for v, d in zip(vals, devs)])
    outs = [mx.nd.empty(SHAPE, d) for d in devs]
    kv.pull(key, out=outs)                   # one key, a list of outputs: broadcast
    for o, d in zip(outs, devs):
        assert o.context == d
        np.testing.assert_allclose(o.asnumpy(), np.sum(vals, 0), rtol=1e-6, atol=1e-6)
    # a list of keys, each with a list of values and a list of outputs
    kv.push(keys, [[nd(v * (k + 1), ctx=d) for v, d in zip(vals, devs)]
                   for k in range(len(keys))])
    outs = [[mx.nd.empty(SHAPE, d) for d in devs] for _ in keys]
    kv.pull(keys, out=outs)
    for k, row in enumerate(outs):
        for o in row:
            np.testing.assert_allclose(o.asnumpy(), np.sum(vals, 0) * (k + 1), rtol=1e-5,
                                       atol=1e-5)
    # a repeated key in one push is summed too
    kv.push([key, key], [nd(vals[0]), nd(vals[1])])
    np.testing.assert_allclose(pulled(kv, key), vals[0] + vals[1], rtol=1e-6)


def test_pushpull_and_broadcast(rng):
    kv = mx.kv.create()
    kv.init(1, mx.nd.zeros(SHAPE))
    vals = [nd(rng.standard_normal(SHAPE)) for _ in range(3)]
    expected = sum(v.asnumpy() for v in vals)
    out = mx.nd.zeros(SHAPE)
    kv.pushpull(1, vals, out=out)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6, atol=1e-6)
    kv.pushpull(1, vals)                     # out=None: written back into the values
    for v in vals:
        np.testing.assert_allclose(v.asnumpy(), expected, rtol=1e-6, atol=1e-6)
    outs = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    src = rng.standard_normal(SHAPE).astype(np.float32)
    kv.broadcast(9, nd(src), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), src)
    with pytest.raises(MXNetError, match="duplicate init of key 9"):
        kv.broadcast(9, nd(src), out=outs)


def test_pull_casts_to_the_output_dtype():
    kv = mx.kv.create()
    kv.init(0, nd(np.full(SHAPE, 1.5)))
    out = mx.nd.zeros(SHAPE, dtype="float16")
    kv.pull(0, out=out)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), 1.5)


# ---- updater -----------------------------------------------------------------------------
@pytest.mark.parametrize("key,keys", [(3, [5, 7]), ("a", ["b", "c"])])
def test_updater_accumulates(key, keys):
    seen = []

    def updater(k, recv, local):
        seen.append(k)
        assert isinstance(k, type(key))
        local += recv * 2

    kv = mx.kv.create()
    kv.init([key] + keys, [mx.nd.ones(SHAPE)] * 3)
    kv._set_updater(updater)
    devs = [mx.cpu(i) for i in range(3)]
    kv.push(key, [mx.nd.ones(SHAPE, d) for d in devs])
    np.testing.assert_array_equal(pulled(kv, key), 1 + 2 * 3)
    for _ in range(4):
        kv.push(keys, [[mx.nd.ones(SHAPE, d) for d in devs]] * len(keys))
    for k in keys:
        np.testing.assert_array_equal(pulled(kv, k), 1 + 4 * 2 * 3)
    # one call per key and push (values summed first), keys in init order
    assert seen == [key] + keys * 4


def test_updater_with_row_sparse_pushes():
    kv = mx.kv.create()
    kv.init("a", mx.nd.zeros(SHAPE))

    def updater(k, recv, local):
        local += recv
    kv._set_updater(updater)
    rows = np.zeros(SHAPE, np.float32)
    rows[1] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kv.push("a", [nd(rows).tostype("row_sparse"), nd(rows * 2).tostype("row_sparse")])
    np.testing.assert_array_equal(pulled(kv, "a"), rows * 3)


def _optimizer_module():
    """mx.optimizer (written in parallel with the store): skip until it provides SGD."""
    opt = pytest.importorskip("mxc.optimizer")
    if not (hasattr(opt, "SGD") and hasattr(opt, "get_updater")):
        pytest.skip("mxc.optimizer has no SGD/get_updater yet")
    return opt


def test_set_optimizer_sgd_matches_mxnet_and_numpy():
    opt = _optimizer_module()
    g = np.load(GOLDEN)
    kv = mx.kv.create("local")
    w0 = g["kv/sgd/w0"]
    kv.init(3, nd(w0))
    kv.set_optimizer(opt.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5))
    w, mom = w0.astype(np.float64), np.zeros_like(w0, np.float64)
    for s in range(3):
        grads = g["kv/sgd/grad"][s]
        kv.push(3, [nd(grads[d], ctx=mx.cpu(d)) for d in range(2)])
        got = pulled(kv, 3, w0.shape)
        np.testing.assert_allclose(got, g["kv/sgd/pulled"][s], rtol=1e-5, atol=1e-6)
        mom = 0.9 * mom - 0.1 * (0.5 * grads.sum(0) + 0.01 * w)
        w = w + mom
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_optimizer_states_round_trip(tmp_path):
    opt = _optimizer_module()
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones(SHAPE))
    kv.set_optimizer(opt.SGD(learning_rate=0.1, momentum=0.9))
    kv.push(0, mx.nd.ones(SHAPE))
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname)
    kv.push(0, mx.nd.ones(SHAPE))
    after_two = pulled(kv, 0)
    # a second store at the one-push point, states loaded: the same second step
    kv2 = mx.kv.create()
    kv2.init(0, nd(np.full(SHAPE, 1 - 0.1)))
    kv2.set_optimizer(opt.SGD(learning_rate=0.1, momentum=0.9))
    kv2.load_optimizer_states(fname)
    kv2.push(0, mx.nd.ones(SHAPE))
    np.testing.assert_allclose(pulled(kv2, 0), after_two, rtol=1e-6)
    np.testing.assert_allclose(after_two, 1 - 0.1 - (0.9 * 0.1 + 0.1), rtol=1e-6)


def test_optimizer_states_need_an_optimizer(tmp_path):
    kv = mx.kv.create()
    with pytest.raises(MXNetError, match="set_optimizer"):
        kv.save_optimizer_states(str(tmp_path / "x"))
    with pytest.raises(MXNetError, match="set_optimizer"):
        kv.load_optimizer_states(str(tmp_path / "x"))


def test_states_go_through_the_updater(tmp_path):
    class Recorder:
        def __init__(self):
            self.states = None

        def __call__(self, key, grad, weight):
            weight -= grad

        def get_states(self, dump_optimizer=False):
            return pickle.dumps({"dump": dump_optimizer})

        def set_states(self, states):
            self.states = pickle.loads(states)

    kv = mx.kv.create()
    rec = Recorder()
    kv._set_updater(rec)
    kv.init(0, mx.nd.ones(SHAPE))
    kv.push(0, mx.nd.ones(SHAPE))
    np.testing.assert_array_equal(pulled(kv, 0), 0)
    kv.save_optimizer_states(str(tmp_path / "s"), dump_optimizer=True)
    kv.load_optimizer_states(str(tmp_path / "s"))
    assert rec.states == {"dump": True}


# ---- sparse ------------------------------------------------------------------------------
def test_row_sparse_pull(rng):
    kv = mx.kv.create()
    full = rng.standard_normal((6, 3)).astype(np.float32)
    kv.init("e", nd(full).tostype("row_sparse"))
    # unsorted, duplicated, float and 2-D row ids are fine
    ids = [nd([[4, 1], [1, 4]]), nd([0, 5, 0]), nd([2])]
    outs = [mx.nd.sparse.zeros("row_sparse", (6, 3)) for _ in ids]
    kv.row_sparse_pull("e", out=outs, row_ids=ids)
    for o, r in zip(outs, ids):
        keep = np.unique(r.asnumpy().astype(int))
        expected = np.zeros_like(full)
        expected[keep] = full[keep]
        assert o.stype == "row_sparse"
        np.testing.assert_array_equal(o.asnumpy(), expected)
    # one row_ids for several outputs: all get the same rows
    outs = [mx.nd.sparse.zeros("row_sparse", (6, 3)) for _ in range(3)]
    kv.row_sparse_pull("e", out=outs, row_ids=nd([3]))
    for o in outs:
        expected = np.zeros_like(full)
        expected[3] = full[3]
        np.testing.assert_array_equal(o.asnumpy(), expected)


def test_row_sparse_push_aggregates_and_pulls(rng):
    kv = mx.kv.create()
    kv.init(["a", "b"], [mx.nd.sparse.zeros("row_sparse", SHAPE)] * 2)
    vals = []
    for _ in range(3):
        v = rng.standard_normal(SHAPE).astype(np.float32)
        v[rng.integers(0, SHAPE[0])] = 0
        vals.append(v)
    kv.push("a", [nd(v, ctx=mx.cpu(i)).tostype("row_sparse") for i, v in enumerate(vals)])
    dense_out = mx.nd.zeros(SHAPE)
    kv.pull("a", out=dense_out)
    np.testing.assert_allclose(dense_out.asnumpy(), np.sum(vals, 0), rtol=1e-6, atol=1e-6)
    rsp = mx.nd.sparse.zeros("row_sparse", SHAPE)
    with pytest.warns(UserWarning, match="row_sparse_pull"):
        kv.pull("a", out=rsp)                # ignored: sparse outputs need row_sparse_pull
    np.testing.assert_array_equal(rsp.asnumpy(), 0)
    kv.pull("a", out=rsp, ignore_sparse=False)
    np.testing.assert_allclose(rsp.asnumpy(), np.sum(vals, 0), rtol=1e-6, atol=1e-6)
    out = mx.nd.sparse.zeros("row_sparse", SHAPE)
    kv.row_sparse_pull("a", out=out, row_ids=mx.nd.arange(SHAPE[0]))
    np.testing.assert_allclose(out.asnumpy(), np.sum(vals, 0), rtol=1e-6, atol=1e-6)


def test_row_sparse_pull_errors():
    kv = mx.kv.create()
    kv.init([0, 1], [mx.nd.ones(SHAPE).tostype("row_sparse"), mx.nd.ones(SHAPE)])
    with pytest.raises(MXNetError, match="row_sparse storage type"):
        kv.row_sparse_pull(0, out=mx.nd.zeros(SHAPE), row_ids=nd([1]))
    with pytest.raises(MXNetError, match="row_sparse"):
        kv.row_sparse_pull(1, out=mx.nd.sparse.zeros("row_sparse", SHAPE), row_ids=nd([1]))
    with pytest.raises(MXNetError, match="out of range"):
        kv.row_sparse_pull(0, out=mx.nd.sparse.zeros("row_sparse", SHAPE), row_ids=nd([9]))
    with pytest.raises(MXNetError, match="row_ids"):
        kv.row_sparse_pull(0, out=[mx.nd.sparse.zeros("row_sparse", SHAPE)] * 2,
                           row_ids=[nd([1])] * 3)
    with pytest.raises(MXNetError, match="not been inited"):
        kv.row_sparse_pull(8, out=mx.nd.sparse.zeros("row_sparse", SHAPE), row_ids=nd([1]))


# ---- errors ------------------------------------------------------------------------------
def test_errors_init_twice_pull_before_init_shape():
    kv = fresh()
    with pytest.raises(MXNetError, match="duplicate init of key 3"):
        kv.init(3, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="key 4 has not been inited"):
        kv.pull(4, out=mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="key 4 has not been inited"):
        kv.push(4, mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match=r"value shape \(2, 2\) does not match the stored "
                                         r"shape \(4, 3\)"):
        kv.push(3, mx.nd.zeros((2, 2)))
    with pytest.raises(MXNetError, match="output shape"):
        kv.pull(3, out=mx.nd.zeros((3, 4)))
    skv = fresh(keys=("a",))
    with pytest.raises(MXNetError, match="duplicate init of key a"):
        skv.init("a", mx.nd.zeros(SHAPE))
    with pytest.raises(MXNetError, match="key zz doesn't exist. Did you init?"):
        skv.pull("zz", out=mx.nd.zeros(SHAPE))


def test_errors_key_types_and_arguments():
    ikv, skv = fresh(), fresh(keys=("a", "b"))
    v = mx.nd.ones(SHAPE)
    for kv, bad in ((ikv, "a"), (skv, 3), (ikv, ["a", "b"]), (skv, [3, 5])):
        vals = [v] * len(bad) if isinstance(bad, list) else v
        for call in (lambda: kv.init(bad, vals), lambda: kv.push(bad, vals),
                     lambda: kv.pull(bad, out=vals)):
            with pytest.raises(MXNetError, match="Mixed key types"):
                call()
    with pytest.raises(MXNetError, match="inconsistent types of keys"):
        mx.kv.create().init([1, "a"], [v, v])
    with pytest.raises(MXNetError, match="unexpected type for keys"):
        mx.kv.create().init(1.5, v)
    with pytest.raises(MXNetError, match="3 keys need a list of 3 values"):
        mx.kv.create().init([1, 2, 3], [v, v])
    with pytest.raises(MXNetError, match="out="):
        ikv.pull(3)
    with pytest.raises(MXNetError, match="NDArray"):
        ikv.push(3, np.ones(SHAPE))
    # numpy integer keys are ints
    ikv.push(np.int64(3), v)
    np.testing.assert_array_equal(pulled(ikv, 3), 1)


# ---- store types, properties, compression --------------------------------------------------
def test_types_and_properties():
    for name in ("local", "local_update_cpu", "local_allreduce_cpu", "LOCAL"):
        kv = mx.kv.create(name)
        assert isinstance(kv, mx.kv.KVStore) and kv.type == name.lower()
        assert kv.rank == 0 and kv.num_workers == 1
        assert kv.is_capable("optimizer") and kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)
        kv._barrier()
    assert mx.kv.create().type == "local"
    assert mx.kvstore.create is mx.kv.create
    for name in ("device", "nccl", "local_allreduce_device"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")     # they sum where the keys live, as 'local' does
            kv = mx.kv.create(name)
        assert kv.type == name
        kv.init(0, mx.nd.zeros(SHAPE))
        kv.push(0, [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE, mx.cpu(1))])
        np.testing.assert_array_equal(pulled(kv, 0), 2)
    with pytest.raises(ValueError, match="Unknown capability"):
        mx.kv.create().is_capable("fly")
    with pytest.raises(MXNetError, match="Unknown KVStore type"):
        mx.kv.create("lcoal")
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)


def test_store_kinds_are_declared_by_the_classes():
    # (type name, class name, distributed, async, compression), as MXNet's names imply
    want = [("local", "KVStore", False, False, False), ("nccl", "KVStore", False, False, False),
            ("local_whatever", "KVStore", False, False, False),
            ("device", "DeviceKVStore", False, False, True),
            ("local_allreduce_device", "DeviceKVStore", False, False, True),
            ("dist_sync", "DistKVStore", True, False, True),
            ("dist_device_sync", "DistKVStore", True, False, True),
            ("dist_sync_device", "DistKVStore", True, False, True),
            ("dist_async", "DistAsyncKVStore", True, True, True),
            ("dist_device_async", "DistAsyncKVStore", True, True, True),
            ("dist_async_device", "DistAsyncKVStore", True, True, True),
            ("horovod", "HorovodStore", True, False, False),
            ("teststore", "TestStore", False, False, False)]
    for name, cls, dist, is_async, compression in want:
        klass = mx.kv.base.store_class(name)
        assert klass.__name__ == cls, name
        assert (klass.is_distributed, klass.is_async, klass.supports_compression) \
            == (dist, is_async, compression), name
    assert mx.kv.base.store_class("lcoal") is None
    # the built-ins register like plugins: one registry holds every name create() accepts
    reg = mx.kv.KVStoreBase.kv_registry
    assert {n for n, *_ in want} - {"local_whatever"} <= set(reg)
    assert reg["dist_async"].__mro__[1] is reg["dist_sync"]


def test_plugin_store_gets_default_kinds_and_its_class_name():
    @mx.kv.KVStoreBase.register
    class MyKindStore(mx.kv.base.TestStore):
        pass
    try:
        kv = mx.kv.create("mykindstore")
        assert type(kv) is MyKindStore
        assert not kv.is_distributed and not kv.is_async and not kv.supports_compression
        # one device: a plugin named by string is not needed (MXNet's rule for non-dist names)
        from mxc.model import _create_kvstore
        assert _create_kvstore("mykindstore", 1, {}) == (None, False)
        kv2, update = _create_kvstore("mykindstore", 2, {})
        assert type(kv2) is MyKindStore and update is False   # it cannot run the optimizer
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("mykindstore")


def test_trainer_and_module_share_create_kvstore():
    import mxc.gluon.trainer as trainer
    import mxc.module.module as module
    from mxc import model
    assert trainer._create_kvstore is model._create_kvstore
    assert module._create_kvstore is model._create_kvstore
    assert trainer._create_sparse_kvstore is model._create_sparse_kvstore
    kv, update = model._create_kvstore("device", 2, {"w": mx.nd.zeros((2, 2))})
    assert type(kv).__name__ == "DeviceKVStore" and update is True
    big = {"w": type("P", (), {"shape": (4097, 4097)})()}    # > 16M elements: update locally
    assert model._create_kvstore("local", 2, big)[1] is False
    assert model._create_kvstore("device", 2, big)[1] is True


def test_gradient_compression_params():
    with pytest.raises(MXNetError, match="not supported for this type"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})
    kv = mx.kv.create("device")
    for bad, msg in (({"type": "1bit"}, "Unknown type for gradient compression 1bit"),
                     ({"threshold": 1}, "type"),
                     ({"type": "2bit", "threshold": -1}, "threshold must be greater than 0"),
                     ("2bit", "dict")):
        with pytest.raises(MXNetError, match=msg):
            kv.set_gradient_compression(bad)
    kv.set_gradient_compression({"type": "2bit"})            # threshold 0.5 by default


def test_2bit_compression_matches_mxnet_and_numpy():
    g = np.load(GOLDEN)
    grads, expected = g["kv/2bit/grad"], g["kv/2bit/pulled"]
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((7,)))
    residual = np.zeros((2, 7), np.float32)
    for s in range(len(grads)):
        kv.push(0, [nd(grads[s, d], ctx=mx.cpu(d)) for d in range(2)])
        got = pulled(kv, 0, (7,))
        np.testing.assert_array_equal(got, expected[s])
        residual += grads[s]
        q = np.where(residual >= 0.5, 0.5, np.where(residual <= -0.5, -0.5, 0.0))
        residual -= q
        np.testing.assert_array_equal(got, q.sum(0))
