// Random kernels with the CPU's generator and counter layout (csrc/kernels/random.h): block j of
// the operator's reserved counters gives outputs j*E .. j*E+E-1 (E = 4 for 32-bit outputs, 2 for
// 64-bit ones), through the Philox block shared with the CPU (kernels/hd_math.h). So for the same
// key and counter both devices draw the same uniform bits: uniform, randint, bernoulli and
// dropout masks are identical; normal and exponential agree to the last few ulps of the device's
// log/sin/cos. One thread per block of 4 words.
// Distribution parameters: scalars (p0, p1) or per-parameter-element arrays (P0, P1 in double,
// one value per `nbatch` outputs), as the CPU kernels.
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
MXC_DEV double rparam(const double *P, double s, i64 i, i64 nbatch) {
  return P ? P[i / nbatch] : s;
}
}  // namespace mxc

// dist: 0 uniform(low=p0, high=p1), 1 normal(loc=p0, scale=p1), 2 exponential(lambda=p0)
template <class T, int kDist>
__global__ void mxc_random32(T *y, i64 n, u64 key, u64 base, const double *P0, const double *P1,
                             double p0, double p1, i64 nbatch) {
  MXC_LOOP(j, (n + 3) / 4) {
    const mxc_hd_u32x4 blk = mxc_hd_philox(base + (u64)j, 0, key);
    float z[4];
    if (kDist == 1) {
  #pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float r = sqrtf(-2.0f * logf(1.0f - mxc_hd_u24(blk.w[2 * h])));
        // sincospi(2u) = sincos(2 pi u) without the large-argument reduction of sinf/cosf,
        // whose local array would be the kernel's only stack use
        float sn, cs;
        sincospif(2.0f * mxc_hd_u24(blk.w[2 * h + 1]), &sn, &cs);
        z[2 * h] = r * cs;
        z[2 * h + 1] = r * sn;
      }
    }
    #pragma unroll
    for (int t = 0; t < 4; ++t) {
      const i64 i = j * 4 + t;
      if (i >= n) break;
      const double a = rparam(P0, p0, i, nbatch), b = rparam(P1, p1, i, nbatch);
      double v;
      if (kDist == 0) v = a + (b - a) * (double)mxc_hd_u24(blk.w[t]);
      else if (kDist == 1) v = (double)z[t] * b + a;
      else v = -(double)logf(1.0f - mxc_hd_u24(blk.w[t])) / a;
      y[i] = from_double<T>(v);
    }
  }
}

template <int kDist>
__global__ void mxc_random64(double *y, i64 n, u64 key, u64 base, const double *P0,
                             const double *P1, double p0, double p1, i64 nbatch) {
  MXC_LOOP(j, (n + 1) / 2) {
    const mxc_hd_u32x4 blk = mxc_hd_philox(base + (u64)j, 0, key);
    double z[2];
    if (kDist == 1) {
      const double r = sqrt(-2.0 * log(1.0 - mxc_hd_u53(blk.w[0], blk.w[1])));
      double sn, cs;
      sincospi(2.0 * mxc_hd_u53(blk.w[2], blk.w[3]), &sn, &cs);  // see mxc_random32
      z[0] = r * cs;
      z[1] = r * sn;
    }
    #pragma unroll
    for (int t = 0; t < 2; ++t) {
      const i64 i = j * 2 + t;
      if (i >= n) break;
      const double a = rparam(P0, p0, i, nbatch), b = rparam(P1, p1, i, nbatch);
      const double u = mxc_hd_u53(blk.w[2 * t], blk.w[2 * t + 1]);
      y[i] = kDist == 0 ? a + (b - a) * u : (kDist == 1 ? z[t] * b + a : -log(1.0 - u) / a);
    }
  }
}

// randint in [low, low + range): 32-bit by multiply-shift, 64-bit by modulo, as the CPU
__global__ void mxc_randint32(int *y, i64 n, u64 key, u64 base, i64 low, u64 range) {
  MXC_LOOP(j, (n + 3) / 4) {
    const mxc_hd_u32x4 blk = mxc_hd_philox(base + (u64)j, 0, key);
#pragma unroll
    for (int t = 0; t < 4; ++t)
      if (j * 4 + t < n) y[j * 4 + t] = (int)(low + (i64)(((u64)blk.w[t] * range) >> 32));
  }
}
__global__ void mxc_randint64(long long *y, i64 n, u64 key, u64 base, i64 low, u64 range) {
  MXC_LOOP(j, (n + 1) / 2) {
    const mxc_hd_u32x4 blk = mxc_hd_philox(base + (u64)j, 0, key);
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      if (j * 2 + t >= n) break;
      const u64 r = ((u64)blk.w[2 * t] << 32) | blk.w[2 * t + 1];
      y[j * 2 + t] = range ? (long long)((u64)low + r % range) : low;
    }
  }
}

