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
#include <stddef.h>

enum { MXC_CblasRowMajor = 101, MXC_CblasColMajor = 102 };
enum { MXC_CblasNoTrans = 111, MXC_CblasTrans = 112 };
enum { MXC_CblasUpper = 121, MXC_CblasLower = 122 };
enum { MXC_CblasNonUnit = 131, MXC_CblasUnit = 132 };
enum { MXC_CblasLeft = 141, MXC_CblasRight = 142 };

/* keep in the order of SYMBOLS in mxc/_core/blas.py */
enum mxc_blas_fn {
  MXC_SGEMM, MXC_DGEMM, MXC_STRSM, MXC_DTRSM, MXC_STRMM, MXC_DTRMM, MXC_SSYRK, MXC_DSYRK,
  MXC_SPOTRF, MXC_DPOTRF, MXC_SPOTRI, MXC_DPOTRI, MXC_SGEMV, MXC_DGEMV,
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

static inline void mxc_blas_install(int i, void *fn) {
  if (i >= 0 && i < MXC_BLAS_NFN) mxc_blas_table[i] = fn;
}

#define MXC_BLAS(name, T) ((T)mxc_blas_table[name])
#define mxc_sgemm MXC_BLAS(MXC_SGEMM, mxc_sgemm_t)
#define mxc_dgemm MXC_BLAS(MXC_DGEMM, mxc_dgemm_t)
#define mxc_strsm MXC_BLAS(MXC_STRSM, mxc_strsm_t)
#define mxc_dtrsm MXC_BLAS(MXC_DTRSM, mxc_dtrsm_t)
#define mxc_strmm MXC_BLAS(MXC_STRMM, mxc_strmm_t)
#define mxc_dtrmm MXC_BLAS(MXC_DTRMM, mxc_dtrmm_t)
#define mxc_ssyrk MXC_BLAS(MXC_SSYRK, mxc_ssyrk_t)
#define mxc_dsyrk MXC_BLAS(MXC_DSYRK, mxc_dsyrk_t)
#define mxc_spotrf MXC_BLAS(MXC_SPOTRF, mxc_spotrf_t)
#define mxc_dpotrf MXC_BLAS(MXC_DPOTRF, mxc_dpotrf_t)
#define mxc_spotri MXC_BLAS(MXC_SPOTRI, mxc_spotri_t)
#define mxc_dpotri MXC_BLAS(MXC_DPOTRI, mxc_dpotri_t)
#define mxc_sgemv MXC_BLAS(MXC_SGEMV, mxc_sgemv_t)
#define mxc_dgemv MXC_BLAS(MXC_DGEMV, mxc_dgemv_t)

#endif
