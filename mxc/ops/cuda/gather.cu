// Indexing family: take (clip / wrap), Embedding (take along axis 0), one_hot, pick, gather_nd,
// scatter_nd, and the gradients (scatter-add with atomics). Indices come in any dtype I and are
// read as double, then truncated, as MXNet does.
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
// mode 0 clip, 1 wrap
MXC_DEV i64 fix_index(double v, i64 n, int mode) {
  i64 j = (i64)v;
  if (mode == 1) {
    j %= n;
    return j < 0 ? j + n : j;
  }
  return j < 0 ? 0 : (j >= n ? n - 1 : j);
}
// atomic add in the storage type (float16 through the half atomic)
MXC_DEV void atomic_add(float *p, float v) { atomicAdd(p, v); }
MXC_DEV void atomic_add(double *p, double v) { atomicAdd(p, v); }
MXC_DEV void atomic_add(__half *p, float v) { atomicAdd(p, __float2half_rn(v)); }
}  // namespace mxc

// take along an axis: x viewed as (outer, n, inner), idx has m elements, y is (outer, m, inner)
template <class T, class I>
__global__ void mxc_take(const T *x, const I *idx, T *y, i64 outer, i64 n, i64 inner, i64 m,
                         int mode) {
  MXC_LOOP(i, outer * m * inner) {
    const i64 c = i % inner, k = (i / inner) % m, o = i / (inner * m);
    y[i] = x[(o * n + fix_index(to_double(idx[k]), n, mode)) * inner + c];
  }
}

// gradient of take / Embedding: dx (zeroed before) += dy at the taken rows
template <class T, class I>
__global__ void mxc_take_grad(const T *dy, const I *idx, T *dx, i64 outer, i64 n, i64 inner,
                              i64 m, int mode) {
  MXC_LOOP(i, outer * m * inner) {
    const i64 c = i % inner, k = (i / inner) % m, o = i / (inner * m);
    atomic_add(dx + (o * n + fix_index(to_double(idx[k]), n, mode)) * inner + c, load(dy[i]));
  }
}

// one_hot: y (m, depth) = on where idx == column else off (out-of-range indices: all off)
template <class T, class I>
__global__ void mxc_one_hot(const I *idx, T *y, i64 m, i64 depth, double on, double off) {
  const T von = from_double<T>(on), voff = from_double<T>(off);
  MXC_LOOP(i, m * depth) {
    const i64 j = (i64)to_double(idx[i / depth]);
    y[i] = j == i % depth ? von : voff;
  }
}

// pick: x (outer, n, inner), idx (outer, inner) -> y (outer, inner)
template <class T, class I>
__global__ void mxc_pick(const T *x, const I *idx, T *y, i64 outer, i64 n, i64 inner, int mode) {
  MXC_LOOP(i, outer * inner) {
    const i64 o = i / inner, c = i % inner;
    y[i] = x[(o * n + fix_index(to_double(idx[i]), n, mode)) * inner + c];
  }
}

template <class T, class I>
__global__ void mxc_pick_grad(const T *dy, const I *idx, T *dx, i64 outer, i64 n, i64 inner,
                              int mode) {
  MXC_LOOP(i, outer * inner) {
    const i64 o = i / inner, c = i % inner;
    dx[(o * n + fix_index(to_double(idx[i]), n, mode)) * inner + c] = dy[i];
  }
}

// gather_nd: idx (k, m) picks x's first k dims (shape in `dims`), each picked item `inner`
// elements long; y (m, inner). Negative indices wrap once (MXNet 1.9 behaviour).
template <class T, class I>
__global__ void mxc_gather_nd(const T *x, const I *idx, T *y, i64 m, i64 k, i64 inner,
                              index_map dims) {
  MXC_LOOP(i, m * inner) {
    const i64 j = i / inner;
    i64 off = 0;
    for (i64 d = 0; d < k; ++d) {
      i64 v = (i64)to_double(idx[d * m + j]);
      if (v < 0) v += dims.shape[d];
      off = off * dims.shape[d] + v;
    }
    y[i] = x[off * inner + i % inner];
  }
}

// scatter_nd (assign) and its add form (gather_nd's gradient); y prepared by the host (zeros
// for scatter_nd, as MXNet)
template <class T, class I, bool kAdd>
__global__ void mxc_scatter_nd(const T *x, const I *idx, T *y, i64 m, i64 k, i64 inner,
                               index_map dims) {
  MXC_LOOP(i, m * inner) {
    const i64 j = i / inner;
    i64 off = 0;
    for (i64 d = 0; d < k; ++d) {
      i64 v = (i64)to_double(idx[d * m + j]);
      if (v < 0) v += dims.shape[d];
      off = off * dims.shape[d] + v;
    }
    if constexpr (kAdd) atomic_add(y + off * inner + i % inner, load(x[i]));
    else y[off * inner + i % inner] = x[i];
  }
}
