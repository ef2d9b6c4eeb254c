"""Running an operator on a GPU: what ``registry.kernel_forward`` calls when an operator's
outputs live on gpu(k).

- A copy between devices (``_copyto``, ``copyto``/``as_in_context``) is a driver copy queued on
  the engine's device worker (mxc/_core/cuda.pyx ``push_copy``).
- Any other operator takes its launch spec from ``mxc.ops.cuda.launch_spec(name, attrs,
  inputs, outputs, family, kernel, iattr, fattr)`` (the builder of ``mxc/ops/cuda/<family>.py``): a dict with ``family``, ``name`` (the
  template's name expression), ``grid``, ``block``, optional ``shmem``, and ``args`` as (kind,
  value) pairs for ``cuda.push_launch``, or ``{"launches": [...], "workspace": nbytes}`` for
  several launches in order whose ("ws", offset) arguments point into scratch memory; the
  kernel comes from ``mxc.ops.cuda.loader.kernel(family, name, device_id)`` (CuPy-compiled,
  cached, returned as its CUfunction) and is launched without the GIL. A spec with ``cublas`` set names a callable
  ``run(cupy_inputs, cupy_outputs)`` that the device worker calls with CuPy views on the
  engine's stream (GEMMs through cuBLAS); a spec with ``steps`` is such launches and GEMMs
  interleaved (convolution as im2col + cuBLAS). A spec with ``check`` set names a callable
  ``check(cupy, cupy_inputs) -> message or None`` run the same way before the launches (index
  bounds of take(mode='raise'), gather_nd, scatter_nd): a message fails the operation, so its
  outputs carry the error to the next wait and the launches after it are skipped.
- An operator without a GPU kernel raises MXNetError naming it, at the call.

Launch specs are plain launches packed once (``cuda.pack_launch``) and kept per operator,
attributes, and the devices, shapes and dtypes of its arrays: an operator that runs again on
arrays like the last ones goes straight to ``cuda.push_packed``, skipping the spec and the
argument packing (on the fake driver: 88 -> 4-5 us per small add, tools/bench/bench_gpu_host.py).
Specs with a ``check`` or ``cublas`` callable are built every time (made for those arrays).
"""
from .._core import cuda
from ..base import MXNetError
from . import _fusion, services

_COPIES = frozenset(("_copyto", "copyto", "copy", "_copy", "identity"))


def _dev(arrays):
    devs = {(a._ctx.device_typeid, a._ctx.device_id) for a in arrays}
    return devs


_KEEP = None         # while a CUDA graph is captured: the arrays and workspaces its launches use

_PLANS = {}          # plan key -> (workspace bytes, ((PackedLaunch, workspace offsets), ...))
_PLAN_LIMIT = 4096   # distinct keys kept (random ops key on their counter: they churn)


def _sig(arrays):
    return tuple([(a._ctx.device_typeid, a._ctx.device_id, a._shape, a._dcode) for a in arrays])


_RECORD = None       # while a bound graph's steps are captured: their pointwise calls (fusion)


def record_calls(on=True):
    """Start (a new list, returned) or stop (on=False) recording the calls of pointwise kernels
    (``_fusion.is_pointwise``) instead of queueing them: the executor captures a plan's GPU
    steps this way to fuse their chains (mxc/ops/cuda/fusion.py); any other GPU call queues as
    usual (and is refused while the executor captures, so that step runs on its own).
    Entries: (opname, attrs, inputs, outputs, family, kernel, iattr, fattr)."""
    global _RECORD
    _RECORD = [] if on else None
    return _RECORD


