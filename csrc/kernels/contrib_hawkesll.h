/* Kernels of mxc/ops/contrib_hawkesll.py (mxc/ops/cpu/contrib_hawkesll.pyx): the log likelihood
 * of K independent univariate Hawkes processes with exponential kernels, per sample, and its
 * gradient in (mu, alpha, beta), as MXNet 1.9.1's _contrib_hawkesll (contrib/hawkes_ll-inl.h):
 *
 *   lambda_k(t) = mu_k + alpha_k beta_k sum_{t_i < t, y_i = k} exp(-beta_k (t - t_i))
 *
 * Sample i walks its valid_length[i] points in order (t += lags[i, j], mark k = marks[i, j]);
 * the state s_k (the sum above at the last point of mark k, starting from state[i, k]) decays
 * between points of that mark. ll = sum_j log lambda(t_j) - compensator, the compensator of
 * each mark ending at max_time[i]. float32 computes with float expf/logf as MXNet does, float64
 * in double. Samples are independent: one per thread iteration.
 *
 * "hawkesll:forward": in (mu (N, K), alpha (K,), beta (K,), state (N, K), lags (N, T),
 *   marks int32 (N, T), valid_length (N,), max_time (N,)); out (ll (N,), out_state (N, K)).
 * "hawkesll:backward": in (ograd (N,), then the eight forward inputs); out (dmu (N, K),
 *   dalpha (K,), dbeta (K,)): dalpha and dbeta sum the samples' terms in sample order.
 * A mark outside [0, K) or a valid_length outside [0, T] fails the kernel naming the sample.
 */
#ifndef MXC_KERNELS_CONTRIB_HAWKESLL_H
#define MXC_KERNELS_CONTRIB_HAWKESLL_H
#include "kernels/elemwise_common.h"

#define MXC_HK_EXP_float expf
#define MXC_HK_LOG_float logf
#define MXC_HK_EXP_double exp
#define MXC_HK_LOG_double log

typedef struct {
  const void *in[9];
  void *out[3];
  int64_t N, K, T;
  void *work;           /* backward: per sample K last times, states, state derivatives and
                           the alpha/beta terms (N * 5K) */
  int64_t bad;          /* first sample with a bad mark or length, or -1 */
} mxc_hk_ctx;

static int mxc_hk_check(mxc_opcall *c, int first, const char *what) {
  const int64_t N = c->in[first + 4].ndim == 2 ? c->in[first + 4].shape[0] : -1;
  const int64_t T = c->in[first + 4].ndim == 2 ? c->in[first + 4].shape[1] : -1;
  const int64_t K = c->in[first].ndim == 2 ? c->in[first].shape[1] : -1;
  if (N < 0 || K < 0 || c->in[first].shape[0] != N || c->in[first + 1].size != K ||
      c->in[first + 2].size != K || c->in[first + 3].size != N * K ||
      c->in[first + 5].size != N * T || c->in[first + 6].size != N ||
      c->in[first + 7].size != N || c->in[first + 5].dtype != MXC_INT32) {
    snprintf(c->err, MXC_ERR_LEN, "hawkesll %s kernel: inputs do not have the shapes of mu "
             "(N, K), alpha (K,), beta (K,), state (N, K), lags (N, T), int32 marks (N, T), "
             "valid_length (N,), max_time (N,)", what);
    return -1;
  }
  return 0;
}

static int mxc_hk_fail(mxc_opcall *c, int64_t bad) {
  if (bad == -2) return mxc_fail(c, "hawkesll kernel: out of memory");
  if (bad >= 0) {
    snprintf(c->err, MXC_ERR_LEN, "hawkesll: sample %lld has a mark outside [0, K) or a "
             "valid_length outside [0, T]", (long long)bad);
    return -1;
  }
  return 0;
}

/* The walk of sample i (inputs from in[first]): its log likelihood (returned) and the state
 * at max_time in s_; when gm is not NULL also the gradient of og * log likelihood in mu (gm),
 * alpha (ga) and beta (gb), the states' derivatives in beta kept in ds_ (MXNet's
 * hawkesll_backward recurrences). last, s_, ds_, gm, ga, gb hold K values each. A mark outside
 * [0, K) or a length outside [0, T] records the sample in u->bad. */
