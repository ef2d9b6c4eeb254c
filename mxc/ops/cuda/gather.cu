// Indexing family: take (clip / wrap; raise is checked on the device before the launch, see
// specs.py), Embedding (take along axis 0), one_hot, pick / take_along_axis, their gradient
// put_along, gather_nd, scatter_nd (set or add, Embedding's gradient with clipped indices) and
// take's gradient. Indices come in any dtype I and are read as the CPU kernels read them
// (csrc/kernels/gather_util.h): floats truncate toward zero, NaN and |v| >= 4.6e18 are the
// "bad" index that every mode treats as out of range (clip and wrap send it to 0).
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
constexpr i64 kBadIndex = (i64)(-9223372036854775807LL - 1);

MXC_DEV i64 index_of_double(double d) {
  return (d != d || d >= 4.6e18 || d <= -4.6e18) ? kBadIndex : (i64)d;
}
template <class I> MXC_DEV i64 read_index(I v) { return (i64)v; }
template <> MXC_DEV i64 read_index<float>(float v) { return index_of_double((double)v); }
template <> MXC_DEV i64 read_index<double>(double v) { return index_of_double(v); }
template <> MXC_DEV i64 read_index<__half>(__half v) {
  return index_of_double((double)__half2float(v));
}

// mode 0 clip, 1 wrap (the bad index becomes 0 in both, as the CPU)
MXC_DEV i64 fix_index(i64 j, i64 n, int mode) {
  if (j == kBadIndex) return 0;
  if (mode == 1) {
    j %= n;
    return j < 0 ? j + n : j;
  }
  return j < 0 ? 0 : (j >= n ? n - 1 : j);
}
// gather_nd / scatter_nd: negative indices count from the end once (the spec checked the range
// beforehand), or with clip (Embedding's gradient) clamp into [0, d)
MXC_DEV i64 nd_index(i64 j, i64 d, int clip) {
  if (clip) return fix_index(j, d, 0);
  return j < 0 ? j + d : j;
}
// atomic add in the storage type (float16 and bfloat16 through their 16-bit atomics, sm_80+)
MXC_DEV void atomic_add(float *p, float v) { atomicAdd(p, v); }
MXC_DEV void atomic_add(double *p, double v) { atomicAdd(p, v); }
MXC_DEV void atomic_add(__half *p, float v) { atomicAdd(p, __float2half_rn(v)); }
MXC_DEV void atomic_add(__nv_bfloat16 *p, float v) { atomicAdd(p, __float2bfloat16_rn(v)); }
}  // namespace mxc

// take along an axis: x viewed as (outer, n, inner), idx has m elements, y is (outer, m, inner)
template <class T, class I>
__global__ void mxc_take(const T *x, const I *idx, T *y, i64 outer, i64 n, i64 inner, i64 m,
                         int mode) {
  MXC_LOOP(i, outer * m * inner) {
    const i64 c = i % inner, k = (i / inner) % m, o = i / (inner * m);
    y[i] = x[(o * n + fix_index(read_index(idx[k]), n, mode)) * inner + c];
  }
}

// gradient of take: dx (zeroed before) += dy at the taken rows
template <class T, class I>
__global__ void mxc_take_grad(const T *dy, const I *idx, T *dx, i64 outer, i64 n, i64 inner,
                              i64 m, int mode) {
  MXC_LOOP(i, outer * m * inner) {
    const i64 c = i % inner, k = (i / inner) % m, o = i / (inner * m);
    atomic_add(dx + (o * n + fix_index(read_index(idx[k]), n, mode)) * inner + c, load(dy[i]));
  }
}

// one_hot: y (m, depth) = on where idx == column else off (out-of-range indices: all off)
template <class T, class I>
__global__ void mxc_one_hot(const I *idx, T *y, i64 m, i64 depth, double on, double off) {
  const T von = from_double<T>(on), voff = from_double<T>(off);
  MXC_LOOP(i, m * depth) {
    const i64 j = read_index(idx[i / depth]);
    y[i] = j == i % depth ? von : voff;
  }
}

// pick / _take_along_axis: x (outer, n, inner), idx (outer, k, inner) -> y (outer, k, inner)
// (pick: k = 1)
template <class T, class I>
__global__ void mxc_pick(const T *x, const I *idx, T *y, i64 outer, i64 n, i64 inner, i64 k,
                         int mode) {
  MXC_LOOP(i, outer * k * inner) {
    const i64 o = i / (k * inner), c = i % inner;
    y[i] = x[(o * n + fix_index(read_index(idx[i]), n, mode)) * inner + c];
  }
}

// put_along (_backward_pick): y (outer, n, inner) = 0, then y[o, idx[o, j, c], c] += g[o, j, c].
// One thread per (o, c) column zeroes its column and adds its k values in order: no atomics, any
// dtype, and the sum order of the CPU kernel.
template <class T, class I>
__global__ void mxc_pick_grad(const T *g, const I *idx, T *y, i64 outer, i64 n, i64 inner, i64 k,
                              int mode) {
  typedef typename acc<T>::type A;
  MXC_LOOP(t, outer * inner) {
    const i64 o = t / inner, c = t % inner;
    T *col = y + o * n * inner + c;
    for (i64 m = 0; m < n; ++m) col[m * inner] = store<T>((A)0);
    for (i64 j = 0; j < k; ++j) {
      const i64 s = (o * k + j) * inner + c;
      T *d = col + fix_index(read_index(idx[s]), n, mode) * inner;
      *d = store<T>((A)(load(*d) + load(g[s])));
    }
  }
}

// gather_nd: idx (k, m) picks x's first k dims (shape in `dims`), each picked item `inner`
// elements long; y (m, inner)
template <class T, class I>
__global__ void mxc_gather_nd(const T *x, const I *idx, T *y, i64 m, i64 k, i64 inner,
                              index_map dims) {
  MXC_LOOP(i, m * inner) {
    const i64 j = i / inner;
    i64 off = 0;
    for (i64 d = 0; d < k; ++d)
      off = off * dims.shape[d] + nd_index(read_index(idx[d * m + j]), dims.shape[d], 0);
    y[i] = x[off * inner + i % inner];
  }
}

// scatter_nd (set) and its add form (gather_nd's and Embedding's gradients); y prepared by the
// host (zeros, or the destination's copy). Duplicate index tuples: set races (MXNet's GPU result
// is unspecified there too), add accumulates atomically.
template <class T, class I, bool kAdd>
__global__ void mxc_scatter_nd(const T *x, const I *idx, T *y, i64 m, i64 k, i64 inner,
                               index_map dims, int clip) {
  MXC_LOOP(i, m * inner) {
    const i64 j = i / inner;
    i64 off = 0;
    for (i64 d = 0; d < k; ++d)
      off = off * dims.shape[d] + nd_index(read_index(idx[d * m + j]), dims.shape[d], clip);
    if constexpr (kAdd) atomic_add(y + off * inner + i % inner, load(x[i]));
    else y[off * inner + i % inner] = x[i];
  }
}
