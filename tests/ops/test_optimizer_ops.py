"""Optimizer update operators: each against a numpy transcription of MXNet 1.9.1's formula
(float64 reference; float32/float64/float16 arrays), against MXNet 1.9.1 itself over several steps
(tests/data/optimizer_golden.npz, made by tests/data/make_optimizer_golden.py), in-place
semantics (out=weight, states mutated) and the errors of bad input."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import registry

from .oputil import tol

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "optimizer_golden.npz")


def _clip(x, c):
    return np.clip(x, -c, c) if c >= 0 else x


def _f(v):
    return float(np.float32(v))


# ---- numpy references (MXNet's formulas, in float64) ---------------------------------------
# each takes (inputs as float64 arrays, params) and returns (new weight, [new states in input order])

def ref_sgd(x, p):
    w, g = x
    return (1 - p["lr"] * p["wd"]) * w - p["lr"] * _clip(p["rescale_grad"] * g, p["clip_gradient"]), []


def ref_sgd_mom(x, p):
    w, g, m = x
    m = p["momentum"] * m - p["lr"] * p["wd"] * w - p["lr"] * _clip(p["rescale_grad"] * g,
                                                                   p["clip_gradient"])
    return w + m, [m]


def ref_nag(x, p, new_weight=False):
    """MXNet updates mom from the weight after writing the output: the new weight when
    out=weight (and always in mp_nag_mom_update)."""
    w, g, m = x
    m = p["momentum"] * m
    gc = _clip(p["rescale_grad"] * g, p["clip_gradient"])
    out = w - m + (p["momentum"] + 1) * (m - p["lr"] * (gc + p["wd"] * w))
    return out, [m - p["lr"] * (gc + p["wd"] * (out if new_weight else w))]


def ref_adam(x, p):
    w, g, m, v = x
    gr = _clip(g * p["rescale_grad"] + w * p["wd"], p["clip_gradient"])
    m = p["beta1"] * m + (1 - p["beta1"]) * gr
    v = p["beta2"] * v + (1 - p["beta2"]) * gr * gr
    return w - p["lr"] * m / (np.sqrt(v) + p["epsilon"]), [m, v]


def ref_rmsprop(x, p):
    w, g, n = x
    gr = _clip(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"])
    n = (1 - p["gamma1"]) * gr * gr + p["gamma1"] * n
    return _clip(w - p["lr"] * gr / np.sqrt(n + p["epsilon"]), p["clip_weights"]), [n]


def ref_rmspropalex(x, p):
    w, g, n, gs, d = x
    gr = _clip(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"])
    n = (1 - p["gamma1"]) * gr * gr + p["gamma1"] * n
    gs = (1 - p["gamma1"]) * gr + p["gamma1"] * gs
    d = p["gamma2"] * d - p["lr"] * gr / np.sqrt(n - gs * gs + p["epsilon"])
    return _clip(w + d, p["clip_weights"]), [n, gs, d]


def ref_ftrl(x, p):
    w, g, z, n = x
    gr = _clip(g * p["rescale_grad"], p["clip_gradient"])
    z = z + gr - (np.sqrt(n + gr * gr) - np.sqrt(n)) * w / p["lr"]
    n = n + gr * gr
    out = (np.sign(z) * p["lamda1"] - z) / ((p["beta"] + np.sqrt(n)) / p["lr"] + p["wd"]) \
        * (np.abs(z) > p["lamda1"])
    return out, [z, n]


def ref_ftml(x, p):
    w, g, d, v, z = x
    t = p["t"]
    gi = _clip(p["rescale_grad"] * g + p["wd"] * w, p["clip_grad"])
    v = p["beta2"] * v + (1 - p["beta2"]) * gi * gi
    dt = (1 - p["beta1"] ** t) / p["lr"] * (np.sqrt(v / (1 - p["beta2"] ** t)) + p["epsilon"])
    z = p["beta1"] * z + (1 - p["beta1"]) * gi - (dt - p["beta1"] * d) * w
    return -z / dt, [dt, v, z]


def ref_signsgd(x, p):
    w, g = x
    return (1 - p["lr"] * p["wd"]) * w - p["lr"] * np.sign(g), []


def ref_signum(x, p):
    w, g, m = x
    c = 1 - p["momentum"]
    m = p["momentum"] * m - c * p["wd"] * w - c * _clip(p["rescale_grad"] * g, p["clip_gradient"])
    return (1 - p["lr"] * p["wd_lh"]) * w + p["lr"] * np.sign(m), [m]


def ref_lamb1(x, p):
    w, g, m, v = x
    gr = _clip(g * p["rescale_grad"], p["clip_gradient"])
    m = p["beta1"] * m + (1 - p["beta1"]) * gr
    v = p["beta2"] * v + (1 - p["beta2"]) * gr * gr
    mh, vh = m, v
    if p["bias_correction"]:
        mh, vh = m / (1 - p["beta1"] ** p["t"]), v / (1 - p["beta2"] ** p["t"])
    return mh / (np.sqrt(vh) + p["epsilon"]) + p["wd"] * w, [m, v]


def ref_adagrad(x, p):
    w, g, h = x
    gr = _clip(g * p["rescale_grad"], p["clip_gradient"])
    h = h + gr * gr
    return w - gr / np.sqrt(h + p["epsilon"]) * p["lr"], [h]


def ref_adamw(x, p):
    w, g, m, v, s = x
    gr = _clip(s[0] * g, p["clip_gradient"])
    m = p["beta1"] * m + (1 - p["beta1"]) * gr
    v = p["beta2"] * v + (1 - p["beta2"]) * gr * gr
    return w - p["eta"] * (p["lr"] * m / (np.sqrt(v) + p["epsilon"]) + p["wd"] * w), [m, v]


C = dict(wd=0.02, rescale_grad=0.7, clip_gradient=0.4)
NOCLIP = dict(wd=0.02, rescale_grad=0.7)
# op, reference, state names (init kind: z zeros, p positive, r random), params
SINGLE = [
    ("sgd_update", ref_sgd, "", dict(lr=0.1, **C)),
    ("sgd_update", ref_sgd, "", dict(lr=0.1, **NOCLIP)),
    ("sgd_mom_update", ref_sgd_mom, "r", dict(lr=0.1, momentum=0.9, **C)),
    ("sgd_mom_update", ref_sgd_mom, "r", dict(lr=0.1, momentum=0.9, **NOCLIP)),
    ("nag_mom_update", ref_nag, "r", dict(lr=0.1, momentum=0.9, **C)),
    ("adam_update", ref_adam, "rp", dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, **C)),
    ("adam_update", ref_adam, "rp", dict(lr=0.01, beta1=0.8, beta2=0.99, epsilon=1e-8, **NOCLIP)),
    ("rmsprop_update", ref_rmsprop, "p",
     dict(lr=0.01, gamma1=0.95, epsilon=1e-8, clip_weights=0.8, **C)),
    ("rmspropalex_update", ref_rmspropalex, "pzr",
     dict(lr=0.01, gamma1=0.95, gamma2=0.9, epsilon=1e-8, clip_weights=-1, **C)),
    ("ftrl_update", ref_ftrl, "rp", dict(lr=0.1, lamda1=0.01, beta=1.0, **C)),
    ("ftml_update", ref_ftml, "rpr",
     dict(lr=0.1, beta1=0.6, beta2=0.999, epsilon=1e-8, t=2, wd=0.02, rescale_grad=0.7,
          clip_grad=0.4)),
    ("signsgd_update", ref_signsgd, "", dict(lr=0.1, wd=0.02)),
    ("signum_update", ref_signum, "r", dict(lr=0.1, momentum=0.9, wd_lh=0.05, **C)),
    ("lamb_update_phase1", ref_lamb1, "rp",
     dict(beta1=0.9, beta2=0.999, epsilon=1e-6, t=3, bias_correction=True, **C)),
    ("lamb_update_phase1", ref_lamb1, "rp",
     dict(beta1=0.9, beta2=0.999, epsilon=1e-6, t=3, bias_correction=False, **C)),
    ("_sparse_adagrad_update", ref_adagrad, "p",
     dict(lr=0.1, epsilon=1e-7, rescale_grad=0.7, clip_gradient=0.4)),
]


def _init(kind, shape, rng, dtype):
    if kind == "z":
        return np.zeros(shape, dtype)
    if kind == "p":
        return rng.uniform(0.1, 1.0, shape).astype(dtype)
    return (rng.standard_normal(shape) * 0.5).astype(dtype)


@pytest.mark.parametrize("case", range(len(SINGLE)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_single_vs_numpy(case, dtype, rng):
    op, ref, states, params = SINGLE[case]
    shape = (37, 5)
    x = [_init("r", shape, rng, dtype), (rng.standard_normal(shape) * 0.8).astype(dtype)]
    x += [_init(k, shape, rng, dtype) for k in states]
    p = dict(clip_gradient=-1.0, wd=0.0, rescale_grad=1.0)
    p.update({k: (_f(v) if isinstance(v, float) and k != "epsilon" else v) for k, v in params.items()})
    w_exp, s_exp = ref([a.astype(np.float64) for a in x], p)
    nd = [mx.nd.array(a, dtype=dtype) for a in x]
    out = getattr(mx.nd, op)(*nd, **params)
    rtol, atol = tol(dtype)
    if dtype == np.float16:
        rtol, atol = 5e-3, 5e-3
    elif dtype == np.float32:
        rtol, atol = 1e-4, 1e-5
    assert out.dtype == dtype and out.shape == shape
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), w_exp, rtol=rtol, atol=atol,
                               err_msg=op)
    for k, e in enumerate(s_exp):
        np.testing.assert_allclose(nd[2 + k].asnumpy().astype(np.float64), e, rtol=rtol,
                                   atol=atol, err_msg=f"{op} state {k}")
    # the weight itself is untouched without out=
    np.testing.assert_array_equal(nd[0].asnumpy(), x[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lamb_phase2_and_adamw_vs_numpy(dtype, rng):
    shape = (9, 4)
    w = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    for lb, ub, r1, r2 in [(-1, -1, 2.0, 4.0), (0.5, 1.0, 2.0, 4.0), (-1, -1, 0.0, 4.0),
                           (-1, -1, 2.0, 0.0)]:
        lr = 0.1
        nr1 = r1
        if lb >= 0:
            nr1 = max(nr1, lb)
        if ub >= 0:
            nr1 = min(nr1, ub)
        if nr1 != 0 and r2 != 0:
            lr = lr * nr1 / r2
        out = mx.nd.lamb_update_phase2(mx.nd.array(w, dtype=dtype), mx.nd.array(g, dtype=dtype),
                                       mx.nd.array([r1], dtype=dtype), mx.nd.array([r2], dtype=dtype),
                                       lr=0.1, lower_bound=lb, upper_bound=ub)
        np.testing.assert_allclose(out.asnumpy(), w - lr * g, rtol=1e-5)
    m, v = rng.standard_normal(shape).astype(dtype), rng.uniform(0.1, 1, shape).astype(dtype)
    p = dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.01, eta=0.5, clip_gradient=0.3)
    w_exp, (m_exp, v_exp) = ref_adamw([w, g, m, v, np.array([0.5])], p)
    nd = [mx.nd.array(a, dtype=dtype) for a in (w, g, m, v)]
    mx.nd._adamw_update(*nd, mx.nd.array([0.5]), out=nd[0], **p)
    np.testing.assert_allclose(nd[0].asnumpy(), w_exp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nd[2].asnumpy(), m_exp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nd[3].asnumpy(), v_exp, rtol=1e-5, atol=1e-6)
    # a NaN / inf / 0 scale skips the update; a fresh output gets the weight
    m_now = nd[2].asnumpy()
    for bad in (0.0, np.inf, np.nan):
        o = mx.nd._adamw_update(*nd, mx.nd.array([bad]), **p)
        np.testing.assert_array_equal(o.asnumpy(), nd[0].asnumpy())
        np.testing.assert_array_equal(nd[2].asnumpy(), m_now)


@pytest.mark.parametrize("wdtype", [np.float16, np.float32, np.float64])
def test_mixed_precision_vs_numpy(wdtype, rng):
    shape = (23,)
    w32 = rng.standard_normal(shape).astype(np.float32)
    w = w32.astype(wdtype)
    g = rng.standard_normal(shape).astype(wdtype)
    mom = rng.standard_normal(shape).astype(np.float32)
    p = dict(lr=0.1, momentum=0.9, **C)
    pf = {k: _f(v) for k, v in p.items()}
    for op, ref, has_mom in (("mp_sgd_update", ref_sgd, False),
                             ("mp_sgd_mom_update", ref_sgd_mom, True),
                             ("mp_nag_mom_update", lambda x, p: ref_nag(x, p, True), True)):
        ins = [w, g] + ([mom] if has_mom else []) + [w32]
        nd = [mx.nd.array(a, dtype=a.dtype) for a in ins]
        kw = dict(p) if has_mom else {k: v for k, v in p.items() if k != "momentum"}
        getattr(mx.nd, op)(*nd, out=nd[0], **kw)
        w_exp, s_exp = ref([w32.astype(np.float64), g.astype(np.float64)]
                           + ([mom.astype(np.float64)] if has_mom else []), pf)
        np.testing.assert_allclose(nd[-1].asnumpy(), w_exp, rtol=1e-5, atol=1e-6, err_msg=op)
        assert nd[-1].dtype == np.float32 and nd[0].dtype == wdtype
        np.testing.assert_array_equal(nd[0].asnumpy(), nd[-1].asnumpy().astype(wdtype))
        if has_mom:
            np.testing.assert_allclose(nd[2].asnumpy(), s_exp[0], rtol=1e-5, atol=1e-6)


def test_multi_sgd_vs_numpy(rng):
    shapes = [(4, 3), (7,), (2, 2, 2)]
    ws = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    gs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ms = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    lrs, wds = (0.1, 0.2, 0.3), (0.0, 0.01, 0.02)
    args, nw, nm = [], [], []
    for w, g, m in zip(ws, gs, ms):
        a = [mx.nd.array(w), mx.nd.array(g), mx.nd.array(m)]
        nw.append(a[0])
        nm.append(a[2])
        args += a
    out = mx.nd.multi_sgd_mom_update(*args, lrs=lrs, wds=wds, momentum=0.9, rescale_grad=0.5,
                                     num_weights=3, out=nw)
    assert out is nw or out == nw
    for i in range(3):
        e, (me,) = ref_sgd_mom([ws[i], gs[i], ms[i]],
                               dict(lr=_f(lrs[i]), wd=_f(wds[i]), momentum=_f(0.9), rescale_grad=0.5,
                                    clip_gradient=-1))
        np.testing.assert_allclose(nw[i].asnumpy(), e, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(nm[i].asnumpy(), me, rtol=1e-5, atol=1e-6)
    # without out=: fresh outputs, a list of num_weights arrays; lrs as MXNet's attribute string
    res = mx.nd.multi_sgd_update(*[mx.nd.array(a) for p in zip(ws, gs) for a in p],
                                 lrs="(0.1, 0.2, 0.3)", wds="[0, 0, 0]", num_weights=3)
    assert isinstance(res, list) and len(res) == 3
    for i in range(3):
        np.testing.assert_allclose(res[i].asnumpy(), ws[i] - _f(lrs[i]) * gs[i], rtol=1e-5, atol=1e-6)


def test_large_update_uses_threads(rng):
    n = 300_000
    w = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    nd = [mx.nd.array(w), mx.nd.array(g), mx.nd.zeros(n), mx.nd.zeros(n)]
    mx.nd.adam_update(*nd, lr=0.01, out=nd[0])
    e, _ = ref_adam([w.astype(np.float64), g.astype(np.float64), np.zeros(n), np.zeros(n)],
                    dict(lr=_f(0.01), beta1=_f(0.9), beta2=_f(0.999), epsilon=_f(1e-8), wd=0,
                         rescale_grad=1, clip_gradient=-1))
    np.testing.assert_allclose(nd[0].asnumpy(), e, rtol=1e-4, atol=1e-6)


# ---- MXNet 1.9.1 golden fixtures ----------------------------------------------------------

def _golden():
    if not os.path.exists(GOLDEN):
        return {}, []
    z = np.load(GOLDEN)
    cases = sorted({k.split("/")[0] for k in z.files})
    return z, cases


_Z, _CASES = _golden()


def _replay(z, case):
    spec = json.loads(str(z[f"{case}/spec"]))
    n_in = len([k for k in z.files if k.startswith(f"{case}/in")])
    init = [z[f"{case}/in{k}"] for k in range(n_in)]
    nd = [None if k in spec["grads"] else mx.nd.array(a, dtype=a.dtype) for k, a in enumerate(init)]
    for s in range(spec["steps"]):
        args = [mx.nd.array(init[k][s], dtype=init[k].dtype) if k in spec["grads"] else nd[k]
                for k in range(n_in)]
        if spec["kind"] == "plain":
            kw = dict(spec["params"])
            if spec["tparam"]:
                kw[spec["tparam"]] = s + 1
            out = nd[spec["weights"][0]] if len(spec["weights"]) == 1 else \
                [nd[w] for w in spec["weights"]]
            getattr(mx.nd, spec["op"])(*args, out=out, **kw)
        else:
            p1, p2 = spec["params"]["p1"], spec["params"]["p2"]
            if spec["kind"] == "mp_lamb":
                d = mx.nd.mp_lamb_update_phase1(*args, t=s + 1, **p1)
                mx.nd.mp_lamb_update_phase2(nd[0], d, mx.nd.norm(nd[4]), mx.nd.norm(d), nd[4],
                                            out=nd[0], **p2)
            else:
                d = mx.nd.lamb_update_phase1(*args, t=s + 1, **p1)
                mx.nd.lamb_update_phase2(nd[0], d, mx.nd.norm(nd[0]), mx.nd.norm(d), out=nd[0],
                                         **p2)
    return spec, nd


@pytest.mark.skipif(not _CASES, reason="optimizer_golden.npz missing")
@pytest.mark.parametrize("case", _CASES)
def test_golden_mxnet(case):
    spec, nd = _replay(_Z, case)
    for k in spec["check"]:
        exp = _Z[f"{case}/out{k}"]
        got = nd[k].asnumpy()
        assert got.dtype == exp.dtype, (case, k)
        if exp.dtype == np.float64:
            rtol, atol = 1e-12, 1e-14
        elif exp.dtype == np.float16:
            rtol, atol = 2e-3, 2e-3
        else:
            rtol, atol = 2e-6, 1e-7
        if spec["kind"] != "plain":     # the norms of LAMB are summed in another order
            rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=f"{case} input {k}")


def test_golden_covers_every_dense_op():
    ops = set()
    for c in _CASES:
        spec = json.loads(str(_Z[f"{c}/spec"]))
        ops.add(spec["op"])
        if spec["kind"] == "lamb":
            ops |= {"lamb_update_phase1", "lamb_update_phase2"}
        if spec["kind"] == "mp_lamb":
            ops |= {"mp_lamb_update_phase1", "mp_lamb_update_phase2"}
    # compared with MXNet in test_*_extra_golden below (reset_arrays: zeros, test_reset_arrays)
    ops |= {"multi_sum_sq", "multi_lars", "_contrib_group_adagrad_update", "reset_arrays"}
    mine = {op.name for op in registry.all_ops()
            if op.forward is not None and getattr(op.forward, "__module__", "") ==
            "mxc.ops.optimizer_ops"}
    assert mine and mine <= ops, sorted(mine - ops)


# ---- semantics and errors -----------------------------------------------------------------

def test_registry_metadata():
    op = registry.get("adam_update")
    assert op.mutate == (2, 3) and (0, 0) in op.inplace and op.grad is None
    assert registry.get("_sparse_adam_update") is op
    assert registry.get("mp_sgd_mom_update").mutate == (2, 3)
    assert registry.get("ftml_update").mutate == (2, 3, 4)
    assert registry.get("mp_lamb_update_phase2").mutate == (4,)
    for name in ("_sparse_sgd_update", "_sparse_sgd_mom_update", "_sparse_ftrl_update"):
        assert registry.get(name).name == name[len("_sparse_"):]


def test_params_parse_from_strings():
    op = registry.get("sgd_mom_update")
    a = op.parse({"lr": "0.1", "momentum": "0.9", "lazy_update": "False"})
    assert a["lr"] == 0.1 and a["momentum"] == 0.9 and a["lazy_update"] is False
    assert a["wd"] == 0.0 and a["rescale_grad"] == 1.0 and a["clip_gradient"] == -1.0
    with pytest.raises(ValueError, match="sgd_update.*lr"):
        registry.get("sgd_update").parse({})


def test_errors_name_the_operator():
    w, g = mx.nd.ones((2, 3)), mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match="adam_update.*shape"):
        mx.nd.adam_update(w, mx.nd.ones((3, 2)), mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3)), lr=0.1)
    with pytest.raises(ValueError, match="sgd_mom_update.*dtype"):
        mx.nd.sgd_mom_update(w, g, mx.nd.zeros((2, 3), dtype="float64"), lr=0.1)
    with pytest.raises(ValueError, match="sgd_update.*int32"):
        mx.nd.sgd_update(mx.nd.ones(2, dtype="int32"), mx.nd.ones(2, dtype="int32"), lr=0.1)
    with pytest.raises(ValueError, match="mp_sgd_update.*weight32.*float32"):
        mx.nd.mp_sgd_update(w.astype("float16"), g.astype("float16"), w.astype("float16"), lr=0.1)
    with pytest.raises(ValueError, match="mp_lamb_update_phase1.*float16"):
        mx.nd.mp_lamb_update_phase1(w, g, w, w, w, t=1, wd=0.0)
    with pytest.raises(ValueError, match="lamb_update_phase2.*r1"):
        mx.nd.lamb_update_phase2(w, g, mx.nd.ones((2,)), mx.nd.ones((1,)), lr=0.1)
    with pytest.raises(ValueError, match="_sparse_adagrad_update.*wd"):
        mx.nd._sparse_adagrad_update(w, g, mx.nd.zeros((2, 3)), lr=0.1, wd=0.1)
    with pytest.raises(ValueError, match="multi_sgd_update.*lrs"):
        mx.nd.multi_sgd_update(w, g, w, g, lrs=(0.1,), wds=(0.0, 0.0), num_weights=2)
    with pytest.raises(ValueError, match="multi_sgd_update.*inputs"):
        mx.nd.multi_sgd_update(w, g, w, lrs=(0.1,), wds=(0.0,), num_weights=2)
    with pytest.raises(ValueError, match="preloaded_multi_sgd_update.*lrs"):
        mx.nd.preloaded_multi_sgd_update(w, g, mx.nd.ones(2), mx.nd.ones(1), num_weights=1)
    with pytest.raises(ValueError, match="_adamw_update.*rescale_grad"):
        mx.nd._adamw_update(w, g, w, w, mx.nd.ones(1, dtype="float64"), lr=0.1, eta=1.0)
    with pytest.raises(ValueError, match="ftml_update.*t"):
        mx.nd.ftml_update(w, g, w, w, w, lr=0.1)
    with pytest.raises(MXNetError, match="not registered"):
        registry.get("adagrad_update")


def test_multi_update_checks_each_call_after_a_good_one():
    """The multi-weight forms remember the inference of shapes and dtypes they saw (a training
    loop repeats them); another call's mismatches are still refused."""
    w, g, m = mx.nd.ones((2, 3)), mx.nd.ones((2, 3)), mx.nd.zeros((2, 3))
    for _ in range(2):
        mx.nd.multi_sgd_mom_update(w, g, m, out=[w], lrs=(0.1,), wds=(0.0,), momentum=0.9,
                                   num_weights=1)
    np.testing.assert_allclose(m.asnumpy(), np.full((2, 3), -0.19), rtol=1e-6)
    with pytest.raises(ValueError, match="multi_sgd_mom_update.*grad_0 has shape"):
        mx.nd.multi_sgd_mom_update(w, mx.nd.ones((3, 2)), m, out=[w], lrs=(0.1,), wds=(0.0,),
                                   momentum=0.9, num_weights=1)
    with pytest.raises(ValueError, match="multi_sgd_mom_update.*mom_0 has dtype float64"):
        mx.nd.multi_sgd_mom_update(w, g, mx.nd.zeros((2, 3), dtype="float64"), out=[w],
                                   lrs=(0.1,), wds=(0.0,), momentum=0.9, num_weights=1)
    with pytest.raises(ValueError, match="multi_sgd_mom_update.*'lrs' has 2 values"):
        mx.nd.multi_sgd_mom_update(w, g, m, out=[w], lrs=(0.1, 0.1), wds=(0.0,), momentum=0.9,
                                   num_weights=1)


