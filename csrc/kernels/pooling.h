/* Pooling (max / avg / sum / lp, 1-D/2-D/3-D, channels first or last) and nearest-neighbour
 * UpSampling, forward and backward, following MXNet 1.9.1's CPU loops (src/operator/nn/pool.h):
 *
 * - windows start at o*stride - pad; max pooling looks only at real elements (an empty window
 *   gives the lowest finite value), avg divides each element by the window size counted up to
 *   the padded border (or by the real elements when count_include_pad is false), sum and lp do
 *   not divide; lp is (sum x^p)^(1/p) for p in 1, 2, 3 (x^p without abs, as MXNet);
 * - the max backward routes each output gradient to the first element (in d, h, w order) of its
 *   window that equals the output; avg/sum/lp spread it as MXNet's unpool_sum. Where a gradient
 *   will be asked for, the max forward also writes that element's index per output (its argmax)
 *   and the backward (pool:backward_index) is a scatter from it, without a pass over x and y.
 *
 * Accumulation in float for float16 and float32 (as MXNet's AccType), double for float64.
 * Threads own (n, c) planes, so every output element has one writer.
 *
 * iattr of pool:forward / pool:backward: kernel[3], stride[3], pad[3] (padded to 3-D with 1, 1, 0),
 * pool type (0 max, 1 avg, 2 sum, 3 lp), p_value, count_include_pad, channels_last.
 */
#ifndef MXC_KERNELS_POOLING_H
#define MXC_KERNELS_POOLING_H
#include <float.h>
#include "kernels/common.h"

enum { MXC_POOL_MAX = 0, MXC_POOL_AVG = 1, MXC_POOL_SUM = 2, MXC_POOL_LP = 3 };
#define MXC_POOL_NIATTR 13

typedef struct {
  int64_t n, c, is[3], os[3], k[3], s[3], p[3];
  int64_t isz, osz;
  int type, pv, incl, last;
  int flat;                  /* channels first, no depth, max or avg: the 2-D loops below */
  int tiled;                 /* flat, and rows and columns of windows that neither overlap nor
                              * pass the input's end (kernel == stride, no padding) */
} mxc_pool_geom;

/* where (n, c) plane pl starts in the input (*xo) and the output (*yo), in elements; its
 * elements then lie es = (last ? c : 1) apart */
static inline void mxc_pool_plane(const mxc_pool_geom *g, int64_t pl, int64_t *xo, int64_t *yo) {
  const int64_t nn = pl / g->c, cc = pl % g->c;
  *xo = g->last ? nn * g->isz * g->c + cc : pl * g->isz;
  *yo = g->last ? nn * g->osz * g->c + cc : pl * g->osz;
}

static int mxc_pool_geom_make(mxc_pool_geom *g, const mxc_tensor *x, const mxc_tensor *y,
                              mxc_opcall *call) {
  int nsp = x->ndim - 2, j, first = call->iattr[12] ? 1 : 2;
  if (call->niattr < MXC_POOL_NIATTR || nsp < 1 || nsp > 3 || y->ndim != x->ndim) {
    snprintf(call->err, MXC_ERR_LEN, "Pooling: bad kernel call (%d attrs, ndim %d)",
             call->niattr, x->ndim);
    return -1;
  }
  g->last = call->iattr[12] != 0;
  g->n = x->shape[0];
  g->c = g->last ? x->shape[x->ndim - 1] : x->shape[1];
  for (j = 0; j < 3; j++) {
    int a = j - (3 - nsp);
    g->is[j] = a < 0 ? 1 : x->shape[first + a];
    g->os[j] = a < 0 ? 1 : y->shape[first + a];
    g->k[j] = call->iattr[j];
    g->s[j] = call->iattr[3 + j];
    g->p[j] = call->iattr[6 + j];
  }
  g->type = (int)call->iattr[9];
  g->pv = (int)call->iattr[10];
  g->incl = call->iattr[11] != 0;
  g->isz = g->is[0] * g->is[1] * g->is[2];
  g->osz = g->os[0] * g->os[1] * g->os[2];
  g->flat = !g->last && g->is[0] == 1 && g->os[0] == 1 && g->k[0] == 1 && g->p[0] == 0 &&
            (g->type == MXC_POOL_MAX || g->type == MXC_POOL_AVG);
  /* the 'full' convention's last window may pass the end even without padding */
  g->tiled = g->flat && g->k[1] == g->s[1] && g->k[2] == g->s[2] && g->p[1] == 0 &&
             g->p[2] == 0 && g->os[1] * g->k[1] <= g->is[1] && g->os[2] * g->k[2] <= g->is[2];
  if (g->type == MXC_POOL_LP && (g->pv < 1 || g->pv > 3)) {
    snprintf(call->err, MXC_ERR_LEN, "Pooling: p value of %d is not supported", g->pv);
    return -1;
  }
  return 0;
}

/* the window of output position (od, oh, ow): clipped bounds lo/hi and the divisor */
typedef struct {
  int64_t lo[3], hi[3];
  int64_t size;
} mxc_pool_win;

static inline void mxc_pool_window(const mxc_pool_geom *g, int64_t od, int64_t oh, int64_t ow,
                                   mxc_pool_win *w) {
  int64_t o[3], j, padded = 1, real = 1;
  o[0] = od; o[1] = oh; o[2] = ow;
  for (j = 0; j < 3; j++) {
    int64_t st = o[j] * g->s[j] - g->p[j];
    int64_t en = st + g->k[j];
    if (en > g->is[j] + g->p[j]) en = g->is[j] + g->p[j];
    padded *= en - st;
    if (st < 0) st = 0;
    if (en > g->is[j]) en = g->is[j];
    w->lo[j] = st;
    w->hi[j] = en;
    real *= en > st ? en - st : 0;
  }
  if (g->type == MXC_POOL_AVG) w->size = g->incl ? padded : real;
  else w->size = 1;
}

static inline double mxc_pool_powp(double v, int p) {
  return p == 1 ? v : p == 2 ? v * v : v * v * v;
}


