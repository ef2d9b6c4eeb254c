// Reductions: sum, mean, prod, max, min, nansum, nanprod, norm (L1, L2), argmax, argmin.
//
// The host (specs.py) turns any reduction into rows: out[k] folds the `count` input elements at
// offsets base(k) + red(r), where base(k) unravels k over the kept dims and red(r) unravels r
// over the reduced dims (reduce_map: both with their input strides). Accumulators as the CPU
// kernels (csrc/kernels/reduce.h): double for float types, int64 for integers, so both devices
// agree to the last bit on small sums and closely on large ones.
// Two launch shapes:
// - mxc_reduce_rows: one block per output (blockDim.x threads share a row: coalesced when the
//   reduced dims are innermost), block_reduce at the end;
// - mxc_reduce_cols: one thread per output (reduced dims outer, kept dims inner: threads of a
//   warp read neighbouring columns), for rows too many and too short for a block each.
// A full reduction of a large array runs mxc_reduce_rows twice: partial sums per block into a
// workspace (stage 1, `nparts` blocks per output), then a fold of the partials (stage 2).
#include "mxc/common.cuh"

namespace mxc {

struct reduce_map {
  i64 nkeep, keep_shape[kMaxDim], keep_stride[kMaxDim];
  i64 nred, red_shape[kMaxDim], red_stride[kMaxDim];
};
// i < the product of shape (every caller's index is): what is left of i at the outermost dim
// is that dim's index, so it needs no division. A contiguous reduction (one merged dim) then
// indexes with one multiply instead of a 64-bit division and remainder per element, which an
// H200 run suggested dominated a full sum of 16M floats (0.19x PyTorch's bandwidth).
MXC_DEV i64 unravel(i64 i, i64 nd, const i64 *shape, const i64 *stride) {
  i64 off = 0;
  for (int d = (int)nd - 1; d > 0; --d) {
    off += (i % shape[d]) * stride[d];
    i /= shape[d];
  }
  return nd > 0 ? off + i * stride[0] : off;
}

template <class T> struct racc { typedef double type; };
template <> struct racc<signed char> { typedef long long type; };
template <> struct racc<unsigned char> { typedef long long type; };
template <> struct racc<int> { typedef long long type; };
template <> struct racc<long long> { typedef long long type; };
template <> struct racc<bool> { typedef long long type; };

template <class A> MXC_DEV bool is_nan(A v) { return v != v; }

// each reducer: identity, map (element -> accumulator), combine, finish (accumulator, count)
struct r_sum {
  template <class A> static MXC_DEV A ident() { return (A)0; }
  template <class A> static MXC_DEV A map(A v) { return v; }
  template <class A> MXC_DEV A operator()(A a, A b) const { return a + b; }
  template <class A> static MXC_DEV double finish(A a, i64) { return (double)a; }
};
struct r_mean : r_sum {
  template <class A> static MXC_DEV double finish(A a, i64 n) { return (double)a / (double)n; }
};
struct r_prod {
  template <class A> static MXC_DEV A ident() { return (A)1; }
  template <class A> static MXC_DEV A map(A v) { return v; }
  template <class A> MXC_DEV A operator()(A a, A b) const { return a * b; }
  template <class A> static MXC_DEV double finish(A a, i64) { return (double)a; }
};
struct r_nansum : r_sum {
  template <class A> static MXC_DEV A map(A v) { return is_nan(v) ? (A)0 : v; }
};
struct r_nanprod : r_prod {
  template <class A> static MXC_DEV A map(A v) { return is_nan(v) ? (A)1 : v; }
};
// max/min propagate nan (a nan element wins), as MXNet's
struct r_max {
  template <class A> static MXC_DEV A ident() { return -(A)d_inf(); }
  template <class A> static MXC_DEV A map(A v) { return v; }
  template <class A> MXC_DEV A operator()(A a, A b) const {
    return is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b));
  }
  template <class A> static MXC_DEV double finish(A a, i64) { return (double)a; }
};
struct r_min {
  template <class A> static MXC_DEV A ident() { return (A)d_inf(); }
  template <class A> static MXC_DEV A map(A v) { return v; }
  template <class A> MXC_DEV A operator()(A a, A b) const {
    return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b));
  }
  template <class A> static MXC_DEV double finish(A a, i64) { return (double)a; }
};
struct r_norm1 : r_sum {
  template <class A> static MXC_DEV A map(A v) { return v < 0 ? -v : v; }
};
struct r_norm2 : r_sum {
  template <class A> static MXC_DEV A map(A v) { return v * v; }
  template <class A> static MXC_DEV double finish(A a, i64) { return sqrt((double)a); }
};
// integer max/min identities: the extreme values of int64 (the storage values fit)
template <> MXC_DEV long long r_max::ident<long long>() { return (long long)(-9223372036854775807LL - 1); }
template <> MXC_DEV long long r_min::ident<long long>() { return 9223372036854775807LL; }

