/* CPU kernels of MXNet's linalg syevd, gelqf, inverse, det, slogdet, extractdiag, makediag,
 * extracttrian, maketrian and the backward of syevd. Matrices are the last two axes, batched
 * over the leading ones (iattr[0] = batch). Factorisations work on one matrix at a time in double
 * precision scratch (small dense algorithms: cyclic Jacobi for syevd, Householder LQ as LAPACK's
 * gelq2/orgl2, LU with partial pivoting for inverse/det/slogdet). Batches run in parallel.
 */
#ifndef MXC_KERNELS_LINALG_EXTRA_H
#define MXC_KERNELS_LINALG_EXTRA_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "mxc/opcall.h"
#include "kernels/common.h"
#include "kernels/half.h"

#define MXC_LX_PAR_MIN 4096

/* ---- double-precision helpers on one matrix ------------------------------------------------ */

/* symmetric eigendecomposition of the n x n matrix S (destroyed; lower triangle used):
 * eigenvalues ascending into w, eigenvectors as rows of U (sign: largest |entry| positive) */
static void mxc_lx_syevd_d(int64_t n, double *S, double *V, double *w, double *U) {
  int64_t i, j, k, sweep;
  for (i = 0; i < n; i++)
    for (j = 0; j < i; j++) S[j * n + i] = S[i * n + j];
  for (i = 0; i < n * n; i++) V[i] = 0.0;
  for (i = 0; i < n; i++) V[i * n + i] = 1.0;
  for (sweep = 0; sweep < 100; sweep++) {
    double off = 0.0, tot = 0.0;
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++) {
        double a = S[i * n + j] * S[i * n + j];
        tot += a;
        if (i != j) off += a;
      }
    if (off <= 1e-30 * tot || off == 0.0) break;
    for (i = 0; i < n - 1; i++)
      for (j = i + 1; j < n; j++) {
        double apq = S[i * n + j], app, aqq, theta, t, c, s;
        if (apq == 0.0) continue;
        app = S[i * n + i];
        aqq = S[j * n + j];
        theta = (aqq - app) / (2.0 * apq);
        t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        c = 1.0 / sqrt(t * t + 1.0);
        s = t * c;
        for (k = 0; k < n; k++) {          /* columns i, j */
          double ski = S[k * n + i], skj = S[k * n + j];
          S[k * n + i] = c * ski - s * skj;
          S[k * n + j] = s * ski + c * skj;
        }
        for (k = 0; k < n; k++) {          /* rows i, j */
          double sik = S[i * n + k], sjk = S[j * n + k];
          S[i * n + k] = c * sik - s * sjk;
          S[j * n + k] = s * sik + c * sjk;
        }
        for (k = 0; k < n; k++) {
          double vki = V[k * n + i], vkj = V[k * n + j];
          V[k * n + i] = c * vki - s * vkj;
          V[k * n + j] = s * vki + c * vkj;
        }
      }
  }
  /* selection sort of eigenvalues ascending; eigenvector = column of V */
  for (i = 0; i < n; i++) w[i] = S[i * n + i];
  for (i = 0; i < n; i++) {
    int64_t best = i;
    for (j = i + 1; j < n; j++) if (w[j] < w[best]) best = j;
    if (best != i) {
      double t = w[i]; w[i] = w[best]; w[best] = t;
      for (k = 0; k < n; k++) { t = V[k * n + i]; V[k * n + i] = V[k * n + best]; V[k * n + best] = t; }
    }
  }
  for (i = 0; i < n; i++) {
    int64_t arg = 0;
    double mx = fabs(V[i]);
    for (k = 1; k < n; k++) if (fabs(V[k * n + i]) > mx) { mx = fabs(V[k * n + i]); arg = k; }
    double sg = V[arg * n + i] < 0 ? -1.0 : 1.0;
    for (k = 0; k < n; k++) U[i * n + k] = sg * V[k * n + i];
  }
}

