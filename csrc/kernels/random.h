/* Random number kernels of mxc/ops/cpu/random.pyx (and Dropout's, mxc/ops/dropout.py).
 *
 * Generator: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
 * a counter-based generator: block = philox(counter, key) gives 4 independent uint32 words, and
 * any block can be computed on its own. So a kernel splits its output among OpenMP threads any
 * way it likes and the numbers depend only on (key, counter): never on the thread count or the
 * chunking.
 *
 * Counter layout (128 bits): the low 64 bits are the "block" counter, reserved by the operator
 * at push time from its context's generator (mxc/_core/resource.pyx: request_random(ctx, n)
 * returns (key, base) and reserves [base, base + n)); the high 64 bits are a sub-stream index
 * that only rejection samplers use (element i of a gamma/poisson draw takes block base + i and
 * walks sub = 0, 1, 2, ... as it needs more words). Two operators never share a block counter,
 * so their numbers are independent.
 *
 * Attributes of every kernel here: iattr[0] = key (64 bits), iattr[1] = base counter.
 * Blocks reserved by an operator (what the Python side must request, see mxc/ops/random.py):
 *   fixed-consumption kernels (uniform, normal, exponential, randint, dropout, bernoulli,
 *   multinomial): ceil(n / 4) for 32-bit element types, ceil(n / 2) for 64-bit ones
 *   (float64, int64); rejection samplers (gamma, poisson, negative binomial, generalized
 *   negative binomial): n; shuffle: ceil(rows / 2); unique_zipfian: rows.
 *
 * Distribution parameters: scalars in fattr[0..1] when the kernel has no inputs (_random_*),
 * else one or two parameter tensors (_sample_*: each output element i uses parameter element
 * i / (out.size / param.size)); parameter tensors of any dtype are converted once to double.
 * Sampling follows MXNet 1.9.1's samplers (src/operator/random/sampler.h): uniform in [low,
 * high), Box-Muller normals, Marsaglia-Tsang gamma (with the alpha < 1 boost), MXNet's Poisson
 * (multiplication below 12, Lorentzian rejection above), negative binomial as a gamma-Poisson
 * mixture. Uniforms are 24-bit (float32/float16) or 53-bit (float64) grids on [0, 1).
 */
#ifndef MXC_KERNELS_RANDOM_H
#define MXC_KERNELS_RANDOM_H
#include "kernels/elemwise_common.h"

/* ---- Philox4x32-10 ---------------------------------------------------------------------- */
typedef struct {
  uint32_t w[4];
} mxc_u32x4;

static inline mxc_u32x4 mxc_philox(uint64_t ctr, uint64_t sub, uint64_t key) {
  uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32);
  uint32_t c2 = (uint32_t)sub, c3 = (uint32_t)(sub >> 32);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  mxc_u32x4 r = {{c0, c1, c2, c3}};
  return r;
}

/* [0, 1) on a 2^-24 grid (float) and a 2^-53 grid (double) */
static inline float mxc_u24(uint32_t x) { return (float)(x >> 8) * 5.9604644775390625e-08f; }
static inline double mxc_u53(uint32_t a, uint32_t b) {
  return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * 1.1102230246251565e-16;
}

#define MXC_TWO_PI 6.283185307179586

/* ---- a per-element stream for rejection samplers ----------------------------------------- */
typedef struct {
  uint64_t key, ctr, sub;
  uint32_t buf[4];
  int pos;
  int has_spare;
  double spare;
} mxc_rstream;

static inline void mxc_rs_init(mxc_rstream *s, uint64_t key, uint64_t ctr) {
  s->key = key;
  s->ctr = ctr;
  s->sub = 0;
  s->pos = 4;
  s->has_spare = 0;
  s->spare = 0.0;
}
static inline uint32_t mxc_rs_next(mxc_rstream *s) {
  if (s->pos == 4) {
    mxc_u32x4 b = mxc_philox(s->ctr, s->sub++, s->key);
    memcpy(s->buf, b.w, sizeof s->buf);
    s->pos = 0;
  }
  return s->buf[s->pos++];
}
static inline double mxc_rs_uniform(mxc_rstream *s) {      /* [0, 1) */
  uint32_t a = mxc_rs_next(s);
  return mxc_u53(a, mxc_rs_next(s));
}
static inline double mxc_rs_normal(mxc_rstream *s) {
  if (s->has_spare) {
    s->has_spare = 0;
    return s->spare;
  }
  double r = sqrt(-2.0 * log(1.0 - mxc_rs_uniform(s)));
  double t = MXC_TWO_PI * mxc_rs_uniform(s);
  s->spare = r * sin(t);
  s->has_spare = 1;
  return r * cos(t);
}

/* log Gamma(x) for x > 0: recurrence up to 10, then Stirling's series (|error| < 1e-12) */
static inline double mxc_lgamma_pos(double x) {
  double s = 0.0;
  while (x < 10.0) {
    s -= log(x);
    x += 1.0;
  }
  double x2 = 1.0 / (x * x);
  return s + (x - 0.5) * log(x) - x + 0.91893853320467274178 +
         (1.0 / x) * (1.0 / 12.0 - x2 * (1.0 / 360.0 - x2 * (1.0 / 1260.0 - x2 / 1680.0)));
}

/* MXNet's SampleGamma (shape a, scale b) */
static inline double mxc_sample_gamma(double a, double b, mxc_rstream *s) {
  double d = a < 1.0 ? a + 2.0 / 3.0 : a - 1.0 / 3.0;
  double k = sqrt(9.0 * d);
  double c = 1.0 / k;
  double sample;
  for (;;) {
    double z = mxc_rs_normal(s);
    if (z > -k) {
      double x = 1.0 + c * z;
      double v = x * x * x;
      if (log(1.0 - mxc_rs_uniform(s)) < 0.5 * z * z + d * (1.0 - v + log(v))) {
        sample = d * v * b;
        break;
      }
    }
  }
  return a < 1.0 ? sample * pow(mxc_rs_uniform(s), 1.0 / a) : sample;
}