/* ---- 2x2 stride 2 max pooling, float32, one pair of input rows eight windows at a time --------
 * Where the CPU has AVX2 (else the scalar loops do everything). Each helper returns how many of
 * the row's `ow` windows it did; the scalar loops do the rest. The rules are the scalar loops'
 * and MXNet's (src/operator/nn/pool.h): the maximum starts at the lowest finite value and a
 * strictly greater element moves it on (_mm256_max_ps(v, m) is exactly v > m ? v : m, so NaN
 * never wins, a window of -inf and NaN gives the lowest value, -0.0 / 0.0 ties keep the
 * first); the argmax is the plane index of the element that last moved it, or where none did,
 * of the first element equal to the lowest value (-1 if none: the comparing backward's rule).
 * Within each 128-bit half the shuffles pair windows 0,1,4,5 (low half) and
 * 2,3,6,7 (high half); the lane offsets follow that order, and a 64-bit permute puts results
 * back in window order before they are stored. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MXC_POOL_AVX2 __attribute__((target("avx2")))
MXC_POOL_AVX2 static inline void mxc_pool_pairs8_f32(const float *r, __m256 *a, __m256 *b) {
  const __m256 lo = _mm256_loadu_ps(r), hi = _mm256_loadu_ps(r + 8);
  *a = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  *b = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
}

MXC_POOL_AVX2 static int64_t mxc_pool_2x2_fwdi_avx2(const float *r0, const float *r1, float *yr,
                                                    int32_t *ir, int64_t ow, int32_t at,
                                                    int32_t w32) {
  const __m256i lane = _mm256_setr_epi32(0, 2, 8, 10, 4, 6, 12, 14);
  const __m256 one = _mm256_castsi256_ps(_mm256_set1_epi32(1));
  const __m256 down = _mm256_castsi256_ps(_mm256_set1_epi32(w32));
  const __m256 diag = _mm256_castsi256_ps(_mm256_set1_epi32(w32 + 1));
  const __m256 none = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), zero = _mm256_setzero_ps();
  const __m256 low = _mm256_set1_ps(-FLT_MAX);
  int64_t j;
  for (j = 0; j + 8 <= ow; j += 8) {
    __m256 a, b, c, d, m, gt, e, eq, unset;
    __m256i idx;
    mxc_pool_pairs8_f32(r0 + 2 * j, &a, &b);
    mxc_pool_pairs8_f32(r1 + 2 * j, &c, &d);
    gt = _mm256_cmp_ps(a, low, _CMP_GT_OQ);       /* e: the offset in the window, or -1 */
    m = _mm256_max_ps(a, low);
    e = _mm256_blendv_ps(none, zero, gt);
    gt = _mm256_cmp_ps(b, m, _CMP_GT_OQ);
    m = _mm256_max_ps(b, m);
    e = _mm256_blendv_ps(e, one, gt);
    gt = _mm256_cmp_ps(c, m, _CMP_GT_OQ);
    m = _mm256_max_ps(c, m);
    e = _mm256_blendv_ps(e, down, gt);
    gt = _mm256_cmp_ps(d, m, _CMP_GT_OQ);
    m = _mm256_max_ps(d, m);
    e = _mm256_blendv_ps(e, diag, gt);
    /* nothing above the lowest value: the first element equal to it */
    eq = _mm256_blendv_ps(none, diag, _mm256_cmp_ps(d, low, _CMP_EQ_OQ));
    eq = _mm256_blendv_ps(eq, down, _mm256_cmp_ps(c, low, _CMP_EQ_OQ));
    eq = _mm256_blendv_ps(eq, one, _mm256_cmp_ps(b, low, _CMP_EQ_OQ));
    eq = _mm256_blendv_ps(eq, zero, _mm256_cmp_ps(a, low, _CMP_EQ_OQ));
    e = _mm256_blendv_ps(e, eq, _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_castps_si256(e), _mm256_set1_epi32(-1))));
    unset = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_castps_si256(e), _mm256_set1_epi32(-1)));
    idx = _mm256_add_epi32(_mm256_castps_si256(e),
                           _mm256_add_epi32(_mm256_set1_epi32(at + (int32_t)(2 * j)), lane));
    e = _mm256_blendv_ps(_mm256_castsi256_ps(idx), none, unset);
    _mm256_storeu_ps(yr + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xD8)));
    _mm256_storeu_ps((float *)(void *)(ir + j),
                     _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
  }
  return j;
}

MXC_POOL_AVX2 static int64_t mxc_pool_2x2_fwd_avx2(const float *r0, const float *r1, float *yr,
                                                   int64_t ow) {
  const __m256 low = _mm256_set1_ps(-FLT_MAX);
  int64_t j;
  for (j = 0; j + 8 <= ow; j += 8) {
    __m256 a, b, c, d, m;
    mxc_pool_pairs8_f32(r0 + 2 * j, &a, &b);
    mxc_pool_pairs8_f32(r1 + 2 * j, &c, &d);
    m = _mm256_max_ps(d, _mm256_max_ps(c, _mm256_max_ps(b, _mm256_max_ps(a, low))));
    _mm256_storeu_ps(yr + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xD8)));
  }
  return j;
}

MXC_POOL_AVX2 static int64_t mxc_pool_2x2_ibwd_avx2(const float *gr, const int32_t *ir, float *d0,
                                                    float *d1, int64_t ow, int32_t at,
                                                    int32_t w32) {
  const __m256i lane = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14), one = _mm256_set1_epi32(1);
  const __m256i down = _mm256_set1_epi32(w32), diag = _mm256_set1_epi32(w32 + 1);
  int64_t j;
  for (j = 0; j + 8 <= ow; j += 8) {
    const __m256 g = _mm256_loadu_ps(gr + j);
    const __m256i rel = _mm256_sub_epi32(
        _mm256_loadu_si256((const __m256i *)(const void *)(ir + j)),
        _mm256_add_epi32(_mm256_set1_epi32(at + (int32_t)(2 * j)), lane));
    const __m256 a = _mm256_and_ps(_mm256_castsi256_ps(
        _mm256_cmpeq_epi32(rel, _mm256_setzero_si256())), g);
    const __m256 b = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(rel, one)), g);
    const __m256 c = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(rel, down)), g);
    const __m256 d = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(rel, diag)), g);
    const __m256 ablo = _mm256_unpacklo_ps(a, b), abhi = _mm256_unpackhi_ps(a, b);
    const __m256 cdlo = _mm256_unpacklo_ps(c, d), cdhi = _mm256_unpackhi_ps(c, d);
    _mm256_storeu_ps(d0 + 2 * j, _mm256_permute2f128_ps(ablo, abhi, 0x20));
    _mm256_storeu_ps(d0 + 2 * j + 8, _mm256_permute2f128_ps(ablo, abhi, 0x31));
    _mm256_storeu_ps(d1 + 2 * j, _mm256_permute2f128_ps(cdlo, cdhi, 0x20));
    _mm256_storeu_ps(d1 + 2 * j + 8, _mm256_permute2f128_ps(cdlo, cdhi, 0x31));
  }
  return j;
}
#undef MXC_POOL_AVX2
#define MXC_POOL_HAVE_AVX2() __builtin_cpu_supports("avx2")
#else
#define MXC_POOL_HAVE_AVX2() 0
#define mxc_pool_2x2_fwdi_avx2(r0, r1, yr, ir, ow, at, w32) ((int64_t)0)
#define mxc_pool_2x2_fwd_avx2(r0, r1, yr, ow) ((int64_t)0)
#define mxc_pool_2x2_ibwd_avx2(gr, ir, d0, d1, ow, at, w32) ((int64_t)0)
#endif

static inline int64_t mxc_pool_2x2_fwdi_row_f32(const float *r0, const float *r1, float *yr,
                                                int32_t *ir, int64_t ow, int32_t at,
                                                int32_t w32) {
  return MXC_POOL_HAVE_AVX2() ? mxc_pool_2x2_fwdi_avx2(r0, r1, yr, ir, ow, at, w32) : 0;
}
static inline int64_t mxc_pool_2x2_fwd_row_f32(const float *r0, const float *r1, float *yr,
                                               int64_t ow) {
  return MXC_POOL_HAVE_AVX2() ? mxc_pool_2x2_fwd_avx2(r0, r1, yr, ow) : 0;
}
static inline int64_t mxc_pool_2x2_ibwd_row_f32(const float *gr, const int32_t *ir, float *d0,
                                                float *d1, int64_t ow, int32_t at,
                                                int32_t w32) {
  return MXC_POOL_HAVE_AVX2() ? mxc_pool_2x2_ibwd_avx2(gr, ir, d0, d1, ow, at, w32) : 0;
}
/* float64: the scalar loops only */
static inline int64_t mxc_pool_2x2_fwdi_row_f64(const double *r0, const double *r1, double *yr,
                                                int32_t *ir, int64_t ow, int32_t at,
                                                int32_t w32) {
  (void)r0; (void)r1; (void)yr; (void)ir; (void)ow; (void)at; (void)w32;
  return 0;
}
static inline int64_t mxc_pool_2x2_fwd_row_f64(const double *r0, const double *r1, double *yr,
                                               int64_t ow) {
  (void)r0; (void)r1; (void)yr; (void)ow;
  return 0;
}
static inline int64_t mxc_pool_2x2_ibwd_row_f64(const double *gr, const int32_t *ir, double *d0,
                                                double *d1, int64_t ow, int32_t at,
                                                int32_t w32) {
  (void)gr; (void)ir; (void)d0; (void)d1; (void)ow; (void)at; (void)w32;
  return 0;
}


