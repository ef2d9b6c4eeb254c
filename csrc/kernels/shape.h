/* Shape and indexing kernels: transpose, concat, split, slice, slice_assign(_scalar),
 * broadcast_to, flip, take, one_hot, scatter_rows.
 *
 * These are data movement, so most kernels are generated once per element size (1, 2, 4, 8 bytes)
 * and registered under every dtype code of that size; only scalars written into arrays
 * (slice_assign_scalar, one_hot) depend on the dtype, and they convert the scalar once, before any
 * loop. Index inputs (take, one_hot, scatter_rows) of any int/float dtype are converted once into
 * an int64 buffer (floats truncate toward zero, as MXNet's casts do).
 *
 * Most kernels reduce to one engine: a strided copy over up to 8 dims with byte steps on both
 * sides (a zero source step broadcasts), after dropping size-1 dims and merging dims that are
 * contiguous on both sides; rows are copied with memcpy when both sides are dense. 2-D planes
 * that swap the contiguous axis (transpose) go through cache-sized tiles instead.
 */
#ifndef MXC_KERNELS_SHAPE_H
#define MXC_KERNELS_SHAPE_H
#include "kernels/common.h"

#define MXC_SH_PAR_MIN 65536   /* elements; below this a kernel runs on the calling thread */
/* transpose tiles: TI elements along the source's contiguous axis, TJ along the destination's */
#ifndef MXC_SH_TI
#define MXC_SH_TI 32
#endif
#ifndef MXC_SH_TJ
#define MXC_SH_TJ 32
#endif

static inline int mxc_sh_threads(const mxc_opcall *call, int64_t work) {
  return (call->nthreads > 1 && work >= MXC_SH_PAR_MIN) ? call->nthreads : 1;
}

static inline size_t mxc_sh_esize(int dtype) {
  switch (dtype) {
    case MXC_FLOAT64: case MXC_INT64: case MXC_UINT64: return 8;
    case MXC_FLOAT32: case MXC_INT32: case MXC_UINT32: return 4;
    case MXC_FLOAT16: case MXC_INT16: case MXC_UINT16: return 2;
    default: return 1;
  }
}

/* ---- strided copy engine ------------------------------------------------------------------ */
typedef struct {
  int n;
  int64_t shape[MXC_MAX_NDIM];
  int64_t ds[MXC_MAX_NDIM];   /* destination step per dim, bytes */
  int64_t ss[MXC_MAX_NDIM];   /* source step per dim, bytes (0 broadcasts) */
} mxc_sh_walk;

/* drop size-1 dims, merge dims contiguous on both sides */
static void mxc_sh_walk_collapse(mxc_sh_walk *w) {
  int i, k = 0;
  for (i = 0; i < w->n; i++) {
    if (w->shape[i] == 1) continue;
    if (k > 0 && w->ds[k - 1] == w->ds[i] * w->shape[i] && w->ss[k - 1] == w->ss[i] * w->shape[i]) {
      w->shape[k - 1] *= w->shape[i];
      w->ds[k - 1] = w->ds[i];
      w->ss[k - 1] = w->ss[i];
    } else {
      w->shape[k] = w->shape[i];
      w->ds[k] = w->ds[i];
      w->ss[k] = w->ss[i];
      k++;
    }
  }
  if (k == 0) {               /* one element */
    w->shape[0] = 1;
    w->ds[0] = 0;
    w->ss[0] = 0;
    k = 1;
  }
  w->n = k;
}

#define MXC_SH_ROW_CASE(ES, T)                                                                \
  case ES: {                                                                                  \
    T *d_ = (T *)dst;                                                                         \
    const T *s_ = (const T *)src;                                                             \
    int64_t a_ = ds / ES, b_ = ss / ES, i_;                                                   \
    if (b_ == 0) {                                                                            \
      T v_ = *s_;                                                                             \
      if (a_ == 1)                                                                            \
        for (i_ = 0; i_ < m; i_++) d_[i_] = v_;                                               \
      else                                                                                    \
        for (i_ = 0; i_ < m; i_++) d_[i_ * a_] = v_;                                          \
    } else if (a_ == 1) {                                                                     \
      for (i_ = 0; i_ < m; i_++) d_[i_] = s_[i_ * b_];                                        \
    } else {                                                                                  \
      for (i_ = 0; i_ < m; i_++) d_[i_ * a_] = s_[i_ * b_];                                   \
    }                                                                                         \
  } break;

/* copy m elements of es bytes with byte steps ds, ss; one switch per row, not per element */
static inline void mxc_sh_copy_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t m,
                                   int es) {
  if (ds == es && ss == es) {
    memcpy(dst, src, (size_t)(m * es));
    return;
  }
  switch (es) {
    MXC_SH_ROW_CASE(1, uint8_t)
    MXC_SH_ROW_CASE(2, uint16_t)
    MXC_SH_ROW_CASE(4, uint32_t)
    MXC_SH_ROW_CASE(8, uint64_t)
    default: break;
  }
}

/* rows [r0, r1) of the walk (all dims but the last), columns [c0, c1) of the last dim */
static void mxc_sh_walk_range(const mxc_sh_walk *w, char *dst, const char *src, int es, int64_t r0,
                              int64_t r1, int64_t c0, int64_t c1) {
  int n = w->n, k;
  int64_t cnt[MXC_MAX_NDIM], rem = r0, r;
  int64_t doff = 0, soff = 0;
  int64_t dsl = w->ds[n - 1], ssl = w->ss[n - 1];
  for (k = n - 2; k >= 0; k--) {
    cnt[k] = rem % w->shape[k];
    rem /= w->shape[k];
    doff += cnt[k] * w->ds[k];
    soff += cnt[k] * w->ss[k];
  }
  for (r = r0; r < r1; r++) {
    mxc_sh_copy_row(dst + doff + c0 * dsl, dsl, src + soff + c0 * ssl, ssl, c1 - c0, es);
    for (k = n - 2; k >= 0; k--) {
      doff += w->ds[k];
      soff += w->ss[k];
      if (++cnt[k] < w->shape[k]) break;
      doff -= w->ds[k] * w->shape[k];
      soff -= w->ss[k] * w->shape[k];
      cnt[k] = 0;
    }
  }
}

