/* Optimizer update kernels (mxc/ops/optimizer_ops.py, published by mxc/ops/cpu/optimizer_ops.pyx).
 *
 * One fused pass per parameter: every kernel reads weight, gradient and its states once and
 * writes the new weight and the states once, element by element (index i only touches index i,
 * so the weight output may be the weight itself: `out=weight`). The formulas, including the order
 * of the floating-point operations, follow MXNet 1.9.1 (src/operator/optimizer_op-inl.h,
 * contrib/adamw-inl.h, contrib/preloaded_multi_sgd-inl.h), so float32 and float64 results are
 * those of MXNet's CPU kernels. float16 arrays are computed in float32 and rounded once per stored
 * value (MXNet rounds every intermediate of its half_t arithmetic). Mixed-precision kernels (mp_*)
 * keep float32 states and a float32 master copy of a float16/32/64 weight.
 *
 * Tensors: call->in are the operator's inputs in MXNet's order; call->out[0] is the new weight
 * (or LAMB's phase-1 direction g) and call->out[1..] are the states updated in place (the same
 * memory as the corresponding inputs; the kernel writes through the output descriptors).
 * Every float attribute was rounded to float32 in Python where MXNet's parameter is a float.
 * Key = dtype code of the weight (input 0).
 */
#ifndef MXC_KERNELS_OPTIMIZER_OPS_H
#define MXC_KERNELS_OPTIMIZER_OPS_H
#include "kernels/elemwise_common.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Per-dtype access: storage type, compute type, load, store, sqrt. */
#define MXC_OT_f16 uint16_t
#define MXC_OT_f32 float
#define MXC_OT_f64 double
#define MXC_OCT_f16 float
#define MXC_OCT_f32 float
#define MXC_OCT_f64 double
#define MXC_OLD_f16(x) mxc_half_to_float(x)
#define MXC_OLD_f32(x) (x)
#define MXC_OLD_f64(x) (x)
#define MXC_OST_f16(v) mxc_float_to_half((float)(v))
#define MXC_OST_f32(v) ((float)(v))
#define MXC_OST_f64(v) ((double)(v))
#define MXC_OSQRT_f16(v) sqrtf(v)
#define MXC_OSQRT_f32(v) sqrtf(v)
#define MXC_OSQRT_f64(v) sqrt(v)
#define MXC_OPOW_f16(a, b) powf(a, b)
#define MXC_OPOW_f32(a, b) powf(a, b)
#define MXC_OPOW_f64(a, b) pow(a, b)

/* Loops below write out[i] from in[i] only, so they may run on aliased arrays: ivdep tells gcc
 * not to fall back to the scalar loop when out == weight. The loops never read floating-point
 * flags or errno, so they are compiled without those guarantees (values are unchanged).
 * Each range function also has AVX2 and AVX-512 clones (MXC_OPT_KERNEL); fp-contract=off keeps
 * the AVX-512 clone from fusing multiply-adds, so every clone gives the SSE2 build's bits
 * (checked on every kernel, float16/32/64). SGD with momentum on a 784x512 float32 weight in
 * cache, one thread: 100 -> 78-86 us per update (the Python call included). */
#define MXC_OPT_BEGIN                                                                          \
  _Pragma("GCC push_options")                                                                  \
  _Pragma("GCC optimize(\"no-trapping-math\", \"no-math-errno\", \"fp-contract=off\")")
#define MXC_OPT_END _Pragma("GCC pop_options")
#if defined(__GNUC__) && !defined(__clang__)
#define MXC_IVDEP _Pragma("GCC ivdep")
#else
#define MXC_IVDEP
#endif

MXC_OPT_BEGIN

/* everything a range function needs: tensor pointers and attributes */
typedef struct {
  void *p[12];
  double f[MXC_MAX_FATTR];
  int64_t i[4];
} mxc_opt_ctx;

#define MXC_OCLIP(x, b) ((x) > (b) ? (b) : ((x) < -(b) ? -(b) : (x)))

static inline double mxc_opt_scalar(const mxc_tensor *t) {
  switch (t->dtype) {
    case MXC_FLOAT32: return *(const float *)t->data;
    case MXC_FLOAT64: return *(const double *)t->data;
    case MXC_FLOAT16: return mxc_half_to_float(*(const uint16_t *)t->data);
    default: return NAN;
  }
}

static inline size_t mxc_opt_itemsize(int32_t code) {
  return code == MXC_FLOAT64 ? 8 : code == MXC_FLOAT16 ? 2 : 4;
}

/* out <- weight where an update is skipped (AdamW with a non-finite or zero rescale_grad) */
static inline void mxc_opt_keep_weight(mxc_opcall *c) {
  if (c->out[0].data != c->in[0].data)
    memmove(c->out[0].data, c->in[0].data, (size_t)c->in[0].size * mxc_opt_itemsize(c->in[0].dtype));
}

/* Declares range function NAME##_rng and kernel NAME (tag TAG), whose body is BODY run over
 * [lo, hi) with the pointers and attributes of ctx `x`. SETUP fills x from the call. */
#define MXC_OPT_KERNEL(NAME, TAG, SETUP, ...)                                                  \
  MXC_SIMD_CLONES                                                                              \
  static void NAME##_##TAG##_rng(void *vctx, int64_t lo, int64_t hi) {                         \
    const mxc_opt_ctx *x = (const mxc_opt_ctx *)vctx;                                          \
    typedef MXC_OT_##TAG T;                                                                    \
    typedef MXC_OCT_##TAG CT;                                                                  \
    (void)x;                                                                                   \
    __VA_ARGS__                                                                                \
  }                                                                                            \
  static int NAME##_##TAG(mxc_opcall *c) {                                                     \
    mxc_opt_ctx x;                                                                             \
    memset(&x, 0, sizeof x);                                                                   \
    for (int k = 0; k < c->nfattr && k < MXC_MAX_FATTR; k++) x.f[k] = c->fattr[k];             \
    for (int k = 0; k < c->niattr && k < 4; k++) x.i[k] = c->iattr[k];                         \
    SETUP                                                                                      \
    mxc_parallel_range(c->in[0].size, c->nthreads, MXC_PAR_MIN_CHEAP, NAME##_##TAG##_rng, &x); \
    return 0;                                                                                  \
  }