/* MXNet's SamplePoisson */
static inline double mxc_sample_poisson(double lambda, mxc_rstream *s) {
  if (!(lambda > 0.0)) return 0.0;
  if (lambda < 12.0) {
    double t = exp(-lambda);
    double x = 0.0;
    for (double prod = mxc_rs_uniform(s); prod > t; prod *= mxc_rs_uniform(s)) x += 1.0;
    return x;
  }
  const double sq = sqrt(2.0 * lambda), loglam = log(lambda);
  const double g = lambda * loglam - mxc_lgamma_pos(lambda + 1.0);
  double em, t, y;
  do {
    do {
      y = tan(3.141592653589793 * mxc_rs_uniform(s));
      em = sq * y + lambda;
    } while (em < 0.0);
    em = floor(em);
    t = 0.9 * (1.0 + y * y) * exp(em * loglam - mxc_lgamma_pos(em + 1.0) - g);
  } while (mxc_rs_uniform(s) > t);
  return em;
}

/* ---- parameters -------------------------------------------------------------------------- */
typedef struct {
  const double *p0, *p1;   /* per-parameter-element values, or NULL: the scalars s0, s1 */
  double s0, s1;
  int64_t nbatch;          /* output elements per parameter element */
} mxc_rparams;

#define MXC_RP0(P, i) ((P)->p0 ? (P)->p0[(i) / (P)->nbatch] : (P)->s0)
#define MXC_RP1(P, i) ((P)->p1 ? (P)->p1[(i) / (P)->nbatch] : (P)->s1)

/* t's elements as doubles into dst (one switch per tensor, not per element); 0 or -1 */
static inline int mxc_load_doubles(const mxc_tensor *t, double *dst) {
  const int64_t n = t->size;
  switch (t->dtype) {
    case MXC_FLOAT32: for (int64_t i = 0; i < n; ++i) dst[i] = ((const float *)t->data)[i]; break;
    case MXC_FLOAT64: for (int64_t i = 0; i < n; ++i) dst[i] = ((const double *)t->data)[i]; break;
    case MXC_FLOAT16:
      for (int64_t i = 0; i < n; ++i) dst[i] = mxc_half_to_float(((const uint16_t *)t->data)[i]);
      break;
    case MXC_UINT8: for (int64_t i = 0; i < n; ++i) dst[i] = ((const uint8_t *)t->data)[i]; break;
    case MXC_INT8: for (int64_t i = 0; i < n; ++i) dst[i] = ((const int8_t *)t->data)[i]; break;
    case MXC_INT32: for (int64_t i = 0; i < n; ++i) dst[i] = ((const int32_t *)t->data)[i]; break;
    case MXC_INT64: for (int64_t i = 0; i < n; ++i) dst[i] = (double)((const int64_t *)t->data)[i]; break;
    case MXC_BOOL: for (int64_t i = 0; i < n; ++i) dst[i] = ((const uint8_t *)t->data)[i]; break;
    default: return -1;
  }
  return 0;
}

/* Fill P from the call: scalars from fattr, or the parameter tensors converted to doubles
 * (one malloc'd buffer, returned in *owned for the caller to free). */
static inline int mxc_rparams_get(mxc_opcall *c, mxc_rparams *P, double **owned) {
  *owned = NULL;
  P->p0 = P->p1 = NULL;
  P->s0 = c->nfattr > 0 ? c->fattr[0] : 0.0;
  P->s1 = c->nfattr > 1 ? c->fattr[1] : 0.0;
  P->nbatch = 1;
  if (c->nin == 0) return 0;
  const int64_t np = c->in[0].size;
  if (np <= 0) return mxc_fail(c, "random kernel: empty parameter array");
  for (int k = 1; k < c->nin; ++k)
    if (c->in[k].size != np) return mxc_fail(c, "random kernel: parameter arrays differ in size");
  double *buf = (double *)malloc((size_t)(np * c->nin) * sizeof(double));
  if (buf == NULL) return mxc_fail(c, "random kernel: out of memory");
  for (int k = 0; k < c->nin && k < 2; ++k) {
    if (mxc_load_doubles(&c->in[k], buf + k * np) != 0) {
      free(buf);
      return mxc_fail(c, "random kernel: unsupported parameter dtype");
    }
  }
  P->p0 = buf;
  P->p1 = c->nin > 1 ? buf + np : NULL;
  P->nbatch = c->out[0].size / np;
  if (P->nbatch < 1) P->nbatch = 1;
  *owned = buf;
  return 0;
}

/* ---- fixed-consumption kernels ------------------------------------------------------------
 * Block j yields E outputs (E = 4 for 32-bit element types, 2 for 64-bit ones): out[j*E + t].
 * The driver splits the blocks among threads. */
typedef struct {
  void *y;
  int64_t n;
  uint64_t key, base;
  mxc_rparams P;
  int64_t ilow;         /* randint: low and high - low, exact */
  uint64_t irange;
} mxc_rctx;

#define MXC_RAND_MIN_PAR ((int64_t)4096)   /* blocks: ~16K float outputs */

