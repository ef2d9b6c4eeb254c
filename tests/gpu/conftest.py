"""GPU tests: skipped, with the reason, where no CUDA device is usable (mxc opens the driver at
run time: ``mx.context.num_gpus()`` is 0 without libcuda or a device).

The ``test_rerun_*`` files re-run the registry-driven operator tests and the NDArray tests with
the default context gpu(0) (every ``mx.nd.array``/``zeros`` they make lands on the GPU) and
compare with the same numpy references the CPU run uses. A test whose operator has no GPU
kernel yet is reported as skipped naming the operator, so the summary counts what runs on GPU.

MXC_TEST_EMULATED_GPU=DIR runs them without a GPU on the emulated one
(tests/ops/cuda/_emulated_gpu.py: the fake driver, every kernel compiled by g++ on first use
and kept in DIR, GEMMs in numpy), to find what would fail before a GPU is lent; nothing that
needs CuPy, NVRTC or cuDNN themselves can pass there.
"""
import os

import pytest

import mxc as mx

_HERE = os.path.dirname(os.path.abspath(__file__))

_EMULATED = bool(os.environ.get("MXC_TEST_EMULATED_GPU"))
if _EMULATED:
    from tests.ops.cuda import _emulated_gpu
    _cache = os.path.abspath(os.environ["MXC_TEST_EMULATED_GPU"])
    os.environ["MXC_LIBCUDA"] = _emulated_gpu.fake_driver(_cache)
    _emulated_gpu.install(_cache)

# what the emulated GPU cannot stand in for (file, or file::test): skipped there with the reason
_REAL_GPU_ONLY = {
    "test_rtc.py": "mx.rtc loads NVRTC's modules into the driver",
    "test_profiler_gpu.py": "device timing",
    "test_runtime.py::test_chain_of_launches_is_ordered_and_read_back": "CuPy's own kernels",
    "test_runtime.py::test_gpu_results_reach_cpu_operators_in_order": "CuPy's own kernels",
    "test_runtime.py::test_inputs_on_other_devices_are_refused": "CuPy's own kernels",
    "test_runtime.py::test_waitall_waits_for_the_gpu": "CuPy's own kernels",
    "test_runtime.py::test_operator_without_gpu_kernel_names_it": "a child process on the driver",
    "test_runtime.py::test_illegal_address_names_the_operator_at_the_wait": "a faulting kernel",
    "test_runtime.py::test_pinned_memory_is_page_locked": "CuPy's runtime API",
    "test_runtime.py::test_dlpack_with_cupy_zero_copy": "CuPy's arrays",
    "test_rerun_ndarray.py::test_dlpack_with_torch": "PyTorch's CUDA",
    "test_rerun_ndarray.py::test_push_returns_before_work_is_done":
        "asynchrony (the fake driver runs a kernel inside its launch)",
}


def _reason():
    n = mx.context.num_gpus()
    if n == 0:
        from mxc._core import cuda
        return f"no CUDA device ({cuda.status()})"
    return None


# without a GPU the re-run files are not even collected (they would add ~1,000 skips and the
# collection time of their source modules to every CPU run); test_runtime.py says why
collect_ignore_glob = ["test_rerun_*.py"] if _reason() is not None else []


def pytest_collection_modifyitems(config, items):
    why = _reason()
    if why is None:
        if _EMULATED:
            for item in items:
                name = os.path.basename(str(item.fspath))
                reason = (_REAL_GPU_ONLY.get(name)
                          or _REAL_GPU_ONLY.get(name + "::" + item.name.split("[")[0]))
                if reason:
                    item.add_marker(pytest.mark.skip(reason=f"emulated GPU: {reason}"))
        return
    mark = pytest.mark.skip(reason=f"tests/gpu: {why}")
    for item in items:
        if str(item.fspath).startswith(_HERE):
            item.add_marker(mark)


@pytest.fixture(autouse=True)
def _default_gpu(request):
    """Re-run tests (files test_rerun_*) execute with gpu(0) as the default context."""
    if os.path.basename(str(request.fspath)).startswith("test_rerun_") and _reason() is None:
        with mx.gpu(0):
            yield
        mx.nd.waitall()
    else:
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is not None and rep.failed and "has no GPU kernel" in str(call.excinfo.value):
        msg = str(call.excinfo.value).split(";")[0]
        rep.outcome = "skipped"
        rep.longrepr = (str(item.fspath), item.location[1] or 0, f"no GPU kernel: {msg}")
