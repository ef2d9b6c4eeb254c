// Pooling (max / avg / sum / lp; 1-D, 2-D, 3-D; channels first or last) and nearest-neighbour
// UpSampling, forward and backward, with the CPU kernels' arithmetic (csrc/kernels/pooling.h,
// MXNet 1.9.1's pool.h): the same windows, divisors, accumulation types and order, so the
// results are the CPU's bit for bit.
//
// - forward: one thread per output element;
// - max backward: the argmax of each window is found once per output element (the first
//   element, in d, h, w order, that equals the output), kept in a workspace, then every input
//   element gathers the gradients of the windows whose argmax it is;
// - avg / sum / lp backward: every input element gathers over the windows that contain it, in
//   increasing output order (the CPU's order of accumulation), so no atomics and one writer per
//   element (deterministic).
// Accumulation in float for __half, __nv_bfloat16 and float, double for double.
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
enum { kPoolMax = 0, kPoolAvg = 1, kPoolSum = 2, kPoolLp = 3 };

// geometry, as int64s (ops/cuda/pooling.py geometry()): batch, channels, input and output
// spatial sizes, kernel, stride, pad (each padded to 3-D: 1, 1, 1, 0), type, p, count_include_pad,
// channels last
struct pool_geom {
  i64 n, c, is[3], os[3], k[3], s[3], p[3], type, pv, incl, last;
};

template <class T> MXC_DEV typename acc<T>::type pool_lowest();
template <> MXC_DEV float pool_lowest<float>() { return -3.402823466e+38f; }
template <> MXC_DEV float pool_lowest<__half>() { return -65504.0f; }
template <> MXC_DEV float pool_lowest<__nv_bfloat16>() { return -3.38953139e+38f; }
template <> MXC_DEV double pool_lowest<double>() { return -1.7976931348623157e+308; }

MXC_DEV double pool_powp(double v, i64 p) { return p == 1 ? v : p == 2 ? v * v : v * v * v; }

// window of output (o0, o1, o2): clipped bounds lo/hi, and its divisor (avg only)
struct pool_win { i64 lo[3], hi[3], size; };
MXC_DEV pool_win pool_window(const pool_geom &g, i64 o0, i64 o1, i64 o2) {
  pool_win w;
  const i64 o[3] = {o0, o1, o2};
  i64 padded = 1, real = 1;
  for (int j = 0; j < 3; ++j) {
    i64 st = o[j] * g.s[j] - g.p[j];
    i64 en = st + g.k[j];
    if (en > g.is[j] + g.p[j]) en = g.is[j] + g.p[j];
    padded *= en - st;
    if (st < 0) st = 0;
    if (en > g.is[j]) en = g.is[j];
    w.lo[j] = st;
    w.hi[j] = en;
    real *= en > st ? en - st : 0;
  }
  w.size = g.type == kPoolAvg ? (g.incl ? padded : real) : 1;
  return w;
}

// element i of the (n, c, spatial) index space of a tensor with `sz` spatial elements:
// (plane n * c + c, spatial index) and its memory offset in either layout
MXC_DEV i64 pool_offset(const pool_geom &g, i64 plane, i64 sp, i64 sz) {
  const i64 nn = plane / g.c, cc = plane % g.c;
  return g.last ? (nn * sz + sp) * g.c + cc : plane * sz + sp;
}
MXC_DEV void pool_split(const pool_geom &g, i64 i, i64 sz, i64 *plane, i64 *sp) {
  if (g.last) {          // memory order (n, spatial, c)
    const i64 cc = i % g.c, r = i / g.c;
    *sp = r % sz;
    *plane = (r / sz) * g.c + cc;
  } else {
    *sp = i % sz;
    *plane = i / sz;
  }
}
}  // namespace mxc

