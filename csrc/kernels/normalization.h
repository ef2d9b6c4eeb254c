/* Normalization kernels: BatchNorm (statistics per channel) and one kernel for LayerNorm,
 * InstanceNorm and GroupNorm (statistics per row), forward and backward.
 *
 * Every tensor is seen as (A, K, B) (outer, middle, inner), C-contiguous:
 *   BatchNorm:    K = channels; statistics per channel over A x B.
 *   LayerNorm:    K = the normalised axis; statistics per (a, b) over K, affine per k (mode 0).
 *   InstanceNorm: A = N*C, K = spatial, B = 1, affine per channel a % C (mode 1, P = C).
 *   GroupNorm:    A = N*G, K = C/G*spatial, B = 1, affine per group a % G (mode 1, P = G).
 *
 * Sums run in eight partial sums of the compute type (float for float16/float32, double for
 * float64) over blocks of MXC_NRM_BLK elements, then accumulate in double (float16 data
 * converts to float32 on load, as MXNet's AccReal does).
 * Mean and variance are two-pass (mean, then the sum of squared deviations) as MXNet computes
 * them; the backward recomputes them from the data (one more pass that runs from cache), so it
 * needs no saved statistics: the mean, then (x - mean)^2, (x - mean) * dy and dy summed in one
 * read, then dx.
 *
 * BatchNorm attributes: iattr = {A, K, B, train, fix_gamma, var_is_variance (BatchNorm_v1)}
 * (backward: {A, K, B, train, fix_gamma, update_moving}); fattr = {eps, momentum}.
 * BatchNorm forward:  in = {x, gamma, beta, moving_mean, moving_var}, out = {y[, mean, var]}.
 * BatchNorm backward: in = {dy, x, gamma}, out = {dx, dgamma, dbeta, moving_mean, moving_var};
 *   in training the moving statistics are updated here, as MXNet 1.9.1's CPU BatchNorm does
 *   (moving = moving * momentum + batch * (1 - momentum), biased batch variance).
 * Row norm attributes: iattr = {A, K, B, mode, P}; fattr = {eps}.
 * Row norm forward:  in = {x, gamma, beta}, out = {y[, mean, std]} (std = sqrt(var + eps)).
 * Row norm backward: in = {dy, x, gamma}, out = {dx, dgamma, dbeta}.
 */
#ifndef MXC_KERNELS_NORMALIZATION_H
#define MXC_KERNELS_NORMALIZATION_H
#include "kernels/common.h"

#define MXC_NRM_CHUNK 64          /* inner columns per task when B > 1 */
#define MXC_NRM_BLK 256           /* elements per partial sum in the compute type, then double */
/* BatchNorm channels with fewer elements per sample than this (ResNet's last stages: 1x1, 2x2)
 * sum in double directly: the blocked partial sums' set-up per sample cost more than the sums */
#define MXC_NRM_SMALL_B 8
/* BatchNorm's per-channel passes in an AVX2 clone: the eight-lane sums (mxc_nrm_v8_*) become one
 * 256-bit register, the same additions lane by lane, so results are bit-identical to the
 * default clone (avx2 brings no FMA, so nothing is contracted). Measured, one thread, batch 8,
 * DenseNet-121's shapes (channels x HxW): training backward 1.4x faster at 160x56x56, 2.0x at
 * 128x28x28, 1.7x at 640x14x14, 2.5x at 768x7x7; forward 1.1-1.4x; densenet121 training
 * (tools/bench/bench_model_zoo.py, 2 threads, quiet machine, back-to-back runs) mxc / torch
 * 1.13 -> 1.26 images/s. Scalar 8-element arrays
 * in an AVX2 clone were no faster (the dot pass 2.5x slower): gcc did not keep them in one
 * register; the vector type does. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define MXC_NRM_HOT __attribute__((target_clones("avx2", "default")))
#else
#define MXC_NRM_HOT
#endif

/* loads and stores per storage type; CT_ is the elementwise compute type */
#define MXC_NRM_LD_h(p, i) mxc_half_to_float(((const uint16_t *)(p))[i])
#define MXC_NRM_ST_h(p, i, v) (((uint16_t *)(p))[i] = mxc_float_to_half((float)(v)))
#define MXC_NRM_LD_f(p, i) (((const float *)(p))[i])
#define MXC_NRM_ST_f(p, i, v) (((float *)(p))[i] = (float)(v))
#define MXC_NRM_LD_d(p, i) (((const double *)(p))[i])
#define MXC_NRM_ST_d(p, i, v) (((double *)(p))[i] = (double)(v))
/* eight consecutive elements as one vector of the compute type: the sums' eight lanes (GCC's
 * vector extension; a lane adds exactly what a[l] of a scalar loop over l adds) */
typedef float mxc_nrm_v8_float __attribute__((vector_size(32)));
typedef double mxc_nrm_v8_double __attribute__((vector_size(64)));
#define MXC_NRM_LD8_f(v, p, i) memcpy(&(v), (const float *)(p) + (i), 32)
#define MXC_NRM_LD8_d(v, p, i) memcpy(&(v), (const double *)(p) + (i), 64)
#define MXC_NRM_LD8_h(v, p, i)                                                                   \
  do {                                                                                           \
    int l_;                                                                                      \
    for (l_ = 0; l_ < 8; l_++) (v)[l_] = mxc_half_to_float(((const uint16_t *)(p))[(i) + l_]);  \
  } while (0)
