// softmax / log_softmax along one axis, forward and backward, with temperature.
// The input is viewed as (outer, n, inner) around the axis. inner == 1 (the last axis, the
// common case): one block per row, three passes over the row in registers/L1 (max, sum of
// exp, write) with block reductions. inner > 1: one thread per (outer, inner) column, the
// threads of a warp on neighbouring columns (coalesced). Accumulation in float for float16/32,
// double for float64 (acc<T>), as MXNet's AccType.
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
struct r_maxf {
  template <class A> MXC_DEV A operator()(A a, A b) const { return a > b ? a : b; }
};
struct r_addf {
  template <class A> MXC_DEV A operator()(A a, A b) const { return a + b; }
};
}  // namespace mxc

template <bool kLog, class T>
__global__ void mxc_softmax_rows(const T *x, T *y, i64 rows, i64 n, double temperature) {
  typedef typename acc<T>::type A;
  __shared__ A scratch[32];
  const A inv_t = (A)(1.0 / temperature);
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * n;
    T *yr = y + r * n;
    A mx = -(A)d_inf();
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
      const A v = load(xr[j]) * inv_t;
      mx = v > mx ? v : mx;
    }
    mx = block_reduce(mx, r_maxf(), -(A)d_inf(), scratch);
    A s = 0;
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) s += exp(load(xr[j]) * inv_t - mx);
    s = block_reduce(s, r_addf(), (A)0, scratch);
    const A ls = log(s);
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
      const A v = load(xr[j]) * inv_t - mx;
      yr[j] = store<T>(kLog ? v - ls : exp(v) / s);
    }
  }
}

template <bool kLog, class T>
__global__ void mxc_softmax_cols(const T *x, T *y, i64 outer, i64 n, i64 inner,
                                 double temperature) {
  typedef typename acc<T>::type A;
  const A inv_t = (A)(1.0 / temperature);
  MXC_LOOP(c, outer * inner) {
    const i64 base = (c / inner) * n * inner + c % inner;
    A mx = -(A)d_inf();
    for (i64 j = 0; j < n; ++j) {
      const A v = load(x[base + j * inner]) * inv_t;
      mx = v > mx ? v : mx;
    }
    A s = 0;
    for (i64 j = 0; j < n; ++j) s += exp(load(x[base + j * inner]) * inv_t - mx);
    const A ls = log(s);
    for (i64 j = 0; j < n; ++j) {
      const A v = load(x[base + j * inner]) * inv_t - mx;
      y[base + j * inner] = store<T>(kLog ? v - ls : exp(v) / s);
    }
  }
}

// backward from the forward output y and dy:
//   softmax:     dx = y * (dy - sum(dy * y)) / t
//   log_softmax: dx = (dy - exp(y) * sum(dy)) / t
template <bool kLog, class T>
__global__ void mxc_softmax_grad(const T *y, const T *dy, T *dx, i64 outer, i64 n, i64 inner,
                                 double temperature) {
  typedef typename acc<T>::type A;
  const A inv_t = (A)(1.0 / temperature);
  MXC_LOOP(c, outer * inner) {
    const i64 base = (c / inner) * n * inner + c % inner;
    A s = 0;
    for (i64 j = 0; j < n; ++j) {
      const i64 o = base + j * inner;
      s += kLog ? load(dy[o]) : load(dy[o]) * load(y[o]);
    }
    for (i64 j = 0; j < n; ++j) {
      const i64 o = base + j * inner;
      const A g = kLog ? load(dy[o]) - exp(load(y[o])) * s : load(y[o]) * (load(dy[o]) - s);
      dx[o] = store<T>(g * inv_t);
    }
  }
}
