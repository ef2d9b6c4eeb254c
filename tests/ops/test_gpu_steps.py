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
    ''', fake_lib, MXC_CUDNN_ENABLED=0)     # the im2col steps, whatever cuDNN is installed
    assert out.strip().endswith("ok")


CUDNN_SCENARIO = '''
    import sys
    sys.path.insert(0, os.environ["MXC_TEST_ROOT"])
    from types import SimpleNamespace
    from mxc.ops import _gpu
    from mxc.ops.cuda import loader, cudnn_plans
    from tests.ops.cuda import _fake_cudnn
    fake = _fake_cudnn.make()
    cudnn_plans.use_frontend(fake)
    launched, pushed = [], []
    def kernel(family, name, dev=0):
        launched.append(name)
        return kfn("fake_noop")
    loader.kernel = kernel
    def ptrs(arrays):
        return [SimpleNamespace(data=SimpleNamespace(ptr=cuda.data_address(a))) for a in arrays]
    def push_cupy(fn, opname, ins, outs, dev):
        # the workspace is the last array written: from the pool, on the operator's device
        pushed.append((opname, outs[-1].shape, outs[-1].context == mx.gpu(0)))
        fn(ptrs(ins), ptrs(outs))
        pushed[-1] += (fake.calls[-1][1], fake.calls[-1][2] == cuda.data_address(outs[-1]),
                       fake.calls[-1][3])
    _gpu._push_cupy = push_cupy
    x = gpu_array(np.ones((2, 3, 6, 6), np.float32))
    w = gpu_array(np.ones((4, 3, 3, 3), np.float32))
    b = gpu_array(np.ones((4,), np.float32))
    y = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1))
    dx, dw, db = mx.nd._backward_Convolution(y, x, w, b, kernel=(3, 3), num_filter=4,
                                             pad=(1, 1))
    mx.nd.waitall()
    X, W, Y = (cuda.data_address(a) for a in (x, w, y))
    DX, DW, DY = (cuda.data_address(a) for a in (dx, dw, y))
    assert pushed == [
        ("Convolution", (4096,), True, {1: X, 2: W, 3: Y}, True, "handle0"),
        ("_backward_Convolution", (4096,), True, {1: X, 3: DY, 2: DW}, True, "handle0"),
        ("_backward_Convolution", (4096,), True, {3: DY, 2: W, 1: DX}, True, "handle0")], pushed
    assert launched == ["mxc_conv_add_bias<float>", "mxc_conv_bias_grad<float>"], launched
    assert ("set_stream", "handle0", cuda.stream_handle(0)) in fake.calls
    st = cudnn_plans.plans().stats
    print(st["built"], st["disk"], st["memory"])
'''


def test_convolution_through_cudnn_on_the_fake_driver(fake_lib, tmp_path):  # noqa: F811
    """The fake frontend's plans run on the engine's device worker with the arrays' device
    pointers and a workspace from the storage pool; a second process finds the three plans on
    disk (MXC_CUDNN_PLAN_DIR) and builds none."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(MXC_TEST_ROOT=root, MXC_CUDNN_PLAN_DIR=tmp_path / "plans")
    assert run(CUDNN_SCENARIO, fake_lib, **env).split() == ["3", "0", "0"]
    assert len(os.listdir(tmp_path / "plans")) == 3
    assert run(CUDNN_SCENARIO, fake_lib, **env).split() == ["0", "3", "0"]


BN_SCENARIO = '''
    import sys
    sys.path.insert(0, os.environ["MXC_TEST_ROOT"])
    from types import SimpleNamespace
    from mxc.ops import _gpu
    from mxc.ops.cuda import loader, cudnn_plans, cudnn_norm as N
    from tests.ops.cuda import _fake_cudnn
    fake = _fake_cudnn.make()
    cudnn_plans.use_frontend(fake)
    launched, pushed = [], []
    def kernel(family, name, dev=0):
        launched.append(name)
        return kfn("fake_noop")
    loader.kernel = kernel
    def ptrs(arrays):
        return [SimpleNamespace(data=SimpleNamespace(ptr=cuda.data_address(a))) for a in arrays]
    def push_cupy(fn, opname, ins, outs, dev):
        fn(ptrs(ins), ptrs(outs))
        pushed.append((opname, fake.calls[-1][1], fake.calls[-1][2] - cuda.data_address(outs[-1]),
                       outs[-1].shape))
    _gpu._push_cupy = push_cupy
    x = gpu_array(np.ones((2, 3, 4, 4), np.float32))
    g, b, mm, mv = (gpu_array(np.ones((3,), np.float32)) for _ in range(4))
    with mx.autograd.train_mode():
        y = mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=True)
        dx, dg, db = mx.nd._backward_BatchNorm(y, x, g, b, mm, mv, fix_gamma=True)
    mx.nd.waitall()
    (fwd, ptr_f, ws_f, shape_f), (bwd, ptr_b, ws_b, shape_b) = pushed
    assert (fwd, bwd) == ("BatchNorm", "_backward_BatchNorm"), pushed
    # the arrays' pointers; the statistics and gamma's ones in the workspace, cuDNN's own
    # workspace after them (256-byte aligned); the workspace from the pool, sized for both
    assert ptr_f[N.UID_X] == cuda.data_address(x) and ptr_f[N.UID_Y] == cuda.data_address(y)
    assert ptr_f[N.UID_BIAS] == cuda.data_address(b)
    assert ptr_b[N.UID_DX] == cuda.data_address(dx) and ptr_b[N.UID_DY] == cuda.data_address(y)
    assert ptr_b[N.UID_DSCALE] == cuda.data_address(dg)
    assert ws_f % 256 == 0 and ws_f + 4096 <= shape_f[0] and ws_b + 4096 <= shape_b[0]
    assert launched == ["mxc_fill<float>", "mxc_bn_partial<float>", "mxc_bn_mean",
                        "mxc_bn_partial<float>", "mxc_bn_var<float>", "mxc_fill<float>",
                        "mxc_fill<float>", "mxc_bn_bwd_channel<float>"], launched
    print(cudnn_plans.plans().stats["built"])
'''


def test_batchnorm_through_cudnn_on_the_fake_driver(fake_lib, tmp_path):  # noqa: F811
    """BatchNorm's cuDNN graphs and the launches around them run in order on the engine's
    device worker, the graphs' statistics rows and their own workspace in one pool block."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(MXC_TEST_ROOT=root, MXC_CUDNN_PLAN_DIR=tmp_path / "plans")
    assert run(BN_SCENARIO, fake_lib, **env).split() == ["2"]
