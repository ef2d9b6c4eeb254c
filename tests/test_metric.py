"""mx.metric against numpy formulas written here and against MXNet 1.9.1's values
(tests/data/metric_golden.npz, made by tests/data/make_metric_golden.py)."""
import json
import math
import os
from collections import OrderedDict
from copy import deepcopy

import numpy as np
import pytest

import mxc as mx

GOLDEN = os.path.join(os.path.dirname(__file__), "data", "metric_golden.npz")


@pytest.fixture(scope="module")
def golden():
    return np.load(GOLDEN)


def nd(a, **kw):
    return mx.nd.array(np.asarray(a), **kw)


# ---- MXNet's values -----------------------------------------------------------------------
def test_golden_values_local_and_global(golden):
    spec = json.loads(str(golden["metric/spec"]))
    assert len(spec) >= 20
    for case, args, kwargs, kind in spec:
        m = mx.metric.create(*args, **kwargs)
        got = []
        for b in range(3):
            if b == 2:
                m.reset_local()
            lab = nd(golden["in/%s/label%d" % (kind, b)])
            pred = nd(golden["in/%s/pred%d" % (kind, b)])
            m.update([lab], [pred])
            got.append([np.atleast_1d(np.asarray(m.get()[1], np.float64)),
                        np.atleast_1d(np.asarray(m.get_global()[1], np.float64))])
        np.testing.assert_allclose(np.array(got), golden["out/" + case], rtol=1e-5,
                                   atol=1e-7, err_msg=case)


# ---- numpy references ---------------------------------------------------------------------
def _probs(rng, n, k):
    x = rng.standard_normal((n, k))
    e = np.exp(x)
    return (e / e.sum(1, keepdims=True)).astype(np.float32)


def test_accuracy_and_axis(rng):
    pred = _probs(rng, 20, 4)
    label = rng.integers(0, 4, 20).astype(np.float32)
    m = mx.metric.Accuracy()
    m.update([nd(label)], [nd(pred)])
    assert m.get() == ("accuracy", (pred.argmax(1) == label).mean())
    # axis=0: classes along the first axis
    m0 = mx.metric.Accuracy(axis=0)
    m0.update([nd(label)], [nd(pred.T.copy())])
    assert m0.get()[1] == pytest.approx((pred.argmax(1) == label).mean())
    # predictions given as class indices (same shape as labels)
    m.reset()
    m.update([nd(label)], [nd(pred.argmax(1).astype(np.float32))])
    assert m.get()[1] == pytest.approx((pred.argmax(1) == label).mean())


def test_top_k_accuracy(rng):
    pred = rng.random((30, 6)).astype(np.float32)
    label = rng.integers(0, 6, 30)
    for k in (2, 3, 6, 9):
        m = mx.metric.create("top_k_accuracy", top_k=k)
        m.update([nd(label)], [nd(pred)])
        topk = np.argsort(-pred, axis=1)[:, :min(k, 6)]
        expected = np.mean([label[i] in topk[i] for i in range(30)])
        assert m.get() == ("top_k_accuracy_%d" % k, pytest.approx(expected))
    with pytest.raises(AssertionError, match="Accuracy"):
        mx.metric.TopKAccuracy(top_k=1)


def _counts(label, pred):
    p = pred.argmax(1)
    tp = int(((p == 1) & (label == 1)).sum())
    fp = int(((p == 1) & (label == 0)).sum())
    fn = int(((p == 0) & (label == 1)).sum())
    tn = int(((p == 0) & (label == 0)).sum())
    return tp, fp, fn, tn


def _f1(tp, fp, fn, tn):
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _mcc(tp, fp, fn, tn):
    den = 1.0
    for t in (tp + fp, tp + fn, tn + fp, tn + fn):
        den *= t if t else 1
    return (tp * tn - fp * fn) / math.sqrt(den)


@pytest.mark.parametrize("name,ref", [("f1", _f1), ("mcc", _mcc)])
def test_binary_metrics_macro_micro(rng, name, ref):
    batches = []
    for _ in range(4):
        label = rng.integers(0, 2, 15).astype(np.float32)
        batches.append((label, _probs(rng, 15, 2)))
    macro = mx.metric.create(name, average="macro")
    micro = mx.metric.create(name, average="micro")
    per_batch, total = [], np.zeros(4, int)
    for label, pred in batches:
        macro.update([nd(label)], [nd(pred)])
        micro.update([nd(label)], [nd(pred)])
        c = _counts(label, pred)
        per_batch.append(ref(*c))
        total += c
    assert macro.get()[1] == pytest.approx(np.mean(per_batch))
    assert micro.get()[1] == pytest.approx(ref(*total))
    assert micro.num_inst == 60 and macro.num_inst == 4


