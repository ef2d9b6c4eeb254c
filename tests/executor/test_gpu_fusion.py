"""Pointwise chains of a static graph on a GPU run as ONE generated kernel (mxc/ops/cuda/
fusion.py), on the fake CUDA driver (tests/_core/fake_libcuda.py): the fake counts launches.
Operators get their per-operator launches from test_cuda_graphs' stand-in launch_spec (the
fake's add and scale kernels); the generated kernel is the fake's no-op, its source kept for
the assertions (what it computes is checked by the g++ emulation, tests/ops/cuda/
test_fusion_codegen.py)."""
import textwrap

from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fixture)
from tests.executor.test_cuda_graphs import SETUP

BLOCK = '''
    generated = []
    loader.generated_kernel = lambda name, src, dev: (generated.append((name, src)),
                                                      kfn("fake_noop"))[1]
    class Chain(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, w):
            return ((x + w) * 3.0) * 0.5
    net = Chain()
    net.hybridize(static_alloc=True, static_shape=True)
    wv = gx((4, 50))
    w_gpu = mx.nd.array(wv, ctx=mx.gpu(0))
    launches = []
    for i in range(4):
        xv = gx((4, 50))
        x_gpu = mx.nd.array(xv, ctx=mx.gpu(0))
        mx.nd.waitall()
        s0 = stats()
        y = net(x_gpu, w_gpu)
        mx.nd.waitall()
        launches.append(delta(s0)["launch"])
        last = (y, xv)
'''


def _run(code, lib, **env):
    env.setdefault("MXNET_ENABLE_CUDA_GRAPHS", 0)
    env.setdefault("MXNET_USE_FUSION", 1)
    return run(textwrap.dedent(SETUP) + textwrap.dedent(BLOCK) + textwrap.dedent(code), lib,
               **env)


def test_chain_is_one_launch(fake_lib):
    """Warm-up run: the 3 operators' launches; from the second run (the steps captured) the
    add and both scalings are one launch of one generated kernel, compiled once."""
    out = _run('''
        assert launches[0] == 3, launches
        assert launches[1:] == [1, 1, 1], launches
        assert len(generated) == 1, generated
        name, src = generated[0]
        assert 'extern "C" __global__ void %s(' % name in src
        # one add and two scalings, in the vector loop and the element-by-element loop
        assert src.count("apply2(op_add()") == 2 and src.count("apply2(op_mul()") == 4, src
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_fusion_off(fake_lib):
    """MXNET_USE_FUSION=0: every operator launches its own kernel, with the right values."""
    out = _run('''
        assert launches == [3, 3, 3, 3], launches
        assert not generated
        y, xv = last
        np.testing.assert_allclose(y.asnumpy(), ((xv + wv) * 3.0) * 0.5, rtol=1e-6)
        print("ok")
    ''', fake_lib, MXNET_USE_FUSION=0)
    assert out.strip() == "ok"


def test_bound_executor_forward_and_backward_chains(fake_lib):
    """A bound executor's forward (tanh, scalar mul, sigmoid, add: 4 launches) and backward
    (sigmoid', scalar mul, tanh', the gradient sum) each become one generated kernel from the
    second run (the head gradient's ones() is counted apart). The stand-in maps
    the backward operators to the fake's kernels (only the launch count is read)."""
    out = _run('''
        base_spec = pkg.launch_spec
        def spec2(opname, attrs, inputs, outputs, **kw):
            r = base_spec(opname, attrs, inputs, outputs, **kw)
            if r is None and len(inputs) == 1:
                r = base_spec("_mul_scalar", {"scalar": 1.0}, inputs, outputs)
            if r is None and len(inputs) == 2:
                r = base_spec("_plus", {}, inputs, outputs)
            return r
        pkg.launch_spec = spec2
        generated.clear()
        x = mx.sym.var("x")
        ex = (mx.sym.sigmoid(mx.sym.tanh(x) * 3.0) + x).simple_bind(mx.gpu(0), x=(4, 50))
        fwd, bwd = [], []
        for i in range(4):
            mx.nd.waitall()
            s0 = stats()
            ex.forward(is_train=True)
            mx.nd.waitall()
            s1 = stats()
            ex.backward(mx.nd.ones((4, 50), ctx=mx.gpu(0)))
            mx.nd.waitall()
            fwd.append(s1["launch"] - s0["launch"])
            bwd.append(delta(s1)["launch"] - 1)      # less the head gradient's fill
        assert fwd == [4, 1, 1, 1] and bwd == [4, 1, 1, 1], (fwd, bwd)
        assert len(generated) == 2
        src = generated[1][1]
        assert "op_sigmoid_grad" in src and "op_tanh_grad" in src, src
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_static_block_backward_chain_is_one_launch(fake_lib):
    """The backward of a static hybridized block (three scalar scalings' gradients, into the
    same x.grad every run) is one generated kernel from the second run."""
    out = _run('''
        generated.clear()
        class Scales(mx.gluon.HybridBlock):
            def hybrid_forward(self, F, x):
                return ((x * 2.0) * 3.0) * 0.5
        net2 = Scales()
        net2.hybridize(static_alloc=True, static_shape=True)
        x = mx.nd.array(gx((4, 50)), ctx=mx.gpu(0))
        x.attach_grad()
        head = mx.nd.ones((4, 50), ctx=mx.gpu(0))
        fwd, bwd = [], []
        for i in range(4):
            mx.nd.waitall()
            s0 = stats()
            with mx.autograd.record():
                y = net2(x)
            mx.nd.waitall()
            s1 = stats()
            y.backward(head)
            mx.nd.waitall()
            fwd.append(s1["launch"] - s0["launch"])
            bwd.append(delta(s1)["launch"])
        assert fwd == [3, 1, 1, 1] and bwd == [3, 1, 1, 1], (fwd, bwd)
        assert len(generated) == 2
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_bfloat16_chain_is_one_launch(fake_lib):
    """bfloat16 arrays (ml_dtypes') on gpu(0): the same chain fuses into one __nv_bfloat16
    kernel from the second run (the stand-in's per-operator launches are the fake's no-op: its
    add/scale kernels read float32)."""
    out = _run('''
        import ml_dtypes
        base_spec = pkg.launch_spec
        def spec_bf(opname, attrs, inputs, outputs, **kw):
            r = base_spec(opname, attrs, inputs, outputs, **kw)
            return r and {"family": "e", "name": "fake_noop", "grid": (1,), "block": (1,),
                          "args": []}
        pkg.launch_spec = spec_bf
        generated.clear()
        bf = ml_dtypes.bfloat16
        net = Chain()
        net.hybridize(static_alloc=True, static_shape=True)
        w16 = mx.nd.array(wv, ctx=mx.gpu(0), dtype=bf)
        counts = []
        for i in range(3):
            x16 = mx.nd.array(gx((4, 50)), ctx=mx.gpu(0), dtype=bf)
            mx.nd.waitall()
            s0 = stats()
            y = net(x16, w16)
            mx.nd.waitall()
            counts.append(delta(s0)["launch"])
        assert y.dtype == bf and counts == [3, 1, 1], (y.dtype, counts)
        assert len(generated) == 1, generated
        name, src = generated[0]
        assert "typedef __nv_bfloat16 T;" in src, src
        assert src.count("apply2(op_add()") == 2 and src.count("apply2(op_mul()") == 4, src
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"
