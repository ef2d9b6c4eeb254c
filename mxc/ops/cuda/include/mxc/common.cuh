// Shared pieces of mxc's CUDA kernels (mxc/ops/cuda/*.cu), compiled at run time by NVRTC.
//
// - Types: a kernel is a template over its storage type T (float, double, __half,
//   __nv_bfloat16, signed char, unsigned char, int, long long, bool); acc<T> is the compute type
//   (float for __half and __nv_bfloat16: the 16-bit types only store), and load/store convert
//   between them (round to nearest even). from_double/to_double convert with MXNet's x86 semantics
//   (kernels/hd_math.h: truncation, INT_MIN for nan and out-of-range).
// - Launch shape: every elementwise kernel is a grid-stride loop, so any grid works; the specs
//   (mxc/ops/cuda/specs.py) size the grid from the element count.
// - Structs passed by value are arrays of int64 (ndim first), so the launcher packs them as
//   int64 tuples: no padding rules to agree on.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "kernels/hd_math.h"

namespace mxc {

typedef long long i64;
typedef unsigned long long u64;
constexpr int kMaxDim = 8;

#define MXC_DEV __device__ __forceinline__
#define MXC_LOOP(i, n)                                                                   \
  for (::mxc::i64 i = (::mxc::i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);         \
       i += (::mxc::i64)blockDim.x * gridDim.x)

MXC_DEV i64 global_tid() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
MXC_DEV i64 global_threads() { return (i64)blockDim.x * gridDim.x; }

// ---- compute types --------------------------------------------------------------------------
template <class T> struct acc { typedef T type; };
template <> struct acc<__half> { typedef float type; };
template <> struct acc<__nv_bfloat16> { typedef float type; };

template <class T> MXC_DEV typename acc<T>::type load(T v) { return v; }
template <> MXC_DEV float load<__half>(__half v) { return __half2float(v); }
template <class T> MXC_DEV T store(typename acc<T>::type v) { return v; }
template <> MXC_DEV __half store<__half>(float v) { return __float2half_rn(v); }
template <> MXC_DEV float load<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> MXC_DEV __nv_bfloat16 store<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// storage value from a double, as MXNet's C++ cast on x86 (and numpy for floats)
template <class T> MXC_DEV T from_double(double d);
template <> MXC_DEV float from_double<float>(double d) { return (float)d; }
template <> MXC_DEV double from_double<double>(double d) { return d; }
template <> MXC_DEV __half from_double<__half>(double d) { return __float2half_rn((float)d); }
template <> MXC_DEV __nv_bfloat16 from_double<__nv_bfloat16>(double d) {
  return __float2bfloat16_rn((float)d);
}
template <> MXC_DEV unsigned char from_double<unsigned char>(double d) { return mxc_hd_d2u8(d); }
template <> MXC_DEV signed char from_double<signed char>(double d) { return mxc_hd_d2i8(d); }
template <> MXC_DEV int from_double<int>(double d) { return mxc_hd_d2i32(d); }
template <> MXC_DEV long long from_double<long long>(double d) { return mxc_hd_d2i64(d); }
template <> MXC_DEV bool from_double<bool>(double d) { return d != 0.0; }

template <class T> MXC_DEV double to_double(T v) { return (double)v; }
template <> MXC_DEV double to_double<__half>(__half v) { return (double)__half2float(v); }
template <> MXC_DEV double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return (double)__bfloat162float(v);
}

template <class T> struct is_int { static constexpr bool value = false; };
template <> struct is_int<signed char> { static constexpr bool value = true; };
template <> struct is_int<unsigned char> { static constexpr bool value = true; };
template <> struct is_int<int> { static constexpr bool value = true; };
template <> struct is_int<long long> { static constexpr bool value = true; };
template <> struct is_int<bool> { static constexpr bool value = true; };

