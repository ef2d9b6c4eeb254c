"""Updater: lazy state creation, aggregation, and the .states format shared with MXNet 1.9.1."""
import os
import pickle

import numpy as np
import pytest

import mxc as mx
from mxc.optimizer.updater import dumps_states, loads_states

HERE = os.path.dirname(os.path.abspath(__file__))
_G = np.load(os.path.join(HERE, "..", "data", "optimizer_traj_golden.npz"))


def _fixed_states():
    # the arrays make_optimizer_traj_golden.py pickled with MXNet
    a = np.arange(12, dtype="f").reshape(3, 4)
    b = np.linspace(0, 1, 5).astype("f")
    return {0: mx.nd.array(a), 1: (mx.nd.array(b), mx.nd.array(a * 2)), 2: None,
            3: [mx.nd.array(b)], 4: mx.nd.array(a, dtype="float16"),
            "k": mx.nd.array(a).tostype("row_sparse")}


def _check_fixed(st):
    a = np.arange(12, dtype="f").reshape(3, 4)
    b = np.linspace(0, 1, 5).astype("f")
    assert sorted(map(str, st)) == ["0", "1", "2", "3", "4", "k"]
    np.testing.assert_array_equal(st[0].asnumpy(), a)
    assert isinstance(st[1], tuple) and len(st[1]) == 2
    np.testing.assert_array_equal(st[1][0].asnumpy(), b)
    np.testing.assert_array_equal(st[1][1].asnumpy(), a * 2)
    assert st[2] is None
    assert isinstance(st[3], list)
    np.testing.assert_array_equal(st[3][0].asnumpy(), b)
    assert st[4].dtype == np.float16
    np.testing.assert_array_equal(st[4].asnumpy(), a.astype(np.float16))
    assert st["k"].stype == "row_sparse"
    np.testing.assert_array_equal(st["k"].asnumpy(), a)


def test_reads_states_mxnet_wrote():
    _check_fixed(loads_states(_G["states_plain"].tobytes()))


def test_reads_states_with_optimizer_mxnet_wrote():
    st, opt = loads_states(_G["states_with_opt"].tobytes())
    _check_fixed(st)
    assert type(opt) is mx.optimizer.SGD
    assert opt.momentum == 0.9 and opt.wd == 0.01 and opt.learning_rate == 0.1
    assert type(opt.lr_scheduler) is mx.lr_scheduler.FactorScheduler
    assert opt.lr_scheduler.factor == 0.5 and opt.lr_scheduler.step == 2
    assert opt.param_dict == {}


def test_writes_the_bytes_mxnet_writes(capsys):
    # byte for byte what MXNet's pickle.dumps gives for the same objects, so MXNet loads ours
    st = _fixed_states()
    assert dumps_states(st) == _G["states_plain"].tobytes()
    opt = mx.optimizer.SGD(momentum=0.9, learning_rate=0.1, wd=0.01,
                           lr_scheduler=mx.lr_scheduler.FactorScheduler(2, 0.5))
    assert dumps_states((st, opt)) == _G["states_with_opt"].tobytes()


def test_resume_adam_from_mxnet_states():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd.set_states(_G["adam_states"].tobytes())
    assert type(upd.optimizer) is mx.optimizer.Adam
    assert upd.optimizer._index_update_count[0] == 3
    a = np.arange(12, dtype="f").reshape(3, 4)
    w = mx.nd.array(_G["adam_states_w"])
    upd(0, mx.nd.array(a * 0.4), w)
    np.testing.assert_allclose(w.asnumpy(), _G["adam_states_w_next"], rtol=1e-6, atol=1e-7)


def test_get_set_states_round_trip():
    opt = mx.optimizer.Adam(learning_rate=0.05)
    upd = mx.optimizer.get_updater(opt)
    rs = np.random.RandomState(3)
    w = mx.nd.array(rs.rand(4, 3))
    for _ in range(2):
        upd(0, mx.nd.array(rs.rand(4, 3)), w)
    blob = upd.get_states()
    upd2 = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.05))
    upd2.set_states(blob)
    assert upd2.states_synced == {0: False}
    m1, v1 = upd.states[0]
    m2, v2 = upd2.states[0]
    np.testing.assert_array_equal(m1.asnumpy(), m2.asnumpy())
    np.testing.assert_array_equal(v1.asnumpy(), v2.asnumpy())
    # with the optimizer: counts travel too, so the next steps agree
    upd3 = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd3.set_states(upd.get_states(dump_optimizer=True))
    g = mx.nd.array(rs.rand(4, 3))
    w3 = w.copy()
    upd(0, g, w)
    upd3(0, g, w3)
    np.testing.assert_allclose(w.asnumpy(), w3.asnumpy(), rtol=1e-6)
    assert upd3.states_synced[0] is True


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo should-not-run",))


