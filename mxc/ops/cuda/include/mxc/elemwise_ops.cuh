// The elementwise op functors (unary: f/d/i, binary: f/d/i) of elemwise.cu and broadcast.cu.
#pragma once
#include "mxc/common.cuh"

namespace mxc {

// ---- integer helpers ---------------------------------------------------------------------
template <class I> MXC_DEV I wrap_neg(I a) { return (I)(0ull - (u64)a); }
// -a as MXNet's C++ computes it: 8-bit types promote to int (no wrap), 32/64-bit wrap
template <class I> MXC_DEV i64 mx_neg(I a) {
  return sizeof(I) < 4 ? -(i64)a : (i64)(I)(0ull - (u64)a);
}
MXC_DEV unsigned char idiv(unsigned char a, unsigned char b) { return mxc_hd_div_u8(a, b); }
MXC_DEV signed char idiv(signed char a, signed char b) { return mxc_hd_div_i8(a, b); }
MXC_DEV int idiv(int a, int b) { return mxc_hd_div_i32(a, b); }
MXC_DEV long long idiv(long long a, long long b) { return mxc_hd_div_i64(a, b); }
MXC_DEV unsigned char imod(unsigned char a, unsigned char b) { return mxc_hd_mod_u8(a, b); }
MXC_DEV signed char imod(signed char a, signed char b) { return mxc_hd_mod_i8(a, b); }
MXC_DEV int imod(int a, int b) { return mxc_hd_mod_i32(a, b); }
MXC_DEV long long imod(long long a, long long b) { return mxc_hd_mod_i64(a, b); }
template <class I> MXC_DEV I iabs(I a) { return a < 0 ? wrap_neg(a) : a; }
template <> MXC_DEV unsigned char iabs<unsigned char>(unsigned char a) { return a; }

// ---- unary ops: f (float), d (double), i (integer storage type I) -------------------------
#define MXC_UNARY_OP(NAME, FE, DE, IE)                                                       \
  struct op_##NAME {                                                                         \
    static MXC_DEV float f(float a) { return FE; }                                           \
    static MXC_DEV double d(double a) { return DE; }                                         \
    template <class I> static MXC_DEV I i(I a) { return IE; }                                \
  };
// integer route through double (MXNet's math on an int widened to a floating type)
#define MXC_VIA_D(DE) from_double<I>(d((double)a))
#define MXC_VIA_F(FE) from_double<I>((double)f((float)a))

MXC_DEV float rsqrt_f(float a) { return 1.0f / sqrtf(a); }
MXC_DEV float sigmoid_f(float a) { return 1.0f / (1.0f + expf(-a)); }
MXC_DEV double sigmoid_d(double a) { return 1.0 / (1.0 + exp(-a)); }
#define MXC_DEG_F (180.0f / 3.14159265358979323846f)
#define MXC_RAD_F (3.14159265358979323846f / 180.0f)

MXC_UNARY_OP(negative, -a, -a, wrap_neg(a))
MXC_UNARY_OP(abs, fabsf(a), fabs(a), iabs(a))
MXC_UNARY_OP(sign, (a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : 0.0f)),
             (a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : 0.0)), (I)((a > 0) - (a < 0)))
