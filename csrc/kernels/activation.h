/* Activation kernels: Activation's softrelu and every Activation backward, LeakyReLU's forward
 * (leaky/rrelu slope, per-element rrelu slopes, elu, selu, gelu, prelu with a broadcast gamma)
 * and its backward. Semantics follow MXNet 1.9.1's mshadow_op.h:
 *
 *   softrelu(x) = x > 20 ? x : log1p(exp(x))       softrelu'(y) = -expm1(-y)   (from the output)
 *   xelu(x, s)  = x > 0 ? x : x * s                 xelu'(y, s)  = y > 0 ? 1 : s
 *   elu(x, s)   = x > 0 ? x : s * expm1(x)          elu'(y, s)   = y > 0 ? 1 : s + y
 *   selu(x)     = L * (x > 0 ? x : A * expm1(x))    selu'(y)     = L * (y > 0 ? 1 : A + y)
 *   gelu(x)     = x/2 * (1 + erf(x/sqrt2))          gelu'(x)     = exact derivative, from x
 *   relu'(y) = y > 0 ? 1 : 0 (nan stays nan), sigmoid'(y) = y(1-y), tanh'(y) = 1-y^2,
 *   softsign'(x) = 1/(1+|x|)^2 (from the input).
 * selu' is MXNet 1.9.1's formula (L*(A+y) for y <= 0, which is not the true derivative
 * L*A*exp(x)); kept so that gradients agree with MXNet.
 *
 * Every kernel is elementwise over C-contiguous tensors of one float dtype (f16 computed in
 * float32, f32 in float32, f64 in double). Forward kernels: in[0] = x (and in[1] = slopes for
 * "fwd:xelu_arr"), fattr[0] = slope. Backward kernels: in[0] = head gradient, in[1] = output or
 * input (see above), in[2] = slopes for "bwd:xelu_arr"; out[0] = input gradient.
 *
 * prelu: the data is viewed as (d0, d1, rest) and gamma as (g0, g1) with g0 in {1, d0} and g1 in
 * {1, d1} (MXNet aligns gamma on data axes 0 and 1): iattr = {d0, d1, rest, g0, g1}.
 * "fwd:prelu": in (x, gamma) -> out. "bwd:prelu": in (head, x, gamma) -> out (dx, dgamma);
 * dgamma sums over the broadcast positions in double, per thread then in thread order.
 */
#ifndef MXC_KERNELS_ACTIVATION_H
#define MXC_KERNELS_ACTIVATION_H
#include "kernels/elemwise_common.h"

#define MXC_ACT_SELU_A 1.6732632423543772848170429916717
#define MXC_ACT_SELU_L 1.0507009873554804934193349852946
#define MXC_ACT_SQRT2 1.4142135623730950488016887242096
#define MXC_ACT_2_SQRTPI 1.1283791670955125738961589031215

typedef struct {
  const void *in[3];
  void *out;
  double s0;
} mxc_act_ctx;

/* storage <-> compute type per dtype tag */
#define MXC_ACT_LD_f16(v) mxc_half_to_float(v)
#define MXC_ACT_LD_f32(v) (v)
#define MXC_ACT_LD_f64(v) (v)
#define MXC_ACT_ST_f16(v) mxc_float_to_half(v)
#define MXC_ACT_ST_f32(v) (v)
#define MXC_ACT_ST_f64(v) (v)

/* One kernel: NAME_TAG, storage T, compute CT, NIN inputs, expression over a, b, c (inputs in
 * compute type) and s (fattr[0] in compute type); F selects the float or double expression. */
