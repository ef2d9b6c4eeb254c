"""The GPU launch tests build specs without a GPU: whatever ``cudnn`` module the machine has,
they see none (im2col + cuBLAS) unless a test installs the fake frontend
(_fake_cudnn.installed), so they check the same steps on every machine."""
import pytest

from mxc.ops.cuda import cudnn_plans


@pytest.fixture(autouse=True)
def _no_real_cudnn():
    cudnn_plans.use_frontend(None)
    yield
    cudnn_plans.use_frontend(None, probe=True)
