/* The fused gate steps of the RNN operator (mxc/ops/rnn.py) on the CPU; the arithmetic is
 * csrc/kernels/rnn_cell_math.h's, shared with the GPU (mxc/ops/cuda/rnn_cell.cu).
 *
 * "lstm": in (gates (N, 4H), c (N, H)) -> (h (N, H), c' (N, H)); iattr[0] = clip,
 *    fattr = {lo, hi} (the cell state's bounds when clip).
 * "lstm_bwd": in (gates, c, dh, dc') -> (dgates (N, 4H), dc (N, H)); same attributes.
 * "gru": in (xs (N, 3H), hh (N, 3H), h (N, H)) -> h' (N, H).
 * "gru_bwd": in (xs, hh, h, dh') -> (dxs (N, 3H), dhh (N, 3H), dh (N, H)).
 * Keys: the dtype code (float16 computed in float, float32 in float, float64 in double).
 * A range of units is walked row by row, each row's units contiguous (one division per row, and
 * the loop over a row's units vectorises).
 */
#ifndef MXC_KERNELS_RNN_CELL_H
#define MXC_KERNELS_RNN_CELL_H
#include "kernels/elemwise_common.h"
/* the gates' exp and tanh: the vectorising ones (elemwise_common.h; within 1 ulp of libm's,
 * which cost a call per element: 425 us for 32 x 256 units on one thread, against 42 us) */
#define MXC_RNN_EXPF mxc_expf
#define MXC_RNN_TANHF mxc_tanhf
MXC_VEC_BEGIN
#include "kernels/rnn_cell_math.h"
MXC_VEC_END

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

/* The units lo .. hi of rows of H, a row's part at a time: r the row, j its first unit, n how many.
 * Each part goes to a row kernel, which takes restrict pointers and a count (so gcc vectorises
 * its loop: the inputs and outputs of these operators never share memory, none declares an
 * in-place pair) and is compiled for AVX2 and AVX-512 too. */
#define MXC_RC_FOR_PARTS(lo, hi, H, r, j, n)                                                    \
  for (int64_t k_ = (lo), r = 0, j = 0, n = 0;                                                  \
       k_ < (hi) && (r = k_ / (H), j = k_ - r * (H),                                            \
                     n = (hi) - k_ < (H) - j ? (hi) - k_ : (H) - j, 1);                         \
       k_ += n)

/* tag: dtype tag; T: storage; S: the math's suffix (f, d); R: its type. The row kernels take
 * the row's first gate (rows of 4H or 3H gates) and its first unit (rows of H). */
