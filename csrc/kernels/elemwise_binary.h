/* Binary elementwise kernels with broadcasting: "binary:<op>", "scalar:<op>", "rscalar:<op>".
 *
 * One loop function per (op, dtype) serves all three: it takes each operand with an element
 * stride of 1 (a contiguous run) or 0 (one value repeated), so the scalar kernels pass the
 * converted scalar with stride 0, and the broadcast driver hands it runs of the output's last
 * (collapsed) dimension.
 *
 * Semantics follow MXNet 1.9.1 (mshadow_op.h; checked with the real library):
 * - float16/float32 compute in float32, float64 in double; output dtype = input dtype;
 *   comparisons and logical ops give 0/1 in that dtype.
 * - mod takes the sign of the divisor (floor mod, computed with fmod in double) and x mod 0 = 0
 *   for every dtype, floats included.
 * - maximum/minimum return a when a is nan, else a > b ? a : b (so nan in either propagates).
 * - integers: add/sub/mul wrap around; div truncates toward zero; x / 0 = 0 (MXNet itself dies of
 *   SIGFPE there; 0 is numpy's answer) and INT_MIN / -1 = INT_MIN (wraps, as int8 does in MXNet);
 *   power and hypot go through float32 (powf/hypotf) and MXNet's x86 cast, as MXNet does, so
 *   int32 100**100 = INT32_MIN and 2**-1 = 0.
 * - scalar kernels: the scalar fattr[0] is first cast to the array's dtype, as MXNet does
 *   (int32 array + 2.5 adds 2; uint8 array + (-2.5) adds 254; float16 uses half(scalar)).
 * bool is rejected by MXNet for all of these, so no bool kernels are registered.
 */
#ifndef MXC_ELEMWISE_BINARY_H
#define MXC_ELEMWISE_BINARY_H
#include "kernels/elemwise_common.h"

/* MXNet's mod for floating types (in double) and the trap-free integer div/mod are the ones
 * the GPU kernels use too: kernels/hd_math.h (mxc_hd_mod, mxc_hd_div_<t>, mxc_hd_mod_<t>) */
#include "kernels/hd_math.h"

/* X(name, float expr, double expr, int expr, heavy, has rscalar); a, b are the operands
 * (float in the float expr, double in the double expr, DT in the int expr with U its unsigned
 * twin). Every expr yields a value of the compute type. */
#define MXC_BINARY_OPS(X)                                                                      \
  X(add, a + b, a + b, (DT)((U)a + (U)b), 0, 0)                                                 \
  X(sub, a - b, a - b, (DT)((U)a - (U)b), 0, 1)                                                 \
  X(mul, a * b, a * b, (DT)((U)a * (U)b), 0, 0)                                                 \
  X(div, a / b, a / b, MXC_IDIV(a, b), 0, 1)                                              \
  X(mod, (float)mxc_hd_mod(a, b), mxc_hd_mod(a, b), MXC_IMOD(a, b), 1, 1)                   \
  X(power, powf(a, b), pow(a, b), MXC_ITO(a, powf((float)a, (float)b)), 1, 1)                \
  X(maximum, (a != a ? a : (a > b ? a : b)), (a != a ? a : (a > b ? a : b)), (a > b ? a : b),  \
    0, 0)                                                                                      \
  X(minimum, (a != a ? a : (a < b ? a : b)), (a != a ? a : (a < b ? a : b)), (a < b ? a : b),  \
    0, 0)                                                                                      \
  X(hypot, hypotf(a, b), hypot(a, b), MXC_ITO(a, hypotf((float)a, (float)b)), 1, 0)          \
  X(equal, (float)(a == b), (double)(a == b), (DT)(a == b), 0, 0)                               \
  X(not_equal, (float)(a != b), (double)(a != b), (DT)(a != b), 0, 0)                           \
  X(greater, (float)(a > b), (double)(a > b), (DT)(a > b), 0, 0)                                \
  X(greater_equal, (float)(a >= b), (double)(a >= b), (DT)(a >= b), 0, 0)                       \
  X(lesser, (float)(a < b), (double)(a < b), (DT)(a < b), 0, 0)                                 \
  X(lesser_equal, (float)(a <= b), (double)(a <= b), (DT)(a <= b), 0, 0)                        \
  X(logical_and, (float)(a != 0 && b != 0), (double)(a != 0 && b != 0),                        \
    (DT)(a != 0 && b != 0), 0, 0)                                                               \
  X(logical_or, (float)(a != 0 || b != 0), (double)(a != 0 || b != 0),                         \
    (DT)(a != 0 || b != 0), 0, 0)                                                               \
  X(logical_xor, (float)((a != 0) != (b != 0)), (double)((a != 0) != (b != 0)),                \
    (DT)((a != 0) != (b != 0)), 0, 0)                                                           \
  /* first-order gradients of unary ops from (out_grad a, output b): MXNet's _backward_<op> */  \
  X(tanh_grad, a * (1.0f - b * b), a * (1.0 - b * b), (DT)(a * (1 - b * b)), 0, 0)             \
  X(sigmoid_grad, a * b * (1.0f - b), a * b * (1.0 - b), (DT)(a * b * (1 - b)), 0, 0)          \
  X(relu_grad, (b > 0.0f ? a : 0.0f), (b > 0.0 ? a : 0.0), (DT)(b > 0 ? a : 0), 0, 0)         \
  X(sqrt_grad, a / (2.0f * b), a / (2.0 * b), (DT)(b != 0 ? a / (2 * b) : 0), 0, 0)

