"""mxc/ops/_gpu.py's "steps" specs (kernel launches and cuBLAS GEMMs in order, one workspace
from the storage pool: the im2col convolution) on the fake CUDA driver of tests/_core: the
launches are packed and run through the engine's device worker (the fake driver's no-op kernel
stands in for the CUDA code, GEMM steps are recorded instead of calling cuBLAS), so the
workspace views, argument packing and the order of the pushes are checked without a GPU."""
from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fake driver fixture)


def test_convolution_steps_on_the_fake_driver(fake_lib):  # noqa: F811
    out = run('''
        from mxc.ops import _gpu
        from mxc.ops.cuda import loader
        launched, gemms = [], []
        def kernel(family, name, dev=0):
            launched.append(name)
            return kfn("fake_noop")
        loader.kernel = kernel
        def push_cupy(fn, opname, ins, outs, dev):
            gemms.append((opname, len(ins), len(outs), outs[-1].shape))
        _gpu._push_cupy = push_cupy
        x = gpu_array(np.ones((2, 3, 6, 6), np.float32))
        w = gpu_array(np.ones((4, 3, 3, 3), np.float32))
        b = gpu_array(np.ones((4,), np.float32))
        y = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1))
        mx.nd.waitall()
        assert y.shape == (2, 4, 6, 6) and y.context == mx.gpu(0)
        assert launched == ["mxc_im2col<float>", "mxc_conv_permute_out<float>"], launched
        # the GEMM reads x, w, b and writes y and the workspace: col (3*9 x 2*36 floats,
        # rounded up to 256 bytes) then tmp (4 x 2*36 floats)
        assert gemms == [("Convolution", 3, 2, (7936 + 4 * 72 * 4,))], gemms
        assert lib.fake_stat(0) == 2
        dx, dw, db = mx.nd._backward_Convolution(y, x, w, b, kernel=(3, 3), num_filter=4,
                                                 pad=(1, 1))
        mx.nd.waitall()
        assert launched[2:] == ["mxc_im2col<float>", "mxc_conv_permute_in<float>",
                                "mxc_conv_permute_in<float>", "mxc_col2im<float>",
                                "mxc_conv_bias_grad<float>"], launched
        assert [g[0] for g in gemms[1:]] == ["_backward_Convolution"] * 2
        print("ok")
    ''', fake_lib)
    assert out.strip().endswith("ok")
