"""CTCLoss: MXNet 1.9.1 goldens (loss and gradient), a brute-force sum over all alignments on
tiny cases, gradients against central differences, padding and length rules, float16, errors."""
import ast
import itertools
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ndarray.register import invoke
from mxc.ops import registry

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "ctc_golden.npz")


def _nd(a):
    a = np.asarray(a)
    return mx.nd.array(a, dtype=a.dtype)


def ctc(*arrays, name="CTCLoss", **kw):
    """CTCLoss through the registry (its optional inputs are left out as MXNet allows)."""
    return invoke(registry.get(name), [_nd(a) for a in arrays], dict(kw))


def _forward_all(op, ins, kw):
    """Every output of the op (the loss and the hidden gradient MXNet keeps for the backward)."""
    attrs = op.parse(dict(kw))
    shapes, dtypes = op.infer(attrs, [x.shape for x in ins], [x.dtype for x in ins])
    outs = [mx.nd.empty(s, dtype=d) for s, d in zip(shapes, dtypes)]
    op.forward(attrs, ins, outs)
    return attrs, outs


def ctc_with_grad(*arrays, head=None, recording=True, **kw):
    """(loss, d sum(loss * head) / d data): through mx.autograd when `recording`, else from the
    OpDef's grad on the forward's outputs."""
    op = registry.get("CTCLoss")
    ins = [_nd(a) for a in arrays]
    if recording:
        ins[0].attach_grad()
        with mx.autograd.record():
            loss = invoke(op, ins, dict(kw))
        h = np.ones(loss.shape, loss.dtype) if head is None else head
        loss.backward(_nd(h.astype(loss.dtype)))
        return loss.asnumpy(), ins[0].grad.asnumpy()
    attrs, outs = _forward_all(op, ins, kw)
    loss = outs[0]
    h = np.ones(loss.shape, loss.dtype) if head is None else head
    g = op.grad(mx.nd, attrs, ins, outs, [_nd(h.astype(loss.dtype)), mx.nd.zeros_like(outs[1])])
    assert all(x is None for x in g[1:])
    return loss.asnumpy(), g[0].asnumpy()


def test_gradient_is_a_hidden_output(rng):
    x = _nd(rng.standard_normal((4, 2, 3)))
    label = _nd(np.array([[1, 2], [2, 0]], np.float64))
    dl, ll = _nd(np.array([4, 3], np.float32)), _nd(np.array([2, 1], np.int32))
    plain = mx.nd.CTCLoss(x, label, dl, ll, use_data_lengths=True, use_label_lengths=True)
    assert isinstance(plain, mx.nd.NDArray) and plain.shape == (2,)     # one visible output
    x.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(x, label, dl, ll, use_data_lengths=True, use_label_lengths=True)
    loss.backward()
    _, g = ctc_with_grad(x.asnumpy(), label.asnumpy(), np.array([4, 3], np.float32),
                         np.array([2, 1], np.int32), recording=False, use_data_lengths=True,
                         use_label_lengths=True)
    np.testing.assert_allclose(x.grad.asnumpy(), g, rtol=1e-15)
    np.testing.assert_allclose(loss.asnumpy(), plain.asnumpy(), rtol=1e-15)
    assert np.all(g[3:, 1] == 0)


def _log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def brute_force(x, labels, blank):
    """-log sum over every alignment (path over the alphabet) that collapses to `labels`."""
    T, A = x.shape
    lp = _log_softmax(x.astype(np.float64))
    total = 0.0
    for path in itertools.product(range(A), repeat=T):
        collapsed = [k for i, k in enumerate(path) if (i == 0 or k != path[i - 1]) and k != blank]
        if collapsed == list(labels):
            total += np.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_brute_force(blank_label, rng):
    T, N, A = 4, 4, 3
    x = rng.standard_normal((T, N, A))
    if blank_label == "first":
        label = np.array([[1, 2, 0], [2, 2, 0], [1, 0, 0], [1, 2, 1]], np.float64)
        blank, pad = 0, 0
    else:
        label = np.array([[0, 1, -1], [1, 1, -1], [-1, -1, -1], [0, 1, 0]], np.float64)
        blank, pad = 2, -1
    loss = ctc(x, label, blank_label=blank_label).asnumpy()
    for b in range(N):
        lab = [int(v) for v in label[b] if v != pad]
        np.testing.assert_allclose(loss[b], brute_force(x[:, b], lab, blank), rtol=1e-12)