/* BODY32(out index i, word x) for 32-bit-word consumers; out elements of storage type T */
#define MXC_RAND_W32(fname, T, STMT)                                                           \
  static void fname##_body(void *p, int64_t lo, int64_t hi) {                                 \
    mxc_rctx *u = (mxc_rctx *)p;                                                               \
    T *y = (T *)u->y;                                                                          \
    const mxc_rparams *P = &u->P;                                                              \
    (void)P;                                                                                   \
    for (int64_t j = lo; j < hi; ++j) {                                                        \
      mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);                           \
      int64_t i0 = j * 4;                                                                      \
      int tn = u->n - i0 < 4 ? (int)(u->n - i0) : 4;                                           \
      for (int t = 0; t < tn; ++t) {                                                           \
        const int64_t i = i0 + t;                                                              \
        const uint32_t x = blk.w[t];                                                           \
        STMT;                                                                                  \
      }                                                                                        \
    }                                                                                          \
  }

/* two 32-bit words (x0, x1) per output: 2 outputs per block */
#define MXC_RAND_W64(fname, T, STMT)                                                           \
  static void fname##_body(void *p, int64_t lo, int64_t hi) {                                 \
    mxc_rctx *u = (mxc_rctx *)p;                                                               \
    T *y = (T *)u->y;                                                                          \
    const mxc_rparams *P = &u->P;                                                              \
    (void)P;                                                                                   \
    for (int64_t j = lo; j < hi; ++j) {                                                        \
      mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);                           \
      int64_t i0 = j * 2;                                                                      \
      int tn = u->n - i0 < 2 ? (int)(u->n - i0) : 2;                                           \
      for (int t = 0; t < tn; ++t) {                                                           \
        const int64_t i = i0 + t;                                                              \
        const uint32_t x0 = blk.w[2 * t], x1 = blk.w[2 * t + 1];                              \
        STMT;                                                                                  \
      }                                                                                        \
    }                                                                                          \
  }

/* Box-Muller pairs: 4 outputs per block (float) or 2 (double) */
#define MXC_RAND_NORMAL_F(fname, T, STORE)                                                     \
  static void fname##_body(void *p, int64_t lo, int64_t hi) {                                 \
    mxc_rctx *u = (mxc_rctx *)p;                                                               \
    T *y = (T *)u->y;                                                                          \
    const mxc_rparams *P = &u->P;                                                              \
    for (int64_t j = lo; j < hi; ++j) {                                                        \
      mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);                           \
      float z[4];                                                                              \
      for (int h = 0; h < 2; ++h) {                                                            \
        float r = sqrtf(-2.0f * logf(1.0f - mxc_u24(blk.w[2 * h])));                           \
        float th = 6.2831853071795865f * mxc_u24(blk.w[2 * h + 1]);                            \
        z[2 * h] = r * cosf(th);                                                               \
        z[2 * h + 1] = r * sinf(th);                                                           \
      }                                                                                        \
      int64_t i0 = j * 4;                                                                      \
      int tn = u->n - i0 < 4 ? (int)(u->n - i0) : 4;                                           \
      for (int t = 0; t < tn; ++t) {                                                           \
        const int64_t i = i0 + t;                                                              \
        y[i] = STORE((double)z[t] * MXC_RP1(P, i) + MXC_RP0(P, i));                            \
      }                                                                                        \
    }                                                                                          \
  }

static void mxc_rand_normal_f64_body(void *p, int64_t lo, int64_t hi) {
  mxc_rctx *u = (mxc_rctx *)p;
  double *y = (double *)u->y;
  const mxc_rparams *P = &u->P;
  for (int64_t j = lo; j < hi; ++j) {
    mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);
    double r = sqrt(-2.0 * log(1.0 - mxc_u53(blk.w[0], blk.w[1])));
    double th = MXC_TWO_PI * mxc_u53(blk.w[2], blk.w[3]);
    double z[2] = {r * cos(th), r * sin(th)};
    int64_t i0 = j * 2;
    int tn = u->n - i0 < 2 ? (int)(u->n - i0) : 2;
    for (int t = 0; t < tn; ++t) {
      const int64_t i = i0 + t;
      y[i] = z[t] * MXC_RP1(P, i) + MXC_RP0(P, i);
    }
  }
}

#define MXC_ST_f16(v) mxc_float_to_half((float)(v))
#define MXC_ST_f32(v) ((float)(v))
#define MXC_ST_f64(v) ((double)(v))

/* uniform: P0 = low, P1 = high */
#define MXC_UNIFORM_STMT32(tag) y[i] = MXC_ST_##tag(MXC_RP0(P, i) + (MXC_RP1(P, i) - MXC_RP0(P, i)) * (double)mxc_u24(x))
MXC_RAND_W32(mxc_rand_uniform_f16, uint16_t, MXC_UNIFORM_STMT32(f16))
MXC_RAND_W32(mxc_rand_uniform_f32, float, MXC_UNIFORM_STMT32(f32))
MXC_RAND_W64(mxc_rand_uniform_f64, double,
             y[i] = MXC_RP0(P, i) + (MXC_RP1(P, i) - MXC_RP0(P, i)) * mxc_u53(x0, x1))

/* normal: P0 = loc, P1 = scale */
MXC_RAND_NORMAL_F(mxc_rand_normal_f16, uint16_t, MXC_ST_f16)
MXC_RAND_NORMAL_F(mxc_rand_normal_f32, float, MXC_ST_f32)

/* exponential: P0 = lambda (rate) */
#define MXC_EXP_STMT32(tag) y[i] = MXC_ST_##tag(-(double)logf(1.0f - mxc_u24(x)) / MXC_RP0(P, i))
MXC_RAND_W32(mxc_rand_exponential_f16, uint16_t, MXC_EXP_STMT32(f16))
MXC_RAND_W32(mxc_rand_exponential_f32, float, MXC_EXP_STMT32(f32))
MXC_RAND_W64(mxc_rand_exponential_f64, double, y[i] = -log(1.0 - mxc_u53(x0, x1)) / MXC_RP0(P, i))

