/* Linear-algebra kernels for the linalg_* operators (MXNet's la_op), float32 and float64.
 *
 * Every tensor is a C-contiguous batch of row-major matrices: the last two axes are the matrix,
 * the leading ones the batch (their product is iattr[0] = batch for every kernel). BLAS is called
 * in row-major CBLAS form; LAPACK (potrf, potri) is column major, where a row-major lower
 * triangle is an upper one, so the uplo letter is swapped.
 *
 * Kernels and attributes (all matrices of one call have the shapes the operator inferred):
 *   potrf      in A (n,n)                out L        iattr [1] n [2] lower
 *   potri      in L (n,n)                out A^-1     iattr [1] n [2] lower
 *   trsm/trmm  in A (k,k), B (m,n)       out C (m,n)  iattr [1] m [2] n [3] k [4] rightside
 *                                                     [5] lower [6] transpose; fattr [0] alpha
 *   syrk       in A (r,c)                out (n,n)    iattr [1] r [2] c [3] transpose
 *                                                     fattr [0] alpha
 *   sumlogdiag in A (n,n)                out (batch)  iattr [1] n
 *   potrf_bwd  in dL, L                  out dA       iattr [1] n [2] lower
 *   potri_bwd  in dA, L, A^-1            out dL       iattr [1] n [2] lower
 *   trsm_bwd   in dC, A, B, C            out dA, dB   as trsm
 *   trmm_bwd   in dC, A, B               out dA, dB   as trmm
 *   sumlogdiag_bwd in dB (batch), A      out dA       iattr [1] n
 * The gradient formulas are MXNet's (src/operator/tensor/la_op-inl.h); BLAS calls run one
 * matrix after another (OpenBLAS threads each large one), the elementwise passes use OpenMP.
 */
#ifndef MXC_KERNELS_LINALG_H
#define MXC_KERNELS_LINALG_H
#include "kernels/common.h"
#include "mxc/blas.h"

#define MXC_LA_PAR_MIN 16384

#define MXC_LA_SIDE(r) ((r) ? MXC_CblasRight : MXC_CblasLeft)
#define MXC_LA_UPLO(l) ((l) ? MXC_CblasLower : MXC_CblasUpper)
#define MXC_LA_TRANS(t) ((t) ? MXC_CblasTrans : MXC_CblasNoTrans)