/* gcc's loop unswitching (on the 3x3 test) makes mxc_pool_flat_fwdi's loops 10% slower (ResNet
 * stem 3x3 stride 2 pad 1, 8x64x112x112 float32, one thread: 5.15 against 4.70 ms) */
#if defined(__GNUC__) && !defined(__clang__)
#define MXC_POOL_NO_UNSWITCH __attribute__((optimize("no-unswitch-loops")))
#else
#define MXC_POOL_NO_UNSWITCH
#endif

/* ---- channels-first 2-D (and 1-D) max and avg pooling ------------------------------------------
 * The same windows, order of comparisons and divisors as the general loops below, without their
 * per-output 3-D window set-up: one plane per (n, c), window bounds clipped per row and column.
 * Non-overlapping max windows (kernel == stride, no padding) write every input position of their
 * window in the backward pass (the gradient at the first maximum, zeros elsewhere) so that dx
 * needs no zeroing pass. */
#define MXC_POOL_FLAT_DEFINE(T, A, SUF, LD, ST, LOWEST)                                            \
static void mxc_pool_flat_fwd_##SUF(const T *x, T *y, const mxc_pool_geom *g, int nt) {            \
  const int64_t planes = g->n * g->c, ih = g->is[1], iw = g->is[2], oh = g->os[1], ow = g->os[2];   \
  const int k33 = g->k[1] == 3 && g->k[2] == 3;                                                    \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->isz > 32768))         \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const T *xb = x + pl * g->isz;                                                                  \
    T *yb = y + pl * g->osz;                                                                        \
    int64_t i, j, h, q;                                                                             \
    if (g->type == MXC_POOL_MAX && g->tiled && g->k[1] == 2 && g->k[2] == 2) {                      \
      for (i = 0; i < oh; i++) {                                                                    \
        const T *r0 = xb + 2 * i * iw, *r1 = r0 + iw;                                               \
        T *yr = yb + i * ow;                                                                        \
        for (j = mxc_pool_2x2_fwd_row_##SUF(r0, r1, yr, ow); j < ow; j++) {                         \
          A m = LOWEST, v = LD(r0[2 * j]);                                                          \
          m = v > m ? v : m;                                                                        \
          v = LD(r0[2 * j + 1]);                                                                    \
          m = v > m ? v : m;                                                                        \
          v = LD(r1[2 * j]);                                                                        \
          m = v > m ? v : m;                                                                        \
          v = LD(r1[2 * j + 1]);                                                                    \
          m = v > m ? v : m;                                                                        \
          yr[j] = ST(m);                                                                            \
        }                                                                                           \
      }                                                                                             \
      continue;                                                                                     \
    }                                                                                               \
    for (i = 0; i < oh; i++) {                                                                      \
      int64_t h0 = i * g->s[1] - g->p[1], h1 = h0 + g->k[1], hp = h1;                               \
      if (hp > ih + g->p[1]) hp = ih + g->p[1];                                                     \
      if (h1 > ih) h1 = ih;                                                                         \
      for (j = 0; j < ow; j++) {                                                                    \
        int64_t w0 = j * g->s[2] - g->p[2], w1 = w0 + g->k[2], wp = w1, hs = h0 > 0 ? h0 : 0;       \
        int64_t ws;                                                                                 \
        if (wp > iw + g->p[2]) wp = iw + g->p[2];                                                   \
        if (w1 > iw) w1 = iw;                                                                       \
        ws = w0 > 0 ? w0 : 0;                                                                       \
        if (g->type == MXC_POOL_MAX) {                                                              \
          A m = LOWEST;                                                                             \
          if (k33 && h0 >= 0 && h1 == h0 + 3 && w0 >= 0 && w1 == w0 + 3) {                         \
            /* a whole 3x3 window (the ResNet stem's): fixed trip counts unroll into max         \
             * instructions, where the clipped loop mispredicts on random data */                 \
            const T *xw = xb + h0 * iw + w0;                                                        \
            for (h = 0; h < 3; h++)                                                                 \
              for (q = 0; q < 3; q++) {                                                             \
                const A v = LD(xw[h * iw + q]);                                                     \
                m = v > m ? v : m;                                                                  \
              }                                                                                     \
          } else                                                                                    \
          for (h = hs; h < h1; h++)                                                                 \
            for (q = ws; q < w1; q++) {                                                             \
              const A v = LD(xb[h * iw + q]);                                                       \
              if (v > m) m = v;                                                                     \
            }                                                                                       \
          yb[i * ow + j] = ST(m);                                                                   \
        } else {                                                                                    \
          const int64_t real = (h1 > hs ? h1 - hs : 0) * (w1 > ws ? w1 - ws : 0);                   \
          const A div = (A)(g->incl ? (hp - h0) * (wp - w0) : real);                                \
          A sum = 0;                                                                                \
          for (h = hs; h < h1; h++)                                                                 \
            for (q = ws; q < w1; q++) sum += LD(xb[h * iw + q]) / div;                              \
          yb[i * ow + j] = ST(sum);                                                                 \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* 2x2 stride-2 tiled windows with the argmax: eight windows at a time in the row helper, the       \
 * rest here (as the forward: from the lowest value, strictly greater moves on). Its own            \
 * kernel: a call inside mxc_pool_flat_fwdi's plane loop cost its 3x3 loops 10% (values of g        \
 * reloaded around the call). */                                                                    \
static void mxc_pool_2x2_fwdi_##SUF(const T *x, T *y, int32_t *ix, const mxc_pool_geom *g,          \
                                    int nt) {                                                       \
  const int64_t planes = g->n * g->c, iw = g->is[2], oh = g->os[1], ow = g->os[2];                  \
  const int64_t isz = g->isz, osz = g->osz;                                                         \
  const int32_t w32 = (int32_t)iw;                                                                  \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * isz > 32768))             \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    int64_t i, j;                                                                                   \
    for (i = 0; i < oh; i++) {                                                                      \
      const T *r0 = x + pl * isz + 2 * i * iw, *r1 = r0 + iw;                                       \
      T *yr = y + pl * osz + i * ow;                                                                \
      int32_t *ir = ix + pl * osz + i * ow;                                                         \
      int32_t at = (int32_t)(2 * i * iw); /* the window's first element */                          \
      j = mxc_pool_2x2_fwdi_row_##SUF(r0, r1, yr, ir, ow, at, w32);                                 \
      for (at += (int32_t)(2 * j); j < ow; j++, at += 2) {                                          \
        const A a = LD(r0[2 * j]), b = LD(r0[2 * j + 1]), c = LD(r1[2 * j]), d = LD(r1[2 * j + 1]); \
        A m = LOWEST;                                                                               \
        int32_t e = -1;                                                                             \
        e = a > m ? at : e;                                                                         \
        m = a > m ? a : m;                                                                          \
        e = b > m ? at + 1 : e;                                                                     \
        m = b > m ? b : m;                                                                          \
        e = c > m ? at + w32 : e;                                                                   \
        m = c > m ? c : m;                                                                          \
        e = d > m ? at + w32 + 1 : e;                                                               \
        m = d > m ? d : m;                                                                          \
        if (e < 0) /* nothing above the lowest value: the first element equal to it */            \
          e = a == m ? at : b == m ? at + 1 : c == m ? at + w32 : d == m ? at + w32 + 1 : -1;       \
        yr[j] = ST(m);                                                                              \
        ir[j] = e;                                                                                  \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* The forward of max pooling that also keeps, per output, the plane index (d*H + h)*W + w of       \
 * the first element of its window equal to the output (-1: an empty window): what the              \
 * comparing backward (below) would find, so the backward from it (mxc_pool_ibwd) routes the          \
 * gradient to the same element. The outputs are those of mxc_pool_flat_fwd. */                     \
MXC_POOL_NO_UNSWITCH static void mxc_pool_flat_fwdi_##SUF(const T *x, T *y, int32_t *ix, const mxc_pool_geom *g,         \
                                     int nt) {                                                      \
  const int64_t planes = g->n * g->c, ih = g->is[1], iw = g->is[2], oh = g->os[1], ow = g->os[2];   \
  const int k33 = g->k[1] == 3 && g->k[2] == 3;                                                     \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->isz > 32768))          \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const T *xb = x + pl * g->isz;                                                                  \
    T *yb = y + pl * g->osz;                                                                        \
    int32_t *ib = ix + pl * g->osz;                                                                 \
    int64_t i, j, h, q;                                                                             \
    for (i = 0; i < oh; i++) {                                                                      \
      int64_t h0 = i * g->s[1] - g->p[1], h1 = h0 + g->k[1];                                        \
      const int64_t hs = h0 > 0 ? h0 : 0;                                                           \
      int64_t jlo = 0, jhi = 0; /* [jlo, jhi): the columns of whole 3x3 windows in a whole row */   \
      if (h1 > ih) h1 = ih;                                                                         \
      if (k33 && h0 >= 0 && h1 == h0 + 3) {                                                         \
        jlo = (g->p[2] + g->s[2] - 1) / g->s[2];                                                    \
        jhi = iw + g->p[2] >= 3 ? (iw + g->p[2] - 3) / g->s[2] + 1 : 0;                             \
        if (jhi > ow) jhi = ow;                                                                     \
        if (jhi < jlo) jhi = jlo;                                                                   \
      }                                                                                             \
      if (jhi > jlo) {                                                                              \
        /* whole 3x3 windows: the maximum as the forward's, then the first element equal to         \
         * it (scanning backwards, the last match wins); selects only, 64-bit addressing and        \
         * an int32 index counter, so that the loop vectorises under -fwrapv */                     \
        const int64_t st = g->s[2], pw = g->p[2];                                                   \
        const int32_t w32 = (int32_t)iw, st32 = (int32_t)st;                                        \
        const T *xr = xb + h0 * iw;                                                                 \
        T *yr = yb + i * ow;                                                                        \
        int32_t *ir = ib + i * ow;                                                                  \
        int32_t at = (int32_t)(h0 * iw + jlo * st - pw); /* the window's first element */           \
        for (j = jlo; j < jhi; j++, at += st32) {                                                   \
          const T *xw = xr + j * st - pw;                                                           \
          A m = LOWEST;                                                                             \
          int32_t e = -1;                                                                           \
          int64_t a, b;                                                                             \
          for (a = 0; a < 3; a++)                                                                   \
            for (b = 0; b < 3; b++) {                                                               \
              const A v = LD(xw[a * iw + b]);                                                       \
              m = v > m ? v : m;                                                                    \
            }                                                                                       \
          for (a = 2; a >= 0; a--)                                                                  \
            for (b = 2; b >= 0; b--)                                                                \
              e = LD(xw[a * iw + b]) == m ? at + (int32_t)a * w32 + (int32_t)b : e;                 \
          yr[j] = ST(m);                                                                            \
          ir[j] = e;                                                                                \
        }                                                                                           \
      }                                                                                             \
      for (j = 0; j < ow; j++) {                                                                    \
        int64_t w0, w1, ws;                                                                         \
        A m = LOWEST;                                                                               \
        int32_t e = -1;                                                                             \
        if (j == jlo && jhi > jlo) j = jhi; /* whole windows: done above */                         \
        if (j >= ow) break;                                                                         \
        w0 = j * g->s[2] - g->p[2];                                                                 \
        w1 = w0 + g->k[2] < iw ? w0 + g->k[2] : iw;                                                 \
        ws = w0 > 0 ? w0 : 0;                                                                       \
        /* the maximum as the forward's, and the first element equal to it: strictly greater        \
         * moves on (selects, no branches); where nothing exceeds the lowest value, the first       \
         * element equal to it (the comparing backward's rule) by a second look */                  \
        for (h = hs; h < h1; h++)                                                                   \
          for (q = ws; q < w1; q++) {                                                               \
            const A v = LD(xb[h * iw + q]);                                                         \
            e = v > m ? (int32_t)(h * iw + q) : e;                                                  \
            m = v > m ? v : m;                                                                      \
          }                                                                                         \
        if (e < 0)                                                                                  \
          for (h = hs; h < h1 && e < 0; h++)                                                        \
            for (q = ws; q < w1; q++)                                                               \
              if (LD(xb[h * iw + q]) == m) {                                                        \
                e = (int32_t)(h * iw + q);                                                          \
                break;                                                                              \
              }                                                                                     \
        yb[i * ow + j] = ST(m);                                                                     \
        ib[i * ow + j] = e;                                                                         \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* acc: the float accumulator planes when T is float16 (NULL: accumulate in dx) */                  \
static void mxc_pool_flat_bwd_##SUF(const T *dy, const T *x, const T *y, T *dx,                    \
                                    const mxc_pool_geom *g, A *work, int nt) {                      \
  const int64_t planes = g->n * g->c, ih = g->is[1], iw = g->is[2], oh = g->os[1], ow = g->os[2];   \
  const int64_t kh = g->k[1], kw = g->k[2];                                                         \
  const int tiled = g->type == MXC_POOL_MAX && !work && g->tiled;                                  \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->isz > 32768))         \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const T *xb = x + pl * g->isz, *yb = y + pl * g->osz, *gb = dy + pl * g->osz;                   \
    T *db = dx + pl * g->isz;                                                                       \
    A *acc = work ? work + pl * g->isz : (A *)(void *)db;                                           \
    int64_t i, j, h, q;                                                                             \
    if (tiled) { /* every input position in at most one window: write, no accumulation */          \
      for (i = 0; i < oh; i++) {                                                                    \
        if (kh == 2 && kw == 2) { /* branch-free: which element is the maximum is random */        \
          const T *r0 = xb + 2 * i * iw, *r1 = r0 + iw;                                             \
          T *d0 = db + 2 * i * iw, *d1 = d0 + iw;                                                   \
          for (j = 0; j < ow; j++) {                                                                \
            const A yv = LD(yb[i * ow + j]);                                                        \
            const T gv = gb[i * ow + j];                                                            \
            const int e0 = LD(r0[2 * j]) == yv;                                                     \
            const int e1 = !e0 & (LD(r0[2 * j + 1]) == yv);                                         \
            const int e2 = !(e0 | e1) & (LD(r1[2 * j]) == yv);                                      \
            const int e3 = !(e0 | e1 | e2) & (LD(r1[2 * j + 1]) == yv);                             \
            d0[2 * j] = e0 ? gv : (T)0;                                                             \
            d0[2 * j + 1] = e1 ? gv : (T)0;                                                         \
            d1[2 * j] = e2 ? gv : (T)0;                                                             \
            d1[2 * j + 1] = e3 ? gv : (T)0;                                                         \
          }                                                                                         \
        } else                                                                                      \
        for (j = 0; j < ow; j++) {                                                                  \
          const T *xw = xb + i * kh * iw + j * kw;                                                  \
          T *dw = db + i * kh * iw + j * kw;                                                        \
          const A yv = LD(yb[i * ow + j]);                                                          \
          const T gv = gb[i * ow + j];                                                              \
          int found = 0;                                                                            \
          for (h = 0; h < kh; h++)                                                                  \
            for (q = 0; q < kw; q++) {                                                              \
              const int hit = !found & (LD(xw[h * iw + q]) == yv);                                  \
              dw[h * iw + q] = hit ? gv : (T)0;                                                     \
              found |= hit;                                                                         \
            }                                                                                       \
        }                                                                                           \
        for (h = 0; h < kh; h++) /* columns right of the last window */                             \
          for (q = ow * kw; q < iw; q++) db[(i * kh + h) * iw + q] = (T)0;                          \
      }                                                                                             \
      for (i = oh * kh * iw; i < g->isz; i++) db[i] = (T)0; /* rows below the last window */       \
      continue;                                                                                     \
    }                                                                                               \
    memset(acc, 0, sizeof(A) * (size_t)g->isz);                                                     \
    for (i = 0; i < oh; i++) {                                                                      \
      int64_t h0 = i * g->s[1] - g->p[1], h1 = h0 + kh, hp = h1;                                    \
      if (hp > ih + g->p[1]) hp = ih + g->p[1];                                                     \
      if (h1 > ih) h1 = ih;                                                                         \
      for (j = 0; j < ow; j++) {                                                                    \
        int64_t w0 = j * g->s[2] - g->p[2], w1 = w0 + kw, wp = w1, hs = h0 > 0 ? h0 : 0, ws;        \
        const A gv = LD(gb[i * ow + j]);                                                            \
        if (wp > iw + g->p[2]) wp = iw + g->p[2];                                                   \
        if (w1 > iw) w1 = iw;                                                                       \
        ws = w0 > 0 ? w0 : 0;                                                                       \
        if (g->type == MXC_POOL_MAX) {                                                              \
          const A yv = LD(yb[i * ow + j]);                                                          \
          int64_t e = -1; /* the first maximum: the last match scanning backwards, without       \
                           * branches (where the maximum lies is random) */                         \
          if (kh == 3 && kw == 3 && h0 >= 0 && h1 == h0 + 3 && w0 >= 0 && w1 == w0 + 3) {          \
            /* a whole 3x3 window (the ResNet stem's): one bit per match, the lowest is the first */ \
            const T *r = xb + h0 * iw + w0;                                                         \
            unsigned hit = 0;                                                                       \
            for (h = 0; h < 3; h++)                                                                 \
              for (q = 0; q < 3; q++)                                                               \
                hit |= (unsigned)(LD(r[h * iw + q]) == yv) << (h * 3 + q);                          \
            if (hit) {                                                                              \
              const int b = __builtin_ctz(hit);                                                     \
              e = (h0 + b / 3) * iw + w0 + b % 3;                                                   \
            }                                                                                       \
          } else                                                                                    \
          for (h = h1 - 1; h >= hs; h--)                                                            \
            for (q = w1 - 1; q >= ws; q--) {                                                        \
              const int64_t at = h * iw + q;                                                        \
              const int64_t take = -(int64_t)(LD(xb[at]) == yv); /* 0 or all ones */                \
              e = (at & take) | (e & ~take);                                                        \
            }                                                                                       \
          if (e >= 0) acc[e] += gv;                                                                 \
        } else {                                                                                    \
          const int64_t real = (h1 > hs ? h1 - hs : 0) * (w1 > ws ? w1 - ws : 0);                   \
          const A div = (A)(g->incl ? (hp - h0) * (wp - w0) : real);                                \
          const A gd = gv / div;                                                                    \
          for (h = hs; h < h1; h++)                                                                 \
            for (q = ws; q < w1; q++) acc[h * iw + q] += gd;                                        \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
    if (work)                                                                                       \
      for (i = 0; i < g->isz; i++) db[i] = ST(acc[i]);                                              \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* The max backward from the argmax for tiled 2x2 windows (stride 2, no padding: every input        \
 * position in at most one window): each position is written, the output gradient at its            \
 * window's argmax and 0 elsewhere (also where no window reaches), so dx needs no zeroing pass      \
 * and nothing is added. Eight windows at a time in the row helper. (Larger tiled windows take      \
 * the zeroing pass and the scatter: per element selects over 9 or more positions cost more.) */    \
static void mxc_pool_flat_ibwd_##SUF(const T *dy, const int32_t *ix, T *dx,                         \
                                     const mxc_pool_geom *g, int nt) {                              \
  const int64_t planes = g->n * g->c, iw = g->is[2], oh = g->os[1], ow = g->os[2];                  \
  const int32_t w32 = (int32_t)iw;                                                                  \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->isz > 32768))          \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const T *gb = dy + pl * g->osz;                                                                 \
    const int32_t *ib = ix + pl * g->osz;                                                           \
    T *db = dx + pl * g->isz;                                                                       \
    int64_t i, j;                                                                                   \
    for (i = 0; i < oh; i++) {                                                                      \
      const T *gr = gb + i * ow;                                                                    \
      const int32_t *ir = ib + i * ow;                                                              \
      T *d0 = db + 2 * i * iw, *d1 = d0 + iw;                                                       \
      int32_t at = (int32_t)(2 * i * iw); /* the plane index of the row's first window */           \
      j = mxc_pool_2x2_ibwd_row_##SUF(gr, ir, d0, d1, ow, at, w32);                                 \
      for (at += (int32_t)(2 * j); j < ow; j++, at += 2) {                                          \
        const int32_t e = ir[j] - at; /* -1 (a NaN maximum) matches no position */                  \
        const T gv = gr[j];                                                                         \
        d0[2 * j] = e == 0 ? gv : (T)0;                                                             \
        d0[2 * j + 1] = e == 1 ? gv : (T)0;                                                         \
        d1[2 * j] = e == w32 ? gv : (T)0;                                                           \
        d1[2 * j + 1] = e == w32 + 1 ? gv : (T)0;                                                   \
      }                                                                                             \
      if (2 * ow < iw) d0[2 * ow] = d1[2 * ow] = (T)0; /* a column right of the last window */      \
    }                                                                                               \
    for (i = 2 * oh * iw; i < g->isz; i++) db[i] = (T)0; /* a row below the last window */          \
  }                                                                                                 \
}

#define MXC_POOL_DEFINE(T, A, SUF, LD, ST, LOWEST)                                                 \
/* ix: where the argmax of every output goes (the plane index of the first maximum, -1 for an       \
 * empty window), laid out as y; NULL: not kept */                                                  \
static void mxc_pool_fwd_##SUF(const T *x, T *y, int32_t *ix, const mxc_pool_geom *g, int nt) {     \
  const int64_t planes = g->n * g->c;                                                               \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->osz > 4096))          \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const int64_t es = g->last ? g->c : 1;                                                          \
    int64_t xo, yo;                                                                                 \
    mxc_pool_plane(g, pl, &xo, &yo);                                                                \
    const T *xb = x + xo;                                                                           \
    T *yb = y + yo;                                                                                 \
    int64_t od, oh, ow, oi = 0;                                                                     \
    for (od = 0; od < g->os[0]; od++)                                                               \
      for (oh = 0; oh < g->os[1]; oh++)                                                             \
        for (ow = 0; ow < g->os[2]; ow++, oi++) {                                                   \
          mxc_pool_win w;                                                                           \
          int64_t d, h, q;                                                                          \
          mxc_pool_window(g, od, oh, ow, &w);                                                       \
          if (g->type == MXC_POOL_MAX) {                                                            \
            A m = LOWEST;                                                                           \
            int64_t e = -1; /* as mxc_pool_flat_fwdi: the first element equal to the maximum */     \
            for (d = w.lo[0]; d < w.hi[0]; d++)                                                     \
              for (h = w.lo[1]; h < w.hi[1]; h++) {                                                 \
                const T *row = xb + ((d * g->is[1] + h) * g->is[2]) * es;                           \
                for (q = w.lo[2]; q < w.hi[2]; q++) {                                               \
                  const A v = LD(row[q * es]);                                                      \
                  if (v > m || (e < 0 && v == m)) {                                                 \
                    m = v;                                                                          \
                    e = (d * g->is[1] + h) * g->is[2] + q;                                          \
                  }                                                                                 \
                }                                                                                   \
              }                                                                                     \
            yb[oi * es] = ST(m);                                                                    \
            if (ix) ix[yo + oi * es] = (int32_t)e;                                                  \
          } else {                                                                                  \
            const A div = (A)w.size;                                                                \
            const int p = g->type == MXC_POOL_LP ? g->pv : 1;                                       \
            A sum = 0;                                                                              \
            for (d = w.lo[0]; d < w.hi[0]; d++)                                                     \
              for (h = w.lo[1]; h < w.hi[1]; h++) {                                                 \
                const T *row = xb + ((d * g->is[1] + h) * g->is[2]) * es;                           \
                if (p == 1) {                                                                       \
                  for (q = w.lo[2]; q < w.hi[2]; q++) sum += LD(row[q * es]) / div;                 \
                } else {                                                                            \
                  for (q = w.lo[2]; q < w.hi[2]; q++)                                               \
                    sum += (A)mxc_pool_powp((A)LD(row[q * es]), p) / div;                           \
                }                                                                                   \
              }                                                                                     \
            if (p == 2) sum = (A)sqrt((double)sum);                                                 \
            else if (p == 3) sum = (A)cbrt((double)sum);                                            \
            yb[oi * es] = ST(sum);                                                                  \
          }                                                                                         \
        }                                                                                           \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* work: one accumulator plane per (n, c) plane (float16 or channels last), or NULL to          \
 * accumulate in dx itself (float32/float64, channels first) */                                     \
