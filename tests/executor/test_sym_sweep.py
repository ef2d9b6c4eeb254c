"""Every operator the operator tests call, once through ``mx.nd`` + autograd and once through
``mx.sym`` + ``bind``: outputs and input gradients must agree.

The calls (operator, attributes, inputs) were recorded from the operator test suite by
tests/data/make_sym_sweep_cases.py (with hand-written calls for operators it misses); the
reference is computed here, imperatively. Operators that draw random numbers run with the same
seed both ways and must agree value for value."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.ndarray.register import invoke
from mxc.ops import registry

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
with open(os.path.join(DATA, "sym_sweep_cases.json")) as _f:
    CASES = json.load(_f)
_ARRAYS = np.load(os.path.join(DATA, "sym_sweep_cases.npz"))

# operators the sweep cannot take, and why
EXCLUDED = {
    "Custom": "runs a Python operator registered by a test (covered by tests/ops/test_custom.py "
              "and tests/symbol)",
    "split_v2": "mx.sym.split_v2 is MXNet's Python wrapper that builds a _split_v2 node; "
                "_split_v2 is in the sweep",
    "reset_arrays": "has no outputs (it zeroes its inputs in place): nothing to bind",
    "_sparse_retain": "takes a row_sparse array only (tests/executor/test_sparse_bind.py)",
    "_contrib_getnnz": "takes a CSR array only (tests/executor/test_sparse_bind.py)",
    "_rnn_param_concat": "Concat's definition under the name MXNet exports fused RNN layers' "
                         "parameters with (Concat is swept; tests/gluon/test_rnn checks the "
                         "layers)",
    "_softmax_ce_rows": "Gluon's SoftmaxCrossEntropyLoss calls it imperatively only (a hybridized "
                        "loss keeps MXNet's graph); tests/gluon/test_loss.py checks the two agree",
    "_foreach": "carries a subgraph made by mx.sym.contrib.foreach (tests/symbol/test_control_flow.py)",
    "_while_loop": "carries subgraphs made by mx.sym.contrib.while_loop "
                   "(tests/symbol/test_control_flow.py)",
    "_cond": "carries subgraphs made by mx.sym.contrib.cond (tests/symbol/test_control_flow.py)",
    "_rnn_lstm_cell": "RNN's fused LSTM gate step (not an MXNet operator): RNN is swept; "
                      "tests/ops/test_rnn.py checks it against numpy and central differences",
    "_rnn_gru_cell": "RNN's fused GRU gate step (not an MXNet operator): RNN is swept; "
                     "tests/ops/test_rnn.py checks it against numpy and central differences",
    "_contrib_backward_hawkesll": "_contrib_hawkesll's gradient under MXNet's name for it: "
                                  "_contrib_hawkesll is swept with its gradient "
                                  "(tests/ops/test_contrib_hawkesll.py)",
    "_rnn_lstm_layer": "RNN's LSTM recurrence (not an MXNet operator): RNN is swept; "
                       "tests/ops/test_rnn.py checks it and its gradients against numpy",
}


def _inputs(i, case):
    return [_ARRAYS[f"c{i}_{j}"] for j in range(len(case["dtypes"]))]


def _is_float(a):
    return np.dtype(a.dtype).kind == "f"


def _tolerance(dtypes):
    return (2e-3, 2e-3) if "float16" in dtypes else (1e-5, 1e-6)


def _imperative(op, attrs, arrays, head_seed, differentiable):
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    if not differentiable:
        with mx.autograd.train_mode():       # as the executor's forward(is_train=True)
            outs = invoke(op, xs, dict(attrs))
        return [o.asnumpy() for o in (outs if isinstance(outs, list) else [outs])], None, None
    for x in xs:
        if _is_float(x):
            x.attach_grad()
    with mx.autograd.record():
        outs = invoke(op, xs, dict(attrs))
    outs = outs if isinstance(outs, list) else [outs]
    rng = np.random.RandomState(head_seed)
    heads = [mx.nd.array(rng.uniform(0.5, 1.5, o.shape), dtype=o.dtype) for o in outs]
    mx.autograd.backward(outs, head_grads=heads)
    return ([o.asnumpy() for o in outs], [h.asnumpy() for h in heads],
            [x.grad.asnumpy() if _is_float(x) else None for x in xs])


def _bound(op, attrs, arrays, heads, differentiable):
    names = [f"in{j}" for j in range(len(arrays))]
    sym = getattr(mx.sym, op.name)(*[mx.sym.var(n) for n in names], **attrs)
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    by_name = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, arrays)}
    args = {n: by_name[n] for n in arg_names}
    aux = {n: by_name[n] for n in aux_names}
    grads = {n: mx.nd.zeros(a.shape, dtype=a.dtype) for n, a in args.items()
             if differentiable and _is_float(a)}
    req = {n: ("write" if n in grads else "null") for n in arg_names}
    ex = sym.bind(mx.cpu(), args=args, args_grad=grads or None, grad_req=req,
                  aux_states=aux or None)
    outs = ex.forward(is_train=True)
    got = [o.asnumpy() for o in outs]
    if not differentiable:
        return got, None
    ex.backward(out_grads=[mx.nd.array(h, dtype=h.dtype) for h in heads])
    return got, [grads[n].asnumpy() if n in grads else None for n in names]


def _differentiable(op, arrays):
    return (op.grad is not None or op.composite is not None) and not op.mutate \
        and op.differentiable and any(_is_float(a) for a in arrays)


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c["op"] for c in CASES])
def test_bound_graph_equals_imperative(i):
    case = CASES[i]
    op = registry.get(case["op"])
    arrays = _inputs(i, case)
    attrs = dict(case["attrs"])
    random = "random" in op.resources
    diff = _differentiable(op, arrays) and not random
    try:
        mx.random.seed(i)
        ref_out, heads, ref_grads = _imperative(op, attrs, arrays, i, diff)
    except Exception:
        # the recorded call may need autograd off (integer-only, non-differentiable outputs)
        diff = False
        mx.random.seed(i)
        ref_out, heads, ref_grads = _imperative(op, attrs, arrays, i, False)
    if diff and any(not _is_float(o) for o in ref_out):
        diff = False
        mx.random.seed(i)
        ref_out, heads, ref_grads = _imperative(op, attrs, arrays, i, False)
    mx.random.seed(i)
    got_out, got_grads = _bound(op, attrs, arrays, heads, diff)
    assert len(got_out) == len(ref_out), (op.name, len(got_out), len(ref_out))
    rtol, atol = _tolerance(case["dtypes"])
    for r, g in zip(ref_out, got_out):
        assert r.shape == g.shape and r.dtype == g.dtype, (op.name, r.shape, g.shape, r.dtype,
                                                         g.dtype)
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=op.name)
    if diff:
        for j, (r, g) in enumerate(zip(ref_grads, got_grads)):
            if r is not None:
                np.testing.assert_allclose(g, r, rtol=rtol, atol=atol,
                                           err_msg=f"{op.name}: gradient of input {j}")


def test_the_sweep_covers_every_operator():
    """Every operator but backward kernels (reached through their forward's gradient) is in
    the sweep or excluded above with its reason."""
    names = {registry.get(c["op"]).name for c in CASES}   # recorded under any alias
    public = {op.name for op in registry.all_ops() if not op.name.startswith("_backward_")}
    assert public - names == set(EXCLUDED), sorted(public - names)
    assert not names & set(EXCLUDED)
