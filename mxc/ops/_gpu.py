"""Running an operator on a GPU: what ``registry.kernel_forward`` calls when an operator's
outputs live on gpu(k).

- A copy between devices (``_copyto``, ``copyto``/``as_in_context``) is a driver copy queued on
  the engine's device worker (mxc/_core/cuda.pyx ``push_copy``).
- Any other operator takes its launch spec from ``mxc.ops.cuda.specs.launch_spec(name, attrs,
  inputs, outputs, family, kernel, iattr, fattr)``: a dict with ``family``, ``name`` (the
  template's name expression), ``grid``, ``block``, optional ``shmem``, and ``args`` as (kind,
  value) pairs for ``cuda.push_launch``, or ``{"launches": [...], "workspace": nbytes}`` for
  several launches in order whose ("ws", offset) arguments point into scratch memory; the kernel comes from ``mxc.ops.cuda.loader.kernel(family,
  name, device_id)`` (CuPy-compiled, cached, returned as its CUfunction) and is launched from the
  device worker without the GIL. A spec with ``cublas`` set names a callable
  ``run(cupy_inputs, cupy_outputs)`` that the device worker calls with CuPy views on the
  engine's stream (GEMMs through cuBLAS). A spec with ``check`` set names a callable
  ``check(cupy, cupy_inputs) -> message or None`` run the same way before the launches (index
  bounds of take(mode='raise'), gather_nd, scatter_nd): a message fails the operation, so its
  outputs carry the error to the next wait and the launches after it are skipped.
- An operator without a GPU kernel raises MXNetError naming it, at the call.
"""
from ..base import MXNetError

_COPIES = frozenset(("_copyto", "copyto", "copy", "_copy", "identity"))


def _dev(arrays):
    devs = {(a._ctx.device_typeid, a._ctx.device_id) for a in arrays}
    return devs


def forward(opname, attrs, inputs, outputs, family=None, kernel=None, iattr=(), fattr=()):
    """Queue operator `opname` (CPU kernel `kernel` of `family`, for the spec lookup; `iattr`
    and `fattr` are the attributes that kernel would get: the GPU kernels read the same
    values) whose inputs/outputs involve a GPU."""
    from .._core import cuda
    if opname in _COPIES and len(inputs) == 1 and len(outputs) == 1:
        src, dst = inputs[0], outputs[0]
        if src._chunk is dst._chunk and src._offset == dst._offset:
            return
        cuda.push_copy(src, dst, opname)
        return
    devs = _dev(list(inputs) + list(outputs))
    if len(devs) != 1:
        raise MXNetError(f"{opname}: inputs and outputs are on different devices "
                         f"({', '.join(sorted(str(a.context) for a in list(inputs) + list(outputs)))}); "
                         f"copy them to one device first (as_in_context)")
    dev_type, dev = devs.pop()
    spec = _spec(opname, attrs, inputs, outputs, family, kernel, iattr, fattr)
    if spec.get("check") is not None:
        _push_check(spec["check"], opname, inputs, outputs, dev)
    if spec.get("cublas"):
        _push_cupy(spec["cublas"], opname, inputs, outputs, dev)
        return
    from .cuda import loader
    launches = spec.get("launches", [spec])
    if any(L is None for L in launches):
        raise MXNetError(f"{opname}: a kernel this operator needs is not instantiated for "
                         f"these dtypes on the GPU")
    ws = None
    if int(spec.get("workspace", 0)) > 0:
        # scratch for the launches (two-stage reductions, sort): an array of the device, so
        # the engine keeps it alive and ordered until the last launch that uses it has run
        from ..ndarray import ndarray as _nd
        ws = _nd.empty((int(spec["workspace"]),), ctx=outputs[0].context, dtype="uint8")
    for L in launches:
        outs, args = list(outputs), []
        for kind, value in L["args"]:
            if kind == "ws":
                if ws is None:
                    raise MXNetError(f"{opname}: its GPU launch reads a workspace the spec "
                                     f"does not size")
                outs.append(ws[int(value):])
                kind, value = "out", len(outs) - 1
            args.append((kind, value))
        cuda.push_launch(loader.kernel(L["family"], L["name"], dev), L["grid"], L["block"],
                         int(L.get("shmem", 0)), args, list(inputs), outs, opname, dev)


def _spec(opname, attrs, inputs, outputs, family, kernel, iattr, fattr):
    try:
        from .cuda import specs
    except ImportError as e:
        raise MXNetError(f"{opname}: the GPU kernels (mxc.ops.cuda) are not available: {e}") from None
    spec = specs.launch_spec(opname, attrs, inputs, outputs, family=family, kernel=kernel,
                             iattr=iattr, fattr=fattr)
    if spec is None:
        raise MXNetError(f"{opname}: this operator has no GPU kernel in mxc yet; run it on "
                         f"mx.cpu() (copy the arrays with as_in_context)")
    return spec


def cupy_view(a):
    """A CuPy array over a GPU NDArray's memory (no copy; keeps the NDArray alive)."""
    import cupy
    from .._core import cuda
    ptr = cuda.data_address(a)
    mem = cupy.cuda.UnownedMemory(ptr, max(1, a.size * a.dtype(0).itemsize), a,
                                  device_id=a._ctx.device_id)
    return cupy.ndarray(a.shape, a.dtype, cupy.cuda.MemoryPointer(mem, 0))


def _push_cupy(run, opname, inputs, outputs, dev):
    """Run a CuPy callable (cuBLAS) on gpu(dev)'s worker, on the engine's stream."""
    import cupy
    from .._core import cuda, engine
    stream = cupy.cuda.ExternalStream(cuda.stream_handle(dev), dev)

    def op():
        with cupy.cuda.Device(dev), stream:
            run([cupy_view(a) for a in inputs], [cupy_view(a) for a in outputs])

    engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                device=dev)


def _push_check(check, opname, inputs, outputs, dev):
    """Run check(cupy, cupy_inputs) on gpu(dev)'s worker, on the engine's stream, as an
    operation that writes the outputs: a message it returns becomes their error (and the
    engine skips the launches queued after it on them)."""
    import cupy
    from .._core import cuda, engine
    stream = cupy.cuda.ExternalStream(cuda.stream_handle(dev), dev)

    def op():
        with cupy.cuda.Device(dev), stream:
            message = check(cupy, [cupy_view(a) for a in inputs])
        if message:
            raise MXNetError(message)

    engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                device=dev)