/* LQ of the m x n (m <= n) matrix A (destroyed): L (m x m, lower), Q (m x n, orthonormal rows);
 * reflectors as LAPACK's dlarfg (beta = -sign(alpha) * norm), vecs: m x n scratch, tau: m */
static void mxc_lx_gelqf_d(int64_t m, int64_t n, double *A, double *vecs, double *tau,
                           double *L, double *Q) {
  int64_t i, r, k;
  for (i = 0; i < m; i++) {
    double alpha = A[i * n + i], xn = 0.0, beta, t;
    for (k = i + 1; k < n; k++) xn += A[i * n + k] * A[i * n + k];
    xn = sqrt(xn);
    double *v = vecs + i * n;
    for (k = 0; k < n; k++) v[k] = 0.0;
    v[i] = 1.0;
    if (xn == 0.0) {
      tau[i] = 0.0;
      beta = alpha;
    } else {
      beta = -copysign(hypot(alpha, xn), alpha);
      tau[i] = (beta - alpha) / beta;
      for (k = i + 1; k < n; k++) v[k] = A[i * n + k] / (alpha - beta);
    }
    A[i * n + i] = beta;
    for (k = i + 1; k < n; k++) A[i * n + k] = 0.0;
    t = tau[i];
    if (t != 0.0)
      for (r = i + 1; r < m; r++) {
        double s = 0.0;
        for (k = i; k < n; k++) s += A[r * n + k] * v[k];
        s *= t;
        for (k = i; k < n; k++) A[r * n + k] -= s * v[k];
      }
  }
  for (i = 0; i < m; i++)
    for (k = 0; k < m; k++) L[i * m + k] = k <= i ? A[i * n + k] : 0.0;
  for (r = 0; r < m; r++)
    for (k = 0; k < n; k++) Q[r * n + k] = r == k ? 1.0 : 0.0;
  for (i = m - 1; i >= 0; i--) {          /* Q = [I 0] H_{m-1} ... H_0 */
    double *v = vecs + i * n, t = tau[i];
    if (t == 0.0) continue;
    for (r = 0; r < m; r++) {
      double s = 0.0;
      for (k = i; k < n; k++) s += Q[r * n + k] * v[k];
      s *= t;
      for (k = i; k < n; k++) Q[r * n + k] -= s * v[k];
    }
  }
}

/* LU with partial pivoting in place; returns the permutation's sign, piv: n */
static double mxc_lx_lu_d(int64_t n, double *A, int64_t *piv) {
  int64_t i, j, k;
  double sign = 1.0;
  for (k = 0; k < n; k++) {
    int64_t p = k;
    double mx = fabs(A[k * n + k]);
    for (i = k + 1; i < n; i++) if (fabs(A[i * n + k]) > mx) { mx = fabs(A[i * n + k]); p = i; }
    piv[k] = p;
    if (p != k) {
      sign = -sign;
      for (j = 0; j < n; j++) { double t = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = t; }
    }
    if (A[k * n + k] == 0.0) continue;
    for (i = k + 1; i < n; i++) {
      double f = A[i * n + k] / A[k * n + k];
      A[i * n + k] = f;
      for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
    }
  }
  return sign;
}

/* inverse through LU: B = A^-1 (A destroyed), col: n scratch. Returns 0, or 1 + the index of
 * the first zero pivot when A is singular (as LAPACK's getrf info; B is then left unwritten) */
static int64_t mxc_lx_inverse_d(int64_t n, double *A, double *B, int64_t *piv, double *col) {
  int64_t i, j, c;
  mxc_lx_lu_d(n, A, piv);
  for (i = 0; i < n; i++)
    if (A[i * n + i] == 0.0) return i + 1;
  for (c = 0; c < n; c++) {
    for (i = 0; i < n; i++) col[i] = i == c ? 1.0 : 0.0;
    for (i = 0; i < n; i++) {             /* apply the row swaps */
      if (piv[i] != i) { double t = col[i]; col[i] = col[piv[i]]; col[piv[i]] = t; }
    }
    for (i = 0; i < n; i++)
      for (j = 0; j < i; j++) col[i] -= A[i * n + j] * col[j];
    for (i = n - 1; i >= 0; i--) {
      for (j = i + 1; j < n; j++) col[i] -= A[i * n + j] * col[j];
      col[i] /= A[i * n + i];
    }
    for (i = 0; i < n; i++) B[i * n + c] = col[i];
  }
  return 0;
}

