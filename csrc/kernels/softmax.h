/* Softmax family kernels: softmax / log_softmax / softmin forward and backward along any axis
 * (with MXNet's length masking), SoftmaxOutput's backward and softmax_cross_entropy's forward.
 *
 * Layout: the data is viewed as (outer, M, inner), M the softmax axis. Rows with inner == 1 are
 * contiguous (max, exp-and-sum into a per-thread buffer, scale: three vectorised passes); with
 * inner > 1 a block of up to MXC_SM_W columns is processed at once, so every pass is contiguous
 * along the inner axis. float16 and float32 data are computed in float32 (exp through mxc_expf),
 * float64 in double.
 *
 * "softmax" key (input code, output code): in = (x[, length]), out = y.
 *   iattr = {outer, M, inner, log, negate, use_length}; fattr[0] = temperature.
 *   y = exp(v - max) / sum (log: (v - max) - log(sum)), v = (negate ? -x : x) / temperature.
 *   length (int32 or int64, shape (outer, inner)): only the first length[i] entries of row i
 *   take part; the rest of the row is written 0 (as MXNet; a length outside [0, M] is clamped).
 * "softmax_bwd" key (output code, gradient code): in = (head, y[, length]), out = dx.
 *   softmax: dx = y * (g - sum(g * y)); log: dx = g - exp(y) * sum(g); then / temperature and
 *   negated for softmin; masked entries get 0.
 * "softmax_output_bwd" key dtype code: in = (y, label), out = dx. iattr = {n, K, inner,
 *   use_ignore, smooth, normalization (0 null, 1 batch, 2 valid), out_grad, multi_output,
 *   number of labels counted by 'batch'/'valid' (all of them, as MXNet, even when only the
 *   first n are used)};
 *   fattr = {ignore_label, smooth_alpha, grad_scale}. MXNet 1.9.1's SoftmaxOutput backward:
 *   dx = (y - onehot(label)) [label smoothing] * scale, ignored labels give 0 rows, and with
 *   out_grad the result is multiplied by y (MXNet passes the output as the head gradient).
 * "softmax_ce" key dtype code: in = (x (N, K), label (N,)), out (1,) =
 *   sum_i -log(max(softmax(x_i)[label_i], 1e-8)); a label outside [0, K) is an error.
 */
#ifndef MXC_KERNELS_SOFTMAX_H
#define MXC_KERNELS_SOFTMAX_H
#include "kernels/elemwise_common.h"

#define MXC_SM_W 256                 /* columns per block when the axis is not the last one */
#define MXC_SM_PAR_MIN ((int64_t)16384)

#define MXC_SM_LD_f16(v) mxc_half_to_float(v)
#define MXC_SM_LD_f32(v) (v)
#define MXC_SM_LD_f64(v) (v)
#define MXC_SM_ST_f16(v) mxc_float_to_half((float)(v))
#define MXC_SM_ST_f32(v) ((float)(v))
#define MXC_SM_ST_f64(v) ((double)(v))
#define MXC_SM_EXP_float(v) mxc_expf(v)
#define MXC_SM_EXP_double(v) exp(v)
#define MXC_SM_LOG_float(v) logf(v)
#define MXC_SM_LOG_double(v) log(v)

static inline int64_t mxc_sm_len(const mxc_tensor *t, int64_t i, int64_t M) {
  int64_t v = t->dtype == MXC_INT64 ? ((const int64_t *)t->data)[i]
                                    : (int64_t)((const int32_t *)t->data)[i];
  return v < 0 ? 0 : (v > M ? M : v);
}

static inline int mxc_sm_threads(const mxc_opcall *call, int64_t work, int64_t tasks) {
  int nt = (call->nthreads > 1 && work >= MXC_SM_PAR_MIN) ? call->nthreads : 1;
  if (tasks < nt) nt = tasks > 1 ? (int)tasks : 1;
#ifndef _OPENMP
  nt = 1;
#endif
  return nt;
}

MXC_VEC_BEGIN

