"""The GPU runtime on a real device (skipped without one, see conftest.py): arrays and copies,
engine ordering and host synchronisation, errors naming the operator, storage counters, pinned
memory and DLPack with CuPy and PyTorch. Kernels come from CuPy (RawKernel), launched through
mxc's driver-API launcher on the engine's device worker."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxc as mx
from mxc._core import cuda, storage
from mxc.base import MXNetError
from mxc.ops.cuda.loader import function_pointer

ADD = r'''
extern "C" __global__ void add_f32(const float *a, const float *b, float *y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] + b[i];
}
extern "C" __global__ void poke(float *p, long long off) { p[off] = 1.0f; }
'''


@pytest.fixture(scope="module")
def kernels():
    cupy = pytest.importorskip("cupy")
    with cupy.cuda.Device(0):
        mod = cupy.RawModule(code=ADD)
        return {k: function_pointer(mod.get_function(k)) for k in ("add_f32", "poke")}


def launch_add(k, a, b, out, name="add_f32"):
    n = out.size
    cuda.push_launch(k["add_f32"], ((n + 255) // 256,), (256,), 0,
                     [("in", 0), ("in", 1), ("out", 0), ("i64", n)], [a, b], [out], name,
                     out.context.device_id)


def test_arrays_and_copies_between_devices(rng):
    x = rng.standard_normal((7, 9)).astype(np.float32)
    g = mx.nd.array(x, ctx=mx.gpu(0))
    assert g.context == mx.gpu(0)
    np.testing.assert_array_equal(g.asnumpy(), x)
    c = g.as_in_context(mx.cpu())
    np.testing.assert_array_equal(c.asnumpy(), x)
    g2 = c.copyto(mx.gpu(0))
    g3 = g2.copyto(mx.gpu(0))
    np.testing.assert_array_equal(g3.asnumpy(), x)
    p = g3.as_in_context(mx.cpu_pinned())
    np.testing.assert_array_equal(p.asnumpy(), x)
    if mx.context.num_gpus() > 1:
        h = g3.copyto(mx.gpu(1))
        np.testing.assert_array_equal(h.asnumpy(), x)


def test_chain_of_launches_is_ordered_and_read_back(kernels, rng):
    n = 1 << 16
    acc = mx.nd.array(np.zeros(n, np.float32), ctx=mx.gpu(0))     # (no init kernel needed)
    one = mx.nd.array(np.ones(n, np.float32), ctx=mx.gpu(0))
    for _ in range(500):
        launch_add(kernels, acc, one, acc)
    np.testing.assert_array_equal(acc.asnumpy(), np.full(n, 500, np.float32))
    # a host read right after one op: the event after the writer, not a device-wide sync
    x = rng.standard_normal(n).astype(np.float32)
    a = mx.nd.array(x, ctx=mx.gpu(0))
    out = mx.nd.empty((n,), ctx=mx.gpu(0))
    launch_add(kernels, a, a, out)
    out.wait_to_read()
    np.testing.assert_array_equal(cuda.to_numpy(out), 2 * x)
    mx.nd.waitall()


def test_gpu_results_reach_cpu_operators_in_order(kernels, rng):
    x = rng.standard_normal(1000).astype(np.float32)
    a = mx.nd.array(x, ctx=mx.gpu(0))
    out = mx.nd.empty((1000,), ctx=mx.gpu(0))
    launch_add(kernels, a, a, out)
    c = out.as_in_context(mx.cpu()) * 3          # CPU op after a D2H copy after a launch
    np.testing.assert_allclose(c.asnumpy(), 6 * x, rtol=1e-6)


def test_operator_without_gpu_kernel_names_it():
    a = mx.nd.array(np.ones((1, 1, 3), np.float32), ctx=mx.gpu(0))
    w = mx.nd.array(np.ones((1, 1, 1), np.float32), ctx=mx.gpu(0))
    with pytest.raises(MXNetError, match="no GPU kernel"):
        mx.nd.Convolution(a, w, kernel=(1,), num_filter=1, no_bias=True).wait_to_read()


def test_inputs_on_other_devices_are_refused(kernels):
    a = mx.nd.array(np.ones(4, np.float32), ctx=mx.gpu(0))
    c = mx.nd.ones((4,))
    with pytest.raises(MXNetError, match="add_f32: an input is on cpu"):
        launch_add(kernels, a, c, a)


def test_illegal_address_names_the_operator_at_the_wait():
    # the device's context is unusable afterwards: a child process
    pytest.importorskip("cupy")
    code = textwrap.dedent(f'''
        import cupy, mxc as mx
        from mxc._core import cuda
        from mxc.base import MXNetError
        from mxc.ops.cuda.loader import function_pointer
        k = function_pointer(cupy.RawModule(code={ADD!r}).get_function("poke"))
        a = mx.nd.array([0, 0, 0, 0], ctx=mx.gpu(0))
        cuda.push_launch(k, (1,), (1,), 0, [("out", 0), ("i64", 1 << 40)], [], [a],
                         "my_bad_poke", 0)
        try:
            a.wait_to_read()
        except MXNetError as e:
            assert "my_bad_poke" in str(e) and "ILLEGAL_ADDRESS" in str(e), str(e)
            print("named")
    ''')
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ))
    assert "named" in r.stdout, r.stdout + r.stderr


def test_storage_counters_limit_and_release():
    storage.release_all(2, 0)
    before = storage.stats(2, 0)
    a = mx.nd.array(np.zeros(1 << 20, np.float32), ctx=mx.gpu(0))
    a.wait_to_read()
    s = storage.stats(2, 0)
    assert s["in_use"] - before["in_use"] == 4 << 20
    free_before = mx.context.gpu_memory_info(0)[0]
    del a
    s = storage.stats(2, 0)
    assert s["in_use"] == before["in_use"] and s["pooled"] >= 4 << 20
    assert storage.release_all(2, 0) >= 4 << 20
    assert mx.context.gpu_memory_info(0)[0] >= free_before


def test_pinned_memory_is_page_locked():
    cupy = pytest.importorskip("cupy")
    p = mx.nd.array(np.arange(1024, dtype=np.float32), ctx=mx.cpu_pinned())
    addr = cuda.data_address(p)
    attrs = cupy.cuda.runtime.pointerGetAttributes(addr)
    assert attrs.type == cupy.cuda.runtime.memoryTypeHost      # cuMemHostAlloc memory


def test_dlpack_with_cupy_zero_copy(rng):
    cupy = pytest.importorskip("cupy")
    x = rng.standard_normal((5, 6)).astype(np.float32)
    g = mx.nd.array(x, ctx=mx.gpu(0))
    assert g.__dlpack_device__() == (2, 0)
    c = cupy.from_dlpack(g)
    assert c.data.ptr == cuda.data_address(g)
    np.testing.assert_array_equal(cupy.asnumpy(c), x)
    y = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    m = mx.nd.from_dlpack(y)
    assert m.context == mx.gpu(0) and cuda.data_address(m) == y.data.ptr
    np.testing.assert_array_equal(m.asnumpy(), cupy.asnumpy(y))


def test_dlpack_with_torch_zero_copy(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    t = torch.arange(10, dtype=torch.float32, device="cuda:0")
    m = mx.nd.from_dlpack(t)
    assert cuda.data_address(m) == t.data_ptr()
    np.testing.assert_array_equal(m.asnumpy(), np.arange(10, dtype=np.float32))
    g = mx.nd.array(np.ones(4, np.float32), ctx=mx.gpu(0))
    u = torch.from_dlpack(g)
    assert u.data_ptr() == cuda.data_address(g)
    u.mul_(3)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(g.asnumpy(), np.full(4, 3, np.float32))


def test_waitall_waits_for_the_gpu(kernels):
    n = 1 << 20
    a = mx.nd.array(np.ones(n, np.float32), ctx=mx.gpu(0))
    for _ in range(50):
        launch_add(kernels, a, a, a)
    mx.nd.waitall()
    assert float(cuda.to_numpy(a)[0]) == 2.0 ** 50
