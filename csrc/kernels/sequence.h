/* Sequence kernels: SequenceMask, SequenceLast (and its gradient), SequenceReverse.
 *
 * data is viewed as (T, B, R) for axis 0 or (B, T, R) for axis 1 (R: the trailing dims).
 * in = (data[, lengths (B,)]) (any numeric dtype for lengths; without them every length is T);
 * iattr [axis, T, B, R, has_len]; lengths are truncated toward zero and clipped into [0, T]
 * (SequenceLast and its gradient use length - 1 clipped into [0, T - 1]).
 *
 * seq_mask: out = data where t < len[b], else fattr[0].
 * seq_last: out (B, R) = data at t = len[b] - 1.
 * seq_last_grad: in (g (B, R)[, lengths]), out (T, B, R) or (B, T, R): zero but g at len[b] - 1.
 * seq_reverse (axis 0 only, as MXNet): out[t, b] = data[len[b] - 1 - t, b] for t < len[b], else
 *   data[t, b].
 */
#ifndef MXC_KERNELS_SEQUENCE_H
#define MXC_KERNELS_SEQUENCE_H
#include "kernels/gather_util.h"

/* lengths of the B sequences into len[0..B) */
static void mxc_seq_lengths(const mxc_opcall *call, int64_t *len, int64_t T, int64_t B) {
  int64_t b;
  for (b = 0; b < B; b++) {
    int64_t l = call->iattr[4] ? mxc_gu_index_at(&call->in[call->nin - 1], b) : T;
    if (l == MXC_GU_BAD_INDEX || l < 0) l = 0;
    len[b] = l > T ? T : l;
  }
}

/* offset of (t, b) in units of R */
static inline int64_t mxc_seq_at(int axis, int64_t t, int64_t b, int64_t T, int64_t B) {
  return axis == 0 ? t * B + b : b * T + t;
}

#define MXC_SEQ_PROLOGUE(NAME)                                                                  \
  const int axis = (int)call->iattr[0];                                                         \
  const int64_t T = call->iattr[1], B = call->iattr[2], R = call->iattr[3];                     \
  int64_t *len = (int64_t *)malloc((size_t)(B > 0 ? B : 1) * sizeof(int64_t));                 \
  if (len == NULL) {                                                                            \
    snprintf(call->err, MXC_ERR_LEN, NAME ": out of memory");                                   \
    return -1;                                                                                  \
  }                                                                                             \
  mxc_seq_lengths(call, len, T, B);

#define MXC_SEQ_GEN(SUF, T_, A, ACC, CODE)                                                      \
  static int mxc_seq_mask_##SUF(mxc_opcall *call) {                                             \
    MXC_SEQ_PROLOGUE("SequenceMask")                                                            \
    {                                                                                           \
      const T_ *x = (const T_ *)call->in[0].data;                                               \
      T_ *y = (T_ *)call->out[0].data, fill;                                                    \
      int64_t r;                                                                                \
      int nt = mxc_gu_threads(call, T * B * R);                                                 \
      (void)nt;                                                                                 \
      mxc_gu_st_##SUF(&fill, (A)call->fattr[0]);                                                \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
      for (r = 0; r < T * B; r++) {                                                             \
        int64_t t = axis == 0 ? r / B : r % T, b = axis == 0 ? r % B : r / T, c;               \
        const T_ *xs = x + r * R;                                                               \
        T_ *ys = y + r * R;                                                                     \
        if (t < len[b]) {                                                                       \
          if (ys != xs) memcpy(ys, xs, (size_t)R * sizeof(T_));                                 \
        } else {                                                                                \
          for (c = 0; c < R; c++) ys[c] = fill;                                                 \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    free(len);                                                                                  \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_seq_last_##SUF(mxc_opcall *call) {                                             \
    MXC_SEQ_PROLOGUE("SequenceLast")                                                            \
    {                                                                                           \
      const T_ *x = (const T_ *)call->in[0].data;                                               \
      T_ *y = (T_ *)call->out[0].data;                                                          \
      int64_t b;                                                                                \
      for (b = 0; b < B && T > 0; b++) {                                                        \
        int64_t t = len[b] > 0 ? len[b] - 1 : 0;                                                \
        memcpy(y + b * R, x + mxc_seq_at(axis, t, b, T, B) * R, (size_t)R * sizeof(T_));        \
      }                                                                                         \
    }                                                                                           \
    free(len);                                                                                  \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_seq_last_grad_##SUF(mxc_opcall *call) {                                        \
    MXC_SEQ_PROLOGUE("SequenceLast")                                                            \
    {                                                                                           \
      const T_ *g = (const T_ *)call->in[0].data;                                               \
      T_ *y = (T_ *)call->out[0].data;                                                          \
      int64_t b;                                                                                \
      memset(y, 0, (size_t)(T * B * R) * sizeof(T_));                                           \
      for (b = 0; b < B && T > 0; b++) {                                                        \
        int64_t t = len[b] > 0 ? len[b] - 1 : 0;                                                \
        memcpy(y + mxc_seq_at(axis, t, b, T, B) * R, g + b * R, (size_t)R * sizeof(T_));        \
      }                                                                                         \
    }                                                                                           \
    free(len);                                                                                  \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_seq_reverse_##SUF(mxc_opcall *call) {                                          \
    MXC_SEQ_PROLOGUE("SequenceReverse")                                                         \
    {                                                                                           \
      const T_ *x = (const T_ *)call->in[0].data;                                               \
      T_ *y = (T_ *)call->out[0].data;                                                          \
      int64_t r;                                                                                \
      int nt = mxc_gu_threads(call, T * B * R);                                                 \
      (void)nt;                                                                                 \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
      for (r = 0; r < T * B; r++) {                                                             \
        int64_t t = axis == 0 ? r / B : r % T, b = axis == 0 ? r % B : r / T;                  \
        int64_t s = t < len[b] ? len[b] - 1 - t : t;                                            \
        memcpy(y + r * R, x + mxc_seq_at(axis, s, b, T, B) * R, (size_t)R * sizeof(T_));        \
      }                                                                                         \
    }                                                                                           \
    free(len);                                                                                  \
    return 0;                                                                                   \
  }

MXC_GU_ALL_TYPES(MXC_SEQ_GEN)

#define MXC_SEQ_ENTRY(SUF, T, A, ACC, CODE)                                                     \
  {"seq_mask", CODE, mxc_seq_mask_##SUF},                                                       \
  {"seq_last", CODE, mxc_seq_last_##SUF},                                                       \
  {"seq_last_grad", CODE, mxc_seq_last_grad_##SUF},                                             \
  {"seq_reverse", CODE, mxc_seq_reverse_##SUF},
static const mxc_code_entry mxc_sequence_table[] = {
  MXC_GU_ALL_TYPES(MXC_SEQ_ENTRY)
  {NULL, -1, NULL}
};
#endif