/* randint: out = low + (random % (high - low)); 32-bit outputs use a multiply-shift instead of % */
static void mxc_rand_randint_i32_body(void *p, int64_t lo, int64_t hi) {
  mxc_rctx *u = (mxc_rctx *)p;
  int32_t *y = (int32_t *)u->y;
  const int64_t low = u->ilow;
  const uint64_t range = u->irange;
  for (int64_t j = lo; j < hi; ++j) {
    mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);
    int64_t i0 = j * 4;
    int tn = u->n - i0 < 4 ? (int)(u->n - i0) : 4;
    for (int t = 0; t < tn; ++t)
      y[i0 + t] = (int32_t)(low + (int64_t)(((uint64_t)blk.w[t] * range) >> 32));
  }
}
static void mxc_rand_randint_i64_body(void *p, int64_t lo, int64_t hi) {
  mxc_rctx *u = (mxc_rctx *)p;
  int64_t *y = (int64_t *)u->y;
  const int64_t low = u->ilow;
  const uint64_t range = u->irange;
  for (int64_t j = lo; j < hi; ++j) {
    mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);
    int64_t i0 = j * 2;
    int tn = u->n - i0 < 2 ? (int)(u->n - i0) : 2;
    for (int t = 0; t < tn; ++t) {
      uint64_t r = ((uint64_t)blk.w[2 * t] << 32) | blk.w[2 * t + 1];
      y[i0 + t] = range ? (int64_t)((uint64_t)low + r % range) : low;
    }
  }
}

/* Run a fixed-consumption body over the output: E outputs per block */
static inline int mxc_rand_run(mxc_opcall *c, mxc_range_fn body, int E, int params) {
  if (c->nout < 1 || c->niattr < 2) return mxc_fail(c, "random kernel: needs an output and key, counter");
  mxc_rctx u;
  u.y = c->out[0].data;
  u.n = c->out[0].size;
  u.key = (uint64_t)c->iattr[0];
  u.base = (uint64_t)c->iattr[1];
  u.ilow = 0;
  u.irange = 0;
  double *owned = NULL;
  if (params) {
    if (mxc_rparams_get(c, &u.P, &owned) != 0) return -1;
  } else {
    memset(&u.P, 0, sizeof u.P);
    u.P.nbatch = 1;
  }
  if (u.n > 0) mxc_parallel_range((u.n + E - 1) / E, c->nthreads, MXC_RAND_MIN_PAR, body, &u);
  free(owned);
  return 0;
}

#define MXC_RAND_KERNEL(name, tag, E)                                                          \
  static int mxc_k_##name##_##tag(mxc_opcall *c) {                                             \
    return mxc_rand_run(c, mxc_rand_##name##_##tag##_body, E, 1);                              \
  }
MXC_RAND_KERNEL(uniform, f16, 4)
MXC_RAND_KERNEL(uniform, f32, 4)
MXC_RAND_KERNEL(uniform, f64, 2)
MXC_RAND_KERNEL(normal, f16, 4)
MXC_RAND_KERNEL(normal, f32, 4)
MXC_RAND_KERNEL(normal, f64, 2)
MXC_RAND_KERNEL(exponential, f16, 4)
MXC_RAND_KERNEL(exponential, f32, 4)
MXC_RAND_KERNEL(exponential, f64, 2)

/* randint: iattr[2] = low, iattr[3] = high (high >= low, checked in Python) */
static int mxc_randint_common(mxc_opcall *c, mxc_range_fn body, int E) {
  if (c->nout < 1 || c->niattr < 4) return mxc_fail(c, "randint kernel: needs key, counter, low, high");
  mxc_rctx u;
  u.y = c->out[0].data;
  u.n = c->out[0].size;
  u.key = (uint64_t)c->iattr[0];
  u.base = (uint64_t)c->iattr[1];
  memset(&u.P, 0, sizeof u.P);
  u.ilow = c->iattr[2];
  u.irange = (uint64_t)c->iattr[3] - (uint64_t)c->iattr[2];
  if (u.n > 0) mxc_parallel_range((u.n + E - 1) / E, c->nthreads, MXC_RAND_MIN_PAR, body, &u);
  return 0;
}
static int mxc_k_randint_i32(mxc_opcall *c) { return mxc_randint_common(c, mxc_rand_randint_i32_body, 4); }
static int mxc_k_randint_i64(mxc_opcall *c) { return mxc_randint_common(c, mxc_rand_randint_i64_body, 2); }

/* ---- rejection samplers: one block counter per output element ----------------------------- */
typedef double (*mxc_rsampler)(const mxc_rparams *P, int64_t i, mxc_rstream *s);

static double mxc_rs_gamma(const mxc_rparams *P, int64_t i, mxc_rstream *s) {
  return mxc_sample_gamma(MXC_RP0(P, i), MXC_RP1(P, i), s);
}
static double mxc_rs_poisson(const mxc_rparams *P, int64_t i, mxc_rstream *s) {
  return mxc_sample_poisson(MXC_RP0(P, i), s);
}
static double mxc_rs_negbin(const mxc_rparams *P, int64_t i, mxc_rstream *s) {
  double k = MXC_RP0(P, i), prob = MXC_RP1(P, i);
  double lam = mxc_sample_gamma(k, (1.0 - prob) / prob, s);
  return mxc_sample_poisson(lam, s);
}
static double mxc_rs_gennegbin(const mxc_rparams *P, int64_t i, mxc_rstream *s) {
  double mu = MXC_RP0(P, i), alpha = MXC_RP1(P, i);
  double lam = alpha == 0.0 ? mu : mxc_sample_gamma(1.0 / alpha, alpha * mu, s);
  return mxc_sample_poisson(lam, s);
}

typedef struct {
  void *y;
  int dtype;
  uint64_t key, base;
  mxc_rparams P;
  mxc_rsampler f;
} mxc_rjctx;

