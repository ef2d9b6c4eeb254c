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

// ---- SoftmaxOutput's backward and the softmax cross-entropy losses ----------------------------
// (csrc/kernels/softmax.h: MXNet 1.9.1's formulas; the label of an entry is its value truncated
// to an int)

// SoftmaxOutput's gradient scale: grad_scale / (inner with multi_output, unless 'valid') / the
// count of 'batch' (n with multi_output, else every label) or 'valid' (the labels that are not
// ignore_label, at least 1) normalization; 1 for 'null'. One thread: the count reads NL labels.
template <class T>
__global__ void mxc_so_scale(const T *lab, double *scale, i64 NL, i64 n, i64 inner, int norm,
                             int multi, int ign, double grad_scale) {
  if (global_tid() != 0) return;
  i64 valid = 1;
  if (norm == 1) {
    valid = multi ? n : NL;
  } else if (norm == 2) {
    valid = NL;
    for (i64 q = 0; q < NL; ++q)
      if ((int)load(lab[q]) == ign) --valid;
    if (valid == 0) valid = 1;
  }
  scale[0] = grad_scale / (double)(multi && norm != 2 ? inner : 1) / (double)valid;
}

// dx[i] for every element of y (n, K, inner): (y - onehot(label) [smoothed]) * scale [* y]
template <class T>
__global__ void mxc_so_bwd(const T *y, const T *lab, const double *scale, T *dx, i64 n, i64 K,
                           i64 inner, int use_ignore, int smooth, int out_grad, int ign,
                           double alpha) {
  typedef typename acc<T>::type C;
  const C a = (C)alpha;
  const C other = smooth && K > 1 ? a / (C)(K - 1) : (C)0;
  const C hit = (C)1 - (smooth ? a : (C)0);
  const C sc = (C)scale[0];
  MXC_LOOP(i, n * K * inner) {
    const i64 r = i % inner, c = (i / inner) % K, o = i / (K * inner);
    const int k = (int)load(lab[o * inner + r]);
    const C yv = (C)load(y[i]);
    C v = use_ignore && k == ign ? (C)0 : (c == k ? yv - hit : yv - other);
    v *= sc;
    if (out_grad) v *= yv;
    dx[i] = store<T>(v);
  }
}

// per row i of x (N, K): its maximum, sum(exp(x - max)) and that sum's log into mx[i], sum[i],
// lse[i]
template <class T>
__global__ void mxc_ce_row_lse(const T *x, double *mx, double *sum, double *lse, i64 N, i64 K) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, N) {
    const T *xr = x + i * K;
    C m = -(C)d_inf(), s = 0;
    for (i64 j = 0; j < K; ++j) {
      const C v = (C)load(xr[j]);
      m = v > m ? v : m;
    }
    for (i64 j = 0; j < K; ++j) s += exp((C)load(xr[j]) - m);
    mx[i] = (double)m;
    sum[i] = (double)s;
    lse[i] = (double)log(s);
  }
}

// the class of a row: its label truncated and clipped to [0, K) (pick's 'clip'; NaN is 0)
template <class C> MXC_DEV i64 ce_class(C lv, i64 K) {
  return !(lv > 0) ? 0 : (lv >= (C)K ? K - 1 : (i64)lv);
}

// _softmax_ce_rows: loss[i] = -((x[i, k] - max) - lse)
template <class T>
__global__ void mxc_ce_rows(const T *x, const T *lab, const double *mx, const double *lse,
                            T *loss, i64 N, i64 K) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, N) {
    const i64 k = ce_class((C)load(lab[i]), K);
    loss[i] = store<T>(-(((C)load(x[i * K + k]) - (C)mx[i]) - (C)lse[i]));
  }
}

// _backward_softmax_ce_rows: dx[i, j] = g[i] * (softmax(x[i])_j - [j == k_i])
template <class T>
__global__ void mxc_ce_rows_bwd(const T *g, const T *x, const T *lab, const double *mx,
                                const double *lse, T *dx, i64 N, i64 K) {
  typedef typename acc<T>::type C;
  MXC_LOOP(e, N * K) {
    const i64 i = e / K, j = e % K;
    const i64 k = ce_class((C)load(lab[i]), K);
    const C p = exp((C)load(x[e]) - (C)mx[i] - (C)lse[i]);
    dx[e] = store<T>((C)load(g[i]) * (j == k ? p - (C)1 : p));
  }
}

// softmax_cross_entropy: loss per row -log(max(p_label, 1e-8)) into part, then their sum in
// row order (one thread) into out[0]; the labels were checked on the device before
template <class T>
__global__ void mxc_ce_total_rows(const T *x, const T *lab, const double *mx, const double *sum,
                                  double *part, i64 N, i64 K) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, N) {
    const i64 k = (i64)(C)load(lab[i]);
    const C p = exp((C)load(x[i * K + k]) - (C)mx[i]) / (C)sum[i];
    part[i] = -(double)log(p > (C)1e-8 ? p : (C)1e-8);
  }
}

template <class T>
__global__ void mxc_ce_total(const double *part, T *out, i64 N) {
  if (global_tid() != 0) return;
  double s = 0;
  for (i64 i = 0; i < N; ++i) s += part[i];
  out[0] = store<T>((typename acc<T>::type)s);
}