static void mxc_pool_bwd_##SUF(const T *dy, const T *x, const T *y, T *dx,                         \
                               const mxc_pool_geom *g, A *work, int nt) {                           \
  const int64_t planes = g->n * g->c;                                                               \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->isz > 4096))          \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const int64_t es = g->last ? g->c : 1;                                                          \
    int64_t xo, yo;                                                                                 \
    mxc_pool_plane(g, pl, &xo, &yo);                                                                \
    const T *xb = x + xo, *yb = y + yo, *gb = dy + yo;                                              \
    T *db = dx + xo;                                                                                \
    A *acc = work ? work + pl * g->isz : (A *)(void *)db;                                           \
    int64_t od, oh, ow, oi = 0, i;                                                                  \
    memset(acc, 0, sizeof(A) * (size_t)g->isz);                                                     \
    for (od = 0; od < g->os[0]; od++)                                                               \
      for (oh = 0; oh < g->os[1]; oh++)                                                             \
        for (ow = 0; ow < g->os[2]; ow++, oi++) {                                                   \
          mxc_pool_win w;                                                                           \
          int64_t d, h, q;                                                                          \
          const A gv = LD(gb[oi * es]);                                                             \
          mxc_pool_window(g, od, oh, ow, &w);                                                       \
          if (g->type == MXC_POOL_MAX) {                                                            \
            const A yv = LD(yb[oi * es]);                                                           \
            int found = 0;                                                                          \
            for (d = w.lo[0]; d < w.hi[0] && !found; d++)                                           \
              for (h = w.lo[1]; h < w.hi[1] && !found; h++)                                         \
                for (q = w.lo[2]; q < w.hi[2]; q++) {                                               \
                  const int64_t e = (d * g->is[1] + h) * g->is[2] + q;                              \
                  if (LD(xb[e * es]) == yv) {                                                       \
                    acc[e] += gv;                                                                   \
                    found = 1;                                                                      \
                    break;                                                                          \
                  }                                                                                 \
                }                                                                                   \
          } else {                                                                                  \
            const A div = (A)w.size;                                                                \
            const int p = g->type == MXC_POOL_LP ? g->pv : 1;                                       \
            const A yv = p == 1 ? (A)0 : LD(yb[oi * es]);                                           \
            for (d = w.lo[0]; d < w.hi[0]; d++)                                                     \
              for (h = w.lo[1]; h < w.hi[1]; h++)                                                   \
                for (q = w.lo[2]; q < w.hi[2]; q++) {                                               \
                  const int64_t e = (d * g->is[1] + h) * g->is[2] + q;                              \
                  A gr = gv;                                                                        \
                  if (p == 2) {                                                                     \
                    gr = yv == 0 ? (A)0 : gv * (LD(xb[e * es]) / yv);                               \
                  } else if (p == 3) {                                                              \
                    const A r = LD(xb[e * es]) / yv;                                                \
                    gr = yv == 0 ? (A)0 : gv * r * r;                                               \
                  }                                                                                 \
                  acc[e] += gr / div;                                                               \
                }                                                                                   \
          }                                                                                         \
        }                                                                                           \
    if (work)                                                                                       \
      for (i = 0; i < g->isz; i++) db[i * es] = ST(acc[i]);                                         \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* the max backward from the forward's argmax: each output's gradient added at its index, in        \
 * output order (the comparing backward's order, so sums of overlapping windows round alike).       \
 * work: accumulator planes as mxc_pool_bwd's (float16 or channels last), NULL: dx itself */        \
static void mxc_pool_ibwd_##SUF(const T *dy, const int32_t *ix, T *dx, const mxc_pool_geom *g,      \
                                A *work, int nt) {                                                  \
  const int64_t planes = g->n * g->c;                                                               \
  int64_t pl;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (planes * g->isz > 32768))          \
  for (pl = 0; pl < planes; pl++) {                                                                 \
    const int64_t es = g->last ? g->c : 1;                                                          \
    int64_t xo, yo;                                                                                 \
    mxc_pool_plane(g, pl, &xo, &yo);                                                                \
    const T *gb = dy + yo;                                                                          \
    const int32_t *ib = ix + yo;                                                                    \
    T *db = dx + xo;                                                                                \
    A *acc = work ? work + pl * g->isz : (A *)(void *)db;                                           \
    int64_t oi;                                                                                     \
    memset(acc, 0, sizeof(A) * (size_t)g->isz);                                                     \
    for (oi = 0; oi < g->osz; oi++) {                                                               \
      const int32_t e = ib[oi * es];                                                                \
      if (e >= 0 && e < g->isz) acc[e] += LD(gb[oi * es]); /* a foreign argmax stays inside */      \
    }                                                                                               \
    if (work)                                                                                       \
      for (oi = 0; oi < g->isz; oi++) db[oi * es] = ST(acc[oi]);                                    \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* nearest upsampling of input `x` (n, cx, h, w) by `sc` into channels [c0, c0 + cx) of y */       \
static void mxc_upnear_fwd_##SUF(const T *x, T *y, int64_t n, int64_t cx, int64_t h, int64_t w,    \
                                 int64_t cy, int64_t c0, int64_t sc, int add, int nt) {             \
  const int64_t oh = h * sc, ow = w * sc, rows = n * cx * oh;                                       \
  int64_t r;                                                                                        \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (rows * ow > 16384))               \
  for (r = 0; r < rows; r++) {                                                                      \
    const int64_t nn = r / (cx * oh), cc = (r / oh) % cx, yy = r % oh;                              \
    const T *src = x + ((nn * cx + cc) * h + yy / sc) * w;                                          \
    T *dst = y + ((nn * cy + c0 + cc) * oh + yy) * ow;                                              \
    int64_t q;                                                                                      \
    if (add) {                                                                                      \
      for (q = 0; q < ow; q++) dst[q] = ST((A)LD(dst[q]) + (A)LD(src[q / sc]));                     \
    } else {                                                                                        \
      for (q = 0; q < ow; q++) dst[q] = src[q / sc];                                                \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* dx (n, cx, h, w) = sum of the sc x sc blocks of channels [c0, c0 + cx) of dy */                 \
static void mxc_upnear_bwd_##SUF(const T *dy, T *dx, int64_t n, int64_t cx, int64_t h, int64_t w,  \
                                 int64_t cy, int64_t c0, int64_t sc, int nt) {                      \
  const int64_t oh = h * sc, ow = w * sc, rows = n * cx * h;                                        \
  int64_t r;                                                                                        \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (rows * w * sc * sc > 16384))      \
  for (r = 0; r < rows; r++) {                                                                      \
    const int64_t nn = r / (cx * h), cc = (r / h) % cx, yy = r % h;                                 \
    const T *src = dy + ((nn * cy + c0 + cc) * oh + yy * sc) * ow;                                  \
    T *dst = dx + r * w;                                                                            \
    int64_t q, a, b;                                                                                \
    for (q = 0; q < w; q++) {                                                                       \
      A s = 0;                                                                                      \
      for (a = 0; a < sc; a++)                                                                      \
        for (b = 0; b < sc; b++) s += LD(src[a * ow + q * sc + b]);                                 \
      dst[q] = ST(s);                                                                               \
    }                                                                                               \
  }                                                                                                 \
}