static void mxc_rj_body(void *p, int64_t lo, int64_t hi) {
  mxc_rjctx *u = (mxc_rjctx *)p;
  mxc_rstream s;
  switch (u->dtype) {
    case MXC_FLOAT32: {
      float *y = (float *)u->y;
      for (int64_t i = lo; i < hi; ++i) {
        mxc_rs_init(&s, u->key, u->base + (uint64_t)i);
        y[i] = (float)u->f(&u->P, i, &s);
      }
      break;
    }
    case MXC_FLOAT64: {
      double *y = (double *)u->y;
      for (int64_t i = lo; i < hi; ++i) {
        mxc_rs_init(&s, u->key, u->base + (uint64_t)i);
        y[i] = u->f(&u->P, i, &s);
      }
      break;
    }
    default: {
      uint16_t *y = (uint16_t *)u->y;
      for (int64_t i = lo; i < hi; ++i) {
        mxc_rs_init(&s, u->key, u->base + (uint64_t)i);
        y[i] = mxc_float_to_half((float)u->f(&u->P, i, &s));
      }
      break;
    }
  }
}

static inline int mxc_rj_run(mxc_opcall *c, mxc_rsampler f) {
  if (c->nout < 1 || c->niattr < 2) return mxc_fail(c, "random kernel: needs an output and key, counter");
  mxc_rjctx u;
  u.y = c->out[0].data;
  u.dtype = c->out[0].dtype;
  u.key = (uint64_t)c->iattr[0];
  u.base = (uint64_t)c->iattr[1];
  u.f = f;
  double *owned = NULL;
  if (mxc_rparams_get(c, &u.P, &owned) != 0) return -1;
  mxc_parallel_range(c->out[0].size, c->nthreads, 256, mxc_rj_body, &u);
  free(owned);
  return 0;
}
static int mxc_k_gamma(mxc_opcall *c) { return mxc_rj_run(c, mxc_rs_gamma); }
static int mxc_k_poisson(mxc_opcall *c) { return mxc_rj_run(c, mxc_rs_poisson); }
static int mxc_k_negbin(mxc_opcall *c) { return mxc_rj_run(c, mxc_rs_negbin); }
static int mxc_k_gennegbin(mxc_opcall *c) { return mxc_rj_run(c, mxc_rs_gennegbin); }

/* ---- multinomial ---------------------------------------------------------------------------
 * in[0] = probabilities (N, K) (float16/32/64); out[0] = samples (N * M, any of uint8, int32,
 * float16/32/64); out[1] (optional) = log probability of each sample, in the input dtype.
 * Sample s = i * M + j takes word s % 4 of block base + s / 4. An index past the cumulative sum
 * (probabilities summing to less than the uniform draw) becomes the last category with a
 * non-zero probability (MXNet reads past the row there). */
static inline void mxc_store_d(void *base, int dtype, int64_t i, double v) {
  switch (dtype) {
    case MXC_FLOAT32: ((float *)base)[i] = (float)v; break;
    case MXC_FLOAT64: ((double *)base)[i] = v; break;
    case MXC_FLOAT16: ((uint16_t *)base)[i] = mxc_float_to_half((float)v); break;
    case MXC_UINT8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case MXC_INT32: ((int32_t *)base)[i] = (int32_t)v; break;
    case MXC_INT64: ((int64_t *)base)[i] = (int64_t)v; break;
    default: break;
  }
}
static inline double mxc_load_d(const void *base, int dtype, int64_t i) {
  switch (dtype) {
    case MXC_FLOAT32: return ((const float *)base)[i];
    case MXC_FLOAT64: return ((const double *)base)[i];
    case MXC_FLOAT16: return mxc_half_to_float(((const uint16_t *)base)[i]);
    case MXC_UINT8: return ((const uint8_t *)base)[i];
    case MXC_INT32: return ((const int32_t *)base)[i];
    case MXC_INT64: return (double)((const int64_t *)base)[i];
    default: return 0.0;
  }
}

typedef struct {
  mxc_opcall *c;
  int64_t K, M;
  uint64_t key, base;
  int failed;
} mxc_mnctx;

static void mxc_mn_body(void *p, int64_t lo, int64_t hi) {
  mxc_mnctx *u = (mxc_mnctx *)p;
  const mxc_tensor *D = &u->c->in[0], *S = &u->c->out[0];
  const mxc_tensor *L = u->c->nout > 1 ? &u->c->out[1] : NULL;
  const int64_t K = u->K, M = u->M;
  double *cum = (double *)malloc((size_t)K * sizeof(double));
  if (cum == NULL) {
    u->failed = 1;
    return;
  }
  for (int64_t i = lo; i < hi; ++i) {
    double acc = 0.0;
    int64_t last = 0;
    for (int64_t k = 0; k < K; ++k) {
      double pk = mxc_load_d(D->data, D->dtype, i * K + k);
      if (pk > 0) last = k;
      acc += pk;
      cum[k] = acc;
    }
    uint64_t cur = UINT64_MAX;
    mxc_u32x4 blk = {{0, 0, 0, 0}};
    for (int64_t j = 0; j < M; ++j) {
      const int64_t s = i * M + j;
      if ((uint64_t)(s / 4) != cur) {
        cur = (uint64_t)(s / 4);
        blk = mxc_philox(u->base + cur, 0, u->key);
      }
      const double loc = (double)mxc_u24(blk.w[s % 4]);
      int64_t left = 0, right = K;
      while (right > left) {
        int64_t mid = left + (right - left) / 2;
        if (cum[mid] < loc) left = mid + 1; else right = mid;
      }
      if (left >= K) left = last;
      mxc_store_d(S->data, S->dtype, s, (double)left);
      if (L) mxc_store_d(L->data, L->dtype, s, log(mxc_load_d(D->data, D->dtype, i * K + left)));
    }
  }
  free(cum);
}