def test_out_is_weight_and_states_in_place():
    w, g, m = mx.nd.ones(4), mx.nd.ones(4), mx.nd.zeros(4)
    r = mx.nd.sgd_mom_update(w, g, m, lr=0.5, momentum=0.9, out=w)
    assert r is w
    np.testing.assert_allclose(w.asnumpy(), [0.5] * 4)
    np.testing.assert_allclose(m.asnumpy(), [-0.5] * 4)
    mx.nd.sgd_mom_update(w, g, m, lr=0.5, momentum=0.9, out=w)
    np.testing.assert_allclose(m.asnumpy(), [-0.95] * 4, rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), [-0.45] * 4, rtol=1e-6)
    # an out= that is neither the weight nor fresh memory of another input still works
    o = mx.nd.zeros(4)
    mx.nd.signsgd_update(w, g, lr=0.1, out=o)
    np.testing.assert_allclose(o.asnumpy(), [-0.55] * 4, rtol=1e-6)


def _groups(rng, shapes, mp, has_mom):
    """Flat inputs (weight, grad[, mom][, weight32]) per shape, as numpy arrays."""
    out = []
    for s in shapes:
        w32 = rng.standard_normal(s).astype(np.float32)
        g = [w32.astype(np.float16 if mp else np.float32), rng.standard_normal(s).astype(
            np.float16 if mp else np.float32)]
        if has_mom:
            g.append(rng.standard_normal(s).astype(np.float32))
        if mp:
            g.append(w32)
        out.append(g)
    return out


