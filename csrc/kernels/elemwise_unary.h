/* Unary elementwise kernels "unary:<op>", one function per (op, dtype).
 *
 * Semantics follow MXNet 1.9.1 (src/operator/mshadow_op.h, checked with the real library):
 * - float16 and float32 compute in float32 with the libm `f` functions, float64 in double;
 *   float32 exp and sigmoid use mxc_expf (elemwise_common.h: vectorises, within 1 ulp of expf);
 *   tanh, erf, expm1 and the logs use vectorising versions in double from the same file.
 * - integer inputs: ops that MXNet evaluates through floating point (exp, sqrt, sigmoid, ...)
 *   compute in double (reciprocal, degrees, radians: float, as MXNet's math::id) and convert back
 *   with MXNet's x86 cast (so int32 sqrt(-1) is INT32_MIN, int8 exp(5) is -108). Ops that are
 *   exact on integers (negative, abs, sign, square, relu, logical_not, the rounding family) are
 *   computed in integer arithmetic with two's-complement wrap-around; that equals MXNet wherever
 *   MXNet's float32/double route is exact (all of int8/uint8; int32/int64 below 2^24/2^53).
 * - rint is MXNet's, not C's: ties go toward -inf (rint(2.5) = 2, rint(-2.5) = -3, rint(3.5) = 3).
 * - sign(nan) = 0, relu(nan) = nan, logical_not(nan) = 0, as MXNet.
 * bool inputs are rejected by MXNet for all of these; only "unary:copy" takes bool.
 */
#ifndef MXC_ELEMWISE_UNARY_H
#define MXC_ELEMWISE_UNARY_H
#include "kernels/elemwise_common.h"
#include "kernels/unary_math.h"

/* the math of each operator: kernels/unary_math.h (shared with the CUDA functors); the hooks it
 * names, for the CPU: */
#define MXC_UM_EXPF(a) mxc_expf(a)
#define MXC_UM_TANHF(a) mxc_tanhf(a)
#define MXC_UM_ERFF(a) ((float)mxc_erf_d((double)(a)))
#define MXC_UM_EXPM1F(a) mxc_expm1f(a)
#define MXC_UM_LOGF(a) mxc_logf(a)
#define MXC_UM_LOG2F(a) mxc_log2f(a)
#define MXC_UM_LOG10F(a) mxc_log10f(a)
#define MXC_UM_LOG1PF(a) mxc_log1pf(a)
#define MXC_UM_LGAMMAF(a) mxc_lgammaf(a)
#define MXC_UM_LGAMMA(a) mxc_lgammad(a)
#define MXC_UM_ITO(a, v) MXC_ITO(a, v)

/* lgamma writes the global `signgam`; the _r forms are safe on OpenMP threads */
static inline float mxc_lgammaf(float a) {
  int s;
  return lgammaf_r(a, &s);
}
static inline double mxc_lgammad(double a) {
  int s;
  return lgamma_r(a, &s);
}

typedef void (*mxc_uloop)(const void *x, void *y, int64_t n);

typedef struct {
  mxc_uloop f;
  const char *x;
  char *y;
  size_t es;
} mxc_uctx;

static void mxc_unary_body(void *p, int64_t lo, int64_t hi) {
  mxc_uctx *u = (mxc_uctx *)p;
  u->f(u->x + lo * (int64_t)u->es, u->y + lo * (int64_t)u->es, hi - lo);
}

static inline int mxc_run_unary(mxc_opcall *c, mxc_uloop f, size_t es, int heavy) {
  if (c->nin != 1 || c->nout != 1 || c->in[0].size != c->out[0].size)
    return mxc_fail(c, "unary elementwise kernel: needs one input and one output of equal size");
  mxc_uctx u = {f, (const char *)c->in[0].data, (char *)c->out[0].data, es};
  mxc_parallel_range(c->out[0].size, c->nthreads, heavy ? MXC_PAR_MIN_HEAVY : MXC_PAR_MIN_CHEAP,
                     mxc_unary_body, &u);
  return 0;
}

/* one loop + one kernel; BODY reads x[i] and writes y[i] */
/* heavy: 0 = memory-bound loop, 1 = libm call per element (parallel from fewer elements),
 * 2 = like 1, and the loop is a pure-C polynomial worth compiling for AVX2/AVX-512 as well
 * (picked at load time by the CPU's features) */
#define MXC_CLONES_0 MXC_SIMD_CLONES
#define MXC_CLONES_1
#define MXC_CLONES_2 MXC_SIMD_CLONES
#define MXC_CLONES(heavy) MXC_CLONES_##heavy