static int mxc_k_multinomial(mxc_opcall *c) {
  if (c->nin != 1 || c->nout < 1 || c->niattr < 2)
    return mxc_fail(c, "multinomial kernel: needs probabilities, samples and key, counter");
  const mxc_tensor *D = &c->in[0];
  mxc_mnctx u;
  u.c = c;
  u.K = D->ndim ? D->shape[D->ndim - 1] : 1;
  const int64_t N = u.K ? D->size / u.K : 0;
  if (N == 0 || u.K == 0) return 0;
  u.M = c->out[0].size / N;
  u.key = (uint64_t)c->iattr[0];
  u.base = (uint64_t)c->iattr[1];
  u.failed = 0;
  mxc_parallel_range(N, c->nthreads, (int64_t)(16384 / (u.M + u.K) + 1), mxc_mn_body, &u);
  if (u.failed) return mxc_fail(c, "multinomial kernel: out of memory");
  return 0;
}

/* _backward_sample_multinomial: in[0] = gradient of the log probabilities (N * M), in[1] =
 * probabilities (N, K), in[2] = samples (N * M); out[0] = gradient of the probabilities:
 * igrad[i, s] += g / p[i, s] for every sample s of row i (zero elsewhere). */
typedef struct {
  mxc_opcall *c;
  int64_t K, M;
} mxc_mnbctx;

static void mxc_mnb_body(void *p, int64_t lo, int64_t hi) {
  mxc_mnbctx *u = (mxc_mnbctx *)p;
  const mxc_tensor *G = &u->c->in[0], *D = &u->c->in[1], *S = &u->c->in[2], *O = &u->c->out[0];
  const int64_t K = u->K, M = u->M;
  for (int64_t i = lo; i < hi; ++i) {
    for (int64_t k = 0; k < K; ++k) mxc_store_d(O->data, O->dtype, i * K + k, 0.0);
    for (int64_t j = 0; j < M; ++j) {
      int64_t k = (int64_t)mxc_load_d(S->data, S->dtype, i * M + j);
      if (k < 0 || k >= K) continue;
      double g = mxc_load_d(G->data, G->dtype, i * M + j) / mxc_load_d(D->data, D->dtype, i * K + k);
      mxc_store_d(O->data, O->dtype, i * K + k, mxc_load_d(O->data, O->dtype, i * K + k) + g);
    }
  }
}

static int mxc_k_multinomial_backward(mxc_opcall *c) {
  if (c->nin != 3 || c->nout != 1)
    return mxc_fail(c, "multinomial backward kernel: needs (grad, probabilities, samples) -> grad");
  const mxc_tensor *D = &c->in[1];
  mxc_mnbctx u;
  u.c = c;
  u.K = D->ndim ? D->shape[D->ndim - 1] : 1;
  const int64_t N = u.K ? D->size / u.K : 0;
  if (N == 0) return 0;
  u.M = c->in[2].size / N;
  mxc_parallel_range(N, c->nthreads, (int64_t)(65536 / (u.M + u.K) + 1), mxc_mnb_body, &u);
  return 0;
}

/* ---- shuffle: rows (axis 0) permuted by Fisher-Yates; step t takes 64 bits: words 2(t%2),
 * 2(t%2)+1 of block base + t/2. The permutation is drawn on one thread, rows copied on all. -- */
typedef struct {
  const char *x;
  char *y;
  const int64_t *perm;
  size_t rowbytes;
} mxc_shctx;

static void mxc_sh_body(void *p, int64_t lo, int64_t hi) {
  mxc_shctx *u = (mxc_shctx *)p;
  for (int64_t i = lo; i < hi; ++i)
    memcpy(u->y + (size_t)i * u->rowbytes, u->x + (size_t)u->perm[i] * u->rowbytes, u->rowbytes);
}

static int mxc_k_shuffle(mxc_opcall *c) {
  if (c->nin != 1 || c->nout != 1 || c->niattr < 2)
    return mxc_fail(c, "shuffle kernel: needs one input, one output and key, counter");
  const mxc_tensor *X = &c->in[0];
  const int64_t n = X->ndim ? X->shape[0] : 1;
  if (X->size == 0 || n == 0) return 0;
  const size_t itemsize = X->dtype == MXC_FLOAT64 || X->dtype == MXC_INT64 ? 8
                          : X->dtype == MXC_FLOAT32 || X->dtype == MXC_INT32 ? 4
                          : X->dtype == MXC_FLOAT16 ? 2 : 1;
  int64_t *perm = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  if (perm == NULL) return mxc_fail(c, "shuffle kernel: out of memory");
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  const uint64_t key = (uint64_t)c->iattr[0], base = (uint64_t)c->iattr[1];
  mxc_u32x4 blk = {{0, 0, 0, 0}};
  for (int64_t t = 0, i = n - 1; i > 0; ++t, --i) {
    if ((t & 1) == 0) blk = mxc_philox(base + (uint64_t)(t / 2), 0, key);
    uint64_t r = ((uint64_t)blk.w[2 * (t & 1)] << 32) | blk.w[2 * (t & 1) + 1];
    int64_t j = (int64_t)(r % (uint64_t)(i + 1));
    int64_t tmp = perm[i];
    perm[i] = perm[j];
    perm[j] = tmp;
  }
  mxc_shctx u = {(const char *)X->data, (char *)c->out[0].data, perm,
                 (size_t)(X->size / n) * itemsize};
  mxc_parallel_range(n, c->nthreads, u.rowbytes >= 4096 ? 2 : 65536, mxc_sh_body, &u);
  free(perm);
  return 0;
}

