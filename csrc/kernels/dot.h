/* Matrix products: one strided, batched GEMM kernel behind FullyConnected, dot, batch_dot,
 * linalg_gemm and linalg_gemm2.
 *
 *   O[b] = alpha * op(A[b]) @ op(B[b]) (+ bias row | + beta * C[b])       b = 0 .. batch-1
 *
 * Inputs: A, B and, for cmode != 0, a third tensor C; output O. Rows of every matrix are
 * contiguous; consecutive rows are `ld` elements apart, so a matrix may be a strided slice of
 * its tensor (linalg_gemm's axis: rows on a middle axis). The batch index is split as
 * b = bo * ninner + bi and matrix b of tensor X starts at bo * X.so + bi * X.si.
 * iattr:
 *   [0] nouter [1] ninner [2] M [3] N [4] K [5] transA [6] transB
 *   [7] cmode: 0 nothing, 1 bias vector of length N added to every row (FullyConnected),
 *              2 beta * C[b] with C laid out like O (linalg_gemm)
 *   [8..10] A so, si, ld   [11..13] B so, si, ld   [14..16] C so, si, ld   [17..19] O so, si, ld
 * fattr: [0] alpha  [1] beta.
 * op(A[b]) is M x K: A[b] is stored M x K, or K x M when transA. op(B[b]) is K x N: stored K x N,
 * or N x K when transB.
 *
 * float32/float64 call BLAS (mxc_sgemm_products / mxc_dgemm) once per matrix; a batch of small matrices
 * (M*N*K <= MXC_DOT_SMALL) is instead split over OpenMP threads, each running a plain loop.
 * float16 is converted to float32 (whole tensors, in parallel), multiplied with sgemm (float32
 * accumulation), and converted back.
 */
#ifndef MXC_KERNELS_DOT_H
#define MXC_KERNELS_DOT_H
#include "kernels/common.h"
#include "mxc/blas.h"

#define MXC_DOT_SMALL 32768
#define MXC_DOT_PAR_MIN 32768

typedef struct {
  int64_t so, si, ld;
} mxc_gemm_layout;

typedef struct {
  int64_t nouter, ninner, M, N, K;
  int ta, tb, cmode;
  mxc_gemm_layout a, b, c, o;
  double alpha, beta;
} mxc_gemm_args;

static void mxc_gemm_read_args(const mxc_opcall *call, mxc_gemm_args *g) {
  const int64_t *ia = call->iattr;
  g->nouter = ia[0];
  g->ninner = ia[1];
  g->M = ia[2];
  g->N = ia[3];
  g->K = ia[4];
  g->ta = (int)ia[5];
  g->tb = (int)ia[6];
  g->cmode = (int)ia[7];
  g->a.so = ia[8], g->a.si = ia[9], g->a.ld = ia[10];
  g->b.so = ia[11], g->b.si = ia[12], g->b.ld = ia[13];
  g->c.so = ia[14], g->c.si = ia[15], g->c.ld = ia[16];
  g->o.so = ia[17], g->o.si = ia[18], g->o.ld = ia[19];
  g->alpha = call->fattr[0];
  g->beta = call->fattr[1];
}

static inline int64_t mxc_gemm_off(const mxc_gemm_layout *l, int64_t b, int64_t ninner) {
  return (b / ninner) * l->so + (b % ninner) * l->si;
}

