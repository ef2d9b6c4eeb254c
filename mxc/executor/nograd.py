"""MXNet's refusal of a gradient through an operator that has none: at bind, and when a recorded
CachedOp call needs a gradient (mxc/executor/cached_op.py).

MXNet builds a bound graph's backward when the executor is made (nnvm's Gradient pass) as soon as
one argument has a grad_req other than "null". The pass visits every operator the outputs depend
on, from the outputs back, and fails for an operator without FGradient (``OpDef.differentiable``
False here) unless every gradient reaching its outputs is zero: a gradient stopped by BlockGrad
(stop_gradient), or none at all. Which argument asks for the gradient does not matter, only that
one does."""
from ..base import MXNetError
from ..symbol.symbol import _topo



def refuse_nondifferentiable(sym, need_grad):
    """Raise MXNetError when `need_grad` and a gradient reaches an operator without one."""
    if not need_grad:
        return
    reached = {id(e[0]) for e in sym._outputs}      # operators a nonzero gradient reaches
    for node in reversed(_topo(sym._outputs)):
        if node.op is None or id(node) not in reached:
            continue
        if not getattr(node.op, "differentiable", True):
            raise MXNetError(f"Operator {node.op.name} is non-differentiable because it didn't "
                             f"register FGradient attribute (node {node.name!r}: ask for no "
                             "gradient through it, e.g. grad_req='null', or stop it with "
                             "BlockGrad)")
        if node.op.name == "BlockGrad":    # its gradient is zeros_like: MXNet's zero_ops
            continue
        reached.update(id(e[0]) for e in node.inputs)
