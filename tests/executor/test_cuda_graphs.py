"""Static graphs as CUDA graphs (mxc/executor/cuda_graphs.py) on the fake CUDA driver
(tests/_core/fake_libcuda.py): the fake records a capture's launches with copies of their
arguments and replays them at cuGraphLaunch, so the capture/replay logic runs for real on the
CPU. Operators get their launches from a stand-in for mxc.ops.cuda.launch_spec (the fake's
add and scale kernels)."""
import textwrap

from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fixture)

SETUP = '''
    import logging, sys, types
    records = []
    class H(logging.Handler):
        def emit(self, r):
            records.append(r.getMessage())
    logging.getLogger("mxc.cuda_graphs").addHandler(H())
    logging.getLogger("mxc.cuda_graphs").setLevel(logging.INFO)
    loader = types.ModuleType("mxc.ops.cuda.loader")
    loader.kernel = lambda family, name, dev: kfn(name)
    checked = []
    def launch_spec(opname, attrs, inputs, outputs, **kw):
        n = outputs[0].size
        grid = ((n + 255) // 256,)
        if opname in ("elemwise_add", "_plus", "broadcast_add"):
            return {"family": "e", "name": "fake_add_f32", "grid": grid, "block": (256,),
                    "args": [("in", 0), ("in", 1), ("out", 0), ("i64", n)]}
        if opname == "_mul_scalar":
            return {"family": "e", "name": "fake_scale_f32", "grid": grid, "block": (256,),
                    "args": [("in", 0), ("out", 0), ("f32", float(attrs["scalar"])), ("i64", n)]}
        if opname == "_minus_scalar":         # stands for an operator with an index check
            def check(cupy, ins):
                checked.append(opname)
                return None
            return {"check": check, "family": "e", "name": "fake_scale_f32", "grid": grid,
                    "block": (256,), "args": [("in", 0), ("out", 0), ("f32", 1.0), ("i64", n)]}
        if opname in ("_zeros", "zeros_like", "_ones", "ones_like"):
            return {"family": "e", "name": "fake_fill_f32", "grid": grid, "block": (256,),
                    "args": [("out", 0), ("f32", float("ones" in opname)), ("i64", n)]}
        if opname == "Dropout" and not inputs:    # p=0: the mask's fill (unused here)
            return {"family": "e", "name": "fake_noop", "grid": (1,), "block": (1,), "args": []}
        if opname == "Dropout":                    # p=0: the copy
            return {"family": "e", "name": "fake_scale_f32", "grid": grid, "block": (256,),
                    "args": [("in", 0), ("out", 0), ("f32", 1.0), ("i64", n)]}
        return None
    import mxc.ops.cuda as pkg
    sys.modules["mxc.ops.cuda.loader"] = loader
    pkg.loader, pkg.launch_spec = loader, launch_spec
    # the check runs through CuPy on the device worker: a stand-in that needs no GPU
    cupy = types.ModuleType("cupy")
    import contextlib
    cupy.cuda = types.SimpleNamespace(ExternalStream=lambda *a: contextlib.nullcontext(),
                                      Device=lambda *a: contextlib.nullcontext())
    sys.modules["cupy"] = cupy
    from mxc.ops import _gpu
    _gpu.cupy_view = lambda a: a
    from mxc.executor.cached_op import CachedOp
    def stats():
        return {"launch": lib.fake_stat(0), "graph": lib.fake_stat(15),
                "captured": lib.fake_stat(16), "inst": lib.fake_stat(17)}
    def delta(s0):
        s = stats()
        return {k: s[k] - s0[k] for k in s}
    rng = np.random.default_rng(0)
    def gx(shape):
        return rng.standard_normal(shape).astype(np.float32)
    FLAGS = [("static_alloc", True), ("static_shape", True), ("data_indices", [0])]
'''


def _run(code, lib, **env):
    env.setdefault("MXNET_ENABLE_CUDA_GRAPHS", 1)
    # the fake runs the stand-in kernels only, not generated ones: the runs with graphs off
    # launch per operator (fused chains: test_gpu_fusion.py)
    env.setdefault("MXNET_USE_FUSION", 0)
    return run(textwrap.dedent(SETUP) + textwrap.dedent(code), lib, **env)


