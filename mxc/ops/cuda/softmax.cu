// softmax / log_softmax along one axis, forward and backward, with temperature, an output dtype
// (softmax's dtype=: input T, output To) and softmax's use_length (a length per row, int32 or
// int64 L, null without it: only the first length entries of a row take part, the rest are 0;
// a length outside [0, n] is clamped, as the CPU).
// The input is viewed as (outer, n, inner) around the axis. inner == 1 (the last axis, the
// common case): one block per row, three passes over the row in registers/L1 (max, sum of
// exp, write) with block reductions. inner > 1: one thread per (outer, inner) column, the
// threads of a warp on neighbouring columns (coalesced). Accumulation in float for float16/32,
// double when either dtype is float64 (MXNet's AccType).
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
struct r_maxf {
  template <class A> MXC_DEV A operator()(A a, A b) const { return a > b ? a : b; }
};
struct r_addf {
  template <class A> MXC_DEV A operator()(A a, A b) const { return a + b; }
};
template <class A, class B> struct wider { typedef float type; };
template <class B> struct wider<double, B> { typedef double type; };
template <class A> struct wider<A, double> { typedef double type; };
template <> struct wider<double, double> { typedef double type; };

// entries of row r that take part: n, or the row's length clamped into [0, n]
template <class L> MXC_DEV i64 row_len(const L *len, i64 r, i64 n) {
  if (!len) return n;
  const i64 v = (i64)len[r];
  return v < 0 ? 0 : (v > n ? n : v);
}
}  // namespace mxc

template <bool kLog, class T, class To, class L>
__global__ void mxc_softmax_rows(const T *x, const L *len, To *y, i64 rows, i64 n,
                                 double temperature) {
  typedef typename wider<typename acc<T>::type, typename acc<To>::type>::type A;
  __shared__ A scratch[32];
  const A inv_t = (A)(1.0 / temperature);
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * n;
    To *yr = y + r * n;
    const i64 m = row_len(len, r, n);
    A mx = -(A)d_inf();
    for (i64 j = threadIdx.x; j < m; j += blockDim.x) {
      const A v = (A)load(xr[j]) * inv_t;
      mx = v > mx ? v : mx;
    }
    mx = block_reduce(mx, r_maxf(), -(A)d_inf(), scratch);
    A s = 0;
    for (i64 j = threadIdx.x; j < m; j += blockDim.x) s += exp((A)load(xr[j]) * inv_t - mx);
    s = block_reduce(s, r_addf(), (A)0, scratch);
    const A ls = log(s);
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
      const A v = (A)load(xr[j]) * inv_t - mx;
      yr[j] = j < m ? store<To>((typename acc<To>::type)(kLog ? v - ls : exp(v) / s))
                    : store<To>((typename acc<To>::type)0);
    }
  }
}

template <bool kLog, class T, class To, class L>
__global__ void mxc_softmax_cols(const T *x, const L *len, To *y, i64 outer, i64 n, i64 inner,
                                 double temperature) {
  typedef typename wider<typename acc<T>::type, typename acc<To>::type>::type A;
  typedef typename acc<To>::type AO;
  const A inv_t = (A)(1.0 / temperature);
  MXC_LOOP(c, outer * inner) {
    const i64 base = (c / inner) * n * inner + c % inner;
    const i64 m = row_len(len, c, n);
    A mx = -(A)d_inf();
    for (i64 j = 0; j < m; ++j) {
      const A v = (A)load(x[base + j * inner]) * inv_t;
      mx = v > mx ? v : mx;
    }
    A s = 0;
    for (i64 j = 0; j < m; ++j) s += exp((A)load(x[base + j * inner]) * inv_t - mx);
    const A ls = log(s);
    for (i64 j = 0; j < m; ++j) {
      const A v = (A)load(x[base + j * inner]) * inv_t - mx;
      y[base + j * inner] = store<To>((AO)(kLog ? v - ls : exp(v) / s));
    }
    for (i64 j = m; j < n; ++j) y[base + j * inner] = store<To>((AO)0);
  }
}

// backward from the forward output y (dtype Ty, as the head gradient dy) into dx (Tx, the
// forward input's dtype):
//   softmax:     dx = y * (dy - sum(dy * y)) / t
//   log_softmax: dx = (dy - exp(y) * sum(dy)) / t
// entries past a row's length get 0
template <bool kLog, class Ty, class Tx, class L>
__global__ void mxc_softmax_grad(const Ty *y, const Ty *dy, const L *len, Tx *dx, i64 outer,
                                 i64 n, i64 inner, double temperature) {
  typedef typename wider<typename acc<Ty>::type, typename acc<Tx>::type>::type A;
  typedef typename acc<Tx>::type AX;
  const A inv_t = (A)(1.0 / temperature);
  MXC_LOOP(c, outer * inner) {
    const i64 base = (c / inner) * n * inner + c % inner;
    const i64 m = row_len(len, c, n);
    A s = 0;
    for (i64 j = 0; j < m; ++j) {
      const i64 o = base + j * inner;
      s += kLog ? (A)load(dy[o]) : (A)load(dy[o]) * (A)load(y[o]);
    }
    for (i64 j = 0; j < m; ++j) {
      const i64 o = base + j * inner;
      const A yv = (A)load(y[o]), gv = (A)load(dy[o]);
      const A g = kLog ? gv - exp(yv) * s : yv * (gv - s);
      dx[o] = store<Tx>((AX)(g * inv_t));
    }
    for (i64 j = m; j < n; ++j) dx[base + j * inner] = store<Tx>((AX)0);
  }
}
