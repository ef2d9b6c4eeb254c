/* Gather/scatter kernels: take_along (pick), put_along (pick's and topk's gradient), gather_nd,
 * scatter_nd (set or add; also _backward_gather_nd, _scatter_set_nd and Embedding's gradient),
 * histogram, ravel_multi_index, unravel_index. One function per data dtype; index inputs may be
 * any numeric dtype (csrc/kernels/gather_util.h).
 *
 * take_along: in (data (pre, n, post), idx (pre, k, post)), out (pre, k, post);
 *   iattr [pre, n, post, k, mode] with mode 0 clip, 1 wrap.
 * put_along: in (g (pre, k, post), idx (pre, k, post)), out (pre, n, post) = 0, then
 *   out[p, idx, q] += g[p, j, q]; iattr as take_along. Threads split (p, column block) pairs, so
 *   no two threads add into the same element.
 * gather_nd: in (data, idx (M, N)), out (N, K) with K the size of data's dims from M on;
 *   iattr [M]; negative indices count from the end, others out of range are an error.
 * scatter_nd: in (data (N, K), idx (M, N)) or, with has_dst, (dst, data, idx) where out[0] is
 *   dst's buffer; out has the target shape; iattr [M, add, has_dst, clip]. Without has_dst the
 *   output starts at zero. clip=1 clips indices into range (Embedding), else negatives wrap and
 *   the rest must be in range (checked before anything is written). Rows are applied in order
 *   (the last duplicate wins for set); threads split the K columns.
 * histogram: in (data[, bins]); out (counts int64 (B,), edges (B+1,)); iattr [has_bins, B];
 *   fattr [min, max] when not has_bins (edges then computed as MXNet: (max*i + (B-i)*min)/B).
 * ravel: in (multi (D, N)), out (N,); iattr [D, shape...]. unravel: in (flat (N,)), out (D, N).
 */
#ifndef MXC_KERNELS_GATHER_H
#define MXC_KERNELS_GATHER_H
#include "kernels/gather_util.h"

static inline int64_t mxc_ga_fix(int64_t j, int64_t n, int wrap) {
  if (wrap) {
    if (j == MXC_GU_BAD_INDEX) return 0;
    j %= n;
    return j < 0 ? j + n : j;
  }
  return j <= 0 ? 0 : (j >= n ? n - 1 : j);
}

/* flat offsets (in units of K) of the N index tuples of idx (M, N) into dims shape[0..M) */
static int mxc_ga_offsets(const mxc_tensor *ix, const int64_t *shape, int64_t M, int clip,
                          int64_t *off, char *err, const char *op) {
  int64_t N = M > 0 ? ix->size / M : 0, i, m;
  for (i = 0; i < N; i++) off[i] = 0;
  for (m = 0; m < M; m++) {
    int64_t d = shape[m];
    for (i = 0; i < N; i++) {
      int64_t j = mxc_gu_index_at(ix, m * N + i);
      if (clip) {
        j = j == MXC_GU_BAD_INDEX ? 0 : (j < 0 ? 0 : (j >= d ? d - 1 : j));
      } else {
        if (j != MXC_GU_BAD_INDEX && j < 0 && j >= -d) j += d;
        if (j < 0 || j >= d) {
          if (j == MXC_GU_BAD_INDEX)
            snprintf(err, MXC_ERR_LEN, "%s: index %lld of dimension %lld is NaN or too large",
                     op, (long long)i, (long long)m);
          else
            snprintf(err, MXC_ERR_LEN, "%s: IndexError: index %lld is out of bounds for "
                     "dimension %lld with size %lld", op, (long long)mxc_gu_index_at(ix, m * N + i),
                     (long long)m, (long long)d);
          return -1;
        }
      }
      off[i] = off[i] * d + j;
    }
  }
  return 0;
}