/* helpers for bodies: weight-dtype load/store need the tag; they are spelled per kernel through
 * these names, bound by MXC_OPT_KERNEL's TAG through the macros below */
#define LDW(TAG, v) MXC_OLD_##TAG(v)
#define STW(TAG, v) MXC_OST_##TAG(v)

/* ---- sgd_update: in (weight, grad); f: lr, wd, rescale_grad, clip_gradient ------------------ */
#define MXC_OPT_SGD(TAG)                                                                       \
  MXC_OPT_KERNEL(mxc_opt_sgd, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;            \
                 x.p[2] = c->out[0].data;, {                                                   \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2];                                                                       \
    const CT lr = (CT)x->f[0], wd = (CT)x->f[1], rs = (CT)x->f[2], cg = (CT)x->f[3];           \
    const CT a = (CT)1 - lr * wd, lrs = lr * rs;                                               \
    if (cg >= 0) {                                                                             \
      MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                            \
        CT gr = rs * LDW(TAG, g[i]);                                                           \
        o[i] = STW(TAG, a * LDW(TAG, w[i]) - lr * MXC_OCLIP(gr, cg));                          \
      }                                                                                        \
    } else {                                                                                   \
      MXC_IVDEP for (int64_t i = lo; i < hi; i++)                                              \
        o[i] = STW(TAG, a * LDW(TAG, w[i]) - lrs * LDW(TAG, g[i]));                            \
    }                                                                                          \
  })
MXC_OPT_SGD(f16)
MXC_OPT_SGD(f32)
MXC_OPT_SGD(f64)

/* ---- momentum SGD, one formula for sgd_mom_update and the multi_/preloaded_ forms:
 *   mom = momentum*mom - lr*wd*w - lr*clip(rescale*g);  w += mom
 * in (weight, grad, [mom], [lrs, wds]); out (weight, [mom]).
 * f: lr, wd, momentum, rescale_grad, clip_gradient; i: has_mom, preloaded index (-1: lr/wd
 * come from f; else from the float32 tensors lrs[idx], wds[idx], the last two inputs). */
#define MXC_OPT_LRWD(c, x, MPT)                                                                \
  if (x.i[1] >= 0) {                                                                           \
    x.f[0] = (double)(MPT)((const float *)c->in[c->nin - 2].data)[x.i[1]];                     \
    x.f[1] = (double)(MPT)((const float *)c->in[c->nin - 1].data)[x.i[1]];                     \
  }

#define MXC_OPT_MSGD(TAG)                                                                      \
  MXC_OPT_KERNEL(mxc_opt_msgd, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;           \
                 x.p[2] = c->out[0].data; x.p[3] = x.i[0] ? c->out[1].data : NULL;            \
                 MXC_OPT_LRWD(c, x, MXC_OCT_##TAG), {                                          \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *m = (T *)x->p[3];                                                    \
    const CT lr = (CT)x->f[0], wd = (CT)x->f[1], mo = (CT)x->f[2], rs = (CT)x->f[3],           \
             cg = (CT)x->f[4];                                                                 \
    const CT lrwd = lr * wd, lrs = lr * rs;                                                    \
    if (m != NULL) {                                                                           \
      MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                            \
        CT wi = LDW(TAG, w[i]), gi = LDW(TAG, g[i]), mi = LDW(TAG, m[i]);                      \
        CT gr = rs * gi;                                                                       \
        mi = cg >= 0 ? mo * mi - lrwd * wi - lr * MXC_OCLIP(gr, cg)                            \
                     : mo * mi - lrwd * wi - lrs * gi;                                         \
        m[i] = STW(TAG, mi);                                                                   \
        o[i] = STW(TAG, wi + mi);                                                              \
      }                                                                                        \
    } else {                                                                                   \
      MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                            \
        CT wi = LDW(TAG, w[i]), gi = LDW(TAG, g[i]);                                           \
        CT gr = rs * gi;                                                                       \
        CT mi = cg >= 0 ? mo * (CT)0 - lrwd * wi - lr * MXC_OCLIP(gr, cg)                      \
                        : mo * (CT)0 - lrwd * wi - lrs * gi;                                   \
        o[i] = STW(TAG, wi + mi);                                                              \
      }                                                                                        \
    }                                                                                          \
  })
MXC_OPT_MSGD(f16)
MXC_OPT_MSGD(f32)
MXC_OPT_MSGD(f64)

/* ---- mp_sgd_update: in (weight, grad, weight32); out (weight, weight32) ---------------------- */
#define MXC_OPT_MP_SGD(TAG)                                                                    \
  MXC_OPT_KERNEL(mxc_opt_mp_sgd, TAG, x.p[0] = c->in[1].data; x.p[1] = c->out[1].data;        \
                 x.p[2] = c->out[0].data;, {                                                   \
    const T *g = (const T *)x->p[0];                                                           \
    float *w32 = (float *)x->p[1];                                                             \
    T *o = (T *)x->p[2];                                                                       \
    const float lr = (float)x->f[0], wd = (float)x->f[1], rs = (float)x->f[2],                 \
                cg = (float)x->f[3];                                                           \
    const float a = 1.f - lr * wd, lrs = lr * rs;                                              \
    (void)sizeof(CT);                                                                          \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      float gi = (float)LDW(TAG, g[i]);                                                        \
      float gr = rs * gi;                                                                      \
      float wv = cg >= 0.f ? a * w32[i] - lr * MXC_OCLIP(gr, cg) : a * w32[i] - lrs * gi;      \
      w32[i] = wv;                                                                             \
      o[i] = STW(TAG, wv);                                                                     \
    }                                                                                          \
  })
MXC_OPT_MP_SGD(f16)
MXC_OPT_MP_SGD(f32)
MXC_OPT_MP_SGD(f64)

/* ---- mixed-precision momentum SGD (mp_sgd_mom_update, multi_mp_*, preloaded_multi_mp_*):
 * in (weight, grad, [mom], weight32, [lrs, wds]); out (weight, [mom], weight32); f and i as msgd */
