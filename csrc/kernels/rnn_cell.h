/* The fused gate steps of the RNN operator (mxc/ops/rnn.py) on the CPU; the arithmetic is
 * csrc/kernels/rnn_cell_math.h's, shared with the GPU (mxc/ops/cuda/rnn_cell.cu).
 *
 * "lstm": in (gates (N, 4H), c (N, H)) -> (h (N, H), c' (N, H)); iattr[0] = clip,
 *    fattr = {lo, hi} (the cell state's bounds when clip).
 * "lstm_bwd": in (gates, c, dh, dc') -> (dgates (N, 4H), dc (N, H)); same attributes.
 * "gru": in (xs (N, 3H), hh (N, 3H), h (N, H)) -> h' (N, H).
 * "gru_bwd": in (xs, hh, h, dh') -> (dxs (N, 3H), dhh (N, 3H), dh (N, H)).
 * Keys: the dtype code (float16 computed in float, float32 in float, float64 in double).
 */
#ifndef MXC_KERNELS_RNN_CELL_H
#define MXC_KERNELS_RNN_CELL_H
#include "kernels/elemwise_common.h"
#include "kernels/rnn_cell_math.h"

#define MXC_RC_LD_f16(v) mxc_half_to_float(v)
#define MXC_RC_LD_f32(v) (v)
#define MXC_RC_LD_f64(v) (v)
#define MXC_RC_ST_f16(v) mxc_float_to_half((float)(v))
#define MXC_RC_ST_f32(v) ((float)(v))
#define MXC_RC_ST_f64(v) ((double)(v))

typedef struct {
  const void *in[4];
  void *out[3];
  int64_t H;
  int clip;
  double lo, hi;
} mxc_rc_ctx;

static void mxc_rc_setup(mxc_rc_ctx *c, mxc_opcall *call, int64_t H) {
  int k;
  for (k = 0; k < 4; k++) c->in[k] = k < call->nin ? call->in[k].data : NULL;
  for (k = 0; k < 3; k++) c->out[k] = k < call->nout ? call->out[k].data : NULL;
  c->H = H;
  c->clip = 0;
  c->lo = c->hi = 0;
}