#define MXC_NRM_HSUM8(a) ((((a)[0] + (a)[1]) + ((a)[2] + (a)[3])) + (((a)[4] + (a)[5]) + ((a)[6] + (a)[7])))

static inline int mxc_nrm_threads(const mxc_opcall *call, int64_t work) {
#ifdef _OPENMP
  int nt = call->nthreads;
  if (work < 32768) nt = 1;
  return nt < 1 ? 1 : nt;
#else
  (void)call;
  (void)work;
  return 1;
#endif
}

static inline double mxc_nrm_invstd(double ssd, int64_t n, double eps) {
  if (ssd == 0 && eps == 0) return 0.0;      /* as MXNet: nobody likes to divide by zero */
  return 1.0 / sqrt((n > 0 ? ssd / (double)n : 0.0) + eps);
}

/* ---- per-dtype code ------------------------------------------------------------------------
 * S_: suffix; D_: data load/store tag; P_: parameter load/store tag; CT_: compute type. */
#define MXC_NRM_DEFINE(S_, D_, P_, CT_)                                                              \
static inline double mxc_nrm_sum_##S_(const void *p, int64_t off, int64_t n) {                   \
  double tot = 0;                                                                                \
  int64_t i0;                                                                                    \
  for (i0 = 0; i0 < n; i0 += MXC_NRM_BLK) {                                                      \
    const int64_t i1 = i0 + MXC_NRM_BLK < n ? i0 + MXC_NRM_BLK : n;                              \
    mxc_nrm_v8_##CT_ a = {0, 0, 0, 0, 0, 0, 0, 0}, v;                                            \
    CT_ r = 0;                                                                                   \
    int64_t i = i0;                                                                              \
    for (; i + 8 <= i1; i += 8) {                                                                \
      MXC_NRM_LD8_##D_(v, p, off + i);                                                           \
      a += v;                                                                                    \
    }                                                                                            \
    for (; i < i1; i++) r += (CT_)MXC_NRM_LD_##D_(p, off + i);                                   \
    tot += (double)MXC_NRM_HSUM8(a) + (double)r;                                                 \
  }                                                                                              \
  return tot;                                                                                    \
}                                                                                                \
/* sum of (x - m)^2 */                                                                           \
static inline double mxc_nrm_ssd_##S_(const void *p, int64_t off, int64_t n, double m) {          \
  double tot = 0;                                                                                \
  const CT_ cm = (CT_)m;                                                                         \
  int64_t i0;                                                                                    \
  for (i0 = 0; i0 < n; i0 += MXC_NRM_BLK) {                                                      \
    const int64_t i1 = i0 + MXC_NRM_BLK < n ? i0 + MXC_NRM_BLK : n;                              \
    mxc_nrm_v8_##CT_ a = {0, 0, 0, 0, 0, 0, 0, 0}, v;                                            \
    CT_ r = 0, d;                                                                                \
    int64_t i = i0;                                                                              \
    for (; i + 8 <= i1; i += 8) {                                                                \
      MXC_NRM_LD8_##D_(v, p, off + i);                                                           \
      v -= cm;                                                                                   \
      a += v * v;                                                                                \
    }                                                                                            \
    for (; i < i1; i++) {                                                                        \
      d = (CT_)MXC_NRM_LD_##D_(p, off + i) - cm;                                                 \
      r += d * d;                                                                                \
    }                                                                                            \
    tot += (double)MXC_NRM_HSUM8(a) + (double)r;                                                 \
  }                                                                                              \
  return tot;                                                                                    \
}                                                                                                \
/* the backward's second pass in one read of x and dy: the sum of (x - m)^2 (per call, as      \
 * mxc_nrm_ssd), and the sums of (x - m) * dy and of dy added to *dot and *sdy block by block  \
 * (as mxc_nrm_dot); each lane adds the same terms in the same order as those two */           \
