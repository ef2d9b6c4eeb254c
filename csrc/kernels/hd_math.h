/* Arithmetic that the CPU kernels (C, gcc) and the GPU kernels (CUDA C++, NVRTC) share.
 *
 * Everything here is a `static inline` function marked MXC_HD, which is `__host__ __device__`
 * under a CUDA compiler and nothing under a C compiler, so one definition serves both devices and
 * the CPU tests of these functions (tests/ops/cuda/test_hd_math.py compiles this header with gcc)
 * cover the math the GPU runs. Only plain C lives here: no templates, no CUDA intrinsics, no
 * libc beyond <math.h>, so both compilers accept it unchanged.
 *
 * Contents: MXNet's x86 float->int casts, MXNet's mod and trap-free integer div/mod, MXNet's
 * rint/fix, the Philox4x32-10 block and its uniform grids (the same streams on both devices for
 * the same key and counter), and the per-element steps of the optimizer update operators (the
 * order of operations of MXNet 1.9.1's optimizer_op-inl.h, so both devices round alike).
 */
#ifndef MXC_KERNELS_HD_MATH_H
#define MXC_KERNELS_HD_MATH_H

/* CUDA: plain `inline` (an unused static function draws NVRTC warning 177, and the check fails
 * on warnings); C: `static inline` (C99's plain inline would need an external definition) */
#if defined(__CUDACC__)
#define MXC_HD __host__ __device__ inline
#else
#define MXC_HD static inline
#endif

#if defined(__CUDACC_RTC__)
/* NVRTC has no libc headers; its math functions are built in */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <math.h>
#include <stdint.h>
#endif

/* ---- casts with MXNet's (x86) semantics --------------------------------------------------
 * A C++ cast of a double to int on x86 truncates toward zero and gives INT_MIN for nan and
 * anything out of range ("integer indefinite"); 8-bit results take the low byte of the 32-bit
 * one. C leaves those cases undefined and the GPU saturates, so both devices spell them out. */
MXC_HD int32_t mxc_hd_d2i32(double d) {
  return (d > -2147483649.0 && d < 2147483648.0) ? (int32_t)d : (int32_t)(-2147483647 - 1);
}
MXC_HD int64_t mxc_hd_d2i64(double d) {
  return (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
             ? (int64_t)d
             : (int64_t)(-9223372036854775807LL - 1);
}
MXC_HD uint8_t mxc_hd_d2u8(double d) { return (uint8_t)(uint32_t)mxc_hd_d2i32(d); }
MXC_HD int8_t mxc_hd_d2i8(double d) {
  return (int8_t)(uint8_t)(uint32_t)mxc_hd_d2i32(d);
}

/* ---- MXNet's mod: the sign of the divisor, x mod 0 = 0 (mshadow_op::mod), in double ------- */
MXC_HD double mxc_hd_mod(double a, double b) {
  if (b == 0.0) return 0.0;
  if (b < 0.0) {
    if (a < 0.0) return -fmod(-a, -b);
    double r = fmod(a, -b);
    return r + (r != 0.0 ? b : 0.0);
  }
  if (a < 0.0) {
    double r = fmod(-a, b);
    return -r + (r != 0.0 ? b : 0.0);
  }
  return fmod(a, b);
}

/* integer div and mod without traps: x/0 = 0, x%0 = 0, INT_MIN/-1 wraps, INT_MIN%-1 = 0; mod
 * takes the divisor's sign (floor mod), as MXNet's integer mod */
#define MXC_HD_DIVMOD_SIGNED(tag, T, UT)                                                       \
  MXC_HD T mxc_hd_div_##tag(T a, T b) {                                          \
    if (b == 0) return 0;                                                                      \
    if (b == -1) return (T)(0u - (UT)a);                                                       \
    return (T)(a / b);                                                                         \
  }                                                                                            \
  MXC_HD T mxc_hd_mod_##tag(T a, T b) {                                          \
    if (b == 0 || b == -1) return 0;                                                           \
    T r = (T)(a % b);                                                                          \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                                        \
    return r;                                                                                  \
  }