/* tag: dtype tag; T: storage; S: the math's suffix (f, d); R: its type */
#define MXC_RC_KERNELS(tag, T, S, R)                                                            \
  static void mxc_rc_lstm_##tag##_range(void *vc, int64_t lo, int64_t hi) {                     \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *a = (const T *)c->in[0], *cp = (const T *)c->in[1];                                \
    T *h = (T *)c->out[0], *cn = (T *)c->out[1];                                                \
    const int64_t H = c->H;                                                                     \
    int64_t k;                                                                                  \
    for (k = lo; k < hi; k++) {                                                                 \
      const T *g = a + (k / H) * 4 * H + k % H;                                                 \
      R cv;                                                                                     \
      const R hv = mxc_lstm_fwd_##S(MXC_RC_LD_##tag(g[0]), MXC_RC_LD_##tag(g[H]),               \
                                    MXC_RC_LD_##tag(g[2 * H]), MXC_RC_LD_##tag(g[3 * H]),       \
                                    MXC_RC_LD_##tag(cp[k]), c->clip, (R)c->lo, (R)c->hi, &cv);  \
      h[k] = MXC_RC_ST_##tag(hv);                                                               \
      cn[k] = MXC_RC_ST_##tag(cv);                                                              \
    }                                                                                           \
  }                                                                                             \
  static void mxc_rc_lstmb_##tag##_range(void *vc, int64_t lo, int64_t hi) {                    \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *a = (const T *)c->in[0], *cp = (const T *)c->in[1];                                \
    const T *dh = (const T *)c->in[2], *dc = (const T *)c->in[3];                               \
    T *da = (T *)c->out[0], *dcp = (T *)c->out[1];                                              \
    const int64_t H = c->H;                                                                     \
    int64_t k;                                                                                  \
    for (k = lo; k < hi; k++) {                                                                 \
      const int64_t o = (k / H) * 4 * H + k % H;                                                \
      const T *g = a + o;                                                                       \
      R d[4], dcv;                                                                              \
      mxc_lstm_bwd_##S(MXC_RC_LD_##tag(g[0]), MXC_RC_LD_##tag(g[H]), MXC_RC_LD_##tag(g[2 * H]),  \
                       MXC_RC_LD_##tag(g[3 * H]), MXC_RC_LD_##tag(cp[k]), c->clip, (R)c->lo,     \
                       (R)c->hi, MXC_RC_LD_##tag(dh[k]), MXC_RC_LD_##tag(dc[k]), d, &dcv);       \
      da[o] = MXC_RC_ST_##tag(d[0]);                                                            \
      da[o + H] = MXC_RC_ST_##tag(d[1]);                                                        \
      da[o + 2 * H] = MXC_RC_ST_##tag(d[2]);                                                    \
      da[o + 3 * H] = MXC_RC_ST_##tag(d[3]);                                                    \
      dcp[k] = MXC_RC_ST_##tag(dcv);                                                            \
    }                                                                                           \
  }                                                                                             \
  static void mxc_rc_gru_##tag##_range(void *vc, int64_t lo, int64_t hi) {                      \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *xs = (const T *)c->in[0], *hh = (const T *)c->in[1], *hp = (const T *)c->in[2];    \
    T *h = (T *)c->out[0];                                                                      \
    const int64_t H = c->H;                                                                     \
    int64_t k;                                                                                  \
    for (k = lo; k < hi; k++) {                                                                 \
      const int64_t o = (k / H) * 3 * H + k % H;                                                \
      h[k] = MXC_RC_ST_##tag(mxc_gru_fwd_##S(                                                   \
          MXC_RC_LD_##tag(xs[o]), MXC_RC_LD_##tag(xs[o + H]), MXC_RC_LD_##tag(xs[o + 2 * H]),   \
          MXC_RC_LD_##tag(hh[o]), MXC_RC_LD_##tag(hh[o + H]), MXC_RC_LD_##tag(hh[o + 2 * H]),   \
          MXC_RC_LD_##tag(hp[k])));                                                             \
    }                                                                                           \
  }                                                                                             \
  static void mxc_rc_grub_##tag##_range(void *vc, int64_t lo, int64_t hi) {                     \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *xs = (const T *)c->in[0], *hh = (const T *)c->in[1], *hp = (const T *)c->in[2];    \
    const T *dh = (const T *)c->in[3];                                                          \
    T *dxs = (T *)c->out[0], *dhh = (T *)c->out[1], *dhp = (T *)c->out[2];                      \
    const int64_t H = c->H;                                                                     \
    int64_t k;                                                                                  \
    for (k = lo; k < hi; k++) {                                                                 \
      const int64_t o = (k / H) * 3 * H + k % H;                                                \
      R dx[3], dhn, dhv;                                                                        \
      mxc_gru_bwd_##S(MXC_RC_LD_##tag(xs[o]), MXC_RC_LD_##tag(xs[o + H]),                       \
                      MXC_RC_LD_##tag(xs[o + 2 * H]), MXC_RC_LD_##tag(hh[o]),                   \
                      MXC_RC_LD_##tag(hh[o + H]), MXC_RC_LD_##tag(hh[o + 2 * H]),               \
                      MXC_RC_LD_##tag(hp[k]), MXC_RC_LD_##tag(dh[k]), dx, &dhn, &dhv);          \
      dxs[o] = dhh[o] = MXC_RC_ST_##tag(dx[0]);                                                 \
      dxs[o + H] = dhh[o + H] = MXC_RC_ST_##tag(dx[1]);                                         \
      dxs[o + 2 * H] = MXC_RC_ST_##tag(dx[2]);                                                  \
      dhh[o + 2 * H] = MXC_RC_ST_##tag(dhn);                                                    \
      dhp[k] = MXC_RC_ST_##tag(dhv);                                                            \
    }                                                                                           \
  }                                                                                             \
  static int mxc_rc_lstm_##tag(mxc_opcall *call) {                                              \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[1].shape[call->in[1].ndim - 1]);                            \
    c.clip = (int)call->iattr[0];                                                               \
    c.lo = call->fattr[0];                                                                      \
    c.hi = call->fattr[1];                                                                      \
    mxc_parallel_range(call->out[0].size, call->nthreads, MXC_PAR_MIN_CHEAP,                    \
                       mxc_rc_lstm_##tag##_range, &c);                                          \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_rc_lstmb_##tag(mxc_opcall *call) {                                             \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[1].shape[call->in[1].ndim - 1]);                            \
    c.clip = (int)call->iattr[0];                                                               \
    c.lo = call->fattr[0];                                                                      \
    c.hi = call->fattr[1];                                                                      \
    mxc_parallel_range(call->out[1].size, call->nthreads, MXC_PAR_MIN_CHEAP,                    \
                       mxc_rc_lstmb_##tag##_range, &c);                                         \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_rc_gru_##tag(mxc_opcall *call) {                                               \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[2].shape[call->in[2].ndim - 1]);                            \
    mxc_parallel_range(call->out[0].size, call->nthreads, MXC_PAR_MIN_CHEAP,                    \
                       mxc_rc_gru_##tag##_range, &c);                                           \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_rc_grub_##tag(mxc_opcall *call) {                                              \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[2].shape[call->in[2].ndim - 1]);                            \
    mxc_parallel_range(call->out[2].size, call->nthreads, MXC_PAR_MIN_CHEAP,                    \
                       mxc_rc_grub_##tag##_range, &c);                                          \
    return 0;                                                                                   \
  }

MXC_RC_KERNELS(f16, uint16_t, f, float)
MXC_RC_KERNELS(f32, float, f, float)
MXC_RC_KERNELS(f64, double, d, double)

static const mxc_kentry mxc_rnn_cell_table[] = {
  {"lstm", MXC_FLOAT16, -1, mxc_rc_lstm_f16},
  {"lstm", MXC_FLOAT32, -1, mxc_rc_lstm_f32},
  {"lstm", MXC_FLOAT64, -1, mxc_rc_lstm_f64},
  {"lstm_bwd", MXC_FLOAT16, -1, mxc_rc_lstmb_f16},
  {"lstm_bwd", MXC_FLOAT32, -1, mxc_rc_lstmb_f32},
  {"lstm_bwd", MXC_FLOAT64, -1, mxc_rc_lstmb_f64},
  {"gru", MXC_FLOAT16, -1, mxc_rc_gru_f16},
  {"gru", MXC_FLOAT32, -1, mxc_rc_gru_f32},
  {"gru", MXC_FLOAT64, -1, mxc_rc_gru_f64},
  {"gru_bwd", MXC_FLOAT16, -1, mxc_rc_grub_f16},
  {"gru_bwd", MXC_FLOAT32, -1, mxc_rc_grub_f32},
  {"gru_bwd", MXC_FLOAT64, -1, mxc_rc_grub_f64},
  {NULL, 0, 0, NULL}
};
#endif
