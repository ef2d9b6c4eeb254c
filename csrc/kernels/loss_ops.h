/* Loss-family kernels: smooth_l1 (forward, backward) and LRN (forward, backward).
 *
 * "smooth_l1": in x, out y, fattr[0] = sigma; with b = sigma^2:
 *    y = x - 0.5/b if x > 1/b; -x - 0.5/b if x < -1/b; 0.5 * b * x^2 otherwise (MXNet's
 *    smooth_l1_loss). "smooth_l1_bwd": in (head, x) -> head * (1, -1 or b * x).
 * "lrn": in x viewed as (n, C, rest), out y; iattr = {n, C, rest, nsize}, fattr = {alpha,
 *    beta, knorm}: norm = knorm + alpha/nsize * sum of x^2 over the channels c-h..c+h
 *    (h = nsize/2, clipped at the edges), y = x * norm^-beta.
 * "lrn_bwd": in (head, x) -> dx = g * norm^-beta
 *    - 2 beta alpha/nsize * x * sum over the window of g x norm^(-beta-1) (norm recomputed).
 * Keys: dtype code (float16/32/64; float16 computed in float32, the others in double for
 * the window sums).
 */
#ifndef MXC_KERNELS_LOSS_OPS_H
#define MXC_KERNELS_LOSS_OPS_H
#include "kernels/elemwise_common.h"

#define MXC_LO_LD_f16(v) mxc_half_to_float(v)
#define MXC_LO_LD_f32(v) (v)
#define MXC_LO_LD_f64(v) (v)
#define MXC_LO_ST_f16(v) mxc_float_to_half((float)(v))
#define MXC_LO_ST_f32(v) ((float)(v))
#define MXC_LO_ST_f64(v) ((double)(v))
#define MXC_LO_W 64        /* LRN: columns of `rest` handled together */

typedef struct {
  const void *x, *g;
  void *y;
  double sigma;
} mxc_lo_ctx;

MXC_VEC_BEGIN

