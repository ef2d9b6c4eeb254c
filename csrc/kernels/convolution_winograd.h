/* Winograd F(2x2, 3x3) for float32 2-D convolutions with a 3x3 kernel, stride 1, dilation 1,
 * one group and padding <= 2 (included by convolution.h; float16 uses it through its float32
 * copies). Built for x86-64 with AVX2+FMA code chosen at run time (__builtin_cpu_supports); on
 * other machines mxc_wino_usable() is 0 and convolution.h keeps the im2col path.
 *
 * Output tiles are 2x2; a row of TW = ceil(OW/2) tiles is padded to TWP (a multiple of 8) so that
 * 8 neighbouring tiles are one AVX vector. The tile rows (sample, tile row) are cut into blocks of
 * MXC_WINO_ROWS rows; each OpenMP thread takes whole blocks and does, in its own workspace:
 *
 *   forward          V[p][c][t] = (B^T d B)[p]          input transform (16 positions p)
 *                    M[p][k][t] = U[p][k][:] . V[p][:][t] 16 small GEMMs (own AVX2 kernel)
 *                    Y = A^T M A (+ bias)                output transform
 *   backward data    the forward applied to dY with the weights flipped and transposed
 *                    (Ci <- Co) and padding 2 - pad
 *   backward weight  D[p][t][k] = (A dY A^T)[p] (tile-major), V as above, dU^T[p] += V[p] D[p]
 *                    per thread (the same GEMM kernel),
 *                    then dW = G^T (sum of dU) G
 *
 * U = G g G^T is the transformed weight, computed once per call. Only factors 1 and 1/2 occur,
 * so the results are as accurate as the im2col path's (float32 sums of a different order).
 */
#ifndef MXC_KERNELS_CONVOLUTION_WINOGRAD_H
#define MXC_KERNELS_CONVOLUTION_WINOGRAD_H
#include "kernels/common.h"
#include "mxc/workspace.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(MXC_NO_WINOGRAD)
#define MXC_WINO 1
#include <immintrin.h>
#define MXC_WT __attribute__((target("avx2,fma")))

#define MXC_WINO_ROWS 4          /* tile rows per forward block */
#define MXC_WINO_WROWS 16        /* tile rows per weight-gradient block */

typedef struct {
  int64_t n, c, k;               /* batch, reduced (input) channels, produced (output) channels */
  int64_t ih, iw, oh, ow;        /* input and output planes */
  int64_t ph, pw;                /* padding of the input */
  int64_t th, tw, twp;           /* tile rows, tiles per row, tiles per row padded to 8 */
  int64_t nrow;                  /* n * th */
} mxc_wino_geom;