// ---- rejection samplers (gamma, poisson, negative binomial, generalized negative binomial):
// output element i walks the sub-streams of block counter base + i, four words per Philox call,
// exactly as the CPU's mxc_rstream (kernels/random.h), with the CPU's Marsaglia-Tsang gamma and
// MXNet's Poisson; parameters are scalars (p0, p1) or per-parameter-element arrays in double.
namespace mxc {
struct rstream {
  u64 key, ctr, sub;
  unsigned w0, w1, w2, w3;   // the current block, named: an indexed array would live on the stack
  int pos, has_spare;
  double spare;
};
MXC_DEV void rs_init(rstream &s, u64 key, u64 ctr) {
  s.key = key;
  s.ctr = ctr;
  s.sub = 0;
  s.pos = 4;
  s.has_spare = 0;
  s.spare = 0.0;
  s.w0 = s.w1 = s.w2 = s.w3 = 0;
}
MXC_DEV unsigned rs_next(rstream &s) {
  if (s.pos == 4) {
    const mxc_hd_u32x4 b = mxc_hd_philox(s.ctr, s.sub++, s.key);
    s.w0 = b.w[0];
    s.w1 = b.w[1];
    s.w2 = b.w[2];
    s.w3 = b.w[3];
    s.pos = 0;
  }
  const int p = s.pos++;
  return p == 0 ? s.w0 : (p == 1 ? s.w1 : (p == 2 ? s.w2 : s.w3));
}
MXC_DEV double rs_uniform(rstream &s) {
  const unsigned a = rs_next(s);
  return mxc_hd_u53(a, rs_next(s));
}
MXC_DEV double rs_normal(rstream &s) {
  if (s.has_spare) {
    s.has_spare = 0;
    return s.spare;
  }
  const double r = sqrt(-2.0 * log(1.0 - rs_uniform(s)));
  // sincospi(2u) for the CPU's sin/cos(2 pi u): no large-argument reduction (stack), and the
  // same value but for the rounding of 2 pi u
  double sn, cs;
  sincospi(2.0 * rs_uniform(s), &sn, &cs);
  s.spare = r * sn;
  s.has_spare = 1;
  return r * cs;
}
// log Gamma(x), x > 0: the CPU's recurrence to 10 then Stirling's series
MXC_DEV double lgamma_pos(double x) {
  double s = 0.0;
  while (x < 10.0) {
    s -= log(x);
    x += 1.0;
  }
  const double x2 = 1.0 / (x * x);
  return s + (x - 0.5) * log(x) - x + 0.91893853320467274178 +
         (1.0 / x) * (1.0 / 12.0 - x2 * (1.0 / 360.0 - x2 * (1.0 / 1260.0 - x2 / 1680.0)));
}
// shape a, scale b
MXC_DEV double sample_gamma(double a, double b, rstream &s) {
  const double d = a < 1.0 ? a + 2.0 / 3.0 : a - 1.0 / 3.0;
  const double k = sqrt(9.0 * d), c = 1.0 / k;
  double sample;
  for (;;) {
    const double z = rs_normal(s);
    if (z > -k) {
      const double x = 1.0 + c * z, v = x * x * x;
      if (log(1.0 - rs_uniform(s)) < 0.5 * z * z + d * (1.0 - v + log(v))) {
        sample = d * v * b;
        break;
      }
    }
  }
  return a < 1.0 ? sample * pow(rs_uniform(s), 1.0 / a) : sample;
}
MXC_DEV double sample_poisson(double lambda, rstream &s) {
  if (!(lambda > 0.0)) return 0.0;
  if (lambda < 12.0) {
    const double t = exp(-lambda);
    double x = 0.0;
    for (double prod = rs_uniform(s); prod > t; prod *= rs_uniform(s)) x += 1.0;
    return x;
  }
  const double sq = sqrt(2.0 * lambda), loglam = log(lambda);
  const double g = lambda * loglam - lgamma_pos(lambda + 1.0);
  double em, t, y;
  do {
    do {
      // tan(pi u) through sinpi/cospi (no large-argument reduction)
      const double u = rs_uniform(s);
      y = sinpi(u) / cospi(u);
      em = sq * y + lambda;
    } while (em < 0.0);
    em = floor(em);
    t = 0.9 * (1.0 + y * y) * exp(em * loglam - lgamma_pos(em + 1.0) - g);
  } while (rs_uniform(s) > t);
  return em;
}
}  // namespace mxc

