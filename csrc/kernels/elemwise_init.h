/* Initialisation kernels of mxc/ops/cpu/init.pyx: fill, arange, eye.
 *
 * fill (fattr[0] = value, every dtype): the value converted once with the cast rules of
 *   elemwise_common.h (as MXNet: uint8 full(-2.5) = 254, bool full(x) = x != 0).
 * arange (fattr[0] = start, fattr[1] = step, every dtype but bool): out[i] = start + i * step
 *   computed in double, then converted (numpy's rule for floating dtypes).
 * eye (iattr[0] = k; 2-D output (N, M), every dtype): ones on the k-th diagonal, zeros elsewhere.
 */
#ifndef MXC_ELEMWISE_INIT_H
#define MXC_ELEMWISE_INIT_H
#include "kernels/elemwise_common.h"

typedef struct {
  void *y;
  double a, b;
} mxc_initctx;

#define MXC_INIT_FNS(tag, T, ONE)                                                              \
  static void mxc_fill_body_##tag(void *p, int64_t lo, int64_t hi) {                          \
    mxc_initctx *u = (mxc_initctx *)p;                                                         \
    T *y = (T *)u->y;                                                                          \
    const T v = MXC_TO_##tag(u->a);                                                            \
    for (int64_t i = lo; i < hi; ++i) y[i] = v;                                                \
  }                                                                                            \
  static int mxc_fill_##tag(mxc_opcall *c) {                                                   \
    if (c->nout != 1 || c->nfattr < 1) return mxc_fail(c, "fill kernel: needs one output and " \
                                                          "the value in fattr[0]");            \
    mxc_initctx u = {c->out[0].data, c->fattr[0], 0.0};                                        \
    mxc_parallel_range(c->out[0].size, c->nthreads, MXC_PAR_MIN_CHEAP, mxc_fill_body_##tag,   \
                       &u);                                                                    \
    return 0;                                                                                  \
  }                                                                                            \
  static void mxc_arange_body_##tag(void *p, int64_t lo, int64_t hi) {                        \
    mxc_initctx *u = (mxc_initctx *)p;                                                         \
    T *y = (T *)u->y;                                                                          \
    for (int64_t i = lo; i < hi; ++i) y[i] = MXC_TO_##tag(u->a + (double)i * u->b);            \
  }                                                                                            \
  static int mxc_arange_##tag(mxc_opcall *c) {                                                 \
    if (c->nout != 1 || c->nfattr < 2) return mxc_fail(c, "arange kernel: needs one output " \
                                                          "and start, step in fattr[0..1]");   \
    mxc_initctx u = {c->out[0].data, c->fattr[0], c->fattr[1]};                                \
    mxc_parallel_range(c->out[0].size, c->nthreads, MXC_PAR_MIN_CHEAP, mxc_arange_body_##tag, \
                       &u);                                                                    \
    return 0;                                                                                  \
  }                                                                                            \
  static int mxc_eye_##tag(mxc_opcall *c) {                                                    \
    if (c->nout != 1 || c->out[0].ndim != 2 || c->niattr < 1)                                  \
      return mxc_fail(c, "eye kernel: needs a 2-D output and k in iattr[0]");                  \
    const int64_t N = c->out[0].shape[0], M = c->out[0].shape[1], k = c->iattr[0];             \
    T *y = (T *)c->out[0].data;                                                                \
    memset(y, 0, (size_t)(N * M) * sizeof(T));                                                 \
    if (k > -N && k < M) { /* else the diagonal misses the matrix (and -k cannot overflow) */ \
      for (int64_t i = k >= 0 ? 0 : -k; i < N && i + k < M; ++i) y[i * M + i + k] = (ONE);    \
    }                                                                                          \
    return 0;                                                                                  \
  }

MXC_INIT_FNS(f16, uint16_t, 0x3c00u)
MXC_INIT_FNS(f32, float, 1.0f)
MXC_INIT_FNS(f64, double, 1.0)
MXC_INIT_FNS(u8, uint8_t, 1)
MXC_INIT_FNS(i8, int8_t, 1)
MXC_INIT_FNS(i32, int32_t, 1)
MXC_INIT_FNS(i64, int64_t, 1)
MXC_INIT_FNS(b, uint8_t, 1)

#define MXC_INIT_ROW(tag, code)                                                                \
  {"fill", code, -1, mxc_fill_##tag}, {"eye", code, -1, mxc_eye_##tag},
#define MXC_ARANGE_ROW(tag, code) {"arange", code, -1, mxc_arange_##tag},

static const mxc_kentry mxc_init_table[] = {
    MXC_INIT_ROW(f16, MXC_FLOAT16) MXC_INIT_ROW(f32, MXC_FLOAT32) MXC_INIT_ROW(f64, MXC_FLOAT64)
    MXC_INIT_ROW(u8, MXC_UINT8) MXC_INIT_ROW(i8, MXC_INT8) MXC_INIT_ROW(i32, MXC_INT32)
    MXC_INIT_ROW(i64, MXC_INT64) MXC_INIT_ROW(b, MXC_BOOL)
    MXC_ARANGE_ROW(f16, MXC_FLOAT16) MXC_ARANGE_ROW(f32, MXC_FLOAT32)
    MXC_ARANGE_ROW(f64, MXC_FLOAT64) MXC_ARANGE_ROW(u8, MXC_UINT8) MXC_ARANGE_ROW(i8, MXC_INT8)
    MXC_ARANGE_ROW(i32, MXC_INT32) MXC_ARANGE_ROW(i64, MXC_INT64)
    {NULL, 0, 0, NULL}};

#endif