def test_binary_metrics_reject_multiclass():
    with pytest.raises(ValueError, match="binary"):
        mx.metric.F1().update([nd([0, 1, 2])], [nd(np.eye(3))])


def test_pcc_matches_confusion_matrix_formula(rng):
    k = 4
    label = rng.integers(0, k, 200)
    pred = _probs(rng, 200, k)
    cm = np.zeros((k, k))
    for p, t in zip(pred.argmax(1), label):
        cm[p, t] += 1
    num = sum(cm[a, a] * cm[b, c] - cm[a, b] * cm[c, a]
              for a in range(k) for b in range(k) for c in range(k))
    d1 = sum(cm[a, :].sum() * (cm.sum() - cm[a, :].sum()) for a in range(k))
    d2 = sum(cm[:, a].sum() * (cm.sum() - cm[:, a].sum()) for a in range(k))
    m = mx.metric.create("pcc")
    # split over updates of different sizes: the confusion matrix accumulates
    m.update([nd(label[:50])], [nd(pred[:50])])
    m.update([nd(label[50:])], [nd(pred[50:])])
    assert m.get()[1] == pytest.approx(num / math.sqrt(d1 * d2))
    # class indices as predictions give the same value
    m2 = mx.metric.PCC()
    m2.update([nd(label)], [nd(pred.argmax(1))])
    assert m2.get()[1] == pytest.approx(m.get()[1])


def test_pcc_equals_mcc_for_two_classes(rng):
    label = rng.integers(0, 2, 40).astype(np.float32)
    pred = _probs(rng, 40, 2)
    pcc, mcc = mx.metric.PCC(), mx.metric.MCC()
    pcc.update([nd(label)], [nd(pred)])
    mcc.update([nd(label)], [nd(pred)])
    assert pcc.get()[1] == pytest.approx(mcc.get()[1])


def test_pearson_macro_and_micro(rng):
    batches = [(rng.standard_normal((n, 3)), rng.standard_normal((n, 3))) for n in (4, 7, 5)]
    for lab, pr in batches:
        pr += lab
    macro = mx.metric.PearsonCorrelation()
    micro = mx.metric.create("pearsonr", average="micro")
    for lab, pr in batches:
        macro.update([nd(lab)], [nd(pr)])
        micro.update([nd(lab)], [nd(pr)])
    f32 = lambda a: np.float32(a).astype(np.float64).ravel()  # noqa: E731
    per = [np.corrcoef(f32(p), f32(l))[0, 1] for l, p in batches]
    assert macro.get()[1] == pytest.approx(np.mean(per))
    all_l = np.concatenate([f32(l) for l, _ in batches])
    all_p = np.concatenate([f32(p) for _, p in batches])
    assert micro.get()[1] == pytest.approx(np.corrcoef(all_p, all_l)[0, 1], rel=1e-9)
    # micro: local restarts at reset_local, global keeps everything
    micro.reset_local()
    assert math.isnan(micro.get()[1])
    lab, pr = batches[0]
    micro.update([nd(lab)], [nd(pr)])
    assert micro.get()[1] == pytest.approx(np.corrcoef(f32(pr), f32(lab))[0, 1])
    all_l = np.concatenate([all_l, f32(lab)])
    all_p = np.concatenate([all_p, f32(pr)])
    assert micro.get_global()[1] == pytest.approx(np.corrcoef(all_p, all_l)[0, 1], rel=1e-9)


def test_regression_metrics(rng):
    lab = rng.standard_normal((10, 2)).astype(np.float32)
    pred = rng.standard_normal((10, 2)).astype(np.float32)
    lab2 = rng.standard_normal(6).astype(np.float32)
    pred2 = rng.standard_normal(6).astype(np.float32)
    refs = {"mae": lambda l, p: np.abs(l - p).mean(),
            "mse": lambda l, p: ((l - p) ** 2).mean(),
            "rmse": lambda l, p: np.sqrt(((l - p) ** 2).mean())}
    for name, f in refs.items():
        m = mx.metric.create(name)
        m.update([nd(lab), nd(lab2)], [nd(pred), nd(pred2)])
        # one value per (label, pred) pair, averaged over pairs
        assert m.get() == (name, pytest.approx((f(lab, pred) + f(lab2, pred2)) / 2, rel=1e-6))
        assert m.num_inst == 2


