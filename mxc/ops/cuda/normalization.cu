// BatchNorm (statistics per channel) and LayerNorm / InstanceNorm / GroupNorm (statistics per
// row), forward and backward, with the CPU kernels' formulas (csrc/kernels/normalization.h):
// two-pass mean and variance, invstd = 1/sqrt(var + eps) (0 when both are 0), the moving
// statistics updated by BatchNorm's backward in training, the elementwise steps in the compute
// type (float for __half, __nv_bfloat16 and float, double for double) from the same double coefficients.
// Sums are in double, in another order than the CPU's blocked sums: results agree to rounding.
//
// Every tensor is (A, K, B) around the normalised axis, C-contiguous (ops/normalization.py).
// No kernel needs a barrier: sums are two-stage (BatchNorm: P interleaved partial sums per
// channel, adjacent threads on adjacent elements; then one thread per channel), row
// statistics one thread per row; the launches run in order on one stream with their state in
// a double workspace (ops/cuda/normalization.py lays it out).
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
// BatchNorm's gamma, beta and statistics: float beside __half and __nv_bfloat16 data, else the
// data's type
template <class T> struct bn_param { typedef T type; };
template <> struct bn_param<__half> { typedef float type; };
template <> struct bn_param<__nv_bfloat16> { typedef float type; };

MXC_DEV double nrm_invstd(double ssd, i64 n, double eps) {
  if (ssd == 0 && eps == 0) return 0.0;        // as MXNet: no division by zero
  return 1.0 / sqrt((n > 0 ? ssd / (double)n : 0.0) + eps);
}
template <class T> MXC_DEV double ld(const T *p, i64 i) { return (double)load(p[i]); }
}  // namespace mxc

// ---- BatchNorm ---------------------------------------------------------------------------------
// slot t = c * P + p sums elements j = p, p + P, ... of channel c's A*B elements:
// mode 0: x; mode 1: (x - mean[c])^2; mode 2: (x - mean[c]) * dy into part, dy into part2
template <class T>
__global__ void mxc_bn_partial(const T *x, const T *dy, const double *mean, double *part,
                               double *part2, i64 A, i64 K, i64 B, i64 P, int mode) {
  const i64 n = A * B;
  MXC_LOOP(t, K * P) {
    const i64 c = t / P, p = t % P;
    const double m = mode ? mean[c] : 0.0;
    double s = 0, s2 = 0;
    for (i64 j = p; j < n; j += P) {
      const i64 i = ((j / B) * K + c) * B + j % B;
      const double v = ld(x, i);
      if (mode == 0) {
        s += v;
      } else if (mode == 1) {
        s += (v - m) * (v - m);
      } else {
        const double g = ld(dy, i);
        s += (v - m) * g;
        s2 += g;
      }
    }
    part[t] = s;
    if (mode == 2) part2[t] = s2;
  }
}

__global__ void mxc_bn_mean(const double *part, double *mean, i64 K, i64 P, i64 n) {
  MXC_LOOP(c, K) {
    double s = 0;
    for (i64 p = 0; p < P; ++p) s += part[c * P + p];
    mean[c] = n > 0 ? s / (double)n : 0.0;
  }
}

// from the squared deviations: invstd and the biased variance per channel; om / ov (the
// outputs mean and var, or null): the mean and the variance (var_out) or invstd
template <class T>
__global__ void mxc_bn_var(const double *part, const double *mean, double *invstd, double *var,
                           typename bn_param<T>::type *om, typename bn_param<T>::type *ov,
                           i64 K, i64 P, i64 n, double eps, int var_out) {
  typedef typename bn_param<T>::type TP;
  MXC_LOOP(c, K) {
    double q = 0;
    for (i64 p = 0; p < P; ++p) q += part[c * P + p];
    const double v = n > 0 ? q / (double)n : 0.0, is = nrm_invstd(q, n, eps);
    invstd[c] = is;
    var[c] = v;
    if (om) {
      om[c] = store<TP>((typename acc<TP>::type)mean[c]);
      ov[c] = store<TP>((typename acc<TP>::type)(var_out ? v : is));
    }
  }
}