#define MXC_POOL_ID(v) (v)
MXC_POOL_DEFINE(float, float, f32, MXC_POOL_ID, MXC_POOL_ID, -FLT_MAX)
MXC_POOL_DEFINE(double, double, f64, MXC_POOL_ID, MXC_POOL_ID, -DBL_MAX)
MXC_POOL_DEFINE(uint16_t, float, f16, mxc_half_to_float, mxc_float_to_half, -65504.0f)
MXC_POOL_FLAT_DEFINE(float, float, f32, MXC_POOL_ID, MXC_POOL_ID, -FLT_MAX)
MXC_POOL_FLAT_DEFINE(double, double, f64, MXC_POOL_ID, MXC_POOL_ID, -DBL_MAX)

/* out: y, and optionally the argmax (int32, y's shape; max pooling, float32/float64 channels
 * first 2-D through the flat loops, everything else through the general ones) */
static int mxc_pool_forward(mxc_opcall *call) {
  mxc_pool_geom g;
  int32_t *ix = NULL;
  const void *x = call->in[0].data;
  void *y = call->out[0].data;
  if (mxc_pool_geom_make(&g, &call->in[0], &call->out[0], call) != 0) return -1;
  if (call->nout > 1) {
    if (g.type != MXC_POOL_MAX || call->out[1].dtype != MXC_INT32 ||
        call->out[1].size != call->out[0].size || g.isz > INT32_MAX) {
      snprintf(call->err, MXC_ERR_LEN, "Pooling: the argmax output needs max pooling, int32 and "
               "the output's size, and planes under 2^31 elements");
      return -1;
    }
    ix = (int32_t *)call->out[1].data;
  }
  switch (call->in[0].dtype) {
  case MXC_FLOAT32:
    if (ix && g.tiled && g.k[1] == 2 && g.k[2] == 2)
      mxc_pool_2x2_fwdi_f32((const float *)x, (float *)y, ix, &g, call->nthreads);
    else if (ix && g.flat) mxc_pool_flat_fwdi_f32((const float *)x, (float *)y, ix, &g, call->nthreads);
    else if (g.flat) mxc_pool_flat_fwd_f32((const float *)x, (float *)y, &g, call->nthreads);
    else mxc_pool_fwd_f32((const float *)x, (float *)y, ix, &g, call->nthreads);
    return 0;
  case MXC_FLOAT64:
    if (ix && g.tiled && g.k[1] == 2 && g.k[2] == 2)
      mxc_pool_2x2_fwdi_f64((const double *)x, (double *)y, ix, &g, call->nthreads);
    else if (ix && g.flat) mxc_pool_flat_fwdi_f64((const double *)x, (double *)y, ix, &g, call->nthreads);
    else if (g.flat) mxc_pool_flat_fwd_f64((const double *)x, (double *)y, &g, call->nthreads);
    else mxc_pool_fwd_f64((const double *)x, (double *)y, ix, &g, call->nthreads);
    return 0;
  case MXC_FLOAT16:
    mxc_pool_fwd_f16((const uint16_t *)x, (uint16_t *)y, ix, &g, call->nthreads);
    return 0;
  default:
    snprintf(call->err, MXC_ERR_LEN, "Pooling: unsupported dtype %d", call->in[0].dtype);
    return -1;
  }
}

