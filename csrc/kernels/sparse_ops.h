/* Sparse storage kernels (CSR and row_sparse), MXNet 1.9.1's formulas.
 *
 * A sparse array reaches a kernel as its parts, each a C-contiguous dense tensor:
 *   CSR:        data (nnz) T, indices (nnz) int64, indptr (rows + 1) int64
 *   row_sparse: data (nnz_rows, row...) T, indices (nnz_rows) int64
 * Indices were checked at the Python boundary (check_format / construction), not here.
 *
 * sp:csr_dns    in (data, indices, indptr, rhs (K, N)); out (M, N) = csr (M, K) . rhs
 * sp:csrT_dns   in (data, indices, indptr, rhs (M, N), rowmap (K) int64); out (R, N):
 *               out[rowmap[k]] = sum_i csr[i, k] * rhs[i]  (rowmap[k] < 0: column k has no entry;
 *               identity rowmap gives the dense csr.T . rhs, a compact one a row_sparse result)
 * sp:lazy_<opt> in (grad data (nnz, L), grad indices (nnz)); out (weight (R, L), states...):
 *               the optimizer's dense formula applied to the rows present in the gradient only
 *               (MXNet's lazy_update), in place on the weight and states.
 * float16 accumulates in float32.
 */
#ifndef MXC_KERNELS_SPARSE_OPS_H
#define MXC_KERNELS_SPARSE_OPS_H
#include "kernels/common.h"
#include "kernels/elemwise_common.h"

#define MXC_SPT_f16 uint16_t
#define MXC_SPT_f32 float
#define MXC_SPT_f64 double
#define MXC_SPC_f16 float
#define MXC_SPC_f32 float
#define MXC_SPC_f64 double
#define MXC_SPL_f16(x) mxc_half_to_float(x)
#define MXC_SPL_f32(x) (x)
#define MXC_SPL_f64(x) (x)
#define MXC_SPS_f16(v) mxc_float_to_half((float)(v))
#define MXC_SPS_f32(v) ((float)(v))
#define MXC_SPS_f64(v) ((double)(v))
#define MXC_SPSQRT_f16(v) sqrtf(v)
#define MXC_SPSQRT_f32(v) sqrtf(v)
#define MXC_SPSQRT_f64(v) sqrt(v)

static inline int64_t mxc_sp_cols(const mxc_tensor *t) {
  int64_t n = 1;
  for (int d = 1; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* The rows of rhs that csr . dense reads are scattered (one per stored value): fetching the
 * row MXC_SP_PFD entries ahead hides the cache misses (2-3x on 10k x 10k at 1%). */
#define MXC_SP_PFD 3
static inline void mxc_sp_prefetch(const void *p, size_t bytes) {
  const char *c = (const char *)p;
  for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b);
}

/* ---- csr . dense ------------------------------------------------------------------------------ */
#define MXC_SP_CSR_DNS(TAG)                                                                    \
  static int mxc_sp_csr_dns_##TAG(mxc_opcall *c) {                                             \
    typedef MXC_SPT_##TAG T;                                                                   \
    typedef MXC_SPC_##TAG CT;                                                                  \
    const T *val = (const T *)c->in[0].data;                                                   \
    const int64_t *col = (const int64_t *)c->in[1].data, *ptr = (const int64_t *)c->in[2].data;\
    const T *rhs = (const T *)c->in[3].data;                                                   \
    T *out = (T *)c->out[0].data;                                                              \
    const int64_t M = c->out[0].ndim > 0 ? c->out[0].shape[0] : 1;                             \
    const int64_t N = c->out[0].ndim > 1 ? mxc_sp_cols(&c->out[0]) : 1;                        \
    const int64_t nnz = ptr[M];                                                                \
    int failed = 0;                                                                            \
    MXC_PRAGMA(omp parallel num_threads(c->nthreads) if (M * N > 4096))                        \
    {                                                                                          \
      CT *acc = (CT *)malloc((size_t)(N > 0 ? N : 1) * sizeof(CT));                            \
      if (acc == NULL) {                                                                       \
        MXC_PRAGMA(omp atomic write)                                                           \
        failed = 1;                                                                            \
      }                                                                                        \
      MXC_PRAGMA(omp for schedule(dynamic, 32))                                                \
      for (int64_t i = 0; i < M; i++) {                                                        \
        if (acc == NULL) continue;                                                             \
        for (int64_t n = 0; n < N; n++) acc[n] = (CT)0;                                        \
        for (int64_t j = ptr[i]; j < ptr[i + 1]; j++) {                                        \
          if (j + MXC_SP_PFD < nnz) mxc_sp_prefetch(rhs + col[j + MXC_SP_PFD] * N, N * sizeof(T)); \
          const CT v = (CT)MXC_SPL_##TAG(val[j]);                                              \
          const T *r = rhs + col[j] * N;                                                       \
          for (int64_t n = 0; n < N; n++) acc[n] += v * (CT)MXC_SPL_##TAG(r[n]);              \
        }                                                                                      \
        T *o = out + i * N;                                                                    \
        for (int64_t n = 0; n < N; n++) o[n] = MXC_SPS_##TAG(acc[n]);                          \
      }                                                                                        \
      free(acc);                                                                               \
    }                                                                                          \
    if (failed) {                                                                              \
      snprintf(c->err, MXC_ERR_LEN, "out of memory for a row buffer of %lld",                  \
               (long long)N);                                                                  \
      return -1;                                                                               \
    }                                                                                          \
    return 0;                                                                                  \
  }
