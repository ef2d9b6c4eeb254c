/* Depthwise 3x3 convolution (one input and one output channel per group, dilation 1, strides 1
 * or 2) on blocks of channels, without padded copies. Included by convolution.h after
 * convolution_grouped.h, whose loops remain for every other few-channels-per-group problem.
 *
 * The phase loops of convolution_grouped.h vectorise along one plane's positions: on the small
 * planes of MobileNetV2 (7x7, 14x14 at batch 8) a plane's wide rows are 63 or 224 elements, so
 * per plane the padded phase copy, the zeroing and the scalar tails of 8-wide vectors cost more
 * than the 9 multiply-adds per position (960x7x7: 2.5x PyTorch's forward time). Here one vector
 * holds the same position of L channels (64 bytes: 16 floats or 8 doubles; one AVX-512 register,
 * two AVX2 ones): each thread copies the input planes of L channels of one sample once into a
 * channel-interleaved block xb[position][L] (no padding; L x L tiles transposed in registers),
 * then every output position is 9 full-width multiply-adds of xb's vectors with the L channels'
 * weights, whatever the plane's width; border positions test their taps, interior ones do not.
 * The output block goes back to the planes through the same transposes.
 *
 * Sums are in the phase loops' order, so the values are theirs (bitwise, measured on every shape
 * of the tests with the same instruction set: FMA contracted alike): forward bias + the kernel
 * rows in turn, each row as w0 a + w1 b + w2 c (a tap outside the input reads 0 there);
 * backward data 0 + the taps in turn (scattered from the output positions in reverse order).
 * Backward weight sums per channel over runs of output rows in float, the runs and samples in
 * double; the phase loops sum 8 interleaved float partials per plane, so the weight gradients
 * differ by float rounding (at most 4.8e-7 of the largest, float32, on the tests' shapes).
 *
 * Threads own (sample, block) pairs in the forward and the backward data, and blocks in the
 * backward weight (all samples in one thread: the result does not depend on the thread count).
 */
#ifndef MXC_KERNELS_CONVOLUTION_DEPTHWISE_H
#define MXC_KERNELS_CONVOLUTION_DEPTHWISE_H

/* Planes whose input and output positions together exceed this keep the phase loops: the
 * blocks (64 bytes per position) then outgrow the caches. Measured, one thread, CPU ms of
 * forward / backward, phase loops -> blocks: 32@224x224 (100352 positions) 7.7-8.6/22.8-22.9 ->
 * 6.0-6.5/14.3-14.6 (batch 4), 32@112x112 3.9/11.7 -> 2.3-2.8/5.5-5.9 (batch 8), but 16@448x448
 * (401408) 13.5-14.1/42.6-43.9 -> 18.8-21.4/43.0-44.3 (batch 4). */
#ifndef MXC_CONVDW_MAX_POS
#define MXC_CONVDW_MAX_POS ((int64_t)1 << 17)
#endif

static int mxc_convdw_usable(const mxc_conv_geom *g) {
  return g->flat && g->g > 1 && g->cig == 1 && g->cog == 1 && g->k[1] == 3 && g->k[2] == 3 &&
         g->d[1] == 1 && g->d[2] == 1 && g->s[1] >= 1 && g->s[1] <= 2 && g->s[2] >= 1 &&
         g->s[2] <= 2 && g->p[1] <= 2 && g->p[2] <= 2 && g->isz + g->osz <= MXC_CONVDW_MAX_POS;
}

/* elements (of esz bytes) of one thread's scratch: the input block, the output block, the
 * weights and bias of a block, the weight gradient's double sums; whole 64-byte vectors */
static int64_t mxc_convdw_per(const mxc_conv_geom *g, size_t esz) {
  const int64_t lanes = 64 / (int64_t)esz;
  return (g->isz + g->osz + 10 + 9 * (int64_t)(8 / esz)) * lanes;
}