/* tag-dependent helpers picked by the operand's C type (the expressions cannot name the tag:
 * macro arguments are expanded before they reach the per-dtype macro) */
#define MXC_IDIV(a, b)                                                                         \
  _Generic((a), uint8_t: mxc_hd_div_u8, int8_t: mxc_hd_div_i8, int32_t: mxc_hd_div_i32,        \
           int64_t: mxc_hd_div_i64)(a, b)
#define MXC_IMOD(a, b)                                                                         \
  _Generic((a), uint8_t: mxc_hd_mod_u8, int8_t: mxc_hd_mod_i8, int32_t: mxc_hd_mod_i32,        \
           int64_t: mxc_hd_mod_i64)(a, b)


typedef void (*mxc_bloop)(const void *a, int64_t sa, const void *b, int64_t sb, void *y,
                          int64_t n);

/* Loop over n outputs; sa, sb in {0, 1}. The four stride cases are separate loops so the common
 * ones vectorise. LD loads a storage value into the compute type, ST stores one. */
/* The loops are compiled for AVX2 and AVX-512 as well (MXC_SIMD_CLONES) and picked at load time: a
 * 1M-element float32 add lives in L3 here, where the SIMD width sets the speed (SSE2-only loops
 * ran 7% behind PyTorch's). */

#define MXC_BINARY_LOOP(name, tag, T, CT, UT, LD, ST, EXPR)                                    \
  MXC_SIMD_CLONES                                                                              \
  static void mxc_bl_##name##_##tag(const void *av, int64_t sa, const void *bv, int64_t sb,  \
                                    void *yv, int64_t n) {                                    \
    typedef T DT;                                                                              \
    typedef UT U;                                                                              \
    (void)sizeof(DT);                                                                          \
    (void)sizeof(U);                                                                           \
    const T *pa = (const T *)av, *pb = (const T *)bv;                                          \
    T *y = (T *)yv;                                                                            \
    if (sa && sb) {                                                                            \
      for (int64_t i = 0; i < n; ++i) {                                                        \
        CT a = LD(pa[i]), b = LD(pb[i]);                                                       \
        y[i] = ST(EXPR);                                                                       \
      }                                                                                        \
    } else if (sb) {                                                                           \
      const CT a = LD(pa[0]);                                                                  \
      for (int64_t i = 0; i < n; ++i) {                                                        \
        CT b = LD(pb[i]);                                                                      \
        y[i] = ST(EXPR);                                                                       \
      }                                                                                        \
    } else if (sa) {                                                                           \
      const CT b = LD(pb[0]);                                                                  \
      for (int64_t i = 0; i < n; ++i) {                                                        \
        CT a = LD(pa[i]);                                                                      \
        y[i] = ST(EXPR);                                                                       \
      }                                                                                        \
    } else {                                                                                   \
      const CT a = LD(pa[0]), b = LD(pb[0]);                                                   \
      const T v = ST(EXPR);                                                                    \
      for (int64_t i = 0; i < n; ++i) y[i] = v;                                                \
    }                                                                                          \
  }

