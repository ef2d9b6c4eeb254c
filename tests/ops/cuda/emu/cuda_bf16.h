// CPU emulation of CUDA's bfloat16 (cuda_bf16.h) for the g++ builds of mxc's kernels: the
// storage type with its two conversions, rounding to nearest even as __float2bfloat16_rn does
// (NaN stays a quiet NaN). Included after cuda_fp16.h (common.cuh's order).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

struct __nv_bfloat16 {
  uint16_t bits;
  __nv_bfloat16() = default;
  // from float: to nearest even, a NaN stays a quiet NaN; from double and the integers (only
  // in code a constant condition skips) through float
  __nv_bfloat16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = (uint16_t)((u >> 16) | 0x40u);
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = (uint16_t)(u >> 16);
    }
  }
  __nv_bfloat16(double d) : __nv_bfloat16((float)d) {}
  template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
  __nv_bfloat16(I i) : __nv_bfloat16((float)i) {}
  explicit operator float() const {
    const uint32_t u = (uint32_t)bits << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  explicit operator double() const { return (double)(float)*this; }
  template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
  explicit operator I() const { return (I)(float)*this; }
};
inline float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
// the emulation runs one thread at a time: a plain read-modify-write
inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *p, __nv_bfloat16 v) {
  const __nv_bfloat16 o = *p;
  *p = __float2bfloat16_rn(__bfloat162float(o) + __bfloat162float(v));
  return o;
}
