/* CTC loss (Graves et al. 2006) with the gradient w.r.t. the activations, on the CPU.
 *
 * Kernel "ctc_loss", keyed by the data dtype (float16, float32, float64):
 *   in[0]  data (T, N, A): activations; a log-softmax over A is taken inside
 *   in[1]  label (N, Lmax): label indices, any numeric dtype
 *   in[2]  data_lengths (N,)   when iattr[0] (use_data_lengths)
 *   in[2 + iattr[0]] label_lengths (N,)  when iattr[1] (use_label_lengths)
 *   iattr[2]: 1 when the blank is the last channel (A - 1), 0 when it is channel 0
 *   iattr[3]: 1 to also write the gradient
 *   out[0] loss (N,), out[1] grad (T, N, A) when iattr[3]
 *
 * Without label lengths a label ends at the first padding value (0 for a first blank, -1 for a
 * last blank), as MXNet's LabelTensorToPackedVector. Per batch item, in log space: alpha over
 * the whole (time, extended label) lattice, beta one column at a time while the gradient of each
 * time step is formed from alpha * beta (as warp-ctc's CPU code does, including its rule that an
 * accumulated log value of exactly 0 or -inf leaves the softmax alone). Time steps past an item's
 * data length get a zero gradient; an item whose labels cannot fit its length (L + repeats > T)
 * gets loss 0 and a zero gradient (MXNet writes loss 0 and leaves the gradient unwritten).
 * Items run in parallel (OpenMP over the batch); float16 is computed in float32.
 */
#ifndef MXC_KERNELS_CTC_LOSS_H
#define MXC_KERNELS_CTC_LOSS_H
#include "kernels/common.h"

/* a numeric element of any dtype as a double (labels and lengths come in any dtype) */
static inline double mxc_ctc_read(const mxc_tensor *t, int64_t i) {
  switch (t->dtype) {
    case MXC_FLOAT32: return ((const float *)t->data)[i];
    case MXC_FLOAT64: return ((const double *)t->data)[i];
    case MXC_FLOAT16: return mxc_half_to_float(((const uint16_t *)t->data)[i]);
    case MXC_UINT8: return ((const uint8_t *)t->data)[i];
    case MXC_INT32: return ((const int32_t *)t->data)[i];
    case MXC_INT8: return ((const int8_t *)t->data)[i];
    case MXC_INT64: return (double)((const int64_t *)t->data)[i];
    case MXC_BOOL: return ((const uint8_t *)t->data)[i];
    case MXC_INT16: return ((const int16_t *)t->data)[i];
    case MXC_UINT16: return ((const uint16_t *)t->data)[i];
    case MXC_UINT32: return ((const uint32_t *)t->data)[i];
    case MXC_UINT64: return (double)((const uint64_t *)t->data)[i];
    default: return 0.0;
  }
}

/* Lengths and packed labels of every item, checked once before the parallel part.
 * lab receives N * Lmax ints (item b's labels at b * Lmax). Returns 0 or -1 with call->err. */
static int mxc_ctc_prepare(mxc_opcall *call, int64_t *tlen, int64_t *llen, int32_t *lab) {
  const mxc_tensor *data = &call->in[0], *label = &call->in[1];
  const int64_t T = data->shape[0], N = data->shape[1], A = data->shape[2];
  const int64_t Lmax = label->shape[1];
  const int use_dl = (int)call->iattr[0], use_ll = (int)call->iattr[1];
  const int blank_last = (int)call->iattr[2];
  const double pad = blank_last ? -1.0 : 0.0;
  for (int64_t b = 0; b < N; ++b) {
    if (use_dl) {
      double v = mxc_ctc_read(&call->in[2], b);
      if (!(v >= 0 && v <= (double)T) || v != floor(v)) {
        snprintf(call->err, MXC_ERR_LEN,
                 "data_lengths[%lld] = %g is not a length in [0, %lld]", (long long)b, v,
                 (long long)T);
        return -1;
      }
      tlen[b] = (int64_t)v;
    } else {
      tlen[b] = T;
    }
    int64_t L = Lmax;
    if (use_ll) {
      double v = mxc_ctc_read(&call->in[2 + use_dl], b);
      if (!(v >= 0 && v <= (double)Lmax) || v != floor(v)) {
        snprintf(call->err, MXC_ERR_LEN,
                 "label_lengths[%lld] = %g is not a length in [0, %lld]", (long long)b, v,
                 (long long)Lmax);
        return -1;
      }
      L = (int64_t)v;
    } else {
      for (int64_t j = 0; j < Lmax; ++j) {
        /* labels are read as integers (truncated), as MXNet's IndexTensorToVector does */
        if (trunc(mxc_ctc_read(label, b * Lmax + j)) == pad) { L = j; break; }
      }
    }
    llen[b] = L;
    for (int64_t j = 0; j < L; ++j) {
      double v = trunc(mxc_ctc_read(label, b * Lmax + j));
      if (!(v >= 0 && v < (double)A)) {
        snprintf(call->err, MXC_ERR_LEN,
                 "label[%lld, %lld] = %g is not a class index in [0, %lld)", (long long)b,
                 (long long)j, v, (long long)A);
        return -1;
      }
      lab[b * Lmax + j] = (int32_t)v;
    }
  }
  return 0;
}