/* The float scratch of one input gradient that float16 and channels-last backwards sum into
 * (NULL where the backward writes dx directly); -1 with the message when out of memory. */
static int mxc_pool_bwd_workspace(mxc_opcall *call, const mxc_pool_geom *g, int dt, void **work) {
  const size_t esz = dt == MXC_FLOAT64 ? sizeof(double) : sizeof(float);
  *work = NULL;
  if (dt != MXC_FLOAT16 && !g->last) return 0;
  *work = malloc(esz * (size_t)(g->n * g->c * g->isz > 0 ? g->n * g->c * g->isz : 1));
  if (*work == NULL) {
    snprintf(call->err, MXC_ERR_LEN, "_backward_Pooling: out of memory");
    return -1;
  }
  return 0;
}

/* in: dy, argmax (int32, dy's shape), x (for its shape only); out: dx */
static int mxc_pool_backward_index(mxc_opcall *call) {
  mxc_pool_geom g;
  const void *dy = call->in[0].data;
  const int32_t *ix = (const int32_t *)call->in[1].data;
  void *dx = call->out[0].data;
  int dt = call->in[0].dtype;
  void *work = NULL;
  if (mxc_pool_geom_make(&g, &call->out[0], &call->in[0], call) != 0) return -1;
  if (call->in[1].dtype != MXC_INT32 || call->in[1].size != call->in[0].size) {
    snprintf(call->err, MXC_ERR_LEN, "_backward_Pooling: the argmax must be int32 of the output "
             "gradient's size");
    return -1;
  }
  if (g.tiled && g.k[1] == 2 && g.k[2] == 2 && (dt == MXC_FLOAT32 || dt == MXC_FLOAT64)) {
    if (dt == MXC_FLOAT32)
      mxc_pool_flat_ibwd_f32((const float *)dy, ix, (float *)dx, &g, call->nthreads);
    else
      mxc_pool_flat_ibwd_f64((const double *)dy, ix, (double *)dx, &g, call->nthreads);
    return 0;
  }
  if (mxc_pool_bwd_workspace(call, &g, dt, &work) != 0) return -1;
  if (dt == MXC_FLOAT32)
    mxc_pool_ibwd_f32((const float *)dy, ix, (float *)dx, &g, (float *)work, call->nthreads);
  else if (dt == MXC_FLOAT64)
    mxc_pool_ibwd_f64((const double *)dy, ix, (double *)dx, &g, (double *)work, call->nthreads);
  else if (dt == MXC_FLOAT16)
    mxc_pool_ibwd_f16((const uint16_t *)dy, ix, (uint16_t *)dx, &g, (float *)work,
                      call->nthreads);
  else {
    free(work);
    snprintf(call->err, MXC_ERR_LEN, "_backward_Pooling: unsupported dtype %d", dt);
    return -1;
  }
  free(work);
  return 0;
}