#define MXC_GA_GEN(SUF, T, A, ACC, CODE)                                                        \
  static int mxc_ga_take_along_##SUF(mxc_opcall *call) {                                        \
    const int64_t pre = call->iattr[0], n = call->iattr[1], post = call->iattr[2];              \
    const int64_t k = call->iattr[3];                                                           \
    const int wrap = call->iattr[4] == 1;                                                       \
    const T *x = (const T *)call->in[0].data;                                                   \
    const mxc_tensor *ix = &call->in[1];                                                        \
    T *y = (T *)call->out[0].data;                                                              \
    int64_t total = pre * k * post, r;                                                          \
    int nt = mxc_gu_threads(call, total);                                                       \
    (void)nt;                                                                                   \
    if (total == 0) return 0;                                                                   \
    if (n == 0) {                                                                               \
      snprintf(call->err, MXC_ERR_LEN, "pick: cannot pick from an axis of size 0");             \
      return -1;                                                                                \
    }                                                                                           \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (r = 0; r < total; r++) {                                                               \
      int64_t p = r / (k * post), q = r % post;                                                 \
      int64_t j = mxc_ga_fix(mxc_gu_index_at(ix, r), n, wrap);                                  \
      y[r] = x[(p * n + j) * post + q];                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_ga_put_along_##SUF(mxc_opcall *call) {                                         \
    const int64_t pre = call->iattr[0], n = call->iattr[1], post = call->iattr[2];              \
    const int64_t k = call->iattr[3];                                                           \
    const int wrap = call->iattr[4] == 1;                                                       \
    const T *g = (const T *)call->in[0].data;                                                   \
    const mxc_tensor *ix = &call->in[1];                                                        \
    T *y = (T *)call->out[0].data;                                                              \
    const int64_t QB = 256, nqb = (post + QB - 1) / QB;                                         \
    int64_t t;                                                                                  \
    int nt = mxc_gu_threads(call, pre * n * post);                                              \
    (void)nt;                                                                                   \
    memset(y, 0, (size_t)(pre * n * post) * sizeof(T));                                        \
    if (pre * k * post == 0 || n == 0) return 0;                                                \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (t = 0; t < pre * nqb; t++) {                                                           \
      int64_t p = t / nqb, q0 = (t % nqb) * QB, q1 = q0 + QB < post ? q0 + QB : post, j, q;     \
      for (j = 0; j < k; j++) {                                                                 \
        int64_t gb = (p * k + j) * post;                                                        \
        for (q = q0; q < q1; q++) {                                                             \
          int64_t m = mxc_ga_fix(mxc_gu_index_at(ix, gb + q), n, wrap);                         \
          T *d = y + (p * n + m) * post + q;                                                    \
          mxc_gu_st_##SUF(d, (A)(mxc_gu_ld_##SUF(d) + mxc_gu_ld_##SUF(g + gb + q)));            \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_ga_gather_nd_##SUF(mxc_opcall *call) {                                         \
    const mxc_tensor *x = &call->in[0], *ix = &call->in[1];                                     \
    const int64_t M = call->iattr[0];                                                           \
    const int64_t N = M > 0 ? ix->size / M : 0;                                                 \
    int64_t K = 1, i, *off;                                                                     \
    int d, nt = mxc_gu_threads(call, call->out[0].size);                                        \
    (void)nt;                                                                                   \
    for (d = (int)M; d < x->ndim; d++) K *= x->shape[d];                                        \
    if (N == 0 || K == 0) return 0;                                                             \
    off = (int64_t *)malloc((size_t)N * sizeof(int64_t));                                       \
    if (off == NULL) {                                                                          \
      snprintf(call->err, MXC_ERR_LEN, "gather_nd: out of memory");                             \
      return -1;                                                                                \
    }                                                                                           \
    if (mxc_ga_offsets(ix, x->shape, M, 0, off, call->err, "gather_nd") != 0) {                 \
      free(off);                                                                                \
      return -1;                                                                                \
    }                                                                                           \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (i = 0; i < N; i++)                                                                     \
      memcpy((T *)call->out[0].data + i * K, (const T *)x->data + off[i] * K,                   \
             (size_t)K * sizeof(T));                                                            \
    free(off);                                                                                  \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_ga_scatter_nd_##SUF(mxc_opcall *call) {                                        \
    const int64_t M = call->iattr[0];                                                           \
    const int add = call->iattr[1] != 0, has_dst = call->iattr[2] != 0;                         \
    const int clip = call->iattr[3] != 0;                                                       \
    const mxc_tensor *v = &call->in[has_dst ? 1 : 0], *ix = &call->in[has_dst ? 2 : 1];         \
    mxc_tensor *y = &call->out[0];                                                              \
    const int64_t N = M > 0 ? ix->size / M : 0;                                                 \
    int64_t K = 1, *off, t, nblk;                                                               \
    int d, nt;                                                                                  \
    for (d = (int)M; d < y->ndim; d++) K *= y->shape[d];                                        \
    if (!has_dst) memset(y->data, 0, (size_t)y->size * sizeof(T));                              \
    if (N == 0 || K == 0) return 0;                                                             \
    off = (int64_t *)malloc((size_t)N * sizeof(int64_t));                                       \
    if (off == NULL) {                                                                          \
      snprintf(call->err, MXC_ERR_LEN, "scatter_nd: out of memory");                            \
      return -1;                                                                                \
    }                                                                                           \
    if (mxc_ga_offsets(ix, y->shape, M, clip, off, call->err, "scatter_nd") != 0) {             \
      free(off);                                                                                \
      return -1;                                                                                \
    }                                                                                           \
    nt = mxc_gu_threads(call, N * K);                                                           \
    nblk = K >= 64 ? (K + 63) / 64 : 1;                                                         \
    if (nblk == 1) nt = 1;                                                                      \
    (void)nt;                                                                                   \
MXC_PRAGMA(omp parallel for num_threads(nt) schedule(static))                                   \
    for (t = 0; t < nblk; t++) {                                                                \
      int64_t c0 = K * t / nblk, c1 = K * (t + 1) / nblk, i, c;                                 \
      T *yd = (T *)y->data;                                                                     \
      const T *vd = (const T *)v->data;                                                         \
      for (i = 0; i < N; i++) {                                                                 \
        T *dst = yd + off[i] * K;                                                               \
        const T *src = vd + i * K;                                                              \
        if (add) {                                                                              \
          for (c = c0; c < c1; c++)                                                             \
            mxc_gu_st_##SUF(dst + c, (A)(mxc_gu_ld_##SUF(dst + c) + mxc_gu_ld_##SUF(src + c))); \
        } else {                                                                                \
          memcpy(dst + c0, src + c0, (size_t)(c1 - c0) * sizeof(T));                            \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    free(off);                                                                                  \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_ga_histogram_##SUF(mxc_opcall *call) {                                         \
    const mxc_tensor *x = &call->in[0];                                                         \
    const int has_bins = call->iattr[0] != 0;                                                   \
    const int64_t B = call->iattr[1];                                                           \
    const T *xd = (const T *)x->data;                                                           \
    int64_t *cnt = (int64_t *)call->out[0].data;                                                \
    T *edges = (T *)call->out[1].data;                                                          \
    double mn, mx, *e;                                                                          \
    int64_t i;                                                                                  \
    e = (double *)malloc((size_t)(B + 1) * sizeof(double));                                     \
    if (e == NULL) {                                                                            \
      snprintf(call->err, MXC_ERR_LEN, "histogram: out of memory");                             \
      return -1;                                                                                \
    }                                                                                           \
    if (has_bins) {                                                                             \
      const T *bd = (const T *)call->in[1].data;                                                \
      for (i = 0; i <= B; i++) {                                                                \
        edges[i] = bd[i];                                                                       \
        e[i] = (double)mxc_gu_ld_##SUF(bd + i);                                                 \
      }                                                                                         \
    } else {                                                                                    \
      mn = call->fattr[0];                                                                      \
      mx = call->fattr[1];                                                                      \
      for (i = 0; i <= B; i++) {                                                                \
        mxc_gu_st_##SUF(edges + i, (A)((mx * (double)i + (double)(B - i) * mn) / (double)B));   \
        e[i] = (double)mxc_gu_ld_##SUF(edges + i);                                              \
      }                                                                                         \
    }                                                                                           \
    for (i = 0; i < B; i++) cnt[i] = 0;                                                         \
    mn = e[0];                                                                                  \
    mx = e[B];                                                                                  \
    for (i = 0; i < x->size; i++) {                                                             \
      double v = (double)mxc_gu_ld_##SUF(xd + i);                                               \
      int64_t lo, hi;                                                                           \
      if (!(v >= mn && v <= mx)) continue;                                                      \
      /* the last edge e[j] <= v, the final bin closed on the right */                          \
      lo = 0;                                                                                   \
      hi = B;                                                                                   \
      while (hi - lo > 1) {                                                                     \
        int64_t mid = (lo + hi) / 2;                                                            \
        if (v >= e[mid]) lo = mid;                                                              \
        else hi = mid;                                                                          \
      }                                                                                         \
      cnt[lo]++;                                                                                \
    }                                                                                           \
    free(e);                                                                                    \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_ga_ravel_##SUF(mxc_opcall *call) {                                             \
    const int64_t D = call->iattr[0];                                                           \
    const mxc_tensor *x = &call->in[0];                                                         \
    const int64_t N = D > 0 ? x->size / D : 0;                                                  \
    T *y = (T *)call->out[0].data;                                                              \
    int64_t i, m;                                                                               \
    for (i = 0; i < N; i++) {                                                                   \
      int64_t r = 0;                                                                            \
      for (m = 0; m < D; m++) r = r * call->iattr[1 + m] + mxc_gu_index_at(x, m * N + i);       \
      mxc_gu_st_##SUF(y + i, (A)r);                                                             \
    }                                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  static int mxc_ga_unravel_##SUF(mxc_opcall *call) {                                           \
    const int64_t D = call->iattr[0];                                                           \
    const mxc_tensor *x = &call->in[0];                                                         \
    const int64_t N = x->size;                                                                  \
    T *y = (T *)call->out[0].data;                                                              \
    int64_t i, m;                                                                               \
    for (i = 0; i < N; i++) {                                                                   \
      int64_t r = mxc_gu_index_at(x, i);                                                        \
      for (m = D - 1; m > 0; m--) {                                                             \
        int64_t s = call->iattr[1 + m], q = s ? r / s : 0;                                      \
        mxc_gu_st_##SUF(y + m * N + i, (A)(r - q * s));                                         \
        r = q;                                                                                  \
      }                                                                                         \
      if (D > 0) mxc_gu_st_##SUF(y + i, (A)r);                                                  \
    }                                                                                           \
    return 0;                                                                                   \
  }

MXC_GU_ALL_TYPES(MXC_GA_GEN)

#define MXC_GA_ENTRY(SUF, T, A, ACC, CODE)                                                      \
  {"take_along", CODE, mxc_ga_take_along_##SUF},                                                \
  {"put_along", CODE, mxc_ga_put_along_##SUF},                                                  \
  {"gather_nd", CODE, mxc_ga_gather_nd_##SUF},                                                  \
  {"scatter_nd", CODE, mxc_ga_scatter_nd_##SUF},                                                \
  {"histogram", CODE, mxc_ga_histogram_##SUF},                                                  \
  {"ravel", CODE, mxc_ga_ravel_##SUF},                                                          \
  {"unravel", CODE, mxc_ga_unravel_##SUF},
static const mxc_code_entry mxc_gather_table[] = {
  MXC_GU_ALL_TYPES(MXC_GA_ENTRY)
  {NULL, -1, NULL}
};
#endif
