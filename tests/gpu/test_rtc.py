"""mx.rtc on a real GPU (skipped without one, see conftest.py): MXNet 1.9's axpy examples,
exported templates, float16 and int64 scalars, and engine order with mxc's own operators."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

SRC = r'''
#include <cuda_fp16.h>
extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    y[i] += alpha * x[i];
}
template <typename T> __global__ void axpy_t(const T *x, T *y, T alpha, long long n) {
    long long i = threadIdx.x + (long long)blockIdx.x * blockDim.x;
    if (i < n) y[i] = y[i] + alpha * x[i];
}
extern "C" __global__ void half_scale(__half *y, __half a) {
    y[threadIdx.x] = __hmul(y[threadIdx.x], a);
}
'''


@pytest.fixture(scope="module")
def module():
    pytest.importorskip("cupy")
    return mx.rtc.CudaModule(SRC, exports=["axpy_t<float>", "axpy_t<double>"])


def test_axpy_extern_c(module):
    k = module.get_kernel("axpy", "const float *x, float *y, float alpha")
    x = mx.nd.ones((10,), ctx=mx.gpu(0))
    y = mx.nd.zeros((10,), ctx=mx.gpu(0))
    k.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))
    np.testing.assert_array_equal(y.asnumpy(), np.full(10, 3.0, np.float32))


@pytest.mark.parametrize("dtype,name", [("float32", "axpy_t<float>"),
                                        ("float64", "axpy_t<double>")])
def test_exported_templates_in_engine_order(module, dtype, name):
    ct = "float" if dtype == "float32" else "double"
    k = module.get_kernel(name, f"const {ct} *x, {ct} *y, {ct} alpha, int64_t n")
    n = 100_000
    xh = np.random.default_rng(0).standard_normal(n).astype(dtype)
    x = mx.nd.array(xh, ctx=mx.gpu(0), dtype=dtype)
    y = x * 2                                   # queued before the launch that writes y
    k.launch([x, y, 0.5, n], mx.gpu(0), ((n + 255) // 256, 1, 1), (256, 1, 1))
    z = y + 1                                   # reads the launch's result
    np.testing.assert_allclose(z.asnumpy(), xh * 2 + 0.5 * xh + 1, rtol=1e-6)


def test_half_scalar(module):
    k = module.get_kernel("half_scale", "__half *y, __half a")
    y = mx.nd.array(np.arange(8), ctx=mx.gpu(0), dtype="float16")
    k.launch([y, 1.5], mx.gpu(0), (1, 1, 1), (8, 1, 1))
    np.testing.assert_array_equal(y.asnumpy(), np.arange(8, dtype=np.float16) * 1.5)


def test_unknown_kernel_names_the_remedy(module):
    k = module.get_kernel("axpy_t<int>", "const int *x, int *y, int a, int64_t n")
    x = mx.nd.ones((4,), ctx=mx.gpu(0), dtype="int32")
    with pytest.raises(MXNetError, match="add its name to exports"):
        k.launch([x, x, 1, 4], mx.gpu(0), (1, 1, 1), (4, 1, 1))
