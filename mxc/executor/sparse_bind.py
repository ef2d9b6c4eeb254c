"""Storage types on the symbol side: what ``simple_bind`` allocates and how an executor with
sparse arrays runs.

Storage types of arguments. ``simple_bind`` gives an argument the storage type named in
``stype_dict``, else the one its variable declares (``mx.sym.Variable(name, stype=...)``,
stored as MXNet stores it: the attribute ``__storage_type__`` holding the numeric id), else
dense. A gradient is row_sparse where MXNet's backward storage inference makes it so for the
graphs sparse models use: every consumer of the argument produces a row_sparse gradient for it
(the weight of ``dot(csr, w)`` without transposes, the weight of ``Embedding(...,
sparse_grad=True)``), or the argument is itself row_sparse and consumed only by such
operators; otherwise the gradient is dense. Auxiliary states are dense.

Running. An executor whose bound arrays (arguments, gradients or auxiliary states) include a
sparse one does not use the planned graph (``graph.py`` plans dense storage only): it runs the
graph node by node through the imperative dispatch under autograd (``executor._run_graph``).
There each operator runs its sparse implementation where ``mxc.ops.sparse_ops`` has one (dot
with CSR / row_sparse operands, retain, cast_storage, sparse elementwise arithmetic...) and
otherwise MXNet's storage fallback at the operator's boundary: dense copies of its sparse
inputs, the dense kernel, the result cast back where a sparse output was asked for. Gradients
come out of autograd and are written into the bound gradient arrays in their storage types
(a dense result written into a row_sparse gradient keeps the rows that are not all zero).
Sparse outputs (``retain``, ``cast_storage``, rsp + rsp...) are handed out as the sparse arrays
the operators return.
"""
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.ndarray import _STORAGE_TYPE_ID_TO_STR, _STORAGE_TYPE_STR_TO_ID
from ..symbol.symbol import _topo
from .. import ndarray as nd

__all__ = ["arg_stypes", "grad_stypes", "zeros", "any_sparse"]

_STYPES = ("default", "csr", "row_sparse")


def _stype_name(value, what):
    """'default' | 'csr' | 'row_sparse' from a name or MXNet's numeric id (as a string too)."""
    if isinstance(value, str) and value in _STYPES:
        return value
    try:
        code = int(value)
    except (TypeError, ValueError):
        code = None
    name = _STORAGE_TYPE_ID_TO_STR.get(code) if code is not None else None
    if name not in _STYPES:
        raise MXNetError(f"{what}: unknown storage type {value!r} (expected one of "
                         f"{', '.join(_STYPES)})")
    return name


def arg_stypes(sym, stype_dict=None):
    """Per argument (list_arguments order), its storage type: stype_dict's, else the
    variable's ``__storage_type__``, else 'default'."""
    names = sym.list_arguments()
    stype_dict = dict(stype_dict or {})
    unknown = sorted(set(stype_dict) - set(names) - set(sym.list_auxiliary_states()))
    if unknown:
        raise ValueError(f"simple_bind: stype_dict names {unknown}, which are not arguments of "
                         f"the symbol ({names})")
    attrs = sym.attr_dict()
    out = []
    for n in names:
        if n in stype_dict:
            out.append(_stype_name(stype_dict[n], f"stype_dict[{n!r}]"))
            continue
        declared = attrs.get(n, {}).get("__storage_type__")
        if declared is None or int(declared) == _STORAGE_TYPE_STR_TO_ID["undefined"]:
            out.append("default")
        else:
            out.append(_stype_name(declared, f"variable {n!r}"))
    return out


def _rsp_grad_input(node, k, stype_of):
    """Whether operator `node` gives its k-th input a row_sparse gradient (MXNet's backward
    storage inference for these operators)."""
    name = node.op.name
    attrs = node.parsed
    if name == "dot" and k == 1:
        lhs = node.inputs[0][0]
        return (not attrs.get("transpose_a") and not attrs.get("transpose_b")
                and stype_of(lhs) == "csr")
    if name in ("Embedding", "_contrib_SparseEmbedding") and k == 1:
        return name == "_contrib_SparseEmbedding" or bool(attrs.get("sparse_grad"))
    return False


def grad_stypes(sym, stypes):
    """Per argument, the storage type of its gradient (see the module doc)."""
    names = sym.list_arguments()
    by_name = dict(zip(names, stypes))
    nodes = _topo(sym._outputs)

    def stype_of(node):
        return by_name.get(node.name, "default") if node.op is None else "default"
    consumers = {}
    for node in nodes:
        if node.op is None:
            continue
        for k, (src, _idx, *_rest) in enumerate(node.inputs):
            if src.op is None:
                consumers.setdefault(src.name, []).append((node, k))
    out = []
    for n in names:
        uses = consumers.get(n, [])
        rsp = bool(uses) and all(_rsp_grad_input(node, k, stype_of) for node, k in uses)
        out.append("row_sparse" if rsp else "default")
    return out


def zeros(stype, shape, ctx, dtype):
    """A zero array of storage type `stype`."""
    if stype == "default":
        return nd.zeros(shape, ctx=ctx, dtype=dtype)
    return nd.sparse.zeros(stype, tuple(shape), ctx=ctx, dtype=dtype)


def any_sparse(*groups):
    """Whether any NDArray in the given lists is sparse."""
    return any(isinstance(a, NDArray) and a._sparse for g in groups for a in g)


# operators whose results are sparse whatever their inputs (or that only take sparse inputs):
# a graph with one runs node by node through the storage dispatch even when bound to dense arrays
_STORAGE_OPS = frozenset(("cast_storage", "_sparse_retain", "_contrib_getnnz"))


def needs_dispatch(sym):
    """Whether the graph has an operator that makes or needs sparse storage (cast_storage,
    retain, a dot with forward_stype)."""
    for node in _topo(sym._outputs):
        if node.op is None:
            continue
        if node.op.name in _STORAGE_OPS:
            return True
        fs = node.attrs.get("forward_stype")
        if fs not in (None, "None", "default"):
            return True
    return False


def check_bind(sym, arg_dict, aux_dict):
    """Storage-type checks MXNet makes when it binds (its operators' storage inference), for
    graphs with sparse arrays bound: BatchNorm with fix_gamma=True refuses sparse inputs."""
    bound = dict(arg_dict)
    bound.update(aux_dict)
    for node in _topo(sym._outputs):
        if node.op is None or node.op.name not in ("BatchNorm", "BatchNorm_v1"):
            continue
        if not node.parsed.get("fix_gamma", True):
            continue
        sparse = [e[0].name for e in node.inputs if e[0].op is None
                  and getattr(bound.get(e[0].name), "_sparse", False)]
        if sparse:
            raise MXNetError(f"Error in operator {node.name}: fix_gamma=True is not supported "
                             f"for sparse ndarrays (sparse inputs: {', '.join(sparse)}); bind "
                             "dense arrays or use fix_gamma=False")