/* ---- unique_zipfian: MXNet's _sample_unique_zipfian. Row i of out[0] (B, S) takes S distinct
 * classes from the approximately log-uniform distribution over [0, range_max) (value =
 * lround(exp(u log range_max)) - 1, u uniform in [0, 1), as MXNet), drawing until S are
 * distinct, the draws counted in out[1][i] (both int64). Row i walks the rejection stream of
 * block base + i, so a row's draws do not depend on the threads. iattr[2] = range_max >= S
 * (checked by the caller). Distinct values are tracked in an open-addressing set of 2^k >= 2S
 * slots per thread. */
typedef struct {
  int64_t *y, *tries;
  int64_t S, range_max;
  uint64_t key, base;
  int failed;
} mxc_uzctx;

static void mxc_uz_body(void *p, int64_t lo, int64_t hi) {
  mxc_uzctx *u = (mxc_uzctx *)p;
  uint64_t cap = 2;
  while (cap < 2 * (uint64_t)u->S) cap <<= 1;
  int64_t *set = (int64_t *)malloc(cap * sizeof(int64_t));
  if (set == NULL) {
    u->failed = 1;      /* a plain store: any thread may set it, only 0 -> 1 */
    return;
  }
  const double log_range = log((double)u->range_max);
  for (int64_t i = lo; i < hi; ++i) {
    for (uint64_t k = 0; k < cap; ++k) set[k] = -1;
    mxc_rstream s;
    mxc_rs_init(&s, u->key, u->base + (uint64_t)i);
    int64_t *row = u->y + i * u->S, n = 0, tries = 0;
    while (n < u->S) {
      const int64_t v = (int64_t)lround(exp(mxc_rs_uniform(&s) * log_range)) - 1;
      ++tries;
      uint64_t h = ((uint64_t)v * 0x9E3779B97F4A7C15ull) & (cap - 1);
      while (set[h] != -1 && set[h] != v) h = (h + 1) & (cap - 1);
      if (set[h] == -1) {
        set[h] = v;
        row[n++] = v;
      }
    }
    u->tries[i] = tries;
  }
  free(set);
}

static int mxc_k_unique_zipfian(mxc_opcall *c) {
  if (c->nout != 2 || c->niattr < 3 || c->out[0].ndim != 2)
    return mxc_fail(c, "unique_zipfian kernel: needs two outputs, key, counter and range_max");
  mxc_uzctx u = {(int64_t *)c->out[0].data, (int64_t *)c->out[1].data, c->out[0].shape[1],
                 c->iattr[2], (uint64_t)c->iattr[0], (uint64_t)c->iattr[1], 0};
  if (u.S > u.range_max || u.range_max < 1)
    return mxc_fail(c, "unique_zipfian kernel: more samples than classes");
  if (u.S == 0) {
    memset(u.tries, 0, (size_t)c->out[1].size * sizeof(int64_t));
    return 0;
  }
  mxc_parallel_range(c->out[0].shape[0], c->nthreads, 2, mxc_uz_body, &u);
  return u.failed ? mxc_fail(c, "unique_zipfian kernel: out of memory") : 0;
}

/* ---- Dropout ------------------------------------------------------------------------------
 * As MXNet 1.9.1's CPU kernel: keep = (uniform <= pkeep), mask = keep * (1.0f / pkeep) (float),
 * out = x * mask. pkeep = 1 - p is fattr[0] (a float32 value); pkeep = 0 gives 0 * inf = nan,
 * as MXNet does.
 * "dropout": in[0] = x, out[0] = y, out[1] = mask (same shape). "bernoulli": out[0] = mask
 * only (variational dropout: the caller multiplies with broadcasting). */
typedef struct {
  const void *x;
  void *y, *m;
  int64_t n;
  uint64_t key, base;
  float pkeep, scale;
} mxc_dropctx;

