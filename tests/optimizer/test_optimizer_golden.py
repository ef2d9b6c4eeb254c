"""Optimizer trajectories against real MXNet 1.9.1 (tests/data/make_optimizer_traj_golden.py):
every optimizer, several hyper-parameter settings each, 5 Updater calls with all parameters
at once (as gluon.Trainer calls it)."""
import json
import os

import numpy as np
import pytest

import mxc as mx

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "data", "optimizer_traj_golden.npz")
_G = np.load(GOLDEN)
CONFIGS = json.loads(str(_G["configs"]))
NAMES = {"0": "fc_weight", "1": "fc_bias"}
SPARSE_SHAPE = [6, 4]
SPARSE_ROWS = [[0, 3], [1, 3, 5], [3], [0, 2, 4], [5]]
STEPS = 5


def _inputs(cfg):
    # the same draws as make_optimizer_traj_golden.inputs
    rs = np.random.RandomState(7)
    if cfg["sparse"]:
        w0 = [rs.uniform(-1, 1, SPARSE_SHAPE)]
        grads = []
        for rows in SPARSE_ROWS:
            g = np.zeros(SPARSE_SHAPE)
            g[rows] = rs.uniform(-1, 1, (len(rows), SPARSE_SHAPE[1]))
            grads.append([g])
    else:
        w0 = [rs.uniform(-1, 1, s) for s in cfg["shapes"]]
        grads = [[rs.uniform(-1, 1, s) for s in cfg["shapes"]] for _ in range(STEPS)]
    dt = cfg["dtype"]
    return [w.astype(dt) for w in w0], [[g.astype(dt) for g in gs] for gs in grads]


def _make(cfg, monkeypatch):
    if cfg["env"] is not None:
        monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", cfg["env"])
    else:
        monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
    kw = dict(cfg["kwargs"])
    if cfg["names"]:
        kw["param_idx2name"] = {int(k): v for k, v in NAMES.items()}
    if cfg["sched"]:
        s = dict(cfg["sched"])
        kw["lr_scheduler"] = getattr(mx.lr_scheduler, s.pop("cls"))(**s)
    opt = mx.optimizer.create(cfg["opt"], **kw)
    if cfg["lr_mult"]:
        opt.set_lr_mult({(int(k) if k.isdigit() else k): v for k, v in cfg["lr_mult"].items()})
    if cfg["wd_mult"]:
        opt.set_wd_mult({(int(k) if k.isdigit() else k): v for k, v in cfg["wd_mult"].items()})
    return opt


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_trajectory_matches_mxnet(key, monkeypatch):
    cfg = CONFIGS[key]
    upd = mx.optimizer.get_updater(_make(cfg, monkeypatch))
    w0, grads = _inputs(cfg)
    ws = [mx.nd.array(w, dtype=w.dtype) for w in w0]
    for step, gs in enumerate(grads):
        g_nd = [mx.nd.array(g, dtype=g.dtype) for g in gs]
        if cfg["sparse"]:
            g_nd = [g.tostype("row_sparse") for g in g_nd]
        upd(list(range(len(ws))), g_nd, ws)
        for p, w in enumerate(ws):
            want = _G[f"{key}/w{p}"][step]
            assert w.dtype == want.dtype
            np.testing.assert_allclose(w.asnumpy().astype(np.float64), want.astype(np.float64),
                                       rtol=cfg["tol"], atol=cfg["tol"],
                                       err_msg=f"{key}: param {p} after step {step + 1}")


def test_every_registered_optimizer_has_a_trajectory():
    covered = {c["opt"] for c in CONFIGS.values()}
    # SGLD is random; "_"-names are helpers other fronts register (contrib.svrg_optimization's
    # wrappers, tested in tests/contrib/svrg_optimization)
    public = {n for n in mx.optimizer.Optimizer.opt_registry if not n.startswith("_")}
    missing = public - covered - {"sgld"}
    assert not missing, missing