static void mxc_sh_walk_run(mxc_sh_walk *w, char *dst, const char *src, int es, int nthreads) {
  int64_t rows = 1, inner, total;
  int k;
  mxc_sh_walk_collapse(w);
  for (k = 0; k < w->n - 1; k++) rows *= w->shape[k];
  inner = w->shape[w->n - 1];
  total = rows * inner;
  if (total == 0) return;
  if (nthreads <= 1 || total < MXC_SH_PAR_MIN) {
    mxc_sh_walk_range(w, dst, src, es, 0, rows, 0, inner);
  } else if (rows >= nthreads) {
MXC_PRAGMA(omp parallel num_threads(nthreads))
    {
      int t = MXC_TID(), T = MXC_NTH();
      int64_t r0 = rows * t / T, r1 = rows * (t + 1) / T;
      if (r1 > r0) mxc_sh_walk_range(w, dst, src, es, r0, r1, 0, inner);
    }
  } else {
MXC_PRAGMA(omp parallel num_threads(nthreads))
    {
      int t = MXC_TID(), T = MXC_NTH();
      int64_t c0 = inner * t / T, c1 = inner * (t + 1) / T;
      if (c1 > c0) mxc_sh_walk_range(w, dst, src, es, 0, rows, c0, c1);
    }
  }
}

/* contiguous byte strides of a tensor */
static inline void mxc_sh_strides(const mxc_tensor *t, int es, int64_t *st) {
  int64_t s = es;
  int d;
  for (d = t->ndim - 1; d >= 0; d--) {
    st[d] = s;
    s *= t->shape[d];
  }
}