MXC_SP_CSR_DNS(f16)
MXC_SP_CSR_DNS(f32)
MXC_SP_CSR_DNS(f64)

/* ---- csr.T . dense: each thread owns a block of output rows and scans every entry ----------- */
#define MXC_SP_CSRT_DNS(TAG)                                                                   \
  static int mxc_sp_csrT_dns_##TAG(mxc_opcall *c) {                                            \
    typedef MXC_SPT_##TAG T;                                                                   \
    typedef MXC_SPC_##TAG CT;                                                                  \
    const T *val = (const T *)c->in[0].data;                                                   \
    const int64_t *col = (const int64_t *)c->in[1].data, *ptr = (const int64_t *)c->in[2].data;\
    const T *rhs = (const T *)c->in[3].data;                                                   \
    const int64_t *rowmap = (const int64_t *)c->in[4].data;                                    \
    T *out = (T *)c->out[0].data;                                                              \
    const int64_t M = c->in[2].size - 1;                                                       \
    const int64_t R = c->out[0].ndim > 0 ? c->out[0].shape[0] : 1;                             \
    const int64_t N = c->out[0].ndim > 1 ? mxc_sp_cols(&c->out[0]) : 1;                        \
    const int64_t nnz = c->in[0].size;                                                         \
    int failed = 0;                                                                            \
    int nth = c->nthreads;                                                                     \
    if ((int64_t)nth > R) nth = R > 0 ? (int)R : 1;                                            \
    if (nnz * N < 65536) nth = 1;                                                              \
    MXC_PRAGMA(omp parallel num_threads(nth))                                                  \
    {                                                                                          \
      const int64_t t = MXC_TID(), nt = MXC_NTH();                                             \
      const int64_t r0 = R * t / nt, r1 = R * (t + 1) / nt;                                    \
      CT *acc = sizeof(T) == sizeof(CT) ? (CT *)(void *)(out + r0 * N)                         \
                                        : (CT *)malloc((size_t)((r1 - r0) * N + 1) * sizeof(CT));\
      if (acc == NULL) {                                                                       \
        MXC_PRAGMA(omp atomic write)                                                           \
        failed = 1;                                                                            \
      } else {                                                                                 \
        for (int64_t k = 0; k < (r1 - r0) * N; k++) acc[k] = (CT)0;                            \
        for (int64_t i = 0; i < M; i++) {                                                      \
          const T *r = rhs + i * N;                                                            \
          const int64_t jend = ptr[i + 1];                                                     \
          for (int64_t j = ptr[i]; j < jend; j++) {                                            \
            if (j + MXC_SP_PFD < jend) {                                                       \
              const int64_t op = rowmap[col[j + MXC_SP_PFD]];                                  \
              if (op >= r0 && op < r1) mxc_sp_prefetch(acc + (op - r0) * N, N * sizeof(CT));   \
            }                                                                                  \
            const int64_t o = rowmap[col[j]];                                                  \
            if (o < r0 || o >= r1) continue;                                                   \
            const CT v = (CT)MXC_SPL_##TAG(val[j]);                                            \
            CT *a = acc + (o - r0) * N;                                                        \
            for (int64_t n = 0; n < N; n++) a[n] += v * (CT)MXC_SPL_##TAG(r[n]);              \
          }                                                                                    \
        }                                                                                      \
        if (sizeof(T) != sizeof(CT)) {                                                         \
          T *o = out + r0 * N;                                                                 \
          for (int64_t k = 0; k < (r1 - r0) * N; k++) o[k] = MXC_SPS_##TAG(acc[k]);           \
          free(acc);                                                                           \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
    if (failed) {                                                                              \
      snprintf(c->err, MXC_ERR_LEN, "out of memory for the float32 accumulator");              \
      return -1;                                                                               \
    }                                                                                          \
    return 0;                                                                                  \
  }
MXC_SP_CSRT_DNS(f16)
MXC_SP_CSRT_DNS(f32)
MXC_SP_CSRT_DNS(f64)

/* ---- lazy optimizer updates on the rows of a row_sparse gradient ------------------------------
 * BODY sees: CT g (gradient element), T *w (weight element), T *s0, *s1 (state elements),
 * f[] (float attributes). */
#define MXC_SP_CLIP(x, b) ((x) > (b) ? (b) : ((x) < -(b) ? -(b) : (x)))

#define MXC_SP_LAZY(NAME, TAG, NSTATE, ...)                                                    \
  static int mxc_sp_lazy_##NAME##_##TAG(mxc_opcall *c) {                                       \
    typedef MXC_SPT_##TAG T;                                                                   \
    typedef MXC_SPC_##TAG CT;                                                                  \
    const T *gd = (const T *)c->in[0].data;                                                    \
    const int64_t *gi = (const int64_t *)c->in[1].data;                                        \
    const int64_t nnz = c->in[1].size;                                                         \
    const int64_t L = mxc_sp_cols(&c->out[0]);                                                 \
    T *W = (T *)c->out[0].data;                                                                \
    T *S0 = NSTATE > 0 ? (T *)c->out[1].data : NULL;                                           \
    T *S1 = NSTATE > 1 ? (T *)c->out[2].data : NULL;                                           \
    double f[MXC_MAX_FATTR];                                                                   \
    for (int k = 0; k < MXC_MAX_FATTR; k++) f[k] = k < c->nfattr ? c->fattr[k] : 0.0;          \
    (void)S0;                                                                                  \
    (void)S1;                                                                                  \
    MXC_PRAGMA(omp parallel for num_threads(c->nthreads) schedule(static) if (nnz * L > 16384))\
    for (int64_t r = 0; r < nnz; r++) {                                                        \
      const int64_t off = gi[r] * L;                                                           \
      const T *grow = gd + r * L;                                                              \
      for (int64_t k = 0; k < L; k++) {                                                        \
        const CT g = (CT)MXC_SPL_##TAG(grow[k]);                                               \
        T *w = W + off + k;                                                                    \
        T *s0 = S0 != NULL ? S0 + off + k : NULL;                                              \
        T *s1 = S1 != NULL ? S1 + off + k : NULL;                                              \
        (void)s0;                                                                              \
        (void)s1;                                                                              \
        __VA_ARGS__                                                                            \
      }                                                                                        \
    }                                                                                          \
    return 0;                                                                                  \
  }

static inline float mxc_sp_ld_f16(const uint16_t *p) { return mxc_half_to_float(*p); }
static inline float mxc_sp_ld_f32(const float *p) { return *p; }
static inline double mxc_sp_ld_f64(const double *p) { return *p; }
static inline void mxc_sp_st_f16(uint16_t *p, float v) { *p = mxc_float_to_half(v); }
static inline void mxc_sp_st_f32(float *p, float v) { *p = v; }
static inline void mxc_sp_st_f64(double *p, double v) { *p = v; }
#define LD(p) _Generic((p), uint16_t *: mxc_sp_ld_f16, float *: mxc_sp_ld_f32,                   \
                       double *: mxc_sp_ld_f64)(p)
