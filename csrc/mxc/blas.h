/* BLAS/LAPACK for CPU kernels, called without the GIL through function pointers.
 *
 * The library is OpenBLAS as packaged for the scientific Python stack (scipy-openblas32: 32-bit
 * indices, symbols prefixed scipy_), located and opened at import time by mxc/_core/blas.py, so
 * building mxc never needs BLAS headers or a link step. Each extension module that includes this
 * header owns a copy of the table below and fills it once at import (mxc_blas_install, from the
 * addresses mxc._core.blas.ADDRESSES lists in the order of enum mxc_blas_fn).
 *
 * Routines are called in row-major CBLAS form; LAPACK routines use Fortran conventions (column
 * major, arguments by pointer).
 */
#ifndef MXC_BLAS_H
#define MXC_BLAS_H
#include <sched.h>
#include <stddef.h>
#include "mxc/pool.h"

enum { MXC_CblasRowMajor = 101, MXC_CblasColMajor = 102 };
enum { MXC_CblasNoTrans = 111, MXC_CblasTrans = 112 };
enum { MXC_CblasUpper = 121, MXC_CblasLower = 122 };
enum { MXC_CblasNonUnit = 131, MXC_CblasUnit = 132 };
enum { MXC_CblasLeft = 141, MXC_CblasRight = 142 };

/* keep in the order of SYMBOLS in mxc/_core/blas.py */
enum mxc_blas_fn {
  MXC_SGEMM, MXC_DGEMM, MXC_STRSM, MXC_DTRSM, MXC_STRMM, MXC_DTRMM, MXC_SSYRK, MXC_DSYRK,
  MXC_SPOTRF, MXC_DPOTRF, MXC_SPOTRI, MXC_DPOTRI, MXC_SGEMV, MXC_DGEMV, MXC_BLAS_SET_THREADS,
  MXC_BLAS_NFN
};

typedef void (*mxc_sgemm_t)(int order, int ta, int tb, int m, int n, int k, float alpha,
                            const float *a, int lda, const float *b, int ldb, float beta,
                            float *c, int ldc);
typedef void (*mxc_dgemm_t)(int order, int ta, int tb, int m, int n, int k, double alpha,
                            const double *a, int lda, const double *b, int ldb, double beta,
                            double *c, int ldc);
typedef void (*mxc_strsm_t)(int order, int side, int uplo, int trans, int diag, int m, int n,
                            float alpha, const float *a, int lda, float *b, int ldb);
typedef void (*mxc_dtrsm_t)(int order, int side, int uplo, int trans, int diag, int m, int n,
                            double alpha, const double *a, int lda, double *b, int ldb);
/* trmm has trsm's signature */
typedef mxc_strsm_t mxc_strmm_t;
typedef mxc_dtrsm_t mxc_dtrmm_t;
typedef void (*mxc_ssyrk_t)(int order, int uplo, int trans, int n, int k, float alpha,
                            const float *a, int lda, float beta, float *c, int ldc);
typedef void (*mxc_dsyrk_t)(int order, int uplo, int trans, int n, int k, double alpha,
                            const double *a, int lda, double beta, double *c, int ldc);
/* LAPACK (Fortran): uplo 'U'/'L', column major */
typedef void (*mxc_spotrf_t)(const char *uplo, const int *n, float *a, const int *lda, int *info,
                             size_t uplo_len);
typedef void (*mxc_dpotrf_t)(const char *uplo, const int *n, double *a, const int *lda, int *info,
                             size_t uplo_len);
typedef mxc_spotrf_t mxc_spotri_t;
typedef mxc_dpotrf_t mxc_dpotri_t;
typedef void (*mxc_sgemv_t)(int order, int trans, int m, int n, float alpha, const float *a,
                            int lda, const float *x, int incx, float beta, float *y, int incy);