#define MXC_ACT_KERNEL(kname, tag, T, CT, NIN, EXPR, heavy, ...)                              \
  __VA_ARGS__ static void mxc_act_##kname##_##tag##_range(void *vc, int64_t lo, int64_t hi) {  \
    const mxc_act_ctx *c_ = (const mxc_act_ctx *)vc;                                          \
    const T *A_ = (const T *)c_->in[0];                                                       \
    const T *B_ = (const T *)c_->in[1];                                                       \
    const T *C_ = (const T *)c_->in[2];                                                       \
    T *O_ = (T *)c_->out;                                                                     \
    const CT s = (CT)c_->s0;                                                                  \
    int64_t i;                                                                                \
    (void)B_;                                                                                 \
    (void)C_;                                                                                 \
    (void)s;                                                                                  \
    for (i = lo; i < hi; i++) {                                                               \
      const CT a = MXC_ACT_LD_##tag(A_[i]);                                                   \
      const CT b = NIN > 1 ? (CT)MXC_ACT_LD_##tag(B_[i]) : (CT)0;                             \
      const CT c = NIN > 2 ? (CT)MXC_ACT_LD_##tag(C_[i]) : (CT)0;                             \
      (void)b;                                                                                \
      (void)c;                                                                                \
      O_[i] = MXC_ACT_ST_##tag((CT)(EXPR));                                                   \
    }                                                                                         \
  }                                                                                           \
  static int mxc_act_##kname##_##tag(mxc_opcall *call) {                                      \
    mxc_act_ctx c_;                                                                           \
    int k_;                                                                                   \
    for (k_ = 0; k_ < 3; k_++) c_.in[k_] = k_ < call->nin ? call->in[k_].data : NULL;        \
    c_.out = call->out[0].data;                                                               \
    c_.s0 = call->nfattr > 0 ? call->fattr[0] : 0.0;                                          \
    mxc_parallel_range(call->out[0].size, call->nthreads,                                     \
                       (heavy) ? MXC_PAR_MIN_HEAVY : MXC_PAR_MIN_CHEAP,                       \
                       mxc_act_##kname##_##tag##_range, &c_);                                 \
    return 0;                                                                                 \
  }

#define MXC_ACT_DEFINE(kname, NIN, FEXPR, DEXPR, heavy, ...)                                  \
  MXC_ACT_KERNEL(kname, f16, uint16_t, float, NIN, FEXPR, heavy, __VA_ARGS__)                 \
  MXC_ACT_KERNEL(kname, f32, float, float, NIN, FEXPR, heavy, __VA_ARGS__)                    \
  MXC_ACT_KERNEL(kname, f64, double, double, NIN, DEXPR, heavy, __VA_ARGS__)

/* MXC_SIMD_CLONES (elemwise_common.h) only for expressions without a product that is then added
 * (where the clones' FMA would change the bits): ReLU's gradient on 2 x 128x512 float32 (an
 * MLP's step) ran as scalar selects in the default x86-64 build */

/* every loop below is built without trapping-math (see elemwise_common.h), at file scope:
 * gcc drops _Pragma inside macro expansions */
MXC_VEC_BEGIN
/* ---- forward -------------------------------------------------------------------------------- */
MXC_ACT_DEFINE(fwd_softrelu, 1, (a > 20.0f ? a : mxc_log1pf(mxc_expf(a))),
               (a > 20.0 ? a : log1p(exp(a))), 1, MXC_SIMD_CLONES)
MXC_ACT_DEFINE(fwd_xelu, 1, (a > 0.0f ? a : a * s), (a > 0.0 ? a : a * s), 0, MXC_SIMD_CLONES)
MXC_ACT_DEFINE(fwd_xelu_arr, 2, (a > 0.0f ? a : a * b), (a > 0.0 ? a : a * b), 0)
MXC_ACT_DEFINE(fwd_elu, 1, (a > 0.0f ? a : s * mxc_expm1f(a)), (a > 0.0 ? a : s * expm1(a)), 1,
               MXC_SIMD_CLONES)
MXC_ACT_DEFINE(fwd_selu, 1,
               ((float)MXC_ACT_SELU_L * (a > 0.0f ? a : (float)MXC_ACT_SELU_A * mxc_expm1f(a))),
               (MXC_ACT_SELU_L * (a > 0.0 ? a : MXC_ACT_SELU_A * expm1(a))), 1, MXC_SIMD_CLONES)
/* float32 gelu: x/2 * erfc(-x/sqrt2), the same function, with the vectorising erfc in double
 * (elemwise_common.h): within 2.25 ulps of it, where MXNet's 1 + erff(x/sqrt2) loses every digit
 * in the negative tail; float64 keeps libm's erf */
MXC_ACT_DEFINE(fwd_gelu, 1, ((float)(0.5 * (double)a * mxc_erfc_d(-(double)a / MXC_ACT_SQRT2))),
               (0.5 * a * (1.0 + erf(a / MXC_ACT_SQRT2))), 0, MXC_SIMD_CLONES)

/* ---- backward: a = head gradient, b = output (or input), c = slopes ------------------------ */
MXC_ACT_DEFINE(bwd_relu, 2, (a * (b > 0.0f ? 1.0f : (b != b ? b : 0.0f))),
               (a * (b > 0.0 ? 1.0 : (b != b ? b : 0.0))), 0, MXC_SIMD_CLONES)
