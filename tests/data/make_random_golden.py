"""Writes tests/data/random_golden.npz with MXNet 1.9.1 (run with the oracle's python).

MXNet's random streams are its own, so the fixture records semantics, not numbers:
- sample_multinomial(get_prob=True): MXNet's samples, log probabilities and the gradient of
  sum(head * logprob) with respect to the probabilities (mxc's _backward_sample_multinomial fed
  MXNet's samples must give the same gradient; the log probabilities must be log p[sample]);
- Dropout in training: MXNet's output and input gradient for a head, from which the test checks
  that out = x * mask / (1 - p) and grad = head * mask / (1 - p) with mask in {0, 1}.
"""
import os

import mxnet as mx
import numpy as np

rng = np.random.RandomState(0)
out = {}
p = rng.uniform(0.1, 1.0, size=(3, 5)).astype(np.float32)
p /= p.sum(axis=1, keepdims=True)
data = mx.nd.array(p)
data.attach_grad()
head = rng.standard_normal((3, 4)).astype(np.float32)
with mx.autograd.record():
    s, lp = mx.nd.random.multinomial(data, shape=4, get_prob=True)
lp.backward(mx.nd.array(head))
out.update(mn_p=p, mn_head=head, mn_sample=s.asnumpy(), mn_logprob=lp.asnumpy(),
           mn_grad=data.grad.asnumpy())

for name, prob, axes in [("d1", 0.3, ()), ("d2", 0.5, (1,))]:
    x = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(np.float32)
    g = rng.standard_normal((2, 3, 4)).astype(np.float32)
    xx = mx.nd.array(x)
    xx.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(xx, p=prob, axes=axes)
    y.backward(mx.nd.array(g))
    out.update({f"{name}_x": x, f"{name}_head": g, f"{name}_p": np.float32(prob),
                f"{name}_axes": np.array(axes, np.int64), f"{name}_y": y.asnumpy(),
                f"{name}_grad": xx.grad.asnumpy()})

np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_golden.npz"),
                    **out)