def test_brute_force_lengths(rng):
    T, N, A = 5, 3, 3
    x = rng.standard_normal((T, N, A))
    label = np.array([[1, 2, 2], [2, 1, 0], [2, 1, 1]], np.int32)   # lengths, not padding
    dlen = np.array([5, 3, 4], np.float32)
    llen = np.array([3, 2, 1], np.int64)
    loss = ctc(x, label, dlen, llen, use_data_lengths=True, use_label_lengths=True).asnumpy()
    for b in range(N):
        ref = brute_force(x[:int(dlen[b]), b], list(label[b, :llen[b]]), 0)
        np.testing.assert_allclose(loss[b], ref, rtol=1e-12)
    # the public function with every input given
    got = mx.nd.CTCLoss(_nd(x), _nd(label), _nd(dlen), _nd(llen), use_data_lengths=True,
                        use_label_lengths=True).asnumpy()
    np.testing.assert_allclose(got, loss, rtol=1e-15)


def _numeric_grad(x, rest, head, kw, eps=1e-6):
    num = np.zeros_like(x)
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp.reshape(-1)[i] += eps
        xm.reshape(-1)[i] -= eps
        fp = float(np.dot(ctc(xp, *rest, **kw).asnumpy(), head))
        fm = float(np.dot(ctc(xm, *rest, **kw).asnumpy(), head))
        num.reshape(-1)[i] = (fp - fm) / (2 * eps)
    return num


@pytest.mark.parametrize("recording", [True, False])
@pytest.mark.parametrize("case", ["padded", "lengths"])
def test_grad_central_differences(case, recording, rng):
    T, N, A = 5, 3, 4
    x = rng.standard_normal((T, N, A))
    head = rng.uniform(0.5, 1.5, N)
    if case == "padded":
        rest, kw = [np.array([[1, 2, 0], [3, 3, 0], [2, 1, 3]], np.float64)], {}
    else:
        rest = [np.array([[0, 1, 2], [2, 2, 2], [1, 0, 0]], np.int32), np.array([4, 5, 2], np.int32),
                np.array([2, 2, 1], np.int32)]
        kw = dict(use_data_lengths=True, use_label_lengths=True, blank_label="last")
    _, g = ctc_with_grad(x, *rest, head=head, recording=recording, **kw)
    np.testing.assert_allclose(g, _numeric_grad(x, rest, head, kw), rtol=1e-6, atol=1e-8)
    if case == "lengths":     # frames past an item's data length get no gradient
        assert np.all(g[4:, 0] == 0) and np.all(g[2:, 2] == 0)


def _golden_cases():
    if not os.path.exists(GOLDEN):
        return []
    z = np.load(GOLDEN)
    return sorted({k.split("/")[0] for k in z.files})


