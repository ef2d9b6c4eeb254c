// Optimizer update operators: one fused pass per parameter, each element through the step
// function shared with the CPU build (csrc/kernels/hd_math.h: mxc_hd_<opt>_f for bfloat16 and
// float16/32 weights, _d for float64), so both devices round the same way in the same order.
// Pointers: w (weight), g (grad), o (new weight, may be w), states updated in place. Attributes
// in the order of the operator's Params (mxc/ops/optimizer_ops.py); clip < 0: no clipping.
// mp_ kernels keep a float32 master weight w32 and float32 states.
#include "mxc/common.cuh"

using namespace mxc;

namespace mxc {
template <class T> struct opt_step;
#define MXC_OPT_TRAITS(T, SUF)                                                               \
  template <> struct opt_step<T> {                                                           \
    typedef typename acc<T>::type A;                                                         \
    template <class... P> static MXC_DEV A sgd(P... p) { return mxc_hd_sgd_##SUF(p...); }     \
    template <class... P> static MXC_DEV A sgd_mom(P... p) { return mxc_hd_sgd_mom_##SUF(p...); } \
    template <class... P> static MXC_DEV A nag_mom(P... p) { return mxc_hd_nag_mom_##SUF(p...); } \
    template <class... P> static MXC_DEV A adam(P... p) { return mxc_hd_adam_##SUF(p...); }   \
    template <class... P> static MXC_DEV A rmsprop(P... p) { return mxc_hd_rmsprop_##SUF(p...); } \
    template <class... P> static MXC_DEV A rmspropalex(P... p) { return mxc_hd_rmspropalex_##SUF(p...); } \
    template <class... P> static MXC_DEV A ftrl(P... p) { return mxc_hd_ftrl_##SUF(p...); }   \
    template <class... P> static MXC_DEV A ftml(P... p) { return mxc_hd_ftml_##SUF(p...); }   \
    template <class... P> static MXC_DEV A signsgd(P... p) { return mxc_hd_signsgd_##SUF(p...); } \
    template <class... P> static MXC_DEV A signum(P... p) { return mxc_hd_signum_##SUF(p...); } \
    template <class... P> static MXC_DEV A adamw(P... p) { return mxc_hd_adamw_##SUF(p...); } \
  };
MXC_OPT_TRAITS(float, f)
MXC_OPT_TRAITS(__half, f)
MXC_OPT_TRAITS(__nv_bfloat16, f)
MXC_OPT_TRAITS(double, d)
}  // namespace mxc

#define MXC_A typename acc<T>::type
#define MXC_S(v) store<T>(v)

template <class T>
__global__ void mxc_sgd_update(const T *w, const T *g, T *o, i64 n, double lr, double wd,
                               double rs, double cg) {
  typedef MXC_A A;
  MXC_LOOP(i, n) o[i] = MXC_S(opt_step<T>::sgd(load(w[i]), load(g[i]), (A)lr, (A)wd, (A)rs, (A)cg));
}

// sgd_mom_update and the multi_/preloaded_ forms (one launch per weight); mom may be null
// (momentum 0 without a state). preloaded_: lrs and wds (float32 device arrays) give the
// learning rate and weight decay at index li, in place of lr and wd (null: the scalars).
template <class T>
__global__ void mxc_sgd_mom_update(const T *w, const T *g, T *mom, const float *lrs,
                                   const float *wds, T *o, i64 n, i64 li, double lr, double wd,
                                   double mo, double rs, double cg) {
  typedef MXC_A A;
  const A alr = lrs ? (A)lrs[li] : (A)lr, awd = wds ? (A)wds[li] : (A)wd;
  MXC_LOOP(i, n) {
    A m = mom ? load(mom[i]) : (A)0;
    const A wn = opt_step<T>::sgd_mom(load(w[i]), load(g[i]), &m, alr, awd, (A)mo, (A)rs, (A)cg);
    if (mom) mom[i] = MXC_S(m);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_nag_mom_update(const T *w, const T *g, T *mom, T *o, i64 n, double lr,
                                   double wd, double mo, double rs, double cg) {
  typedef MXC_A A;
  const int alias = (const void *)o == (const void *)w;
  MXC_LOOP(i, n) {
    A m = load(mom[i]);
    const A wn = opt_step<T>::nag_mom(load(w[i]), load(g[i]), &m, (A)lr, (A)wd, (A)mo, (A)rs,
                                      (A)cg, alias);
    mom[i] = MXC_S(m);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_adam_update(const T *w, const T *g, T *mean, T *var, T *o, i64 n, double lr,
                                double b1, double b2, double eps, double wd, double rs, double cg) {
  typedef MXC_A A;
  MXC_LOOP(i, n) {
    A m = load(mean[i]), v = load(var[i]);
    const A wn = opt_step<T>::adam(load(w[i]), load(g[i]), &m, &v, (A)lr, (A)b1, (A)b2, (A)eps,
                                   (A)wd, (A)rs, (A)cg);
    mean[i] = MXC_S(m);
    var[i] = MXC_S(v);
    o[i] = MXC_S(wn);
  }
}

// _adamw_update / _multi_adamw_update: rescale_grad is a float32 device scalar (MXNet: an
// NDArray); a non-finite or zero scale keeps the weight
template <class T>
__global__ void mxc_adamw_update(const T *w, const T *g, T *mean, T *var, const float *scale,
                                 T *o, i64 n, double lr, double b1, double b2, double eps,
                                 double wd, double eta, double cg, int multi) {
  typedef MXC_A A;
  const float rs = scale[0];
  const bool skip = !(isfinite(rs) && rs != 0.0f);
  MXC_LOOP(i, n) {
    if (skip) {
      o[i] = w[i];
      continue;
    }
    A m = load(mean[i]), v = load(var[i]);
    const A wn = opt_step<T>::adamw(load(w[i]), load(g[i]), &m, &v, (A)lr, (A)b1, (A)b2, (A)eps,
                                    (A)wd, (A)eta, (A)rs, (A)cg, multi);
    mean[i] = MXC_S(m);
    var[i] = MXC_S(v);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_rmsprop_update(const T *w, const T *g, T *nst, T *o, i64 n, double lr,
                                   double g1, double eps, double wd, double rs, double cg,
                                   double cw) {
  typedef MXC_A A;
  MXC_LOOP(i, n) {
    A s = load(nst[i]);
    const A wn = opt_step<T>::rmsprop(load(w[i]), load(g[i]), &s, (A)lr, (A)g1, (A)eps, (A)wd,
                                      (A)rs, (A)cg, (A)cw);
    nst[i] = MXC_S(s);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_rmspropalex_update(const T *w, const T *g, T *nst, T *gst, T *dst, T *o,
                                       i64 n, double lr, double g1, double g2, double eps,
                                       double wd, double rs, double cg, double cw) {
  typedef MXC_A A;
  MXC_LOOP(i, n) {
    A s = load(nst[i]), gs = load(gst[i]), d = load(dst[i]);
    const A wn = opt_step<T>::rmspropalex(load(w[i]), load(g[i]), &s, &gs, &d, (A)lr, (A)g1,
                                          (A)g2, (A)eps, (A)wd, (A)rs, (A)cg, (A)cw);
    nst[i] = MXC_S(s);
    gst[i] = MXC_S(gs);
    dst[i] = MXC_S(d);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_ftrl_update(const T *w, const T *g, T *z, T *nst, T *o, i64 n, double lr,
                                double l1, double beta, double wd, double rs, double cg) {
  typedef MXC_A A;
  MXC_LOOP(i, n) {
    A zi = load(z[i]), ni = load(nst[i]);
    const A wn = opt_step<T>::ftrl(load(w[i]), load(g[i]), &zi, &ni, (A)lr, (A)l1, (A)beta,
                                   (A)wd, (A)rs, (A)cg);
    z[i] = MXC_S(zi);
    nst[i] = MXC_S(ni);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_ftml_update(const T *w, const T *g, T *d, T *v, T *z, T *o, i64 n, double lr,
                                double b1, double b2, double eps, double t, double wd, double rs,
                                double cg) {
  typedef MXC_A A;
  MXC_LOOP(i, n) {
    A di = load(d[i]), vi = load(v[i]), zi = load(z[i]);
    const A wn = opt_step<T>::ftml(load(w[i]), load(g[i]), &di, &vi, &zi, (A)lr, (A)b1, (A)b2,
                                   (A)eps, (A)t, (A)wd, (A)rs, (A)cg);
    d[i] = MXC_S(di);
    v[i] = MXC_S(vi);
    z[i] = MXC_S(zi);
    o[i] = MXC_S(wn);
  }
}

template <class T>
__global__ void mxc_signsgd_update(const T *w, const T *g, T *o, i64 n, double lr, double wd) {
  typedef MXC_A A;
  MXC_LOOP(i, n) o[i] = MXC_S(opt_step<T>::signsgd(load(w[i]), load(g[i]), (A)lr, (A)wd));
}

template <class T>
__global__ void mxc_signum_update(const T *w, const T *g, T *mom, T *o, i64 n, double lr,
                                  double mo, double wd, double rs, double cg, double wdlh) {
  typedef MXC_A A;
  MXC_LOOP(i, n) {
    A m = load(mom[i]);
    const A wn = opt_step<T>::signum(load(w[i]), load(g[i]), &m, (A)lr, (A)mo, (A)wd, (A)rs,
                                     (A)cg, (A)wdlh);
    mom[i] = MXC_S(m);
    o[i] = MXC_S(wn);
  }
}

// mixed precision: float32 master weight and states; the weight output in T (lrs, wds, li:
// the preloaded_ forms, as mxc_sgd_mom_update)
template <class T>
__global__ void mxc_mp_sgd_mom_update(const T *g, float *mom, float *w32, const float *lrs,
                                      const float *wds, T *o, i64 n, i64 li, double lr,
                                      double wd, double mo, double rs, double cg) {
  const float flr = lrs ? lrs[li] : (float)lr, fwd = wds ? wds[li] : (float)wd;
  MXC_LOOP(i, n) {
    float m = mom ? mom[i] : 0.0f;
    const float wn = mxc_hd_sgd_mom_f(w32[i], (float)load(g[i]), &m, flr, fwd, (float)mo,
                                      (float)rs, (float)cg);
    if (mom) mom[i] = m;
    w32[i] = wn;
    o[i] = from_double<T>((double)wn);
  }
}

template <class T>
__global__ void mxc_mp_sgd_update(const T *g, float *w32, T *o, i64 n, double lr, double wd,
                                  double rs, double cg) {
  MXC_LOOP(i, n) {
    const float wn = mxc_hd_sgd_f(w32[i], (float)load(g[i]), (float)lr, (float)wd, (float)rs,
                                  (float)cg);
    w32[i] = wn;
    o[i] = from_double<T>((double)wn);
  }
}

template <class T>
__global__ void mxc_mp_nag_mom_update(const T *g, float *mom, float *w32, T *o, i64 n, double lr,
                                      double wd, double mo, double rs, double cg) {
  MXC_LOOP(i, n) {
    float m = mom[i];
    // the master weight is updated in place: MXNet's mom update reads the new weight
    const float wn = mxc_hd_nag_mom_f(w32[i], (float)load(g[i]), &m, (float)lr, (float)wd,
                                      (float)mo, (float)rs, (float)cg, 1);
    mom[i] = m;
    w32[i] = wn;
    o[i] = from_double<T>((double)wn);
  }
}

// _mp_adamw_update / _multi_mp_adamw_update: float32 master weight and states
template <class T>
__global__ void mxc_mp_adamw_update(const T *w, const T *g, float *mean, float *var, float *w32,
                                    const float *scale, T *o, i64 n, double lr, double b1,
                                    double b2, double eps, double wd, double eta, double cg,
                                    int multi) {
  const float rs = scale[0];
  const bool skip = !(isfinite(rs) && rs != 0.0f);
  MXC_LOOP(i, n) {
    if (skip) {
      o[i] = w[i];   // the CPU's too: the weight output keeps the weight
      continue;
    }
    float m = mean[i], v = var[i];
    const float wn = mxc_hd_adamw_f(w32[i], (float)load(g[i]), &m, &v, (float)lr, (float)b1,
                                    (float)b2, (float)eps, (float)wd, (float)eta, rs, (float)cg,
                                    multi);
    mean[i] = m;
    var[i] = v;
    w32[i] = wn;
    o[i] = from_double<T>((double)wn);
  }
}

// LAMB phase 1 (lamb_update_phase1): the direction g = m^ / (sqrt(v^) + eps) + wd * w into o,
// mean and var updated in place; b1t, b2t = beta^t (the CPU's double pow, rounded to the compute
// type); bc: bias correction. Written in the CPU kernel's order of operations.
template <class T>
__global__ void mxc_lamb1_update(const T *w, const T *g, T *mean, T *var, T *o, i64 n,
                                 double b1, double b2, double eps, double wd, double rs,
                                 double cg, double b1t, double b2t, int bc) {
  typedef MXC_A A;
  const A ab1 = (A)b1, ab2 = (A)b2, aeps = (A)eps, awd = (A)wd, ars = (A)rs, acg = (A)cg;
  const A c1 = (A)1 - ab1, c2 = (A)1 - ab2, d2 = (A)1 - (A)b2t;
  const double d1 = 1. - (double)(A)b1t;
  MXC_LOOP(i, n) {
    A gr = load(g[i]) * ars;
    if (acg >= 0) gr = MXC_HD_CLIP(gr, acg);
    const A mi = ab1 * load(mean[i]) + c1 * gr;
    const A vi = ab2 * load(var[i]) + c2 * gr * gr;
    mean[i] = MXC_S(mi);
    var[i] = MXC_S(vi);
    A r;
    if (bc) {
      const A mh = (A)((double)mi / d1), vh = vi / d2;
      r = mh / (sqrt(vh) + aeps) + awd * load(w[i]);
    } else {
      r = mi / (sqrt(vi) + aeps) + awd * load(w[i]);
    }
    o[i] = MXC_S(r);
  }
}

// mp_lamb_update_phase1: float32 master weight, states and direction; the gradient in T
template <class T>
__global__ void mxc_mp_lamb1_update(const float *w32, const T *g, float *mean, float *var,
                                    float *o, i64 n, double b1, double b2, double eps, double wd,
                                    double rs, double cg, double b1t, double b2t, int bc) {
  const float fb1 = (float)b1, fb2 = (float)b2, feps = (float)eps, fwd = (float)wd;
  const float frs = (float)rs, fcg = (float)cg;
  const float c1 = 1.f - fb1, c2 = 1.f - fb2, d2 = 1.f - (float)b2t;
  const double d1 = 1. - (double)(float)b1t;
  MXC_LOOP(i, n) {
    float gr = (float)load(g[i]) * frs;
    if (fcg >= 0.f) gr = MXC_HD_CLIP(gr, fcg);
    const float mi = fb1 * mean[i] + c1 * gr;
    const float vi = fb2 * var[i] + c2 * gr * gr;
    mean[i] = mi;
    var[i] = vi;
    float r;
    if (bc) {
      const float mh = (float)((double)mi / d1), vh = vi / d2;
      r = mh / (sqrtf(vh) + feps) + fwd * w32[i];
    } else {
      r = mi / (sqrtf(vi) + feps) + fwd * w32[i];
    }
    o[i] = r;
  }
}

// LAMB phase 2: the trust-ratio learning rate from the device scalars r1 (|w|) and r2 (|g|),
// r1 clipped to [lb, ub] where those are >= 0, lr unchanged when either norm is 0
template <class A> MXC_DEV A lamb_lr(A lr, A r1, A r2, A lb, A ub) {
  if (lb >= 0) r1 = r1 > lb ? r1 : lb;
  if (ub >= 0) r1 = r1 < ub ? r1 : ub;
  return (r1 == 0 || r2 == 0) ? lr : lr * r1 / r2;
}

// lamb_update_phase2: o = w - lr' * g (r1, r2: one element each, in T)
template <class T>
__global__ void mxc_lamb2_update(const T *w, const T *g, const T *r1, const T *r2, T *o, i64 n,
                                 double lr, double lb, double ub) {
  typedef MXC_A A;
  const A alr = lamb_lr((A)lr, load(r1[0]), load(r2[0]), (A)lb, (A)ub);
  MXC_LOOP(i, n) o[i] = MXC_S(load(w[i]) - alr * load(g[i]));
}

// mp_lamb_update_phase2: o = w32 - lr' * g, all but o float32 (w32 is read, not written, as
// MXNet 1.9.1)
template <class T>
__global__ void mxc_mp_lamb2_update(const float *w32, const float *g, const float *r1,
                                    const float *r2, T *o, i64 n, double lr, double lb,
                                    double ub) {
  const float flr = lamb_lr((float)lr, r1[0], r2[0], (float)lb, (float)ub);
  MXC_LOOP(i, n) o[i] = from_double<T>((double)(w32[i] - flr * g[i]));
}

// _sparse_adagrad_update on dense arrays: h += clip(rs*g)^2; w -= clip(rs*g) / sqrt(h + eps) * lr
template <class T>
__global__ void mxc_adagrad_update(const T *w, const T *g, T *h, T *o, i64 n, double lr,
                                   double eps, double rs, double cg) {
  typedef MXC_A A;
  const A alr = (A)lr, aeps = (A)eps, ars = (A)rs, acg = (A)cg;
  MXC_LOOP(i, n) {
    A gr = load(g[i]) * ars;
    if (acg >= 0) gr = MXC_HD_CLIP(gr, acg);
    const A hn = load(h[i]) + gr * gr;
    h[i] = MXC_S(hn);
    o[i] = MXC_S(load(w[i]) - gr / sqrt(hn + aeps) * alr);
  }
}
