// Elementwise kernels: unary ops, binary ops on equal shapes, array-scalar ops, cast, clip,
// where, copy. The GPU twins of mxc/ops/cpu/elemwise.pyx (csrc/kernels/elemwise_*.h), with the
// same semantics (MXNet 1.9.1's mshadow_op.h):
// - float16 and float32 compute in float32, float64 in double;
// - integer inputs of ops MXNet evaluates in floating point (exp, sqrt, ...) compute in double
//   and convert back with MXNet's x86 cast; exact integer ops (negative, abs, square, ...) use
//   two's-complement wrap-around; power/hypot go through float32 as MXNet does;
// - mod takes the divisor's sign and x mod 0 = 0; integer x / 0 = 0 (kernels/hd_math.h, the
//   same functions the CPU kernels use).
// Every kernel is a grid-stride loop; where both pointers are 16-byte aligned the body moves
// vectors of up to 4 elements and 16 bytes (the common case: CuPy's pool hands out 256-byte aligned blocks).
#include "mxc/common.cuh"

#include "mxc/elemwise_ops.cuh"

using namespace mxc;

// y = op(x), n elements (x may be y: in-place is per element)
template <class Op, class T>
__global__ void mxc_unary(const T *x, T *y, i64 n) {
  const i64 t0 = global_tid(), nt = global_threads();
  if (aligned16(x) && aligned16(y)) {
    constexpr int V = vec4<T>::N;
    const i64 nv = n / V;
    const vec4<T> *xv = reinterpret_cast<const vec4<T> *>(x);
    vec4<T> *yv = reinterpret_cast<vec4<T> *>(y);
    for (i64 j = t0; j < nv; j += nt) {
      vec4<T> a = xv[j];
#pragma unroll
      for (int k = 0; k < V; ++k) a.v[k] = apply1(Op(), a.v[k]);
      yv[j] = a;
    }
    for (i64 i = nv * V + t0; i < n; i += nt) y[i] = apply1(Op(), x[i]);
  } else {
    for (i64 i = t0; i < n; i += nt) y[i] = apply1(Op(), x[i]);
  }
}

// y = op(a, b) on equal shapes
template <class Op, class T>
__global__ void mxc_binary(const T *a, const T *b, T *y, i64 n) {
  const i64 t0 = global_tid(), nt = global_threads();
  if (aligned16(a) && aligned16(b) && aligned16(y)) {
    constexpr int V = vec4<T>::N;
    const i64 nv = n / V;
    const vec4<T> *av = reinterpret_cast<const vec4<T> *>(a);
    const vec4<T> *bv = reinterpret_cast<const vec4<T> *>(b);
    vec4<T> *yv = reinterpret_cast<vec4<T> *>(y);
    for (i64 j = t0; j < nv; j += nt) {
      vec4<T> p = av[j];
      const vec4<T> q = bv[j];
#pragma unroll
      for (int k = 0; k < V; ++k) p.v[k] = apply2(Op(), p.v[k], q.v[k]);
      yv[j] = p;
    }
    for (i64 i = nv * V + t0; i < n; i += nt) y[i] = apply2(Op(), a[i], b[i]);
  } else {
    for (i64 i = t0; i < n; i += nt) y[i] = apply2(Op(), a[i], b[i]);
  }
}

// y = op(x, s) or, with reverse != 0, op(s, x); the scalar is first cast to the array's dtype,
// as MXNet does (int32 array + 2.5 adds 2)
template <class Op, class T>
__global__ void mxc_scalar(const T *x, T *y, i64 n, double scalar, int reverse) {
  const T s = from_double<T>(scalar);
  if (reverse) {
    MXC_LOOP(i, n) y[i] = apply2(Op(), s, x[i]);
  } else {
    MXC_LOOP(i, n) y[i] = apply2(Op(), x[i], s);
  }
}

// dtype conversion
template <class From, class To>
__global__ void mxc_cast(const From *x, To *y, i64 n) {
  MXC_LOOP(i, n) y[i] = convert<To>(x[i]);
}

// copy of n elements of any 1/2/4/8-byte type (T = unsigned char/short/int/long long)
template <class T>
__global__ void mxc_copy(const T *x, T *y, i64 n) {
  const i64 t0 = global_tid(), nt = global_threads();
  if (aligned16(x) && aligned16(y)) {
    const i64 nbytes = n * (i64)sizeof(T), nv = nbytes / 16;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x);
    uint4 *yv = reinterpret_cast<uint4 *>(y);
    for (i64 j = t0; j < nv; j += nt) yv[j] = xv[j];
    for (i64 i = nv * 16 / (i64)sizeof(T) + t0; i < n; i += nt) y[i] = x[i];
  } else {
    for (i64 i = t0; i < n; i += nt) y[i] = x[i];
  }
}

// clip(x, lo, hi) with the bounds cast to the dtype; nan passes through (MXNet's clip)
template <class T>
__global__ void mxc_clip(const T *x, T *y, i64 n, double lo, double hi) {
  typedef typename acc<T>::type A;
  const A l = load(from_double<T>(lo)), h = load(from_double<T>(hi));
  MXC_LOOP(i, n) y[i] = clip_value<T>(load(x[i]), l, h);
}

// _backward_clip: dx = dy where lo <= x <= hi, else 0
template <class T>
__global__ void mxc_clip_grad(const T *dy, const T *x, T *dx, i64 n, double lo, double hi) {
  typedef typename acc<T>::type A;
  const A l = load(from_double<T>(lo)), h = load(from_double<T>(hi));
  MXC_LOOP(i, n) {
    const A v = load(x[i]);
    dx[i] = (v >= l && v <= h) ? dy[i] : store<T>((A)0);
  }
}

// where(cond, x, y): cond has n elements (same shape) or n / inner (one per row of the first
// axis, MXNet's 1-D condition); C is the condition's dtype
template <class T, class C>
__global__ void mxc_where(const C *cond, const T *x, const T *y, T *out, i64 n, i64 inner) {
  MXC_LOOP(i, n) out[i] = to_double(cond[i / inner]) != 0.0 ? x[i] : y[i];
}

// _backward_where: dx = cond ? dy : 0, dy_ = cond ? 0 : dy (either output may be null)
template <class T, class C>
__global__ void mxc_where_grad(const C *cond, const T *dout, T *dx, T *dy, i64 n, i64 inner) {
  MXC_LOOP(i, n) {
    const bool c = to_double(cond[i / inner]) != 0.0;
    const T g = dout[i], z = store<T>((typename acc<T>::type)0);
    if (dx) dx[i] = c ? g : z;
    if (dy) dy[i] = c ? z : g;
  }
}

// add_n / ElementWiseSum over up to 8 equal-shape arrays at a time (unused pointers null);
// with accumulate != 0 the result is added to y (more than 8 inputs: groups of 8, in order)
template <class T>
__global__ void mxc_add_n(const T *x0, const T *x1, const T *x2, const T *x3, const T *x4,
                          const T *x5, const T *x6, const T *x7, T *y, i64 n, int accumulate) {
  typedef typename acc<T>::type A;
  const T *xs[8] = {x0, x1, x2, x3, x4, x5, x6, x7};
  MXC_LOOP(i, n) {
    A s = accumulate ? load(y[i]) : (A)0;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (xs[j]) s = s + load(xs[j][i]);
    y[i] = store<T>(s);
  }
}