def forward(opname, attrs, inputs, outputs, family=None, kernel=None, iattr=(), fattr=()):
    """Queue operator `opname` (CPU kernel `kernel` of `family`, for the spec lookup; `iattr`
    and `fattr` are the attributes that kernel would get: the GPU kernels read the same
    values) whose inputs/outputs involve a GPU."""
    if (_RECORD is not None and kernel is not None and _fusion.is_pointwise(family, kernel)
            and opname not in _COPIES):
        _RECORD.append((opname, attrs, list(inputs), list(outputs), family, kernel,
                        tuple(iattr or ()), tuple(fattr or ())))
        return
    if _KEEP is not None:             # a CUDA graph is captured: its arrays stay with it
        _KEEP.extend(inputs)
        _KEEP.extend(outputs)
    if opname in _COPIES and len(inputs) == 1 and len(outputs) == 1:
        src, dst = inputs[0], outputs[0]
        if src._chunk is dst._chunk and src._offset == dst._offset:
            return
        cuda.push_copy(src, dst, opname)
        return
    inputs = inputs if type(inputs) is list else list(inputs)
    outputs = outputs if type(outputs) is list else list(outputs)
    try:
        key = (opname, kernel, tuple(iattr), tuple(fattr), tuple(attrs.items()) if attrs else (),
               _sig(inputs), _sig(outputs))
        plan = _PLANS.get(key)
    except TypeError:                   # an attribute value that does not hash: no plan
        key = plan = None
    if plan is None:
        devs = _dev(inputs + outputs)
        if len(devs) != 1:
            raise MXNetError(f"{opname}: inputs and outputs are on different devices "
                             f"({', '.join(sorted(str(a.context) for a in inputs + outputs))}); "
                             f"copy them to one device first (as_in_context)")
        dev = devs.pop()[1]
        spec = _spec(opname, attrs, inputs, outputs, family, kernel, iattr, fattr)
        # a check or cuBLAS callable is made for these arrays: such specs are built every time
        if spec.get("check") is not None:
            _push_check(spec["check"], opname, inputs, outputs, dev)
        if spec.get("cublas"):
            _push_cupy(spec["cublas"], opname, inputs, outputs, dev)
            return
        if spec.get("steps"):
            _push_steps(spec, opname, inputs, outputs, dev)
            return
        plan = _plan(spec, opname, len(inputs), len(outputs), dev)
        if key is not None and spec.get("check") is None:
            if len(_PLANS) >= _PLAN_LIMIT:
                _PLANS.clear()
            _PLANS[key] = plan
    _run_plan(plan, inputs, outputs)


def _fast_plan(k, inputs, scalar, has_scalar):
    """The C fast path's GPU plans (mxc._core.handle._gpu_fast): the one packed launch of
    FastKernel k's operator on arrays like `inputs` (its output like the first); None where the
    general path must run (no GPU kernel: it raises the error naming the operator)."""
    op = k.op
    if op is None or not op.fast:
        return None
    family, kname, _ = op.fast
    try:
        spec = _spec(op.name, k.attrs or {}, inputs, inputs[:1], family, kname, (),
                     (scalar,) if has_scalar else ())
        if spec.get("check") is not None or spec.get("cublas"):
            return None
        ws_size, packed = _plan(spec, op.name, len(inputs), 1, inputs[0]._ctx.device_id)
    except MXNetError:
        return None
    if ws_size or len(packed) != 1 or packed[0][1]:
        return None
    return packed[0][0]


def collect_workspaces(on=True):
    """Start (a new list, returned) or stop (on=False) collecting every array the GPU
    operations queued meanwhile use, workspaces and an operator's own scratch arrays included:
    a CUDA graph captured meanwhile keeps them (its launches have their addresses baked in),
    so no block of theirs goes back to the pool, to be handed to another array, under it."""
    global _KEEP
    _KEEP = [] if on else None
    return _KEEP


def install():
    from .._core import handle
    handle.install_gpu_fast_path(_fast_plan, cuda.push_packed)


def _run_plan(plan, inputs, outputs):
    ws_size, packed = plan
    ws = None
    if ws_size:
        # scratch for the launches (two-stage reductions, sort): an array of the device, so
        # the engine keeps it alive and ordered until the last launch that uses it has run
        ws = services.ndarray.empty((ws_size,), ctx=outputs[0].context, dtype="uint8")
        if _KEEP is not None:
            _KEEP.append(ws)
    for p, ws_offsets in packed:
        cuda.push_packed(p, inputs, outputs if not ws_offsets
                         else outputs + [ws[o:] for o in ws_offsets])


def _plan(spec, opname, n_in, n_out, dev):
    """(workspace bytes, ((PackedLaunch, workspace offsets), ...)) of a spec without callables:
    each ("ws", offset) argument becomes one more output, the workspace from that offset."""
    from .cuda import loader
    launches = spec.get("launches", [spec])
    if any(L is None for L in launches):
        raise MXNetError(f"{opname}: a kernel this operator needs is not instantiated for "
                         f"these dtypes on the GPU")
    ws_size = int(spec.get("workspace", 0))
    packed = []
    for L in launches:
        args, ws_offsets = [], []
        for kind, value in L["args"]:
            if kind == "ws":
                if ws_size <= 0:
                    raise MXNetError(f"{opname}: its GPU launch reads a workspace the spec "
                                     f"does not size")
                ws_offsets.append(int(value))
                kind, value = "out", n_out + len(ws_offsets) - 1
            args.append((kind, value))
        packed.append((cuda.pack_launch(loader.kernel(L["family"], L["name"], dev), L["grid"],
                                        L["block"], int(L.get("shmem", 0)), args, n_in,
                                        n_out + len(ws_offsets), opname, dev),
                       tuple(ws_offsets)))
    return ws_size, tuple(packed)