static inline double mxc_nrm_ssd_dot_##S_(const void *x, const void *dy, int64_t off, int64_t n,  \
                                          double m, double *dot, double *sdy) {                  \
  double tot = 0;                                                                                \
  const CT_ cm = (CT_)m;                                                                         \
  int64_t i0;                                                                                    \
  for (i0 = 0; i0 < n; i0 += MXC_NRM_BLK) {                                                      \
    const int64_t i1 = i0 + MXC_NRM_BLK < n ? i0 + MXC_NRM_BLK : n;                              \
    mxc_nrm_v8_##CT_ q = {0, 0, 0, 0, 0, 0, 0, 0}, a = q, b = q, d, g;                           \
    CT_ rq = 0, ra = 0, rb = 0, e, h;                                                            \
    int64_t i = i0;                                                                              \
    for (; i + 8 <= i1; i += 8) {                                                                \
      MXC_NRM_LD8_##D_(d, x, off + i);                                                           \
      MXC_NRM_LD8_##D_(g, dy, off + i);                                                          \
      d -= cm;                                                                                   \
      q += d * d;                                                                                \
      a += d * g;                                                                                \
      b += g;                                                                                    \
    }                                                                                            \
    for (; i < i1; i++) {                                                                        \
      e = (CT_)MXC_NRM_LD_##D_(x, off + i) - cm;                                                 \
      h = (CT_)MXC_NRM_LD_##D_(dy, off + i);                                                     \
      rq += e * e;                                                                               \
      ra += e * h;                                                                               \
      rb += h;                                                                                   \
    }                                                                                            \
    tot += (double)MXC_NRM_HSUM8(q) + (double)rq;                                                \
    *dot += (double)MXC_NRM_HSUM8(a) + (double)ra;                                               \
    *sdy += (double)MXC_NRM_HSUM8(b) + (double)rb;                                               \
  }                                                                                              \
  return tot;                                                                                    \
}                                                                                                \
/* sum of (x - m) * dy, and sum of dy */                                                        \
static inline void mxc_nrm_dot_##S_(const void *x, const void *dy, int64_t off, int64_t n,        \
                                   double m, double *dot, double *sdy) {                         \
  const CT_ cm = (CT_)m;                                                                         \
  int64_t i0;                                                                                    \
  for (i0 = 0; i0 < n; i0 += MXC_NRM_BLK) {                                                      \
    const int64_t i1 = i0 + MXC_NRM_BLK < n ? i0 + MXC_NRM_BLK : n;                              \
    mxc_nrm_v8_##CT_ a = {0, 0, 0, 0, 0, 0, 0, 0}, b = a, d, g;                                  \
    CT_ ra = 0, rb = 0, h;                                                                       \
    int64_t i = i0;                                                                              \
    for (; i + 8 <= i1; i += 8) {                                                                \
      MXC_NRM_LD8_##D_(d, x, off + i);                                                           \
      MXC_NRM_LD8_##D_(g, dy, off + i);                                                          \
      a += (d - cm) * g;                                                                         \
      b += g;                                                                                    \
    }                                                                                            \
    for (; i < i1; i++) {                                                                        \
      h = (CT_)MXC_NRM_LD_##D_(dy, off + i);                                                     \
      ra += ((CT_)MXC_NRM_LD_##D_(x, off + i) - cm) * h;                                         \
      rb += h;                                                                                   \
    }                                                                                            \
    *dot += (double)MXC_NRM_HSUM8(a) + (double)ra;                                               \
    *sdy += (double)MXC_NRM_HSUM8(b) + (double)rb;                                               \
  }                                                                                              \
}                                                                                                \
                                                                                                 \
/* per-channel passes of BatchNorm (AVX2 clones: MXC_NRM_HOT) */                                \
static MXC_NRM_HOT void mxc_nrm_bn_stats_##S_(const void *x, int64_t A, int64_t K,          \
                                                   int64_t B, int64_t c, double *mean, double *q) { \
  const int64_t n = A * B;                                                                       \
  double s = 0, v = 0, m;                                                                        \
  int64_t a, b;                                                                                  \
  if (B < MXC_NRM_SMALL_B) { /* a few elements per sample: plain double sums */                \
    for (a = 0; a < A; a++)                                                                      \
      for (b = 0; b < B; b++) s += (double)MXC_NRM_LD_##D_(x, (a * K + c) * B + b);              \
    m = n > 0 ? s / (double)n : 0.0;                                                             \
    for (a = 0; a < A; a++)                                                                      \
      for (b = 0; b < B; b++) {                                                                  \
        const double d = (double)MXC_NRM_LD_##D_(x, (a * K + c) * B + b) - m;                    \
        v += d * d;                                                                              \
      }                                                                                          \
    *mean = m;                                                                                   \
    *q = v;                                                                                      \
    return;                                                                                      \
  }                                                                                              \
  for (a = 0; a < A; a++) s += mxc_nrm_sum_##S_(x, (a * K + c) * B, B);                          \
  m = n > 0 ? s / (double)n : 0.0;                                                               \
  for (a = 0; a < A; a++) v += mxc_nrm_ssd_##S_(x, (a * K + c) * B, B, m);                       \
  *mean = m;                                                                                     \
  *q = v;                                                                                        \
}                                                                                                \
/* y = (x - cm) * sc + sh over one channel; relu: then max(y, 0) in the same loop, as the relu   \
 * operator (nan stays nan), a ReLU folded into an inference BatchNorm (mxc/executor/fold.py) */ \