#define MXC_ID(x) (x)
#define MXC_H2F(x) mxc_half_to_float(x)
#define MXC_F2H(x) mxc_float_to_half(x)

/* ---- drivers ---------------------------------------------------------------------------- */
typedef struct {
  mxc_bloop f;
  const char *a, *b;
  char *y;
  int64_t sa, sb, es;
} mxc_bflat;

static void mxc_binary_flat_body(void *p, int64_t lo, int64_t hi) {
  mxc_bflat *u = (mxc_bflat *)p;
  u->f(u->a + lo * u->sa * u->es, u->sa, u->b + lo * u->sb * u->es, u->sb, u->y + lo * u->es,
       hi - lo);
}

typedef struct {
  mxc_bloop f;
  const char *a, *b;
  char *y;
  int64_t es;
  int nd;                        /* collapsed dims; the last one is the inner run */
  int64_t shape[MXC_MAX_NDIM];
  int64_t sta[MXC_MAX_NDIM];     /* element strides, 0 on broadcast dims */
  int64_t stb[MXC_MAX_NDIM];
} mxc_bcast;

/* outputs [lo, hi) of a broadcast op: walk rows of the inner dim with an odometer */
static void mxc_binary_bcast_body(void *p, int64_t lo, int64_t hi) {
  mxc_bcast *u = (mxc_bcast *)p;
  const int nd = u->nd;
  const int64_t L = u->shape[nd - 1], isa = u->sta[nd - 1], isb = u->stb[nd - 1];
  int64_t idx[MXC_MAX_NDIM];
  int64_t row = lo / L, col = lo % L, offa = 0, offb = 0;
  for (int d = nd - 2; d >= 0; --d) {
    idx[d] = row % u->shape[d];
    row /= u->shape[d];
    offa += idx[d] * u->sta[d];
    offb += idx[d] * u->stb[d];
  }
  int64_t pos = lo;
  while (pos < hi) {
    int64_t len = L - col < hi - pos ? L - col : hi - pos;
    u->f(u->a + (offa + col * isa) * u->es, isa, u->b + (offb + col * isb) * u->es, isb,
         u->y + pos * u->es, len);
    pos += len;
    col = 0;
    for (int d = nd - 2; d >= 0; --d) {
      offa += u->sta[d];
      offb += u->stb[d];
      if (++idx[d] < u->shape[d]) break;
      offa -= u->sta[d] * u->shape[d];
      offb -= u->stb[d] * u->shape[d];
      idx[d] = 0;
    }
  }
}

static int mxc_run_binary(mxc_opcall *c, mxc_bloop f, int64_t es, int heavy) {
  if (c->nin != 2 || c->nout != 1)
    return mxc_fail(c, "binary elementwise kernel: needs two inputs and one output");
  const mxc_tensor *A = &c->in[0], *B = &c->in[1], *Y = &c->out[0];
  const int64_t n = Y->size, pmin = heavy ? MXC_PAR_MIN_HEAVY : MXC_PAR_MIN_CHEAP;
  if (n == 0) return 0;
  mxc_bflat fl = {f, (const char *)A->data, (const char *)B->data, (char *)Y->data, 1, 1, es};
  if (A->size == n && B->size == n) {
    /* same shape (or same size with 1s moved around, which is the same element order) */
  } else if (A->size == 1 && B->size == n) {
    fl.sa = 0;
  } else if (B->size == 1 && A->size == n) {
    fl.sb = 0;
  } else {
    if (A->ndim != Y->ndim || B->ndim != Y->ndim)
      return mxc_fail(c, "binary elementwise kernel: inputs must have the output's ndim");
    mxc_bcast u;
    u.f = f;
    u.a = fl.a;
    u.b = fl.b;
    u.y = fl.y;
    u.es = es;
    int nd = 0, bca[MXC_MAX_NDIM], bcb[MXC_MAX_NDIM];
    for (int d = 0; d < Y->ndim; ++d) {
      int64_t so = Y->shape[d];
      if ((A->shape[d] != so && A->shape[d] != 1) || (B->shape[d] != so && B->shape[d] != 1)) {
        snprintf(c->err, MXC_ERR_LEN,
                 "binary elementwise kernel: operand shapes do not broadcast to the output at "
                 "axis %d (%lld, %lld -> %lld)", d, (long long)A->shape[d],
                 (long long)B->shape[d], (long long)so);
        return -1;
      }
      if (so == 1) continue;
      int ba = A->shape[d] == 1, bb = B->shape[d] == 1;
      if (nd > 0 && bca[nd - 1] == ba && bcb[nd - 1] == bb) {
        u.shape[nd - 1] *= so;   /* same broadcast pattern as the previous dim: merge */
      } else {
        u.shape[nd] = so;
        bca[nd] = ba;
        bcb[nd] = bb;
        ++nd;
      }
    }
    int64_t acca = 1, accb = 1;
    for (int d = nd - 1; d >= 0; --d) {
      u.sta[d] = bca[d] ? 0 : acca;
      u.stb[d] = bcb[d] ? 0 : accb;
      if (!bca[d]) acca *= u.shape[d];
      if (!bcb[d]) accb *= u.shape[d];
    }
    if (acca != A->size || accb != B->size)
      return mxc_fail(c, "binary elementwise kernel: operand sizes do not match the output");
    u.nd = nd;
    mxc_parallel_range(n, c->nthreads, pmin, mxc_binary_bcast_body, &u);
    return 0;
  }
  mxc_parallel_range(n, c->nthreads, pmin, mxc_binary_flat_body, &fl);
  return 0;
}