@pytest.mark.parametrize("mp", [False, True])
@pytest.mark.parametrize("has_mom", [False, True])
def test_multi_and_preloaded_equal_the_single_kernels(mp, has_mom, rng):
    shapes = [(3, 4), (6,)]
    lrs, wds = (0.1, 0.2), (0.01, 0.0)
    kw = dict(rescale_grad=0.5, clip_gradient=0.3)
    if has_mom:
        kw["momentum"] = 0.9
    name = {(False, False): "multi_sgd_update", (False, True): "multi_sgd_mom_update",
            (True, False): "multi_mp_sgd_update", (True, True): "multi_mp_sgd_mom_update"}[mp, has_mom]
    pre = {"multi_sgd_update": "preloaded_multi_sgd_update",
           "multi_sgd_mom_update": "preloaded_multi_sgd_mom_update",
           "multi_mp_sgd_update": "preloaded_multi_mp_sgd_update",
           "multi_mp_sgd_mom_update": "preloaded_multi_mp_sgd_mom_update"}[name]
    groups = _groups(rng, shapes, mp, has_mom)
    results = []
    for form in ("multi", "preloaded", "single"):
        nd = [[mx.nd.array(a, dtype=a.dtype) for a in grp] for grp in groups]
        flat = [a for grp in nd for a in grp]
        if form == "multi":
            getattr(mx.nd, name)(*flat, lrs=lrs, wds=wds, num_weights=2, out=[g[0] for g in nd], **kw)
        elif form == "preloaded":
            getattr(mx.nd, pre)(*flat, mx.nd.array(lrs), mx.nd.array(wds), num_weights=2,
                                out=[g[0] for g in nd], **kw)
        elif has_mom:       # the same formula as sgd_mom_update / mp_sgd_mom_update
            for i, grp in enumerate(nd):
                getattr(mx.nd, "mp_sgd_mom_update" if mp else "sgd_mom_update")(
                    *grp, lr=lrs[i], wd=wds[i], out=grp[0], **kw)
        else:               # MXNet's multi form: w + (0 - lr*wd*w - lr*clip(rescale*g))
            for i, grp in enumerate(nd):
                w = (grp[-1] if mp else grp[0]).asnumpy()
                gc = np.clip(np.float32(0.5) * grp[1].asnumpy().astype(np.float32), -np.float32(0.3),
                             np.float32(0.3))
                lr, wd = np.float32(lrs[i]), np.float32(wds[i])
                new = w + (-(lr * wd) * w - lr * gc)
                grp[0][:] = new.astype(grp[0].dtype)
                if mp:
                    grp[-1][:] = new
        results.append([a.asnumpy() for grp in nd for a in grp])
    for a, b, c in zip(*results):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a.astype(np.float64), c.astype(np.float64), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mp", [False, True])