// argmax / argmin: (value, index in the reduced sub-space); first occurrence wins, nan wins
template <bool kMax> struct r_arg {
  MXC_DEV vi_pair operator()(vi_pair a, vi_pair b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) return an && (!bn || a.i < b.i) ? a : b;
    if (a.v == b.v) return a.i < b.i ? a : b;
    return (kMax ? a.v > b.v : a.v < b.v) ? a : b;
  }
};

}  // namespace mxc

using namespace mxc;

// stage over rows: block k' = (output k, part p) folds elements p, p + nparts*blockDim, ... of
// row k; with nparts == 1 it writes the finished value to out[k] (dtype To), else the raw
// accumulator to partial[k * nparts + p]
template <class R, class T, class To>
__global__ void mxc_reduce_rows(const T *x, To *out, typename racc<T>::type *partial, i64 nout,
                                i64 count, i64 nparts, reduce_map m) {
  typedef typename racc<T>::type A;
  __shared__ A scratch[32];
  for (i64 blk = blockIdx.x; blk < nout * nparts; blk += gridDim.x) {
    const i64 k = blk / nparts, p = blk % nparts;
    const i64 base = unravel(k, m.nkeep, m.keep_shape, m.keep_stride);
    A a = R::template ident<A>();
    for (i64 r = p * blockDim.x + threadIdx.x; r < count; r += nparts * blockDim.x)
      a = R()(a, R::map((A)to_double(x[base + unravel(r, m.nred, m.red_shape, m.red_stride)])));
    a = block_reduce(a, R(), R::template ident<A>(), scratch);
    if (threadIdx.x == 0) {
      if (nparts == 1) out[k] = from_double<To>(R::finish(a, count));
      else partial[blk] = a;
    }
  }
}

// integers accumulate exactly: the element goes to int64 without a trip through double
template <class R, class T, class To>
__global__ void mxc_reduce_cols(const T *x, To *out, i64 nout, i64 count, reduce_map m) {
  typedef typename racc<T>::type A;
  MXC_LOOP(k, nout) {
    const i64 base = unravel(k, m.nkeep, m.keep_shape, m.keep_stride);
    A a = R::template ident<A>();
    for (i64 r = 0; r < count; ++r)
      a = R()(a, R::map((A)to_double(x[base + unravel(r, m.nred, m.red_shape, m.red_stride)])));
    out[k] = from_double<To>(R::finish(a, count));
  }
}

// stage 2: fold nparts accumulators per output
template <class R, class A, class To>
__global__ void mxc_reduce_parts(const A *partial, To *out, i64 nout, i64 nparts, i64 count) {
  __shared__ A scratch[32];
  for (i64 k = blockIdx.x; k < nout; k += gridDim.x) {
    A a = R::template ident<A>();
    for (i64 p = threadIdx.x; p < nparts; p += blockDim.x) a = R()(a, partial[k * nparts + p]);
    a = block_reduce(a, R(), R::template ident<A>(), scratch);
    if (threadIdx.x == 0) out[k] = from_double<To>(R::finish(a, count));
  }
}

// argmax/argmin along the reduced dims: out[k] = index (in the reduced sub-space) as To
template <bool kMax, class T, class To>
__global__ void mxc_argreduce(const T *x, To *out, i64 nout, i64 count, reduce_map m) {
  __shared__ vi_pair scratch[32];
  vi_pair none;
  none.v = 0.0;
  none.i = -1;
  for (i64 k = blockIdx.x; k < nout; k += gridDim.x) {
    const i64 base = unravel(k, m.nkeep, m.keep_shape, m.keep_stride);
    vi_pair a = none;
    for (i64 r = threadIdx.x; r < count; r += blockDim.x) {
      vi_pair b;
      b.v = to_double(x[base + unravel(r, m.nred, m.red_shape, m.red_stride)]);
      b.i = r;
      a = r_arg<kMax>()(a, b);
    }
    a = block_reduce(a, r_arg<kMax>(), none, scratch);
    if (threadIdx.x == 0) out[k] = from_double<To>((double)a.i);
  }
}

// all_finite / multi_all_finite (AMP's overflow check): flag[0] = 0 when an element of x is
// not finite once converted to float32 (the CPU operator checks float32 values, so a float64
// beyond float32's range counts as an overflow). The kernel only ever stores 0, so threads that
// find several bad elements write the same value: no atomics, a deterministic flag, and one
// launch per array of a multi_all_finite call reads its array once. mxc_finite_init sets the
// flag to 1 first when init_output is on.
__global__ void mxc_finite_init(float *flag) {
  if (::mxc::global_tid() == 0) flag[0] = 1.0f;
}
template <class T>
__global__ void mxc_all_finite(const T *x, float *flag, mxc::i64 n) {
  bool ok = true;
  MXC_LOOP(i, n) {
    const float v = mxc::convert<float, T>(x[i]);
    ok = ok && (v - v) == 0.0f;     // inf - inf and NaN give NaN
  }
  if (!ok) flag[0] = 0.0f;
}