def test_captured_once_then_replayed_with_fixed_addresses(fake_lib):
    """Warm-up run conventional, the second run captures (2 kernels -> 2 graph nodes) and
    launches, later runs replay the one graph: no kernel launch of their own. New data in the
    same input buffer (static_alloc: the address baked into the graph) and a parameter updated
    in place reach the replays."""
    out = _run('''
        x, w = mx.sym.var("x"), mx.sym.var("w")
        op = CachedOp((x + w) * 3.0, FLAGS)
        wv = gx((4, 50))
        w_gpu = mx.nd.array(wv, ctx=mx.gpu(0))
        results = []
        for i in range(5):
            xv = gx((4, 50))
            s0 = stats()
            y = op(mx.nd.array(xv, ctx=mx.gpu(0)), w_gpu)
            np.testing.assert_allclose(y.asnumpy(), (xv + wv) * 3, rtol=1e-6)
            results.append(delta(s0))
            if i == 2:          # the optimizer's way: the parameter's own memory, new values
                wv = gx((4, 50))
                w_gpu[:] = mx.nd.array(wv, ctx=mx.gpu(0))
        # warm-up: 2 kernels; capture: 2 nodes, one instantiation, one launch; replays: 1 launch
        assert results[0]["launch"] == 2 and results[0]["graph"] == 0, results
        assert results[1]["captured"] == 2 and results[1]["inst"] == 1, results
        assert results[1]["graph"] == 1 and results[1]["launch"] == 0, results
        for r in results[2:]:
            assert r == {"launch": 0, "graph": 1, "captured": 0, "inst": 0}, results
        assert lib.fake_stat(19) == 2          # CU_STREAM_CAPTURE_MODE_RELAXED
        st = next(iter(op._statics.values()))
        (seg,) = st.fwd.graphs.segs[False]
        # the launch is ordered by the input buffer and the parameter (read), the output and
        # the intermediate (written); the graph keeps every array its launches touched
        chunks = lambda arrs: {id(a._chunk) for a in arrs}     # noqa: E731
        assert chunks(seg.reads) == chunks([st.inputs[0], w_gpu]), seg.reads
        assert chunks([st.outs[0]]) <= chunks(seg.writes) and len(seg.writes) == 2
        assert chunks(seg.reads + seg.writes) == chunks(seg.keep)
        assert not records, records
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_graphs_off_without_the_flags_or_the_variable(fake_lib):
    """MXNET_ENABLE_CUDA_GRAPHS unset, or a CachedOp without static_shape: no graph."""
    code = '''
        x, w = mx.sym.var("x"), mx.sym.var("w")
        op = CachedOp((x + w) * 3.0, FLAGS_USED)
        wv, xv = gx((8,)), gx((8,))
        w_gpu = mx.nd.array(wv, ctx=mx.gpu(0))
        for i in range(3):
            y = op(mx.nd.array(xv, ctx=mx.gpu(0)), w_gpu)
            np.testing.assert_allclose(y.asnumpy(), (xv + wv) * 3, rtol=1e-6)
        assert lib.fake_stat(15) == 0 and lib.fake_stat(17) == 0
        print("ok")
    '''
    out = _run("FLAGS_USED = FLAGS\n" + textwrap.dedent(code), fake_lib, MXNET_ENABLE_CUDA_GRAPHS=0)
    assert out.strip() == "ok"
    out = _run("FLAGS_USED = [('static_alloc', True)]\n" + textwrap.dedent(code), fake_lib)
    assert out.strip() == "ok"


def test_random_step_runs_between_two_graphs_reason_logged_once(fake_lib):
    """Dropout draws random numbers (its seed is a launch argument): the steps before and after
    it become two graphs, Dropout runs conventionally between them, the reason logged once."""
    out = _run('''
        x, w = mx.sym.var("x"), mx.sym.var("w")
        sym = mx.sym.Dropout((x + w) * 2.0, p=0.0) * 0.5 + w
        op = CachedOp(sym, FLAGS)
        wv = gx((16,))
        w_gpu = mx.nd.array(wv, ctx=mx.gpu(0))
        with mx.autograd.train_mode():
            for i in range(4):
                xv = gx((16,))
                s0 = stats()
                y = op(mx.nd.array(xv, ctx=mx.gpu(0)), w_gpu)
                np.testing.assert_allclose(y.asnumpy(), (xv + wv) + wv, rtol=1e-6)
                d = delta(s0)
        assert d == {"launch": 2, "graph": 2, "captured": 0, "inst": 0}, d   # Dropout: copy, mask
        assert lib.fake_stat(17) == 2
        why = [r for r in records if "runs outside graphs" in r]
        assert len(why) == 1 and "Dropout" in why[0] and "random" in why[0], records
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_host_sync_abandons_the_capture_then_graphs_around_it(fake_lib):
    """An operator whose queueing reads a check back on the host is found while capturing
    (cuda.CaptureUnsafe): that run goes conventionally (nothing captured ran, results right),
    the next captures the steps around it, the reason logged once."""
    out = _run('''
        x, w = mx.sym.var("x"), mx.sym.var("w")
        sym = ((x + w) - 1.0) * 2.0
        op = CachedOp(sym, FLAGS)
        wv = gx((16,))
        w_gpu = mx.nd.array(wv, ctx=mx.gpu(0))
        ds = []
        for i in range(5):
            xv = gx((16,))
            s0 = stats()
            y = op(mx.nd.array(xv, ctx=mx.gpu(0)), w_gpu)
            np.testing.assert_allclose(y.asnumpy(), (xv + wv) * 2, rtol=1e-6)   # the stand-in: *1
            ds.append(delta(s0))
        # warm-up; the capture abandoned at the check (nothing instantiated), run conventionally
        assert ds[0]["graph"] == ds[1]["graph"] == ds[1]["inst"] == 0, ds
        assert ds[0]["launch"] == ds[1]["launch"] == 3 and checked == ["_minus_scalar"] * 5, (ds, checked)
        assert ds[2]["inst"] == 2 and ds[2]["graph"] == 2, ds
        assert ds[3] == {"launch": 1, "graph": 2, "captured": 0, "inst": 0}, ds
        assert len(checked) == 5
        why = [r for r in records if "runs outside graphs" in r]
        assert len(why) == 1 and "_minus_scalar" in why[0] and "host" in why[0], records
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_an_open_capture_refuses_host_syncs_and_host_copies(fake_lib):
    """The runtime's guards while a capture is open on gpu(0): a host read, a host write, a copy
    from host memory (CaptureUnsafe) and a wait for the device (the engine's sync refuses, the
    capture stays valid) fail clearly; a dropped capture leaves the device working."""
    out = _run('''
        from mxc._core import cuda
        a = mx.nd.array(np.arange(4, dtype=np.float32), ctx=mx.gpu(0))
        mx.nd.waitall()
        g = cuda.begin_capture(0)
        assert cuda.capturing(0)
        for fn, words in ((a.asnumpy, ["host read", "CUDA graph"]),
                          (lambda: cuda.from_numpy(a, np.zeros(4, np.float32)), ["host write"]),
                          (lambda: mx.nd.array(np.ones(4, np.float32)).copyto(a), ["host memory"]),
                          (mx.nd.waitall, ["host synchronisation", "CUDA graph"])):
            msg = raises(fn, *words)
        try:
            a.asnumpy()
        except cuda.CaptureUnsafe:
            pass
        assert g.end(keep=False) is True and not g.ok and not cuda.capturing(0)
        np.testing.assert_array_equal(a.asnumpy(), np.arange(4))
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_driver_without_graphs_falls_back_logged_once(fake_lib):
    out = _run('''
        from mxc._core import cuda
        x, w = mx.sym.var("x"), mx.sym.var("w")
        op = CachedOp((x + w) * 3.0, FLAGS)
        wv, xv = gx((8,)), gx((8,))
        w_gpu = mx.nd.array(wv, ctx=mx.gpu(0))
        for i in range(4):
            y = op(mx.nd.array(xv, ctx=mx.gpu(0)), w_gpu)
            np.testing.assert_allclose(y.asnumpy(), (xv + wv) * 3, rtol=1e-6)
        assert lib.fake_stat(15) == 0
        why = [r for r in records if "runs outside graphs" in r]
        assert len(why) == 1 and "CUDA_ERROR_NOT_SUPPORTED" in why[0], records
        print("ok")
    ''', fake_lib, FAKE_CUDA_NO_GRAPHS=1)
    assert out.strip() == "ok"


def test_gluon_block_trains_with_graphs_forward_and_backward(fake_lib):
    """A HybridBlock hybridized with static_alloc and static_shape on gpu(0): forward and
    backward each become one graph after their warm-up; gradients match numpy each step."""
    out = _run('''
        from mxc import gluon, autograd
        class Net(gluon.HybridBlock):
            def __init__(self):
                super().__init__()
                self.w = self.params.get("w", shape=(32,))
            def hybrid_forward(self, F, x, w):
                return (x + w) * 2.0
        net = Net()
        net.initialize(ctx=mx.gpu(0))
        net.hybridize(static_alloc=True, static_shape=True)
        wv = net.w.data().asnumpy()
        for i in range(4):
            xv = gx((32,))
            s0 = stats()
            with autograd.record():
                y = net(mx.nd.array(xv, ctx=mx.gpu(0)))
            y.backward(mx.nd.array(np.ones(32, np.float32) * 3, ctx=mx.gpu(0)))
            np.testing.assert_allclose(y.asnumpy(), (xv + wv) * 2, rtol=1e-6)
            np.testing.assert_allclose(net.w.grad().asnumpy(), np.full(32, 6.0), rtol=1e-6)
            d = delta(s0)
        assert d["graph"] == 2 and d["inst"] == 0, d
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"


def test_bound_executor_replays_its_forward(fake_lib):
    """A bound executor's forward on gpu(0): the arguments are its own arrays (fixed addresses);
    after the warm-up each forward is one graph launch and reads the values copied in."""
    out = _run('''
        x, w = mx.sym.var("x"), mx.sym.var("w")
        ex = ((x + w) * 0.5).simple_bind(ctx=mx.gpu(0), x=(64,), w=(64,), grad_req="null")
        ds = []
        for i in range(4):
            xv, wv = gx((64,)), gx((64,))
            ex.arg_dict["x"][:] = mx.nd.array(xv, ctx=mx.gpu(0))
            ex.arg_dict["w"][:] = mx.nd.array(wv, ctx=mx.gpu(0))
            s0 = stats()
            y = ex.forward(is_train=False)[0]
            np.testing.assert_allclose(y.asnumpy(), (xv + wv) * 0.5, rtol=1e-6)
            ds.append(delta(s0))
        assert ds[0]["graph"] == 0 and ds[1]["inst"] == 1, ds
        assert ds[3] == {"launch": 0, "graph": 1, "captured": 0, "inst": 0}, ds
        print("ok")
    ''', fake_lib)
    assert out.strip() == "ok"