#define MXC_DROPOUT_FNS(tag, T, LD, ST)                                                        \
  static void mxc_dropout_##tag##_body(void *p, int64_t lo, int64_t hi) {                     \
    mxc_dropctx *u = (mxc_dropctx *)p;                                                         \
    const T *x = (const T *)u->x;                                                          \
    T *y = (T *)u->y, *m = (T *)u->m;                                                          \
    for (int64_t j = lo; j < hi; ++j) {                                                        \
      mxc_u32x4 blk = mxc_philox(u->base + (uint64_t)j, 0, u->key);                           \
      int64_t i0 = j * 4;                                                                      \
      int tn = u->n - i0 < 4 ? (int)(u->n - i0) : 4;                                           \
      for (int t = 0; t < tn; ++t) {                                                           \
        const float keep = mxc_u24(blk.w[t]) <= u->pkeep ? 1.0f : 0.0f;                        \
        const T mv = ST(keep * u->scale);                                                      \
        if (m) m[i0 + t] = mv;                                                                 \
        if (y) y[i0 + t] = ST(LD(x[i0 + t]) * LD(mv));                                         \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
  static int mxc_k_dropout_##tag(mxc_opcall *c) {                                              \
    if (c->niattr < 2 || c->nfattr < 1) return mxc_fail(c, "dropout kernel: needs key, counter, pkeep"); \
    mxc_dropctx u;                                                                             \
    if (c->nin == 1 && c->nout == 2) {                                                         \
      u.x = c->in[0].data;                                                                     \
      u.y = c->out[0].data;                                                                    \
      u.m = c->out[1].data;                                                                    \
    } else if (c->nin == 0 && c->nout == 1) {                                                  \
      u.x = NULL;                                                                              \
      u.y = NULL;                                                                              \
      u.m = c->out[0].data;                                                                    \
    } else {                                                                                   \
      return mxc_fail(c, "dropout kernel: needs x -> (y, mask) or () -> mask");                \
    }                                                                                          \
    u.n = c->out[c->nout - 1].size;                                                            \
    u.key = (uint64_t)c->iattr[0];                                                             \
    u.base = (uint64_t)c->iattr[1];                                                            \
    u.pkeep = (float)c->fattr[0];                                                              \
    u.scale = 1.0f / u.pkeep;                                                                  \
    if (u.n > 0) mxc_parallel_range((u.n + 3) / 4, c->nthreads, MXC_RAND_MIN_PAR,            \
                                    mxc_dropout_##tag##_body, &u);                             \
    return 0;                                                                                  \
  }

#define MXC_LD_id(v) (v)
#define MXC_ST_id(v) (v)
#define MXC_ST_f64d(v) ((double)(v))
#define MXC_LD_h(v) mxc_half_to_float(v)
#define MXC_ST_h(v) mxc_float_to_half((float)(v))
MXC_DROPOUT_FNS(f32, float, MXC_LD_id, MXC_ST_id)
MXC_DROPOUT_FNS(f64, double, MXC_LD_id, MXC_ST_f64d)
MXC_DROPOUT_FNS(f16, uint16_t, MXC_LD_h, MXC_ST_h)

/* ---- raw Philox blocks, for known-answer tests: out[0] = int32 (4 * n), iattr[0] = key,
 * iattr[1] = counter of the first block, iattr[2] = sub-stream -------------------------------- */
static int mxc_k_philox_raw(mxc_opcall *c) {
  if (c->nout != 1 || c->niattr < 3) return mxc_fail(c, "philox kernel: needs key, counter, sub");
  uint32_t *y = (uint32_t *)c->out[0].data;
  for (int64_t j = 0; j * 4 < c->out[0].size; ++j) {
    mxc_u32x4 b = mxc_philox((uint64_t)c->iattr[1] + (uint64_t)j, (uint64_t)c->iattr[2],
                             (uint64_t)c->iattr[0]);
    for (int t = 0; t < 4 && j * 4 + t < c->out[0].size; ++t) y[j * 4 + t] = b.w[t];
  }
  return 0;
}

#define MXC_RF(name, code, fn) {name, code, -1, fn},
static const mxc_kentry mxc_random_table[] = {
    MXC_RF("uniform", MXC_FLOAT16, mxc_k_uniform_f16) MXC_RF("uniform", MXC_FLOAT32, mxc_k_uniform_f32)
    MXC_RF("uniform", MXC_FLOAT64, mxc_k_uniform_f64)
    MXC_RF("normal", MXC_FLOAT16, mxc_k_normal_f16) MXC_RF("normal", MXC_FLOAT32, mxc_k_normal_f32)
    MXC_RF("normal", MXC_FLOAT64, mxc_k_normal_f64)
    MXC_RF("exponential", MXC_FLOAT16, mxc_k_exponential_f16)
    MXC_RF("exponential", MXC_FLOAT32, mxc_k_exponential_f32)
    MXC_RF("exponential", MXC_FLOAT64, mxc_k_exponential_f64)
    MXC_RF("randint", MXC_INT32, mxc_k_randint_i32) MXC_RF("randint", MXC_INT64, mxc_k_randint_i64)
    MXC_RF("gamma", MXC_FLOAT16, mxc_k_gamma) MXC_RF("gamma", MXC_FLOAT32, mxc_k_gamma)
    MXC_RF("gamma", MXC_FLOAT64, mxc_k_gamma)
    MXC_RF("poisson", MXC_FLOAT16, mxc_k_poisson) MXC_RF("poisson", MXC_FLOAT32, mxc_k_poisson)
    MXC_RF("poisson", MXC_FLOAT64, mxc_k_poisson)
    MXC_RF("negative_binomial", MXC_FLOAT16, mxc_k_negbin)
    MXC_RF("negative_binomial", MXC_FLOAT32, mxc_k_negbin)
    MXC_RF("negative_binomial", MXC_FLOAT64, mxc_k_negbin)
    MXC_RF("generalized_negative_binomial", MXC_FLOAT16, mxc_k_gennegbin)
    MXC_RF("generalized_negative_binomial", MXC_FLOAT32, mxc_k_gennegbin)
    MXC_RF("generalized_negative_binomial", MXC_FLOAT64, mxc_k_gennegbin)
    MXC_RF("multinomial", MXC_FLOAT16, mxc_k_multinomial)
    MXC_RF("multinomial", MXC_FLOAT32, mxc_k_multinomial)
    MXC_RF("multinomial", MXC_FLOAT64, mxc_k_multinomial)
    MXC_RF("multinomial_backward", MXC_FLOAT16, mxc_k_multinomial_backward)
    MXC_RF("multinomial_backward", MXC_FLOAT32, mxc_k_multinomial_backward)
    MXC_RF("multinomial_backward", MXC_FLOAT64, mxc_k_multinomial_backward)
    MXC_RF("shuffle", MXC_FLOAT16, mxc_k_shuffle) MXC_RF("shuffle", MXC_FLOAT32, mxc_k_shuffle)
    MXC_RF("shuffle", MXC_FLOAT64, mxc_k_shuffle) MXC_RF("shuffle", MXC_UINT8, mxc_k_shuffle)
    MXC_RF("shuffle", MXC_INT8, mxc_k_shuffle) MXC_RF("shuffle", MXC_INT32, mxc_k_shuffle)
    MXC_RF("shuffle", MXC_INT64, mxc_k_shuffle) MXC_RF("shuffle", MXC_BOOL, mxc_k_shuffle)
    MXC_RF("dropout", MXC_FLOAT16, mxc_k_dropout_f16) MXC_RF("dropout", MXC_FLOAT32, mxc_k_dropout_f32)
    MXC_RF("dropout", MXC_FLOAT64, mxc_k_dropout_f64)
    MXC_RF("philox", MXC_INT32, mxc_k_philox_raw)
    MXC_RF("unique_zipfian", MXC_INT64, mxc_k_unique_zipfian)
    {NULL, 0, 0, NULL}};

#endif