static inline int mxc_sh_same_shape(const mxc_tensor *a, const mxc_tensor *b) {
  int d;
  if (a->ndim != b->ndim) return 0;
  for (d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

/* double -> dtype bytes (the scalar of slice_assign_scalar / one_hot): floats round to nearest,
 * integers truncate toward zero through int64 and wrap (C/MXNet casts), NaN -> 0, bool = v != 0 */
static inline uint16_t mxc_sh_double_to_half(double d) {
  float f = (float)d;
  if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
  if ((double)f != d && f == f && !isinf(f)) {   /* round to odd, then to nearest even */
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    b |= 1u;
    memcpy(&f, &b, sizeof f);
  }
  return mxc_float_to_half(f);
}

static inline void mxc_sh_scalar(double v, int dtype, void *out) {
  int64_t i = v != v ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
  switch (dtype) {
    case MXC_FLOAT32: { float f = (float)v; memcpy(out, &f, 4); } break;
    case MXC_FLOAT64: memcpy(out, &v, 8); break;
    case MXC_FLOAT16: { uint16_t h = mxc_sh_double_to_half(v); memcpy(out, &h, 2); } break;
    case MXC_UINT8: *(uint8_t *)out = (uint8_t)i; break;
    case MXC_INT8: *(int8_t *)out = (int8_t)i; break;
    case MXC_INT32: { int32_t x = (int32_t)i; memcpy(out, &x, 4); } break;
    case MXC_INT64: memcpy(out, &i, 8); break;
    case MXC_BOOL: *(uint8_t *)out = (uint8_t)(v != 0); break;
    case MXC_INT16: case MXC_UINT16: { uint16_t x = (uint16_t)i; memcpy(out, &x, 2); } break;
    case MXC_UINT32: { uint32_t x = (uint32_t)i; memcpy(out, &x, 4); } break;
    default: { uint64_t x = (uint64_t)i; memcpy(out, &x, 8); } break;
  }
}

/* ---- index conversion ---------------------------------------------------------------------
 * Any int/float index dtype -> int64, one loop per dtype. Floats truncate toward zero; NaN and
 * values beyond +-2^62 become MXC_SH_BAD_INDEX so that every mode treats them as out of range. */
#define MXC_SH_BAD_INDEX INT64_MIN
static inline int64_t mxc_sh_f2i(double v) {
  return (v != v || v >= 4.6e18 || v <= -4.6e18) ? MXC_SH_BAD_INDEX : (int64_t)v;
}
static int mxc_sh_load_idx(const mxc_tensor *t, int64_t *dst, char *err, const char *op) {
  int64_t i, n = t->size;
  switch (t->dtype) {
    case MXC_FLOAT32: { const float *p = (const float *)t->data; for (i = 0; i < n; i++) dst[i] = mxc_sh_f2i(p[i]); } break;
    case MXC_FLOAT64: { const double *p = (const double *)t->data; for (i = 0; i < n; i++) dst[i] = mxc_sh_f2i(p[i]); } break;
    case MXC_FLOAT16: { const uint16_t *p = (const uint16_t *)t->data; for (i = 0; i < n; i++) dst[i] = mxc_sh_f2i(mxc_half_to_float(p[i])); } break;
    case MXC_UINT8: { const uint8_t *p = (const uint8_t *)t->data; for (i = 0; i < n; i++) dst[i] = p[i]; } break;
    case MXC_INT8: { const int8_t *p = (const int8_t *)t->data; for (i = 0; i < n; i++) dst[i] = p[i]; } break;
    case MXC_INT32: { const int32_t *p = (const int32_t *)t->data; for (i = 0; i < n; i++) dst[i] = p[i]; } break;
    case MXC_INT64: memcpy(dst, t->data, (size_t)n * 8); break;
    default:
      snprintf(err, MXC_ERR_LEN, "%s: unsupported index dtype code %d", op, t->dtype);
      return -1;
  }
  return 0;
}

#define MXC_SH_IDX_STACK 256
/* int64 copy of an index tensor: stack storage for small ones */
typedef struct {
  int64_t *p;
  int64_t stack[MXC_SH_IDX_STACK];
} mxc_sh_idx;
static int mxc_sh_idx_get(mxc_sh_idx *b, const mxc_tensor *t, char *err, const char *op) {
  b->p = t->size <= MXC_SH_IDX_STACK ? b->stack : (int64_t *)malloc((size_t)t->size * 8);
  if (b->p == NULL) {
    snprintf(err, MXC_ERR_LEN, "%s: out of memory for %lld indices", op, (long long)t->size);
    return -1;
  }
  if (mxc_sh_load_idx(t, b->p, err, op) != 0) {
    if (b->p != b->stack) free(b->p);
    return -1;
  }
  return 0;
}
static void mxc_sh_idx_free(mxc_sh_idx *b) {
  if (b->p != b->stack) free(b->p);
}

/* ---- transpose ---------------------------------------------------------------------------- */
/* tiles of one 2-D plane: out[i*ors + j] = in[i + j*ics] (element units), i < P, j < Q */
#define MXC_SH_TILE_CASE(ES, T)                                                               \
  case ES: {                                                                                  \
    T *o_ = (T *)out;                                                                         \
    const T *x_ = (const T *)in;                                                              \
    int64_t i_, j_;                                                                           \
    for (i_ = i0; i_ < i1; i_++)                                                              \
      for (j_ = j0; j_ < j1; j_++) o_[i_ * ors + j_] = x_[i_ + j_ * ics];                     \
  } break;
#ifdef __SSE2__
#include <emmintrin.h>
/* 4-byte elements: 4x4 blocks transposed in registers (4 vector loads, 4 vector stores instead
 * of 16 strided scalar loads); a tile's edges fall back to the scalar loop */
static inline void mxc_sh_tile4_sse(uint32_t *o, const uint32_t *x, int64_t ors, int64_t ics,
                                    int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  int64_t i, j, ie = i0 + ((i1 - i0) & ~(int64_t)3), je = j0 + ((j1 - j0) & ~(int64_t)3);
  for (i = i0; i < ie; i += 4) {
    for (j = j0; j < je; j += 4) {
      __m128 r0 = _mm_loadu_ps((const float *)(x + i + j * ics));
      __m128 r1 = _mm_loadu_ps((const float *)(x + i + (j + 1) * ics));
      __m128 r2 = _mm_loadu_ps((const float *)(x + i + (j + 2) * ics));
      __m128 r3 = _mm_loadu_ps((const float *)(x + i + (j + 3) * ics));
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps((float *)(o + i * ors + j), r0);
      _mm_storeu_ps((float *)(o + (i + 1) * ors + j), r1);
      _mm_storeu_ps((float *)(o + (i + 2) * ors + j), r2);
      _mm_storeu_ps((float *)(o + (i + 3) * ors + j), r3);
    }
    for (; j < j1; j++) {
      o[i * ors + j] = x[i + j * ics];
      o[(i + 1) * ors + j] = x[i + 1 + j * ics];
      o[(i + 2) * ors + j] = x[i + 2 + j * ics];
      o[(i + 3) * ors + j] = x[i + 3 + j * ics];
    }
  }
  for (; i < i1; i++)
    for (j = j0; j < j1; j++) o[i * ors + j] = x[i + j * ics];
}
#endif

static inline void mxc_sh_tile_direct(char *out, const char *in, int64_t ors, int64_t ics,
                                      int64_t i0, int64_t i1, int64_t j0, int64_t j1, int es) {
#ifdef __SSE2__
  if (es == 4) {
    mxc_sh_tile4_sse((uint32_t *)out, (const uint32_t *)in, ors, ics, i0, i1, j0, j1);
    return;
  }
#endif
  switch (es) {
    MXC_SH_TILE_CASE(1, uint8_t)
    MXC_SH_TILE_CASE(2, uint16_t)
    MXC_SH_TILE_CASE(4, uint32_t)
    MXC_SH_TILE_CASE(8, uint64_t)
    default: break;
  }
}

/* One tile. The source rows of a tile are first copied whole into a small buffer: with
 * power-of-two row pitches (a 4096-wide matrix) the tile's rows all map to the same L1 sets, so
 * touching each source and destination cache line once, completely, is what keeps the transpose
 * from re-reading lines from L2 on every element. */
static inline void mxc_sh_tile(char *out, const char *in, int64_t ors, int64_t ics, int64_t i0,
                               int64_t i1, int64_t j0, int64_t j1, int es) {
  uint64_t buf[MXC_SH_TI * MXC_SH_TJ];
  int64_t j, ni = i1 - i0, nj = j1 - j0;
  char *b = (char *)buf;
  for (j = 0; j < nj; j++)
    memcpy(b + j * MXC_SH_TI * es, in + (i0 + (j0 + j) * ics) * es, (size_t)(ni * es));
  mxc_sh_tile_direct(out + (i0 * ors + j0) * es, b, ors, MXC_SH_TI, 0, ni, 0, nj, es);
}

typedef struct {
  char *ob;
  const char *ib;
  int64_t ors, ics, P, Q, ti, tj;
  int m, es;
  int64_t oshape[MXC_MAX_NDIM], ods[MXC_MAX_NDIM], oss[MXC_MAX_NDIM];
} mxc_sh_tiles_ctx;

/* tiles [it0, it1) of the plane stack: tile index = (outer position, tile row, tile column) */
static void mxc_sh_tiles(const mxc_sh_tiles_ctx *c, int64_t it0, int64_t it1) {
  int64_t it;
  for (it = it0; it < it1; it++) {
    int64_t rest = it / (c->ti * c->tj), tile = it % (c->ti * c->tj);
    int64_t bi = tile / c->tj, bj = tile % c->tj;
    int64_t doff = 0, soff = 0;
    int64_t i0 = bi * MXC_SH_TI, j0 = bj * MXC_SH_TJ;
    int64_t i1 = i0 + MXC_SH_TI < c->P ? i0 + MXC_SH_TI : c->P;
    int64_t j1 = j0 + MXC_SH_TJ < c->Q ? j0 + MXC_SH_TJ : c->Q;
    int kk;
    for (kk = c->m - 1; kk >= 0; kk--) {
      int64_t v = rest % c->oshape[kk];
      rest /= c->oshape[kk];
      doff += v * c->ods[kk];
      soff += v * c->oss[kk];
    }
    mxc_sh_tile(c->ob + doff, c->ib + soff, c->ors, c->ics, i0, i1, j0, j1, c->es);
  }
}

static int mxc_shape_transpose_impl(mxc_opcall *call, int es) {
  const mxc_tensor *x = &call->in[0];
  mxc_tensor *y = &call->out[0];
  int n = x->ndim, d, seen = 0, k, p = -1;
  int64_t xst[MXC_MAX_NDIM];
  mxc_sh_walk w;
  if (call->niattr < n || y->ndim != n) {
    snprintf(call->err, MXC_ERR_LEN, "transpose: expected %d axes", n);
    return -1;
  }
  for (d = 0; d < n; d++) {
    int64_t a = call->iattr[d];
    if (a < 0 || a >= n || (seen & (1 << a))) {
      snprintf(call->err, MXC_ERR_LEN, "transpose: axes are not a permutation of 0..%d", n - 1);
      return -1;
    }
    seen |= 1 << a;
    if (y->shape[d] != x->shape[a]) {
      snprintf(call->err, MXC_ERR_LEN, "transpose: output dim %d is %lld, expected %lld", d,
               (long long)y->shape[d], (long long)x->shape[a]);
      return -1;
    }
  }
  if (x->size == 0) return 0;
  mxc_sh_strides(x, es, xst);
  w.n = n;
  {
    int64_t s = es;
    for (d = n - 1; d >= 0; d--) {
      w.shape[d] = y->shape[d];
      w.ds[d] = s;
      s *= y->shape[d];
      w.ss[d] = xst[call->iattr[d]];
    }
  }
  mxc_sh_walk_collapse(&w);
  /* the innermost output dim reads strided, and some other dim reads contiguously: tile that
   * plane so both sides touch whole cache lines */
  if (w.n >= 2 && w.ss[w.n - 1] != es) {
    for (k = 0; k < w.n - 1; k++)
      if (w.ss[k] == es) p = k;
  }
  if (p < 0) {
    mxc_sh_walk_run(&w, (char *)y->data, (const char *)x->data, es, mxc_sh_threads(call, x->size));
    return 0;
  }
  {
    int q = w.n - 1, m = 0, nt = mxc_sh_threads(call, x->size);
    int64_t P = w.shape[p], Q = w.shape[q];
    int64_t ors = w.ds[p] / es, ics = w.ss[q] / es;
    int64_t oshape[MXC_MAX_NDIM], ods[MXC_MAX_NDIM], oss[MXC_MAX_NDIM], nouter = 1;
    int64_t ti = (P + MXC_SH_TI - 1) / MXC_SH_TI, tj = (Q + MXC_SH_TJ - 1) / MXC_SH_TJ;
    int64_t items;
    for (k = 0; k < q; k++) {
      if (k == p) continue;
      oshape[m] = w.shape[k];
      ods[m] = w.ds[k];
      oss[m] = w.ss[k];
      nouter *= w.shape[k];
      m++;
    }
    items = nouter * ti * tj;
    {
      mxc_sh_tiles_ctx c;
      c.ob = (char *)y->data;
      c.ib = (const char *)x->data;
      c.ors = ors;
      c.ics = ics;
      c.P = P;
      c.Q = Q;
      c.ti = ti;
      c.tj = tj;
      c.m = m;
      c.es = es;
      memcpy(c.oshape, oshape, sizeof oshape);
      memcpy(c.ods, ods, sizeof ods);
      memcpy(c.oss, oss, sizeof oss);
      if (nt <= 1) {
        mxc_sh_tiles(&c, 0, items);
      } else {
MXC_PRAGMA(omp parallel num_threads(nt))
        {
          int t = MXC_TID(), T = MXC_NTH();
          mxc_sh_tiles(&c, items * t / T, items * (t + 1) / T);
        }
      }
    }
  }
  return 0;
}

/* ---- concat / split ----------------------------------------------------------------------- */
/* copies between one big tensor and its pieces along `axis`; to_big: concat direction */
static int mxc_sh_concat_split(mxc_opcall *call, int es, int to_big) {
  const char *op = to_big ? "concat" : "split";
  const mxc_tensor *big = to_big ? &call->out[0] : &call->in[0];
  const mxc_tensor *parts = to_big ? call->in : call->out;
  int np = to_big ? call->nin : call->nout, i, d;
  int64_t axis = call->niattr > 0 ? call->iattr[0] : 0, outer = 1, inner = es, sum = 0;
  int64_t bigrow, off;
  if (axis < 0) axis += big->ndim;
  if (axis < 0 || axis >= big->ndim) {
    snprintf(call->err, MXC_ERR_LEN, "%s: axis %lld out of range for %d-D arrays", op,
             (long long)call->iattr[0], big->ndim);
    return -1;
  }
  for (i = 0; i < np; i++) {
    const mxc_tensor *t = &parts[i];
    if (t->ndim != big->ndim) {
      snprintf(call->err, MXC_ERR_LEN, "%s: array %d has %d dims, expected %d", op, i, t->ndim,
               big->ndim);
      return -1;
    }
    for (d = 0; d < big->ndim; d++) {
      if (d != axis && t->shape[d] != big->shape[d]) {
        snprintf(call->err, MXC_ERR_LEN, "%s: array %d has size %lld on axis %d, expected %lld",
                 op, i, (long long)t->shape[d], d, (long long)big->shape[d]);
        return -1;
      }
    }
    sum += t->shape[axis];
  }
  if (sum != big->shape[axis]) {
    snprintf(call->err, MXC_ERR_LEN, "%s: sizes along axis %lld add up to %lld, expected %lld",
             op, (long long)axis, (long long)sum, (long long)big->shape[axis]);
    return -1;
  }
  for (d = 0; d < axis; d++) outer *= big->shape[d];
  for (d = (int)axis + 1; d < big->ndim; d++) inner *= big->shape[d];
  bigrow = big->shape[axis] * inner;
  off = 0;
  for (i = 0; i < np; i++) {
    const mxc_tensor *t = &parts[i];
    int64_t rowb = t->shape[axis] * inner;
    mxc_sh_walk w;
    /* a 2-D walk: outer rows x rowb bytes (as rowb/es elements) */
    w.n = 2;
    w.shape[0] = outer;
    w.shape[1] = rowb / es;
    if (to_big) {
      w.ds[0] = bigrow; w.ds[1] = es; w.ss[0] = rowb; w.ss[1] = es;
      mxc_sh_walk_run(&w, (char *)big->data + off, (const char *)t->data, es,
                      mxc_sh_threads(call, big->size));
    } else {
      w.ds[0] = rowb; w.ds[1] = es; w.ss[0] = bigrow; w.ss[1] = es;
      mxc_sh_walk_run(&w, (char *)t->data, (const char *)big->data + off, es,
                      mxc_sh_threads(call, big->size));
    }
    off += rowb;
  }
  return 0;
}

/* ---- slice family ------------------------------------------------------------------------- */
/* validate begin/step against the data shape `full` and the slice shape `sl`; build the walk
 * over the slice with byte steps into the full array (on the side given by full_is_dst) */
static int mxc_sh_slice_walk(mxc_opcall *call, const char *op, const mxc_tensor *full,
                             const mxc_tensor *sl, int es, int full_is_dst, mxc_sh_walk *w,
                             int64_t *base) {
  int n = full->ndim, d;
  int64_t fst[MXC_MAX_NDIM], sst[MXC_MAX_NDIM];
  if (call->niattr < 2 * n || sl->ndim != n) {
    snprintf(call->err, MXC_ERR_LEN, "%s: expected begin and step for %d axes", op, n);
    return -1;
  }
  mxc_sh_strides(full, es, fst);
  mxc_sh_strides(sl, es, sst);
  *base = 0;
  w->n = n;
  for (d = 0; d < n; d++) {
    int64_t b = call->iattr[d], s = call->iattr[n + d], m = sl->shape[d];
    if (s == 0) {
      snprintf(call->err, MXC_ERR_LEN, "%s: step on axis %d is 0", op, d);
      return -1;
    }
    if (m > 0) {
      int64_t last = b + (m - 1) * s;
      if (b < 0 || b >= full->shape[d] || last < 0 || last >= full->shape[d]) {
        snprintf(call->err, MXC_ERR_LEN,
                 "%s: axis %d: begin %lld, step %lld, length %lld leave the axis of size %lld",
                 op, d, (long long)b, (long long)s, (long long)m, (long long)full->shape[d]);
        return -1;
      }
    }
    *base += b * fst[d];
    w->shape[d] = m;
    if (full_is_dst) {
      w->ds[d] = s * fst[d];
      w->ss[d] = sst[d];
    } else {
      w->ds[d] = sst[d];
      w->ss[d] = s * fst[d];
    }
  }
  return 0;
}

static int mxc_shape_slice_impl(mxc_opcall *call, int es) {
  mxc_sh_walk w;
  int64_t base;
  const mxc_tensor *x = &call->in[0];
  mxc_tensor *y = &call->out[0];
  if (mxc_sh_slice_walk(call, "slice", x, y, es, 0, &w, &base) != 0) return -1;
  if (y->size == 0) return 0;
  mxc_sh_walk_run(&w, (char *)y->data, (const char *)x->data + base, es,
                  mxc_sh_threads(call, y->size));
  return 0;
}

/* the front end passes out[0] == in[0]; if it does not, start from a copy of dst */
static void mxc_sh_inplace_base(mxc_opcall *call, int es) {
  if (call->out[0].data != call->in[0].data && call->out[0].size == call->in[0].size)
    memcpy(call->out[0].data, call->in[0].data, (size_t)(call->in[0].size * es));
}

static int mxc_shape_slice_assign_impl(mxc_opcall *call, int es) {
  mxc_sh_walk w;
  int64_t base;
  const mxc_tensor *dst = &call->in[0], *val = &call->in[1];
  if (!mxc_sh_same_shape(dst, &call->out[0])) {
    snprintf(call->err, MXC_ERR_LEN, "slice_assign: output must be the destination array");
    return -1;
  }
  if (mxc_sh_slice_walk(call, "slice_assign", dst, val, es, 1, &w, &base) != 0) return -1;
  mxc_sh_inplace_base(call, es);
  if (val->size == 0) return 0;
  mxc_sh_walk_run(&w, (char *)call->out[0].data + base, (const char *)val->data, es,
                  mxc_sh_threads(call, val->size));
  return 0;
}

static int mxc_shape_slice_assign_scalar_impl(mxc_opcall *call, int es) {
  mxc_sh_walk w;
  int64_t base, d, m = 1;
  mxc_tensor sl;
  const mxc_tensor *dst = &call->in[0];
  uint64_t v = 0;
  int n = dst->ndim;
  if (!mxc_sh_same_shape(dst, &call->out[0])) {
    snprintf(call->err, MXC_ERR_LEN, "slice_assign_scalar: output must be the destination array");
    return -1;
  }
  /* there is no value array to give the slice's shape, so iattr[2n..3n) carries its lengths */
  if (call->niattr < 3 * n) {
    snprintf(call->err, MXC_ERR_LEN,
             "slice_assign_scalar: expected begin, step and length for %d axes", n);
    return -1;
  }
  sl = *dst;
  for (d = 0; d < n; d++) sl.shape[d] = call->iattr[2 * n + d];
  for (d = 0; d < n; d++) m *= sl.shape[d];
  sl.size = m;
  if (mxc_sh_slice_walk(call, "slice_assign_scalar", dst, &sl, es, 1, &w, &base) != 0) return -1;
  mxc_sh_inplace_base(call, es);
  if (m == 0) return 0;
  mxc_sh_scalar(call->nfattr > 0 ? call->fattr[0] : 0.0, dst->dtype, &v);
  for (d = 0; d < n; d++) w.ss[d] = 0;
  mxc_sh_walk_run(&w, (char *)call->out[0].data + base, (const char *)&v, es,
                  mxc_sh_threads(call, m));
  return 0;
}

/* ---- broadcast_to / flip ------------------------------------------------------------------ */
static int mxc_shape_broadcast_to_impl(mxc_opcall *call, int es) {
  const mxc_tensor *x = &call->in[0];
  mxc_tensor *y = &call->out[0];
  int64_t xst[MXC_MAX_NDIM], yst[MXC_MAX_NDIM];
  mxc_sh_walk w;
  int d, n = y->ndim;
  if (x->ndim != n) {
    snprintf(call->err, MXC_ERR_LEN, "broadcast_to: input has %d dims, output %d", x->ndim, n);
    return -1;
  }
  for (d = 0; d < n; d++) {
    if (x->shape[d] != y->shape[d] && x->shape[d] != 1) {
      snprintf(call->err, MXC_ERR_LEN,
               "broadcast_to: axis %d of size %lld cannot broadcast to %lld", d,
               (long long)x->shape[d], (long long)y->shape[d]);
      return -1;
    }
  }
  if (y->size == 0) return 0;
  mxc_sh_strides(x, es, xst);
  mxc_sh_strides(y, es, yst);
  w.n = n;
  for (d = 0; d < n; d++) {
    w.shape[d] = y->shape[d];
    w.ds[d] = yst[d];
    w.ss[d] = x->shape[d] == 1 ? 0 : xst[d];
  }
  mxc_sh_walk_run(&w, (char *)y->data, (const char *)x->data, es, mxc_sh_threads(call, y->size));
  return 0;
}

static int mxc_shape_flip_impl(mxc_opcall *call, int es) {
  const mxc_tensor *x = &call->in[0];
  mxc_tensor *y = &call->out[0];
  int64_t xst[MXC_MAX_NDIM], base = 0;
  mxc_sh_walk w;
  int d, n = x->ndim;
  if (!mxc_sh_same_shape(x, y) || call->niattr < n) {
    snprintf(call->err, MXC_ERR_LEN, "flip: expected %d axis flags and an output of the input's shape", n);
    return -1;
  }
  if (x->size == 0) return 0;
  mxc_sh_strides(x, es, xst);
  w.n = n;
  for (d = 0; d < n; d++) {
    int f = call->iattr[d] != 0;
    w.shape[d] = x->shape[d];
    w.ds[d] = xst[d];
    w.ss[d] = f ? -xst[d] : xst[d];
    if (f) base += (x->shape[d] - 1) * xst[d];
  }
  mxc_sh_walk_run(&w, (char *)y->data, (const char *)x->data + base, es,
                  mxc_sh_threads(call, x->size));
  return 0;
}

/* ---- take / one_hot / scatter_rows -------------------------------------------------------- */
typedef struct {
  const int64_t *jp;          /* normalised indices */
  const char *xb;
  char *yb;
  int64_t rowb, M, N;
  int es;
} mxc_sh_take_ctx;

#define MXC_SH_GATHER_CASE(ES, T)                                                             \
  case ES: {                                                                                  \
    T *d_ = (T *)(c->yb) + r0;                                                                \
    const T *x_ = (const T *)c->xb;                                                           \
    for (r = r0; r < r1; r++) {                                                               \
      *d_++ = x_[o * c->N + c->jp[m]];                                                        \
      if (++m == c->M) {                                                                      \
        m = 0;                                                                                \
        o++;                                                                                  \
      }                                                                                       \
    }                                                                                         \
  } break;

/* output rows [r0, r1): row r = (outer o, index m) */
static void mxc_sh_take_rows(const mxc_sh_take_ctx *c, int64_t r0, int64_t r1) {
  int64_t o = r0 / c->M, m = r0 % c->M, r;
  if (c->rowb == c->es) {     /* one-element rows (a 1-D take): typed gather, no memcpy calls */
    switch (c->es) {
      MXC_SH_GATHER_CASE(1, uint8_t)
      MXC_SH_GATHER_CASE(2, uint16_t)
      MXC_SH_GATHER_CASE(4, uint32_t)
      MXC_SH_GATHER_CASE(8, uint64_t)
      default: break;
    }
    return;
  }
  for (r = r0; r < r1; r++) {
    memcpy(c->yb + r * c->rowb, c->xb + (o * c->N + c->jp[m]) * c->rowb, (size_t)c->rowb);
    if (++m == c->M) {
      m = 0;
      o++;
    }
  }
}

static int mxc_shape_take_impl(mxc_opcall *call, int es) {
  const mxc_tensor *x = &call->in[0], *ix = &call->in[1];
  mxc_tensor *y = &call->out[0];
  int64_t axis = call->niattr > 0 ? call->iattr[0] : 0;
  int64_t mode = call->niattr > 1 ? call->iattr[1] : 0;
  int64_t outer = 1, inner = 1, N, M = ix->size, i, rows;
  int d;
  mxc_sh_idx idx;
  if (axis < 0) axis += x->ndim;
  if (axis < 0 || axis >= x->ndim) {
    snprintf(call->err, MXC_ERR_LEN, "take: axis %lld out of range for a %d-D array",
             (long long)(call->niattr > 0 ? call->iattr[0] : 0), x->ndim);
    return -1;
  }
  if (mode < 0 || mode > 2) {
    snprintf(call->err, MXC_ERR_LEN, "take: mode %lld is not clip (0), wrap (1) or raise (2)",
             (long long)mode);
    return -1;
  }
  if (y->ndim != x->ndim - 1 + ix->ndim) {
    snprintf(call->err, MXC_ERR_LEN, "take: output has %d dims, expected %d", y->ndim,
             x->ndim - 1 + ix->ndim);
    return -1;
  }
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = (int)axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  N = x->shape[axis];
  if (y->size != outer * M * inner) {
    snprintf(call->err, MXC_ERR_LEN, "take: output size %lld, expected %lld",
             (long long)y->size, (long long)(outer * M * inner));
    return -1;
  }
  if (y->size == 0) return 0;
  if (N == 0) {
    snprintf(call->err, MXC_ERR_LEN, "take: cannot take from axis %lld of size 0", (long long)axis);
    return -1;
  }
  if (mxc_sh_idx_get(&idx, ix, call->err, "take") != 0) return -1;
  for (i = 0; i < M; i++) {
    int64_t j = idx.p[i];
    if (j >= 0 && j < N) continue;
    if (mode == 2) {
      if (j == MXC_SH_BAD_INDEX)
        snprintf(call->err, MXC_ERR_LEN, "take: index %lld (NaN or too large) is out of bounds "
                 "for axis %lld with size %lld", (long long)i, (long long)axis, (long long)N);
      else
        snprintf(call->err, MXC_ERR_LEN, "take: index %lld is out of bounds for axis %lld with "
                 "size %lld", (long long)j, (long long)axis, (long long)N);
      mxc_sh_idx_free(&idx);
      return -1;
    }
    if (j == MXC_SH_BAD_INDEX) j = 0;
    if (mode == 0) idx.p[i] = j < 0 ? 0 : N - 1;
    else idx.p[i] = ((j % N) + N) % N;
  }
  rows = outer * M;
  {
    mxc_sh_take_ctx c;
    int nt = mxc_sh_threads(call, y->size);
    c.jp = idx.p;
    c.xb = (const char *)x->data;
    c.yb = (char *)y->data;
    c.rowb = inner * es;
    c.M = M;
    c.N = N;
    c.es = es;
    if (nt <= 1) {
      mxc_sh_take_rows(&c, 0, rows);
    } else {
MXC_PRAGMA(omp parallel num_threads(nt))
      {
        int t = MXC_TID(), T = MXC_NTH();
        mxc_sh_take_rows(&c, rows * t / T, rows * (t + 1) / T);
      }
    }
  }
  mxc_sh_idx_free(&idx);
  return 0;
}

static int mxc_shape_one_hot_impl(mxc_opcall *call) {
  const mxc_tensor *ix = &call->in[0];
  mxc_tensor *y = &call->out[0];
  int64_t depth = call->niattr > 0 ? call->iattr[0] : 0, M = ix->size, i;
  int es = (int)mxc_sh_esize(y->dtype);
  uint64_t on = 0, off = 0;
  mxc_sh_idx idx;
  mxc_sh_walk w;
  if (depth < 0 || y->size != M * depth) {
    snprintf(call->err, MXC_ERR_LEN, "one_hot: output size %lld, expected %lld indices x depth %lld",
             (long long)y->size, (long long)M, (long long)depth);
    return -1;
  }
  if (y->size == 0) return 0;
  mxc_sh_scalar(call->nfattr > 0 ? call->fattr[0] : 1.0, y->dtype, &on);
  mxc_sh_scalar(call->nfattr > 1 ? call->fattr[1] : 0.0, y->dtype, &off);
  if (mxc_sh_idx_get(&idx, ix, call->err, "one_hot") != 0) return -1;
  w.n = 1;
  w.shape[0] = y->size;
  w.ds[0] = es;
  w.ss[0] = 0;
  mxc_sh_walk_run(&w, (char *)y->data, (const char *)&off, es, mxc_sh_threads(call, y->size));
  for (i = 0; i < M; i++) {
    int64_t j = idx.p[i];
    /* out-of-range (and negative) indices leave a row of off_value, as MXNet 1.9.1 */
    if (j >= 0 && j < depth) memcpy((char *)y->data + (i * depth + j) * es, &on, (size_t)es);
  }
  mxc_sh_idx_free(&idx);
  return 0;
}

static int mxc_shape_scatter_rows_impl(mxc_opcall *call, int es) {
  const mxc_tensor *dst = &call->in[0], *ix = &call->in[1], *val = &call->in[2];
  int64_t N, M = ix->size, row = es, i;
  int d;
  mxc_sh_idx idx;
  if (dst->ndim < 1 || !mxc_sh_same_shape(dst, &call->out[0])) {
    snprintf(call->err, MXC_ERR_LEN, "scatter_rows: output must be the (at least 1-D) destination");
    return -1;
  }
  N = dst->shape[0];
  for (d = 1; d < dst->ndim; d++) row *= dst->shape[d];
  if (val->size * es != M * row) {
    snprintf(call->err, MXC_ERR_LEN, "scatter_rows: value has %lld elements, expected %lld rows "
             "of %lld", (long long)val->size, (long long)M, (long long)(row / es));
    return -1;
  }
  mxc_sh_inplace_base(call, es);
  if (M == 0 || row == 0) return 0;
  if (mxc_sh_idx_get(&idx, ix, call->err, "scatter_rows") != 0) return -1;
  /* check every index before writing, so a bad one leaves dst untouched; negative indices count
   * from the end, as numpy's x[idx] = v */
  for (i = 0; i < M; i++) {
    int64_t j = idx.p[i];
    if (j < -N || j >= N || j == MXC_SH_BAD_INDEX) {
      if (j == MXC_SH_BAD_INDEX)
        snprintf(call->err, MXC_ERR_LEN, "scatter_rows: index at position %lld (NaN or too "
                 "large) is out of bounds for axis 0 with size %lld", (long long)i, (long long)N);
      else
        snprintf(call->err, MXC_ERR_LEN, "scatter_rows: index %lld is out of bounds for axis 0 "
                 "with size %lld", (long long)j, (long long)N);
      mxc_sh_idx_free(&idx);
      return -1;
    }
    if (j < 0) idx.p[i] = j + N;
  }
  {
    /* rows are written in index order (the last duplicate wins, like numpy); threads split the
     * columns of every row, never the rows, so that order holds */
    const int64_t *jp = idx.p;
    char *ob = (char *)call->out[0].data;
    const char *vb = (const char *)val->data;
    int nt = mxc_sh_threads(call, val->size), t;
    if (row / es < 1024) nt = 1;
    if (nt <= 1) {
      for (i = 0; i < M; i++) memcpy(ob + jp[i] * row, vb + i * row, (size_t)row);
    } else {
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))
      for (t = 0; t < nt; t++) {
        int64_t c0 = (row / es) * t / nt * es, c1 = (row / es) * (t + 1) / nt * es, r;
        for (r = 0; r < M; r++) memcpy(ob + jp[r] * row + c0, vb + r * row + c0, (size_t)(c1 - c0));
      }
    }
  }
  mxc_sh_idx_free(&idx);
  return 0;
}

