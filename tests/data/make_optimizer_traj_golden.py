"""Make tests/data/optimizer_traj_golden.npz with real MXNet 1.9.1 (run with the oracle's python):

    /work/mxnet-oracle/bin/python tests/data/make_optimizer_traj_golden.py

For every optimizer and several hyper-parameter settings it records the weights after each of
5 Updater calls (all parameters passed together, as gluon.Trainer does, so the aggregated
multi_* paths run), from fixed initial weights and gradients. It also stores:
- ``states_plain`` / ``states_with_opt``: .states bytes MXNet writes for fixed arrays (without
  and with the optimizer), ``states_after``: an Updater's states after a few SGD steps;
- ``init_*``: initializer outputs that do not depend on random draws, and ``dumps`` strings.
The configuration table is stored as JSON (``configs``) so the test replays exactly it.
"""
import json
import os
import pickle
import sys

import numpy as np

STEPS = 5
SHAPES = [[3, 4], [5]]
SHAPES_2D = [[3, 4], [2, 5]]
NAMES = {"0": "fc_weight", "1": "fc_bias"}


def C(opt, kwargs=None, dtype="float32", names=False, sparse=None, env=None, shapes=None,
      sched=None, lr_mult=None, wd_mult=None, tol=1e-5):
    return {"opt": opt, "kwargs": kwargs or {}, "dtype": dtype, "names": names,
            "sparse": sparse, "env": env, "shapes": shapes or SHAPES, "sched": sched,
            "lr_mult": lr_mult, "wd_mult": wd_mult, "tol": tol}


