/* Convolution of inputs smaller than the kernel as one dense product per call.
 *
 * When an input sample has fewer positions than the kernel has taps (isz < ksz: ResNet's 3x3
 * layers on 2x2 and 1x1 inputs), each pair of an output position o and an input position i
 * meets through at most one tap, tap(o, i), or none. The convolution (one group) is then
 *
 *   Y[n] = Wd X[n],  Wd[c * osz + o, q * isz + i] = W[c, q, tap(o, i)]  (0 where there is none)
 *
 * with X[n] and Y[n] the NC(D)HW samples as they lie in memory. The three primitives become
 * single GEMMs over all samples:
 *
 *   forward          Y  [n, co*osz] = X  [n, ci*isz] Wd^T
 *   backward data    dX [n, ci*isz] = dY [n, co*osz] Wd
 *   backward weight  dWd = dY^T X, then dW[c, q, t] = sum of dWd over the pairs with tap t
 *
 * The im2col product multiplies ksz taps per output and input channel, of which only the
 * taps that read inside the input matter; this one multiplies isz < ksz. A 3x3 kernel with pad
 * 1 on a 1x1 input: 9x fewer products (only the centre tap is live); on 2x2: 2.25x fewer. No
 * column matrix and no packing either. Building Wd (co*osz*ci*isz elements) costs one pass over
 * memory that the n samples' products amortise, hence MXC_CONV_DENSE_MIN_N.
 */
#ifndef MXC_KERNELS_CONVOLUTION_DENSE_H
#define MXC_KERNELS_CONVOLUTION_DENSE_H
#include "kernels/common.h"

/* Wd larger than this (elements) takes the im2col path */
#define MXC_CONV_DENSE_LIMIT ((int64_t)1 << 22)
#define MXC_CONV_DENSE_MIN_N 4
/* inputs of at most this many positions build Wd row by row (mxc_conv_dense_move) */
#define MXC_CONV_DENSE_ROWWISE 8

/* tap[o * isz + i] = the kernel tap joining output position o and input position i, or -1.
 * Positions and taps are flat (d, h, w) indices. */
static void mxc_conv_dense_taps(int32_t *tap, const int64_t od[3], const int64_t id[3],
                                const int64_t k[3], const int64_t s[3], const int64_t d[3],
                                const int64_t p[3]) {
  const int64_t osz = od[0] * od[1] * od[2], isz = id[0] * id[1] * id[2];
  int64_t o, i;
  for (o = 0; o < osz; o++) {
    const int64_t oz[3] = {o / (od[1] * od[2]), (o / od[2]) % od[1], o % od[2]};
    for (i = 0; i < isz; i++) {
      const int64_t iz[3] = {i / (id[1] * id[2]), (i / id[2]) % id[1], i % id[2]};
      int64_t t = 0;
      int a;
      for (a = 0; a < 3 && t >= 0; a++) {
        const int64_t num = iz[a] - oz[a] * s[a] + p[a];
        if (num < 0 || num % d[a] != 0 || num / d[a] >= k[a])
          t = -1;
        else
          t = t * k[a] + num / d[a];
      }
      tap[o * isz + i] = (int32_t)t;
    }
  }
}

#define MXC_CONV_DENSE_DEFINE(T, SUF, GEMM)                                                        \
/* Moves the kernel between its two forms (see the top of the file), co * osz rows of ci * isz     \
 * for wd. dir 0: wd = Wd of w (zeros where no tap joins o and i); dir 1: w = the sums of wd over  \
 * the pairs of each tap (taps no pair uses get 0), the adjoint. A row of wd and the kernel block  \
 * w[c] both stay in L1. With few input positions the row is walked in order (q, then its isz     \
 * taps); otherwise per (o, i) pair over the input channels q with fixed strides. Both sum the   \
 * adjoint in the same order (o, then i, for each element), so the results are the same. */       \