// inference: the moving statistics normalise
template <class T>
__global__ void mxc_bn_moving(const typename bn_param<T>::type *mm,
                              const typename bn_param<T>::type *mv, double *mean, double *invstd,
                              typename bn_param<T>::type *om, typename bn_param<T>::type *ov,
                              i64 K, double eps, int var_out) {
  typedef typename bn_param<T>::type TP;
  MXC_LOOP(c, K) {
    const double m = ld(mm, c), v = ld(mv, c), is = 1.0 / sqrt(v + eps);
    mean[c] = m;
    invstd[c] = is;
    if (om) {
      om[c] = store<TP>((typename acc<TP>::type)m);
      ov[c] = store<TP>((typename acc<TP>::type)(var_out ? v : is));
    }
  }
}

template <class T>
__global__ void mxc_bn_apply(const T *x, const typename bn_param<T>::type *gamma,
                             const typename bn_param<T>::type *beta, const double *mean,
                             const double *invstd, T *y, i64 A, i64 K, i64 B, int fix_gamma) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, A * K * B) {
    const i64 c = (i / B) % K;
    const C cm = (C)mean[c];
    const C sc = (C)(invstd[c] * (fix_gamma ? 1.0 : ld(gamma, c)));
    const C sh = (C)ld(beta, c);
    y[i] = store<T>(((C)load(x[i]) - cm) * sc + sh);
  }
}

// per channel, after mode 2's partial sums: dgamma, dbeta, the moving statistics' update (train
// and update) and the coefficients of dx = (dy - gm - (x - cm) * k) * iw in coef[4 * K]
template <class T>
__global__ void mxc_bn_bwd_channel(const double *part, const double *part2, const double *mean,
                                   const double *invstd, const double *var,
                                   const typename bn_param<T>::type *gamma,
                                   typename bn_param<T>::type *dgamma,
                                   typename bn_param<T>::type *dbeta,
                                   typename bn_param<T>::type *mm,
                                   typename bn_param<T>::type *mv, double *coef, i64 K, i64 P,
                                   i64 n, int train, int fix_gamma, int update, double momentum) {
  typedef typename bn_param<T>::type TP;
  typedef typename acc<TP>::type AP;
  MXC_LOOP(c, K) {
    double dot = 0, sdy = 0;
    for (i64 p = 0; p < P; ++p) {
      dot += part[c * P + p];
      sdy += part2[c * P + p];
    }
    const double w = fix_gamma ? 1.0 : ld(gamma, c), is = invstd[c];
    if (train && update) {
      mm[c] = store<TP>((AP)(ld(mm, c) * momentum + mean[c] * (1.0 - momentum)));
      mv[c] = store<TP>((AP)(ld(mv, c) * momentum + var[c] * (1.0 - momentum)));
    }
    coef[c] = train ? mean[c] : 0.0;
    coef[K + c] = train && n > 0 ? dot * is * is / (double)n : 0.0;
    coef[2 * K + c] = train && n > 0 ? sdy / (double)n : 0.0;
    coef[3 * K + c] = is * w;
    dgamma[c] = store<TP>((AP)(fix_gamma ? 0.0 : dot * is));
    dbeta[c] = store<TP>((AP)sdy);
  }
}

template <class T>
__global__ void mxc_bn_dx(const T *x, const T *dy, const double *coef, T *dx, i64 A, i64 K,
                          i64 B) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, A * K * B) {
    const i64 c = (i / B) % K;
    const C cm = (C)coef[c], k = (C)coef[K + c], gm = (C)coef[2 * K + c], iw = (C)coef[3 * K + c];
    dx[i] = store<T>(((C)load(dy[i]) - gm - ((C)load(x[i]) - cm) * k) * iw);
  }
}

// ---- LayerNorm (mode 0: affine per k), InstanceNorm / GroupNorm (mode 1: per row a % P) ---------
// row r = a * B + b: its K elements at a * K * B + b + k * B
template <class T>
__global__ void mxc_row_stats(const T *x, double *mean, double *invstd, T *om, T *os, i64 A,
                              i64 K, i64 B, double eps) {
  typedef typename acc<T>::type C;
  MXC_LOOP(r, A * B) {
    const T *xr = x + (r / B) * K * B + r % B;
    double s = 0, q = 0;
    for (i64 k = 0; k < K; ++k) s += ld(xr, k * B);
    const double m = K > 0 ? s / (double)K : 0.0;
    for (i64 k = 0; k < K; ++k) {
      const double d = ld(xr, k * B) - m;
      q += d * d;
    }
    mean[r] = m;
    invstd[r] = nrm_invstd(q, K, eps);
    if (om) {
      om[r] = store<T>((C)m);
      os[r] = store<T>((C)sqrt((K > 0 ? q / (double)K : 0.0) + eps));
    }
  }
}

