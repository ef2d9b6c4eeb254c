"""mxc.contrib.horovod (the horovod.mxnet facade): collectives and DistributedTrainer /
DistributedOptimizer under ``mxc-launch -n 2|3`` against single-process references computed
here (numpy, and a plain gluon Trainer on the whole batch)."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from mxc.tools import launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None and launch._find_mpiexec(None)
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="mpi4py/mpiexec not installed (the 'dist' "
                                                    "extra): horovod facade tests skipped")

RANK_SCRIPT = """
import sys, warnings
import numpy as np
import mxc as mx
from mxc import autograd, gluon, nd
import mxc.contrib.horovod as hvd

out_dir = sys.argv[1]
hvd.init()
r, n = hvd.rank(), hvd.size()
res = {"rank": r, "size": n, "local_rank": hvd.local_rank(), "local_size": hvd.local_size(),
       "cross_size": hvd.cross_size()}

def data(rank, shape, dtype=np.float32):
    return np.random.RandomState(100 + rank).uniform(-1, 1, shape).astype(dtype)

x = nd.array(data(r, (3, 5)))
res["sum"] = hvd.allreduce(x, average=False, name="x").asnumpy()
res["avg"] = hvd.allreduce(x).asnumpy()
y = x.copy()
hvd.allreduce_(y, average=False, prescale_factor=2.0, postscale_factor=0.25)
res["scaled"] = y.asnumpy()
res["x_after"] = x.asnumpy()                      # allreduce does not modify its input
ints = nd.array(np.arange(6).reshape(2, 3) * (r + 1), dtype="int32")
res["isum"] = hvd.allreduce(ints, average=False).asnumpy()
grp = hvd.grouped_allreduce([x, 2 * x], average=False)
res["grouped"] = np.stack([g.asnumpy() for g in grp])
res["bcast1"] = hvd.broadcast(x, root_rank=n - 1).asnumpy()
z = x.copy()
hvd.broadcast_(z, 0)
res["bcast0"] = z.asnumpy()
res["gathered"] = hvd.allgather(nd.array(data(r, (r + 1, 2)))).asnumpy()
res["objs"] = np.array(hvd.allgather_object({"r": r}) == [{"r": k} for k in range(n)])
res["obj"] = np.array(hvd.broadcast_object(("hello", r), root_rank=n - 1) == ("hello", n - 1))

# data-parallel training: each rank starts from its own random weights, broadcast_parameters
# makes them rank 0's; rank r trains on rows r::n of the global batch
X = data(999, (12, 4))
Y = data(998, (12, 3))
def make_net(seed, deferred):
    mx.random.seed(seed)
    net = gluon.nn.Dense(3, in_units=0 if deferred else 4)
    net.initialize(mx.init.Uniform(0.5))
    return net

def train(net, trainer, steps=3):
    loss_fn = gluon.loss.L2Loss()
    xs, ys = nd.array(X[r::n]), nd.array(Y[r::n])
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(xs), ys)
        loss.backward()
        trainer.step(xs.shape[0])
    return net

net = make_net(7 + r, deferred=False)
hvd.broadcast_parameters(net.collect_params(), root_rank=0)
res["init_w"], res["init_b"] = net.weight.data().asnumpy(), net.bias.data().asnumpy()
trainer = hvd.DistributedTrainer(net.collect_params(), "sgd",
                                 {"learning_rate": 0.5, "momentum": 0.9})
train(net, trainer)
res["dt_w"], res["dt_b"] = net.weight.data().asnumpy(), net.bias.data().asnumpy()

net2 = make_net(7 + r, deferred=True)                  # deferred: broadcast after first use
hvd.broadcast_parameters(net2.collect_params(), root_rank=0)
net2(nd.array(X[:1]))
res["def_w"] = net2.weight.data().asnumpy()
opt = hvd.DistributedOptimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    trainer2 = gluon.Trainer(net2.collect_params(), opt, kvstore=None)
train(net2, trainer2)
res["do_w"], res["do_b"] = net2.weight.data().asnumpy(), net2.bias.data().asnumpy()
np.savez("%s/rank%d.npz" % (out_dir, r), **res)
hvd.shutdown()
"""

MISMATCH_SCRIPT = """
import numpy as np
import mxc as mx
import mxc.contrib.horovod as hvd
hvd.init()
x = mx.nd.ones((2, 3) if hvd.rank() == 0 else (3, 2))
try:
    hvd.allreduce(x).asnumpy()
except mx.base.MXNetError as e:
    print("ERROR", str(e).replace("\\n", " "))
