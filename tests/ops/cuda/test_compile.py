"""Every CUDA kernel compiles for sm_80/sm_90 through NVRTC with no warning, spill or stack use
(tools/check_cuda.py). Needs cupy + NVRTC (the `gpu` extra), no GPU; skipped otherwise."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

try:
    from cupy.cuda import nvrtc
    nvrtc.getVersion()
    HAVE_NVRTC = True
except Exception:  # cupy or libnvrtc missing
    HAVE_NVRTC = False


def _check():
    spec = importlib.util.spec_from_file_location("_check_cuda", os.path.join(ROOT, "tools", "check_cuda.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not HAVE_NVRTC, reason="cupy with NVRTC not installed (pip install 'mxc[gpu]')")
@pytest.mark.skipif(not os.path.isfile(os.path.join(ROOT, "tools", "check_cuda.py")),
                    reason="tools/check_cuda.py is not beside these tests (CI runs it on its own)")
@pytest.mark.parametrize("family", ["init", "activation"])
def test_family_compiles_clean(family):
    failures, summary = _check().check([90], [family], 0, out=open(os.devnull, "w"))
    assert failures == []
    assert summary["%s/sm_90" % family]["kernels"] > 0
