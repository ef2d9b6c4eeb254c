"""Convolution + BatchNorm folded into one convolution, for graphs that run in inference mode.

In inference BatchNorm is the affine map y = (x - mean) * s + beta per channel, with
s = gamma / sqrt(var + eps) (gamma = 1 with fix_gamma) from the moving statistics. When x is a
convolution's output read by nothing else, the map moves into the convolution:

    BatchNorm(Convolution(data, W[, b])) = Convolution(data, W * s[:, None, ...], beta + (b - mean) * s)

which saves the BatchNorm's pass over the feature map (a read and a write of every element).
The folded weight and bias are computed from the current parameters at every run (a pass over
W, tiny beside the convolution), so parameters that change between runs are picked up. The
result differs from the unfolded graph by float rounding only: products are rounded in another
order (float32: relative differences of a few 1e-7 of the output's scale; tests/executor/
test_fold.py checks 1e-5 of the largest output on networks with random statistics).

Folded: BatchNorm on axis 1 without output_mean_var whose data is output 0 of a Convolution
(NC... layout) that no other node and no graph output reads, and whose inputs are not cast
and, where the caller knows the variables' dtypes, whose weight has BatchNorm's parameter dtype
(AMP's float16 convolutions, and a float16 network's convolutions, stay beside their float32
BatchNorm, as MXNet keeps BatchNorm's parameters in float32). The user's symbol is left alone:
the folded graph is built from fresh operator nodes around the same variables. Off with
MXNET_USE_FUSION=0 (MXNet's switch of graph fusion).

A ReLU (Activation act_type='relu' or relu) whose data is output 0 of a Convolution (folded
with its BatchNorm or not) or of a BatchNorm that nothing else reads is then folded into that
operator (``fold_relu``): its node runs with ``_relu`` and its CPU kernel applies max(y, 0) as
each part of its output is written (BatchNorm: in its per-channel loop; Convolution: on each
sample's or sample block's output right after its GEMM), saving the ReLU's own pass over the
feature map. relu(y) is computed exactly as the relu operator computes it, on the same y, so
this step changes no bit (tests/executor/test_fold.py). ``fold_inference`` applies both.
"""
import os

from ..ops import registry
from ..symbol.symbol import Symbol, _Node, _topo

__all__ = ["enabled", "fold_conv_bn", "fold_relu", "fold_inference"]


def enabled():
    return os.environ.get("MXNET_USE_FUSION", "1").strip().lower() not in ("0", "false")


def _reads(nodes, outputs):
    """{(id(node), output index): number of readers}, graph outputs counted."""
    count = {}
    for n in nodes:
        for e in n.inputs:
            k = (id(e[0]), e[1])
            count[k] = count.get(k, 0) + 1
    for e in outputs:
        k = (id(e[0]), e[1])
        count[k] = count.get(k, 0) + 1
    return count


# operators that change an input's dtype: a Convolution fed by one runs in another precision
# than BatchNorm's parameters, and the folded weight would mix the two
_CASTS = frozenset(("amp_cast", "amp_multicast", "Cast", "cast"))


def _foldable(bn, reads, dtypes):
    if bn.op.name != "BatchNorm" or len(bn.inputs) != 5:
        return False
    p = bn.parsed
    if p.get("axis", 1) != 1 or p.get("output_mean_var"):
        return False
    if any(reads.get((id(bn), k), 0) for k in range(1, bn.num_outputs())):
        return False
    conv, idx = bn.inputs[0][0], bn.inputs[0][1]
    if conv.op is None or conv.op.name != "Convolution" or idx != 0:
        return False
    layout = conv.parsed.get("layout")
    if any(e[0].op is not None and e[0].op.name in _CASTS for e in conv.inputs):
        # a mixed-precision graph (AMP): float16 weights beside BatchNorm's float32 statistics
        return False
    wd, gd = dtypes.get(id(conv.inputs[1][0])), dtypes.get(id(bn.inputs[1][0]))
    if wd is not None and gd is not None and wd != gd:
        return False
    return (layout is None or layout.startswith("NC")) and reads.get((id(conv), 0), 0) == 1


def _node(op, name, inputs, **attrs):
    return _Node(registry.get(op), name, {k: str(v) for k, v in attrs.items()}, list(inputs))


