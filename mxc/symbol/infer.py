"""Shape and dtype inference over a symbol graph with each OpDef's ``infer`` and
``infer_inputs`` (MXNet's InferShape/InferType passes: repeated sweeps until nothing changes,
so shapes flow forward from the data and backward into weights)."""
import ast

import numpy as np

from ..base import MXNetError
from ..ops._partial_shape import complete as _complete
from .symbol import DTYPE_MX_TO_NP, _topo
from .. import ndarray as nd, autograd
from .._core import resource
from ..context import cpu
from ..ndarray.register import run

# operators whose inputs and output share one shape (MXNet's ElemwiseShape<n, 1>); the broadcast
# operators are not among them: an unknown input's shape cannot be told from the other one's
_SAME_SHAPE = {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_grad_add",
               "_power", "_maximum", "_minimum", "_hypot", "_mod", "_equal", "_not_equal",
               "_greater", "_greater_equal", "_lesser", "_lesser_equal", "_logical_and",
               "_logical_or", "_logical_xor", "add_n", "ElementWiseSum",
               "_identity_with_attr_like_rhs", "_backward_tanh", "_backward_sigmoid",
               "_backward_relu", "_backward_sqrt"}


# one-input operators whose output has the input's shape
_UNARY = {"Cast", "cast", "amp_cast", "BlockGrad", "stop_gradient", "identity", "_copy",
          "Activation", "Dropout", "make_loss", "MakeLoss", "relu", "sigmoid", "tanh",
          "ones_like", "zeros_like", "LeakyReLU", "softsign"}


# in-place capable one-input operators whose output shape differs from the input's
_RESHAPING = {"Reshape", "Flatten", "expand_dims", "squeeze"}


def _attr_shape(s):
    try:
        v = ast.literal_eval(s)
    except (ValueError, SyntaxError):
        return None
    if isinstance(v, int):
        return (v,)
    return tuple(int(x) for x in v)


def _probe(op, attrs, in_shapes, in_dtypes):
    """Output shapes/dtypes of an operator without ``infer`` (a composite): run it on zeros.
    A composite that draws random numbers gets the generator back as it was, so inferring
    shapes (binding) never shifts what a seeded forward draws."""
    state = resource.get_state(cpu()) if "random" in op.resources else None
    try:
        with autograd.pause():
            xs = [nd.zeros(s, dtype=d) for s, d in zip(in_shapes, in_dtypes)]
            res = run(op, xs, attrs)
    finally:
        if state is not None:
            resource.set_state(cpu(), state)
    res = [res] if isinstance(res, nd.NDArray) else list(res)
    return [r.shape for r in res], [r.dtype.name if hasattr(r.dtype, "name") else
                                    np.dtype(r.dtype).name for r in res]


def _custom_infer(node, in_shapes, in_dtypes):
    prop = node.custom_prop()
    na = len(prop.list_arguments())
    res = prop.infer_shape([list(s) for s in in_shapes[:na]])
    outs = [tuple(s) for s in res[1]]
    tres = prop.infer_type([np.dtype(d).type for d in in_dtypes[:na]])
    odt = [np.dtype(t).name for t in tres[1]]
    return outs, odt


def node_infer(node, in_shapes, in_dtypes):
    """(output shapes, output dtypes) of an operator node, every output included."""
    op = node.op
    if op.name == "Custom":
        return _custom_infer(node, in_shapes, in_dtypes)
    if op.infer is None:
        return _probe(op, node.parsed, in_shapes, in_dtypes)
    oshapes, odtypes = op.infer(node.parsed, [tuple(s) for s in in_shapes], list(in_dtypes))
    return ([tuple(s) for s in oshapes],
            [d if isinstance(d, str) else np.dtype(d).name for d in odtypes])


def _err(node, e, in_shapes, in_dtypes):
    names = [f"{n.name}{'' if n.op is None else '[' + str(i) + ']'}" for n, i, _ in node.inputs]
    seen = ", ".join(f"{n}: {s}" for n, s in zip(names, in_shapes))
    return MXNetError(f"Error in operator {node.name} ({node.op.name}): {e}. "
                      f"Input shapes: [{seen}]; dtypes: {list(in_dtypes)}")