#define MXC_RC_KERNELS(tag, T, S, R)                                                            \
  MXC_SIMD_CLONES                                                                               \
  static void mxc_rc_lstm_##tag##_row(const T *restrict g, const T *restrict cp,                \
                                      T *restrict h, T *restrict cn, int64_t n, int64_t H,      \
                                      int clip, R lo, R hi) {                                   \
    int64_t j;                                                                                  \
    for (j = 0; j < n; j++) {                                                                   \
      R cv;                                                                                     \
      const R hv = mxc_lstm_fwd_##S(MXC_RC_LD_##tag(g[j]), MXC_RC_LD_##tag(g[j + H]),           \
                                    MXC_RC_LD_##tag(g[j + 2 * H]),                              \
                                    MXC_RC_LD_##tag(g[j + 3 * H]), MXC_RC_LD_##tag(cp[j]),      \
                                    clip, lo, hi, &cv);                                         \
      h[j] = MXC_RC_ST_##tag(hv);                                                               \
      cn[j] = MXC_RC_ST_##tag(cv);                                                              \
    }                                                                                           \
  }                                                                                             \
  MXC_SIMD_CLONES                                                                               \
  static void mxc_rc_lstmb_##tag##_row(const T *restrict g, const T *restrict cp,               \
                                       const T *restrict dh, const T *restrict dc,              \
                                       T *restrict da, T *restrict dcp, int64_t n, int64_t H,   \
                                       int clip, R lo, R hi) {                                  \
    int64_t j;                                                                                  \
    for (j = 0; j < n; j++) {                                                                   \
      R d[4], dcv;                                                                              \
      mxc_lstm_bwd_##S(MXC_RC_LD_##tag(g[j]), MXC_RC_LD_##tag(g[j + H]),                        \
                       MXC_RC_LD_##tag(g[j + 2 * H]), MXC_RC_LD_##tag(g[j + 3 * H]),            \
                       MXC_RC_LD_##tag(cp[j]), clip, lo, hi, MXC_RC_LD_##tag(dh[j]),            \
                       MXC_RC_LD_##tag(dc[j]), d, &dcv);                                        \
      da[j] = MXC_RC_ST_##tag(d[0]);                                                            \
      da[j + H] = MXC_RC_ST_##tag(d[1]);                                                        \
      da[j + 2 * H] = MXC_RC_ST_##tag(d[2]);                                                    \
      da[j + 3 * H] = MXC_RC_ST_##tag(d[3]);                                                    \
      dcp[j] = MXC_RC_ST_##tag(dcv);                                                            \
    }                                                                                           \
  }                                                                                             \
  MXC_SIMD_CLONES                                                                               \
  static void mxc_rc_gru_##tag##_row(const T *restrict xs, const T *restrict hh,                \
                                     const T *restrict hp, T *restrict h, int64_t n,            \
                                     int64_t H) {                                               \
    int64_t j;                                                                                  \
    for (j = 0; j < n; j++)                                                                     \
      h[j] = MXC_RC_ST_##tag(mxc_gru_fwd_##S(                                                   \
          MXC_RC_LD_##tag(xs[j]), MXC_RC_LD_##tag(xs[j + H]), MXC_RC_LD_##tag(xs[j + 2 * H]),   \
          MXC_RC_LD_##tag(hh[j]), MXC_RC_LD_##tag(hh[j + H]), MXC_RC_LD_##tag(hh[j + 2 * H]),   \
          MXC_RC_LD_##tag(hp[j])));                                                             \
  }                                                                                             \
  MXC_SIMD_CLONES                                                                               \
  static void mxc_rc_grub_##tag##_row(const T *restrict xs, const T *restrict hh,               \
                                      const T *restrict hp, const T *restrict dh,               \
                                      T *restrict dxs, T *restrict dhh, T *restrict dhp,        \
                                      int64_t n, int64_t H) {                                   \
    int64_t j;                                                                                  \
    for (j = 0; j < n; j++) {                                                                   \
      R dx[3], dhn, dhv;                                                                        \
      mxc_gru_bwd_##S(MXC_RC_LD_##tag(xs[j]), MXC_RC_LD_##tag(xs[j + H]),                       \
                      MXC_RC_LD_##tag(xs[j + 2 * H]), MXC_RC_LD_##tag(hh[j]),                   \
                      MXC_RC_LD_##tag(hh[j + H]), MXC_RC_LD_##tag(hh[j + 2 * H]),               \
                      MXC_RC_LD_##tag(hp[j]), MXC_RC_LD_##tag(dh[j]), dx, &dhn, &dhv);          \
      dxs[j] = dhh[j] = MXC_RC_ST_##tag(dx[0]);                                                 \
      dxs[j + H] = dhh[j + H] = MXC_RC_ST_##tag(dx[1]);                                         \
      dxs[j + 2 * H] = MXC_RC_ST_##tag(dx[2]);                                                  \
      dhh[j + 2 * H] = MXC_RC_ST_##tag(dhn);                                                    \
      dhp[j] = MXC_RC_ST_##tag(dhv);                                                            \
    }                                                                                           \
  }                                                                                             \
  static void mxc_rc_lstm_##tag##_range(void *vc, int64_t lo, int64_t hi) {                     \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *a = (const T *)c->in[0], *cp = (const T *)c->in[1];                                \
    T *h = (T *)c->out[0], *cn = (T *)c->out[1];                                                \
    const int64_t H = c->H;                                                                     \
    MXC_RC_FOR_PARTS(lo, hi, H, r, j, n)                                                        \
      mxc_rc_lstm_##tag##_row(a + r * 4 * H + j, cp + r * H + j, h + r * H + j, cn + r * H + j, \
                              n, H, c->clip, (R)c->lo, (R)c->hi);                               \
  }                                                                                             \
  static void mxc_rc_lstmb_##tag##_range(void *vc, int64_t lo, int64_t hi) {                    \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *a = (const T *)c->in[0], *cp = (const T *)c->in[1];                                \
    const T *dh = (const T *)c->in[2], *dc = (const T *)c->in[3];                               \
    T *da = (T *)c->out[0], *dcp = (T *)c->out[1];                                              \
    const int64_t H = c->H;                                                                     \
    MXC_RC_FOR_PARTS(lo, hi, H, r, j, n)                                                        \
      mxc_rc_lstmb_##tag##_row(a + r * 4 * H + j, cp + r * H + j, dh + r * H + j,               \
                               dc + r * H + j, da + r * 4 * H + j, dcp + r * H + j, n, H,       \
                               c->clip, (R)c->lo, (R)c->hi);                                    \
  }                                                                                             \
  static void mxc_rc_gru_##tag##_range(void *vc, int64_t lo, int64_t hi) {                      \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *xs = (const T *)c->in[0], *hh = (const T *)c->in[1], *hp = (const T *)c->in[2];    \
    T *h = (T *)c->out[0];                                                                      \
    const int64_t H = c->H;                                                                     \
    MXC_RC_FOR_PARTS(lo, hi, H, r, j, n)                                                        \
      mxc_rc_gru_##tag##_row(xs + r * 3 * H + j, hh + r * 3 * H + j, hp + r * H + j,            \
                             h + r * H + j, n, H);                                              \
  }                                                                                             \
  static void mxc_rc_grub_##tag##_range(void *vc, int64_t lo, int64_t hi) {                     \
    const mxc_rc_ctx *c = (const mxc_rc_ctx *)vc;                                               \
    const T *xs = (const T *)c->in[0], *hh = (const T *)c->in[1], *hp = (const T *)c->in[2];    \
    const T *dh = (const T *)c->in[3];                                                          \
    T *dxs = (T *)c->out[0], *dhh = (T *)c->out[1], *dhp = (T *)c->out[2];                      \
    const int64_t H = c->H;                                                                     \
    MXC_RC_FOR_PARTS(lo, hi, H, r, j, n)                                                        \
      mxc_rc_grub_##tag##_row(xs + r * 3 * H + j, hh + r * 3 * H + j, hp + r * H + j,           \
                              dh + r * H + j, dxs + r * 3 * H + j, dhh + r * 3 * H + j,         \
                              dhp + r * H + j, n, H);                                           \
  }                                                                                             \
  static int mxc_rc_lstm_##tag(mxc_opcall *call) {                                              \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[1].shape[call->in[1].ndim - 1]);                            \
    c.clip = (int)call->iattr[0];                                                               \
    c.lo = call->fattr[0];                                                                      \
    c.hi = call->fattr[1];                                                                      \
    mxc_parallel_range(call->out[0].size, call->nthreads, MXC_PAR_MIN_HEAVY,                       \
                       mxc_rc_lstm_##tag##_range, &c);                                          \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_rc_lstmb_##tag(mxc_opcall *call) {                                             \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[1].shape[call->in[1].ndim - 1]);                            \
    c.clip = (int)call->iattr[0];                                                               \
    c.lo = call->fattr[0];                                                                      \
    c.hi = call->fattr[1];                                                                      \
    mxc_parallel_range(call->out[1].size, call->nthreads, MXC_PAR_MIN_HEAVY,                       \
                       mxc_rc_lstmb_##tag##_range, &c);                                         \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_rc_gru_##tag(mxc_opcall *call) {                                               \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[2].shape[call->in[2].ndim - 1]);                            \
    mxc_parallel_range(call->out[0].size, call->nthreads, MXC_PAR_MIN_HEAVY,                       \
                       mxc_rc_gru_##tag##_range, &c);                                           \
    return 0;                                                                                   \
  }                                                                                             \
  static int mxc_rc_grub_##tag(mxc_opcall *call) {                                              \
    mxc_rc_ctx c;                                                                               \
    mxc_rc_setup(&c, call, call->in[2].shape[call->in[2].ndim - 1]);                            \
    mxc_parallel_range(call->out[2].size, call->nthreads, MXC_PAR_MIN_HEAVY,                       \
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