def test_cross_entropy_nll_perplexity(rng):
    pred = _probs(rng, 16, 5)
    label = rng.integers(0, 5, 16)
    p = pred[np.arange(16), label].astype(np.float64)
    for name, eps in (("ce", 1e-12), ("nll_loss", 1e-12)):
        m = mx.metric.create(name)
        m.update([nd(label)], [nd(pred)])
        assert m.get()[1] == pytest.approx(np.mean(-np.log(p + eps)), rel=1e-6)
    ce = mx.metric.CrossEntropy(eps=0.5)
    ce.update([nd(label)], [nd(pred)])
    assert ce.get()[1] == pytest.approx(np.mean(-np.log(p + 0.5)), rel=1e-6)
    perp = mx.metric.Perplexity(ignore_label=None)
    perp.update([nd(label)], [nd(pred)])
    assert perp.get() == ("perplexity", pytest.approx(np.exp(-np.log(p).mean()), rel=1e-5))
    perp = mx.metric.Perplexity(ignore_label=2)
    perp.update([nd(label)], [nd(pred)])
    keep = label != 2
    assert perp.get()[1] == pytest.approx(np.exp(-np.log(p[keep]).sum() / keep.sum()), rel=1e-5)
    # axis: classes along axis 1 of a 3-D prediction
    pred3 = _probs(rng, 6, 3).reshape(2, 3, 3)
    lab3 = rng.integers(0, 3, (2, 3))
    m = mx.metric.Perplexity(ignore_label=None, axis=-1)
    m.update([nd(lab3)], [nd(pred3)])
    q = np.take_along_axis(pred3, lab3[..., None], -1).ravel()
    assert m.get()[1] == pytest.approx(np.exp(-np.log(q).mean()), rel=1e-5)


def test_loss_metrics(rng):
    a = rng.random((3, 4)).astype(np.float32)
    b = rng.random(5).astype(np.float32)
    for cls in (mx.metric.Loss, mx.metric.Torch, mx.metric.Caffe):
        m = cls()
        m.update(None, [nd(a), nd(b)])
        assert m.get()[1] == pytest.approx((a.sum() + b.sum()) / 17, rel=1e-6)
        m2 = cls()
        m2.update(None, nd(a))             # a single array is accepted
        assert m2.get()[1] == pytest.approx(a.mean(), rel=1e-6)
    assert mx.metric.Torch().name == "torch" and mx.metric.Caffe().name == "caffe"


