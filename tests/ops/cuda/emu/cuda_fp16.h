// CPU emulation of the CUDA built-ins mxc's kernels use, so that g++ can compile
// mxc/ops/cuda/*.cu into host functions for tests: __global__ becomes a plain function that
// mxc_emu::run (mxc_emu_threads.h) runs as every thread of a launch, a block's threads as
// coroutines that meet at __syncthreads and warp shuffles; __shared__ is a static.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include "mxc_emu_threads.h"
extern "C" {
#include "kernels/half.h"
}

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static

struct alignas(16) uint4 { unsigned x, y, z, w; };

struct __half {
  uint16_t bits;
  __half() = default;
  // CUDA's __half converts from the float and integer types, and explicitly to them (used here
  // only in code a constant condition skips, such as convert's integer branch; a double rounds
  // through float)
  __half(float f) : bits(mxc_float_to_half(f)) {}
  __half(double d) : bits(mxc_float_to_half((float)d)) {}
  template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
  __half(I i) : bits(mxc_float_to_half((float)i)) {}
  explicit operator float() const { return mxc_half_to_float(bits); }
  explicit operator double() const { return mxc_half_to_float(bits); }
  template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
  explicit operator I() const { return (I)mxc_half_to_float(bits); }
};
inline float __half2float(__half h) { return mxc_half_to_float(h.bits); }
inline __half __float2half_rn(float f) { return __half(f); }

inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }

// CUDA's math functions that libm lacks: erfinv by Newton steps on erf (tests only)
inline double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? INFINITY : (y == -1.0 ? -INFINITY : NAN);
  double x = 0.0;
  for (int i = 0; i < 60; ++i) x -= (std::erf(x) - y) / (1.1283791670955126 * std::exp(-x * x));
  return x;
}
inline float erfinvf(float y) { return (float)erfinv((double)y); }
using std::isfinite;

// atomics: the emulation runs one thread at a time, so a plain read-modify-write
inline float atomicAdd(float *p, float v) { const float o = *p; *p = o + v; return o; }
inline double atomicAdd(double *p, double v) { const double o = *p; *p = o + v; return o; }
inline __half atomicAdd(__half *p, __half v) {
  const __half o = *p;
  *p = __float2half_rn(__half2float(o) + __half2float(v));
  return o;
}
// sin/cos of pi*x (CUDA's sinpi family): libm's sin/cos of the rounded product
inline double sinpi(double x) { return std::sin(3.141592653589793 * x); }
inline double cospi(double x) { return std::cos(3.141592653589793 * x); }
inline void sincospi(double x, double *s, double *c) { *s = sinpi(x); *c = cospi(x); }
inline void sincospif(float x, float *s, float *c) {
  *s = std::sin(3.14159265358979f * x);
  *c = std::cos(3.14159265358979f * x);
}
