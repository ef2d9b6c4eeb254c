"""Running the GPU kernels of an operator in float16 or bfloat16 under the emulation, against
a float32 reference.

numpy has no bfloat16, so a bfloat16 run builds its launch spec from float16 stand-ins (both
types are two bytes: the same shapes, strides and workspace sizes) and swaps each kernel's
``__half`` for ``__nv_bfloat16``; the arrays are float16 buffers whose memory holds bfloat16
bits (``lowp_array`` / ``lowp_value``), which the g++-compiled kernels read as
``__nv_bfloat16`` (emu/cuda_bf16.h)."""
import copy

import numpy as np

LOWP = ("float16", "bfloat16")


def bf16_bits(x):
    """uint16 bfloat16 bits of float32 values, rounded to nearest even (NaN kept quiet)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def bf16_value(bits):
    """float32 values of uint16 bfloat16 bits."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def lowp_array(x32, dtype):
    """A float16-typed buffer holding float32 values `x32` stored in `dtype`."""
    a = np.empty(np.shape(x32), np.float16)
    if dtype == "float16":
        a[...] = x32
    else:
        a.view(np.uint16)[...] = bf16_bits(x32)
    return a


def lowp_value(a, dtype):
    """float32 values of a buffer made by lowp_array (or written by the kernels)."""
    if dtype == "float16":
        return np.asarray(a, np.float32)
    return bf16_value(np.asarray(a).view(np.uint16))


def rounded(x32, dtype):
    """float32 values of x32 once stored in dtype (the reference's inputs)."""
    return lowp_value(lowp_array(np.asarray(x32, np.float32), dtype), dtype)


def retype(spec, dtype):
    """The spec with every kernel on __half swapped for its __nv_bfloat16 instance (a deep
    copy; unchanged for float16)."""
    if dtype == "float16":
        return spec
    spec = copy.copy(spec)
    for key in ("launches", "steps"):
        if key in spec:
            spec[key] = [retype(s, dtype) for s in spec[key]]
    if "name" in spec:
        spec["name"] = spec["name"].replace("__half", "__nv_bfloat16")
    return spec
