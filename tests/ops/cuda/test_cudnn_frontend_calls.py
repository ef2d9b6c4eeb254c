"""The graph-building calls of every cuDNN family (cudnn_conv.py, cudnn_norm.py) against the
real frontend's Python module where it imports (the gpu extra's ``nvidia-cudnn-frontend``;
skipped elsewhere): each graph is built and validated as cudnn_plans.Plans does. Without a GPU
driver the frontend stops at lowering the validated graph (it needs a device); any other
failure (an operation, port or argument it does not know: TypeError, ValueError,
AttributeError, KeyError) is a call the real module refuses."""
import pytest

from mxc.ops.cuda import cudnn_plans
from mxc.ops.cuda.cudnn_conv import ConvDesc
from mxc.ops.cuda.cudnn_norm import BnDesc

cudnn = pytest.importorskip("cudnn")

DESCS = [ConvDesc(p, dt, (2, 4, 6, 6), (8, 4, 3, 3), (2, 8, 6, 6), (1, 1), (1, 1), (1, 1))
         for p in ("fprop", "dgrad", "wgrad") for dt in ("float32", "float16")]
DESCS += [BnDesc(p, dt, 4, 3, b, eps=1e-3) for p in ("train", "infer", "bwd")
          for dt in ("float32", "float16", "bfloat16") for b in (30, 1)]


@pytest.mark.parametrize("desc", DESCS, ids=lambda d: "%s-%s-%s-%s" % (
    d.family, d.pass_, d.dtype, d.fields().get("akb", d.fields().get("x"))))
def test_the_real_frontend_takes_the_graph(desc, tmp_path):
    plans = cudnn_plans.Plans(cudnn, str(tmp_path))
    try:
        plans._graph(desc, None)
    except (TypeError, ValueError, AttributeError, KeyError):
        raise
    except Exception as e:       # no driver or device to lower the graph to
        assert "cuda" in str(e).lower() or "driver" in str(e).lower() or \
            "device" in str(e).lower(), e