// dtype -> dtype conversion (cast): integers among themselves wrap as C++ does, anything
// involving a float goes through double with MXNet's float->int rule
template <class To, class From> MXC_DEV To convert(From v) {
  if (is_int<To>::value && is_int<From>::value) return (To)v;
  return from_double<To>(to_double(v));
}
template <> MXC_DEV bool convert<bool, __half>(__half v) { return __half2float(v) != 0.0f; }
template <> MXC_DEV __half convert<__half, float>(float v) { return __float2half_rn(v); }
template <> MXC_DEV float convert<float, __half>(__half v) { return __half2float(v); }
template <> MXC_DEV __nv_bfloat16 convert<__nv_bfloat16, float>(float v) {
  return __float2bfloat16_rn(v);
}
template <> MXC_DEV float convert<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

MXC_DEV float f_inf() { return __int_as_float(0x7f800000); }
MXC_DEV float f_nan() { return __int_as_float(0x7fc00000); }
MXC_DEV double d_inf() { return __longlong_as_double(0x7ff0000000000000LL); }

// ---- 16-byte vectors for aligned, bandwidth-bound loops --------------------------------------
template <class T> struct alignas(16) vec16 {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};
// up to 4 elements and 16 bytes: wide enough for full-width loads of 4- and 8-byte types,
// narrow enough that the unrolled body of an expensive op (double lgamma) stays small
template <class T> struct vec4_n { static constexpr int N = 16 / sizeof(T) < 4 ? 16 / sizeof(T) : 4; };
template <class T> struct alignas(vec4_n<T>::N * sizeof(T)) vec4 {
  static constexpr int N = vec4_n<T>::N;
  T v[N];
};
MXC_DEV bool aligned16(const void *p) { return ((u64)p & 15) == 0; }

// ---- index maps ------------------------------------------------------------------------------
// Broadcast operands: output dims and, per operand, the element stride of each output dim (0
// where the operand is broadcast). The host collapses dims first, so ndim is usually 1-3.
struct bcast2 { i64 ndim, shape[kMaxDim], sa[kMaxDim], sb[kMaxDim]; };
struct bcast3 { i64 ndim, shape[kMaxDim], s0[kMaxDim], s1[kMaxDim], s2[kMaxDim]; };

// A general gather map (transpose, slice, flip, tile, repeat, broadcast_to, ...): output
// element with coordinates o_d reads input element begin + sum_d ((o_d / div_d) % mod_d) *
// stride_d (strides may be negative: flip).
struct index_map {
  i64 ndim, begin, shape[kMaxDim], stride[kMaxDim], div[kMaxDim], mod[kMaxDim];
};
MXC_DEV i64 map_offset(const index_map &m, i64 i) {
  i64 off = m.begin;
  for (int d = (int)m.ndim - 1; d >= 0; --d) {
    const i64 o = i % m.shape[d];
    i /= m.shape[d];
    off += ((o / m.div[d]) % m.mod[d]) * m.stride[d];
  }
  return off;
}

// ---- warp and block reductions (blockDim.x a multiple of 32, at most 1024) --------------------
// value + index pair for argmax/argmin
struct vi_pair { double v; i64 i; };
MXC_DEV float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
MXC_DEV double shfl_xor(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
MXC_DEV long long shfl_xor(long long v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
MXC_DEV vi_pair shfl_xor(vi_pair p, int o) {
  vi_pair q;
  q.v = __shfl_xor_sync(0xffffffffu, p.v, o);
  q.i = __shfl_xor_sync(0xffffffffu, p.i, o);
  return q;
}
struct add_op {
  template <class V> MXC_DEV V operator()(V a, V b) const { return a + b; }
};
template <class R, class V> MXC_DEV V warp_reduce(V v, R r) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = r(v, shfl_xor(v, o));
  return v;
}
// Every thread gets the block's result. `scratch` is 32 values of V in shared memory; the call
// starts with a barrier so back-to-back calls may reuse it.
template <class R, class V> MXC_DEV V block_reduce(V v, R r, V ident, V *scratch) {
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_reduce(v, r);
  __syncthreads();
  if (lane == 0) scratch[wid] = v;
  __syncthreads();
  v = lane < nw ? scratch[lane] : ident;
  return warp_reduce(v, r);
}

}  // namespace mxc
