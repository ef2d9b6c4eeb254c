"""Run-time compiled CUDA kernels on mx.gpu arrays: MXNet 1.9's ``mx.rtc.CudaModule`` and
``CudaKernel``.

``CudaModule(source, options=(), exports=())`` compiles CUDA C through NVRTC when it is made
(no GPU needed: a compile error raises there, with NVRTC's log); ``get_kernel(name,
signature)`` checks the signature ("const float *x, float *y, int n": ``*`` marks an array,
``const`` an array the kernel only reads); ``CudaKernel.launch(args, ctx, grid_dims, block_dims,
shared_mem)`` queues the kernel on the engine's stream of ``ctx`` through the same driver
launcher as mxc's own kernels (mxc/_core/cuda.pyx): const arrays are read, the others written,
so the engine orders the launch with every other operation on them. Unlike MXNet's, the launch
does not wait for the GPU: a host read (asnumpy, wait_to_read) waits, and a kernel's device
error surfaces there naming the kernel.

The module's binary (PTX) is loaded on a device at its first launch there (through CuPy, like
mxc's kernels: mxc/ops/cuda/loader.py). Needs CuPy with NVRTC (``pip install 'mxc[gpu]'``).
"""
import re

import numpy as np

from .base import MXNetError, numeric_types
from .ndarray import NDArray

__all__ = ["CudaModule", "CudaKernel"]

# the C types a signature may name, as MXNet's rtc: numpy dtype and the launcher's scalar kind
_CTYPES = {
    "float": (np.float32, "f32"), "double": (np.float64, "f64"), "__half": (np.float16, "f16"),
    "uint8_t": (np.uint8, "u8"), "int": (np.int32, "i32"), "int32_t": (np.int32, "i32"),
    "int8_t": (np.int8, "i8"), "char": (np.int8, "i8"), "int64_t": (np.int64, "i64"),
}
_ARG = re.compile(r"^(const)?\s?([\w_]+)\s?(\*)?\s?([\w_]+)?$")


def _as_tuple(v):
    return (v,) if isinstance(v, str) else tuple(v)


def parse_signature(signature):
    """[(is_array, is_const, numpy dtype, launcher scalar kind)] of a kernel's parameter list, as MXNet reads it:
    each entry is "(const) type (*) (name)"; raises ValueError for a malformed entry and
    TypeError for a type outside float, double, __half, uint8_t, int, int32_t, int8_t, char,
    int64_t."""
    out = []
    for arg in re.sub(r"\s+", " ", signature).split(","):
        a = " ".join(arg.split())
        m = _ARG.match(a)
        if not m or m.group(2) == "const":
            raise ValueError('Invalid function prototype "%s". Must be in the form of '
                             '"(const) type (*) (name)"' % a)
        if m.group(2) not in _CTYPES:
            raise TypeError("Unsupported kernel argument type %s. Supported types are: %s."
                            % (a, ",".join(_CTYPES)))
        dt, kind = _CTYPES[m.group(2)]
        out.append((bool(m.group(3)), bool(m.group(1)), np.dtype(dt), kind))
    return out


def _nvrtc():
    try:
        from cupy.cuda import nvrtc
        nvrtc.getVersion()
    except Exception as e:
        raise MXNetError("mx.rtc needs CuPy with NVRTC: pip install 'mxc[gpu]' (cupy-cuda13x); "
                         "it could not be loaded: %s" % e) from None
    return nvrtc


class CudaModule:
    r"""Compile CUDA C at run time. Kernels are found by name: declare them ``extern "C"``, or
    list template instances (or any kernel) in ``exports`` to look them up by their C++ name::

        source = r'''
        template <typename T>
        __global__ void axpy(const T *x, T *y, T alpha) {
            int i = threadIdx.x + blockIdx.x * blockDim.x;
            y[i] += alpha * x[i];
        }'''
        module = mx.rtc.CudaModule(source, exports=["axpy<float>"])
        axpy = module.get_kernel("axpy<float>", "const float *x, float *y, float alpha")
        x = mx.nd.ones((10,), ctx=mx.gpu(0))
        y = mx.nd.zeros((10,), ctx=mx.gpu(0))
        axpy.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))

    options: NVRTC flags (a string or a sequence; cuda_fp16.h's directory is added);
    exports: names to look up by their C++ (unmangled) name.
    """

    def __init__(self, source, options=(), exports=()):
        if not isinstance(source, str):
            raise TypeError("CudaModule: source must be a str of CUDA C, got %s"
                            % type(source).__name__)
        self._options = _as_tuple(options)
        self._exports = _as_tuple(exports)
        self._ptx, self._lowered = self._compile(source)
        self._loaded = {}        # device id -> cupy.cuda.function.Module

    def _compile(self, source):
        from .ops.cuda import loader
        nvrtc = _nvrtc()
        prog = nvrtc.createProgram(source, "mx_rtc.cu", [], [])
        try:
            for name in self._exports:
                nvrtc.addNameExpression(prog, name)
            opts = list(self._options) + ["-I" + d for d in loader.cuda_include_dirs()]
            try:
                nvrtc.compileProgram(prog, opts)
            except nvrtc.NVRTCError as e:
                raise MXNetError("CudaModule: NVRTC failed to compile the source (%s):\n%s"
                                 % (e, nvrtc.getProgramLog(prog))) from None
            lowered = {n: nvrtc.getLoweredName(prog, n) for n in self._exports}
            ptx = nvrtc.getPTX(prog)
        finally:
            nvrtc.destroyProgram(prog)
        return ptx, lowered

    def get_kernel(self, name, signature):
        """The kernel `name` (an exported name, or an ``extern "C"`` kernel's) with parameters
        `signature` ("const float *x, double *y, int alpha" or "const float *, double *, int"):
        ``*`` marks an NDArray argument, ``const`` one the kernel only reads."""
        return CudaKernel(self, name, parse_signature(signature))

    def _function(self, name, device_id):
        """The CUfunction (an int) of kernel `name` on gpu(device_id), loading the module's PTX
        there on first use."""
        import cupy
        mangled = self._lowered.get(name, name)
        mod = self._loaded.get(device_id)
        with cupy.cuda.Device(device_id):
            if mod is None:
                mod = cupy.cuda.function.Module()
                ptx = self._ptx if isinstance(self._ptx, bytes) else self._ptx.encode()
                mod.load(ptx)
                self._loaded[device_id] = mod
            try:
                return int(mod.get_function(mangled).ptr)
            except Exception as e:
                raise MXNetError("Cannot find cuda kernel with name '%s' (%s). Please either "
                                 "prepend kernel definition with 'extern \"C\"' or add its "
                                 "name to exports when creating CudaModule." % (name, e)) from None