static int mxc_wino_cpu(void) {
  static volatile int ok = -1;
  if (ok < 0) {
    __builtin_cpu_init();
    ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  return ok;
}

static void mxc_wino_geom_make(mxc_wino_geom *g, int64_t n, int64_t c, int64_t k, int64_t ih,
                               int64_t iw, int64_t oh, int64_t ow, int64_t ph, int64_t pw) {
  g->n = n; g->c = c; g->k = k;
  g->ih = ih; g->iw = iw; g->oh = oh; g->ow = ow;
  g->ph = ph; g->pw = pw;
  g->th = (oh + 1) / 2;
  g->tw = (ow + 1) / 2;
  g->twp = (g->tw + 7) / 8 * 8;
  g->nrow = n * g->th;
}

/* ---- AVX2 pieces --------------------------------------------------------------------------- */
MXC_WT static inline __m256 mxc_wino_even(__m256 a, __m256 b) {   /* a0 a2 .. a6 b0 .. b6 */
  __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

MXC_WT static inline __m256 mxc_wino_odd(__m256 a, __m256 b) {    /* a1 a3 .. a7 b1 .. b7 */
  __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* C[MR x 8*NV] (+)= A[MR x kc] B[kc x 8*NV] (A by rows of stride lda, B by rows of stride ldb).
 * Named accumulators (an array of them would go through the stack); the MR/NV guards fold. */
#define MXC_WINO_ROW(i, A)                                                                         \
  if (mr_ > i) {                                                                                    \
    const __m256 av = _mm256_broadcast_ss((A) + q);                                                \
    c##i##0 = _mm256_fmadd_ps(av, b0, c##i##0);                                                    \
    if (nv_ > 1) c##i##1 = _mm256_fmadd_ps(av, b1, c##i##1);                                        \
  }
#define MXC_WINO_STORE(i)                                                                          \
  if (mr_ > i) {                                                                                    \
    if (accum) {                                                                                   \
      c##i##0 = _mm256_add_ps(c##i##0, _mm256_loadu_ps(c));                                        \
      if (nv_ > 1) c##i##1 = _mm256_add_ps(c##i##1, _mm256_loadu_ps(c + 8));                        \
    }                                                                                              \
    _mm256_storeu_ps(c, c##i##0);                                                                  \
    if (nv_ > 1) _mm256_storeu_ps(c + 8, c##i##1);                                                  \
    c += ldc;                                                                                      \
  }
#define MXC_WINO_NN(MR, NV)                                                                        \
MXC_WT static void mxc_wino_nn_##MR##_##NV(int64_t kc, const float *a, int64_t lda,               \
                                           const float *b, int64_t ldb, float *c, int64_t ldc,    \
                                           int accum) {                                           \
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;         \
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;                         \
  const float *a3 = a + 3 * lda;                                                                   \
  const int mr_ = MR, nv_ = NV;                                                                    \
  int64_t q;                                                                                       \
  for (q = 0; q < kc; q++) {                                                                       \
    const __m256 b0 = _mm256_loadu_ps(b), b1 = NV > 1 ? _mm256_loadu_ps(b + 8) : b0;               \
    MXC_WINO_ROW(0, a) MXC_WINO_ROW(1, a + lda) MXC_WINO_ROW(2, a + 2 * lda)                       \
    MXC_WINO_ROW(3, a3) MXC_WINO_ROW(4, a3 + lda) MXC_WINO_ROW(5, a3 + 2 * lda)                    \
    b += ldb;                                                                                      \
  }                                                                                                \
  MXC_WINO_STORE(0) MXC_WINO_STORE(1) MXC_WINO_STORE(2)                                            \
  MXC_WINO_STORE(3) MXC_WINO_STORE(4) MXC_WINO_STORE(5)                                            \
}
MXC_WINO_NN(1, 1) MXC_WINO_NN(2, 1) MXC_WINO_NN(3, 1) MXC_WINO_NN(4, 1) MXC_WINO_NN(5, 1)
MXC_WINO_NN(6, 1) MXC_WINO_NN(1, 2) MXC_WINO_NN(2, 2) MXC_WINO_NN(3, 2) MXC_WINO_NN(4, 2)
MXC_WINO_NN(5, 2) MXC_WINO_NN(6, 2)

typedef void (*mxc_wino_nn_fn)(int64_t, const float *, int64_t, const float *, int64_t, float *,
                               int64_t, int);
static const mxc_wino_nn_fn mxc_wino_nn_tab[2][7] = {
  {NULL, mxc_wino_nn_1_1, mxc_wino_nn_2_1, mxc_wino_nn_3_1, mxc_wino_nn_4_1, mxc_wino_nn_5_1,
   mxc_wino_nn_6_1},
  {NULL, mxc_wino_nn_1_2, mxc_wino_nn_2_2, mxc_wino_nn_3_2, mxc_wino_nn_4_2, mxc_wino_nn_5_2,
   mxc_wino_nn_6_2}};

/* C[m x n] (+)= A[m x kc] B[kc x n], n a multiple of 8 */
static void mxc_wino_gemm_nn(int64_t m, int64_t n, int64_t kc, const float *a, int64_t lda,
                             const float *b, int64_t ldb, float *c, int64_t ldc, int accum) {
  int64_t j, r;
  for (j = 0; j < n; j += 16) {
    const int nv = n - j >= 16 ? 2 : 1;
    for (r = 0; r < m; r += 6) {
      const int mr = m - r >= 6 ? 6 : (int)(m - r);
      mxc_wino_nn_tab[nv - 1][mr](kc, a + r * lda, lda, b + j, ldb, c + r * ldc + j, ldc, accum);
    }
  }
}

/* 8x8 transpose of r[0..7] */
MXC_WT static inline void mxc_wino_tr8(__m256 *r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* ---- transforms ------------------------------------------------------------------------------ */
/* V[p * pstride + ch * ldt + t0 + tile] = (B^T d B)[p] for the tiles of tile row `row` of every
 * channel of x (one sample, g->c planes of g->ih x g->iw). buf: 4 * (2 * twp + 2) floats. */
MXC_WT static void mxc_wino_in_row(const float *x, const mxc_wino_geom *g, int64_t row,
                                   float *v, int64_t pstride, int64_t ldt, int64_t t0,
                                   float *buf) {
  const int64_t w2 = 2 * g->twp + 2, plane = g->ih * g->iw;
  int64_t ch, gi;
  int i;
  for (ch = 0; ch < g->c; ch++) {
    const float *xc = x + ch * plane;
    float *vc = v + ch * ldt + t0;
    for (i = 0; i < 4; i++) {
      float *b = buf + i * w2;
      const int64_t h = 2 * row - g->ph + i;
      if (h < 0 || h >= g->ih) {
        memset(b, 0, sizeof(float) * (size_t)w2);
        continue;
      }
      memset(b, 0, sizeof(float) * (size_t)g->pw);
      memcpy(b + g->pw, xc + h * g->iw, sizeof(float) * (size_t)g->iw);
      memset(b + g->pw + g->iw, 0, sizeof(float) * (size_t)(w2 - g->pw - g->iw));
    }
    for (gi = 0; gi < g->twp; gi += 8) {
      __m256 t[4][4];
      for (i = 0; i < 4; i++) {
        const float *b = buf + i * w2 + 2 * gi;
        const __m256 l0 = _mm256_loadu_ps(b), l1 = _mm256_loadu_ps(b + 8);
        const __m256 m0 = _mm256_loadu_ps(b + 2), m1 = _mm256_loadu_ps(b + 10);
        const __m256 d0 = mxc_wino_even(l0, l1), d1 = mxc_wino_odd(l0, l1);
        const __m256 d2 = mxc_wino_even(m0, m1), d3 = mxc_wino_odd(m0, m1);
        t[i][0] = _mm256_sub_ps(d0, d2);
        t[i][1] = _mm256_add_ps(d1, d2);
        t[i][2] = _mm256_sub_ps(d2, d1);
        t[i][3] = _mm256_sub_ps(d1, d3);
      }
      for (i = 0; i < 4; i++) {
        float *o = vc + gi + i * pstride;
        _mm256_storeu_ps(o, _mm256_sub_ps(t[0][i], t[2][i]));
        _mm256_storeu_ps(o + 4 * pstride, _mm256_add_ps(t[1][i], t[2][i]));
        _mm256_storeu_ps(o + 8 * pstride, _mm256_sub_ps(t[2][i], t[1][i]));
        _mm256_storeu_ps(o + 12 * pstride, _mm256_sub_ps(t[1][i], t[3][i]));
      }
    }
  }
}

/* y (one sample, g->k planes of g->oh x g->ow) rows 2 row, 2 row + 1 = A^T M A (+ bias[k])
 * (+ y when acc). buf: 4 * twp floats. */
MXC_WT static void mxc_wino_out_row(const float *m, const mxc_wino_geom *g, int64_t row,
                                    int64_t pstride, int64_t ldt, int64_t t0, float *y,
                                    const float *bias, int acc, float *buf) {
  const int64_t w2 = 2 * g->twp, plane = g->oh * g->ow;
  int64_t k, gi, j;
  int i, r;
  for (k = 0; k < g->k; k++) {
    const float *mk = m + k * ldt + t0;
    const float bv = bias ? bias[k] : 0.0f;
    for (gi = 0; gi < g->twp; gi += 8) {
      __m256 s[2][4];
      for (i = 0; i < 4; i++) {
        const float *q = mk + gi + i * pstride;
        const __m256 m0 = _mm256_loadu_ps(q), m1 = _mm256_loadu_ps(q + 4 * pstride);
        const __m256 m2 = _mm256_loadu_ps(q + 8 * pstride);
        const __m256 m3 = _mm256_loadu_ps(q + 12 * pstride);
        s[0][i] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        s[1][i] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
      }
      for (r = 0; r < 2; r++) {
        const __m256 y0 = _mm256_add_ps(_mm256_add_ps(s[r][0], s[r][1]), s[r][2]);
        const __m256 y1 = _mm256_sub_ps(_mm256_sub_ps(s[r][1], s[r][2]), s[r][3]);
        const __m256 u0 = _mm256_unpacklo_ps(y0, y1), u1 = _mm256_unpackhi_ps(y0, y1);
        _mm256_storeu_ps(buf + r * w2 + 2 * gi, _mm256_permute2f128_ps(u0, u1, 0x20));
        _mm256_storeu_ps(buf + r * w2 + 2 * gi + 8, _mm256_permute2f128_ps(u0, u1, 0x31));
      }
    }
    for (r = 0; r < 2; r++) {
      const int64_t h = 2 * row + r;
      float *yr = y + k * plane + h * g->ow;
      const float *br = buf + r * w2;
      if (h >= g->oh) break;
      if (acc) {
        for (j = 0; j < g->ow; j++) yr[j] += br[j] + bv;
      } else {
        for (j = 0; j < g->ow; j++) yr[j] = br[j] + bv;
      }
    }
  }
}

/* D[p * pstride + (t0 + tile) * kp + k] = (A dy A^T)[p] (tile-major: the channels of one tile are
 * contiguous) for tile row `row` of every plane of dy (one sample, g->k planes of g->oh x g->ow;
 * channels from g->k to kp are zero). buf: 2 * 2 * twp + 16 * 8 * twp floats. */
MXC_WT static void mxc_wino_grad_row(const float *dy, const mxc_wino_geom *g, int64_t row,
                                     float *d, int64_t pstride, int64_t kp, int64_t t0,
                                     float *buf) {
  const int64_t w2 = 2 * g->twp, plane = g->oh * g->ow, twp = g->twp;
  float *stg = buf + 2 * w2;          /* stg[p][channel of 8][twp] */
  int64_t k0, gi;
  int r, j, kk, p;
  for (k0 = 0; k0 < kp; k0 += 8) {
    for (kk = 0; kk < 8; kk++) {
      const int64_t k = k0 + kk;
      if (k >= g->k) {
        for (p = 0; p < 16; p++) memset(stg + (p * 8 + kk) * twp, 0, sizeof(float) * (size_t)twp);
        continue;
      }
      for (r = 0; r < 2; r++) {
        float *b = buf + r * w2;
        const int64_t h = 2 * row + r;
        if (h >= g->oh) {
          memset(b, 0, sizeof(float) * (size_t)w2);
          continue;
        }
        memcpy(b, dy + k * plane + h * g->ow, sizeof(float) * (size_t)g->ow);
        memset(b + g->ow, 0, sizeof(float) * (size_t)(w2 - g->ow));
      }
      for (gi = 0; gi < twp; gi += 8) {
        __m256 c[2][4];
        for (r = 0; r < 2; r++) {
          const float *b = buf + r * w2 + 2 * gi;
          const __m256 l0 = _mm256_loadu_ps(b), l1 = _mm256_loadu_ps(b + 8);
          const __m256 e = mxc_wino_even(l0, l1), o = mxc_wino_odd(l0, l1);
          c[r][0] = e;
          c[r][1] = _mm256_add_ps(e, o);
          c[r][2] = _mm256_sub_ps(e, o);
          c[r][3] = _mm256_sub_ps(_mm256_setzero_ps(), o);
        }
        for (j = 0; j < 4; j++) {
          float *o = stg + kk * twp + gi + j * 8 * twp;
          _mm256_storeu_ps(o, c[0][j]);
          _mm256_storeu_ps(o + 4 * 8 * twp, _mm256_add_ps(c[0][j], c[1][j]));
          _mm256_storeu_ps(o + 8 * 8 * twp, _mm256_sub_ps(c[0][j], c[1][j]));
          _mm256_storeu_ps(o + 12 * 8 * twp, _mm256_sub_ps(_mm256_setzero_ps(), c[1][j]));
        }
      }
    }
    for (p = 0; p < 16; p++)
      for (gi = 0; gi < twp; gi += 8) {
        __m256 v[8];
        float *o = d + p * pstride + (t0 + gi) * kp + k0;
        for (kk = 0; kk < 8; kk++) v[kk] = _mm256_loadu_ps(stg + (p * 8 + kk) * twp + gi);
        mxc_wino_tr8(v);
        for (kk = 0; kk < 8; kk++) _mm256_storeu_ps(o + kk * kp, v[kk]);
      }
  }
}

/* U[p][kk][cc] = (G g G^T)[p] for the K x C kernels g = w[kk][cc] (flip: w is C x K, read as
 * g[a][b] = w[cc][kk][2 - a][2 - b], the backward-data kernels) */
static void mxc_wino_weights(const float *w, int64_t kn, int64_t cn, int flip, float *u) {
  const int64_t ps = kn * cn;
  int64_t kk, cc;
  for (kk = 0; kk < kn; kk++)
    for (cc = 0; cc < cn; cc++) {
      float gk[3][3], t[4][3];
      int a, b;
      for (a = 0; a < 3; a++)
        for (b = 0; b < 3; b++)
          gk[a][b] = flip ? w[(cc * kn + kk) * 9 + (2 - a) * 3 + (2 - b)]
                          : w[(kk * cn + cc) * 9 + a * 3 + b];
      for (b = 0; b < 3; b++) {       /* t = G g */
        t[0][b] = gk[0][b];
        t[1][b] = 0.5f * (gk[0][b] + gk[1][b] + gk[2][b]);
        t[2][b] = 0.5f * (gk[0][b] - gk[1][b] + gk[2][b]);
        t[3][b] = gk[2][b];
      }
      for (a = 0; a < 4; a++) {       /* U = t G^T */
        float *o = u + (a * 4) * ps + kk * cn + cc;
        o[0] = t[a][0];
        o[ps] = 0.5f * (t[a][0] + t[a][1] + t[a][2]);
        o[2 * ps] = 0.5f * (t[a][0] - t[a][1] + t[a][2]);
        o[3 * ps] = t[a][2];
      }
    }
}

/* ---- drivers --------------------------------------------------------------------------------- */
/* Tile rows [r0, r1) of a block lie side by side in the transformed matrices, tw tiles each, so
 * that the GEMMs skip the padding of narrow planes (an 8x8 output has 4 tiles per row: padding
 * each row to 8 doubled the products). The transforms write 8 tiles at a time; the lanes past
 * a row's tw tiles are overwritten by the next row, so the row stride of those matrices leaves
 * room for the last row's 8-tile groups (and for GEMM columns rounded up to 8). */
static inline int64_t mxc_wino_block_cols(const mxc_wino_geom *g, int64_t nrows) {
  return nrows * g->tw;
}
static inline int64_t mxc_wino_block_ld(const mxc_wino_geom *g, int64_t nrows) {
  const int64_t a = (nrows - 1) * g->tw + g->twp, b = (nrows * g->tw + 7) / 8 * 8;
  return a > b ? a : b;
}

typedef struct {
  const mxc_wino_geom *g;
  const float *x, *u, *bias;
  float *y;
  int acc;
} mxc_wino_fwd_args;

/* tile rows [r0, r1) through transform, GEMMs and inverse transform */
MXC_WT static void mxc_wino_fwd_block(const mxc_wino_fwd_args *s, int64_t r0, int64_t r1,
                                      float *v, float *m, float *buf) {
  const mxc_wino_geom *g = s->g;
  const int64_t ldt = mxc_wino_block_ld(g, r1 - r0), vps = g->c * ldt, mps = g->k * ldt;
  const int64_t ncol = (mxc_wino_block_cols(g, r1 - r0) + 7) / 8 * 8;
  const int64_t ps = g->k * g->c;
  int64_t r, p;
  for (r = r0; r < r1; r++) {   /* in increasing order: see mxc_wino_block_ld */
    const int64_t n = r / g->th;
    mxc_wino_in_row(s->x + n * g->c * g->ih * g->iw, g, r % g->th, v, vps, ldt,
                    (r - r0) * g->tw, buf);
  }
  for (p = 0; p < 16; p++)
    mxc_wino_gemm_nn(g->k, ncol, g->c, s->u + p * ps, g->c, v + p * vps, ldt, m + p * mps, ldt,
                     0);
  for (r = r0; r < r1; r++) {
    const int64_t n = r / g->th;
    mxc_wino_out_row(m, g, r % g->th, mps, ldt, (r - r0) * g->tw,
                     s->y + n * g->k * g->oh * g->ow, s->bias, s->acc, buf);
  }
}

/* y[n, k] (+)= sum over c of x[n, c] (*) w[k, c] (+ bias[k]), 3x3 cross-correlation with padding
 * (ph, pw); flip: w is (C, K, 3, 3) and is used flipped (the backward-data convolution).
 * Returns 0, or -1 when scratch could not be had (nothing written then unless acc). */
static int mxc_wino_conv(const float *x, const float *w, int flip, const float *bias, float *y,
                         int acc, int64_t n, int64_t c, int64_t k, int64_t ih, int64_t iw,
                         int64_t oh, int64_t ow, int64_t ph, int64_t pw, int nt) {
  mxc_wino_geom g;
  mxc_wino_fwd_args s;
  int64_t nblk;
  float *u;
  int err = 0;
  mxc_wino_geom_make(&g, n, c, k, ih, iw, oh, ow, ph, pw);
  u = (float *)mxc_workspace(2, sizeof(float) * (size_t)(16 * k * c));
  if (u == NULL) return -1;
  mxc_wino_weights(w, k, c, flip, u);
  s.g = &g; s.x = x; s.u = u; s.bias = bias; s.y = y; s.acc = acc;
  nblk = (g.nrow + MXC_WINO_ROWS - 1) / MXC_WINO_ROWS;
  (void)nt;
MXC_PRAGMA(omp parallel num_threads(nt))
  {
    const int64_t tb = MXC_WINO_ROWS * g.twp;
    float *v = (float *)mxc_workspace(0, sizeof(float) * (size_t)(16 * c * tb + 4 * (2 * g.twp + 2)));
    float *m = (float *)mxc_workspace(1, sizeof(float) * (size_t)(16 * k * tb));
    int64_t b;
MXC_PRAGMA(omp for schedule(dynamic))
    for (b = 0; b < nblk; b++) {
      const int64_t r0 = b * MXC_WINO_ROWS;
      const int64_t r1 = r0 + MXC_WINO_ROWS < g.nrow ? r0 + MXC_WINO_ROWS : g.nrow;
      if (v == NULL || m == NULL) {
        err = 1;
        continue;
      }
      mxc_wino_fwd_block(&s, r0, r1, v, m, v + 16 * c * tb);
    }
  }
  return err ? -1 : 0;
}

/* dU^T[p] += V[p] D[p] over the tile rows [r0, r1) (dU^T[p] is C x kp) */
MXC_WT static void mxc_wino_wgt_block(const mxc_wino_geom *g, const float *dy, const float *x,
                                      int64_t r0, int64_t r1, float *du, float *v, float *d,
                                      float *buf) {
  const int64_t kp = (g->k + 7) / 8 * 8;
  const int64_t ldt = mxc_wino_block_ld(g, r1 - r0), vps = g->c * ldt, dps = kp * ldt;
  const int64_t ntile = mxc_wino_block_cols(g, r1 - r0);
  const int64_t ps = kp * g->c;
  int64_t r, p;
  for (r = r0; r < r1; r++) {   /* in increasing order: see mxc_wino_block_ld */
    const int64_t n = r / g->th;
    mxc_wino_in_row(x + n * g->c * g->ih * g->iw, g, r % g->th, v, vps, ldt,
                    (r - r0) * g->tw, buf);
    mxc_wino_grad_row(dy + n * g->k * g->oh * g->ow, g, r % g->th, d, dps, kp,
                      (r - r0) * g->tw, buf);
  }
  for (p = 0; p < 16; p++)     /* the sum runs over the block's tiles only */
    mxc_wino_gemm_nn(g->c, kp, ntile, v + p * vps, ldt, d + p * dps, kp, du + p * ps, kp, 1);
}

/* dw[k, c] = sum over samples and positions of dy[n, k] x[n, c] for the 3x3 convolution of x
 * (n, c, ih, iw) with padding (ph, pw) into dy (n, k, oh, ow). Returns 0 or -1 (no scratch). */
static int mxc_wino_wgrad(const float *dy, const float *x, float *dw, int64_t n, int64_t c,
                          int64_t k, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t ph,
                          int64_t pw, int nt) {
  mxc_wino_geom g;
  const int64_t kp = (k + 7) / 8 * 8, ps = kp * c;
  int64_t nblk, i;
  float *acc;
  int err = 0, nth = nt < 1 ? 1 : nt;
  mxc_wino_geom_make(&g, n, c, k, ih, iw, oh, ow, ph, pw);
  acc = (float *)mxc_workspace(3, sizeof(float) * (size_t)(16 * ps * nth));
  if (acc == NULL) return -1;
  memset(acc, 0, sizeof(float) * (size_t)(16 * ps * nth));
  nblk = (g.nrow + MXC_WINO_WROWS - 1) / MXC_WINO_WROWS;
MXC_PRAGMA(omp parallel num_threads(nth))
  {
    const int64_t tb = MXC_WINO_WROWS * g.twp;
    const int64_t nbuf = 4 * (2 * g.twp + 2) + 16 * 8 * g.twp;
    float *v = (float *)mxc_workspace(0, sizeof(float) * (size_t)(16 * c * tb + nbuf));
    float *d = (float *)mxc_workspace(1, sizeof(float) * (size_t)(16 * kp * tb));
    float *du = acc + (int64_t)MXC_TID() * 16 * ps;
    int64_t b;
MXC_PRAGMA(omp for schedule(dynamic))
    for (b = 0; b < nblk; b++) {
      const int64_t r0 = b * MXC_WINO_WROWS;
      const int64_t r1 = r0 + MXC_WINO_WROWS < g.nrow ? r0 + MXC_WINO_WROWS : g.nrow;
      if (v == NULL || d == NULL) {
        err = 1;
        continue;
      }
      mxc_wino_wgt_block(&g, dy, x, r0, r1, du, v, d, v + 16 * c * tb);
    }
  }
  if (err) return -1;
  for (i = 1; i < nth; i++) {
    const float *src = acc + i * 16 * ps;
    int64_t j;
    for (j = 0; j < 16 * ps; j++) acc[j] += src[j];
  }
  for (i = 0; i < k * c; i++) {       /* dw = G^T dU G */
    const int64_t e = (i % c) * kp + i / c;    /* dU^T[p][c][k] */
    float t[3][4], *o = dw + i * 9;
    int a, b;
    for (b = 0; b < 4; b++) {
      const float u0 = acc[(0 * 4 + b) * ps + e], u1 = acc[(1 * 4 + b) * ps + e];
      const float u2 = acc[(2 * 4 + b) * ps + e], u3 = acc[(3 * 4 + b) * ps + e];
      t[0][b] = u0 + 0.5f * (u1 + u2);
      t[1][b] = 0.5f * (u1 - u2);
      t[2][b] = 0.5f * (u1 + u2) + u3;
    }
    for (a = 0; a < 3; a++) {
      o[a * 3 + 0] = t[a][0] + 0.5f * (t[a][1] + t[a][2]);
      o[a * 3 + 1] = 0.5f * (t[a][1] - t[a][2]);
      o[a * 3 + 2] = 0.5f * (t[a][1] + t[a][2]) + t[a][3];
    }
  }
  return 0;
}
#endif /* MXC_WINO */

#endif
