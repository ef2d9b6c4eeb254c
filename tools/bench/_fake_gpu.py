"""Dry runs of the GPU benchmarks without a GPU (tools/gpu_check.sh --dry-run): with
MXC_BENCH_FAKE_GPU=1 and MXC_LIBCUDA naming the fake CUDA driver of tests/_core
(fake_libcuda.py, built by gpu_check.sh), every kernel mxc asks for is the fake's no-op, cuBLAS
and cuDNN steps and device-side index checks are skipped (with MXC_BENCH_FAKE_CUDNN=1 the
tests' fake cuDNN frontend builds and stores plans), so a benchmark runs its whole mxc
code path (operators, launch specs, engine, CUDA graphs) in seconds and its figures mean
nothing: it prints a "dry_run" line saying so. Used only by the tools, never by mxc."""
import ctypes
import os


def install_if_asked():
    """Patch mxc's kernel loader and GPU step runners when MXC_BENCH_FAKE_GPU is set; returns
    whether it did."""
    if not os.environ.get("MXC_BENCH_FAKE_GPU"):
        return False
    from mxc.ops import _gpu
    from mxc.ops.cuda import cudnn_plans, loader
    from bench_gpu import emit
    lib = ctypes.CDLL(os.environ["MXC_LIBCUDA"])
    noop = ctypes.cast(lib.fake_noop, ctypes.c_void_p).value
    names = loader.instantiations

    def kernel(family, name, device_id=0):
        if name not in names(family):      # the real loader's check: a typo still fails
            raise KeyError("CUDA family %r has no kernel %r" % (family, name))
        return noop
    loader.kernel = kernel
    loader.generated_kernel = lambda name, source, device_id=0: noop
    _gpu._push_cupy = lambda run, opname, inputs, outputs, dev: None
    _gpu._push_check = lambda check, opname, inputs, outputs, dev: None
    fake_cudnn = None
    if os.environ.get("MXC_BENCH_FAKE_CUDNN"):
        # the fake cuDNN frontend of the tests: plans are "built", stored in
        # MXC_CUDNN_PLAN_DIR and found there by a second process, as with the real one
        from tests.ops.cuda import _fake_cudnn
        fake_cudnn = _fake_cudnn.make()
        if not hasattr(fake_cudnn, "backend_version"):     # what bench_gpu_cudnn.py prints
            fake_cudnn.backend_version = lambda: 0
        fake_cudnn.__version__ = "fake"
    cudnn_plans.use_frontend(fake_cudnn)
    emit("dry_run", "mxc", unit="",
         error="FAKE CUDA driver, no-op kernels: the figures mean nothing")
    return True
