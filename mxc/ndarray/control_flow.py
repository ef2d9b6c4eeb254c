"""MXNet 1.9.1's imperative control flow, ``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``:
the Python bodies run eagerly on NDArrays, each step recorded by autograd like any other
operator call, so gradients flow through the iterations that ran. Output and state
conventions are MXNet's (stacked step outputs; while_loop's padded to max_iterations rows)."""
import sys as _sys

from ..base import _as_list
from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond"]


def _nd():
    return _sys.modules["mxc.ndarray"]


def _flatten(args, what, leaf=NDArray, width=lambda x: 0):
    """The leaves of a nested list of `leaf`s, and its format for ``_regroup``: per leaf its
    ``width(leaf)`` (0: one value; n: n outputs of one Symbol), lists for the nesting."""
    if isinstance(args, leaf):
        return [args], width(args)
    if not isinstance(args, (list, tuple)):
        raise AssertionError(f"{what} must be (nested) list of {leaf.__name__}, but got {args} of "
                             f"type {type(args)}")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, what, leaf, width)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        r, args = _regroup(args, f)
        ret.append(r)
    return ret, args


def _scalar(x, type_, what):
    if hasattr(x, "asscalar"):
        x = x.asscalar()
    try:
        return type_(x)
    except (TypeError, ValueError):
        raise ValueError(f"Cannot convert {what} to python {type_.__name__}") from None


def foreach(body, data, init_states):
    """Run `body(data[i], states) -> (outputs, states)` for every i along dimension 0 of
    `data`; returns (outputs stacked along a new dimension 0, final states)."""
    flat, _ = _flatten(data, "foreach input")
    if not all(isinstance(x, NDArray) for x in flat):
        raise AssertionError("data should be an NDArray or a nested list of NDArrays")
    sflat, _ = _flatten(init_states, "foreach states")
    if not all(isinstance(x, NDArray) for x in sflat):
        raise AssertionError("init_states should be an NDArray or a nested list of NDArrays")
    single = isinstance(data, NDArray)
    n = data.shape[0] if single else data[0].shape[0]
    states, steps, out_fmt = init_states, [], None
    for i in range(n):
        eles = data[i] if single else [d[i] for d in data]
        outs, states = body(eles, states)
        outs, out_fmt = _flatten(outs, "foreach output")
        steps.append(outs)
    outputs = [_nd().stack(*col) for col in zip(*steps)]
    if out_fmt is not None:
        outputs, _ = _regroup(outputs, out_fmt)
    return outputs, states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run `func(*loop_vars) -> (step_output, new_loop_vars)` while `cond(*loop_vars)` is true,
    at most `max_iterations` times. Step outputs are stacked and padded to `max_iterations`
    rows (the padding is left uninitialised, as MXNet's)."""
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iteration")
    if len(loop_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")
    single = isinstance(loop_vars, NDArray)
    loop_vars = _as_list(loop_vars)
    steps, out_fmt = [], None
    while len(steps) < max_iterations and _scalar(cond(*loop_vars), bool, "Return value of cond"):
        step, new = func(*loop_vars)
        step = [] if step is None else (list(step) if isinstance(step, tuple) else step)
        new = [] if new is None else (list(new) if isinstance(new, tuple) else new)
        new = _as_list(new)
        if len(loop_vars) != len(new):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        step, out_fmt = _flatten(step, "while output")
        steps.append(step)
        loop_vars = new
        if len(step) != len(steps[0]):
            raise ValueError("Number of elements in step_output should be the same in each step")
    nd = _nd()
    stacked = []
    for k, items in enumerate(zip(*steps), 1):
        items = [x.expand_dims(0) for x in items]
        if len(steps) != max_iterations:
            pad = nd.empty((max_iterations - len(steps),) + items[0].shape[1:],
                           ctx=items[0].context, dtype=items[0].dtype)
            items.append(pad)
        try:
            stacked.append(nd.concat(*items, dim=0))
        except ValueError:
            shapes = "\n".join(f"  Step {i}, shape is {x.shape}" for i, x in enumerate(items))
            raise ValueError(f"Shapes of {k}-th elements in step_outputs are inconsistent, "
                             f"which are:\n{shapes}") from None
    if out_fmt is not None:
        stacked, _ = _regroup(stacked, out_fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func):
    """`then_func()` if the scalar `pred` is true, else `else_func()`."""
    return then_func() if _scalar(pred, bool, "pred") else else_func()