typedef void (*mxc_dgemv_t)(int order, int trans, int m, int n, double alpha, const double *a,
                            int lda, const double *x, int incx, double beta, double *y, int incy);

static void *mxc_blas_table[MXC_BLAS_NFN];

/* The gate: who runs BLAS with how many threads. A GEMM may be called at once by the engine's
 * workers and by a thread that waits (the engine lets a waiter run ready ops itself). Two callers
 * inside multi-threaded OpenBLAS share its one thread pool: the second queues behind the first
 * while the pool threads spin, and a training step crawled (issue 27: minutes instead of
 * seconds; LeNet 3x slower with 2 threads than 1 on a loaded machine). So a call that finds
 * nobody else inside runs with mxc's BLAS thread count (gate->max), and a call that finds
 * another caller inside runs on its own thread only (OpenBLAS's single-threaded path takes no
 * pool and no lock). OpenBLAS's thread count is one global, changed only when the wanted count
 * differs and only under gate->lock, so no caller can reach the pool while another is in it.
 * The state is shared by every kernel module: mxc/_core/blas.py owns it (GATE) and installs
 * its address with the function table. */
typedef struct {
  int lock;    /* a spin lock, held for a few instructions (or one set_num_threads) */
  int inside;  /* callers between mxc_blas_enter and mxc_blas_leave */
  int cur;     /* the thread count last given to OpenBLAS */
  int max;     /* the thread count a lone caller gets */
  /* whether the calling thread may fork an OpenMP team (the engine's engine_team_thread: its
   * workers may, a waiter running an op may not); NULL: every thread may */
  int (*team_thread)(void);
} mxc_blas_gate_t;

typedef void (*mxc_blas_set_threads_t)(int);
static mxc_blas_gate_t *mxc_blas_gate;

static inline void mxc_blas_install(int i, void *fn) {
  if (i >= 0 && i < MXC_BLAS_NFN) mxc_blas_table[i] = fn;
}

static inline void mxc_blas_install_gate(void *gate) { mxc_blas_gate = (mxc_blas_gate_t *)gate; }

/* the load pool (csrc/mxc/pool.h), owned by mxc/_core/pool.pyx */
static mxc_pool_t *mxc_blas_pool;
static inline void mxc_blas_install_pool(void *pool) { mxc_blas_pool = (mxc_pool_t *)pool; }

/* Enter the gate; returns the threads this caller gets (the lone caller's count, else 1). own:
 * the caller runs those threads itself, OpenBLAS gets one. */