#define MXC_OPT_MP_MSGD(TAG)                                                                   \
  MXC_OPT_KERNEL(mxc_opt_mp_msgd, TAG, x.p[0] = c->in[1].data;                                \
                 x.p[1] = c->out[0].data; x.p[2] = x.i[0] ? c->out[1].data : NULL;            \
                 x.p[3] = c->out[x.i[0] ? 2 : 1].data; MXC_OPT_LRWD(c, x, float), {            \
    const T *g = (const T *)x->p[0];                                                           \
    T *o = (T *)x->p[1];                                                                       \
    float *m = (float *)x->p[2], *w32 = (float *)x->p[3];                                      \
    const float lr = (float)x->f[0], wd = (float)x->f[1], mo = (float)x->f[2],                 \
                rs = (float)x->f[3], cg = (float)x->f[4];                                      \
    const float lrwd = lr * wd, lrs = lr * rs;                                                 \
    (void)sizeof(CT);                                                                          \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      float wi = w32[i], gi = (float)LDW(TAG, g[i]), mi = m != NULL ? m[i] : 0.f;              \
      float gr = rs * gi;                                                                      \
      mi = cg >= 0.f ? mo * mi - lrwd * wi - lr * MXC_OCLIP(gr, cg)                            \
                     : mo * mi - lrwd * wi - lrs * gi;                                         \
      if (m != NULL) m[i] = mi;                                                                \
      wi = wi + mi;                                                                            \
      w32[i] = wi;                                                                             \
      o[i] = STW(TAG, wi);                                                                     \
    }                                                                                          \
  })
MXC_OPT_MP_MSGD(f16)
MXC_OPT_MP_MSGD(f32)
MXC_OPT_MP_MSGD(f64)

/* ---- nag_mom_update: in (weight, grad, mom); out (weight, mom); f: lr, wd, momentum, rs, cg -- */
#define MXC_OPT_NAG(TAG)                                                                       \
  MXC_OPT_KERNEL(mxc_opt_nag, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;            \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data;, {                          \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *m = (T *)x->p[3];                                                    \
    const CT lr = (CT)x->f[0], wd = (CT)x->f[1], mo = (CT)x->f[2], rs = (CT)x->f[3],           \
             cg = (CT)x->f[4];                                                                 \
    const CT mo1 = mo + 1;                                                                     \
    /* MXNet writes the weight output before it updates mom from the weight: with out=weight */ \
    /* the mom update sees the new weight */                                                   \
    const int alias = (const void *)o == (const void *)w;                                      \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]), gi = LDW(TAG, g[i]);                                             \
      CT mi = mo * LDW(TAG, m[i]);                                                             \
      CT gr = rs * gi;                                                                         \
      CT gc = cg >= 0 ? MXC_OCLIP(gr, cg) : gr;                                                \
      T on = STW(TAG, wi - mi + mo1 * (mi - lr * (gc + wd * wi)));                             \
      o[i] = on;                                                                               \
      CT ws = alias ? LDW(TAG, on) : wi;                                                       \
      m[i] = STW(TAG, mi - lr * (gc + wd * ws));                                               \
    }                                                                                          \
  })
MXC_OPT_NAG(f16)
MXC_OPT_NAG(f32)
MXC_OPT_NAG(f64)

/* ---- mp_nag_mom_update: in (weight, grad, mom, weight32); out (weight, mom, weight32) ------- */
#define MXC_OPT_MP_NAG(TAG)                                                                    \
  MXC_OPT_KERNEL(mxc_opt_mp_nag, TAG, x.p[0] = c->in[1].data; x.p[1] = c->out[0].data;        \
                 x.p[2] = c->out[1].data; x.p[3] = c->out[2].data;, {                          \
    const T *g = (const T *)x->p[0];                                                           \
    T *o = (T *)x->p[1];                                                                       \
    float *m = (float *)x->p[2], *w32 = (float *)x->p[3];                                      \
    const float lr = (float)x->f[0], wd = (float)x->f[1], mo = (float)x->f[2],                 \
                rs = (float)x->f[3], cg = (float)x->f[4];                                      \
    const float mo1 = mo + 1;                                                                  \
    (void)sizeof(CT);                                                                          \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      float wi = w32[i], gi = (float)LDW(TAG, g[i]);                                           \
      float mi = mo * m[i];                                                                    \
      float gr = rs * gi;                                                                      \
      float gc = cg >= 0.f ? MXC_OCLIP(gr, cg) : gr;                                           \
      wi = wi - mi + mo1 * (mi - lr * (gc + wd * wi));                                         \
      m[i] = mi - lr * (gc + wd * wi);                                                         \
      w32[i] = wi;                                                                             \
      o[i] = STW(TAG, wi);                                                                     \
    }                                                                                          \
  })
MXC_OPT_MP_NAG(f16)
MXC_OPT_MP_NAG(f32)
MXC_OPT_MP_NAG(f64)

/* float32 Adam, four lanes at a time. gcc does not vectorise sqrtf without -fno-math-errno
 * (which an optimize pragma does not give), and a scalar sqrt + divide per element is ~3x slower
 * than the memory traffic; sqrtps and divps round exactly as sqrtf and '/', so the values are
 * those of the scalar loop. Returns the first index not done. */
