/* Convolution and deconvolution (transposed convolution) kernels, 1-D/2-D/3-D, NC(D)(H)W.
 *
 * Everything is expressed in "convolution sense": X (N, Ci, ID, IH, IW) is convolved with
 * W (Co, Ci/G, KD, KH, KW) into Y (N, Co, OD, OH, OW); 1-D and 2-D problems are 3-D ones with
 * leading spatial extents of 1 (kernel 1, stride 1, dilation 1, pad 0). Three primitives:
 *
 *   forward        Y = W * col(X)              (im2col + GEMM per sample and group)
 *   backward data  dX = col2im(W^T dY)         (GEMM + col2im)
 *   backward weight dW += dY col(X)^T          (im2col + GEMM, accumulated over samples)
 *
 * Convolution forward is `forward`; its backward is `backward data` + `backward weight`.
 * Deconvolution swaps the roles: its input is the convolution's Y and its output the
 * convolution's X, so its forward is `backward data` and its backward is `forward` (data grad)
 * + `backward weight` with X and dY exchanged. Geometry is read from the tensors; iattr carries
 * kernel[3], stride[3], dilate[3], pad[3] (already padded to 3-D by the caller) and groups.
 *
 * The column matrix of one sample and group is (Ci/G * K) x O; it is built in chunks of output
 * rows (od, oh) so that it stays below MXC_CONV_COL_LIMIT elements. Small outputs (O <=
 * MXC_CONV_BATCH_OSZ) instead put blocks of samples side by side, one GEMM per block and group,
 * with Y/dY packed to and from a [Co/G, nb * O] scratch (the forward's bias is the scratch's
 * starting value, so Y is written once); with few output channels per group those blocks use
 * the transposed products (mxc_conv_geom.tt). A 1x1x1 kernel with stride 1 and no padding needs
 * no column matrix (X is it). Inputs with fewer positions than the kernel has taps (one group)
 * take one dense product over all samples instead (convolution_dense.h). 1-D and 2-D problems
 * take im2col/col2im loops without the depth axis (mxc_conv_geom.flat). im2col/col2im use OpenMP threads (rows / channels); the GEMMs run
 * on OpenBLAS's own threads; except that with several threads, problems of one GEMM per sample
 * give each thread a range of samples of its own (mxc_conv_split). float16 is computed in
 * float32.
 */
#ifndef MXC_KERNELS_CONVOLUTION_H
#define MXC_KERNELS_CONVOLUTION_H
#include "kernels/common.h"
#include "mxc/blas.h"
#include "mxc/workspace.h"
#include "kernels/convolution_winograd.h"
#include "kernels/convolution_dense.h"

#define MXC_CONV_COL_LIMIT ((int64_t)1 << 22)   /* elements of one column chunk */
/* One GEMM per sample builds its column matrix in chunks of output rows of about this many
 * elements (1 MiB of float32: it is read back by the GEMM while still in cache), but of at
 * least MXC_CONV_CHUNK_MIN_COLS columns (fewer are too few for the GEMM). Measured, one thread,
 * CPU time, alternated builds, against whole samples (up to 4M elements): ResNet-18's 224px stem
 * (batch 8, 147 rows, 1680-column chunks) forward 28.0-29.8 -> 23.8-25.5 ms, weight gradient
 * 29.9-31.8 -> 27.8-28.8; 1024 columns as the floor: 64->128 3x3 stride 2 (28x28 out, 576 rows)
 * stays whole (chunks of 448 columns made it 5-8% slower). */
#define MXC_CONV_CHUNK_LIMIT ((int64_t)1 << 18)
#define MXC_CONV_CHUNK_MIN_COLS 1024
/* Outputs of at most this many positions per sample take several samples per GEMM (see nb).
 * Measured, one thread, CPU time, alternated builds, 1024 -> 512 (one GEMM per sample from 513
 * positions up): LeNet's first convolution (batch 64, 24x24 out) forward 1.6-1.9 -> 0.64 ms,
 * backward 3.9-4.2 -> 1.8; ResNet-18 224px 64->128 3x3 stride 2 (28x28 out) forward 13.6-13.8 ->
 * 10.6, backward 27.0-27.8 -> 22.1 (its rows go through the AVX-512 stride-2 copies instead of
 * the source table). 512 -> 128: CIFAR ResNet-18's 7x7 stem (batch 32, 16x16 out) forward
 * 3.1-3.3 -> 2.35-2.42, weight gradient 3.55-3.70 -> 2.55-2.81; 224px 128->256 3x3 stride 2
 * (14x14 out) forward 10.8-11.3 -> 10.4-10.5, backward 22.4-23.4 -> 20.7-21.2. */
#ifndef MXC_CONV_BATCH_OSZ
#define MXC_CONV_BATCH_OSZ 128
#endif
/* 1x1 kernels with stride 1 and no padding (X is the column matrix) of at least this many output
 * positions take one GEMM per sample straight from X into Y instead of the blocks above, which
 * copy X into a column matrix and the product back into Y. Measured, batch 8, one thread, ms of
 * forward / backward, blocks -> per sample: 28x28 128->512 10.7/22.9 -> 9.4/19.6, 512->128
 * 11.6/24.2 -> 9.6/19.2; 14x14 1024->256 9.8/20.1 -> 9.4/19.1, 384->64 1.34/2.75 -> 0.99/2.33;
 * but 7x7 512->2048 9.2/18.4 -> 12.1/22.1 and 320->1280 3.7/7.4 -> 4.1/8.1 (49 columns are too
 * few for the GEMM): so 196 positions and up. */
#ifndef MXC_CONV_DIRECT_MIN_OSZ
#define MXC_CONV_DIRECT_MIN_OSZ 128
#endif
/* im2col/col2im/packing of fewer elements than this run on the calling thread only: waking
 * OpenMP threads between two small OpenBLAS calls costs far more than the copy (on few cores the
 * spinning OpenMP and OpenBLAS workers starve each other) */
#define MXC_CONV_PAR_MIN ((int64_t)1 << 16)
#define MXC_CONV_NIATTR 13
#define MXC_CONV_COL_SLOT 4            /* mxc_workspace slot of the column buffer (Winograd: 0-3) */
#define MXC_CONV_TT_MAX_CO 64          /* see mxc_conv_geom.tt */
/* The per-sample weight gradient dW [cog, rows] += dY col^T runs as its transpose
 * dW^T [rows, cog] += col dY^T where cog is at most this and below rows: OpenBLAS is slower with
 * the few rows first. Measured, one thread, CPU time, alternated builds: ResNet-18's 224px stem
 * (cog 64, rows 147, batch 8) 27.0-27.4 -> 24.5-24.9 ms; CIFAR's (batch 32) 2.60 -> 2.49-2.56. */
#define MXC_CONV_WTT_MAX_CO 64
#define MXC_CONV_TT_MIN_ROWS 256

enum { MXC_CONV_FWD = 0, MXC_CONV_BWD = 1, MXC_DECONV_FWD = 2, MXC_DECONV_BWD = 3 };

typedef struct {
  int64_t n, g, ci, co;          /* batch, groups, channels of X and of Y */
  int64_t id[3], od[3], k[3], s[3], d[3], p[3];
  int64_t isz, osz, ksz;         /* spatial sizes of X, Y and the kernel */
  int64_t cig, cog;              /* channels per group */
  int64_t rows;                  /* cig * ksz: rows of the column matrix */
  int64_t ntr;                   /* output rows (od * oh) */
  int64_t tchunk;                /* output rows per column chunk */
  int64_t nb;                    /* > 1: samples per block (one GEMM per block and group) */
  int direct;                    /* 1x1x1 kernel, stride 1, pad 0: col(X) == X */
  int flat;                      /* no depth (1-D and 2-D problems): output row t is oh */
  int tt;                        /* blocks of samples with few output channels: transposed GEMMs */
  int wtt;                       /* per-sample weight gradient with few output channels and more
                                  * column rows: dW^T = col dY^T (see MXC_CONV_WTT_MAX_CO) */
  int dense;                     /* inputs smaller than the kernel: convolution_dense.h */
  int grouped;                   /* few channels per group: convolution_grouped.h */
  int depthwise;                 /* of those, depthwise 3x3: convolution_depthwise.h */
  const int32_t *src;            /* NULL, or blocks of samples: see mxc_conv_col_sources */
  int relu;                      /* forward: y = relu(y) as each part of Y is finished (a ReLU
                                  * folded into the convolution, mxc/executor/fold.py) */
  int split;                     /* > 1: ranges of samples on this many threads (see
                                  * mxc_conv_split_parts); 0 or 1: samples in turn */
  int64_t pcol, pstride;         /* split: each helper's column scratch (elements) and the
                                  * distance between helpers' scratch, after the caller's pcol */
} mxc_conv_geom;

/* Output columns o in [lo, hi) read input column w0 + o * s inside [0, iw); the rest read
 * padding */
