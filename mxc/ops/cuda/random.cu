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