static inline int64_t mxc_opt_adam_f32_sse(const float *w, const float *g, float *o, float *m,
                                           float *v, int64_t lo, int64_t hi, float lr, float b1,
                                           float b2, float eps, float wd, float rs, float cg,
                                           float c1, float c2) {
#if defined(__SSE2__)
  const __m128 vlr = _mm_set1_ps(lr), vb1 = _mm_set1_ps(b1), vb2 = _mm_set1_ps(b2);
  const __m128 veps = _mm_set1_ps(eps), vwd = _mm_set1_ps(wd), vrs = _mm_set1_ps(rs);
  const __m128 vc1 = _mm_set1_ps(c1), vc2 = _mm_set1_ps(c2);
  const __m128 vcg = _mm_set1_ps(cg), vncg = _mm_set1_ps(-cg);
  const int clip = cg >= 0.f;
  int64_t i = lo;
  for (; i + 4 <= hi; i += 4) {
    __m128 wi = _mm_loadu_ps(w + i);
    __m128 gr = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(g + i), vrs), _mm_mul_ps(wi, vwd));
    /* clip as the scalar x > b ? b : (x < -b ? -b : x), NaN kept */
    if (clip) gr = _mm_max_ps(vncg, _mm_min_ps(vcg, gr));
    __m128 mi = _mm_add_ps(_mm_mul_ps(vb1, _mm_loadu_ps(m + i)), _mm_mul_ps(vc1, gr));
    __m128 vi = _mm_add_ps(_mm_mul_ps(vb2, _mm_loadu_ps(v + i)),
                           _mm_mul_ps(_mm_mul_ps(vc2, gr), gr));
    _mm_storeu_ps(m + i, mi);
    _mm_storeu_ps(v + i, vi);
    __m128 den = _mm_add_ps(_mm_sqrt_ps(vi), veps);
    _mm_storeu_ps(o + i, _mm_sub_ps(wi, _mm_div_ps(_mm_mul_ps(vlr, mi), den)));
  }
  return i;
#else
  (void)w; (void)g; (void)o; (void)m; (void)v; (void)hi; (void)lr; (void)b1; (void)b2;
  (void)eps; (void)wd; (void)rs; (void)cg; (void)c1; (void)c2;
  return lo;
#endif
}

/* ---- adam_update: in (weight, grad, mean, var); out (weight, mean, var)
 * f: lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient ------------------------------- */
#define MXC_OPT_ADAM(TAG)                                                                      \
  MXC_OPT_KERNEL(mxc_opt_adam, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;           \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;, { \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *m = (T *)x->p[3], *v = (T *)x->p[4];                                 \
    const CT lr = (CT)x->f[0], b1 = (CT)x->f[1], b2 = (CT)x->f[2], eps = (CT)x->f[3],          \
             wd = (CT)x->f[4], rs = (CT)x->f[5], cg = (CT)x->f[6];                             \
    const CT c1 = (CT)1 - b1, c2 = (CT)1 - b2;                                                 \
    if (sizeof(T) == 4)                                                                        \
      lo = mxc_opt_adam_f32_sse((const float *)w, (const float *)g, (float *)o, (float *)m,    \
                                (float *)v, lo, hi, (float)lr, (float)b1, (float)b2,           \
                                (float)eps, (float)wd, (float)rs, (float)cg, (float)c1,        \
                                (float)c2);                                                    \
    if (cg >= 0) {                                                                             \
      MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                            \
        CT wi = LDW(TAG, w[i]);                                                                \
        CT gr = LDW(TAG, g[i]) * rs + wi * wd;                                                 \
        gr = MXC_OCLIP(gr, cg);                                                                \
        CT mi = b1 * LDW(TAG, m[i]) + c1 * gr;                                                 \
        CT vi = b2 * LDW(TAG, v[i]) + c2 * gr * gr;                                            \
        m[i] = STW(TAG, mi);                                                                   \
        v[i] = STW(TAG, vi);                                                                   \
        o[i] = STW(TAG, wi - lr * mi / (MXC_OSQRT_##TAG(vi) + eps));                           \
      }                                                                                        \
    } else {                                                                                   \
      MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                            \
        CT wi = LDW(TAG, w[i]);                                                                \
        CT gr = LDW(TAG, g[i]) * rs + wi * wd;                                                 \
        CT mi = b1 * LDW(TAG, m[i]) + c1 * gr;                                                 \
        CT vi = b2 * LDW(TAG, v[i]) + c2 * gr * gr;                                            \
        m[i] = STW(TAG, mi);                                                                   \
        v[i] = STW(TAG, vi);                                                                   \
        o[i] = STW(TAG, wi - lr * mi / (MXC_OSQRT_##TAG(vi) + eps));                           \
      }                                                                                        \
    }                                                                                          \
  })
MXC_OPT_ADAM(f16)
MXC_OPT_ADAM(f32)
MXC_OPT_ADAM(f64)

/* ---- rmsprop_update: in (weight, grad, n); out (weight, n)
 * f: lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights ------------------------ */
#define MXC_OPT_RMSPROP(TAG)                                                                   \
  MXC_OPT_KERNEL(mxc_opt_rmsprop, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;        \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data;, {                          \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *n = (T *)x->p[3];                                                    \
    const CT lr = (CT)x->f[0], g1 = (CT)x->f[1], eps = (CT)x->f[2], wd = (CT)x->f[3],          \
             rs = (CT)x->f[4], cg = (CT)x->f[5], cw = (CT)x->f[6];                             \
    const CT c1 = (CT)1 - g1;                                                                  \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]);                                                                  \
      CT gr = rs * LDW(TAG, g[i]) + wd * wi;                                                   \
      if (cg >= 0) gr = MXC_OCLIP(gr, cg);                                                     \
      CT ni = c1 * (gr * gr) + g1 * LDW(TAG, n[i]);                                            \
      n[i] = STW(TAG, ni);                                                                     \
      CT wn = wi - lr * (gr / MXC_OSQRT_##TAG(ni + eps));                                      \
      if (cw >= 0) wn = MXC_OCLIP(wn, cw);                                                     \
      o[i] = STW(TAG, wn);                                                                     \
    }                                                                                          \
  })
MXC_OPT_RMSPROP(f16)
MXC_OPT_RMSPROP(f32)
MXC_OPT_RMSPROP(f64)

/* ---- rmspropalex_update: in (weight, grad, n, g, delta); out (weight, n, g, delta)
 * f: lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights ---------------- */