def _fold(conv, bn, conv_inputs, bn_inputs):
    """The Convolution node that replaces bn(conv(...)); inputs already rewritten."""
    p = bn.parsed
    nm = bn.name
    gamma, beta, mean, var = bn_inputs[1:5]
    rstd = (_node("rsqrt", f"{nm}_fold_rstd",
                  [(_node("_plus_scalar", f"{nm}_fold_veps", [var], scalar=repr(p["eps"])), 0, 0)]),
            0, 0)
    scale = rstd if p.get("fix_gamma") else \
        (_node("elemwise_mul", f"{nm}_fold_scale", [gamma, rstd]), 0, 0)
    nsp = len(conv.parsed["kernel"])
    col = (_node("Reshape", f"{nm}_fold_col", [scale], shape=(-1,) + (1,) * (nsp + 1)), 0, 0)
    weight = (_node("broadcast_mul", f"{nm}_fold_weight", [conv_inputs[1], col]), 0, 0)
    shift = mean if conv.parsed["no_bias"] else \
        (_node("elemwise_sub", f"{nm}_fold_centre", [mean, conv_inputs[2]]), 0, 0)
    bias = (_node("elemwise_sub", f"{nm}_fold_bias",
                  [beta, (_node("elemwise_mul", f"{nm}_fold_shift", [shift, scale]), 0, 0)]),
            0, 0)
    attrs = dict(conv.attrs, no_bias="False")
    return _Node(conv.op, nm, attrs, [conv_inputs[0], weight, bias])


def _rewrite(sym, fold_one):
    """`sym` with every node that ``fold_one(node, inputs, reads, canon)`` replaces (it returns
    the new node, or None to keep the node, rebuilt where its inputs were); `sym` itself when
    none is. `inputs` are the node's inputs as rebuilt, `reads` the readers of each output."""
    nodes = _topo(sym._outputs)
    reads = _reads(nodes, sym._outputs)
    canon = {}
    changed = False
    for n in nodes:
        if n.op is None:
            canon[id(n)] = n
            continue
        inputs = [(canon[id(e[0])],) + tuple(e[1:]) for e in n.inputs]
        m = fold_one(n, inputs, reads, canon)
        if m is not None:
            canon[id(n)] = m
            changed = True
        elif any(a[0] is not e[0] for a, e in zip(inputs, n.inputs)):
            canon[id(n)] = _rebuilt(n, inputs)
        else:
            canon[id(n)] = n
    if not changed:
        return sym
    return Symbol([(canon[id(e[0])],) + tuple(e[1:]) for e in sym._outputs])


def _fold_conv_bn_node(n, inputs, reads, canon, dtypes):
    if not _foldable(n, reads, dtypes):
        return None
    conv = n.inputs[0][0]
    conv_inputs = [(canon[id(e[0])],) + tuple(e[1:]) for e in conv.inputs]
    return _fold(conv, n, conv_inputs, inputs)


def fold_conv_bn(sym, dtypes=None):
    """`sym` with every foldable Convolution + BatchNorm pair folded; `sym` itself when none.
    `dtypes`: {id(variable node): dtype} of the variables the caller binds, where known."""
    dtypes = dtypes or {}
    return _rewrite(sym, lambda n, inputs, reads, canon:
                    _fold_conv_bn_node(n, inputs, reads, canon, dtypes))


def _is_relu(n):
    return n.op is not None and (n.op.name == "relu" or (n.op.name == "Activation" and
                                                         n.parsed.get("act_type") == "relu"))


def _absorbs_relu(entry, reads):
    """Whether the producer of `entry` (a ReLU's data) can apply the ReLU itself."""
    src, idx = entry[0], entry[1]
    if src.op is None or idx != 0 or reads.get((id(src), 0), 0) != 1:
        return False
    if src.op.name == "Convolution":
        return True
    return (src.op.name == "BatchNorm" and not src.parsed.get("output_mean_var") and
            not any(reads.get((id(src), k), 0) for k in range(1, src.num_outputs())))


def _rebuilt(n, inputs):
    m = _Node(n.op, n.name, dict(n.attrs), inputs, n.subgraphs)
    m.version = n.version
    m._parsed = n._parsed
    return m


def _fold_relu_node(n, inputs, reads, canon):
    if not (_is_relu(n) and _absorbs_relu(n.inputs[0], reads)):
        return None
    src = inputs[0][0]      # the producer as rebuilt; no other node reads it
    m = _rebuilt(src, list(src.inputs))
    m._parsed = dict(src.parsed, _relu=True)
    return m


def fold_relu(sym):
    """`sym` with every ReLU whose data a Convolution or BatchNorm alone produces folded into
    that operator; `sym` itself when none."""
    return _rewrite(sym, _fold_relu_node)


def fold_inference(sym, dtypes=None):
    """Both folds, for graphs that run in inference mode; `sym` itself when nothing folds.
    `dtypes` as fold_conv_bn's."""
    return fold_relu(fold_conv_bn(sym, dtypes))
