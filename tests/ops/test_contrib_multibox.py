"""SSD's multibox operators (MultiBoxPrior, MultiBoxTarget, MultiBoxDetection) against what
MXNet 1.9.1 computed (tests/data/make_contrib_multibox_golden.py), through mx.nd.contrib,
mx.sym.contrib and mx.npx, with their errors and (zero) gradients."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data"))
from make_contrib_multibox_golden import DETECT_CASES, PRIOR_CASES, TARGET_CASES  # noqa: E402

G = np.load(os.path.join(HERE, "..", "data", "contrib_multibox_golden.npz"))


def _ins(name, n):
    return [G[f"{name}/in{i}"] for i in range(n)]


def _check_detection(got, want):
    # class ids and suppression decisions exactly; decoded coordinates to float32 rounding
    np.testing.assert_array_equal(got[..., 0], want[..., 0])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(PRIOR_CASES))
def test_multibox_prior_matches_mxnet(name):
    out = mx.nd.contrib.MultiBoxPrior(mx.nd.array(G[f"{name}/in0"]), **PRIOR_CASES[name])
    np.testing.assert_allclose(out.asnumpy(), G[f"{name}/out0"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(TARGET_CASES))
def test_multibox_target_matches_mxnet(name):
    params = TARGET_CASES[name][0]
    loc, mask, cls = mx.nd.contrib.MultiBoxTarget(*[mx.nd.array(x) for x in _ins(name, 3)],
                                                  **params)
    np.testing.assert_array_equal(cls.asnumpy(), G[f"{name}/out2"])
    np.testing.assert_array_equal(mask.asnumpy(), G[f"{name}/out1"])
    np.testing.assert_allclose(loc.asnumpy(), G[f"{name}/out0"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(DETECT_CASES))
def test_multibox_detection_matches_mxnet(name):
    out = mx.nd.contrib.MultiBoxDetection(*[mx.nd.array(x) for x in _ins(name, 3)],
                                          **DETECT_CASES[name][0])
    _check_detection(out.asnumpy(), G[f"{name}/out0"])


def test_multibox_target_small_case_by_hand():
    # MXNet's own unit test: anchor 0 overlaps the label (IoU 0.2), anchor 1 does not; with
    # negative mining (ratio 3) the one unmatched anchor becomes a negative
    anchors = mx.nd.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]).reshape((1, -1, 4))
    cls_pred = mx.nd.array(np.arange(10)).reshape((1, -1, 2))
    label = mx.nd.array([1, 0.1, 0.1, 0.5, 0.6]).reshape((1, -1, 5))
    loc, mask, cls = mx.nd.contrib.MultiBoxTarget(anchors, label, cls_pred, overlap_threshold=0.5,
                                                  negative_mining_ratio=3,
                                                  negative_mining_thresh=0.4)
    # the encoding by hand: centres (0.2, 0.3) vs (0.3, 0.35), sizes 0.2 x 0.2 vs 0.4 x 0.5
    want = [0.1 / 0.2 / 0.1, 0.05 / 0.2 / 0.1, np.log(2) / 0.2, np.log(2.5) / 0.2]
    np.testing.assert_allclose(loc.asnumpy()[0, :4], want, rtol=1e-5)
    assert loc.asnumpy()[0, 4:].tolist() == [0] * 4
    assert mask.asnumpy().tolist() == [[1, 1, 1, 1, 0, 0, 0, 0]]
    assert cls.asnumpy().tolist() == [[2, 0]]


def test_multibox_detection_by_hand():
    # two anchors predicting the same box of class 1: the lower score is suppressed, unless
    # its class differs; a third below the threshold is background
    anchors = mx.nd.array([[[0.1, 0.1, 0.5, 0.5], [0.12, 0.1, 0.52, 0.5], [0.6, 0.6, 0.9, 0.9]]])
    loc = mx.nd.zeros((1, 12))
    prob = mx.nd.array([[[0.1, 0.2, 0.995], [0.8, 0.7, 0.003], [0.1, 0.1, 0.002]]])
    out = mx.nd.contrib.MultiBoxDetection(prob, loc, anchors).asnumpy()[0]
    np.testing.assert_allclose(out[0], [0, 0.8, 0.1, 0.1, 0.5, 0.5], rtol=1e-6)
    assert out[1, 0] == -1 and out[1, 1] == np.float32(0.7)     # suppressed, values kept
    assert out[2].tolist() == [-1] * 6                          # background: not a detection
    prob2 = mx.nd.array([[[0.1, 0.2, 0.995], [0.8, 0.1, 0.003], [0.1, 0.7, 0.002]]])
    out2 = mx.nd.contrib.MultiBoxDetection(prob2, loc, anchors).asnumpy()[0]
    assert out2[:2, 0].tolist() == [0, 1]                       # other class: kept
    out3 = mx.nd.contrib.MultiBoxDetection(prob2, loc, anchors, force_suppress=True).asnumpy()[0]
    assert out3[:2, 0].tolist() == [0, -1]


def test_multibox_symbols_bind_like_ndarray():
    name = "target_mining"
    a, l, c = (mx.sym.var(v) for v in ("a", "l", "c"))
    sym = mx.sym.contrib.MultiBoxTarget(a, l, c, name="t", **TARGET_CASES[name][0])
    assert sym.list_outputs() == ["t_loc_target", "t_loc_mask", "t_cls_target"]
    args = dict(zip(("a", "l", "c"), (mx.nd.array(x) for x in _ins(name, 3))))
    outs = sym.bind(mx.cpu(), args=args).forward()
    np.testing.assert_array_equal(outs[2].asnumpy(), G[f"{name}/out2"])
    np.testing.assert_allclose(outs[0].asnumpy(), G[f"{name}/out0"], rtol=1e-5, atol=1e-6)
    name = "detect_force_topk"
    det = mx.sym.contrib.MultiBoxDetection(c, l, a, name="d", **DETECT_CASES[name][0])
    assert det.list_arguments() == ["c", "l", "a"]
    args = dict(zip(("c", "l", "a"), (mx.nd.array(x) for x in _ins(name, 3))))
    _check_detection(det.bind(mx.cpu(), args=args).forward()[0].asnumpy(), G[f"{name}/out0"])
    # a round trip through MXNet's JSON keeps the attributes
    back = mx.sym.load_json(det.tojson())
    _check_detection(back.bind(mx.cpu(), args=args).forward()[0].asnumpy(), G[f"{name}/out0"])


def test_multibox_npx_names():
    np_ = mx.np
    data = np_.zeros((1, 2, 5, 7))
    anchors = mx.npx.multibox_prior(data, sizes=(0.6, 0.3), ratios=(1.0, 2.0, 0.5))
    assert isinstance(anchors, np_.ndarray)
    np.testing.assert_allclose(anchors.asnumpy(), G["prior_sizes_ratios/out0"], rtol=1e-6,
                               atol=1e-6)
    name = "target_default"
    outs = mx.npx.multibox_target(*[np_.array(x) for x in _ins(name, 3)])
    assert all(isinstance(o, np_.ndarray) for o in outs)
    np.testing.assert_array_equal(outs[2].asnumpy(), G[f"{name}/out2"])
    name = "detect_default"
    out = mx.npx.multibox_detection(*[np_.array(x) for x in _ins(name, 3)])
    _check_detection(out.asnumpy(), G[f"{name}/out0"])
    # the symbolic npx that hybridized numpy blocks call (F.npx)
    from mxc.numpy_extension import _symbol
    s = _symbol.npx.multibox_prior(mx.sym.var("x"), sizes=(0.5,))
    assert s.infer_shape(x=(1, 3, 2, 2))[1] == [(1, 4, 4)]


def test_multibox_float64_agrees_with_float32():
    # MXNet runs these legacy operators on float32 only; mxc also takes float64 (a case
    # without IoUs that tie in float32 but not in float64: those may match differently)
    name = "target_mining"
    ins64 = [mx.nd.array(x, dtype="float64") for x in _ins(name, 3)]
    outs = mx.nd.contrib.MultiBoxTarget(*ins64, **TARGET_CASES[name][0])
    assert outs[0].dtype == np.float64
    np.testing.assert_array_equal(outs[2].asnumpy(), G[f"{name}/out2"])
    np.testing.assert_allclose(outs[0].asnumpy(), G[f"{name}/out0"], rtol=1e-5, atol=1e-5)
    name = "detect_high_nms"
    ins64 = [mx.nd.array(x, dtype="float64") for x in _ins(name, 3)]
    out = mx.nd.contrib.MultiBoxDetection(*ins64, **DETECT_CASES[name][0])
    assert out.dtype == np.float64
    _check_detection(out.asnumpy(), G[f"{name}/out0"])


def test_multibox_gradients_are_zero():
    name = "detect_default"
    ins = [mx.nd.array(x) for x in _ins(name, 3)]
    for x in ins:
        x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.MultiBoxDetection(*ins)
        loss = (out * out).sum()
    loss.backward()
    assert all(not x.grad.asnumpy().any() for x in ins)
    ins = [mx.nd.array(x) for x in _ins("target_default", 3)]
    ins[2].attach_grad()
    with mx.autograd.record():
        loc, _, _ = mx.nd.contrib.MultiBoxTarget(*ins)
    loc.backward(mx.nd.ones(loc.shape))
    assert not ins[2].grad.asnumpy().any()


def test_multibox_bad_inputs():
    anchors = mx.nd.zeros((1, 4, 4))
    with pytest.raises(MXNetError, match="MultiBoxTarget: cls_pred"):
        mx.nd.contrib.MultiBoxTarget(anchors, mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 3, 5)))
    with pytest.raises(MXNetError, match="MultiBoxTarget: label"):
        mx.nd.contrib.MultiBoxTarget(anchors, mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2, 3, 4)))
    with pytest.raises(MXNetError, match="variances"):
        mx.nd.contrib.MultiBoxTarget(anchors, mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 3, 4)),
                                     variances=(0.1, 0.2))
    bad = mx.nd.array([[[-1, 0.1, 0.1, 0.2, 0.2]]])           # padding row with coordinates
    with pytest.raises(MXNetError, match="label row 0 has class -1"):
        mx.nd.contrib.MultiBoxTarget(anchors, bad, mx.nd.zeros((1, 3, 4)))[0].wait_to_read()
    with pytest.raises(MXNetError, match="MultiBoxDetection: loc_pred"):
        mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2, 15)), anchors)
    with pytest.raises(MXNetError, match="MultiBoxDetection"):
        mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 20)), anchors)
    with pytest.raises(MXNetError, match="MultiBoxPrior: data must be 4-D"):
        mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((2, 3, 4)))


_SUPPRESS_THREADS = r"""
import os, sys
import numpy as np
import mxc as mx
from mxc._core.opcall import kernel_threads
from mxc.ops.cpu import _multibox
if "libgomp" not in open("/proc/self/maps").read():
    print("no-openmp"); sys.exit()
