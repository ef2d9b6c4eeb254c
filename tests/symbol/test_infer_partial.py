"""Shape inference with unknown dimensions gives MXNet 1.9.1's answers: infer_shape_partial and
infer_shape for the graphs of tests/data/infer_partial/cases.py, compared with what
make_fixture.py there recorded from MXNet (mxnet_infer.json). Partially known shapes flow
forward and backward through FullyConnected, Convolution, Concat, dot/batch_dot, Embedding,
transpose, pick; unknown is 0 (legacy) or -1 with None for a whole shape (np_shape)."""
import importlib.util
import json
import os

import pytest

import mxc as mx

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "infer_partial")
_spec = importlib.util.spec_from_file_location("_infer_cases", os.path.join(DATA, "cases.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
with open(os.path.join(DATA, "mxnet_infer.json")) as _f:
    EXPECTED = json.load(_f)["cases"]

# where mxc knows more than MXNet: what it infers beyond MXNet's answer (every shape MXNet
# knows is the same); the rest must equal MXNet's answer exactly
MORE_THAN_MXNET = {
    # Embedding's weight is (input_dim, output_dim) whatever the data; MXNet waits for data
    "embedding_none": {"partial": [[[], [10, 4]], [[]]]},
    # where's x and y share one shape; MXNet fills y only once the condition is known
    "where_partial": {"partial": [[[], [2, 3], [2, 3]], [[]]]},
}

_LEGACY, _NP = _cases.build(mx)


@pytest.mark.parametrize("cid", sorted(_LEGACY))
def test_legacy_shapes(cid):
    sym, shapes = _LEGACY[cid]
    got = _cases.run(mx, sym, shapes)
    want = dict(EXPECTED[cid], **MORE_THAN_MXNET.get(cid, {}))
    assert got == want


@pytest.mark.parametrize("cid", sorted(_NP))
def test_np_shape_shapes(cid):
    with mx.np_shape(True):
        sym, shapes = _cases.build(mx)[1][cid]
        got = _cases.run(mx, sym, shapes)
    assert got == EXPECTED[cid]
