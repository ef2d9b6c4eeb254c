// CPU emulation of CUDA's bfloat16 (cuda_bf16.h) for the g++ builds of mxc's kernels: the
// storage type with its two conversions, rounding to nearest even as __float2bfloat16_rn does
// (NaN stays a quiet NaN). Included after cuda_fp16.h (common.cuh's order).
#pragma once
#include <cstdint>
#include <cstring>

struct __nv_bfloat16 {
  uint16_t bits;
  explicit operator float() const {
    const uint32_t u = (uint32_t)bits << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  explicit operator double() const { return (double)(float)*this; }
};
inline float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{(uint16_t)((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return __nv_bfloat16{(uint16_t)(u >> 16)};
}
// the emulation runs one thread at a time: a plain read-modify-write
inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *p, __nv_bfloat16 v) {
  const __nv_bfloat16 o = *p;
  *p = __float2bfloat16_rn(__bfloat162float(o) + __bfloat162float(v));
  return o;
}