#define MXC_OPT_RMSPROPALEX(TAG)                                                               \
  MXC_OPT_KERNEL(mxc_opt_rmspropalex, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;    \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;   \
                 x.p[5] = c->out[3].data;, {                                                   \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *n = (T *)x->p[3], *gs = (T *)x->p[4], *d = (T *)x->p[5];             \
    const CT lr = (CT)x->f[0], g1 = (CT)x->f[1], g2 = (CT)x->f[2], eps = (CT)x->f[3],          \
             wd = (CT)x->f[4], rs = (CT)x->f[5], cg = (CT)x->f[6], cw = (CT)x->f[7];           \
    const CT c1 = (CT)1 - g1;                                                                  \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]);                                                                  \
      CT gr = rs * LDW(TAG, g[i]) + wd * wi;                                                   \
      if (cg >= 0) gr = MXC_OCLIP(gr, cg);                                                     \
      CT ni = c1 * gr * gr + g1 * LDW(TAG, n[i]);                                              \
      CT gi = c1 * gr + g1 * LDW(TAG, gs[i]);                                                  \
      CT di = g2 * LDW(TAG, d[i]) - (lr * gr / (MXC_OSQRT_##TAG(ni - gi * gi + eps)));         \
      n[i] = STW(TAG, ni);                                                                     \
      gs[i] = STW(TAG, gi);                                                                    \
      d[i] = STW(TAG, di);                                                                     \
      CT wn = wi + di;                                                                         \
      if (cw >= 0) wn = MXC_OCLIP(wn, cw);                                                     \
      o[i] = STW(TAG, wn);                                                                     \
    }                                                                                          \
  })
MXC_OPT_RMSPROPALEX(f16)
MXC_OPT_RMSPROPALEX(f32)
MXC_OPT_RMSPROPALEX(f64)

/* ---- ftrl_update: in (weight, grad, z, n); out (weight, z, n)
 * f: lr, lamda1, beta, wd, rescale_grad, clip_gradient ----------------------------------------- */
#define MXC_OPT_FTRL(TAG)                                                                      \
  MXC_OPT_KERNEL(mxc_opt_ftrl, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;           \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;, { \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *z = (T *)x->p[3], *n = (T *)x->p[4];                                 \
    const CT lr = (CT)x->f[0], l1 = (CT)x->f[1], beta = (CT)x->f[2], wd = (CT)x->f[3],         \
             rs = (CT)x->f[4], cg = (CT)x->f[5];                                               \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]), ni = LDW(TAG, n[i]);                                             \
      CT gr = LDW(TAG, g[i]) * rs;                                                             \
      if (cg >= 0) gr = MXC_OCLIP(gr, cg);                                                     \
      CT zi = LDW(TAG, z[i]) +                                                                 \
              (gr - (MXC_OSQRT_##TAG(ni + gr * gr) - MXC_OSQRT_##TAG(ni)) * wi / lr);          \
      ni = ni + gr * gr;                                                                       \
      z[i] = STW(TAG, zi);                                                                     \
      n[i] = STW(TAG, ni);                                                                     \
      CT sg = zi > 0 ? (CT)1 : (zi < 0 ? (CT)-1 : (CT)0);                                      \
      CT gt = (zi < 0 ? -zi : zi) > l1 ? (CT)1 : (CT)0;                                        \
      o[i] = STW(TAG, (sg * l1 - zi) / ((beta + MXC_OSQRT_##TAG(ni)) / lr + wd) * gt);         \
    }                                                                                          \
  })
MXC_OPT_FTRL(f16)
MXC_OPT_FTRL(f32)
MXC_OPT_FTRL(f64)

/* ---- ftml_update: in (weight, grad, d, v, z); out (weight, d, v, z)
 * f: lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad -------------------------------- */
#define MXC_OPT_FTML(TAG)                                                                      \
  MXC_OPT_KERNEL(mxc_opt_ftml, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;           \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;   \
                 x.p[5] = c->out[3].data;, {                                                   \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *d = (T *)x->p[3], *v = (T *)x->p[4], *z = (T *)x->p[5];              \
    const CT lr = (CT)x->f[0], b1 = (CT)x->f[1], b2 = (CT)x->f[2], eps = (CT)x->f[3],          \
             t = (CT)x->f[4], wd = (CT)x->f[5], rs = (CT)x->f[6], cg = (CT)x->f[7];            \
    const CT p1 = (CT)1 - MXC_OPOW_##TAG(b1, t), p2 = (CT)1 - MXC_OPOW_##TAG(b2, t);           \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]);                                                                  \
      CT gi = rs * LDW(TAG, g[i]) + wd * wi;                                                   \
      if (cg >= 0) gi = MXC_OCLIP(gi, cg);                                                     \
      CT vi = b2 * LDW(TAG, v[i]) + ((CT)1 - b2) * (gi * gi);                                  \
      CT dt = p1 / lr * (MXC_OSQRT_##TAG(vi / p2) + eps);                                      \
      CT zi = b1 * LDW(TAG, z[i]) + ((CT)1 - b1) * gi - (dt - b1 * LDW(TAG, d[i])) * wi;       \
      v[i] = STW(TAG, vi);                                                                     \
      z[i] = STW(TAG, zi);                                                                     \
      d[i] = STW(TAG, dt);                                                                     \
      o[i] = STW(TAG, -zi / dt);                                                               \
    }                                                                                          \
  })
MXC_OPT_FTML(f16)
MXC_OPT_FTML(f32)
MXC_OPT_FTML(f64)

/* ---- signsgd_update: in (weight, grad); f: lr, wd ------------------------------------------- */
#define MXC_OPT_SIGNSGD(TAG)                                                                   \
  MXC_OPT_KERNEL(mxc_opt_signsgd, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;        \
                 x.p[2] = c->out[0].data;, {                                                   \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2];                                                                       \
    const CT lr = (CT)x->f[0], wd = (CT)x->f[1];                                               \
    const CT a = (CT)1 - lr * wd;                                                              \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT gi = LDW(TAG, g[i]);                                                                  \
      o[i] = STW(TAG, a * LDW(TAG, w[i]) - lr * (CT)((gi > 0) - (gi < 0)));                    \
    }                                                                                          \
  })
MXC_OPT_SIGNSGD(f16)
MXC_OPT_SIGNSGD(f32)
MXC_OPT_SIGNSGD(f64)

/* ---- signum_update: in (weight, grad, mom); out (weight, mom)
 * f: lr, momentum, wd, rescale_grad, clip_gradient, wd_lh -------------------------------------- */