static void mxc_conv_dense_move_##SUF(T *w, T *wd, const int32_t *tap, int64_t co, int64_t ci,     \
                                      int64_t osz, int64_t isz, int64_t ksz, int dir, int nt) {    \
  int64_t c;                                                                                       \
  (void)nt;                                                                                        \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (co * osz * ci * isz >= (1 << 18))) \
  for (c = 0; c < co; c++) {                                                                       \
    T *wc = w + c * ci * ksz;                                                                      \
    int64_t o, q, i;                                                                               \
    if (isz <= MXC_CONV_DENSE_ROWWISE) {                                                           \
      /* few input positions: walk each row of wd in order, q by q (the per-i passes below     \
       * run isz strided sweeps over one row: 2-3x slower on ResNet's 2x2 layers) */              \
      if (dir) memset(wc, 0, sizeof(T) * (size_t)(ci * ksz));                                      \
      for (o = 0; o < osz; o++) {                                                                  \
        T *row = wd + (c * osz + o) * ci * isz;                                                    \
        const int32_t *tp = tap + o * isz;                                                         \
        int32_t tt[MXC_CONV_DENSE_ROWWISE];                                                        \
        int keep[MXC_CONV_DENSE_ROWWISE];                                                          \
        for (i = 0; i < isz; i++) { /* padding taps read tap 0 and keep nothing */                \
          tt[i] = tp[i] < 0 ? 0 : tp[i];                                                           \
          keep[i] = tp[i] >= 0;                                                                    \
        }                                                                                          \
        if (dir) {                                                                                 \
          for (q = 0; q < ci; q++) {                                                               \
            T *k = wc + q * ksz;                                                                   \
            const T *r = row + q * isz;                                                            \
            for (i = 0; i < isz; i++)                                                              \
              if (keep[i]) k[tt[i]] += r[i];                                                       \
          }                                                                                        \
        } else if (isz == 1) {                                                                     \
          const T *k = wc + tt[0];                                                                 \
          if (tp[0] < 0) {                                                                         \
            memset(row, 0, sizeof(T) * (size_t)ci);                                                \
          } else {                                                                                 \
            for (q = 0; q < ci; q++) row[q] = k[q * ksz];                                          \
          }                                                                                        \
        } else {                                                                                   \
          for (q = 0; q < ci; q++) {                                                               \
            const T *k = wc + q * ksz;                                                             \
            T *r = row + q * isz;                                                                  \
            for (i = 0; i < isz; i++) r[i] = keep[i] ? k[tt[i]] : (T)0;                            \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
      continue;                                                                                    \
    }                                                                                              \
    if (dir) memset(wc, 0, sizeof(T) * (size_t)(ci * ksz));                                        \
    for (o = 0; o < osz; o++) {                                                                    \
      T *row = wd + (c * osz + o) * ci * isz;                                                      \
      for (i = 0; i < isz; i++) {                                                                  \
        const int32_t t = tap[o * isz + i];                                                        \
        T *r = row + i, *k = wc + t;                                                               \
        if (dir == 0 && t < 0) {                                                                   \
          for (q = 0; q < ci; q++) r[q * isz] = (T)0;                                              \
        } else if (dir == 0) {                                                                     \
          for (q = 0; q < ci; q++) r[q * isz] = k[q * ksz];                                        \
        } else if (t >= 0) {                                                                       \
          for (q = 0; q < ci; q++) k[q * ksz] += r[q * isz];                                       \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* Y = Wd X for the n samples (beta 1: Y already holds the bias) */                                \
static void mxc_conv_dense_forward_##SUF(const T *x, const T *wd, T *y, int64_t n, int64_t m,      \
                                         int64_t kk, T beta) {                                     \
  GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasTrans, (int)n, (int)m, (int)kk, (T)1, x,      \
       (int)kk, wd, (int)kk, beta, y, (int)m);                                                     \
}                                                                                                  \
                                                                                                   \
/* dX = dY Wd for the n samples */                                                                 \
static void mxc_conv_dense_bwd_data_##SUF(const T *dy, const T *wd, T *dx, int64_t n,              \
                                          int64_t m, int64_t kk) {                                 \
  GEMM(MXC_CblasRowMajor, MXC_CblasNoTrans, MXC_CblasNoTrans, (int)n, (int)kk, (int)m, (T)1, dy,   \
       (int)m, wd, (int)kk, (T)0, dx, (int)kk);                                                    \
}                                                                                                  \
                                                                                                   \
/* dWd = dY^T X over the n samples */                                                              \
static void mxc_conv_dense_bwd_weight_##SUF(const T *dy, const T *x, T *dwd, int64_t n,            \
                                            int64_t m, int64_t kk) {                               \
  GEMM(MXC_CblasRowMajor, MXC_CblasTrans, MXC_CblasNoTrans, (int)m, (int)kk, (int)n, (T)1, dy,     \
       (int)m, x, (int)kk, (T)0, dwd, (int)kk);                                                    \
}

#endif