static inline int mxc_blas_enter_own(int own) {
  mxc_blas_gate_t *g = mxc_blas_gate;
  int t, want;
  while (__atomic_exchange_n(&g->lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  t = __atomic_add_fetch(&g->inside, 1, __ATOMIC_ACQ_REL) == 1 ? g->max : 1;
  if (t > 1 && g->team_thread && !g->team_thread()) t = 1;
  want = own ? 1 : t;
  if (want != g->cur) {
    ((mxc_blas_set_threads_t)mxc_blas_table[MXC_BLAS_SET_THREADS])(want);
    g->cur = want;
  }
  __atomic_store_n(&g->lock, 0, __ATOMIC_RELEASE);
  return t;
}

static inline void mxc_blas_enter(void) { (void)mxc_blas_enter_own(0); }

static inline void mxc_blas_leave(void) {
  __atomic_sub_fetch(&mxc_blas_gate->inside, 1, __ATOMIC_ACQ_REL);
}

/* d = +1 / -1 around a parallel region whose threads each run GEMMs of their own (convolution's
 * sample ranges): counted as a caller inside the gate, the region keeps every one of its GEMMs
 * on its own thread, where otherwise the first to enter would start OpenBLAS's pool beside the
 * other threads */
static inline void mxc_blas_hold(int d) {
  __atomic_add_fetch(&mxc_blas_gate->inside, d, __ATOMIC_ACQ_REL);
}

/* every routine through the gate: mxc_sgemm(...) etc. have the CBLAS/LAPACK signatures */
#define MXC_BLAS_CALL(name, T, ...)                                                                \
  do {                                                                                             \
    mxc_blas_enter();                                                                              \
    ((T)mxc_blas_table[name])(__VA_ARGS__);                                                        \
    mxc_blas_leave();                                                                              \
  } while (0)

#define MXC_BLAS_GEMM_FN(fn, id, R)                                                                \
  static inline void fn(int order, int ta, int tb, int m, int n, int k, R alpha, const R *a,       \
                        int lda, const R *b, int ldb, R beta, R *c, int ldc) {                     \
    MXC_BLAS_CALL(id, fn##_t, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);        \
  }
#define MXC_BLAS_TRSM_FN(fn, id, R)                                                                \
  static inline void fn(int order, int side, int uplo, int trans, int diag, int m, int n, R alpha, \
                        const R *a, int lda, R *b, int ldb) {                                      \
    MXC_BLAS_CALL(id, fn##_t, order, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);        \
  }
#define MXC_BLAS_SYRK_FN(fn, id, R)                                                                \
  static inline void fn(int order, int uplo, int trans, int n, int k, R alpha, const R *a,         \
                        int lda, R beta, R *c, int ldc) {                                          \
    MXC_BLAS_CALL(id, fn##_t, order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);              \
  }
#define MXC_BLAS_POTR_FN(fn, id, R)                                                                \
  static inline void fn(const char *uplo, const int *n, R *a, const int *lda, int *info,           \
                        size_t uplo_len) {                                                         \
    MXC_BLAS_CALL(id, fn##_t, uplo, n, a, lda, info, uplo_len);                                    \
  }
#define MXC_BLAS_GEMV_FN(fn, id, R)                                                                \
  static inline void fn(int order, int trans, int m, int n, R alpha, const R *a, int lda,          \
                        const R *x, int incx, R beta, R *y, int incy) {                            \
    MXC_BLAS_CALL(id, fn##_t, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);          \
  }

/* The parts of a lone caller's float32 GEMM on nt threads: blocks of rows of C when it has 64
 * rows per thread, else of columns when 64 columns per thread, else of the longer side in
 * blocks of at least 16; 0 when the product is too small to share. Fills j's split.
 * least_data (the dot family's products: FullyConnected, dot, batch_dot, linalg_gemm): where
 * rows and columns both give 64 per thread, the split that moves less data between the cores.
 * Every thread reads the whole of the operand a split shares: B (k x n) for rows, A (m x k)
 * for columns; and C's column blocks leave each thread's contiguous half of C (what the next
 * elementwise kernel takes) half written by the other core. So columns when
 * m*k + m*n/2 < k*n: a batch of 128 through a 784->512 layer's weight (A: 100K floats against
 * B's 401K), not its weight gradient (512x784 from 128 samples: rows). The weight then stays
 * in the cache of the core that updates it. MLP 784-512-512-10 steps, interleaved against the
 * row split: 5% faster, 22% where the host puts the two cores far apart (cross-core round
 * trips of 300 ns, not 55; docs/engine.md). A convolution's products (weight times columns)
 * keep the row split, the one that partitions their weight (densenet121 and resnet50_v1
 * inference measured level either way: 0.99, as in an A/A run of the same harness). */
static inline int mxc_sgemm_parts(mxc_pool_gemm *j, int nt, int least_data) {
  int bycol, ext, np;
  if (nt < 2 || (double)j->m * j->n * j->k < 262144.0) return 0;
  if (least_data && j->m >= 64 * nt && j->n >= 64 * nt)
    bycol = (double)j->m * j->k + 0.5 * (double)j->m * j->n < (double)j->k * j->n;
  else
    bycol = !(j->m >= 64 * nt || (j->n < 64 * nt && j->m >= j->n));
  ext = bycol ? j->n : j->m;
  np = ext / 16 < nt ? ext / 16 : nt;
  return np < 2 ? 0 : mxc_pool_gemm_split(j, bycol, np);
}

/* float32 GEMM. A lone caller runs it as parts, one single-threaded OpenBLAS call per OpenMP
 * thread (mxc_sgemm_parts), not on OpenBLAS's own threads: the kernels' OpenMP threads are the
 * only helpers then, and they are awake between kernels (mxc/__init__.py's spin count), where
 * OpenBLAS's pool was a second set of threads that competed with them for the cores and slept
 * between products. MLP 784-512-512-10 training steps (2 cores, alternated, with the spin count
 * both ways): 47.0k against 42.9k samples/s hybridized. The parts are blocks of C, so a given
 * thread count gives the same bits on every run. A caller with one thread (another caller is
 * inside, or the watcher capped the threads) goes through the load pool. */
static inline void mxc_sgemm_split(int least_data, int order, int ta, int tb, int m, int n,
                                   int k, float alpha, const float *a, int lda, const float *b,
                                   int ldb, float beta, float *c, int ldc) {
  const mxc_sgemm_t fn = (mxc_sgemm_t)mxc_blas_table[MXC_SGEMM];
  const int own = order == MXC_CblasRowMajor;
  const int nt = mxc_blas_enter_own(own);
  mxc_pool_gemm j;
  int np, p;
  j.fn = fn; j.ta = ta; j.tb = tb; j.m = m; j.n = n; j.k = k; j.lda = lda; j.ldb = ldb;
  j.ldc = ldc; j.alpha = alpha; j.beta = beta; j.a = a; j.b = b; j.c = c;
  if (own && (np = mxc_sgemm_parts(&j, nt, least_data)) > 0) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(np) schedule(static, 1)
#endif
    for (p = 0; p < np; p++) (void)mxc_pool_gemm_task(&j, p, NULL);
  } else if (!(mxc_blas_pool && nt == 1 && own && mxc_pool_sgemm(mxc_blas_pool, &j)))
    fn(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  mxc_blas_leave();
}

/* the CBLAS signature: rows of C per thread where it has enough (a convolution's products) */
static inline void mxc_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                             const float *a, int lda, const float *b, int ldb, float beta, float *c,
                             int ldc) {
  mxc_sgemm_split(0, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* the dot family's products: the split that moves less data between the cores */
static inline void mxc_sgemm_products(int order, int ta, int tb, int m, int n, int k, float alpha,
                                      const float *a, int lda, const float *b, int ldb, float beta,
                                      float *c, int ldc) {
  mxc_sgemm_split(1, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
MXC_BLAS_GEMM_FN(mxc_dgemm, MXC_DGEMM, double)
MXC_BLAS_TRSM_FN(mxc_strsm, MXC_STRSM, float)
MXC_BLAS_TRSM_FN(mxc_dtrsm, MXC_DTRSM, double)
MXC_BLAS_TRSM_FN(mxc_strmm, MXC_STRMM, float)
MXC_BLAS_TRSM_FN(mxc_dtrmm, MXC_DTRMM, double)
MXC_BLAS_SYRK_FN(mxc_ssyrk, MXC_SSYRK, float)
MXC_BLAS_SYRK_FN(mxc_dsyrk, MXC_DSYRK, double)
MXC_BLAS_POTR_FN(mxc_spotrf, MXC_SPOTRF, float)
MXC_BLAS_POTR_FN(mxc_dpotrf, MXC_DPOTRF, double)
MXC_BLAS_POTR_FN(mxc_spotri, MXC_SPOTRI, float)
MXC_BLAS_POTR_FN(mxc_dpotri, MXC_DPOTRI, double)
MXC_BLAS_GEMV_FN(mxc_sgemv, MXC_SGEMV, float)
MXC_BLAS_GEMV_FN(mxc_dgemv, MXC_DGEMV, double)

#endif