#define MXC_OPT_SIGNUM(TAG)                                                                    \
  MXC_OPT_KERNEL(mxc_opt_signum, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;         \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data;, {                          \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *m = (T *)x->p[3];                                                    \
    const CT lr = (CT)x->f[0], mo = (CT)x->f[1], wd = (CT)x->f[2], rs = (CT)x->f[3],           \
             cg = (CT)x->f[4], wdlh = (CT)x->f[5];                                             \
    const CT c1 = (CT)1 - mo, c1wd = c1 * wd, c1rs = c1 * rs, a = (CT)1 - lr * wdlh;           \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]), gi = LDW(TAG, g[i]);                                             \
      CT gr = rs * gi;                                                                         \
      CT mi = cg >= 0 ? mo * LDW(TAG, m[i]) - c1wd * wi - c1 * MXC_OCLIP(gr, cg)               \
                      : mo * LDW(TAG, m[i]) - c1wd * wi - c1rs * gi;                           \
      m[i] = STW(TAG, mi);                                                                     \
      o[i] = STW(TAG, a * wi + lr * (CT)((mi > 0) - (mi < 0)));                                \
    }                                                                                          \
  })
MXC_OPT_SIGNUM(f16)
MXC_OPT_SIGNUM(f32)
MXC_OPT_SIGNUM(f64)

/* ---- lamb_update_phase1: in (weight, grad, mean, var); out (g, mean, var)
 * f: beta1, beta2, epsilon, wd, rescale_grad, clip_gradient, beta1^t, beta2^t (in double, as
 * C++'s std::pow(float, int)); i: bias_correction -------------------------------------------- */
#define MXC_OPT_LAMB1(TAG)                                                                     \
  MXC_OPT_KERNEL(mxc_opt_lamb1, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;          \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;, { \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *m = (T *)x->p[3], *v = (T *)x->p[4];                                 \
    const CT b1 = (CT)x->f[0], b2 = (CT)x->f[1], eps = (CT)x->f[2], wd = (CT)x->f[3],          \
             rs = (CT)x->f[4], cg = (CT)x->f[5], b1t = (CT)x->f[6], b2t = (CT)x->f[7];         \
    const CT c1 = (CT)1 - b1, c2 = (CT)1 - b2, d2 = (CT)1 - b2t;                               \
    const double d1 = 1. - (double)b1t;                                                        \
    const int bc = x->i[0] != 0;                                                               \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT gr = LDW(TAG, g[i]) * rs;                                                             \
      if (cg >= 0) gr = MXC_OCLIP(gr, cg);                                                     \
      CT mi = b1 * LDW(TAG, m[i]) + c1 * gr;                                                   \
      CT vi = b2 * LDW(TAG, v[i]) + c2 * gr * gr;                                              \
      m[i] = STW(TAG, mi);                                                                     \
      v[i] = STW(TAG, vi);                                                                     \
      CT r;                                                                                    \
      if (bc) {                                                                                \
        CT mh = (CT)((double)mi / d1), vh = vi / d2;                                           \
        r = mh / (MXC_OSQRT_##TAG(vh) + eps) + wd * LDW(TAG, w[i]);                            \
      } else {                                                                                 \
        r = mi / (MXC_OSQRT_##TAG(vi) + eps) + wd * LDW(TAG, w[i]);                            \
      }                                                                                        \
      o[i] = STW(TAG, r);                                                                      \
    }                                                                                          \
  })
MXC_OPT_LAMB1(f16)
MXC_OPT_LAMB1(f32)
MXC_OPT_LAMB1(f64)

/* ---- mp_lamb_update_phase1: in (weight, grad, mean, var, weight32), mean/var/weight32/out in
 * float32; out (g, mean, var); attributes as lamb1 ------------------------------------------- */
#define MXC_OPT_MP_LAMB1(TAG)                                                                  \
  MXC_OPT_KERNEL(mxc_opt_mp_lamb1, TAG, x.p[0] = c->in[4].data; x.p[1] = c->in[1].data;       \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;, { \
    const float *w = (const float *)x->p[0];                                                   \
    const T *g = (const T *)x->p[1];                                                           \
    float *o = (float *)x->p[2], *m = (float *)x->p[3], *v = (float *)x->p[4];                 \
    const float b1 = (float)x->f[0], b2 = (float)x->f[1], eps = (float)x->f[2],                \
                wd = (float)x->f[3], rs = (float)x->f[4], cg = (float)x->f[5],                 \
                b1t = (float)x->f[6], b2t = (float)x->f[7];                                    \
    const float c1 = 1.f - b1, c2 = 1.f - b2, d2 = 1.f - b2t;                                  \
    const double d1 = 1. - (double)b1t;                                                        \
    const int bc = x->i[0] != 0;                                                               \
    (void)sizeof(CT);                                                                          \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      float gr = (float)LDW(TAG, g[i]) * rs;                                                   \
      if (cg >= 0.f) gr = MXC_OCLIP(gr, cg);                                                   \
      float mi = b1 * m[i] + c1 * gr;                                                          \
      float vi = b2 * v[i] + c2 * gr * gr;                                                     \
      m[i] = mi;                                                                               \
      v[i] = vi;                                                                               \
      float r;                                                                                 \
      if (bc) {                                                                                \
        float mh = (float)((double)mi / d1), vh = vi / d2;                                     \
        r = mh / (sqrtf(vh) + eps) + wd * w[i];                                                \
      } else {                                                                                 \
        r = mi / (sqrtf(vi) + eps) + wd * w[i];                                                \
      }                                                                                        \
      o[i] = r;                                                                                \
    }                                                                                          \
  })
MXC_OPT_MP_LAMB1(f16)
MXC_OPT_MP_LAMB1(f32)
MXC_OPT_MP_LAMB1(f64)