def _spec(opname, attrs, inputs, outputs, family, kernel, iattr, fattr):
    try:
        from . import cuda as gpu_kernels
    except ImportError as e:
        raise MXNetError(f"{opname}: the GPU kernels (mxc.ops.cuda) are not available: {e}") from None
    spec = gpu_kernels.launch_spec(opname, attrs, inputs, outputs, family=family,
                                   kernel=kernel, iattr=iattr, fattr=fattr)
    if spec is None:
        raise MXNetError(f"{opname}: this operator has no GPU kernel in mxc yet; run it on "
                         f"mx.cpu() (copy the arrays with as_in_context)")
    return spec


def cupy_view(a):
    """A CuPy array over a GPU NDArray's memory (no copy; keeps the NDArray alive)."""
    import cupy
    ptr = cuda.data_address(a)
    mem = cupy.cuda.UnownedMemory(ptr, max(1, a.size * a.dtype(0).itemsize), a,
                                  device_id=a._ctx.device_id)
    return cupy.ndarray(a.shape, a.dtype, cupy.cuda.MemoryPointer(mem, 0))


def _push_cupy(run, opname, inputs, outputs, dev):
    """Run a CuPy callable (cuBLAS) on gpu(dev)'s worker, on the engine's stream."""
    import cupy
    from .._core import engine
    stream = cupy.cuda.ExternalStream(cuda.stream_handle(dev), dev)

    def op():
        with cupy.cuda.Device(dev), stream:
            run([cupy_view(a) for a in inputs], [cupy_view(a) for a in outputs])

    engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                device=dev)


def _push_steps(spec, opname, inputs, outputs, dev):
    """A spec of kernel launches and cuBLAS GEMMs in order on gpu(dev)'s stream
    (mxc/ops/cuda/convolution.py): launches through the driver launcher, each GEMM step and
    each cuDNN plan (cudnn_plans.py) as a CuPy callable; ("ws", offset) buffers lie in one workspace array from the storage pool,
    written by every step (so the engine keeps it alive and in order)."""
    from .cuda import loader
    from .cuda.convolution import gemm_step
    from .cuda.cudnn_plans import runner
    size = int(spec.get("workspace", 0))
    ws = (services.ndarray.empty((size,), ctx=outputs[0].context, dtype="uint8")
          if size > 0 else None)
    if ws is not None and _KEEP is not None:
        _KEEP.append(ws)
    written = outputs + [ws] if ws is not None else outputs
    for step in spec["steps"]:
        if "gemm" in step:
            _push_cupy(gemm_step(step, outputs[0].dtype), opname, inputs, written, dev)
            continue
        if "cudnn" in step:
            _push_cupy(runner(step, dev), opname, inputs, written, dev)
            continue
        args, extra = [], []
        for kind, value in step["args"]:
            if kind == "ws":
                extra.append(ws[int(value):])
                kind, value = "out", len(outputs) + len(extra) - 1
            args.append((kind, value))
        cuda.push_launch(loader.kernel(step["family"], step["name"], dev), step["grid"],
                         step["block"], int(step.get("shmem", 0)), args, inputs,
                         outputs + extra, opname, dev)


def _push_check(check, opname, inputs, outputs, dev):
    """Run check(cupy, cupy_inputs) on gpu(dev)'s worker, on the engine's stream, as an
    operation that writes the outputs: a message it returns becomes their error (and the
    engine skips the launches queued after it on them)."""
    if cuda.capturing(dev):
        raise cuda.CaptureUnsafe(f"{opname}: its index check is read back on the host")
    import cupy
    from .._core import engine
    stream = cupy.cuda.ExternalStream(cuda.stream_handle(dev), dev)

    def op():
        with cupy.cuda.Device(dev), stream:
            message = check(cupy, [cupy_view(a) for a in inputs])
        if message:
            raise MXNetError(message)

    engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                device=dev)
