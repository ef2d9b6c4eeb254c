"""Shape inference with unknown dimensions: the graphs and known shapes that
tests/symbol/test_infer_partial.py runs through infer_shape_partial and infer_shape, in mxc and
(make_fixture.py) in MXNet 1.9.1. ``build(mx)`` takes either package. Legacy cases write an
unknown dimension as 0; the np_shape cases as -1."""


def build(mx):
    V = mx.sym.var
    fc = lambda **kw: mx.sym.FullyConnected(V("x"), num_hidden=10, name="fc", **kw)  # noqa: E731
    conv = lambda: mx.sym.Convolution(V("x"), kernel=(3, 3), num_filter=4, name="c")  # noqa: E731
    cat = lambda: mx.sym.concat(V("a"), V("b"), dim=1)  # noqa: E731
    emb = lambda: mx.sym.Embedding(V("x"), input_dim=10, output_dim=4, name="e")  # noqa: E731
    pick = lambda: mx.sym.pick(V("x"), V("i"), axis=1)  # noqa: E731
    where = lambda: mx.sym.where(V("c"), V("x"), V("y"))  # noqa: E731
    chain = lambda: mx.sym.FullyConnected(mx.sym.Activation(  # noqa: E731
        mx.sym.FullyConnected(V("x"), num_hidden=8, name="f1"), act_type="relu"),
        num_hidden=3, name="f2")
    legacy = {
        "fc_unknown_batch": (fc(), {"x": (0, 20)}),
        "fc_flatten_false": (fc(flatten=False), {"x": (2, 0, 20)}),
        "fc_weight_only": (fc(), {"fc_weight": (10, 20)}),
        "fc_nothing": (fc(), {}),
        "fc_chain": (chain(), {"x": (0, 5)}),
        "conv_unknown_batch": (conv(), {"x": (0, 3, 8, 8)}),
        "conv_unknown_hw": (conv(), {"x": (2, 3, 0, 0)}),
        "concat_one_unknown": (cat(), {"a": (2, 3), "b": (2, 0)}),
        "concat_back": (cat(), {"a": (0, 3), "b": (2, 4)}),
        "dot_partial": (mx.sym.dot(V("a"), V("b")), {"a": (0, 3), "b": (3, 5)}),
        "dot_back": (mx.sym.dot(V("a"), V("b")), {"a": (2, 3)}),
        "batch_dot_partial": (mx.sym.batch_dot(V("a"), V("b")), {"a": (4, 0, 3), "b": (4, 3, 5)}),
        "embedding": (emb(), {"x": (0, 7)}),
        "embedding_none": (emb(), {}),
        "transpose_partial": (mx.sym.transpose(V("x"), axes=(1, 0, 2)), {"x": (0, 3, 4)}),
        "pick_partial": (pick(), {"x": (0, 5)}),
        "pick_index": (pick(), {"i": (3,)}),
        "where_partial": (where(), {"x": (2, 3)}),
        "where_cond": (where(), {"c": (2, 3)}),
        "elemwise_back": (V("a") + V("b"), {"a": (2, 3)}),
        # an operator's output known from a later one: Convolution fills data's batch and (at
        # stride 1) its spatial sizes, Concat the dimensions off its axis
        "conv_back_stride1": (mx.sym.Convolution(V("x"), kernel=(3, 3), num_filter=4, pad=(1, 1),
                                                 name="c") + V("y"),
                              {"x": (0, 3, 0, 0), "y": (5, 4, 16, 16)}),
        "conv_back_stride2": (mx.sym.Convolution(V("x"), kernel=(3, 3), num_filter=4,
                                                 stride=(2, 1), name="c") + V("y"),
                              {"x": (0, 3, 0, 0), "y": (5, 4, 7, 6)}),
        "concat_back_off_axis": (V("d") + cat(), {"a": (0, 10), "b": (0, 5), "d": (2, 0)}),
        # broadcast operators learn nothing about an unknown input from the other one
        "broadcast_unknown": (mx.sym.broadcast_add(V("w"), V("s")), {"s": (1,)}),
        "identity_like_rhs": (mx.sym.FullyConnected(
            V("x"), weight=mx.sym._internal._identity_with_attr_like_rhs(
                mx.sym.broadcast_add(V("w"), V("s")), V("w")), num_hidden=11, no_bias=True,
            name="fc"), {"x": (7, 100), "s": (1,)}),
    }
    np_shape = {
        "np_fc_unknown_batch": (fc(), {"x": (-1, 20)}),
        "np_fc_nothing": (fc(), {}),
        "np_concat_unknown": (cat(), {"a": (2, 3), "b": (2, -1)}),
        "np_conv_unknown_hw": (conv(), {"x": (2, 3, -1, -1)}),
    }
    return legacy, np_shape


def run(mx, sym, shapes):
    """{"partial": ..., "full": ...}: lists (None for an unknown shape) or "error"."""
    res = {}
    for mode in ("partial", "full"):
        fn = sym.infer_shape_partial if mode == "partial" else sym.infer_shape
        try:
            a, o, _ = fn(**shapes)
        except Exception:       # noqa: BLE001
            res[mode] = "error"
            continue
        res[mode] = [None if r is None else [None if t is None else list(t) for t in r]
                     for r in (a, o)]
    return res