// y[i] for every output element i (in memory order)
template <class T>
__global__ void mxc_pool_fwd(const T *x, T *y, pool_geom g) {
  typedef typename acc<T>::type A;
  const i64 isz = g.is[0] * g.is[1] * g.is[2], osz = g.os[0] * g.os[1] * g.os[2];
  const i64 es = g.last ? g.c : 1;
  MXC_LOOP(i, g.n * g.c * osz) {
    i64 plane, oi;
    pool_split(g, i, osz, &plane, &oi);
    const T *xb = x + pool_offset(g, plane, 0, isz);
    const pool_win w = pool_window(g, oi / (g.os[1] * g.os[2]), (oi / g.os[2]) % g.os[1],
                                   oi % g.os[2]);
    A r;
    if (g.type == kPoolMax) {
      A m = pool_lowest<T>();
      for (i64 d = w.lo[0]; d < w.hi[0]; ++d)
        for (i64 h = w.lo[1]; h < w.hi[1]; ++h)
          for (i64 q = w.lo[2]; q < w.hi[2]; ++q) {
            const A v = load(xb[((d * g.is[1] + h) * g.is[2] + q) * es]);
            if (v > m) m = v;
          }
      r = m;
    } else {
      const A div = (A)w.size;
      const i64 p = g.type == kPoolLp ? g.pv : 1;
      A sum = 0;
      for (i64 d = w.lo[0]; d < w.hi[0]; ++d)
        for (i64 h = w.lo[1]; h < w.hi[1]; ++h)
          for (i64 q = w.lo[2]; q < w.hi[2]; ++q) {
            const A v = load(xb[((d * g.is[1] + h) * g.is[2] + q) * es]);
            sum += (p == 1 ? v : (A)pool_powp((double)v, p)) / div;
          }
      if (p == 2) sum = (A)sqrt((double)sum);
      else if (p == 3) sum = (A)cbrt((double)sum);
      r = sum;
    }
    y[i] = store<T>(r);
  }
}

// arg[i]: the spatial index of the first element of output i's window that equals y[i], or -1
// (an empty window, or a NaN output)
template <class T>
__global__ void mxc_pool_argmax(const T *x, const T *y, i64 *arg, pool_geom g) {
  typedef typename acc<T>::type A;
  const i64 isz = g.is[0] * g.is[1] * g.is[2], osz = g.os[0] * g.os[1] * g.os[2];
  const i64 es = g.last ? g.c : 1;
  MXC_LOOP(i, g.n * g.c * osz) {
    i64 plane, oi;
    pool_split(g, i, osz, &plane, &oi);
    const T *xb = x + pool_offset(g, plane, 0, isz);
    const pool_win w = pool_window(g, oi / (g.os[1] * g.os[2]), (oi / g.os[2]) % g.os[1],
                                   oi % g.os[2]);
    const A yv = load(y[i]);
    i64 e = -1;
    for (i64 d = w.lo[0]; d < w.hi[0] && e < 0; ++d)
      for (i64 h = w.lo[1]; h < w.hi[1] && e < 0; ++h)
        for (i64 q = w.lo[2]; q < w.hi[2]; ++q) {
          const i64 at = (d * g.is[1] + h) * g.is[2] + q;
          if (load(xb[at * es]) == yv) {
            e = at;
            break;
          }
        }
    arg[i] = e;
  }
}

// first output index o (in one dim) whose window [o*s - p, o*s - p + k) holds i, and the last
MXC_DEV void pool_range(const pool_geom &g, int j, i64 i, i64 *lo, i64 *hi) {
  const i64 a = i + g.p[j] - g.k[j] + 1;
  *lo = a <= 0 ? 0 : (a + g.s[j] - 1) / g.s[j];
  const i64 b = (i + g.p[j]) / g.s[j];
  *hi = b < g.os[j] - 1 ? b : g.os[j] - 1;
}