"""


def _run(tmp_path, body, n, *args):
    script = tmp_path / "rank_script.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["MXC_KVSTORE_TIMEOUT"] = "20"
    env["OMP_NUM_THREADS"] = "1"
    for k in list(env):
        if k.startswith(("DMLC_", "MXC_LAUNCH_", "PMI_")):
            del env[k]
    return subprocess.run([sys.executable, launch.__file__, "-n", str(n), sys.executable,
                           str(script)] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=env, timeout=60, cwd=ROOT)


def _reference_training(X, Y, w0, b0, steps=3):
    """One process, the whole batch, a plain Trainer: what every rank must end with."""
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.weight.set_data(mx.nd.array(w0))
    net.bias.set_data(mx.nd.array(b0))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "momentum": 0.9},
                            kvstore=None)
    loss_fn = gluon.loss.L2Loss()
    xs, ys = mx.nd.array(X), mx.nd.array(Y)
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(xs), ys)
        loss.backward()
        trainer.step(xs.shape[0])
    return net.weight.data().asnumpy(), net.bias.data().asnumpy()


@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_collectives_and_trainers_equal_single_process(tmp_path, n):
    p = _run(tmp_path, RANK_SCRIPT, n, tmp_path)
    assert p.returncode == 0, p.stdout.decode("utf-8", "replace")[-3000:]
    res = [dict(np.load(tmp_path / ("rank%d.npz" % r))) for r in range(n)]

    def data(rank, shape):
        return np.random.RandomState(100 + rank).uniform(-1, 1, shape).astype(np.float32)

    xs = [data(r, (3, 5)) for r in range(n)]
    total = np.sum(xs, axis=0, dtype=np.float32)
    for r, d in enumerate(res):
        assert (int(d["rank"]), int(d["size"]), int(d["local_rank"]), int(d["local_size"]),
                int(d["cross_size"])) == (r, n, r, n, 1)
        np.testing.assert_allclose(d["sum"], total, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(d["avg"], total / n, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(d["scaled"], 0.25 * 2.0 * total, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(d["x_after"], xs[r])
        np.testing.assert_array_equal(d["isum"], np.arange(6).reshape(2, 3) * sum(range(1, n + 1)))
        assert d["isum"].dtype == np.int32
        np.testing.assert_allclose(d["grouped"], np.stack([total, 2 * total]), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_array_equal(d["bcast1"], xs[n - 1])
        np.testing.assert_array_equal(d["bcast0"], xs[0])
        np.testing.assert_array_equal(d["gathered"],
                                      np.concatenate([data(k, (k + 1, 2)) for k in range(n)]))
        assert bool(d["objs"]) and bool(d["obj"])
        # broadcast_parameters: every rank starts from rank 0's weights
        np.testing.assert_array_equal(d["init_w"], res[0]["init_w"])
        np.testing.assert_array_equal(d["def_w"], res[0]["def_w"])
    assert not np.array_equal(res[0]["init_w"], np.zeros_like(res[0]["init_w"]))
    X = np.random.RandomState(100 + 999).uniform(-1, 1, (12, 4)).astype(np.float32)
    Y = np.random.RandomState(100 + 998).uniform(-1, 1, (12, 3)).astype(np.float32)
    ref_w, ref_b = _reference_training(X, Y, res[0]["init_w"], res[0]["init_b"])
    assert not np.allclose(ref_w, res[0]["init_w"])
    for d in res:
        np.testing.assert_allclose(d["dt_w"], ref_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(d["dt_b"], ref_b, rtol=1e-5, atol=1e-6)
    # DistributedOptimizer from the deferred net: same recipe, its own initial weights
    ref_w2, ref_b2 = _reference_training(X, Y, res[0]["def_w"],
                                         np.zeros(3, np.float32))
    for d in res:
        np.testing.assert_allclose(d["do_w"], ref_w2, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(d["do_b"], ref_b2, rtol=1e-5, atol=1e-6)


@needs_mpi
def test_shape_mismatch_is_a_clear_error(tmp_path):
    p = _run(tmp_path, MISMATCH_SCRIPT, 2)
    out = p.stdout.decode("utf-8", "replace")
    errors = [ln for ln in out.splitlines() if " ERROR " in ln]
    assert len(errors) == 2, out[-3000:]
    assert all("(2, 3)" in ln and "(3, 2)" in ln for ln in errors), errors


def test_single_process_without_launcher():
    """Outside a launcher the facade is a job of one: collectives are identities."""
    import mxc.contrib.horovod as hvd
    if not HAVE_MPI:
        pytest.skip("mpi4py not installed")
    code = textwrap.dedent("""
        import numpy as np, mxc as mx
        import mxc.contrib.horovod as hvd
        try:
            hvd.rank()
        except ValueError as e:
            assert "hvd.init()" in str(e)
        else:
            raise AssertionError("rank() before init() must raise")
        hvd.init()
        x = mx.nd.array([[1.0, 2.0]])
        assert (hvd.size(), hvd.rank(), hvd.local_rank()) == (1, 0, 0)
        assert hvd.allreduce(x).asnumpy().tolist() == [[1.0, 2.0]]
        assert hvd.allgather(x).shape == (1, 2)
        assert hvd.broadcast(x, 0).asnumpy().tolist() == [[1.0, 2.0]]
        print("OK")
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for k in list(env):
        if k.startswith(("DMLC_", "MXC_LAUNCH_", "PMI_")):
            del env[k]
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=60)
    assert p.returncode == 0 and b"OK" in p.stdout, p.stdout.decode()[-2000:]
    assert hvd.Compression.none.compress(1) == (1, None)