static int64_t mxc_convdw_scratch(const mxc_conv_geom *g, int nt, size_t esz) {
  return mxc_convdw_per(g, esz) * (nt > 0 ? nt : 1);
}

/* 2: AVX-512F, 1: AVX2 + FMA, 0: the baseline loops */
static int mxc_convdw_isa(void) {
#ifdef MXC_WINO
  static volatile int isa = -1;
  if (isa < 0) {
    __builtin_cpu_init();
    isa = __builtin_cpu_supports("avx512f") ? 2 : mxc_wino_cpu() ? 1 : 0;
  }
  return isa;
#else
  return 0;
#endif
}

/* The three loops over one block, compiled for the baseline, AVX2 + FMA (VSUF 2) and AVX-512F
 * (VSUF 3). xb, yb: channel-interleaved blocks [position][L]; planes (x, y, dx): cb <= L
 * consecutive NC(H)W planes. Vectors move through memcpy (no alignment assumed). */
#define MXC_CONVDW_LOOPS_DEFINE(T, VT, MT, SUF, VSUF, ATTR)                                        \
/* dst rows (stride ds) = the transpose of the L x L tile of src rows (stride ss), in registers:    \
 * log2(L) rounds of interleaving row i with row i + L/2 (low halves into row 2i, high halves      \
 * into row 2i + 1) transpose the tile (a perfect shuffle of the index bits) */                    \
ATTR static void mxc_convdw_tile_##SUF##VSUF(T *dst, int64_t ds, const T *src, int64_t ss) {       \
  enum { L = (int)(sizeof(VT) / sizeof(T)) };                                                      \
  VT r[L], u[L];                                                                                   \
  MT lo, hi;                                                                                       \
  int i, k;                                                                                        \
  for (i = 0; i < L; i++) {                                                                        \
    lo[i] = (i & 1) ? L + i / 2 : i / 2;                                                           \
    hi[i] = lo[i] + L / 2;                                                                         \
  }                                                                                                \
  for (i = 0; i < L; i++) memcpy(&r[i], src + i * ss, sizeof(VT));                                 \
  for (k = 1; k < L; k *= 2) {                                                                     \
    for (i = 0; i < L / 2; i++) {                                                                  \
      u[2 * i] = MXC_CONVDW_SHUFFLE(r[i], r[i + L / 2], lo);                                        \
      u[2 * i + 1] = MXC_CONVDW_SHUFFLE(r[i], r[i + L / 2], hi);                                    \
    }                                                                                              \
    memcpy(r, u, sizeof(r));                                                                       \
  }                                                                                                \
  for (i = 0; i < L; i++) memcpy(dst + i * ds, &r[i], sizeof(VT));                                 \
}                                                                                                  \
                                                                                                   \