MOM = {"momentum": 0.9}
HEAVY = {"wd": 0.1, "clip_gradient": 0.4, "rescale_grad": 0.5}
CONFIGS = {
    "sgd_plain": C("sgd", {"learning_rate": 0.1}),
    "sgd_mom": C("sgd", dict(MOM, learning_rate=0.1)),
    "sgd_mom_heavy": C("sgd", dict(MOM, learning_rate=0.1, **HEAVY), names=True),
    "sgd_wd_rescale": C("sgd", {"learning_rate": 0.05, "wd": 0.01, "rescale_grad": 2.0}),
    "sgd_agg1": C("sgd", dict(MOM, learning_rate=0.1, wd=0.01), env="1"),
    "sgd_noagg": C("sgd", dict(MOM, learning_rate=0.1, wd=0.01), env="0"),
    "sgd_mp_mom": C("sgd", dict(MOM, learning_rate=0.1, wd=0.01, multi_precision=True),
                    dtype="float16", tol=2e-3),
    "sgd_mp_plain": C("sgd", {"learning_rate": 0.1, "multi_precision": True,
                              "clip_gradient": 0.3}, dtype="float16", tol=2e-3),
    "sgd_fp16_nomp": C("sgd", dict(MOM, learning_rate=0.1), dtype="float16", tol=2e-3),
    "sgd_sched": C("sgd", dict(MOM, learning_rate=0.2),
                   sched={"cls": "FactorScheduler", "step": 2, "factor": 0.5}),
    "sgd_mults": C("sgd", dict(MOM, learning_rate=0.1, wd=0.05), names=True,
                   lr_mult={"fc_weight": 0.5, "1": 2.0}, wd_mult={"fc_bias": 1.0}),
    "sgd_rsp_lazy": C("sgd", dict(MOM, learning_rate=0.1, wd=0.1), sparse="lazy"),
    "sgd_rsp_lazy_nomom": C("sgd", {"learning_rate": 0.1, "wd": 0.1}, sparse="lazy"),
    "sgd_rsp_std": C("sgd", dict(MOM, learning_rate=0.1, wd=0.1, lazy_update=False),
                     sparse="std"),
    "ccsgd_mom": C("ccsgd", dict(MOM, learning_rate=0.1, wd=0.01)),
    "nag_plain": C("nag", {"learning_rate": 0.1}),
    "nag_mom": C("nag", dict(MOM, learning_rate=0.1, **HEAVY)),
    "nag_mp": C("nag", dict(MOM, learning_rate=0.1, multi_precision=True), dtype="float16",
                tol=2e-3),
    "signum_default": C("signum", {}),
    "signsgd": C("signum", {"momentum": 0.0, "learning_rate": 0.05, "wd": 0.1}),
    "signum_heavy": C("signum", {"learning_rate": 0.05, "wd_lh": 0.01, **HEAVY}),
    "ftml_default": C("ftml", {"learning_rate": 0.05}),
    "ftml_heavy": C("ftml", {"learning_rate": 0.05, "beta1": 0.5, **HEAVY}),
    "lars_mom": C("lars", dict(MOM, learning_rate=0.1, eta=0.01, wd=0.01), names=True),
    "lars_plain": C("lars", {"learning_rate": 0.1, "eta": 0.02, "clip_gradient": 0.5}),
    "lars_sched": C("lars", dict(MOM, learning_rate=0.1, eta=0.01), names=True,
                    sched={"cls": "FactorScheduler", "step": 1, "factor": 0.7}),
    "lars_mp": C("lars", dict(MOM, learning_rate=0.1, eta=0.01, multi_precision=True),
                 dtype="float16", names=True, tol=2e-3),
    "lbsgd_linear": C("lbsgd", dict(MOM, learning_rate=0.1, batch_scale=2, warmup_epochs=1,
                                    updates_per_epoch=3)),
    "lbsgd_lars": C("lbsgd", {"learning_rate": 0.1, "warmup_strategy": "lars", "wd": 0.01}),
    "lbsgd_power2": C("lbsgd", dict(MOM, learning_rate=0.1, warmup_strategy="power2",
                                    batch_scale=3, warmup_epochs=2, updates_per_epoch=2)),
    "lbsgd_sqrt": C("lbsgd", {"learning_rate": 0.1, "warmup_strategy": "sqrt",
                              "batch_scale": 1, "warmup_epochs": 2, "updates_per_epoch": 2}),
    "lamb_default": C("lamb", {"learning_rate": 0.01}),
    "lamb_heavy": C("lamb", {"learning_rate": 0.01, "lower_bound": 0.1, "upper_bound": 5.0,
                             **HEAVY}),
    "lamb_nobc": C("lamb", {"learning_rate": 0.01, "bias_correction": False, "wd": 0.01}),
    "lamb_single": C("lamb", {"learning_rate": 0.01, "wd": 0.01}, env="1"),
    "lamb_mp": C("lamb", {"learning_rate": 0.01, "multi_precision": True}, dtype="float16",
                 tol=2e-3),
    "dcasgd_plain": C("dcasgd", {"learning_rate": 0.1}),
    "dcasgd_heavy": C("dcasgd", {"learning_rate": 0.1, "lamda": 0.1, **HEAVY}),
    "adam_default": C("adam", {}),
    "adam_heavy": C("adam", {"learning_rate": 0.01, "beta1": 0.8, **HEAVY}),
    "adam_rsp_lazy": C("adam", {"learning_rate": 0.01, "wd": 0.1}, sparse="lazy"),
    "adam_rsp_std": C("adam", {"learning_rate": 0.01, "wd": 0.1, "lazy_update": False},
                      sparse="std"),
    "adam_mp": C("adam", {"learning_rate": 0.01, "multi_precision": True}, dtype="float16",
                 tol=2e-3),
    "adagrad_default": C("adagrad", {"learning_rate": 0.1}),
    "adagrad_heavy": C("adagrad", {"learning_rate": 0.1, "eps": 1e-4, **HEAVY}),
    "adagrad_rsp": C("adagrad", {"learning_rate": 0.1}, sparse="lazy"),
    "rmsprop_default": C("rmsprop", {"learning_rate": 0.01}),
    "rmsprop_centered": C("rmsprop", {"learning_rate": 0.01, "centered": True}),
    "rmsprop_heavy": C("rmsprop", {"learning_rate": 0.01, "centered": True, "gamma1": 0.8,
                                   "gamma2": 0.7, "clip_weights": 0.9, **HEAVY}),
    "rmsprop_plain_heavy": C("rmsprop", {"learning_rate": 0.01, "clip_weights": 0.9, **HEAVY}),
    "adadelta_default": C("adadelta", {}),
    "adadelta_heavy": C("adadelta", {"rho": 0.8, "epsilon": 1e-4, **HEAVY}),
    "ftrl_default": C("ftrl", {}),
    "ftrl_heavy": C("ftrl", {"lamda1": 0.05, "beta": 0.5, "learning_rate": 0.2, **HEAVY}),
    "ftrl_rsp": C("ftrl", {"learning_rate": 0.2, "wd": 0.1}, sparse="lazy"),
    "adamax_default": C("adamax", {}),
    "adamax_heavy": C("adamax", {"learning_rate": 0.01, **HEAVY}),
    "nadam_default": C("nadam", {}),
    "nadam_heavy": C("nadam", {"learning_rate": 0.01, "schedule_decay": 0.01, **HEAVY}),
    "test_default": C("test", {"rescale_grad": 0.5}),
    "groupadagrad_default": C("groupadagrad", {"learning_rate": 0.1}, shapes=SHAPES_2D),
    "groupadagrad_clip": C("groupadagrad", {"learning_rate": 0.1, "clip_gradient": 0.3,
                                            "rescale_grad": 2.0}, shapes=SHAPES_2D),
}

SPARSE_SHAPE = [6, 4]
SPARSE_ROWS = [[0, 3], [1, 3, 5], [3], [0, 2, 4], [5]]


def inputs(cfg):
    """Initial weights and per-step gradients (numpy), the same in MXNet and mxc."""
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