static inline void mxc_conv_span(int64_t w0, int64_t s, int64_t iw, int64_t ow, int64_t *lo,
                                 int64_t *hi) {
  int64_t a = w0 < 0 ? (-w0 + s - 1) / s : 0;
  int64_t b = iw - w0 <= 0 ? 0 : (iw - w0 + s - 1) / s;
  if (b > ow) b = ow;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

/* src[kk * osz + o] = the position (flat d, h, w) within one input channel that kernel tap kk
 * of output position o reads, or -1 where it reads padding. Blocks of samples (nb > 1) copy
 * their column matrix through it: rows of a few outputs each (ResNet's 4x4 and 2x2 stages have
 * 4 or 2) spent more time on the bounds of every row than on the copy, and im2col cost two
 * thirds of the 4x4 stage's GEMM. */
static void mxc_conv_col_sources(int32_t *src, const mxc_conv_geom *g) {
  int64_t kk, o;
  for (kk = 0; kk < g->ksz; kk++) {
    const int64_t kz[3] = {kk / (g->k[1] * g->k[2]), (kk / g->k[2]) % g->k[1], kk % g->k[2]};
    for (o = 0; o < g->osz; o++) {
      const int64_t oz[3] = {o / (g->od[1] * g->od[2]), (o / g->od[2]) % g->od[1], o % g->od[2]};
      int64_t pos = 0;
      int a;
      for (a = 0; a < 3 && pos >= 0; a++) {
        const int64_t z = oz[a] * g->s[a] - g->p[a] + kz[a] * g->d[a];
        pos = z < 0 || z >= g->id[a] ? -1 : pos * g->id[a] + z;
      }
      src[kk * g->osz + o] = (int32_t)pos;
    }
  }
}

/* Rows of stride-2 convolutions (ResNet's 7x7 stem and 3x3/1x1 downsampling layers) in im2col
 * and col2im: d[o] = s[2 o] and its adjoint s[2 o] += d[o] for o in [0, n). The scalar loops
 * are not vectorized at the build's baseline ISA; with AVX-512 16 outputs come from two loads and
 * one permute. Measured, one thread, CPU time, alternated builds: ResNet-18's 224px stem
 * (batch 8) forward 34.9-35.9 -> 31.8-32.7 ms; the stride-2 layers that take one GEMM per sample
 * gain more (see MXC_CONV_BATCH_OSZ). */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define MXC_CONV_S2_AVX512 1
static int mxc_conv_avx512(void) {
  static volatile int ok = -1;
  if (ok < 0) {
    __builtin_cpu_init();
    ok = __builtin_cpu_supports("avx512f");
  }
  return ok;
}

/* both read (and the add writes) s[0 .. 2 * (o + 16) - 1] per vector step: only while that stays
 * within s[0 .. 2 (n - 1)], the last element the scalar loop touches */
__attribute__((target("avx512f"))) static void mxc_conv_s2_gather512(float *d, const float *s,
                                                                     int64_t n) {
  const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  int64_t o = 0;
  for (; o + 17 <= n; o += 16) {
    const __m512 a = _mm512_loadu_ps(s + 2 * o), b = _mm512_loadu_ps(s + 2 * o + 16);
    _mm512_storeu_ps(d + o, _mm512_permutex2var_ps(a, ev, b));
  }
  for (; o < n; o++) d[o] = s[2 * o];
}

__attribute__((target("avx512f"))) static void mxc_conv_s2_scatter512(const float *d, float *s,
                                                                      int64_t n) {
  /* the 16 values of d spread to the even lanes of two 16-lane vectors (odd lanes add 0) */
  const __m512i lo = _mm512_set_epi32(16, 7, 16, 6, 16, 5, 16, 4, 16, 3, 16, 2, 16, 1, 16, 0);
  const __m512i hi = _mm512_set_epi32(16, 15, 16, 14, 16, 13, 16, 12, 16, 11, 16, 10, 16, 9, 16, 8);
  const __m512 zero = _mm512_setzero_ps();
  int64_t o = 0;
  for (; o + 17 <= n; o += 16) {
    const __m512 v = _mm512_loadu_ps(d + o);
    _mm512_storeu_ps(s + 2 * o, _mm512_add_ps(_mm512_loadu_ps(s + 2 * o),
                                              _mm512_permutex2var_ps(v, lo, zero)));
    _mm512_storeu_ps(s + 2 * o + 16, _mm512_add_ps(_mm512_loadu_ps(s + 2 * o + 16),
                                                   _mm512_permutex2var_ps(v, hi, zero)));
  }
  for (; o < n; o++) s[2 * o] += d[o];
}
#endif

/* d[o] = s[o * st] for o in [0, n) */
static inline void mxc_conv_gather_f32(float *d, const float *s, int64_t n, int64_t st) {
  int64_t o;
#ifdef MXC_CONV_S2_AVX512
  if (st == 2 && n > 16 && mxc_conv_avx512()) {
    mxc_conv_s2_gather512(d, s, n);
    return;
  }
#endif
  for (o = 0; o < n; o++) d[o] = s[o * st];
}

/* s[o * st] += d[o] for o in [0, n) */
static inline void mxc_conv_scatter_f32(const float *d, float *s, int64_t n, int64_t st) {
  int64_t o;
#ifdef MXC_CONV_S2_AVX512
  if (st == 2 && n > 16 && mxc_conv_avx512()) {
    mxc_conv_s2_scatter512(d, s, n);
    return;
  }
#endif
  for (o = 0; o < n; o++) s[o * st] += d[o];
}

static inline void mxc_conv_gather_f64(double *d, const double *s, int64_t n, int64_t st) {
  int64_t o;
  for (o = 0; o < n; o++) d[o] = s[o * st];
}

static inline void mxc_conv_scatter_f64(const double *d, double *s, int64_t n, int64_t st) {
  int64_t o;
  for (o = 0; o < n; o++) s[o * st] += d[o];
}

#include "kernels/convolution_grouped.h" /* needs mxc_conv_geom and mxc_conv_span */
#include "kernels/convolution_depthwise.h"

/* x: the convolution-sense input tensor, y: the convolution-sense output tensor */
static int mxc_conv_geom_make(mxc_conv_geom *g, const mxc_tensor *x, const mxc_tensor *y,
                              mxc_opcall *call) {
  int nsp = x->ndim - 2, j;
  if (call->niattr < MXC_CONV_NIATTR || nsp < 1 || nsp > 3 || y->ndim != x->ndim) {
    snprintf(call->err, MXC_ERR_LEN, "convolution: bad kernel call (%d attrs, ndim %d)",
             call->niattr, x->ndim);
    return -1;
  }
  g->relu = 0;
  g->n = x->shape[0];
  g->ci = x->shape[1];
  g->co = y->shape[1];
  g->g = call->iattr[12];
  for (j = 0; j < 3; j++) {
    int a = j - (3 - nsp);
    g->id[j] = a < 0 ? 1 : x->shape[2 + a];
    g->od[j] = a < 0 ? 1 : y->shape[2 + a];
    g->k[j] = call->iattr[j];
    g->s[j] = call->iattr[3 + j];
    g->d[j] = call->iattr[6 + j];
    g->p[j] = call->iattr[9 + j];
  }
  if (g->g < 1 || g->ci % g->g || g->co % g->g) {
    snprintf(call->err, MXC_ERR_LEN, "convolution: %lld groups do not divide channels",
             (long long)g->g);
    return -1;
  }
  g->isz = g->id[0] * g->id[1] * g->id[2];
  g->osz = g->od[0] * g->od[1] * g->od[2];
  g->ksz = g->k[0] * g->k[1] * g->k[2];
  g->cig = g->ci / g->g;
  g->cog = g->co / g->g;
  g->rows = g->cig * g->ksz;
  g->ntr = g->od[0] * g->od[1];
  g->flat = g->id[0] == 1 && g->od[0] == 1 && g->k[0] == 1 && g->p[0] == 0;
  g->direct = g->ksz == 1 && g->s[0] == 1 && g->s[1] == 1 && g->s[2] == 1 && g->p[0] == 0 &&
              g->p[1] == 0 && g->p[2] == 0;
  {
    int64_t per = g->rows * g->od[2];
    int64_t t = per > 0 ? MXC_CONV_CHUNK_LIMIT / per : g->ntr;
    if (t * g->od[2] < MXC_CONV_CHUNK_MIN_COLS) t = (MXC_CONV_CHUNK_MIN_COLS + g->od[2] - 1) / g->od[2];
    if (t * per > MXC_CONV_COL_LIMIT) t = MXC_CONV_COL_LIMIT / per;
    if (t < 1) t = 1;
    if (t > g->ntr) t = g->ntr;
    g->tchunk = t < 1 ? 1 : t;
  }
  /* Small outputs: one GEMM per sample would have N = osz columns, far too few for BLAS. Blocks
   * of nb samples are laid side by side in one column matrix [rows, nb * osz] followed by a
   * [cog, nb * osz] scratch for the packed Y/dY block, all within MXC_CONV_COL_LIMIT. */
  g->nb = 0;
  g->src = NULL;
  if (g->osz <= MXC_CONV_BATCH_OSZ && g->n > 1 &&
      !(g->direct && g->osz >= MXC_CONV_DIRECT_MIN_OSZ)) {
    int64_t per = (g->rows + g->cog) * g->osz;
    int64_t nb = per > 0 ? MXC_CONV_COL_LIMIT / per : 0;
    if (nb > g->n) nb = g->n;
    g->nb = nb > 1 ? nb : 0;
  }
  /* OpenBLAS is up to 1.5x slower on a row-major product with few rows (cog) than on its
   * transpose (M = cog 50 or 64, K 500, N 4096: LeNet's second convolution): blocks then compute
   * Y^T = col^T W^T and dW^T = col dY^T, transposed back while unpacking */
  g->tt = g->nb > 1 && g->cog <= MXC_CONV_TT_MAX_CO && g->rows >= MXC_CONV_TT_MIN_ROWS;
  g->wtt = g->nb == 0 && !g->direct && g->cog <= MXC_CONV_WTT_MAX_CO && g->rows > g->cog;
  g->dense = g->g == 1 && g->isz < g->ksz && g->n >= MXC_CONV_DENSE_MIN_N &&
             g->co * g->osz * g->ci * g->isz <= MXC_CONV_DENSE_LIMIT;
  g->grouped = !g->dense && mxc_conv_grouped_usable(g);
  g->depthwise = g->grouped && mxc_convdw_usable(g);
  return 0;
}

/* ---- typed primitives ------------------------------------------------------------------------ */
#define MXC_CONV_DEFINE(T, SUF, GEMM)                                                              \
/* col[r, j * per + (t - t0) * OW + ow] = X_j[c, zd, zh, zw] for output rows t in [t0, t1) of the   \
 * nb samples X_j = x + j * xs (per = (t1 - t0) * OW columns each; ld: the row stride of col) */    \
static void mxc_im2col_##SUF(const T *x, T *col, const mxc_conv_geom *g, int64_t t0, int64_t t1,    \
                             int64_t nb, int64_t xs, int64_t ld, int nt) {                          \
  const int64_t ow = g->od[2], per = (t1 - t0) * ow;                                                \
  int64_t r;                                                                                        \
  const int par = g->rows * per * nb >= MXC_CONV_PAR_MIN;                                           \
  (void)nt;                                                                                         \
  (void)par;                                                                                        \
  if (g->src && t0 == 0 && t1 == g->ntr) { /* whole samples: through the source table */           \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
    for (r = 0; r < g->rows; r++) {                                                                 \
      const int32_t *sp = g->src + (r % g->ksz) * per;                                              \
      int64_t j, o;                                                                                 \
      for (j = 0; j < nb; j++) {                                                                    \
        const T *xc = x + j * xs + (r / g->ksz) * g->isz;                                           \
        T *drow = col + r * ld + j * per;                                                           \
        for (o = 0; o < per; o++) { /* padding reads position 0 and keeps 0 */                      \
          const int32_t q = sp[o];                                                                  \
          const T v = xc[q < 0 ? 0 : q];                                                            \
          drow[o] = q < 0 ? (T)0 : v;                                                               \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
  if (g->flat) { /* no depth: the output row t is oh itself, no divisions per row */              \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
    for (r = 0; r < g->rows; r++) {                                                                 \
      const int64_t c = r / g->ksz, kk = r % g->ksz, kh = kk / g->k[2], kw = kk % g->k[2];          \
      const int64_t iw = g->id[2], sw = g->s[2], w0 = kw * g->d[2] - g->p[2];                       \
      const int64_t h0 = kh * g->d[1] - g->p[1];                                                    \
      int64_t lo, hi, j, t, o;                                                                      \
      mxc_conv_span(w0, sw, iw, ow, &lo, &hi);                                                      \
      for (j = 0; j < nb; j++) {                                                                    \
        const T *xc = x + j * xs + c * g->isz;                                                      \
        T *drow = col + r * ld + j * per;                                                           \
        for (t = t0; t < t1; t++, drow += ow) {                                                     \
          const int64_t zh = t * g->s[1] + h0;                                                      \
          const T *xrow = xc + zh * iw + w0;                                                        \
          if (zh < 0 || zh >= g->id[1]) {                                                           \
            for (o = 0; o < ow; o++) drow[o] = 0;                                                   \
            continue;                                                                               \
          }                                                                                         \
          for (o = 0; o < lo; o++) drow[o] = 0;                                                     \
          if (sw == 1) {                                                                            \
            for (o = lo; o < hi; o++) drow[o] = xrow[o];                                            \
          } else {                                                                                  \
            mxc_conv_gather_##SUF(drow + lo, xrow + lo * sw, hi - lo, sw);                        \
          }                                                                                         \
          for (o = hi; o < ow; o++) drow[o] = 0;                                                    \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
  for (r = 0; r < g->rows; r++) {                                                                   \
    const int64_t c = r / g->ksz, kk = r % g->ksz;                                                  \
    const int64_t kd = kk / (g->k[1] * g->k[2]), kh = (kk / g->k[2]) % g->k[1], kw = kk % g->k[2];  \
    const int64_t w0 = kw * g->d[2] - g->p[2];                                                      \
    int64_t lo = 0, hi = ow, t, j;                                                                  \
    if (g->s[2] == 1) {                                                                             \
      if (w0 < 0) lo = -w0;                                                                         \
      if (g->id[2] - w0 < hi) hi = g->id[2] - w0;                                                   \
      if (hi < lo) hi = lo;                                                                         \
      if (lo > ow) lo = hi = ow;                                                                    \
    }                                                                                               \
    for (j = 0; j < nb; j++) {                                                                      \
      const T *xc = x + j * xs + c * g->isz;                                                        \
      T *dst = col + r * ld + j * per;                                                              \
      for (t = t0; t < t1; t++) {                                                                   \
        const int64_t odx = t / g->od[1], ohx = t % g->od[1];                                       \
        const int64_t zd = odx * g->s[0] - g->p[0] + kd * g->d[0];                                  \
        const int64_t zh = ohx * g->s[1] - g->p[1] + kh * g->d[1];                                  \
        T *drow = dst + (t - t0) * ow;                                                              \
        const T *xrow;                                                                              \
        int64_t o;                                                                                  \
        if (zd < 0 || zd >= g->id[0] || zh < 0 || zh >= g->id[1]) {                                 \
          memset(drow, 0, sizeof(T) * (size_t)ow);                                                  \
          continue;                                                                                 \
        }                                                                                           \
        xrow = xc + (zd * g->id[1] + zh) * g->id[2];                                                \
        if (g->s[2] == 1) {                                                                         \
          for (o = 0; o < lo; o++) drow[o] = 0;                                                     \
          if (hi > lo) memcpy(drow + lo, xrow + w0 + lo, sizeof(T) * (size_t)(hi - lo));            \
          for (o = hi; o < ow; o++) drow[o] = 0;                                                    \
        } else {                                                                                    \
          for (o = 0; o < ow; o++) {                                                                \
            const int64_t iw = w0 + o * g->s[2];                                                    \
            drow[o] = (iw >= 0 && iw < g->id[2]) ? xrow[iw] : (T)0;                                 \
          }                                                                                         \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* X_j[c, zd, zh, zw] += col[r, ...]: the adjoint of im2col; threads own channels */                \
static void mxc_col2im_##SUF(const T *col, T *x, const mxc_conv_geom *g, int64_t t0, int64_t t1,    \
                             int64_t nb, int64_t xs, int64_t ld, int nt) {                          \
  const int64_t ow = g->od[2], per = (t1 - t0) * ow;                                                \
  int64_t c;                                                                                        \
  const int par = g->rows * per * nb >= MXC_CONV_PAR_MIN;                                           \
  (void)nt;                                                                                         \
  (void)par;                                                                                        \
  if (g->src && t0 == 0 && t1 == g->ntr) { /* as im2col's: a tap reads each position once */      \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
    for (c = 0; c < g->cig; c++) {                                                                  \
      int64_t j, kk, o;                                                                             \
      for (j = 0; j < nb; j++) {                                                                    \
        T *xc = x + j * xs + c * g->isz;                                                            \
        for (kk = 0; kk < g->ksz; kk++) {                                                           \
          const int32_t *sp = g->src + kk * per;                                                    \
          const T *srow = col + (c * g->ksz + kk) * ld + j * per;                                   \
          for (o = 0; o < per; o++)                                                                 \
            if (sp[o] >= 0) xc[sp[o]] += srow[o];                                                   \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
  if (g->flat) { /* no depth: as im2col's flat case */                                            \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
    for (c = 0; c < g->cig; c++) {                                                                  \
      const int64_t iw = g->id[2], sw = g->s[2];                                                    \
      int64_t kk, j, t, o;                                                                          \
      for (kk = 0; kk < g->ksz; kk++) {                                                             \
        const int64_t kh = kk / g->k[2], kw = kk % g->k[2];                                         \
        const int64_t w0 = kw * g->d[2] - g->p[2], h0 = kh * g->d[1] - g->p[1];                     \
        int64_t lo, hi;                                                                             \
        mxc_conv_span(w0, sw, iw, ow, &lo, &hi);                                                    \
        for (j = 0; j < nb; j++) {                                                                  \
          T *xc = x + j * xs + c * g->isz;                                                          \
          const T *srow = col + (c * g->ksz + kk) * ld + j * per;                                   \
          for (t = t0; t < t1; t++, srow += ow) {                                                   \
            const int64_t zh = t * g->s[1] + h0;                                                    \
            T *xw = xc + zh * iw + w0;                                                              \
            if (zh < 0 || zh >= g->id[1]) continue;                                                 \
            if (sw == 1) {                                                                          \
              for (o = lo; o < hi; o++) xw[o] += srow[o];                                           \
            } else {                                                                                \
              mxc_conv_scatter_##SUF(srow + lo, xw + lo * sw, hi - lo, sw);                       \
            }                                                                                       \
          }                                                                                         \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
  for (c = 0; c < g->cig; c++) {                                                                    \
    int64_t kk, j;                                                                                  \
    for (j = 0; j < nb; j++) {                                                                      \
      T *xc = x + j * xs + c * g->isz;                                                              \
      for (kk = 0; kk < g->ksz; kk++) {                                                             \
        const int64_t kd = kk / (g->k[1] * g->k[2]), kh = (kk / g->k[2]) % g->k[1];                 \
        const int64_t kw = kk % g->k[2];                                                            \
        const T *src = col + (c * g->ksz + kk) * ld + j * per;                                      \
        const int64_t w0 = kw * g->d[2] - g->p[2];                                                  \
        int64_t t, lo = w0 < 0 ? -w0 : 0, hi = g->id[2] - w0 < ow ? g->id[2] - w0 : ow;             \
        if (hi < lo) hi = lo;                                                                       \
        for (t = t0; t < t1; t++) {                                                                 \
          const int64_t odx = t / g->od[1], ohx = t % g->od[1];                                     \
          const int64_t zd = odx * g->s[0] - g->p[0] + kd * g->d[0];                                \
          const int64_t zh = ohx * g->s[1] - g->p[1] + kh * g->d[1];                                \
          const T *srow = src + (t - t0) * ow;                                                      \
          T *xrow;                                                                                  \
          int64_t o;                                                                                \
          if (zd < 0 || zd >= g->id[0] || zh < 0 || zh >= g->id[1]) continue;                       \
          xrow = xc + (zd * g->id[1] + zh) * g->id[2];                                              \
          if (g->s[2] == 1) {                                                                       \
            T *xw = xrow + w0;                                                                      \
            for (o = lo; o < hi; o++) xw[o] += srow[o];                                             \
          } else {                                                                                  \
            for (o = 0; o < ow; o++) {                                                              \
              const int64_t iw = w0 + o * g->s[2];                                                  \
              if (iw >= 0 && iw < g->id[2]) xrow[iw] += srow[o];                                    \
            }                                                                                       \
          }                                                                                         \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* Moves one group's block of nb samples between Y's layout (y: the group's first channel of the    \
 * block's first sample, sample stride ys = co * osz) and a packed [cog, nb * osz] matrix z.        \
 * dir 0: z = Y block (gather); dir 1: Y block = z (scatter). */                                   \
static void mxc_conv_pack_##SUF(T *y, T *z, const mxc_conv_geom *g, int64_t nb, int64_t ys,         \
                                int dir, int nt) {                                                  \
  const int64_t osz = g->osz, ld = nb * osz;                                                        \
  int64_t c;                                                                                        \
  const int par = g->cog * ld >= MXC_CONV_PAR_MIN;                                                  \
  (void)nt;                                                                                         \
  (void)par;                                                                                        \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
  for (c = 0; c < g->cog; c++) {                                                                    \
    int64_t j;                                                                                      \
    for (j = 0; j < nb; j++) {                                                                      \
      T *yr = y + j * ys + c * osz, *zr = z + c * ld + j * osz;                                     \
      if (dir == 0)                                                                                 \
        memcpy(zr, yr, sizeof(T) * (size_t)osz);                                                    \
      else                                                                                          \
        memcpy(yr, zr, sizeof(T) * (size_t)osz);                                                    \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* y = relu(y) over len elements, as the relu operator (nan stays nan, -0 becomes 0): a ReLU        \
 * folded into the forward, applied to each part of Y right after it is written */                  \
static void mxc_conv_relu_##SUF(T *y, int64_t len, int nt) {                                        \
  int64_t i;                                                                                        \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (len > 32768))                      \
  for (i = 0; i < len; i++) y[i] = (y[i] > 0 || y[i] != y[i]) ? y[i] : (T)0;                        \
}                                                                                                   \
                                                                                                    \
/* relu over the Y block of samples [n, n + m) and group gr (the sample blocks' epilogue) */        \
static void mxc_conv_relu_block_##SUF(T *y, const mxc_conv_geom *g, int64_t n, int64_t m,           \
                                     int64_t gr, int nt) {                                          \
  int64_t q;                                                                                        \
  for (q = 0; q < m; q++)                                                                           \
    mxc_conv_relu_##SUF(y + ((n + q) * g->co + gr * g->cog) * g->osz, g->cog * g->osz, nt);         \
}                                                                                                   \
                                                                                                    \
/* y[n, c, :] = b[c] (set) or += b[c] */                                                            \
static void mxc_conv_bias_##SUF(T *y, const T *b, int64_t n, int64_t c, int64_t sz, int add,       \
                                int nt) {                                                           \
  int64_t i;                                                                                        \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (n * c * sz > 32768))              \
  for (i = 0; i < n * c; i++) {                                                                     \
    T *row = y + i * sz;                                                                            \
    const T v = b[i % c];                                                                           \
    int64_t j;                                                                                      \
    if (add) {                                                                                      \
      for (j = 0; j < sz; j++) row[j] += v;                                                         \
    } else {                                                                                        \
      for (j = 0; j < sz; j++) row[j] = v;                                                          \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* db[c] = sum over n and positions of dy[n, c, :] */                                               \
static void mxc_conv_bias_grad_##SUF(const T *dy, T *db, int64_t n, int64_t c, int64_t sz,         \
                                     int nt) {                                                      \
  int64_t ch;                                                                                       \
  (void)nt;                                                                                         \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (n * c * sz > 32768))              \
  for (ch = 0; ch < c; ch++) {                                                                      \
    double acc = 0;                                                                                 \
    int64_t i, j;                                                                                   \
    for (i = 0; i < n; i++) {                                                                       \
      const T *row = dy + (i * c + ch) * sz;                                                        \
      T part = 0;                                                                                   \
      for (j = 0; j < sz; j++) part += row[j];                                                      \
      acc += (double)part;                                                                          \
    }                                                                                               \
    db[ch] = (T)acc;                                                                                \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* Y block (as mxc_conv_pack's) = the transpose of z [nb * osz, cog] */                          \
static void mxc_conv_unpack_t_##SUF(T *y, const T *z, const mxc_conv_geom *g, int64_t nb,          \
                                    int64_t ys, int nt) {                                           \
  const int64_t osz = g->osz, cog = g->cog;                                                         \
  int64_t j;                                                                                        \
  const int par = cog * nb * osz >= MXC_CONV_PAR_MIN;                                               \
  (void)nt;                                                                                         \
  (void)par;                                                                                        \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (par))                              \
  for (j = 0; j < nb; j++) {                                                                        \
    const T *zj = z + j * osz * cog;                                                                \
    int64_t c, s;                                                                                   \
    for (c = 0; c < cog; c++) {                                                                     \
      T *yr = y + j * ys + c * osz;                                                                 \
      for (s = 0; s < osz; s++) yr[s] = zj[s * cog + c];                                            \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* Y = W * col(X) + bias (bias: NULL or co values). Per-sample GEMMs start from Y filled with  \
 * the bias (beta 1); blocks of samples start their packed product from the bias instead, so that \
 * the block is copied into Y once (no bias pass over Y, no zeroing of the product by BLAS). */    \
static void mxc_conv_forward_##SUF(const T *x, const T *w, T *y, const mxc_conv_geom *g, T *col,    \
                                   const T *bias, int nt, int64_t n0, int64_t n1) {                 \
  int64_t n, gr, t0;                                                                                \
  const T beta = bias ? (T)1 : (T)0;                                                                \
  if (g->nb > 1) { /* small outputs: several samples per GEMM */                                    \
    T *z = col + g->rows * g->nb * g->osz;                                                          \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      const T *wg = w + gr * g->cog * g->rows;                                                      \
      for (n = n0; n < n1; n += g->nb) {                                                            \
        const int64_t m = n1 - n < g->nb ? n1 - n : g->nb, ld = m * g->osz;                         \
        mxc_im2col_##SUF(x + (n * g->ci + gr * g->cig) * g->isz, col, g, 0, g->ntr, m,              \
                         g->ci * g->isz, ld, nt);                                                   \
        if (g->tt) { /* z = Y^T block [ld, cog] */                                                \
          int64_t q;                                                                                \
          if (bias)                                                                                 \
            for (q = 0; q < ld; q++)                                                                \
              memcpy(z + q * g->cog, bias + gr * g->cog, sizeof(T) * (size_t)g->cog);               \
          GEMM(MXC_CblasRowMajor, MXC_CblasTrans, MXC_CblasTrans, (int)ld, (int)g->cog,             \
               (int)g->rows, (T)1, col, (int)ld, wg, (int)g->rows, beta, z, (int)g->cog);           \
          mxc_conv_unpack_t_##SUF(y + (n * g->co + gr * g->cog) * g->osz, z, g, m,                  \
                                  g->co * g->osz, nt);                                              \
          if (g->relu) mxc_conv_relu_block_##SUF(y, g, n, m, gr, nt);                               \
          continue;                                                                                 \
        }                                                                                           \
        if (bias) mxc_conv_bias_##SUF(z, bias + gr * g->cog, 1, g->cog, ld, 0, nt);                 \
        GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasNoTrans, (int)g->cog, (int)ld,           \
             (int)g->rows, (T)1, wg, (int)g->rows, col, (int)ld, beta, z, (int)ld);                 \
        mxc_conv_pack_##SUF(y + (n * g->co + gr * g->cog) * g->osz, z, g, m, g->co * g->osz, 1,     \
                            nt);                                                                    \
        if (g->relu) mxc_conv_relu_block_##SUF(y, g, n, m, gr, nt);                                 \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
  if (bias) mxc_conv_bias_##SUF(y + n0 * g->co * g->osz, bias, n1 - n0, g->co, g->osz, 0, nt);     \
  for (n = n0; n < n1; n++) {                                                                       \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      const T *xg = x + (n * g->ci + gr * g->cig) * g->isz;                                         \
      const T *wg = w + gr * g->cog * g->rows;                                                      \
      T *yg = y + (n * g->co + gr * g->cog) * g->osz;                                               \
      if (g->direct) {                                                                              \
        GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasNoTrans, (int)g->cog, (int)g->osz,       \
             (int)g->rows, (T)1, wg, (int)g->rows, xg, (int)g->isz, beta, yg, (int)g->osz);         \
        continue;                                                                                   \
      }                                                                                             \
      for (t0 = 0; t0 < g->ntr; t0 += g->tchunk) {                                                  \
        const int64_t t1 = t0 + g->tchunk < g->ntr ? t0 + g->tchunk : g->ntr;                       \
        const int64_t ncol = (t1 - t0) * g->od[2];                                                  \
        mxc_im2col_##SUF(xg, col, g, t0, t1, 1, 0, ncol, nt);                                       \
        GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasNoTrans, (int)g->cog, (int)ncol,         \
             (int)g->rows, (T)1, wg, (int)g->rows, col, (int)ncol, beta, yg + t0 * g->od[2],        \
             (int)g->osz);                                                                          \
      }                                                                                             \
    }                                                                                               \
    if (g->relu) mxc_conv_relu_##SUF(y + n * g->co * g->osz, g->co * g->osz, nt);                   \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* dX = col2im(W^T dY) (dX is zeroed here) */                                                       \
static void mxc_conv_bwd_data_##SUF(const T *dy, const T *w, T *dx, const mxc_conv_geom *g,         \
                                    T *col, int nt, int64_t n0, int64_t n1) {                       \
  int64_t n, gr, t0;                                                                                \
  if (!g->direct || g->nb > 1)                                                                      \
    memset(dx + n0 * g->ci * g->isz, 0, sizeof(T) * (size_t)((n1 - n0) * g->ci * g->isz));          \
  if (g->nb > 1) { /* small outputs: several samples per GEMM */                                    \
    T *z = col + g->rows * g->nb * g->osz;                                                          \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      const T *wg = w + gr * g->cog * g->rows;                                                      \
      for (n = n0; n < n1; n += g->nb) {                                                            \
        const int64_t m = n1 - n < g->nb ? n1 - n : g->nb, ld = m * g->osz;                         \
        mxc_conv_pack_##SUF((T *)(dy + (n * g->co + gr * g->cog) * g->osz), z, g, m,                \
                            g->co * g->osz, 0, nt);                                                 \
        GEMM(MXC_CblasRowMajor, MXC_CblasTrans, MXC_CblasNoTrans, (int)g->rows, (int)ld,            \
             (int)g->cog, (T)1, wg, (int)g->rows, z, (int)ld, (T)0, col, (int)ld);                  \
        mxc_col2im_##SUF(col, dx + (n * g->ci + gr * g->cig) * g->isz, g, 0, g->ntr, m,             \
                         g->ci * g->isz, ld, nt);                                                   \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
  for (n = n0; n < n1; n++) {                                                                       \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      T *xg = dx + (n * g->ci + gr * g->cig) * g->isz;                                              \
      const T *wg = w + gr * g->cog * g->rows;                                                      \
      const T *yg = dy + (n * g->co + gr * g->cog) * g->osz;                                        \
      if (g->direct) {                                                                              \
        GEMM(MXC_CblasRowMajor, MXC_CblasTrans, MXC_CblasNoTrans, (int)g->rows, (int)g->osz,        \
             (int)g->cog, (T)1, wg, (int)g->rows, yg, (int)g->osz, (T)0, xg, (int)g->isz);          \
        continue;                                                                                   \
      }                                                                                             \
      for (t0 = 0; t0 < g->ntr; t0 += g->tchunk) {                                                  \
        const int64_t t1 = t0 + g->tchunk < g->ntr ? t0 + g->tchunk : g->ntr;                       \
        const int64_t ncol = (t1 - t0) * g->od[2];                                                  \
        GEMM(MXC_CblasRowMajor, MXC_CblasTrans, MXC_CblasNoTrans, (int)g->rows, (int)ncol,          \
             (int)g->cog, (T)1, wg, (int)g->rows, yg + t0 * g->od[2], (int)g->osz, (T)0, col,       \
             (int)ncol);                                                                            \
        mxc_col2im_##SUF(col, xg, g, t0, t1, 1, 0, ncol, nt);                                       \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
                                                                                                    \
/* dW = sum over samples of dY col(X)^T */                                                          \
static void mxc_conv_bwd_weight_##SUF(const T *dy, const T *x, T *dw, const mxc_conv_geom *g,       \
                                      T *col, int nt, int64_t n0, int64_t n1) {                     \
  int64_t n, gr, t0;                                                                                \
  memset(dw, 0, sizeof(T) * (size_t)(g->co * g->rows));                                             \
  if (g->nb > 1) { /* small outputs: several samples per GEMM */                                    \
    T *z = col + g->rows * g->nb * g->osz;                                                          \
    T *wt = z + g->cog * g->nb * g->osz; /* tt: dW^T [rows, cog] of the group */                   \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      T *wg = dw + gr * g->cog * g->rows;                                                           \
      if (g->tt) memset(wt, 0, sizeof(T) * (size_t)(g->rows * g->cog));                            \
      for (n = n0; n < n1; n += g->nb) {                                                            \
        const int64_t m = n1 - n < g->nb ? n1 - n : g->nb, ld = m * g->osz;                         \
        mxc_conv_pack_##SUF((T *)(dy + (n * g->co + gr * g->cog) * g->osz), z, g, m,                \
                            g->co * g->osz, 0, nt);                                                 \
        mxc_im2col_##SUF(x + (n * g->ci + gr * g->cig) * g->isz, col, g, 0, g->ntr, m,              \
                         g->ci * g->isz, ld, nt);                                                   \
        if (g->tt)                                                                                  \
          GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasTrans, (int)g->rows, (int)g->cog,      \
               (int)ld, (T)1, col, (int)ld, z, (int)ld, (T)1, wt, (int)g->cog);                     \
        else                                                                                        \
          GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasTrans, (int)g->cog, (int)g->rows,      \
               (int)ld, (T)1, z, (int)ld, col, (int)ld, (T)1, wg, (int)g->rows);                    \
      }                                                                                             \
      if (g->tt) {                                                                                  \
        int64_t c, r;                                                                               \
        for (c = 0; c < g->cog; c++)                                                                \
          for (r = 0; r < g->rows; r++) wg[c * g->rows + r] = wt[r * g->cog + c];                   \
      }                                                                                             \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
  if (g->wtt) { /* per group: dW^T [rows, cog] += col dY^T over samples, then transposed */      \
    T *wt = col + g->rows * g->tchunk * g->od[2];                                                   \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      T *wg = dw + gr * g->cog * g->rows;                                                           \
      int64_t c, r;                                                                                 \
      memset(wt, 0, sizeof(T) * (size_t)(g->rows * g->cog));                                        \
      for (n = n0; n < n1; n++) {                                                                   \
        const T *xg = x + (n * g->ci + gr * g->cig) * g->isz;                                       \
        const T *yg = dy + (n * g->co + gr * g->cog) * g->osz;                                      \
        for (t0 = 0; t0 < g->ntr; t0 += g->tchunk) {                                                \
          const int64_t t1 = t0 + g->tchunk < g->ntr ? t0 + g->tchunk : g->ntr;                     \
          const int64_t ncol = (t1 - t0) * g->od[2];                                                \
          mxc_im2col_##SUF(xg, col, g, t0, t1, 1, 0, ncol, nt);                                     \
          GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasTrans, (int)g->rows, (int)g->cog,      \
               (int)ncol, (T)1, col, (int)ncol, yg + t0 * g->od[2], (int)g->osz, (T)1, wt,          \
               (int)g->cog);                                                                        \
        }                                                                                           \
      }                                                                                             \
      for (c = 0; c < g->cog; c++)                                                                  \
        for (r = 0; r < g->rows; r++) wg[c * g->rows + r] = wt[r * g->cog + c];                     \
    }                                                                                               \
    return;                                                                                         \
  }                                                                                                 \
  for (n = n0; n < n1; n++) {                                                                       \
    for (gr = 0; gr < g->g; gr++) {                                                                 \
      const T *xg = x + (n * g->ci + gr * g->cig) * g->isz;                                         \
      T *wg = dw + gr * g->cog * g->rows;                                                           \
      const T *yg = dy + (n * g->co + gr * g->cog) * g->osz;                                        \
      if (g->direct) {                                                                              \
        GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasTrans, (int)g->cog, (int)g->rows,        \
             (int)g->osz, (T)1, yg, (int)g->osz, xg, (int)g->isz, (T)1, wg, (int)g->rows);          \
        continue;                                                                                   \
      }                                                                                             \
      for (t0 = 0; t0 < g->ntr; t0 += g->tchunk) {                                                  \
        const int64_t t1 = t0 + g->tchunk < g->ntr ? t0 + g->tchunk : g->ntr;                       \
        const int64_t ncol = (t1 - t0) * g->od[2];                                                  \
        mxc_im2col_##SUF(xg, col, g, t0, t1, 1, 0, ncol, nt);                                       \
        GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasTrans, (int)g->cog, (int)g->rows,        \
             (int)ncol, (T)1, yg + t0 * g->od[2], (int)g->osz, col, (int)ncol, (T)1, wg,            \
             (int)g->rows);                                                                         \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
}                                                                                                   \
/* mxc_conv_part for g->dense: col holds Wd (then dWd) followed by the tap table */                \
static void mxc_conv_dense_part_##SUF(int mode, const mxc_conv_geom *g, const T *a, const T *a2,   \
                                      const T *w, const T *b, T *o0, T *o1, T *col, int nt,        \
                                      int64_t n0, int64_t n1) {                                    \
  const int64_t m = g->co * g->osz, kk = g->ci * g->isz, n = n1 - n0;                              \
  int32_t *tap = (int32_t *)(col + m * kk);                                                        \
  /* sample offsets into the convolution-sense X-shaped and Y-shaped operands */                   \
  const int64_t xo = n0 * kk, yo = n0 * m;                                                         \
  mxc_conv_dense_taps(tap, g->od, g->id, g->k, g->s, g->d, g->p);                                  \
  if (o0) /* every mode's first output is a product with Wd */                                     \
    mxc_conv_dense_move_##SUF((T *)w, col, tap, g->co, g->ci, g->osz, g->isz, g->ksz, 0, nt);      \
  switch (mode) {                                                                                  \
  case MXC_CONV_FWD: /* a = X, o0 = Y */                                                           \
    if (b) mxc_conv_bias_##SUF(o0 + yo, b, n, g->co, g->osz, 0, nt);                               \
    mxc_conv_dense_forward_##SUF(a + xo, col, o0 + yo, n, m, kk, b ? (T)1 : (T)0);                 \
    return;                                                                                        \
  case MXC_CONV_BWD: /* a = dY, a2 = X; o0 = dX (or NULL), o1 = dW */                              \
    if (o0) mxc_conv_dense_bwd_data_##SUF(a + yo, col, o0 + xo, n, m, kk);                         \
    mxc_conv_dense_bwd_weight_##SUF(a + yo, a2 + xo, col, n, m, kk);                               \
    break;                                                                                         \
  case MXC_DECONV_FWD: /* a = conv-sense Y, o0 = conv-sense X */                                   \
    mxc_conv_dense_bwd_data_##SUF(a + yo, col, o0 + xo, n, m, kk);                                 \
    return;                                                                                        \
  default: /* MXC_DECONV_BWD: a = dOut (conv-sense X), a2 = data (conv-sense Y) */                 \
    if (o0) mxc_conv_dense_forward_##SUF(a + xo, col, o0 + yo, n, m, kk, (T)0);                    \
    mxc_conv_dense_bwd_weight_##SUF(a2 + yo, a + xo, col, n, m, kk);                               \
    break;                                                                                         \
  }                                                                                                \
  mxc_conv_dense_move_##SUF(o1, col, tap, g->co, g->ci, g->osz, g->isz, g->ksz, 1, nt);            \
}                                                                                                  \
                                                                                                   \
/* The sample-range part of one operator call (with the forward's bias; exec adds the others) */ \
static void mxc_conv_part_##SUF(int mode, const mxc_conv_geom *g, const T *a, const T *a2,         \
                                const T *w, const T *b, T *o0, T *o1, T *col, int nt,              \
                                int64_t n0, int64_t n1) {                                          \
  if (g->dense || g->depthwise || g->grouped) {                                                    \
    if (g->dense)                                                                                  \
      mxc_conv_dense_part_##SUF(mode, g, a, a2, w, b, o0, o1, col, nt, n0, n1);                    \
    else if (g->depthwise)                                                                         \
      mxc_convdw_part_##SUF(mode, g, a, a2, w, b, o0, o1, col, nt, n0, n1);                        \
    else                                                                                           \
      mxc_convg_part_##SUF(mode, g, a, a2, w, b, o0, o1, col, nt, n0, n1);                         \
    if (g->relu) mxc_conv_relu_##SUF(o0 + n0 * g->co * g->osz, (n1 - n0) * g->co * g->osz, nt);    \
    return;                                                                                        \
  }                                                                                                \
  switch (mode) {                                                                                  \
  case MXC_CONV_FWD: /* a = X, o0 = Y */                                                           \
    mxc_conv_forward_##SUF(a, w, o0, g, col, b, nt, n0, n1);                                       \
    break;                                                                                         \
  case MXC_CONV_BWD: /* a = dY, a2 = X; o0 = dX (NULL: not wanted), o1 = dW */                    \
    if (o0) mxc_conv_bwd_data_##SUF(a, w, o0, g, col, nt, n0, n1);                                 \
    mxc_conv_bwd_weight_##SUF(a, a2, o1, g, col, nt, n0, n1);                                      \
    break;                                                                                         \
  case MXC_DECONV_FWD: /* a = conv-sense Y (the deconvolution's input), o0 = conv-sense X */       \
    mxc_conv_bwd_data_##SUF(a, w, o0, g, col, nt, n0, n1);                                         \
    break;                                                                                         \
  default: /* MXC_DECONV_BWD: a = dOut (conv-sense X), a2 = data (conv-sense Y); o0 may be NULL */ \
    if (o0) mxc_conv_forward_##SUF(a, w, o0, g, col, NULL, nt, n0, n1);                            \
    mxc_conv_bwd_weight_##SUF(a2, a, o1, g, col, nt, n0, n1);                                      \
    break;                                                                                         \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* mxc_conv_part over g->split ranges of samples, one per thread, each with single-threaded       \
 * GEMMs on its own column scratch (the caller's: col; helper p's: col + pcol + (p - 1) pstride,   \
 * its dW partial after its pcol columns). The partials are added to dW in part order, so a given  \
 * split gives the same bits on every run. */                                                      \
static void mxc_conv_split_##SUF(int mode, const mxc_conv_geom *g, const T *a, const T *a2,        \
                                 const T *w, const T *b, T *o0, T *o1, T *col, int nt) {           \
  const int np = g->split;                                                                         \
  const int64_t wsz = g->co * g->rows;                                                             \
  int p;                                                                                           \
  int64_t i;                                                                                       \
  (void)nt;                                                                                        \
  mxc_blas_hold(1);                                                                                \
MXC_PRAGMA(omp parallel for num_threads(np) schedule(static, 1))                                   \
  for (p = 0; p < np; p++) {                                                                       \
    T *pc = p == 0 ? col : col + g->pcol + (p - 1) * g->pstride;                                   \
    T *pw = p == 0 || !o1 ? o1 : pc + g->pcol;                                                     \
    mxc_conv_part_##SUF(mode, g, a, a2, w, b, o0, pw, pc, 1, g->n * p / np,                        \
                        g->n * (p + 1) / np);                                                      \
  }                                                                                                \
  mxc_blas_hold(-1);                                                                               \
  if (!o1) return;                                                                                 \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (wsz * np >= MXC_CONV_PAR_MIN))    \
  for (i = 0; i < wsz; i++) {                                                                      \
    T s = o1[i];                                                                                   \
    int q;                                                                                         \
    for (q = 1; q < np; q++) s += col[g->pcol + (q - 1) * g->pstride + g->pcol + i];               \
    o1[i] = s;                                                                                     \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* One operator call on typed buffers. a: first input (x, dy), a2: second data input of the        \
 * backward modes, w: weight, b: bias or NULL; o0, o1, o2: outputs (o1, o2 may be NULL).           \
 * Samples run in turn (im2col/col2im on OpenMP threads, the GEMMs on OpenBLAS's threads) or, with \
 * g->split, in ranges on threads of their own. */                                                 \
static void mxc_conv_exec_##SUF(int mode, const mxc_conv_geom *g, const T *a, const T *a2,         \
                                const T *w, const T *b, T *o0, T *o1, T *o2, T *col, int nt) {     \
  if (g->split > 1)                                                                                \
    mxc_conv_split_##SUF(mode, g, a, a2, w, b, o0, o1, col, nt);                                   \
  else                                                                                             \
    mxc_conv_part_##SUF(mode, g, a, a2, w, b, o0, o1, col, nt, 0, g->n);                           \
  if (mode == MXC_DECONV_FWD && b) mxc_conv_bias_##SUF(o0, b, g->n, g->ci, g->isz, 1, nt);         \
  if (mode == MXC_CONV_BWD && o2) mxc_conv_bias_grad_##SUF(a, o2, g->n, g->co, g->osz, nt);        \
  if (mode == MXC_DECONV_BWD && o2) mxc_conv_bias_grad_##SUF(a, o2, g->n, g->ci, g->isz, nt);      \
}

MXC_CONV_GROUPED_DEFINE(float, mxc_convg_v8f, f32)
MXC_CONV_GROUPED_DEFINE(double, mxc_convg_v4d, f64)
MXC_CONV_DEPTHWISE_DEFINE(float, mxc_convdw_v16f, mxc_convdw_v16i, f32)
MXC_CONV_DEPTHWISE_DEFINE(double, mxc_convdw_v8d, mxc_convdw_v8l, f64)
MXC_CONV_DENSE_DEFINE(float, f32, mxc_sgemm)
MXC_CONV_DENSE_DEFINE(double, f64, mxc_dgemm)
MXC_CONV_DEFINE(float, f32, mxc_sgemm)
MXC_CONV_DEFINE(double, f64, mxc_dgemm)

/* Winograd F(2x2, 3x3) (convolution_winograd.h) for float32 2-D 3x3 convolutions with stride 1,
 * no dilation, one group and padding <= 2, on CPUs with AVX2+FMA, and outputs of at least
 * MXC_CONV_WINO_MIN_OSZ positions: below that the tiles are mostly padding and the batched
 * im2col path is as fast (ResNet-18's 4x4 stage, one thread: forward 4.5-5.7 ms either way,
 * backward 8.0-11.0 against 9.6-10.6; its 8x8 stage is faster by Winograd). */
#ifndef MXC_CONV_WINO_MIN_OSZ
#define MXC_CONV_WINO_MIN_OSZ 64
#endif
static int mxc_conv_wino_usable(const mxc_conv_geom *g) {
#ifdef MXC_WINO
  return !g->dense && g->g == 1 && g->k[0] == 1 && g->k[1] == 3 && g->k[2] == 3 &&
         g->id[0] == 1 && g->od[0] == 1 && g->p[0] == 0 && g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 &&
         g->d[2] == 1 && g->p[1] <= 2 && g->p[2] <= 2 && g->od[1] == g->id[1] + 2 * g->p[1] - 2 &&
         g->od[2] == g->id[2] + 2 * g->p[2] - 2 && g->cig * g->cog * 16 <= ((int64_t)1 << 24) &&
         g->od[1] * g->od[2] >= MXC_CONV_WINO_MIN_OSZ && mxc_wino_cpu();
#else
  (void)g;
  return 0;
#endif
}

/* Threads that each take a range of samples (mxc_conv_split), or 1: samples in turn with the
 * threads inside each im2col and GEMM. OpenBLAS's threads do not pay off on a GEMM of one
 * CIFAR-sized sample, so one GEMM per sample always splits. Measured, 2 threads, wall-clock,
 * CIFAR ResNet-18 (batch 32), best of alternated runs against main's build: the 7x7 stem (16x16
 * out) forward 2.32 -> 2.01 ms, backward 4.17 -> 2.87, weight gradient alone 2.33 -> 1.23. Blocks
 * of samples (nb) split while each part keeps at least MXC_CONV_SPLIT_MIN_COLS columns (samples
 * x positions); best of 3 alternated runs, blocks kept whole -> split: 4x4 outputs (16 x 16
 * columns) 128 channels forward 1.56 -> 1.04, 64->128 3x3 stride 2 forward 0.93 -> 0.56,
 * backward 1.60 -> 1.14, 1x1 stride 2 backward 0.46 -> 0.20; LeNet's second convolution (batch
 * 64, 8x8 out) forward 3.88 -> 2.03, backward 6.07 -> 3.73; but 2x2 and 1x1 outputs (64 and 16
 * columns) lost, weight gradients most (256 channels 3x3 stride 2: 0.56 -> 0.88, 1x1 stride 2
 * 0.13 -> 0.17). */
#define MXC_CONV_SPLIT_MIN_COLS 256
static int mxc_conv_split_parts(const mxc_conv_geom *g, int nt) {
  const int np = g->n < nt ? (int)g->n : nt;
  if (nt < 2 || g->n < 2 || g->dense || g->grouped) return 1;
  if (g->nb > 1 && g->n / np * g->osz < MXC_CONV_SPLIT_MIN_COLS) return 1;
  return np;
}

/* mxc_conv_exec_f32 through Winograd where it applies: each pass that cannot get its scratch
 * falls back to the im2col path */
static void mxc_conv_exec_f32x(int mode, const mxc_conv_geom *g, const float *a, const float *a2,
                               const float *w, const float *b, float *o0, float *o1, float *o2,
                               float *col, int nt) {
#ifdef MXC_WINO
  if (mxc_conv_wino_usable(g)) {
    const int64_t n = g->n, ci = g->ci, co = g->co, ih = g->id[1], iw = g->id[2];
    const int64_t oh = g->od[1], ow = g->od[2], ph = g->p[1], pw = g->p[2];
    switch (mode) {
    case MXC_CONV_FWD: /* a = X, o0 = Y */
      if (mxc_wino_conv(a, w, 0, b, o0, 0, n, ci, co, ih, iw, oh, ow, ph, pw, nt) == 0) {
        if (g->relu) mxc_conv_relu_f32(o0, n * co * oh * ow, nt);
        return;
      }
      break;
    case MXC_DECONV_FWD: /* a = conv-sense Y, o0 = conv-sense X */
      if (mxc_wino_conv(a, w, 1, b, o0, 0, n, co, ci, oh, ow, ih, iw, 2 - ph, 2 - pw, nt) == 0)
        return;
      break;
    case MXC_CONV_BWD: /* a = dY, a2 = X; o0 = dX, o1 = dW */
      if (o0 && mxc_wino_conv(a, w, 1, NULL, o0, 0, n, co, ci, oh, ow, ih, iw, 2 - ph, 2 - pw,
                              nt) != 0)
        mxc_conv_bwd_data_f32(a, w, o0, g, col, nt, 0, n);
      if (mxc_wino_wgrad(a, a2, o1, n, ci, co, ih, iw, oh, ow, ph, pw, nt) != 0)
        mxc_conv_bwd_weight_f32(a, a2, o1, g, col, nt, 0, n);
      if (o2) mxc_conv_bias_grad_f32(a, o2, n, co, g->osz, nt);
      return;
    default: /* MXC_DECONV_BWD: a = dOut (conv-sense X), a2 = data (conv-sense Y) */
      if (o0 && mxc_wino_conv(a, w, 0, NULL, o0, 0, n, ci, co, ih, iw, oh, ow, ph, pw, nt) != 0)
        mxc_conv_forward_f32(a, w, o0, g, col, NULL, nt, 0, n);
      if (mxc_wino_wgrad(a2, a, o1, n, ci, co, ih, iw, oh, ow, ph, pw, nt) != 0)
        mxc_conv_bwd_weight_f32(a2, a, o1, g, col, nt, 0, n);
      if (o2) mxc_conv_bias_grad_f32(a, o2, n, ci, g->isz, nt);
      return;
    }
  }
#endif
  mxc_conv_exec_f32(mode, g, a, a2, w, b, o0, o1, o2, col, nt);
}

static float *mxc_conv_h2f(const mxc_tensor *t) {
  float *f = (float *)malloc(sizeof(float) * (size_t)(t->size > 0 ? t->size : 1));
  const uint16_t *h = (const uint16_t *)t->data;
  int64_t i;
  if (f == NULL) return NULL;
  for (i = 0; i < t->size; i++) f[i] = mxc_half_to_float(h[i]);
  return f;
}

static void mxc_conv_f2h(const float *f, const mxc_tensor *t) {
  uint16_t *h = (uint16_t *)t->data;
  int64_t i;
  for (i = 0; i < t->size; i++) h[i] = mxc_float_to_half(f[i]);
}

/* in/out tensor roles per mode: see mxc_conv_exec */
static int mxc_conv_run(mxc_opcall *call, int mode) {
  mxc_conv_geom g;
  const mxc_tensor *cx, *cy;      /* convolution-sense X and Y tensors */
  const mxc_tensor *ta = &call->in[0], *ta2 = NULL, *tw, *tb = NULL;
  const mxc_tensor *to0 = &call->out[0], *to1 = NULL, *to2 = NULL;
  /* iattr[MXC_CONV_NIATTR], when given to a backward: nonzero = the data gradient (out[0]) is
   * not wanted (a network's first layer), so neither its GEMM nor its col2im runs */
  int skip0 = 0;
  int dt = ta->dtype, nt = call->nthreads, rc = 0, i;
  size_t esz = dt == MXC_FLOAT64 ? sizeof(double) : sizeof(float);
  void *col = NULL;
  int64_t colsz, own;              /* all scratch; the caller's part of it */
  const char *name = mode == MXC_CONV_FWD ? "Convolution" : mode == MXC_CONV_BWD ?
      "_backward_Convolution" : mode == MXC_DECONV_FWD ? "Deconvolution" : "_backward_Deconvolution";
  if (mode == MXC_CONV_FWD || mode == MXC_DECONV_FWD) {
    tw = &call->in[1];
    if (call->nin > 2) tb = &call->in[2];
  } else {
    ta2 = &call->in[1];
    tw = &call->in[2];
    skip0 = call->niattr > MXC_CONV_NIATTR && call->iattr[MXC_CONV_NIATTR] != 0;
    to1 = &call->out[1];
    if (call->nout > 2) to2 = &call->out[2];
  }
  switch (mode) {
  case MXC_CONV_FWD: cx = ta; cy = to0; break;
  case MXC_CONV_BWD: cx = ta2; cy = ta; break;
  case MXC_DECONV_FWD: cx = to0; cy = ta; break;
  default: cx = ta; cy = ta2; break;
  }
  if (mxc_conv_geom_make(&g, cx, cy, call) != 0) return -1;
  /* iattr[MXC_CONV_NIATTR], when given to a forward: nonzero = a ReLU folded in */
  g.relu = mode == MXC_CONV_FWD && call->niattr > MXC_CONV_NIATTR &&
           call->iattr[MXC_CONV_NIATTR] != 0;
  if (dt != MXC_FLOAT32 && dt != MXC_FLOAT64 && dt != MXC_FLOAT16) {
    snprintf(call->err, MXC_ERR_LEN, "%s: unsupported dtype %d", name, dt);
    return -1;
  }
  if (g.n == 0 || g.ci == 0 || g.co == 0 || g.isz == 0 || g.osz == 0) {
    /* nothing to convolve: outputs are zero (or the bias) */
    for (i = 0; i < call->nout; i++) {
      size_t e = call->out[i].dtype == MXC_FLOAT64 ? 8 : call->out[i].dtype == MXC_FLOAT16 ? 2 : 4;
      memset(call->out[i].data, 0, e * (size_t)call->out[i].size);
    }
    return 0;
  }
  if (g.depthwise) /* channel blocks: input, output, weights and sums per thread */
    colsz = mxc_convdw_scratch(&g, nt, dt == MXC_FLOAT64 ? sizeof(double) : sizeof(float));
  else if (g.grouped) /* direct loops: a padded plane and wide rows per thread */
    colsz = mxc_convg_scratch(&g, nt);
  else if (g.dense) /* Wd, then the tap table as int32 (elements of at least 4 bytes) */
    colsz = g.co * g.osz * g.ci * g.isz + g.osz * g.isz;
  else if (g.nb > 1) /* the column matrix, Y's block, tt's dW^T, then the source table */
    colsz = (g.rows + g.cog) * g.nb * g.osz + (g.tt ? g.rows * g.cog : 0) + g.ksz * g.osz;
  else /* the column chunk, then wtt's dW^T */
    colsz = g.direct ? 0 : g.rows * g.tchunk * g.od[2] + (g.wtt ? g.rows * g.cog : 0);
  g.split = dt != MXC_FLOAT64 && mxc_conv_wino_usable(&g) ? 1 : mxc_conv_split_parts(&g, nt);
  own = colsz;
  if (g.split > 1) { /* then each helper's column scratch and dW partial (64-byte aligned) */
    const int64_t wsz = mode == MXC_CONV_BWD || mode == MXC_DECONV_BWD ? g.co * g.rows : 0;
    g.pcol = (colsz + 15) / 16 * 16;
    g.pstride = g.pcol + (wsz + 15) / 16 * 16;
    colsz = g.pcol + (g.split - 1) * g.pstride;
  }
  if (colsz) {
    /* the thread's reused buffer: fresh pages cost a fault each on first touch (the dense
     * product's expanded weight used to spend most of its time there) */
    col = mxc_workspace(MXC_CONV_COL_SLOT, esz * (size_t)colsz);
    if (col == NULL) {
      snprintf(call->err, MXC_ERR_LEN, "%s: out of memory for the column buffer", name);
      return -1;
    }
  }
  if (!g.dense && !g.grouped && g.nb > 1 && g.isz <= INT32_MAX) { /* int32s in the last ksz * osz elements */
    int32_t *src = (int32_t *)((char *)col + esz * (size_t)(own - g.ksz * g.osz));
    mxc_conv_col_sources(src, &g);
    g.src = src;
  }
  if (dt == MXC_FLOAT32) {
    mxc_conv_exec_f32x(mode, &g, (const float *)ta->data, ta2 ? (const float *)ta2->data : NULL,
                      (const float *)tw->data, tb ? (const float *)tb->data : NULL,
                      skip0 ? NULL : (float *)to0->data, to1 ? (float *)to1->data : NULL,
                      to2 ? (float *)to2->data : NULL, (float *)col, nt);
  } else if (dt == MXC_FLOAT64) {
    mxc_conv_exec_f64(mode, &g, (const double *)ta->data, ta2 ? (const double *)ta2->data : NULL,
                      (const double *)tw->data, tb ? (const double *)tb->data : NULL,
                      skip0 ? NULL : (double *)to0->data, to1 ? (double *)to1->data : NULL,
                      to2 ? (double *)to2->data : NULL, (double *)col, nt);
  } else {
    /* float16: everything through float32 copies */
    float *fa = mxc_conv_h2f(ta), *fa2 = ta2 ? mxc_conv_h2f(ta2) : NULL, *fw = mxc_conv_h2f(tw);
    float *fb = tb ? mxc_conv_h2f(tb) : NULL;
    float *f0 = skip0 ? NULL : (float *)malloc(sizeof(float) * (size_t)to0->size);
    float *f1 = to1 ? (float *)malloc(sizeof(float) * (size_t)to1->size) : NULL;
    float *f2 = to2 ? (float *)malloc(sizeof(float) * (size_t)(to2->size > 0 ? to2->size : 1)) : NULL;
    if (!fa || (ta2 && !fa2) || !fw || (tb && !fb) || (!skip0 && !f0) || (to1 && !f1) ||
        (to2 && !f2)) {
      snprintf(call->err, MXC_ERR_LEN, "%s: out of memory for float16 buffers", name);
      rc = -1;
    } else {
      mxc_conv_exec_f32x(mode, &g, fa, fa2, fw, fb, f0, f1, f2, (float *)col, nt);
      if (f0) mxc_conv_f2h(f0, to0);
      if (to1) mxc_conv_f2h(f1, to1);
      if (to2) mxc_conv_f2h(f2, to2);
    }
    free(fa); free(fa2); free(fw); free(fb); free(f0); free(f1); free(f2);
  }
  return rc;
}

static int mxc_conv_forward(mxc_opcall *call) { return mxc_conv_run(call, MXC_CONV_FWD); }
static int mxc_conv_backward(mxc_opcall *call) { return mxc_conv_run(call, MXC_CONV_BWD); }
static int mxc_deconv_forward(mxc_opcall *call) { return mxc_conv_run(call, MXC_DECONV_FWD); }
static int mxc_deconv_backward(mxc_opcall *call) { return mxc_conv_run(call, MXC_DECONV_BWD); }

static const mxc_code_entry mxc_conv_table[] = {
  {"conv:forward", MXC_FLOAT32, mxc_conv_forward},
  {"conv:forward", MXC_FLOAT64, mxc_conv_forward},
  {"conv:forward", MXC_FLOAT16, mxc_conv_forward},
  {"conv:backward", MXC_FLOAT32, mxc_conv_backward},
  {"conv:backward", MXC_FLOAT64, mxc_conv_backward},
  {"conv:backward", MXC_FLOAT16, mxc_conv_backward},
  {"deconv:forward", MXC_FLOAT32, mxc_deconv_forward},
  {"deconv:forward", MXC_FLOAT64, mxc_deconv_forward},
  {"deconv:forward", MXC_FLOAT16, mxc_deconv_forward},
  {"deconv:backward", MXC_FLOAT32, mxc_deconv_backward},
  {"deconv:backward", MXC_FLOAT64, mxc_deconv_backward},
  {"deconv:backward", MXC_FLOAT16, mxc_deconv_backward},
};
static const int mxc_conv_table_len = (int)(sizeof(mxc_conv_table) / sizeof(mxc_conv_table[0]));

#endif
