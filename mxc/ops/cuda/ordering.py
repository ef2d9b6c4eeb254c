"""Launches of topk / sort / argsort (ops/ordering.py, csrc/kernels/ordering.h) on the GPU:
ordering.cu's padded bitonic sort."""
from ._launch import DTYPES, CTYPE, ctype, launch


def instantiations():
    """Every name expression of ordering.cu."""
    out = ["mxc_bitonic_step"]
    for dt in DTYPES:
        out.append("mxc_sort_prepare<%s>" % CTYPE[dt])
        out.append("mxc_sort_mask<%s>" % CTYPE[dt])
        for it in DTYPES:
            out.append("mxc_sort_finish<%s, %s>" % (CTYPE[dt], CTYPE[it]))
    return out


# ---- ordering: sort / argsort / topk through a padded bitonic sort --------------------------
def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    """Slots (ops/ordering.py TOPK_INTS) pre, n, post, k, ret, ascend; ret 0 values, 1 indices, 2 the 0/1
    mask (data-shaped, the data's dtype), 3 both."""
    if kernel != "topk":
        return None
    pre, n, post, k, ret, ascend = (int(getattr(iattr, s)) for s in
                                    ("pre", "n", "post", "k", "ret", "ascend"))
    x = inputs[0]
    rows = pre * post
    p = 1
    while p < n:
        p *= 2
    keys_bytes = 8 * rows * p
    c = ctype(x.dtype)
    if ret in (0, 2):
        vals, idx, ci = ("out", 0), ("ptr", 0), c
    elif ret == 1:
        vals, idx, ci = ("ptr", 0), ("out", 0), ctype(outputs[0].dtype)
    else:
        vals, idx, ci = ("out", 0), ("out", 1), ctype(outputs[1].dtype)
    launches = [launch("ordering", "mxc_sort_prepare<%s>" % c, rows * p,
                        [("in", 0), ("ws", 0), ("ws", keys_bytes), ("i64", pre), ("i64", n),
                         ("i64", post), ("i64", p), ("i32", ascend)])]
    size = 2
    while size <= p:
        step = size // 2
        while step >= 1:
            launches.append(launch("ordering", "mxc_bitonic_step", rows * p,
                                    [("ws", 0), ("ws", keys_bytes), ("i64", rows), ("i64", p),
                                     ("i64", size), ("i64", step)]))
            step //= 2
        size *= 2
    if ret == 2:
        total = pre * n * post
        launches.insert(0, launch("init", "mxc_fill<%s>" % c, total,
                                   [("out", 0), ("i64", total), ("f64", 0.0)]))
        launches.append(launch("ordering", "mxc_sort_mask<%s>" % c, rows * k,
                                [("ws", keys_bytes), ("out", 0), ("i64", pre), ("i64", n),
                                 ("i64", post), ("i64", p), ("i64", k)]))
    else:
        launches.append(launch("ordering", "mxc_sort_finish<%s, %s>" % (c, ci), rows * k,
                                [("in", 0), ("ws", keys_bytes), vals, idx, ("i64", pre),
                                 ("i64", n), ("i64", post), ("i64", p), ("i64", k)]))
    return {"launches": launches, "workspace": 2 * keys_bytes}