/* ---- one function per element size, and the registry table -------------------------------- */
#define MXC_SH_GEN(ES)                                                                        \
  static int mxc_shape_transpose_##ES(mxc_opcall *c) { return mxc_shape_transpose_impl(c, ES); } \
  static int mxc_shape_concat_##ES(mxc_opcall *c) { return mxc_sh_concat_split(c, ES, 1); }   \
  static int mxc_shape_split_##ES(mxc_opcall *c) { return mxc_sh_concat_split(c, ES, 0); }    \
  static int mxc_shape_slice_##ES(mxc_opcall *c) { return mxc_shape_slice_impl(c, ES); }      \
  static int mxc_shape_slice_assign_##ES(mxc_opcall *c) {                                     \
    return mxc_shape_slice_assign_impl(c, ES);                                                \
  }                                                                                           \
  static int mxc_shape_slice_assign_scalar_##ES(mxc_opcall *c) {                              \
    return mxc_shape_slice_assign_scalar_impl(c, ES);                                         \
  }                                                                                           \
  static int mxc_shape_broadcast_to_##ES(mxc_opcall *c) {                                     \
    return mxc_shape_broadcast_to_impl(c, ES);                                                \
  }                                                                                           \
  static int mxc_shape_flip_##ES(mxc_opcall *c) { return mxc_shape_flip_impl(c, ES); }        \
  static int mxc_shape_take_##ES(mxc_opcall *c) { return mxc_shape_take_impl(c, ES); }        \
  static int mxc_shape_scatter_rows_##ES(mxc_opcall *c) {                                     \
    return mxc_shape_scatter_rows_impl(c, ES);                                                \
  }