/* scalar OP x (reverse) or x OP scalar; s points at the scalar already in the array's dtype */
static int mxc_run_scalar(mxc_opcall *c, mxc_bloop f, int64_t es, int heavy, const void *s,
                          int reverse) {
  if (c->nin != 1 || c->nout != 1 || c->in[0].size != c->out[0].size)
    return mxc_fail(c, "scalar elementwise kernel: needs one input and one output of equal size");
  if (c->nfattr < 1) return mxc_fail(c, "scalar elementwise kernel: missing the scalar (fattr[0])");
  mxc_bflat fl = {f, (const char *)c->in[0].data, (const char *)s, (char *)c->out[0].data,
                  1, 0, es};
  if (reverse) {
    fl.a = (const char *)s;
    fl.b = (const char *)c->in[0].data;
    fl.sa = 0;
    fl.sb = 1;
  }
  mxc_parallel_range(c->out[0].size, c->nthreads, heavy ? MXC_PAR_MIN_HEAVY : MXC_PAR_MIN_CHEAP,
                     mxc_binary_flat_body, &fl);
  return 0;
}

#define MXC_BINARY_KERNELS(name, tag, T, heavy)                                                \
  static int mxc_binary_##name##_##tag(mxc_opcall *c) {                                        \
    return mxc_run_binary(c, mxc_bl_##name##_##tag, sizeof(T), heavy);                         \
  }                                                                                            \
  static int mxc_scalar_##name##_##tag(mxc_opcall *c) {                                        \
    T s = MXC_TO_##tag(c->fattr[0]);                                                           \
    return mxc_run_scalar(c, mxc_bl_##name##_##tag, sizeof(T), heavy, &s, 0);                  \
  }                                                                                            \
  static int mxc_rscalar_##name##_##tag(mxc_opcall *c) {                                       \
    T s = MXC_TO_##tag(c->fattr[0]);                                                           \
    return mxc_run_scalar(c, mxc_bl_##name##_##tag, sizeof(T), heavy, &s, 1);                  \
  }

#define MXC_BINARY_DEFINE(name, FE, DE, IE, heavy, rev)                                        \
  MXC_BINARY_LOOP(name, f32, float, float, uint32_t, MXC_ID, MXC_ID, FE)                       \
  MXC_BINARY_LOOP(name, f64, double, double, uint64_t, MXC_ID, MXC_ID, DE)                     \
  MXC_BINARY_LOOP(name, f16, uint16_t, float, uint32_t, MXC_H2F, MXC_F2H, FE)                  \
  MXC_BINARY_LOOP(name, u8, uint8_t, uint8_t, uint32_t, MXC_ID, MXC_ID, IE)     \
  MXC_BINARY_LOOP(name, i8, int8_t, int8_t, uint32_t, MXC_ID, MXC_ID, IE)       \
  MXC_BINARY_LOOP(name, i32, int32_t, int32_t, uint32_t, MXC_ID, MXC_ID, IE)   \
  MXC_BINARY_LOOP(name, i64, int64_t, int64_t, uint64_t, MXC_ID, MXC_ID, IE)   \
  MXC_BINARY_KERNELS(name, f32, float, heavy)                                                  \
  MXC_BINARY_KERNELS(name, f64, double, heavy)                                                 \
  MXC_BINARY_KERNELS(name, f16, uint16_t, heavy)                                               \
  MXC_BINARY_KERNELS(name, u8, uint8_t, heavy)                                                 \
  MXC_BINARY_KERNELS(name, i8, int8_t, heavy)                                                  \
  MXC_BINARY_KERNELS(name, i32, int32_t, heavy)                                                \
  MXC_BINARY_KERNELS(name, i64, int64_t, heavy)