MXC_ACT_DEFINE(bwd_sigmoid, 2, (a * b * (1.0f - b)), (a * b * (1.0 - b)), 0, MXC_SIMD_CLONES)
MXC_ACT_DEFINE(bwd_tanh, 2, (a * (1.0f - b * b)), (a * (1.0 - b * b)), 0)
MXC_ACT_DEFINE(bwd_softrelu, 2, (a * -mxc_expm1f(-b)), (a * -expm1(-b)), 1, MXC_SIMD_CLONES)
MXC_ACT_DEFINE(bwd_softsign, 2, (a / ((1.0f + fabsf(b)) * (1.0f + fabsf(b)))),
               (a / ((1.0 + fabs(b)) * (1.0 + fabs(b)))), 0)
MXC_ACT_DEFINE(bwd_xelu, 2, (a * (b > 0.0f ? 1.0f : s)), (a * (b > 0.0 ? 1.0 : s)), 0,
               MXC_SIMD_CLONES)
MXC_ACT_DEFINE(bwd_xelu_arr, 3, (a * (b > 0.0f ? 1.0f : c)), (a * (b > 0.0 ? 1.0 : c)), 0)
MXC_ACT_DEFINE(bwd_elu, 2, (a * (b > 0.0f ? 1.0f : s + b)), (a * (b > 0.0 ? 1.0 : s + b)), 0)
MXC_ACT_DEFINE(bwd_selu, 2,
               (a * (float)MXC_ACT_SELU_L * (b > 0.0f ? 1.0f : (float)MXC_ACT_SELU_A + b)),
               (a * MXC_ACT_SELU_L * (b > 0.0 ? 1.0 : MXC_ACT_SELU_A + b)), 0)
MXC_ACT_DEFINE(bwd_gelu, 2,
               ((float)((double)a * (0.5 * mxc_erfc_d(-(double)b / MXC_ACT_SQRT2) +
                                     (double)b * (0.5 * MXC_ACT_2_SQRTPI / MXC_ACT_SQRT2) *
                                         mxc_exp_d(-((double)b * b) * 0.5)))),
               (a * 0.5 * (1.0 + erf(b / MXC_ACT_SQRT2) +
                           b * MXC_ACT_2_SQRTPI * exp(-(b * b) * 0.5) / MXC_ACT_SQRT2)), 0,
               MXC_SIMD_CLONES)

/* ---- prelu ------------------------------------------------------------------------------------ */
#define MXC_ACT_PRELU(tag, T, CT)                                                             \
  static int mxc_act_fwd_prelu_##tag(mxc_opcall *call) {                                      \
    const T *x = (const T *)call->in[0].data;                                                 \
    const T *gm = (const T *)call->in[1].data;                                                \
    T *y = (T *)call->out[0].data;                                                            \
    const int64_t d0 = call->iattr[0], d1 = call->iattr[1], rest = call->iattr[2];            \
    const int64_t g0 = call->iattr[3], g1 = call->iattr[4];                                   \
    const int64_t rows = d0 * d1;                                                             \
    const int nt = (call->nthreads > 1 && rows * rest >= MXC_PAR_MIN_CHEAP) ? call->nthreads : 1; \
    int64_t r;                                                                                \
    (void)nt;                                                                                 \
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                              \
    for (r = 0; r < rows; r++) {                                                              \
      const int64_t i0 = r / d1, i1 = r % d1;                                                 \
      const CT s = MXC_ACT_LD_##tag(gm[(g0 > 1 ? i0 : 0) * g1 + (g1 > 1 ? i1 : 0)]);          \
      const T *xr = x + r * rest;                                                             \
      T *yr = y + r * rest;                                                                   \
      int64_t j;                                                                              \
      for (j = 0; j < rest; j++) {                                                            \
        const CT a = MXC_ACT_LD_##tag(xr[j]);                                                 \
        yr[j] = MXC_ACT_ST_##tag(a > (CT)0 ? a : a * s);                                      \
      }                                                                                       \
    }                                                                                         \
    return 0;                                                                                 \
  }                                                                                           \
  static int mxc_act_bwd_prelu_##tag(mxc_opcall *call) {                                      \
    const T *g = (const T *)call->in[0].data;                                                 \
    const T *x = (const T *)call->in[1].data;                                                 \
    const T *gm = (const T *)call->in[2].data;                                                \
    T *dx = (T *)call->out[0].data;                                                           \
    T *dg = (T *)call->out[1].data;                                                           \
    const int64_t d0 = call->iattr[0], d1 = call->iattr[1], rest = call->iattr[2];            \
    const int64_t g0 = call->iattr[3], g1 = call->iattr[4], G = g0 * g1;                      \
    const int64_t rows = d0 * d1;                                                             \
    int nt = (call->nthreads > 1 && rows * rest >= MXC_PAR_MIN_CHEAP) ? call->nthreads : 1;  \
    double *acc;                                                                              \
    int64_t k;                                                                                \
    int t;                                                                                    \
    if (nt > rows) nt = rows > 0 ? (int)rows : 1;                                             \
    acc = (double *)calloc((size_t)nt * (size_t)(G > 0 ? G : 1), sizeof(double));             \
    if (acc == NULL) return mxc_fail(call, "LeakyReLU: out of memory");                       \
    MXC_PRAGMA(omp parallel num_threads(nt))                                                   \
    {                                                                                         \
      const int tid = MXC_TID(), T_ = MXC_NTH();                                              \
      double *mine = acc + (size_t)tid * (size_t)G;                                           \
      const int64_t r0 = rows * tid / T_, r1 = rows * (tid + 1) / T_;                         \
      int64_t r, j;                                                                           \
      for (r = r0; r < r1; r++) {                                                             \
        const int64_t i0 = r / d1, i1 = r % d1;                                               \
        const int64_t gi = (g0 > 1 ? i0 : 0) * g1 + (g1 > 1 ? i1 : 0);                       \
        const CT s = MXC_ACT_LD_##tag(gm[gi]);                                                \
        const T *gr = g + r * rest, *xr = x + r * rest;                                       \
        T *dr = dx + r * rest;                                                                \
        double part = 0.0;                                                                    \
        for (j = 0; j < rest; j++) {                                                          \
          const CT a = MXC_ACT_LD_##tag(xr[j]), h = MXC_ACT_LD_##tag(gr[j]);                  \
          dr[j] = MXC_ACT_ST_##tag(a > (CT)0 ? h : h * s);                                    \
          part += a > (CT)0 ? 0.0 : (double)(h * a);                                          \
        }                                                                                     \
        mine[gi] += part;                                                                     \
      }                                                                                       \
    }                                                                                         \
    for (k = 0; k < G; k++) {                                                                 \
      double v = 0.0;                                                                         \
      for (t = 0; t < nt; t++) v += acc[(size_t)t * (size_t)G + k];                           \
      dg[k] = MXC_ACT_ST_##tag((CT)v);                                                        \
    }                                                                                         \
    free(acc);                                                                                \
    return 0;                                                                                 \
  }

