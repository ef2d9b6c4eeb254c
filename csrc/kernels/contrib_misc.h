/* Kernels of mxc/ops/contrib_misc.py (mxc/ops/cpu/contrib_misc.pyx).
 *
 * allclose (in: a, b of one dtype and one size; out: uint8 scalar; fattr: rtol, atol; iattr:
 *   equal_nan, numpy_inf): 1 when every pair is close, computed in double:
 *     a == b, or |a - b| <= atol + rtol * |b|, or both NaN with equal_nan.
 *   That is MXNet's rule (allclose_op-inl.h), under which a finite a is close to an infinite b
 *   (inf <= inf). numpy_inf = 1 applies numpy's isclose rule instead: an infinity is close only
 *   to itself (mxc.test_utils, whose callers expect numpy's answer). Each thread reduces its own
 *   range; assert_almost_equal runs this before it looks at values, as MXNet's did (numpy's
 *   float16 isclose costs microseconds per element).
 */
#ifndef MXC_KERNELS_CONTRIB_MISC_H
#define MXC_KERNELS_CONTRIB_MISC_H
#include <float.h>
#include "kernels/elemwise_common.h"

typedef struct {
  const void *a, *b;
  double rtol, atol;
  int equal_nan, numpy_inf;
  int far[64];                  /* per chunk: 1 when a pair is not close (chunk = thread) */
} mxc_allclose_ctx;

MXC_VEC_BEGIN
#define MXC_ALLCLOSE_FNS(tag, T)                                                                \
  static void mxc_allclose_body_##tag(void *p, int64_t lo, int64_t hi) {                       \
    mxc_allclose_ctx *u = (mxc_allclose_ctx *)p;                                                \
    const T *a = (const T *)u->a, *b = (const T *)u->b;                                         \
    const double rtol = u->rtol, atol = u->atol;                                                \
    const int equal_nan = u->equal_nan, numpy_inf = u->numpy_inf;                              \
    int far = 0;                                                                                \
    for (int64_t i = lo; i < hi; ++i) {                                                         \
      const double x = MXC_LD_##tag(a[i]), y = MXC_LD_##tag(b[i]);                              \
      const int finite = !numpy_inf || (fabs(x) <= DBL_MAX && fabs(y) <= DBL_MAX);              \
      const int close = x == y || (finite && fabs(x - y) <= atol + rtol * fabs(y)) ||           \
                        (equal_nan && x != x && y != y);                                        \
      far |= !close;                                                                            \
    }                                                                                           \
    u->far[MXC_TID() & 63] |= far;                                                              \
  }                                                                                             \
  static int mxc_allclose_##tag(mxc_opcall *c) {                                                \
    if (c->nin != 2 || c->nout != 1 || c->nfattr < 2 || c->niattr < 1 ||                        \
        c->in[0].size != c->in[1].size || c->out[0].size != 1)                                  \
      return mxc_fail(c, "allclose kernel: needs a, b of one size, a scalar output, rtol and "  \
                         "atol in fattr and equal_nan in iattr");                               \
    mxc_allclose_ctx u;                                                                         \
    memset(&u, 0, sizeof u);                                                                    \
    u.a = c->in[0].data;                                                                        \
    u.b = c->in[1].data;                                                                        \
    u.rtol = c->fattr[0];                                                                       \
    u.atol = c->fattr[1];                                                                       \
    u.equal_nan = c->iattr[0] != 0;                                                             \
    u.numpy_inf = c->niattr > 1 && c->iattr[1] != 0;                                            \
    mxc_parallel_range(c->in[0].size, c->nthreads > 64 ? 64 : c->nthreads, MXC_PAR_MIN_CHEAP,   \
                       mxc_allclose_body_##tag, &u);                                            \
    int far = 0;                                                                                \
    for (int t = 0; t < 64; ++t) far |= u.far[t];                                               \
    *(uint8_t *)c->out[0].data = (uint8_t)!far;                                                 \
    return 0;                                                                                   \
  }

MXC_ALLCLOSE_FNS(f16, uint16_t)
MXC_ALLCLOSE_FNS(f32, float)
MXC_ALLCLOSE_FNS(f64, double)
MXC_ALLCLOSE_FNS(u8, uint8_t)
MXC_ALLCLOSE_FNS(i8, int8_t)
MXC_ALLCLOSE_FNS(i32, int32_t)
MXC_ALLCLOSE_FNS(i64, int64_t)
MXC_VEC_END

static const mxc_kentry mxc_contrib_misc_table[] = {
    {"allclose", MXC_FLOAT16, -1, mxc_allclose_f16}, {"allclose", MXC_FLOAT32, -1, mxc_allclose_f32},
    {"allclose", MXC_FLOAT64, -1, mxc_allclose_f64}, {"allclose", MXC_UINT8, -1, mxc_allclose_u8},
    {"allclose", MXC_INT8, -1, mxc_allclose_i8},     {"allclose", MXC_INT32, -1, mxc_allclose_i32},
    {"allclose", MXC_INT64, -1, mxc_allclose_i64},   {"allclose", MXC_BOOL, -1, mxc_allclose_u8},
    {NULL, 0, 0, NULL}};

#endif
