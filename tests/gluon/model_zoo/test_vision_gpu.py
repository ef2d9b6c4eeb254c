"""Every gluon.model_zoo.vision network trains on gpu(0) (issue 24): a training step (forward,
SoftmaxCrossEntropyLoss, backward, SGD with momentum) and an inference forward of each of the
34 models, on the fake CUDA driver of tests/_core (tests/_core/fake_libcuda.py), so every
operator call goes through mxc.ops._gpu's dispatch and launch specs for real: an operator
without a GPU launch for its attributes and dtypes raises naming it, and the test lists them.
The kernels are the fake's no-op (what each kernel computes is checked against the CPU
operator by the emulation tests, tests/ops/cuda/test_emulated_*.py), the cuBLAS/cuDNN steps are
recorded, not run; every kernel name a spec asks for must be one of its family's
instantiations (the names tools/check_cuda.py compiles through NVRTC).
Beside fp32: float16 with multi_precision SGD, hybridized static graphs, mx.contrib.amp, and
the Module API with SoftmaxOutput, on a few networks of each kind. (A float16 cast net that is
hybridized before its first call fails on the CPU as well: the deferred shape inference fills
BatchNorm's unknown data dtype from gamma's float32; not a GPU matter, left out here.)"""
import textwrap

import pytest

from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fake driver fixture)

ZOO = '''
    import time
    from mxc import autograd, gluon
    from mxc.ops import _gpu
    from mxc.ops.cuda import loader, _launch
    from mxc.gluon.model_zoo import vision
    kernels, cupy_steps, missing = set(), [], {}
    def kernel(family, name, dev=0):
        assert name in _launch.instantiations(family), (family, name)
        kernels.add((family, name))
        return kfn("fake_noop")
    loader.kernel = kernel
    _gpu._push_cupy = lambda fn, opname, ins, outs, dev: cupy_steps.append(opname)
    _gpu._push_check = lambda fn, opname, ins, outs, dev: None
    spec0 = _gpu._spec
    def spec(opname, attrs, inputs, outputs, family, kern, iattr, fattr):
        try:
            return spec0(opname, attrs, inputs, outputs, family, kern, iattr, fattr)
        except MXNetError as e:
            dts = ",".join(np.dtype(a.dtype).name for a in inputs)
            missing.setdefault("%s(%s) [%s]" % (opname, dts, str(e)[:120]), CURRENT)
            raise
    _gpu._spec = spec
    from tests.gluon.model_zoo._zoo_step import smallest_size
    ctx = mx.gpu(0)
    failed = {}
    def step(name, dtype="float32", hybrid=False, amp=None):
        global CURRENT
        CURRENT = name
        size = smallest_size(name)
        net = vision.get_model(name, classes=10)
        net.initialize(mx.init.Constant(0.01), ctx=ctx)  # filled on the device (Xavier:
        # random numbers on the host, 20 M of them for a VGG: most of the test's time)
        if dtype != "float32":
            net.cast(dtype)
        if hybrid:
            net.hybridize(static_alloc=True, static_shape=True)
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9,
                           "multi_precision": dtype != "float32"})
        if amp is not None:
            amp.init_trainer(tr)
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        x = mx.nd.zeros((2, 3, size, size), ctx=ctx, dtype=dtype)
        y = mx.nd.array([1, 7], ctx=ctx, dtype=dtype)
        n0 = lib.fake_stat(0)
        with autograd.record():
            L = loss(net(x), y)
            if amp is not None:
                with amp.scale_loss(L, tr) as scaled:
                    autograd.backward(scaled)
        if amp is None:
            L.backward()
        tr.step(2)
        out = net(x)                        # inference: BatchNorm's moving statistics, no dropout
        mx.nd.waitall()
        assert out.shape == (2, 10) and out.context == ctx, (name, out.shape, out.context)
        assert all(p.data().context == ctx for p in net.collect_params().values())
        assert lib.fake_stat(0) > n0        # the step launched kernels on the fake device
    def each(names, **kw):
        for name in names:
            try:
                step(name, **kw)
            except MXNetError as e:
                failed[(name, kw.get("dtype", "float32"))] = str(e)[:300]
'''

REPORT = '''
    assert not missing, "operators without a GPU launch: " + repr(missing)
    assert not failed, failed
    print("ok", len(kernels), len(set(cupy_steps)))
'''