@pytest.mark.parametrize("case", _golden_cases())
def test_golden_mxnet(case):
    z = np.load(GOLDEN)
    f = {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(case + "/")}
    kw = ast.literal_eval(str(f["kwargs"]))
    arrays = [f["data"], f["label"]] + [f[k] for k in ("data_lengths", "label_lengths") if k in f]
    loss, g = ctc_with_grad(*arrays, head=f["head"], **kw)
    np.testing.assert_allclose(loss, f["loss"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g, f["grad_data"], rtol=1e-4, atol=1e-6)
    # every alias runs the same operator
    for alias in ("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"):
        np.testing.assert_allclose(ctc(*arrays, name=alias, **kw).asnumpy(), f["loss"],
                                   rtol=1e-5, atol=1e-5)


def test_float16_and_dtypes(rng):
    x = rng.standard_normal((6, 3, 5)).astype(np.float32)
    label = np.array([[1, 2, 0], [3, 3, 1], [4, 0, 0]], np.int64)
    ref, gref = ctc_with_grad(x, label)
    for dt, tol in ((np.float16, 2e-2), (np.float64, 1e-5)):
        loss, g = ctc_with_grad(x.astype(dt), label)
        assert loss.dtype == dt and g.dtype == dt
        np.testing.assert_allclose(loss.astype(np.float32), ref, rtol=tol, atol=tol)
        np.testing.assert_allclose(g.astype(np.float32), gref, rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="CTCLoss: data must be float"):
        ctc(x.astype(np.int32), label)


def test_infeasible_and_empty(rng):
    x = rng.standard_normal((3, 2, 4))
    # item 0 needs 1 + 1 + 1 + 1 (repeat) = 4 frames > 3: loss 0 and no gradient (MXNet's rule)
    label = np.array([[1, 1, 2], [3, 0, 0]], np.float64)
    loss, g = ctc_with_grad(x, label)
    assert loss[0] == 0 and np.all(g[:, 0] == 0)
    assert loss[1] > 0 and np.any(g[:, 1] != 0)
    # a zero data length gives loss 0 as well
    loss = ctc(x, label, np.array([0, 3], np.float32), use_data_lengths=True).asnumpy()
    assert loss[0] == 0


def test_large_batch_matches_items(rng):
    T, N, A = 30, 17, 12
    x = rng.standard_normal((T, N, A)).astype(np.float32)
    label = rng.integers(1, A, size=(N, 8)).astype(np.float32)
    label[::3, 5:] = 0
    loss = ctc(x, label).asnumpy()
    for b in (0, 5, 16):
        one = ctc(x[:, b:b + 1], label[b:b + 1]).asnumpy()
        np.testing.assert_allclose(loss[b], one[0], rtol=1e-6)


def test_errors(rng):
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    label = np.array([[1, 2], [2, 0]], np.float32)
    with pytest.raises(ValueError, match="CTCLoss: data must have 3 dimensions"):
        ctc(x[0], label)
    with pytest.raises(ValueError, match="CTCLoss: the batch size"):
        ctc(x, label[:1])
    with pytest.raises(ValueError, match=r"Operator CTCLoss expects 3 inputs \(data, label, data_lengths\)"):
        ctc(x, label, use_data_lengths=True)
    with pytest.raises(ValueError, match="CTCLoss: data_lengths must have shape"):
        ctc(x, label, np.array([4, 4, 4], np.float32), use_data_lengths=True)
    with pytest.raises(ValueError, match="exceeds the sequence length"):
        ctc(x, np.ones((2, 5), np.float32))
    with pytest.raises(ValueError, match="blank_label"):
        ctc(x, label, blank_label="middle")
    with pytest.raises(MXNetError, match="CTCLoss: label.* is not a class index"):
        ctc(x, np.array([[1, 7], [2, 0]], np.float32)).asnumpy()
    with pytest.raises(MXNetError, match="CTCLoss: data_lengths.* is not a length"):
        ctc(x, label, np.array([5, 1], np.float32), use_data_lengths=True).asnumpy()


def test_no_second_order(rng):
    x, label = _nd(rng.standard_normal((3, 1, 3))), _nd(np.array([[1]], np.float32))
    x.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(x, label)
        with pytest.raises(MXNetError, match="CTCLoss: the gradient of its gradient"):
            mx.autograd.grad(loss, [x], create_graph=True)


def test_ctc_labels_are_truncated_to_integers_as_mxnet():
    """MXNet reads labels as integers (truncation), so a label nudged by a finite difference
    gives the same loss."""
    acts = np.random.RandomState(0).rand(3, 2, 5).astype(np.float32)
    lab = np.array([[2, 3, 0], [2, 0, 0]], np.float32)
    base = mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array(lab)).asnumpy()
    nudged = mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array(lab + 0.004)).asnumpy()
    np.testing.assert_array_equal(base, nudged)
    with pytest.raises(MXNetError):
        mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array([[7, 1, 0], [1, 0, 0]])).asnumpy()