@pytest.mark.parametrize("payload", [
    pickle.dumps({0: _Evil()}),
    pickle.dumps({0: np.ones(2)}.get),                  # a builtin method reference
    pickle.dumps(({}, pytest.approx(1))),               # an unlisted class
])
def test_refuses_anything_but_states(payload):
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(mx.MXNetError, match="refusing to load optimizer states"):
        upd.set_states(payload)


def test_garbage_gives_clear_error():
    with pytest.raises(mx.MXNetError, match="could not read optimizer states"):
        loads_states(b"not a pickle")
    with pytest.raises(TypeError, match="must be bytes"):
        loads_states({0: 1})


def test_states_created_lazily_and_per_index():
    opt = mx.optimizer.SGD(momentum=0.9, learning_rate=0.1)
    upd = mx.optimizer.get_updater(opt)
    assert upd.states == {}
    w0, w1 = mx.nd.ones((2, 2)), mx.nd.ones((3,))
    upd([0, 1], [mx.nd.ones((2, 2)), mx.nd.ones((3,))], [w0, w1])
    assert set(upd.states) == {0, 1}
    assert upd.states[1].shape == (3,)
    # momentum after one step = -lr * g
    np.testing.assert_allclose(upd.states[0].asnumpy(), -0.1 * np.ones((2, 2)), rtol=1e-6)
    assert opt._index_update_count == {0: 1, 1: 1} and opt.num_update == 1
    upd(1, mx.nd.ones((3,)), w1)
    assert opt._index_update_count == {0: 1, 1: 2} and opt.num_update == 2


def test_aggregation_groups_by_dtype_and_size(monkeypatch):
    seen = []

    class Rec(mx.optimizer.SGD):
        def update_multi_precision(self, index, weight, grad, state):
            seen.append(tuple(index))
            super().update_multi_precision(index, weight, grad, state)

    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "2")
    opt = Rec(learning_rate=0.1)
    assert opt.aggregate_num == 2
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64"), mx.nd.ones((2,)),
          mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")]
    gs = [mx.nd.ones((2,), dtype=w.dtype) for w in ws]
    upd(list(range(5)), gs, ws)
    assert sorted(seen) == [(0, 2), (1, 4), (3,)]
    for w in ws:
        np.testing.assert_allclose(w.asnumpy(), [0.9, 0.9], rtol=1e-6)


def test_sync_state_context_nested():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    st = (mx.nd.ones((2,)), [mx.nd.zeros((1,)), None])
    out = upd.sync_state_context(st, mx.cpu(0))
    assert isinstance(out, tuple) and isinstance(out[1], list) and out[1][1] is None
    np.testing.assert_array_equal(out[0].asnumpy(), [1, 1])


def test_string_and_bytes_indices():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0))
    w = mx.nd.ones((2,))
    upd(b"fc_weight", mx.nd.ones((2,)), w)
    assert "fc_weight" in upd.states
    np.testing.assert_allclose(w.asnumpy(), [0, 0])


class MySchedH2(mx.lr_scheduler.LRScheduler):
    def __call__(self, num_update):
        return self.base_lr / (1 + num_update)


def test_program_defined_scheduler_round_trips():
    opt = mx.optimizer.SGD(lr_scheduler=MySchedH2(base_lr=0.5))
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((2,))
    upd(0, mx.nd.ones((2,)), w)
    upd2 = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd2.set_states(upd.get_states(dump_optimizer=True))
    assert type(upd2.optimizer.lr_scheduler) is MySchedH2
    assert upd2.optimizer.learning_rate == pytest.approx(0.25)
    # but a class that is neither an optimizer nor a scheduler is still refused
    with pytest.raises(mx.MXNetError, match="refusing"):
        upd2.set_states(pickle.dumps({0: _fixed_states, 1: _Evil}))