#define MXC_LX_ALLOC(ptr, count)                                                                   \
  do {                                                                                             \
    (ptr) = malloc(sizeof(*(ptr)) * (size_t)((count) > 0 ? (count) : 1));                          \
    if (!(ptr)) fail = 1;                                                                          \
  } while (0)

#define MXC_LINALG_EXTRA_IMPL(T, SUF, LD, ST, EPS)                                                              \
  static int mxc_lx_syevd_##SUF(mxc_opcall *call) {                                                \
    int64_t batch = call->iattr[0], n = call->iattr[1], b;                                         \
    const T *A = (const T *)call->in[0].data;                                                      \
    T *U = (T *)call->out[0].data, *Lw = (T *)call->out[1].data;                                   \
    int fail = 0;                                                                                  \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (batch * n * n >= MXC_LX_PAR_MIN))  \
    for (b = 0; b < batch; b++) {                                                                  \
      double *S, *V, *w, *Ud;                                                                      \
      int64_t i;                                                                                   \
      S = malloc(sizeof(double) * (size_t)(3 * n * n + n + 1));                                    \
      if (!S) { fail = 1; continue; }                                                              \
      V = S + n * n; Ud = V + n * n; w = Ud + n * n;                                               \
      for (i = 0; i < n * n; i++) S[i] = LD(A[b * n * n + i]);                                 \
      mxc_lx_syevd_d(n, S, V, w, Ud);                                                              \
      for (i = 0; i < n * n; i++) U[b * n * n + i] = ST(Ud[i]);                                     \
      for (i = 0; i < n; i++) Lw[b * n + i] = ST(w[i]);                                             \
      free(S);                                                                                     \
    }                                                                                              \
    if (fail) { snprintf(call->err, MXC_ERR_LEN, "_linalg_syevd: out of memory"); return -1; }     \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* dA = U^T Y U, X = dU U^T, Y_ij = (X_ij - X_ji) / (2 max(L_i - L_j, eps)) (i > j), Y_ii = dL_i */ \
  static int mxc_lx_syevd_bwd_##SUF(mxc_opcall *call) {                                            \
    int64_t batch = call->iattr[0], n = call->iattr[1], b;                                         \
    const T *dU = (const T *)call->in[0].data, *dL = (const T *)call->in[1].data;                  \
    const T *U = (const T *)call->in[2].data, *L = (const T *)call->in[3].data;                    \
    T *dA = (T *)call->out[0].data;                                                                \
    const double eps = EPS;                                            \
    int fail = 0;                                                                                  \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (batch * n * n >= MXC_LX_PAR_MIN))  \
    for (b = 0; b < batch; b++) {                                                                  \
      double *X, *Y, *Z;                                                                           \
      int64_t i, j, k;                                                                             \
      const T *u = U + b * n * n, *du = dU + b * n * n, *l = L + b * n;                            \
      X = malloc(sizeof(double) * (size_t)(3 * n * n + 1));                                        \
      if (!X) { fail = 1; continue; }                                                              \
      Y = X + n * n; Z = Y + n * n;                                                                \
      for (i = 0; i < n; i++)                                                                      \
        for (j = 0; j < n; j++) {                                                                  \
          double s = 0.0;                                                                          \
          for (k = 0; k < n; k++) s += LD(du[i * n + k]) * LD(u[j * n + k]);               \
          X[i * n + j] = s;                                                                        \
        }                                                                                          \
      for (i = 0; i < n; i++) {                                                                    \
        Y[i * n + i] = LD(dL[b * n + i]);                                                      \
        for (j = 0; j < i; j++) {                                                                  \
          double den = LD(l[i]) - LD(l[j]);                                                \
          if (den < eps) den = eps;                                                                \
          den *= 2.0;                                                                              \
          Y[i * n + j] = Y[j * n + i] = (X[i * n + j] - X[j * n + i]) / den;                       \
        }                                                                                          \
      }                                                                                            \
      for (i = 0; i < n; i++)              /* Z = U^T Y */                                         \
        for (j = 0; j < n; j++) {                                                                  \
          double s = 0.0;                                                                          \
          for (k = 0; k < n; k++) s += LD(u[k * n + i]) * Y[k * n + j];                        \
          Z[i * n + j] = s;                                                                        \
        }                                                                                          \
      for (i = 0; i < n; i++)                                                                      \
        for (j = 0; j < n; j++) {                                                                  \
          double s = 0.0;                                                                          \
          for (k = 0; k < n; k++) s += Z[i * n + k] * LD(u[k * n + j]);                        \
          dA[b * n * n + i * n + j] = ST(s);                                                        \
        }                                                                                          \
      free(X);                                                                                     \
    }                                                                                              \
    if (fail) { snprintf(call->err, MXC_ERR_LEN, "_backward_linalg_syevd: out of memory"); return -1; } \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_lx_gelqf_##SUF(mxc_opcall *call) {                                                \
    int64_t batch = call->iattr[0], m = call->iattr[1], n = call->iattr[2], b;                     \
    const T *A = (const T *)call->in[0].data;                                                      \
    T *Q = (T *)call->out[0].data, *L = (T *)call->out[1].data;                                    \
    int fail = 0;                                                                                  \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (batch * m * n >= MXC_LX_PAR_MIN))  \
    for (b = 0; b < batch; b++) {                                                                  \
      double *W, *vecs, *tau, *Ld, *Qd;                                                            \
      int64_t i;                                                                                   \
      W = malloc(sizeof(double) * (size_t)(3 * m * n + m + m * m + 1));                            \
      if (!W) { fail = 1; continue; }                                                              \
      vecs = W + m * n; Qd = vecs + m * n; tau = Qd + m * n; Ld = tau + m;                         \
      for (i = 0; i < m * n; i++) W[i] = LD(A[b * m * n + i]);                                 \
      mxc_lx_gelqf_d(m, n, W, vecs, tau, Ld, Qd);                                                  \
      for (i = 0; i < m * n; i++) Q[b * m * n + i] = ST(Qd[i]);                                     \
      for (i = 0; i < m * m; i++) L[b * m * m + i] = ST(Ld[i]);                                     \
      free(W);                                                                                     \
    }                                                                                              \
    if (fail) { snprintf(call->err, MXC_ERR_LEN, "_linalg_gelqf: out of memory"); return -1; }     \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_lx_inverse_##SUF(mxc_opcall *call) {                                              \
    int64_t batch = call->iattr[0], n = call->iattr[1], b;                                         \
    const T *A = (const T *)call->in[0].data;                                                      \
    T *B = (T *)call->out[0].data;                                                                 \
    int fail = 0;                                                                                  \
    int64_t bad = -1, badpiv = 0; /* the first singular matrix of the batch and its zero pivot */  \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (batch * n * n >= MXC_LX_PAR_MIN))  \
    for (b = 0; b < batch; b++) {                                                                  \
      double *W, *Bd, *col;                                                                        \
      int64_t *piv, i, zero;                                                                       \
      W = malloc(sizeof(double) * (size_t)(2 * n * n + n + 1));                                    \
      piv = malloc(sizeof(int64_t) * (size_t)(n + 1));                                             \
      if (!W || !piv) { free(W); free(piv); fail = 1; continue; }                                  \
      Bd = W + n * n; col = Bd + n * n;                                                            \
      for (i = 0; i < n * n; i++) W[i] = LD(A[b * n * n + i]);                                 \
      zero = mxc_lx_inverse_d(n, W, Bd, piv, col);                                                 \
      if (zero) {                                                                                  \
        MXC_PRAGMA(omp critical(mxc_lx_inverse_bad))                                               \
        if (bad < 0 || b < bad) { bad = b; badpiv = zero; }                                        \
      } else {                                                                                     \
        for (i = 0; i < n * n; i++) B[b * n * n + i] = ST(Bd[i]);                                   \
      }                                                                                            \
      free(W); free(piv);                                                                          \
    }                                                                                              \
    if (fail) { snprintf(call->err, MXC_ERR_LEN, "_linalg_inverse: out of memory"); return -1; }   \
    if (bad >= 0) {                                                                                \
      snprintf(call->err, MXC_ERR_LEN, "the matrix at batch index %lld is singular "               \
               "(LU pivot %lld is zero), it has no inverse", (long long)bad,                       \
               (long long)badpiv);                                                                 \
      return -1;                                                                                   \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* iattr[2]: 0 det (out: det), 1 slogdet (out: sign, logabsdet) */                              \
  static int mxc_lx_det_##SUF(mxc_opcall *call) {                                                  \
    int64_t batch = call->iattr[0], n = call->iattr[1], mode = call->iattr[2], b;                  \
    const T *A = (const T *)call->in[0].data;                                                      \
    T *o0 = (T *)call->out[0].data, *o1 = mode ? (T *)call->out[1].data : NULL;                    \
    int fail = 0;                                                                                  \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (batch * n * n >= MXC_LX_PAR_MIN))  \
    for (b = 0; b < batch; b++) {                                                                  \
      double *W, sign, logdet = 0.0, det = 1.0;                                                    \
      int64_t *piv, i;                                                                             \
      W = malloc(sizeof(double) * (size_t)(n * n + 1));                                            \
      piv = malloc(sizeof(int64_t) * (size_t)(n + 1));                                             \
      if (!W || !piv) { free(W); free(piv); fail = 1; continue; }                                  \
      for (i = 0; i < n * n; i++) W[i] = LD(A[b * n * n + i]);                                 \
      sign = mxc_lx_lu_d(n, W, piv);                                                               \
      for (i = 0; i < n; i++) {                                                                    \
        double d = W[i * n + i];                                                                   \
        det *= d;                                                                                  \
        if (d < 0) sign = -sign;                                                                   \
        if (d == 0) sign = 0.0;                                                                    \
        logdet += log(fabs(d));                                                                    \
      }                                                                                            \
      if (mode) { o0[b] = ST(sign); o1[b] = ST(logdet); }                                            \
      else o0[b] = ST(sign == 0.0 ? 0.0 : (sign < 0 ? -fabs(det) : fabs(det)));                   \
      free(W); free(piv);                                                                          \
    }                                                                                              \
    if (fail) { snprintf(call->err, MXC_ERR_LEN, "_linalg_det: out of memory"); return -1; }       \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* iattr: batch, n (matrix side), offset; extract: (batch, n, n) -> (batch, n - |k|) */         \
  static int mxc_lx_extractdiag_##SUF(mxc_opcall *call) {                                          \
    int64_t batch = call->iattr[0], n = call->iattr[1], k = call->iattr[2], b;                     \
    int64_t len = n - (k < 0 ? -k : k), r0 = k < 0 ? -k : 0, c0 = k > 0 ? k : 0;                  \
    const T *A = (const T *)call->in[0].data;                                                      \
    T *B = (T *)call->out[0].data;                                                                 \
    for (b = 0; b < batch; b++) {                                                                  \
      int64_t i;                                                                                   \
      for (i = 0; i < len; i++) B[b * len + i] = A[b * n * n + (r0 + i) * n + c0 + i];             \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_lx_makediag_##SUF(mxc_opcall *call) {                                             \
    int64_t batch = call->iattr[0], n = call->iattr[1], k = call->iattr[2], b;                     \
    int64_t len = n - (k < 0 ? -k : k), r0 = k < 0 ? -k : 0, c0 = k > 0 ? k : 0;                  \
    const T *A = (const T *)call->in[0].data;                                                      \
    T *B = (T *)call->out[0].data;                                                                 \
    memset(B, 0, sizeof(T) * (size_t)(batch * n * n));                                             \
    for (b = 0; b < batch; b++) {                                                                  \
      int64_t i;                                                                                   \
      for (i = 0; i < len; i++) B[b * n * n + (r0 + i) * n + c0 + i] = A[b * len + i];             \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* iattr: batch, n, offset, lower; packed triangle index as MXNet's CopyTrian */                 \
  static int mxc_lx_trian_##SUF(mxc_opcall *call, int extract) {                                   \
    int64_t batch = call->iattr[0], n = call->iattr[1], k = call->iattr[2], lower = call->iattr[3];\
    int64_t ak = k < 0 ? -k : k, mm = ((n - ak) * (n - ak + 1)) / 2, b;                            \
    int upper = k > 0 || (k == 0 && !lower);                                                       \
    T *M = extract ? (T *)call->in[0].data : (T *)call->out[0].data;                               \
    T *P = extract ? (T *)call->out[0].data : (T *)call->in[0].data;                               \
    if (!extract) memset(M, 0, sizeof(T) * (size_t)(batch * n * n));                              \
    for (b = 0; b < batch; b++) {                                                                  \
      int64_t r, c;                                                                                \
      for (r = 0; r < n; r++)                                                                      \
        for (c = 0; c < n; c++) {                                                                  \
          int64_t row = upper ? c : r, col = upper ? r : c;                                        \
          row -= ak;                                                                               \
          if (row >= col && row >= 0) {                                                            \
            int64_t idx = (row * (row + 1)) / 2 + col;                                             \
            if (extract) P[b * mm + idx] = M[b * n * n + r * n + c];                               \
            else M[b * n * n + r * n + c] = P[b * mm + idx];                                       \
          }                                                                                        \
        }                                                                                          \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
  static int mxc_lx_extracttrian_##SUF(mxc_opcall *call) { return mxc_lx_trian_##SUF(call, 1); }   \
  static int mxc_lx_maketrian_##SUF(mxc_opcall *call) { return mxc_lx_trian_##SUF(call, 0); }

#define MXC_LX_LD(x) ((double)(x))
#define MXC_LX_ST_F(x) ((float)(x))
#define MXC_LX_ST_D(x) ((double)(x))
#define MXC_LX_LD_H(x) ((double)mxc_half_to_float(x))
#define MXC_LX_ST_H(x) mxc_float_to_half((float)(x))
MXC_LINALG_EXTRA_IMPL(float, f32, MXC_LX_LD, MXC_LX_ST_F, 1e-30)
MXC_LINALG_EXTRA_IMPL(double, f64, MXC_LX_LD, MXC_LX_ST_D, 1e-100)
MXC_LINALG_EXTRA_IMPL(uint16_t, f16, MXC_LX_LD_H, MXC_LX_ST_H, 1e-30)

#define MXC_LX_ENTRY(name) {#name, MXC_FLOAT32, mxc_lx_##name##_f32}, \
                           {#name, MXC_FLOAT64, mxc_lx_##name##_f64}, \
                           {#name, MXC_FLOAT16, mxc_lx_##name##_f16}

static const mxc_code_entry mxc_linalg_extra_table[] = {
    MXC_LX_ENTRY(syevd),       MXC_LX_ENTRY(syevd_bwd),    MXC_LX_ENTRY(gelqf),
    MXC_LX_ENTRY(inverse),     MXC_LX_ENTRY(det),          MXC_LX_ENTRY(extractdiag),
    MXC_LX_ENTRY(makediag),    MXC_LX_ENTRY(extracttrian), MXC_LX_ENTRY(maketrian),
};
static const int mxc_linalg_extra_table_len =
    (int)(sizeof(mxc_linalg_extra_table) / sizeof(mxc_linalg_extra_table[0]));

#endif