/* ---- forward -------------------------------------------------------------------------------- */
#define MXC_SM_FWD(ti, TI, to, TO, CT)                                                          \
  /* contiguous rows [r0, r1) of length M */                                                    \
  static void mxc_sm_fwd_rows_##ti##_##to(const TI *x, TO *y, const mxc_tensor *lt, int64_t r0, \
                                          int64_t r1, int64_t M, int logm, int neg, CT T,       \
                                          CT *buf) {                                            \
    const CT sg = neg ? (CT)-1 : (CT)1;                                                         \
    const int hasT = T != (CT)1;                                                                \
    int64_t r, j;                                                                               \
    for (r = r0; r < r1; r++) {                                                                 \
      const TI *xr = x + r * M;                                                                 \
      TO *yr = y + r * M;                                                                       \
      const int64_t len = lt != NULL ? mxc_sm_len(lt, r, M) : M;                                \
      CT mx = (CT)-INFINITY, sum = 0, inv, ls;                                                  \
      for (j = len; j < M; j++) yr[j] = MXC_SM_ST_##to(0);                                      \
      if (len == 0) continue;                                                                   \
      {                                                                                         \
        CT pm[8];                                                                               \
        int l;                                                                                  \
        for (l = 0; l < 8; l++) pm[l] = (CT)-INFINITY;                                          \
        for (j = 0; j + 8 <= len; j += 8)                                                       \
          for (l = 0; l < 8; l++) {                                                             \
            const CT v = sg * (CT)MXC_SM_LD_##ti(xr[j + l]);                                   \
            pm[l] = v > pm[l] ? v : pm[l];                                                      \
          }                                                                                     \
        for (; j < len; j++) {                                                                  \
          const CT v = sg * (CT)MXC_SM_LD_##ti(xr[j]);                                         \
          pm[0] = v > pm[0] ? v : pm[0];                                                        \
        }                                                                                       \
        for (l = 0; l < 8; l++) mx = pm[l] > mx ? pm[l] : mx;                                   \
      }                                                                                         \
      if (!logm) {                                                                              \
        /* exp into the buffer (vectorises: no reduction in the loop), then an 8-lane sum */ \
        if (hasT) {                                                                             \
          for (j = 0; j < len; j++)                                                             \
            buf[j] = MXC_SM_EXP_##CT((sg * (CT)MXC_SM_LD_##ti(xr[j]) - mx) / T);                \
        } else {                                                                                \
          for (j = 0; j < len; j++)                                                             \
            buf[j] = MXC_SM_EXP_##CT(sg * (CT)MXC_SM_LD_##ti(xr[j]) - mx);                      \
        }                                                                                       \
        {                                                                                       \
          CT part[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                \
          int l;                                                                                \
          for (j = 0; j + 8 <= len; j += 8)                                                     \
            for (l = 0; l < 8; l++) part[l] += buf[j + l];                                      \
          for (; j < len; j++) part[0] += buf[j];                                               \
          for (l = 0; l < 8; l++) sum += part[l];                                               \
        }                                                                                       \
        inv = (CT)1 / sum;                                                                      \
        for (j = 0; j < len; j++) yr[j] = MXC_SM_ST_##to(buf[j] * inv);                         \
      } else {                                                                                  \
        for (j = 0; j < len; j++)                                                               \
          sum += MXC_SM_EXP_##CT((sg * (CT)MXC_SM_LD_##ti(xr[j]) - mx) / T);                    \
        ls = MXC_SM_LOG_##CT(sum);                                                              \
        for (j = 0; j < len; j++)                                                               \
          yr[j] = MXC_SM_ST_##to((sg * (CT)MXC_SM_LD_##ti(xr[j]) - mx) / T - ls);               \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  /* one block: outer index o, columns [k0, k1) of a (M, inner) slab */                         \
  static void mxc_sm_fwd_block_##ti##_##to(const TI *x, TO *y, int64_t o, int64_t k0,          \
                                           int64_t k1, int64_t M, int64_t inner, int logm,      \
                                           int neg, CT T) {                                     \
    CT mx[MXC_SM_W], sm[MXC_SM_W];                                                              \
    const CT sg = neg ? (CT)-1 : (CT)1;                                                         \
    const int64_t w = k1 - k0;                                                                  \
    int64_t j, k;                                                                               \
    for (k = 0; k < w; k++) {                                                                   \
      mx[k] = (CT)-INFINITY;                                                                    \
      sm[k] = 0;                                                                                \
    }                                                                                           \
    for (j = 0; j < M; j++) {                                                                   \
      const TI *xr = x + (o * M + j) * inner + k0;                                              \
      for (k = 0; k < w; k++) {                                                                 \
        const CT v = sg * (CT)MXC_SM_LD_##ti(xr[k]);                                           \
        mx[k] = v > mx[k] ? v : mx[k];                                                          \
      }                                                                                         \
    }                                                                                           \
    for (j = 0; j < M; j++) {                                                                   \
      const TI *xr = x + (o * M + j) * inner + k0;                                              \
      for (k = 0; k < w; k++)                                                                   \
        sm[k] += MXC_SM_EXP_##CT((sg * (CT)MXC_SM_LD_##ti(xr[k]) - mx[k]) / T);                 \
    }                                                                                           \
    for (k = 0; k < w; k++) sm[k] = logm ? MXC_SM_LOG_##CT(sm[k]) : (CT)1 / sm[k];              \
    for (j = 0; j < M; j++) {                                                                   \
      const TI *xr = x + (o * M + j) * inner + k0;                                              \
      TO *yr = y + (o * M + j) * inner + k0;                                                    \
      if (logm) {                                                                               \
        for (k = 0; k < w; k++)                                                                 \
          yr[k] = MXC_SM_ST_##to((sg * (CT)MXC_SM_LD_##ti(xr[k]) - mx[k]) / T - sm[k]);         \
      } else {                                                                                  \
        for (k = 0; k < w; k++)                                                                 \
          yr[k] = MXC_SM_ST_##to(                                                               \
              MXC_SM_EXP_##CT((sg * (CT)MXC_SM_LD_##ti(xr[k]) - mx[k]) / T) * sm[k]);          \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  /* one strided row (o, k) with a length mask */                                               \
  static void mxc_sm_fwd_col_##ti##_##to(const TI *x, TO *y, int64_t base, int64_t len,         \
                                         int64_t M, int64_t sa, int logm, int neg, CT T) {      \
    const CT sg = neg ? (CT)-1 : (CT)1;                                                         \
    CT mx = (CT)-INFINITY, sum = 0, ls;                                                         \
    int64_t j;                                                                                  \
    for (j = len; j < M; j++) y[base + j * sa] = MXC_SM_ST_##to(0);                             \
    if (len == 0) return;                                                                       \
    for (j = 0; j < len; j++) {                                                                 \
      const CT v = sg * (CT)MXC_SM_LD_##ti(x[base + j * sa]);                                  \
      mx = v > mx ? v : mx;                                                                     \
    }                                                                                           \
    for (j = 0; j < len; j++)                                                                   \
      sum += MXC_SM_EXP_##CT((sg * (CT)MXC_SM_LD_##ti(x[base + j * sa]) - mx) / T);             \
    ls = logm ? MXC_SM_LOG_##CT(sum) : (CT)1 / sum;                                             \
    for (j = 0; j < len; j++) {                                                                 \
      const CT d = (sg * (CT)MXC_SM_LD_##ti(x[base + j * sa]) - mx) / T;                        \
      y[base + j * sa] = MXC_SM_ST_##to(logm ? d - ls : MXC_SM_EXP_##CT(d) * ls);               \
    }                                                                                           \
  }                                                                                             \
  static int mxc_sm_fwd_##ti##_##to(mxc_opcall *call) {                                         \
    const TI *x = (const TI *)call->in[0].data;                                                 \
    TO *y = (TO *)call->out[0].data;                                                            \
    const int64_t outer = call->iattr[0], M = call->iattr[1], inner = call->iattr[2];           \
    const int logm = (int)call->iattr[3], neg = (int)call->iattr[4];                            \
    const mxc_tensor *lt = call->iattr[5] ? &call->in[1] : NULL;                                \
    const CT T = (CT)call->fattr[0];                                                            \
    const int64_t work = outer * M * inner;                                                     \
    int err = 0;                                                                                \
    if (work == 0) return 0;                                                                    \
    if (inner == 1) {                                                                           \
      const int nt = mxc_sm_threads(call, work, outer);                                         \
      (void)nt;                                                                                 \
      MXC_PRAGMA(omp parallel num_threads(nt))                                                  \
      {                                                                                         \
        const int t = MXC_TID(), Tn = MXC_NTH();                                                \
        const int64_t r0 = outer * t / Tn, r1 = outer * (t + 1) / Tn;                          \
        CT *buf = logm ? NULL : (CT *)malloc((size_t)M * sizeof(CT));                           \
        if (!logm && buf == NULL) {                                                             \
          MXC_PRAGMA(omp atomic write)                                                          \
          err = 1;                                                                              \
        } else {                                                                                \
          mxc_sm_fwd_rows_##ti##_##to(x, y, lt, r0, r1, M, logm, neg, T, buf);                  \
        }                                                                                       \
        free(buf);                                                                              \
      }                                                                                         \
    } else if (lt == NULL) {                                                                    \
      const int64_t nb = (inner + MXC_SM_W - 1) / MXC_SM_W, tasks = outer * nb;                 \
      const int nt = mxc_sm_threads(call, work, tasks);                                         \
      int64_t q;                                                                                \
      (void)nt;                                                                                 \
      MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                             \
      for (q = 0; q < tasks; q++) {                                                             \
        const int64_t o = q / nb, k0 = (q % nb) * MXC_SM_W;                                     \
        const int64_t k1 = k0 + MXC_SM_W < inner ? k0 + MXC_SM_W : inner;                       \
        mxc_sm_fwd_block_##ti##_##to(x, y, o, k0, k1, M, inner, logm, neg, T);                  \
      }                                                                                         \
    } else {                                                                                    \
      const int64_t tasks = outer * inner;                                                      \
      const int nt = mxc_sm_threads(call, work, tasks);                                         \
      int64_t q;                                                                                \
      (void)nt;                                                                                 \
      MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                             \
      for (q = 0; q < tasks; q++) {                                                             \
        const int64_t o = q / inner, k = q % inner;                                             \
        mxc_sm_fwd_col_##ti##_##to(x, y, o * M * inner + k, mxc_sm_len(lt, q, M), M, inner,     \
                                   logm, neg, T);                                               \
      }                                                                                         \
    }                                                                                           \
    if (err) return mxc_fail(call, "softmax: out of memory");                                   \
    return 0;                                                                                   \
  }

/* ---- backward -------------------------------------------------------------------------------
 * to: dtype of the forward output (head gradient and y), ti: dtype of the input gradient */
#define MXC_SM_BWD(to, TO, ti, TI, CT)                                                          \
  static void mxc_sm_bwd_col_##to##_##ti(const TO *g, const TO *y, TI *dx, int64_t base,        \
                                         int64_t len, int64_t M, int64_t sa, int logm, int neg, \
                                         CT T) {                                                \
    const CT sg = neg ? (CT)-1 : (CT)1;                                                         \
    CT s = 0;                                                                                   \
    int64_t j;                                                                                  \
    if (logm) {                                                                                 \
      for (j = 0; j < len; j++) s += (CT)MXC_SM_LD_##to(g[base + j * sa]);                      \
      for (j = 0; j < len; j++) {                                                               \
        const CT gv = (CT)MXC_SM_LD_##to(g[base + j * sa]);                                     \
        const CT yv = (CT)MXC_SM_LD_##to(y[base + j * sa]);                                     \
        dx[base + j * sa] = MXC_SM_ST_##ti(sg * (gv - MXC_SM_EXP_##CT(yv) * s) / T);            \
      }                                                                                         \
    } else {                                                                                    \
      for (j = 0; j < len; j++)                                                                 \
        s += (CT)MXC_SM_LD_##to(g[base + j * sa]) * (CT)MXC_SM_LD_##to(y[base + j * sa]);       \
      for (j = 0; j < len; j++) {                                                               \
        const CT gv = (CT)MXC_SM_LD_##to(g[base + j * sa]);                                     \
        const CT yv = (CT)MXC_SM_LD_##to(y[base + j * sa]);                                     \
        dx[base + j * sa] = MXC_SM_ST_##ti(sg * (yv * (gv - s)) / T);                           \
      }                                                                                         \
    }                                                                                           \
    for (j = len; j < M; j++) dx[base + j * sa] = MXC_SM_ST_##ti(0);                            \
  }                                                                                             \
  static void mxc_sm_bwd_block_##to##_##ti(const TO *g, const TO *y, TI *dx, int64_t o,         \
                                           int64_t k0, int64_t k1, int64_t M, int64_t inner,    \
                                           int logm, int neg, CT T) {                           \
    CT s[MXC_SM_W];                                                                             \
    const CT sg = neg ? (CT)-1 : (CT)1;                                                         \
    const int64_t w = k1 - k0;                                                                  \
    int64_t j, k;                                                                               \
    for (k = 0; k < w; k++) s[k] = 0;                                                           \
    for (j = 0; j < M; j++) {                                                                   \
      const TO *gr = g + (o * M + j) * inner + k0, *yr = y + (o * M + j) * inner + k0;          \
      if (logm) {                                                                               \
        for (k = 0; k < w; k++) s[k] += (CT)MXC_SM_LD_##to(gr[k]);                              \
      } else {                                                                                  \
        for (k = 0; k < w; k++)                                                                 \
          s[k] += (CT)MXC_SM_LD_##to(gr[k]) * (CT)MXC_SM_LD_##to(yr[k]);                        \
      }                                                                                         \
    }                                                                                           \
    for (j = 0; j < M; j++) {                                                                   \
      const TO *gr = g + (o * M + j) * inner + k0, *yr = y + (o * M + j) * inner + k0;          \
      TI *dr = dx + (o * M + j) * inner + k0;                                                   \
      if (logm) {                                                                               \
        for (k = 0; k < w; k++)                                                                 \
          dr[k] = MXC_SM_ST_##ti(sg * ((CT)MXC_SM_LD_##to(gr[k]) -                              \
                                       MXC_SM_EXP_##CT((CT)MXC_SM_LD_##to(yr[k])) * s[k]) / T); \
      } else {                                                                                  \
        for (k = 0; k < w; k++)                                                                 \
          dr[k] = MXC_SM_ST_##ti(sg * ((CT)MXC_SM_LD_##to(yr[k]) *                              \
                                       ((CT)MXC_SM_LD_##to(gr[k]) - s[k])) / T);                \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static int mxc_sm_bwd_##to##_##ti(mxc_opcall *call) {                                         \
    const TO *g = (const TO *)call->in[0].data;                                                 \
    const TO *y = (const TO *)call->in[1].data;                                                 \
    TI *dx = (TI *)call->out[0].data;                                                           \
    const int64_t outer = call->iattr[0], M = call->iattr[1], inner = call->iattr[2];           \
    const int logm = (int)call->iattr[3], neg = (int)call->iattr[4];                            \
    const mxc_tensor *lt = call->iattr[5] ? &call->in[2] : NULL;                                \
    const CT T = (CT)call->fattr[0];                                                            \
    const int64_t work = outer * M * inner;                                                     \
    if (work == 0) return 0;                                                                    \
    if (inner > 1 && lt == NULL) {                                                              \
      const int64_t nb = (inner + MXC_SM_W - 1) / MXC_SM_W, tasks = outer * nb;                 \
      const int nt = mxc_sm_threads(call, work, tasks);                                         \
      int64_t q;                                                                                \
      (void)nt;                                                                                 \
      MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                             \
      for (q = 0; q < tasks; q++) {                                                             \
        const int64_t o = q / nb, k0 = (q % nb) * MXC_SM_W;                                     \
        const int64_t k1 = k0 + MXC_SM_W < inner ? k0 + MXC_SM_W : inner;                       \
        mxc_sm_bwd_block_##to##_##ti(g, y, dx, o, k0, k1, M, inner, logm, neg, T);              \
      }                                                                                         \
    } else {                                                                                    \
      const int64_t tasks = outer * inner;                                                      \
      const int nt = mxc_sm_threads(call, work, tasks);                                         \
      int64_t q;                                                                                \
      (void)nt;                                                                                 \
      MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                             \
      for (q = 0; q < tasks; q++) {                                                             \
        const int64_t o = q / inner, k = q % inner;                                             \
        mxc_sm_bwd_col_##to##_##ti(g, y, dx, o * M * inner + k,                                 \
                                   lt != NULL ? mxc_sm_len(lt, q, M) : M, M, inner, logm, neg,  \
                                   T);                                                          \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }

#define MXC_SM_PAIR(a, A, b, B, CT)                                                             \
  MXC_SM_FWD(a, A, b, B, CT)                                                                    \
  MXC_SM_BWD(a, A, b, B, CT)

MXC_SM_PAIR(f16, uint16_t, f16, uint16_t, float)
MXC_SM_PAIR(f16, uint16_t, f32, float, float)
MXC_SM_PAIR(f16, uint16_t, f64, double, double)
MXC_SM_PAIR(f32, float, f16, uint16_t, float)
MXC_SM_PAIR(f32, float, f32, float, float)
MXC_SM_PAIR(f32, float, f64, double, double)
MXC_SM_PAIR(f64, double, f16, uint16_t, double)
MXC_SM_PAIR(f64, double, f32, float, double)
MXC_SM_PAIR(f64, double, f64, double, double)

/* ---- SoftmaxOutput backward ------------------------------------------------------------------ */
#define MXC_SM_OUT_BWD(tag, T, CT)                                                              \
  static int mxc_sm_out_bwd_##tag(mxc_opcall *call) {                                           \
    const T *y = (const T *)call->in[0].data;                                                   \
    const T *lab = (const T *)call->in[1].data;                                                 \
    T *dx = (T *)call->out[0].data;                                                             \
    const int64_t n = call->iattr[0], K = call->iattr[1], inner = call->iattr[2];               \
    const int use_ignore = (int)call->iattr[3], smooth = (int)call->iattr[4];                   \
    const int norm = (int)call->iattr[5], out_grad = (int)call->iattr[6];                       \
    const int multi = (int)call->iattr[7];                                                      \
    const int ign = (int)call->fattr[0];                                                        \
    const CT alpha = (CT)call->fattr[1];                                                        \
    const CT other = smooth && K > 1 ? alpha / (CT)(K - 1) : (CT)0;                             \
    const CT hit = (CT)1 - (smooth ? alpha : (CT)0);                                            \
    const int64_t P = n * inner;                                                                \
    int64_t valid = P, q;                                                                       \
    CT scale;                                                                                   \
    int nt;                                                                                     \
    const int64_t NL = call->niattr > 8 ? call->iattr[8] : P;                                  \
    if (norm == 1) {                                                                            \
      valid = multi ? n : NL;                                                                   \
    } else if (norm == 2) {                                                                     \
      valid = NL;                                                                               \
      for (q = 0; q < NL; q++)                                                                  \
        if ((int)MXC_SM_LD_##tag(lab[q]) == ign) valid--;                                       \
      if (valid == 0) valid = 1;                                                                \
    } else {                                                                                    \
      valid = 1;                                                                                \
    }                                                                                           \
    scale = (CT)(call->fattr[2] / (double)(multi && norm != 2 ? inner : 1) / (double)valid);    \
    nt = mxc_sm_threads(call, P * K, P);                                                        \
    (void)nt;                                                                                   \
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                               \
    for (q = 0; q < P; q++) {                                                                   \
      const int64_t o = q / inner, r = q % inner;                                               \
      const int k = (int)MXC_SM_LD_##tag(lab[q]);                                               \
      const int skip = use_ignore && k == ign;                                                  \
      int64_t c;                                                                                \
      for (c = 0; c < K; c++) {                                                                 \
        const int64_t i = (o * K + c) * inner + r;                                              \
        const CT yv = (CT)MXC_SM_LD_##tag(y[i]);                                                \
        CT v = skip ? (CT)0 : (c == k ? yv - hit : yv - other);                                 \
        v *= scale;                                                                             \
        if (out_grad) v *= yv;                                                                  \
        dx[i] = MXC_SM_ST_##tag(v);                                                             \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_sm_ce_##tag(mxc_opcall *call) {                                                \
    const T *x = (const T *)call->in[0].data;                                                   \
    const T *lab = (const T *)call->in[1].data;                                                 \
    T *out = (T *)call->out[0].data;                                                            \
    const int64_t N = call->in[0].shape[0], K = call->in[0].shape[1];                           \
    double total = 0.0;                                                                         \
    int64_t i, j;                                                                               \
    for (i = 0; i < N; i++) {                                                                   \
      const T *xr = x + i * K;                                                                  \
      const CT lv = (CT)MXC_SM_LD_##tag(lab[i]);                                                \
      const int64_t k = (int64_t)lv;                                                            \
      CT mx = (CT)-INFINITY, sum = 0, p;                                                        \
      if (!(lv > (CT)-1) || k >= K) {                                                           \
        snprintf(call->err, MXC_ERR_LEN,                                                        \
                 "softmax_cross_entropy: label %g of row %lld is outside [0, %lld)", (double)lv,  \
                 (long long)i, (long long)K);                                                   \
        return -1;                                                                              \
      }                                                                                         \
      for (j = 0; j < K; j++) {                                                                 \
        const CT v = (CT)MXC_SM_LD_##tag(xr[j]);                                                \
        mx = v > mx ? v : mx;                                                                   \
      }                                                                                         \
      for (j = 0; j < K; j++) sum += MXC_SM_EXP_##CT((CT)MXC_SM_LD_##tag(xr[j]) - mx);          \
      p = MXC_SM_EXP_##CT((CT)MXC_SM_LD_##tag(xr[k]) - mx) / sum;                               \
      total += -(double)MXC_SM_LOG_##CT(p > (CT)1e-8 ? p : (CT)1e-8);                           \
    }                                                                                           \
    out[0] = MXC_SM_ST_##tag(total);                                                            \
    return 0;                                                                                   \
  }

MXC_SM_OUT_BWD(f16, uint16_t, float)
MXC_SM_OUT_BWD(f32, float, float)
MXC_SM_OUT_BWD(f64, double, double)

/* ---- per-row softmax cross-entropy (Gluon's SoftmaxCrossEntropyLoss in one op) ---------------
 * softmax_ce_rows: in x (N, K), label (N values, x's dtype); out loss (N):
 *   loss[i] = -log_softmax(x[i])[k_i]
 * softmax_ce_rows_bwd: in g (N), x, label; out dx (N, K): dx[i, j] = g[i] (softmax(x[i])_j - [j = k_i]).
 * k_i is the label truncated to an integer and clipped to [0, K) (pick's default mode 'clip';
 * NaN reads as 0). */
#define MXC_SM_ROW_CLASS(lv, K) (!((lv) > 0) ? (int64_t)0 : (lv) >= (K) ? (K) - 1 : (int64_t)(lv))

#define MXC_SM_CE_ROWS(tag, T, CT)                                                              \
  static inline CT mxc_sm_row_lse_##tag(const T *xr, int64_t K, CT *mxp) {                     \
    CT mx = (CT)-INFINITY, sum = 0;                                                             \
    int64_t j;                                                                                  \
    for (j = 0; j < K; j++) {                                                                   \
      const CT v = (CT)MXC_SM_LD_##tag(xr[j]);                                                  \
      mx = v > mx ? v : mx;                                                                     \
    }                                                                                           \
    for (j = 0; j < K; j++) sum += MXC_SM_EXP_##CT((CT)MXC_SM_LD_##tag(xr[j]) - mx);            \
    *mxp = mx;                                                                                  \
    return MXC_SM_LOG_##CT(sum);                                                                \
  }                                                                                             \
  static int mxc_sm_ce_rows_##tag(mxc_opcall *call) {                                           \
    const T *x = (const T *)call->in[0].data, *lab = (const T *)call->in[1].data;               \
    T *out = (T *)call->out[0].data;                                                            \
    const int64_t N = call->in[0].shape[0], K = call->in[0].shape[1];                           \
    const int nt = call->nthreads;                                                              \
    int64_t i;                                                                                  \
    (void)nt;                                                                                   \
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (N * K >= 32768))           \
    for (i = 0; i < N; i++) {                                                                   \
      const T *xr = x + i * K;                                                                  \
      const CT lv = (CT)MXC_SM_LD_##tag(lab[i]);                                                \
      CT mx;                                                                                    \
      const CT lse = mxc_sm_row_lse_##tag(xr, K, &mx);                                          \
      const int64_t k = MXC_SM_ROW_CLASS(lv, K);                                                \
      out[i] = MXC_SM_ST_##tag(-(((CT)MXC_SM_LD_##tag(xr[k]) - mx) - lse));                     \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_sm_ce_rows_bwd_##tag(mxc_opcall *call) {                                       \
    const T *g = (const T *)call->in[0].data, *x = (const T *)call->in[1].data;                 \
    const T *lab = (const T *)call->in[2].data;                                                 \
    T *dx = (T *)call->out[0].data;                                                             \
    const int64_t N = call->in[1].shape[0], K = call->in[1].shape[1];                           \
    const int nt = call->nthreads;                                                              \
    int64_t i;                                                                                  \
    (void)nt;                                                                                   \
    MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static) if (N * K >= 32768))           \
    for (i = 0; i < N; i++) {                                                                   \
      const T *xr = x + i * K;                                                                  \
      T *dr = dx + i * K;                                                                       \
      const CT gi = (CT)MXC_SM_LD_##tag(g[i]);                                                  \
      const int64_t k = MXC_SM_ROW_CLASS((CT)MXC_SM_LD_##tag(lab[i]), K);                       \
      CT mx;                                                                                    \
      const CT lse = mxc_sm_row_lse_##tag(xr, K, &mx);                                          \
      int64_t j;                                                                                \
      for (j = 0; j < K; j++) {                                                                 \
        const CT p = MXC_SM_EXP_##CT((CT)MXC_SM_LD_##tag(xr[j]) - mx - lse);                    \
        dr[j] = MXC_SM_ST_##tag(gi * (j == k ? p - (CT)1 : p));                                 \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }

MXC_SM_CE_ROWS(f16, uint16_t, float)
MXC_SM_CE_ROWS(f32, float, float)
MXC_SM_CE_ROWS(f64, double, double)

MXC_VEC_END

#define MXC_SM_E2(a, ca, b, cb)                                                                 \
  {"softmax", ca, cb, mxc_sm_fwd_##a##_##b}, {"softmax_bwd", ca, cb, mxc_sm_bwd_##a##_##b},

static const mxc_kentry mxc_softmax_table[] = {
  MXC_SM_E2(f16, MXC_FLOAT16, f16, MXC_FLOAT16)
  MXC_SM_E2(f16, MXC_FLOAT16, f32, MXC_FLOAT32)
  MXC_SM_E2(f16, MXC_FLOAT16, f64, MXC_FLOAT64)
  MXC_SM_E2(f32, MXC_FLOAT32, f16, MXC_FLOAT16)
  MXC_SM_E2(f32, MXC_FLOAT32, f32, MXC_FLOAT32)
  MXC_SM_E2(f32, MXC_FLOAT32, f64, MXC_FLOAT64)
  MXC_SM_E2(f64, MXC_FLOAT64, f16, MXC_FLOAT16)
  MXC_SM_E2(f64, MXC_FLOAT64, f32, MXC_FLOAT32)
  MXC_SM_E2(f64, MXC_FLOAT64, f64, MXC_FLOAT64)
  {"softmax_output_bwd", MXC_FLOAT16, -1, mxc_sm_out_bwd_f16},
  {"softmax_output_bwd", MXC_FLOAT32, -1, mxc_sm_out_bwd_f32},
  {"softmax_output_bwd", MXC_FLOAT64, -1, mxc_sm_out_bwd_f64},
  {"softmax_ce", MXC_FLOAT16, -1, mxc_sm_ce_f16},
  {"softmax_ce", MXC_FLOAT32, -1, mxc_sm_ce_f32},
  {"softmax_ce", MXC_FLOAT64, -1, mxc_sm_ce_f64},
  {"softmax_ce_rows", MXC_FLOAT16, -1, mxc_sm_ce_rows_f16},
  {"softmax_ce_rows", MXC_FLOAT32, -1, mxc_sm_ce_rows_f32},
  {"softmax_ce_rows", MXC_FLOAT64, -1, mxc_sm_ce_rows_f64},
  {"softmax_ce_rows_bwd", MXC_FLOAT16, -1, mxc_sm_ce_rows_bwd_f16},
  {"softmax_ce_rows_bwd", MXC_FLOAT32, -1, mxc_sm_ce_rows_bwd_f32},
  {"softmax_ce_rows_bwd", MXC_FLOAT64, -1, mxc_sm_ce_rows_bwd_f64},
  {NULL, 0, 0, NULL}
};
#endif