# the 34 networks in four child processes of a few seconds each (the kernels do nothing: the
# time is the operators' Python and the fake's host allocations)
GROUPS = {"resnet": lambda n: n.startswith("resnet"), "vgg": lambda n: n.startswith("vgg"),
          "densenet": lambda n: n.startswith("densenet"),
          "others": lambda n: not n.startswith(("resnet", "vgg", "densenet"))}


def test_the_groups_hold_the_34_networks():
    from mxc.gluon.model_zoo import vision
    names = sorted(vision._MODELS)
    assert len(names) == 34
    assert sorted(n for g in GROUPS.values() for n in names if g(n)) == names


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_model_zoo_network_trains_on_the_fake_gpu(fake_lib, group):  # noqa: F811
    """fp32, imperative, training step and inference."""
    names = [n for n in sorted(__import__("mxc").gluon.model_zoo.vision._MODELS)
             if GROUPS[group](n)]
    out = run(textwrap.dedent(ZOO) + textwrap.dedent('''
        each(%r)
    ''' % names) + textwrap.dedent(REPORT), fake_lib, MXC_CUDNN_ENABLED=0)
    assert out.split()[0] == "ok"
    # convolution's im2col/col2im, BatchNorm or not, pooling, the loss and the momentum update
    assert int(out.split()[1]) >= 15, out


@pytest.mark.parametrize("dtype, hybrid, cudnn", [("float16", False, False),
                                                  ("float32", True, False),
                                                  ("float32", False, True),
                                                  ("float16", False, True)])
def test_float16_static_graphs_and_cudnn(fake_lib, tmp_path, dtype, hybrid, cudnn):  # noqa: F811
    """One network of each kind cast to float16 with float32 master weights (multi_precision
    SGD), hybridized with static_alloc + static_shape, and with convolution through cuDNN (the
    tests' fake frontend, tests/ops/cuda/_fake_cudnn.py: plans built and stored, no engine
    refused) instead of im2col."""
    setup = ("from tests.ops.cuda import _fake_cudnn\n"
             "from mxc.ops.cuda import cudnn_plans\n"
             "cudnn_plans.use_frontend(_fake_cudnn.make())\n") if cudnn else ""
    out = run(textwrap.dedent(ZOO) + setup + textwrap.dedent('''
        each(["resnet18_v1", "resnet50_v2", "vgg11_bn", "alexnet", "densenet121",
              "squeezenet1.1", "inceptionv3", "mobilenet0.25", "mobilenetv2_0.25"],
             dtype="%s", hybrid=%s)
        if %s:
            st = cudnn_plans.plans().stats
            assert st["built"] > 0, st
    ''' % (dtype, hybrid, cudnn)) + textwrap.dedent(REPORT), fake_lib,
        MXC_CUDNN_ENABLED=int(cudnn), MXC_CUDNN_PLAN_DIR=tmp_path / "plans")
    assert out.split()[0] == "ok"


def test_amp_and_module_softmax_output(fake_lib):  # noqa: F811
    """mx.contrib.amp (float16 casts inserted into the hybridized graph, dynamic loss scaling)
    and the Module API's SoftmaxOutput training (its forward had no GPU launch before)."""
    out = run(textwrap.dedent(ZOO) + textwrap.dedent('''
        from mxc.contrib import amp
        amp.init("float16")
        each(["resnet18_v1", "mobilenetv2_0.25", "vgg11_bn", "squeezenet1.1"], amp=amp,
             hybrid=True)
        for name in ["resnet18_v2", "mobilenet0.25", "densenet121"]:
            CURRENT = name
            size = 224 if name.startswith("densenet") else 32
            sym = mx.sym.SoftmaxOutput(vision.get_model(name, classes=10)(mx.sym.var("data")),
                                       name="softmax")
            mod = mx.mod.Module(sym, context=ctx)
            mod.bind(data_shapes=[("data", (2, 3, size, size))],
                     label_shapes=[("softmax_label", (2,))])
            mod.init_params(mx.init.Xavier())
            mod.init_optimizer(optimizer="sgd",
                               optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
            batch = mx.io.DataBatch([mx.nd.zeros((2, 3, size, size))], [mx.nd.array([1, 7])])
            try:
                mod.forward_backward(batch)
                mod.update()
                mx.nd.waitall()
            except MXNetError as e:
                failed[(name, "module")] = str(e)[:300]
    ''') + textwrap.dedent(REPORT), fake_lib, MXC_CUDNN_ENABLED=0)
    assert out.split()[0] == "ok"