MXC_HD_DIVMOD_SIGNED(i8, int8_t, uint32_t)
MXC_HD_DIVMOD_SIGNED(i32, int32_t, uint32_t)
MXC_HD_DIVMOD_SIGNED(i64, int64_t, uint64_t)
MXC_HD uint8_t mxc_hd_div_u8(uint8_t a, uint8_t b) {
  return b == 0 ? (uint8_t)0 : (uint8_t)(a / b);
}
MXC_HD uint8_t mxc_hd_mod_u8(uint8_t a, uint8_t b) {
  return b == 0 ? (uint8_t)0 : (uint8_t)(a % b);
}

/* ---- rounding as MXNet: rint ties toward -inf (rint(2.5) = 2, rint(-2.5) = -3); fix rounds
 * toward zero through floor/ceil ------------------------------------------------------------ */
MXC_HD float mxc_hd_rintf(float a) {
  float fl = floorf(a), ce = ceilf(a);
  return (a - fl) <= (ce - a) ? fl : ce;
}
MXC_HD double mxc_hd_rint(double a) {
  double fl = floor(a), ce = ceil(a);
  return (a - fl) <= (ce - a) ? fl : ce;
}
MXC_HD float mxc_hd_fixf(float a) {
  float fl = floorf(a), ce = ceilf(a);
  return fabsf(fl) < fabsf(ce) ? fl : ce;
}
MXC_HD double mxc_hd_fix(double a) {
  double fl = floor(a), ce = ceil(a);
  return fabs(fl) < fabs(ce) ? fl : ce;
}

/* ---- Philox4x32-10 (Salmon et al., SC'11) --------------------------------------------------
 * The block for (counter, sub-stream, key): the same 4 words on both devices, so a kernel's
 * uniform bits depend only on the key and counter its operator reserved (see kernels/random.h
 * for the counter layout). */
typedef struct {
  uint32_t w[4];
} mxc_hd_u32x4;

MXC_HD uint32_t mxc_hd_mulhi32(uint32_t a, uint32_t b) {
  return (uint32_t)(((uint64_t)a * (uint64_t)b) >> 32);
}
MXC_HD mxc_hd_u32x4 mxc_hd_philox(uint64_t ctr, uint64_t sub, uint64_t key) {
  uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32);
  uint32_t c2 = (uint32_t)sub, c3 = (uint32_t)(sub >> 32);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint32_t h0 = mxc_hd_mulhi32(0xD2511F53u, c0), l0 = 0xD2511F53u * c0;
    uint32_t h1 = mxc_hd_mulhi32(0xCD9E8D57u, c2), l1 = 0xCD9E8D57u * c2;
    uint32_t n0 = h1 ^ c1 ^ k0, n2 = h0 ^ c3 ^ k1;
    c1 = l1;
    c3 = l0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  mxc_hd_u32x4 out;
  out.w[0] = c0;
  out.w[1] = c1;
  out.w[2] = c2;
  out.w[3] = c3;
  return out;
}
/* [0, 1) on a 2^-24 grid (float) and a 2^-53 grid (two words, double): exact on both devices */
MXC_HD float mxc_hd_u24(uint32_t x) {
  return (float)(x >> 8) * 5.9604644775390625e-08f;
}
MXC_HD double mxc_hd_u53(uint32_t a, uint32_t b) {
  return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * 1.1102230246251565e-16;
}

/* ---- optimizer steps -----------------------------------------------------------------------
 * One element of each update operator: takes the weight and gradient in the compute type and
 * the states by pointer (read, then written), returns the new weight. Attribute arguments are in
 * MXNet's order for the operator (mxc/ops/optimizer_ops.py); clip < 0 means "no clipping". One
 * macro defines the float (float16/float32 weights) and double (float64) forms. */
#define MXC_HD_CLIP(x, b) ((x) > (b) ? (b) : ((x) < -(b) ? -(b) : (x)))