#define MXC_LO_SMOOTH(tag, T, CT)                                                               \
  static void mxc_lo_sl1_##tag##_range(void *vc, int64_t lo, int64_t hi) {                      \
    const mxc_lo_ctx *c = (const mxc_lo_ctx *)vc;                                               \
    const T *x = (const T *)c->x;                                                               \
    T *y = (T *)c->y;                                                                           \
    const CT b = (CT)(c->sigma * c->sigma), ib = (CT)1 / b;                                     \
    int64_t i;                                                                                  \
    for (i = lo; i < hi; i++) {                                                                 \
      const CT a = (CT)MXC_LO_LD_##tag(x[i]);                                                   \
      y[i] = MXC_LO_ST_##tag(a > ib ? a - (CT)0.5 * ib                                          \
                                    : (a < -ib ? -a - (CT)0.5 * ib : (CT)0.5 * a * a * b));     \
    }                                                                                           \
  }                                                                                             \
  static void mxc_lo_sl1b_##tag##_range(void *vc, int64_t lo, int64_t hi) {                     \
    const mxc_lo_ctx *c = (const mxc_lo_ctx *)vc;                                               \
    const T *x = (const T *)c->x, *g = (const T *)c->g;                                         \
    T *y = (T *)c->y;                                                                           \
    const CT b = (CT)(c->sigma * c->sigma), ib = (CT)1 / b;                                     \
    int64_t i;                                                                                  \
    for (i = lo; i < hi; i++) {                                                                 \
      const CT a = (CT)MXC_LO_LD_##tag(x[i]);                                                   \
      const CT d = a > ib ? (CT)1 : (a < -ib ? (CT)-1 : b * a);                                 \
      y[i] = MXC_LO_ST_##tag((CT)MXC_LO_LD_##tag(g[i]) * d);                                    \
    }                                                                                           \
  }                                                                                             \
  static int mxc_lo_sl1_##tag(mxc_opcall *call) {                                               \
    mxc_lo_ctx c;                                                                               \
    c.x = call->in[0].data;                                                                     \
    c.g = NULL;                                                                                 \
    c.y = call->out[0].data;                                                                    \
    c.sigma = call->fattr[0];                                                                   \
    mxc_parallel_range(call->out[0].size, call->nthreads, MXC_PAR_MIN_CHEAP,                    \
                       mxc_lo_sl1_##tag##_range, &c);                                           \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_lo_sl1b_##tag(mxc_opcall *call) {                                              \
    mxc_lo_ctx c;                                                                               \
    c.g = call->in[0].data;                                                                     \
    c.x = call->in[1].data;                                                                     \
    c.y = call->out[0].data;                                                                    \
    c.sigma = call->fattr[0];                                                                   \
    mxc_parallel_range(call->out[0].size, call->nthreads, MXC_PAR_MIN_CHEAP,                    \
                       mxc_lo_sl1b_##tag##_range, &c);                                          \
    return 0;                                                                                   \
  }

MXC_LO_SMOOTH(f16, uint16_t, float)
MXC_LO_SMOOTH(f32, float, float)
MXC_LO_SMOOTH(f64, double, double)

/* LRN over tasks (n index, block of MXC_LO_W columns of rest); per task the squares and norms
 * of all C channels for the block are kept in a scratch buffer (C * W doubles, x2 backward). */
#define MXC_LO_LRN(tag, T)                                                                      \
  static int mxc_lo_lrn_##tag(mxc_opcall *call) {                                               \
    const T *x = (const T *)call->in[0].data;                                                   \
    T *y = (T *)call->out[0].data;                                                              \
    const int64_t n = call->iattr[0], C = call->iattr[1], rest = call->iattr[2];                \
    const int64_t h = call->iattr[3] / 2;                                                       \
    const double salpha = call->fattr[0] / (double)call->iattr[3], beta = call->fattr[1];       \
    const double knorm = call->fattr[2];                                                        \
    const int64_t nb = (rest + MXC_LO_W - 1) / MXC_LO_W, tasks = n * nb;                        \
    int nt = (call->nthreads > 1 && n * C * rest >= 8192) ? call->nthreads : 1;                 \
    int err = 0;                                                                                \
    if (nt > tasks) nt = tasks > 1 ? (int)tasks : 1;                                            \
    (void)nt;                                                                                   \
    if (tasks == 0 || C == 0) return 0;                                                         \
    MXC_PRAGMA(omp parallel num_threads(nt))                                                    \
    {                                                                                           \
      double *sq = (double *)malloc((size_t)C * MXC_LO_W * sizeof(double));                     \
      int64_t q;                                                                                \
      {                                                                                         \
        MXC_PRAGMA(omp for schedule(static))                                                    \
        for (q = 0; q < tasks; q++) {                                                           \
          const int64_t i = q / nb, k0 = (q % nb) * MXC_LO_W;                                   \
          const int64_t w = k0 + MXC_LO_W < rest ? MXC_LO_W : rest - k0;                        \
          int64_t c, cc, k;                                                                     \
          if (sq == NULL) {                                                                   \
            MXC_PRAGMA(omp atomic write)                                                        \
            err = 1;                                                                            \
            continue;                                                                           \
          }                                                                                     \
          for (c = 0; c < C; c++) {                                                             \
            const T *xr = x + (i * C + c) * rest + k0;                                          \
            double *s = sq + c * MXC_LO_W;                                                      \
            for (k = 0; k < w; k++) {                                                           \
              const double v = (double)MXC_LO_LD_##tag(xr[k]);                                  \
              s[k] = v * v;                                                                     \
            }                                                                                   \
          }                                                                                     \
          for (c = 0; c < C; c++) {                                                             \
            double acc[MXC_LO_W];                                                               \
            const int64_t lo = c - h < 0 ? 0 : c - h, hi = c + h >= C ? C - 1 : c + h;          \
            const T *xr = x + (i * C + c) * rest + k0;                                          \
            T *yr = y + (i * C + c) * rest + k0;                                                \
            for (k = 0; k < w; k++) acc[k] = 0.0;                                               \
            for (cc = lo; cc <= hi; cc++)                                                       \
              for (k = 0; k < w; k++) acc[k] += sq[cc * MXC_LO_W + k];                          \
            for (k = 0; k < w; k++)                                                             \
              yr[k] = MXC_LO_ST_##tag((double)MXC_LO_LD_##tag(xr[k]) *                          \
                                      pow(knorm + salpha * acc[k], -beta));                     \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
      free(sq);                                                                                 \
    }                                                                                           \
    if (err) return mxc_fail(call, "LRN: out of memory");                                       \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_lo_lrnb_##tag(mxc_opcall *call) {                                              \
    const T *g = (const T *)call->in[0].data;                                                   \
    const T *x = (const T *)call->in[1].data;                                                   \
    T *dx = (T *)call->out[0].data;                                                             \
    const int64_t n = call->iattr[0], C = call->iattr[1], rest = call->iattr[2];                \
    const int64_t h = call->iattr[3] / 2;                                                       \
    const double salpha = call->fattr[0] / (double)call->iattr[3], beta = call->fattr[1];       \
    const double knorm = call->fattr[2];                                                        \
    const int64_t nb = (rest + MXC_LO_W - 1) / MXC_LO_W, tasks = n * nb;                        \
    int nt = (call->nthreads > 1 && n * C * rest >= 8192) ? call->nthreads : 1;                 \
    int err = 0;                                                                                \
    if (nt > tasks) nt = tasks > 1 ? (int)tasks : 1;                                            \
    (void)nt;                                                                                   \
    if (tasks == 0 || C == 0) return 0;                                                         \
    MXC_PRAGMA(omp parallel num_threads(nt))                                                    \
    {                                                                                           \
      /* nrm: norm per (c, k); t: g * x * norm^(-beta-1) per (c, k) */                          \
      double *nrm = (double *)malloc((size_t)C * MXC_LO_W * 2 * sizeof(double));                \
      int64_t q;                                                                                \
      {                                                                                         \
        double *t = nrm != NULL ? nrm + C * MXC_LO_W : NULL;                                   \
        MXC_PRAGMA(omp for schedule(static))                                                    \
        for (q = 0; q < tasks; q++) {                                                           \
          const int64_t i = q / nb, k0 = (q % nb) * MXC_LO_W;                                   \
          const int64_t w = k0 + MXC_LO_W < rest ? MXC_LO_W : rest - k0;                        \
          int64_t c, cc, k;                                                                     \
          if (nrm == NULL) {                                                                   \
            MXC_PRAGMA(omp atomic write)                                                        \
            err = 1;                                                                            \
            continue;                                                                           \
          }                                                                                     \
          for (c = 0; c < C; c++) {                                                             \
            const T *xr = x + (i * C + c) * rest + k0;                                          \
            for (k = 0; k < w; k++) {                                                           \
              const double v = (double)MXC_LO_LD_##tag(xr[k]);                                  \
              t[c * MXC_LO_W + k] = v * v;                                                      \
            }                                                                                   \
          }                                                                                     \
          for (c = 0; c < C; c++) {                                                             \
            const int64_t lo = c - h < 0 ? 0 : c - h, hi = c + h >= C ? C - 1 : c + h;          \
            double *nr = nrm + c * MXC_LO_W;                                                    \
            for (k = 0; k < w; k++) nr[k] = 0.0;                                                \
            for (cc = lo; cc <= hi; cc++)                                                       \
              for (k = 0; k < w; k++) nr[k] += t[cc * MXC_LO_W + k];                            \
            for (k = 0; k < w; k++) nr[k] = knorm + salpha * nr[k];                             \
          }                                                                                     \
          for (c = 0; c < C; c++) {                                                             \
            const T *xr = x + (i * C + c) * rest + k0, *gr = g + (i * C + c) * rest + k0;       \
            for (k = 0; k < w; k++) {                                                           \
              const double nv = nrm[c * MXC_LO_W + k];                                          \
              t[c * MXC_LO_W + k] = (double)MXC_LO_LD_##tag(gr[k]) *                            \
                                    (double)MXC_LO_LD_##tag(xr[k]) * pow(nv, -beta - 1.0);      \
            }                                                                                   \
          }                                                                                     \
          for (c = 0; c < C; c++) {                                                             \
            double acc[MXC_LO_W];                                                               \
            const int64_t lo = c - h < 0 ? 0 : c - h, hi = c + h >= C ? C - 1 : c + h;          \
            const T *xr = x + (i * C + c) * rest + k0, *gr = g + (i * C + c) * rest + k0;       \
            T *dr = dx + (i * C + c) * rest + k0;                                               \
            for (k = 0; k < w; k++) acc[k] = 0.0;                                               \
            for (cc = lo; cc <= hi; cc++)                                                       \
              for (k = 0; k < w; k++) acc[k] += t[cc * MXC_LO_W + k];                           \
            for (k = 0; k < w; k++)                                                             \
              dr[k] = MXC_LO_ST_##tag(                                                          \
                  (double)MXC_LO_LD_##tag(gr[k]) * pow(nrm[c * MXC_LO_W + k], -beta) -          \
                  2.0 * beta * salpha * (double)MXC_LO_LD_##tag(xr[k]) * acc[k]);               \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
      free(nrm);                                                                                \
    }                                                                                           \
    if (err) return mxc_fail(call, "LRN: out of memory");                                       \
    return 0;                                                                                   \
  }

MXC_LO_LRN(f16, uint16_t)
MXC_LO_LRN(f32, float)
MXC_LO_LRN(f64, double)

MXC_VEC_END

static const mxc_kentry mxc_loss_ops_table[] = {
  {"smooth_l1", MXC_FLOAT16, -1, mxc_lo_sl1_f16},
  {"smooth_l1", MXC_FLOAT32, -1, mxc_lo_sl1_f32},
  {"smooth_l1", MXC_FLOAT64, -1, mxc_lo_sl1_f64},
  {"smooth_l1_bwd", MXC_FLOAT16, -1, mxc_lo_sl1b_f16},
  {"smooth_l1_bwd", MXC_FLOAT32, -1, mxc_lo_sl1b_f32},
  {"smooth_l1_bwd", MXC_FLOAT64, -1, mxc_lo_sl1b_f64},
  {"lrn", MXC_FLOAT16, -1, mxc_lo_lrn_f16},
  {"lrn", MXC_FLOAT32, -1, mxc_lo_lrn_f32},
  {"lrn", MXC_FLOAT64, -1, mxc_lo_lrn_f64},
  {"lrn_bwd", MXC_FLOAT16, -1, mxc_lo_lrnb_f16},
  {"lrn_bwd", MXC_FLOAT32, -1, mxc_lo_lrnb_f32},
  {"lrn_bwd", MXC_FLOAT64, -1, mxc_lo_lrnb_f64},
  {NULL, 0, 0, NULL}
};
#endif