static MXC_NRM_HOT void mxc_nrm_bn_apply_##S_(const void *x, void *y, int64_t A, int64_t K,                  \
                                  int64_t B, int64_t c, CT_ cm, CT_ sc, CT_ sh, int relu) {      \
  int64_t a, b;                                                                                  \
  for (a = 0; a < A; a++) {                                                                      \
    const int64_t off = (a * K + c) * B;                                                         \
    if (relu) {                                                                                  \
      for (b = 0; b < B; b++) {                                                                  \
        const CT_ v = ((CT_)MXC_NRM_LD_##D_(x, off + b) - cm) * sc + sh;                         \
        MXC_NRM_ST_##D_(y, off + b, (v > 0 || v != v) ? v : (CT_)0);                             \
      }                                                                                          \
      continue;                                                                                  \
    }                                                                                            \
    for (b = 0; b < B; b++)                                                                      \
      MXC_NRM_ST_##D_(y, off + b, ((CT_)MXC_NRM_LD_##D_(x, off + b) - cm) * sc + sh);            \
  }                                                                                              \
}                                                                                                \
static void mxc_nrm_bn_dot_##S_(const void *x, const void *dy, int64_t A,       \
                                                 int64_t K, int64_t B, int64_t c, double m,      \
                                                 double *dot, double *sdy) {                     \
  int64_t a, b;                                                                                  \
  if (B < MXC_NRM_SMALL_B) { /* as mxc_nrm_bn_stats */                                           \
    for (a = 0; a < A; a++)                                                                      \
      for (b = 0; b < B; b++) {                                                                  \
        const int64_t i = (a * K + c) * B + b;                                                   \
        const double g = (double)MXC_NRM_LD_##D_(dy, i);                                         \
        *dot += ((double)MXC_NRM_LD_##D_(x, i) - m) * g;                                         \
        *sdy += g;                                                                               \
      }                                                                                          \
    return;                                                                                      \
  }                                                                                              \
  for (a = 0; a < A; a++) mxc_nrm_dot_##S_(x, dy, (a * K + c) * B, B, m, dot, sdy);              \
}                                                                                                \
/* dx = (dy - gm - (x - cm) * k) * iw over one channel (k = 0: dx = (dy - gm) * iw) */           \
static void mxc_nrm_bn_dx_##S_(const void *x, const void *dy, void *dx,         \
                                                int64_t A, int64_t K, int64_t B, int64_t c,      \
                                                CT_ cm, CT_ k, CT_ gm, CT_ iw) {                 \
  int64_t a, b;                                                                                  \
  for (a = 0; a < A; a++) {                                                                      \
    const int64_t off = (a * K + c) * B;                                                         \
    for (b = 0; b < B; b++) {                                                                    \
      const CT_ xv = (CT_)MXC_NRM_LD_##D_(x, off + b), g = (CT_)MXC_NRM_LD_##D_(dy, off + b);    \
      MXC_NRM_ST_##D_(dx, off + b, (g - gm - (xv - cm) * k) * iw);                               \
    }                                                                                            \
  }                                                                                              \
}                                                                                                \
                                                                                                 \
/* one channel of the training backward: the mean (pass 1), then the sums of (x - m)^2,          \
 * (x - m) * dy and dy in one more read (pass 2, the same sums as mxc_nrm_bn_stats and           \
 * mxc_nrm_bn_dot), then dx (pass 3); w = gamma (1 with fix_gamma) */                           \
static MXC_NRM_HOT void mxc_nrm_bn_bwd_chan_##S_(const void *x, const void *dy, void *dx,         \
                                                 int64_t A, int64_t K, int64_t B, int64_t c,     \
                                                 double eps, double w, double *mean, double *q,  \
                                                 double *dot, double *sdy) {                     \
  const int64_t n = A * B;                                                                       \
  double s = 0, v = 0, m, invstd;                                                                \
  int64_t a, b;                                                                                  \
  *dot = 0;                                                                                      \
  *sdy = 0;                                                                                      \
  if (B < MXC_NRM_SMALL_B) { /* as mxc_nrm_bn_stats and mxc_nrm_bn_dot */                        \
    for (a = 0; a < A; a++)                                                                      \
      for (b = 0; b < B; b++) s += (double)MXC_NRM_LD_##D_(x, (a * K + c) * B + b);              \
    m = n > 0 ? s / (double)n : 0.0;                                                             \
    for (a = 0; a < A; a++)                                                                      \
      for (b = 0; b < B; b++) {                                                                  \
        const int64_t i = (a * K + c) * B + b;                                                   \
        const double d = (double)MXC_NRM_LD_##D_(x, i) - m;                                      \
        const double g = (double)MXC_NRM_LD_##D_(dy, i);                                         \
        v += d * d;                                                                              \
        *dot += d * g;                                                                           \
        *sdy += g;                                                                               \
      }                                                                                          \
  } else {                                                                                       \
    for (a = 0; a < A; a++) s += mxc_nrm_sum_##S_(x, (a * K + c) * B, B);                        \
    m = n > 0 ? s / (double)n : 0.0;                                                             \
    for (a = 0; a < A; a++)                                                                      \
      v += mxc_nrm_ssd_dot_##S_(x, dy, (a * K + c) * B, B, m, dot, sdy);                         \
  }                                                                                              \
  invstd = mxc_nrm_invstd(v, n, eps);                                                            \
  mxc_nrm_bn_dx_##S_(x, dy, dx, A, K, B, c, (CT_)m,                                              \
                     (CT_)(n > 0 ? *dot * invstd * invstd / (double)n : 0.0),                    \
                     (CT_)(n > 0 ? *sdy / (double)n : 0.0), (CT_)(invstd * w));                  \
  *mean = m;                                                                                     \
  *q = v;                                                                                        \
}                                                                                                \
                                                                                                 \