MXC_UNARY_OP(round, roundf(a), round(a), a)
MXC_UNARY_OP(rint, mxc_hd_rintf(a), mxc_hd_rint(a), a)
MXC_UNARY_OP(ceil, ceilf(a), ceil(a), a)
MXC_UNARY_OP(floor, floorf(a), floor(a), a)
MXC_UNARY_OP(trunc, truncf(a), trunc(a), a)
MXC_UNARY_OP(fix, mxc_hd_fixf(a), mxc_hd_fix(a), a)
MXC_UNARY_OP(square, a * a, a * a, (I)((u64)a * (u64)a))
MXC_UNARY_OP(sqrt, sqrtf(a), sqrt(a), MXC_VIA_D(0))
MXC_UNARY_OP(rsqrt, rsqrt_f(a), 1.0 / sqrt(a), MXC_VIA_D(0))
MXC_UNARY_OP(cbrt, cbrtf(a), cbrt(a), MXC_VIA_D(0))
MXC_UNARY_OP(exp, expf(a), exp(a), MXC_VIA_D(0))
MXC_UNARY_OP(expm1, expm1f(a), expm1(a), MXC_VIA_D(0))
MXC_UNARY_OP(log, logf(a), log(a), MXC_VIA_D(0))
MXC_UNARY_OP(log10, log10f(a), log10(a), MXC_VIA_D(0))
MXC_UNARY_OP(log2, log2f(a), log2(a), MXC_VIA_D(0))
MXC_UNARY_OP(log1p, log1pf(a), log1p(a), MXC_VIA_D(0))
MXC_UNARY_OP(sin, sinf(a), sin(a), MXC_VIA_D(0))
MXC_UNARY_OP(cos, cosf(a), cos(a), MXC_VIA_D(0))
MXC_UNARY_OP(tan, tanf(a), tan(a), MXC_VIA_D(0))
MXC_UNARY_OP(arcsin, asinf(a), asin(a), MXC_VIA_D(0))
MXC_UNARY_OP(arccos, acosf(a), acos(a), MXC_VIA_D(0))
MXC_UNARY_OP(arctan, atanf(a), atan(a), MXC_VIA_D(0))
MXC_UNARY_OP(sinh, sinhf(a), sinh(a), MXC_VIA_D(0))
MXC_UNARY_OP(cosh, coshf(a), cosh(a), MXC_VIA_D(0))
MXC_UNARY_OP(tanh, tanhf(a), tanh(a), MXC_VIA_D(0))
MXC_UNARY_OP(arcsinh, asinhf(a), asinh(a), MXC_VIA_D(0))
MXC_UNARY_OP(arccosh, acoshf(a), acosh(a), MXC_VIA_D(0))
MXC_UNARY_OP(arctanh, atanhf(a), atanh(a), MXC_VIA_D(0))
MXC_UNARY_OP(degrees, MXC_DEG_F * a, (double)MXC_DEG_F * a, MXC_VIA_F(0))
MXC_UNARY_OP(radians, MXC_RAD_F * a, (double)MXC_RAD_F * a, MXC_VIA_F(0))
MXC_UNARY_OP(sigmoid, sigmoid_f(a), sigmoid_d(a),
             from_double<I>(1.0 / (1.0 + exp((double)mx_neg(a)))))
MXC_UNARY_OP(relu, ((a > 0.0f || a != a) ? a : 0.0f), ((a > 0.0 || a != a) ? a : 0.0),
             (a > 0 ? a : (I)0))
MXC_UNARY_OP(softsign, a / (1.0f + fabsf(a)), a / (1.0 + fabs(a)), MXC_VIA_D(0))
MXC_UNARY_OP(erf, erff(a), erf(a), MXC_VIA_D(0))
MXC_UNARY_OP(erfinv, erfinvf(a), erfinv(a), MXC_VIA_D(0))
MXC_UNARY_OP(gamma, tgammaf(a), tgamma(a), MXC_VIA_D(0))
MXC_UNARY_OP(gammaln, lgammaf(a), lgamma(a), MXC_VIA_D(0))
MXC_UNARY_OP(reciprocal, 1.0f / a, 1.0 / a, MXC_VIA_F(0))
MXC_UNARY_OP(logical_not, (a == 0.0f ? 1.0f : 0.0f), (a == 0.0 ? 1.0 : 0.0), (I)(a == 0))

template <class Op> MXC_DEV float apply1(Op, float a) { return Op::f(a); }
template <class Op> MXC_DEV double apply1(Op, double a) { return Op::d(a); }
template <class Op> MXC_DEV __half apply1(Op, __half a) {
  return __float2half_rn(Op::f(__half2float(a)));
}
template <class Op, class I> MXC_DEV I apply1(Op, I a) { return Op::template i<I>(a); }