#define ST(p, v) _Generic((p), uint16_t *: mxc_sp_st_f16, float *: mxc_sp_st_f32,                \
                          double *: mxc_sp_st_f64)((p), (v))

/* sgd: f = lr, wd, rescale_grad, clip_gradient */
#define MXC_SP_SGD(TAG)                                                                        \
  MXC_SP_LAZY(sgd, TAG, 0, {                                                                   \
    const CT lr = (CT)f[0], wd = (CT)f[1], rs = (CT)f[2], cg = (CT)f[3];                       \
    CT gr = rs * g;                                                                            \
    if (cg >= 0) gr = MXC_SP_CLIP(gr, cg);                                                     \
    ST(w, ((CT)1 - lr * wd) * LD(w) - lr * gr);                                                \
  })
/* sgd_mom: f = lr, wd, momentum, rescale_grad, clip_gradient; s0 = mom */
#define MXC_SP_MSGD(TAG)                                                                       \
  MXC_SP_LAZY(msgd, TAG, 1, {                                                                  \
    const CT lr = (CT)f[0], wd = (CT)f[1], mo = (CT)f[2], rs = (CT)f[3], cg = (CT)f[4];        \
    CT gr = rs * g;                                                                            \
    if (cg >= 0) gr = MXC_SP_CLIP(gr, cg);                                                     \
    const CT wi = LD(w);                                                                       \
    const CT m = mo * LD(s0) - lr * wd * wi - lr * gr;                                         \
    ST(s0, m);                                                                                 \
    ST(w, wi + m);                                                                             \
  })