/* the trust-ratio learning rate of LAMB phase 2 (r1, r2 read when the kernel runs) */
#define MXC_OPT_LAMB_LR(CT, lr, r1, r2, lb, ub)                                                \
  do {                                                                                         \
    CT nr1 = (r1);                                                                             \
    if ((lb) >= 0) nr1 = nr1 > (lb) ? nr1 : (lb);                                              \
    if ((ub) >= 0) nr1 = nr1 < (ub) ? nr1 : (ub);                                              \
    if (!(nr1 == 0 || (r2) == 0)) lr = lr * nr1 / (r2);                                        \
  } while (0)

/* ---- lamb_update_phase2: in (weight, g, r1, r2); out (weight); f: lr, lower, upper ---------- */
#define MXC_OPT_LAMB2(TAG)                                                                     \
  MXC_OPT_KERNEL(mxc_opt_lamb2, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;          \
                 x.p[2] = c->out[0].data;                                                      \
                 x.f[3] = MXC_OLD_##TAG(*(const MXC_OT_##TAG *)c->in[2].data);                \
                 x.f[4] = MXC_OLD_##TAG(*(const MXC_OT_##TAG *)c->in[3].data);, {             \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2];                                                                       \
    CT lr = (CT)x->f[0];                                                                       \
    const CT lb = (CT)x->f[1], ub = (CT)x->f[2], r1 = (CT)x->f[3], r2 = (CT)x->f[4];           \
    MXC_OPT_LAMB_LR(CT, lr, r1, r2, lb, ub);                                                   \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++)                                                \
      o[i] = STW(TAG, LDW(TAG, w[i]) - lr * LDW(TAG, g[i]));                                   \
  })
MXC_OPT_LAMB2(f16)
MXC_OPT_LAMB2(f32)
MXC_OPT_LAMB2(f64)

/* ---- mp_lamb_update_phase2: in (weight, g, r1, r2, weight32), all but weight float32;
 * out (weight) = weight32 - lr * g (weight32 is read, not written, as MXNet 1.9.1) ---------- */
#define MXC_OPT_MP_LAMB2(TAG)                                                                  \
  MXC_OPT_KERNEL(mxc_opt_mp_lamb2, TAG, x.p[0] = c->in[4].data; x.p[1] = c->in[1].data;       \
                 x.p[2] = c->out[0].data; x.f[3] = *(const float *)c->in[2].data;              \
                 x.f[4] = *(const float *)c->in[3].data;, {                                    \
    const float *w = (const float *)x->p[0], *g = (const float *)x->p[1];                      \
    T *o = (T *)x->p[2];                                                                       \
    float lr = (float)x->f[0];                                                                 \
    const float lb = (float)x->f[1], ub = (float)x->f[2], r1 = (float)x->f[3],                 \
                r2 = (float)x->f[4];                                                           \
    (void)sizeof(CT);                                                                          \
    MXC_OPT_LAMB_LR(float, lr, r1, r2, lb, ub);                                                \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) o[i] = STW(TAG, w[i] - lr * g[i]);             \
  })
MXC_OPT_MP_LAMB2(f16)
MXC_OPT_MP_LAMB2(f32)
MXC_OPT_MP_LAMB2(f64)

/* ---- _sparse_adagrad_update on dense arrays (every row present): in (weight, grad, history);
 * out (weight, history); f: lr, epsilon, rescale_grad, clip_gradient ------------------------- */
#define MXC_OPT_ADAGRAD(TAG)                                                                   \
  MXC_OPT_KERNEL(mxc_opt_adagrad, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;        \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data;, {                          \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *h = (T *)x->p[3];                                                    \
    const CT lr = (CT)x->f[0], eps = (CT)x->f[1], rs = (CT)x->f[2], cg = (CT)x->f[3];          \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT gr = LDW(TAG, g[i]) * rs;                                                             \
      if (cg >= 0) gr = MXC_OCLIP(gr, cg);                                                     \
      CT hi_ = LDW(TAG, h[i]) + gr * gr;                                                       \
      h[i] = STW(TAG, hi_);                                                                    \
      o[i] = STW(TAG, LDW(TAG, w[i]) - gr / MXC_OSQRT_##TAG(hi_ + eps) * lr);                  \
    }                                                                                          \
  })
MXC_OPT_ADAGRAD(f16)
MXC_OPT_ADAGRAD(f32)
MXC_OPT_ADAGRAD(f64)

/* ---- AdamW (contrib): rescale_grad is a tensor (last input) read when the kernel runs; a NaN,
 * inf or zero scale skips the update (states untouched, the weight output keeps the weight).
 * f: lr, beta1, beta2, epsilon, wd, eta, clip_gradient; i[0] = 1 for the multi_ form, whose
 * moments are beta*(m - g) + g as MXNet's _multi_adamw_update computes them.
 * _adamw_update: in (weight, grad, mean, var, scale); out (weight, mean, var) */
#define MXC_OPT_SCALE_OR_SKIP(c, x)                                                            \
  x.f[7] = mxc_opt_scalar(&c->in[c->nin - 1]);                                                 \
  if (!isfinite(x.f[7]) || x.f[7] == 0) {                                                      \
    mxc_opt_keep_weight(c);                                                                    \
    return 0;                                                                                  \
  }