MXC_SH_GEN(1)
MXC_SH_GEN(2)
MXC_SH_GEN(4)
MXC_SH_GEN(8)

/* one element-size-keyed kernel per name; the .pyx registers it under every dtype code of that
 * size (and, for keys with an index dtype, every index dtype) */
typedef struct {
  const char *name;
  int32_t es;
  mxc_kernel fn;
} mxc_shape_entry;

#define MXC_SH_ENTRY(NAME)                                                                    \
  {#NAME, 1, mxc_shape_##NAME##_1}, {#NAME, 2, mxc_shape_##NAME##_2},                         \
  {#NAME, 4, mxc_shape_##NAME##_4}, {#NAME, 8, mxc_shape_##NAME##_8}
static const mxc_shape_entry mxc_shape_table[] = {
    MXC_SH_ENTRY(transpose),    MXC_SH_ENTRY(concat),       MXC_SH_ENTRY(split),
    MXC_SH_ENTRY(slice),        MXC_SH_ENTRY(slice_assign), MXC_SH_ENTRY(slice_assign_scalar),
    MXC_SH_ENTRY(broadcast_to), MXC_SH_ENTRY(flip),         MXC_SH_ENTRY(take),
    MXC_SH_ENTRY(scatter_rows), {"one_hot", 0, mxc_shape_one_hot_impl},
};
static const int mxc_shape_table_len = (int)(sizeof mxc_shape_table / sizeof mxc_shape_table[0]);

#endif