/* adam: f = lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient; s0 = mean, s1 = var */
#define MXC_SP_ADAM(TAG)                                                                       \
  MXC_SP_LAZY(adam, TAG, 2, {                                                                  \
    const CT lr = (CT)f[0], b1 = (CT)f[1], b2 = (CT)f[2], eps = (CT)f[3], wd = (CT)f[4],       \
             rs = (CT)f[5], cg = (CT)f[6];                                                     \
    const CT wi = LD(w);                                                                       \
    CT gr = g * rs + wi * wd;                                                                  \
    if (cg >= 0) gr = MXC_SP_CLIP(gr, cg);                                                     \
    const CT m = b1 * LD(s0) + ((CT)1 - b1) * gr;                                              \
    const CT v = b2 * LD(s1) + ((CT)1 - b2) * gr * gr;                                         \
    ST(s0, m);                                                                                 \
    ST(s1, v);                                                                                 \
    ST(w, wi - lr * m / (MXC_SPSQRT_##TAG(v) + eps));                                          \
  })
/* ftrl: f = lr, lamda1, beta, wd, rescale_grad, clip_gradient; s0 = z, s1 = n */
#define MXC_SP_FTRL(TAG)                                                                       \
  MXC_SP_LAZY(ftrl, TAG, 2, {                                                                  \
    const CT lr = (CT)f[0], l1 = (CT)f[1], beta = (CT)f[2], wd = (CT)f[3], rs = (CT)f[4],      \
             cg = (CT)f[5];                                                                    \
    const CT wi = LD(w);                                                                       \
    CT ni = LD(s1);                                                                            \
    CT gr = g * rs;                                                                            \
    if (cg >= 0) gr = MXC_SP_CLIP(gr, cg);                                                     \
    const CT zi = LD(s0) + (gr - (MXC_SPSQRT_##TAG(ni + gr * gr) - MXC_SPSQRT_##TAG(ni)) * wi / lr); \
    ni = ni + gr * gr;                                                                         \
    ST(s0, zi);                                                                                \
    ST(s1, ni);                                                                                \
    const CT sg = zi > 0 ? (CT)1 : (zi < 0 ? (CT)-1 : (CT)0);                                  \
    const CT gt = (zi < 0 ? -zi : zi) > l1 ? (CT)1 : (CT)0;                                    \
    ST(w, (sg * l1 - zi) / ((beta + MXC_SPSQRT_##TAG(ni)) / lr + wd) * gt);                    \
  })
/* adagrad: f = lr, epsilon, rescale_grad, clip_gradient; s0 = history */
#define MXC_SP_ADAGRAD(TAG)                                                                    \
  MXC_SP_LAZY(adagrad, TAG, 1, {                                                               \
    const CT lr = (CT)f[0], eps = (CT)f[1], rs = (CT)f[2], cg = (CT)f[3];                      \
    CT gr = g * rs;                                                                            \
    if (cg >= 0) gr = MXC_SP_CLIP(gr, cg);                                                     \
    const CT h = LD(s0) + gr * gr;                                                             \
    ST(s0, h);                                                                                 \
    ST(w, LD(w) - gr / MXC_SPSQRT_##TAG(h + eps) * lr);                                        \
  })

MXC_SP_SGD(f16)
MXC_SP_SGD(f32)
MXC_SP_SGD(f64)
MXC_SP_MSGD(f16)
MXC_SP_MSGD(f32)
MXC_SP_MSGD(f64)
MXC_SP_ADAM(f16)
MXC_SP_ADAM(f32)
MXC_SP_ADAM(f64)
MXC_SP_FTRL(f16)
MXC_SP_FTRL(f32)
MXC_SP_FTRL(f64)
MXC_SP_ADAGRAD(f16)
MXC_SP_ADAGRAD(f32)
MXC_SP_ADAGRAD(f64)

#undef LD
#undef ST

#define MXC_SP_ENTRIES(name, fn)                                                               \
  {name, MXC_FLOAT16, -1, fn##_f16}, {name, MXC_FLOAT32, -1, fn##_f32},                        \
      {name, MXC_FLOAT64, -1, fn##_f64}

static const mxc_kentry mxc_sparse_table[] = {
    MXC_SP_ENTRIES("sp:csr_dns", mxc_sp_csr_dns),
    MXC_SP_ENTRIES("sp:csrT_dns", mxc_sp_csrT_dns),
    MXC_SP_ENTRIES("sp:lazy_sgd", mxc_sp_lazy_sgd),
    MXC_SP_ENTRIES("sp:lazy_msgd", mxc_sp_lazy_msgd),
    MXC_SP_ENTRIES("sp:lazy_adam", mxc_sp_lazy_adam),
    MXC_SP_ENTRIES("sp:lazy_ftrl", mxc_sp_lazy_ftrl),
    MXC_SP_ENTRIES("sp:lazy_adagrad", mxc_sp_lazy_adagrad),
    {NULL, 0, -1, NULL}};
#endif