#define MXC_UNARY_FN(name, tag, T, heavy, BODY)                                                \
  MXC_CLONES(heavy)                                                                            \
  static void mxc_ul_##name##_##tag(const void *xv, void *yv, int64_t n) {                    \
    const T *x = (const T *)xv;                                                                \
    T *y = (T *)yv;                                                                            \
    for (int64_t i = 0; i < n; ++i) { BODY }                                                   \
  }                                                                                            \
  static int mxc_unary_##name##_##tag(mxc_opcall *c) {                                         \
    return mxc_run_unary(c, mxc_ul_##name##_##tag, sizeof(T), heavy);                          \
  }

#define MXC_UNARY_INT_E(name, tag, T, UT, FE, DE, heavy, IE)                                   \
  MXC_UNARY_FN(name, tag, T, heavy, typedef T DT; typedef UT U; (void)sizeof(DT);            \
               (void)sizeof(U); DT a = x[i]; y[i] = (IE);)
#define MXC_UNARY_INT_D(name, tag, T, UT, FE, DE, heavy, IE)                                   \
  MXC_UNARY_FN(name, tag, T, heavy, double a = (double)x[i]; y[i] = MXC_TO_##tag(DE);)
#define MXC_UNARY_INT_F(name, tag, T, UT, FE, DE, heavy, IE)                                   \
  MXC_UNARY_FN(name, tag, T, heavy, float a = (float)x[i]; y[i] = MXC_TO_##tag(FE);)

#define MXC_UNARY_DEFINE(name, FE, DE, heavy, KIND, IE)                                        \
  MXC_UNARY_FN(name, f32, float, heavy, float a = x[i]; y[i] = (FE);)                          \
  MXC_UNARY_FN(name, f64, double, heavy, double a = x[i]; y[i] = (DE);)                        \
  MXC_UNARY_FN(name, f16, uint16_t, heavy,                                                     \
               float a = mxc_half_to_float(x[i]); y[i] = mxc_float_to_half(FE);)               \
  MXC_UNARY_INT_##KIND(name, u8, uint8_t, uint32_t, FE, DE, heavy, IE)                         \
  MXC_UNARY_INT_##KIND(name, i8, int8_t, uint32_t, FE, DE, heavy, IE)                          \
  MXC_UNARY_INT_##KIND(name, i32, int32_t, uint32_t, FE, DE, heavy, IE)                        \
  MXC_UNARY_INT_##KIND(name, i64, int64_t, uint64_t, FE, DE, heavy, IE)

/* one integer expression serves signed and unsigned types: `a < 0` is simply false for uint8 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtype-limits"
MXC_VEC_BEGIN
MXC_UNARY_OPS(MXC_UNARY_DEFINE)
MXC_VEC_END
#pragma GCC diagnostic pop

/* copy: any dtype, by element size */
#define MXC_COPY_FN(tag, T)                                                                    \
  static void mxc_ul_copy_##tag(const void *x, void *y, int64_t n) {                          \
    if (x != y) memcpy(y, x, (size_t)n * sizeof(T));                                           \
  }                                                                                            \
  static int mxc_unary_copy_##tag(mxc_opcall *c) {                                             \
    return mxc_run_unary(c, mxc_ul_copy_##tag, sizeof(T), 0);                                  \
  }
MXC_COPY_FN(e1, uint8_t)
MXC_COPY_FN(e2, uint16_t)
MXC_COPY_FN(e4, uint32_t)
MXC_COPY_FN(e8, uint64_t)

#define MXC_UNARY_ENTRIES(name, FE, DE, heavy, KIND, IE)                                       \
  {"unary:" #name, MXC_FLOAT32, -1, mxc_unary_##name##_f32},                                   \
  {"unary:" #name, MXC_FLOAT64, -1, mxc_unary_##name##_f64},                                   \
  {"unary:" #name, MXC_FLOAT16, -1, mxc_unary_##name##_f16},                                   \
  {"unary:" #name, MXC_UINT8, -1, mxc_unary_##name##_u8},                                      \
  {"unary:" #name, MXC_INT8, -1, mxc_unary_##name##_i8},                                       \
  {"unary:" #name, MXC_INT32, -1, mxc_unary_##name##_i32},                                     \
  {"unary:" #name, MXC_INT64, -1, mxc_unary_##name##_i64},

#define MXC_COPY_ENTRIES                                                                       \
  {"unary:copy", MXC_FLOAT32, -1, mxc_unary_copy_e4},                                          \
  {"unary:copy", MXC_FLOAT64, -1, mxc_unary_copy_e8},                                          \
  {"unary:copy", MXC_FLOAT16, -1, mxc_unary_copy_e2},                                          \
  {"unary:copy", MXC_UINT8, -1, mxc_unary_copy_e1},                                            \
  {"unary:copy", MXC_INT8, -1, mxc_unary_copy_e1},                                             \
  {"unary:copy", MXC_INT32, -1, mxc_unary_copy_e4},                                            \
  {"unary:copy", MXC_INT64, -1, mxc_unary_copy_e8},                                            \
  {"unary:copy", MXC_BOOL, -1, mxc_unary_copy_e1},

#endif