// kDist: 0 gamma (alpha, beta), 1 poisson (lam), 2 negative binomial (k, p), 3 generalized
// negative binomial (mu, alpha)
template <class T, int kDist>
__global__ void mxc_random_reject(T *y, i64 n, u64 key, u64 base, const double *P0,
                                  const double *P1, double p0, double p1, i64 nbatch) {
  MXC_LOOP(i, n) {
    rstream s;
    rs_init(s, key, base + (u64)i);
    const double a = rparam(P0, p0, i, nbatch), b = rparam(P1, p1, i, nbatch);
    double v;
    if (kDist == 0) {
      v = sample_gamma(a, b, s);
    } else if (kDist == 1) {
      v = sample_poisson(a, s);
    } else if (kDist == 2) {
      v = sample_poisson(sample_gamma(a, (1.0 - b) / b, s), s);
    } else {
      v = sample_poisson(b == 0.0 ? a : sample_gamma(1.0 / b, b * a, s), s);
    }
    y[i] = from_double<T>(v);
  }
}

// _sample_multinomial: probabilities p (N, K); M samples per row, sample s = i * M + j from
// word s % 4 of block base + s / 4 (the CPU's layout), the first category whose cumulative
// probability (in double, in order) reaches the uniform; past the sum: the row's last category
// with a non-zero probability, as the CPU. logp (may be null): log p of each sample.
template <class T, class To>
__global__ void mxc_multinomial(const T *p, To *samples, T *logp, i64 N, i64 K, i64 M, u64 key,
                                u64 base) {
  MXC_LOOP(s, N * M) {
    const i64 i = s / M;
    const mxc_hd_u32x4 blk = mxc_hd_philox(base + (u64)(s / 4), 0, key);
    const int t = (int)(s % 4);
    const unsigned wd = t == 0 ? blk.w[0] : (t == 1 ? blk.w[1] : (t == 2 ? blk.w[2] : blk.w[3]));
    const double loc = (double)mxc_hd_u24(wd);
    const T *row = p + i * K;
    double acc = 0.0;
    i64 last = 0, pick = -1;
    for (i64 k = 0; k < K; ++k) {
      const double pk = to_double(row[k]);
      if (pk > 0) last = k;
      acc += pk;
      if (pick < 0 && !(acc < loc)) {
        pick = k;
        break;
      }
    }
    if (pick < 0) pick = last;
    samples[s] = from_double<To>((double)pick);
    if (logp) logp[s] = from_double<T>(log(to_double(row[pick])));
  }
}

// _backward_sample_multinomial: o (N, K) = 0, then o[i, sample] += g / p[i, sample] for every
// sample of row i; one thread per row (the CPU's order, no atomics)
template <class T, class S>
__global__ void mxc_multinomial_grad(const T *g, const T *p, const S *samples, T *o, i64 N,
                                     i64 K, i64 M) {
  MXC_LOOP(i, N) {
    for (i64 k = 0; k < K; ++k) o[i * K + k] = from_double<T>(0.0);
    for (i64 j = 0; j < M; ++j) {
      const i64 k = (i64)to_double(samples[i * M + j]);
      if (k < 0 || k >= K) continue;
      const double v = to_double(g[i * M + j]) / to_double(p[i * K + k]);
      o[i * K + k] = from_double<T>(to_double(o[i * K + k]) + v);
    }
  }
}

// Dropout: mask = (u24 <= pkeep) / pkeep; y = x * mask (x, y null: the mask alone, for
// variational dropout's bernoulli)
template <class T>
__global__ void mxc_dropout(const T *x, T *y, T *mask, i64 n, u64 key, u64 base, float pkeep) {
  typedef typename acc<T>::type A;
  const float scale = 1.0f / pkeep;
  MXC_LOOP(j, (n + 3) / 4) {
    const mxc_hd_u32x4 blk = mxc_hd_philox(base + (u64)j, 0, key);
    #pragma unroll
    for (int t = 0; t < 4; ++t) {
      const i64 i = j * 4 + t;
      if (i >= n) break;
      const T mv = store<T>((A)((mxc_hd_u24(blk.w[t]) <= pkeep ? 1.0f : 0.0f) * scale));
      if (mask) mask[i] = mv;
      if (y) y[i] = store<T>(load(x[i]) * load(mv));
    }
  }
}