def main():
    import mxnet as mx
    out = {"configs": np.array(json.dumps(CONFIGS))}
    for key, cfg in CONFIGS.items():
        old = os.environ.get("MXNET_OPTIMIZER_AGGREGATION_SIZE")
        if cfg["env"] is not None:
            os.environ["MXNET_OPTIMIZER_AGGREGATION_SIZE"] = cfg["env"]
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
        if old is None:
            os.environ.pop("MXNET_OPTIMIZER_AGGREGATION_SIZE", None)
        else:
            os.environ["MXNET_OPTIMIZER_AGGREGATION_SIZE"] = old
        upd = mx.optimizer.get_updater(opt)
        w0, grads = inputs(cfg)
        ws = [mx.nd.array(w, dtype=w.dtype) for w in w0]
        traj = []
        for gs in grads:
            g_nd = [mx.nd.array(g, dtype=g.dtype) for g in gs]
            if cfg["sparse"]:
                g_nd = [g.tostype("row_sparse") for g in g_nd]
            upd(list(range(len(ws))), g_nd, ws)
            traj.append([w.asnumpy().copy() for w in ws])
        for p in range(len(ws)):
            out[f"{key}/w{p}"] = np.stack([t[p] for t in traj])
        print(key, "ok", file=sys.stderr)

    # .states bytes MXNet writes
    a = np.arange(12, dtype="f").reshape(3, 4)
    b = np.linspace(0, 1, 5).astype("f")
    st = {0: mx.nd.array(a), 1: (mx.nd.array(b), mx.nd.array(a * 2)), 2: None,
          3: [mx.nd.array(b)], 4: mx.nd.array(a, dtype="float16"),
          "k": mx.nd.array(a).tostype("row_sparse")}
    out["states_plain"] = np.frombuffer(pickle.dumps(st), dtype=np.uint8)
    opt = mx.optimizer.SGD(momentum=0.9, learning_rate=0.1, wd=0.01,
                           lr_scheduler=mx.lr_scheduler.FactorScheduler(2, 0.5))
    out["states_with_opt"] = np.frombuffer(pickle.dumps((st, opt)), dtype=np.uint8)
    upd = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.01))
    w = mx.nd.array(a)
    for k in range(3):
        upd(0, mx.nd.array(a * 0.1 * (k + 1)), w)
    out["adam_states"] = np.frombuffer(upd.get_states(dump_optimizer=True), dtype=np.uint8)
    out["adam_states_w"] = w.asnumpy()
    w2 = w.copy()
    upd(0, mx.nd.array(a * 0.4), w2)
    out["adam_states_w_next"] = w2.asnumpy()

    # initializers without random draws
    for shape in [(1, 1, 4, 4), (2, 3, 5, 5), (1, 2, 3, 6)]:
        arr = mx.nd.zeros(shape)
        mx.init.Bilinear()(mx.init.InitDesc("up_weight"), arr)
        out["init_bilinear_" + "x".join(map(str, shape))] = arr.asnumpy()
    arr = mx.nd.zeros((20,))
    desc = mx.init.InitDesc("lstm_i2h_bias", {"__init__": mx.init.LSTMBias(2.5).dumps()})
    mx.init.LSTMBias(forget_bias=2.5)(desc, arr)
    out["init_lstmbias"] = arr.asnumpy()
    arr = mx.nd.zeros((2, 3))
    mx.init.Constant(np.arange(3.0))(mx.init.InitDesc("c_weight"), arr)
    out["init_constant_bcast"] = arr.asnumpy()
    for key, (mode, layers, bidir, size) in {"lstm": ("lstm", 1, False, 144),
                                              "gru2bi": ("gru", 2, True, 552)}.items():
        arr = mx.nd.zeros((size,))
        fused = mx.init.FusedRNN(mx.init.Constant(0.3), 4, layers, mode, bidir,
                                 forget_bias=1.5)
        # (MXNet 1.9.1 cannot rebuild FusedRNN from its dumps() when `init` is set: it looks
        # the inner name up in the wrong registry table; so call it directly)
        fused(mx.init.InitDesc("rnn_weight"), arr)
        out["init_fused_" + key] = arr.asnumpy()
    dumps = {}
    for name, ini in [("xavier", mx.init.Xavier(rnd_type="gaussian", factor_type="in",
                                                magnitude=2)),
                      ("msra", mx.init.MSRAPrelu(slope=0.1)), ("uniform", mx.init.Uniform(0.3)),
                      ("normal", mx.init.Normal(0.2)), ("one", mx.init.One()),
                      ("zero", mx.init.Zero()), ("orth", mx.init.Orthogonal(rand_type="normal")),
                      ("lstmbias", mx.init.LSTMBias(0.5)), ("bilinear", mx.init.Bilinear()),
                      ("const", mx.init.Constant(mx.nd.ones((2,)))),
                      ("const_np", mx.init.Constant(np.ones((2, 2)))),
                      ("fused", mx.init.FusedRNN(mx.init.Xavier(), 4, 1, "lstm"))]:
        dumps[name] = ini.dumps()
    out["dumps"] = np.array(json.dumps(dumps))
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez_compressed(os.path.join(here, "optimizer_traj_golden.npz"), **out)


if __name__ == "__main__":
    main()