#define MXC_HD_OPT_STEPS(SUF, CT, SQRT, POW)                                                   \
  /* sgd (and the lrs = lr*rs form MXNet uses without clipping, which rounds differently) */  \
  MXC_HD CT mxc_hd_sgd_##SUF(CT w, CT g, CT lr, CT wd, CT rs, CT cg) {           \
    const CT a = (CT)1 - lr * wd;                                                              \
    if (cg >= 0) {                                                                             \
      CT gr = rs * g;                                                                          \
      return a * w - lr * MXC_HD_CLIP(gr, cg);                                                 \
    }                                                                                          \
    return a * w - (lr * rs) * g;                                                              \
  }                                                                                            \
  /* sgd_mom: mom = momentum*mom - lr*wd*w - lr*clip(rs*g); w += mom */                        \
  MXC_HD CT mxc_hd_sgd_mom_##SUF(CT w, CT g, CT *mom, CT lr, CT wd, CT mo, CT rs, \
                                               CT cg) {                                        \
    CT gr = rs * g;                                                                            \
    CT m = cg >= 0 ? mo * *mom - (lr * wd) * w - lr * MXC_HD_CLIP(gr, cg)                      \
                   : mo * *mom - (lr * wd) * w - (lr * rs) * g;                                \
    *mom = m;                                                                                  \
    return w + m;                                                                              \
  }                                                                                            \
  /* nag_mom, in MXNet's order: m' = momentum*mom; w' = w - m' + (momentum+1)*(m' - lr*(gc +  \
   * wd*w)); mom = m' - lr*(gc + wd*ws), where ws is w, or w' when the weight output aliases the \
   * weight (MXNet writes the weight first and reads it back) */                               \
  MXC_HD CT mxc_hd_nag_mom_##SUF(CT w, CT g, CT *mom, CT lr, CT wd, CT mo, CT rs, \
                                               CT cg, int alias) {                             \
    CT mi = mo * *mom, gr = rs * g;                                                            \
    CT gc = cg >= 0 ? MXC_HD_CLIP(gr, cg) : gr;                                                \
    CT wn = w - mi + (mo + 1) * (mi - lr * (gc + wd * w));                                     \
    CT ws = alias ? wn : w;                                                                    \
    *mom = mi - lr * (gc + wd * ws);                                                           \
    return wn;                                                                                 \
  }                                                                                            \
  MXC_HD CT mxc_hd_adam_##SUF(CT w, CT g, CT *m, CT *v, CT lr, CT b1, CT b2,     \
                                            CT eps, CT wd, CT rs, CT cg) {                     \
    CT gr = g * rs + w * wd;                                                                   \
    if (cg >= 0) gr = MXC_HD_CLIP(gr, cg);                                                     \
    CT mi = b1 * *m + ((CT)1 - b1) * gr;                                                       \
    CT vi = b2 * *v + ((CT)1 - b2) * gr * gr;                                                  \
    *m = mi;                                                                                   \
    *v = vi;                                                                                   \
    return w - lr * mi / (SQRT(vi) + eps);                                                     \
  }                                                                                            \
  MXC_HD CT mxc_hd_rmsprop_##SUF(CT w, CT g, CT *n, CT lr, CT g1, CT eps, CT wd, \
                                               CT rs, CT cg, CT cw) {                          \
    CT gr = rs * g + wd * w;                                                                   \
    if (cg >= 0) gr = MXC_HD_CLIP(gr, cg);                                                     \
    CT ni = ((CT)1 - g1) * (gr * gr) + g1 * *n;                                                \
    *n = ni;                                                                                   \
    CT wn = w - lr * (gr / SQRT(ni + eps));                                                    \
    if (cw >= 0) wn = MXC_HD_CLIP(wn, cw);                                                     \
    return wn;                                                                                 \
  }                                                                                            \
  MXC_HD CT mxc_hd_rmspropalex_##SUF(CT w, CT g, CT *n, CT *gs, CT *d, CT lr,    \
                                                   CT g1, CT g2, CT eps, CT wd, CT rs, CT cg,  \
                                                   CT cw) {                                    \
    CT gr = rs * g + wd * w;                                                                   \
    if (cg >= 0) gr = MXC_HD_CLIP(gr, cg);                                                     \
    CT c1 = (CT)1 - g1;                                                                        \
    CT ni = c1 * gr * gr + g1 * *n;                                                            \
    CT gi = c1 * gr + g1 * *gs;                                                                \
    CT di = g2 * *d - (lr * gr / (SQRT(ni - gi * gi + eps)));                                  \
    *n = ni;                                                                                   \
    *gs = gi;                                                                                  \
    *d = di;                                                                                   \
    CT wn = w + di;                                                                            \
    if (cw >= 0) wn = MXC_HD_CLIP(wn, cw);                                                     \
    return wn;                                                                                 \
  }                                                                                            \
  MXC_HD CT mxc_hd_ftrl_##SUF(CT w, CT g, CT *z, CT *n, CT lr, CT l1, CT beta,   \
                                            CT wd, CT rs, CT cg) {                             \
    CT ni = *n, gr = g * rs;                                                                   \
    if (cg >= 0) gr = MXC_HD_CLIP(gr, cg);                                                     \
    CT zi = *z + (gr - (SQRT(ni + gr * gr) - SQRT(ni)) * w / lr);                              \
    ni = ni + gr * gr;                                                                         \
    *z = zi;                                                                                   \
    *n = ni;                                                                                   \
    CT sg = zi > 0 ? (CT)1 : (zi < 0 ? (CT)-1 : (CT)0);                                        \
    CT gt = (zi < 0 ? -zi : zi) > l1 ? (CT)1 : (CT)0;                                          \
    return (sg * l1 - zi) / ((beta + SQRT(ni)) / lr + wd) * gt;                                \
  }                                                                                            \
  MXC_HD CT mxc_hd_ftml_##SUF(CT w, CT g, CT *d, CT *v, CT *z, CT lr, CT b1,     \
                                            CT b2, CT eps, CT t, CT wd, CT rs, CT cg) {        \
    CT p1 = (CT)1 - POW(b1, t), p2 = (CT)1 - POW(b2, t);                                       \
    CT gi = rs * g + wd * w;                                                                   \
    if (cg >= 0) gi = MXC_HD_CLIP(gi, cg);                                                     \
    CT vi = b2 * *v + ((CT)1 - b2) * (gi * gi);                                                \
    CT dt = p1 / lr * (SQRT(vi / p2) + eps);                                                   \
    CT zi = b1 * *z + ((CT)1 - b1) * gi - (dt - b1 * *d) * w;                                  \
    *v = vi;                                                                                   \
    *z = zi;                                                                                   \
    *d = dt;                                                                                   \
    return -zi / dt;                                                                           \
  }                                                                                            \
  MXC_HD CT mxc_hd_signsgd_##SUF(CT w, CT g, CT lr, CT wd) {                     \
    return ((CT)1 - lr * wd) * w - lr * (CT)((g > 0) - (g < 0));                               \
  }                                                                                            \
  MXC_HD CT mxc_hd_signum_##SUF(CT w, CT g, CT *mom, CT lr, CT mo, CT wd, CT rs,  \
                                              CT cg, CT wdlh) {                                \
    CT c1 = (CT)1 - mo, gr = rs * g;                                                           \
    CT mi = cg >= 0 ? mo * *mom - c1 * wd * w - c1 * MXC_HD_CLIP(gr, cg)                       \
                    : mo * *mom - c1 * wd * w - c1 * rs * g;                                   \
    *mom = mi;                                                                                 \
    return ((CT)1 - lr * wdlh) * w + lr * (CT)((mi > 0) - (mi < 0));                           \
  }                                                                                            \
  /* adamw: g' = clip(rs*g); m, v as adam with 1 - beta computed in float as MXNet (or, for \
   * the multi_ form, m = b1*(m - g') + g'); w -= eta*(lr*m/(sqrt(v)+eps) + wd*w) */            \
  MXC_HD CT mxc_hd_adamw_##SUF(CT w, CT g, CT *m, CT *v, CT lr, CT b1, CT b2,    \
                                             CT eps, CT wd, CT eta, CT rs, CT cg, int multi) { \
    CT gr = rs * g;                                                                            \
    if (cg >= 0) gr = MXC_HD_CLIP(gr, cg);                                                     \
    CT mi, vi;                                                                                 \
    if (multi) {                                                                               \
      CT adj = gr * gr;                                                                        \
      mi = b1 * (*m - gr) + gr;                                                                \
      vi = b2 * (*v - adj) + adj;                                                              \
    } else {                                                                                   \
      mi = b1 * *m + (CT)(1.0f - (float)b1) * gr;                                              \
      vi = b2 * *v + (CT)(1.0f - (float)b2) * (gr * gr);                                       \
    }                                                                                          \
    *m = mi;                                                                                   \
    *v = vi;                                                                                   \
    return w - eta * (lr * mi / (SQRT(vi) + eps) + wd * w);                                    \
  }

MXC_HD_OPT_STEPS(f, float, sqrtf, powf)
MXC_HD_OPT_STEPS(d, double, sqrt, pow)

#endif
