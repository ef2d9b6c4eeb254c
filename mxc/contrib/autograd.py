"""``mx.contrib.autograd``: MXNet's first (pre-1.0) autograd API, kept for old code.

It is a thin face over :mod:`mxc.autograd`: "training" here means recording *and* training mode
together (``set_is_training`` switches both, as MXNet 1.9.1 does), ``compute_gradient`` is
``backward``, and ``grad_and_loss``/``grad`` turn a function into one that returns gradients of
its (NDArray) arguments.
"""
import functools

from .. import autograd as _ag
from ..ndarray import NDArray, zeros_like

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]


def set_is_training(is_train):
    """Switch recording and training mode on or off together; returns the previous state
    (MXNet returns the previous *recording* state)."""
    _ag.set_training(is_train)
    return bool(_ag.set_recording(is_train))


class TrainingStateScope:
    """``with`` scope that sets the training state and restores it afterwards."""

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section():
    """Scope that records operators in training mode."""
    return TrainingStateScope(True)


def test_section():
    """Scope that neither records nor trains (e.g. evaluation inside a train_section)."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables whose gradients go into `gradients`."""
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """Gradients of `outputs` (a list; `out_grads` entries may be None for ones) into the marked
    variables' gradient arrays."""
    if not isinstance(outputs, (list, tuple)):
        raise AssertionError("outputs must be a list or tuple of NDArrays")
    if out_grads is not None and len(out_grads) != len(outputs):
        raise AssertionError("outputs and out_grads must have the same length")
    _ag.backward(list(outputs), None if out_grads is None else list(out_grads),
                 retain_graph=retain_graph)


def compute_gradient(outputs):
    """Deprecated name of :func:`backward`."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """A function returning ``(gradients of the chosen arguments, func's value)``.

    `argnum` (int or list of int) picks the arguments to differentiate; all by default."""
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            picks = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in picks]
        for x in variables:
            if not isinstance(x, NDArray):
                raise AssertionError("type of autograd input should NDArray.")
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """A function returning the gradients of `func` w.r.t. the chosen arguments."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(with_loss)
    def wrapped(*args):
        return with_loss(*args)[0]
    return wrapped
