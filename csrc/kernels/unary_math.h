/* The math of every unary elementwise operator, defined once for both devices: the CPU kernel
 * table (kernels/elemwise_unary.h) and the CUDA functors (mxc/ops/cuda/include/mxc/
 * elemwise_ops.cuh) both expand MXC_UNARY_OPS. The operators themselves (name, gradient) are
 * registered in mxc/ops/elemwise.py; the GPU instantiates every unary kernel registered there.
 *
 * MXC_UNARY_OPS(X) calls X(name, float expr, double expr, heavy, int kind, exact int expr) with
 * the argument `a`:
 * - float expr: float32 and float16 (computed in float32), as MXNet's mshadow_op;
 * - double expr: float64;
 * - heavy (CPU threading, see MXC_CLONES in elemwise_unary.h): 0 memory-bound, 1 a libm call
 *   per element, 2 a pure-C polynomial worth AVX2/AVX-512 clones;
 * - int kind: E = the exact integer expression (a is DT, U its unsigned twin: two's-complement
 *   wrap-around), D = the double expression on (double)a, then MXNet's x86 cast back (so int32
 *   sqrt(-1) is INT32_MIN), F = the float expression likewise (MXNet's math::id for
 *   reciprocal, degrees, radians).
 *
 * What differs between the devices is named by hooks that the including file defines:
 * MXC_UM_EXPF(a) / MXC_UM_TANHF(a) / MXC_UM_ERFF(a) / MXC_UM_EXPM1F(a) / MXC_UM_LOGF(a) /
 * MXC_UM_LOG2F(a) / MXC_UM_LOG10F(a) / MXC_UM_LOG1PF(a) (float exp, tanh, erf, expm1 and the
 * logs: the CPU's vectorisable versions in elemwise_common.h, libdevice's on the GPU),
 * MXC_UM_LGAMMAF / MXC_UM_LGAMMA (the CPU's thread-safe lgamma_r), MXC_UM_ITO(a, double v)
 * (v cast to a's integer type with MXNet's semantics).
 *
 * Adding a unary operator: one X(...) line here and one entry in mxc/ops/elemwise.py's _UNARY
 * (its gradient); see docs/developing.md.
 */
#ifndef MXC_KERNELS_UNARY_MATH_H
#define MXC_KERNELS_UNARY_MATH_H
#include "kernels/hd_math.h"

/* MXNet's constants are float: PI is `const float`, degrees is (180.0f / PI) * a */
#define MXC_DEG_F (180.0f / 3.14159265358979323846f)
#define MXC_RAD_F (3.14159265358979323846f / 180.0f)

/* -a as MXNet's C++ computes it for integer a: 8-bit types promote to int (no wrap), 32/64-bit
 * negation wraps (so -INT32_MIN stays INT32_MIN and int32 sigmoid(INT32_MIN) is 1) */
#define MXC_INEG(a) (sizeof(a) < 4 ? (int64_t)(-(int)(a)) : (int64_t)(DT)(0u - (U)(a)))

/* erfinv(y), the x with erf(x) = y, in double: M. Giles' single-precision approximation
 * ("Approximating the erfinv function", GPU Computing Gems, 2011) as the start, then Newton
 * steps on erf (|y| <= 0.5) or on erfc (the tails, where 1 - |y| is exact and erf(x) - y would
 * cancel). erfinv(+-1) = +-inf, NaN outside [-1, 1], as scipy and MXNet. */
MXC_HD double mxc_hd_erfinv(double y) {
  if (y != y) return y;
  if (y > 1.0 || y < -1.0) return (y - y) / (y - y);  /* NaN (no NAN macro under NVRTC) */
  if (y == 1.0 || y == -1.0) return y / (y - y);      /* +-inf (y - y is +0: no literal division by zero) */
  if (y == 0.0) return y;
  double w = -log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  const double ay = fabs(y), two_rpi = 1.1283791670955126; /* 2 / sqrt(pi) */
  double x = fabs(p * y);
  for (int k = 0; k < 12; ++k) { /* 2-3 steps; the extreme tails (|y| > 1 - 1e-12) 6-8 */
    const double r = ay <= 0.5 ? erf(x) - ay : (1.0 - ay) - erfc(x);
    const double dx = r / (two_rpi * exp(-x * x));
    x -= dx;
    if (fabs(dx) <= 1e-17 * x) break;
  }
  return y < 0 ? -x : x;
}