# ---- global vs local ----------------------------------------------------------------------
def _pair(kind, rng):
    if kind == "same":
        return nd(rng.random((10, 10))), nd(rng.random((10, 10)))
    n, k = 10, (10 if kind == "c10" else 2)
    pred = nd(_probs(rng, n, k))
    label = nd(np.array([0] * (n // 2) + [1] * (n - n // 2), np.float32))
    return pred, label


@pytest.mark.parametrize("metric,kwargs,kind", [
    ("acc", {}, "c10"), ("TopKAccuracy", {"top_k": 3}, "c10"), ("f1", {}, "c2"),
    ("f1", {"average": "micro"}, "c2"), ("mcc", {}, "c2"), ("mcc", {"average": "micro"}, "c2"),
    ("perplexity", {"ignore_label": -1}, "c10"), ("pearsonr", {}, "same"),
    ("pearsonr", {"average": "micro"}, "same"), ("pcc", {}, "c2"), ("nll_loss", {}, "c10"),
    ("loss", {}, "c10"), ("ce", {}, "c10"), ("mae", {}, "same"), ("mse", {}, "same"),
    ("rmse", {}, "same"), (["acc", "f1"], {}, "c2")])
def test_global_stats_survive_reset_local(rng, metric, kwargs, kind):
    def pair():
        if kind == "same":
            return _pair("same", rng)[::-1]
        pred, label = _pair(kind, rng)
        return label, pred
    m1 = mx.metric.create(metric, **kwargs)
    m2 = deepcopy(m1)
    for _ in range(6):
        label, pred = pair()
        m1.update([label], [pred])
        m1.reset_local()
        m2.update([label], [pred])
    g, v = m1.get_global(), m2.get()
    assert g[0] == v[0]
    np.testing.assert_allclose(np.asarray(g[1], np.float64), np.asarray(v[1], np.float64),
                               rtol=1e-12)
    # after reset_local only the newest update counts locally
    m1.reset_local()
    m2.reset()
    label, pred = pair()
    m1.update([label], [pred])
    m1.reset_local()
    label, pred = pair()
    m1.update([label], [pred])
    m2.update([label], [pred])
    np.testing.assert_allclose(np.asarray(m1.get()[1], np.float64),
                               np.asarray(m2.get()[1], np.float64), rtol=1e-12)


def test_fresh_metric_is_nan_and_reset_clears():
    for name in ("acc", "f1", "mcc", "mae", "pcc", "pearsonr", "loss"):
        m = mx.metric.create(name)
        assert math.isnan(m.get()[1]) and math.isnan(m.get_global()[1])
    m = mx.metric.Accuracy()
    m.update([nd([0, 1])], [nd([[1, 0], [1, 0]])])
    assert m.get()[1] == 0.5
    m.reset()
    assert math.isnan(m.get()[1]) and math.isnan(m.get_global()[1])


# ---- create / registry / config -----------------------------------------------------------
def test_create_names_aliases_lists_callables():
    assert isinstance(mx.metric.create("acc"), mx.metric.Accuracy)
    assert isinstance(mx.metric.create("ACCURACY"), mx.metric.Accuracy)
    assert isinstance(mx.metric.create("ce"), mx.metric.CrossEntropy)
    assert isinstance(mx.metric.create("nll_loss"), mx.metric.NegativeLogLikelihood)
    assert isinstance(mx.metric.create("top_k_acc", top_k=2), mx.metric.TopKAccuracy)
    assert isinstance(mx.metric.create("pearsonr"), mx.metric.PearsonCorrelation)
    assert isinstance(mx.metric.create("composite"), mx.metric.CompositeEvalMetric)
    m = mx.metric.Accuracy()
    assert mx.metric.create(m) is m
    comp = mx.metric.create(["acc", mx.metric.F1(), "rmse"])
    assert [c.name for c in comp.metrics] == ["accuracy", "f1", "rmse"]

    def my_feval(label, pred):
        return float(np.abs(label - pred).sum())
    c = mx.metric.create(my_feval)
    assert isinstance(c, mx.metric.CustomMetric) and c.name == "my_feval"
    assert mx.metric.create(lambda l, p: 0.0).name == "custom(<lambda>)"
    with pytest.raises(ValueError, match="not registered"):
        mx.metric.create("no_such_metric")
    with pytest.raises(ValueError, match="already an instance"):
        mx.metric.create(m, 3)


def test_config_round_trip():
    for args, kwargs in ((("acc",), {"axis": 0}), (("f1",), {"average": "micro"}),
                         (("mcc",), {}), (("perplexity", -1), {}), (("pearsonr",), {}),
                         (("pcc",), {}), (("nll_loss",), {}), (("loss",), {}),
                         ((["acc", "f1"],), {})):
        m = mx.metric.create(*args, **kwargs)
        text = json.dumps(m.get_config())
        m2 = mx.metric.create(text)
        assert type(m2) is type(m) and m2.get_config() == m.get_config()
        m3 = mx.metric.create(m.get_config())          # a dict works too
        assert m3.get_config() == m.get_config()
    assert mx.metric.create('["acc", {"axis": 0}]').axis == 0
    f1 = mx.metric.create(json.dumps(mx.metric.F1(average="micro").get_config()))
    assert f1.average == "micro"
    with pytest.raises(NotImplementedError):
        mx.metric.CustomMetric(lambda l, p: 0).get_config()


def test_register_and_alias_user_metric():
    @mx.metric.register
    @mx.metric.alias("h3_always_one")
    class H3AlwaysOne(mx.metric.EvalMetric):
        def __init__(self, name="one", **kw):
            super().__init__(name, **kw)

        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += len(preds)

    for name in ("h3alwaysone", "H3_ALWAYS_ONE"):
        m = mx.metric.create(name)
        assert isinstance(m, H3AlwaysOne)
        m.update([nd([1])], [nd([1])])
        assert m.get() == ("one", 1.0)
        # no global stats: get_global is get
        assert m.get_global() == m.get()
    with pytest.raises(TypeError):
        mx.metric.register(int)


# ---- inputs and errors ----------------------------------------------------------------------
def test_label_shape_errors():
    m = mx.metric.Accuracy()
    with pytest.raises(ValueError, match="Shape of labels 2 does not match shape of "
                                         "predictions 1"):
        m.update([nd([0]), nd([1])], [nd([[1, 0]])])
    with pytest.raises(ValueError, match="does not match"):
        mx.metric.Accuracy().update([nd([0, 1, 1])], [nd([[1, 0], [0, 1]])])
    with pytest.raises(ValueError, match="does not match"):
        mx.metric.PearsonCorrelation().update([nd([1, 2, 3])], [nd([1, 2])])
    lab, pred = mx.metric.check_label_shapes(nd([1, 2]), nd([3, 4]), wrap=True)
    assert isinstance(lab, list) and isinstance(pred, list)
    with pytest.raises(ValueError):
        mx.metric.check_label_shapes(nd([[1, 2]]), nd([[1], [2]]), shape=True)


def test_numpy_and_single_array_inputs():
    pred = np.array([[0.3, 0.7], [1., 0.], [0.4, 0.6], [0.9, 0.1]], np.float32)
    label = np.array([0, 1, 1, 0], np.float32)
    for name in ("acc", "f1", "mcc", "ce", "nll_loss", "pcc", "perplexity"):
        args = (None,) if name == "perplexity" else ()
        a = mx.metric.create(name, *args)
        b = mx.metric.create(name, *args)
        a.update([label], [pred])
        b.update([nd(label)], [nd(pred)])
        assert not math.isnan(a.get()[1]), name
        assert a.get()[1] == pytest.approx(b.get()[1]), name
    m = mx.metric.create("mse")
    p = nd([[1, 2, 3, 4]])
    m.update(p + 0.1, p)
    assert m.get()[1] == pytest.approx(0.01, rel=1e-5)


def test_custom_metric_tuple_and_extra_outputs():
    def summed(label, pred):
        return float(np.abs(label - pred).sum()), label.size
    m = mx.metric.CustomMetric(summed, name="abs")
    m.update([nd([1, 2]), nd([3])], [nd([1, 4]), nd([0])])
    assert m.get() == ("abs", pytest.approx(5.0 / 3))
    assert m.get_global()[1] == pytest.approx(5.0 / 3)
    # allow_extra_outputs: more predictions than labels is fine (pairs are zipped)
    e = mx.metric.np(lambda l, p: float((l == p).mean()), allow_extra_outputs=True)
    e.update([nd([1, 2])], [nd([1, 0]), nd([7, 7])])
    assert e.get()[1] == 0.5
    with pytest.raises(ValueError):
        mx.metric.np(lambda l, p: 0.0).update([nd([1])], [nd([1]), nd([2])])


def test_update_dict_and_composite():
    m = mx.metric.Accuracy(output_names=["out1"], label_names=["lab1"])
    preds = OrderedDict([("out0", nd([[0, 1], [0, 1]])), ("out1", nd([[1, 0], [1, 0]]))])
    labels = OrderedDict([("lab0", nd([1, 1])), ("lab1", nd([0, 1]))])
    m.update_dict(labels, preds)
    assert m.get()[1] == 0.5
    comp = mx.metric.CompositeEvalMetric(metrics=["acc", "ce"], output_names=["out1"],
                                         label_names=["lab1"])
    comp.update_dict(labels, OrderedDict([("out1", nd([[0.9, 0.1], [0.2, 0.8]])),
                                          ("out0", nd([[0.1, 0.9], [0.1, 0.9]]))]))
    names, values = comp.get()
    assert names == ["accuracy", "cross-entropy"]
    assert values[0] == 1.0
    assert values[1] == pytest.approx(-(np.log(0.9) + np.log(0.8)) / 2, rel=1e-6)
    assert comp.get_name_value() == list(zip(names, values))
    assert comp.get_global_name_value() == list(zip(names, values))
    assert comp.get_metric(1).name == "cross-entropy"
    with pytest.raises(ValueError, match="out of range"):
        comp.get_metric(5)
    assert "accuracy" in str(comp)


def test_average_is_validated():
    with pytest.raises(ValueError, match="average"):
        mx.metric.F1(average="weighted")
