"""mx.rtc (mxc/rtc.py): MXNet 1.9's signature parsing and argument checks (no GPU), NVRTC
compiles of extern "C" and exported template kernels (where CuPy with NVRTC is installed), and
the launch path on the fake CUDA driver of tests/_core (arguments packed as declared, const
arrays read and the others written in engine order). The real-GPU run is tests/gpu/test_rtc.py."""
import numpy as np
import pytest

import mxc as mx
from mxc import rtc
from mxc.base import MXNetError
from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fake driver fixture)

try:
    from cupy.cuda import nvrtc
    nvrtc.getVersion()
    HAVE_NVRTC = True
except Exception:
    HAVE_NVRTC = False
needs_nvrtc = pytest.mark.skipif(not HAVE_NVRTC, reason="cupy with NVRTC not installed")

SRC = r'''
extern "C" __global__ void axpy(const float *x, float *y, float alpha, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) y[i] += alpha * x[i];
}
template <typename T> __global__ void scale(T *y, T a) { y[threadIdx.x] *= a; }
'''


def test_signature_as_mxnet_reads_it():
    sig = rtc.parse_signature("const float *x, double *y,int alpha, int64_t  n, __half *h, "
                              "const uint8_t*, char c")
    assert [(a, c, d.name, k) for a, c, d, k in sig] == [
        (True, True, "float32", "f32"), (True, False, "float64", "f64"),
        (False, False, "int32", "i32"), (False, False, "int64", "i64"),
        (True, False, "float16", "f16"), (True, True, "uint8", "u8"),
        (False, False, "int8", "i8")]
    with pytest.raises(TypeError, match="Unsupported kernel argument type unsigned"):
        rtc.parse_signature("const float *x, unsigned n")
    with pytest.raises(ValueError, match="Invalid function prototype"):
        rtc.parse_signature("const float **x")
    with pytest.raises(ValueError, match="Invalid function prototype"):
        rtc.parse_signature("const *x")


class _Module:
    """a CudaModule's loading side for the checks below: never reached on a bad launch"""
    def _function(self, name, dev):
        raise AssertionError("a bad launch must fail before loading the kernel")


def test_launch_checks_fail_before_anything_runs():
    k = rtc.CudaKernel(_Module(), "axpy", rtc.parse_signature("const float *x, float *y, "
                                                              "float a, int n"))
    x = mx.nd.ones((4,))
    with pytest.raises(MXNetError, match="only be launched on a GPU"):
        k.launch([x, x, 1.0, 4], mx.cpu(), (1, 1, 1), (4, 1, 1))
    with pytest.raises(MXNetError, match="expects 4 arguments but got 3"):
        k.launch([x, x, 1.0], mx.gpu(0), (1, 1, 1), (4, 1, 1))
    with pytest.raises(MXNetError, match="tuples of 3"):
        k.launch([x, x, 1.0, 4], mx.gpu(0), (1, 1), (4, 1, 1))
    with pytest.raises(MXNetError, match="0-th argument is expected to be a NDArray"):
        k.launch([np.ones(4, np.float32), x, 1.0, 4], mx.gpu(0), (1, 1, 1), (4, 1, 1))
    with pytest.raises(MXNetError, match="of float32 type, but got float64"):
        k.launch([mx.nd.ones((4,), dtype="float64"), x, 1.0, 4], mx.gpu(0), (1, 1, 1),
                 (4, 1, 1))
    with pytest.raises(MXNetError, match="is on cpu"):
        k.launch([x, x, 1.0, 4], mx.gpu(0), (1, 1, 1), (4, 1, 1))
    k2 = rtc.CudaKernel(_Module(), "fill", rtc.parse_signature("int n, float *y"))
    for bad in ("4", None, True):
        with pytest.raises(MXNetError, match="0-th argument is expected to be a number"):
            k2.launch([bad, x], mx.gpu(0), (1, 1, 1), (4, 1, 1))


@needs_nvrtc
def test_compile_extern_c_and_exported_templates():
    m = rtc.CudaModule(SRC, exports=("scale<float>", "scale<double>"))
    assert m._lowered["scale<float>"].startswith("_Z") and "scale" in m._lowered["scale<float>"]
    ptx = m._ptx.decode() if isinstance(m._ptx, bytes) else m._ptx
    assert ".entry axpy(" in ptx and m._lowered["scale<double>"] in ptx
    k = m.get_kernel("scale<double>", "double *y, double a")
    assert k.name == "scale<double>"


@needs_nvrtc
def test_compile_error_carries_nvrtc_log():
    with pytest.raises(MXNetError, match="(?s)NVRTC failed.*undefined_thing"):
        rtc.CudaModule('extern "C" __global__ void f(float *y) { y[0] = undefined_thing; }')
    with pytest.raises(TypeError, match="source must be a str"):
        rtc.CudaModule(b"bytes")


def test_launch_on_the_fake_driver(fake_lib):  # noqa: F811
    out = run('''
        from mxc import rtc
        class Module:              # the fake driver's kernels are host functions
            def _function(self, name, dev):
                return kfn({"add": "fake_add_f32", "axpb": "fake_axpb"}[name])
        add = rtc.CudaKernel(Module(), "add", rtc.parse_signature(
            "const float *x, const float *y, float *out, int64_t n"))
        x = gpu_array(np.arange(6, dtype=np.float32))
        y = gpu_array(np.full(6, 10, np.float32))
        o = gpu_array(np.zeros(6, np.float32))
        add.launch([x, y, o, 6], mx.gpu(0), (1, 1, 1), (32, 1, 1))
        assert cuda.to_numpy(o).tolist() == [10, 11, 12, 13, 14, 15]
        # the output is a written var: a launch reading it runs after the first (engine order)
        add.launch([o, o, x, np.int64(6)], mx.gpu(0), (1, 1, 1), (32, 1, 1))
        assert cuda.to_numpy(x).tolist() == [20, 22, 24, 26, 28, 30]
        assert lib.fake_stat(0) == 2
        print("ok")
    ''', fake_lib)
    assert out.strip().endswith("ok")