/* Generated per real type T: small-matrix loop, initialisation of O, BLAS driver. */
#define MXC_GEMM_IMPL(T, SUF, GEMM)                                                                \
  static void mxc_gemm_small_##SUF(const mxc_gemm_args *g, const T *a, const T *b, T *o) {        \
    int64_t M = g->M, N = g->N, K = g->K, lda = g->a.ld, ldb = g->b.ld, i, j, k;                   \
    T alpha = (T)g->alpha;                                                                         \
    for (i = 0; i < M; i++) {                                                                      \
      T *orow = o + i * g->o.ld;                                                                   \
      T acc[64];                                                                                   \
      int64_t j0;                                                                                  \
      for (j0 = 0; j0 < N; j0 += 64) {                                                             \
        int64_t jn = N - j0 < 64 ? N - j0 : 64;                                                    \
        for (j = 0; j < jn; j++) acc[j] = 0;                                                       \
        for (k = 0; k < K; k++) {                                                                  \
          T av = g->ta ? a[k * lda + i] : a[i * lda + k];                                          \
          if (g->tb) {                                                                             \
            for (j = 0; j < jn; j++) acc[j] += av * b[(j0 + j) * ldb + k];                         \
          } else {                                                                                 \
            const T *brow = b + k * ldb + j0;                                                      \
            for (j = 0; j < jn; j++) acc[j] += av * brow[j];                                       \
          }                                                                                        \
        }                                                                                          \
        for (j = 0; j < jn; j++) orow[j0 + j] = alpha * acc[j] + orow[j0 + j];                     \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* O[b] starts as 0, the bias rows, or beta * C[b]; the product is then added (BLAS beta 1) */  \
  static void mxc_gemm_init_##SUF(const mxc_gemm_args *g, const T *c, T *o, int nthreads) {       \
    int64_t N = g->N, M = g->M, rows = g->nouter * g->ninner * M, r;                               \
    int cmode = g->cmode == 2 && g->beta == 0 ? 0 : g->cmode;                                      \
    T beta = (T)g->beta;                                                                           \
    (void)nthreads;                                                                                \
    MXC_PRAGMA(omp parallel for num_threads(nthreads) if (rows * N >= MXC_DOT_PAR_MIN))            \
    for (r = 0; r < rows; r++) {                                                                   \
      int64_t b = r / M, i = r % M, j;                                                             \
      T *orow = o + mxc_gemm_off(&g->o, b, g->ninner) + i * g->o.ld;                               \
      if (cmode == 1) {                                                                            \
        memcpy(orow, c, (size_t)N * sizeof(T));                                                    \
      } else if (cmode == 2) {                                                                     \
        const T *crow = c + mxc_gemm_off(&g->c, b, g->ninner) + i * g->c.ld;                       \
        for (j = 0; j < N; j++) orow[j] = beta * crow[j];                                          \
      } else {                                                                                     \
        for (j = 0; j < N; j++) orow[j] = 0;                                                       \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  static void mxc_gemm_run_##SUF(const mxc_gemm_args *g, const T *a, const T *b, const T *c,      \
                                 T *o, int nthreads) {                                             \
    int64_t M = g->M, N = g->N, K = g->K, batch = g->nouter * g->ninner, bi;                       \
    if (batch <= 0 || M <= 0 || N <= 0) return;                                                    \
    mxc_gemm_init_##SUF(g, c, o, nthreads);                                                        \
    if (K <= 0 || g->alpha == 0) return;                                                           \
    if (batch > 1 && M * N * K <= MXC_DOT_SMALL) {                                                 \
      MXC_PRAGMA(omp parallel for num_threads(nthreads) schedule(static)                           \
                 if (batch * M * N * K >= MXC_DOT_PAR_MIN))                                        \
      for (bi = 0; bi < batch; bi++)                                                               \
        mxc_gemm_small_##SUF(g, a + mxc_gemm_off(&g->a, bi, g->ninner),                            \
                             b + mxc_gemm_off(&g->b, bi, g->ninner),                               \
                             o + mxc_gemm_off(&g->o, bi, g->ninner));                              \
      return;                                                                                      \
    }                                                                                              \
    for (bi = 0; bi < batch; bi++)                                                                 \
      GEMM(MXC_CblasRowMajor, g->ta ? MXC_CblasTrans : MXC_CblasNoTrans,                           \
           g->tb ? MXC_CblasTrans : MXC_CblasNoTrans, (int)M, (int)N, (int)K, (T)g->alpha,         \
           a + mxc_gemm_off(&g->a, bi, g->ninner), (int)g->a.ld,                                   \
           b + mxc_gemm_off(&g->b, bi, g->ninner), (int)g->b.ld, (T)1,                             \
           o + mxc_gemm_off(&g->o, bi, g->ninner), (int)g->o.ld);                                  \
  }                                                                                                \
                                                                                                   \
  static int mxc_gemm_##SUF(mxc_opcall *call) {                                                    \
    mxc_gemm_args g;                                                                               \
    mxc_gemm_read_args(call, &g);                                                                  \
    mxc_gemm_run_##SUF(&g, (const T *)call->in[0].data, (const T *)call->in[1].data,              \
                       g.cmode ? (const T *)call->in[2].data : NULL, (T *)call->out[0].data,       \
                       call->nthreads);                                                            \
    return 0;                                                                                      \
  }

MXC_GEMM_IMPL(float, f32, mxc_sgemm_products)
MXC_GEMM_IMPL(double, f64, mxc_dgemm)

/* float16 -> float32 copy of a whole tensor (NULL and 0 elements allowed) */
static float *mxc_dot_h2f(const mxc_tensor *t, int nthreads) {
  int64_t n = t->size, i;
  float *f = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  const uint16_t *h = (const uint16_t *)t->data;
  (void)nthreads;
  if (!f) return NULL;
  MXC_PRAGMA(omp parallel for num_threads(nthreads) if (n >= MXC_DOT_PAR_MIN))
  for (i = 0; i < n; i++) f[i] = mxc_half_to_float(h[i]);
  return f;
}

static int mxc_gemm_f16(mxc_opcall *call) {
  mxc_gemm_args g;
  float *a, *b, *c = NULL, *o;
  int64_t n = call->out[0].size, i;
  int nthreads = call->nthreads;
  uint16_t *oh = (uint16_t *)call->out[0].data;
  mxc_gemm_read_args(call, &g);
  a = mxc_dot_h2f(&call->in[0], nthreads);
  b = mxc_dot_h2f(&call->in[1], nthreads);
  if (g.cmode) c = mxc_dot_h2f(&call->in[2], nthreads);
  o = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (!a || !b || (g.cmode && !c) || !o) {
    free(a);
    free(b);
    free(c);
    free(o);
    snprintf(call->err, MXC_ERR_LEN, "out of memory for the float16 -> float32 copies");
    return -1;
  }
  mxc_gemm_run_f32(&g, a, b, c, o, nthreads);
  MXC_PRAGMA(omp parallel for num_threads(nthreads) if (n >= MXC_DOT_PAR_MIN))
  for (i = 0; i < n; i++) oh[i] = mxc_float_to_half(o[i]);
  free(a);
  free(b);
  free(c);
  free(o);
  return 0;
}

static const mxc_code_entry mxc_dot_table[] = {
    {"gemm", MXC_FLOAT32, mxc_gemm_f32},
    {"gemm", MXC_FLOAT64, mxc_gemm_f64},
    {"gemm", MXC_FLOAT16, mxc_gemm_f16},
};
static const int mxc_dot_table_len = (int)(sizeof(mxc_dot_table) / sizeof(mxc_dot_table[0]));

#endif