#define MXC_OPT_ADAMW(TAG)                                                                     \
  MXC_OPT_KERNEL(mxc_opt_adamw, TAG, x.p[0] = c->in[0].data; x.p[1] = c->in[1].data;          \
                 x.p[2] = c->out[0].data; x.p[3] = c->out[1].data; x.p[4] = c->out[2].data;   \
                 MXC_OPT_SCALE_OR_SKIP(c, x), {                                                \
    const T *w = (const T *)x->p[0], *g = (const T *)x->p[1];                                  \
    T *o = (T *)x->p[2], *m = (T *)x->p[3], *v = (T *)x->p[4];                                 \
    const CT lr = (CT)x->f[0], b1 = (CT)x->f[1], b2 = (CT)x->f[2], eps = (CT)x->f[3],          \
             wd = (CT)x->f[4], eta = (CT)x->f[5], cg = (CT)x->f[6], rs = (CT)(float)x->f[7];   \
    /* MXNet: scalar<DType>(1.f - beta) is computed in float */                               \
    const CT c1 = (CT)(1.f - (float)x->f[1]), c2 = (CT)(1.f - (float)x->f[2]);                 \
    const int multi = x->i[0] != 0;                                                            \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      CT wi = LDW(TAG, w[i]);                                                                  \
      CT gr = rs * LDW(TAG, g[i]);                                                             \
      if (cg >= 0) gr = MXC_OCLIP(gr, cg);                                                     \
      CT mi, vi;                                                                               \
      if (multi) {                                                                             \
        CT adj = gr * gr;                                                                      \
        mi = b1 * (LDW(TAG, m[i]) - gr) + gr;                                                  \
        vi = b2 * (LDW(TAG, v[i]) - adj) + adj;                                                \
      } else {                                                                                 \
        mi = b1 * LDW(TAG, m[i]) + c1 * gr;                                                    \
        vi = b2 * LDW(TAG, v[i]) + c2 * (gr * gr);                                             \
      }                                                                                        \
      m[i] = STW(TAG, mi);                                                                     \
      v[i] = STW(TAG, vi);                                                                     \
      o[i] = STW(TAG, wi - eta * (lr * mi / (MXC_OSQRT_##TAG(vi) + eps) + wd * wi));           \
    }                                                                                          \
  })
MXC_OPT_ADAMW(f16)
MXC_OPT_ADAMW(f32)
MXC_OPT_ADAMW(f64)

/* _mp_adamw_update: in (weight, grad, mean, var, weight32, scale); out (weight, mean, var,
 * weight32); states float32 */
#define MXC_OPT_MP_ADAMW(TAG)                                                                  \
  MXC_OPT_KERNEL(mxc_opt_mp_adamw, TAG, x.p[0] = c->in[1].data; x.p[1] = c->out[0].data;      \
                 x.p[2] = c->out[1].data; x.p[3] = c->out[2].data; x.p[4] = c->out[3].data;   \
                 MXC_OPT_SCALE_OR_SKIP(c, x), {                                                \
    const T *g = (const T *)x->p[0];                                                           \
    T *o = (T *)x->p[1];                                                                       \
    float *m = (float *)x->p[2], *v = (float *)x->p[3], *w32 = (float *)x->p[4];               \
    const float lr = (float)x->f[0], b1 = (float)x->f[1], b2 = (float)x->f[2],                 \
                eps = (float)x->f[3], wd = (float)x->f[4], eta = (float)x->f[5],               \
                cg = (float)x->f[6], rs = (float)x->f[7];                                      \
    const float c1 = 1.0f - b1, c2 = 1.0f - b2;                                                \
    const int multi = x->i[0] != 0;                                                            \
    (void)sizeof(CT);                                                                          \
    MXC_IVDEP for (int64_t i = lo; i < hi; i++) {                                              \
      float wi = w32[i];                                                                       \
      float gr = rs * (float)LDW(TAG, g[i]);                                                   \
      if (cg >= 0.f) gr = MXC_OCLIP(gr, cg);                                                   \
      float mi, vi;                                                                            \
      if (multi) {                                                                             \
        float adj = gr * gr;                                                                   \
        mi = b1 * (m[i] - gr) + gr;                                                            \
        vi = b2 * (v[i] - adj) + adj;                                                          \
      } else {                                                                                 \
        mi = b1 * m[i] + c1 * gr;                                                              \
        vi = b2 * v[i] + c2 * (gr * gr);                                                       \
      }                                                                                        \
      m[i] = mi;                                                                               \
      v[i] = vi;                                                                               \
      wi = wi - eta * (lr * mi / (sqrtf(vi) + eps) + wd * wi);                                 \
      w32[i] = wi;                                                                             \
      o[i] = STW(TAG, wi);                                                                     \
    }                                                                                          \
  })
MXC_OPT_MP_ADAMW(f16)
MXC_OPT_MP_ADAMW(f32)
MXC_OPT_MP_ADAMW(f64)

MXC_OPT_END

#define MXC_OPT_ENTRIES(name, fn)                                                              \
  {name, MXC_FLOAT16, -1, fn##_f16}, {name, MXC_FLOAT32, -1, fn##_f32},                        \
      {name, MXC_FLOAT64, -1, fn##_f64}

static const mxc_kentry mxc_optimizer_table[] = {
    MXC_OPT_ENTRIES("opt:sgd", mxc_opt_sgd),
    MXC_OPT_ENTRIES("opt:msgd", mxc_opt_msgd),
    MXC_OPT_ENTRIES("opt:mp_sgd", mxc_opt_mp_sgd),
    MXC_OPT_ENTRIES("opt:mp_msgd", mxc_opt_mp_msgd),
    MXC_OPT_ENTRIES("opt:nag", mxc_opt_nag),
    MXC_OPT_ENTRIES("opt:mp_nag", mxc_opt_mp_nag),
    MXC_OPT_ENTRIES("opt:adam", mxc_opt_adam),
    MXC_OPT_ENTRIES("opt:rmsprop", mxc_opt_rmsprop),
    MXC_OPT_ENTRIES("opt:rmspropalex", mxc_opt_rmspropalex),
    MXC_OPT_ENTRIES("opt:ftrl", mxc_opt_ftrl),
    MXC_OPT_ENTRIES("opt:ftml", mxc_opt_ftml),
    MXC_OPT_ENTRIES("opt:signsgd", mxc_opt_signsgd),
    MXC_OPT_ENTRIES("opt:signum", mxc_opt_signum),
    MXC_OPT_ENTRIES("opt:lamb1", mxc_opt_lamb1),
    MXC_OPT_ENTRIES("opt:mp_lamb1", mxc_opt_mp_lamb1),
    MXC_OPT_ENTRIES("opt:lamb2", mxc_opt_lamb2),
    MXC_OPT_ENTRIES("opt:mp_lamb2", mxc_opt_mp_lamb2),
    MXC_OPT_ENTRIES("opt:adagrad", mxc_opt_adagrad),
    MXC_OPT_ENTRIES("opt:adamw", mxc_opt_adamw),
    MXC_OPT_ENTRIES("opt:mp_adamw", mxc_opt_mp_adamw),
    {NULL, 0, -1, NULL}};

#undef LDW
#undef STW
#endif