#define MXC_LINALG_IMPL(T, SUF, P)                                                                 \
  /* zero the strict upper (zero_upper) or strict lower triangle of each n x n matrix */           \
  static void mxc_la_zero_tri_##SUF(T *a, int64_t batch, int64_t n, int zero_upper, int nth) {     \
    int64_t rows = batch * n, i;                                                                   \
    (void)nth;                                                                                     \
    MXC_PRAGMA(omp parallel for num_threads(nth) if (rows * n >= MXC_LA_PAR_MIN))                  \
    for (i = 0; i < rows; i++) {                                                                   \
      int64_t r = i % n, c;                                                                        \
      T *row = a + i * n;                                                                          \
      if (zero_upper) {                                                                            \
        for (c = r + 1; c < n; c++) row[c] = 0;                                                    \
      } else {                                                                                     \
        for (c = 0; c < r; c++) row[c] = 0;                                                        \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  /* mirror the lower triangle onto the upper one (lower_to_upper) or the other way round */       \
  static void mxc_la_mirror_##SUF(T *a, int64_t batch, int64_t n, int lower_to_upper, int nth) {   \
    int64_t b;                                                                                     \
    (void)nth;                                                                                     \
    MXC_PRAGMA(omp parallel for num_threads(nth) if (batch * n * n >= MXC_LA_PAR_MIN))             \
    for (b = 0; b < batch; b++) {                                                                  \
      T *m = a + b * n * n;                                                                        \
      int64_t r, c;                                                                                \
      for (r = 0; r < n; r++)                                                                      \
        for (c = r + 1; c < n; c++) {                                                              \
          if (lower_to_upper) m[r * n + c] = m[c * n + r];                                         \
          else m[c * n + r] = m[r * n + c];                                                        \
        }                                                                                          \
    }                                                                                              \
  }                                                                                                \
  static void mxc_la_copy_##SUF(T *dst, const T *src, int64_t count, int nth) {                    \
    int64_t i;                                                                                     \
    (void)nth;                                                                                     \
    if (dst == src) return;                                                                        \
    MXC_PRAGMA(omp parallel for num_threads(nth) if (count >= MXC_LA_PAR_MIN))                     \
    for (i = 0; i < count; i++) dst[i] = src[i];                                                   \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_potrf_##SUF(mxc_opcall *call) {                                                \
    int64_t batch = call->iattr[0], n = call->iattr[1], b;                                         \
    int lower = (int)call->iattr[2], ni = (int)n, lda = ni > 0 ? ni : 1, info = 0;                 \
    T *out = (T *)call->out[0].data;                                                               \
    if (batch * n == 0) return 0;                                                                  \
    mxc_la_copy_##SUF(out, (const T *)call->in[0].data, batch * n * n, call->nthreads);            \
    for (b = 0; b < batch; b++) {                                                                  \
      mxc_##P##potrf(lower ? "U" : "L", &ni, out + b * n * n, &lda, &info, 1);                     \
      if (info != 0) {                                                                             \
        snprintf(call->err, MXC_ERR_LEN,                                                           \
                 "the matrix at batch index %lld is not positive definite (LAPACK " #P             \
                 "potrf info %d)", (long long)b, info);                                            \
        return -1;                                                                                 \
      }                                                                                            \
    }                                                                                              \
    mxc_la_zero_tri_##SUF(out, batch, n, lower, call->nthreads);                                   \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_potri_##SUF(mxc_opcall *call) {                                                \
    int64_t batch = call->iattr[0], n = call->iattr[1], b;                                         \
    int lower = (int)call->iattr[2], ni = (int)n, lda = ni > 0 ? ni : 1, info = 0;                 \
    T *out = (T *)call->out[0].data;                                                               \
    if (batch * n == 0) return 0;                                                                  \
    mxc_la_copy_##SUF(out, (const T *)call->in[0].data, batch * n * n, call->nthreads);            \
    for (b = 0; b < batch; b++) {                                                                  \
      mxc_##P##potri(lower ? "U" : "L", &ni, out + b * n * n, &lda, &info, 1);                     \
      if (info != 0) {                                                                             \
        snprintf(call->err, MXC_ERR_LEN,                                                           \
                 "the factor at batch index %lld is singular (LAPACK " #P "potri info %d)",       \
                 (long long)b, info);                                                              \
        return -1;                                                                                 \
      }                                                                                            \
    }                                                                                              \
    mxc_la_mirror_##SUF(out, batch, n, lower, call->nthreads);                                     \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* C[b] = alpha op(A[b])^-1 C[b] (left) or alpha C[b] op(A[b])^-1 (right), in place */          \
  static void mxc_la_trsm_run_##SUF(const T *a, T *c, int64_t batch, int64_t m, int64_t n,         \
                                    int64_t k, int right, int lower, int trans, T alpha) {         \
    int64_t b;                                                                                     \
    if (m == 0 || n == 0) return;                                                                  \
    for (b = 0; b < batch; b++)                                                                    \
      mxc_##P##trsm(MXC_CblasRowMajor, MXC_LA_SIDE(right), MXC_LA_UPLO(lower),                     \
                    MXC_LA_TRANS(trans), MXC_CblasNonUnit, (int)m, (int)n, alpha, a + b * k * k,   \
                    (int)(k > 0 ? k : 1), c + b * m * n, (int)n);                                  \
  }                                                                                                \
  static void mxc_la_trmm_run_##SUF(const T *a, T *c, int64_t batch, int64_t m, int64_t n,         \
                                    int64_t k, int right, int lower, int trans, T alpha) {         \
    int64_t b;                                                                                     \
    if (m == 0 || n == 0) return;                                                                  \
    for (b = 0; b < batch; b++)                                                                    \
      mxc_##P##trmm(MXC_CblasRowMajor, MXC_LA_SIDE(right), MXC_LA_UPLO(lower),                     \
                    MXC_LA_TRANS(trans), MXC_CblasNonUnit, (int)m, (int)n, alpha, a + b * k * k,   \
                    (int)(k > 0 ? k : 1), c + b * m * n, (int)n);                                  \
  }                                                                                                \
  /* out[b] = alpha op(x[b]) op(y[b]) + beta out[b]; op(x) M x K, op(y) K x N              */     \
  static void mxc_la_gemm_##SUF(const T *x, const T *y, T *o, int64_t batch, int64_t M,            \
                                int64_t N, int64_t K, int tx, int ty, T alpha, T beta) {           \
    int64_t b;                                                                                     \
    if (M == 0 || N == 0) return;                                                                  \
    for (b = 0; b < batch; b++)                                                                    \
      mxc_##P##gemm(MXC_CblasRowMajor, MXC_LA_TRANS(tx), MXC_LA_TRANS(ty), (int)M, (int)N,         \
                    (int)K, alpha, x + b * M * K, (int)(tx ? (M > 0 ? M : 1) : (K > 0 ? K : 1)),   \
                    y + b * K * N, (int)(ty ? (K > 0 ? K : 1) : (N > 0 ? N : 1)), beta,            \
                    o + b * M * N, (int)N);                                                        \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_trsm_##SUF(mxc_opcall *call) {                                                 \
    const int64_t *ia = call->iattr;                                                               \
    T *out = (T *)call->out[0].data;                                                               \
    mxc_la_copy_##SUF(out, (const T *)call->in[1].data, ia[0] * ia[1] * ia[2], call->nthreads);    \
    mxc_la_trsm_run_##SUF((const T *)call->in[0].data, out, ia[0], ia[1], ia[2], ia[3],            \
                          (int)ia[4], (int)ia[5], (int)ia[6], (T)call->fattr[0]);                  \
    return 0;                                                                                      \
  }                                                                                                \
  static int mxc_la_trmm_##SUF(mxc_opcall *call) {                                                 \
    const int64_t *ia = call->iattr;                                                               \
    T *out = (T *)call->out[0].data;                                                               \
    mxc_la_copy_##SUF(out, (const T *)call->in[1].data, ia[0] * ia[1] * ia[2], call->nthreads);    \
    mxc_la_trmm_run_##SUF((const T *)call->in[0].data, out, ia[0], ia[1], ia[2], ia[3],            \
                          (int)ia[4], (int)ia[5], (int)ia[6], (T)call->fattr[0]);                  \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_syrk_##SUF(mxc_opcall *call) {                                                 \
    int64_t batch = call->iattr[0], r = call->iattr[1], c = call->iattr[2], b;                     \
    int trans = (int)call->iattr[3];                                                               \
    int64_t n = trans ? c : r, k = trans ? r : c;                                                  \
    const T *a = (const T *)call->in[0].data;                                                      \
    T *out = (T *)call->out[0].data;                                                               \
    if (batch * n == 0) return 0;                                                                  \
    for (b = 0; b < batch; b++)                                                                    \
      mxc_##P##syrk(MXC_CblasRowMajor, MXC_CblasLower, MXC_LA_TRANS(trans), (int)n, (int)k,        \
                    (T)call->fattr[0], a + b * r * c, (int)(c > 0 ? c : 1), (T)0, out + b * n * n, \
                    (int)n);                                                                       \
    mxc_la_mirror_##SUF(out, batch, n, 1, call->nthreads);                                         \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_sumlogdiag_##SUF(mxc_opcall *call) {                                           \
    int64_t batch = call->iattr[0], n = call->iattr[1], b;                                         \
    const T *a = (const T *)call->in[0].data;                                                      \
    T *out = (T *)call->out[0].data;                                                               \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (batch * n >= MXC_LA_PAR_MIN))      \
    for (b = 0; b < batch; b++) {                                                                  \
      T s = 0;                                                                                     \
      int64_t i;                                                                                   \
      for (i = 0; i < n; i++) s += (T)log(a[b * n * n + i * (n + 1)]);                             \
      out[b] = s;                                                                                  \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* dA = 0.5 L^-T copyLTU(L^T dL) L^-1 (lower; transposed steps for upper) */                     \
  static int mxc_la_potrf_bwd_##SUF(mxc_opcall *call) {                                            \
    int64_t batch = call->iattr[0], n = call->iattr[1];                                            \
    int lower = (int)call->iattr[2];                                                               \
    const T *L = (const T *)call->in[1].data;                                                      \
    T *dA = (T *)call->out[0].data;                                                                \
    if (batch * n == 0) return 0;                                                                  \
    mxc_la_copy_##SUF(dA, (const T *)call->in[0].data, batch * n * n, call->nthreads);             \
    mxc_la_trmm_run_##SUF(L, dA, batch, n, n, n, !lower, lower, 1, (T)1);                          \
    mxc_la_mirror_##SUF(dA, batch, n, lower, call->nthreads);                                      \
    mxc_la_trsm_run_##SUF(L, dA, batch, n, n, n, 0, lower, lower, (T)1);                           \
    mxc_la_trsm_run_##SUF(L, dA, batch, n, n, n, 1, lower, !lower, (T)0.5);                        \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* dL = -tril(A^-1 (dA + dA^T) L^-T) (lower; mirrored for upper) */                              \
  static int mxc_la_potri_bwd_##SUF(mxc_opcall *call) {                                            \
    int64_t batch = call->iattr[0], n = call->iattr[1];                                            \
    int lower = (int)call->iattr[2];                                                               \
    const T *dAi = (const T *)call->in[0].data, *L = (const T *)call->in[1].data;                  \
    const T *Ai = (const T *)call->in[2].data;                                                     \
    T *dL = (T *)call->out[0].data;                                                                \
    if (batch * n == 0) return 0;                                                                  \
    if (lower) {                                                                                   \
      mxc_la_gemm_##SUF(Ai, dAi, dL, batch, n, n, n, 0, 0, (T)1, (T)0);                            \
      mxc_la_gemm_##SUF(Ai, dAi, dL, batch, n, n, n, 0, 1, (T)1, (T)1);                            \
    } else {                                                                                       \
      mxc_la_gemm_##SUF(dAi, Ai, dL, batch, n, n, n, 0, 0, (T)1, (T)0);                            \
      mxc_la_gemm_##SUF(dAi, Ai, dL, batch, n, n, n, 1, 0, (T)1, (T)1);                            \
    }                                                                                              \
    mxc_la_trsm_run_##SUF(L, dL, batch, n, n, n, lower, lower, 1, (T)-1);                          \
    mxc_la_zero_tri_##SUF(dL, batch, n, lower, call->nthreads);                                    \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_trsm_bwd_##SUF(mxc_opcall *call) {                                             \
    const int64_t *ia = call->iattr;                                                               \
    int64_t batch = ia[0], m = ia[1], n = ia[2], k = ia[3];                                        \
    int right = (int)ia[4], lower = (int)ia[5], trans = (int)ia[6];                                \
    T alpha = (T)call->fattr[0];                                                                   \
    const T *A = (const T *)call->in[1].data, *C = (const T *)call->in[3].data;                   \
    T *dA = (T *)call->out[0].data, *dB = (T *)call->out[1].data;                                  \
    mxc_la_copy_##SUF(dB, (const T *)call->in[0].data, batch * m * n, call->nthreads);             \
    mxc_la_trsm_run_##SUF(A, dB, batch, m, n, k, right, lower, !trans, alpha);                     \
    if (right == trans) /* dA = -1/alpha op(dB) op(C)^T, k x k */                                  \
      mxc_la_gemm_##SUF(dB, C, dA, batch, k, k, trans ? m : n, trans, !trans,                      \
                        (T)(-1.0 / call->fattr[0]),                                                \
                        (T)0);                                                                     \
    else                                                                                           \
      mxc_la_gemm_##SUF(C, dB, dA, batch, k, k, trans ? n : m, !trans, trans,                      \
                        (T)(-1.0 / call->fattr[0]),                                                \
                        (T)0);                                                                     \
    mxc_la_zero_tri_##SUF(dA, batch, k, lower, call->nthreads);                                    \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_trmm_bwd_##SUF(mxc_opcall *call) {                                             \
    const int64_t *ia = call->iattr;                                                               \
    int64_t batch = ia[0], m = ia[1], n = ia[2], k = ia[3];                                        \
    int right = (int)ia[4], lower = (int)ia[5], trans = (int)ia[6];                                \
    T alpha = (T)call->fattr[0];                                                                   \
    const T *dC = (const T *)call->in[0].data, *A = (const T *)call->in[1].data;                  \
    const T *B = (const T *)call->in[2].data;                                                      \
    T *dA = (T *)call->out[0].data, *dB = (T *)call->out[1].data;                                  \
    if (right == trans)                                                                            \
      mxc_la_gemm_##SUF(dC, B, dA, batch, k, k, trans ? m : n, trans, !trans, alpha, (T)0);        \
    else                                                                                           \
      mxc_la_gemm_##SUF(B, dC, dA, batch, k, k, trans ? n : m, !trans, trans, alpha, (T)0);        \
    mxc_la_zero_tri_##SUF(dA, batch, k, lower, call->nthreads);                                    \
    mxc_la_copy_##SUF(dB, dC, batch * m * n, call->nthreads);                                      \
    mxc_la_trmm_run_##SUF(A, dB, batch, m, n, k, right, lower, !trans, alpha);                     \
    return 0;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static int mxc_la_sumlogdiag_bwd_##SUF(mxc_opcall *call) {                                       \
    int64_t batch = call->iattr[0], n = call->iattr[1], i;                                         \
    const T *dB = (const T *)call->in[0].data, *A = (const T *)call->in[1].data;                  \
    T *dA = (T *)call->out[0].data;                                                                \
    int64_t total = batch * n * n;                                                                 \
    MXC_PRAGMA(omp parallel for num_threads(call->nthreads) if (total >= MXC_LA_PAR_MIN))          \
    for (i = 0; i < total; i++) {                                                                  \
      int64_t b = i / (n * n), r = (i / n) % n, c = i % n;                                         \
      dA[i] = r == c ? dB[b] / A[i] : (T)0;                                                        \
    }                                                                                              \
    return 0;                                                                                      \
  }

MXC_LINALG_IMPL(float, f32, s)
MXC_LINALG_IMPL(double, f64, d)

#define MXC_LA_ENTRY(name) {#name, MXC_FLOAT32, mxc_la_##name##_f32}, \
                           {#name, MXC_FLOAT64, mxc_la_##name##_f64}

static const mxc_code_entry mxc_linalg_table[] = {
    MXC_LA_ENTRY(potrf),     MXC_LA_ENTRY(potri),     MXC_LA_ENTRY(trsm),
    MXC_LA_ENTRY(trmm),      MXC_LA_ENTRY(syrk),      MXC_LA_ENTRY(sumlogdiag),
    MXC_LA_ENTRY(potrf_bwd), MXC_LA_ENTRY(potri_bwd), MXC_LA_ENTRY(trsm_bwd),
    MXC_LA_ENTRY(trmm_bwd),  MXC_LA_ENTRY(sumlogdiag_bwd),
};
static const int mxc_linalg_table_len =
    (int)(sizeof(mxc_linalg_table) / sizeof(mxc_linalg_table[0]));

#endif