/* xb[p * L + c] = x[c * n + p] (dir 0: planes into a block; lanes cb.. zero) or back (dir 1) */   \
ATTR static void mxc_convdw_pack_##SUF##VSUF(T *xb, T *x, int64_t n, int64_t cb, int dir) {        \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T));                                             \
  int64_t p = 0, c;                                                                                \
  if (cb == L && MXC_CONVDW_TILES) {                                                               \
    for (; p + L <= n; p += L) {                                                                   \
      if (dir == 0) mxc_convdw_tile_##SUF##VSUF(xb + p * L, L, x + p, n);                          \
      else mxc_convdw_tile_##SUF##VSUF(x + p, n, xb + p * L, L);                                   \
    }                                                                                              \
  } else if (dir == 0) {                                                                           \
    memset(xb, 0, sizeof(T) * (size_t)(n * L));                                                    \
  }                                                                                                \
  for (; p < n; p++)                                                                               \
    for (c = 0; c < cb; c++) {                                                                     \
      if (dir == 0) xb[p * L + c] = x[c * n + p];                                                  \
      else x[c * n + p] = xb[p * L + c];                                                           \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
/* yb = bias + the 3x3 taps of xb */                                                               \
ATTR static void mxc_convdw_fwd_blk_##SUF##VSUF(const T *xb, const T *wb, const T *bb, T *yb,      \
                                                const mxc_conv_geom *g) {                          \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T));                                             \
  const int64_t ih = g->id[1], iw = g->id[2], oh = g->od[1], ow = g->od[2];                        \
  const int64_t sh = g->s[1], sw = g->s[2];                                                        \
  VT wv[9], bv, z;                                                                                 \
  int64_t o, p;                                                                                    \
  int t;                                                                                           \
  for (t = 0; t < 9; t++) memcpy(&wv[t], wb + t * L, sizeof(VT));                                  \
  memcpy(&bv, bb, sizeof(VT));                                                                     \
  memset(&z, 0, sizeof(VT));                                                                       \
  for (o = 0; o < oh; o++) {                                                                       \
    const int64_t i0 = o * sh - g->p[1];                                                           \
    const int rows_in = i0 >= 0 && i0 + 2 < ih;                                                    \
    for (p = 0; p < ow; p++) {                                                                     \
      const int64_t j0 = p * sw - g->p[2];                                                         \
      VT acc = bv;                                                                                 \
      int kh;                                                                                      \
      if (rows_in && j0 >= 0 && j0 + 2 < iw) {                                                     \
        const T *r = xb + (i0 * iw + j0) * L;                                                      \
        for (kh = 0; kh < 3; kh++, r += iw * L) {                                                  \
          VT a, b, e;                                                                              \
          memcpy(&a, r, sizeof(VT));                                                               \
          memcpy(&b, r + L, sizeof(VT));                                                           \
          memcpy(&e, r + 2 * L, sizeof(VT));                                                       \
          acc += wv[3 * kh] * a + wv[3 * kh + 1] * b + wv[3 * kh + 2] * e;                         \
        }                                                                                          \
      } else {                                                                                     \
        for (kh = 0; kh < 3; kh++) {                                                               \
          const int64_t i = i0 + kh;                                                               \
          const T *r;                                                                              \
          VT a = z, b = z, e = z;                                                                  \
          if (i < 0 || i >= ih) continue;                                                          \
          r = xb + (i * iw + j0) * L;                                                              \
          if (j0 >= 0 && j0 < iw) memcpy(&a, r, sizeof(VT));                                       \
          if (j0 + 1 >= 0 && j0 + 1 < iw) memcpy(&b, r + L, sizeof(VT));                           \
          if (j0 + 2 >= 0 && j0 + 2 < iw) memcpy(&e, r + 2 * L, sizeof(VT));                       \
          acc += wv[3 * kh] * a + wv[3 * kh + 1] * b + wv[3 * kh + 2] * e;                         \
        }                                                                                          \
      }                                                                                            \
      memcpy(yb + (o * ow + p) * L, &acc, sizeof(VT));                                             \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* xb = the adjoint: each output position's dY times the 9 weights added into the input positions \
 * its taps read. The positions go in reverse order, so that every input position receives its    \
 * taps in increasing order (a later output row or column reads it through an earlier tap): the   \
 * phase loops' sums, tap by tap from 0. */                                                        \
ATTR static void mxc_convdw_bwd_blk_##SUF##VSUF(const T *yb, const T *wb, T *xb,                   \
                                                const mxc_conv_geom *g) {                          \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T));                                             \
  const int64_t ih = g->id[1], iw = g->id[2], oh = g->od[1], ow = g->od[2];                        \
  const int64_t sh = g->s[1], sw = g->s[2];                                                        \
  VT wv[9];                                                                                        \
  int64_t o, p;                                                                                    \
  int t;                                                                                           \
  for (t = 0; t < 9; t++) memcpy(&wv[t], wb + t * L, sizeof(VT));                                  \
  memset(xb, 0, sizeof(T) * (size_t)(g->isz * L));                                                 \
  for (o = oh - 1; o >= 0; o--) {                                                                  \
    const int64_t i0 = o * sh - g->p[1];                                                           \
    const int rows_in = i0 >= 0 && i0 + 2 < ih;                                                    \
    for (p = ow - 1; p >= 0; p--) {                                                                \
      const int64_t j0 = p * sw - g->p[2];                                                         \
      VT d;                                                                                        \
      int kh, kw;                                                                                  \
      memcpy(&d, yb + (o * ow + p) * L, sizeof(VT));                                               \
      if (rows_in && j0 >= 0 && j0 + 2 < iw) {                                                     \
        T *r = xb + (i0 * iw + j0) * L;                                                            \
        for (kh = 0; kh < 3; kh++, r += iw * L) {                                                  \
          VT a, b, e;                                                                              \
          memcpy(&a, r, sizeof(VT));                                                               \
          memcpy(&b, r + L, sizeof(VT));                                                           \
          memcpy(&e, r + 2 * L, sizeof(VT));                                                       \
          a += wv[3 * kh] * d;                                                                     \
          b += wv[3 * kh + 1] * d;                                                                 \
          e += wv[3 * kh + 2] * d;                                                                 \
          memcpy(r, &a, sizeof(VT));                                                               \
          memcpy(r + L, &b, sizeof(VT));                                                           \
          memcpy(r + 2 * L, &e, sizeof(VT));                                                       \
        }                                                                                          \
      } else {                                                                                     \
        for (kh = 0; kh < 3; kh++) {                                                               \
          const int64_t i = i0 + kh;                                                               \
          if (i < 0 || i >= ih) continue;                                                          \
          for (kw = 0; kw < 3; kw++) {                                                             \
            const int64_t j = j0 + kw;                                                             \
            VT a;                                                                                  \
            if (j < 0 || j >= iw) continue;                                                        \
            memcpy(&a, xb + (i * iw + j) * L, sizeof(VT));                                         \
            a += wv[3 * kh + kw] * d;                                                              \
            memcpy(xb + (i * iw + j) * L, &a, sizeof(VT));                                         \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* acc[t * L + c] += sum over positions of dY times tap t's input, channel c of the block */       \
ATTR static void mxc_convdw_wgt_blk_##SUF##VSUF(const T *xb, const T *yb, double *acc,             \
                                                const mxc_conv_geom *g) {                          \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T));                                             \
  const int64_t ih = g->id[1], iw = g->id[2], oh = g->od[1], ow = g->od[2];                        \
  const int64_t sh = g->s[1], sw = g->s[2];                                                        \
  VT s[9], z;                                                                                      \
  int64_t o, p, l, run = 0;                                                                        \
  int t;                                                                                           \
  memset(&z, 0, sizeof(VT));                                                                       \
  for (t = 0; t < 9; t++) s[t] = z;                                                                \
  for (o = 0; o < oh; o++) {                                                                       \
    const int64_t i0 = o * sh - g->p[1];                                                           \
    const int rows_in = i0 >= 0 && i0 + 2 < ih;                                                    \
    for (p = 0; p < ow; p++) {                                                                     \
      const int64_t j0 = p * sw - g->p[2];                                                         \
      VT d;                                                                                        \
      int kh;                                                                                      \
      memcpy(&d, yb + (o * ow + p) * L, sizeof(VT));                                               \
      if (rows_in && j0 >= 0 && j0 + 2 < iw) {                                                     \
        const T *r = xb + (i0 * iw + j0) * L;                                                      \
        for (kh = 0; kh < 3; kh++, r += iw * L) {                                                  \
          VT a, b, e;                                                                              \
          memcpy(&a, r, sizeof(VT));                                                               \
          memcpy(&b, r + L, sizeof(VT));                                                           \
          memcpy(&e, r + 2 * L, sizeof(VT));                                                       \
          s[3 * kh] += d * a;                                                                      \
          s[3 * kh + 1] += d * b;                                                                  \
          s[3 * kh + 2] += d * e;                                                                  \
        }                                                                                          \
      } else { /* taps outside the input add d * 0 */                                             \
        for (kh = 0; kh < 3; kh++) {                                                               \
          const int64_t i = i0 + kh;                                                               \
          const T *r;                                                                              \
          VT a = z, b = z, e = z;                                                                  \
          if (i < 0 || i >= ih) continue;                                                          \
          r = xb + (i * iw + j0) * L;                                                              \
          if (j0 >= 0 && j0 < iw) memcpy(&a, r, sizeof(VT));                                       \
          if (j0 + 1 >= 0 && j0 + 1 < iw) memcpy(&b, r + L, sizeof(VT));                           \
          if (j0 + 2 >= 0 && j0 + 2 < iw) memcpy(&e, r + 2 * L, sizeof(VT));                       \
          s[3 * kh] += d * a;                                                                      \
          s[3 * kh + 1] += d * b;                                                                  \
          s[3 * kh + 2] += d * e;                                                                  \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    run += ow;                                                                                     \
    /* float sums of at most ~MXC_CONVDW_RUN positions, then double */                             \
    if (run >= MXC_CONVDW_RUN || o == oh - 1) {                                                    \
      T part[9 * sizeof(VT) / sizeof(T)];                                                          \
      for (t = 0; t < 9; t++) {                                                                    \
        memcpy(part + t * L, &s[t], sizeof(VT));                                                   \
        s[t] = z;                                                                                  \
      }                                                                                            \
      for (l = 0; l < 9 * L; l++) acc[l] += (double)part[l];                                       \
      run = 0;                                                                                     \
    }                                                                                              \
  }                                                                                                \
}

/* output positions summed in float before the weight gradient's double sums */
#define MXC_CONVDW_RUN 256

typedef float mxc_convdw_v16f __attribute__((vector_size(64)));
typedef double mxc_convdw_v8d __attribute__((vector_size(64)));

typedef int32_t mxc_convdw_v16i __attribute__((vector_size(64)));
typedef int64_t mxc_convdw_v8l __attribute__((vector_size(64)));

/* two-vector shuffles: GCC's builtin; elsewhere the pack loops move one element at a time */
#if defined(__GNUC__) && !defined(__clang__)
#define MXC_CONVDW_TILES 1
#define MXC_CONVDW_SHUFFLE(a, b, m) __builtin_shuffle(a, b, m)
#else
#define MXC_CONVDW_TILES 0
#define MXC_CONVDW_SHUFFLE(a, b, m) (a)
#endif

#ifdef MXC_WINO
#define MXC_CONVDW_LOOPS(T, VT, MT, SUF)                                                           \
  MXC_CONVDW_LOOPS_DEFINE(T, VT, MT, SUF, , )                                                      \
  MXC_CONVDW_LOOPS_DEFINE(T, VT, MT, SUF, 2, MXC_WT)                                               \
  MXC_CONVDW_LOOPS_DEFINE(T, VT, MT, SUF, 3, __attribute__((target("avx512f"))))
#define MXC_CONVDW_CALL(isa, name, SUF, args)                                                      \
  do {                                                                                             \
    if ((isa) == 2) name##SUF##3 args;                                                             \
    else if ((isa) == 1) name##SUF##2 args;                                                        \
    else name##SUF args;                                                                           \
  } while (0)
#else
#define MXC_CONVDW_LOOPS(T, VT, MT, SUF) MXC_CONVDW_LOOPS_DEFINE(T, VT, MT, SUF, , )
#define MXC_CONVDW_CALL(isa, name, SUF, args) name##SUF args
#endif

#define MXC_CONV_DEPTHWISE_DEFINE(T, VT, MT, SUF)                                                  \
MXC_CONVDW_LOOPS(T, VT, MT, SUF)                                                                   \
/* wb = the 9 taps' weights of channels c0.., lane by lane (zero past cb); bb = their bias */      \
static void mxc_convdw_weights_##SUF(T *wb, T *bb, const T *w, const T *bias, int64_t c0,          \
                                     int64_t cb) {                                                 \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T));                                             \
  int64_t c, t;                                                                                    \
  memset(wb, 0, sizeof(T) * (size_t)(10 * L));                                                     \
  for (c = 0; c < cb; c++) {                                                                       \
    for (t = 0; t < 9; t++) wb[t * L + c] = w[(c0 + c) * 9 + t];                                   \
    if (bias) bb[c] = bias[c0 + c];                                                                \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* Y = depthwise convolution of X (+ bias) */                                                      \
static void mxc_convdw_forward_##SUF(const T *x, const T *w, T *y, const mxc_conv_geom *g,         \
                                     const T *bias, T *buf, int nt, int64_t n0, int64_t n1) {      \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T)), nblk = (g->co + L - 1) / L;                 \
  const int64_t items = (n1 - n0) * nblk, per = mxc_convdw_per(g, sizeof(T));                      \
  const int isa = mxc_convdw_isa();                                                                \
  int64_t it;                                                                                      \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (items * g->osz * L > 32768))      \
  for (it = 0; it < items; it++) {                                                                 \
    const int64_t n = n0 + it / nblk, c0 = (it % nblk) * L;                                        \
    const int64_t cb = g->co - c0 < L ? g->co - c0 : L;                                            \
    T *xb = buf + MXC_TID() * per, *wb = xb + (g->isz + g->osz) * L, *bb = wb + 9 * L;             \
    mxc_convdw_weights_##SUF(wb, bb, w, bias, c0, cb);                                             \
    T *yb = xb + g->isz * L;                                                                       \
    MXC_CONVDW_CALL(isa, mxc_convdw_pack_, SUF, (xb, (T *)x + (n * g->ci + c0) * g->isz, g->isz,   \
                                                 cb, 0));                                          \
    MXC_CONVDW_CALL(isa, mxc_convdw_fwd_blk_, SUF, (xb, wb, bb, yb, g));                           \
    MXC_CONVDW_CALL(isa, mxc_convdw_pack_, SUF, (yb, y + (n * g->co + c0) * g->osz, g->osz, cb,    \
                                                 1));                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* dX = the adjoint of the forward applied to dY (dX is overwritten) */                            \
static void mxc_convdw_bwd_data_##SUF(const T *dy, const T *w, T *dx, const mxc_conv_geom *g,      \
                                      T *buf, int nt, int64_t n0, int64_t n1) {                    \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T)), nblk = (g->ci + L - 1) / L;                 \
  const int64_t items = (n1 - n0) * nblk, per = mxc_convdw_per(g, sizeof(T));                      \
  const int isa = mxc_convdw_isa();                                                                \
  int64_t it;                                                                                      \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (items * g->osz * L > 32768))      \
  for (it = 0; it < items; it++) {                                                                 \
    const int64_t n = n0 + it / nblk, c0 = (it % nblk) * L;                                        \
    const int64_t cb = g->ci - c0 < L ? g->ci - c0 : L;                                            \
    T *xb = buf + MXC_TID() * per, *yb = xb + g->isz * L, *wb = yb + g->osz * L, *bb = wb + 9 * L; \
    mxc_convdw_weights_##SUF(wb, bb, w, NULL, c0, cb);                                             \
    MXC_CONVDW_CALL(isa, mxc_convdw_pack_, SUF, (yb, (T *)dy + (n * g->co + c0) * g->osz, g->osz,  \
                                                 cb, 0));                                          \
    MXC_CONVDW_CALL(isa, mxc_convdw_bwd_blk_, SUF, (yb, wb, xb, g));                               \
    MXC_CONVDW_CALL(isa, mxc_convdw_pack_, SUF, (xb, dx + (n * g->ci + c0) * g->isz, g->isz, cb,   \
                                                 1));                                              \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* dW = sum over samples and positions of dY times the tap's input (dW is overwritten) */          \
static void mxc_convdw_bwd_weight_##SUF(const T *dy, const T *x, T *dw, const mxc_conv_geom *g,    \
                                        T *buf, int nt, int64_t n0, int64_t n1) {                  \
  const int64_t L = (int64_t)(sizeof(VT) / sizeof(T)), nblk = (g->co + L - 1) / L;                 \
  const int64_t per = mxc_convdw_per(g, sizeof(T));                                                \
  const int isa = mxc_convdw_isa();                                                                \
  int64_t blk;                                                                                     \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static)                                       \
           if ((n1 - n0) * nblk * g->osz * L > 32768))                                             \
  for (blk = 0; blk < nblk; blk++) {                                                               \
    const int64_t c0 = blk * L, cb = g->co - c0 < L ? g->co - c0 : L;                              \
    T *xb = buf + MXC_TID() * per, *yb = xb + g->isz * L;                                          \
    /* after the weights and bias slots: whole 64-byte vectors, aligned for double */              \
    double *acc = (double *)(void *)(yb + (g->osz + 10) * L);                                      \
    int64_t n, c, t;                                                                               \
    for (t = 0; t < 9 * L; t++) acc[t] = 0;                                                        \
    for (n = n0; n < n1; n++) {                                                                    \
      MXC_CONVDW_CALL(isa, mxc_convdw_pack_, SUF, (xb, (T *)x + (n * g->ci + c0) * g->isz, g->isz, \
                                                   cb, 0));                                        \
      MXC_CONVDW_CALL(isa, mxc_convdw_pack_, SUF, (yb, (T *)dy + (n * g->co + c0) * g->osz,        \
                                                   g->osz, cb, 0));                                \
      MXC_CONVDW_CALL(isa, mxc_convdw_wgt_blk_, SUF, (xb, yb, acc, g));                            \
    }                                                                                              \
    for (c = 0; c < cb; c++)                                                                       \
      for (t = 0; t < 9; t++) dw[(c0 + c) * 9 + t] = (T)acc[t * L + c];                            \
  }                                                                                                \
}                                                                                                  \
                                                                                                   \
/* mxc_conv_part for depthwise 3x3 problems (see mxc_conv_part for the roles of a, a2, o0, o1) */  \
static void mxc_convdw_part_##SUF(int mode, const mxc_conv_geom *g, const T *a, const T *a2,       \
                                  const T *w, const T *b, T *o0, T *o1, T *buf, int nt,            \
                                  int64_t n0, int64_t n1) {                                        \
  switch (mode) {                                                                                  \
  case MXC_CONV_FWD:                                                                               \
    mxc_convdw_forward_##SUF(a, w, o0, g, b, buf, nt, n0, n1);                                     \
    break;                                                                                         \
  case MXC_CONV_BWD:                                                                               \
    if (o0) mxc_convdw_bwd_data_##SUF(a, w, o0, g, buf, nt, n0, n1);                               \
    mxc_convdw_bwd_weight_##SUF(a, a2, o1, g, buf, nt, n0, n1);                                    \
    break;                                                                                         \
  case MXC_DECONV_FWD:                                                                             \
    mxc_convdw_bwd_data_##SUF(a, w, o0, g, buf, nt, n0, n1);                                       \
    break;                                                                                         \
  default:                                                                                         \
    if (o0) mxc_convdw_forward_##SUF(a, w, o0, g, NULL, buf, nt, n0, n1);                          \
    mxc_convdw_bwd_weight_##SUF(a2, a, o1, g, buf, nt, n0, n1);                                    \
    break;                                                                                         \
  }                                                                                                \
}

#endif