def _forward_partial(node, in_s, S):
    """Output dimensions an operator can tell while some input dimensions are unknown (0);
    merged into what is known of the outputs. Whether anything was learnt."""
    try:
        outs = node.op.infer_partial(node.parsed, list(in_s))
    except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError):
        return False
    learnt = False
    for i, o in enumerate(outs or ()):
        if o is None:
            continue
        o = tuple(int(x) for x in o)
        cur = S.get((id(node), i))
        if cur is not None and (_complete(cur) or len(cur) != len(o)):
            continue
        merged = o if cur is None else tuple(c or x for c, x in zip(cur, o))
        if merged != cur:
            S[(id(node), i)] = merged
            learnt = True
    return learnt


def _rule_dtypes(node, in_d):
    """Output dtypes from the operator's dtype rule (``OpDef.infer_dtypes``: outputs whose
    dtype is not the first input's, known without shapes), or None: no rule, or the rule needs
    an input dtype that is still unknown."""
    rule = node.op.infer_dtypes
    if rule is None or not in_d:
        return None
    got = rule(node.parsed, in_d)
    if got is None or any(d is None for d in got):
        return None
    return [np.dtype(d).name for d in got]


def infer_graph(sym, known_shapes, known_dtypes, default_dtype=None, strict=False):
    """Shapes and dtypes of every node output: two dicts keyed by (id(node), index).

    known_shapes/known_dtypes: by argument (or aux state) name. default_dtype: dtype assumed
    for variables nothing decides (float32 for shape inference). strict: raise when an
    operator's infer rejects its inputs (otherwise too: an error always names the node)."""
    nodes = _topo(sym._outputs)
    S, D = {}, {}
    for n in nodes:
        if n.op is not None:
            continue
        k = (id(n), 0)
        s = known_shapes.get(n.name)
        if s is None and "__shape__" in n.attrs:
            s = _attr_shape(n.attrs["__shape__"])
        S[k] = tuple(int(x) for x in s) if s is not None else None
        d = known_dtypes.get(n.name)
        if d is None and "__dtype__" in n.attrs:
            d = DTYPE_MX_TO_NP.get(int(n.attrs["__dtype__"]))
        D[k] = d
    done = set()
    for _sweep in range(10):
        changed = False
        for node in nodes:
            if node.op is None:
                continue
            keys = [(id(e[0]), e[1]) for e in node.inputs]
            in_d = [D.get(k) for k in keys]
            known = [d for d in in_d if d is not None]
            if None in in_d and node.op.infer_input_dtypes is not None:
                want = node.op.infer_input_dtypes(node.parsed, in_d) or ()
                for k, e, w in zip(keys, node.inputs, want):
                    if w is not None and D.get(k) is None and e[0].op is None:
                        D[k] = w
                        changed = True
                in_d = [D.get(k) for k in keys]
            if None in in_d:
                fill = next((d for d in known if d.startswith("float")), known[0] if known else None)
                if fill is None and default_dtype is not None:
                    fill = default_dtype
                if fill is not None:
                    for k, e in zip(keys, node.inputs):
                        if D.get(k) is None and e[0].op is None:
                            D[k] = fill
                            changed = True
                in_d = [D.get(k) for k in keys]
            in_s = [S.get(k) for k in keys]
            if not all(_complete(s) for s in in_s):
                op = node.op
                rule = op.infer_inputs
                if rule is not None:
                    filled = None
                    for attempt in ([s if _complete(s) else None for s in in_s], in_s):
                        try:
                            filled = rule(node.parsed, list(attempt))
                        except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError):
                            filled = None
                        if filled is not None and any(
                                f is not None and not _complete(s) and S.get(k) != tuple(f)
                                and (s is None or all(x > 0 for x in f))
                                for k, f, s in zip(keys, filled, in_s)):
                            break
                    if filled is not None:
                        for k, f, s in zip(keys, filled, in_s):
                            if f is None or _complete(s):
                                continue
                            f = tuple(int(x) for x in f)
                            if (s is None or all(x > 0 for x in f)) and S.get(k) != f:
                                S[k] = f
                                changed = True
                if op.name in _SAME_SHAPE:
                    ref = next((s for s in in_s if _complete(s)), None)
                    if ref is None and node.num_outputs() == 1:
                        o = S.get((id(node), 0))
                        ref = o if _complete(o) else None
                    if ref is None:
                        # merge partial shapes dimension by dimension ((2, 0) + (0, 3))
                        cands = [s for s in in_s if s is not None]
                        if cands and all(len(c) == len(cands[0]) for c in cands):
                            merged = tuple(next((c[i] for c in cands if c[i] > 0), 0)
                                           for i in range(len(cands[0])))
                            for k, s in zip(keys, in_s):
                                if s != merged and (s is None or all(
                                        x in (0, m) for x, m in zip(s, merged))):
                                    S[k] = merged
                                    changed = True
                    if ref is not None:
                        for k, s in zip(keys, in_s):
                            if not _complete(s):
                                S[k] = ref
                                changed = True
                elif (op.fast_kind == 1 or (op.inplace and len(keys) == 1)
                      or op.name in _UNARY) and op.name not in _RESHAPING:
                    o = S.get((id(node), 0))
                    if o is not None and (in_s[0] is None or
                                          (_complete(o) and not _complete(in_s[0]))):
                        S[keys[0]] = o
                        changed = True
                    elif in_s[0] is not None and o is None:
                        S[(id(node), 0)] = in_s[0]
                        changed = True
                back = op.infer_back
                if back is not None:
                    outs = [S.get((id(node), i)) for i in range(node.num_outputs())]
                    in_now = [S.get(k) for k in keys]
                    try:
                        filled = back(node.parsed, in_now, outs)
                    except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError):
                        filled = None
                    for k, f, s in zip(keys, filled or (), in_now):
                        if f is None or _complete(s):
                            continue
                        f = tuple(int(x) for x in f)
                        # a whole shape, or more of the dimensions that are known already
                        if _complete(f) or (s is not None and len(s) == len(f) and f != s and all(
                                x in (0, y) for x, y in zip(s, f))):
                            S[k] = f
                            changed = True
                in_s = [S.get(k) for k in keys]
                if op.infer_partial is not None and all(s is not None for s in in_s) \
                        and not all(_complete(s) for s in in_s):
                    changed |= _forward_partial(node, in_s, S)
            if all(_complete(s) for s in in_s) and all(d is not None for d in in_d):
                sig = (tuple(in_s), tuple(in_d))
                if (id(node), sig) in done:
                    continue
                try:
                    oshapes, odtypes = node_infer(node, in_s, in_d)
                except MXNetError as e:
                    raise _err(node, e, in_s, in_d) from None
                except (ValueError, TypeError, IndexError, KeyError, AssertionError) as e:
                    raise _err(node, e, in_s, in_d) from None
                done.add((id(node), sig))
                for i, (s, d) in enumerate(zip(oshapes, odtypes)):
                    if S.get((id(node), i)) != s or D.get((id(node), i)) != d:
                        S[(id(node), i)] = s
                        D[(id(node), i)] = d
                        changed = True
            elif D.get((id(node), 0)) is None:
                got = _rule_dtypes(node, in_d)
                if got is not None:
                    for i, d in enumerate(got):
                        D[(id(node), i)] = d
                    changed = True
                    continue
                dt = node.parsed.get("dtype") if node.op.name != "Custom" else None
                if dt is None and node.op.name != "Custom":     # norm's out_dtype
                    dt = node.parsed.get("out_dtype")
                if dt is None and in_d and all(d is not None for d in in_d):
                    dt = in_d[0]
                if dt is not None:
                    for i in range(node.num_outputs()):
                        D[(id(node), i)] = dt
                    changed = True
        if not changed:
            break
    return S, D