/* in: dy, x, y; out: dx */
static int mxc_pool_backward(mxc_opcall *call) {
  mxc_pool_geom g;
  const void *dy = call->in[0].data, *x = call->in[1].data, *y = call->in[2].data;
  void *dx = call->out[0].data;
  int dt = call->in[0].dtype;
  void *work = NULL;
  if (mxc_pool_geom_make(&g, &call->in[1], &call->in[0], call) != 0) return -1;
  if (dt != MXC_FLOAT32 && dt != MXC_FLOAT64 && dt != MXC_FLOAT16) {
    snprintf(call->err, MXC_ERR_LEN, "_backward_Pooling: unsupported dtype %d", dt);
    return -1;
  }
  if (mxc_pool_bwd_workspace(call, &g, dt, &work) != 0) return -1;
  if (dt == MXC_FLOAT32)
    (g.flat ? mxc_pool_flat_bwd_f32 : mxc_pool_bwd_f32)((const float *)dy, (const float *)x,
                                                        (const float *)y, (float *)dx, &g,
                                                        (float *)work, call->nthreads);
  else if (dt == MXC_FLOAT64)
    (g.flat ? mxc_pool_flat_bwd_f64 : mxc_pool_bwd_f64)((const double *)dy, (const double *)x,
                                                        (const double *)y, (double *)dx, &g,
                                                        (double *)work, call->nthreads);
  else
    mxc_pool_bwd_f16((const uint16_t *)dy, (const uint16_t *)x, (const uint16_t *)y,
                     (uint16_t *)dx, &g, (float *)work, call->nthreads);
  free(work);
  return 0;
}