// ---- binary ops: f, d, i(a, b) -----------------------------------------------------------
#define MXC_BINARY_OP(NAME, FE, DE, IE)                                                      \
  struct op_##NAME {                                                                         \
    static MXC_DEV float f(float a, float b) { return FE; }                                  \
    static MXC_DEV double d(double a, double b) { return DE; }                               \
    template <class I> static MXC_DEV I i(I a, I b) { return IE; }                           \
  };
#define MXC_CMP(E) ((E) ? 1 : 0)
MXC_BINARY_OP(add, a + b, a + b, (I)((u64)a + (u64)b))
MXC_BINARY_OP(sub, a - b, a - b, (I)((u64)a - (u64)b))
MXC_BINARY_OP(mul, a * b, a * b, (I)((u64)a * (u64)b))
MXC_BINARY_OP(div, a / b, a / b, idiv(a, b))
MXC_BINARY_OP(mod, (float)mxc_hd_mod(a, b), mxc_hd_mod(a, b), imod(a, b))
MXC_BINARY_OP(power, powf(a, b), pow(a, b), from_double<I>((double)powf((float)a, (float)b)))
MXC_BINARY_OP(maximum, (a != a ? a : (a > b ? a : b)), (a != a ? a : (a > b ? a : b)),
              (a > b ? a : b))
MXC_BINARY_OP(minimum, (a != a ? a : (a < b ? a : b)), (a != a ? a : (a < b ? a : b)),
              (a < b ? a : b))
MXC_BINARY_OP(hypot, hypotf(a, b), hypot(a, b),
              from_double<I>((double)hypotf((float)a, (float)b)))
MXC_BINARY_OP(equal, MXC_CMP(a == b), MXC_CMP(a == b), (I)(a == b))
MXC_BINARY_OP(not_equal, MXC_CMP(a != b), MXC_CMP(a != b), (I)(a != b))
MXC_BINARY_OP(greater, MXC_CMP(a > b), MXC_CMP(a > b), (I)(a > b))
MXC_BINARY_OP(greater_equal, MXC_CMP(a >= b), MXC_CMP(a >= b), (I)(a >= b))
MXC_BINARY_OP(lesser, MXC_CMP(a < b), MXC_CMP(a < b), (I)(a < b))
MXC_BINARY_OP(lesser_equal, MXC_CMP(a <= b), MXC_CMP(a <= b), (I)(a <= b))
MXC_BINARY_OP(logical_and, MXC_CMP(a != 0 && b != 0), MXC_CMP(a != 0 && b != 0),
              (I)(a != 0 && b != 0))
MXC_BINARY_OP(logical_or, MXC_CMP(a != 0 || b != 0), MXC_CMP(a != 0 || b != 0),
              (I)(a != 0 || b != 0))
MXC_BINARY_OP(logical_xor, MXC_CMP((a != 0) != (b != 0)), MXC_CMP((a != 0) != (b != 0)),
              (I)((a != 0) != (b != 0)))
// first-order gradients from (out_grad a, forward output b): MXNet's _backward_<op>
MXC_BINARY_OP(tanh_grad, a * (1.0f - b * b), a * (1.0 - b * b), (I)((i64)a * (1 - (i64)b * b)))
MXC_BINARY_OP(sigmoid_grad, a * b * (1.0f - b), a * b * (1.0 - b), (I)((i64)a * b * (1 - (i64)b)))
MXC_BINARY_OP(relu_grad, (b > 0.0f ? a : 0.0f), (b > 0.0 ? a : 0.0), (I)(b > 0 ? a : 0))
MXC_BINARY_OP(sqrt_grad, a / (2.0f * b), a / (2.0 * b), (I)(b != 0 ? (i64)a / (2 * (i64)b) : 0))

template <class Op> MXC_DEV float apply2(Op, float a, float b) { return Op::f(a, b); }
template <class Op> MXC_DEV double apply2(Op, double a, double b) { return Op::d(a, b); }
template <class Op> MXC_DEV __half apply2(Op, __half a, __half b) {
  return __float2half_rn(Op::f(__half2float(a), __half2float(b)));
}
template <class Op, class I> MXC_DEV I apply2(Op, I a, I b) { return Op::template i<I>(a, b); }

}  // namespace mxc
