"""Operators whose kernel is numpy code run on the host, queued on the engine like any kernel.

``host_forward(name, compute)`` gives an OpDef ``forward``: when the operator is pushed, one
engine operation is queued that reads the inputs' storage and writes the outputs' storage;
when it runs (on a worker, after every earlier write to the inputs), ``compute(attrs, *arrays)``
gets numpy views of the inputs and returns the outputs (one array or a sequence), which are
copied into the planned outputs. Because it is an ordinary kernel-like forward with an
``infer``, such operators take part in planned graphs (the executor, CachedOp) and in autograd
like any other; their gradients are usually ``_backward_<name>`` operators of the same kind.

Used for detection and sampling operators (ROIAlign, PSROIPooling, Proposal, ...) whose loops
are irregular and whose speed matters little next to the networks around them.
"""
import numpy as np

from .._core import engine as _engine

__all__ = ["host_forward"]


def _view(x):
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    return x._numpy_view()


def host_forward(name, compute):
    def forward(a, inputs, outputs):
        writes, seen = [], set()
        for o in outputs:
            c = o._chunk
            if id(c) not in seen:
                seen.add(id(c))
                writes.append(c)
        reads = []
        for x in inputs:
            c = x._chunk
            if id(c) not in seen:
                seen.add(id(c))
                reads.append(c)
        ins = list(inputs)
        outs = list(outputs)

        def run():
            xs = [_view(x) for x in ins]
            res = compute(a, *xs)
            if isinstance(res, np.ndarray) or np.isscalar(res):
                res = (res,)
            if len(res) != len(outs):
                raise RuntimeError(f"{name}: computed {len(res)} output(s), expected {len(outs)}")
            for o, r in zip(outs, res):
                if o.size:
                    _view(o)[...] = np.asarray(r).reshape(o.shape)
        run.__name__ = name
        _engine.push(run, reads, writes, name=name)
    return forward