class CudaKernel:
    """A kernel of a CudaModule (made by ``CudaModule.get_kernel``)."""

    def __init__(self, module, name, signature):
        self._module = module
        self._name = name
        self._signature = list(signature)
        self._functions = {}     # device id -> CUfunction

    @property
    def name(self):
        return self._name

    def _pack(self, args, dev):
        """(launch arguments, input arrays, output arrays) for the launcher, after MXNet's
        checks: count, an NDArray of the declared dtype on gpu(dev) for each pointer, a number
        for each scalar."""
        if len(args) != len(self._signature):
            raise MXNetError("CudaKernel(%s) expects %d arguments but got %d"
                             % (self._name, len(self._signature), len(args)))
        packed, ins, outs = [], [], []
        for i, (arg, (is_nd, is_const, dt, kind)) in enumerate(zip(args, self._signature)):
            if is_nd:
                if not isinstance(arg, NDArray):
                    raise MXNetError("CudaKernel(%s): the %d-th argument is expected to be a "
                                     "NDArray but got %s" % (self._name, i, type(arg).__name__))
                if np.dtype(arg.dtype) != dt:
                    raise MXNetError("CudaKernel(%s): the %d-th argument is expected to be an "
                                     "NDArray of %s type, but got %s instead"
                                     % (self._name, i, dt.name, np.dtype(arg.dtype).name))
                ctx = arg.context
                if ctx.device_type != "gpu" or ctx.device_id != dev:
                    raise MXNetError("CudaKernel(%s): the %d-th argument is on %s, the launch "
                                     "is on gpu(%d)" % (self._name, i, ctx, dev))
                if is_const:
                    packed.append(("in", len(ins)))
                    ins.append(arg)
                else:
                    packed.append(("out", len(outs)))
                    outs.append(arg)
            else:
                if isinstance(arg, (bool, np.bool_)) or not isinstance(arg, numeric_types):
                    raise MXNetError("CudaKernel(%s): the %d-th argument is expected to be a "
                                     "number, but got %s" % (self._name, i, type(arg).__name__))
                if dt.kind == "f":
                    packed.append((kind, float(arg)))
                else:
                    # C's conversion to the declared width (wraps, as MXNet's numpy cast)
                    packed.append((kind, int(np.array(int(arg)).astype(dt))))
        return packed, ins, outs

    def launch(self, args, ctx, grid_dims, block_dims, shared_mem=0):
        """Queue the kernel on ctx's stream with `args` (NDArrays for pointer parameters,
        numbers for the others), a grid of grid_dims blocks of block_dims threads (3 ints each)
        and shared_mem bytes of dynamic shared memory."""
        from ._core import cuda
        if getattr(ctx, "device_type", None) != "gpu":
            raise MXNetError("CudaKernel(%s): CUDA kernels can only be launched on a GPU "
                             "context, got %s" % (self._name, ctx))
        grid, block = tuple(grid_dims), tuple(block_dims)
        if len(grid) != 3 or len(block) != 3:
            raise MXNetError("CudaKernel(%s): grid_dims and block_dims must be tuples of 3 "
                             "integers, got %s and %s" % (self._name, grid, block))
        dev = ctx.device_id
        packed, ins, outs = self._pack(list(args), dev)
        fn = self._functions.get(dev)
        if fn is None:
            fn = self._functions[dev] = self._module._function(self._name, dev)
        cuda.push_launch(fn, grid, block, int(shared_mem), packed, ins, outs, self._name, dev)