// dx[i] for every input element i: the sum, in increasing output order, of what each window
// holding it sends it (arg: the argmax workspace of max pooling, unused otherwise)
template <class T>
__global__ void mxc_pool_bwd(const T *dy, const T *x, const T *y, const i64 *arg, T *dx,
                             pool_geom g) {
  typedef typename acc<T>::type A;
  const i64 isz = g.is[0] * g.is[1] * g.is[2], osz = g.os[0] * g.os[1] * g.os[2];
  MXC_LOOP(i, g.n * g.c * isz) {
    i64 plane, e;
    pool_split(g, i, isz, &plane, &e);
    const i64 ii[3] = {e / (g.is[1] * g.is[2]), (e / g.is[2]) % g.is[1], e % g.is[2]};
    i64 lo[3], hi[3];
    for (int j = 0; j < 3; ++j) pool_range(g, j, ii[j], &lo[j], &hi[j]);
    const i64 yb = pool_offset(g, plane, 0, osz), es = g.last ? g.c : 1;
    const i64 p = g.type == kPoolLp ? g.pv : 1;
    const A xv = load(x[i]);
    A s = 0;
    for (i64 o0 = lo[0]; o0 <= hi[0]; ++o0)
      for (i64 o1 = lo[1]; o1 <= hi[1]; ++o1)
        for (i64 o2 = lo[2]; o2 <= hi[2]; ++o2) {
          const i64 yo = yb + ((o0 * g.os[1] + o1) * g.os[2] + o2) * es;
          const A gv = load(dy[yo]);
          if (g.type == kPoolMax) {
            if (arg[yo] == e) s += gv;
            continue;
          }
          const pool_win w = pool_window(g, o0, o1, o2);
          A gr = gv;
          if (p == 2) {
            const A yv = load(y[yo]);
            gr = yv == 0 ? (A)0 : gv * (xv / yv);
          } else if (p == 3) {
            const A yv = load(y[yo]);
            const A r = xv / yv;
            gr = yv == 0 ? (A)0 : gv * r * r;
          }
          s += gr / (A)w.size;
        }
    dx[i] = store<T>(s);
  }
}

// nearest upsampling of x (n, cx, h, w) by sc into channels [c0, c0 + cx) of y (n, cy, h*sc,
// w*sc); add: y += (the later inputs of sample_type='nearest' with multi_input_mode='sum')
template <class T>
__global__ void mxc_upnear_fwd(const T *x, T *y, i64 n, i64 cx, i64 h, i64 w, i64 cy, i64 c0,
                               i64 sc, int add) {
  typedef typename acc<T>::type A;
  const i64 oh = h * sc, ow = w * sc;
  MXC_LOOP(i, n * cx * oh * ow) {
    const i64 q = i % ow, r = i / ow, yy = r % oh, cc = (r / oh) % cx, nn = r / (oh * cx);
    const T v = x[((nn * cx + cc) * h + yy / sc) * w + q / sc];
    T *dst = y + ((nn * cy + c0 + cc) * oh + yy) * ow + q;
    *dst = add ? store<T>(load(*dst) + load(v)) : v;
  }
}

// dx (n, cx, h, w) = the sum of each sc x sc block of channels [c0, c0 + cx) of dy
template <class T>
__global__ void mxc_upnear_bwd(const T *dy, T *dx, i64 n, i64 cx, i64 h, i64 w, i64 cy, i64 c0,
                               i64 sc) {
  typedef typename acc<T>::type A;
  const i64 oh = h * sc, ow = w * sc;
  MXC_LOOP(i, n * cx * h * w) {
    const i64 q = i % w, r = i / w, yy = r % h, cc = (r / h) % cx, nn = r / (h * cx);
    const T *src = dy + ((nn * cy + c0 + cc) * oh + yy * sc) * ow + q * sc;
    A s = 0;
    for (i64 a = 0; a < sc; ++a)
      for (i64 b = 0; b < sc; ++b) s += load(src[a * ow + b]);
    dx[i] = store<T>(s);
  }
}