/* BatchNorm forward; one channel per iteration */                                               \
static int mxc_nrm_bn_fwd_##S_(mxc_opcall *call) {                                               \
  const void *x = call->in[0].data, *gam = call->in[1].data, *bet = call->in[2].data;            \
  const void *mm = call->in[3].data, *mv = call->in[4].data;                                     \
  void *y = call->out[0].data;                                                                   \
  void *om = call->nout >= 3 ? call->out[1].data : NULL;                                         \
  void *ov = call->nout >= 3 ? call->out[2].data : NULL;                                         \
  const int64_t A = call->iattr[0], K = call->iattr[1], B = call->iattr[2];                      \
  const int train = (int)call->iattr[3], fixg = (int)call->iattr[4];                             \
  const int var_out = (int)call->iattr[5];                                                       \
  const int relu = call->niattr > 6 && call->iattr[6] != 0; /* a folded ReLU */                  \
  const double eps = call->fattr[0];                                                             \
  const int64_t n = A * B;                                                                       \
  const int nt = mxc_nrm_threads(call, A * K * B); (void)nt; /* unused without OpenMP */         \
  int64_t c;                                                                                     \
  MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                  \
  for (c = 0; c < K; c++) {                                                                      \
    double mean, var, invstd, q;                                                                 \
    if (train) {                                                                                 \
      mxc_nrm_bn_stats_##S_(x, A, K, B, c, &mean, &q);                                           \
      var = n > 0 ? q / (double)n : 0.0;                                                         \
      invstd = mxc_nrm_invstd(q, n, eps);                                                        \
    } else {                                                                                     \
      mean = MXC_NRM_LD_##P_(mm, c);                                                             \
      var = MXC_NRM_LD_##P_(mv, c);                                                              \
      invstd = 1.0 / sqrt(var + eps);                                                            \
    }                                                                                            \
    if (om != NULL) {                                                                            \
      MXC_NRM_ST_##P_(om, c, mean);                                                              \
      MXC_NRM_ST_##P_(ov, c, var_out ? var : invstd);                                            \
    }                                                                                            \
    mxc_nrm_bn_apply_##S_(x, y, A, K, B, c, (CT_)mean,                                           \
                          (CT_)(invstd * (fixg ? 1.0 : (double)MXC_NRM_LD_##P_(gam, c))),        \
                          (CT_)MXC_NRM_LD_##P_(bet, c), relu);                                   \
  }                                                                                              \
  return 0;                                                                                      \
}                                                                                                \
                                                                                                 \
/* BatchNorm backward (and the moving statistics update in training) */                          \
static int mxc_nrm_bn_bwd_##S_(mxc_opcall *call) {                                               \
  const void *dy = call->in[0].data, *x = call->in[1].data, *gam = call->in[2].data;             \
  void *dx = call->out[0].data, *dg = call->out[1].data, *db = call->out[2].data;                \
  void *mm = call->out[3].data, *mv = call->out[4].data;                                         \
  const int64_t A = call->iattr[0], K = call->iattr[1], B = call->iattr[2];                      \
  const int train = (int)call->iattr[3], fixg = (int)call->iattr[4];                             \
  const int update = (int)call->iattr[5];                                                        \
  const double eps = call->fattr[0], mom = call->fattr[1];                                       \
  const int64_t n = A * B;                                                                       \
  const int nt = mxc_nrm_threads(call, A * K * B); (void)nt; /* unused without OpenMP */         \
  int64_t c;                                                                                     \
  MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                  \
  for (c = 0; c < K; c++) {                                                                      \
    double mean, invstd, q, dot = 0, sdy = 0;                                                    \
    const double w = fixg ? 1.0 : (double)MXC_NRM_LD_##P_(gam, c);                               \
    if (train) {                                                                                 \
      mxc_nrm_bn_bwd_chan_##S_(x, dy, dx, A, K, B, c, eps, w, &mean, &q, &dot, &sdy);            \
      invstd = mxc_nrm_invstd(q, n, eps);                                                        \
      if (update) {                                                                              \
        double var = n > 0 ? q / (double)n : 0.0;                                                \
        MXC_NRM_ST_##P_(mm, c, (double)MXC_NRM_LD_##P_(mm, c) * mom + mean * (1.0 - mom));       \
        MXC_NRM_ST_##P_(mv, c, (double)MXC_NRM_LD_##P_(mv, c) * mom + var * (1.0 - mom));        \
      }                                                                                          \
    } else {                                                                                     \
      mean = MXC_NRM_LD_##P_(mm, c);                                                             \
      invstd = 1.0 / sqrt((double)MXC_NRM_LD_##P_(mv, c) + eps);                                 \
      mxc_nrm_bn_dot_##S_(x, dy, A, K, B, c, mean, &dot, &sdy);                                  \
      mxc_nrm_bn_dx_##S_(x, dy, dx, A, K, B, c, 0, 0, 0, (CT_)(invstd * w));                     \
    }                                                                                            \
    MXC_NRM_ST_##P_(dg, c, fixg ? 0.0 : dot * invstd);                                           \
    MXC_NRM_ST_##P_(db, c, sdy);                                                                 \
  }                                                                                              \
  return 0;                                                                                      \
}                                                                                                \
                                                                                                 \
/* statistics of one task: rows a, inner columns [b0, b0 + nb) over K (stride B) */              \
static void mxc_nrm_rstats_##S_(const void *x, int64_t a, int64_t K, int64_t B,            \
                                      int64_t b0, int64_t nb, double eps, double *mean,          \
                                      double *invstd, double *var) {                             \
  int64_t k, j;                                                                                  \
  const int64_t base = a * K * B + b0;                                                           \
  mean[0] = var[0] = invstd[0] = 0;                                                              \
  if (B == 1) {                                                                                  \
    double s = mxc_nrm_sum_##S_(x, base, K);                                                      \
    double m = K > 0 ? s / (double)K : 0.0;                                                      \
    double q = mxc_nrm_ssd_##S_(x, base, K, m);                                                   \
    mean[0] = m;                                                                                 \
    var[0] = K > 0 ? q / (double)K : 0.0;                                                        \
    invstd[0] = mxc_nrm_invstd(q, K, eps);                                                       \
    return;                                                                                      \
  }                                                                                              \
  for (j = 0; j < nb; j++) mean[j] = var[j] = 0;                                                 \
  for (k = 0; k < K; k++)                                                                        \
    for (j = 0; j < nb; j++) mean[j] += MXC_NRM_LD_##D_(x, base + k * B + j);                     \
  for (j = 0; j < nb; j++) mean[j] = K > 0 ? mean[j] / (double)K : 0.0;                          \
  for (k = 0; k < K; k++)                                                                        \
    for (j = 0; j < nb; j++) {                                                                   \
      double d = MXC_NRM_LD_##D_(x, base + k * B + j) - mean[j];                                  \
      var[j] += d * d;                                                                           \
    }                                                                                            \
  for (j = 0; j < nb; j++) {                                                                     \
    invstd[j] = mxc_nrm_invstd(var[j], K, eps);                                                  \
    var[j] = K > 0 ? var[j] / (double)K : 0.0;                                                   \
  }                                                                                              \
}                                                                                                \
                                                                                                 \