#define MXC_HK_FNS(tag, T_)                                                                       \
  static T_ mxc_hk_walk_##tag(mxc_hk_ctx *u, int first, int64_t i, T_ *last, T_ *s_, T_ *ds_,     \
                              T_ *gm, T_ *ga, T_ *gb, T_ og) {                                    \
    const T_ *mu = (const T_ *)u->in[first], *alpha = (const T_ *)u->in[first + 1];               \
    const T_ *beta = (const T_ *)u->in[first + 2], *state = (const T_ *)u->in[first + 3];         \
    const T_ *lags = (const T_ *)u->in[first + 4], *vlen = (const T_ *)u->in[first + 6];          \
    const T_ *tmax = (const T_ *)u->in[first + 7];                                                \
    const int32_t *mark_ = (const int32_t *)u->in[first + 5] + i * u->T;                          \
    const int64_t K = u->K;                                                                       \
    const T_ *mu_ = mu + i * K, *lag_ = lags + i * u->T;                                          \
    const double nv = (double)vlen[i];                                                            \
    T_ ll = 0, t = 0;                                                                             \
    for (int64_t k = 0; k < K; ++k) {                                                             \
      last[k] = 0;                                                                                \
      s_[k] = state[i * K + k];                                                                   \
      if (gm != NULL) ds_[k] = gm[k] = ga[k] = gb[k] = 0;                                         \
    }                                                                                             \
    if (!(nv >= 0 && nv <= (double)u->T)) {                                                       \
      u->bad = i;      /* a plain store: any thread may record its sample */                      \
      return 0;                                                                                   \
    }                                                                                             \
    for (int64_t j = 0; j < (int64_t)ceil(nv); ++j) {                                             \
      const int32_t ci = mark_[j];                                                                \
      if (ci < 0 || ci >= K) {                                                                    \
        u->bad = i;                                                                               \
        return 0;                                                                                 \
      }                                                                                           \
      t += lag_[j];                                                                               \
      const T_ d = t - last[ci], ed = MXC_HK_EXP_##T_(-beta[ci] * d);                             \
      const T_ lda = mu_[ci] + alpha[ci] * beta[ci] * s_[ci] * ed;                                \
      if (gm != NULL) {                                                                           \
        gm[ci] += 1 / lda - d;                                                                    \
        ga[ci] += beta[ci] * s_[ci] * ed / lda - s_[ci] * (1 - ed);                               \
        gb[ci] += alpha[ci] * ed * (s_[ci] * (1 - beta[ci] * d) + beta[ci] * ds_[ci]) / lda -     \
                  alpha[ci] * (ds_[ci] * (1 - ed) + s_[ci] * d * ed);                             \
        ds_[ci] = ed * (-d * s_[ci] + ds_[ci]);                                                   \
      }                                                                                           \
      ll += MXC_HK_LOG_##T_(lda) - (mu_[ci] * d + alpha[ci] * s_[ci] * (1 - ed));                 \
      s_[ci] = 1 + s_[ci] * ed;                                                                   \
      last[ci] = t;                                                                               \
    }                                                                                             \
    for (int64_t k = 0; k < K; ++k) {   /* each mark's compensator up to max_time */              \
      const T_ d = tmax[i] - last[k], ed = MXC_HK_EXP_##T_(-beta[k] * d);                         \
      if (gm != NULL) {                                                                           \
        gm[k] = og * (gm[k] - d);                                                                 \
        ga[k] = og * (ga[k] - s_[k] * (1 - ed));                                                  \
        gb[k] = og * (gb[k] - alpha[k] * (ds_[k] * (1 - ed) + s_[k] * d * ed));                   \
      }                                                                                           \
      ll -= mu_[k] * d + alpha[k] * s_[k] * (1 - ed);                                             \
      s_[k] = ed * s_[k];                                                                         \
    }                                                                                             \
    return ll;                                                                                    \
  }                                                                                               \
  static void mxc_hk_fwd_body_##tag(void *p, int64_t lo, int64_t hi) {                            \
    mxc_hk_ctx *u = (mxc_hk_ctx *)p;                                                              \
    T_ *last = (T_ *)malloc((size_t)(u->K ? u->K : 1) * sizeof(T_));                              \
    if (last == NULL) {                                                                           \
      u->bad = -2;                                                                                \
      return;                                                                                     \
    }                                                                                             \
    for (int64_t i = lo; i < hi; ++i)                                                             \
      ((T_ *)u->out[0])[i] = mxc_hk_walk_##tag(u, 0, i, last, (T_ *)u->out[1] + i * u->K, NULL,   \
                                               NULL, NULL, NULL, 0);                              \
    free(last);                                                                                   \
  }                                                                                               \
  static int mxc_hk_forward_##tag(mxc_opcall *c) {                                                \
    if (c->nin != 8 || c->nout != 2 || mxc_hk_check(c, 0, "forward")) return -1;                  \
    mxc_hk_ctx u;                                                                                 \
    memset(&u, 0, sizeof u);                                                                      \
    for (int k = 0; k < 8; ++k) u.in[k] = c->in[k].data;                                          \
    u.out[0] = c->out[0].data;                                                                    \
    u.out[1] = c->out[1].data;                                                                    \
    u.N = c->in[4].shape[0];                                                                      \
    u.T = c->in[4].shape[1];                                                                      \
    u.K = c->in[0].shape[1];                                                                      \
    u.bad = -1;                                                                                   \
    mxc_parallel_range(u.N, c->nthreads, 64, mxc_hk_fwd_body_##tag, &u);                          \
    return mxc_hk_fail(c, u.bad);                                                                 \
  }                                                                                               \
  static void mxc_hk_bwd_body_##tag(void *p, int64_t lo, int64_t hi) {                            \
    mxc_hk_ctx *u = (mxc_hk_ctx *)p;                                                              \
    const int64_t K = u->K;                                                                       \
    for (int64_t i = lo; i < hi; ++i) {                                                           \
      T_ *w = (T_ *)u->work + i * 5 * K;    /* last, state, its derivative, alpha/beta terms */   \
      mxc_hk_walk_##tag(u, 1, i, w, w + K, w + 2 * K, (T_ *)u->out[0] + i * K, w + 3 * K,         \
                        w + 4 * K, ((const T_ *)u->in[0])[i]);                                    \
    }                                                                                             \
  }                                                                                               \
  static int mxc_hk_backward_##tag(mxc_opcall *c) {                                               \
    if (c->nin != 9 || c->nout != 3 || mxc_hk_check(c, 1, "backward") ||                          \
        c->in[0].size != c->in[5].shape[0])                                                       \
      return c->err[0] ? -1 : mxc_fail(c, "hawkesll backward kernel: ograd must be (N,)");        \
    mxc_hk_ctx u;                                                                                 \
    memset(&u, 0, sizeof u);                                                                      \
    for (int k = 0; k < 9; ++k) u.in[k] = c->in[k].data;                                          \
    for (int k = 0; k < 3; ++k) u.out[k] = c->out[k].data;                                        \
    u.N = c->in[5].shape[0];                                                                      \
    u.T = c->in[5].shape[1];                                                                      \
    u.K = c->in[1].shape[1];                                                                      \
    u.bad = -1;                                                                                   \
    u.work = malloc((size_t)(u.N * 5 * u.K + 1) * sizeof(T_));                                    \
    if (u.work == NULL) return mxc_fail(c, "hawkesll backward kernel: out of memory");            \
    mxc_parallel_range(u.N, c->nthreads, 64, mxc_hk_bwd_body_##tag, &u);                          \
    T_ *da = (T_ *)u.out[1], *db = (T_ *)u.out[2];                                                \
    for (int64_t k = 0; k < u.K; ++k) da[k] = db[k] = 0;                                          \
    for (int64_t i = 0; i < u.N; ++i) {   /* the samples' alpha and beta terms, in order */       \
      const T_ *w = (const T_ *)u.work + i * 5 * u.K;                                             \
      for (int64_t k = 0; k < u.K; ++k) {                                                         \
        da[k] += w[3 * u.K + k];                                                                  \
        db[k] += w[4 * u.K + k];                                                                  \
      }                                                                                           \
    }                                                                                             \
    free(u.work);                                                                                 \
    return mxc_hk_fail(c, u.bad);                                                                 \
  }

MXC_HK_FNS(f32, float)
MXC_HK_FNS(f64, double)

static const mxc_kentry mxc_contrib_hawkesll_table[] = {
    {"hawkesll:forward", MXC_FLOAT32, -1, mxc_hk_forward_f32},
    {"hawkesll:forward", MXC_FLOAT64, -1, mxc_hk_forward_f64},
    {"hawkesll:backward", MXC_FLOAT32, -1, mxc_hk_backward_f32},
    {"hawkesll:backward", MXC_FLOAT64, -1, mxc_hk_backward_f64},
    {NULL, 0, 0, NULL}};

#endif