template <class T>
__global__ void mxc_row_apply(const T *x, const T *gamma, const T *beta, const double *mean,
                              const double *invstd, T *y, i64 A, i64 K, i64 B, int mode, i64 P) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, A * K * B) {
    const i64 b = i % B, k = (i / B) % K, a = i / (K * B), r = a * B + b;
    const C cm = (C)mean[r];
    if (mode == 1) {
      const C sc = (C)(invstd[r] * ld(gamma, a % P)), sh = (C)ld(beta, a % P);
      y[i] = store<T>(((C)load(x[i]) - cm) * sc + sh);
    } else {
      y[i] = store<T>(((C)load(x[i]) - cm) * (C)invstd[r] * (C)load(gamma[k]) +
                      (C)load(beta[k]));
    }
  }
}

// per row: c1, c2 of dx, and (mode 1) the row's parts of dgamma (rdot) and dbeta (rsdy)
//   mode 0: c1 = mean(dy * gamma), c2 = mean(dy * gamma * xhat); dx = is * (g - c1 - xhat * c2)
//   mode 1: c1 = mean(dy), c2 = sum((x - m) * dy) * is^2 / K; dx = (dy - c1 - (x - m) * c2) * is * w
template <class T>
__global__ void mxc_row_bwd_rows(const T *x, const T *dy, const T *gamma, const double *mean,
                                 const double *invstd, double *c1, double *c2, double *rdot,
                                 double *rsdy, i64 A, i64 K, i64 B, int mode) {
  MXC_LOOP(r, A * B) {
    const i64 base = (r / B) * K * B + r % B;
    const double m = mean[r], is = invstd[r];
    double s1 = 0, s2 = 0;
    for (i64 k = 0; k < K; ++k) {
      const double g = ld(dy, base + k * B), xc = ld(x, base + k * B) - m;
      if (mode == 1) {
        s1 += g;
        s2 += xc * g;
      } else {
        const double gg = g * ld(gamma, k);
        s1 += gg;
        s2 += gg * xc * is;
      }
    }
    if (mode == 1) {
      rdot[r] = s2 * is;
      rsdy[r] = s1;
      c1[r] = K > 0 ? s1 / (double)K : 0.0;
      c2[r] = K > 0 ? s2 * is * is / (double)K : 0.0;
    } else {
      c1[r] = K > 0 ? s1 / (double)K : 0.0;
      c2[r] = K > 0 ? s2 / (double)K : 0.0;
    }
  }
}

template <class T>
__global__ void mxc_row_dx(const T *x, const T *dy, const T *gamma, const double *mean,
                           const double *invstd, const double *c1, const double *c2, T *dx, i64 A,
                           i64 K, i64 B, int mode, i64 P) {
  typedef typename acc<T>::type C;
  MXC_LOOP(i, A * K * B) {
    const i64 b = i % B, k = (i / B) % K, a = i / (K * B), r = a * B + b;
    if (mode == 1) {
      const C iw = (C)(invstd[r] * ld(gamma, a % P));
      dx[i] = store<T>(((C)load(dy[i]) - (C)c1[r] - ((C)load(x[i]) - (C)mean[r]) * (C)c2[r]) *
                       iw);
    } else {
      const C ci = (C)invstd[r];
      const C xh = ((C)load(x[i]) - (C)mean[r]) * ci;
      const C g = (C)load(dy[i]) * (C)load(gamma[k]);
      dx[i] = store<T>(ci * (g - (C)c1[r] - xh * (C)c2[r]));
    }
  }
}

// dgamma, dbeta: mode 0 per k over every row; mode 1 per p over the rows a with a % P == p
template <class T>
__global__ void mxc_row_dparams(const T *x, const T *dy, const double *mean,
                                const double *invstd, const double *rdot, const double *rsdy,
                                T *dgamma, T *dbeta, i64 A, i64 K, i64 B, int mode, i64 P) {
  typedef typename acc<T>::type C;
  MXC_LOOP(t, mode == 1 ? P : K) {
    double sg = 0, sb = 0;
    if (mode == 1) {
      for (i64 a = t; a < A; a += P) {
        sg += rdot[a];
        sb += rsdy[a];
      }
    } else {
      for (i64 r = 0; r < A * B; ++r) {
        const i64 i = (r / B) * K * B + r % B + t * B;
        const double g = ld(dy, i);
        sg += g * (ld(x, i) - mean[r]) * invstd[r];
        sb += g;
      }
    }
    dgamma[t] = store<T>((C)sg);
    dbeta[t] = store<T>((C)sb);
  }
}