/* One item in accumulation type ACC over data of type DT (LOAD/STORE convert DT <-> ACC). */
#define MXC_CTC_ITEM(SUF, DT, ACC, LOAD, STORE, EXP, LOG)                                          \
  static inline ACC mxc_ctc_lse_##SUF(ACC a, ACC b) {                                              \
    if (a == -INFINITY) return b;                                                                  \
    if (b == -INFINITY) return a;                                                                  \
    return a > b ? a + LOG((ACC)1 + EXP(b - a)) : b + LOG((ACC)1 + EXP(a - b));                     \
  }                                                                                                \
  /* returns 0, or -1 when out of memory */                                                        \
  static int mxc_ctc_item_##SUF(const DT *x, DT *grad, DT *loss, int64_t b, int64_t T, int64_t N,  \
                                int64_t A, int64_t Tb, int64_t L, const int32_t *labels,           \
                                int32_t blank) {                                                   \
    const int64_t S = 2 * L + 1;                                                                   \
    int64_t repeats = 0;                                                                           \
    for (int64_t j = 1; j < L; ++j) repeats += labels[j] == labels[j - 1];                         \
    if (grad) {                                                                                    \
      for (int64_t t = 0; t < T; ++t) {                                                            \
        DT *g = grad + (t * N + b) * A;                                                            \
        for (int64_t k = 0; k < A; ++k) g[k] = STORE((ACC)0);                                      \
      }                                                                                            \
    }                                                                                              \
    if (Tb == 0 || L + repeats > Tb) {                                                             \
      loss[b] = STORE((ACC)0);                                                                     \
      return 0;                                                                                    \
    }                                                                                              \
    ACC *logp = (ACC *)malloc(sizeof(ACC) * (size_t)(Tb * A + Tb * S + 2 * S + A));               \
    int32_t *ext = (int32_t *)malloc(sizeof(int32_t) * (size_t)S);                                 \
    if (!logp || !ext) {                                                                           \
      free(logp);                                                                                  \
      free(ext);                                                                                   \
      return -1;                                                                                   \
    }                                                                                              \
    ACC *alpha = logp + Tb * A, *beta = alpha + Tb * S, *nbeta = beta + S, *acc = nbeta + S;       \
    for (int64_t s = 0; s < S; ++s) ext[s] = (s & 1) ? labels[s >> 1] : blank;                     \
    /* log-softmax of each time step */                                                            \
    for (int64_t t = 0; t < Tb; ++t) {                                                             \
      const DT *xt = x + (t * N + b) * A;                                                          \
      ACC *lp = logp + t * A, m = -INFINITY, den = 0;                                              \
      for (int64_t k = 0; k < A; ++k) {                                                            \
        lp[k] = LOAD(xt[k]);                                                                       \
        if (lp[k] > m) m = lp[k];                                                                  \
      }                                                                                            \
      for (int64_t k = 0; k < A; ++k) den += EXP(lp[k] - m);                                       \
      ACC lden = m + LOG(den);                                                                     \
      for (int64_t k = 0; k < A; ++k) lp[k] -= lden;                                               \
    }                                                                                              \
    /* alpha: alpha[t][s] = log P(prefix of ext up to s emitted by frames 0..t, frame t on s) */   \
    for (int64_t i = 0; i < Tb * S; ++i) alpha[i] = -INFINITY;                                     \
    alpha[0] = logp[blank];                                                                        \
    if (S > 1) alpha[1] = logp[ext[1]];                                                            \
    for (int64_t t = 1; t < Tb; ++t) {                                                             \
      const ACC *prev = alpha + (t - 1) * S, *lp = logp + t * A;                                   \
      ACC *cur = alpha + t * S;                                                                    \
      for (int64_t s = 0; s < S; ++s) {                                                            \
        ACC v = prev[s];                                                                           \
        if (s >= 1) v = mxc_ctc_lse_##SUF(v, prev[s - 1]);                                         \
        if (s >= 2 && ext[s] != blank && s != 1 && ext[s] != ext[s - 2])                           \
          v = mxc_ctc_lse_##SUF(v, prev[s - 2]);                                                   \
        cur[s] = v == -INFINITY ? v : v + lp[ext[s]];                                              \
      }                                                                                            \
    }                                                                                              \
    ACC ll = alpha[(Tb - 1) * S + S - 1];                                                          \
    if (S > 1) ll = mxc_ctc_lse_##SUF(ll, alpha[(Tb - 1) * S + S - 2]);                            \
    loss[b] = STORE(-ll);                                                                          \
    if (grad) {                                                                                    \
      /* beta one column at a time; alpha * beta gives the occupation of every state */            \
      for (int64_t t = Tb - 1; t >= 0; --t) {                                                      \
        const ACC *lp = logp + t * A, *at = alpha + t * S;                                         \
        if (t == Tb - 1) {                                                                         \
          for (int64_t s = 0; s < S; ++s) nbeta[s] = -INFINITY;                                    \
          nbeta[S - 1] = lp[blank];                                                                \
          if (S > 1) nbeta[S - 2] = lp[ext[S - 2]];                                                \
        } else {                                                                                   \
          for (int64_t s = 0; s < S; ++s) {                                                        \
            ACC v = beta[s];                                                                       \
            if (s + 1 < S) v = mxc_ctc_lse_##SUF(v, beta[s + 1]);                                  \
            if (s + 2 < S && ext[s] != blank && s != S - 2 && ext[s] != ext[s + 2])                \
              v = mxc_ctc_lse_##SUF(v, beta[s + 2]);                                               \
            nbeta[s] = v == -INFINITY ? v : v + lp[ext[s]];                                        \
          }                                                                                        \
        }                                                                                          \
        for (int64_t k = 0; k < A; ++k) acc[k] = -INFINITY;                                        \
        for (int64_t s = 0; s < S; ++s) {                                                          \
          if (at[s] == -INFINITY || nbeta[s] == -INFINITY) continue;                               \
          acc[ext[s]] = mxc_ctc_lse_##SUF(acc[ext[s]], at[s] + nbeta[s]);                          \
        }                                                                                          \
        DT *g = grad + (t * N + b) * A;                                                            \
        for (int64_t k = 0; k < A; ++k) {                                                          \
          ACC p = EXP(lp[k]);                                                                      \
          if (acc[k] == (ACC)0 || acc[k] == -INFINITY || lp[k] == -INFINITY)                       \
            g[k] = STORE(p);                                                                       \
          else                                                                                     \
            g[k] = STORE(p - EXP(acc[k] - lp[k] - ll));                                            \
        }                                                                                          \
        ACC *sw = beta;                                                                            \
        beta = nbeta;                                                                              \
        nbeta = sw;                                                                                \
      }                                                                                            \
    }                                                                                              \
    free(ext);                                                                                     \
    free(logp);                                                                                    \
    return 0;                                                                                      \
  }                                                                                                \
  static int mxc_ctc_loss_##SUF(mxc_opcall *call) {                                                \
    const mxc_tensor *data = &call->in[0];                                                         \
    const int64_t T = data->shape[0], N = data->shape[1], A = data->shape[2];                      \
    const int64_t Lmax = call->in[1].shape[1];                                                     \
    const int32_t blank = call->iattr[2] ? (int32_t)(A - 1) : 0;                                   \
    const int want_grad = (int)call->iattr[3];                                                     \
    int64_t *lens = (int64_t *)malloc(sizeof(int64_t) * (size_t)(2 * N + 1));                      \
    int32_t *lab = (int32_t *)malloc(sizeof(int32_t) * (size_t)(N * Lmax + 1));                    \
    if (!lens || !lab) {                                                                           \
      free(lens);                                                                                  \
      free(lab);                                                                                   \
      snprintf(call->err, MXC_ERR_LEN, "out of memory");                                           \
      return -1;                                                                                   \
    }                                                                                              \
    if (mxc_ctc_prepare(call, lens, lens + N, lab) != 0) {                                         \
      free(lens);                                                                                  \
      free(lab);                                                                                   \
      return -1;                                                                                   \
    }                                                                                              \
    const DT *x = (const DT *)data->data;                                                          \
    DT *loss = (DT *)call->out[0].data;                                                            \
    DT *grad = want_grad ? (DT *)call->out[1].data : NULL;                                         \
    int failed = 0;                                                                                \
    MXC_PRAGMA(omp parallel for schedule(dynamic) num_threads(call->nthreads)                      \
               reduction(| : failed))                                                              \
    for (int64_t b = 0; b < N; ++b) {                                                              \
      failed |= mxc_ctc_item_##SUF(x, grad, loss, b, T, N, A, lens[b], lens[N + b],                \
                                   lab + b * Lmax, blank) != 0;                                    \
    }                                                                                              \
    free(lens);                                                                                    \
    free(lab);                                                                                     \
    if (failed) {                                                                                  \
      snprintf(call->err, MXC_ERR_LEN, "out of memory");                                           \
      return -1;                                                                                   \
    }                                                                                              \
    return 0;                                                                                      \
  }

#define MXC_CTC_ID(v) (v)
MXC_CTC_ITEM(f32, float, float, MXC_CTC_ID, MXC_CTC_ID, expf, logf)
MXC_CTC_ITEM(f64, double, double, MXC_CTC_ID, MXC_CTC_ID, exp, log)
MXC_CTC_ITEM(f16, uint16_t, float, mxc_half_to_float, mxc_float_to_half, expf, logf)

static const mxc_code_entry mxc_ctc_table[] = {
    {"ctc_loss", MXC_FLOAT32, mxc_ctc_loss_f32},
    {"ctc_loss", MXC_FLOAT64, mxc_ctc_loss_f64},
    {"ctc_loss", MXC_FLOAT16, mxc_ctc_loss_f16},
};
static const int mxc_ctc_table_len = (int)(sizeof mxc_ctc_table / sizeof mxc_ctc_table[0]);

#endif