/* in: x_0 .. x_{k-1} (N, C_i, H_i, W_i); out: y (N, C, H, W); iattr[0]: 0 concat, 1 sum */
static int mxc_upsampling_nearest(mxc_opcall *call) {
  const mxc_tensor *y = &call->out[0];
  int64_t c0 = 0;
  int i, sum = call->niattr > 0 && call->iattr[0] != 0;
  for (i = 0; i < call->nin; i++) {
    const mxc_tensor *x = &call->in[i];
    int64_t sc = x->shape[2] > 0 ? y->shape[2] / x->shape[2] : 1;
    int add = sum && i > 0;
    switch (y->dtype) {
    case MXC_FLOAT32:
      mxc_upnear_fwd_f32((const float *)x->data, (float *)y->data, x->shape[0], x->shape[1],
                         x->shape[2], x->shape[3], y->shape[1], c0, sc, add, call->nthreads);
      break;
    case MXC_FLOAT64:
      mxc_upnear_fwd_f64((const double *)x->data, (double *)y->data, x->shape[0], x->shape[1],
                         x->shape[2], x->shape[3], y->shape[1], c0, sc, add, call->nthreads);
      break;
    case MXC_FLOAT16:
      mxc_upnear_fwd_f16((const uint16_t *)x->data, (uint16_t *)y->data, x->shape[0],
                         x->shape[1], x->shape[2], x->shape[3], y->shape[1], c0, sc, add,
                         call->nthreads);
      break;
    default:
      snprintf(call->err, MXC_ERR_LEN, "UpSampling: unsupported dtype %d", y->dtype);
      return -1;
    }
    if (!sum) c0 += x->shape[1];
  }
  return 0;
}

/* in: dy (N, C, H, W); out: dx_0 .. dx_{k-1}; iattr[0]: 0 concat, 1 sum */
static int mxc_upsampling_nearest_backward(mxc_opcall *call) {
  const mxc_tensor *dy = &call->in[0];
  int64_t c0 = 0;
  int i, sum = call->niattr > 0 && call->iattr[0] != 0;
  for (i = 0; i < call->nout; i++) {
    const mxc_tensor *x = &call->out[i];
    int64_t sc = x->shape[2] > 0 ? dy->shape[2] / x->shape[2] : 1;
    switch (dy->dtype) {
    case MXC_FLOAT32:
      mxc_upnear_bwd_f32((const float *)dy->data, (float *)x->data, x->shape[0], x->shape[1],
                         x->shape[2], x->shape[3], dy->shape[1], c0, sc, call->nthreads);
      break;
    case MXC_FLOAT64:
      mxc_upnear_bwd_f64((const double *)dy->data, (double *)x->data, x->shape[0], x->shape[1],
                         x->shape[2], x->shape[3], dy->shape[1], c0, sc, call->nthreads);
      break;
    case MXC_FLOAT16:
      mxc_upnear_bwd_f16((const uint16_t *)dy->data, (uint16_t *)x->data, x->shape[0],
                         x->shape[1], x->shape[2], x->shape[3], dy->shape[1], c0, sc,
                         call->nthreads);
      break;
    default:
      snprintf(call->err, MXC_ERR_LEN, "_backward_UpSampling: unsupported dtype %d", dy->dtype);
      return -1;
    }
    if (!sum) c0 += x->shape[1];
  }
  return 0;
}

static const mxc_code_entry mxc_pool_table[] = {
  {"pool:forward", MXC_FLOAT32, mxc_pool_forward},
  {"pool:forward", MXC_FLOAT64, mxc_pool_forward},
  {"pool:forward", MXC_FLOAT16, mxc_pool_forward},
  {"pool:backward", MXC_FLOAT32, mxc_pool_backward},
  {"pool:backward", MXC_FLOAT64, mxc_pool_backward},
  {"pool:backward", MXC_FLOAT16, mxc_pool_backward},
  {"pool:backward_index", MXC_FLOAT32, mxc_pool_backward_index},
  {"pool:backward_index", MXC_FLOAT64, mxc_pool_backward_index},
  {"pool:backward_index", MXC_FLOAT16, mxc_pool_backward_index},
  {"upsampling:nearest", MXC_FLOAT32, mxc_upsampling_nearest},
  {"upsampling:nearest", MXC_FLOAT64, mxc_upsampling_nearest},
  {"upsampling:nearest", MXC_FLOAT16, mxc_upsampling_nearest},
  {"upsampling:nearest_backward", MXC_FLOAT32, mxc_upsampling_nearest_backward},
  {"upsampling:nearest_backward", MXC_FLOAT64, mxc_upsampling_nearest_backward},
  {"upsampling:nearest_backward", MXC_FLOAT16, mxc_upsampling_nearest_backward},
};
static const int mxc_pool_table_len = (int)(sizeof(mxc_pool_table) / sizeof(mxc_pool_table[0]));

#endif
