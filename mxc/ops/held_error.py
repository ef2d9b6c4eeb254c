"""Errors an operator finds while it runs, delivered as MXNet delivers them.

MXNet checks some arguments inside the kernel (a sampler's parameter values, a Python
CustomOp's forward): the call returns, the outputs carry the error, and the next wait on them
(``wait_to_read``, ``asnumpy``, ``waitall``) raises it as ``MXNetError``; operations pushed
later that read those outputs are skipped and pass the error on. ``hold_error`` gives mxc's
operators that behaviour for such checks: one engine operation that reads the inputs, writes
the outputs and fails with the given exception's message (mxc/_core/engine.pyx keeps it on the
written vars and clears it once a wait delivered it, as MXNet 1.9.1's ThreadedEngine does)."""
from .._core import engine as _engine

__all__ = ["hold_error"]


def hold_error(name, exc, inputs, outputs, also_writes=()):
    """Queue an operation named `name` that fails with `exc`'s message, reading `inputs` and
    writing `outputs` (NDArrays) and the engine Vars `also_writes`."""
    writes, seen = list(also_writes), set()
    for x in outputs:
        if id(x._chunk) not in seen:
            seen.add(id(x._chunk))
            writes.append(x._chunk)
    reads = []
    for x in inputs:
        if id(x._chunk) not in seen:
            seen.add(id(x._chunk))
            reads.append(x._chunk)
    message = str(exc)
    if message.startswith(name + ": "):      # the engine puts the name in front itself
        message = message[len(name) + 2:]

    def fail():
        raise type(exc)(message)
    _engine.push(fail, reads, writes, name=name)