MXC_VEC_BEGIN
MXC_BINARY_OPS(MXC_BINARY_DEFINE)
MXC_VEC_END

/* x ** 2 for floating dtypes: x * x, which is what powf(x, 2) and pow(x, 2) return bit for bit
 * (glibc: all 2^32 floats, 2e8 random doubles; float16 computes in float32 either way) at the
 * speed of a multiply instead of a libm call per element (19 ms per 1M float32 before). Other
 * exponents keep pow. These replace the generic scalar:power entries in elemwise.h's table. */
#define MXC_POWER_SQUARE(tag, T)                                                               \
  static int mxc_scalar_power_sq_##tag(mxc_opcall *c) {                                        \
    if (c->nfattr < 1 || MXC_TO_##tag(c->fattr[0]) != MXC_TO_##tag(2.0) ||                     \
        c->nin != 1 || c->nout != 1 || c->in[0].size != c->out[0].size)                        \
      return mxc_scalar_power_##tag(c);                                                        \
    mxc_bflat fl = {mxc_bl_mul_##tag, (const char *)c->in[0].data,                              \
                    (const char *)c->in[0].data, (char *)c->out[0].data, 1, 1, sizeof(T)};       \
    mxc_parallel_range(c->out[0].size, c->nthreads, MXC_PAR_MIN_CHEAP, mxc_binary_flat_body,   \
                       &fl);                                                                   \
    return 0;                                                                                  \
  }
MXC_POWER_SQUARE(f32, float)
MXC_POWER_SQUARE(f64, double)
MXC_POWER_SQUARE(f16, uint16_t)
#define MXC_POWER_SQUARE_ENTRIES                                                               \
  {"scalar:power", MXC_FLOAT32, -1, mxc_scalar_power_sq_f32},                                  \
  {"scalar:power", MXC_FLOAT64, -1, mxc_scalar_power_sq_f64},                                  \
  {"scalar:power", MXC_FLOAT16, -1, mxc_scalar_power_sq_f16},

#define MXC_BINARY_ENTRY3(name, code, tag)                                                     \
  {"binary:" #name, code, -1, mxc_binary_##name##_##tag},                                      \
  {"scalar:" #name, code, -1, mxc_scalar_##name##_##tag},
#define MXC_RSCALAR_ENTRY_1(name, code, tag) {"rscalar:" #name, code, -1, mxc_rscalar_##name##_##tag},
#define MXC_RSCALAR_ENTRY_0(name, code, tag)
#define MXC_BINARY_ENTRY(name, code, tag, rev)                                                 \
  MXC_BINARY_ENTRY3(name, code, tag) MXC_RSCALAR_ENTRY_##rev(name, code, tag)

#define MXC_BINARY_ENTRIES(name, FE, DE, IE, heavy, rev)                                       \
  MXC_BINARY_ENTRY(name, MXC_FLOAT32, f32, rev)                                                \
  MXC_BINARY_ENTRY(name, MXC_FLOAT64, f64, rev)                                                \
  MXC_BINARY_ENTRY(name, MXC_FLOAT16, f16, rev)                                                \
  MXC_BINARY_ENTRY(name, MXC_UINT8, u8, rev)                                                   \
  MXC_BINARY_ENTRY(name, MXC_INT8, i8, rev)                                                    \
  MXC_BINARY_ENTRY(name, MXC_INT32, i32, rev)                                                  \
  MXC_BINARY_ENTRY(name, MXC_INT64, i64, rev)

#endif
