// The elementwise op functors (unary: f/d/i, binary: f/d/i) of elemwise.cu and broadcast.cu.
#pragma once
#include "mxc/common.cuh"
#include "kernels/unary_math.h"

namespace mxc {

// ---- integer helpers ---------------------------------------------------------------------
MXC_DEV unsigned char idiv(unsigned char a, unsigned char b) { return mxc_hd_div_u8(a, b); }
MXC_DEV signed char idiv(signed char a, signed char b) { return mxc_hd_div_i8(a, b); }
MXC_DEV int idiv(int a, int b) { return mxc_hd_div_i32(a, b); }
MXC_DEV long long idiv(long long a, long long b) { return mxc_hd_div_i64(a, b); }
MXC_DEV unsigned char imod(unsigned char a, unsigned char b) { return mxc_hd_mod_u8(a, b); }
MXC_DEV signed char imod(signed char a, signed char b) { return mxc_hd_mod_i8(a, b); }
MXC_DEV int imod(int a, int b) { return mxc_hd_mod_i32(a, b); }
MXC_DEV long long imod(long long a, long long b) { return mxc_hd_mod_i64(a, b); }

// ---- unary ops: op_<name> with f (float), d (double), i (integer storage type I), generated
// from the one definition of each operator's math (kernels/unary_math.h, shared with the CPU)
// ----------------------------------------------------------------------------------------------
#define MXC_UM_EXPF(a) expf(a)
#define MXC_UM_TANHF(a) tanhf(a)
#define MXC_UM_ERFF(a) erff(a)
#define MXC_UM_EXPM1F(a) expm1f(a)
#define MXC_UM_LOGF(a) logf(a)
#define MXC_UM_LOG2F(a) log2f(a)
#define MXC_UM_LOG10F(a) log10f(a)
#define MXC_UM_LOG1PF(a) log1pf(a)
#define MXC_UM_LGAMMAF(a) lgammaf(a)
#define MXC_UM_LGAMMA(a) lgamma(a)
#define MXC_UM_ITO(a, v) from_double<DT>(v)
// the unsigned twin of an integer storage type (U in the exact integer expressions: 32-bit
// arithmetic for the 8- and 32-bit types, as the CPU's)
template <class I> struct utwin { typedef unsigned int t; };
template <> struct utwin<long long> { typedef unsigned long long t; };
#define MXC_UNARY_INT_E(FE, DE, IE)                                                          \
  typedef I DT;                                                                              \
  typedef typename utwin<I>::t U;                                                            \
  (void)sizeof(DT);                                                                          \
  (void)sizeof(U);                                                                           \
  return (IE);
#define MXC_UNARY_INT_D(FE, DE, IE) return from_double<I>(d((double)a));
#define MXC_UNARY_INT_F(FE, DE, IE) return from_double<I>((double)f((float)a));
#define MXC_UNARY_FUNCTOR(NAME, FE, DE, HEAVY, KIND, IE)                                     \
  struct op_##NAME {                                                                         \
    static MXC_DEV float f(float a) { return FE; }                                           \
    static MXC_DEV double d(double a) { return DE; }                                         \
    template <class I> static MXC_DEV I i(I a) { MXC_UNARY_INT_##KIND(FE, DE, IE) }          \
  };
MXC_UNARY_OPS(MXC_UNARY_FUNCTOR)

template <class Op> MXC_DEV float apply1(Op, float a) { return Op::f(a); }
template <class Op> MXC_DEV double apply1(Op, double a) { return Op::d(a); }
template <class Op> MXC_DEV __half apply1(Op, __half a) {
  return __float2half_rn(Op::f(__half2float(a)));
}
template <class Op> MXC_DEV __nv_bfloat16 apply1(Op, __nv_bfloat16 a) {
  return __float2bfloat16_rn(Op::f(__bfloat162float(a)));
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
template <class Op> MXC_DEV __nv_bfloat16 apply2(Op, __nv_bfloat16 a, __nv_bfloat16 b) {
  return __float2bfloat16_rn(Op::f(__bfloat162float(a), __bfloat162float(b)));
}
template <class Op, class I> MXC_DEV I apply2(Op, I a, I b) { return Op::template i<I>(a, b); }

// clip's arithmetic on one value (mxc_clip and the fused chains): the bounds already cast to
// the dtype, compared in the accumulation type A; nan passes through (MXNet's clip)
template <class T, class A> MXC_DEV T clip_value(A v, A l, A h) {
  return store<T>(v < l ? l : (v > h ? h : v));
}

}  // namespace mxc