rs = np.random.RandomState(0)
rows = np.zeros((8, 50, 6), np.float32)
rows[:, :, 0] = rs.randint(0, 3, (8, 50))
rows[:, :, 1] = rs.rand(8, 50)
rows[:, :, 2:4] = rs.rand(8, 50, 2) * 0.5
rows[:, :, 4:] = rows[:, :, 2:4] + 0.3
keep = np.full(8, 50, np.int64)
before = len(os.listdir("/proc/self/task"))
n = kernel_threads(2) if sys.argv[1] == "kernel-threads" else 2
_multibox.suppress(rows, keep, 0.5, False, n)
print(n, len(os.listdir("/proc/self/task")) - before)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
@pytest.mark.parametrize("how", ["kernel-threads", "two"])
def test_suppression_forks_no_team_outside_the_engine_workers(how):
    # the Python thread is not an engine worker: the suppression it runs takes one thread
    # (a team forked there would slow every team after it, mxc/_core/engine.pyx); told to
    # use two, it forks one, so the check can fail
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root, MXNET_CPU_WORKER_NTHREADS="1", MXC_FOLLOW_LOAD="0")
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", _SUPPRESS_THREADS, how], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    if out.stdout.strip() == "no-openmp":
        pytest.skip("kernels built without OpenMP")
    n, added = map(int, out.stdout.split())
    if how == "kernel-threads":
        assert (n, added) == (1, 0), out.stdout
    else:
        assert added == 1, out.stdout