def test_adamw_multi_and_mp_forms(mp, rng):
    shapes = [(3, 4), (6,)]
    p = dict(beta1=0.9, beta2=0.999, epsilon=1e-8, clip_gradient=0.3)
    lrs, wds, etas = (0.01, 0.02), (0.01, 0.0), (0.5, 1.0)
    wdt = np.float16 if mp else np.float32
    groups = []
    for s in shapes:
        w32 = rng.standard_normal(s).astype(np.float32)
        grp = [w32.astype(wdt), rng.standard_normal(s).astype(wdt), np.zeros(s, np.float32),
               np.zeros(s, np.float32)] + ([w32] if mp else [])
        groups.append(grp)
    nd = [[mx.nd.array(a, dtype=a.dtype) for a in grp] for grp in groups]
    single = [[mx.nd.array(a, dtype=a.dtype) for a in grp] for grp in groups]
    scale = mx.nd.array([0.5])
    getattr(mx.nd, "_multi_mp_adamw_update" if mp else "_multi_adamw_update")(
        *[a for grp in nd for a in grp], scale, lrs=lrs, wds=wds, etas=etas, num_weights=2,
        out=[g[0] for g in nd], **p)
    for i, grp in enumerate(single):
        getattr(mx.nd, "_mp_adamw_update" if mp else "_adamw_update")(
            *grp, scale, lr=lrs[i], wd=wds[i], eta=etas[i], out=grp[0], **p)
    # the multi form computes the moments as beta*(m - g) + g: equal up to rounding, but for the
    # variance that is g^2 - beta2*g^2, which cancels: one ulp of g^2 becomes ~1e-4 of v after
    # the first step, so the step (lr*eta*m/sqrt(v) ~ 0.016 here) differs by up to ~2e-6
    for ga, gb in zip(nd, single):
        for a, b in zip(ga, gb):
            # float16 weights near 0 round differently along the two paths (~1e-6 apart)
            rtol, atol = (2e-3, 1e-5) if a.dtype == np.float16 else (1e-4, 1e-5)
            np.testing.assert_allclose(a.asnumpy().astype(np.float64), b.asnumpy().astype(np.float64),
                                       rtol=rtol, atol=atol)
    # and the numpy reference for the single form
    for i, grp in enumerate(groups):
        w = grp[-1] if mp else grp[0]
        e, (me, ve) = ref_adamw([w.astype(np.float64), grp[1].astype(np.float64), grp[2], grp[3],
                                 np.array([0.5])],
                                dict(lr=_f(lrs[i]), wd=_f(wds[i]), eta=_f(etas[i]), beta1=_f(0.9),
                                     beta2=_f(0.999), epsilon=_f(1e-8), clip_gradient=_f(0.3)))
        np.testing.assert_allclose((single[i][-1] if mp else single[i][0]).asnumpy(), e,
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(single[i][2].asnumpy(), me, rtol=1e-5, atol=1e-7)


# ---- multi_sum_sq, multi_lars, group AdaGrad, reset_arrays, _square_sum ---------------------

_XG = os.path.join(os.path.dirname(__file__), "..", "data", "optimizer_ops_extra_golden.npz")
_X = np.load(_XG) if os.path.exists(_XG) else None
_need_x = pytest.mark.skipif(_X is None, reason="optimizer_ops_extra_golden.npz missing")


def ref_lars(lrs, wss, gss, wds, eta, eps, rescale_grad):
    w_norm, g_norm = np.sqrt(wss), np.sqrt(gss)
    ok = (w_norm > 0) & (gss > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lars = lrs * eta * w_norm / (g_norm * rescale_grad + wds * w_norm + eps)
    return np.where(ok, lars, lrs)


def ref_group_adagrad(w, g, h, lr, rescale_grad, clip_gradient, epsilon):
    g = _clip(g * rescale_grad, clip_gradient)
    h = h + np.mean(g * g, axis=1, keepdims=True)
    return w - lr * g / np.sqrt(h + epsilon), h


def test_multi_sum_sq_vs_numpy(rng):
    xs = [rng.standard_normal(s) for s in ((4,), (2, 3), (3, 1, 2))]
    for dtype in ("float32", "float64", "float16"):
        out = mx.nd.multi_sum_sq(*[mx.nd.array(x, dtype=dtype) for x in xs], num_arrays=3)
        assert out.dtype == np.float32 and out.shape == (3,)
        exp = [np.sum(np.square(x.astype(dtype).astype(np.float64))) for x in xs]
        np.testing.assert_allclose(out.asnumpy(), exp, rtol=1e-5)
    with pytest.raises(ValueError, match="multi_sum_sq.*one dtype"):
        mx.nd.multi_sum_sq(mx.nd.ones(2), mx.nd.ones(2, dtype="float16"), num_arrays=2)
    with pytest.raises(ValueError, match="multi_sum_sq: num_arrays=3"):
        mx.nd.multi_sum_sq(mx.nd.ones(2), num_arrays=3)


def test_multi_lars_vs_numpy(rng):
    lrs, wss, gss, wds = (rng.random(5).astype(np.float32) for _ in range(4))
    wss[0], gss[2] = 0, 0
    out = mx.nd.multi_lars(*[mx.nd.array(v) for v in (lrs, wss, gss, wds)], eta=0.3, eps=1e-4,
                           rescale_grad=1.5)
    exp = ref_lars(*(v.astype(np.float64) for v in (lrs, wss, gss, wds)), 0.3, 1e-4, 1.5)
    np.testing.assert_allclose(out.asnumpy(), exp, rtol=1e-5)
    assert out.asnumpy()[0] == lrs[0] and out.asnumpy()[2] == lrs[2]
    with pytest.raises(ValueError, match="multi_lars: wds"):
        mx.nd.multi_lars(mx.nd.ones(3), mx.nd.ones(3), mx.nd.ones(3), mx.nd.ones(2), eta=1,
                         eps=0)


def test_group_adagrad_vs_numpy(rng):
    w, g, h = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.random((3, 1))
    mw, mg, mh = (mx.nd.array(v, dtype="float64") for v in (w, g, h))
    for _ in range(2):
        mx.nd.contrib.group_adagrad_update(mw, mg, mh, lr=0.1, rescale_grad=0.5,
                                           clip_gradient=0.3, out=mw)
        w, h = ref_group_adagrad(w, g, h, _f(0.1), _f(0.5), _f(0.3), _f(1e-5))
    np.testing.assert_allclose(mw.asnumpy(), w, rtol=1e-10)
    np.testing.assert_allclose(mh.asnumpy(), h, rtol=1e-10)
    with pytest.raises(ValueError, match="group_adagrad_update: history"):
        mx.nd.contrib.group_adagrad_update(mw, mg, mx.nd.ones((2, 1), dtype="float64"), lr=0.1)


@_need_x
def test_multi_sum_sq_and_lars_extra_golden():
    xs = [_X[f"sumsq_in{k}"] for k in range(3)]
    out = mx.nd.multi_sum_sq(*[mx.nd.array(x) for x in xs], num_arrays=3)
    np.testing.assert_allclose(out.asnumpy(), _X["sumsq_out"], rtol=1e-6)
    out = mx.nd.multi_lars(*[mx.nd.array(_X[k]) for k in ("lars_lrs", "lars_wss", "lars_gss",
                                                           "lars_wds")],
                           eta=0.7, eps=1e-5, rescale_grad=0.5)
    np.testing.assert_allclose(out.asnumpy(), _X["lars_out"], rtol=1e-6)


@_need_x
def test_group_adagrad_extra_golden():
    mw, mg, mh = (mx.nd.array(_X[k]) for k in ("ga_w", "ga_g", "ga_h"))
    for _ in range(3):
        mx.nd.contrib.group_adagrad_update(mw, mg, mh, lr=0.05, rescale_grad=0.8,
                                           clip_gradient=1.0, epsilon=1e-5, out=mw)
    np.testing.assert_allclose(mw.asnumpy(), _X["ga_w_out"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mh.asnumpy(), _X["ga_h_out"], rtol=1e-6, atol=1e-7)


def test_reset_arrays():
    a, b = mx.nd.ones((2, 3)), mx.nd.full((4,), 7.0, dtype="float16")
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert not a.asnumpy().any() and not b.asnumpy().any() and b.dtype == np.float16
    with pytest.raises(ValueError, match="reset_arrays: num_arrays=3"):
        mx.nd.reset_arrays(a, b, num_arrays=3)


def test_square_sum(rng):
    x = rng.standard_normal((3, 4))
    out = mx.nd._square_sum(mx.nd.array(x, dtype="float64"), axis=1, keepdims=True)
    np.testing.assert_allclose(out.asnumpy(), np.sum(x * x, axis=1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("kw", [dict(axis=1), dict(axis=(0,), keepdims=True), dict(),
                                dict(axis=0, exclude=True)])
def test_square_sum_axes_and_gradient(rng, kw):
    # values against numpy (exclude reduces the other axes) and the gradient against central
    # differences in float64
    x = rng.standard_normal((3, 4))
    axes = kw.get("axis")
    axes = tuple(range(2)) if axes is None else ((axes,) if isinstance(axes, int) else axes)
    if kw.get("exclude"):
        axes = tuple(a for a in range(2) if a not in axes)
    ref = np.sum(x * x, axis=axes, keepdims=kw.get("keepdims", False))
    out = mx.nd._square_sum(mx.nd.array(x, dtype="float64"), **kw)
    np.testing.assert_allclose(out.asnumpy().reshape(np.shape(ref)), ref, rtol=1e-12)
    xa = mx.nd.array(x, dtype="float64")
    xa.attach_grad()
    hg = rng.standard_normal(out.shape)
    with mx.autograd.record():
        y = mx.nd._square_sum(xa, **kw)
    y.backward(mx.nd.array(hg, dtype="float64"))
    eps, num = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        fp = np.sum(np.sum(xp * xp, axis=axes, keepdims=kw.get("keepdims", False)).reshape(hg.shape) * hg)
        fm = np.sum(np.sum(xm * xm, axis=axes, keepdims=kw.get("keepdims", False)).reshape(hg.shape) * hg)
        num[idx] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(xa.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)


def test_f32_rounds_as_numpy_float32():
    # the update ops' scalar attributes go through _f32 (struct-based); numpy is the reference
    import warnings
    from mxc.ops.optimizer_ops import _f32
    vals = [0.1, 0.9, 1 / 3, 1e-8, 1e-46, 7e-46, 3.4e38, 3.4028235677973366e38, -3.5e38, 1e39,
            0.0, -0.0, float("inf"), -float("inf"), 0.01 / 128]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for v in vals:
            want = float(np.float32(v))
            assert repr(_f32(v)) == repr(want), v
    assert _f32(float("nan")) != _f32(float("nan"))