/* LayerNorm / InstanceNorm / GroupNorm forward */                                              \
static int mxc_nrm_row_fwd_##S_(mxc_opcall *call) {                                               \
  const void *x = call->in[0].data, *gam = call->in[1].data, *bet = call->in[2].data;            \
  void *y = call->out[0].data;                                                                   \
  void *om = call->nout >= 3 ? call->out[1].data : NULL;                                         \
  void *os = call->nout >= 3 ? call->out[2].data : NULL;                                         \
  const int64_t A = call->iattr[0], K = call->iattr[1], B = call->iattr[2];                      \
  const int mode = (int)call->iattr[3];                                                          \
  const int64_t P = call->iattr[4];                                                              \
  const double eps = call->fattr[0];                                                             \
  const int64_t W = B < MXC_NRM_CHUNK ? B : MXC_NRM_CHUNK;                                       \
  const int64_t nch = W > 0 ? (B + W - 1) / W : 0;                                               \
  const int64_t ntask = A * nch;                                                                 \
  const int nt = mxc_nrm_threads(call, A * K * B); (void)nt; /* unused without OpenMP */         \
  int64_t t;                                                                                     \
  MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                  \
  for (t = 0; t < ntask; t++) {                                                                  \
    double mean[MXC_NRM_CHUNK], invstd[MXC_NRM_CHUNK], var[MXC_NRM_CHUNK];                       \
    const int64_t a = t / nch, b0 = (t % nch) * W;                                               \
    const int64_t nb = b0 + W <= B ? W : B - b0;                                                 \
    const int64_t base = a * K * B + b0;                                                         \
    int64_t k, j;                                                                                \
    mxc_nrm_rstats_##S_(x, a, K, B, b0, nb, eps, mean, invstd, var);                              \
    if (om != NULL)                                                                              \
      for (j = 0; j < nb; j++) {                                                                 \
        MXC_NRM_ST_##D_(om, a * B + b0 + j, mean[j]);                                             \
        MXC_NRM_ST_##D_(os, a * B + b0 + j, sqrt(var[j] + eps));                                  \
      }                                                                                          \
    if (mode == 1) {                                                                             \
      const CT_ sc = (CT_)(invstd[0] * (double)MXC_NRM_LD_##P_(gam, a % P));                        \
      const CT_ sh = (CT_)MXC_NRM_LD_##P_(bet, a % P), cm = (CT_)mean[0];                            \
      for (k = 0; k < K; k++)                                                                    \
        MXC_NRM_ST_##D_(y, base + k, ((CT_)MXC_NRM_LD_##D_(x, base + k) - cm) * sc + sh);          \
    } else if (B == 1) {                                                                         \
      const CT_ cm = (CT_)mean[0], is = (CT_)invstd[0];                                             \
      for (k = 0; k < K; k++)                                                                    \
        MXC_NRM_ST_##D_(y, base + k, ((CT_)MXC_NRM_LD_##D_(x, base + k) - cm) * is *                \
                       (CT_)MXC_NRM_LD_##P_(gam, k) + (CT_)MXC_NRM_LD_##P_(bet, k));                 \
    } else {                                                                                     \
      for (k = 0; k < K; k++) {                                                                  \
        const CT_ gk = (CT_)MXC_NRM_LD_##P_(gam, k), bk = (CT_)MXC_NRM_LD_##P_(bet, k);               \
        for (j = 0; j < nb; j++) {                                                               \
          const int64_t i = base + k * B + j;                                                    \
          MXC_NRM_ST_##D_(y, i, ((CT_)MXC_NRM_LD_##D_(x, i) - (CT_)mean[j]) * (CT_)invstd[j] * gk + bk); \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  return 0;                                                                                      \
}                                                                                                \
                                                                                                 \
/* LayerNorm / InstanceNorm / GroupNorm backward.                                                \
 * dx = invstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma, over K;            \
 * dgamma = sum(dy * xhat), dbeta = sum(dy), per k (mode 0) or per row class a % P (mode 1). */ \
static int mxc_nrm_row_bwd_##S_(mxc_opcall *call) {                                               \
  const void *dy = call->in[0].data, *x = call->in[1].data, *gam = call->in[2].data;             \
  void *dx = call->out[0].data, *dg = call->out[1].data, *db = call->out[2].data;                \
  const int64_t A = call->iattr[0], K = call->iattr[1], B = call->iattr[2];                      \
  const int mode = (int)call->iattr[3];                                                          \
  const int64_t P = call->iattr[4];                                                              \
  const double eps = call->fattr[0];                                                             \
  const int64_t W = B < MXC_NRM_CHUNK ? B : MXC_NRM_CHUNK;                                       \
  const int64_t nch = W > 0 ? (B + W - 1) / W : 0;                                               \
  const int64_t ntask = A * nch;                                                                 \
  const int nt = mxc_nrm_threads(call, A * K * B);                                               \
  const int64_t npart = mode == 1 ? A : K;      /* partial sums per row, or per k per thread */ \
  double *part = (double *)calloc((size_t)(2 * npart * (mode == 1 ? 1 : nt) + 1), sizeof(double)); \
  int64_t t, p;                                                                                  \
  if (part == NULL) {                                                                            \
    snprintf(call->err, MXC_ERR_LEN, "normalization backward: out of memory");                   \
    return -1;                                                                                   \
  }                                                                                              \
  MXC_PRAGMA(omp parallel num_threads(nt))                                                       \
  {                                                                                              \
    double *mine = part + (mode == 1 ? 0 : (int64_t)MXC_TID() * 2 * npart);                       \
    MXC_PRAGMA(omp for schedule(static))                                                         \
    for (t = 0; t < ntask; t++) {                                                                \
      double mean[MXC_NRM_CHUNK], invstd[MXC_NRM_CHUNK], var[MXC_NRM_CHUNK];                     \
      double sg[MXC_NRM_CHUNK], sgx[MXC_NRM_CHUNK];                                              \
      const int64_t a = t / nch, b0 = (t % nch) * W;                                             \
      const int64_t nb = b0 + W <= B ? W : B - b0;                                               \
      const int64_t base = a * K * B + b0;                                                       \
      int64_t k, j;                                                                              \
      mxc_nrm_rstats_##S_(x, a, K, B, b0, nb, eps, mean, invstd, var);                            \
      if (mode == 1) {                                                                           \
        double dot = 0, sdy = 0;                                                                 \
        const double w = MXC_NRM_LD_##P_(gam, a % P);                                             \
        mxc_nrm_dot_##S_(x, dy, base, K, mean[0], &dot, &sdy);                                    \
        mine[a] = dot * invstd[0];                                                               \
        mine[npart + a] = sdy;                                                                   \
        {                                                                                        \
          const CT_ cm = (CT_)mean[0];                                                             \
          const CT_ kk = (CT_)(K > 0 ? dot * invstd[0] * invstd[0] / (double)K : 0.0);             \
          const CT_ gm = (CT_)(K > 0 ? sdy / (double)K : 0.0);                                     \
          const CT_ iw = (CT_)(invstd[0] * w);                                                     \
          for (k = 0; k < K; k++) {                                                              \
            CT_ xv = (CT_)MXC_NRM_LD_##D_(x, base + k), g = (CT_)MXC_NRM_LD_##D_(dy, base + k);       \
            MXC_NRM_ST_##D_(dx, base + k, (g - gm - (xv - cm) * kk) * iw);                        \
          }                                                                                      \
        }                                                                                        \
      } else if (B == 1) {                                                                       \
        /* one contiguous row (LayerNorm over the last axis) */                                  \
        const double m = mean[0], is = invstd[0];                                                \
        double s1 = 0, s2 = 0;                                                                   \
        for (k = 0; k < K; k++) {                                                                \
          const double g = MXC_NRM_LD_##D_(dy, base + k);                                        \
          const double xh = (MXC_NRM_LD_##D_(x, base + k) - m) * is;                             \
          const double gg = g * MXC_NRM_LD_##P_(gam, k);                                         \
          s1 += gg;                                                                              \
          s2 += gg * xh;                                                                         \
          mine[k] += g * xh;                                                                     \
          mine[npart + k] += g;                                                                  \
        }                                                                                        \
        s1 = K > 0 ? s1 / (double)K : 0.0;                                                       \
        s2 = K > 0 ? s2 / (double)K : 0.0;                                                       \
        {                                                                                        \
          const CT_ cm = (CT_)m, ci = (CT_)is, c1 = (CT_)s1, c2 = (CT_)s2;                       \
          for (k = 0; k < K; k++) {                                                              \
            const CT_ xh = ((CT_)MXC_NRM_LD_##D_(x, base + k) - cm) * ci;                        \
            const CT_ g = (CT_)MXC_NRM_LD_##D_(dy, base + k) * (CT_)MXC_NRM_LD_##P_(gam, k);     \
            MXC_NRM_ST_##D_(dx, base + k, ci * (g - c1 - xh * c2));                              \
          }                                                                                      \
        }                                                                                        \
      } else {                                                                                   \
        for (j = 0; j < nb; j++) sg[j] = sgx[j] = 0;                                             \
        for (k = 0; k < K; k++) {                                                                \
          const double gk = MXC_NRM_LD_##P_(gam, k);                                              \
          double pg = 0, pb = 0;                                                                 \
          for (j = 0; j < nb; j++) {                                                             \
            const int64_t i = base + k * B + j;                                                  \
            const double g = MXC_NRM_LD_##D_(dy, i);                                              \
            const double xh = (MXC_NRM_LD_##D_(x, i) - mean[j]) * invstd[j];                      \
            sg[j] += g * gk;                                                                     \
            sgx[j] += g * gk * xh;                                                               \
            pg += g * xh;                                                                        \
            pb += g;                                                                             \
          }                                                                                      \
          mine[k] += pg;                                                                         \
          mine[npart + k] += pb;                                                                 \
        }                                                                                        \
        for (j = 0; j < nb; j++) {                                                               \
          sg[j] = K > 0 ? sg[j] / (double)K : 0.0;                                               \
          sgx[j] = K > 0 ? sgx[j] / (double)K : 0.0;                                             \
        }                                                                                        \
        for (k = 0; k < K; k++) {                                                                \
          const CT_ gk = (CT_)MXC_NRM_LD_##P_(gam, k);                                              \
          for (j = 0; j < nb; j++) {                                                             \
            const int64_t i = base + k * B + j;                                                  \
            const CT_ xh = ((CT_)MXC_NRM_LD_##D_(x, i) - (CT_)mean[j]) * (CT_)invstd[j];              \
            const CT_ g = (CT_)MXC_NRM_LD_##D_(dy, i) * gk;                                         \
            MXC_NRM_ST_##D_(dx, i, (CT_)invstd[j] * (g - (CT_)sg[j] - xh * (CT_)sgx[j]));            \
          }                                                                                      \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  if (mode == 1) {                                                                               \
    double *acc = (double *)calloc((size_t)(2 * P + 1), sizeof(double));                         \
    int64_t a;                                                                                   \
    if (acc == NULL) {                                                                           \
      free(part);                                                                                \
      snprintf(call->err, MXC_ERR_LEN, "normalization backward: out of memory");                 \
      return -1;                                                                                 \
    }                                                                                            \
    for (a = 0; a < A; a++) {                                                                    \
      acc[a % P] += part[a];                                                                     \
      acc[P + a % P] += part[npart + a];                                                         \
    }                                                                                            \
    for (p = 0; p < P; p++) {                                                                    \
      MXC_NRM_ST_##P_(dg, p, acc[p]);                                                             \
      MXC_NRM_ST_##P_(db, p, acc[P + p]);                                                         \
    }                                                                                            \
    free(acc);                                                                                   \
  } else {                                                                                       \
    int th;                                                                                      \
    for (th = 1; th < nt; th++)                                                                  \
      for (p = 0; p < 2 * npart; p++) part[p] += part[(int64_t)th * 2 * npart + p];              \
    for (p = 0; p < K; p++) {                                                                    \
      MXC_NRM_ST_##P_(dg, p, part[p]);                                                            \
      MXC_NRM_ST_##P_(db, p, part[npart + p]);                                                    \
    }                                                                                            \
  }                                                                                              \
  free(part);                                                                                    \
  return 0;                                                                                      \
}

MXC_NRM_DEFINE(h, h, f, float)      /* BatchNorm float16: parameters in float32 */
MXC_NRM_DEFINE(f, f, f, float)
MXC_NRM_DEFINE(d, d, d, double)
MXC_NRM_DEFINE(hh, h, h, float)     /* LayerNorm/InstanceNorm/GroupNorm float16: all float16 */

static const mxc_code_entry mxc_nrm_table[] = {
  {"bn_fwd", MXC_FLOAT16, mxc_nrm_bn_fwd_h},
  {"bn_fwd", MXC_FLOAT32, mxc_nrm_bn_fwd_f},
  {"bn_fwd", MXC_FLOAT64, mxc_nrm_bn_fwd_d},
  {"bn_bwd", MXC_FLOAT16, mxc_nrm_bn_bwd_h},
  {"bn_bwd", MXC_FLOAT32, mxc_nrm_bn_bwd_f},
  {"bn_bwd", MXC_FLOAT64, mxc_nrm_bn_bwd_d},
  {"row_fwd", MXC_FLOAT16, mxc_nrm_row_fwd_hh},
  {"row_fwd", MXC_FLOAT32, mxc_nrm_row_fwd_f},
  {"row_fwd", MXC_FLOAT64, mxc_nrm_row_fwd_d},
  {"row_bwd", MXC_FLOAT16, mxc_nrm_row_bwd_hh},
  {"row_bwd", MXC_FLOAT32, mxc_nrm_row_bwd_f},
  {"row_bwd", MXC_FLOAT64, mxc_nrm_row_bwd_d},
};
static const int mxc_nrm_table_len = (int)(sizeof(mxc_nrm_table) / sizeof(mxc_nrm_table[0]));

#endif