#define MXC_UNARY_OPS(X)                                                                       \
  X(negative, -a, -a, 0, E, (DT)(0u - (U)a))                                                    \
  X(abs, fabsf(a), fabs(a), 0, E, (a < 0 ? (DT)(0u - (U)a) : a))                                \
  X(sign, (a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : 0.0f)),                                        \
    (a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : 0.0)), 0, E, (DT)((a > 0) - (a < 0)))                    \
  X(round, roundf(a), round(a), 0, E, a)                                                       \
  X(rint, mxc_hd_rintf(a), mxc_hd_rint(a), 0, E, a)                                            \
  X(ceil, ceilf(a), ceil(a), 0, E, a)                                                          \
  X(floor, floorf(a), floor(a), 0, E, a)                                                       \
  X(trunc, truncf(a), trunc(a), 0, E, a)                                                       \
  X(fix, mxc_hd_fixf(a), mxc_hd_fix(a), 0, E, a)                                               \
  X(square, a * a, a * a, 0, E, (DT)((U)a * (U)a))                                              \
  X(sqrt, sqrtf(a), sqrt(a), 1, D, 0)                                                          \
  X(rsqrt, 1.0f / sqrtf(a), 1.0 / sqrt(a), 1, D, 0)                                            \
  X(cbrt, cbrtf(a), cbrt(a), 1, D, 0)                                                          \
  X(exp, MXC_UM_EXPF(a), exp(a), 2, D, 0)                                                      \
  X(expm1, MXC_UM_EXPM1F(a), expm1(a), 2, D, 0)                                                \
  X(log, MXC_UM_LOGF(a), log(a), 2, D, 0)                                                      \
  X(log10, MXC_UM_LOG10F(a), log10(a), 2, D, 0)                                                \
  X(log2, MXC_UM_LOG2F(a), log2(a), 2, D, 0)                                                   \
  X(log1p, MXC_UM_LOG1PF(a), log1p(a), 2, D, 0)                                                \
  X(sin, sinf(a), sin(a), 1, D, 0)                                                             \
  X(cos, cosf(a), cos(a), 1, D, 0)                                                             \
  X(tan, tanf(a), tan(a), 1, D, 0)                                                             \
  X(arcsin, asinf(a), asin(a), 1, D, 0)                                                        \
  X(arccos, acosf(a), acos(a), 1, D, 0)                                                        \
  X(arctan, atanf(a), atan(a), 1, D, 0)                                                        \
  X(sinh, sinhf(a), sinh(a), 1, D, 0)                                                          \
  X(cosh, coshf(a), cosh(a), 1, D, 0)                                                          \
  X(tanh, MXC_UM_TANHF(a), tanh(a), 2, D, 0)                                                   \
  X(arcsinh, asinhf(a), asinh(a), 1, D, 0)                                                     \
  X(arccosh, acoshf(a), acosh(a), 1, D, 0)                                                     \
  X(arctanh, atanhf(a), atanh(a), 1, D, 0)                                                     \
  X(degrees, MXC_DEG_F * a, (double)MXC_DEG_F * a, 0, F, 0)                                    \
  X(radians, MXC_RAD_F * a, (double)MXC_RAD_F * a, 0, F, 0)                                    \
  X(sigmoid, 1.0f / (1.0f + MXC_UM_EXPF(-a)), 1.0 / (1.0 + exp(-a)), 2, E,                     \
    MXC_UM_ITO(a, 1.0 / (1.0 + exp((double)MXC_INEG(a)))))                                     \
  X(relu, ((a > 0.0f || a != a) ? a : 0.0f), ((a > 0.0 || a != a) ? a : 0.0), 0, E,            \
    (a > 0 ? a : (DT)0))                                                                        \
  X(softsign, a / (1.0f + fabsf(a)), a / (1.0 + fabs(a)), 1, D, 0)                             \
  X(erf, MXC_UM_ERFF(a), erf(a), 2, D, 0)                                                      \
  X(erfinv, (float)mxc_hd_erfinv((double)a), mxc_hd_erfinv(a), 1, D, 0)                        \
  X(gamma, tgammaf(a), tgamma(a), 1, D, 0)                                                     \
  X(gammaln, MXC_UM_LGAMMAF(a), MXC_UM_LGAMMA(a), 1, D, 0)                                     \
  X(reciprocal, 1.0f / a, 1.0 / a, 0, F, 0)                                                    \
  X(logical_not, (a == 0.0f ? 1.0f : 0.0f), (a == 0.0 ? 1.0 : 0.0), 0, E, (DT)(a == 0))

#endif