MXC_ACT_PRELU(f16, uint16_t, float)
MXC_ACT_PRELU(f32, float, float)
MXC_ACT_PRELU(f64, double, double)
MXC_VEC_END

#define MXC_ACT_ENTRIES(kname, sname)                                                         \
  {sname, MXC_FLOAT16, -1, mxc_act_##kname##_f16},                                             \
  {sname, MXC_FLOAT32, -1, mxc_act_##kname##_f32},                                             \
  {sname, MXC_FLOAT64, -1, mxc_act_##kname##_f64},

static const mxc_kentry mxc_activation_table[] = {
  MXC_ACT_ENTRIES(fwd_softrelu, "fwd:softrelu")
  MXC_ACT_ENTRIES(fwd_xelu, "fwd:xelu")
  MXC_ACT_ENTRIES(fwd_xelu_arr, "fwd:xelu_arr")
  MXC_ACT_ENTRIES(fwd_elu, "fwd:elu")
  MXC_ACT_ENTRIES(fwd_selu, "fwd:selu")
  MXC_ACT_ENTRIES(fwd_gelu, "fwd:gelu")
  MXC_ACT_ENTRIES(fwd_prelu, "fwd:prelu")
  MXC_ACT_ENTRIES(bwd_relu, "bwd:relu")
  MXC_ACT_ENTRIES(bwd_sigmoid, "bwd:sigmoid")
  MXC_ACT_ENTRIES(bwd_tanh, "bwd:tanh")
  MXC_ACT_ENTRIES(bwd_softrelu, "bwd:softrelu")
  MXC_ACT_ENTRIES(bwd_softsign, "bwd:softsign")
  MXC_ACT_ENTRIES(bwd_xelu, "bwd:xelu")
  MXC_ACT_ENTRIES(bwd_xelu_arr, "bwd:xelu_arr")
  MXC_ACT_ENTRIES(bwd_elu, "bwd:elu")
  MXC_ACT_ENTRIES(bwd_selu, "bwd:selu")
  MXC_ACT_ENTRIES(bwd_gelu, "bwd:gelu")
  MXC_ACT_ENTRIES(bwd_prelu, "bwd:prelu")
  {NULL, 0, 0, NULL}
};
#endif
